//! Storage buffers and workgroup memory in kernels: element pointers, loads and
//! stores (through the windows of arrays bound in pieces), the overflow check of a
//! stored fold, and workgroup variables.

use super::*;

impl Emitter {
    // ---- buffers ----

    pub(super) fn elem_ptr(&mut self, cx: &Cx, binding: u32, idx: Word) -> R<(Word, ElemType)> {
        let (var, t) = cx.bindings[binding as usize];
        let et = self.ty(t);
        let p = self.ptr(StorageClass::StorageBuffer, et);
        let zero = self.c_u32(0);
        let ptr = self.b.access_chain(p, None, var, [zero, idx]).map_err(be)?;
        Ok((ptr, t))
    }

    /// A pointer to word `at` of a binding the planner made `atomic` or a status
    /// binding (u32 words: scan flags and tile values, radix counts and lookback).
    pub(super) fn word_at(&mut self, cx: &Cx, binding: u32, at: Word) -> R<Word> {
        let (var, _) = cx.bindings[binding as usize];
        let p = self.ptr(StorageClass::StorageBuffer, self.u32_t);
        let z = self.c_u32(0);
        self.b.access_chain(p, None, var, [z, at]).map_err(be)
    }

    pub(super) fn load_elem(&mut self, cx: &Cx, binding: u32, idx: Word) -> R<Word> {
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

    /// Stores a fold's value `v`, of the fold's type `t`, converted to the binding's
    /// type: an f32 `+` or `×` fold accumulates in f64 (`PlanOptions::wide_folds`)
    /// and is rounded once, here; a value past f32's range becomes infinite, which the
    /// overflow check then finds.
    pub(super) fn store_fold(
        &mut self,
        cx: &Cx,
        binding: u32,
        idx: Word,
        v: Word,
        t: ElemType,
    ) -> R<()> {
        let v = self.convert(v, t, cx.bindings[binding as usize].1)?;
        self.store_elem(cx, binding, idx, v)
    }

    pub(super) fn store_elem(&mut self, cx: &Cx, binding: u32, idx: Word, v: Word) -> R<()> {
        self.check_finite(cx, binding, v)?;
        if cx.windows[binding as usize].len() > 1 {
            return self.in_window(cx, binding, idx, |e, ptr| e.store(ptr, v));
        }
        let (ptr, _) = self.elem_ptr(cx, binding, idx)?;
        self.store(ptr, v)
    }

    /// Raises the kernel's overflow bit when `v`, about to be stored in `binding`, is
    /// not finite (see `Cx::overflow`).
    pub(super) fn check_finite(&mut self, cx: &Cx, binding: u32, v: Word) -> R<()> {
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
    pub(super) fn in_window(
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
    pub(super) fn workgroup_var(&mut self, ptr_t: Word) -> Word {
        let current = self.b.selected_block();
        let _ = self.b.select_block(None);
        let v = self.b.variable(ptr_t, None, StorageClass::Workgroup, None);
        let _ = self.b.select_block(current);
        v
    }

    /// A workgroup array of `len` elements of type `t`.
    pub(super) fn shared_sized(&mut self, t: ElemType, len: u32) -> Word {
        let et = self.ty(t);
        let n = self.c_u32(len);
        let arr = self.b.type_array(et, n);
        let p = self.ptr(StorageClass::Workgroup, arr);
        self.workgroup_var(p)
    }

    /// Workgroup array `T shared[WorkgroupSize]`.
    pub(super) fn shared_array(&mut self, t: ElemType) -> Word {
        let et = self.ty(t);
        let arr = self.b.type_array(et, self.wg_size);
        let p = self.ptr(StorageClass::Workgroup, arr);
        self.b.variable(p, None, StorageClass::Workgroup, None)
    }

    pub(super) fn shared_ptr(&mut self, shared: Word, t: ElemType, idx: Word) -> R<Word> {
        let et = self.ty(t);
        let p = self.ptr(StorageClass::Workgroup, et);
        self.b.access_chain(p, None, shared, [idx]).map_err(be)
    }
}
