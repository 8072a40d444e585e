//! The SPIR-V emitter. One `rspirv::dr::Builder` per module, with caches of type and
//! constant ids keyed by our own types. Function-local variables hold loop state (the
//! driver's compiler promotes them to registers), which keeps control flow structured
//! and simple.

use crate::SpirvError;
use arrc_ir::plan::{Fold, IExpr, KExpr, Kernel, KernelKind, Unit};
use arrc_ir::scalar::BinOp;
use arrc_ir::{ElemType, Scalar};
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    self, AddressingModel, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel,
    FunctionControl, GroupOperation, MemoryModel, SelectionControl, StorageClass, Word,
};
use std::collections::HashMap;

mod f64;
mod reduce;
mod scalars;
mod sort;

type R<T> = Result<T, SpirvError>;

fn be(e: rspirv::dr::Error) -> SpirvError {
    SpirvError::Build(e.to_string())
}

/// Scope and memory-semantics values (SPIR-V passes them as constant ids).
const SCOPE_DEVICE: u32 = 1;
const SCOPE_WORKGROUP: u32 = 2;
const SCOPE_SUBGROUP: u32 = 3;
/// Entries of a scan tile's table of subgroup totals: `NumSubgroups` must fit.
pub const SCAN_TOTALS: u32 = 1024;
const SEM_ACQ_REL_WORKGROUP: u32 = 0x8 | 0x100;
/// Acquire / Release on storage-buffer (Uniform) memory.
const SEM_ACQUIRE_UNIFORM: u32 = 0x2 | 0x40;
const SEM_RELEASE_UNIFORM: u32 = 0x4 | 0x40;

/// Emits one module holding each kernel as an entry point with the given name.
pub fn emit(kernels: &[(&Kernel, &str)]) -> Result<Vec<u32>, SpirvError> {
    let wg = kernels.first().map_or(256, |(k, _)| k.workgroup_size);
    let items = kernels.first().map_or(8, |(k, _)| k.items_per_thread);
    let spin = kernels.first().map_or(2048, |(k, _)| k.spin_limit);
    let mut e = Emitter::new(wg, items, spin);
    for (k, name) in kernels {
        e.kernel(k, name)?;
    }
    Ok(e.finish())
}

struct Emitter {
    b: Builder,
    scalar_types: HashMap<ElemType, Word>,
    consts: HashMap<(Word, u64), Word>,
    builtins: HashMap<BuiltIn, Word>,
    ptr_types: HashMap<(StorageClass, Word), Word>,
    buffer_structs: HashMap<ElemType, Word>,
    /// `struct { T4 data[]; }` per element type (`vec4_view`).
    vec4_structs: HashMap<ElemType, Word>,
    /// The module's table of 2/π's bits (f64 argument reduction), once made.
    two_over_pi: Option<Word>,
    status_struct: Option<Word>,
    push_structs: HashMap<usize, Word>,
    void: Word,
    bool_t: Word,
    u32_t: Word,
    v3u32: Word,
    wg_size: Word,
    /// Specialization constant 1: elements per invocation per loop trip.
    items: Word,
    /// Its default, which fixes the shape of a scan tile at emit time (a scan keeps
    /// its tile's elements in registers, one variable each).
    items_n: u32,
    /// The kernel may use f64 for f32 intermediates (`Kernel::float64`).
    float64: bool,
    /// Specialization constant 2: polls before a scan's lookback falls back.
    spin: Word,
    uses_i64: bool,
    uses_f64: bool,
    uses_ballot: bool,
    uses_shuffle: bool,
    uses_i64_atomics: bool,
    /// ⍺ and ⍵ of the dfn step being evaluated (`KExpr::Operand`).
    operands: [Word; 2],
    /// The GLSL.std.450 extended instruction set.
    glsl: Word,
}

/// A binding read as vectors of four elements ([`Emitter::vec4_source`]).
struct Vec4Source {
    view: Word,
    from: ElemType,
    /// The element type, the vector type and a pointer to a vector.
    et: Word,
    vt: Word,
    ptr: Word,
}

/// `expr`, or the argument of its conversion, as a load from a plain array (one
/// window, stored in the type it is read in): its binding, element type and index.
/// Such a load may be done 16 or 32 bytes at a time.
fn plain_load<'k>(cx: &Cx, expr: &'k KExpr) -> Option<(u32, ElemType, &'k IExpr)> {
    let x = match expr {
        KExpr::Cast { arg, .. } => arg,
        x => x,
    };
    match x {
        KExpr::Load {
            binding,
            elem,
            index,
        } if cx.windows[*binding as usize].len() == 1
            && cx.bindings[*binding as usize].1 == *elem =>
        {
            Some((*binding, *elem, index))
        }
        _ => None,
    }
}

/// Per-kernel state: binding variables, builtins already loaded, interface.
struct Cx {
    bindings: Vec<(Word, ElemType)>,
    status: Option<Word>,
    interface: Vec<Word>,
    /// The kernel's workgroup array, declared before its function.
    shared: Word,
    n: Word,
    lid: Word,
    group: Word,
    groups: Word,
    /// The push-constant block and the slot of the first extra length in it.
    pc: Word,
    push_base: u32,
    /// A dfn fold's step (`Fold::Dfn`).
    combine: Option<KExpr>,
    /// Each binding's variables, one per window (see `Binding::windows`).
    windows: Vec<Vec<Word>>,
    /// Each binding's first descriptor binding number.
    numbers: Vec<u32>,
    window_bytes: u64,
    /// A scan's tile status as `struct { u64 data[]; }` over the flags binding, when
    /// flag and value are packed into one word per tile.
    packed_status: Option<Word>,
    /// A binding whose stored values must be finite, and the error bit raised where
    /// one is not (a float fold's overflow).
    overflow: Option<(u32, u32)>,
}

/// The indices an expression is evaluated at: the element (ravel order) for flat
/// kernels, the row and position for axis kernels.
#[derive(Clone, Copy)]
struct Ix {
    index: Word,
    row: Word,
    pos: Word,
}

impl Ix {
    fn flat(i: Word) -> Ix {
        Ix {
            index: i,
            row: i,
            pos: i,
        }
    }
}

impl Emitter {
    fn new(workgroup_size: u32, items_per_thread: u32, spin_limit: u32) -> Emitter {
        let mut b = Builder::new();
        b.set_version(1, 3);
        b.capability(Capability::Shader);
        b.capability(Capability::GroupNonUniform);
        b.capability(Capability::GroupNonUniformArithmetic);
        b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
        let void = b.type_void();
        let bool_t = b.type_bool();
        let u32_t = b.type_int(32, 0);
        let v3u32 = b.type_vector(u32_t, 3);
        // The workgroup size: specialization constant 0 inside the WorkgroupSize built-in.
        let glsl = b.ext_inst_import("GLSL.std.450");
        let wg_size = b.spec_constant_bit32(u32_t, workgroup_size);
        b.decorate(wg_size, Decoration::SpecId, [Operand::LiteralBit32(0)]);
        let items = b.spec_constant_bit32(u32_t, items_per_thread.max(1));
        b.decorate(items, Decoration::SpecId, [Operand::LiteralBit32(1)]);
        let spin = b.spec_constant_bit32(u32_t, spin_limit);
        b.decorate(spin, Decoration::SpecId, [Operand::LiteralBit32(2)]);
        let mut e = Emitter {
            b,
            scalar_types: HashMap::new(),
            consts: HashMap::new(),
            builtins: HashMap::new(),
            ptr_types: HashMap::new(),
            buffer_structs: HashMap::new(),
            vec4_structs: HashMap::new(),
            two_over_pi: None,
            status_struct: None,
            push_structs: HashMap::new(),
            void,
            bool_t,
            u32_t,
            v3u32,
            wg_size,
            items,
            items_n: items_per_thread.max(1),
            float64: false,
            spin,
            uses_i64: false,
            uses_f64: false,
            uses_ballot: false,
            uses_shuffle: false,
            uses_i64_atomics: false,
            operands: [0; 2],
            glsl,
        };
        let one = e.c_u32(1);
        let wgv = e.b.spec_constant_composite(v3u32, [wg_size, one, one]);
        e.b.decorate(
            wgv,
            Decoration::BuiltIn,
            [Operand::BuiltIn(BuiltIn::WorkgroupSize)],
        );
        // Built-in inputs are module-level variables: declare them before any function.
        for bi in [
            BuiltIn::LocalInvocationId,
            BuiltIn::WorkgroupId,
            BuiltIn::NumWorkgroups,
            BuiltIn::SubgroupId,
            BuiltIn::NumSubgroups,
            BuiltIn::SubgroupSize,
            BuiltIn::SubgroupLocalInvocationId,
        ] {
            e.builtin(bi);
        }
        e
    }

    fn finish(mut self) -> Vec<u32> {
        if self.uses_i64 {
            self.b.capability(Capability::Int64);
        }
        if self.uses_f64 {
            self.b.capability(Capability::Float64);
        }
        if self.uses_ballot {
            self.b.capability(Capability::GroupNonUniformBallot);
        }
        if self.uses_shuffle {
            self.b.capability(Capability::GroupNonUniformShuffle);
        }
        if self.uses_i64_atomics {
            self.b.capability(Capability::Int64Atomics);
        }
        use rspirv::binary::Assemble;
        self.b.module().assemble()
    }

    // ---- types and constants ----

    fn ty(&mut self, t: ElemType) -> Word {
        if let Some(&id) = self.scalar_types.get(&t) {
            return id;
        }
        let id = match t {
            // Booleans live in 32-bit words as 0 and 1.
            ElemType::Bool | ElemType::I32 => self.b.type_int(32, 1),
            ElemType::I64 => {
                self.uses_i64 = true;
                self.b.type_int(64, 1)
            }
            ElemType::F32 => self.b.type_float(32, None),
            ElemType::F64 => {
                self.uses_f64 = true;
                self.b.type_float(64, None)
            }
        };
        self.scalar_types.insert(t, id);
        id
    }

    fn ptr(&mut self, sc: StorageClass, pointee: Word) -> Word {
        if let Some(&id) = self.ptr_types.get(&(sc, pointee)) {
            return id;
        }
        let id = self.b.type_pointer(None, sc, pointee);
        self.ptr_types.insert((sc, pointee), id);
        id
    }

    fn constant(&mut self, ty: Word, bits: u64, wide: bool) -> Word {
        if let Some(&id) = self.consts.get(&(ty, bits)) {
            return id;
        }
        let id = if wide {
            self.b.constant_bit64(ty, bits)
        } else {
            self.b.constant_bit32(ty, bits as u32)
        };
        self.consts.insert((ty, bits), id);
        id
    }

    fn c_u32(&mut self, v: u32) -> Word {
        let t = self.u32_t;
        self.constant(t, v as u64, false)
    }

    fn scalar(&mut self, s: Scalar) -> Word {
        let t = self.ty(s.elem_type());
        match s {
            Scalar::Bool(v) => self.constant(t, v as u64, false),
            Scalar::I32(v) => self.constant(t, v as u32 as u64, false),
            Scalar::I64(v) => self.constant(t, v as u64, true),
            Scalar::F32(v) => self.constant(t, v.to_bits() as u64, false),
            Scalar::F64(v) => self.constant(t, v.to_bits(), true),
        }
    }

    /// The identity of `op` in type `t`, used to pad partial subgroups and empty shares.
    fn identity(&mut self, op: BinOp, t: ElemType) -> Word {
        let s = match (op, t) {
            (BinOp::Add | BinOp::Sub, t) => Scalar::I32(0).cast(t),
            (BinOp::Mul | BinOp::Div, t) => Scalar::I32(1).cast(t),
            // Booleans are 0 and 1: their identities are in range (the -∞ of ⌈/⍬
            // cast to a boolean would be 1).
            (BinOp::Max | BinOp::Or, ElemType::Bool) => Scalar::Bool(false),
            (BinOp::Min | BinOp::And, ElemType::Bool) => Scalar::Bool(true),
            (BinOp::Max, ElemType::I32) => Scalar::I32(i32::MIN),
            (BinOp::Max, ElemType::I64) => Scalar::I64(i64::MIN),
            (BinOp::Max, ElemType::F32) => Scalar::F32(-f32::MAX),
            (BinOp::Min, ElemType::I32) => Scalar::I32(i32::MAX),
            (BinOp::Min, ElemType::I64) => Scalar::I64(i64::MAX),
            (BinOp::Min, ElemType::F32) => Scalar::F32(f32::MAX),
            (BinOp::Max, ElemType::F64) => Scalar::F64(-f64::MAX),
            (BinOp::Min, ElemType::F64) => Scalar::F64(f64::MAX),
            (op, t) => op
                .identity(t, t.join(ElemType::F32))
                .unwrap_or(Scalar::I32(0))
                .cast(t),
        };
        self.scalar(s)
    }

    /// A second view of a binding as `struct { T4 data[]; }` (16-byte vectors of
    /// 4-byte elements, 32-byte ones of 8-byte elements; the same descriptor:
    /// storage-buffer variables may alias).
    fn vec4_view(&mut self, cx: &Cx, binding: u32, t: ElemType, writable: bool) -> R<Word> {
        // One struct type per element type in a module (types are declared once).
        let st = match self.vec4_structs.get(&t) {
            Some(&st) => st,
            None => {
                let et = self.ty(t);
                let vt = self.b.type_vector(et, 4);
                let stride = if matches!(t, ElemType::I64 | ElemType::F64) {
                    32
                } else {
                    16
                };
                let st = self.block_of(vt, stride);
                self.vec4_structs.insert(t, st);
                st
            }
        };
        let var = self.alias_var(cx, binding, st);
        if !writable {
            self.b.decorate(var, Decoration::NonWritable, []);
        }
        Ok(var)
    }

    /// A read-only vector view of `binding` (elements of type `from`) for
    /// [`Self::load_vec4`].
    fn vec4_source(&mut self, cx: &Cx, binding: u32, from: ElemType) -> R<Vec4Source> {
        let view = self.vec4_view(cx, binding, from, false)?;
        let et = self.ty(from);
        let vt = self.b.type_vector(et, 4);
        let ptr = self.ptr(StorageClass::StorageBuffer, vt);
        Ok(Vec4Source {
            view,
            from,
            et,
            vt,
            ptr,
        })
    }

    /// The four elements of vector `vi` of `src`, converted to `to`.
    fn load_vec4(&mut self, src: &Vec4Source, vi: Word, to: ElemType) -> R<[Word; 4]> {
        let zero = self.c_u32(0);
        let p = self
            .b
            .access_chain(src.ptr, None, src.view, [zero, vi])
            .map_err(be)?;
        let x = self.load(src.vt, p)?;
        let mut out = [0; 4];
        for (c, o) in out.iter_mut().enumerate() {
            let xc = self
                .b
                .composite_extract(src.et, None, x, [c as u32])
                .map_err(be)?;
            *o = self.convert(xc, src.from, to)?;
        }
        Ok(out)
    }

    /// A module-level variable of block type `st` on the descriptor of `binding`: a
    /// second view of the same buffer (storage-buffer variables may alias).
    fn alias_var(&mut self, cx: &Cx, binding: u32, st: Word) -> Word {
        let p = self.ptr(StorageClass::StorageBuffer, st);
        let current = self.b.selected_block();
        let _ = self.b.select_block(None);
        let var = self.b.variable(p, None, StorageClass::StorageBuffer, None);
        let _ = self.b.select_block(current);
        self.b
            .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        self.b.decorate(
            var,
            Decoration::Binding,
            [Operand::LiteralBit32(cx.numbers[binding as usize])],
        );
        var
    }

    /// A coherent view of a words binding as `struct { u64 data[]; }` (64-bit atomics).
    fn u64_view(&mut self, cx: &Cx, binding: u32) -> R<Word> {
        self.uses_i64 = true;
        self.uses_i64_atomics = true;
        let u64t = self.b.type_int(64, 0);
        let st = self.block_of(u64t, 8);
        let var = self.alias_var(cx, binding, st);
        self.b.decorate(var, Decoration::Coherent, []);
        Ok(var)
    }

    /// `struct { E data[]; }` with elements `stride` bytes apart, a storage-buffer block.
    fn block_of(&mut self, elem: Word, stride: u32) -> Word {
        let rt = self.b.type_runtime_array(elem);
        self.b
            .decorate(rt, Decoration::ArrayStride, [Operand::LiteralBit32(stride)]);
        let st = self.b.type_struct([rt]);
        self.b.decorate(st, Decoration::Block, []);
        self.b
            .member_decorate(st, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
        st
    }

    /// `struct { T data[]; }` decorated as a storage-buffer block.
    fn buffer_struct(&mut self, t: ElemType) -> Word {
        // Booleans are stored as i32 words: one struct type serves both.
        let t = if t == ElemType::Bool {
            ElemType::I32
        } else {
            t
        };
        if let Some(&id) = self.buffer_structs.get(&t) {
            return id;
        }
        let et = self.ty(t);
        let st = self.block_of(et, t.size() as u32);
        self.buffer_structs.insert(t, st);
        st
    }

    fn builtin(&mut self, bi: BuiltIn) -> Word {
        if let Some(&id) = self.builtins.get(&bi) {
            return id;
        }
        let ty = match bi {
            BuiltIn::LocalInvocationId | BuiltIn::WorkgroupId | BuiltIn::NumWorkgroups => {
                self.v3u32
            }
            _ => self.u32_t,
        };
        let p = self.ptr(StorageClass::Input, ty);
        let v = self.b.variable(p, None, StorageClass::Input, None);
        self.b
            .decorate(v, Decoration::BuiltIn, [Operand::BuiltIn(bi)]);
        self.builtins.insert(bi, v);
        v
    }

    /// Loads a built-in; the x component for vector built-ins.
    fn load_builtin(&mut self, cx: &mut Cx, bi: BuiltIn) -> R<Word> {
        let var = self.builtin(bi);
        if !cx.interface.contains(&var) {
            cx.interface.push(var);
        }
        let vector = matches!(
            bi,
            BuiltIn::LocalInvocationId | BuiltIn::WorkgroupId | BuiltIn::NumWorkgroups
        );
        let ty = if vector { self.v3u32 } else { self.u32_t };
        let v = self.b.load(ty, None, var, None, []).map_err(be)?;
        if vector {
            self.b
                .composite_extract(self.u32_t, None, v, [0])
                .map_err(be)
        } else {
            Ok(v)
        }
    }

    /// Loads a scalar built-in already in the kernel's interface.
    fn load_builtin_cx(&mut self, bi: BuiltIn) -> R<Word> {
        let var = self.builtin(bi);
        self.b.load(self.u32_t, None, var, None, []).map_err(be)
    }

    // ---- structured control flow ----

    /// A function-local variable, declared at the start of the entry block (where
    /// SPIR-V requires every OpVariable of a function to be).
    fn local(&mut self, t: Word) -> Word {
        let p = self.ptr(StorageClass::Function, t);
        let id = self.b.id();
        let inst = rspirv::dr::Instruction::new(
            spirv::Op::Variable,
            Some(p),
            Some(id),
            vec![Operand::StorageClass(StorageClass::Function)],
        );
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

    fn load(&mut self, t: Word, var: Word) -> R<Word> {
        self.b.load(t, None, var, None, []).map_err(be)
    }

    fn store(&mut self, var: Word, v: Word) -> R<()> {
        self.b.store(var, v, None, []).map_err(be)
    }

    /// `if cond { then }`.
    fn if_then(&mut self, cond: Word, then: impl FnOnce(&mut Self) -> R<()>) -> R<()> {
        self.if_else(cond, then, |_| Ok(()))
    }

    /// `if cond { then } else { els }`.
    fn if_else(
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
    fn while_loop(
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
    fn count_loop(
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

    fn barrier(&mut self) -> R<()> {
        let wg = self.c_u32(SCOPE_WORKGROUP);
        let sem = self.c_u32(SEM_ACQ_REL_WORKGROUP);
        self.b.control_barrier(wg, wg, sem).map_err(be)
    }

    // ---- arithmetic ----

    fn ult(&mut self, a: Word, b: Word) -> R<Word> {
        self.b.u_less_than(self.bool_t, None, a, b).map_err(be)
    }

    fn uadd(&mut self, a: Word, b: Word) -> R<Word> {
        self.b.i_add(self.u32_t, None, a, b).map_err(be)
    }

    fn umul(&mut self, a: Word, b: Word) -> R<Word> {
        self.b.i_mul(self.u32_t, None, a, b).map_err(be)
    }

    /// A comparison of two values of type `t`, as a boolean (i32 0 or 1).
    fn compare(&mut self, op: BinOp, t: ElemType, a: Word, c: Word) -> R<Word> {
        let bt = self.bool_t;
        let float = t.is_float();
        if t == ElemType::F64 {
            return self.tolerant_compare(op, a, c);
        }
        let b = &mut self.b;
        let r = match (op, float) {
            (BinOp::Less, false) => b.s_less_than(bt, None, a, c),
            (BinOp::Less, true) => b.f_ord_less_than(bt, None, a, c),
            (BinOp::LessEq, false) => b.s_less_than_equal(bt, None, a, c),
            (BinOp::LessEq, true) => b.f_ord_less_than_equal(bt, None, a, c),
            (BinOp::Equal, false) => b.i_equal(bt, None, a, c),
            (BinOp::Equal, true) => b.f_ord_equal(bt, None, a, c),
            (BinOp::GreaterEq, false) => b.s_greater_than_equal(bt, None, a, c),
            (BinOp::GreaterEq, true) => b.f_ord_greater_than_equal(bt, None, a, c),
            (BinOp::Greater, false) => b.s_greater_than(bt, None, a, c),
            (BinOp::Greater, true) => b.f_ord_greater_than(bt, None, a, c),
            (BinOp::NotEqual, false) => b.i_not_equal(bt, None, a, c),
            (BinOp::NotEqual, true) => b.f_unord_not_equal(bt, None, a, c),
            _ => {
                return Err(SpirvError::Build(format!(
                    "{} is not a comparison",
                    op.glyph()
                )))
            }
        }
        .map_err(be)?;
        self.bool_word(r)
    }

    /// A SPIR-V boolean as an APL boolean (an i32 word, 0 or 1).
    fn bool_word(&mut self, r: Word) -> R<Word> {
        let it = self.ty(ElemType::Bool);
        let (one, zero) = (
            self.scalar(Scalar::Bool(true)),
            self.scalar(Scalar::Bool(false)),
        );
        self.b.select(it, None, r, one, zero).map_err(be)
    }

    /// A comparison of f64s within ⎕CT: `x<y` is `(x<y) ∧ x≠y` tolerantly, and so on.
    fn tolerant_compare(&mut self, op: BinOp, a: Word, c: Word) -> R<Word> {
        let bt = self.bool_t;
        let eq = self.tolerant_eq(a, c)?;
        let neq = self.b.logical_not(bt, None, eq).map_err(be)?;
        let r = match op {
            BinOp::Equal => eq,
            BinOp::NotEqual => neq,
            BinOp::Less | BinOp::Greater => {
                let strict = if op == BinOp::Less {
                    self.b.f_ord_less_than(bt, None, a, c)
                } else {
                    self.b.f_ord_greater_than(bt, None, a, c)
                }
                .map_err(be)?;
                self.b.logical_and(bt, None, strict, neq).map_err(be)?
            }
            _ => {
                let strict = if op == BinOp::LessEq {
                    self.b.f_ord_less_than(bt, None, a, c)
                } else {
                    self.b.f_ord_greater_than(bt, None, a, c)
                }
                .map_err(be)?;
                self.b.logical_or(bt, None, strict, eq).map_err(be)?
            }
        };
        self.bool_word(r)
    }

    fn binop(&mut self, op: BinOp, t: ElemType, a: Word, c: Word) -> R<Word> {
        // On booleans (0 and 1), and is the minimum and or the maximum.
        let op = match (op, t) {
            (BinOp::And, ElemType::Bool) => BinOp::Min,
            (BinOp::Or, ElemType::Bool) => BinOp::Max,
            (op, _) => op,
        };
        if !op.on_gpu() {
            return Err(SpirvError::Build(format!(
                "{} has no device form yet",
                op.glyph()
            )));
        }
        let ty = self.ty(t);
        let float = t.is_float();
        let b = &mut self.b;
        let r = match (op, float) {
            (BinOp::Add, false) => b.i_add(ty, None, a, c),
            (BinOp::Add, true) => b.f_add(ty, None, a, c),
            (BinOp::Sub, false) => b.i_sub(ty, None, a, c),
            (BinOp::Sub, true) => b.f_sub(ty, None, a, c),
            (BinOp::Mul, false) => b.i_mul(ty, None, a, c),
            (BinOp::Mul, true) => b.f_mul(ty, None, a, c),
            (BinOp::Div, _) => b.f_div(ty, None, a, c),
            (BinOp::Max, _) | (BinOp::Min, _) => {
                let bt = self.bool_t;
                let gt = match (op, float) {
                    (BinOp::Max, false) => b.s_greater_than(bt, None, a, c),
                    (BinOp::Max, true) => b.f_ord_greater_than(bt, None, a, c),
                    (_, false) => b.s_less_than(bt, None, a, c),
                    (_, true) => b.f_ord_less_than(bt, None, a, c),
                }
                .map_err(be)?;
                b.select(ty, None, gt, a, c)
            }
            _ => {
                return Err(SpirvError::Build(format!(
                    "{} has no device form yet",
                    op.glyph()
                )))
            }
        };
        r.map_err(be)
    }

    /// A subgroup collective of `op` over `v`.
    fn group(&mut self, op: BinOp, t: ElemType, gop: GroupOperation, v: Word) -> R<Word> {
        let op = match (op, t) {
            (BinOp::And, ElemType::Bool) => BinOp::Min,
            (BinOp::Or, ElemType::Bool) => BinOp::Max,
            (op, _) => op,
        };
        let ty = self.ty(t);
        let sg = self.c_u32(SCOPE_SUBGROUP);
        let float = t.is_float();
        let b = &mut self.b;
        match (op, float) {
            (BinOp::Add, false) => b.group_non_uniform_i_add(ty, None, sg, gop, v, None),
            (BinOp::Add, true) => b.group_non_uniform_f_add(ty, None, sg, gop, v, None),
            (BinOp::Mul, false) => b.group_non_uniform_i_mul(ty, None, sg, gop, v, None),
            (BinOp::Mul, true) => b.group_non_uniform_f_mul(ty, None, sg, gop, v, None),
            (BinOp::Max, false) => b.group_non_uniform_s_max(ty, None, sg, gop, v, None),
            (BinOp::Max, true) => b.group_non_uniform_f_max(ty, None, sg, gop, v, None),
            (BinOp::Min, false) => b.group_non_uniform_s_min(ty, None, sg, gop, v, None),
            (BinOp::Min, true) => b.group_non_uniform_f_min(ty, None, sg, gop, v, None),
            (op, _) => {
                return Err(SpirvError::Build(format!(
                    "{op:?} is not associative: no subgroup form"
                )))
            }
        }
        .map_err(be)
    }

    fn elect(&mut self) -> R<Word> {
        let sg = self.c_u32(SCOPE_SUBGROUP);
        self.b
            .group_non_uniform_elect(self.bool_t, None, sg)
            .map_err(be)
    }

    fn convert(&mut self, v: Word, from: ElemType, to: ElemType) -> R<Word> {
        // Booleans are i32 words already.
        if from == to || self.ty(from) == self.ty(to) {
            return Ok(v);
        }
        let ty = self.ty(to);
        if to == ElemType::I64 && !from.is_float() {
            // i32 → i64 as ((u64)(u32)v ^ 2^31) - 2^31, not OpSConvert: lavapipe then
            // tests the sign of the widened value as if it were zero-extended
            // (`k←¯2 ⋄ (k+0)<0` gave 0).
            let u64t = self.b.type_int(64, 0);
            let u = self.b.bitcast(self.u32_t, None, v).map_err(be)?;
            let w = self.b.u_convert(u64t, None, u).map_err(be)?;
            let bias = self.constant(u64t, 1 << 31, true);
            let x = self.b.bitwise_xor(u64t, None, w, bias).map_err(be)?;
            let d = self.b.i_sub(u64t, None, x, bias).map_err(be)?;
            return self.b.bitcast(ty, None, d).map_err(be);
        }
        let r = match (from.is_float(), to.is_float()) {
            (true, true) => self.b.f_convert(ty, None, v),
            (true, false) => self.b.convert_f_to_s(ty, None, v),
            (false, true) => self.b.convert_s_to_f(ty, None, v),
            _ => return self.b.s_convert(ty, None, v).map_err(be),
        }
        .map_err(be)?;
        // Conversions to and from floats round: `NoContraction` keeps them (Mesa
        // folds an unmarked float→int of an int→float to the integer itself, so
        // `⌊(4611686018427387904+⍳3)×1` kept integers no f32 holds).
        self.b
            .decorate(r, rspirv::spirv::Decoration::NoContraction, []);
        Ok(r)
    }

    // ---- buffers ----

    fn elem_ptr(&mut self, cx: &Cx, binding: u32, idx: Word) -> R<(Word, ElemType)> {
        let (var, t) = cx.bindings[binding as usize];
        let et = self.ty(t);
        let p = self.ptr(StorageClass::StorageBuffer, et);
        let zero = self.c_u32(0);
        let ptr = self.b.access_chain(p, None, var, [zero, idx]).map_err(be)?;
        Ok((ptr, t))
    }

    fn load_elem(&mut self, cx: &Cx, binding: u32, idx: Word) -> R<Word> {
        if cx.windows[binding as usize].len() > 1 {
            let t = cx.bindings[binding as usize].1;
            let ty = self.ty(t);
            let out = self.local(ty);
            self.in_window(cx, binding, idx, |e, ptr| {
                let v = e.load(ty, ptr)?;
                e.store(out, v)
            })?;
            return self.load(ty, out);
        }
        let (ptr, t) = self.elem_ptr(cx, binding, idx)?;
        let ty = self.ty(t);
        self.load(ty, ptr)
    }

    fn store_elem(&mut self, cx: &Cx, binding: u32, idx: Word, v: Word) -> R<()> {
        self.check_finite(cx, binding, v)?;
        if cx.windows[binding as usize].len() > 1 {
            return self.in_window(cx, binding, idx, |e, ptr| e.store(ptr, v));
        }
        let (ptr, _) = self.elem_ptr(cx, binding, idx)?;
        self.store(ptr, v)
    }

    /// Raises the kernel's overflow bit when `v`, about to be stored in `binding`, is
    /// not finite (see `Cx::overflow`).
    fn check_finite(&mut self, cx: &Cx, binding: u32, v: Word) -> R<()> {
        if let Some((b, bit)) = cx.overflow {
            if b == binding {
                let t = cx.bindings[b as usize].1;
                let bad = self.not_finite(t, v)?;
                self.raise(cx, Some(bit), bad)?;
            }
        }
        Ok(())
    }

    /// Runs `with` on a pointer to element `idx` of a binding split into windows: the
    /// window is `idx / per_window`, chosen by a branch per window (each access then
    /// names one variable, so no non-uniform descriptor indexing is needed).
    fn in_window(
        &mut self,
        cx: &Cx,
        binding: u32,
        idx: Word,
        with: impl Fn(&mut Self, Word) -> R<()>,
    ) -> R<()> {
        let t = cx.bindings[binding as usize].1;
        let per = (cx.window_bytes / t.size() as u64).min(u32::MAX as u64) as u32;
        let et = self.ty(t);
        let p = self.ptr(StorageClass::StorageBuffer, et);
        let perc = self.c_u32(per);
        let u = self.u32_t;
        let w = self.b.u_div(u, None, idx, perc).map_err(be)?;
        let off = self.b.u_mod(u, None, idx, perc).map_err(be)?;
        let zero = self.c_u32(0);
        for (k, var) in cx.windows[binding as usize].clone().into_iter().enumerate() {
            let kc = self.c_u32(k as u32);
            let here = self.b.i_equal(self.bool_t, None, w, kc).map_err(be)?;
            self.if_then(here, |e| {
                let ptr = e.b.access_chain(p, None, var, [zero, off]).map_err(be)?;
                with(e, ptr)
            })?;
        }
        Ok(())
    }

    /// A module-level Workgroup variable, declared from inside a function.
    fn workgroup_var(&mut self, ptr_t: Word) -> Word {
        let current = self.b.selected_block();
        let _ = self.b.select_block(None);
        let v = self.b.variable(ptr_t, None, StorageClass::Workgroup, None);
        let _ = self.b.select_block(current);
        v
    }

    /// Workgroup array `T shared[WorkgroupSize]`.
    fn shared_array(&mut self, t: ElemType) -> Word {
        let et = self.ty(t);
        let arr = self.b.type_array(et, self.wg_size);
        let p = self.ptr(StorageClass::Workgroup, arr);
        self.b.variable(p, None, StorageClass::Workgroup, None)
    }

    fn shared_ptr(&mut self, shared: Word, t: ElemType, idx: Word) -> R<Word> {
        let et = self.ty(t);
        let p = self.ptr(StorageClass::Workgroup, et);
        self.b.access_chain(p, None, shared, [idx]).map_err(be)
    }

    // ---- expressions ----

    /// Index arithmetic.
    fn iexpr(&mut self, cx: &Cx, e: &IExpr, ix: Ix) -> R<Word> {
        let u = self.u32_t;
        let two = |e: &mut Self, a: &IExpr, b: &IExpr| -> R<(Word, Word)> {
            Ok((e.iexpr(cx, a, ix)?, e.iexpr(cx, b, ix)?))
        };
        match e {
            IExpr::Index => Ok(ix.index),
            IExpr::Row => Ok(ix.row),
            IExpr::Pos => Ok(ix.pos),
            IExpr::Const(c) => Ok(self.c_u32(*c)),
            IExpr::Push(k) => self.push_constant(cx, cx.push_base + k),
            IExpr::Add(a, b) => {
                let (a, b) = two(self, a, b)?;
                self.b.i_add(u, None, a, b).map_err(be)
            }
            IExpr::Sub(a, b) => {
                let (a, b) = two(self, a, b)?;
                self.b.i_sub(u, None, a, b).map_err(be)
            }
            IExpr::Mul(a, b) => {
                let (a, b) = two(self, a, b)?;
                self.b.i_mul(u, None, a, b).map_err(be)
            }
            IExpr::Div(a, b) => {
                let (a, b) = two(self, a, b)?;
                self.b.u_div(u, None, a, b).map_err(be)
            }
            IExpr::Rem(a, b) => {
                let (a, b) = two(self, a, b)?;
                self.b.u_mod(u, None, a, b).map_err(be)
            }
            IExpr::Data(k) => {
                let v = self.expr(cx, k, ix)?;
                let bt = self.bool_t;
                match k.elem() {
                    ElemType::I64 => {
                        // Beyond u32 (negative ones too, as unsigned) is out of range.
                        let u64t = self.b.type_int(64, 0);
                        let uv = self.b.bitcast(u64t, None, v).map_err(be)?;
                        let lim = self.constant(u64t, u32::MAX as u64, true);
                        let big = self.b.u_greater_than(bt, None, uv, lim).map_err(be)?;
                        let low = self.b.u_convert(u, None, uv).map_err(be)?;
                        let max = self.c_u32(u32::MAX);
                        self.b.select(u, None, big, max, low).map_err(be)
                    }
                    _ => {
                        // i32 (booleans are i32 words): negative ones wrap to huge.
                        self.b.bitcast(u, None, v).map_err(be)
                    }
                }
            }
        }
    }

    fn push_constant(&mut self, cx: &Cx, slot: u32) -> R<Word> {
        let up = self.ptr(StorageClass::PushConstant, self.u32_t);
        let k = self.c_u32(slot);
        let p = self.b.access_chain(up, None, cx.pc, [k]).map_err(be)?;
        self.load(self.u32_t, p)
    }

    fn expr(&mut self, cx: &Cx, e: &KExpr, ix: Ix) -> R<Word> {
        match e {
            KExpr::Load { binding, index, .. } => {
                let idx = self.iexpr(cx, index, ix)?;
                self.load_elem(cx, *binding, idx)
            }
            KExpr::Operand { k, .. } => Ok(self.operands[*k as usize & 1]),
            KExpr::Iota { index, origin } => {
                let i = self.iexpr(cx, index, ix)?;
                let o = self.c_u32(*origin as u32);
                let u = self.uadd(i, o)?;
                let it = self.ty(ElemType::I32);
                self.b.bitcast(it, None, u).map_err(be)
            }
            KExpr::Select { when, then, els } => {
                let mut cond = None;
                for (a, b) in when {
                    let a = self.iexpr(cx, a, ix)?;
                    let b = self.iexpr(cx, b, ix)?;
                    let c = self.ult(a, b)?;
                    cond = Some(match cond {
                        None => c,
                        Some(p) => self.b.logical_and(self.bool_t, None, p, c).map_err(be)?,
                    });
                }
                let cond = match cond {
                    Some(c) => c,
                    None => self.b.constant_true(self.bool_t),
                };
                self.choose(cx, cond, then, els, ix)
            }
            KExpr::If { cond, then, els } => {
                // A boolean: an i32 word holding 0 or 1.
                let c = self.expr(cx, cond, ix)?;
                let zero = self.scalar(Scalar::Bool(false));
                let c = self.b.i_not_equal(self.bool_t, None, c, zero).map_err(be)?;
                self.choose(cx, c, then, els, ix)
            }
            KExpr::Const(s) => Ok(self.scalar(*s)),
            KExpr::Fail { elem, bit } => {
                let t = self.b.constant_true(self.bool_t);
                self.raise(cx, Some(*bit), t)?;
                Ok(self.scalar(Scalar::I32(0).cast(*elem)))
            }
            KExpr::Cast { to, arg } => {
                let v = self.expr(cx, arg, ix)?;
                self.convert(v, arg.elem(), *to)
            }
            KExpr::Unary {
                op,
                elem,
                arg,
                error_bit,
            } => {
                let raw = self.expr(cx, arg, ix)?;
                self.unary(cx, *op, arg.elem(), *elem, raw, *error_bit)
            }
            KExpr::Binary {
                op,
                elem,
                lhs,
                rhs,
                error_bit,
            } => {
                let a = self.expr(cx, lhs, ix)?;
                let b = self.expr(cx, rhs, ix)?;
                let circle = match **lhs {
                    KExpr::Const(s) => s.as_i64(),
                    _ => None,
                };
                self.binary(cx, *op, lhs.elem(), *elem, a, b, circle, *error_bit)
            }
        }
    }

    /// `then` where `cond` holds, else `els`: only the chosen one is evaluated.
    fn choose(&mut self, cx: &Cx, cond: Word, then: &KExpr, els: &KExpr, ix: Ix) -> R<Word> {
        let t = self.ty(then.elem());
        let var = self.local(t);
        self.if_else(
            cond,
            |e| {
                let v = e.expr(cx, then, ix)?;
                e.store(var, v)
            },
            |e| {
                let v = e.expr(cx, els, ix)?;
                e.store(var, v)
            },
        )?;
        self.load(t, var)
    }

    // ---- kernels ----

    fn kernel(&mut self, k: &Kernel, name: &str) -> R<()> {
        // A scan's tile shape is fixed here (one variable per element it holds).
        self.items_n = k.items_per_thread.max(1);
        self.float64 = k.float64;
        // Bindings: set 0, binding i.
        let mut cx = Cx {
            bindings: vec![],
            status: None,
            interface: vec![],
            shared: 0,
            n: 0,
            lid: 0,
            group: 0,
            groups: 0,
            pc: 0,
            push_base: k.kind.fixed_push(),
            combine: k.combine.clone(),
            windows: vec![],
            numbers: vec![],
            window_bytes: k.window_bytes,
            packed_status: None,
            overflow: None,
        };
        // Descriptor bindings in order, a split array's windows consecutively.
        let mut number = 0;
        for bnd in &k.bindings {
            let words = bnd.status || bnd.atomic;
            let elem = if words { ElemType::I32 } else { bnd.elem };
            let st = if words {
                self.status_struct()
            } else {
                self.buffer_struct(elem)
            };
            let p = self.ptr(StorageClass::StorageBuffer, st);
            cx.numbers.push(number);
            let mut vars = vec![];
            for _ in 0..bnd.windows.max(1) {
                let var = self.b.variable(p, None, StorageClass::StorageBuffer, None);
                self.b
                    .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
                self.b
                    .decorate(var, Decoration::Binding, [Operand::LiteralBit32(number)]);
                number += 1;
                if !bnd.writable {
                    self.b.decorate(var, Decoration::NonWritable, []);
                }
                if bnd.shared_between_groups {
                    // Written by one workgroup and read by another while the kernel runs.
                    self.b.decorate(var, Decoration::Coherent, []);
                }
                vars.push(var);
            }
            if bnd.status {
                cx.status = Some(vars[0]);
            }
            cx.bindings.push((vars[0], elem));
            cx.windows.push(vars);
        }
        let pc_t = self.push_struct(k.push_constants.len());
        let pc_p = self.ptr(StorageClass::PushConstant, pc_t);
        let pc = self
            .b
            .variable(pc_p, None, StorageClass::PushConstant, None);

        cx.pc = pc;
        let shared_elem = match &k.kind {
            KernelKind::Reduce { expr, .. }
            | KernelKind::ReduceAxis {
                expr,
                unit: Unit::Workgroup,
                ..
            } => Some(expr.elem()),
            _ => None,
        };
        if let Some(t) = shared_elem {
            cx.shared = self.shared_array(t);
        }
        let fn_t = self.b.type_function(self.void, vec![]);
        let f = self
            .b
            .begin_function(self.void, None, FunctionControl::NONE, fn_t)
            .map_err(be)?;
        self.b.begin_block(None).map_err(be)?;
        let up = self.ptr(StorageClass::PushConstant, self.u32_t);
        let zero = self.c_u32(0);
        let np = self.b.access_chain(up, None, pc, [zero]).map_err(be)?;
        cx.n = self.load(self.u32_t, np)?;
        if let Some(n) = &k.n_from {
            // The element count was computed on the device.
            cx.n = self.iexpr(&cx, n, Ix::flat(zero))?;
        }
        cx.lid = self.load_builtin(&mut cx, BuiltIn::LocalInvocationId)?;
        cx.group = self.load_builtin(&mut cx, BuiltIn::WorkgroupId)?;
        cx.groups = self.load_builtin(&mut cx, BuiltIn::NumWorkgroups)?;

        match &k.kind {
            KernelKind::Map { expr, out } => self.map_kernel(&mut cx, expr, *out)?,
            KernelKind::Reduce {
                op,
                expr,
                out,
                overflow,
            } => {
                cx.overflow = overflow.map(|b| (*out, b));
                self.reduce_kernel(&mut cx, *op, expr, *out)?
            }
            KernelKind::ScanChained {
                op,
                expr,
                out,
                flags,
                aggregates,
                inclusive,
                counter,
                every_subgroup_looks_back,
                packed,
                shuffle,
                tiles_by_workgroup,
                overflow,
            } => {
                cx.overflow = overflow.map(|b| (*out, b));
                if *packed {
                    cx.packed_status = Some(self.u64_view(&cx, *flags)?);
                }
                self.scan_kernel(
                    &mut cx,
                    *op,
                    expr,
                    *out,
                    [*flags, *aggregates, *inclusive, *counter],
                    *every_subgroup_looks_back,
                    *tiles_by_workgroup,
                    *shuffle,
                )?
            }
            KernelKind::ReduceAxis {
                fold,
                expr,
                out,
                unit,
                overflow,
            } => {
                cx.overflow = overflow.map(|b| (*out, b));
                self.reduce_axis_kernel(&mut cx, *fold, expr, *out, *unit)?
            }
            KernelKind::ScanAxis {
                fold,
                expr,
                out,
                out_index,
                unit,
                overflow,
            } => {
                cx.overflow = overflow.map(|b| (*out, b));
                self.scan_axis_kernel(&mut cx, *fold, expr, *out, out_index, *unit)?
            }
            KernelKind::MatMul { a, b, out } => self.matmul_kernel(&mut cx, a, b, *out)?,
            KernelKind::IndirectArgs {
                n,
                per_group,
                max,
                out,
            } => {
                let zero = self.c_u32(0);
                let first = self
                    .b
                    .i_equal(self.bool_t, None, cx.lid, zero)
                    .map_err(be)?;
                let cxr = &cx;
                self.if_then(first, |e| {
                    let n = e.iexpr(cxr, n, Ix::flat(zero))?;
                    let per = e.c_u32(*per_group);
                    let pm1 = e.c_u32(per_group - 1);
                    let up = e.uadd(n, pm1)?;
                    let g = e.b.u_div(e.u32_t, None, up, per).map_err(be)?;
                    let mx = e.c_u32(*max);
                    let g = e.umin(g, mx)?;
                    let one = e.c_u32(1);
                    let is0 = e.b.i_equal(e.bool_t, None, g, zero).map_err(be)?;
                    let g = e.b.select(e.u32_t, None, is0, one, g).map_err(be)?;
                    let it = e.ty(ElemType::I32);
                    let gi = e.b.bitcast(it, None, g).map_err(be)?;
                    let onei = e.scalar(Scalar::I32(1));
                    e.store_elem(cxr, *out, zero, gi)?;
                    let c1 = e.c_u32(1);
                    e.store_elem(cxr, *out, c1, onei)?;
                    let c2 = e.c_u32(2);
                    e.store_elem(cxr, *out, c2, onei)
                })?;
            }
            KernelKind::Compress {
                mask,
                value,
                positions,
                out,
                len,
            } => self.compress_kernel(&mut cx, mask, value, *positions, *out, *len)?,
            KernelKind::SortStep {
                keys,
                idx,
                down,
                origin,
            } => self.sort_step_kernel(&mut cx, *keys, *idx, *down, *origin)?,
            KernelKind::Search {
                keys,
                order,
                needle,
                out,
                kind,
                tolerant,
            } => self.search_kernel(&mut cx, *keys, *order, needle, *out, *kind, *tolerant)?,
        }
        self.b.ret().map_err(be)?;
        self.b.end_function().map_err(be)?;
        let mut iface = cx.interface.clone();
        iface.sort_unstable();
        self.b
            .entry_point(ExecutionModel::GLCompute, f, name, iface);
        self.b
            .execution_mode(f, ExecutionMode::LocalSize, [1, 1, 1]);
        Ok(())
    }

    /// Push constants: `count` u32 fields at offsets 0, 4, …
    fn push_struct(&mut self, count: usize) -> Word {
        if let Some(&id) = self.push_structs.get(&count) {
            return id;
        }
        let fields: Vec<Word> = (0..count).map(|_| self.u32_t).collect();
        let st = self.b.type_struct(fields);
        self.b.decorate(st, Decoration::Block, []);
        for i in 0..count {
            self.b.member_decorate(
                st,
                i as u32,
                Decoration::Offset,
                [Operand::LiteralBit32(4 * i as u32)],
            );
        }
        self.push_structs.insert(count, st);
        st
    }

    fn status_struct(&mut self) -> Word {
        if let Some(id) = self.status_struct {
            return id;
        }
        // A u32 runtime array; distinct from the i32 data struct so atomics see u32.
        let st = self.block_of(self.u32_t, 4);
        self.status_struct = Some(st);
        st
    }

    fn map_kernel(&mut self, cx: &mut Cx, expr: &KExpr, out: u32) -> R<()> {
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            let v = e.expr(cx, expr, Ix::flat(j))?;
            e.store_elem(cx, out, j, v)
        };
        self.unrolled_share(cx, &per, i, k)
    }

    /// Folds this workgroup's share of `expr` into `out[group]`: per-invocation loop,
    /// subgroup reduction, then one invocation folds the subgroup results in order.
    fn reduce_kernel(&mut self, cx: &mut Cx, op: BinOp, expr: &KExpr, out: u32) -> R<()> {
        let t = expr.elem();
        let tt = self.ty(t);
        let acc = self.local(tt);
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        let shared = cx.shared;
        let id = self.identity(op, t);
        self.store(acc, id)?;
        // A plain 4-byte array is read 16 bytes at a time (four elements per load).
        let vec_src = match expr {
            KExpr::Load {
                binding,
                elem: ElemType::F32 | ElemType::I32,
                index: IExpr::Index,
            } if cx.windows[*binding as usize].len() == 1 => Some(*binding),
            _ => None,
        };
        if let Some(binding) = vec_src {
            let v4 = self.vec4_view(cx, binding, t, false)?;
            let vt = self.b.type_vector(tt, 4);
            let pv = self.ptr(StorageClass::StorageBuffer, vt);
            let u = self.u32_t;
            let two = self.c_u32(2);
            let n = cx.n;
            let n4 = self.b.shift_right_logical(u, None, n, two).map_err(be)?;
            cx.n = n4;
            let per4 = |e: &mut Self, _cx: &Cx, j: Word| -> R<()> {
                let zero = e.c_u32(0);
                let p = e.b.access_chain(pv, None, v4, [zero, j]).map_err(be)?;
                let v = e.load(vt, p)?;
                let mut a = e.load(tt, acc)?;
                for c in 0..4 {
                    let x = e.b.composite_extract(tt, None, v, [c]).map_err(be)?;
                    a = e.binop(op, t, a, x)?;
                }
                e.store(acc, a)
            };
            let r = self.unrolled_share(cx, &per4, i, k);
            cx.n = n;
            r?;
            // The last n mod 4 elements, by the first invocations of workgroup 0.
            let three = self.c_u32(3);
            let tail = self.b.bitwise_and(u, None, n, three).map_err(be)?;
            let zero = self.c_u32(0);
            let g0 = self
                .b
                .i_equal(self.bool_t, None, cx.group, zero)
                .map_err(be)?;
            let lt = self.ult(cx.lid, tail)?;
            let mine = self.b.logical_and(self.bool_t, None, g0, lt).map_err(be)?;
            let cxr = &*cx;
            self.if_then(mine, |e| {
                let base = e.b.shift_left_logical(u, None, n4, two).map_err(be)?;
                let j = e.uadd(base, cxr.lid)?;
                let x = e.load_elem(cxr, binding, j)?;
                let a = e.load(tt, acc)?;
                let r = e.binop(op, t, a, x)?;
                e.store(acc, r)
            })?;
        } else {
            let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
                let x = e.expr(cx, expr, Ix::flat(j))?;
                let a = e.load(tt, acc)?;
                let r = e.binop(op, t, a, x)?;
                e.store(acc, r)
            };
            self.unrolled_share(cx, &per, i, k)?;
        }
        let a = self.load(tt, acc)?;
        let s = self.group(op, t, GroupOperation::Reduce, a)?;
        let sid = self.load_builtin(cx, BuiltIn::SubgroupId)?;
        let nsg = self.load_builtin(cx, BuiltIn::NumSubgroups)?;
        let el = self.elect()?;
        self.if_then(el, |e| {
            let p = e.shared_ptr(shared, t, sid)?;
            e.store(p, s)
        })?;
        self.barrier()?;
        let zero = self.c_u32(0);
        let first = self
            .b
            .i_equal(self.bool_t, None, cx.lid, zero)
            .map_err(be)?;
        let cxr = &*cx;
        self.if_then(first, |e| {
            let p0 = e.shared_ptr(shared, t, zero)?;
            let v0 = e.load(tt, p0)?;
            e.store(acc, v0)?;
            let one = e.c_u32(1);
            e.store(k, one)?;
            e.while_loop(
                |e| {
                    let kv = e.load(e.u32_t, k)?;
                    e.ult(kv, nsg)
                },
                |e| {
                    let kv = e.load(e.u32_t, k)?;
                    let p = e.shared_ptr(shared, t, kv)?;
                    let v = e.load(tt, p)?;
                    let a = e.load(tt, acc)?;
                    let r = e.binop(op, t, a, v)?;
                    e.store(acc, r)
                },
                |e| {
                    let kv = e.load(e.u32_t, k)?;
                    let one = e.c_u32(1);
                    let nx = e.uadd(kv, one)?;
                    e.store(k, nx)
                },
            )?;
            let a = e.load(tt, acc)?;
            e.store_elem(cxr, out, cxr.group, a)
        })
    }

    /// A right fold from position `from` down to 0: `acc ← x[from]`, then
    /// `acc ← x[k] f acc` for k = from-1 … 0 (`kvar` counts down).
    #[allow(clippy::too_many_arguments)]
    fn fold_down(
        &mut self,
        cx: &Cx,
        fold: Fold,
        t: ElemType,
        acc: Word,
        kvar: Word,
        from: Word,
        x_at: &dyn Fn(&mut Self, Word) -> R<Word>,
    ) -> R<()> {
        let u = self.u32_t;
        let tt = self.ty(t);
        let first = x_at(self, from)?;
        self.store(acc, first)?;
        self.store(kvar, from)?;
        self.while_loop(
            |e| {
                let kv = e.load(u, kvar)?;
                let zero = e.c_u32(0);
                e.ult(zero, kv)
            },
            |e| {
                let kv = e.load(u, kvar)?;
                let one = e.c_u32(1);
                let k = e.b.i_sub(u, None, kv, one).map_err(be)?;
                e.store(kvar, k)?;
                let x = x_at(e, k)?;
                let a = e.load(tt, acc)?;
                let r = e.apply2(cx, fold, t, x, a)?;
                e.store(acc, r)
            },
            |_| Ok(()),
        )
    }

    /// `a f b` for a right fold's function, its errors raised.
    fn apply2(&mut self, cx: &Cx, fold: Fold, t: ElemType, a: Word, b: Word) -> R<Word> {
        let (op, bit) = match fold {
            Fold::Right { op, error_bit } => (op, error_bit),
            Fold::Assoc(op) => (op, None),
            Fold::Dfn { .. } => {
                let step = cx
                    .combine
                    .as_ref()
                    .ok_or_else(|| SpirvError::Build("a dfn fold without its step".into()))?;
                let saved = self.operands;
                self.operands = [a, b];
                let zero = self.c_u32(0);
                let r = self.expr(cx, step, Ix::flat(zero));
                self.operands = saved;
                return r;
            }
        };
        // A right fold keeps its type (`t` is already the fold's float type if any).
        self.binary(
            cx,
            op,
            t,
            op.result_type(t, t, t.join(ElemType::F32)),
            a,
            b,
            None,
            bit,
        )
    }

    fn umin(&mut self, a: Word, b: Word) -> R<Word> {
        let lt = self.ult(a, b)?;
        self.b.select(self.u32_t, None, lt, a, b).map_err(be)
    }

    /// Grid-stride loop over the units (rows or row pieces) of an axis kernel:
    /// `body(u)` for each unit `u < units` this invocation's unit owns.
    fn units_loop(
        &mut self,
        cx: &mut Cx,
        unit: Unit,
        units: Word,
        body: &dyn Fn(&mut Self, &Cx, Word) -> R<()>,
    ) -> R<()> {
        let (first, step) = match unit {
            Unit::Thread | Unit::Quad => {
                let base = self.umul(cx.group, self.wg_size)?;
                let first = self.uadd(base, cx.lid)?;
                (first, self.umul(cx.groups, self.wg_size)?)
            }
            Unit::Subgroup => {
                let sid = self.load_builtin(cx, BuiltIn::SubgroupId)?;
                let nsg = self.load_builtin(cx, BuiltIn::NumSubgroups)?;
                let base = self.umul(cx.group, nsg)?;
                (self.uadd(base, sid)?, self.umul(cx.groups, nsg)?)
            }
            Unit::Workgroup => (cx.group, cx.groups),
        };
        let var = self.local(self.u32_t);
        let cxr = &*cx;
        self.count_loop(var, first, units, step, |e, u| body(e, cxr, u))
    }

    /// `body(k)` for `k = k0+off, k0+off+step, … < k1`, `items` at a time (independent
    /// loads in flight; whole blocks unchecked), in increasing order.
    fn strided(
        &mut self,
        k0: Word,
        k1: Word,
        off: Word,
        step: Word,
        body: &dyn Fn(&mut Self, Word) -> R<()>,
    ) -> R<()> {
        let u = self.u32_t;
        let k = self.local(u);
        let j = self.local(u);
        let start = self.uadd(k0, off)?;
        self.store(k, start)?;
        let one = self.c_u32(1);
        let itm1 = self.b.i_sub(u, None, self.items, one).map_err(be)?;
        let span = self.umul(itm1, step)?;
        let block = self.umul(self.items, step)?;
        self.while_loop(
            |e| {
                let kv = e.load(u, k)?;
                let last = e.uadd(kv, span)?;
                let in_k = e.ult(kv, k1)?;
                let in_last = e.ult(last, k1)?;
                e.b.logical_and(e.bool_t, None, in_k, in_last).map_err(be)
            },
            |e| {
                let zero = e.c_u32(0);
                let one = e.c_u32(1);
                let kv = e.load(u, k)?;
                e.count_loop(j, zero, e.items, one, |e, jv| {
                    let off = e.umul(jv, step)?;
                    let at = e.uadd(kv, off)?;
                    body(e, at)
                })
            },
            |e| {
                let kv = e.load(u, k)?;
                let nx = e.uadd(kv, block)?;
                e.store(k, nx)
            },
        )?;
        self.while_loop(
            |e| {
                let kv = e.load(u, k)?;
                e.ult(kv, k1)
            },
            |e| {
                let kv = e.load(u, k)?;
                body(e, kv)
            },
            |e| {
                let kv = e.load(u, k)?;
                let nx = e.uadd(kv, step)?;
                e.store(k, nx)
            },
        )
    }

    /// `Unit::Quad`: as [`Self::reduce_axis_kernel`] with four neighbouring rows per
    /// invocation (`rows` is a multiple of 4 and rows 4q…4q+3 are consecutive in
    /// memory): for `u < rows/4 × parts`, rows `4·(u mod rows/4)`… of piece
    /// `u div rows/4`, four accumulators, and one 16-byte load per position where the
    /// argument is a plain 4-byte array read at the split's index.
    fn reduce_quads_kernel(&mut self, cx: &mut Cx, op: BinOp, expr: &KExpr, out: u32) -> R<()> {
        let t = expr.elem();
        let tt = self.ty(t);
        let u = self.u32_t;
        let rows = cx.n;
        let len = self.push_constant(cx, 1)?;
        let parts = self.push_constant(cx, 2)?;
        let four = self.c_u32(4);
        let quads = self.b.u_div(u, None, rows, four).map_err(be)?;
        let units = self.umul(quads, parts)?;
        let one = self.c_u32(1);
        let pm1 = self.b.i_sub(u, None, parts, one).map_err(be)?;
        let lp = self.uadd(len, pm1)?;
        let per = self.b.u_div(u, None, lp, parts).map_err(be)?;
        let accs: Vec<Word> = (0..4).map(|_| self.local(tt)).collect();
        // A plain array of 4-byte elements, read as vectors (possibly converted).
        let vec_in = match plain_load(cx, expr) {
            Some((b, from @ (ElemType::F32 | ElemType::I32), index)) => {
                Some((self.vec4_source(cx, b, from)?, index.clone()))
            }
            _ => None,
        };
        let body = |e: &mut Self, cx: &Cx, unit_id: Word| -> R<()> {
            let q = e.b.u_mod(u, None, unit_id, quads).map_err(be)?;
            let p = e.b.u_div(u, None, unit_id, quads).map_err(be)?;
            let row0 = e.umul(q, four)?;
            let start = e.umul(p, per)?;
            let k0 = e.umin(start, len)?;
            let end = e.uadd(k0, per)?;
            let k1 = e.umin(end, len)?;
            let id = e.identity(op, t);
            for &a in &accs {
                e.store(a, id)?;
            }
            let zero = e.c_u32(0);
            let one = e.c_u32(1);
            e.strided(k0, k1, zero, one, &|e, k| {
                let mut xs = vec![];
                match &vec_in {
                    Some((src, index)) => {
                        let ix = Ix {
                            index: k,
                            row: row0,
                            pos: k,
                        };
                        let i = e.iexpr(cx, index, ix)?;
                        let two = e.c_u32(2);
                        let vi = e.b.shift_right_logical(u, None, i, two).map_err(be)?;
                        xs.extend(e.load_vec4(src, vi, t)?);
                    }
                    None => {
                        for c in 0..4u32 {
                            let cc = e.c_u32(c);
                            let row = e.uadd(row0, cc)?;
                            let ix = Ix {
                                index: k,
                                row,
                                pos: k,
                            };
                            xs.push(e.expr(cx, expr, ix)?);
                        }
                    }
                }
                for (&a, x) in accs.iter().zip(xs) {
                    let av = e.load(tt, a)?;
                    let r = e.binop(op, t, av, x)?;
                    e.store(a, r)?;
                }
                Ok(())
            })?;
            let pr = e.umul(p, rows)?;
            let o0 = e.uadd(pr, row0)?;
            for (c, &a) in accs.iter().enumerate() {
                let cc = e.c_u32(c as u32);
                let o = e.uadd(o0, cc)?;
                let av = e.load(tt, a)?;
                e.store_elem(cx, out, o, av)?;
            }
            Ok(())
        };
        self.units_loop(cx, Unit::Quad, units, &body)
    }

    /// Folds one row (or row piece) per unit: `out[u]` for `u < rows×parts` (push
    /// constants 0, 1, 2: rows, len, parts).
    fn reduce_axis_kernel(
        &mut self,
        cx: &mut Cx,
        fold: Fold,
        expr: &KExpr,
        out: u32,
        unit: Unit,
    ) -> R<()> {
        if unit == Unit::Quad {
            return self.reduce_quads_kernel(cx, fold.op(), expr, out);
        }
        let t = expr.elem();
        let tt = self.ty(t);
        let u = self.u32_t;
        let op = fold.op();
        let rows = cx.n;
        let len = self.push_constant(cx, 1)?;
        let parts = self.push_constant(cx, 2)?;
        let units = self.umul(rows, parts)?;
        let one = self.c_u32(1);
        let pm1 = self.b.i_sub(u, None, parts, one).map_err(be)?;
        let lp = self.uadd(len, pm1)?;
        let per = self.b.u_div(u, None, lp, parts).map_err(be)?;
        let acc = self.local(tt);
        let (off, step) = match unit {
            Unit::Thread | Unit::Quad => (self.c_u32(0), self.c_u32(1)),
            Unit::Subgroup => (
                self.load_builtin(cx, BuiltIn::SubgroupLocalInvocationId)?,
                self.load_builtin(cx, BuiltIn::SubgroupSize)?,
            ),
            Unit::Workgroup => (cx.lid, self.wg_size),
        };
        let (sid, nsg) = match unit {
            Unit::Workgroup => (
                self.load_builtin(cx, BuiltIn::SubgroupId)?,
                self.load_builtin(cx, BuiltIn::NumSubgroups)?,
            ),
            _ => (0, 0),
        };
        let shared = cx.shared;
        let kvar = self.local(u);
        let body = |e: &mut Self, cx: &Cx, unit_id: Word| -> R<()> {
            let row = e.b.u_mod(u, None, unit_id, rows).map_err(be)?;
            let x_at = |e: &mut Self, k: Word| -> R<Word> {
                e.expr(
                    cx,
                    expr,
                    Ix {
                        index: k,
                        row,
                        pos: k,
                    },
                )
            };
            if fold.is_right() {
                // x0 f (x1 f (… f x[len-1])), from the right.
                let zero = e.c_u32(0);
                let empty = e.b.i_equal(e.bool_t, None, len, zero).map_err(be)?;
                e.if_else(
                    empty,
                    |e| {
                        if let Fold::Dfn { empty_error } = fold {
                            let tr = e.b.constant_true(e.bool_t);
                            e.raise(cx, empty_error, tr)?;
                        }
                        let id = e.identity(op, t);
                        e.store(acc, id)
                    },
                    |e| {
                        let one = e.c_u32(1);
                        let last = e.b.i_sub(u, None, len, one).map_err(be)?;
                        e.fold_down(cx, fold, t, acc, kvar, last, &x_at)
                    },
                )?;
                let a = e.load(tt, acc)?;
                return e.store_elem(cx, out, unit_id, a);
            }
            let p = e.b.u_div(u, None, unit_id, rows).map_err(be)?;
            let start = e.umul(p, per)?;
            let k0 = e.umin(start, len)?;
            let end = e.uadd(k0, per)?;
            let k1 = e.umin(end, len)?;
            let id = e.identity(op, t);
            e.store(acc, id)?;
            e.strided(k0, k1, off, step, &|e, k| {
                let x = x_at(e, k)?;
                let a = e.load(tt, acc)?;
                let r = e.binop(op, t, a, x)?;
                e.store(acc, r)
            })?;
            let a = e.load(tt, acc)?;
            match unit {
                Unit::Thread | Unit::Quad => e.store_elem(cx, out, unit_id, a),
                Unit::Subgroup => {
                    let r = e.group(op, t, GroupOperation::Reduce, a)?;
                    let el = e.elect()?;
                    e.if_then(el, |e| e.store_elem(cx, out, unit_id, r))
                }
                Unit::Workgroup => {
                    let r = e.group(op, t, GroupOperation::Reduce, a)?;
                    let el = e.elect()?;
                    e.if_then(el, |e| {
                        let p = e.shared_ptr(shared, t, sid)?;
                        e.store(p, r)
                    })?;
                    e.barrier()?;
                    let zero = e.c_u32(0);
                    let first = e.b.i_equal(e.bool_t, None, cx.lid, zero).map_err(be)?;
                    e.if_then(first, |e| {
                        let id = e.identity(op, t);
                        e.store(acc, id)?;
                        let zero = e.c_u32(0);
                        let one = e.c_u32(1);
                        e.count_loop(kvar, zero, nsg, one, |e, s| {
                            let p = e.shared_ptr(shared, t, s)?;
                            let v = e.load(tt, p)?;
                            let a = e.load(tt, acc)?;
                            let r = e.binop(op, t, a, v)?;
                            e.store(acc, r)
                        })?;
                        let a = e.load(tt, acc)?;
                        e.store_elem(cx, out, unit_id, a)
                    })?;
                    // The shared table is reused by the next unit.
                    e.barrier()
                }
            }
        };
        self.units_loop(cx, unit, units, &body)
    }

    /// Stream compaction's scatter: kept elements go to their scanned positions; the
    /// last invocation stores the count.
    fn compress_kernel(
        &mut self,
        cx: &mut Cx,
        mask: &KExpr,
        value: &KExpr,
        positions: u32,
        out: u32,
        len: u32,
    ) -> R<()> {
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            let m = e.expr(cx, mask, Ix::flat(j))?;
            let zero = e.scalar(Scalar::I32(0));
            let keep = e.b.i_not_equal(e.bool_t, None, m, zero).map_err(be)?;
            e.if_then(keep, |e| {
                let p = e.load_elem(cx, positions, j)?;
                let one = e.scalar(Scalar::I32(1));
                let it = e.ty(ElemType::I32);
                let p1 = e.b.i_sub(it, None, p, one).map_err(be)?;
                let at = e.b.bitcast(e.u32_t, None, p1).map_err(be)?;
                let v = e.expr(cx, value, Ix::flat(j))?;
                e.store_elem(cx, out, at, v)
            })?;
            let one = e.c_u32(1);
            let last = e.b.i_sub(e.u32_t, None, cx.n, one).map_err(be)?;
            let is_last = e.b.i_equal(e.bool_t, None, j, last).map_err(be)?;
            e.if_then(is_last, |e| {
                let p = e.load_elem(cx, positions, j)?;
                let zero = e.c_u32(0);
                e.store_elem(cx, len, zero, p)
            })
        };
        self.unrolled_share(cx, &per, i, k)
    }

    /// A workgroup array of `len` elements of type `t`.
    fn shared_sized(&mut self, t: ElemType, len: u32) -> Word {
        let et = self.ty(t);
        let n = self.c_u32(len);
        let arr = self.b.type_array(et, n);
        let p = self.ptr(StorageClass::Workgroup, arr);
        self.workgroup_var(p)
    }

    /// `out = a+.×b` (push constants m, n, k): each workgroup of 256 computes 64×64
    /// tiles of the result (grid-stride over tiles), 4×4 outputs per invocation held
    /// in registers; 64×16 of `a` and 16×64 of `b` pass through workgroup memory per
    /// step, out-of-range elements read as 0 (any shape works).
    fn matmul_kernel(&mut self, cx: &mut Cx, a: &KExpr, b: &KExpr, out: u32) -> R<()> {
        const T: u32 = 64;
        const TK: u32 = 16;
        const R4: u32 = 4;
        let t = a.elem();
        let tt = self.ty(t);
        let u = self.u32_t;
        let m = cx.n;
        let n = self.push_constant(cx, 1)?;
        let k = self.push_constant(cx, 2)?;
        let as_ = self.shared_sized(t, T * TK);
        let bs = self.shared_sized(t, T * TK);
        let accs: Vec<Word> = (0..R4 * R4).map(|_| self.local(tt)).collect();
        let tmp = self.local(tt);
        let tile_var = self.local(u);
        let k0_var = self.local(u);
        let c63 = self.c_u32(T - 1);
        let c64 = self.c_u32(T);
        let n63 = self.uadd(n, c63)?;
        let tiles_n = self.b.u_div(u, None, n63, c64).map_err(be)?;
        let m63 = self.uadd(m, c63)?;
        let tiles_m = self.b.u_div(u, None, m63, c64).map_err(be)?;
        let tiles = self.umul(tiles_m, tiles_n)?;
        let c16 = self.c_u32(16);
        let ty_ = self.b.u_div(u, None, cx.lid, c16).map_err(be)?;
        let tx = self.b.u_mod(u, None, cx.lid, c16).map_err(be)?;
        let zero_t = self.scalar(Scalar::I32(0).cast(t));
        let cxr = &*cx;
        let (group, groups, lid) = (cx.group, cx.groups, cx.lid);
        self.count_loop(tile_var, group, tiles, groups, |e, tile| {
            let tr = e.b.u_div(u, None, tile, tiles_n).map_err(be)?;
            let tc = e.b.u_mod(u, None, tile, tiles_n).map_err(be)?;
            let row0 = e.umul(tr, c64)?;
            let col0 = e.umul(tc, c64)?;
            for &acc in &accs {
                e.store(acc, zero_t)?;
            }
            let zero = e.c_u32(0);
            let step = e.c_u32(TK);
            e.count_loop(k0_var, zero, k, step, |e, k0| {
                // Stage the tiles: 4 elements of each per invocation. Element `eid` of
                // a tile `width` wide is (eid / width, eid mod width) from (r0, c0) of
                // an operand of `rows`×`cols`; outside it reads 0.
                let stage = |e: &mut Self,
                             operand: &KExpr,
                             eid: Word,
                             width: u32,
                             (r0, c0): (Word, Word),
                             (rows, cols): (Word, Word)|
                 -> R<(Word, Word, Word)> {
                    let w = e.c_u32(width);
                    let row = e.b.u_div(u, None, eid, w).map_err(be)?;
                    let col = e.b.u_mod(u, None, eid, w).map_err(be)?;
                    let gr = e.uadd(r0, row)?;
                    let gc = e.uadd(c0, col)?;
                    let in_r = e.ult(gr, rows)?;
                    let in_c = e.ult(gc, cols)?;
                    let ok = e.b.logical_and(e.bool_t, None, in_r, in_c).map_err(be)?;
                    e.if_else(
                        ok,
                        |e| {
                            let base = e.umul(gr, cols)?;
                            let idx = e.uadd(base, gc)?;
                            let v = e.expr(cxr, operand, Ix::flat(idx))?;
                            e.store(tmp, v)
                        },
                        |e| e.store(tmp, zero_t),
                    )?;
                    Ok((e.load(tt, tmp)?, row, col))
                };
                for r in 0..R4 {
                    let el = e.c_u32(r * 256);
                    let eid = e.uadd(lid, el)?;
                    // a: 64 rows × 16 columns, stored column-major (as[col][row]).
                    let (v, arow, acol) = stage(e, a, eid, TK, (row0, k0), (m, k))?;
                    let c64 = e.c_u32(T);
                    let s = e.umul(acol, c64)?;
                    let s = e.uadd(s, arow)?;
                    let p = e.shared_ptr(as_, t, s)?;
                    e.store(p, v)?;
                    // b: 16 rows × 64 columns (bs[row][col]).
                    let (v, _, _) = stage(e, b, eid, T, (k0, col0), (k, n))?;
                    let p = e.shared_ptr(bs, t, eid)?;
                    e.store(p, v)?;
                }
                e.barrier()?;
                let c4 = e.c_u32(R4);
                let ty4 = e.umul(ty_, c4)?;
                let tx4 = e.umul(tx, c4)?;
                for kk in 0..TK {
                    let base = e.c_u32(kk * T);
                    let mut av = vec![];
                    let mut bv = vec![];
                    for i in 0..R4 {
                        let ci = e.c_u32(i);
                        let ai = e.uadd(ty4, ci)?;
                        let ai = e.uadd(base, ai)?;
                        let p = e.shared_ptr(as_, t, ai)?;
                        av.push(e.load(tt, p)?);
                        let bi = e.uadd(tx4, ci)?;
                        let bi = e.uadd(base, bi)?;
                        let p = e.shared_ptr(bs, t, bi)?;
                        bv.push(e.load(tt, p)?);
                    }
                    for i in 0..R4 as usize {
                        for j in 0..R4 as usize {
                            let acc = accs[i * R4 as usize + j];
                            let prod = e.binop(BinOp::Mul, t, av[i], bv[j])?;
                            let cur = e.load(tt, acc)?;
                            let sum = e.binop(BinOp::Add, t, cur, prod)?;
                            e.store(acc, sum)?;
                        }
                    }
                }
                e.barrier()
            })?;
            let c4 = e.c_u32(R4);
            let ty4 = e.umul(ty_, c4)?;
            let tx4 = e.umul(tx, c4)?;
            for i in 0..R4 {
                for j in 0..R4 {
                    let ci = e.c_u32(i);
                    let cj = e.c_u32(j);
                    let r = e.uadd(ty4, ci)?;
                    let gi = e.uadd(row0, r)?;
                    let c = e.uadd(tx4, cj)?;
                    let gj = e.uadd(col0, c)?;
                    let in_i = e.ult(gi, m)?;
                    let in_j = e.ult(gj, n)?;
                    let ok = e.b.logical_and(e.bool_t, None, in_i, in_j).map_err(be)?;
                    let acc = accs[(i * R4 + j) as usize];
                    e.if_then(ok, |e| {
                        let v = e.load(tt, acc)?;
                        let rn = e.umul(gi, n)?;
                        let idx = e.uadd(rn, gj)?;
                        e.store_elem(cxr, out, idx, v)
                    })?;
                }
            }
            Ok(())
        })
    }

    /// Inclusive scan of each row (push constants 0, 1: rows, len); element
    /// (`Row`, `Pos`) is stored at `out_index`.
    fn scan_axis_kernel(
        &mut self,
        cx: &mut Cx,
        fold: Fold,
        expr: &KExpr,
        out: u32,
        out_index: &IExpr,
        unit: Unit,
    ) -> R<()> {
        let t = expr.elem();
        let tt = self.ty(t);
        let u = self.u32_t;
        let op = fold.op();
        let rows = cx.n;
        let len = self.push_constant(cx, 1)?;
        let acc = self.local(tt);
        let carry = self.local(tt);
        let kvar = self.local(u);
        let jvar = self.local(u);
        let (lane, sgsize) = match unit {
            Unit::Subgroup => (
                self.load_builtin(cx, BuiltIn::SubgroupLocalInvocationId)?,
                self.load_builtin(cx, BuiltIn::SubgroupSize)?,
            ),
            _ => (0, 0),
        };
        let body = |e: &mut Self, cx: &Cx, row: Word| -> R<()> {
            let at = |k: Word| Ix {
                index: k,
                row,
                pos: k,
            };
            let store_at = |e: &mut Self, k: Word, v: Word| -> R<()> {
                let i = e.iexpr(cx, out_index, at(k))?;
                e.store_elem(cx, out, i, v)
            };
            let zero = e.c_u32(0);
            let one = e.c_u32(1);
            // Associative folds, one row per unit (right folds go per element, below).
            match unit {
                Unit::Subgroup => {
                    let id = e.identity(op, t);
                    e.store(carry, id)?;
                    e.count_loop(kvar, zero, len, sgsize, |e, base| {
                        let k = e.uadd(base, lane)?;
                        let valid = e.ult(k, len)?;
                        e.if_else(
                            valid,
                            |e| {
                                let x = e.expr(cx, expr, at(k))?;
                                e.store(acc, x)
                            },
                            |e| {
                                let id = e.identity(op, t);
                                e.store(acc, id)
                            },
                        )?;
                        let x = e.load(tt, acc)?;
                        let sc = e.group(op, t, GroupOperation::InclusiveScan, x)?;
                        let tot = e.group(op, t, GroupOperation::Reduce, x)?;
                        let c = e.load(tt, carry)?;
                        let r = e.binop(op, t, c, sc)?;
                        e.if_then(valid, |e| store_at(e, k, r))?;
                        let nc = e.binop(op, t, c, tot)?;
                        e.store(carry, nc)
                    })
                }
                _ => {
                    let id = e.identity(op, t);
                    e.store(acc, id)?;
                    e.count_loop(kvar, zero, len, one, |e, k| {
                        let x = e.expr(cx, expr, at(k))?;
                        let a = e.load(tt, acc)?;
                        let r = e.binop(op, t, a, x)?;
                        e.store(acc, r)?;
                        store_at(e, k, r)
                    })
                }
            }
        };
        if matches!(fold, Fold::Right { .. } | Fold::Dfn { .. }) {
            // One invocation per element (row, k): x0 f (x1 f (… f xk)). The prefixes
            // are independent, so a row of n costs n folds side by side rather than
            // n²/2 steps in one invocation (whose inner loop lavapipe cut off after
            // 65535 steps in all: `¯2↑-\⍳1000` was 0 0).
            let units = self.umul(rows, len)?;
            let per_elem = |e: &mut Self, cx: &Cx, unit_id: Word| -> R<()> {
                let row = e.b.u_div(u, None, unit_id, len).map_err(be)?;
                let k = e.b.u_mod(u, None, unit_id, len).map_err(be)?;
                let at = |j: Word| Ix {
                    index: j,
                    row,
                    pos: j,
                };
                let x_at = |e: &mut Self, j: Word| e.expr(cx, expr, at(j));
                e.fold_down(cx, fold, t, acc, jvar, k, &x_at)?;
                let a = e.load(tt, acc)?;
                let i = e.iexpr(cx, out_index, at(k))?;
                e.store_elem(cx, out, i, a)
            };
            return self.units_loop(cx, Unit::Thread, units, &per_elem);
        }
        self.units_loop(cx, unit, rows, &body)
    }

    /// Runs `per` on this invocation's grid-stride share, `items` elements per trip
    /// (`i`, `i+WG`, … `i+(items-1)·WG`: coalesced across the workgroup, independent
    /// loads in flight). The trip count is specialization constant 1, so the driver
    /// unrolls it; whole blocks skip the bounds checks.
    fn unrolled_share(
        &mut self,
        cx: &mut Cx,
        per: &dyn Fn(&mut Self, &Cx, Word) -> R<()>,
        i: Word,
        k: Word,
    ) -> R<()> {
        let block = self.umul(self.wg_size, self.items)?;
        let base = self.umul(cx.group, block)?;
        let start = self.uadd(base, cx.lid)?;
        let step = self.umul(cx.groups, block)?;
        let one = self.c_u32(1);
        let itm1 = self
            .b
            .i_sub(self.u32_t, None, self.items, one)
            .map_err(be)?;
        let span = self.umul(itm1, self.wg_size)?;
        self.store(i, start)?;
        let cxr = &*cx;
        let trips = |e: &mut Self, checked: bool| -> R<()> {
            let zero = e.c_u32(0);
            e.store(k, zero)?;
            e.while_loop(
                |e| {
                    let kv = e.load(e.u32_t, k)?;
                    e.ult(kv, e.items)
                },
                |e| {
                    let iv = e.load(e.u32_t, i)?;
                    let kv = e.load(e.u32_t, k)?;
                    let off = e.umul(kv, e.wg_size)?;
                    let j = e.uadd(iv, off)?;
                    let body = |e: &mut Self| -> R<()> { per(e, cxr, j) };
                    if checked {
                        let inb = e.ult(j, cxr.n)?;
                        e.if_then(inb, body)
                    } else {
                        body(e)
                    }
                },
                |e| {
                    let kv = e.load(e.u32_t, k)?;
                    let one = e.c_u32(1);
                    let nx = e.uadd(kv, one)?;
                    e.store(k, nx)
                },
            )
        };
        self.while_loop(
            |e| {
                let iv = e.load(e.u32_t, i)?;
                e.ult(iv, cxr.n)
            },
            |e| {
                let iv = e.load(e.u32_t, i)?;
                let last = e.uadd(iv, span)?;
                let whole = e.ult(last, cxr.n)?;
                e.if_else(whole, |e| trips(e, false), |e| trips(e, true))
            },
            |e| {
                let iv = e.load(e.u32_t, i)?;
                let nx = e.uadd(iv, step)?;
                e.store(i, nx)
            },
        )
    }

    /// Single-pass inclusive scan: chained scan with decoupled lookback.
    ///
    /// Each workgroup takes one tile of `WG×items` elements, in order, from an atomic
    /// counter (or its workgroup id). The tile is cut into one contiguous chunk per
    /// subgroup; in each of the chunk's `items/V` rounds an invocation owns `V`
    /// consecutive elements (`V` = 4 when `items` is a multiple of 4, read as one
    /// 16-byte load from a plain f32/i32 array), so a round is one coalesced run of
    /// the subgroup's width. An invocation scans its elements serially in registers;
    /// per round one subgroup exclusive scan and one reduction of the invocations'
    /// totals place them within the chunk, so a subgroup knows its chunk's scan
    /// without workgroup memory. The chunk totals go through workgroup memory once:
    /// after one barrier, subgroup 0 reduces them to the tile's aggregate, publishes
    /// it (flag 1), looks back over earlier tiles until it meets an inclusive prefix
    /// (flag 2), publishes its own and hands the prefix on through workgroup memory,
    /// while the other subgroups add the totals of the chunks before theirs. A spin is
    /// bounded: after `spin` (specialization constant 2) polls of a tile that has
    /// published nothing, the subgroup reduces that tile's input itself (decoupled
    /// fallback), so a device with no forward-progress guarantee between workgroups
    /// cannot hang. Positions follow (SubgroupId, SubgroupLocalInvocationId), so the
    /// result does not depend on how the device lays subgroups out; the workgroup
    /// size is a multiple of the subgroup size (the planner rounds it).
    #[allow(clippy::too_many_arguments)]
    fn scan_kernel(
        &mut self,
        cx: &mut Cx,
        op: BinOp,
        expr: &KExpr,
        out: u32,
        state: [u32; 4],
        every_subgroup: bool,
        tiles_by_workgroup: bool,
        shuffle: bool,
    ) -> R<()> {
        let counter = state[3];
        let t = expr.elem();
        let tt = self.ty(t);
        let u = self.u32_t;
        let bt = self.bool_t;
        let (width, rounds) = if self.items_n.is_multiple_of(4) {
            (4u32, self.items_n / 4)
        } else {
            (1, self.items_n)
        };
        // One function variable per element of the tile an invocation holds (the
        // driver keeps them in registers).
        let mut xs = vec![];
        for _ in 0..rounds {
            let row: Vec<Word> = (0..width).map(|_| self.local(tt)).collect();
            xs.push(row);
        }
        let j = self.local(u);
        let spins = self.local(u);
        let carry = self.local(tt);
        let whole_agg = self.local(tt);
        let prefix = self.local(tt);
        let fb = self.local(tt);
        let e2 = self.local(u);
        let looking = self.local(bt);
        let lookback_vars = [j, spins, prefix, fb, looking];
        let max_totals = self.c_u32(SCAN_TOTALS);
        let tot_arr = self.b.type_array(tt, max_totals);
        let pt = self.ptr(StorageClass::Workgroup, tot_arr);
        let totals = self.workgroup_var(pt);
        let pu = self.ptr(StorageClass::Workgroup, u);
        let ptt = self.ptr(StorageClass::Workgroup, tt);
        let sh_tile = self.workgroup_var(pu);
        let sh_prefix = self.workgroup_var(ptt);
        let id = self.identity(op, t);
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let dev = self.c_u32(SCOPE_DEVICE);
        let relaxed = self.c_u32(0);
        let sid = self.load_builtin(cx, BuiltIn::SubgroupId)?;
        let nsg = self.load_builtin(cx, BuiltIn::NumSubgroups)?;
        let sgs = self.load_builtin(cx, BuiltIn::SubgroupSize)?;
        let lane = self.load_builtin(cx, BuiltIn::SubgroupLocalInvocationId)?;
        let per_tile = self.c_u32(rounds * width);
        let blk = self.umul(self.wg_size, per_tile)?;
        let first = self.b.i_equal(bt, None, cx.lid, zero).map_err(be)?;
        // Vector loads and stores (four elements each) where a side is a plain
        // array in one window; the input may be converted as it is read (`+\` of i32
        // scans in i64).
        let vectors = |e: ElemType| {
            matches!(
                e,
                ElemType::F32 | ElemType::I32 | ElemType::I64 | ElemType::F64
            )
        };
        let vec_in = match plain_load(cx, expr) {
            Some((b, from, IExpr::Index)) if width == 4 && vectors(from) => {
                Some(self.vec4_source(cx, b, from)?)
            }
            _ => None,
        };
        let vec_out = if width == 4
            && cx.windows[out as usize].len() == 1
            && cx.bindings[out as usize].1 == t
            && vectors(t)
        {
            Some(self.vec4_view(cx, out, t, true)?)
        } else {
            None
        };
        let vt = self.b.type_vector(tt, 4);
        let pvt = self.ptr(StorageClass::StorageBuffer, vt);
        // Whole vectors end at n/V: a vector index below that is in bounds throughout.
        let wc = self.c_u32(width);
        let n_whole = self.b.u_div(u, None, cx.n, wc).map_err(be)?;
        let cxr = &*cx;
        let rc = self.c_u32(rounds);
        let per_wg = self.umul(self.wg_size, rc)?;
        // Subgroup s owns the s-th of the tile's nsg consecutive chunks: `rounds`
        // rounds of one vector per lane, each round a contiguous run of the subgroup's
        // width.
        let chunk = self.umul(rc, sgs)?;
        let mine = self.umul(sid, chunk)?;
        let mine = self.uadd(mine, lane)?;
        let elem_at = |e: &mut Self, v: Word, c: u32| -> R<Word> {
            let vw = e.umul(v, wc)?;
            let cc = e.c_u32(c);
            e.uadd(vw, cc)
        };
        // One tile per workgroup (the dispatch has exactly one workgroup per tile), so
        // every barrier is in the function's top-level control flow. Invocation 0
        // claims the tile from the counter, so tiles start in order: a tile's
        // predecessors were claimed by workgroups already running.
        let e = self;
        let tile = if tiles_by_workgroup {
            cxr.group
        } else {
            e.if_then(first, |e| {
                let (var, _) = cxr.bindings[counter as usize];
                let p = e.ptr(StorageClass::StorageBuffer, u);
                let cp = e.b.access_chain(p, None, var, [zero, zero]).map_err(be)?;
                let t =
                    e.b.atomic_i_add(u, None, cp, dev, relaxed, one)
                        .map_err(be)?;
                e.store(sh_tile, t)
            })?;
            e.barrier()?;
            e.load(u, sh_tile)?
        };
        // A tile's vector indices for this invocation, one per round, and whether the
        // whole tile is in bounds (only the last tile checks bounds).
        let base = e.umul(tile, per_wg)?;
        let sb = e.uadd(base, mine)?;
        let mut vidx = vec![];
        for r in 0..rounds {
            let ro = e.c_u32(r);
            let ro = e.umul(ro, sgs)?;
            vidx.push(e.uadd(sb, ro)?);
        }
        let end = e.uadd(base, per_wg)?;
        let whole = e.b.u_less_than_equal(bt, None, end, n_whole).map_err(be)?;
        // Every load of the tile is issued before any is used.
        e.if_else(
            whole,
            |e| {
                for (row, &v) in xs.iter().zip(&vidx) {
                    if let Some(src) = &vec_in {
                        let x4 = e.load_vec4(src, v, t)?;
                        for (&var, x) in row.iter().zip(x4) {
                            e.store(var, x)?;
                        }
                    } else {
                        for (c, &var) in row.iter().enumerate() {
                            let i = elem_at(e, v, c as u32)?;
                            let x = e.expr(cxr, expr, Ix::flat(i))?;
                            e.store(var, x)?;
                        }
                    }
                }
                Ok(())
            },
            |e| {
                for (row, &v) in xs.iter().zip(&vidx) {
                    for (c, &var) in row.iter().enumerate() {
                        let i = elem_at(e, v, c as u32)?;
                        let inb = e.ult(i, cxr.n)?;
                        e.store(var, id)?;
                        e.if_then(inb, |e| {
                            let x = e.expr(cxr, expr, Ix::flat(i))?;
                            e.store(var, x)
                        })?;
                    }
                }
                Ok(())
            },
        )?;
        // Each round: a serial inclusive scan of the invocation's own elements,
        // then an exclusive scan and a reduction of the rows' totals across the
        // subgroup (the rounds are independent, so their subgroup operations
        // overlap).
        let mut round_scans = vec![];
        for row in &xs {
            let mut acc = e.load(tt, row[0])?;
            for &var in &row[1..] {
                let x = e.load(tt, var)?;
                acc = e.binop(op, t, acc, x)?;
                e.store(var, acc)?;
            }
            let ex = e.group(op, t, GroupOperation::ExclusiveScan, acc)?;
            // The round's total: the last lane's inclusive value, or a
            // reduction where the device has no shuffles.
            let tot = if shuffle {
                e.uses_shuffle = true;
                let inc = e.binop(op, t, ex, acc)?;
                let one = e.c_u32(1);
                let last = e.b.i_sub(u, None, sgs, one).map_err(be)?;
                let sg = e.c_u32(SCOPE_SUBGROUP);
                e.b.group_non_uniform_shuffle(tt, None, sg, inc, last)
                    .map_err(be)?
            } else {
                e.group(op, t, GroupOperation::Reduce, acc)?
            };
            round_scans.push((ex, tot));
        }
        // Earlier rounds' totals and earlier lanes go into the elements now, so
        // that after the lookback only the tile's and the subgroup's prefixes
        // remain.
        let mut run: Option<Word> = None;
        for (row, &(ex, tot)) in xs.iter().zip(&round_scans) {
            let off = match run {
                Some(r) => e.binop(op, t, r, ex)?,
                None => ex,
            };
            for &var in row {
                let x = e.load(tt, var)?;
                let y = e.binop(op, t, off, x)?;
                e.store(var, y)?;
            }
            run = Some(match run {
                Some(r) => e.binop(op, t, r, tot)?,
                None => tot,
            });
        }
        let sg_total = run.unwrap_or(id);
        let el = e.elect()?;
        e.if_then(el, |e| {
            let p = e.shared_ptr(totals, t, sid)?;
            e.store(p, sg_total)
        })?;
        e.barrier()?;
        // The subgroup's exclusive prefix within the tile (`carry`) and, for
        // subgroup 0 (or every subgroup, when each looks back), the tile's
        // aggregate: reductions of the subgroup totals, a subgroup width at a time.
        let sg0 = e.b.i_equal(bt, None, sid, zero).map_err(be)?;
        e.store(carry, id)?;
        e.store(whole_agg, id)?;
        e.store(e2, zero)?;
        e.while_loop(
            |e| {
                let ev = e.load(u, e2)?;
                e.ult(ev, nsg)
            },
            |e| {
                let ev = e.load(u, e2)?;
                let k = e.uadd(ev, lane)?;
                let ink = e.ult(k, nsg)?;
                e.store(fb, id)?;
                e.if_then(ink, |e| {
                    let p = e.shared_ptr(totals, t, k)?;
                    let v = e.load(tt, p)?;
                    e.store(fb, v)
                })?;
                let v = e.load(tt, fb)?;
                let before = e.ult(k, sid)?;
                let vb = e.b.select(tt, None, before, v, id).map_err(be)?;
                let q = e.group(op, t, GroupOperation::Reduce, vb)?;
                let c = e.load(tt, carry)?;
                let nc = e.binop(op, t, c, q)?;
                e.store(carry, nc)?;
                let need_agg = if every_subgroup {
                    e.b.constant_true(bt)
                } else {
                    sg0
                };
                e.if_then(need_agg, |e| {
                    let a = e.group(op, t, GroupOperation::Reduce, v)?;
                    let c = e.load(tt, whole_agg)?;
                    let na = e.binop(op, t, c, a)?;
                    e.store(whole_agg, na)
                })
            },
            |e| {
                let ev = e.load(u, e2)?;
                let nx = e.uadd(ev, sgs)?;
                e.store(e2, nx)
            },
        )?;
        let fold_in = |e: &mut Self, a: Word| -> R<()> {
            for row in &xs {
                for &var in row {
                    let x = e.load(tt, var)?;
                    let y = e.binop(op, t, a, x)?;
                    e.store(var, y)?;
                }
            }
            Ok(())
        };
        if every_subgroup {
            // Each subgroup looks back itself (values are uniform within it, so
            // control flow stays uniform) and finds the same prefix; subgroup 0
            // publishes. No subgroup waits at a barrier while another spins.
            let agg = e.load(tt, whole_agg)?;
            e.look_back(cxr, op, expr, state, agg, tile, lookback_vars, blk)?;
            let pv = e.load(tt, prefix)?;
            let c = e.load(tt, carry)?;
            let a = e.binop(op, t, pv, c)?;
            fold_in(e, a)?;
        } else {
            // Subgroup 0 publishes and looks back while the others add their
            // subgroup prefix; then it hands the tile's prefix on through
            // workgroup memory.
            e.if_else(
                sg0,
                |e| {
                    let agg = e.load(tt, whole_agg)?;
                    e.look_back(cxr, op, expr, state, agg, tile, lookback_vars, blk)?;
                    let el = e.elect()?;
                    e.if_then(el, |e| {
                        let pv = e.load(tt, prefix)?;
                        e.store(sh_prefix, pv)
                    })
                },
                |e| {
                    let c = e.load(tt, carry)?;
                    fold_in(e, c)
                },
            )?;
            e.barrier()?;
            let pv = e.load(tt, sh_prefix)?;
            fold_in(e, pv)?;
        }
        // Output.
        for (row, &v) in xs.iter().zip(&vidx) {
            let mut ys = vec![];
            for &var in row {
                ys.push(e.load(tt, var)?);
            }
            let each = |e: &mut Self, checked: bool| -> R<()> {
                for (c, &y) in ys.iter().enumerate() {
                    let i = elem_at(e, v, c as u32)?;
                    if checked {
                        let inb = e.ult(i, cxr.n)?;
                        e.if_then(inb, |e| e.store_elem(cxr, out, i, y))?;
                    } else {
                        e.store_elem(cxr, out, i, y)?;
                    }
                }
                Ok(())
            };
            e.if_else(
                whole,
                |e| match vec_out {
                    Some(v4) => {
                        for &y in &ys {
                            e.check_finite(cxr, out, y)?;
                        }
                        let y =
                            e.b.composite_construct(vt, None, ys.iter().copied())
                                .map_err(be)?;
                        let p = e.b.access_chain(pvt, None, v4, [zero, v]).map_err(be)?;
                        e.store(p, y)
                    }
                    None => each(e, false),
                },
                |e| each(e, true),
            )?;
        }
        Ok(())
    }

    /// A subgroup's part in a tile's publication: the aggregate (flag 1) or, for
    /// tile 0, the inclusive prefix (flag 2); then, past tile 0, the lookback into
    /// `prefix` and the inclusive prefix. Only subgroup 0 publishes.
    #[allow(clippy::too_many_arguments)]
    fn look_back(
        &mut self,
        cx: &Cx,
        op: BinOp,
        expr: &KExpr,
        state: [u32; 4],
        agg: Word,
        tile: Word,
        vars: [Word; 5],
        blk: Word,
    ) -> R<()> {
        let [flags, aggs, incls, _] = state;
        let [j, spins, prefix, _, looking] = vars;
        let t = expr.elem();
        let tt = self.ty(t);
        let (u, bt) = (self.u32_t, self.bool_t);
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let two = self.c_u32(2);
        let id = self.identity(op, t);
        let sid = self.load_builtin_cx(BuiltIn::SubgroupId)?;
        let sg0 = self.b.i_equal(bt, None, sid, zero).map_err(be)?;
        let is0 = self.b.i_equal(bt, None, tile, zero).map_err(be)?;
        self.store(prefix, id)?;
        self.if_else(
            is0,
            |e| e.publish(cx, sg0, [incls, flags], zero, agg, t, two),
            |e| {
                e.publish(cx, sg0, [aggs, flags], tile, agg, t, one)?;
                let jm = e.b.i_sub(u, None, tile, one).map_err(be)?;
                e.store(j, jm)?;
                e.store(spins, zero)?;
                let tru = e.b.constant_true(bt);
                e.store(looking, tru)?;
                let limit = e.spin;
                e.while_loop(
                    |e| e.load(bt, looking),
                    |e| e.lookback_step(cx, op, expr, [flags, aggs, incls], vars, blk, limit),
                    |_| Ok(()),
                )?;
                let pv = e.load(tt, prefix)?;
                let inc = e.binop(op, t, pv, agg)?;
                e.publish(cx, sg0, [incls, flags], tile, inc, t, two)
            },
        )
    }

    /// One elected lane of subgroup 0 stores a tile's value words, then its flag with release
    /// semantics (so the words are visible before the flag).
    #[allow(clippy::too_many_arguments)]
    fn publish(
        &mut self,
        cx: &Cx,
        sg0: Word,
        bindings: [u32; 2],
        tile: Word,
        v: Word,
        t: ElemType,
        flag: Word,
    ) -> R<()> {
        let [values, flags] = bindings;
        let el = self.elect()?;
        let bt = self.bool_t;
        let me = self.b.logical_and(bt, None, sg0, el).map_err(be)?;
        self.if_then(me, |e| {
            let dev = e.c_u32(SCOPE_DEVICE);
            if let Some(view) = cx.packed_status {
                // (value bits << 32) | flag, in one atomic store.
                let relaxed = e.c_u32(0);
                let u64t = e.b.type_int(64, 0);
                let u = e.u32_t;
                let bits = e.b.bitcast(u, None, v).map_err(be)?;
                let hi = e.b.u_convert(u64t, None, bits).map_err(be)?;
                let c32 = e.constant(u64t, 32, true);
                let hi = e.b.shift_left_logical(u64t, None, hi, c32).map_err(be)?;
                let lo = e.b.u_convert(u64t, None, flag).map_err(be)?;
                let w = e.b.bitwise_or(u64t, None, hi, lo).map_err(be)?;
                let p = e.packed_ptr(view, tile)?;
                return e.b.atomic_store(p, dev, relaxed, w).map_err(be);
            }
            e.store_words(cx, values, tile, v, t)?;
            let release = e.c_u32(SEM_RELEASE_UNIFORM);
            let fp = e.flag_ptr(cx, flags, tile)?;
            e.b.atomic_store(fp, dev, release, flag).map_err(be)
        })
    }

    /// The packed status word of `tile`.
    fn packed_ptr(&mut self, view: Word, tile: Word) -> R<Word> {
        let u64t = self.b.type_int(64, 0);
        let p = self.ptr(StorageClass::StorageBuffer, u64t);
        let z = self.c_u32(0);
        self.b.access_chain(p, None, view, [z, tile]).map_err(be)
    }

    /// The flag word of `tile` (flags are one word per tile, not two).
    fn flag_ptr(&mut self, cx: &Cx, flags: u32, tile: Word) -> R<Word> {
        let (var, _) = cx.bindings[flags as usize];
        let p = self.ptr(StorageClass::StorageBuffer, self.u32_t);
        let z = self.c_u32(0);
        self.b.access_chain(p, None, var, [z, tile]).map_err(be)
    }

    /// Stores a tile value as two u32 words (`2·tile`, `2·tile+1`) with atomics, so that
    /// no compiler or memory system can move it past the flag that publishes it.
    fn store_words(&mut self, cx: &Cx, binding: u32, tile: Word, v: Word, t: ElemType) -> R<()> {
        let (u, dev, relaxed) = (self.u32_t, self.c_u32(SCOPE_DEVICE), self.c_u32(0));
        let (lo, hi) = match t {
            ElemType::I64 | ElemType::F64 => {
                self.uses_i64 = true;
                let u64t = self.b.type_int(64, 0);
                let bits = self.b.bitcast(u64t, None, v).map_err(be)?;
                let lo = self.b.u_convert(u, None, bits).map_err(be)?;
                let c32 = self.constant(u64t, 32, true);
                let sh = self
                    .b
                    .shift_right_logical(u64t, None, bits, c32)
                    .map_err(be)?;
                let hi = self.b.u_convert(u, None, sh).map_err(be)?;
                (lo, hi)
            }
            _ => (self.b.bitcast(u, None, v).map_err(be)?, self.c_u32(0)),
        };
        for (k, w) in [lo, hi].into_iter().enumerate() {
            let ptr = self.word_ptr(cx, binding, tile, k as u32)?;
            self.b.atomic_store(ptr, dev, relaxed, w).map_err(be)?;
        }
        Ok(())
    }

    /// Word `k` of tile `tile`'s value in a words binding.
    fn word_ptr(&mut self, cx: &Cx, binding: u32, tile: Word, k: u32) -> R<Word> {
        let two = self.c_u32(2);
        let i0 = self.umul(tile, two)?;
        let kc = self.c_u32(k);
        let i = self.uadd(i0, kc)?;
        let (var, _) = cx.bindings[binding as usize];
        let p = self.ptr(StorageClass::StorageBuffer, self.u32_t);
        let z = self.c_u32(0);
        self.b.access_chain(p, None, var, [z, i]).map_err(be)
    }

    /// Reads a tile value written by [`Self::store_words`].
    fn load_words(&mut self, cx: &Cx, binding: u32, tile: Word, t: ElemType) -> R<Word> {
        let (u, dev, relaxed) = (self.u32_t, self.c_u32(SCOPE_DEVICE), self.c_u32(0));
        let mut w = [0; 2];
        for (k, slot) in w.iter_mut().enumerate() {
            let ptr = self.word_ptr(cx, binding, tile, k as u32)?;
            *slot = self.b.atomic_load(u, None, ptr, dev, relaxed).map_err(be)?;
        }
        let tt = self.ty(t);
        match t {
            ElemType::I64 | ElemType::F64 => {
                self.uses_i64 = true;
                let u64t = self.b.type_int(64, 0);
                let lo = self.b.u_convert(u64t, None, w[0]).map_err(be)?;
                let hi = self.b.u_convert(u64t, None, w[1]).map_err(be)?;
                let c32 = self.constant(u64t, 32, true);
                let hs = self.b.shift_left_logical(u64t, None, hi, c32).map_err(be)?;
                let bits = self.b.bitwise_or(u64t, None, hs, lo).map_err(be)?;
                self.b.bitcast(tt, None, bits).map_err(be)
            }
            _ => self.b.bitcast(tt, None, w[0]).map_err(be),
        }
    }

    /// One step of a subgroup's lookback from tile `j`, a subgroup-width window at a
    /// time: lane `l` reads tile `j-l`'s flag. If some tile in the window has its
    /// inclusive prefix and no nearer tile is unpublished, the nearer aggregates and that
    /// prefix complete the lookback; otherwise the aggregates before the first
    /// unpublished tile are folded in and the window moves back to it. A tile still
    /// unpublished after `limit` polls is reduced from the input by the subgroup (the
    /// decoupled fallback). Lanes past tile 0 count as an inclusive prefix of identity.
    #[allow(clippy::too_many_arguments)]
    fn lookback_step(
        &mut self,
        cx: &Cx,
        op: BinOp,
        expr: &KExpr,
        state: [u32; 3],
        vars: [Word; 5],
        blk: Word,
        limit: Word,
    ) -> R<()> {
        let [flags, aggs, incls] = state;
        let [j, spins, prefix, fb, looking] = vars;
        let t = expr.elem();
        let tt = self.ty(t);
        let (u, bt) = (self.u32_t, self.bool_t);
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let two = self.c_u32(2);
        let dev = self.c_u32(SCOPE_DEVICE);
        let sg = self.c_u32(SCOPE_SUBGROUP);
        let acquire = self.c_u32(SEM_ACQUIRE_UNIFORM);
        let id = self.identity(op, t);
        let fls = self.b.constant_false(bt);
        let lane = self.load_builtin_cx(BuiltIn::SubgroupLocalInvocationId)?;
        let sgs = self.load_builtin_cx(BuiltIn::SubgroupSize)?;
        let jv = self.load(u, j)?;
        let valid = self.b.u_less_than_equal(bt, None, lane, jv).map_err(be)?;
        let tj = self.b.i_sub(u, None, jv, lane).map_err(be)?;
        // This lane's flag and value (identity unless published).
        let fl = self.local(u);
        let val = self.local(tt);
        self.store(fl, two)?;
        self.store(val, id)?;
        self.if_then(valid, |e| {
            if let Some(view) = cx.packed_status {
                // One load: the flag in the low half, the value in the high half.
                let relaxed = e.c_u32(0);
                let u64t = e.b.type_int(64, 0);
                let p = e.packed_ptr(view, tj)?;
                let w = e.b.atomic_load(u64t, None, p, dev, relaxed).map_err(be)?;
                let f = e.b.u_convert(u, None, w).map_err(be)?;
                let c32 = e.constant(u64t, 32, true);
                let hi = e.b.shift_right_logical(u64t, None, w, c32).map_err(be)?;
                let hi = e.b.u_convert(u, None, hi).map_err(be)?;
                let v = e.b.bitcast(tt, None, hi).map_err(be)?;
                e.store(fl, f)?;
                let any = e.ult(zero, f)?;
                return e.if_then(any, |e| e.store(val, v));
            }
            let fp = e.flag_ptr(cx, flags, tj)?;
            let f = e.b.atomic_load(u, None, fp, dev, acquire).map_err(be)?;
            e.store(fl, f)?;
            let is2 = e.b.i_equal(bt, None, f, two).map_err(be)?;
            let is1 = e.b.i_equal(bt, None, f, one).map_err(be)?;
            e.if_then(is2, |e| {
                let v = e.load_words(cx, incls, tj, t)?;
                e.store(val, v)
            })?;
            e.if_then(is1, |e| {
                let v = e.load_words(cx, aggs, tj, t)?;
                e.store(val, v)
            })
        })?;
        let f = self.load(u, fl)?;
        let v4 = self.b.type_vector(u, 4);
        self.uses_ballot = true;
        let first_set = |e: &mut Self, pred: Word| -> R<Word> {
            let bal =
                e.b.group_non_uniform_ballot(v4, None, sg, pred)
                    .map_err(be)?;
            let count =
                e.b.group_non_uniform_ballot_bit_count(u, None, sg, GroupOperation::Reduce, bal)
                    .map_err(be)?;
            let lsb =
                e.b.group_non_uniform_ballot_find_lsb(u, None, sg, bal)
                    .map_err(be)?;
            let any = e.ult(zero, count)?;
            e.b.select(u, None, any, lsb, sgs).map_err(be)
        };
        let is_inc = self.b.i_equal(bt, None, f, two).map_err(be)?;
        let is_unset = self.b.i_equal(bt, None, f, zero).map_err(be)?;
        let first_inc = first_set(self, is_inc)?;
        let first_unset = first_set(self, is_unset)?;
        let fold_lanes = |e: &mut Self, upto_incl: Word, inclusive: bool| -> R<()> {
            let take = if inclusive {
                e.b.u_less_than_equal(bt, None, lane, upto_incl)
                    .map_err(be)?
            } else {
                e.ult(lane, upto_incl)?
            };
            let mine = e.load(tt, val)?;
            let c = e.b.select(tt, None, take, mine, id).map_err(be)?;
            let total = e.group(op, t, GroupOperation::Reduce, c)?;
            let pv = e.load(tt, prefix)?;
            let np = e.binop(op, t, total, pv)?;
            e.store(prefix, np)
        };
        let done = self.ult(first_inc, first_unset)?;
        self.if_else(
            done,
            |e| {
                fold_lanes(e, first_inc, true)?;
                e.store(looking, fls)
            },
            |e| {
                fold_lanes(e, first_unset, false)?;
                let moved = e.ult(zero, first_unset)?;
                e.if_else(
                    moved,
                    |e| {
                        let nj = e.b.i_sub(u, None, jv, first_unset).map_err(be)?;
                        e.store(j, nj)?;
                        e.store(spins, zero)
                    },
                    |e| {
                        // Tile j is unpublished: poll again, or reduce it here.
                        let sv = e.load(u, spins)?;
                        let ns = e.uadd(sv, one)?;
                        e.store(spins, ns)?;
                        let over = e.ult(limit, ns)?;
                        e.if_then(over, |e| {
                            e.store(fb, id)?;
                            let base = e.umul(jv, blk)?;
                            let k = e.local(u);
                            e.store(k, lane)?;
                            e.while_loop(
                                |e| {
                                    let kv = e.load(u, k)?;
                                    e.ult(kv, blk)
                                },
                                |e| {
                                    let kv = e.load(u, k)?;
                                    let i = e.uadd(base, kv)?;
                                    let inb = e.ult(i, cx.n)?;
                                    e.if_then(inb, |e| {
                                        let x = e.expr(cx, expr, Ix::flat(i))?;
                                        let a = e.load(tt, fb)?;
                                        let r = e.binop(op, t, a, x)?;
                                        e.store(fb, r)
                                    })
                                },
                                |e| {
                                    let kv = e.load(u, k)?;
                                    let nx = e.uadd(kv, sgs)?;
                                    e.store(k, nx)
                                },
                            )?;
                            let mine = e.load(tt, fb)?;
                            let tot = e.group(op, t, GroupOperation::Reduce, mine)?;
                            let pv = e.load(tt, prefix)?;
                            let np = e.binop(op, t, tot, pv)?;
                            e.store(prefix, np)?;
                            let at0 = e.b.i_equal(bt, None, jv, zero).map_err(be)?;
                            e.if_else(
                                at0,
                                |e| e.store(looking, fls),
                                |e| {
                                    let jm = e.b.i_sub(u, None, jv, one).map_err(be)?;
                                    e.store(j, jm)?;
                                    e.store(spins, zero)
                                },
                            )
                        })
                    },
                )
            },
        )
    }
}
