//! Structured control flow in kernels: function-local variables (declared in the
//! entry block, where SPIR-V wants them; the driver keeps them in registers),
//! `if`/`else`, loops with their merge and continue blocks, and barriers.

use super::*;

impl Emitter {
    /// A function-local variable, declared at the start of the entry block (where
    /// SPIR-V requires every OpVariable of a function to be).
    pub(super) fn local(&mut self, t: Word) -> Word {
        self.local_with(t, None)
    }

    /// A function-local boolean, false until stored (its initializer).
    pub(super) fn local_false(&mut self) -> Word {
        let bt = self.bool_t;
        let f = self.b.constant_false(bt);
        self.local_with(bt, Some(f))
    }

    /// A function-local variable of type `t`, with an initializer where given.
    pub(super) fn local_with(&mut self, t: Word, init: Option<Word>) -> Word {
        let p = self.ptr(StorageClass::Function, t);
        let id = self.b.id();
        let mut operands = vec![Operand::StorageClass(StorageClass::Function)];
        operands.extend(init.map(Operand::IdRef));
        let inst = rspirv::dr::Instruction::new(spirv::Op::Variable, Some(p), Some(id), operands);
        let current = self.b.selected_block();
        let placed = self
            .b
            .select_block(Some(0))
            .and_then(|_| {
                self.b
                    .insert_into_block(rspirv::dr::InsertPoint::Begin, inst)
            })
            .and_then(|_| self.b.select_block(current));
        debug_assert!(placed.is_ok(), "local() outside a function");
        id
    }

    pub(super) fn load(&mut self, t: Word, var: Word) -> R<Word> {
        self.b.load(t, None, var, None, []).map_err(be)
    }

    pub(super) fn store(&mut self, var: Word, v: Word) -> R<()> {
        self.b.store(var, v, None, []).map_err(be)
    }

    /// `if cond { then }`.
    pub(super) fn if_then(&mut self, cond: Word, then: impl FnOnce(&mut Self) -> R<()>) -> R<()> {
        self.if_else(cond, then, |_| Ok(()))
    }

    /// Opens `if cond {`, for a body emitted straight on; [`Self::end_if`] closes
    /// it. No value made inside may be used after it (only variables carry out).
    pub(super) fn begin_if(&mut self, cond: Word) -> R<Word> {
        let (t, m) = (self.b.id(), self.b.id());
        self.b
            .selection_merge(m, SelectionControl::NONE)
            .map_err(be)?;
        self.b.branch_conditional(cond, t, m, []).map_err(be)?;
        self.b.begin_block(Some(t)).map_err(be)?;
        Ok(m)
    }

    /// Closes an `if` opened by [`Self::begin_if`] (its merge block `m`).
    pub(super) fn end_if(&mut self, m: Word) -> R<()> {
        self.b.branch(m).map_err(be)?;
        self.b.begin_block(Some(m)).map_err(be)?;
        Ok(())
    }

    /// `if !cond { return }`: the kernel ends here where `cond` does not hold.
    pub(super) fn return_unless(&mut self, cond: Word) -> R<()> {
        let (stop, go) = (self.b.id(), self.b.id());
        self.b
            .selection_merge(go, SelectionControl::NONE)
            .map_err(be)?;
        self.b.branch_conditional(cond, go, stop, []).map_err(be)?;
        self.b.begin_block(Some(stop)).map_err(be)?;
        self.b.ret().map_err(be)?;
        self.b.begin_block(Some(go)).map_err(be)?;
        Ok(())
    }

    /// `if cond { then } else { els }`.
    pub(super) fn if_else(
        &mut self,
        cond: Word,
        then: impl FnOnce(&mut Self) -> R<()>,
        els: impl FnOnce(&mut Self) -> R<()>,
    ) -> R<()> {
        let (t, f, m) = (self.b.id(), self.b.id(), self.b.id());
        self.b
            .selection_merge(m, SelectionControl::NONE)
            .map_err(be)?;
        self.b.branch_conditional(cond, t, f, []).map_err(be)?;
        self.b.begin_block(Some(t)).map_err(be)?;
        then(self)?;
        self.b.branch(m).map_err(be)?;
        self.b.begin_block(Some(f)).map_err(be)?;
        els(self)?;
        self.b.branch(m).map_err(be)?;
        self.b.begin_block(Some(m)).map_err(be)?;
        Ok(())
    }

    /// `while cond() { body(); step() }`.
    pub(super) fn while_loop(
        &mut self,
        cond: impl FnOnce(&mut Self) -> R<Word>,
        body: impl FnOnce(&mut Self) -> R<()>,
        step: impl FnOnce(&mut Self) -> R<()>,
    ) -> R<()> {
        let (header, check, bodyb, cont, merge) = (
            self.b.id(),
            self.b.id(),
            self.b.id(),
            self.b.id(),
            self.b.id(),
        );
        self.b.branch(header).map_err(be)?;
        self.b.begin_block(Some(header)).map_err(be)?;
        self.b
            .loop_merge(merge, cont, spirv::LoopControl::NONE, [])
            .map_err(be)?;
        self.b.branch(check).map_err(be)?;
        self.b.begin_block(Some(check)).map_err(be)?;
        let c = cond(self)?;
        self.b.branch_conditional(c, bodyb, merge, []).map_err(be)?;
        self.b.begin_block(Some(bodyb)).map_err(be)?;
        body(self)?;
        self.b.branch(cont).map_err(be)?;
        self.b.begin_block(Some(cont)).map_err(be)?;
        step(self)?;
        self.b.branch(header).map_err(be)?;
        self.b.begin_block(Some(merge)).map_err(be)?;
        Ok(())
    }

    /// `var = from; while var < to { body(var); var += step }`.
    pub(super) fn count_loop(
        &mut self,
        var: Word,
        from: Word,
        to: Word,
        step: Word,
        body: impl FnOnce(&mut Self, Word) -> R<()>,
    ) -> R<()> {
        let u = self.u32_t;
        self.store(var, from)?;
        self.while_loop(
            |e| {
                let v = e.load(u, var)?;
                e.ult(v, to)
            },
            |e| {
                let v = e.load(u, var)?;
                body(e, v)
            },
            |e| {
                let v = e.load(u, var)?;
                let nx = e.uadd(v, step)?;
                e.store(var, nx)
            },
        )
    }

    pub(super) fn barrier(&mut self) -> R<()> {
        let wg = self.c_u32(SCOPE_WORKGROUP);
        let sem = self.c_u32(SEM_ACQ_REL_WORKGROUP);
        self.b.control_barrier(wg, wg, sem).map_err(be)
    }

    /// A workgroup barrier that also orders storage-buffer memory at device scope:
    /// what one invocation did to a buffer before it (an atomic) comes before what
    /// the others do after it.
    pub(super) fn barrier_uniform(&mut self) -> R<()> {
        let wg = self.c_u32(SCOPE_WORKGROUP);
        let dev = self.c_u32(SCOPE_DEVICE);
        let sem = self.c_u32(SEM_ACQ_REL_WORKGROUP | 0x40);
        self.b.control_barrier(wg, dev, sem).map_err(be)
    }
}
