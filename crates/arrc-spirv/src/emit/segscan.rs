//! `KernelKind::SegScan`: a scan restarted at each run's start, a tile per workgroup
//! in turn. Each invocation folds its own consecutive elements in registers, the
//! invocations' folds (with whether each holds a start) are scanned in workgroup
//! memory by doubling steps, and each invocation then folds its elements again from
//! the fold of everything before it in the tile (and the tiles before, from the
//! `carry` the aggregates' scan left), and the values go out through workgroup
//! memory in coalesced rows where it has room (`SegScanShape::staged`). Every sum
//! is in a fixed order.

use super::{be, Cx, Emitter, Ix, R};
use arrc_ir::plan::{KExpr, SegScanShape};
use arrc_ir::{ElemType, Scalar};
use rspirv::spirv::Word;

impl Emitter {
    pub(super) fn seg_scan_kernel(
        &mut self,
        cx: &Cx,
        value: &KExpr,
        flag: &KExpr,
        s: &SegScanShape,
    ) -> R<()> {
        let u = self.u32_t;
        let bt = self.bool_t;
        let acc = value.elem();
        let at = self.ty(acc);
        let items = self.items_n;
        let w = s.invocations;
        // Each invocation's fold, and 1 where it holds a start (as i32).
        let sv = self.shared_sized(acc, w);
        let sf = self.shared_sized(ElemType::I32, w);
        let tile_c = self.c_u32(w * items);
        let tiles = self.ceil_div(cx.n, tile_c)?;
        let items_c = self.c_u32(items);
        let (zero, one) = (self.c_u32(0), self.c_u32(1));
        let izero = self.scalar(Scalar::I32(0));
        let identity = self.identity(s.op, acc);
        let tvar = self.local(u);
        // `a op v`, or `v` where `v` starts a run.
        let step = |e: &mut Self, start: Word, a: Word, v: Word| -> R<Word> {
            let folded = e.binop(s.op, acc, a, v)?;
            e.b.select(at, None, start, v, folded).map_err(be)
        };
        let nonzero =
            |e: &mut Self, x: Word| -> R<Word> { e.b.i_not_equal(bt, None, x, izero).map_err(be) };
        // Whether element `j` is inside, and the place to read for it (element 0's
        // past the end: read, and nothing of it kept).
        let clamped = |e: &mut Self, j: Word| -> R<(Word, Word)> {
            let inside = e.ult(j, cx.n)?;
            Ok((inside, e.b.select(u, None, inside, j, zero).map_err(be)?))
        };
        self.count_loop(tvar, cx.group, tiles, cx.groups, |e, t| {
            // The previous tile's reads of the workgroup arrays are done.
            e.barrier()?;
            let t0 = e.umul(t, tile_c)?;
            let mine = e.umul(cx.lid, items_c)?;
            let base = e.uadd(t0, mine)?;
            // This invocation's elements: loads first, then the fold.
            let mut elems = Vec::with_capacity(items as usize);
            for k in 0..items {
                let kc = e.c_u32(k);
                let j = e.uadd(base, kc)?;
                let (inside, at_j) = clamped(e, j)?;
                let v = e.expr(cx, value, Ix::flat(at_j))?;
                let v = e.b.select(at, None, inside, v, identity).map_err(be)?;
                let f = e.expr(cx, flag, Ix::flat(at_j))?;
                let f = nonzero(e, f)?;
                let first = e.b.i_equal(bt, None, j, zero).map_err(be)?;
                let f = e.b.logical_or(bt, None, f, first).map_err(be)?;
                let f = e.b.logical_and(bt, None, f, inside).map_err(be)?;
                elems.push((j, inside, v, f));
            }
            let (mut my_v, mut my_f) = (identity, e.b.constant_false(bt));
            for &(_, _, v, f) in &elems {
                my_v = step(e, f, my_v, v)?;
                my_f = e.b.logical_or(bt, None, my_f, f).map_err(be)?;
            }
            let store_mine = |e: &mut Self, v: Word, f: Word| -> R<()> {
                let p = e.shared_ptr(sv, acc, cx.lid)?;
                e.store(p, v)?;
                let fi = e.bool_word(f)?;
                let p = e.shared_ptr(sf, ElemType::I32, cx.lid)?;
                e.store(p, fi)
            };
            let load_at = |e: &mut Self, i: Word| -> R<(Word, Word)> {
                let p = e.shared_ptr(sv, acc, i)?;
                let v = e.load(at, p)?;
                let it = e.ty(ElemType::I32);
                let p = e.shared_ptr(sf, ElemType::I32, i)?;
                let f = e.load(it, p)?;
                Ok((v, nonzero(e, f)?))
            };
            store_mine(e, my_v, my_f)?;
            e.barrier()?;
            // Inclusive scan of the invocations' folds, by doubling distances: the
            // fold `d` places before is read, then combined (the earlier on the
            // left), unless this invocation's own part has a start.
            let mut d = 1;
            while d < w {
                let dc = e.c_u32(d);
                let has = e.b.u_greater_than_equal(bt, None, cx.lid, dc).map_err(be)?;
                let back = e.b.i_sub(u, None, cx.lid, dc).map_err(be)?;
                let from = e.b.select(u, None, has, back, cx.lid).map_err(be)?;
                let (pv, pf) = load_at(e, from)?;
                e.barrier()?;
                let folded = step(e, my_f, pv, my_v)?;
                let either = e.b.logical_or(bt, None, my_f, pf).map_err(be)?;
                my_v = e.b.select(at, None, has, folded, my_v).map_err(be)?;
                my_f = e.b.select(bt, None, has, either, my_f).map_err(be)?;
                store_mine(e, my_v, my_f)?;
                e.barrier()?;
                d *= 2;
            }
            if let Some((values, flags)) = s.aggregates {
                // The tile's fold from its last start, by its last invocation.
                let lastc = e.c_u32(w - 1);
                let last = e.b.i_equal(bt, None, cx.lid, lastc).map_err(be)?;
                e.if_then(last, |e| {
                    e.store_elem(cx, values, t, my_v)?;
                    let fi = e.bool_word(my_f)?;
                    e.store_elem(cx, flags, t, fi)
                })?;
            }
            let Some(out) = s.out else {
                return Ok(());
            };
            // What comes before this tile: the aggregates' scan at the tile before.
            let tile_carry = match s.carry {
                Some(carry) => {
                    let later = e.b.i_not_equal(bt, None, t, zero).map_err(be)?;
                    let prev = e.b.i_sub(u, None, t, one).map_err(be)?;
                    let prev = e.b.select(u, None, later, prev, zero).map_err(be)?;
                    let c = e.load_elem(cx, carry, prev)?;
                    e.b.select(at, None, later, c, identity).map_err(be)?
                }
                None => identity,
            };
            // And before this invocation: the scan of the invocations before it.
            let first = e.b.i_equal(bt, None, cx.lid, zero).map_err(be)?;
            let back = e.b.i_sub(u, None, cx.lid, one).map_err(be)?;
            let from = e.b.select(u, None, first, zero, back).map_err(be)?;
            let (pv, pf) = load_at(e, from)?;
            let before = step(e, pf, tile_carry, pv)?;
            let mut run =
                e.b.select(at, None, first, tile_carry, before)
                    .map_err(be)?;
            let out_elem = cx.bindings[out as usize].1;
            // Whether the element after the invocation's last starts a run.
            let after = match s.overflow {
                Some(_) => {
                    let kc = e.c_u32(items);
                    let j = e.uadd(base, kc)?;
                    let (_, at_j) = clamped(e, j)?;
                    let f = e.expr(cx, flag, Ix::flat(at_j))?;
                    nonzero(e, f)?
                }
                None => e.b.constant_false(bt),
            };
            // The values go out through workgroup memory where it has room, so
            // that neighbouring invocations store neighbouring elements (a row of
            // `items` and one more per invocation: its writes fall in different
            // banks).
            let so = match s.staged {
                true => Some(e.shared_sized(out_elem, w * (items + 1))),
                false => None,
            };
            let row = e.c_u32(items + 1);
            let my_row = e.umul(cx.lid, row)?;
            for (k, &(j, inside, v, f)) in elems.iter().enumerate() {
                run = step(e, f, run, v)?;
                let r = e.convert(run, acc, out_elem)?;
                if let Some(bit) = s.overflow {
                    // Only a run's last value is a result.
                    let next = e.uadd(j, one)?;
                    let ends = e.b.u_greater_than_equal(bt, None, next, cx.n).map_err(be)?;
                    let starts = match elems.get(k + 1) {
                        Some(&(_, _, _, f)) => f,
                        None => after,
                    };
                    let ends = e.b.logical_or(bt, None, ends, starts).map_err(be)?;
                    let bad = e.not_finite(out_elem, r)?;
                    let bad = e.b.logical_and(bt, None, bad, ends).map_err(be)?;
                    let bad = e.b.logical_and(bt, None, bad, inside).map_err(be)?;
                    e.raise(cx, Some(bit), bad)?;
                }
                let Some(so) = so else {
                    e.if_then(inside, |e| e.store_elem(cx, out, j, r))?;
                    continue;
                };
                let kc = e.c_u32(k as u32);
                let place = e.uadd(my_row, kc)?;
                let p = e.shared_ptr(so, out_elem, place)?;
                e.store(p, r)?;
            }
            let Some(so) = so else {
                return Ok(());
            };
            e.barrier()?;
            let ot = e.ty(out_elem);
            for k in 0..items {
                // Element `k·invocations + lid` of the tile: item `i mod items` of
                // invocation `i div items`.
                let kc = e.c_u32(k * w);
                let i = e.uadd(kc, cx.lid)?;
                let owner = e.b.u_div(u, None, i, items_c).map_err(be)?;
                let within = e.b.u_mod(u, None, i, items_c).map_err(be)?;
                let place = e.umul(owner, row)?;
                let place = e.uadd(place, within)?;
                let p = e.shared_ptr(so, out_elem, place)?;
                let r = e.load(ot, p)?;
                let j = e.uadd(t0, i)?;
                let inside = e.ult(j, cx.n)?;
                e.if_then(inside, |e| e.store_elem(cx, out, j, r))?;
            }
            Ok(())
        })
    }
}
