//! `⌸`'s folds on the device: each item folds its value into its group's slot with
//! one atomic add, max or min (integers: counts, sums of i32 items in 64 bits, which
//! no group of fewer than 2^32 items can leave, and maxima and minima).

use super::{be, Cx, Emitter, Ix, R, SCOPE_DEVICE};
use arrc_ir::plan::KExpr;
use arrc_ir::scalar::BinOp;
use arrc_ir::ElemType;
use rspirv::spirv::StorageClass;

impl Emitter {
    pub(super) fn scatter_add_kernel(
        &mut self,
        cx: &mut Cx,
        op: BinOp,
        index: &KExpr,
        value: &KExpr,
        out: u32,
    ) -> R<()> {
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        let elem = cx.bindings[out as usize].1;
        if elem == ElemType::I64 {
            self.uses_i64_atomics = true;
        }
        let per = |e: &mut Self, cx: &Cx, j: rspirv::spirv::Word| -> R<()> {
            let g = e.expr(cx, index, Ix::flat(j))?;
            let g = e.b.bitcast(e.u32_t, None, g).map_err(be)?;
            let v = e.expr(cx, value, Ix::flat(j))?;
            let add = |e: &mut Self, ptr: rspirv::spirv::Word| -> R<()> {
                let t = e.ty(elem);
                let scope = e.c_u32(SCOPE_DEVICE);
                let relaxed = e.c_u32(0);
                match op {
                    BinOp::Max => e.b.atomic_s_max(t, None, ptr, scope, relaxed, v),
                    BinOp::Min => e.b.atomic_s_min(t, None, ptr, scope, relaxed, v),
                    _ => e.b.atomic_i_add(t, None, ptr, scope, relaxed, v),
                }
                .map_err(be)?;
                Ok(())
            };
            if cx.windows[out as usize].len() > 1 {
                return e.in_window(cx, out, g, add);
            }
            let (ptr, _) = e.elem_ptr(cx, out, g)?;
            add(e, ptr)
        };
        self.unrolled_share(cx, &per, i, k)
    }
}

impl Emitter {
    /// Indexed assignment's scatter: item `j` is stored at its position `p` when
    /// `owner[p]` is `j` (the last item naming `p`), so repeated positions take the
    /// last item, as APL's do. With `guard`, nothing is stored once the status word
    /// holds an error (`out` may be the array being assigned).
    pub(super) fn scatter_kernel(
        &mut self,
        cx: &mut Cx,
        index: &KExpr,
        value: &KExpr,
        owner: u32,
        out: u32,
        guard: bool,
    ) -> R<()> {
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        if guard {
            let status = cx.status.ok_or_else(|| {
                crate::SpirvError::Build("a guarded scatter without a status word".into())
            })?;
            let p = self.ptr(StorageClass::StorageBuffer, self.u32_t);
            let zero = self.c_u32(0);
            let ptr = self
                .b
                .access_chain(p, None, status, [zero, zero])
                .map_err(be)?;
            let word = self.load(self.u32_t, ptr)?;
            let clean = self.b.i_equal(self.bool_t, None, word, zero).map_err(be)?;
            return self.if_then(clean, |e| {
                e.scatter_items(cx, index, value, owner, out, i, k)
            });
        }
        self.scatter_items(cx, index, value, owner, out, i, k)
    }

    #[allow(clippy::too_many_arguments)]
    fn scatter_items(
        &mut self,
        cx: &mut Cx,
        index: &KExpr,
        value: &KExpr,
        owner: u32,
        out: u32,
        i: rspirv::spirv::Word,
        k: rspirv::spirv::Word,
    ) -> R<()> {
        let per = |e: &mut Self, cx: &Cx, j: rspirv::spirv::Word| -> R<()> {
            let p = e.expr(cx, index, Ix::flat(j))?;
            let p = e.b.bitcast(e.u32_t, None, p).map_err(be)?;
            let o = e.load_elem(cx, owner, p)?;
            let o = e.b.bitcast(e.u32_t, None, o).map_err(be)?;
            let mine = e.b.i_equal(e.bool_t, None, o, j).map_err(be)?;
            e.if_then(mine, |e| {
                let v = e.expr(cx, value, Ix::flat(j))?;
                e.store_elem(cx, out, p, v)
            })
        };
        self.unrolled_share(cx, &per, i, k)
    }
}
