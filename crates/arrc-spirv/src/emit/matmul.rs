//! `+.×` and the generalized inner products of two matrices: tiles per workgroup
//! through workgroup memory, several outputs per invocation in registers; and the
//! packing of boolean matrices 32 to a word for products of words.

use super::*;
use arrc_ir::plan::{BitProduct, MatMulTile};

/// Invocations along each side of a tile (a workgroup is `SIDE × SIDE`).
const SIDE: u32 = MatMulTile::SIDE;
/// Rows of tiles a run of consecutive workgroups takes before moving right, so that
/// the operands' rows and columns they read are shared in the cache.
const GROUP_ROWS: u32 = 8;

impl Emitter {
    /// `out = a+.×b` (push constants m, n, k), in tiles of `16·rows × 16·cols` per
    /// workgroup of 256 (grid-stride over tiles, taken eight rows of tiles at a time).
    /// Invocation (ty, tx) holds the `rows × cols` outputs at rows `ty + 16i` and
    /// columns `tx + 16j` of its tile, so its neighbours read neighbouring words of
    /// workgroup memory. Each step stages `steps` columns of `a` and rows of `b` in the
    /// accumulator's type (an f32 product accumulates in f64: converted once, where
    /// it is staged, not at every use; `a`'s columns padded by one word against bank
    /// conflicts); the next step's elements are read into registers while this one's
    /// are multiplied. Elements outside the operands read as 0 (for a pair, past `k`
    /// only: rows and columns past the result's read its last ones), so any shape
    /// works.
    ///
    /// With a `pair` (a generalized inner product, `⌈.+`, `∨.∧`, `+.=`), each
    /// output folds `fold` over `pair` of the staged values, from the fold's
    /// identity, in the output's type; the last step stops at `k`, so the zeros
    /// staged past it are never folded in.
    ///
    /// With `bits`, `a` and `b` are booleans packed in i32 words (`pack_bits_kernel`),
    /// `k` counts words, and each pair of words combines as `BitProduct` says; the
    /// zero words past `k` change nothing. With `checked_sum` (an i64 `+` over pairs),
    /// a sum leaving i64 raises that bit: each output counts its partial sums' wraps,
    /// and the sum is exact where they cancel.
    pub(super) fn matmul_kernel(
        &mut self,
        cx: &mut Cx,
        (a, b): (&KExpr, &KExpr),
        (fold, pair, bits): (BinOp, Option<&KExpr>, Option<BitProduct>),
        (out, checked_sum): (u32, Option<u32>),
        tile: MatMulTile,
    ) -> R<()> {
        let MatMulTile { rows, cols, steps } = tile;
        let (tile_m, tile_n) = (tile.tile_m(), tile.tile_n());
        let invocations = SIDE * SIDE;
        // Elements of each operand's step an invocation stages (the planner keeps
        // these whole).
        let a_staged = tile_m * steps / invocations;
        let b_staged = tile_n * steps / invocations;
        // What is staged: `a`'s type as the kernel gives it (the accumulator's for
        // `+.×`, whose operands come widened; the operands' for a pair; words), as
        // the planner sized the tile (`plan/folds.rs`'s `push_matmul`).
        let ht = a.elem();
        // The accumulator's type: the operands' for `+.×` (widened) and for words
        // (i32), else the output's.
        let t = match pair {
            None => ht,
            Some(_) => cx.bindings[out as usize].1,
        };
        let tt = self.ty(t);
        // Operands widened to the accumulator (an f32 product in f64) are read in
        // their own type and converted as they are staged.
        let (a, b, st) = match (a, b) {
            (KExpr::Cast { arg: x, .. }, KExpr::Cast { arg: y, .. })
                if x.elem() == y.elem() && pair.is_none() =>
            {
                (&**x, &**y, x.elem())
            }
            _ => (a, b, ht),
        };
        let htt = self.ty(ht);
        let stt = self.ty(st);
        let u = self.u32_t;
        let m = cx.n;
        let n = self.push_constant(cx, 1)?;
        let k = self.push_constant(cx, 2)?;
        let a_stride = tile.a_stride();
        let (a_words, b_words) = tile.staged_elems();
        let as_ = self.shared_sized(ht, a_words);
        let bs = self.shared_sized(ht, b_words);
        let accs: Vec<Word> = (0..rows * cols).map(|_| self.local(tt)).collect();
        // With `checked_sum`, each output's count of wraps past i64 (up +1, down
        // -1): the exact sum fits where they cancel, whatever its partial sums did.
        let it = self.ty(ElemType::I32);
        let carries: Vec<Word> = match checked_sum {
            Some(_) => (0..rows * cols).map(|_| self.local(it)).collect(),
            None => vec![],
        };
        let a_regs: Vec<Word> = (0..a_staged).map(|_| self.local(stt)).collect();
        let b_regs: Vec<Word> = (0..b_staged).map(|_| self.local(stt)).collect();
        let tile_var = self.local(u);
        let k0_var = self.local(u);
        let kk_var = self.local(u);
        let side_m = self.c_u32(tile_m);
        let side_n = self.c_u32(tile_n);
        let tiles_n = self.ceil_div(n, side_n)?;
        let tiles_m = self.ceil_div(m, side_m)?;
        let tiles = self.umul(tiles_m, tiles_n)?;
        // With a pair, the last row of `a` and column of `b` (see `fetch`).
        let (last_m, last_n) = match pair {
            None => (None, None),
            Some(_) => {
                let one = self.c_u32(1);
                let lm = self.b.i_sub(u, None, m, one).map_err(be)?;
                let ln = self.b.i_sub(u, None, n, one).map_err(be)?;
                (Some(lm), Some(ln))
            }
        };
        let c16 = self.c_u32(SIDE);
        let ty_ = self.b.u_div(u, None, cx.lid, c16).map_err(be)?;
        let tx = self.b.u_mod(u, None, cx.lid, c16).map_err(be)?;
        let zero_t = match pair {
            None => self.scalar(Scalar::I32(0).cast(t)),
            Some(_) => self.identity(fold, t),
        };
        let zero_st = self.scalar(Scalar::I32(0).cast(st));
        let zero = self.c_u32(0);
        let bk = self.c_u32(steps);
        // Where invocation `lid`'s r-th staged element of each operand lies in the
        // step: `a`'s (row, column) of a tile_m × steps block, `b`'s of steps × tile_n.
        let mut a_at = vec![];
        let mut b_at = vec![];
        for r in 0..a_staged {
            let off = self.c_u32(r * invocations);
            let eid = self.uadd(cx.lid, off)?;
            let ar = self.b.u_div(u, None, eid, bk).map_err(be)?;
            let ac = self.b.u_mod(u, None, eid, bk).map_err(be)?;
            a_at.push((ar, ac));
        }
        for r in 0..b_staged {
            let off = self.c_u32(r * invocations);
            let eid = self.uadd(cx.lid, off)?;
            let br = self.b.u_div(u, None, eid, side_n).map_err(be)?;
            let bc = self.b.u_mod(u, None, eid, side_n).map_err(be)?;
            b_at.push((br, bc, eid));
        }
        // Errors raised in the loop (a pair's: a float past its type's range, an
        // integer past 64 bits; the operands'; the result's range on store) set a
        // flag per invocation and bit, raised once at the end: no branch per pair.
        if pair.is_some_and(KExpr::may_fail) || checked_sum.is_some() {
            self.deferred = Some(vec![]);
        }
        let cxr = &*cx;
        let (group, groups) = (cx.group, cx.groups);
        self.count_loop(tile_var, group, tiles, groups, |e, tile| {
            // Tile order: GROUP_ROWS rows of tiles, column by column.
            let gr = e.c_u32(GROUP_ROWS);
            let band = e.umul(gr, tiles_n)?;
            let g = e.b.u_div(u, None, tile, band).map_err(be)?;
            let first = e.umul(g, gr)?;
            let left = e.b.i_sub(u, None, tiles_m, first).map_err(be)?;
            let band_rows = e.umin(left, gr)?;
            let w = e.b.u_mod(u, None, tile, band).map_err(be)?;
            let wr = e.b.u_mod(u, None, w, band_rows).map_err(be)?;
            let tr = e.uadd(first, wr)?;
            let tc = e.b.u_div(u, None, w, band_rows).map_err(be)?;
            let row0 = e.umul(tr, side_m)?;
            let col0 = e.umul(tc, side_n)?;
            for &acc in &accs {
                e.store(acc, zero_t)?;
            }
            let zero_i = e.scalar(Scalar::I32(0));
            for &c in &carries {
                e.store(c, zero_i)?;
            }
            // Reads one step's elements (from column k0 of `a`, row k0 of `b`) into
            // the staging registers; outside an operand, 0.
            let fetch = |e: &mut Self, k0: Word| -> R<()> {
                let read = |e: &mut Self,
                            operand: &KExpr,
                            reg: Word,
                            (gr, gc): (Word, Word),
                            (nr, nc): (Word, Word)|
                 -> R<()> {
                    let in_r = e.ult(gr, nr)?;
                    let in_c = e.ult(gc, nc)?;
                    let ok = e.b.logical_and(e.bool_t, None, in_r, in_c).map_err(be)?;
                    e.if_else(
                        ok,
                        |e| {
                            let base = e.umul(gr, nc)?;
                            let idx = e.uadd(base, gc)?;
                            let v = e.expr(cxr, operand, Ix::flat(idx))?;
                            e.store(reg, v)
                        },
                        |e| e.store(reg, zero_st),
                    )
                };
                // With a pair, rows of `a` past m and columns of `b` past n read the
                // last ones instead of 0: every pair computed is then one of the
                // product's own, so none raises an error the product would not (`0-b`
                // of the most negative i64 would).
                let clamp_to_last = |e: &mut Self, r: Word, last: Option<Word>| -> R<Word> {
                    match last {
                        None => Ok(r),
                        Some(last) => e.umin(r, last),
                    }
                };
                for (&(ar, ac), &reg) in a_at.iter().zip(&a_regs) {
                    let gr = e.uadd(row0, ar)?;
                    let gr = clamp_to_last(e, gr, last_m)?;
                    let gc = e.uadd(k0, ac)?;
                    read(e, a, reg, (gr, gc), (m, k))?;
                }
                for (&(br, bc, _), &reg) in b_at.iter().zip(&b_regs) {
                    let gr = e.uadd(k0, br)?;
                    let gc = e.uadd(col0, bc)?;
                    let gc = clamp_to_last(e, gc, last_n)?;
                    read(e, b, reg, (gr, gc), (k, n))?;
                }
                Ok(())
            };
            fetch(e, zero)?;
            e.count_loop(k0_var, zero, k, bk, |e, k0| {
                // Stage this step: `a` column-major (as[col][row], padded), `b`
                // row-major (bs[row][col]).
                // (Each operand's registers converted together: `convert_all`.)
                let astr = e.c_u32(a_stride);
                let xs = a_regs
                    .iter()
                    .map(|&reg| e.load(stt, reg))
                    .collect::<R<Vec<_>>>()?;
                let xs = e.convert_all(&xs, st, ht)?;
                for (&(ar, ac), x) in a_at.iter().zip(xs) {
                    let s = e.umul(ac, astr)?;
                    let s = e.uadd(s, ar)?;
                    let p = e.shared_ptr(as_, ht, s)?;
                    e.store(p, x)?;
                }
                let xs = b_regs
                    .iter()
                    .map(|&reg| e.load(stt, reg))
                    .collect::<R<Vec<_>>>()?;
                let xs = e.convert_all(&xs, st, ht)?;
                for (&(_, _, eid), x) in b_at.iter().zip(xs) {
                    let p = e.shared_ptr(bs, ht, eid)?;
                    e.store(p, x)?;
                }
                e.barrier()?;
                // The next step's reads are in flight while this one multiplies.
                let next = e.uadd(k0, bk)?;
                let more = e.ult(next, k)?;
                e.if_then(more, |e| fetch(e, next))?;
                // One step of `k` (kk, a constant in whole steps): every output's
                // pairs with it folded in.
                let step = |e: &mut Self, kk: Word| -> R<()> {
                    let ka = e.c_u32(a_stride);
                    let ka = e.umul(kk, ka)?;
                    let ka = e.uadd(ka, ty_)?;
                    let kb = e.c_u32(tile_n);
                    let kb = e.umul(kk, kb)?;
                    let kb = e.uadd(kb, tx)?;
                    let mut av = vec![];
                    let mut bv = vec![];
                    for i in 0..rows {
                        let ai = e.c_u32(SIDE * i);
                        let ai = e.uadd(ka, ai)?;
                        let p = e.shared_ptr(as_, ht, ai)?;
                        av.push(e.load(htt, p)?);
                    }
                    for j in 0..cols {
                        let bi = e.c_u32(SIDE * j);
                        let bi = e.uadd(kb, bi)?;
                        let p = e.shared_ptr(bs, ht, bi)?;
                        bv.push(e.load(htt, p)?);
                    }
                    for (i, &x) in av.iter().enumerate() {
                        for (j, &y) in bv.iter().enumerate() {
                            let acc = accs[i * cols as usize + j];
                            let cur = e.load(tt, acc)?;
                            let sum = match (pair, bits) {
                                (None, Some(bp)) => e.bit_step(bp, tt, cur, x, y)?,
                                (None, None) => {
                                    let prod = e.binop(BinOp::Mul, t, x, y)?;
                                    e.binop(BinOp::Add, t, cur, prod)?
                                }
                                (Some(p), _) => {
                                    e.operands = [x, y];
                                    let z = e.expr(cxr, p, Ix::flat(zero))?;
                                    let z = e.convert(z, p.elem(), t)?;
                                    let sum = e.binop(fold, t, cur, z)?;
                                    if let Some(&c) = carries.get(i * cols as usize + j) {
                                        e.count_wrap(c, (cur, z, sum))?;
                                    }
                                    sum
                                }
                            };
                            e.store(acc, sum)?;
                        }
                    }
                    Ok(())
                };
                let whole_step = |e: &mut Self| -> R<()> {
                    for kk in 0..steps {
                        let c = e.c_u32(kk);
                        step(e, c)?;
                    }
                    Ok(())
                };
                match pair {
                    // Zeros past `k` add nothing to a sum of products, nor words of
                    // zero bits to a product of words.
                    None => whole_step(e)?,
                    // The last step stops at `k`, one kk at a time (a loop: the
                    // step's code once more, not `steps` times).
                    Some(_) => {
                        let left = e.b.i_sub(u, None, k, k0).map_err(be)?;
                        let whole =
                            e.b.u_less_than_equal(e.bool_t, None, bk, left)
                                .map_err(be)?;
                        let one = e.c_u32(1);
                        e.if_else(whole, whole_step, |e| {
                            e.count_loop(kk_var, zero, left, one, |e, kk| step(e, kk))
                        })?;
                    }
                }
                e.barrier()
            })?;
            for i in 0..rows {
                for j in 0..cols {
                    let ci = e.c_u32(SIDE * i);
                    let cj = e.c_u32(SIDE * j);
                    let r = e.uadd(ty_, ci)?;
                    let gi = e.uadd(row0, r)?;
                    let c = e.uadd(tx, cj)?;
                    let gj = e.uadd(col0, c)?;
                    let in_i = e.ult(gi, m)?;
                    let in_j = e.ult(gj, n)?;
                    let ok = e.b.logical_and(e.bool_t, None, in_i, in_j).map_err(be)?;
                    let acc = accs[(i * cols + j) as usize];
                    e.if_then(ok, |e| {
                        // The exact sum leaves i64 where its wraps do not cancel.
                        if let Some(&c) = carries.get((i * cols + j) as usize) {
                            let it = e.ty(ElemType::I32);
                            let n = e.load(it, c)?;
                            let z = e.scalar(Scalar::I32(0));
                            let bad = e.b.i_not_equal(e.bool_t, None, n, z).map_err(be)?;
                            e.raise(cxr, checked_sum, bad)?;
                        }
                        let v = e.load(tt, acc)?;
                        // Words folded by `or` answer whether any bit was set.
                        let v = match bits {
                            Some(bp) if !bp.count => {
                                let z = e.scalar(Scalar::I32(0));
                                let set = if bp.negate {
                                    e.b.i_equal(e.bool_t, None, v, z)
                                } else {
                                    e.b.i_not_equal(e.bool_t, None, v, z)
                                }
                                .map_err(be)?;
                                let one = e.scalar(Scalar::I32(1));
                                e.b.select(tt, None, set, one, z).map_err(be)?
                            }
                            _ => v,
                        };
                        let rn = e.umul(gi, n)?;
                        let idx = e.uadd(rn, gj)?;
                        e.store_fold(cxr, out, idx, v, t)
                    })?;
                }
            }
            Ok(())
        })?;
        self.flush_errors(cx)
    }

    /// Counts in `carry` (i32) whether `sum = cur + z` (i64, wrapping) wrapped: +1
    /// past the largest i64, -1 past the smallest.
    fn count_wrap(&mut self, carry: Word, (cur, z, sum): (Word, Word, Word)) -> R<()> {
        let it = self.ty(ElemType::I32);
        let wrapped = self.overflow(BinOp::Add, cur, z, sum)?;
        let zero = self.scalar(Scalar::I64(0));
        let down = self.b.s_less_than(self.bool_t, None, z, zero).map_err(be)?;
        let (one, minus, none) = (
            self.scalar(Scalar::I32(1)),
            self.scalar(Scalar::I32(-1)),
            self.scalar(Scalar::I32(0)),
        );
        let step = self.b.select(it, None, down, minus, one).map_err(be)?;
        let step = self.b.select(it, None, wrapped, step, none).map_err(be)?;
        let n = self.load(it, carry)?;
        let n = self.b.i_add(it, None, n, step).map_err(be)?;
        self.store(carry, n)
    }

    /// One pair of packed words `x`, `y` folded into `acc` (i32, of type `tt`), as
    /// `bits` says: `acc | (x∧y)`, or `acc + (bits set in x∧y)`; `∨` for `∧` with `or`.
    fn bit_step(&mut self, bp: BitProduct, tt: Word, acc: Word, x: Word, y: Word) -> R<Word> {
        let z = if bp.or {
            self.b.bitwise_or(tt, None, x, y)
        } else {
            self.b.bitwise_and(tt, None, x, y)
        }
        .map_err(be)?;
        if bp.count {
            let c = self.b.bit_count(tt, None, z).map_err(be)?;
            self.b.i_add(tt, None, acc, c).map_err(be)
        } else {
            self.b.bitwise_or(tt, None, acc, z).map_err(be)
        }
    }

    /// Packs the booleans `arg` of an `r×c` matrix (push constants 1 and 2; 3 the
    /// words along a packed line) 32 to an i32 word of `out`, one word per element of the grid-stride share (push
    /// constant 0 counts them): along the rows (word `i·⌈c÷32⌉+w` holds row `i`'s
    /// elements `32w…32w+31`, bit `j` the element `32w+j`) or, with `cols`, down the
    /// columns (word `w·c+j` holds column `j`'s rows `32w…`). Bits past the matrix
    /// are 0; with `invert`, each bit within the matrix is its element's negation.
    pub(super) fn pack_bits_kernel(
        &mut self,
        cx: &mut Cx,
        arg: &KExpr,
        out: u32,
        cols: bool,
        invert: bool,
    ) -> R<()> {
        let u = self.u32_t;
        let it = self.ty(ElemType::I32);
        let i = self.local(u);
        let trip = self.local(u);
        let j_var = self.local(u);
        let word = self.local(it);
        let r = self.push_constant(cx, 1)?;
        let c = self.push_constant(cx, 2)?;
        // Words per row (rows layout): ⌈c÷32⌉, at least 1, as the planner counts them.
        let kw = self.push_constant(cx, 3)?;
        let per = |e: &mut Self, cx: &Cx, wi: Word| -> R<()> {
            let c32 = e.c_u32(32);
            let one = e.c_u32(1);
            let (first, base, stride, of) = if cols {
                let w = e.b.u_div(u, None, wi, c).map_err(be)?;
                let col = e.b.u_mod(u, None, wi, c).map_err(be)?;
                let first = e.umul(w, c32)?;
                let base = e.umul(first, c)?;
                let base = e.uadd(base, col)?;
                (first, base, c, r)
            } else {
                let row = e.b.u_div(u, None, wi, kw).map_err(be)?;
                let w = e.b.u_mod(u, None, wi, kw).map_err(be)?;
                let first = e.umul(w, c32)?;
                let base = e.umul(row, c)?;
                let base = e.uadd(base, first)?;
                (first, base, one, c)
            };
            let left = e.b.i_sub(u, None, of, first).map_err(be)?;
            let count = e.umin(left, c32)?;
            let z = e.scalar(Scalar::I32(0));
            e.store(word, z)?;
            let zero = e.c_u32(0);
            e.count_loop(j_var, zero, count, one, |e, j| {
                let at = e.umul(j, stride)?;
                let at = e.uadd(base, at)?;
                let v = e.expr(cx, arg, Ix::flat(at))?;
                let v = if invert {
                    let one = e.scalar(Scalar::I32(1));
                    e.b.bitwise_xor(it, None, v, one).map_err(be)?
                } else {
                    v
                };
                let bit = e.b.shift_left_logical(it, None, v, j).map_err(be)?;
                let cur = e.load(it, word)?;
                let nx = e.b.bitwise_or(it, None, cur, bit).map_err(be)?;
                e.store(word, nx)
            })?;
            let v = e.load(it, word)?;
            e.store_elem(cx, out, wi, v)
        };
        self.unrolled_share(cx, &per, i, trip)
    }
}
