//! The radix sort's kernels (`⍋ ⍒` of vectors; planned in `arrc_ir::plan::sort`):
//! keys made unsigned in the same order, then per 8-bit digit a count per tile and a
//! stable scatter. A tile belongs to one subgroup, which walks it in rounds of one
//! element per lane: within a round, the lanes holding the same digit find each
//! other by eight ballots (one per digit bit), so each key's place is the tile's
//! start for its digit, plus the keys of that digit in earlier rounds (a counter per
//! digit in workgroup memory), plus the lanes below it in its round.

use super::*;

/// Rounds whose loads a subgroup issues together before ranking them (memory-level
/// parallelism: a round's ranking waits on its keys).
const RADIX_BATCH: u32 = 4;

impl Emitter {
    /// `KernelKind::RadixKeys`.
    pub(super) fn radix_keys_kernel(
        &mut self,
        cx: &mut Cx,
        key: &KExpr,
        out: u32,
        down: bool,
    ) -> R<()> {
        let t = key.elem();
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            let v = e.expr(cx, key, Ix::flat(j))?;
            let words = e.sort_words(t, v, down)?;
            let it = e.ty(ElemType::I32);
            let n = e.c_u32(words.len() as u32);
            let base = e.umul(j, n)?;
            for (w, &word) in words.iter().enumerate() {
                let c = e.c_u32(w as u32);
                let at = e.uadd(base, c)?;
                let x = e.b.bitcast(it, None, word).map_err(be)?;
                e.store_elem(cx, out, at, x)?;
            }
            Ok(())
        };
        self.unrolled_share(cx, &per, i, k)
    }

    /// Key `v` of type `t` as u32 words, low first, whose unsigned order is the
    /// keys' (reversed when `down`; see [`Self::ordered_bits`]).
    fn sort_words(&mut self, t: ElemType, v: Word, down: bool) -> R<Vec<Word>> {
        let (ut, x) = self.ordered_bits(t, v)?;
        let x = if down {
            self.b.not(ut, None, x).map_err(be)?
        } else {
            x
        };
        if t.size() != 8 {
            return Ok(vec![x]);
        }
        let u = self.u32_t;
        let lo = self.b.u_convert(u, None, x).map_err(be)?;
        let c32 = self.constant(ut, 32, true);
        let h = self.b.shift_right_logical(ut, None, x, c32).map_err(be)?;
        let hi = self.b.u_convert(u, None, h).map_err(be)?;
        Ok(vec![lo, hi])
    }

    /// Key `v` of type `t` as an unsigned integer of its width (the type is returned
    /// too) in the same order: integers with the sign bit flipped; floats with the
    /// sign bit flipped when positive and every bit when negative, -0 as 0. Exact
    /// whatever the device does with subnormals in float comparisons.
    pub(super) fn ordered_bits(&mut self, t: ElemType, v: Word) -> R<(Word, Word)> {
        let wide = t.size() == 8;
        let (ut, st, bits) = if wide {
            self.uses_i64 = true;
            (self.b.type_int(64, 0), self.b.type_int(64, 1), 64)
        } else {
            (self.u32_t, self.b.type_int(32, 1), 32)
        };
        let top = self.constant(ut, 1u64 << (bits - 1), wide);
        let x = self.b.bitcast(ut, None, v).map_err(be)?;
        let x = if t.is_float() {
            let neg_zero = self.b.i_equal(self.bool_t, None, x, top).map_err(be)?;
            let zero = self.constant(ut, 0, wide);
            let x = self.b.select(ut, None, neg_zero, zero, x).map_err(be)?;
            // All ones where negative (the sign bit spread), else the sign bit.
            let sx = self.b.bitcast(st, None, x).map_err(be)?;
            let sh = self.constant(ut, bits - 1, wide);
            let spread = self
                .b
                .shift_right_arithmetic(st, None, sx, sh)
                .map_err(be)?;
            let spread = self.b.bitcast(ut, None, spread).map_err(be)?;
            let mask = self.b.bitwise_or(ut, None, spread, top).map_err(be)?;
            self.b.bitwise_xor(ut, None, x, mask).map_err(be)?
        } else {
            self.b.bitwise_xor(ut, None, x, top).map_err(be)?
        };
        Ok((ut, x))
    }

    /// Key `i`'s words in `keys` (as stored: i32) and its digit at bit `shift`.
    fn radix_key(
        &mut self,
        cx: &Cx,
        keys: u32,
        wide: bool,
        i: Word,
        shift: Word,
    ) -> R<(Vec<Word>, Word)> {
        let u = self.u32_t;
        let mut words = vec![];
        if wide {
            let one = self.c_u32(1);
            let i2 = self.b.shift_left_logical(u, None, i, one).map_err(be)?;
            let i3 = self.uadd(i2, one)?;
            words.push(self.load_elem(cx, keys, i2)?);
            words.push(self.load_elem(cx, keys, i3)?);
        } else {
            words.push(self.load_elem(cx, keys, i)?);
        }
        let d = self.digit_of(&words, shift)?;
        Ok((words, d))
    }

    /// The digit at bit `shift` of a key's words (i32, low first).
    fn digit_of(&mut self, words: &[Word], shift: Word) -> R<Word> {
        let u = self.u32_t;
        let wide = words.len() == 2;
        let lo = self.b.bitcast(u, None, words[0]).map_err(be)?;
        let (w, s) = if wide {
            let hi = self.b.bitcast(u, None, words[1]).map_err(be)?;
            let c31 = self.c_u32(31);
            let upper = self
                .b
                .u_greater_than(self.bool_t, None, shift, c31)
                .map_err(be)?;
            let w = self.b.select(u, None, upper, hi, lo).map_err(be)?;
            let s = self.b.bitwise_and(u, None, shift, c31).map_err(be)?;
            (w, s)
        } else {
            (lo, shift)
        };
        let d = self.b.shift_right_logical(u, None, w, s).map_err(be)?;
        let c255 = self.c_u32(255);
        self.b.bitwise_and(u, None, d, c255).map_err(be)
    }

    /// A control barrier among the lanes of this subgroup, ordering their accesses
    /// to workgroup memory.
    fn subgroup_barrier(&mut self) -> R<()> {
        let sg = self.c_u32(SCOPE_SUBGROUP);
        let sem = self.c_u32(SEM_ACQ_REL_WORKGROUP);
        self.b.control_barrier(sg, sg, sem).map_err(be)
    }

    /// Runs `per_tile(t)` for each tile this workgroup takes (grid-stride over the
    /// tiles: workgroup-uniform, so barriers may follow).
    fn radix_tiles(&mut self, cx: &Cx, per_tile: &dyn Fn(&mut Self, Word) -> R<()>) -> R<()> {
        let tiles = self.push_constant(cx, 3)?;
        let tvar = self.local(self.u32_t);
        let (group, groups) = (cx.group, cx.groups);
        self.count_loop(tvar, group, tiles, groups, |e, t| per_tile(e, t))
    }

    /// `for k in lid, lid+WG, … < len: f(k)` over the workgroup.
    fn wg_each(&mut self, cx: &Cx, len: u32, f: &dyn Fn(&mut Self, Word) -> R<()>) -> R<()> {
        let end = self.c_u32(len);
        let kvar = self.local(self.u32_t);
        self.count_loop(kvar, cx.lid, end, self.wg_size, |e, k| f(e, k))
    }

    fn shared_at(&mut self, shared: Word, idx: Word) -> R<Word> {
        self.shared_ptr(shared, ElemType::I32, idx)
    }

    /// `KernelKind::RadixCount`: a workgroup per tile, its digits counted by atomic
    /// adds to 256 counters in workgroup memory.
    pub(super) fn radix_count_kernel(
        &mut self,
        cx: &mut Cx,
        keys: u32,
        wide: bool,
        counts: u32,
    ) -> R<()> {
        let it = ElemType::I32;
        let ity = self.ty(it);
        let hist = self.shared_sized(it, 256);
        let tile = self.push_constant(cx, 1)?;
        let shift = self.push_constant(cx, 2)?;
        let tiles = self.push_constant(cx, 3)?;
        let n = cx.n;
        let pvar = self.local(self.u32_t);
        let cxr = &*cx;
        let per_tile = |e: &mut Self, t: Word| -> R<()> {
            e.wg_each(cxr, 256, &|e, d| {
                let p = e.shared_at(hist, d)?;
                let z = e.scalar(Scalar::I32(0));
                e.store(p, z)
            })?;
            e.barrier()?;
            let start = e.umul(t, tile)?;
            let end = e.uadd(start, tile)?;
            let end = e.umin(end, n)?;
            let one = e.c_u32(1);
            let last = e.b.i_sub(e.u32_t, None, end, one).map_err(be)?;
            let kc = e.c_u32(RADIX_BATCH);
            let step = e.umul(e.wg_size, kc)?;
            let from = e.uadd(start, cxr.lid)?;
            e.count_loop(pvar, from, end, step, |e, base| {
                // A batch's loads first (clamped in bounds), then its counts.
                let mut batch = vec![];
                for r in 0..RADIX_BATCH {
                    let rc = e.c_u32(r);
                    let off = e.umul(rc, e.wg_size)?;
                    let i = e.uadd(base, off)?;
                    let valid = e.ult(i, end)?;
                    let at = e.umin(i, last)?;
                    let (_, d) = e.radix_key(cxr, keys, wide, at, shift)?;
                    batch.push((valid, d));
                }
                for (valid, d) in batch {
                    e.if_then(valid, |e| {
                        let p = e.shared_at(hist, d)?;
                        let scope = e.c_u32(SCOPE_WORKGROUP);
                        let relaxed = e.c_u32(0);
                        let one = e.scalar(Scalar::I32(1));
                        e.b.atomic_i_add(ity, None, p, scope, relaxed, one)
                            .map_err(be)?;
                        Ok(())
                    })?;
                }
                Ok(())
            })?;
            e.barrier()?;
            e.wg_each(cxr, 256, &|e, d| {
                let p = e.shared_at(hist, d)?;
                let c = e.load(ity, p)?;
                let dt = e.umul(d, tiles)?;
                let q = e.uadd(dt, t)?;
                e.store_elem(cxr, counts, q, c)
            })?;
            e.barrier()
        };
        self.radix_tiles(cx, &per_tile)
    }

    /// `KernelKind::RadixScatter`: a workgroup per tile of `items` keys per
    /// invocation. Each subgroup ranks its run of the tile round by round (lanes of a
    /// round with the same digit find each other by eight ballots; a counter per digit
    /// carries earlier rounds); the runs' counts, summed across subgroups and digits,
    /// give every key its place in the tile sorted by digit, in workgroup memory; the
    /// tile then goes out in that order, so that each digit's keys are written as one
    /// contiguous run.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn radix_scatter_kernel(
        &mut self,
        cx: &mut Cx,
        keys: u32,
        idx: Option<u32>,
        [counts, starts]: [u32; 2],
        keys_out: Option<u32>,
        idx_out: u32,
        wide: bool,
        origin: i32,
        [subgroups, items, tile_max, wrong_subgroups]: [u32; 4],
    ) -> R<()> {
        for bi in [
            BuiltIn::SubgroupId,
            BuiltIn::NumSubgroups,
            BuiltIn::SubgroupSize,
            BuiltIn::SubgroupLocalInvocationId,
        ] {
            self.load_builtin(cx, bi)?;
        }
        self.uses_ballot = true;
        let it = ElemType::I32;
        let ity = self.ty(it);
        let u = self.u32_t;
        let bt = self.bool_t;
        let words = if wide { 2 } else { 1 };
        // The tile's size is fixed here (workgroup memory): the planner makes the
        // workgroup `subgroups` subgroups of the device's size, `items` keys each.
        let sg_hist = self.shared_sized(it, subgroups * 256);
        let digit_start = self.shared_sized(it, 256);
        let global_base = self.shared_sized(it, 256);
        let skeys = self.shared_sized(it, tile_max * words);
        let sidx = self.shared_sized(it, tile_max);
        let tile = self.push_constant(cx, 1)?;
        let shift = self.push_constant(cx, 2)?;
        let tiles = self.push_constant(cx, 3)?;
        let n = cx.n;
        let jvar = self.local(u);
        let svar = self.local(u);
        let cxr = &*cx;
        let sid = self.load_builtin_cx(BuiltIn::SubgroupId)?;
        let nsg = self.load_builtin_cx(BuiltIn::NumSubgroups)?;
        let lane = self.load_builtin_cx(BuiltIn::SubgroupLocalInvocationId)?;
        let sgs = self.load_builtin_cx(BuiltIn::SubgroupSize)?;
        let c256 = self.c_u32(256);
        // Workgroup memory is sized for the subgroups the planner expects (the device's
        // reported size): a device that runs smaller ones raises the kernel's error
        // rather than sorting wrong, and the extra subgroups stay inside the memory.
        let cap = self.c_u32(subgroups);
        let too_many = self
            .b
            .u_greater_than(self.bool_t, None, nsg, cap)
            .map_err(be)?;
        self.raise(cx, Some(wrong_subgroups), too_many)?;
        let nsg = self.umin(nsg, cap)?;
        let last_sg = self.c_u32(subgroups - 1);
        let sid_in = self.umin(sid, last_sg)?;
        let counters = self.umul(sid_in, c256)?;
        let per_tile = |e: &mut Self, t: Word| -> R<()> {
            let tile_start = e.umul(t, tile)?;
            let left = e.b.i_sub(u, None, n, tile_start).map_err(be)?;
            let tile_len = e.umin(tile, left)?;
            let one = e.c_u32(1);
            let last = e.b.i_sub(u, None, tile_len, one).map_err(be)?;
            e.wg_each(cxr, subgroups * 256, &|e, k| {
                let p = e.shared_at(sg_hist, k)?;
                let z = e.scalar(Scalar::I32(0));
                e.store(p, z)
            })?;
            e.wg_each(cxr, 256, &|e, d| {
                let dt = e.umul(d, tiles)?;
                let q = e.uadd(dt, t)?;
                let s = e.load_elem(cxr, starts, q)?;
                let c = e.load_elem(cxr, counts, q)?;
                let first = e.b.i_sub(ity, None, s, c).map_err(be)?;
                let p = e.shared_at(global_base, d)?;
                e.store(p, first)
            })?;
            e.barrier()?;
            // This subgroup's run of the tile: `items` rounds of one key per lane.
            let ic = e.c_u32(items);
            let run = e.umul(sgs, ic)?;
            let run_start = e.umul(sid, run)?;
            let mut batch = vec![];
            for r in 0..items {
                let rc = e.c_u32(r);
                let off = e.umul(rc, sgs)?;
                let le = e.uadd(run_start, off)?;
                let le = e.uadd(le, lane)?;
                let valid = e.ult(le, tile_len)?;
                let lc = e.umin(le, last)?;
                let at = e.uadd(tile_start, lc)?;
                let (ws, d) = e.radix_key(cxr, keys, wide, at, shift)?;
                let from = match idx {
                    Some(ib) => e.load_elem(cxr, ib, at)?,
                    None => e.b.bitcast(ity, None, at).map_err(be)?,
                };
                batch.push((valid, ws, d, from));
            }
            let mut ranks = vec![];
            for (valid, _, d, _) in &batch {
                let (valid, d) = (*valid, *d);
                let v4 = e.b.type_vector(u, 4);
                let sg = e.c_u32(SCOPE_SUBGROUP);
                let mut mask =
                    e.b.group_non_uniform_ballot(v4, None, sg, valid)
                        .map_err(be)?;
                for bit in 0..8 {
                    let bc = e.c_u32(bit);
                    let sh = e.b.shift_right_logical(u, None, d, bc).map_err(be)?;
                    let b1 = e.b.bitwise_and(u, None, sh, one).map_err(be)?;
                    let set = e.b.i_equal(bt, None, b1, one).map_err(be)?;
                    let bal =
                        e.b.group_non_uniform_ballot(v4, None, sg, set)
                            .map_err(be)?;
                    // Lanes whose bit equals this lane's: bal, or its complement.
                    let flip = e.b.i_sub(u, None, b1, one).map_err(be)?;
                    let fv = e.b.composite_construct(v4, None, [flip; 4]).map_err(be)?;
                    let same = e.b.bitwise_xor(v4, None, bal, fv).map_err(be)?;
                    mask = e.b.bitwise_and(v4, None, mask, same).map_err(be)?;
                }
                let rank =
                    e.b.group_non_uniform_ballot_bit_count(
                        u,
                        None,
                        sg,
                        GroupOperation::ExclusiveScan,
                        mask,
                    )
                    .map_err(be)?;
                let count = e
                    .b
                    .group_non_uniform_ballot_bit_count(u, None, sg, GroupOperation::Reduce, mask)
                    .map_err(be)?;
                let at = e.uadd(counters, d)?;
                let p = e.shared_at(sg_hist, at)?;
                let b = e.load(ity, p)?;
                e.subgroup_barrier()?;
                let zero = e.c_u32(0);
                let leads = e.b.i_equal(bt, None, rank, zero).map_err(be)?;
                let leader = e.b.logical_and(bt, None, valid, leads).map_err(be)?;
                e.if_then(leader, |e| {
                    let ci = e.b.bitcast(ity, None, count).map_err(be)?;
                    let nb = e.b.i_add(ity, None, b, ci).map_err(be)?;
                    e.store(p, nb)
                })?;
                e.subgroup_barrier()?;
                let bu = e.b.bitcast(u, None, b).map_err(be)?;
                ranks.push(e.uadd(bu, rank)?);
            }
            e.barrier()?;
            // Per digit: each subgroup's start among the tile's keys of that digit
            // (in place of its count), and the digit's total.
            e.wg_each(cxr, 256, &|e, d| {
                let z = e.scalar(Scalar::I32(0));
                let acc = e.local(ity);
                e.store(acc, z)?;
                let zero = e.c_u32(0);
                e.count_loop(svar, zero, nsg, one, |e, s| {
                    let at = e.umul(s, c256)?;
                    let at = e.uadd(at, d)?;
                    let p = e.shared_at(sg_hist, at)?;
                    let v = e.load(ity, p)?;
                    let a = e.load(ity, acc)?;
                    e.store(p, a)?;
                    let na = e.b.i_add(ity, None, a, v).map_err(be)?;
                    e.store(acc, na)
                })?;
                let a = e.load(ity, acc)?;
                let p = e.shared_at(digit_start, d)?;
                e.store(p, a)
            })?;
            e.barrier()?;
            // The digits' starts in the sorted tile: an exclusive scan of the totals
            // by the first subgroup, a subgroup width at a time.
            let zero = e.c_u32(0);
            let first_sg = e.b.i_equal(bt, None, sid, zero).map_err(be)?;
            e.if_then(first_sg, |e| {
                let carry = e.local(ity);
                let z = e.scalar(Scalar::I32(0));
                e.store(carry, z)?;
                e.count_loop(jvar, zero, c256, sgs, |e, c| {
                    let k = e.uadd(c, lane)?;
                    let p = e.shared_at(digit_start, k)?;
                    let v = e.load(ity, p)?;
                    let inc = e.group(BinOp::Add, it, GroupOperation::InclusiveScan, v)?;
                    let tot = e.group(BinOp::Add, it, GroupOperation::Reduce, v)?;
                    let cv = e.load(ity, carry)?;
                    let ex = e.b.i_sub(ity, None, inc, v).map_err(be)?;
                    let st = e.b.i_add(ity, None, cv, ex).map_err(be)?;
                    e.store(p, st)?;
                    let nc = e.b.i_add(ity, None, cv, tot).map_err(be)?;
                    e.store(carry, nc)
                })
            })?;
            e.barrier()?;
            // Every key to its place in the sorted tile.
            for ((valid, ws, d, from), rank) in batch.into_iter().zip(ranks) {
                e.if_then(valid, |e| {
                    let p = e.shared_at(digit_start, d)?;
                    let ds = e.load(ity, p)?;
                    let at = e.uadd(counters, d)?;
                    let p = e.shared_at(sg_hist, at)?;
                    let ss = e.load(ity, p)?;
                    let base = e.b.i_add(ity, None, ds, ss).map_err(be)?;
                    let base = e.b.bitcast(u, None, base).map_err(be)?;
                    let lp = e.uadd(base, rank)?;
                    let wc = e.c_u32(words);
                    let kp = e.umul(lp, wc)?;
                    for (w, &x) in ws.iter().enumerate() {
                        let c = e.c_u32(w as u32);
                        let k = e.uadd(kp, c)?;
                        let p = e.shared_at(skeys, k)?;
                        e.store(p, x)?;
                    }
                    let p = e.shared_at(sidx, lp)?;
                    e.store(p, from)
                })?;
            }
            e.barrier()?;
            // Out in sorted order: the keys of a digit go to consecutive places.
            e.count_loop(jvar, cxr.lid, tile_len, e.wg_size, |e, j| {
                let wc = e.c_u32(words);
                let kp = e.umul(j, wc)?;
                let mut ws = vec![];
                for w in 0..words {
                    let c = e.c_u32(w);
                    let k = e.uadd(kp, c)?;
                    let p = e.shared_at(skeys, k)?;
                    ws.push(e.load(ity, p)?);
                }
                let d = e.digit_of(&ws, shift)?;
                let p = e.shared_at(digit_start, d)?;
                let ds = e.load(ity, p)?;
                let ds = e.b.bitcast(u, None, ds).map_err(be)?;
                let p = e.shared_at(global_base, d)?;
                let gb = e.load(ity, p)?;
                let gb = e.b.bitcast(u, None, gb).map_err(be)?;
                let within = e.b.i_sub(u, None, j, ds).map_err(be)?;
                let pos = e.uadd(gb, within)?;
                if let Some(ko) = keys_out {
                    let dst = e.umul(pos, wc)?;
                    for (w, &x) in ws.iter().enumerate() {
                        let c = e.c_u32(w as u32);
                        let k = e.uadd(dst, c)?;
                        e.store_elem(cxr, ko, k, x)?;
                    }
                }
                let p = e.shared_at(sidx, j)?;
                let from = e.load(ity, p)?;
                let from = if origin != 0 {
                    let o = e.scalar(Scalar::I32(origin));
                    e.b.i_add(ity, None, from, o).map_err(be)?
                } else {
                    from
                };
                e.store_elem(cxr, idx_out, pos, from)
            })?;
            e.barrier()
        };
        self.radix_tiles(cx, &per_tile)
    }
}
