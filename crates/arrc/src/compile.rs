//! Compiling a statement for the device: its parameters (the arrays it can read), the
//! cache of compiled statements and its key, nested values compiled as their parts,
//! and `compile` for `--emit` and `]plan`.

use super::*;

impl Session {
    pub(crate) fn compile_expr(&self, e: &Expr) -> Result<CompiledStatement, Error> {
        // Deferred names read directly are compiled in, as a statement would.
        let sub = self.substitute(e);
        let names = deferred::with_inputs(
            workspace::workspace_names(&self.env.arrays, self.gpu.as_ref()),
            &sub.inputs,
        );
        // A nested value compiles as its parts (`--emit plan` shows how it is held).
        self.compile_for(0, self.env.io, &sub.expr, &names, &[], false, true)
            .map(|c| (*c).clone())
    }

    /// Compiles `e` with `arrays` as its free names (locals by their
    /// [`arrc_ir::lower::scoped_name`]), the workspace's functions, and the running
    /// dfns' `locals`.
    pub(crate) fn compile_with(
        &self,
        e: &Expr,
        arrays: &gpu::Names,
        locals: &[arrc_ir::lower::LocalScope],
        keep: bool,
    ) -> Result<std::rc::Rc<CompiledStatement>, Error> {
        self.compile_on(0, self.env.io, e, arrays, locals, keep)
    }

    /// Compiles `e` for device `dev` of the session's devices (`shard.rs`), with
    /// ⎕IO `io`, counting the time.
    pub(crate) fn compile_on(
        &self,
        dev: usize,
        io: i64,
        e: &Expr,
        arrays: &gpu::Names,
        locals: &[arrc_ir::lower::LocalScope],
        keep: bool,
    ) -> Result<std::rc::Rc<CompiledStatement>, Error> {
        self.timed(|| self.compile_for(dev, io, e, arrays, locals, keep, false))
    }

    /// `f`, its time counted as compiling (`Stats::compile_ns`).
    fn timed<T>(&self, f: impl FnOnce() -> T) -> T {
        let started = std::time::Instant::now();
        let r = f();
        let ns = started.elapsed().as_nanos() as u64;
        self.compile_ns.set(self.compile_ns.get() + ns);
        r
    }

    /// As [`Self::compile_with`] (no running dfn; the value is kept), where a nested
    /// value is compiled as its parts ([`CompiledStatement::nested`]).
    pub(crate) fn compile_nested(
        &self,
        e: &Expr,
        arrays: &gpu::Names,
    ) -> Result<std::rc::Rc<CompiledStatement>, Error> {
        self.timed(|| self.compile_for(0, self.env.io, e, arrays, &[], true, true))
    }

    #[allow(clippy::too_many_arguments)]
    fn compile_for(
        &self,
        dev: usize,
        io: i64,
        e: &Expr,
        arrays: &gpu::Names,
        locals: &[arrc_ir::lower::LocalScope],
        keep: bool,
        nested: bool,
    ) -> Result<std::rc::Rc<CompiledStatement>, Error> {
        let gpu = match dev {
            0 => self.gpu.as_ref(),
            k => self.multi.as_ref().and_then(|m| m.gpus.get(k - 1)),
        };
        // Only the arrays the statement can read are its parameters (and in the
        // key): a text or nested array elsewhere in the workspace, which the GPU path
        // does not take, sent every statement to the reference, and any assignment
        // made every compiled statement stale. Inside running dfns every name stays.
        let read;
        let arrays = if locals.is_empty() {
            read = self.readable(e, arrays);
            &read
        } else {
            arrays
        };
        // Everything the compilation reads is in the key: the expression (with its
        // spans, which errors carry), the free names' types and shapes, the values
        // of the small ones and the bounds of the others', the functions (by their count of changes), the options,
        // the device.
        let key = locals
            .is_empty()
            .then(|| format!("{dev} {io} {nested} {}", self.compile_key(e, arrays, keep)));
        if let Some(c) = key.as_ref().and_then(|k| self.compiled.get(k, e)) {
            self.compiles_reused.set(self.compiles_reused.get() + 1);
            return Ok(c);
        }
        self.compiles.set(self.compiles.get() + 1);
        let functions: Vec<_> = self
            .env
            .functions
            .iter()
            .map(|(n, f)| (n.clone(), f.clone()))
            .collect();
        let mut opts = gpu.map(|g| g.plan_options()).unwrap_or_default();
        self.tune.apply(&mut opts);
        // A result kept on the device is checked there (not after a readback).
        opts.host_checks_result &= !keep;
        let c = std::rc::Rc::new(gpu::compile(
            e,
            arrays,
            gpu::Scopes {
                functions: &functions,
                locals,
            },
            self.env.float,
            io,
            &opts,
            &self.modules,
            nested,
        )?);
        if let Some(k) = key.filter(|_| !c.uses_large_values) {
            self.compiled.put(k, e, c.clone());
        }
        Ok(c)
    }

    /// `arrays` restricted to the names `e` can read: its own (in dfns and axes too)
    /// and those of the functions it calls, at any depth.
    fn readable<'a>(&self, e: &Expr, arrays: &gpu::Names<'a>) -> gpu::Names<'a> {
        let mut names = HashSet::new();
        e.names(&mut names);
        let names = self.names_read(names);
        arrays
            .iter()
            .filter(|(n, _)| names.contains(*n))
            .map(|(n, a)| (n.clone(), a.clone()))
            .collect()
    }

    fn compile_key(&self, e: &Expr, arrays: &gpu::Names, keep: bool) -> String {
        use std::fmt::Write;
        use std::hash::{Hash, Hasher};
        // The expression by its hash (formatting it cost more than compiling from
        // the cache): the cache compares the expression itself on a hit.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        e.hash(&mut h);
        let mut key = format!(
            "{keep} {:?} {} {:e} {} {}\n{:016x}\n",
            self.env.float,
            self.env.io,
            self.env.ct,
            self.functions_changed.get(),
            self.tune_key,
            h.finish()
        );
        let mut names: Vec<_> = arrays.iter().collect();
        names.sort_by(|a, b| a.0.cmp(b.0));
        for (n, a) in names {
            let _ = write!(key, "{n}:{:?}{:?}", a.elem(), a.shape());
            // The bound its parameter carries (`Param::magnitude`): a replicate by
            // counts read from it spreads each item over that many slots.
            if let Some(m) = a.device.as_ref().and_then(|d| d.magnitude()) {
                let _ = write!(key, "<{m}");
            }
            if let Some(h) = a.host.filter(|h| h.len() <= workspace::HOST_COPY_LIMIT) {
                // The values exactly, as their bytes in hex (formatting floats cost
                // a statement of softmax's program 7% of its host time on lavapipe);
                // a mixed array's bytes do not say what it holds.
                key.push('=');
                match &h.data {
                    arrc_ir::Data::Mixed(_) => {
                        let _ = write!(key, "{:?}", h.data);
                    }
                    d => {
                        const HEX: &[u8; 16] = b"0123456789abcdef";
                        for b in d.to_bytes() {
                            key.push(HEX[usize::from(b >> 4)] as char);
                            key.push(HEX[usize::from(b & 15)] as char);
                        }
                    }
                }
            }
            key.push(';');
        }
        key
    }

    /// The workspace's functions changed: compiled statements that called them are
    /// stale.
    pub(crate) fn functions_changed(&self) {
        self.functions_changed.set(self.functions_changed.get() + 1);
    }

    /// Compiles one expression without running it: its IR, kernel plan and SPIR-V.
    /// Where `src` (one expression) has no single plan because the device path
    /// applies part of it from the host: those parts' text (empty otherwise).
    pub fn host_driven(&self, src: &str) -> Vec<String> {
        match self.parse(src).map(|p| p.stmts) {
            Ok(stmts) => match stmts.as_slice() {
                [Stmt::Expr(e)] => self.host_driven_parts(e, src),
                _ => vec![],
            },
            Err(_) => vec![],
        }
    }

    /// Compiles `src` (one expression over the workspace's names) without running
    /// it: its IR, plan and SPIR-V (`--emit`, `]plan`).
    pub fn compile(&self, src: &str) -> Result<CompiledStatement, Error> {
        let prog = self.parse(src)?;
        match prog.stmts.as_slice() {
            [Stmt::Expr(e)] => self.compile_expr(e),
            _ => Err(err::domain("give one expression to compile", 0..src.len())),
        }
    }
}
