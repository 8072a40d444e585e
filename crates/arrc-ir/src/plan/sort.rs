//! Sorting and searching: `⍋ ⍒` by an LSD radix sort (vectors) or a bitonic network
//! (matrices, and vectors too short for the radix sort to pay), and `⍳ ∊` by binary
//! search in the grade of the keys.

use super::*;

/// A radix sort's keys in sorted order: the words its last pass wrote, of the
/// values `keys` (sorted as `elem`, inverted where `down`).
#[derive(Clone, Copy, Debug)]
pub(super) struct SortedKeys {
    buffer: usize,
    pub(super) elem: ElemType,
    down: bool,
    pub(super) keys: Value,
}

impl SortedKeys {
    /// Key `index` in sorted order, read where the sort's last pass wrote it.
    pub(super) fn read(&self, kb: &mut KernelBindings, index: IExpr) -> KExpr {
        KExpr::SortedKey {
            binding: kb.bind(self.buffer, ElemType::I32, false),
            elem: self.elem,
            down: self.down,
            index,
        }
    }
}

impl Planner<'_> {
    /// `⍋arg` (or `⍒`) into indices from `origin`: stable, ties in index order.
    pub(super) fn grade(
        &mut self,
        v: Value,
        arg: Value,
        down: bool,
        origin: i32,
        is_result: bool,
    ) -> Result<()> {
        let f = self.v.func;
        let shape = &f.ty(arg).shape;
        match known(shape) {
            Some(n) if shape.len() == 1 && n >= self.opts.radix_from.max(2) => {
                self.radix_grade(v, arg, n, down, origin, is_result);
                Ok(())
            }
            _ => self.bitonic_grade(v, arg, down, origin, is_result),
        }
    }

    /// `⍋` of a vector of `n` by an LSD radix sort over 8-bit digits: the keys as
    /// unsigned words that sort in the same order (`KernelKind::RadixKeys`), then per
    /// digit, from the least significant, a stable scatter of keys and indices to
    /// their places. 4 passes for 4-byte keys, 8 for 8-byte ones. Below
    /// `radix_lookback_below` keys a pass is one kernel (OneSweep: the keys kernel
    /// counts every pass's digits, and tiles find their places by decoupled
    /// lookback); from there each pass counts each tile's digits in a kernel of its
    /// own and scans the counts in digit-major order (the chained scan) first.
    fn radix_grade(
        &mut self,
        v: Value,
        arg: Value,
        n: u64,
        down: bool,
        origin: i32,
        is_result: bool,
    ) {
        let f = self.v.func;
        let wide = f.ty(arg).elem.size() == 8;
        let words = if wide { 2 } else { 1 };
        // A workgroup of at most 8 subgroups of the device's size (256 invocations on
        // NVIDIA, 64 on lavapipe), each ranking `items` keys per invocation: a tile
        // of up to 4096 keys and their indices in workgroup memory (40 KB with the
        // subgroups' digit counters; 18 KB on lavapipe, which has 32 KB).
        let sg = self.opts.subgroup_size.clamp(1, 128);
        let subgroups = (256 / sg).clamp(1, 8);
        let wg = subgroups * sg;
        let items = if wide {
            (self.opts.radix_items / 2).max(1)
        } else {
            self.opts.radix_items
        };
        let tile = u64::from(wg * items);
        let tiles = n.div_ceil(tile);
        let (nc, tile_c, tiles_c) = (Count::known(n), Count::known(tile), Count::known(tiles));
        let key_words = Count::known(n * words);
        let keys = [
            self.new_buffer(ElemType::I32, key_words.clone(), BufferRole::Temp),
            self.new_buffer(ElemType::I32, key_words, BufferRole::Temp),
        ];
        let idx = [
            self.new_buffer(ElemType::I32, nc.clone(), BufferRole::Temp),
            self.new_buffer(ElemType::I32, nc.clone(), BufferRole::Temp),
        ];
        let passes = 4 * words;
        let polls = self.spin_limit();
        let lookback = n < self.opts.radix_lookback_below.min(1 << 30);
        let dest = self.result_or_temp(v, is_result);
        // Where some `keys[⍋keys]` or search follows, the last pass writes the keys
        // too: read in order there, not gathered at random.
        let sorted_keys = self.sorted_by(v, arg).map(|read| SortedKeys {
            buffer: keys[(passes % 2) as usize],
            elem: f.ty(arg).elem,
            down,
            keys: read,
        });
        let shared = |kb: &mut KernelBindings, buf: usize| {
            let i = kb.bind(buf, ElemType::I32, true);
            kb.bindings[i as usize].shared_between_groups = true;
            kb.bindings[i as usize].atomic = true;
            i
        };
        let (hist, status, counter) = if lookback {
            let mut zeroed =
                |len: u64| self.new_buffer(ElemType::I32, Count::known(len), BufferRole::Zeroed);
            let hist = zeroed(256 * passes);
            let status = [zeroed(256 * tiles), zeroed(256 * tiles)];
            let counter = zeroed(passes);
            (hist, status, counter)
        } else {
            let counts =
                self.new_buffer(ElemType::I32, Count::known(256 * tiles), BufferRole::Temp);
            let starts =
                self.new_buffer(ElemType::I32, Count::known(256 * tiles), BufferRole::Temp);
            (0, [counts, starts], 0)
        };
        // Passes of 4-byte keys that would keep the order they find are not run
        // (`KernelKind::RadixArgs`): the keys kernel finds the keys' range.
        let range = (!lookback && !wide)
            .then(|| self.new_buffer(ElemType::I32, Count::known(2), BufferRole::Zeroed));
        // The keys, computed from the argument's expression (fused), and with
        // lookback every pass's digit counts.
        let mut kb = self.kb();
        let key = self.expr(arg, &IExpr::Index, &mut kb);
        let out = kb.bind(keys[0], ElemType::I32, true);
        let hist_b = lookback.then(|| (shared(&mut kb, hist), passes as u32));
        let range_b = range.map(|r| shared(&mut kb, r));
        self.bind_status(&mut kb, key.may_fail());
        let groups = self.grid(&nc, self.opts.map_groups);
        let kind = KernelKind::RadixKeys {
            key,
            out,
            down,
            hist: hist_b,
            range: range_b,
        };
        self.push_kernel("radix_keys", kind, kb, vec![("n", nc.clone())], groups);
        // The indirect dispatches of the passes after the first: (args, pass,
        // needed, groups).
        let mut indirect: Vec<(usize, u32, bool, u32)> = vec![];
        let mut second_pass = self.plan.dispatches.len();
        let tile_groups = Count::Groups {
            of: Box::new(tiles_c.clone()),
            per_group: 1,
            max: self.opts.map_groups,
        };
        // One error bit for every pass (see `KernelKind::RadixScatter`).
        let wrong_subgroups = self.error_bit(
            ErrorClass::Device,
            "the device did not run the sort as planned (another subgroup size than it reports, or a loop cut short); use --backend cpu",
            f.span(v),
        );
        for pass in 0..passes {
            let (kin, kout) = (keys[(pass % 2) as usize], keys[((pass + 1) % 2) as usize]);
            let iin = idx[(pass % 2) as usize];
            let last = pass + 1 == passes;
            let iout = if last {
                dest
            } else {
                idx[((pass + 1) % 2) as usize]
            };
            let push = || {
                vec![
                    ("n", nc.clone()),
                    ("tile", tile_c.clone()),
                    ("shift", Count::known(8 * pass)),
                    ("tiles", tiles_c.clone()),
                ]
            };
            let places = |kb: &mut KernelBindings| {
                if lookback {
                    RadixPlaces::Lookback {
                        hist: shared(kb, hist),
                        status: shared(kb, status[(pass % 2) as usize]),
                        next: shared(kb, status[((pass + 1) % 2) as usize]),
                        counter: shared(kb, counter),
                        pass: pass as u32,
                        polls,
                    }
                } else {
                    RadixPlaces::Counted {
                        starts: kb.bind(status[1], ElemType::I32, false),
                    }
                }
            };
            let first_dispatch = self.plan.dispatches.len();
            if pass == 1 {
                second_pass = first_dispatch;
            }
            if !lookback {
                let [counts, starts] = status;
                let ranged = (kin, range);
                self.radix_counts(
                    f.span(v),
                    ranged,
                    wide,
                    counts,
                    starts,
                    tiles,
                    push(),
                    &tile_groups,
                    wg,
                );
            }
            let mut kb = self.kb();
            let k_in = kb.bind(kin, ElemType::I32, false);
            let i_in = (pass > 0).then(|| kb.bind(iin, ElemType::I32, false));
            let places = places(&mut kb);
            let k_out =
                (!last || sorted_keys.is_some()).then(|| kb.bind(kout, ElemType::I32, true));
            let i_out = kb.bind(iout, ElemType::I32, true);
            let range_b = range.map(|r| kb.bind(r, ElemType::I32, false));
            self.bind_status(&mut kb, true);
            let kind = KernelKind::RadixScatter {
                keys: k_in,
                idx: i_in,
                places,
                keys_out: k_out,
                idx_out: i_out,
                wide,
                origin: if last { origin } else { 0 },
                subgroups,
                items,
                tile: tile as u32,
                wrong_subgroups,
                range: range_b,
            };
            self.push_kernel_shaped(
                if lookback {
                    "radix_pass"
                } else {
                    "radix_scatter"
                },
                kind,
                kb,
                push(),
                tile_groups.clone(),
                (wg, 1),
            );
            if range.is_some() && pass > 0 {
                for d in first_dispatch..self.plan.dispatches.len() {
                    self.indirect_pass(d, pass as u32, true, &mut indirect);
                }
            }
        }
        if let Some(range) = range {
            // Where the last passes were not run, the indices (and the keys read in
            // sorted order) go where the last pass would have left them.
            let mut kb = self.kb();
            let r = kb.bind(range, ElemType::I32, false);
            let writes_keys = sorted_keys.is_some();
            let keys_b = keys.map(|k| kb.bind(k, ElemType::I32, writes_keys));
            let idx_b = idx.map(|i| kb.bind(i, ElemType::I32, false));
            let idx_out = kb.bind(dest, ElemType::I32, true);
            let kind = KernelKind::RadixSettle {
                range: r,
                keys: keys_b,
                idx: idx_b,
                idx_out,
                origin,
                passes: passes as u32,
                sorted_keys: writes_keys,
            };
            let groups = self.grid(&nc, self.opts.map_groups);
            self.push_kernel("radix_settle", kind, kb, vec![("n", nc.clone())], groups);
            let last = self.plan.dispatches.len() - 1;
            self.indirect_pass(last, passes as u32 - 1, false, &mut indirect);
            // One invocation writes every indirect dispatch's arguments, after the
            // keys kernel and before the second pass.
            let mut kb = self.kb();
            let r = kb.bind(range, ElemType::I32, false);
            let args = indirect
                .iter()
                .map(|&(buf, pass, needed, groups)| RadixArg {
                    out: kb.bind(buf, ElemType::I32, true),
                    pass,
                    needed,
                    groups,
                })
                .collect();
            let kind = KernelKind::RadixArgs { range: r, args };
            self.push_kernel(
                "radix_args",
                kind,
                kb,
                vec![("n", Count::known(1))],
                Count::known(1),
            );
            let d = self.plan.dispatches.pop().expect("just pushed");
            self.plan.dispatches.insert(second_pass, d);
        }
        self.buffer_of[v.index()] = Some(dest);
        self.sorted_keys[v.index()] = sorted_keys;
    }

    /// The values that some instruction reads in the order of `order`, the grade of
    /// `arg`, when they are the keys it sorted: `arg` itself, or the i64 items it
    /// narrowed to i32 (`Lower::narrow_keys`: every one fits).
    fn sorted_by(&self, order: Value, arg: Value) -> Option<Value> {
        let f = self.v.func;
        let elem = f.ty(arg).elem;
        if !matches!(
            elem,
            ElemType::I32 | ElemType::I64 | ElemType::F32 | ElemType::F64
        ) {
            return None;
        }
        let narrowed = match f.inst(arg) {
            Inst::Cast(k)
                if elem == ElemType::I32
                    && f.ty(*k).elem == ElemType::I64
                    && crate::bounds::fits_i32(f, *k) =>
            {
                Some(*k)
            }
            _ => None,
        };
        f.insts.iter().find_map(|inst| match inst {
            Inst::Index { arg: k, axes }
                if matches!(axes.as_slice(), [Some(o)] if *o == order)
                    && (*k == arg || Some(*k) == narrowed) =>
            {
                Some(*k)
            }
            Inst::Search { hay, order: o, .. } if *o == order && *hay == arg => Some(*hay),
            _ => None,
        })
    }

    /// The multi-kernel sort's count kernel for a pass (`counts[d·tiles + t]`) and
    /// the chained scan of the counts into `starts` (where each tile's run of each
    /// digit ends).
    #[allow(clippy::too_many_arguments)]
    fn radix_counts(
        &mut self,
        span: Span,
        (keys, range): (usize, Option<usize>),
        wide: bool,
        counts: usize,
        starts: usize,
        tiles: u64,
        push: Vec<(&'static str, Count)>,
        groups: &Count,
        wg: u32,
    ) {
        let mut kb = self.kb();
        let k_in = kb.bind(keys, ElemType::I32, false);
        let c_out = kb.bind(counts, ElemType::I32, true);
        let range = range.map(|r| kb.bind(r, ElemType::I32, false));
        let kind = KernelKind::RadixCount {
            keys: k_in,
            wide,
            counts: c_out,
            range,
        };
        self.push_kernel_shaped("radix_count", kind, kb, push, groups.clone(), (wg, 1));
        // Where each tile's run of each digit ends: a scan of the counts.
        let mut kb = self.kb();
        let c_in = kb.bind(counts, ElemType::I32, false);
        let expr = KExpr::Load {
            binding: c_in,
            elem: ElemType::I32,
            index: IExpr::Index,
        };
        let total = Count::known(256 * tiles);
        self.chained_scan(
            span,
            BinOp::Add,
            kb,
            expr,
            starts,
            ElemType::I32,
            total,
            None,
            None,
            None,
        );
    }

    /// Makes dispatch `d` of a radix sort indirect: its workgroups where pass `pass`
    /// is needed (or, `needed` false, where it is not), none otherwise (arguments
    /// written by the sort's `RadixArgs` kernel).
    fn indirect_pass(
        &mut self,
        d: usize,
        pass: u32,
        needed: bool,
        indirect: &mut Vec<(usize, u32, bool, u32)>,
    ) {
        let groups = self.plan.dispatches[d].groups.constant().unwrap_or(0) as u32;
        let args = self.new_buffer(ElemType::I32, Count::known(3), BufferRole::Temp);
        self.plan.dispatches[d].indirect = Some(args);
        indirect.push((args, pass, needed, groups));
    }

    /// `⍋`/`⍒` by a bitonic network: its keys in a buffer, an index array padded to a
    /// power of two, and log₂P·(log₂P+1)/2 compare-and-exchange dispatches over it.
    /// For matrices (rows compared column by column) and short vectors.
    fn bitonic_grade(
        &mut self,
        v: Value,
        arg: Value,
        down: bool,
        origin: i32,
        is_result: bool,
    ) -> Result<()> {
        let f = self.v.func;
        let shape = f.ty(arg).shape.clone();
        let (Some(n), Some(cols)) = (known(&shape[..1]), known(&shape[1..])) else {
            return Err(err::unsupported(
                "grading an array whose shape is known only at run time is not supported yet",
                f.span(v),
            ));
        };
        let p = n.next_power_of_two().max(1);
        let keys = self.materialize(arg);
        let role = if is_result {
            BufferRole::Result
        } else {
            BufferRole::Temp
        };
        let idx = self.new_buffer(ElemType::I32, Count::known(p), role);
        if is_result {
            self.plan.result = idx;
        }
        // idx[i] = i + origin over the padded length.
        let mut kb = self.kb();
        let out = kb.bind(idx, ElemType::I32, true);
        let expr = KExpr::Iota {
            index: IExpr::Index,
            origin,
        };
        let pc = Count::known(p);
        let groups = self.grid(&pc, self.opts.map_groups);
        self.push_kernel(
            "grade_init",
            KernelKind::Map { expr, out },
            kb,
            vec![("n", pc)],
            groups,
        );
        if n >= 2 {
            let key_elem = f.ty(arg).elem;
            let mut kb = self.kb();
            let keys = kb.bind(keys, key_elem, false);
            let idx_b = kb.bind(idx, ElemType::I32, true);
            let kind = KernelKind::SortStep {
                keys,
                idx: idx_b,
                down,
                origin,
            };
            let pairs = Count::known(p / 2);
            let groups = self.grid(&pairs, self.opts.map_groups);
            let step = |k: u64, j: u64| {
                vec![
                    ("pairs", pairs.clone()),
                    ("len", Count::known(n)),
                    ("k", Count::known(k)),
                    ("j", Count::known(j)),
                    ("cols", Count::known(cols)),
                ]
            };
            self.push_kernel("sort_step", kind, kb, step(2, 1), groups.clone());
            let last = self.plan.dispatches.len() - 1;
            let mut k = 2;
            while k <= p {
                let mut j = k / 2;
                while j >= 1 {
                    if (k, j) != (2, 1) {
                        let mut d = self.plan.dispatches[last].clone();
                        d.push = step(k, j).into_iter().map(|(_, c)| c).collect();
                        self.plan.dispatches.push(d);
                    }
                    j /= 2;
                }
                k *= 2;
            }
        }
        self.buffer_of[v.index()] = Some(idx);
        Ok(())
    }

    /// `hay⍳needles` / `needles∊hay` by binary search in `hay` sorted by `order`.
    pub(super) fn search(
        &mut self,
        v: Value,
        hay: Value,
        order: Value,
        needles: Value,
        kind: SearchKind,
        is_result: bool,
    ) {
        let f = self.v.func;
        let elem = f.ty(hay).elem;
        let order_b = self.materialize(order);
        // Keys in order already (`⍺⍸⍵`, whose ⍺ is checked to be): read as they are.
        if matches!(f.inst(order), Inst::Iota { origin: 0, .. }) {
            let keys_b = self.materialize(hay);
            return self.search_in(v, hay, keys_b, order_b, needles, kind, is_result);
        }
        // The keys in sorted order first (one gather), so that each step of a search
        // reads one key: through `order`, a step was two dependent loads at random
        // places (on an H100 the search of 2^23 needles took 4.6 ms that way).
        // A radix sort wrote them in order: read there, not gathered.
        let keys_b = self.buffer(hay, BufferRole::Temp);
        let mut kb = self.kb();
        let expr = match self.sorted_keys[order.index()].filter(|s| s.keys == hay) {
            Some(s) => s.read(&mut kb, IExpr::Index),
            None => KExpr::Load {
                binding: {
                    let hay_b = self.materialize(hay);
                    kb.bind(hay_b, elem, false)
                },
                elem,
                index: IExpr::Data(Box::new(KExpr::Load {
                    binding: kb.bind(order_b, ElemType::I32, false),
                    elem: ElemType::I32,
                    index: IExpr::Index,
                })),
            },
        };
        self.push_map("sorted", hay, kb, expr, keys_b);
        self.search_in(v, hay, keys_b, order_b, needles, kind, is_result);
    }

    /// What a search kernel over the needles of `v` binds last: its output buffer
    /// and binding, the status word where computing a needle may fail, the
    /// needles' count (and how to find it on the device) and the grid.
    pub(super) fn search_output(
        &mut self,
        v: Value,
        is_result: bool,
        kb: &mut KernelBindings,
        may_fail: bool,
    ) -> (usize, u32, Count, Option<IExpr>, Count) {
        let out_b = self.result_or_temp(v, is_result);
        let out = kb.bind(out_b, self.v.func.ty(v).elem, true);
        self.bind_status(kb, may_fail);
        let m = self.len_of(v);
        let n_from = self.n_from(v, kb);
        let groups = self.grid(&m, self.opts.map_groups);
        (out_b, out, m, n_from, groups)
    }

    /// The search kernel of [`Planner::search`] over `hay`'s keys in order in `keys_b`.
    #[allow(clippy::too_many_arguments)]
    fn search_in(
        &mut self,
        v: Value,
        hay: Value,
        keys_b: usize,
        order_b: usize,
        needles: Value,
        kind: SearchKind,
        is_result: bool,
    ) {
        let f = self.v.func;
        let elem = f.ty(hay).elem;
        let mut kb = self.kb();
        let needle = self.expr(needles, &IExpr::Index, &mut kb);
        let keys = kb.bind(keys_b, elem, false);
        let order = kb.bind(order_b, ElemType::I32, false);
        let (out_b, out, m, n_from, groups) =
            self.search_output(v, is_result, &mut kb, needle.may_fail());
        let kind = KernelKind::Search {
            keys,
            order,
            needle,
            out,
            kind,
            tolerant: elem == ElemType::F64 && !matches!(kind, SearchKind::Interval { .. }),
        };
        let n = self.len_of(hay);
        self.push_kernel("search", kind, kb, vec![("m", m), ("n", n)], groups);
        self.set_n_from(n_from);
        self.buffer_of[v.index()] = Some(out_b);
    }
}
