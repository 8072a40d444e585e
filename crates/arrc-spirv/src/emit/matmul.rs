//! `+.×` of two matrices: 64×64 tiles per workgroup through workgroup memory.

use super::*;

impl Emitter {
    /// `out = a+.×b` (push constants m, n, k): each workgroup of 256 computes 64×64
    /// tiles of the result (grid-stride over tiles), 4×4 outputs per invocation held
    /// in registers; 64×16 of `a` and 16×64 of `b` pass through workgroup memory per
    /// step, out-of-range elements read as 0 (any shape works).
    pub(super) fn matmul_kernel(&mut self, cx: &mut Cx, a: &KExpr, b: &KExpr, out: u32) -> R<()> {
        const T: u32 = 64;
        const TK: u32 = 16;
        const R4: u32 = 4;
        let t = a.elem();
        let tt = self.ty(t);
        // Operands converted to a wider accumulator (an f32 product in f64) pass
        // through workgroup memory in their own type: half the bytes.
        let (a, b, st) = match (a, b) {
            (KExpr::Cast { arg: x, .. }, KExpr::Cast { arg: y, .. }) if x.elem() == y.elem() => {
                (&**x, &**y, x.elem())
            }
            _ => (a, b, t),
        };
        let stt = self.ty(st);
        let u = self.u32_t;
        let m = cx.n;
        let n = self.push_constant(cx, 1)?;
        let k = self.push_constant(cx, 2)?;
        let as_ = self.shared_sized(st, T * TK);
        let bs = self.shared_sized(st, T * TK);
        let accs: Vec<Word> = (0..R4 * R4).map(|_| self.local(tt)).collect();
        let tmp = self.local(stt);
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
        let zero_st = self.scalar(Scalar::I32(0).cast(st));
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
                        |e| e.store(tmp, zero_st),
                    )?;
                    Ok((e.load(stt, tmp)?, row, col))
                };
                for r in 0..R4 {
                    let el = e.c_u32(r * 256);
                    let eid = e.uadd(lid, el)?;
                    // a: 64 rows × 16 columns, stored column-major (as[col][row]).
                    let (v, arow, acol) = stage(e, a, eid, TK, (row0, k0), (m, k))?;
                    let c64 = e.c_u32(T);
                    let s = e.umul(acol, c64)?;
                    let s = e.uadd(s, arow)?;
                    let p = e.shared_ptr(as_, st, s)?;
                    e.store(p, v)?;
                    // b: 16 rows × 64 columns (bs[row][col]).
                    let (v, _, _) = stage(e, b, eid, T, (k0, col0), (k, n))?;
                    let p = e.shared_ptr(bs, st, eid)?;
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
                        let p = e.shared_ptr(as_, st, ai)?;
                        let x = e.load(stt, p)?;
                        av.push(e.convert(x, st, t)?);
                        let bi = e.uadd(tx4, ci)?;
                        let bi = e.uadd(base, bi)?;
                        let p = e.shared_ptr(bs, st, bi)?;
                        let x = e.load(stt, p)?;
                        bv.push(e.convert(x, st, t)?);
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
                        e.store_fold(cxr, out, idx, v, t)
                    })?;
                }
            }
            Ok(())
        })
    }
}
