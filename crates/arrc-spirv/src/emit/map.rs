//! Kernels over the elements of a grid-stride share (maps), and the loop that gives
//! each invocation its share.

use super::{be, Cx, Emitter, Ix, R};
use arrc_ir::plan::KExpr;
use rspirv::spirv::Word;

impl Emitter {
    pub(super) fn map_kernel(&mut self, cx: &mut Cx, expr: &KExpr, out: u32) -> R<()> {
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            let v = e.expr(cx, expr, Ix::flat(j))?;
            e.store_elem(cx, out, j, v)
        };
        self.unrolled_share(cx, &per, i, k)
    }

    /// Runs `per` on this invocation's grid-stride share, `items` elements per trip
    /// (`i`, `i+WG`, … `i+(items-1)·WG`: coalesced across the workgroup, independent
    /// loads in flight). The trip count is specialization constant 1, so the driver
    /// unrolls it; whole blocks skip the bounds checks.
    pub(super) fn unrolled_share(
        &mut self,
        cx: &Cx,
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
                    let body = |e: &mut Self| -> R<()> { per(e, cx, j) };
                    if checked {
                        let inb = e.ult(j, cx.n)?;
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
                e.ult(iv, cx.n)
            },
            |e| {
                let iv = e.load(e.u32_t, i)?;
                let last = e.uadd(iv, span)?;
                let whole = e.ult(last, cx.n)?;
                e.if_else(whole, |e| trips(e, false), |e| trips(e, true))
            },
            |e| {
                let iv = e.load(e.u32_t, i)?;
                let nx = e.uadd(iv, step)?;
                e.store(i, nx)
            },
        )
    }
}
