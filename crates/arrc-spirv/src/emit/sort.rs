//! Sorting and searching: one step of a bitonic sorting network over an index array
//! (`⍋ ⍒`), and a binary search of needles among sorted keys (`⍳ ∊`).

use super::{be, Cx, Emitter, R, SHARED_MIN_WORDS};
use arrc_ir::ir::SearchKind;
use arrc_ir::plan::KExpr;
use arrc_ir::scalar::BinOp;
use arrc_ir::{ElemType, Scalar};
use rspirv::spirv::Word;

impl Emitter {
    /// `a < b` (or `a > b` when `greater`) of two keys of type `t`, exactly (a boolean).
    /// (Floats by their ordered bits: a device that flushes subnormals in float
    /// comparisons would take 1E¯40 for 0.)
    fn key_before(&mut self, t: ElemType, a: Word, b: Word, greater: bool) -> R<Word> {
        let bt = self.bool_t;
        let (x, y) = if greater { (b, a) } else { (a, b) };
        if t.is_float() {
            let (_, x) = self.ordered_bits(t, x)?;
            let (_, y) = self.ordered_bits(t, y)?;
            self.b.u_less_than(bt, None, x, y)
        } else {
            self.b.s_less_than(bt, None, x, y)
        }
        .map_err(be)
    }

    /// A binary search over the positions in [`lo`, `hi`) (u32 locals), for sorted
    /// keys of which `before(mid)` holds of a prefix: leaves that prefix's end in `lo`.
    fn partition_point(
        &mut self,
        lo: Word,
        hi: Word,
        before: impl Fn(&mut Self, Word) -> R<Word>,
    ) -> R<()> {
        let u = self.u32_t;
        self.while_loop(
            |e| {
                let l = e.load(u, lo)?;
                let h = e.load(u, hi)?;
                e.ult(l, h)
            },
            |e| {
                let l = e.load(u, lo)?;
                let h = e.load(u, hi)?;
                let s = e.uadd(l, h)?;
                let one = e.c_u32(1);
                let mid = e.b.shift_right_logical(u, None, s, one).map_err(be)?;
                let b = before(e, mid)?;
                let m1 = e.uadd(mid, one)?;
                let nl = e.b.select(u, None, b, m1, l).map_err(be)?;
                let nh = e.b.select(u, None, b, h, mid).map_err(be)?;
                e.store(lo, nl)?;
                e.store(hi, nh)
            },
            |_| Ok(()),
        )
    }

    fn key_equal(&mut self, t: ElemType, a: Word, b: Word) -> R<Word> {
        let bt = self.bool_t;
        if t.is_float() {
            // By ordered bits, as `key_before` (-0 is 0; subnormals are not 0).
            let (_, x) = self.ordered_bits(t, a)?;
            let (_, y) = self.ordered_bits(t, b)?;
            self.b.i_equal(bt, None, x, y)
        } else {
            self.b.i_equal(bt, None, a, b)
        }
        .map_err(be)
    }

    /// One compare-and-exchange step of the bitonic network (`KernelKind::SortStep`).
    pub(super) fn sort_step_kernel(
        &mut self,
        cx: &mut Cx,
        keys: u32,
        idx: u32,
        down: bool,
        origin: i32,
    ) -> R<()> {
        let key_t = cx.bindings[keys as usize].1;
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        let per = |e: &mut Self, cx: &Cx, t: Word| -> R<()> {
            let u = e.u32_t;
            let bt = e.bool_t;
            let len = e.push_constant(cx, 1)?;
            let kk = e.push_constant(cx, 2)?;
            let jj = e.push_constant(cx, 3)?;
            let cols = e.push_constant(cx, 4)?;
            let q = e.b.u_div(u, None, t, jj).map_err(be)?;
            let r = e.b.u_mod(u, None, t, jj).map_err(be)?;
            let two_j = e.uadd(jj, jj)?;
            let base = e.umul(q, two_j)?;
            let lo = e.uadd(base, r)?;
            let hi = e.uadd(lo, jj)?;
            let masked = e.b.bitwise_and(u, None, lo, kk).map_err(be)?;
            let zero = e.c_u32(0);
            let ascending = e.b.i_equal(bt, None, masked, zero).map_err(be)?;
            let a_raw = e.load_elem(cx, idx, lo)?;
            let b_raw = e.load_elem(cx, idx, hi)?;
            let o = e.c_u32(origin as u32);
            let a_u = e.b.bitcast(u, None, a_raw).map_err(be)?;
            let b_u = e.b.bitcast(u, None, b_raw).map_err(be)?;
            let a = e.b.i_sub(u, None, a_u, o).map_err(be)?;
            let b = e.b.i_sub(u, None, b_u, o).map_err(be)?;
            // `x` sorts before `y`: x is a real entry and (y is padding, or x's key
            // comes first, or the keys tie and x's index is smaller).
            let before = |e: &mut Self, x: Word, y: Word| -> R<Word> {
                let one = e.c_u32(1);
                let last = e.b.i_sub(u, None, len, one).map_err(be)?;
                let xs = e.umin(x, last)?;
                let ys = e.umin(y, last)?;
                // Rows in ravel order: the first column that differs decides
                // (0 undecided, 1 x first, 2 y first).
                let xb = e.umul(xs, cols)?;
                let yb = e.umul(ys, cols)?;
                let c = e.local(u);
                let state = e.local(u);
                let zero = e.c_u32(0);
                e.store(c, zero)?;
                e.store(state, zero)?;
                e.while_loop(
                    |e| {
                        let cv = e.load(u, c)?;
                        let more = e.ult(cv, cols)?;
                        let sv = e.load(u, state)?;
                        let zero = e.c_u32(0);
                        let open = e.b.i_equal(bt, None, sv, zero).map_err(be)?;
                        e.b.logical_and(bt, None, more, open).map_err(be)
                    },
                    |e| {
                        let cv = e.load(u, c)?;
                        let xi = e.uadd(xb, cv)?;
                        let yi = e.uadd(yb, cv)?;
                        let kx = e.load_elem(cx, keys, xi)?;
                        let ky = e.load_elem(cx, keys, yi)?;
                        let xf = e.key_before(key_t, kx, ky, down)?;
                        let yf = e.key_before(key_t, ky, kx, down)?;
                        let (zero, one, two) = (e.c_u32(0), e.c_u32(1), e.c_u32(2));
                        let s = e.b.select(u, None, yf, two, zero).map_err(be)?;
                        let s = e.b.select(u, None, xf, one, s).map_err(be)?;
                        e.store(state, s)
                    },
                    |e| {
                        let cv = e.load(u, c)?;
                        let one = e.c_u32(1);
                        let nc = e.uadd(cv, one)?;
                        e.store(c, nc)
                    },
                )?;
                let sv = e.load(u, state)?;
                let first = e.b.i_equal(bt, None, sv, one).map_err(be)?;
                let tie = e.b.i_equal(bt, None, sv, zero).map_err(be)?;
                let xy = e.ult(x, y)?;
                let tie_first = e.b.logical_and(bt, None, tie, xy).map_err(be)?;
                let better = e.b.logical_or(bt, None, first, tie_first).map_err(be)?;
                let x_real = e.ult(x, len)?;
                let y_real = e.ult(y, len)?;
                let y_pad = e.b.logical_not(bt, None, y_real).map_err(be)?;
                let wins = e.b.logical_or(bt, None, y_pad, better).map_err(be)?;
                e.b.logical_and(bt, None, x_real, wins).map_err(be)
            };
            let b_first = before(e, b, a)?;
            let a_first = before(e, a, b)?;
            let swap =
                e.b.select(bt, None, ascending, b_first, a_first)
                    .map_err(be)?;
            e.if_then(swap, |e| {
                e.store_elem(cx, idx, lo, b_raw)?;
                e.store_elem(cx, idx, hi, a_raw)
            })
        };
        self.unrolled_share(cx, &per, i, k)
    }

    /// Every `stride`-th sorted key (`count` of them, at most `SHARED_MIN_WORDS`
    /// words) in workgroup memory, loaded by the whole workgroup: a search's first
    /// dozen steps then read there, and only the last ones read device memory (each
    /// step a dependent load: the search of 2^23 needles among 2^23 keys took 2.4 ms
    /// on an H100 with every step in device memory).
    fn search_table(&mut self, cx: &Cx, keys: u32) -> R<SearchTable> {
        let t = cx.bindings[keys as usize].1;
        // Booleans are 4-byte words here too.
        let cap = SHARED_MIN_WORDS * 4 / t.size().max(4) as u32;
        let samples = self.shared_sized(t, cap);
        let u = self.u32_t;
        let n = self.push_constant(cx, 1)?;
        // stride = max(1, ⌈n÷cap⌉), count = ⌈n÷stride⌉ ≤ cap.
        let (one, capc) = (self.c_u32(1), self.c_u32(cap));
        let stride = self.ceil_div(n, capc)?;
        let none = self.ult(stride, one)?;
        let stride = self.b.select(u, None, none, one, stride).map_err(be)?;
        let count = self.ceil_div(n, stride)?;
        let kvar = self.local(u);
        self.count_loop(kvar, cx.lid, count, self.wg_size, |e, j| {
            let at = e.umul(j, stride)?;
            let key = e.load_elem(cx, keys, at)?;
            let p = e.shared_ptr(samples, t, j)?;
            e.store(p, key)
        })?;
        self.barrier()?;
        Ok(SearchTable {
            samples,
            stride,
            count,
        })
    }

    /// A binary search of each needle among the sorted keys, whose indices before
    /// sorting are `order` (`KernelKind::Search`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn search_kernel(
        &mut self,
        cx: &mut Cx,
        keys: u32,
        order: u32,
        needle: &KExpr,
        out: u32,
        kind: SearchKind,
        tolerant: bool,
    ) -> R<()> {
        let t = cx.bindings[keys as usize].1;
        let u = self.u32_t;
        let i = self.local(u);
        let k = self.local(u);
        let lo = self.local(u);
        let hi = self.local(u);
        let best = self.local(u);
        let run_lo = self.local(u);
        let run_hi = self.local(u);
        let table = self.search_table(cx, keys)?;
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            let bt = e.bool_t;
            let n = e.push_constant(cx, 1)?;
            let y = e.expr(cx, needle, super::Ix::flat(j))?;
            e.store(best, n)?;
            let zero = e.c_u32(0);
            let any = e.ult(zero, n)?;
            e.if_then(any, |e| {
                let one = e.c_u32(1);
                let last = e.b.i_sub(u, None, n, one).map_err(be)?;
                // The key at sorted position `p` (clamped inside the array), and the
                // index it had before sorting.
                let key_at = |e: &mut Self, p: Word| -> R<Word> {
                    let p = e.umin(p, last)?;
                    e.load_elem(cx, keys, p)
                };
                let index_at = |e: &mut Self, p: Word| -> R<Word> {
                    if kind == SearchKind::Member {
                        // Membership asks only whether there is one.
                        return Ok(e.c_u32(0));
                    }
                    let p = e.umin(p, last)?;
                    let ix = e.load_elem(cx, order, p)?;
                    e.b.bitcast(u, None, ix).map_err(be)
                };
                // f64 needles match keys within ⎕CT: search from y - 2⎕CT|y| and look
                // at every key up to y + 2⎕CT|y|.
                let (from, to) = if tolerant {
                    let ay = e.glsl(t, 4, &[y])?; // FAbs
                    let c = e.fc(t, 2.0 * e.ct);
                    let d = e.binop(BinOp::Mul, t, ay, c)?;
                    (e.binop(BinOp::Sub, t, y, d)?, e.binop(BinOp::Add, t, y, d)?)
                } else {
                    (y, y)
                };
                // The first position whose key is not `before`: first among the
                // table's samples, then among the keys between two samples.
                let search = |e: &mut Self, before: &dyn Fn(&mut Self, Word) -> R<Word>| {
                    let tab = &table;
                    e.store(lo, zero)?;
                    e.store(hi, tab.count)?;
                    e.partition_point(lo, hi, |e, mid| {
                        let p = e.shared_ptr(tab.samples, t, mid)?;
                        let tt = e.ty(t);
                        let km = e.load(tt, p)?;
                        before(e, km)
                    })?;
                    // Sample j-1 was before, sample j is not: positions from
                    // (j-1)·stride+1 to j·stride (or n).
                    let j = e.load(u, lo)?;
                    let at = e.umul(j, tab.stride)?;
                    let to = e.umin(at, n)?;
                    let one = e.c_u32(1);
                    let after = e.b.i_sub(u, None, at, tab.stride).map_err(be)?;
                    let after = e.uadd(after, one)?;
                    let first = e.b.i_equal(bt, None, j, zero).map_err(be)?;
                    let from = e.b.select(u, None, first, zero, after).map_err(be)?;
                    e.store(lo, from)?;
                    e.store(hi, to)?;
                    e.partition_point(lo, hi, |e, mid| {
                        let km = key_at(e, mid)?;
                        before(e, km)
                    })
                };
                // The first key not below `from`.
                search(e, &|e, km| e.key_before(t, km, from, false))?;
                if tolerant {
                    // Each distinct key in the window once: the first of a run of equal
                    // keys has the smallest index among them (the grade is stable), and
                    // a binary search skips the rest of the run. A window holds a few
                    // hundred distinct f64 values at most, so a run of 70000 equal keys
                    // costs one search, not 70000 trips (lavapipe stops an
                    // invocation's loops after 65535).
                    e.while_loop(
                        |e| {
                            let l = e.load(u, lo)?;
                            let inside = e.ult(l, n)?;
                            let kl = key_at(e, l)?;
                            let past = e.key_before(t, to, kl, false)?;
                            let within = e.b.logical_not(bt, None, past).map_err(be)?;
                            e.b.logical_and(bt, None, inside, within).map_err(be)
                        },
                        |e| {
                            let l = e.load(u, lo)?;
                            let kl = key_at(e, l)?;
                            let ix = index_at(e, l)?;
                            let eq = e.tolerant_eq(kl, y)?;
                            let b0 = e.load(u, best)?;
                            let m = e.umin(b0, ix)?;
                            let nb = e.b.select(u, None, eq, m, b0).map_err(be)?;
                            e.store(best, nb)?;
                            // The first position after l whose key is above kl.
                            let one = e.c_u32(1);
                            let l1 = e.uadd(l, one)?;
                            e.store(run_lo, l1)?;
                            e.store(run_hi, n)?;
                            e.partition_point(run_lo, run_hi, |e, mid| {
                                let km = key_at(e, mid)?;
                                let above = e.key_before(t, kl, km, false)?;
                                e.b.logical_not(e.bool_t, None, above).map_err(be)
                            })
                        },
                        |e| {
                            let next = e.load(u, run_lo)?;
                            e.store(lo, next)
                        },
                    )
                } else if let SearchKind::Interval { .. } = kind {
                    // How many keys are at most y: the first position whose key is
                    // above it.
                    search(e, &|e, km| {
                        let above = e.key_before(t, y, km, false)?;
                        e.b.logical_not(e.bool_t, None, above).map_err(be)
                    })?;
                    let l = e.load(u, lo)?;
                    e.store(best, l)
                } else {
                    // The first key not below y: equal ones are in index order.
                    let l = e.load(u, lo)?;
                    let inside = e.ult(l, n)?;
                    let kl = key_at(e, l)?;
                    let ix = index_at(e, l)?;
                    let eq = e.key_equal(t, kl, y)?;
                    let found = e.b.logical_and(bt, None, inside, eq).map_err(be)?;
                    let nb = e.b.select(u, None, found, ix, n).map_err(be)?;
                    e.store(best, nb)
                }
            })?;
            let b = e.load(u, best)?;
            let v = match kind {
                SearchKind::IndexOf { origin } => {
                    let o = e.c_u32(origin as u32);
                    let r = e.uadd(b, o)?;
                    let it = e.ty(ElemType::I32);
                    e.b.bitcast(it, None, r).map_err(be)?
                }
                SearchKind::Interval { origin } => {
                    // The count, with ⎕IO-1 added (wrapping: ⎕IO=0 gives ¯1 for none).
                    let o = e.c_u32((origin - 1) as u32);
                    let r = e.b.i_add(u, None, b, o).map_err(be)?;
                    let it = e.ty(ElemType::I32);
                    e.b.bitcast(it, None, r).map_err(be)?
                }
                SearchKind::Member => {
                    let found = e.ult(b, n)?;
                    let (one, zero) = (e.scalar(Scalar::Bool(true)), e.scalar(Scalar::Bool(false)));
                    let it = e.ty(ElemType::Bool);
                    e.b.select(it, None, found, one, zero).map_err(be)?
                }
            };
            e.store_elem(cx, out, j, v)
        };
        self.unrolled_share(cx, &per, i, k)
    }
}

/// [`Emitter::search_table`]'s samples: key `j·stride` at `j < count`.
struct SearchTable {
    samples: Word,
    stride: Word,
    count: Word,
}
