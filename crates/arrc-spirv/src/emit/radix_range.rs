//! A radix sort's passes that would keep the order they find are not run: the keys
//! kernel finds the least and greatest key words, `RadixArgs` turns them into the
//! passes' indirect dispatch arguments, and `RadixSettle` moves the result of the
//! last pass run to where the last planned pass would have left it.

use super::*;
use arrc_ir::plan::RadixArg;

impl Emitter {
    /// `KernelKind::RadixKeys` with `range`: the keys stored as `radix_keys_kernel`
    /// stores them, each invocation keeping the complement of the least word it
    /// stored and the greatest; the workgroup's go to workgroup memory by atomic
    /// maxima (one per subgroup), then to `range` (two device atomics a workgroup).
    pub(super) fn radix_keys_ranged(
        &mut self,
        cx: &mut Cx,
        key: &KExpr,
        out: u32,
        down: bool,
        range: u32,
    ) -> R<()> {
        let u = self.u32_t;
        let ity = self.ty(ElemType::I32);
        let zero = self.c_u32(0);
        let [lo, hi] = [self.local(u), self.local(u)];
        self.store(lo, zero)?;
        self.store(hi, zero)?;
        let shared = self.shared_sized(ElemType::I32, 2);
        let cxr = &*cx;
        let first = self
            .b
            .i_equal(self.bool_t, None, cx.lid, zero)
            .map_err(be)?;
        self.if_then(first, |e| {
            let z = e.scalar(Scalar::I32(0));
            for k in 0..2 {
                let kc = e.c_u32(k);
                let p = e.shared_at(shared, kc)?;
                e.store(p, z)?;
            }
            Ok(())
        })?;
        self.barrier()?;
        let i = self.local(u);
        let k = self.local(u);
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            let words = e.store_key(cx, key, out, down, j)?;
            let w = e.b.bitcast(u, None, words[0]).map_err(be)?;
            let nw = e.b.not(u, None, w).map_err(be)?;
            for (var, x) in [(lo, nw), (hi, w)] {
                let a = e.load(u, var)?;
                let m = e.umax(a, x)?;
                e.store(var, m)?;
            }
            Ok(())
        };
        self.unrolled_share(cxr, &per, i, k)?;
        let sg = self.c_u32(SCOPE_SUBGROUP);
        let wg = self.c_u32(SCOPE_WORKGROUP);
        let dev = self.c_u32(SCOPE_DEVICE);
        let relaxed = self.c_u32(0);
        let mut reduced = vec![];
        for var in [lo, hi] {
            let x = self.load(u, var)?;
            let m = self
                .b
                .group_non_uniform_u_max(u, None, sg, GroupOperation::Reduce, x, None)
                .map_err(be)?;
            reduced.push(m);
        }
        let el = self.elect()?;
        self.if_then(el, |e| {
            for (k, &m) in reduced.iter().enumerate() {
                let kc = e.c_u32(k as u32);
                let p = e.shared_at(shared, kc)?;
                let mi = e.b.bitcast(ity, None, m).map_err(be)?;
                e.b.atomic_u_max(ity, None, p, wg, relaxed, mi)
                    .map_err(be)?;
            }
            Ok(())
        })?;
        self.barrier()?;
        self.if_then(first, |e| {
            for k in 0..2 {
                let kc = e.c_u32(k);
                let p = e.shared_at(shared, kc)?;
                let m = e.load(ity, p)?;
                let m = e.b.bitcast(u, None, m).map_err(be)?;
                let gp = e.word_at(cxr, range, kc)?;
                e.b.atomic_u_max(u, None, gp, dev, relaxed, m).map_err(be)?;
            }
            Ok(())
        })
    }

    /// The least key word (`range` as `radix_keys_ranged` leaves it).
    fn range_least(&mut self, cx: &Cx, range: u32) -> R<Word> {
        let u = self.u32_t;
        let zero = self.c_u32(0);
        let x = self.load_elem(cx, range, zero)?;
        let x = self.b.bitcast(u, None, x).map_err(be)?;
        self.b.not(u, None, x).map_err(be)
    }

    /// The greatest key word less the least: the largest value a pass sorts.
    fn range_span(&mut self, cx: &Cx, range: u32) -> R<Word> {
        let u = self.u32_t;
        let least = self.range_least(cx, range)?;
        let one = self.c_u32(1);
        let x = self.load_elem(cx, range, one)?;
        let x = self.b.bitcast(u, None, x).map_err(be)?;
        self.b.i_sub(u, None, x, least).map_err(be)
    }

    /// A radix pass over keys less the least (`range`, where given): loaded once,
    /// at the kernel's start, for `digit_of`.
    pub(super) fn relative_keys(&mut self, cx: &Cx, range: Option<u32>) -> R<()> {
        self.radix_least = match range {
            Some(r) => Some(self.range_least(cx, r)?),
            None => None,
        };
        Ok(())
    }

    /// Whether pass `pass` is needed: the first always; a later one where the span
    /// has a bit at `8·pass` or above.
    fn pass_needed(&mut self, span: Word, pass: u32) -> R<Word> {
        if pass == 0 {
            return Ok(self.b.constant_true(self.bool_t));
        }
        let sh = self.c_u32(8 * pass);
        let above = self
            .b
            .shift_right_logical(self.u32_t, None, span, sh)
            .map_err(be)?;
        let zero = self.c_u32(0);
        self.b
            .i_not_equal(self.bool_t, None, above, zero)
            .map_err(be)
    }

    /// `KernelKind::RadixArgs`: invocation 0 writes `(groups or 0, 1, 1)` for each
    /// indirect dispatch.
    pub(super) fn radix_args_kernel(
        &mut self,
        cx: &mut Cx,
        range: u32,
        args: &[RadixArg],
    ) -> R<()> {
        let zero = self.c_u32(0);
        let first = self
            .b
            .i_equal(self.bool_t, None, cx.lid, zero)
            .map_err(be)?;
        let first_group = self
            .b
            .i_equal(self.bool_t, None, cx.group, zero)
            .map_err(be)?;
        let first = self
            .b
            .logical_and(self.bool_t, None, first, first_group)
            .map_err(be)?;
        let cxr = &*cx;
        self.if_then(first, |e| {
            let differs = e.range_span(cxr, range)?;
            let ity = e.ty(ElemType::I32);
            let one = e.scalar(Scalar::I32(1));
            let none = e.scalar(Scalar::I32(0));
            for a in args {
                let needed = e.pass_needed(differs, a.pass)?;
                let want = match a.needed {
                    true => needed,
                    false => e.b.logical_not(e.bool_t, None, needed).map_err(be)?,
                };
                let g = e.scalar(Scalar::I32(a.groups as i32));
                let g = e.b.select(ity, None, want, g, none).map_err(be)?;
                let z = e.c_u32(0);
                e.store_elem(cxr, a.out, z, g)?;
                for k in 1..3 {
                    let kc = e.c_u32(k);
                    e.store_elem(cxr, a.out, kc, one)?;
                }
            }
            Ok(())
        })
    }

    /// `KernelKind::RadixSettle`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn radix_settle_kernel(
        &mut self,
        cx: &mut Cx,
        range: u32,
        keys: [u32; 2],
        idx: [u32; 2],
        idx_out: u32,
        origin: i32,
        passes: u32,
        sorted_keys: bool,
    ) -> R<()> {
        let u = self.u32_t;
        let ity = self.ty(ElemType::I32);
        let cxr = &*cx;
        // The passes run, and so which buffer the last of them wrote.
        let differs = self.range_span(cxr, range)?;
        let one = self.c_u32(1);
        let mut run = one;
        for p in 1..passes {
            let needed = self.pass_needed(differs, p)?;
            let zero = self.c_u32(0);
            let add = self.b.select(u, None, needed, one, zero).map_err(be)?;
            run = self.uadd(run, add)?;
        }
        let parity = self.b.bitwise_and(u, None, run, one).map_err(be)?;
        let odd = self.b.i_equal(self.bool_t, None, parity, one).map_err(be)?;
        let planned = self.c_u32(passes % 2);
        let moved = self
            .b
            .i_not_equal(self.bool_t, None, parity, planned)
            .map_err(be)?;
        let v = self.local(ity);
        let i = self.local(u);
        let k = self.local(u);
        // Reads element `j` of `pair[parity]` (a branch uniform across the dispatch).
        let read = |e: &mut Self, pair: [u32; 2], j: Word| -> R<Word> {
            e.if_else(
                odd,
                |e| {
                    let x = e.load_elem(cxr, pair[1], j)?;
                    e.store(v, x)
                },
                |e| {
                    let x = e.load_elem(cxr, pair[0], j)?;
                    e.store(v, x)
                },
            )?;
            e.load(ity, v)
        };
        let per = |e: &mut Self, _: &Cx, j: Word| -> R<()> {
            let x = read(e, idx, j)?;
            let x = match origin {
                0 => x,
                o => {
                    let o = e.scalar(Scalar::I32(o));
                    e.b.i_add(ity, None, x, o).map_err(be)?
                }
            };
            e.store_elem(cxr, idx_out, j, x)?;
            if sorted_keys {
                e.if_then(moved, |e| {
                    let x = read(e, keys, j)?;
                    e.store_elem(cxr, keys[(passes % 2) as usize], j, x)
                })?;
            }
            Ok(())
        };
        self.unrolled_share(cxr, &per, i, k)
    }
}
