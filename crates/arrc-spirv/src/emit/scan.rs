//! The single-pass chained scan of a vector: tiles claimed in order, each publishing
//! its aggregate and inclusive prefix, with decoupled lookback and a bounded spin
//! whose fallback reduces the awaited tile itself.

use super::*;

impl Emitter {
    /// Single-pass inclusive scan: chained scan with decoupled lookback.
    ///
    /// Each workgroup takes one tile of `WG×items` elements, in order, from an atomic
    /// counter (or its workgroup id). The tile is cut into one contiguous chunk per
    /// subgroup; in each of the chunk's `items/V` rounds an invocation owns `V`
    /// consecutive elements (`V` = 4 when `items` is a multiple of 4, read as one
    /// 16-byte load from a plain f32/i32 array), so a round is one coalesced run of
    /// the subgroup's width. An invocation scans its elements serially in registers;
    /// per round one subgroup exclusive scan and one reduction of the invocations'
    /// totals place them within the chunk, so a subgroup knows its chunk's scan
    /// without workgroup memory. The chunk totals go through workgroup memory once:
    /// after one barrier, subgroup 0 reduces them to the tile's aggregate, publishes
    /// it (flag 1), looks back over earlier tiles until it meets an inclusive prefix
    /// (flag 2), publishes its own and hands the prefix on through workgroup memory,
    /// while the other subgroups add the totals of the chunks before theirs. A spin is
    /// bounded: after `spin` (specialization constant 2) polls of a tile that has
    /// published nothing, the subgroup reduces that tile's input itself (decoupled
    /// fallback), so a device with no forward-progress guarantee between workgroups
    /// cannot hang. Positions follow (SubgroupId, SubgroupLocalInvocationId), so the
    /// result does not depend on how the device lays subgroups out; the workgroup
    /// size is a multiple of the subgroup size (the planner rounds it).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn scan_kernel(
        &mut self,
        cx: &mut Cx,
        op: BinOp,
        expr: &KExpr,
        out: u32,
        state: [u32; 4],
        every_subgroup: bool,
        tiles_by_workgroup: bool,
        shuffle: bool,
        compact: Option<&arrc_ir::plan::Compact>,
        lookback_sg: Option<u32>,
        wide: bool,
        subnormals: Option<u32>,
    ) -> R<()> {
        if lookback_sg.is_some() && (compact.is_some() || every_subgroup) {
            return Err(SpirvError::Build(
                "a lookback subgroup in a compaction or where every subgroup looks back".into(),
            ));
        }
        if wide && (lookback_sg.is_some() || every_subgroup) {
            return Err(SpirvError::Build(
                "a workgroup-wide lookback with a lookback subgroup or where every subgroup looks back"
                    .into(),
            ));
        }
        // A replicate's counts are scanned as a plain `+\`: only where each element
        // stores differs (`repeat_store`).
        let repeat = compact.filter(|c| c.repeat);
        let compact = compact.filter(|c| !c.repeat);
        let counter = state[3];
        // `⌈\ ⌊\` of f32 where f32 would be computed from its bits (`exact32`):
        // scanned as the ordered bits, signed integers (one integer `⌈` a step, not
        // one through the bits each time), each element converted once each way.
        let ordered = self.exact32
            && expr.elem() == ElemType::F32
            && matches!(op, BinOp::Max | BinOp::Min)
            && compact.is_none();
        let as_read = expr;
        let ordered_expr = KExpr::Unary {
            op: arrc_ir::scalar::UnOp::OrderedBits,
            elem: ElemType::I32,
            arg: Box::new(expr.clone()),
            error_bit: None,
        };
        let expr = if ordered { &ordered_expr } else { expr };
        let t = expr.elem();
        let tt = self.ty(t);
        let u = self.u32_t;
        let bt = self.bool_t;
        let (width, rounds) = if self.items_n.is_multiple_of(4) {
            (4u32, self.items_n / 4)
        } else {
            (1, self.items_n)
        };
        // A scan of 4-byte values folded in 8 bytes (f32 `+\` in f64, i32 in i64)
        // holds its elements as read and widens each where it is added (exact): its
        // registers are a 4-byte scan's (the planner gives it a 4-byte tile). It keeps
        // one offset per round instead of each element's inclusive value.
        let narrow = expr.widened().filter(|_| compact.is_none());
        let held = narrow.unwrap_or(expr);
        let ht = held.elem();
        let htt = self.ty(ht);
        // A compaction that holds its values (`Compact::holds_values`): those of a
        // plain array, read four at a time and held as read, its mask computed from
        // each (the mask's reads of the same element are `Operand` 0). Where its
        // values are another's, but its mask is computed from one plain array (`⍸`:
        // `⍸x>0.5` stores indices), that array is read alike and only the keep bits
        // outlive the reads (on the H200 at 2^28, `⍸x>0.5` held the mask's values
        // through the lookback: 62 registers, 2 workgroups of 512 a multiprocessor;
        // `(x>0.5)/x` 40 and 3).
        let mapped = mapped_load(cx, held);
        let holding = match compact {
            Some(c) if c.holds_values && width == 4 => match &c.value {
                &KExpr::Load {
                    binding,
                    elem,
                    index: IExpr::Index,
                } if matches!(elem, ElemType::F32 | ElemType::I32 | ElemType::F64)
                    && cx.windows[binding as usize].len() == 1
                    && cx.bindings[binding as usize].1 == elem =>
                {
                    Some((
                        binding,
                        elem,
                        held.clone().with_operand_for(binding, elem, 0),
                    ))
                }
                _ => mapped.clone(),
            },
            _ => None,
        };
        // Whether what the tile holds is the compaction's values.
        let holds_values = matches!(
            (&holding, compact.map(|c| &c.value)),
            (Some((b, from, _)), Some(&KExpr::Load { binding, elem, index: IExpr::Index }))
                if binding == *b && elem == *from
        );
        let xt = match &holding {
            Some((_, elem, _)) => self.ty(*elem),
            None => htt,
        };
        // One function variable per element of the tile an invocation holds (the
        // driver keeps them in registers).
        let mut xs = vec![];
        for _ in 0..rounds {
            let row: Vec<Word> = (0..width).map(|_| self.local(xt)).collect();
            xs.push(row);
        }
        let offs: Vec<Word> = match narrow {
            Some(_) => (0..rounds).map(|_| self.local(tt)).collect(),
            None => vec![],
        };
        let j = self.local(u);
        let spins = self.local(u);
        let carry = self.local(tt);
        let whole_agg = self.local(tt);
        let prefix = self.local(tt);
        let fb = self.local(tt);
        let e2 = self.local(u);
        let looking = self.local(bt);
        let lookback_vars = [j, spins, prefix, fb, looking];
        let max_totals = self.c_u32(SCAN_TOTALS);
        let tot_arr = self.b.type_array(tt, max_totals);
        let pt = self.ptr(StorageClass::Workgroup, tot_arr);
        let totals = self.workgroup_var(pt);
        let pu = self.ptr(StorageClass::Workgroup, u);
        let ptt = self.ptr(StorageClass::Workgroup, tt);
        let sh_tile = self.workgroup_var(pu);
        let sh_prefix = self.workgroup_var(ptt);
        let wide_vars = wide.then(|| self.wide_lookback_vars(t));
        let id = self.identity(op, t);
        let held_id = self.identity(op, ht);
        let zero = self.c_u32(0);
        let one = self.c_u32(1);
        let dev = self.c_u32(SCOPE_DEVICE);
        let relaxed = self.c_u32(0);
        let sid = self.load_builtin(cx, BuiltIn::SubgroupId)?;
        let nsg = self.load_builtin(cx, BuiltIn::NumSubgroups)?;
        let sgs = self.load_builtin(cx, BuiltIn::SubgroupSize)?;
        let lane = self.load_builtin(cx, BuiltIn::SubgroupLocalInvocationId)?;
        let per_tile = self.c_u32(rounds * width);
        // The invocations that hold the tile: all, or all but the lookback
        // subgroup's `L` (the last ones).
        let data_wg = match lookback_sg {
            Some(l) => {
                let l = self.c_u32(l);
                self.b.i_sub(u, None, self.wg_size, l).map_err(be)?
            }
            None => self.wg_size,
        };
        let blk = self.umul(data_wg, per_tile)?;
        let data_sgs = self.b.u_div(u, None, data_wg, sgs).map_err(be)?;
        let is_data = self.ult(sid, data_sgs)?;
        let is_lb = self.b.i_equal(bt, None, sid, data_sgs).map_err(be)?;
        // How many data subgroups have their totals (the lookback subgroup stops its
        // early polls when all have).
        let sh_ready = lookback_sg.map(|_| self.workgroup_var(pu));
        let first = self.b.i_equal(bt, None, cx.lid, zero).map_err(be)?;
        // Vector loads and stores (four elements each) where a side is a plain
        // array in one window; the input may be converted as it is read (`+\` of i32
        // scans in i64).
        let vectors = |e: ElemType| {
            matches!(
                e,
                ElemType::F32 | ElemType::I32 | ElemType::I64 | ElemType::F64
            )
        };
        let vec_in = match plain_load(cx, as_read) {
            Some((b, from, IExpr::Index)) if width == 4 && vectors(from) => {
                Some(self.vec4_source(cx, b, from)?)
            }
            _ => None,
        };
        // Otherwise, where what it scans is computed from one plain array read at
        // each element's index, that array four at a time (`mapped_load`).
        let map_in = match (&vec_in, &mapped) {
            (None, Some((b, from, m))) if width == 4 && holding.is_none() => {
                Some((self.vec4_source(cx, *b, *from)?, *from, m.clone()))
            }
            _ => None,
        };
        // A replicate whose counts are computed from the very array it replicates
        // (`(1+x>0.5)/x`) computes each count again from the values it reads for its
        // stores: only a round's offset outlives the lookback, not each element's
        // count (as a narrow scan keeps its offsets).
        let recount = match (repeat, &mapped) {
            (Some(rp), Some((b, from, _))) if map_in.is_some() => matches!(
                rp.value,
                KExpr::Load { binding, elem, index: IExpr::Index } if binding == *b && elem == *from
            ),
            _ => false,
        };
        let offs = match (offs.is_empty(), recount) {
            (true, true) => (0..rounds).map(|_| self.local(tt)).collect(),
            _ => offs,
        };
        // The output may be narrower than the fold (an f32 `+\` in f64).
        let out_t = cx.bindings[out as usize].1;
        let vec_out = if width == 4
            && cx.windows[out as usize].len() == 1
            && vectors(out_t)
            && compact.is_none()
            && repeat.is_none()
        {
            Some(self.vec4_view(cx, out, out_t, true)?)
        } else {
            None
        };
        let out_tt = self.ty(out_t);
        let vt = self.b.type_vector(out_tt, 4);
        let pvt = self.ptr(StorageClass::StorageBuffer, vt);
        // Whole vectors end at n/V: a vector index below that is in bounds throughout.
        let wc = self.c_u32(width);
        let n_whole = self.b.u_div(u, None, cx.n, wc).map_err(be)?;
        let cxr = &*cx;
        let rc = self.c_u32(rounds);
        let per_wg = self.umul(data_wg, rc)?;
        // Subgroup s owns the s-th of the tile's nsg consecutive chunks: `rounds`
        // rounds of one vector per lane, each round a contiguous run of the subgroup's
        // width.
        let chunk = self.umul(rc, sgs)?;
        let mine = self.umul(sid, chunk)?;
        let mine = self.uadd(mine, lane)?;
        let elem_at = |e: &mut Self, v: Word, c: u32| -> R<Word> {
            let vw = e.umul(v, wc)?;
            let cc = e.c_u32(c);
            e.uadd(vw, cc)
        };
        // One tile per workgroup (the dispatch has exactly one workgroup per tile), so
        // every barrier is in the function's top-level control flow. Invocation 0
        // claims the tile from the counter, so tiles start in order: a tile's
        // predecessors were claimed by workgroups already running.
        let e = self;
        if e.lookback_budget.is_some() {
            let trips = e.local(u);
            e.store(trips, zero)?;
            e.lookback_trips = Some(trips);
        }
        if let Some(r) = sh_ready {
            e.if_then(first, |e| e.store(r, zero))?;
        }
        let tile = if tiles_by_workgroup {
            if sh_ready.is_some() {
                e.barrier()?;
            }
            cxr.group
        } else {
            e.if_then(first, |e| {
                let (var, _) = cxr.bindings[counter as usize];
                let p = e.ptr(StorageClass::StorageBuffer, u);
                let cp = e.b.access_chain(p, None, var, [zero, zero]).map_err(be)?;
                let t =
                    e.b.atomic_i_add(u, None, cp, dev, relaxed, one)
                        .map_err(be)?;
                e.store(sh_tile, t)
            })?;
            e.barrier()?;
            e.load(u, sh_tile)?
        };
        // A tile's vector indices for this invocation, one per round, and whether the
        // whole tile is in bounds (only the last tile checks bounds).
        let base = e.umul(tile, per_wg)?;
        let sb = e.uadd(base, mine)?;
        let mut vidx = vec![];
        for r in 0..rounds {
            let ro = e.c_u32(r);
            let ro = e.umul(ro, sgs)?;
            vidx.push(e.uadd(sb, ro)?);
        }
        let end = e.uadd(base, per_wg)?;
        let whole = e.b.u_less_than_equal(bt, None, end, n_whole).map_err(be)?;
        // With a lookback subgroup: it polls the earlier tiles from here, while
        // the others hold and scan the tile (`look_back_early`).
        if let Some(ready) = sh_ready {
            e.if_then(is_lb, |e| {
                e.look_back_early(
                    cxr,
                    op,
                    expr,
                    state,
                    tile,
                    lookback_vars,
                    blk,
                    ready,
                    data_sgs,
                )
            })?;
        }
        let data_part = match lookback_sg {
            Some(_) => Some(e.begin_if(is_data)?),
            None => None,
        };
        // A compaction keeps which of its elements it stores as bits (a word per 32),
        // so that its output need not evaluate the mask again.
        let mut keep_words: Vec<Word> = vec![];
        if compact.is_some() {
            let bits = (rounds * width) as usize;
            keep_words = (0..bits.div_ceil(32)).map(|_| e.local(u)).collect();
        }
        let zero_m = e.scalar(Scalar::I32(0).cast(ht));
        // Element `k`'s keep bit, where the mask (of `Operand` 0, `x`) gives `m`.
        let keep_bit = |e: &mut Self, m: Word, k: usize| -> R<Word> {
            let nz = e.b.i_not_equal(bt, None, m, zero_m).map_err(be)?;
            let bit = e.c_u32(1 << (k % 32));
            e.b.select(u, None, nz, bit, zero).map_err(be)
        };
        if let Some((b, from, mask)) = &holding {
            let src = e.vec4_source(cxr, *b, *from)?;
            let none = e.scalar(Scalar::I32(0).cast(*from));
            e.if_else(
                whole,
                |e| {
                    // Every load of the tile is issued before any is used.
                    let mut x4s = vec![];
                    for (row, &v) in xs.iter().zip(&vidx) {
                        let x4 = e.load_vec4(&src, v, *from)?;
                        for (&var, x) in row.iter().zip(x4) {
                            e.store(var, x)?;
                        }
                        x4s.push(x4);
                    }
                    let mut acc = vec![zero; keep_words.len()];
                    for (r, (x4, &v)) in x4s.iter().zip(&vidx).enumerate() {
                        for (c, &x) in x4.iter().enumerate() {
                            let i = elem_at(e, v, c as u32)?;
                            e.operands[0] = x;
                            let m = e.expr(cxr, mask, Ix::flat(i))?;
                            let k = r * width as usize + c;
                            let bit = keep_bit(e, m, k)?;
                            acc[k / 32] = e.b.bitwise_or(u, None, acc[k / 32], bit).map_err(be)?;
                        }
                    }
                    for (&w, a) in keep_words.iter().zip(acc) {
                        e.store(w, a)?;
                    }
                    Ok(())
                },
                |e| {
                    for &w in &keep_words {
                        e.store(w, zero)?;
                    }
                    for (r, (row, &v)) in xs.iter().zip(&vidx).enumerate() {
                        for (c, &var) in row.iter().enumerate() {
                            let i = elem_at(e, v, c as u32)?;
                            let inb = e.ult(i, cxr.n)?;
                            e.store(var, none)?;
                            let k = r * width as usize + c;
                            e.if_then(inb, |e| {
                                let read = KExpr::Load {
                                    binding: *b,
                                    elem: *from,
                                    index: IExpr::Index,
                                };
                                let x = e.expr(cxr, &read, Ix::flat(i))?;
                                e.store(var, x)?;
                                e.operands[0] = x;
                                let m = e.expr(cxr, mask, Ix::flat(i))?;
                                let bit = keep_bit(e, m, k)?;
                                let w = e.load(u, keep_words[k / 32])?;
                                let w = e.b.bitwise_or(u, None, w, bit).map_err(be)?;
                                e.store(keep_words[k / 32], w)
                            })?;
                        }
                    }
                    Ok(())
                },
            )?;
        }
        if holding.is_none() {
            // Every load of the tile is issued before any is used.
            e.if_else(
                whole,
                |e| {
                    if let Some((src, from, m)) = &map_in {
                        let x4s = (vidx.iter())
                            .map(|&v| e.load_vec4(src, v, *from))
                            .collect::<R<Vec<_>>>()?;
                        for ((row, x4), &v) in xs.iter().zip(x4s).zip(&vidx) {
                            for (c, (&var, x)) in row.iter().zip(x4).enumerate() {
                                let i = elem_at(e, v, c as u32)?;
                                e.operands[0] = x;
                                let y = e.expr(cxr, m, Ix::flat(i))?;
                                e.store(var, y)?;
                            }
                        }
                        return Ok(());
                    }
                    for (row, &v) in xs.iter().zip(&vidx) {
                        if let Some(src) = &vec_in {
                            let x4 = if ordered {
                                let x4 = e.load_vec4(src, v, ElemType::F32)?;
                                let mut o = [0; 4];
                                for (o, x) in o.iter_mut().zip(x4) {
                                    *o = e.order32(x)?;
                                }
                                o
                            } else {
                                e.load_vec4(src, v, ht)?
                            };
                            for (&var, x) in row.iter().zip(x4) {
                                e.store(var, x)?;
                            }
                        } else {
                            for (c, &var) in row.iter().enumerate() {
                                let i = elem_at(e, v, c as u32)?;
                                let x = e.expr(cxr, held, Ix::flat(i))?;
                                e.store(var, x)?;
                            }
                        }
                    }
                    Ok(())
                },
                |e| {
                    for (row, &v) in xs.iter().zip(&vidx) {
                        for (c, &var) in row.iter().enumerate() {
                            let i = elem_at(e, v, c as u32)?;
                            let inb = e.ult(i, cxr.n)?;
                            e.store(var, held_id)?;
                            e.if_then(inb, |e| {
                                let x = e.expr(cxr, held, Ix::flat(i))?;
                                e.store(var, x)
                            })?;
                        }
                    }
                    Ok(())
                },
            )?;
        }
        // Each round: a serial inclusive scan of the invocation's own elements,
        // then an exclusive scan and a reduction of the rows' totals across the
        // subgroup (the rounds are independent, so their subgroup operations
        // overlap).
        if compact.is_some() && holding.is_none() {
            let mut acc = vec![zero; keep_words.len()];
            for (r, row) in xs.iter().enumerate() {
                for (c, &var) in row.iter().enumerate() {
                    let k = r * width as usize + c;
                    let m = e.load(htt, var)?;
                    let b = keep_bit(e, m, k)?;
                    acc[k / 32] = e.b.bitwise_or(u, None, acc[k / 32], b).map_err(be)?;
                }
            }
            for (&w, a) in keep_words.iter().zip(acc) {
                e.store(w, a)?;
            }
        }
        // A compaction's element's count is found from the kept bits: the bits of
        // its round up to it, counted (`kept_to`). Its scan is of each round's kept
        // count alone, and what it adds stays in values of their own, never in the
        // variables that held the mask: on the H200 a compaction that added the
        // subgroup's prefix to them in place, where its mask computed more than a
        // comparison, stored as if that prefix were 0.
        let kept_to = |e: &mut Self, r: usize, c: u32| -> R<Word> {
            let k = r * width as usize;
            let w = e.load(u, keep_words[k / 32])?;
            let sh = e.c_u32((k % 32) as u32);
            let bits = e.b.shift_right_logical(u, None, w, sh).map_err(be)?;
            let upto = e.c_u32((2u32 << c) - 1);
            let m = e.b.bitwise_and(u, None, bits, upto).map_err(be)?;
            let n = e.b.bit_count(u, None, m).map_err(be)?;
            e.b.bitcast(tt, None, n).map_err(be)
        };
        // A round's elements as read, widened.
        let widen_row = |e: &mut Self, row: &[Word]| -> R<Vec<Word>> {
            row.iter()
                .map(|&var| {
                    let x = e.load(htt, var)?;
                    e.convert(x, ht, t)
                })
                .collect()
        };
        // Widening by OpFConvert alone, a subgroup holding a subnormal reports it
        // (`KernelKind::ScanChained::subnormals`): a second dispatch then scans the
        // exact way, overwriting this one's output. The report is that dispatch's
        // indirect arguments, this one's workgroups (zero words dispatch none).
        if let Some(b) = subnormals {
            let held: Vec<Word> = xs.iter().flatten().copied().collect();
            let clean = e.none_subnormal(&held)?;
            let any = e.not(clean)?;
            let el = e.elect()?;
            let report = e.and(any, el)?;
            e.if_then(report, |e| {
                let (var, _) = cxr.bindings[b as usize];
                let p = e.ptr(StorageClass::StorageBuffer, u);
                for (w, v) in [(0, cxr.groups), (1, one), (2, one)] {
                    let w = e.c_u32(w);
                    let fp = e.b.access_chain(p, None, var, [zero, w]).map_err(be)?;
                    e.b.atomic_or(u, None, fp, dev, relaxed, v).map_err(be)?;
                }
                Ok(())
            })?;
        }
        let clean32 = std::mem::replace(&mut e.clean32, subnormals.is_some());
        // A value as it is stored, and its type (the ordered bits back to f32).
        let stored = |e: &mut Self, y: Word| -> R<(Word, ElemType)> {
            if ordered {
                Ok((e.unorder32(y)?, ElemType::F32))
            } else {
                Ok((y, t))
            }
        };
        let mut round_scans = vec![];
        // Each round's lane total (where not packed): a replicate's counts are the
        // differences of its inclusive values, the first's from the lane's total.
        let mut lane_totals = vec![];
        // A compaction's rounds keep at most `width` elements a lane, so a
        // subgroup's count of a round stays below `width × 128` (Vulkan's largest
        // subgroup): several rounds' counts share a word, a field each, and one
        // scan and one shuffle serve them all.
        let packed = compact.is_some() && t == ElemType::I32 && shuffle;
        if packed {
            let bits = 32 - (width * 128).leading_zeros();
            let per = (32 / bits) as usize;
            let field = e.c_u32((1 << bits) - 1);
            for first in (0..xs.len()).step_by(per) {
                let group = first..xs.len().min(first + per);
                let mut word = zero;
                for r in group.clone() {
                    let n = kept_to(e, r, width - 1)?;
                    let n = e.b.bitcast(u, None, n).map_err(be)?;
                    let sh = e.c_u32(bits * (r - first) as u32);
                    let n = e.b.shift_left_logical(u, None, n, sh).map_err(be)?;
                    word = e.b.bitwise_or(u, None, word, n).map_err(be)?;
                }
                let it = e.ty(ElemType::I32);
                let wi = e.b.bitcast(it, None, word).map_err(be)?;
                let ex = e.group(BinOp::Add, ElemType::I32, GroupOperation::ExclusiveScan, wi)?;
                let ex = e.b.bitcast(u, None, ex).map_err(be)?;
                let inc = e.uadd(ex, word)?;
                let tot = e.last_lanes_value(u, inc, sgs)?;
                for r in group {
                    let sh = e.c_u32(bits * (r - first) as u32);
                    let mut pair = [ex, tot];
                    for w in &mut pair {
                        let f = e.b.shift_right_logical(u, None, *w, sh).map_err(be)?;
                        let f = e.b.bitwise_and(u, None, f, field).map_err(be)?;
                        *w = e.b.bitcast(tt, None, f).map_err(be)?;
                    }
                    round_scans.push((pair[0], pair[1]));
                }
            }
        }
        for (r, row) in xs.iter().enumerate().filter(|_| !packed) {
            let acc = if compact.is_some() {
                kept_to(e, r, width - 1)?
            } else {
                let ws = widen_row(e, row)?;
                let mut acc = ws[0];
                for (&var, &x) in row[1..].iter().zip(&ws[1..]) {
                    acc = e.binop(op, t, acc, x)?;
                    if narrow.is_none() && !recount {
                        e.store(var, acc)?;
                    }
                }
                acc
            };
            let ex = e.group(op, t, GroupOperation::ExclusiveScan, acc)?;
            // The round's total: the last lane's inclusive value, or a
            // reduction where the device has no shuffles.
            let tot = if shuffle {
                let inc = e.binop(op, t, ex, acc)?;
                e.last_lanes_value(tt, inc, sgs)?
            } else {
                e.group(op, t, GroupOperation::Reduce, acc)?
            };
            round_scans.push((ex, tot));
            lane_totals.push(acc);
        }
        // Earlier rounds' totals and earlier lanes go into the elements now, so
        // that after the lookback only the tile's and the subgroup's prefixes
        // remain.
        let mut run: Option<Word> = None;
        let mut round_offs = vec![];
        // The earlier rounds' totals alone (a compaction's round starts there).
        let mut round_runs = vec![];
        for (r, (row, &(ex, tot))) in xs.iter().zip(&round_scans).enumerate() {
            round_runs.push(run.unwrap_or(id));
            let off = match run {
                Some(r) => e.binop(op, t, r, ex)?,
                None => ex,
            };
            if compact.is_some() {
                round_offs.push(off);
            } else if narrow.is_some() || recount {
                e.store(offs[r], off)?;
            } else {
                for &var in row {
                    let x = e.load(tt, var)?;
                    let y = e.binop(op, t, off, x)?;
                    e.store(var, y)?;
                }
            }
            run = Some(match run {
                Some(r) => e.binop(op, t, r, tot)?,
                None => tot,
            });
        }
        let sg_total = run.unwrap_or(id);
        let el = e.elect()?;
        e.if_then(el, |e| {
            let p = e.shared_ptr(totals, t, sid)?;
            e.store(p, sg_total)?;
            if let Some(r) = sh_ready {
                let wgs = e.c_u32(SCOPE_WORKGROUP);
                e.b.atomic_i_add(u, None, r, wgs, relaxed, one)
                    .map_err(be)?;
            }
            Ok(())
        })?;
        if let Some(m) = data_part {
            e.end_if(m)?;
            // The lookback subgroup (and any past it) adds nothing to the tile.
            let not_data = e.b.logical_not(bt, None, is_data).map_err(be)?;
            e.if_then(not_data, |e| {
                let el = e.elect()?;
                e.if_then(el, |e| {
                    let p = e.shared_ptr(totals, t, sid)?;
                    e.store(p, id)
                })
            })?;
        }
        e.barrier()?;
        // The subgroup's exclusive prefix within the tile (`carry`) and, for
        // subgroup 0 (or every subgroup, when each looks back), the tile's
        // aggregate: reductions of the subgroup totals, a subgroup width at a time.
        let sg0 = e.b.i_equal(bt, None, sid, zero).map_err(be)?;
        e.store(carry, id)?;
        e.store(whole_agg, id)?;
        e.store(e2, zero)?;
        e.while_loop(
            |e| {
                let ev = e.load(u, e2)?;
                e.ult(ev, nsg)
            },
            |e| {
                let ev = e.load(u, e2)?;
                let k = e.uadd(ev, lane)?;
                let ink = e.ult(k, nsg)?;
                e.store(fb, id)?;
                e.if_then(ink, |e| {
                    let p = e.shared_ptr(totals, t, k)?;
                    let v = e.load(tt, p)?;
                    e.store(fb, v)
                })?;
                let v = e.load(tt, fb)?;
                let before = e.ult(k, sid)?;
                let vb = e.b.select(tt, None, before, v, id).map_err(be)?;
                let q = e.group(op, t, GroupOperation::Reduce, vb)?;
                let c = e.load(tt, carry)?;
                let nc = e.binop(op, t, c, q)?;
                e.store(carry, nc)?;
                // A lookback subgroup's carry is the aggregate itself.
                let need_agg = if every_subgroup {
                    e.b.constant_true(bt)
                } else if lookback_sg.is_some() {
                    e.b.constant_false(bt)
                } else {
                    sg0
                };
                e.if_then(need_agg, |e| {
                    let a = e.group(op, t, GroupOperation::Reduce, v)?;
                    let c = e.load(tt, whole_agg)?;
                    let na = e.binop(op, t, c, a)?;
                    e.store(whole_agg, na)
                })
            },
            |e| {
                let ev = e.load(u, e2)?;
                let nx = e.uadd(ev, sgs)?;
                e.store(e2, nx)
            },
        )?;
        let fold_in = |e: &mut Self, a: Word| -> R<()> {
            // A compaction adds the prefixes where it stores (`round_offs`).
            if compact.is_some() {
                return Ok(());
            }
            if narrow.is_some() || recount {
                for &var in &offs {
                    let x = e.load(tt, var)?;
                    let y = e.binop(op, t, a, x)?;
                    e.store(var, y)?;
                }
                return Ok(());
            }
            for row in &xs {
                for &var in row {
                    let x = e.load(tt, var)?;
                    let y = e.binop(op, t, a, x)?;
                    e.store(var, y)?;
                }
            }
            Ok(())
        };
        if every_subgroup {
            // Each subgroup looks back itself (values are uniform within it, so
            // control flow stays uniform) and finds the same prefix; subgroup 0
            // publishes. No subgroup waits at a barrier while another spins.
            let agg = e.load(tt, whole_agg)?;
            e.look_back(cxr, op, expr, state, agg, tile, lookback_vars, blk)?;
            let pv = e.load(tt, prefix)?;
            let c = e.load(tt, carry)?;
            let a = e.binop(op, t, pv, c)?;
            fold_in(e, a)?;
        } else if lookback_sg.is_some() {
            // The lookback subgroup publishes (its carry is the aggregate) and ends
            // its lookback while the others add their subgroup prefix; then it
            // hands the tile's prefix on through workgroup memory.
            e.if_else(
                is_lb,
                |e| {
                    let agg = e.load(tt, carry)?;
                    e.look_back_resumed(cxr, op, expr, state, agg, tile, lookback_vars, blk)?;
                    let el = e.elect()?;
                    e.if_then(el, |e| {
                        let pv = e.load(tt, prefix)?;
                        e.store(sh_prefix, pv)
                    })
                },
                |e| {
                    e.if_then(is_data, |e| {
                        let c = e.load(tt, carry)?;
                        fold_in(e, c)
                    })
                },
            )?;
            e.barrier()?;
        } else if let Some(w) = wide_vars {
            // The others add their subgroup prefix; then the whole workgroup looks
            // back, and subgroup 0 hands the tile's prefix on through workgroup
            // memory.
            let not0 = e.b.logical_not(bt, None, sg0).map_err(be)?;
            e.if_then(not0, |e| {
                let c = e.load(tt, carry)?;
                fold_in(e, c)
            })?;
            let agg = e.load(tt, whole_agg)?;
            e.look_back_wide(cxr, op, expr, state, agg, tile, lookback_vars, blk, w)?;
            e.if_then(sg0, |e| {
                let el = e.elect()?;
                e.if_then(el, |e| {
                    let pv = e.load(tt, prefix)?;
                    e.store(sh_prefix, pv)
                })
            })?;
            e.barrier()?;
            let pv = e.load(tt, sh_prefix)?;
            fold_in(e, pv)?;
        } else {
            // Subgroup 0 publishes and looks back while the others add their
            // subgroup prefix; then it hands the tile's prefix on through
            // workgroup memory.
            e.if_else(
                sg0,
                |e| {
                    let agg = e.load(tt, whole_agg)?;
                    e.look_back(cxr, op, expr, state, agg, tile, lookback_vars, blk)?;
                    let el = e.elect()?;
                    e.if_then(el, |e| {
                        let pv = e.load(tt, prefix)?;
                        e.store(sh_prefix, pv)
                    })
                },
                |e| {
                    let c = e.load(tt, carry)?;
                    fold_in(e, c)
                },
            )?;
            e.barrier()?;
            let pv = e.load(tt, sh_prefix)?;
            fold_in(e, pv)?;
        }
        // Only the data subgroups hold elements to store.
        let out_part = match lookback_sg {
            Some(_) => {
                let m = e.begin_if(is_data)?;
                let pv = e.load(tt, sh_prefix)?;
                fold_in(e, pv)?;
                Some(m)
            }
            None => None,
        };
        // Output: a compaction stores each kept element (its bit) at its count less
        // one, and the last element the kept count. A plain array's values are read
        // four at a time where the tile is whole.
        if let Some(c) = compact {
            // What comes before the subgroup's part of the tile: the earlier tiles
            // (looked back for by each subgroup, or handed on by subgroup 0) and the
            // earlier subgroups.
            let pv = if every_subgroup {
                e.load(tt, prefix)?
            } else {
                e.load(tt, sh_prefix)?
            };
            let before = e.load(tt, carry)?;
            let before = e.binop(op, t, pv, before)?;
            let it = e.ty(ElemType::I32);
            let one_i = e.scalar(Scalar::I32(1));
            let vt = c.value.elem();
            // The kept count: the count up to the last element, stored by the lane
            // that holds it (`y`, its count), where element `i` is the last.
            // Element `k` of round `r`'s count: the counts before its subgroup's part
            // of the tile, before the round and up to it in the round.
            let round_at = |e: &mut Self, r: usize| e.binop(op, t, before, round_offs[r]);
            let count_of = |e: &mut Self, at: Word, r: usize, k: u32| -> R<Word> {
                let n = kept_to(e, r, k)?;
                e.binop(op, t, at, n)
            };
            let count_at = |e: &mut Self, i: Word, y: Word| e.length_at_last(cxr, c.len, i, y);
            // Read again for the output, unless the tile holds the values.
            let value_src = match plain_load(cxr, &c.value) {
                Some((b, from, IExpr::Index)) if width == 4 && vectors(from) && !holds_values => {
                    Some(e.vec4_source(cxr, b, from)?)
                }
                _ => None,
            };
            let keep_at = |e: &mut Self, k: usize| -> R<Word> {
                let w = e.load(u, keep_words[k / 32])?;
                let sh = e.c_u32((k % 32) as u32);
                let s = e.b.shift_right_logical(u, None, w, sh).map_err(be)?;
                let one = e.c_u32(1);
                let b = e.b.bitwise_and(u, None, s, one).map_err(be)?;
                e.b.i_not_equal(bt, None, b, zero).map_err(be)
            };
            // Element k of the round: stored at its count less one where kept (its
            // value given, or read).
            let place = |e: &mut Self, k: usize, i: Word, y: Word, x: Option<Word>| -> R<()> {
                let keep = keep_at(e, k)?;
                e.if_then(keep, |e| {
                    let p = e.b.i_sub(it, None, y, one_i).map_err(be)?;
                    let at = e.b.bitcast(u, None, p).map_err(be)?;
                    let x = match x {
                        Some(x) => x,
                        None => e.expr(cxr, &c.value, Ix::flat(i))?,
                    };
                    e.store_elem(cxr, out, at, x)
                })?;
                count_at(e, i, y)
            };
            // In a whole tile, a round's kept elements go to one run of `out`:
            // staged in order in the subgroup's part of workgroup memory, then
            // stored from there one element a lane (coalesced, where each lane's
            // own would scatter). The run starts at the count before the round.
            let stage = (c.staged && t == ElemType::I32).then(|| {
                let stage = e.shared_sized(vt, e.wg_n * width);
                let at = e.umul(sid, sgs)?;
                let wc = e.c_u32(width);
                Ok((stage, e.umul(at, wc)?))
            });
            let stage = stage.transpose()?;
            // The values held, where the tile holds them.
            let held_values = |e: &mut Self, r: usize| -> R<Option<Vec<Word>>> {
                match holding {
                    Some(_) if holds_values => xs[r]
                        .iter()
                        .map(|&var| e.load(xt, var))
                        .collect::<R<_>>()
                        .map(Some),
                    _ => Ok(None),
                }
            };
            // A round of a whole tile, and of the last tile (each element checked).
            // The whole tiles' rounds follow one another in the code, apart from
            // the last tile's.
            let whole_round = |e: &mut Self, r: usize, v: Word| -> R<()> {
                let base = r * width as usize;
                let (ex, tot) = round_scans[r];
                let values = match (held_values(e, r)?, &value_src) {
                    (Some(x), _) => Some([x[0], x[1], x[2], x[3]]),
                    (None, Some(src)) => Some(e.load_vec4(src, v, vt)?),
                    (None, None) => None,
                };
                let Some((stage, sg_at)) = stage else {
                    let at = round_at(e, r)?;
                    for k in 0..width {
                        let y = count_of(e, at, r, k)?;
                        let i = elem_at(e, v, k)?;
                        place(e, base + k as usize, i, y, values.map(|x| x[k as usize]))?;
                    }
                    return Ok(());
                };
                // The round's keep bits (one word holds them: rounds of
                // four), each kept element staged where the lane's count so
                // far puts it.
                let w = e.load(u, keep_words[base / 32])?;
                let sh = e.c_u32((base % 32) as u32);
                let bits = e.b.shift_right_logical(u, None, w, sh).map_err(be)?;
                let mut pos = e.b.bitcast(u, None, ex).map_err(be)?;
                for k in 0..width {
                    let kc = e.c_u32(k);
                    let bk = e.b.shift_right_logical(u, None, bits, kc).map_err(be)?;
                    let bk = e.b.bitwise_and(u, None, bk, one).map_err(be)?;
                    let keep = e.b.i_not_equal(bt, None, bk, zero).map_err(be)?;
                    let i = elem_at(e, v, k)?;
                    e.if_then(keep, |e| {
                        let q = e.uadd(sg_at, pos)?;
                        let x = match values {
                            Some(x) => x[k as usize],
                            None => e.expr(cxr, &c.value, Ix::flat(i))?,
                        };
                        let p = e.shared_ptr(stage, vt, q)?;
                        e.store(p, x)
                    })?;
                    if k + 1 < width {
                        pos = e.uadd(pos, bk)?;
                    }
                }
                e.subgroup_barrier()?;
                let start = e.binop(op, t, before, round_runs[r])?;
                let start = e.b.bitcast(u, None, start).map_err(be)?;
                let tot = e.b.bitcast(u, None, tot).map_err(be)?;
                for k in 0..width {
                    let kc = e.c_u32(k);
                    let q = e.umul(kc, sgs)?;
                    let q = e.uadd(q, lane)?;
                    let inr = e.ult(q, tot)?;
                    e.if_then(inr, |e| {
                        let s = e.uadd(sg_at, q)?;
                        let p = e.shared_ptr(stage, vt, s)?;
                        let vtt = e.ty(vt);
                        let x = e.load(vtt, p)?;
                        let at = e.uadd(start, q)?;
                        e.store_elem(cxr, out, at, x)
                    })?;
                }
                // A whole tile holds the last element where it ends the
                // array: the last of the last round.
                if r + 1 == vidx.len() {
                    let i = elem_at(e, v, width - 1)?;
                    let at = round_at(e, r)?;
                    let y = count_of(e, at, r, width - 1)?;
                    count_at(e, i, y)?;
                }
                // The next round stages over this one.
                e.subgroup_barrier()
            };
            let part_round = |e: &mut Self, r: usize, v: Word| -> R<()> {
                let base = r * width as usize;
                let at = round_at(e, r)?;
                for k in 0..width {
                    let y = count_of(e, at, r, k)?;
                    let i = elem_at(e, v, k)?;
                    let inb = e.ult(i, cxr.n)?;
                    e.if_then(inb, |e| {
                        let x = match holding {
                            Some(_) if holds_values => Some(e.load(xt, xs[r][k as usize])?),
                            _ => None,
                        };
                        place(e, base + k as usize, i, y, x)
                    })?;
                }
                Ok(())
            };
            e.if_else(
                whole,
                |e| (vidx.iter().enumerate()).try_for_each(|(r, &v)| whole_round(e, r, v)),
                |e| (vidx.iter().enumerate()).try_for_each(|(r, &v)| part_round(e, r, v)),
            )?;
            e.clean32 = clean32;
            return Ok(());
        }
        // A replicate's whole tiles stage each round's copies in the subgroup's part
        // of workgroup memory (a lane's `width` values at a time) and store them from
        // there one a lane, a coalesced run (as a compaction stores its kept values).
        let repeat_stage = match repeat.filter(|rp| rp.staged) {
            Some(rp) => {
                let slots = width * rp.copies;
                let stage = e.shared_sized(rp.value.elem(), e.wg_n * slots);
                let at = e.umul(sid, sgs)?;
                let sc = e.c_u32(slots);
                Some((stage, e.umul(at, sc)?))
            }
            None => None,
        };
        // A replicate's values, where they are a plain array, read again four at
        // a time in its whole tiles.
        let repeat_src = match repeat.and_then(|rp| plain_load(cxr, &rp.value)) {
            Some((b, from, IExpr::Index)) if width == 4 && vectors(from) => {
                Some(e.vec4_source(cxr, b, from)?)
            }
            _ => None,
        };
        for (r, (row, &v)) in xs.iter().zip(&vidx).enumerate() {
            // Each element's inclusive value: held already, or (narrow) the round's
            // offset and the elements before it, widened.
            if let (true, Some(rp), Some((_, from, m)), Some(src)) =
                (recount, repeat, &map_in, &repeat_src)
            {
                let is = (0..width)
                    .map(|c| elem_at(e, v, c))
                    .collect::<R<Vec<Word>>>()?;
                let off = e.load(tt, offs[r])?;
                // A whole tile's round: the values four at a time, each one's count
                // computed from it, the inclusive counts from the round's offset.
                let whole_round = |e: &mut Self| -> R<()> {
                    let x4 = e.load_vec4(src, v, *from)?;
                    let (mut y, mut ys, mut counts) = (off, vec![], vec![]);
                    for (&x, &i) in x4.iter().zip(&is) {
                        e.operands[0] = x;
                        let c = e.expr(cxr, m, Ix::flat(i))?;
                        y = e.binop(op, t, y, c)?;
                        ys.push(y);
                        counts.push(c);
                    }
                    match repeat_stage {
                        Some(stage) => {
                            let round = RepeatRound {
                                stage,
                                items: &is,
                                ys: &ys,
                                counts: &counts,
                                values: None,
                                loaded: Some([x4[0], x4[1], x4[2], x4[3]]),
                                before: round_scans[r].0,
                                total: round_scans[r].1,
                                lane,
                                sgs,
                            };
                            e.repeat_round(cxr, rp, out, &round)
                        }
                        None => (is.iter().zip(&ys).zip(&counts))
                            .try_for_each(|((&i, &y), &c)| e.repeat_store(cxr, rp, out, i, y, c)),
                    }
                };
                // The last tile's: each element in the array read, counted and
                // stored alone.
                let part_round = |e: &mut Self| -> R<()> {
                    let yv = e.local(tt);
                    e.store(yv, off)?;
                    for &i in &is {
                        let inb = e.ult(i, cxr.n)?;
                        e.if_then(inb, |e| {
                            let x = e.expr(cxr, &rp.value, Ix::flat(i))?;
                            e.operands[0] = x;
                            let c = e.expr(cxr, m, Ix::flat(i))?;
                            let y = e.load(tt, yv)?;
                            let y = e.binop(op, t, y, c)?;
                            e.store(yv, y)?;
                            e.repeat_store(cxr, rp, out, i, y, c)
                        })?;
                    }
                    Ok(())
                };
                e.if_else(whole, whole_round, part_round)?;
                continue;
            }
            let mut ys = vec![];
            let mut acc = offs.get(r).map(|&o| e.load(tt, o)).transpose()?;
            let ws = match acc {
                Some(_) => widen_row(e, row)?,
                None => vec![],
            };
            for (k, &var) in row.iter().enumerate() {
                match acc {
                    Some(a) => {
                        let x = ws[k];
                        let y = e.binop(op, t, a, x)?;
                        acc = Some(y);
                        ys.push(y);
                    }
                    None => ys.push(e.load(tt, var)?),
                }
            }
            if let Some(rp) = repeat {
                let is = (0..width)
                    .map(|c| elem_at(e, v, c))
                    .collect::<R<Vec<Word>>>()?;
                // Each element's count, the difference of its inclusive count and
                // the one before it (the lane's first's: the lane's last's less the
                // lane's total); the last tile's elements past the end count 0.
                let mut counts = vec![];
                let mut prev =
                    e.b.i_sub(tt, None, ys[ys.len() - 1], lane_totals[r])
                        .map_err(be)?;
                for &y in &ys {
                    counts.push(e.b.i_sub(tt, None, y, prev).map_err(be)?);
                    prev = y;
                }
                // Each element its own (the last tile's, or where nothing is staged).
                let each = |e: &mut Self| -> R<()> {
                    for ((&i, &y), &count) in is.iter().zip(&ys).zip(&counts) {
                        let inb = e.ult(i, cxr.n)?;
                        e.if_then(inb, |e| e.repeat_store(cxr, rp, out, i, y, count))?;
                    }
                    Ok(())
                };
                match repeat_stage {
                    Some(stage) => {
                        let round = RepeatRound {
                            stage,
                            items: &is,
                            ys: &ys,
                            counts: &counts,
                            values: repeat_src.as_ref().map(|src| (src, v)),
                            loaded: None,
                            before: round_scans[r].0,
                            total: round_scans[r].1,
                            lane,
                            sgs,
                        };
                        e.if_else(whole, |e| e.repeat_round(cxr, rp, out, &round), each)?;
                    }
                    None => each(e)?,
                }
                continue;
            }
            let each = |e: &mut Self, checked: bool| -> R<()> {
                for (c, &y) in ys.iter().enumerate() {
                    let i = elem_at(e, v, c as u32)?;
                    if checked {
                        let inb = e.ult(i, cxr.n)?;
                        e.if_then(inb, |e| {
                            let (y, t) = stored(e, y)?;
                            e.store_fold(cxr, out, i, y, t)
                        })?;
                    } else {
                        let (y, t) = stored(e, y)?;
                        e.store_fold(cxr, out, i, y, t)?;
                    }
                }
                Ok(())
            };
            e.if_else(
                whole,
                |e| match vec_out {
                    Some(v4) => {
                        let mut zs = vec![];
                        for &y in &ys {
                            let (y, t) = stored(e, y)?;
                            let z = e.convert(y, t, out_t)?;
                            e.check_finite(cxr, out, z)?;
                            zs.push(z);
                        }
                        let y = e.b.composite_construct(vt, None, zs).map_err(be)?;
                        let p = e.b.access_chain(pvt, None, v4, [zero, v]).map_err(be)?;
                        e.store(p, y)
                    }
                    None => each(e, false),
                },
                |e| each(e, true),
            )?;
        }
        e.clean32 = clean32;
        if let Some(m) = out_part {
            e.end_if(m)?;
        }
        Ok(())
    }

    /// A round of a replicate's whole tile (see [`RepeatRound`]): the subgroup's
    /// copies of its elements' values go to one run of `out`, staged a window of
    /// `width × copies × SubgroupSize` of them at a time (all at once where the
    /// counts' bound is at most `copies`), each lane writing those of its own
    /// elements that fall in the window, then stored from there one a lane.
    fn repeat_round(
        &mut self,
        cx: &Cx,
        rp: &arrc_ir::plan::Compact,
        out: u32,
        round: &RepeatRound,
    ) -> R<()> {
        let RepeatRound {
            stage: (stage, sg_at),
            items,
            ys,
            counts,
            values,
            loaded,
            before,
            total,
            lane,
            sgs,
        } = *round;
        let u = self.u32_t;
        let vt = rp.value.elem();
        let vtt = self.ty(vt);
        let (zero, one) = (self.c_u32(0), self.c_u32(1));
        let slots = items.len() as u32 * rp.copies;
        let cap = self.c_u32(slots);
        let cap = self.umul(cap, sgs)?;
        let before = self.b.bitcast(u, None, before).map_err(be)?;
        let total = self.b.bitcast(u, None, total).map_err(be)?;
        let x4 = match (loaded, values) {
            (Some(x4), _) => Some(x4),
            (None, Some((src, v))) => Some(self.load_vec4(src, v, vt)?),
            (None, None) => None,
        };
        // Each element's count, value, and first copy's place in the round's run:
        // the copies before it, less those before the round (the same in every
        // lane: the lane's first element's less the lanes' before it, `before`).
        let mut elems = vec![];
        for (k, ((&i, &y), &count)) in items.iter().zip(ys).zip(counts).enumerate() {
            let count = self.b.bitcast(u, None, count).map_err(be)?;
            let y = self.b.bitcast(u, None, y).map_err(be)?;
            let from = self.b.i_sub(u, None, y, count).map_err(be)?;
            let x = match x4 {
                Some(x4) => x4[k],
                None => self.expr(cx, &rp.value, Ix::flat(i))?,
            };
            elems.push((count, from, x));
        }
        let start = self.b.i_sub(u, None, elems[0].1, before).map_err(be)?;
        // The window from `l`: each element's copies that fall in it staged, then
        // the window stored, a slot a lane at a time.
        let one_window = (1..=rp.copies).contains(&rp.most);
        let window = |e: &mut Self, l: Word| -> R<()> {
            if one_window {
                // Every copy is in the one window: at most `most` an element,
                // unrolled.
                for &(count, from, x) in &elems {
                    let at = e.b.i_sub(u, None, from, start).map_err(be)?;
                    for c in 0..rp.most {
                        let cc = e.c_u32(c);
                        let is = e.ult(cc, count)?;
                        e.if_then(is, |e| {
                            let s = e.uadd(at, cc)?;
                            let s = e.uadd(sg_at, s)?;
                            let ptr = e.shared_ptr(stage, vt, s)?;
                            e.store(ptr, x)
                        })?;
                    }
                }
            } else {
                let hi = e.uadd(l, cap)?;
                for &(count, from, x) in &elems {
                    let at = e.b.i_sub(u, None, from, start).map_err(be)?;
                    let a = e.umax(at, l)?;
                    let end = e.uadd(at, count)?;
                    let b = e.umin(end, hi)?;
                    let p = e.local(u);
                    e.count_loop(p, a, b, one, |e, q| {
                        let s = e.b.i_sub(u, None, q, l).map_err(be)?;
                        let s = e.uadd(sg_at, s)?;
                        let ptr = e.shared_ptr(stage, vt, s)?;
                        e.store(ptr, x)
                    })?;
                }
            }
            e.subgroup_barrier()?;
            for k in 0..slots {
                let kc = e.c_u32(k);
                let q = e.umul(kc, sgs)?;
                let q = e.uadd(q, lane)?;
                let at = e.uadd(l, q)?;
                let inr = e.ult(at, total)?;
                e.if_then(inr, |e| {
                    let s = e.uadd(sg_at, q)?;
                    let ptr = e.shared_ptr(stage, vt, s)?;
                    let x = e.load(vtt, ptr)?;
                    let g = e.uadd(start, at)?;
                    e.store_elem(cx, out, g, x)
                })?;
            }
            // The next window (or round) stages over this one.
            e.subgroup_barrier()
        };
        if one_window {
            window(self, zero)?;
        } else {
            let lo = self.local(u);
            self.count_loop(lo, zero, total, cap, window)?;
        }
        // A whole tile holds the last element where it ends the array.
        for (&i, &y) in items.iter().zip(ys) {
            self.length_at_last(cx, rp.len, i, y)?;
        }
        Ok(())
    }

    /// Element `i` of a replicate, whose inclusive count is `y` and count `count`:
    /// its value stored its count of times in `out`, from `y` less its count; the
    /// last element stores the result's length, `y`.
    fn repeat_store(
        &mut self,
        cx: &Cx,
        rp: &arrc_ir::plan::Compact,
        out: u32,
        i: Word,
        y: Word,
        count: Word,
    ) -> R<()> {
        let u = self.u32_t;
        let it = self.ty(ElemType::I32);
        let (zero, one) = (self.c_u32(0), self.c_u32(1));
        let from = self.b.i_sub(it, None, y, count).map_err(be)?;
        let from = self.b.bitcast(u, None, from).map_err(be)?;
        let count = self.b.bitcast(u, None, count).map_err(be)?;
        let x = self.expr(cx, &rp.value, Ix::flat(i))?;
        let k = self.local(u);
        self.count_loop(k, zero, count, one, |e, kv| {
            let at = e.uadd(from, kv)?;
            e.store_elem(cx, out, at, x)
        })?;
        self.length_at_last(cx, rp.len, i, y)
    }

    /// Where element `i` is the array's last, its inclusive count `y` into word 0
    /// of `len` (a compaction's or replicate's result length).
    fn length_at_last(&mut self, cx: &Cx, len: u32, i: Word, y: Word) -> R<()> {
        let one = self.c_u32(1);
        let last = self.b.i_sub(self.u32_t, None, cx.n, one).map_err(be)?;
        let is_last = self.b.i_equal(self.bool_t, None, i, last).map_err(be)?;
        let zero = self.c_u32(0);
        self.if_then(is_last, |e| e.store_elem(cx, len, zero, y))
    }

    /// The value `v` (of type `ty`) of the subgroup's last lane, in every lane.
    fn last_lanes_value(&mut self, ty: Word, v: Word, sgs: Word) -> R<Word> {
        self.uses_shuffle = true;
        let one = self.c_u32(1);
        let last = self.b.i_sub(self.u32_t, None, sgs, one).map_err(be)?;
        let sg = self.c_u32(SCOPE_SUBGROUP);
        self.b
            .group_non_uniform_shuffle(ty, None, sg, v, last)
            .map_err(be)
    }
}

/// One round of a replicate's whole tile, for [`Emitter::repeat_round`]: the
/// subgroup's part of the workgroup stage and where it starts, the lane's elements,
/// their inclusive counts and counts, where their values are read, the counts of the round's lanes before this one and
/// of the whole round (a subgroup's run), and the lane and subgroup size.
struct RepeatRound<'a> {
    stage: (Word, Word),
    items: &'a [Word],
    ys: &'a [Word],
    counts: &'a [Word],
    /// The values' array, four at a time, and the lane's vector of it.
    values: Option<(&'a Vec4Source, Word)>,
    /// The values already read, four (in place of `values`).
    loaded: Option<[Word; 4]>,
    before: Word,
    total: Word,
    lane: Word,
    sgs: Word,
}
