//! The radix sort's kernels (`⍋ ⍒` of vectors; planned in `arrc_ir::plan::sort`):
//! keys made unsigned in the same order, then per 8-bit digit a count per tile and a
//! stable scatter. A tile belongs to one subgroup, which walks it in rounds of one
//! element per lane: within a round, the lanes holding the same digit find each
//! other by eight ballots (one per digit bit), so each key's place is the tile's
//! start for its digit, plus the keys of that digit in earlier rounds (a counter per
//! digit in workgroup memory), plus the lanes below it in its round.

use super::*;
use arrc_ir::plan::RadixPlaces;

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
        hist: Option<(u32, u32)>,
    ) -> R<()> {
        if let Some((hist, passes)) = hist {
            return self.radix_keys_counted(cx, key, out, down, hist, passes);
        }
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            e.store_key(cx, key, out, down, j).map(|_| ())
        };
        self.unrolled_share(cx, &per, i, k)
    }

    /// Key `j` computed from `key`, stored in `out` as its sort words (i32, low
    /// first, at `j × words`); the stored words are returned.
    pub(super) fn store_key(
        &mut self,
        cx: &Cx,
        key: &KExpr,
        out: u32,
        down: bool,
        j: Word,
    ) -> R<Vec<Word>> {
        let v = self.expr(cx, key, Ix::flat(j))?;
        let words = self.sort_words(key.elem(), v, down)?;
        let it = self.ty(ElemType::I32);
        let n = self.c_u32(words.len() as u32);
        let base = self.umul(j, n)?;
        let mut stored = Vec::with_capacity(words.len());
        for (w, &word) in words.iter().enumerate() {
            let c = self.c_u32(w as u32);
            let at = self.uadd(base, c)?;
            let x = self.b.bitcast(it, None, word).map_err(be)?;
            self.store_elem(cx, out, at, x)?;
            stored.push(x);
        }
        Ok(stored)
    }

    /// `KernelKind::RadixKeys` with the digit counts of every pass: a grid-stride
    /// loop that stores each key's words and counts its digits in workgroup memory
    /// (one atomic add per subgroup where all its lanes have the same digit, as the
    /// high digits of narrow ranges do), then adds the workgroup's counts to `hist`.
    fn radix_keys_counted(
        &mut self,
        cx: &mut Cx,
        key: &KExpr,
        out: u32,
        down: bool,
        hist: u32,
        passes: u32,
    ) -> R<()> {
        let it = ElemType::I32;
        let ity = self.ty(it);
        let u = self.u32_t;
        let bins = 256 * passes;
        let counts = self.shared_sized(it, bins);
        self.uses_ballot = true;
        self.uses_vote = true;
        let cxr = &*cx;
        self.wg_each(cxr, bins, &|e, k| {
            let p = e.shared_at(counts, k)?;
            let z = e.scalar(Scalar::I32(0));
            e.store(p, z)
        })?;
        self.barrier()?;
        let base = self.umul(cx.group, self.wg_size)?;
        let start = self.uadd(base, cx.lid)?;
        let step = self.umul(cx.groups, self.wg_size)?;
        let ivar = self.local(u);
        self.count_loop(ivar, start, cx.n, step, |e, i| {
            let stored = e.store_key(cxr, key, out, down, i)?;
            let sg = e.c_u32(SCOPE_SUBGROUP);
            let v4 = e.b.type_vector(u, 4);
            let tru = e.b.constant_true(e.bool_t);
            let active =
                e.b.group_non_uniform_ballot(v4, None, sg, tru)
                    .map_err(be)?;
            let lanes =
                e.b.group_non_uniform_ballot_bit_count(u, None, sg, GroupOperation::Reduce, active)
                    .map_err(be)?;
            let lanes = e.b.bitcast(ity, None, lanes).map_err(be)?;
            for pass in 0..passes {
                let shift = e.c_u32(8 * pass);
                let d = e.digit_of(&stored, shift)?;
                let off = e.c_u32(256 * pass);
                let at = e.uadd(off, d)?;
                let p = e.shared_at(counts, at)?;
                let same =
                    e.b.group_non_uniform_all_equal(e.bool_t, None, sg, d)
                        .map_err(be)?;
                let add = |e: &mut Self, x: Word| -> R<()> {
                    let scope = e.c_u32(SCOPE_WORKGROUP);
                    let relaxed = e.c_u32(0);
                    e.b.atomic_i_add(ity, None, p, scope, relaxed, x)
                        .map_err(be)?;
                    Ok(())
                };
                e.if_else(
                    same,
                    |e| {
                        let el = e.elect()?;
                        e.if_then(el, |e| add(e, lanes))
                    },
                    |e| {
                        let one = e.scalar(Scalar::I32(1));
                        add(e, one)
                    },
                )?;
            }
            Ok(())
        })?;
        self.barrier()?;
        self.wg_each(cxr, bins, &|e, k| {
            let p = e.shared_at(counts, k)?;
            let c = e.load(ity, p)?;
            let z = e.scalar(Scalar::I32(0));
            let any = e.b.i_not_equal(e.bool_t, None, c, z).map_err(be)?;
            e.if_then(any, |e| {
                let gp = e.word_at(cxr, hist, k)?;
                let dev = e.c_u32(SCOPE_DEVICE);
                let relaxed = e.c_u32(0);
                let c = e.b.bitcast(e.u32_t, None, c).map_err(be)?;
                e.b.atomic_i_add(e.u32_t, None, gp, dev, relaxed, c)
                    .map_err(be)?;
                Ok(())
            })
        })
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

    /// Key `i` of a sort's words in `keys` (`KExpr::SortedKey`) as the `t` it was
    /// sorted as: `sort_words` undone.
    pub(super) fn sorted_key(
        &mut self,
        cx: &Cx,
        keys: u32,
        t: ElemType,
        down: bool,
        i: Word,
    ) -> R<Word> {
        let wide = t.size() == 8;
        let u = self.u32_t;
        let (ut, st, bits) = if wide {
            self.uses_i64 = true;
            (self.b.type_int(64, 0), self.b.type_int(64, 1), 64)
        } else {
            (u, self.b.type_int(32, 1), 32)
        };
        let words = self.key_words(cx, keys, wide, i)?;
        let x = if let [lo, hi] = words[..] {
            let lo = self.b.bitcast(u, None, lo).map_err(be)?;
            let hi = self.b.bitcast(u, None, hi).map_err(be)?;
            let lo = self.b.u_convert(ut, None, lo).map_err(be)?;
            let hi = self.b.u_convert(ut, None, hi).map_err(be)?;
            let c32 = self.constant(ut, 32, true);
            let hi = self.b.shift_left_logical(ut, None, hi, c32).map_err(be)?;
            self.b.bitwise_or(ut, None, hi, lo).map_err(be)?
        } else {
            self.b.bitcast(u, None, words[0]).map_err(be)?
        };
        let x = if down {
            self.b.not(ut, None, x).map_err(be)?
        } else {
            x
        };
        let top = self.constant(ut, 1u64 << (bits - 1), wide);
        let x = self.b.bitwise_xor(ut, None, x, top).map_err(be)?;
        let sx = self.b.bitcast(st, None, x).map_err(be)?;
        if !t.is_float() {
            return Ok(sx);
        }
        // `signed_order_bits` is its own inverse.
        let sx = self.signed_order_bits(wide, sx)?;
        let ty = self.ty(t);
        self.b.bitcast(ty, None, sx).map_err(be)
    }

    /// A float's bits `b`, as a signed integer of its width (64 bits where `wide`),
    /// to an integer of the floats' signed order, and back (`UnOp::OrderedBits`):
    /// `b ^ ((b >> (w-1)) & MAX)`, a negative float's magnitude bits flipped.
    pub(super) fn signed_order_bits(&mut self, wide: bool, b: Word) -> R<Word> {
        let (st, bits) = if wide {
            self.uses_i64 = true;
            (self.b.type_int(64, 1), 64)
        } else {
            (self.b.type_int(32, 1), 32)
        };
        let sh = self.constant(st, bits - 1, wide);
        let spread = self.b.shift_right_arithmetic(st, None, b, sh).map_err(be)?;
        let max = self.constant(st, (1u64 << (bits - 1)) - 1, wide);
        let mask = self.b.bitwise_and(st, None, spread, max).map_err(be)?;
        self.b.bitwise_xor(st, None, b, mask).map_err(be)
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
            // The floats' signed order (made unsigned below, as integers' is, by
            // flipping the sign bit).
            let sx = self.b.bitcast(st, None, x).map_err(be)?;
            let sx = self.signed_order_bits(wide, sx)?;
            self.b.bitcast(ut, None, sx).map_err(be)?
        } else {
            x
        };
        Ok((ut, self.b.bitwise_xor(ut, None, x, top).map_err(be)?))
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
        let words = self.key_words(cx, keys, wide, i)?;
        let d = self.digit_of(&words, shift)?;
        Ok((words, d))
    }

    /// Key `i`'s words in `keys` (as stored: i32, low first).
    fn key_words(&mut self, cx: &Cx, keys: u32, wide: bool, i: Word) -> R<Vec<Word>> {
        if !wide {
            return Ok(vec![self.load_elem(cx, keys, i)?]);
        }
        let u = self.u32_t;
        let one = self.c_u32(1);
        let i2 = self.b.shift_left_logical(u, None, i, one).map_err(be)?;
        let i3 = self.uadd(i2, one)?;
        Ok(vec![
            self.load_elem(cx, keys, i2)?,
            self.load_elem(cx, keys, i3)?,
        ])
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
            match self.radix_least {
                Some(m) => (self.b.i_sub(u, None, lo, m).map_err(be)?, shift),
                None => (lo, shift),
            }
        };
        let d = self.b.shift_right_logical(u, None, w, s).map_err(be)?;
        let c255 = self.c_u32(255);
        self.b.bitwise_and(u, None, d, c255).map_err(be)
    }

    /// A control barrier among the lanes of this subgroup, ordering their accesses
    /// to workgroup memory.
    pub(super) fn subgroup_barrier(&mut self) -> R<()> {
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

    /// Adds 1 to a workgroup-memory counter, atomically.
    fn shared_increment(&mut self, p: Word) -> R<()> {
        let ity = self.ty(ElemType::I32);
        let scope = self.c_u32(SCOPE_WORKGROUP);
        let relaxed = self.c_u32(0);
        let one = self.scalar(Scalar::I32(1));
        self.b
            .atomic_i_add(ity, None, p, scope, relaxed, one)
            .map_err(be)?;
        Ok(())
    }

    pub(super) fn shared_at(&mut self, shared: Word, idx: Word) -> R<Word> {
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
                        e.shared_increment(p)
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

    /// Among this subgroup's lanes that are `valid`, those whose digit `d` equals
    /// this lane's: how many are below it (its rank) and how many there are, by
    /// eight ballots (one per digit bit). `narrow` subgroups (at most 32 lanes) keep
    /// the ballots as one word, `below` being the mask of the lanes under this one.
    fn match_digit(&mut self, valid: Word, d: Word, narrow: bool, below: Word) -> R<(Word, Word)> {
        let u = self.u32_t;
        let bt = self.bool_t;
        let one = self.c_u32(1);
        let v4 = self.b.type_vector(u, 4);
        let sg = self.c_u32(SCOPE_SUBGROUP);
        let ballot = |e: &mut Self, p: Word| -> R<Word> {
            let b = e.b.group_non_uniform_ballot(v4, None, sg, p).map_err(be)?;
            if narrow {
                e.b.composite_extract(u, None, b, [0]).map_err(be)
            } else {
                Ok(b)
            }
        };
        let mt = if narrow { u } else { v4 };
        let mut mask = ballot(self, valid)?;
        for bit in 0..8 {
            let bc = self.c_u32(bit);
            let sh = self.b.shift_right_logical(u, None, d, bc).map_err(be)?;
            let b1 = self.b.bitwise_and(u, None, sh, one).map_err(be)?;
            let set = self.b.i_equal(bt, None, b1, one).map_err(be)?;
            let bal = ballot(self, set)?;
            // Lanes whose bit equals this lane's: bal, or its complement.
            let flip = self.b.i_sub(u, None, b1, one).map_err(be)?;
            let fv = if narrow {
                flip
            } else {
                self.b
                    .composite_construct(v4, None, [flip; 4])
                    .map_err(be)?
            };
            let same = self.b.bitwise_xor(mt, None, bal, fv).map_err(be)?;
            mask = self.b.bitwise_and(mt, None, mask, same).map_err(be)?;
        }
        if narrow {
            let lower = self.b.bitwise_and(u, None, mask, below).map_err(be)?;
            let rank = self.b.bit_count(u, None, lower).map_err(be)?;
            let count = self.b.bit_count(u, None, mask).map_err(be)?;
            return Ok((rank, count));
        }
        let rank = self
            .b
            .group_non_uniform_ballot_bit_count(u, None, sg, GroupOperation::ExclusiveScan, mask)
            .map_err(be)?;
        let count = self
            .b
            .group_non_uniform_ballot_bit_count(u, None, sg, GroupOperation::Reduce, mask)
            .map_err(be)?;
        Ok((rank, count))
    }

    /// `KernelKind::RadixScatter`: a workgroup per tile of `items` keys per
    /// invocation. Each subgroup ranks its run of the tile round by round (lanes of a
    /// round with the same digit find each other by eight ballots; a counter per digit
    /// carries earlier rounds); the runs' counts, summed across subgroups and digits,
    /// give every key its place in the tile sorted by digit, in workgroup memory; the
    /// tile then goes out in that order, so that each digit's keys are written as one
    /// contiguous run, from where `places` says the tile's keys of that digit start.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn radix_scatter_kernel(
        &mut self,
        cx: &mut Cx,
        keys: u32,
        idx: Option<u32>,
        places: &RadixPlaces,
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
        if tile_max > 1 << 16 {
            // A key's place in its tile is held in 16 bits (below).
            return Err(SpirvError::Build(format!(
                "a radix tile of {tile_max} keys (at most 65536)"
            )));
        }
        // The tile's size is fixed here (workgroup memory): the planner makes the
        // workgroup `subgroups` subgroups of the device's size, `items` keys each.
        let sg_hist = self.shared_sized(it, subgroups * 256);
        let sg_total = self.shared_sized(it, subgroups);
        let digit_start = self.shared_sized(it, 256);
        let global_base = self.shared_sized(it, 256);
        let skeys = self.shared_sized(it, tile_max * words);
        let sidx = self.shared_sized(it, tile_max);
        let tile = self.push_constant(cx, 1)?;
        let shift = self.push_constant(cx, 2)?;
        let tiles = self.push_constant(cx, 3)?;
        let n = cx.n;
        let svar = self.local(u);
        let sid = self.load_builtin_cx(BuiltIn::SubgroupId)?;
        let nsg = self.load_builtin_cx(BuiltIn::NumSubgroups)?;
        let lane = self.load_builtin_cx(BuiltIn::SubgroupLocalInvocationId)?;
        let sgs = self.load_builtin_cx(BuiltIn::SubgroupSize)?;
        let c256 = self.c_u32(256);
        // Workgroup memory and ballots are made for the subgroup size the planner
        // expects (the device's reported size): a device that runs another size
        // raises the kernel's error rather than sorting wrong, and extra subgroups
        // stay inside the memory.
        let lanes = tile_max / (subgroups * items);
        let wg_planned = subgroups * lanes;
        if wg_planned == 0 || 256 % wg_planned != 0 {
            return Err(SpirvError::Build(format!(
                "a radix workgroup of {wg_planned} invocations (a divisor of 256)"
            )));
        }
        // Digits an invocation in the per-digit steps.
        let per = 256 / wg_planned;
        let cap = self.c_u32(subgroups);
        let planned = self.c_u32(lanes);
        let other = self.b.i_not_equal(bt, None, sgs, planned).map_err(be)?;
        // The digits go `per` an invocation and the tile's keys out `items` places
        // an invocation (below): a workgroup of another size, or a larger tile, is
        // the plan's error, raised, never digits or keys left out.
        let tile_pc = self.push_constant(cx, 1)?;
        let reach = self.c_u32(wg_planned * items);
        let short = self
            .b
            .u_greater_than(bt, None, tile_pc, reach)
            .map_err(be)?;
        let other = self.b.logical_or(bt, None, other, short).map_err(be)?;
        let wgc = self.c_u32(wg_planned);
        let resized = self
            .b
            .i_not_equal(bt, None, self.wg_size, wgc)
            .map_err(be)?;
        let other = self.b.logical_or(bt, None, other, resized).map_err(be)?;
        self.raise(cx, Some(wrong_subgroups), other)?;
        // Subgroups of at most 32 lanes: ballots as one word.
        let narrow = lanes <= 32;
        let below = {
            // The lanes below this one, as a mask (narrow subgroups only).
            let one = self.c_u32(1);
            let c31 = self.c_u32(31);
            let l = self.umin(lane, c31)?;
            let bit = self.b.shift_left_logical(u, None, one, l).map_err(be)?;
            self.b.i_sub(u, None, bit, one).map_err(be)?
        };
        let nsg = self.umin(nsg, cap)?;
        let last_sg = self.c_u32(subgroups - 1);
        let sid_in = self.umin(sid, last_sg)?;
        let counters = self.umul(sid_in, c256)?;
        let lookback = match *places {
            RadixPlaces::Lookback {
                hist,
                status,
                next,
                counter,
                pass,
                polls,
            } => {
                let lb = Lookback {
                    polls,
                    status,
                    next,
                    keys,
                    wide,
                    acc: self.shared_sized(it, 256),
                    done: self.shared_sized(it, 256),
                    at: self.shared_sized(it, 256),
                    flags: self.shared_sized(it, 2),
                    counts: self.shared_sized(it, 256),
                    wrong: wrong_subgroups,
                };
                // Where each digit's keys start among all keys: the exclusive scan of
                // this pass's counts, once per workgroup (in `global_base`'s place
                // until a tile adds its lookback).
                let digit_global = self.shared_sized(it, 256);
                let cxr = &*cx;
                self.wg_each(cxr, 256, &|e, d| {
                    let off = e.c_u32(256 * pass);
                    let at = e.uadd(off, d)?;
                    let gp = e.word_at(cxr, hist, at)?;
                    let c = e.load(e.u32_t, gp)?;
                    let c = e.b.bitcast(ity, None, c).map_err(be)?;
                    let p = e.shared_at(digit_global, d)?;
                    e.store(p, c)
                })?;
                self.barrier()?;
                self.scan_256(digit_global, sid, lane, sgs)?;
                self.barrier()?;
                Some((lb, digit_global, counter, pass))
            }
            RadixPlaces::Counted { .. } => None,
        };
        let cxr = &*cx;
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
                let ws = e.key_words(cxr, keys, wide, at)?;
                let from = match idx {
                    Some(ib) => e.load_elem(cxr, ib, at)?,
                    None => e.b.bitcast(ity, None, at).map_err(be)?,
                };
                batch.push((valid, ws, from));
            }
            // The tile's bases read after its keys, so that the two reads wait
            // together (one workgroup a multiprocessor hides neither).
            if let RadixPlaces::Counted { starts } = *places {
                // The exclusive start of (digit d, tile t) is the inclusive one
                // before it in digit-major order (CUDA's model of this pass reads
                // one word a digit; reading the count too took a second strided
                // read a digit a tile).
                e.wg_each(cxr, 256, &|e, d| {
                    let dt = e.umul(d, tiles)?;
                    let q = e.uadd(dt, t)?;
                    let zero = e.c_u32(0);
                    let one = e.c_u32(1);
                    let at0 = e.b.i_equal(bt, None, q, zero).map_err(be)?;
                    let qm = e.umax(q, one)?;
                    let qm = e.b.i_sub(u, None, qm, one).map_err(be)?;
                    let s = e.load_elem(cxr, starts, qm)?;
                    let z = e.scalar(Scalar::I32(0));
                    let first = e.b.select(ity, None, at0, z, s).map_err(be)?;
                    let p = e.shared_at(global_base, d)?;
                    e.store(p, first)
                })?;
            }
            e.barrier()?;
            // Each key's place among its digit's in the tile, packed with the digit
            // and whether the key is in the tile (`rank | d << 16 | valid << 31`): one
            // word a key held to the scatter below, not three.
            let mut ranks = vec![];
            for (valid, ws, _) in &batch {
                let valid = *valid;
                let d = e.digit_of(ws, shift)?;
                let (rank, count) = e.match_digit(valid, d, narrow, below)?;
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
                let r = e.uadd(bu, rank)?;
                let c16 = e.c_u32(16);
                let dh = e.b.shift_left_logical(u, None, d, c16).map_err(be)?;
                let r = e.b.bitwise_or(u, None, r, dh).map_err(be)?;
                let top = e.c_u32(1 << 31);
                let zero = e.c_u32(0);
                let v = e.b.select(u, None, valid, top, zero).map_err(be)?;
                ranks.push(e.b.bitwise_or(u, None, r, v).map_err(be)?);
            }
            e.barrier()?;
            // Per digit, `per` consecutive digits an invocation: each subgroup's start
            // among the tile's keys of that digit (in place of its count), the digit's
            // total (with lookback, published for the tiles after this one), and the
            // digits' starts in the sorted tile, scanned by the whole workgroup at
            // once (the invocation's digits in turn, then across the subgroup, then
            // the subgroups' totals).
            let pc = e.c_u32(per);
            // (Clamped: a workgroup of another size raised its error above.)
            let last_inv = e.c_u32(wg_planned - 1);
            let inv = e.umin(cxr.lid, last_inv)?;
            let first_d = e.umul(inv, pc)?;
            let mut totals = vec![];
            for m in 0..per {
                let mc = e.c_u32(m);
                let d = e.uadd(first_d, mc)?;
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
                if let Some((lb, ..)) = &lookback {
                    e.lookback_publish(cxr, lb, t, d, a)?;
                }
                totals.push((d, a));
            }
            let mut run = e.scalar(Scalar::I32(0));
            let mut within = vec![];
            for &(_, a) in &totals {
                within.push(run);
                run = e.b.i_add(ity, None, run, a).map_err(be)?;
            }
            let inc = e.group(BinOp::Add, it, GroupOperation::InclusiveScan, run)?;
            let lanes_before = e.b.i_sub(ity, None, inc, run).map_err(be)?;
            let top_lane = e.b.i_sub(u, None, sgs, one).map_err(be)?;
            let is_top = e.b.i_equal(bt, None, lane, top_lane).map_err(be)?;
            e.if_then(is_top, |e| {
                let p = e.shared_at(sg_total, sid_in)?;
                e.store(p, inc)
            })?;
            e.barrier()?;
            let sg_before = e.local(ity);
            let z = e.scalar(Scalar::I32(0));
            e.store(sg_before, z)?;
            let zero = e.c_u32(0);
            e.count_loop(svar, zero, sid_in, one, |e, s| {
                let p = e.shared_at(sg_total, s)?;
                let v = e.load(ity, p)?;
                let a = e.load(ity, sg_before)?;
                let na = e.b.i_add(ity, None, a, v).map_err(be)?;
                e.store(sg_before, na)
            })?;
            let sb = e.load(ity, sg_before)?;
            let before_mine = e.b.i_add(ity, None, sb, lanes_before).map_err(be)?;
            for (&(d, _), w) in totals.iter().zip(within) {
                let st = e.b.i_add(ity, None, before_mine, w).map_err(be)?;
                let p = e.shared_at(digit_start, d)?;
                e.store(p, st)?;
            }
            if let Some((lb, digit_global, ..)) = &lookback {
                e.lookback_digits(cxr, lb, t, tile, shift)?;
                // The tile's start for each digit; its inclusive count published.
                for &(d, mine) in &totals {
                    let p = e.shared_at(lb.acc, d)?;
                    let before = e.load(ity, p)?;
                    let p = e.shared_at(*digit_global, d)?;
                    let g = e.load(ity, p)?;
                    let gb = e.b.i_add(ity, None, g, before).map_err(be)?;
                    let p = e.shared_at(global_base, d)?;
                    e.store(p, gb)?;
                    let incl = e.b.i_add(ity, None, before, mine).map_err(be)?;
                    let incl = e.b.bitcast(u, None, incl).map_err(be)?;
                    let two = e.c_u32(2 << 30);
                    let w = e.b.bitwise_or(u, None, incl, two).map_err(be)?;
                    e.status_store(cxr, lb.status, t, d, w)?;
                    let zero = e.c_u32(0);
                    e.status_store(cxr, lb.next, t, d, zero)?;
                }
            }
            e.barrier()?;
            // Every key to its place in the sorted tile.
            for ((_, ws, from), packed) in batch.into_iter().zip(ranks) {
                let top = e.c_u32(1 << 31);
                let valid =
                    e.b.u_greater_than_equal(bt, None, packed, top)
                        .map_err(be)?;
                e.if_then(valid, |e| {
                    let c16 = e.c_u32(16);
                    let d = e.b.shift_right_logical(u, None, packed, c16).map_err(be)?;
                    let c255 = e.c_u32(255);
                    let d = e.b.bitwise_and(u, None, d, c255).map_err(be)?;
                    let low = e.c_u32(0xffff);
                    let rank = e.b.bitwise_and(u, None, packed, low).map_err(be)?;
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
            // Straight-line over the invocation's `items` places (`lid + r·WG`), the
            // workgroup-memory reads of every place before any store, so that their
            // waits overlap; places past the tile read its last and store nothing.
            let wc = e.c_u32(words);
            let mut outs = vec![];
            for r in 0..items {
                let rc = e.c_u32(r);
                let off = e.umul(rc, e.wg_size)?;
                let j = e.uadd(cxr.lid, off)?;
                let valid = e.ult(j, tile_len)?;
                let j = e.umin(j, last)?;
                let kp = e.umul(j, wc)?;
                let mut ws = vec![];
                for w in 0..words {
                    let c = e.c_u32(w);
                    let k = e.uadd(kp, c)?;
                    let p = e.shared_at(skeys, k)?;
                    ws.push(e.load(ity, p)?);
                }
                let p = e.shared_at(sidx, j)?;
                let from = e.load(ity, p)?;
                outs.push((valid, j, ws, from));
            }
            let mut places = vec![];
            for (valid, j, ws, from) in outs {
                let d = e.digit_of(&ws, shift)?;
                let p = e.shared_at(digit_start, d)?;
                let ds = e.load(ity, p)?;
                let ds = e.b.bitcast(u, None, ds).map_err(be)?;
                let p = e.shared_at(global_base, d)?;
                let gb = e.load(ity, p)?;
                let gb = e.b.bitcast(u, None, gb).map_err(be)?;
                let within = e.b.i_sub(u, None, j, ds).map_err(be)?;
                let pos = e.uadd(gb, within)?;
                places.push((valid, pos, ws, from));
            }
            for (valid, pos, ws, from) in places {
                e.if_then(valid, |e| {
                    if let Some(ko) = keys_out {
                        let dst = e.umul(pos, wc)?;
                        for (w, &x) in ws.iter().enumerate() {
                            let c = e.c_u32(w as u32);
                            let k = e.uadd(dst, c)?;
                            e.store_elem(cxr, ko, k, x)?;
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
            e.barrier()
        };
        match &lookback {
            None => self.radix_tiles(cx, &per_tile),
            Some((lb, _, counter, pass)) => {
                self.claimed_tiles(cx, lb.flags, *counter, *pass, tiles, &per_tile)
            }
        }
    }

    /// An exclusive scan of a workgroup array of 256 i32 in place, by the first
    /// subgroup a subgroup width at a time (between barriers).
    fn scan_256(&mut self, arr: Word, sid: Word, lane: Word, sgs: Word) -> R<()> {
        let it = ElemType::I32;
        let ity = self.ty(it);
        let zero = self.c_u32(0);
        let c256 = self.c_u32(256);
        let jvar = self.local(self.u32_t);
        let first_sg = self.b.i_equal(self.bool_t, None, sid, zero).map_err(be)?;
        self.if_then(first_sg, |e| {
            let carry = e.local(ity);
            let z = e.scalar(Scalar::I32(0));
            e.store(carry, z)?;
            e.count_loop(jvar, zero, c256, sgs, |e, c| {
                let k = e.uadd(c, lane)?;
                let p = e.shared_at(arr, k)?;
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
        })
    }

    /// Tiles claimed in order from `counter[pass]`: each workgroup claims its share
    /// (`⌈tiles ÷ workgroups⌉`, one where there are as many workgroups as tiles) and
    /// no more, so that a device that runs workgroups one after another does not
    /// give all tiles to the first. The first invocation claims; `slot` (workgroup
    /// memory) hands the tile to the others.
    fn claimed_tiles(
        &mut self,
        cx: &Cx,
        slot: Word,
        counter: u32,
        pass: u32,
        tiles: Word,
        per_tile: &dyn Fn(&mut Self, Word) -> R<()>,
    ) -> R<()> {
        let it = ElemType::I32;
        let ity = self.ty(it);
        let u = self.u32_t;
        let one = self.c_u32(1);
        let zero = self.c_u32(0);
        let gm1 = self.b.i_sub(u, None, cx.groups, one).map_err(be)?;
        let up = self.uadd(tiles, gm1)?;
        let share = self.b.u_div(u, None, up, cx.groups).map_err(be)?;
        let rvar = self.local(u);
        self.count_loop(rvar, zero, share, one, |e, _| {
            let first = e.b.i_equal(e.bool_t, None, cx.lid, zero).map_err(be)?;
            e.if_then(first, |e| {
                let pc = e.c_u32(pass);
                let gp = e.word_at(cx, counter, pc)?;
                let dev = e.c_u32(SCOPE_DEVICE);
                let relaxed = e.c_u32(0);
                let t =
                    e.b.atomic_i_add(u, None, gp, dev, relaxed, one)
                        .map_err(be)?;
                let t = e.b.bitcast(ity, None, t).map_err(be)?;
                let p = e.shared_at(slot, zero)?;
                e.store(p, t)
            })?;
            e.barrier()?;
            let p = e.shared_at(slot, zero)?;
            let t = e.load(ity, p)?;
            let t = e.b.bitcast(u, None, t).map_err(be)?;
            let mine = e.ult(t, tiles)?;
            e.if_then(mine, |e| per_tile(e, t))?;
            // Every invocation has read the slot before it is claimed into again.
            e.barrier()
        })
    }

    /// Status word `t·256 + d` of a lookback buffer, stored atomically.
    fn status_store(&mut self, cx: &Cx, buf: u32, t: Word, d: Word, w: Word) -> R<()> {
        let c256 = self.c_u32(256);
        let at = self.umul(t, c256)?;
        let at = self.uadd(at, d)?;
        let p = self.word_at(cx, buf, at)?;
        let dev = self.c_u32(SCOPE_DEVICE);
        let relaxed = self.c_u32(0);
        // A store, not `publish_word`'s exchange: with 256 words a tile, exchanges
        // made the one-kernel pass slower on the H200 (session 40: 2^24 f32 keys
        // 1644 → 1716 µs, 2^20 159 → 161).
        self.b.atomic_store(p, dev, relaxed, w).map_err(be)
    }

    /// Tile `t`'s count `a` of digit `d` published: as the inclusive count (flag 2)
    /// for tile 0, else as the tile's own (flag 1); the digit's lookback starts.
    fn lookback_publish(&mut self, cx: &Cx, lb: &Lookback, t: Word, d: Word, a: Word) -> R<()> {
        let u = self.u32_t;
        let bt = self.bool_t;
        let ity = self.ty(ElemType::I32);
        let zero = self.c_u32(0);
        let first = self.b.i_equal(bt, None, t, zero).map_err(be)?;
        let f1 = self.c_u32(1 << 30);
        let f2 = self.c_u32(2 << 30);
        let flag = self.b.select(u, None, first, f2, f1).map_err(be)?;
        let au = self.b.bitcast(u, None, a).map_err(be)?;
        let w = self.b.bitwise_or(u, None, au, flag).map_err(be)?;
        self.status_store(cx, lb.status, t, d, w)?;
        let z = self.scalar(Scalar::I32(0));
        let p = self.shared_at(lb.acc, d)?;
        self.store(p, z)?;
        let one = self.c_u32(1);
        let done = self.b.select(u, None, first, one, zero).map_err(be)?;
        let done = self.b.bitcast(ity, None, done).map_err(be)?;
        let p = self.shared_at(lb.done, d)?;
        self.store(p, done)?;
        // The first tile to look at: the one before (none for tile 0).
        let before = self.b.i_sub(u, None, t, one).map_err(be)?;
        let before = self.b.select(u, None, first, zero, before).map_err(be)?;
        let before = self.b.bitcast(ity, None, before).map_err(be)?;
        let p = self.shared_at(lb.at, d)?;
        self.store(p, before)
    }

    /// The decoupled lookback of tile `t`: each digit walks back on its own from
    /// the tile before, adding each tile's published count, until an inclusive one;
    /// a digit whose tile stays unpublished for `polls` polls stops there. Then, if
    /// any stopped, the workgroup counts the nearest such tile from its keys (the
    /// decoupled fallback) for the digits stopped at it, and the walks go on; so no
    /// tile waits on one that has not started. A digit not done at the end (a loop
    /// the device cut short) raises the kernel's error bit.
    fn lookback_digits(
        &mut self,
        cx: &Cx,
        lb: &Lookback,
        t: Word,
        tile: Word,
        shift: Word,
    ) -> R<()> {
        let it = ElemType::I32;
        let ity = self.ty(it);
        let u = self.u32_t;
        let bt = self.bool_t;
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let looking = self.local(bt);
        let walking = self.local(bt);
        let spins = self.local(u);
        let word = self.local(u);
        let not_first = self.b.i_not_equal(bt, None, t, zero).map_err(be)?;
        self.store(looking, not_first)?;
        let c1 = self.c_u32(1);
        let open_flag = self.shared_at(lb.flags, zero)?;
        let nearest = self.shared_at(lb.flags, c1)?;
        let mask30 = self.c_u32((1 << 30) - 1);
        let c30 = self.c_u32(30);
        let limit = self.c_u32(lb.polls.max(1));
        self.while_loop(
            |e| e.load(bt, looking),
            |e| {
                let z = e.scalar(Scalar::I32(0));
                let first = e.b.i_equal(bt, None, cx.lid, zero).map_err(be)?;
                e.if_then(first, |e| {
                    e.store(open_flag, z)?;
                    e.store(nearest, z)
                })?;
                e.barrier()?;
                e.wg_each(cx, 256, &|e, d| {
                    let pd = e.shared_at(lb.done, d)?;
                    let pa = e.shared_at(lb.at, d)?;
                    let pacc = e.shared_at(lb.acc, d)?;
                    let dn = e.load(ity, pd)?;
                    let z = e.scalar(Scalar::I32(0));
                    let open = e.b.i_equal(bt, None, dn, z).map_err(be)?;
                    e.store(walking, open)?;
                    e.while_loop(
                        |e| e.load(bt, walking),
                        |e| {
                            let k = e.load(ity, pa)?;
                            let k = e.b.bitcast(u, None, k).map_err(be)?;
                            // Poll tile k's word for this digit, `polls` times at most.
                            let c256 = e.c_u32(256);
                            let at = e.umul(k, c256)?;
                            let at = e.uadd(at, d)?;
                            let gp = e.word_at(cx, lb.status, at)?;
                            let dev = e.c_u32(SCOPE_DEVICE);
                            let relaxed = e.c_u32(0);
                            e.store(spins, zero)?;
                            e.while_loop(
                                |e| {
                                    let w =
                                        e.b.atomic_load(u, None, gp, dev, relaxed).map_err(be)?;
                                    e.store(word, w)?;
                                    let f = e.b.shift_right_logical(u, None, w, c30).map_err(be)?;
                                    let unset = e.b.i_equal(bt, None, f, zero).map_err(be)?;
                                    let sv = e.load(u, spins)?;
                                    let more = e.ult(sv, limit)?;
                                    e.b.logical_and(bt, None, unset, more).map_err(be)
                                },
                                |e| {
                                    let sv = e.load(u, spins)?;
                                    let ns = e.uadd(sv, one)?;
                                    e.store(spins, ns)
                                },
                                |_| Ok(()),
                            )?;
                            let w = e.load(u, word)?;
                            let f = e.b.shift_right_logical(u, None, w, c30).map_err(be)?;
                            let v = e.b.bitwise_and(u, None, w, mask30).map_err(be)?;
                            let unset = e.b.i_equal(bt, None, f, zero).map_err(be)?;
                            let fls = e.b.constant_false(bt);
                            e.if_else(
                                unset,
                                |e| {
                                    // Stopped at tile k: the nearest such is counted.
                                    e.store(walking, fls)?;
                                    let scope = e.c_u32(SCOPE_WORKGROUP);
                                    let relaxed = e.c_u32(0);
                                    let o = e.scalar(Scalar::I32(1));
                                    e.b.atomic_or(ity, None, open_flag, scope, relaxed, o)
                                        .map_err(be)?;
                                    let k1 = e.uadd(k, one)?;
                                    let k1 = e.b.bitcast(ity, None, k1).map_err(be)?;
                                    e.b.atomic_s_max(ity, None, nearest, scope, relaxed, k1)
                                        .map_err(be)?;
                                    Ok(())
                                },
                                |e| {
                                    let a = e.load(ity, pacc)?;
                                    let vi = e.b.bitcast(ity, None, v).map_err(be)?;
                                    let na = e.b.i_add(ity, None, a, vi).map_err(be)?;
                                    e.store(pacc, na)?;
                                    let two = e.c_u32(2);
                                    let incl = e.b.i_equal(bt, None, f, two).map_err(be)?;
                                    let at0 = e.b.i_equal(bt, None, k, zero).map_err(be)?;
                                    let fin = e.b.logical_or(bt, None, incl, at0).map_err(be)?;
                                    e.if_else(
                                        fin,
                                        |e| {
                                            let o = e.scalar(Scalar::I32(1));
                                            e.store(pd, o)?;
                                            e.store(walking, fls)
                                        },
                                        |e| {
                                            let km = e.b.i_sub(u, None, k, one).map_err(be)?;
                                            let km = e.b.bitcast(ity, None, km).map_err(be)?;
                                            e.store(pa, km)
                                        },
                                    )
                                },
                            )
                        },
                        |_| Ok(()),
                    )
                })?;
                e.barrier()?;
                let fl = e.load(ity, open_flag)?;
                let near = e.load(ity, nearest)?;
                e.barrier()?;
                let z = e.scalar(Scalar::I32(0));
                let any = e.b.i_not_equal(bt, None, fl, z).map_err(be)?;
                e.if_then(any, |e| {
                    let near = e.b.bitcast(u, None, near).map_err(be)?;
                    let k = e.b.i_sub(u, None, near, one).map_err(be)?;
                    e.count_tile(cx, lb, k, tile, shift)
                })?;
                e.store(looking, any)
            },
            |_| Ok(()),
        )?;
        // Every digit is done now, unless the device cut a loop short.
        self.wg_each(cx, 256, &|e, d| {
            let p = e.shared_at(lb.done, d)?;
            let dn = e.load(ity, p)?;
            let z = e.scalar(Scalar::I32(0));
            let open = e.b.i_equal(bt, None, dn, z).map_err(be)?;
            let bad = e.b.logical_and(bt, None, open, not_first).map_err(be)?;
            e.raise(cx, Some(lb.wrong), bad)
        })?;
        self.barrier()
    }

    /// The decoupled fallback: tile `k`'s digit counts from its keys, added to the
    /// lookback of every open digit stopped at tile `k`, which then goes on from the
    /// tile before (or is done, at tile 0).
    fn count_tile(&mut self, cx: &Cx, lb: &Lookback, k: Word, tile: Word, shift: Word) -> R<()> {
        let it = ElemType::I32;
        let ity = self.ty(it);
        let u = self.u32_t;
        let bt = self.bool_t;
        self.wg_each(cx, 256, &|e, d| {
            let p = e.shared_at(lb.counts, d)?;
            let z = e.scalar(Scalar::I32(0));
            e.store(p, z)
        })?;
        self.barrier()?;
        let start = self.umul(k, tile)?;
        let left = self.b.i_sub(u, None, cx.n, start).map_err(be)?;
        let len = self.umin(tile, left)?;
        let jvar = self.local(u);
        self.count_loop(jvar, cx.lid, len, self.wg_size, |e, j| {
            let i = e.uadd(start, j)?;
            let (_, d) = e.radix_key(cx, lb.keys, lb.wide, i, shift)?;
            let p = e.shared_at(lb.counts, d)?;
            e.shared_increment(p)
        })?;
        self.barrier()?;
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let ki = self.b.bitcast(ity, None, k).map_err(be)?;
        let at0 = self.b.i_equal(bt, None, k, zero).map_err(be)?;
        self.wg_each(cx, 256, &|e, d| {
            let pd = e.shared_at(lb.done, d)?;
            let pa = e.shared_at(lb.at, d)?;
            let dn = e.load(ity, pd)?;
            let z = e.scalar(Scalar::I32(0));
            let open = e.b.i_equal(bt, None, dn, z).map_err(be)?;
            let a = e.load(ity, pa)?;
            let here = e.b.i_equal(bt, None, a, ki).map_err(be)?;
            let mine = e.b.logical_and(bt, None, open, here).map_err(be)?;
            e.if_then(mine, |e| {
                let p = e.shared_at(lb.counts, d)?;
                let c = e.load(ity, p)?;
                let pacc = e.shared_at(lb.acc, d)?;
                let acc = e.load(ity, pacc)?;
                let na = e.b.i_add(ity, None, acc, c).map_err(be)?;
                e.store(pacc, na)?;
                e.if_else(
                    at0,
                    |e| {
                        let o = e.scalar(Scalar::I32(1));
                        e.store(pd, o)
                    },
                    |e| {
                        let km = e.b.i_sub(u, None, k, one).map_err(be)?;
                        let km = e.b.bitcast(ity, None, km).map_err(be)?;
                        e.store(pa, km)
                    },
                )
            })
        })?;
        self.barrier()
    }
}

/// A radix pass's lookback state: its bindings, and workgroup arrays per digit.
struct Lookback {
    /// Polls of an unpublished word before its tile is counted here.
    polls: u32,
    status: u32,
    next: u32,
    keys: u32,
    wide: bool,
    /// The count of the digit in the tiles looked back through so far.
    acc: Word,
    /// 1 once an inclusive count was added.
    done: Word,
    /// The tile the digit's walk looks at next.
    at: Word,
    /// Two words: whether a digit stopped at an unpublished tile, and the nearest
    /// such tile plus one; the first is also the claimed tile's number between
    /// claims.
    flags: Word,
    /// The fallback's counts of one tile.
    counts: Word,
    wrong: u32,
}
