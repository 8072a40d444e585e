//! The chained scan's tile status: how a tile publishes its aggregate and inclusive
//! prefix, and how a subgroup looks back over the earlier tiles' status (decoupled
//! lookback, with the bounded spin and its fallback).

use super::*;

/// The most windows one poll of a workgroup-wide lookback reads (one per subgroup,
/// at most the subgroup size).
const WIDE_WINDOWS: u32 = 128;

/// Workgroup memory of a workgroup-wide lookback (`Emitter::look_back_wide`).
#[derive(Clone, Copy)]
pub(super) struct WideLookback {
    /// The nearest tile of the next poll.
    j: Word,
    /// Nonzero while the lookback goes on.
    go: Word,
    /// Per window: its first lane with an inclusive prefix, its first lane with
    /// nothing published (each the subgroup size where none), and the fold of its
    /// values before the nearer of them (through the inclusive prefix, where that
    /// is nearer).
    first_inc: Word,
    first_unset: Word,
    sums: Word,
}

impl Emitter {
    /// Workgroup memory for a workgroup-wide lookback of values of type `t`.
    pub(super) fn wide_lookback_vars(&mut self, t: ElemType) -> WideLookback {
        let u = self.u32_t;
        let tt = self.ty(t);
        let n = self.c_u32(WIDE_WINDOWS);
        let pu = self.ptr(StorageClass::Workgroup, u);
        let au = self.b.type_array(u, n);
        let pau = self.ptr(StorageClass::Workgroup, au);
        let at = self.b.type_array(tt, n);
        let pat = self.ptr(StorageClass::Workgroup, at);
        WideLookback {
            j: self.workgroup_var(pu),
            go: self.workgroup_var(pu),
            first_inc: self.workgroup_var(pau),
            first_unset: self.workgroup_var(pau),
            sums: self.workgroup_var(pat),
        }
    }

    /// A tile's publication and lookback with the whole workgroup (every invocation
    /// calls it, in uniform control flow): subgroup 0 publishes the aggregate (or,
    /// for tile 0, the inclusive prefix); then each poll has subgroup `s` (for
    /// `s < min(subgroups, subgroup size)`) read the window of tiles
    /// `j - s·W - l` (`W` the subgroup size, `l` its lane) and summarise it in
    /// workgroup memory, and subgroup 0 folds the summaries in order: up to the
    /// first window with an inclusive prefix or an unpublished tile. The prefix is
    /// found where an inclusive prefix comes before any unpublished tile; else the
    /// next poll starts at the unpublished tile (and spins there, up to `limit`
    /// polls, then reduces that tile's input itself, the decoupled fallback). One
    /// poll reaches as far back as `min(subgroups, W)` of a subgroup's polls.
    /// Subgroup 0 ends with the exclusive prefix in `prefix` and publishes the
    /// inclusive one.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn look_back_wide(
        &mut self,
        cx: &Cx,
        op: BinOp,
        expr: &KExpr,
        state: [u32; 4],
        agg: Word,
        tile: Word,
        vars: [Word; 5],
        blk: Word,
        w: WideLookback,
    ) -> R<()> {
        let [flags, aggs, incls, _] = state;
        let [_, spins, prefix, fb, _] = vars;
        let t = expr.elem();
        let tt = self.ty(t);
        let (u, bt) = (self.u32_t, self.bool_t);
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let two = self.c_u32(2);
        let id = self.identity(op, t);
        let sid = self.load_builtin_cx(BuiltIn::SubgroupId)?;
        let nsg = self.load_builtin_cx(BuiltIn::NumSubgroups)?;
        let sgs = self.load_builtin_cx(BuiltIn::SubgroupSize)?;
        let lane = self.load_builtin_cx(BuiltIn::SubgroupLocalInvocationId)?;
        let sg0 = self.b.i_equal(bt, None, sid, zero).map_err(be)?;
        let pu = self.ptr(StorageClass::Workgroup, u);
        let windows = self.umin(nsg, sgs)?;
        let span = self.umul(windows, sgs)?;
        self.publish_around(cx, op, t, state, agg, tile, prefix, |e, jm| {
            e.store(spins, zero)?;
            let first = e.b.i_equal(bt, None, cx.lid, zero).map_err(be)?;
            e.if_then(first, |e| {
                e.store(w.j, jm)?;
                e.store(w.go, one)
            })?;
            let limit = e.spin;
            e.while_loop(
                |e| {
                    e.barrier()?;
                    let g = e.load(u, w.go)?;
                    e.ult(zero, g)
                },
                |e| {
                    let jv = e.load(u, w.j)?;
                    // This subgroup's window, and its summary.
                    let mine = e.ult(sid, windows)?;
                    let g = e.umul(sid, sgs)?;
                    let g = e.uadd(g, lane)?;
                    let in_tiles = e.b.u_less_than_equal(bt, None, g, jv).map_err(be)?;
                    let valid = e.b.logical_and(bt, None, mine, in_tiles).map_err(be)?;
                    let tj = e.b.i_sub(u, None, jv, g).map_err(be)?;
                    let (f, val) = e.read_status(cx, op, t, [flags, aggs, incls], valid, tj)?;
                    let is_inc = e.b.i_equal(bt, None, f, two).map_err(be)?;
                    let is_unset = e.b.i_equal(bt, None, f, zero).map_err(be)?;
                    let fi = e.first_lane(is_inc)?;
                    let fu = e.first_lane(is_unset)?;
                    let inc_first = e.ult(fi, fu)?;
                    let fi1 = e.uadd(fi, one)?;
                    let upto = e.b.select(u, None, inc_first, fi1, fu).map_err(be)?;
                    let take = e.ult(lane, upto)?;
                    let v = e.load(tt, val)?;
                    let c = e.b.select(tt, None, take, v, id).map_err(be)?;
                    let sum = e.group(op, t, GroupOperation::Reduce, c)?;
                    let el = e.elect()?;
                    let wr = e.b.logical_and(bt, None, el, mine).map_err(be)?;
                    e.if_then(wr, |e| {
                        let p = e.b.access_chain(pu, None, w.first_inc, [sid]).map_err(be)?;
                        e.store(p, fi)?;
                        let p =
                            e.b.access_chain(pu, None, w.first_unset, [sid])
                                .map_err(be)?;
                        e.store(p, fu)?;
                        let p = e.shared_ptr(w.sums, t, sid)?;
                        e.store(p, sum)
                    })?;
                    e.barrier()?;
                    e.if_then(sg0, |e| {
                        e.wide_fold(cx, op, expr, jv, [spins, prefix, fb], blk, limit, span, w)
                    })
                },
                |_| Ok(()),
            )
        })
    }

    /// Subgroup 0's part of a workgroup-wide poll (`look_back_wide`): lane `s` takes
    /// window `s`'s summary; the windows up to the first that stops (an inclusive
    /// prefix or an unpublished tile) are folded into `prefix`, and the next poll's
    /// tile or the end is written for the workgroup.
    #[allow(clippy::too_many_arguments)]
    fn wide_fold(
        &mut self,
        cx: &Cx,
        op: BinOp,
        expr: &KExpr,
        jv: Word,
        vars: [Word; 3],
        blk: Word,
        limit: Word,
        span: Word,
        w: WideLookback,
    ) -> R<()> {
        let [spins, prefix, fb] = vars;
        let t = expr.elem();
        let tt = self.ty(t);
        let (u, bt) = (self.u32_t, self.bool_t);
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let id = self.identity(op, t);
        let nsg = self.load_builtin_cx(BuiltIn::NumSubgroups)?;
        let sgs = self.load_builtin_cx(BuiltIn::SubgroupSize)?;
        let lane = self.load_builtin_cx(BuiltIn::SubgroupLocalInvocationId)?;
        let pu = self.ptr(StorageClass::Workgroup, u);
        let windows = self.umin(nsg, sgs)?;
        let ins = self.ult(lane, windows)?;
        let (fi, fu, sum) = (self.local(u), self.local(u), self.local(tt));
        self.store(fi, sgs)?;
        self.store(fu, sgs)?;
        self.store(sum, id)?;
        self.if_then(ins, |e| {
            let p =
                e.b.access_chain(pu, None, w.first_inc, [lane])
                    .map_err(be)?;
            let v = e.load(u, p)?;
            e.store(fi, v)?;
            let p =
                e.b.access_chain(pu, None, w.first_unset, [lane])
                    .map_err(be)?;
            let v = e.load(u, p)?;
            e.store(fu, v)?;
            let p = e.shared_ptr(w.sums, t, lane)?;
            let v = e.load(tt, p)?;
            e.store(sum, v)
        })?;
        let fiv = self.load(u, fi)?;
        let fuv = self.load(u, fu)?;
        let a = self.ult(fiv, sgs)?;
        let b = self.ult(fuv, sgs)?;
        let stops = self.b.logical_or(bt, None, a, b).map_err(be)?;
        let first_stop = self.first_lane(stops)?;
        let take = self
            .b
            .u_less_than_equal(bt, None, lane, first_stop)
            .map_err(be)?;
        let sv = self.load(tt, sum)?;
        let c = self.b.select(tt, None, take, sv, id).map_err(be)?;
        let tot = self.group(op, t, GroupOperation::Reduce, c)?;
        let pv = self.load(tt, prefix)?;
        let np = self.binop(op, t, tot, pv)?;
        self.store(prefix, np)?;
        let el = self.elect()?;
        let set =
            |e: &mut Self, var: Word, v: Word| -> R<()> { e.if_then(el, |e| e.store(var, v)) };
        self.spend_trips(cx, one, |e| set(e, w.go, zero))?;
        let stopped = self.ult(first_stop, sgs)?;
        self.if_else(
            stopped,
            |e| {
                // The stopping window's first inclusive prefix and unpublished tile.
                let p =
                    e.b.access_chain(pu, None, w.first_inc, [first_stop])
                        .map_err(be)?;
                let si = e.load(u, p)?;
                let p =
                    e.b.access_chain(pu, None, w.first_unset, [first_stop])
                        .map_err(be)?;
                let su = e.load(u, p)?;
                let done = e.ult(si, su)?;
                e.if_else(
                    done,
                    |e| set(e, w.go, zero),
                    |e| {
                        let at = e.umul(first_stop, sgs)?;
                        let at = e.uadd(at, su)?;
                        let moved = e.ult(zero, at)?;
                        e.if_else(
                            moved,
                            |e| {
                                e.store(spins, zero)?;
                                let nj = e.b.i_sub(u, None, jv, at).map_err(be)?;
                                set(e, w.j, nj)
                            },
                            |e| {
                                // Tile `jv` is unpublished: poll again, or reduce
                                // it here.
                                let s = e.load(u, spins)?;
                                let ns = e.uadd(s, one)?;
                                e.store(spins, ns)?;
                                let over = e.ult(limit, ns)?;
                                e.if_then(over, |e| {
                                    let tot = e.reduce_tile_input(cx, op, expr, jv, blk, fb)?;
                                    let pv = e.load(tt, prefix)?;
                                    let np = e.binop(op, t, tot, pv)?;
                                    e.store(prefix, np)?;
                                    e.store(spins, zero)?;
                                    let trips = e.tile_trips(blk)?;
                                    e.spend_trips(cx, trips, |e| set(e, w.go, zero))?;
                                    let at0 = e.b.i_equal(bt, None, jv, zero).map_err(be)?;
                                    e.if_else(
                                        at0,
                                        |e| set(e, w.go, zero),
                                        |e| {
                                            let nj = e.b.i_sub(u, None, jv, one).map_err(be)?;
                                            set(e, w.j, nj)
                                        },
                                    )
                                })
                            },
                        )
                    },
                )
            },
            |e| {
                // Every window held aggregates only: the next poll starts past them.
                let nj = e.b.i_sub(u, None, jv, span).map_err(be)?;
                set(e, w.j, nj)
            },
        )
    }

    /// A subgroup's part in a tile's publication: the aggregate (flag 1) or, for
    /// tile 0, the inclusive prefix (flag 2); then, past tile 0, the lookback into
    /// `prefix` and the inclusive prefix. Only subgroup 0 publishes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn look_back(
        &mut self,
        cx: &Cx,
        op: BinOp,
        expr: &KExpr,
        state: [u32; 4],
        agg: Word,
        tile: Word,
        vars: [Word; 5],
        blk: Word,
    ) -> R<()> {
        let [flags, aggs, incls, _] = state;
        let [j, spins, prefix, _, looking] = vars;
        let bt = self.bool_t;
        let zero = self.c_u32(0);
        self.publish_around(cx, op, expr.elem(), state, agg, tile, prefix, |e, jm| {
            e.store(j, jm)?;
            e.store(spins, zero)?;
            let tru = e.b.constant_true(bt);
            e.store(looking, tru)?;
            let limit = e.spin;
            e.while_loop(
                |e| e.load(bt, looking),
                |e| e.lookback_step(cx, op, expr, [flags, aggs, incls], vars, blk, limit),
                |_| Ok(()),
            )
        })
    }

    /// Subgroup 0's publications around a tile's lookback: tile 0 publishes its
    /// aggregate as its inclusive prefix; any other publishes its aggregate, looks
    /// back (`look`, given the tile before it, leaves the exclusive prefix in
    /// `prefix`, which starts as identity) and publishes its inclusive prefix.
    #[allow(clippy::too_many_arguments)]
    fn publish_around(
        &mut self,
        cx: &Cx,
        op: BinOp,
        t: ElemType,
        state: [u32; 4],
        agg: Word,
        tile: Word,
        prefix: Word,
        look: impl FnOnce(&mut Self, Word) -> R<()>,
    ) -> R<()> {
        let [flags, aggs, incls, _] = state;
        let tt = self.ty(t);
        let (u, bt) = (self.u32_t, self.bool_t);
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let id = self.identity(op, t);
        let sid = self.load_builtin_cx(BuiltIn::SubgroupId)?;
        let sg0 = self.b.i_equal(bt, None, sid, zero).map_err(be)?;
        let is0 = self.b.i_equal(bt, None, tile, zero).map_err(be)?;
        self.store(prefix, id)?;
        self.if_else(
            is0,
            |e| e.publish(cx, sg0, [flags, aggs, incls], zero, agg, t, true),
            |e| {
                e.publish(cx, sg0, [flags, aggs, incls], tile, agg, t, false)?;
                let jm = e.b.i_sub(u, None, tile, one).map_err(be)?;
                look(e, jm)?;
                let pv = e.load(tt, prefix)?;
                let inc = e.binop(op, t, pv, agg)?;
                e.publish(cx, sg0, [flags, aggs, incls], tile, inc, t, true)
            },
        )
    }

    /// A lookback subgroup's polls while the tile is loaded and scanned: from the
    /// tile before this one back, as in [`Self::look_back`], until the prefix is
    /// found or the `data_sgs` data subgroups have all counted themselves `ready`
    /// (then [`Self::look_back_resumed`] goes on from where this stopped).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn look_back_early(
        &mut self,
        cx: &Cx,
        op: BinOp,
        expr: &KExpr,
        state: [u32; 4],
        tile: Word,
        vars: [Word; 5],
        blk: Word,
        ready: Word,
        data_sgs: Word,
    ) -> R<()> {
        let [flags, aggs, incls, _] = state;
        let [j, spins, prefix, _, looking] = vars;
        let t = expr.elem();
        let (u, bt) = (self.u32_t, self.bool_t);
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let id = self.identity(op, t);
        self.store(prefix, id)?;
        let past0 = self.ult(zero, tile)?;
        self.store(looking, past0)?;
        let jm = self.b.i_sub(u, None, tile, one).map_err(be)?;
        self.store(j, jm)?;
        self.store(spins, zero)?;
        let limit = self.spin;
        self.uses_ballot = true;
        self.while_loop(
            |e| {
                let lk = e.load(bt, looking)?;
                // One lane's count for the whole subgroup, so that it leaves the
                // loop as one.
                let wgs = e.c_u32(SCOPE_WORKGROUP);
                let relaxed = e.c_u32(0);
                let r = e.b.atomic_load(u, None, ready, wgs, relaxed).map_err(be)?;
                let sg = e.c_u32(SCOPE_SUBGROUP);
                let r =
                    e.b.group_non_uniform_broadcast_first(u, None, sg, r)
                        .map_err(be)?;
                let waiting = e.ult(r, data_sgs)?;
                e.b.logical_and(bt, None, lk, waiting).map_err(be)
            },
            |e| e.lookback_step(cx, op, expr, [flags, aggs, incls], vars, blk, limit),
            |_| Ok(()),
        )
    }

    /// The lookback subgroup's publication once the tile's aggregate `agg` is known:
    /// the inclusive prefix at once where the early polls found the prefix, else the
    /// aggregate, then the rest of the lookback and the inclusive prefix.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn look_back_resumed(
        &mut self,
        cx: &Cx,
        op: BinOp,
        expr: &KExpr,
        state: [u32; 4],
        agg: Word,
        tile: Word,
        vars: [Word; 5],
        blk: Word,
    ) -> R<()> {
        let [flags, aggs, incls, _] = state;
        let [_, _, prefix, _, looking] = vars;
        let t = expr.elem();
        let tt = self.ty(t);
        let bt = self.bool_t;
        let me = self.b.constant_true(bt);
        let lk = self.load(bt, looking)?;
        self.if_then(lk, |e| {
            e.publish(cx, me, [flags, aggs, incls], tile, agg, t, false)?;
            let limit = e.spin;
            e.while_loop(
                |e| e.load(bt, looking),
                |e| e.lookback_step(cx, op, expr, [flags, aggs, incls], vars, blk, limit),
                |_| Ok(()),
            )
        })?;
        let pv = self.load(tt, prefix)?;
        let inc = self.binop(op, t, pv, agg)?;
        self.publish(cx, me, [flags, aggs, incls], tile, inc, t, true)
    }

    /// One elected lane of subgroup 0 publishes a tile's aggregate or (with
    /// `inclusive`) its inclusive prefix `v`, as its `ScanStatus` says: the value
    /// words, then the flag with release semantics (so the words are visible before
    /// the flag), or one 64-bit atomic store.
    #[allow(clippy::too_many_arguments)]
    fn publish(
        &mut self,
        cx: &Cx,
        sg0: Word,
        bindings: [u32; 3],
        tile: Word,
        v: Word,
        t: ElemType,
        inclusive: bool,
    ) -> R<()> {
        let [flags, aggs, incls] = bindings;
        let el = self.elect()?;
        let bt = self.bool_t;
        let me = self.b.logical_and(bt, None, sg0, el).map_err(be)?;
        self.if_then(me, |e| {
            let relaxed = e.c_u32(0);
            match cx.status_views {
                StatusViews::Packed(view) => {
                    let u64t = e.b.type_int(64, 0);
                    // (value bits << 32) | flag, in one atomic store.
                    let flag = e.c_u32(if inclusive { 2 } else { 1 });
                    let u = e.u32_t;
                    let bits = e.b.bitcast(u, None, v).map_err(be)?;
                    let hi = e.b.u_convert(u64t, None, bits).map_err(be)?;
                    let c32 = e.constant(u64t, 32, true);
                    let hi = e.b.shift_left_logical(u64t, None, hi, c32).map_err(be)?;
                    let lo = e.b.u_convert(u64t, None, flag).map_err(be)?;
                    let w = e.b.bitwise_or(u64t, None, hi, lo).map_err(be)?;
                    let p = e.packed_ptr(view, tile)?;
                    e.publish_word(u64t, p, relaxed, w)
                }
                StatusViews::Wide {
                    aggregates,
                    inclusive: incl_view,
                } => {
                    let u64t = e.b.type_int(64, 0);
                    // The value's bits exclusive-or the unpublished pattern: never
                    // zero for a value that can be told from unpublished.
                    let bits = e.b.bitcast(u64t, None, v).map_err(be)?;
                    let pat = e.constant(u64t, scan_unpublished(t), true);
                    let w = e.b.bitwise_xor(u64t, None, bits, pat).map_err(be)?;
                    let view = if inclusive { incl_view } else { aggregates };
                    let p = e.packed_ptr(view, tile)?;
                    e.publish_word(u64t, p, relaxed, w)
                }
                StatusViews::Flagged => {
                    let values = if inclusive { incls } else { aggs };
                    let flag = e.c_u32(if inclusive { 2 } else { 1 });
                    e.store_words(cx, values, tile, v, t)?;
                    let release = e.c_u32(SEM_RELEASE_UNIFORM);
                    let fp = e.word_at(cx, flags, tile)?;
                    let u = e.u32_t;
                    e.publish_word(u, fp, release, flag)
                }
            }
        })
    }

    /// Stores `w` (of type `ty`) at `p`, in device scope with semantics `sem`, for
    /// other workgroups to poll: an atomic exchange whose old value is dropped, not an
    /// atomic store. On NVIDIA's H200 others see a relaxed atomic store late (a chained
    /// scan then polls twice as often), an exchange at once: `⌈\` of 2^28 items 720 →
    /// 599 µs (session 40; a CUDA model of the kernel showed the same, 532 → 682 µs
    /// with relaxed stores).
    pub(super) fn publish_word(&mut self, ty: Word, p: Word, sem: Word, w: Word) -> R<()> {
        let dev = self.c_u32(SCOPE_DEVICE);
        self.b
            .atomic_exchange(ty, None, p, dev, sem, w)
            .map_err(be)?;
        Ok(())
    }

    /// The packed status word of `tile`.
    fn packed_ptr(&mut self, view: Word, tile: Word) -> R<Word> {
        let u64t = self.b.type_int(64, 0);
        let p = self.ptr(StorageClass::StorageBuffer, u64t);
        let z = self.c_u32(0);
        self.b.access_chain(p, None, view, [z, tile]).map_err(be)
    }

    /// Stores a tile value as two u32 words (`2·tile`, `2·tile+1`) with atomics, so that
    /// no compiler or memory system can move it past the flag that publishes it.
    pub(super) fn store_words(
        &mut self,
        cx: &Cx,
        binding: u32,
        tile: Word,
        v: Word,
        t: ElemType,
    ) -> R<()> {
        let (u, relaxed) = (self.u32_t, self.c_u32(0));
        let (lo, hi) = match t {
            ElemType::I64 | ElemType::F64 => {
                self.uses_i64 = true;
                let u64t = self.b.type_int(64, 0);
                let bits = self.b.bitcast(u64t, None, v).map_err(be)?;
                let lo = self.b.u_convert(u, None, bits).map_err(be)?;
                let c32 = self.constant(u64t, 32, true);
                let sh = self
                    .b
                    .shift_right_logical(u64t, None, bits, c32)
                    .map_err(be)?;
                let hi = self.b.u_convert(u, None, sh).map_err(be)?;
                (lo, hi)
            }
            _ => (self.b.bitcast(u, None, v).map_err(be)?, self.c_u32(0)),
        };
        for (k, w) in [lo, hi].into_iter().enumerate() {
            let ptr = self.word_ptr(cx, binding, tile, k as u32)?;
            self.publish_word(u, ptr, relaxed, w)?;
        }
        Ok(())
    }

    /// Word `k` of tile `tile`'s value in a words binding.
    pub(super) fn word_ptr(&mut self, cx: &Cx, binding: u32, tile: Word, k: u32) -> R<Word> {
        let two = self.c_u32(2);
        let i0 = self.umul(tile, two)?;
        let kc = self.c_u32(k);
        let i = self.uadd(i0, kc)?;
        self.word_at(cx, binding, i)
    }

    /// Reads a tile value written by [`Self::store_words`].
    pub(super) fn load_words(&mut self, cx: &Cx, binding: u32, tile: Word, t: ElemType) -> R<Word> {
        let (u, dev, relaxed) = (self.u32_t, self.c_u32(SCOPE_DEVICE), self.c_u32(0));
        let mut w = [0; 2];
        for (k, slot) in w.iter_mut().enumerate() {
            let ptr = self.word_ptr(cx, binding, tile, k as u32)?;
            *slot = self.b.atomic_load(u, None, ptr, dev, relaxed).map_err(be)?;
        }
        let tt = self.ty(t);
        match t {
            ElemType::I64 | ElemType::F64 => {
                self.uses_i64 = true;
                let u64t = self.b.type_int(64, 0);
                let lo = self.b.u_convert(u64t, None, w[0]).map_err(be)?;
                let hi = self.b.u_convert(u64t, None, w[1]).map_err(be)?;
                let c32 = self.constant(u64t, 32, true);
                let hs = self.b.shift_left_logical(u64t, None, hi, c32).map_err(be)?;
                let bits = self.b.bitwise_or(u64t, None, hs, lo).map_err(be)?;
                self.b.bitcast(tt, None, bits).map_err(be)
            }
            _ => self.b.bitcast(tt, None, w[0]).map_err(be),
        }
    }

    /// One step of a subgroup's lookback from tile `j`, a subgroup-width window at a
    /// time: lane `l` reads tile `j-l`'s flag. If some tile in the window has its
    /// inclusive prefix and no nearer tile is unpublished, the nearer aggregates and that
    /// prefix complete the lookback; otherwise the aggregates before the first
    /// unpublished tile are folded in and the window moves back to it. A tile still
    /// unpublished after `limit` polls is reduced from the input by the subgroup (the
    /// decoupled fallback). Lanes past tile 0 count as an inclusive prefix of identity.
    #[allow(clippy::too_many_arguments)]
    fn lookback_step(
        &mut self,
        cx: &Cx,
        op: BinOp,
        expr: &KExpr,
        state: [u32; 3],
        vars: [Word; 5],
        blk: Word,
        limit: Word,
    ) -> R<()> {
        let [j, spins, prefix, fb, looking] = vars;
        let t = expr.elem();
        let tt = self.ty(t);
        let (u, bt) = (self.u32_t, self.bool_t);
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let two = self.c_u32(2);
        let id = self.identity(op, t);
        let fls = self.b.constant_false(bt);
        let lane = self.load_builtin_cx(BuiltIn::SubgroupLocalInvocationId)?;
        self.spend_trips(cx, one, |e| e.store(looking, fls))?;
        let jv = self.load(u, j)?;
        let valid = self.b.u_less_than_equal(bt, None, lane, jv).map_err(be)?;
        let tj = self.b.i_sub(u, None, jv, lane).map_err(be)?;
        let (f, val) = self.read_status(cx, op, t, state, valid, tj)?;
        let is_inc = self.b.i_equal(bt, None, f, two).map_err(be)?;
        let is_unset = self.b.i_equal(bt, None, f, zero).map_err(be)?;
        let first_inc = self.first_lane(is_inc)?;
        let first_unset = self.first_lane(is_unset)?;
        let fold_lanes = |e: &mut Self, upto_incl: Word, inclusive: bool| -> R<()> {
            let take = if inclusive {
                e.b.u_less_than_equal(bt, None, lane, upto_incl)
                    .map_err(be)?
            } else {
                e.ult(lane, upto_incl)?
            };
            let mine = e.load(tt, val)?;
            let c = e.b.select(tt, None, take, mine, id).map_err(be)?;
            let total = e.group(op, t, GroupOperation::Reduce, c)?;
            let pv = e.load(tt, prefix)?;
            let np = e.binop(op, t, total, pv)?;
            e.store(prefix, np)
        };
        let done = self.ult(first_inc, first_unset)?;
        self.if_else(
            done,
            |e| {
                fold_lanes(e, first_inc, true)?;
                e.store(looking, fls)
            },
            |e| {
                fold_lanes(e, first_unset, false)?;
                let moved = e.ult(zero, first_unset)?;
                e.if_else(
                    moved,
                    |e| {
                        let nj = e.b.i_sub(u, None, jv, first_unset).map_err(be)?;
                        e.store(j, nj)?;
                        e.store(spins, zero)
                    },
                    |e| {
                        // Tile j is unpublished: poll again, or reduce it here.
                        let sv = e.load(u, spins)?;
                        let ns = e.uadd(sv, one)?;
                        e.store(spins, ns)?;
                        let over = e.ult(limit, ns)?;
                        e.if_then(over, |e| {
                            let tot = e.reduce_tile_input(cx, op, expr, jv, blk, fb)?;
                            let pv = e.load(tt, prefix)?;
                            let np = e.binop(op, t, tot, pv)?;
                            e.store(prefix, np)?;
                            let trips = e.tile_trips(blk)?;
                            e.spend_trips(cx, trips, |e| e.store(looking, fls))?;
                            let at0 = e.b.i_equal(bt, None, jv, zero).map_err(be)?;
                            e.if_else(
                                at0,
                                |e| e.store(looking, fls),
                                |e| {
                                    let jm = e.b.i_sub(u, None, jv, one).map_err(be)?;
                                    e.store(j, jm)?;
                                    e.store(spins, zero)
                                },
                            )
                        })
                    },
                )
            },
        )
    }

    /// A lane's read of tile `tj`'s status where `valid`: its flag (loaded) and a
    /// variable holding its value. A lane not `valid` (past tile 0) reads as an
    /// inclusive prefix of identity.
    #[allow(clippy::too_many_arguments)]
    fn read_status(
        &mut self,
        cx: &Cx,
        op: BinOp,
        t: ElemType,
        state: [u32; 3],
        valid: Word,
        tj: Word,
    ) -> R<(Word, Word)> {
        let [flags, aggs, incls] = state;
        let tt = self.ty(t);
        let (u, bt) = (self.u32_t, self.bool_t);
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let two = self.c_u32(2);
        let dev = self.c_u32(SCOPE_DEVICE);
        let acquire = self.c_u32(SEM_ACQUIRE_UNIFORM);
        let id = self.identity(op, t);
        // This lane's flag and value (identity unless published).
        let fl = self.local(u);
        let val = self.local(tt);
        self.store(fl, two)?;
        self.store(val, id)?;
        self.if_then(valid, |e| {
            let relaxed = e.c_u32(0);
            match cx.status_views {
                StatusViews::Packed(view) => {
                    let u64t = e.b.type_int(64, 0);
                    // One load: the flag in the low half, the value in the high half.
                    let p = e.packed_ptr(view, tj)?;
                    let w = e.b.atomic_load(u64t, None, p, dev, relaxed).map_err(be)?;
                    let f = e.b.u_convert(u, None, w).map_err(be)?;
                    let c32 = e.constant(u64t, 32, true);
                    let hi = e.b.shift_right_logical(u64t, None, w, c32).map_err(be)?;
                    let hi = e.b.u_convert(u, None, hi).map_err(be)?;
                    let v = e.b.bitcast(tt, None, hi).map_err(be)?;
                    e.store(fl, f)?;
                    let any = e.ult(zero, f)?;
                    return e.if_then(any, |e| e.store(val, v));
                }
                StatusViews::Wide {
                    aggregates,
                    inclusive,
                } => {
                    let u64t = e.b.type_int(64, 0);
                    // Both words at once; the inclusive prefix wins.
                    let pi = e.packed_ptr(inclusive, tj)?;
                    let wi = e.b.atomic_load(u64t, None, pi, dev, relaxed).map_err(be)?;
                    let pa = e.packed_ptr(aggregates, tj)?;
                    let wa = e.b.atomic_load(u64t, None, pa, dev, relaxed).map_err(be)?;
                    let z = e.constant(u64t, 0, true);
                    let has_i = e.b.i_not_equal(bt, None, wi, z).map_err(be)?;
                    let has_a = e.b.i_not_equal(bt, None, wa, z).map_err(be)?;
                    let fa = e.b.select(u, None, has_a, one, zero).map_err(be)?;
                    let f = e.b.select(u, None, has_i, two, fa).map_err(be)?;
                    let w = e.b.select(u64t, None, has_i, wi, wa).map_err(be)?;
                    let pat = e.constant(u64t, scan_unpublished(t), true);
                    let bits = e.b.bitwise_xor(u64t, None, w, pat).map_err(be)?;
                    let v = e.b.bitcast(tt, None, bits).map_err(be)?;
                    e.store(fl, f)?;
                    let any = e.ult(zero, f)?;
                    return e.if_then(any, |e| e.store(val, v));
                }
                StatusViews::Flagged => {}
            }
            let fp = e.word_at(cx, flags, tj)?;
            let f = e.b.atomic_load(u, None, fp, dev, acquire).map_err(be)?;
            e.store(fl, f)?;
            let is2 = e.b.i_equal(bt, None, f, two).map_err(be)?;
            let is1 = e.b.i_equal(bt, None, f, one).map_err(be)?;
            e.if_then(is2, |e| {
                let v = e.load_words(cx, incls, tj, t)?;
                e.store(val, v)
            })?;
            e.if_then(is1, |e| {
                let v = e.load_words(cx, aggs, tj, t)?;
                e.store(val, v)
            })
        })?;
        Ok((self.load(u, fl)?, val))
    }

    /// The lowest lane of the subgroup where `pred` holds, or the subgroup size.
    pub(super) fn first_lane(&mut self, pred: Word) -> R<Word> {
        let u = self.u32_t;
        let v4 = self.b.type_vector(u, 4);
        let sg = self.c_u32(SCOPE_SUBGROUP);
        let zero = self.c_u32(0);
        self.uses_ballot = true;
        let sgs = self.load_builtin_cx(BuiltIn::SubgroupSize)?;
        let bal = self
            .b
            .group_non_uniform_ballot(v4, None, sg, pred)
            .map_err(be)?;
        let count = self
            .b
            .group_non_uniform_ballot_bit_count(u, None, sg, GroupOperation::Reduce, bal)
            .map_err(be)?;
        let lsb = self
            .b
            .group_non_uniform_ballot_find_lsb(u, None, sg, bal)
            .map_err(be)?;
        let any = self.ult(zero, count)?;
        self.b.select(u, None, any, lsb, sgs).map_err(be)
    }

    /// Where the device cuts loops off (`Kernel::lookback_budget`): adds `trips` to
    /// the lookback's count, and past the budget raises the kernel's device error
    /// and ends the lookback (`stop`), before the device could cut a loop short
    /// unseen. Nothing elsewhere.
    fn spend_trips(
        &mut self,
        cx: &Cx,
        trips: Word,
        stop: impl FnOnce(&mut Self) -> R<()>,
    ) -> R<()> {
        let (Some(budget), Some(var)) = (self.lookback_budget, self.lookback_trips) else {
            return Ok(());
        };
        let u = self.u32_t;
        let spent = self.load(u, var)?;
        let spent = self.uadd(spent, trips)?;
        self.store(var, spent)?;
        let most = self.c_u32(budget.trips);
        let over = self.ult(most, spent)?;
        self.raise(cx, Some(budget.bit), over)?;
        self.if_then(over, stop)
    }

    /// The loop trips of a subgroup's reduction of a tile of `blk` elements
    /// ([`Self::reduce_tile_input`]).
    fn tile_trips(&mut self, blk: Word) -> R<Word> {
        let u = self.u32_t;
        let sgs = self.load_builtin_cx(BuiltIn::SubgroupSize)?;
        let one = self.c_u32(1);
        let up = self.uadd(blk, sgs)?;
        let up = self.b.i_sub(u, None, up, one).map_err(be)?;
        self.b.u_div(u, None, up, sgs).map_err(be)
    }

    /// The decoupled fallback: tile `jv`'s input, `blk` elements, reduced by the
    /// subgroup (every lane of it takes part), with `fb` as each lane's variable.
    #[allow(clippy::too_many_arguments)]
    fn reduce_tile_input(
        &mut self,
        cx: &Cx,
        op: BinOp,
        expr: &KExpr,
        jv: Word,
        blk: Word,
        fb: Word,
    ) -> R<Word> {
        let t = expr.elem();
        let tt = self.ty(t);
        let u = self.u32_t;
        let id = self.identity(op, t);
        let lane = self.load_builtin_cx(BuiltIn::SubgroupLocalInvocationId)?;
        let sgs = self.load_builtin_cx(BuiltIn::SubgroupSize)?;
        let e = self;
        e.store(fb, id)?;
        let base = e.umul(jv, blk)?;
        let k = e.local(u);
        e.count_loop(k, lane, blk, sgs, |e, kv| {
            let i = e.uadd(base, kv)?;
            let inb = e.ult(i, cx.n)?;
            e.if_then(inb, |e| {
                let x = e.expr(cx, expr, Ix::flat(i))?;
                let a = e.load(tt, fb)?;
                let r = e.binop(op, t, a, x)?;
                e.store(fb, r)
            })
        })?;
        let mine = e.load(tt, fb)?;
        e.group(op, t, GroupOperation::Reduce, mine)
    }
}
