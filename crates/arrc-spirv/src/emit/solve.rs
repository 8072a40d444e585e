//! `⌹` on the device (`KernelKind::QrStep`, `KernelKind::BackSubst`): Householder QR
//! of an f64 matrix by panels of columns, two dispatches a panel (one workgroup
//! factors it; then each later column, a workgroup each, applies its reflectors);
//! then back substitution, each workgroup one column of the solution.

use super::*;

/// Subgroups per workgroup the sums below can hold (a workgroup of 1024 invocations
/// in subgroups of 8).
const PARTIALS: u32 = 128;
/// GLSL.std.450's Sqrt and FAbs.
const SQRT: u32 = 31;
const FABS: u32 = 4;

/// What a workgroup sum needs, loaded once at the kernel's start.
#[derive(Clone, Copy)]
struct Sums {
    shared: Word,
    sid: Word,
    nsg: Word,
}

/// A column of a matrix stored by columns (`m` items each): item `row` is at
/// `start + row`.
#[derive(Clone, Copy)]
struct Column {
    binding: u32,
    start: Word,
}

impl Emitter {
    fn sums(&mut self, cx: &mut Cx) -> R<Sums> {
        Ok(Sums {
            shared: self.shared_sized(ElemType::F64, PARTIALS),
            sid: self.load_builtin(cx, BuiltIn::SubgroupId)?,
            nsg: self.load_builtin(cx, BuiltIn::NumSubgroups)?,
        })
    }

    /// The sum over the workgroup of each invocation's `v` (f64), the same total in
    /// every invocation, summed in subgroup order.
    fn workgroup_sum(&mut self, s: Sums, v: Word) -> R<Word> {
        Ok(self.workgroup_sums(s, s.shared, &[v])?[0])
    }

    /// The sums over the workgroup of each invocation's `vals` (f64), the same totals
    /// in every invocation, summed in subgroup order, with one pair of barriers for
    /// all of them: `shared` holds `PARTIALS × vals.len()` items.
    fn workgroup_sums(&mut self, s: Sums, shared: Word, vals: &[Word]) -> R<Vec<Word>> {
        let t = ElemType::F64;
        let tt = self.ty(t);
        let k = vals.len() as u32;
        let mut parts = vec![];
        for &v in vals {
            parts.push(self.group(BinOp::Add, t, GroupOperation::Reduce, v)?);
        }
        let kc = self.c_u32(k);
        // Earlier reads of the partials are done before they are written again.
        self.barrier()?;
        let el = self.elect()?;
        let base = self.umul(s.sid, kc)?;
        self.if_then(el, |e| {
            for (q, &part) in parts.iter().enumerate() {
                let qc = e.c_u32(q as u32);
                let at = e.uadd(base, qc)?;
                let p = e.shared_ptr(shared, t, at)?;
                e.store(p, part)?;
            }
            Ok(())
        })?;
        self.barrier()?;
        let zero = self.scalar(Scalar::F64(0.0));
        let accs: Vec<Word> = (0..k).map(|_| self.local(tt)).collect();
        for &a in &accs {
            self.store(a, zero)?;
        }
        let r = self.local(self.u32_t);
        let (from, one) = (self.c_u32(0), self.c_u32(1));
        self.count_loop(r, from, s.nsg, one, |e, rv| {
            let row = e.umul(rv, kc)?;
            for (q, &acc) in accs.iter().enumerate() {
                let qc = e.c_u32(q as u32);
                let at = e.uadd(row, qc)?;
                let p = e.shared_ptr(shared, t, at)?;
                let x = e.load(tt, p)?;
                let a = e.load(tt, acc)?;
                let sum = e.b.f_add(tt, None, a, x).map_err(be)?;
                e.store(acc, sum)?;
            }
            Ok(())
        })?;
        accs.iter().map(|&a| self.load(tt, a)).collect()
    }

    /// `Σ f(i)` over `i` in `from…to-1`, the workgroup's invocations striding.
    fn strided_sum(
        &mut self,
        cx: &Cx,
        s: Sums,
        from: Word,
        to: Word,
        f: &dyn Fn(&mut Self, Word) -> R<Word>,
    ) -> R<Word> {
        let tt = self.ty(ElemType::F64);
        let acc = self.local(tt);
        let zero = self.scalar(Scalar::F64(0.0));
        self.store(acc, zero)?;
        let i = self.local(self.u32_t);
        let start = self.uadd(from, cx.lid)?;
        let step = self.wg_size;
        self.count_loop(i, start, to, step, |e, iv| {
            let x = f(e, iv)?;
            let a = e.load(tt, acc)?;
            let r = e.b.f_add(tt, None, a, x).map_err(be)?;
            e.store(acc, r)
        })?;
        let part = self.load(tt, acc)?;
        self.workgroup_sum(s, part)
    }

    /// A workgroup barrier that also makes storage-buffer writes visible.
    fn storage_barrier(&mut self) -> R<()> {
        let wg = self.c_u32(SCOPE_WORKGROUP);
        let sem = self.c_u32(SEM_ACQ_REL_WORKGROUP | 0x40);
        self.b.control_barrier(wg, wg, sem).map_err(be)
    }

    /// Item `row` of a column.
    fn column_at(&mut self, c: Column, row: Word) -> R<Word> {
        self.uadd(c.start, row)
    }

    /// Column `col` of a matrix of `m` rows stored by columns.
    fn column(&mut self, binding: u32, col: Word, m: Word) -> R<Column> {
        Ok(Column {
            binding,
            start: self.umul(col, m)?,
        })
    }

    /// `c` less `2(v·c)/τ · v` over rows `j…m-1`: the reflector of column `j` of `a`
    /// (from its diagonal on, which holds v's first item) applied to column `c`, and
    /// a barrier, after which the whole workgroup reads the new column.
    #[allow(clippy::too_many_arguments)]
    fn reflect(
        &mut self,
        cx: &Cx,
        s: Sums,
        a: u32,
        j: Word,
        m: Word,
        tau: Word,
        c: Column,
    ) -> R<()> {
        let tt = self.ty(ElemType::F64);
        let col_j = self.column(a, j, m)?;
        let dot = self.strided_sum(cx, s, j, m, &|e, i| {
            let at = e.column_at(col_j, i)?;
            let v = e.load_elem(cx, a, at)?;
            let at = e.column_at(c, i)?;
            let x = e.load_elem(cx, c.binding, at)?;
            e.b.f_mul(tt, None, v, x).map_err(be)
        })?;
        let two = self.scalar(Scalar::F64(2.0));
        let twice = self.b.f_mul(tt, None, two, dot).map_err(be)?;
        let f = self.b.f_div(tt, None, twice, tau).map_err(be)?;
        let i = self.local(self.u32_t);
        let start = self.uadd(j, cx.lid)?;
        let step = self.wg_size;
        self.count_loop(i, start, m, step, |e, iv| {
            let at = e.column_at(col_j, iv)?;
            let v = e.load_elem(cx, a, at)?;
            let at = e.column_at(c, iv)?;
            let x = e.load_elem(cx, c.binding, at)?;
            let fv = e.b.f_mul(tt, None, f, v).map_err(be)?;
            let r = e.b.f_sub(tt, None, x, fv).map_err(be)?;
            e.store_elem(cx, c.binding, at, r)
        })?;
        // The next sum starts a row later: other invocations read these rows.
        self.storage_barrier()
    }

    /// One step of the panel QR (push constants n, m, k, t): see
    /// `KernelKind::QrStep`. `bufs` are a, b, diag, scale and taus.
    pub(super) fn qr_step_kernel(
        &mut self,
        cx: &mut Cx,
        bufs: [u32; 5],
        block: u32,
        singular: u32,
        shape: u32,
    ) -> R<()> {
        let [a, b, diag, scale, taus] = bufs;
        let t = ElemType::F64;
        let tt = self.ty(t);
        let u = self.u32_t;
        let bt = self.bool_t;
        let sums = self.sums(cx)?;
        let n = cx.n;
        let m = self.push_constant(cx, 1)?;
        let step = self.push_constant(cx, 3)?;
        let w = cx.group;
        let cx = &*cx;
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let first = self.b.i_equal(bt, None, cx.lid, zero).map_err(be)?;
        let w0 = self.b.i_equal(bt, None, w, zero).map_err(be)?;
        let t0 = self.b.i_equal(bt, None, step, zero).map_err(be)?;
        let report = self.b.logical_and(bt, None, w0, first).map_err(be)?;
        let report = self.b.logical_and(bt, None, report, t0).map_err(be)?;
        let m_lt_n = self.ult(m, n)?;
        let bad_shape = self.b.logical_and(bt, None, report, m_lt_n).map_err(be)?;
        self.raise(cx, Some(shape), bad_shape)?;
        let odd = self.b.bitwise_and(u, None, step, one).map_err(be)?;
        let apply = self.b.i_equal(bt, None, odd, one).map_err(be)?;
        let panel = self.b.shift_right_logical(u, None, step, one).map_err(be)?;
        let blk = self.c_u32(block);
        let j0 = self.umul(panel, blk)?;
        // The panel's columns (within n), and those with a reflector (within m).
        let past = self.uadd(j0, blk)?;
        let pe = self.umin(past, n)?;
        let je = self.umin(pe, m)?;
        let s = self.local(u);
        self.if_else(
            apply,
            |e| {
                // Column w of a past the panel, or column w-n of b: the panel's
                // reflectors in order.
                let in_a = e.ult(w, n)?;
                let inside = e.ult(w, past)?;
                let done = e.b.logical_and(bt, None, in_a, inside).map_err(be)?;
                let later = e.b.logical_not(bt, None, done).map_err(be)?;
                e.if_then(later, |e| {
                    let each = |e: &mut Self, c: Column| -> R<()> {
                        e.count_loop(s, j0, je, one, |e, j| {
                            let tau = e.load_elem(cx, taus, j)?;
                            e.reflect(cx, sums, a, j, m, tau, c)
                        })
                    };
                    e.if_else(
                        in_a,
                        |e| {
                            let c = e.column(a, w, m)?;
                            each(e, c)
                        },
                        |e| {
                            let cb = e.b.i_sub(u, None, w, n).map_err(be)?;
                            let c = e.column(b, cb, m)?;
                            each(e, c)
                        },
                    )
                })
            },
            |e| {
                // Workgroup 0 factors the panel, a column a step: one pass over
                // the rows below the diagonal sums the column's square and its
                // products with the panel's later columns (which do not depend
                // on the reflector: only its first item does), then those columns
                // are updated.
                let later = block.saturating_sub(1) as usize;
                let shared = e.shared_sized(t, PARTIALS * (later as u32 + 1));
                e.if_then(w0, |e| {
                    let acc_t = e.local(tt);
                    let accs: Vec<Word> = (0..later).map(|_| e.local(tt)).collect();
                    let i = e.local(u);
                    e.count_loop(s, j0, je, one, |e, j| {
                        let col_j = e.column(a, j, m)?;
                        let j1 = e.uadd(j, one)?;
                        // Column q after j, and whether it is in the panel (else
                        // column j stands in, read but unused).
                        let last = e.b.i_sub(u, None, pe, one).map_err(be)?;
                        let mut cols = vec![];
                        for q in 0..later {
                            let qc = e.c_u32(q as u32);
                            let c = e.uadd(j1, qc)?;
                            let ok = e.ult(c, pe)?;
                            let c = e.umin(c, last)?;
                            cols.push((e.column(a, c, m)?, ok));
                        }
                        let z = e.scalar(Scalar::F64(0.0));
                        // Column j with itself first, then with each later one.
                        let pairs: Vec<(Column, Word)> = std::iter::once((col_j, acc_t))
                            .chain(cols.iter().map(|&(c, _)| c).zip(accs.iter().copied()))
                            .collect();
                        for &(_, acc) in &pairs {
                            e.store(acc, z)?;
                        }
                        let start = e.uadd(j1, cx.lid)?;
                        let stride = e.wg_size;
                        e.count_loop(i, start, m, stride, |e, iv| {
                            let at = e.column_at(col_j, iv)?;
                            let x = e.load_elem(cx, a, at)?;
                            for &(col, acc) in &pairs {
                                let at = e.column_at(col, iv)?;
                                let y = e.load_elem(cx, a, at)?;
                                let xy = e.b.f_mul(tt, None, x, y).map_err(be)?;
                                let cur = e.load(tt, acc)?;
                                let sum = e.b.f_add(tt, None, cur, xy).map_err(be)?;
                                e.store(acc, sum)?;
                            }
                            Ok(())
                        })?;
                        let mut vals = vec![];
                        for &(_, acc) in &pairs {
                            vals.push(e.load(tt, acc)?);
                        }
                        let sums_now = e.workgroup_sums(sums, shared, &vals)?;
                        let below = sums_now[0];
                        let jj = e.column_at(col_j, j)?;
                        let ajj = e.load_elem(cx, a, jj)?;
                        let sq = e.b.f_mul(tt, None, ajj, ajj).map_err(be)?;
                        let norm2 = e.b.f_add(tt, None, below, sq).map_err(be)?;
                        let norm = e.glsl(t, SQRT, &[norm2])?;
                        let pos = e.b.f_ord_greater_than(bt, None, ajj, z).map_err(be)?;
                        let neg = e.b.f_negate(tt, None, norm).map_err(be)?;
                        let alpha = e.b.select(tt, None, pos, neg, norm).map_err(be)?;
                        let vj = e.b.f_sub(tt, None, ajj, alpha).map_err(be)?;
                        let vj2 = e.b.f_mul(tt, None, vj, vj).map_err(be)?;
                        let tau = e.b.f_add(tt, None, below, vj2).map_err(be)?;
                        // Each later column's factor: 2(v·c)/τ, v·c being the sum
                        // below the diagonal and v's first item times row j.
                        let two = e.scalar(Scalar::F64(2.0));
                        let mut factors = vec![];
                        for (q, &(col, _)) in cols.iter().enumerate() {
                            let at = e.column_at(col, j)?;
                            let ajc = e.load_elem(cx, a, at)?;
                            let head = e.b.f_mul(tt, None, vj, ajc).map_err(be)?;
                            let dot = e.b.f_add(tt, None, sums_now[q + 1], head).map_err(be)?;
                            let twice = e.b.f_mul(tt, None, two, dot).map_err(be)?;
                            factors.push(e.b.f_div(tt, None, twice, tau).map_err(be)?);
                        }
                        // Every invocation has read row j before it changes.
                        e.barrier()?;
                        // The later columns less f·v, rows j on (v's first item is
                        // vj, stored after).
                        let start = e.uadd(j, cx.lid)?;
                        e.count_loop(i, start, m, stride, |e, iv| {
                            let at = e.column_at(col_j, iv)?;
                            let x = e.load_elem(cx, a, at)?;
                            let is_j = e.b.i_equal(bt, None, iv, j).map_err(be)?;
                            let v = e.b.select(tt, None, is_j, vj, x).map_err(be)?;
                            for (&(col, ok), &f) in cols.iter().zip(&factors) {
                                e.if_then(ok, |e| {
                                    let at = e.column_at(col, iv)?;
                                    let y = e.load_elem(cx, a, at)?;
                                    let fv = e.b.f_mul(tt, None, f, v).map_err(be)?;
                                    let r = e.b.f_sub(tt, None, y, fv).map_err(be)?;
                                    e.store_elem(cx, a, at, r)
                                })?;
                            }
                            Ok(())
                        })?;
                        // The next step reads rows other invocations wrote.
                        e.storage_barrier()?;
                        // Column j's results: nothing in this dispatch reads them
                        // again.
                        e.if_then(first, |e| {
                            e.store_elem(cx, diag, j, alpha)?;
                            e.store_elem(cx, taus, j, tau)?;
                            e.store_elem(cx, a, jj, vj)?;
                            // Whether the column is (numerically) 0.
                            let sc = e.load_elem(cx, scale, zero)?;
                            let mf = e.b.convert_u_to_f(tt, None, m).map_err(be)?;
                            let eps = e.scalar(Scalar::F64(1e-13));
                            let thr = e.b.f_mul(tt, None, sc, eps).map_err(be)?;
                            let thr = e.b.f_mul(tt, None, thr, mf).map_err(be)?;
                            let small =
                                e.b.f_ord_less_than_equal(bt, None, norm, thr).map_err(be)?;
                            let nil = e.b.f_ord_equal(bt, None, norm, z).map_err(be)?;
                            let bad = e.b.logical_or(bt, None, small, nil).map_err(be)?;
                            e.raise(cx, Some(singular), bad)
                        })
                    })
                })
            },
        )
    }

    /// Back substitution (push constants n, m, k): see `KernelKind::BackSubst`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn back_subst_kernel(
        &mut self,
        cx: &mut Cx,
        a: u32,
        b: u32,
        diag: u32,
        out: u32,
        limit: f64,
        range: u32,
    ) -> R<()> {
        let t = ElemType::F64;
        let tt = self.ty(t);
        let u = self.u32_t;
        let bt = self.bool_t;
        let sums = self.sums(cx)?;
        let n = cx.n;
        let m = self.push_constant(cx, 1)?;
        let k = self.push_constant(cx, 2)?;
        let c = cx.group;
        let cx = &*cx;
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let first = self.b.i_equal(bt, None, cx.lid, zero).map_err(be)?;
        // The solution is stored by rows (n by k): column c steps by k.
        let x_at = |e: &mut Self, row: Word| -> R<Word> {
            let r = e.umul(row, k)?;
            e.uadd(r, c)
        };
        let b_col = self.column(b, c, m)?;
        let jj = self.local(u);
        // j = n-1 … 0, as n - 1 - jj.
        self.count_loop(jj, zero, n, one, |e, jv| {
            let n1 = e.b.i_sub(u, None, n, one).map_err(be)?;
            let j = e.b.i_sub(u, None, n1, jv).map_err(be)?;
            let j1 = e.uadd(j, one)?;
            // R's row j (a by columns: item j of column t).
            let s = e.strided_sum(cx, sums, j1, n, &|e, tv| {
                let col_t = e.column(a, tv, m)?;
                let at = e.column_at(col_t, j)?;
                let ajt = e.load_elem(cx, a, at)?;
                let xt_at = x_at(e, tv)?;
                let xt = e.load_elem(cx, out, xt_at)?;
                e.b.f_mul(tt, None, ajt, xt).map_err(be)
            })?;
            e.if_then(first, |e| {
                let bj_at = e.column_at(b_col, j)?;
                let bj = e.load_elem(cx, b, bj_at)?;
                let d = e.load_elem(cx, diag, j)?;
                let num = e.b.f_sub(tt, None, bj, s).map_err(be)?;
                let x = e.b.f_div(tt, None, num, d).map_err(be)?;
                let ax = e.glsl(t, FABS, &[x])?;
                let lim = e.scalar(Scalar::F64(limit));
                let ok = e.b.f_ord_less_than_equal(bt, None, ax, lim).map_err(be)?;
                let bad = e.b.logical_not(bt, None, ok).map_err(be)?;
                e.raise(cx, Some(range), bad)?;
                let at = x_at(e, j)?;
                e.store_elem(cx, out, at, x)
            })?;
            e.storage_barrier()
        })
    }
}
