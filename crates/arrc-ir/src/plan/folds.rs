//! Planning folds: `op/` of a vector (partials, then one workgroup), folds along an
//! axis (the unit that works on a row chosen from the row's length and layout),
//! right folds and dfn folds, scans (the single-pass chained scan for vectors, per
//! row otherwise), compaction (`mask/arg`, a chained scan that stores the kept
//! elements) and matrix products; f32 `+ ×` folds accumulate in f64.

use super::*;

/// The fewest workgroups a small vector fold's first pass is spread over (see
/// `Planner::reduce_shape`).
const SMALL_FOLD_GROUPS: u32 = 256;

/// Elements a fold's invocation reads at a time: four where it reads a plain 4-byte
/// array (one 16-byte load).
fn fold_lanes(expr: &KExpr) -> u32 {
    let plain = match expr {
        KExpr::Cast { arg, .. } => arg.as_ref(),
        x => x,
    };
    match plain {
        KExpr::Load {
            elem: ElemType::F32 | ElemType::I32,
            index: IExpr::Index,
            ..
        } => 4,
        _ => 1,
    }
}

/// Vector folds of at most this many elements (known when planning) are one
/// workgroup's, in one dispatch (a second dispatch and its barrier cost more than a
/// workgroup's trips over them).
const ONE_GROUP_FOLD: u64 = 1 << 14;

impl Planner<'_> {
    pub(super) fn reduce(
        &mut self,
        v: Value,
        op: BinOp,
        arg: Value,
        axis: usize,
        is_result: bool,
    ) -> Result<()> {
        let split = AxisSplit::new(&self.v.func.ty(arg).shape.clone(), axis);
        let at = self.v.func.ty(arg);
        if let (Dim::Dyn(id), BinOp::Max | BinOp::Min, true) = (split.len, op, at.elem.is_int()) {
            match (is_result, op.identity(at.elem, self.v.func.float)) {
                (true, Some(id_value)) => self.plan.empty_identity = Some((id, id_value)),
                _ => return Err(dyn_unsupported(self.v.func.span(v))),
            }
        }
        if parallel_reduce(op, self.v.func.ty(arg).elem) && known(&split.rows()) == Some(1) {
            self.reduce_vector(v, op, arg, is_result);
        } else if self.has_dyn(arg) {
            return Err(dyn_unsupported(self.v.func.span(v)));
        } else {
            if !parallel_reduce(op, self.v.func.ty(arg).elem) {
                self.check_serial(v, split.len)?;
            }
            self.reduce_axis(v, op, arg, split, is_result);
        }
        Ok(())
    }

    /// A fold that loops `trips` times in one invocation (a right fold along its axis,
    /// a scan of one row per invocation): refused where that is more loop trips than
    /// the device runs (`PlanOptions::loop_trip_limit`).
    fn check_serial(&self, v: Value, trips: Dim) -> Result<()> {
        match trips {
            Dim::Known(l) => self.within_trips(l, || format!("this fold runs {l}"), v),
            _ => Ok(()),
        }
    }

    /// Where a kernel's loop trips grow with push constant `slot`, a count `len`
    /// known only when it runs (an `arrc build` module), and the device cuts loops
    /// off: a check that the kernel raises as a device error where `len` is above
    /// `most(limit)`, the most that keeps the loop within the device's limit
    /// (`TripGuard`), binding the status word in `kb`. Add it to the kernel with
    /// [`Self::add_trip_guard`].
    pub(super) fn trip_guard(
        &mut self,
        v: Value,
        len: &Count,
        slot: u32,
        most: impl Fn(u64) -> u64,
        kb: &mut KernelBindings,
    ) -> Option<TripGuard> {
        let (None, Some(limit)) = (len.constant(), self.opts.loop_trip_limit) else {
            return None;
        };
        let bit = self.error_bit(
            ErrorClass::Device,
            &format!(
                "this array is too long for one loop here: the device stops loops after {limit} trips (compute it on the CPU, or build for another --target)"
            ),
            self.v.func.span(v),
        );
        self.bind_status(kb, true);
        let most = most(limit).min(u64::from(u32::MAX)) as u32;
        Some(TripGuard {
            push: slot,
            most,
            bit,
        })
    }

    /// [`Self::trip_guard`] of an axis kernel, whose invocations loop along an axis
    /// of `len` (push constant 1): an item a trip, or a subgroup's width.
    fn axis_trip_guard(
        &mut self,
        v: Value,
        len: Dim,
        unit: Unit,
        kb: &mut KernelBindings,
    ) -> Option<TripGuard> {
        let per_trip = match unit {
            Unit::Subgroup => self.opts.subgroup_size.max(1) as u64,
            _ => 1,
        };
        let len = Count::Product(vec![len]);
        self.trip_guard(v, &len, 1, |l| l * per_trip, kb)
    }

    /// Adds `guard` (from [`Self::trip_guard`]) to the kernel pushed last.
    pub(super) fn add_trip_guard(&mut self, guard: Option<TripGuard>) {
        if let (Some(g), Some(k)) = (guard, self.plan.kernels.last_mut()) {
            k.trip_guards.push(g);
        }
    }

    /// Refuses (NOT YET SUPPORTED, at `v`'s span) work of `trips` loop trips in one
    /// invocation where the device stops loops before (`PlanOptions::
    /// loop_trip_limit`); `what` says what runs them ("this fold runs 70000").
    pub(super) fn within_trips(
        &self,
        trips: u64,
        what: impl Fn() -> String,
        v: Value,
    ) -> Result<()> {
        match self.opts.loop_trip_limit {
            Some(limit) if trips > limit => Err(err::unsupported(
                format!(
                    "{} loop trips in one invocation, and this device stops loops after {limit}",
                    what()
                ),
                self.v.func.span(v),
            )),
            _ => Ok(()),
        }
    }

    /// Where the device cuts loops off (`PlanOptions::loop_trip_limit`): a chained
    /// scan's lookback may take half the limit's trips, and raises a device error
    /// past them (`LookbackBudget`).
    fn lookback_budget(&mut self, span: &Span) -> Option<LookbackBudget> {
        let limit = self.opts.loop_trip_limit?;
        let bit = self.error_bit(
            ErrorClass::Device,
            &format!(
                "a scan waited on other workgroups longer than this device's loops run ({limit} trips in all); run it again, or on another device"
            ),
            span.clone(),
        );
        Some(LookbackBudget {
            trips: (limit / 2).min(u64::from(u32::MAX)) as u32,
            bit,
        })
    }

    /// The items an invocation of a vector fold's first pass takes each trip, and
    /// its workgroups. A plain 4-byte array is read four elements a load, so a
    /// trip covers four times the items. Where the vector's length is known and
    /// small, fewer items a trip, so that at least [`SMALL_FOLD_GROUPS`] workgroups
    /// share the work (H200, `+/` of 2^20 f32: 64 workgroups of 16 four-element
    /// items took 12.9 µs, 256 of 4 took 12.0).
    fn reduce_shape(&self, n: &Count, expr: &KExpr) -> (u32, Count) {
        let wg = self.opts.workgroup_size;
        let lanes = fold_lanes(expr);
        let most = self.opts.items_per_thread.max(1);
        let items = match n.constant() {
            Some(len) => {
                let fill = len / (wg as u64 * lanes as u64 * SMALL_FOLD_GROUPS as u64);
                let pow = if fill == 0 { 1 } else { 1 << fill.ilog2() };
                pow.clamp(1, most as u64) as u32
            }
            None => most,
        };
        let groups = Count::Groups {
            of: Box::new(n.clone()),
            per_group: wg * items * lanes,
            max: self.opts.reduce_groups,
        };
        (items, groups)
    }

    /// Where a vector fold is one workgroup's (its length known and at most
    /// [`ONE_GROUP_FOLD`] elements), the items an invocation takes a trip: enough
    /// for one trip over it all, at most `items_per_thread`.
    fn one_group_fold(&self, n: &Count, expr: &KExpr) -> Option<u32> {
        let len = n.constant().filter(|&l| l <= ONE_GROUP_FOLD)?;
        let per_trip = u64::from(self.opts.workgroup_size) * u64::from(fold_lanes(expr));
        let items = len.div_ceil(per_trip.max(1)).max(1).next_power_of_two();
        Some(items.min(u64::from(self.opts.items_per_thread.max(1))) as u32)
    }

    /// The one workgroup that folds a vector fold's last `n` values (`expr`; `fails`
    /// where evaluating it may raise an error) and stores `v`'s value in binding
    /// `out`, checked for overflow where it must be.
    fn final_fold(
        &mut self,
        (v, op, is_result): (Value, BinOp, bool),
        mut kb: KernelBindings,
        (expr, out, fails): (KExpr, u32, bool),
        n: Count,
        items: u32,
    ) {
        let overflow = self.overflow_bit(v, &Fold::Assoc(op), is_result);
        self.bind_status(&mut kb, fails || overflow.is_some());
        let kind = KernelKind::Reduce {
            op,
            expr,
            out,
            overflow,
            finish: None,
        };
        let shape = (self.opts.workgroup_size, items);
        self.push_kernel_shaped("reduce", kind, kb, vec![("n", n)], Count::known(1), shape);
    }

    /// `op/` of a vector: a grid-stride pass of partials, then one workgroup folds them.
    fn reduce_vector(&mut self, v: Value, op: BinOp, arg: Value, is_result: bool) {
        let elem = self.v.func.ty(v).elem;
        let acc = self.accumulator(&Fold::Assoc(op), elem);
        let n = self.len_of(arg);
        let groups = self.grid(&n, self.opts.reduce_groups);
        if self.opts.single_pass_reduce {
            // One dispatch: the last workgroup done folds the partials.
            let words = Count::Scaled {
                of: Box::new(groups.clone()),
                times: 2,
            };
            let partials = self.new_buffer(ElemType::I32, words, BufferRole::Temp);
            let counter = self.new_buffer(ElemType::I32, Count::known(1), BufferRole::Zeroed);
            let b = self.result_or_temp(v, is_result);
            let mut kb = self.kb();
            let expr = widen(self.expr(arg, &IExpr::Index, &mut kb), acc);
            let out = kb.bind(b, elem, true);
            let mut shared = |buf: usize| {
                let i = kb.bind(buf, ElemType::I32, true);
                kb.bindings[i as usize].shared_between_groups = true;
                kb.bindings[i as usize].atomic = true;
                i
            };
            let finish = Finish {
                partials: shared(partials),
                counter: shared(counter),
            };
            // The items' errors first, then the result's overflow.
            let overflow = self.overflow_bit(v, &Fold::Assoc(op), is_result);
            self.bind_status(&mut kb, expr.may_fail() || overflow.is_some());
            let n_from = self.n_from(arg, &mut kb);
            let kind = KernelKind::Reduce {
                op,
                expr,
                out,
                overflow,
                finish: Some(finish),
            };
            self.push_kernel("reduce", kind, kb, vec![("n", n)], groups);
            self.set_n_from(n_from);
            self.buffer_of[v.index()] = Some(b);
            return;
        }
        // Pass 1: each workgroup folds its grid-stride share into partials[g].
        let mut kb = self.kb();
        let expr = widen(self.expr(arg, &IExpr::Index, &mut kb), acc);
        let one_group = self
            .one_group_fold(&n, &expr)
            .filter(|_| !self.has_dyn(arg));
        if let Some(items) = one_group {
            // A short vector whose length is known when planning (not a bound on a
            // length the device computes): one workgroup folds it all, in a fixed
            // order, and stores the result (no second dispatch).
            let b = self.result_or_temp(v, is_result);
            let out = kb.bind(b, elem, true);
            let fails = expr.may_fail();
            self.final_fold((v, op, is_result), kb, (expr, out, fails), n, items);
            self.buffer_of[v.index()] = Some(b);
            return;
        }
        let (items, groups) = self.reduce_shape(&n, &expr);
        let partials = self.new_buffer(acc, groups.clone(), BufferRole::Temp);
        let out = kb.bind(partials, acc, true);
        self.bind_status(&mut kb, expr.may_fail());
        let n_from = self.n_from(arg, &mut kb);
        let kind = KernelKind::Reduce {
            op,
            expr,
            out,
            overflow: None,
            finish: None,
        };
        let shape = (self.opts.workgroup_size, items);
        self.push_kernel_shaped("reduce", kind, kb, vec![("n", n)], groups.clone(), shape);
        let args = self.set_n_from(n_from);
        // Pass 2: one workgroup folds the partials, in a fixed order: the same input
        // gives the same bits on every run.
        let b = self.result_or_temp(v, is_result);
        let mut kb = self.kb();
        let pin = kb.bind(partials, acc, false);
        let out = kb.bind(b, elem, true);
        let expr = KExpr::Load {
            binding: pin,
            elem: acc,
            index: IExpr::Index,
        };
        // With an indirect first pass, its workgroup count is the first argument word.
        let n_from = args.map(|a| {
            let binding = kb.bind(a, ElemType::I32, false);
            IExpr::Data(Box::new(KExpr::Load {
                binding,
                elem: ElemType::I32,
                index: IExpr::Const(0),
            }))
        });
        // Partials may overflow; the result is checked.
        let items = self.opts.items_per_thread;
        self.final_fold((v, op, is_result), kb, (expr, out, false), groups, items);
        if let Some(k) = self.plan.kernels.last_mut() {
            k.n_from = n_from;
        }
        self.buffer_of[v.index()] = Some(b);
    }

    /// A dfn fold's step as a kernel expression of `Operand`s 0 (⍺) and 1 (⍵), its
    /// errors numbered after the items'.
    /// A fold's final form once its items' expression exists: a dfn fold's step, or a
    /// right fold's error bit, is numbered after the items' errors. Also whether the
    /// fold step itself can raise an error.
    fn fold_after_items(
        &mut self,
        v: Value,
        fold: Fold,
        elem: ElemType,
        kb: &mut KernelBindings,
    ) -> (Fold, bool) {
        match fold {
            Fold::Right { .. } if self.dfn_src.is_some() => {
                if let Some((c, r, span)) = self.dfn_src.take() {
                    self.dfn = Some(self.comb(&c, r, &span, kb));
                }
                let fails = self.dfn.as_ref().is_some_and(|c| c.may_fail());
                // Lowering refuses a known empty axis; a run-time one is checked here.
                let f = self.v.func;
                let empty_error = match f.inst(v) {
                    Inst::FoldDfn {
                        arg,
                        axis,
                        scan: false,
                        ..
                    } if !matches!(f.ty(*arg).shape[*axis], Dim::Known(_)) => Some(self.error_bit(
                        ErrorClass::Domain,
                        "this function has no identity element for an empty reduction",
                        f.span(v),
                    )),
                    _ => None,
                };
                (Fold::Dfn { empty_error }, fails || empty_error.is_some())
            }
            Fold::Right { op, .. } => {
                let f = self.right_fold(v, op, elem);
                (
                    f,
                    matches!(
                        f,
                        Fold::Right {
                            error_bit: Some(_),
                            ..
                        }
                    ),
                )
            }
            f => (f, false),
        }
    }

    /// `r` is the fold's type (⍺'s and ⍵'s).
    fn comb(&mut self, c: &Comb, r: ElemType, span: &Span, kb: &mut KernelBindings) -> KExpr {
        match c {
            Comb::Outer(v) => self.expr(*v, &IExpr::Const(0), kb),
            Comb::Alpha | Comb::Omega => KExpr::Operand {
                k: u8::from(matches!(c, Comb::Omega)),
                elem: r,
            },
            Comb::Const(s) => KExpr::Const(*s),
            Comb::Cast { to, arg } => KExpr::Cast {
                to: *to,
                arg: Box::new(self.comb(arg, r, span, kb)),
            },
            Comb::Select { cond, then, els } => KExpr::If {
                cond: Box::new(self.comb(cond, r, span, kb)),
                then: Box::new(self.comb(then, r, span, kb)),
                els: Box::new(self.comb(els, r, span, kb)),
            },
            Comb::Unary { op, elem, arg } => {
                let arg = Box::new(self.comb(arg, r, span, kb));
                let error_bit = op
                    .device_error(arg.elem(), *elem)
                    .map(|m| self.error_bit(ErrorClass::Domain, m, span.clone()));
                KExpr::Unary {
                    op: *op,
                    elem: *elem,
                    arg,
                    error_bit,
                }
            }
            Comb::Binary { op, elem, lhs, rhs } => {
                let rhs = Box::new(self.comb(rhs, r, span, kb));
                let lhs = Box::new(self.comb(lhs, r, span, kb));
                let error_bit = op
                    .device_error(lhs.elem())
                    .map(|m| self.error_bit(ErrorClass::Domain, m, span.clone()));
                KExpr::Binary {
                    op: *op,
                    elem: *elem,
                    lhs,
                    rhs,
                    error_bit,
                }
            }
        }
    }

    /// The type a fold over values of type `elem` accumulates in: f64 for an
    /// associative f32 `+` or `×` where the device has it (`PlanOptions::wide_folds`).
    pub(super) fn accumulator(&self, fold: &Fold, elem: ElemType) -> ElemType {
        let wide = self.opts.wide_folds && self.opts.float64 && elem == ElemType::F32;
        match fold {
            Fold::Assoc(BinOp::Add | BinOp::Mul) if wide => ElemType::F64,
            _ => elem,
        }
    }

    fn right_fold(&mut self, v: Value, op: BinOp, elem: ElemType) -> Fold {
        let span = self.v.func.span(v);
        let error_bit = op
            .device_error(elem)
            .map(|m| self.error_bit(ErrorClass::Domain, m, span));
        Fold::Right { op, error_bit }
    }

    /// Grid for `units` rows (or row pieces) handled by `unit`s.
    fn unit_groups(&self, unit: Unit, units: Count) -> Count {
        let per_group = match unit {
            Unit::Thread => self.opts.workgroup_size,
            Unit::Quad => self.opts.workgroup_size * 4,
            Unit::Subgroup => (self.opts.workgroup_size / self.opts.subgroup_size.max(1)).max(1),
            Unit::Workgroup => 1,
        };
        Count::Groups {
            of: Box::new(units),
            per_group,
            max: self.opts.map_groups,
        }
    }

    /// `op/[axis]` with several rows. The unit working on a row is chosen from the row
    /// length and layout: contiguous short rows one per invocation, medium ones one
    /// per subgroup, long ones one workgroup per piece; rows strided in memory (a
    /// first-axis reduction) one per invocation, so neighbours read neighbours, split
    /// into pieces when there are too few rows to fill the device. Pieces are folded
    /// by a second pass. Non-associative functions fold each row right to left in one
    /// invocation.
    fn reduce_axis(&mut self, v: Value, op: BinOp, arg: Value, split: AxisSplit, is_result: bool) {
        let elem = self.v.func.ty(v).elem;
        let rows_dims = split.rows();
        let rows_n = known(&rows_dims);
        let len_n = known(&[split.len]);
        let contiguous = known(&split.post) == Some(1);
        let (wg, items) = (
            self.opts.workgroup_size as u64,
            self.opts.items_per_thread as u64,
        );
        let busy = self.opts.busy_groups as u64;
        let (fold, unit, parts) = if !parallel_reduce(op, elem) {
            (
                Fold::Right {
                    op,
                    error_bit: None,
                },
                Unit::Thread,
                1,
            )
        } else if contiguous {
            match len_n {
                Some(l) if l <= 8 => (Fold::Assoc(op), Unit::Thread, 1),
                Some(l) if l <= 4096 => (Fold::Assoc(op), Unit::Subgroup, 1),
                Some(l) => {
                    let want = busy.div_ceil(rows_n.unwrap_or(busy).max(1));
                    let parts = want.min(l.div_ceil(wg * items)).max(1);
                    (Fold::Assoc(op), Unit::Workgroup, parts)
                }
                None => (Fold::Assoc(op), Unit::Subgroup, 1),
            }
        } else {
            let parts = match (rows_n, len_n) {
                (Some(r), Some(l)) => (busy * wg).div_ceil(r.max(1)).min(l / 64).max(1),
                _ => 1,
            };
            // Rows come in fours in memory where the axes after the folded one span a
            // multiple of 4 elements. Four columns per invocation pay where the fold
            // is bound by bandwidth (on an H100, `+⌿` of 2^14×2^14 f32: 383 → 361 µs)
            // and cost where it is bound by latency (a quarter of the invocations:
            // 1024×1024 f32 14.0 → 16.0 µs, 4096×4096 i32 39.4 → 41.4 µs).
            let big = matches!((rows_n, len_n), (Some(r), Some(l)) if r * l >= self.opts.quad_columns_from);
            let quads = big && matches!(known(&split.post), Some(p) if p % 4 == 0);
            let unit = if quads { Unit::Quad } else { Unit::Thread };
            (Fold::Assoc(op), unit, parts)
        };
        let parts = parts.min(u32::MAX as u64 / 2) as u32;
        let acc = self.accumulator(&fold, elem);
        let rows = Count::Product(rows_dims.clone());
        let units = Count::Scaled {
            of: Box::new(rows.clone()),
            times: parts,
        };
        let target = if parts == 1 {
            self.result_or_temp(v, is_result)
        } else {
            self.new_buffer(acc, units.clone(), BufferRole::Temp)
        };
        let mut kb = self.kb();
        let idx = split.index(&mut kb);
        let expr = widen(self.expr(arg, &idx, &mut kb), acc);
        // The fold's own errors come after its items' (bits in evaluation order).
        let (fold, fold_fails) = self.fold_after_items(v, fold, elem, &mut kb);
        let out = kb.bind(target, if parts == 1 { elem } else { acc }, true);
        let overflow = if parts == 1 {
            self.overflow_bit(v, &fold, is_result)
        } else {
            None
        };
        self.bind_status(&mut kb, fold_fails || expr.may_fail() || overflow.is_some());
        let guard = self.axis_trip_guard(v, split.len, unit, &mut kb);
        let groups = self.unit_groups(unit, units);
        let push = vec![
            ("rows", rows.clone()),
            ("len", Count::Product(vec![split.len])),
            ("parts", Count::known(parts as u64)),
        ];
        let kind = KernelKind::ReduceAxis {
            fold,
            expr,
            out,
            unit,
            overflow,
        };
        self.push_kernel("reduce_axis", kind, kb, push, groups);
        self.add_trip_guard(guard);
        if parts > 1 {
            // Pass 2: fold each row's pieces (stored piece-major: a column fold).
            let b = self.result_or_temp(v, is_result);
            let mut kb = self.kb();
            let pin = kb.bind(target, acc, false);
            let r = kb.product(&rows_dims);
            let expr = KExpr::Load {
                binding: pin,
                elem: acc,
                index: IExpr::plus(IExpr::times(IExpr::Pos, r), IExpr::Row),
            };
            let out = kb.bind(b, elem, true);
            let overflow = self.overflow_bit(v, &fold, is_result);
            self.bind_status(&mut kb, overflow.is_some());
            let push = vec![
                ("rows", rows.clone()),
                ("len", Count::known(parts as u64)),
                ("parts", Count::known(1)),
            ];
            let kind = KernelKind::ReduceAxis {
                fold,
                expr,
                out,
                unit: Unit::Thread,
                overflow,
            };
            let groups = self.unit_groups(Unit::Thread, rows);
            self.push_kernel("reduce_axis", kind, kb, push, groups);
            self.buffer_of[v.index()] = Some(b);
        } else {
            self.buffer_of[v.index()] = Some(target);
        }
    }

    pub(super) fn scan(
        &mut self,
        v: Value,
        op: BinOp,
        arg: Value,
        axis: usize,
        is_result: bool,
    ) -> Result<()> {
        let split = AxisSplit::new(&self.v.func.ty(arg).shape.clone(), axis);
        let elem = self.v.func.ty(v).elem;
        if parallel(op, elem) && known(&split.rows()) == Some(1) {
            self.scan_vector(v, op, arg, is_result);
            return Ok(());
        }
        if self.has_dyn(arg) {
            return Err(dyn_unsupported(self.v.func.span(v)));
        }
        let contiguous = known(&split.post) == Some(1);
        let short = matches!(split.len, Dim::Known(l) if l <= 8);
        let (fold, unit) = if !parallel(op, elem) {
            (
                Fold::Right {
                    op,
                    error_bit: None,
                },
                Unit::Thread,
            )
        } else if contiguous && !short {
            (Fold::Assoc(op), Unit::Subgroup)
        } else {
            (Fold::Assoc(op), Unit::Thread)
        };
        // Each invocation loops along the axis: once per element (one row per
        // invocation, or a right fold's prefix), or once per subgroup width.
        let trips = match (split.len, unit) {
            (Dim::Known(l), Unit::Subgroup) => {
                Dim::Known(l / self.opts.subgroup_size.max(1) as u64)
            }
            (len, _) => len,
        };
        self.check_serial(v, trips)?;
        let rows = Count::Product(split.rows());
        let b = self.result_or_temp(v, is_result);
        let mut kb = self.kb();
        let idx = split.index(&mut kb);
        let acc = self.accumulator(&fold, elem);
        let expr = widen(self.expr(arg, &idx, &mut kb), acc);
        let (fold, fold_fails) = self.fold_after_items(v, fold, elem, &mut kb);
        let out = kb.bind(b, elem, true);
        let overflow = self.overflow_bit(v, &fold, is_result);
        self.bind_status(&mut kb, fold_fails || expr.may_fail() || overflow.is_some());
        // A right fold's prefixes are independent: one invocation per element.
        let units = match fold {
            Fold::Assoc(_) => rows.clone(),
            _ => {
                let mut dims = split.rows();
                dims.push(split.len);
                Count::Product(dims)
            }
        };
        let guard = self.axis_trip_guard(v, split.len, unit, &mut kb);
        let groups = self.unit_groups(unit, units);
        let push = vec![("rows", rows), ("len", Count::Product(vec![split.len]))];
        let kind = KernelKind::ScanAxis {
            fold,
            expr,
            out,
            out_index: idx,
            unit,
            overflow,
        };
        self.push_kernel("scan_axis", kind, kb, push, groups);
        self.add_trip_guard(guard);
        self.buffer_of[v.index()] = Some(b);
        Ok(())
    }

    pub(super) fn matmul(
        &mut self,
        v: Value,
        (lhs, rhs): (Value, Value),
        (fold, pair): (BinOp, BinOp),
        is_result: bool,
    ) -> Result<()> {
        let f = self.v.func;
        let (m, k) = (f.ty(lhs).shape[0], f.ty(lhs).shape[1]);
        let n = f.ty(rhs).shape[1];
        let booleans = f.ty(lhs).elem == ElemType::Bool && f.ty(rhs).elem == ElemType::Bool;
        if let Some(bits) = BitProduct::of(fold, pair).filter(|_| booleans) {
            return self.bit_matmul(v, (lhs, rhs), (m, k, n), (fold, bits), is_result);
        }
        let out_b;
        if (fold, pair) == (BinOp::Add, BinOp::Mul) && self.takes_int8_matrices(v, (lhs, rhs)) {
            out_b = self.result_or_temp(v, is_result);
            self.int8_matmul(v, (lhs, rhs), out_b, None)?;
        } else if let Some(tiers) = self.range_tiers(v, (lhs, rhs), (fold, pair)) {
            // An integer product the bounds leave open: kernels see how large the
            // operands are, and the fastest product exact for them runs (8-bit
            // matrices, i32 tiles, or the checked tiles); every workgroup of the
            // others returns at once.
            out_b = self.result_or_temp(v, is_result);
            let flags = self.range_flags((lhs, rhs), &tiers);
            // (With 8-bit matrices: words 0 and 1 for them, 2 for the i32 tiles.)
            let i32_word = if tiers.int8 { 2 } else { 0 };
            let mut planned = Ok(());
            if tiers.int8 {
                planned = self.int8_matmul(v, (lhs, rhs), out_b, Some((flags, &tiers)));
            }
            // Past what the 8-bit products take: ±16319 with slices, else ±127.
            let past_int8 = tiers.int8.then_some(if tiers.slices { 1 } else { 0 });
            let ways = [
                ((Some(i32_word), past_int8), true),
                ((None, Some(i32_word)), false),
            ];
            for ((zero, nonzero), small) in ways {
                planned = planned.and_then(|()| {
                    self.guard = Some((flags, zero, nonzero));
                    self.tiled_matmul(v, (lhs, rhs), (fold, pair), (out_b, is_result), small)
                });
            }
            self.guard = None;
            planned?;
        } else {
            out_b = self.result_or_temp(v, is_result);
            self.tiled_matmul(v, (lhs, rhs), (fold, pair), (out_b, is_result), false)?;
        }
        self.buffer_of[v.index()] = Some(out_b);
        Ok(())
    }

    /// `fold.pair` of `lhs` and `rhs` into buffer `out_b` in the tiled kernel;
    /// with `small`, an integer `+.×` whose operands are known (on the device) to be
    /// small enough that it folds in i32 with no checks.
    fn tiled_matmul(
        &mut self,
        v: Value,
        (lhs, rhs): (Value, Value),
        (fold, pair): (BinOp, BinOp),
        (out_b, is_result): (usize, bool),
        small: bool,
    ) -> Result<()> {
        let f = self.v.func;
        let (m, k) = (f.ty(lhs).shape[0], f.ty(lhs).shape[1]);
        let n = f.ty(rhs).shape[1];
        let mut kb = self.kb();
        let elem = f.ty(v).elem;
        let mut a = self.expr(lhs, &IExpr::Index, &mut kb);
        let mut b = self.expr(rhs, &IExpr::Index, &mut kb);
        // (`small`: the device found the sums within i32.)
        let int_sums = if small {
            Some(0)
        } else {
            integer_sum_bound(f, lhs, rhs)
        };
        let mut checked_sum = None;
        let pair = if (fold, pair) == (BinOp::Add, BinOp::Mul) && elem.is_float() {
            // An f32 product accumulates in f64 (f32 products are exact there).
            let acc = self.accumulator(&Fold::Assoc(BinOp::Add), elem);
            (a, b) = (widen(a, acc), widen(b, acc));
            None
        } else if (fold, pair) == (BinOp::Add, BinOp::Mul) && int_sums.is_some_and(|s| s < 1 << 63)
        {
            // An integer product whose sums the operands' bounds keep within i64 needs
            // no checks, and one whose sums they keep within i32 is computed in i32
            // (stored in the result's type): twice as fast as i64 on a GPU.
            if int_sums.is_some_and(|s| s < 1 << 31) {
                (a, b) = (in_i32(a), in_i32(b));
            }
            None
        } else {
            // An integer `+.×` the bounds leave open: each pair (in i64, checked as
            // `×` is) and each partial sum checked.
            if (fold, pair) == (BinOp::Add, BinOp::Mul) {
                let span = f.span(v);
                checked_sum = Some(self.error_bit(
                    ErrorClass::Domain,
                    "integer result does not fit in 64 bits",
                    span,
                ));
            }
            // Any other pair is computed as an elementwise `pair` is, its errors
            // raised alike, from the operands' values (`KExpr::Operand` 0 and 1).
            // (No check where the operands' bounds show that none can fail: `⌈.+`
            // of i32 items, summed in i64.)
            let ot = f.ty(lhs).elem;
            let span = f.span(v);
            let error_bit = pair
                .device_error(ot)
                .filter(|_| !integer_fits(f, pair, lhs, rhs, self.opts.float64))
                .map(|m| self.error_bit(ErrorClass::Domain, m, span));
            let operand = |k: u8| Box::new(KExpr::Operand { k, elem: ot });
            let pair = KExpr::Binary {
                op: pair,
                elem: pair.result_type(ot, ot, f.float),
                lhs: operand(0),
                rhs: operand(1),
                error_bit,
            };
            Some(pair)
        };
        let out = kb.bind(out_b, elem, true);
        // A float product of finite items can leave the type's range.
        let overflow = self.overflow_bit(v, &Fold::Assoc(fold), is_result);
        let fails = pair.as_ref().is_some_and(KExpr::may_fail);
        self.bind_status(
            &mut kb,
            a.may_fail() || b.may_fail() || fails || overflow.is_some() || checked_sum.is_some(),
        );
        let kind = KernelKind::MatMul {
            a,
            b,
            fold,
            pair,
            out,
            tile: MatMulTile::SMALL,
            overflow,
            bits: None,
            checked_sum,
        };
        let k = Count::Product(vec![k]);
        self.push_matmul(v, kind, kb, (m, n, k))
    }

    /// `fold.pair` of boolean matrices as `BitProduct` says: each operand packed 32
    /// elements to a word (`a` along its rows, `b` down its columns; fused operands
    /// evaluated once, there), then the tiled product of the words, 32 pairs at a
    /// time. The packed operands are 1/32 of the booleans' bytes, so the tiles read
    /// them from the cache.
    fn bit_matmul(
        &mut self,
        v: Value,
        (lhs, rhs): (Value, Value),
        (m, k, n): (Dim, Dim, Dim),
        (fold, bits): (BinOp, BitProduct),
        is_result: bool,
    ) -> Result<()> {
        let f = self.v.func;
        let words = |d: Dim| Count::Groups {
            of: Box::new(Count::Product(vec![d])),
            per_group: 32,
            max: u32::MAX,
        };
        let mut packed = [0; 2];
        for (i, (arg, r, c)) in [(lhs, m, k), (rhs, k, n)].into_iter().enumerate() {
            let cols = i == 1;
            let len = if cols {
                Count::Times(vec![words(r), Count::Product(vec![c])])
            } else {
                Count::Times(vec![Count::Product(vec![r]), words(c)])
            };
            let b = self.new_buffer(ElemType::I32, len.clone(), BufferRole::Temp);
            let mut kb = self.kb();
            let expr = self.expr(arg, &IExpr::Index, &mut kb);
            let out = kb.bind(b, ElemType::I32, true);
            self.bind_status(&mut kb, expr.may_fail());
            let kind = KernelKind::PackBits {
                arg: expr,
                out,
                cols,
                invert: bits.negate,
            };
            // The words along a packed line: the kernel finds a word's place by them.
            let line = if cols { words(r) } else { words(c) };
            let push = vec![
                ("n", len.clone()),
                ("r", Count::Product(vec![r])),
                ("c", Count::Product(vec![c])),
                ("w", line),
            ];
            let groups = self.grid(&len, self.opts.map_groups);
            self.push_kernel("pack_bits", kind, kb, push, groups);
            packed[i] = b;
        }
        let mut kb = self.kb();
        let mut word = |b: usize| KExpr::Load {
            binding: kb.bind(b, ElemType::I32, false),
            elem: ElemType::I32,
            index: IExpr::Index,
        };
        let (a, b) = (word(packed[0]), word(packed[1]));
        let out_b = self.result_or_temp(v, is_result);
        let out = kb.bind(out_b, f.ty(v).elem, true);
        self.bind_status(&mut kb, false);
        let kind = KernelKind::MatMul {
            a,
            b,
            fold,
            pair: None,
            out,
            tile: MatMulTile::SMALL,
            overflow: None,
            bits: Some(bits),
            checked_sum: None,
        };
        self.push_matmul(v, kind, kb, (m, n, words(k)))?;
        self.buffer_of[v.index()] = Some(out_b);
        Ok(())
    }

    /// Pushes a `MatMul` kernel of `m×n` outputs over `k` steps, in large tiles
    /// (8×8 outputs per invocation) where there are enough of them, with as many
    /// steps as fit the workgroup memory for the elements it stages, of `a`'s type
    /// (as `emit/matmul.rs` stages them).
    fn push_matmul(
        &mut self,
        v: Value,
        mut kind: KernelKind,
        mut kb: KernelBindings,
        (m, n, k): (Dim, Dim, Count),
    ) -> Result<()> {
        let KernelKind::MatMul {
            a,
            tile,
            checked_sum,
            ..
        } = &mut kind
        else {
            unreachable!("push_matmul takes a MatMul kernel")
        };
        let outputs = match (m, n) {
            (Dim::Known(m), Dim::Known(n)) => m.saturating_mul(n),
            _ => 0,
        };
        // A product checking its sums takes the small tile: on the H200, i32 `+.×` of
        // 2048² took 33.6 ms in 128×128 tiles (i64 sums and their wrap counts in
        // registers) and 5.1 ms in 64×64.
        if outputs >= self.opts.matmul_large_from && checked_sum.is_none() {
            let staged = a.elem().size() as u32;
            *tile = self
                .opts
                .matmul_tile
                .fitted(self.opts.max_shared_bytes, staged);
        }
        let tile = *tile;
        let tiles = |d: Dim, side: u32| Count::Groups {
            of: Box::new(Count::Product(vec![d])),
            per_group: side,
            max: u32::MAX,
        };
        let all_tiles = Count::Times(vec![tiles(m, tile.tile_m()), tiles(n, tile.tile_n())]);
        let groups = Count::Groups {
            of: Box::new(all_tiles.clone()),
            per_group: 1,
            max: self.opts.map_groups,
        };
        // Each invocation loops over its tiles and, in each, over `k` a step at a
        // time (two loop trips a step where a pair is computed: on lavapipe, the
        // last step's loop counts too). Where the device cuts loops off
        // (`loop_trip_limit`) past that, the product is refused: `+.×` of 4×600000
        // and 600000×4 f32 matrices summed 524280 of the 600000 there.
        // Where `k` is known only when the kernel runs (an `arrc build` module), the
        // kernel checks it (at least one tile an invocation); where the tiles are,
        // the check takes one tile an invocation.
        let steps = u64::from(tile.steps);
        if let Some(len) = k.constant() {
            let each = all_tiles.constant().map_or(1, |all| {
                all.div_ceil(all.clamp(1, u64::from(self.opts.map_groups)))
            });
            let trips = each.saturating_mul(2 * len.div_ceil(steps) + 8);
            self.within_trips(trips, || format!("this product runs about {trips}"), v)?;
        }
        let guard = self.trip_guard(v, &k, 2, |l| l.saturating_sub(8) / 2 * steps, &mut kb);
        let push = vec![
            ("m", Count::Product(vec![m])),
            ("n", Count::Product(vec![n])),
            ("k", k),
        ];
        self.push_kernel("matmul", kind, kb, push, groups);
        self.add_trip_guard(guard);
        // The tile shape needs exactly 256 invocations.
        if let Some(kernel) = self.plan.kernels.last_mut() {
            kernel.workgroup_size = 256;
        }
        Ok(())
    }

    fn scan_vector(&mut self, v: Value, op: BinOp, arg: Value, is_result: bool) {
        let elem = self.v.func.ty(v).elem;
        let n = self.len_of(arg);
        let b = self.result_or_temp(v, is_result);
        let mut kb = self.kb();
        let acc = self.accumulator(&Fold::Assoc(op), elem);
        let expr = widen(self.expr(arg, &IExpr::Index, &mut kb), acc);
        let n_from = self.n_from(arg, &mut kb);
        let overflow = self.overflow_bit(v, &Fold::Assoc(op), is_result);
        let span = self.v.func.span(v);
        self.chained_scan(span, op, kb, expr, b, elem, n, n_from, overflow, None);
        self.buffer_of[v.index()] = Some(b);
    }

    /// A single-pass chained scan of `expr` (bindings in `kb`) into buffer `out_b`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn chained_scan(
        &mut self,
        span: Span,
        op: BinOp,
        kb: KernelBindings,
        expr: KExpr,
        out_b: usize,
        elem: ElemType,
        n: Count,
        n_from: Option<IExpr>,
        overflow: Option<u32>,
        compact: Option<(KExpr, usize, Option<u32>)>,
    ) {
        // A tile is cut into one chunk per subgroup: the workgroup is a whole number of
        // subgroups (rounded down, at least one).
        let sgs = self.opts.subgroup_size.max(1);
        let wg = (self.opts.scan_workgroup_size / sgs).max(1) * sgs;
        // 8-byte values take two registers each: half as many keep the registers per
        // invocation, and so the workgroups that fit on a core, as for 4-byte values
        // (on an H100, `+\` of i32 in i64 at 2^28: 2241 µs with 384 × 32, 119
        // registers; 2022 µs with 384 × 16, 56 registers). The emitter holds a scan's
        // 4-byte values as read where it folds them in 8 bytes (`KExpr::widened`); an
        // f32 scan in f64 then takes a 4-byte scan's tile (H100, 2^28, 384 × 32: 1257
        // µs, against 1420 holding f64 at 384 × 16), an i32 scan in i64 keeps the
        // halved one (384 × 16: 1879 µs, 384 × 32: 2171).
        let f32_in_f64 =
            compact.is_none() && expr.elem() == ElemType::F64 && expr.widened().is_some();
        let items = match expr.elem().size() {
            8 if self.opts.scan_items_per_thread >= 8 && !f32_in_f64 => {
                self.opts.scan_items_per_thread / 2
            }
            // A compaction holds each element's count and stages its kept values:
            // three quarters of a large tile (on an H200 at 2^28, 384 × 24: f32
            // 866 µs, i32 979; 384 × 32: 964, 1064; 384 × 16: 942, 1067).
            _ if compact.is_some() && self.opts.scan_items_per_thread >= 32 => {
                self.opts.scan_items_per_thread / 4 * 3
            }
            _ => self.opts.scan_items_per_thread,
        };
        // A scan of 4-byte values folded in 8 bytes may have a tile of its own (on
        // NVIDIA: i32 in i64 256 × 24, f32 in f64 512 × 24), as may a compaction
        // (512 × 24 there).
        let int_in_i64 =
            compact.is_none() && expr.elem() == ElemType::I64 && expr.widened().is_some();
        let widened_tile = if int_in_i64 {
            self.opts.scan_widened_int_tile
        } else if f32_in_f64 {
            self.opts.scan_widened_float_tile
        } else if compact.is_some() {
            self.opts.compact_tile
        } else {
            None
        };
        let (wg, items) = match widened_tile {
            Some((w, i)) => ((w / sgs).max(1) * sgs, i.clamp(1, 64)),
            None => (wg, items),
        };
        // With a lookback subgroup, the tile is the other subgroups' (compactions
        // keep their own layout).
        let lookback_subgroup = (self.opts.scan_lookback_subgroup
            && !self.opts.every_subgroup_looks_back
            && compact.is_none()
            && wg > sgs)
            .then_some(sgs);
        // A workgroup-wide lookback takes the place of every subgroup's own.
        let wide_lookback = self.opts.scan_wide_lookback && lookback_subgroup.is_none();
        let tile = (wg - lookback_subgroup.unwrap_or(0)) * items;
        let tiles = Count::Groups {
            of: Box::new(n.clone()),
            per_group: tile,
            max: u32::MAX,
        };
        // One workgroup per tile.
        let groups = tiles.clone();
        // Where f32 is widened from its bits (a device that may flush f32
        // subnormals), an f32 `+\` in f64 runs twice over: first widening each
        // element by OpFConvert alone, a subgroup reporting any subnormal it holds
        // in `subnormals`; then, only where one did (`KernelGuard`), the scan again
        // with every element widened from its bits. The exact way's registers cost
        // the first a third of its speed (H200, 2^26: 124 registers, 305 µs; 80,
        // 225 µs without it).
        let subnormals = (f32_in_f64 && self.opts.exact32() && self.guard.is_none())
            .then(|| self.new_buffer(ElemType::I32, Count::known(3), BufferRole::Zeroed));
        // (A scan planned under a guard already keeps it.)
        let outer = self.guard;
        let ways = match subnormals {
            Some(f) => vec![(Some(f), None), (None, Some((f, None, Some(0))))],
            None => vec![(None, outer)],
        };
        for (report, guard) in ways {
            let mut kb = kb.clone();
            let compact = compact.clone();
            let expr = expr.clone();
            self.guard = guard;
            let status = match (self.opts.int64_atomics, expr.elem().size()) {
                (false, _) => ScanStatus::Flagged,
                (true, 4) => ScanStatus::Packed,
                (true, _) if self.opts.scan_wide_status => ScanStatus::Wide,
                (true, _) => ScanStatus::Flagged,
            };
            let flag_words = match status {
                ScanStatus::Flagged => tiles.clone(),
                ScanStatus::Packed => Count::Scaled {
                    of: Box::new(tiles.clone()),
                    times: 2,
                },
                ScanStatus::Wide => Count::known(1),
            };
            let flags = self.new_buffer(ElemType::I32, flag_words, BufferRole::Zeroed);
            let counter = self.new_buffer(ElemType::I32, Count::known(1), BufferRole::Zeroed);
            // Tile values travel as two u32 words each, written and read with atomics
            // (one 64-bit word, zero until published, when the status is `Wide`).
            let words = Count::Scaled {
                of: Box::new(tiles.clone()),
                times: 2,
            };
            let role = match status {
                ScanStatus::Wide => BufferRole::Zeroed,
                _ => BufferRole::Temp,
            };
            let aggregates = self.new_buffer(ElemType::I32, words.clone(), role.clone());
            let inclusive = self.new_buffer(ElemType::I32, words, role);
            let out = kb.bind(out_b, elem, true);
            let shared = |kb: &mut KernelBindings, buf: usize, elem: ElemType, atomic: bool| {
                let i = kb.bind(buf, elem, true);
                kb.bindings[i as usize].shared_between_groups = true;
                kb.bindings[i as usize].atomic = atomic;
                i
            };
            let flags = shared(&mut kb, flags, ElemType::I32, true);
            let aggregates = shared(&mut kb, aggregates, ElemType::I32, true);
            let inclusive = shared(&mut kb, inclusive, ElemType::I32, true);
            let counter = shared(&mut kb, counter, ElemType::I32, true);
            // Staging takes a value a lane per element of a round (rounds of four
            // where the tile allows), beside the scan's own totals (at most 1024
            // 8-byte words).
            let width = if items.is_multiple_of(4) { 4 } else { 1 };
            let compact = compact.map(|(value, len, most)| {
                let stage = u64::from(wg * width) * value.elem().size().max(4) as u64;
                let room = u64::from(self.opts.max_shared_bytes).saturating_sub(8192) / stage;
                // A replicate's stage holds up to its counts' bound of copies an
                // element, where that fits (a round is then one window).
                let copies = most.map_or(1, |m| room.min(u64::from(m)).clamp(1, 8) as u32);
                Compact {
                    len: kb.bind(len, ElemType::I32, true),
                    staged: room >= 1,
                    holds_values: most.is_none() && self.opts.compact_holds_values,
                    value,
                    repeat: most.is_some(),
                    most: most.unwrap_or(1),
                    copies,
                }
            });
            let value_fails = compact.as_ref().is_some_and(|c| c.value.may_fail());
            let budget = self.lookback_budget(&span);
            self.bind_status(
                &mut kb,
                expr.may_fail() || overflow.is_some() || value_fails || budget.is_some(),
            );
            let kind = KernelKind::ScanChained {
                op,
                expr,
                out,
                flags,
                aggregates,
                inclusive,
                counter,
                every_subgroup_looks_back: self.opts.every_subgroup_looks_back && !wide_lookback,
                status,
                lookback_subgroup,
                wide_lookback,
                shuffle: self.opts.subgroup_shuffle,
                // Tiles claimed in order where loops are cut off: a tile's
                // predecessors have then all started, and a lookback reduces at most
                // the few still running (in workgroup order, a lookback on lavapipe
                // met thousands of unstarted tiles).
                tiles_by_workgroup: self.opts.scan_tiles_by_workgroup
                    && self.opts.loop_trip_limit.is_none(),
                overflow,
                compact,
                subnormals: report.map(|f| shared(&mut kb, f, ElemType::I32, true)),
            };
            self.push_kernel_shaped(
                "scan",
                kind,
                kb,
                vec![("n", n.clone())],
                groups.clone(),
                (wg, items),
            );
            if let (Some(b), Some(k)) = (budget, self.plan.kernels.last_mut()) {
                k.lookback_budget = Some(b);
            }
            // The exact way dispatches the workgroups the first reported (none
            // where no subgroup held a subnormal: at 2^26 its empty workgroups and
            // their barrier cost about 17 µs on an H200); a length on the device
            // sizes both through the arguments `set_n_from` computes, and the guard
            // keeps it.
            let exact_way = subnormals.filter(|_| report.is_none() && n_from.is_none());
            match (exact_way, self.plan.dispatches.last_mut()) {
                (Some(f), Some(d)) => d.indirect = Some(f),
                _ => {
                    self.set_n_from(n_from.clone());
                }
            }
        }
        self.guard = outer;
    }
}

impl Planner<'_> {
    /// `mask/arg` with the result's length left on the device: an inclusive `+\` of
    /// the mask gives each kept element its position (plus one), then one pass
    /// scatters the kept elements and its last invocation stores the count, which
    /// later kernels read instead of a push constant. i32 counts in place of the
    /// mask (replicate) are scanned alike, each element stored its count of times.
    pub(super) fn compress(&mut self, v: Value, mask: Value, arg: Value, is_result: bool) {
        let f = self.v.func;
        let Dim::Dyn(id) = f.ty(v).shape[0] else {
            return;
        };
        let elem = f.ty(v).elem;
        let n = self.len_of(arg);
        let len = self.new_buffer(ElemType::I32, Count::known(1), BufferRole::Zeroed);
        // Unless fused (`PlanOptions::fuse_computed_masks`), a mask or value that
        // computes more than it reads and compares is computed by a kernel of its
        // own first.
        // Counts are read twice (scanned, then where each element stores) and its
        // value once: both fuse.
        let repeat = f.ty(mask).elem == ElemType::I32;
        // A replicate's counts' bound (0 where none is known: a round is then
        // staged a window at a time).
        let most = repeat.then(|| {
            crate::bounds::magnitude(f, mask).map_or(0, |m| u32::try_from(m).unwrap_or(0))
        });
        let fuse = self.opts.fuse_computed_masks || repeat;
        for part in [mask, arg].into_iter().filter(|_| !fuse) {
            let mut scratch = self.kb();
            if !self
                .expr(part, &IExpr::Index, &mut scratch)
                .reads_and_compares()
            {
                self.materialize(part);
            }
        }
        let out_b = self.result_or_temp(v, is_result);
        let mut kb = self.kb();
        let m = self.expr(mask, &IExpr::Index, &mut kb);
        let value = self.expr(arg, &IExpr::Index, &mut kb);
        let counts = match m {
            m if m.elem() == ElemType::I32 => m,
            m => KExpr::Cast {
                to: ElemType::I32,
                arg: Box::new(m),
            },
        };
        let n_from = self.n_from(arg, &mut kb);
        self.chained_scan(
            f.span(v),
            BinOp::Add,
            kb,
            counts,
            out_b,
            elem,
            n,
            n_from,
            None,
            Some((value, len, most)),
        );
        self.dyn_buffers[id as usize] = Some(len);
        self.buffer_of[v.index()] = Some(out_b);
    }
}

/// An integer operand `e` (read in i64 for an integer `+.×`) read as i32: as the
/// program reads it ([`read_as_is`]), narrowed where that is not i32 (its bound
/// fits).
pub(super) fn in_i32(e: KExpr) -> KExpr {
    match read_as_is(e) {
        e if e.elem() == ElemType::I32 => e,
        e => KExpr::Cast {
            to: ElemType::I32,
            arg: Box::new(e),
        },
    }
}

/// An integer operand as the program reads it: not the i64 a product widens an i32
/// or a boolean to (range checks compare it as read; packing narrows it).
pub(super) fn read_as_is(e: KExpr) -> KExpr {
    match e {
        KExpr::Cast { arg, .. } if matches!(arg.elem(), ElemType::I32 | ElemType::Bool) => *arg,
        e => e,
    }
}
