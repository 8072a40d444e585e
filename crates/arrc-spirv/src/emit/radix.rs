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
        let d = self.b.bitwise_and(u, None, d, c255).map_err(be)?;
        Ok((words, d))
    }

    /// The positions of batch round `r` for this lane: `base + r·SG + lane`, whether
    /// it is before `end`, and the position clamped below `end` (loads read there
    /// unconditionally, so that a batch's loads are all in flight at once).
    fn radix_at(&mut self, base: Word, r: u32, end: Word) -> R<(Word, Word, Word)> {
        let lane = self.load_builtin_cx(BuiltIn::SubgroupLocalInvocationId)?;
        let sgs = self.load_builtin_cx(BuiltIn::SubgroupSize)?;
        let rc = self.c_u32(r);
        let off = self.umul(rc, sgs)?;
        let i = self.uadd(base, off)?;
        let i = self.uadd(i, lane)?;
        let valid = self.ult(i, end)?;
        let one = self.c_u32(1);
        let last = self.b.i_sub(self.u32_t, None, end, one).map_err(be)?;
        let at = self.umin(i, last)?;
        Ok((i, valid, at))
    }

    /// A control barrier among the lanes of this subgroup, ordering their accesses
    /// to workgroup memory.
    fn subgroup_barrier(&mut self) -> R<()> {
        let sg = self.c_u32(SCOPE_SUBGROUP);
        let sem = self.c_u32(SEM_ACQ_REL_WORKGROUP);
        self.b.control_barrier(sg, sg, sem).map_err(be)
    }

    /// Runs `per_tile(tile, counters)` for each tile this subgroup takes (grid-stride
    /// over the tiles, subgroups past `subgroups` idle): `counters` is the subgroup's
    /// 256 digit counters in workgroup memory, as an index base into `shared`.
    fn radix_tiles(
        &mut self,
        cx: &Cx,
        subgroups: u32,
        per_tile: &dyn Fn(&mut Self, Word, Word) -> R<()>,
    ) -> R<()> {
        let sid = self.load_builtin_cx(BuiltIn::SubgroupId)?;
        let nsg = self.load_builtin_cx(BuiltIn::NumSubgroups)?;
        let cap = self.c_u32(subgroups);
        let active = self.umin(nsg, cap)?;
        let mine = self.ult(sid, active)?;
        let tiles = self.push_constant(cx, 3)?;
        let tvar = self.local(self.u32_t);
        let (group, groups) = (cx.group, cx.groups);
        self.if_then(mine, |e| {
            let c256 = e.c_u32(256);
            let counters = e.umul(sid, c256)?;
            let first = e.umul(group, active)?;
            let first = e.uadd(first, sid)?;
            let stride = e.umul(groups, active)?;
            e.count_loop(tvar, first, tiles, stride, |e, t| per_tile(e, t, counters))
        })
    }

    /// `for d in lane, lane+SG, … < 256: f(d)` (every lane of the subgroup).
    fn each_digit(&mut self, f: &dyn Fn(&mut Self, Word) -> R<()>) -> R<()> {
        let lane = self.load_builtin_cx(BuiltIn::SubgroupLocalInvocationId)?;
        let sgs = self.load_builtin_cx(BuiltIn::SubgroupSize)?;
        let c256 = self.c_u32(256);
        let dvar = self.local(self.u32_t);
        self.count_loop(dvar, lane, c256, sgs, |e, d| f(e, d))
    }

    /// `KernelKind::RadixCount`.
    pub(super) fn radix_count_kernel(
        &mut self,
        cx: &mut Cx,
        keys: u32,
        wide: bool,
        counts: u32,
        subgroups: u32,
    ) -> R<()> {
        for bi in [
            BuiltIn::SubgroupId,
            BuiltIn::NumSubgroups,
            BuiltIn::SubgroupSize,
            BuiltIn::SubgroupLocalInvocationId,
        ] {
            self.load_builtin(cx, bi)?;
        }
        let it = ElemType::I32;
        let shared = self.shared_sized(it, subgroups * 256);
        let tile = self.push_constant(cx, 1)?;
        let shift = self.push_constant(cx, 2)?;
        let tiles = self.push_constant(cx, 3)?;
        let n = cx.n;
        let pvar = self.local(self.u32_t);
        let cxr = &*cx;
        let per_tile = |e: &mut Self, t: Word, counters: Word| -> R<()> {
            e.each_digit(&|e, d| {
                let at = e.uadd(counters, d)?;
                let p = e.shared_ptr(shared, it, at)?;
                let z = e.scalar(Scalar::I32(0));
                e.store(p, z)
            })?;
            e.subgroup_barrier()?;
            let sgs = e.load_builtin_cx(BuiltIn::SubgroupSize)?;
            let start = e.umul(t, tile)?;
            let end = e.uadd(start, tile)?;
            let end = e.umin(end, n)?;
            let kc = e.c_u32(RADIX_BATCH);
            let step = e.umul(sgs, kc)?;
            e.count_loop(pvar, start, end, step, |e, base| {
                let mut batch = vec![];
                for r in 0..RADIX_BATCH {
                    let (_, valid, at) = e.radix_at(base, r, end)?;
                    let (_, d) = e.radix_key(cxr, keys, wide, at, shift)?;
                    batch.push((valid, d));
                }
                for (valid, d) in batch {
                    e.if_then(valid, |e| {
                        let at = e.uadd(counters, d)?;
                        let p = e.shared_ptr(shared, it, at)?;
                        let ity = e.ty(it);
                        let scope = e.c_u32(SCOPE_SUBGROUP);
                        let relaxed = e.c_u32(0);
                        let one = e.scalar(Scalar::I32(1));
                        e.b.atomic_i_add(ity, None, p, scope, relaxed, one)
                            .map_err(be)?;
                        Ok(())
                    })?;
                }
                Ok(())
            })?;
            e.subgroup_barrier()?;
            e.each_digit(&|e, d| {
                let at = e.uadd(counters, d)?;
                let p = e.shared_ptr(shared, it, at)?;
                let ity = e.ty(it);
                let c = e.load(ity, p)?;
                let dt = e.umul(d, tiles)?;
                let q = e.uadd(dt, t)?;
                e.store_elem(cxr, counts, q, c)
            })?;
            e.subgroup_barrier()
        };
        self.radix_tiles(cx, subgroups, &per_tile)
    }

    /// `KernelKind::RadixScatter`.
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
        subgroups: u32,
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
        let shared = self.shared_sized(it, subgroups * 256);
        let tile = self.push_constant(cx, 1)?;
        let shift = self.push_constant(cx, 2)?;
        let tiles = self.push_constant(cx, 3)?;
        let n = cx.n;
        let rvar = self.local(self.u32_t);
        let cxr = &*cx;
        let per_tile = |e: &mut Self, t: Word, counters: Word| -> R<()> {
            let u = e.u32_t;
            let ity = e.ty(it);
            // Each digit's counter starts at the tile's first place for it.
            e.each_digit(&|e, d| {
                let dt = e.umul(d, tiles)?;
                let q = e.uadd(dt, t)?;
                let s = e.load_elem(cxr, starts, q)?;
                let c = e.load_elem(cxr, counts, q)?;
                let first = e.b.i_sub(ity, None, s, c).map_err(be)?;
                let at = e.uadd(counters, d)?;
                let p = e.shared_ptr(shared, it, at)?;
                e.store(p, first)
            })?;
            e.subgroup_barrier()?;
            let sgs = e.load_builtin_cx(BuiltIn::SubgroupSize)?;
            let start = e.umul(t, tile)?;
            let end = e.uadd(start, tile)?;
            let end = e.umin(end, n)?;
            // Batches of RADIX_BATCH rounds of one element per lane (the loop is the
            // subgroup's: uniform): every load of a batch first, then the rounds'
            // ranks in order, then every store.
            let kc = e.c_u32(RADIX_BATCH);
            let step = e.umul(sgs, kc)?;
            e.count_loop(rvar, start, end, step, |e, base| {
                let bt = e.bool_t;
                let mut batch = vec![];
                for r in 0..RADIX_BATCH {
                    let (i, valid, at) = e.radix_at(base, r, end)?;
                    let (words, d) = e.radix_key(cxr, keys, wide, at, shift)?;
                    let from = match idx {
                        Some(ib) => e.load_elem(cxr, ib, at)?,
                        None => e.b.bitcast(ity, None, i).map_err(be)?,
                    };
                    batch.push((valid, words, d, from));
                }
                let mut places = vec![];
                for (valid, _, d, _) in &batch {
                    let (valid, d) = (*valid, *d);
                    // The lanes with this lane's digit: valid ones agreeing on all 8
                    // bits (a ballot per bit, or its complement).
                    let v4 = e.b.type_vector(u, 4);
                    let sg = e.c_u32(SCOPE_SUBGROUP);
                    let mut mask =
                        e.b.group_non_uniform_ballot(v4, None, sg, valid)
                            .map_err(be)?;
                    for bit in 0..8 {
                        let bc = e.c_u32(bit);
                        let sh = e.b.shift_right_logical(u, None, d, bc).map_err(be)?;
                        let one = e.c_u32(1);
                        let b1 = e.b.bitwise_and(u, None, sh, one).map_err(be)?;
                        let set = e.b.i_equal(bt, None, b1, one).map_err(be)?;
                        let bal =
                            e.b.group_non_uniform_ballot(v4, None, sg, set)
                                .map_err(be)?;
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
                    let count =
                        e.b.group_non_uniform_ballot_bit_count(
                            u,
                            None,
                            sg,
                            GroupOperation::Reduce,
                            mask,
                        )
                        .map_err(be)?;
                    // The counter of the digit (invalid lanes read digit 0's: unused).
                    let c255 = e.c_u32(255);
                    let dc = e.umin(d, c255)?;
                    let at = e.uadd(counters, dc)?;
                    let p = e.shared_ptr(shared, it, at)?;
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
                    places.push(e.uadd(bu, rank)?);
                }
                for ((valid, words, _, from), pos) in batch.into_iter().zip(places) {
                    e.if_then(valid, |e| {
                        if let Some(ko) = keys_out {
                            let wc = e.c_u32(words.len() as u32);
                            let dst = e.umul(pos, wc)?;
                            for (w, &x) in words.iter().enumerate() {
                                let c = e.c_u32(w as u32);
                                let dd = e.uadd(dst, c)?;
                                e.store_elem(cxr, ko, dd, x)?;
                            }
                        }
                        let from = if origin != 0 {
                            let o = e.scalar(Scalar::I32(origin));
                            e.b.i_add(ity, None, from, o).map_err(be)?
                        } else {
                            from
                        };
                        e.store_elem(cxr, idx_out, pos, from)
                    })?;
                }
                Ok(())
            })?;
            e.subgroup_barrier()
        };
        self.radix_tiles(cx, subgroups, &per_tile)
    }
}
