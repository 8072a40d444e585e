//! Fold kernels: `op/` of a vector (grid-stride partials, then a second dispatch of
//! one workgroup, or the last workgroup done, folds them), folds
//! along an axis (a row per invocation, subgroup or workgroup, four rows per
//! invocation for leading-axis folds), right folds of functions that are not
//! associative, and scans along an axis; with the loops they share.

use super::*;

impl Emitter {
    /// Folds this workgroup's share of `expr` into `out[group]`: per-invocation loop,
    /// subgroup reduction, then one invocation folds the subgroup results in order.
    pub(super) fn reduce_kernel(
        &mut self,
        cx: &mut Cx,
        op: BinOp,
        expr: &KExpr,
        out: u32,
        finish: Option<&arrc_ir::plan::Finish>,
    ) -> R<()> {
        let t = expr.elem();
        let tt = self.ty(t);
        let acc = self.local(tt);
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        let shared = cx.shared;
        let id = self.identity(op, t);
        self.store(acc, id)?;
        // A plain 4-byte array is read 16 bytes at a time (four elements per load).
        // (Possibly converted: an f32 sum accumulates in f64.)
        let vec_src = match plain_load(cx, expr) {
            Some((binding, from @ (ElemType::F32 | ElemType::I32), IExpr::Index)) => {
                Some(self.vec4_source(cx, binding, from)?)
            }
            _ => None,
        };
        if let Some(src) = vec_src {
            let u = self.u32_t;
            let two = self.c_u32(2);
            let n = cx.n;
            let n4 = self.b.shift_right_logical(u, None, n, two).map_err(be)?;
            cx.n = n4;
            let per4 = |e: &mut Self, _cx: &Cx, j: Word| -> R<()> {
                let mut a = e.load(tt, acc)?;
                for x in e.load_vec4(&src, j, t)? {
                    a = e.binop(op, t, a, x)?;
                }
                e.store(acc, a)
            };
            let r = self.unrolled_share(cx, &per4, i, k);
            cx.n = n;
            r?;
            // The last n mod 4 elements, by the first invocations of workgroup 0.
            let three = self.c_u32(3);
            let tail = self.b.bitwise_and(u, None, n, three).map_err(be)?;
            let zero = self.c_u32(0);
            let g0 = self
                .b
                .i_equal(self.bool_t, None, cx.group, zero)
                .map_err(be)?;
            let lt = self.ult(cx.lid, tail)?;
            let mine = self.b.logical_and(self.bool_t, None, g0, lt).map_err(be)?;
            let cxr = &*cx;
            self.if_then(mine, |e| {
                let base = e.b.shift_left_logical(u, None, n4, two).map_err(be)?;
                let j = e.uadd(base, cxr.lid)?;
                let x = e.expr(cxr, expr, Ix::flat(j))?;
                let a = e.load(tt, acc)?;
                let r = e.binop(op, t, a, x)?;
                e.store(acc, r)
            })?;
        } else {
            let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
                let x = e.expr(cx, expr, Ix::flat(j))?;
                let a = e.load(tt, acc)?;
                let r = e.binop(op, t, a, x)?;
                e.store(acc, r)
            };
            self.unrolled_share(cx, &per, i, k)?;
        }
        // (In the interface, for `workgroup_fold`.)
        self.load_builtin(cx, BuiltIn::SubgroupId)?;
        self.load_builtin(cx, BuiltIn::NumSubgroups)?;
        let zero = self.c_u32(0);
        let first = self
            .b
            .i_equal(self.bool_t, None, cx.lid, zero)
            .map_err(be)?;
        let cxr = &*cx;
        let Some(fin) = finish else {
            // The workgroup's partial, in `out[group]`.
            self.workgroup_fold(op, t, acc, k, shared, cxr)?;
            return self.if_then(first, |e| {
                let a = e.load(tt, acc)?;
                e.store_fold(cxr, out, cxr.group, a, t)
            });
        };
        // The workgroup's partial goes to `partials`; the workgroup that counts
        // itself last (acquiring every other one's partial) folds them into `out[0]`.
        self.workgroup_fold(op, t, acc, k, shared, cxr)?;
        let u = self.u32_t;
        let pu = self.ptr(StorageClass::Workgroup, u);
        let sh_last = self.workgroup_var(pu);
        let dev = self.c_u32(SCOPE_DEVICE);
        let one = self.c_u32(1);
        let counter = self.word_at(cxr, fin.counter, zero)?;
        self.if_then(first, |e| {
            let a = e.load(tt, acc)?;
            e.store_words(cxr, fin.partials, cxr.group, a, t)?;
            let acq_rel = e.c_u32(SEM_ACQ_REL_UNIFORM);
            let done =
                e.b.atomic_i_add(u, None, counter, dev, acq_rel, one)
                    .map_err(be)?;
            let last = e.b.i_sub(u, None, cxr.groups, one).map_err(be)?;
            let is_last = e.b.i_equal(e.bool_t, None, done, last).map_err(be)?;
            let w = e.b.select(u, None, is_last, one, zero).map_err(be)?;
            e.store(sh_last, w)
        })?;
        self.barrier_uniform()?;
        let w = self.load(u, sh_last)?;
        let is_last = self.b.i_equal(self.bool_t, None, w, one).map_err(be)?;
        // (The same in every invocation: the branch is uniform, its barriers too.)
        self.if_then(is_last, |e| {
            // Every invocation acquires the count (the last add's value ends every
            // workgroup's release sequence), so every partial is visible to it.
            let acquire = e.c_u32(SEM_ACQUIRE_UNIFORM);
            e.b.atomic_load(u, None, counter, dev, acquire)
                .map_err(be)?;
            let id = e.identity(op, t);
            e.store(acc, id)?;
            e.store(k, cxr.lid)?;
            e.while_loop(
                |e| {
                    let kv = e.load(u, k)?;
                    e.ult(kv, cxr.groups)
                },
                |e| {
                    let kv = e.load(u, k)?;
                    let v = e.load_words(cxr, fin.partials, kv, t)?;
                    let a = e.load(tt, acc)?;
                    let r = e.binop(op, t, a, v)?;
                    e.store(acc, r)
                },
                |e| {
                    let kv = e.load(u, k)?;
                    let nx = e.uadd(kv, e.wg_size)?;
                    e.store(k, nx)
                },
            )?;
            e.workgroup_fold(op, t, acc, k, shared, cxr)?;
            e.if_then(first, |e| {
                let a = e.load(tt, acc)?;
                e.store_fold(cxr, out, zero, a, t)
            })
        })
    }

    /// Folds every invocation's `acc` across the workgroup: a subgroup reduction,
    /// the subgroups' results through workgroup memory, folded in order by
    /// invocation 0 into its `acc` (`k` a scratch counter). Ends past a barrier.
    fn workgroup_fold(
        &mut self,
        op: BinOp,
        t: ElemType,
        acc: Word,
        k: Word,
        shared: Word,
        cx: &Cx,
    ) -> R<()> {
        let tt = self.ty(t);
        let a = self.load(tt, acc)?;
        let s = self.group(op, t, GroupOperation::Reduce, a)?;
        let sid = self.load_builtin_cx(BuiltIn::SubgroupId)?;
        let nsg = self.load_builtin_cx(BuiltIn::NumSubgroups)?;
        let el = self.elect()?;
        self.if_then(el, |e| {
            let p = e.shared_ptr(shared, t, sid)?;
            e.store(p, s)
        })?;
        self.barrier()?;
        let zero = self.c_u32(0);
        let first = self
            .b
            .i_equal(self.bool_t, None, cx.lid, zero)
            .map_err(be)?;
        self.if_then(first, |e| {
            let p0 = e.shared_ptr(shared, t, zero)?;
            let v0 = e.load(tt, p0)?;
            e.store(acc, v0)?;
            let one = e.c_u32(1);
            e.store(k, one)?;
            e.while_loop(
                |e| {
                    let kv = e.load(e.u32_t, k)?;
                    e.ult(kv, nsg)
                },
                |e| {
                    let kv = e.load(e.u32_t, k)?;
                    let p = e.shared_ptr(shared, t, kv)?;
                    let v = e.load(tt, p)?;
                    let a = e.load(tt, acc)?;
                    let r = e.binop(op, t, a, v)?;
                    e.store(acc, r)
                },
                |e| {
                    let kv = e.load(e.u32_t, k)?;
                    let one = e.c_u32(1);
                    let nx = e.uadd(kv, one)?;
                    e.store(k, nx)
                },
            )?;
            Ok(())
        })
    }

    /// A right fold from position `from` down to 0: `acc ← x[from]`, then
    /// `acc ← x[k] f acc` for k = from-1 … 0 (`kvar` counts down). With `prefix`, it
    /// is one item of a scan, which the reference computes from the left.
    #[allow(clippy::too_many_arguments)]
    fn fold_down(
        &mut self,
        cx: &Cx,
        (fold, prefix): (Fold, bool),
        t: ElemType,
        acc: Word,
        kvar: Word,
        from: Word,
        x_at: &dyn Fn(&mut Self, Word) -> R<Word>,
    ) -> R<()> {
        let u = self.u32_t;
        let tt = self.ty(t);
        let first = x_at(self, from)?;
        self.store(acc, first)?;
        self.store(kvar, from)?;
        // A scan's item of i64 `∨`: the reference folds each prefix from the left,
        // so only a prefix of 2^63 (¯9223372036854775808 with 0 or itself) is an
        // error, while this fold from the right may meet 2^63 on the way where the
        // prefix is not (`MAX∨m∨0∨0` is 1). The steps keep it as its unsigned bits
        // (the most negative integer's); the gcd is the same in either order, so a
        // result of at least one step that is 2^63 raises. (A reduction folds from
        // the right in the reference too, and raises at each step.)
        let wide_gcd = match fold {
            Fold::Right {
                op: BinOp::Or,
                error_bit: Some(bit),
            } if prefix && t == ElemType::I64 => Some(bit),
            _ => None,
        };
        // The same for i64 `∧`: a step's lcm may leave i64 where the prefix's is 0
        // (a 0 further left: `¯14 0,big…`). An lcm of no 0 only grows in magnitude,
        // so the item leaves i64 exactly where a step did and the item is not 0.
        let wide_lcm = match fold {
            Fold::Right {
                op: BinOp::And,
                error_bit: Some(bit),
            } if prefix && t == ElemType::I64 => Some((bit, self.local_false())),
            _ => None,
        };
        let saved = self.scan_steps;
        self.scan_steps = match (wide_gcd, wide_lcm) {
            (Some(_), _) => Some(super::ScanSteps::Gcd),
            (_, Some((_, flag))) => Some(super::ScanSteps::Lcm(flag)),
            _ => None,
        };
        self.while_loop(
            |e| {
                let kv = e.load(u, kvar)?;
                let zero = e.c_u32(0);
                e.ult(zero, kv)
            },
            |e| {
                let kv = e.load(u, kvar)?;
                let one = e.c_u32(1);
                let k = e.b.i_sub(u, None, kv, one).map_err(be)?;
                e.store(kvar, k)?;
                let x = x_at(e, k)?;
                let a = e.load(tt, acc)?;
                let r = e.apply2(cx, fold, t, x, a)?;
                e.store(acc, r)
            },
            |_| Ok(()),
        )?;
        self.scan_steps = saved;
        if let Some((bit, flag)) = wide_lcm {
            let a = self.load(tt, acc)?;
            let zero = self.scalar(Scalar::I64(0));
            let nonzero = self.b.i_not_equal(self.bool_t, None, a, zero).map_err(be)?;
            let left = self.load(self.bool_t, flag)?;
            let bad = self.and(left, nonzero)?;
            self.raise(cx, Some(bit), bad)?;
        }
        if let Some(bit) = wide_gcd {
            let a = self.load(tt, acc)?;
            let min = self.scalar(Scalar::I64(i64::MIN));
            let at_min = self.b.i_equal(self.bool_t, None, a, min).map_err(be)?;
            let zero = self.c_u32(0);
            let stepped = self.ult(zero, from)?;
            let bad = self
                .b
                .logical_and(self.bool_t, None, at_min, stepped)
                .map_err(be)?;
            self.raise(cx, Some(bit), bad)?;
        }
        Ok(())
    }

    /// `a f b` for a right fold's function, its errors raised.
    fn apply2(&mut self, cx: &Cx, fold: Fold, t: ElemType, a: Word, b: Word) -> R<Word> {
        let (op, bit) = match fold {
            Fold::Right { op, error_bit } => (op, error_bit),
            Fold::Assoc(op) => (op, None),
            Fold::Dfn { .. } => {
                let step = cx
                    .combine
                    .as_ref()
                    .ok_or_else(|| SpirvError::Build("a dfn fold without its step".into()))?;
                let saved = self.operands;
                self.operands = [a, b];
                let zero = self.c_u32(0);
                let r = self.expr(cx, step, Ix::flat(zero));
                self.operands = saved;
                return r;
            }
        };
        // A right fold keeps its type (`t` is already the fold's float type if any).
        self.binary(
            cx,
            op,
            t,
            op.result_type(t, t, t.join(ElemType::F32)),
            a,
            b,
            None,
            bit,
        )
    }

    pub(super) fn umin(&mut self, a: Word, b: Word) -> R<Word> {
        let lt = self.ult(a, b)?;
        self.b.select(self.u32_t, None, lt, a, b).map_err(be)
    }

    pub(super) fn umax(&mut self, a: Word, b: Word) -> R<Word> {
        let lt = self.ult(a, b)?;
        self.b.select(self.u32_t, None, lt, b, a).map_err(be)
    }

    /// Grid-stride loop over the units (rows or row pieces) of an axis kernel:
    /// `body(u)` for each unit `u < units` this invocation's unit owns.
    fn units_loop(
        &mut self,
        cx: &mut Cx,
        unit: Unit,
        units: Word,
        body: &dyn Fn(&mut Self, &Cx, Word) -> R<()>,
    ) -> R<()> {
        let (first, step) = match unit {
            Unit::Thread | Unit::Quad => {
                let base = self.umul(cx.group, self.wg_size)?;
                let first = self.uadd(base, cx.lid)?;
                (first, self.umul(cx.groups, self.wg_size)?)
            }
            Unit::Subgroup => {
                let sid = self.load_builtin(cx, BuiltIn::SubgroupId)?;
                let nsg = self.load_builtin(cx, BuiltIn::NumSubgroups)?;
                let base = self.umul(cx.group, nsg)?;
                (self.uadd(base, sid)?, self.umul(cx.groups, nsg)?)
            }
            Unit::Workgroup => (cx.group, cx.groups),
        };
        let var = self.local(self.u32_t);
        let cxr = &*cx;
        self.count_loop(var, first, units, step, |e, u| body(e, cxr, u))
    }

    /// `body(k)` for `k = k0+off, k0+off+step, … < k1`, `items` at a time (independent
    /// loads in flight; whole blocks unchecked), in increasing order.
    fn strided(
        &mut self,
        k0: Word,
        k1: Word,
        off: Word,
        step: Word,
        body: &dyn Fn(&mut Self, Word) -> R<()>,
    ) -> R<()> {
        let u = self.u32_t;
        let k = self.local(u);
        let j = self.local(u);
        let start = self.uadd(k0, off)?;
        self.store(k, start)?;
        let one = self.c_u32(1);
        let itm1 = self.b.i_sub(u, None, self.items, one).map_err(be)?;
        let span = self.umul(itm1, step)?;
        let block = self.umul(self.items, step)?;
        self.while_loop(
            |e| {
                let kv = e.load(u, k)?;
                let last = e.uadd(kv, span)?;
                let in_k = e.ult(kv, k1)?;
                let in_last = e.ult(last, k1)?;
                e.b.logical_and(e.bool_t, None, in_k, in_last).map_err(be)
            },
            |e| {
                let zero = e.c_u32(0);
                let one = e.c_u32(1);
                let kv = e.load(u, k)?;
                e.count_loop(j, zero, e.items, one, |e, jv| {
                    let off = e.umul(jv, step)?;
                    let at = e.uadd(kv, off)?;
                    body(e, at)
                })
            },
            |e| {
                let kv = e.load(u, k)?;
                let nx = e.uadd(kv, block)?;
                e.store(k, nx)
            },
        )?;
        self.while_loop(
            |e| {
                let kv = e.load(u, k)?;
                e.ult(kv, k1)
            },
            |e| {
                let kv = e.load(u, k)?;
                body(e, kv)
            },
            |e| {
                let kv = e.load(u, k)?;
                let nx = e.uadd(kv, step)?;
                e.store(k, nx)
            },
        )
    }

    /// `Unit::Quad`: as [`Self::reduce_axis_kernel`] with four neighbouring rows per
    /// invocation (`rows` is a multiple of 4 and rows 4q…4q+3 are consecutive in
    /// memory): for `u < rows/4 × parts`, rows `4·(u mod rows/4)`… of piece
    /// `u div rows/4`, four accumulators, and one 16-byte load per position where the
    /// argument is a plain 4-byte array read at the split's index.
    fn reduce_quads_kernel(&mut self, cx: &mut Cx, op: BinOp, expr: &KExpr, out: u32) -> R<()> {
        let t = expr.elem();
        let tt = self.ty(t);
        let u = self.u32_t;
        let rows = cx.n;
        let len = self.push_constant(cx, 1)?;
        let parts = self.push_constant(cx, 2)?;
        let four = self.c_u32(4);
        let quads = self.b.u_div(u, None, rows, four).map_err(be)?;
        let units = self.umul(quads, parts)?;
        let one = self.c_u32(1);
        let pm1 = self.b.i_sub(u, None, parts, one).map_err(be)?;
        let lp = self.uadd(len, pm1)?;
        let per = self.b.u_div(u, None, lp, parts).map_err(be)?;
        let accs: Vec<Word> = (0..4).map(|_| self.local(tt)).collect();
        // A plain array of 4-byte elements, read as vectors (possibly converted).
        let vec_in = match plain_load(cx, expr) {
            Some((b, from @ (ElemType::F32 | ElemType::I32), index)) => {
                Some((self.vec4_source(cx, b, from)?, index.clone()))
            }
            _ => None,
        };
        // f32 summed in f64 where the device may flush f32 subnormals: widened by
        // OpFConvert alone while the least magnitude read is tracked, and the unit
        // summed again, widening exactly, where it was a subnormal's (a branch per
        // vector cost `+⌿` of 8192² 93.3 µs against 88.5 on an H200; exact
        // widening throughout 89 against 78 natively).
        let vote = self.exact32
            && t == ElemType::F64
            && vec_in
                .as_ref()
                .is_some_and(|(src, _)| src.from == ElemType::F32);
        let least = vote.then(|| self.local(u));
        let body = |e: &mut Self, cx: &Cx, unit_id: Word| -> R<()> {
            let q = e.b.u_mod(u, None, unit_id, quads).map_err(be)?;
            let p = e.b.u_div(u, None, unit_id, quads).map_err(be)?;
            let row0 = e.umul(q, four)?;
            let start = e.umul(p, per)?;
            let k0 = e.umin(start, len)?;
            let end = e.uadd(k0, per)?;
            let k1 = e.umin(end, len)?;
            if let Some(l) = least {
                let most = e.c_u32(u32::MAX);
                e.store(l, most)?;
            }
            let pass = |e: &mut Self, exact: bool| -> R<()> {
                let id = e.identity(op, t);
                for &a in &accs {
                    e.store(a, id)?;
                }
                let zero = e.c_u32(0);
                let one = e.c_u32(1);
                e.strided(k0, k1, zero, one, &|e, k| {
                    let mut xs = vec![];
                    match &vec_in {
                        Some((src, index)) => {
                            let ix = Ix {
                                index: k,
                                row: row0,
                                pos: k,
                            };
                            let i = e.iexpr(cx, index, ix)?;
                            let two = e.c_u32(2);
                            let vi = e.b.shift_right_logical(u, None, i, two).map_err(be)?;
                            match least.filter(|_| !exact) {
                                Some(l) => {
                                    let raw = e.load_vec4(src, vi, ElemType::F32)?;
                                    let was = e.load(u, l)?;
                                    let now = e.least_magnitude(&raw, was)?;
                                    e.store(l, now)?;
                                    xs.extend(e.widen_normal(&raw)?);
                                }
                                None => xs.extend(e.load_vec4(src, vi, t)?),
                            }
                        }
                        None => {
                            for c in 0..4u32 {
                                let cc = e.c_u32(c);
                                let row = e.uadd(row0, cc)?;
                                let ix = Ix {
                                    index: k,
                                    row,
                                    pos: k,
                                };
                                xs.push(e.expr(cx, expr, ix)?);
                            }
                        }
                    }
                    for (&a, x) in accs.iter().zip(xs) {
                        let av = e.load(tt, a)?;
                        let r = e.binop(op, t, av, x)?;
                        e.store(a, r)?;
                    }
                    Ok(())
                })
            };
            pass(e, false)?;
            if let Some(l) = least {
                let was = e.load(u, l)?;
                let sub = e.subnormal_least(was)?;
                e.if_then(sub, |e| pass(e, true))?;
            }
            let pr = e.umul(p, rows)?;
            let o0 = e.uadd(pr, row0)?;
            for (c, &a) in accs.iter().enumerate() {
                let cc = e.c_u32(c as u32);
                let o = e.uadd(o0, cc)?;
                let av = e.load(tt, a)?;
                e.store_fold(cx, out, o, av, t)?;
            }
            Ok(())
        };
        self.units_loop(cx, Unit::Quad, units, &body)
    }

    /// Folds one row (or row piece) per unit: `out[u]` for `u < rows×parts` (push
    /// constants 0, 1, 2: rows, len, parts).
    pub(super) fn reduce_axis_kernel(
        &mut self,
        cx: &mut Cx,
        fold: Fold,
        expr: &KExpr,
        out: u32,
        unit: Unit,
    ) -> R<()> {
        if unit == Unit::Quad {
            return self.reduce_quads_kernel(cx, fold.op(), expr, out);
        }
        let t = expr.elem();
        let tt = self.ty(t);
        let u = self.u32_t;
        let op = fold.op();
        let rows = cx.n;
        let len = self.push_constant(cx, 1)?;
        let parts = self.push_constant(cx, 2)?;
        let units = self.umul(rows, parts)?;
        let one = self.c_u32(1);
        let pm1 = self.b.i_sub(u, None, parts, one).map_err(be)?;
        let lp = self.uadd(len, pm1)?;
        let per = self.b.u_div(u, None, lp, parts).map_err(be)?;
        let acc = self.local(tt);
        let (off, step) = match unit {
            Unit::Thread | Unit::Quad => (self.c_u32(0), self.c_u32(1)),
            Unit::Subgroup => (
                self.load_builtin(cx, BuiltIn::SubgroupLocalInvocationId)?,
                self.load_builtin(cx, BuiltIn::SubgroupSize)?,
            ),
            Unit::Workgroup => (cx.lid, self.wg_size),
        };
        let (sid, nsg) = match unit {
            Unit::Workgroup => (
                self.load_builtin(cx, BuiltIn::SubgroupId)?,
                self.load_builtin(cx, BuiltIn::NumSubgroups)?,
            ),
            _ => (0, 0),
        };
        let shared = cx.shared;
        let kvar = self.local(u);
        let body = |e: &mut Self, cx: &Cx, unit_id: Word| -> R<()> {
            let row = e.b.u_mod(u, None, unit_id, rows).map_err(be)?;
            let x_at = |e: &mut Self, k: Word| -> R<Word> {
                e.expr(
                    cx,
                    expr,
                    Ix {
                        index: k,
                        row,
                        pos: k,
                    },
                )
            };
            if fold.is_right() {
                // x0 f (x1 f (… f x[len-1])), from the right.
                let zero = e.c_u32(0);
                let empty = e.b.i_equal(e.bool_t, None, len, zero).map_err(be)?;
                e.if_else(
                    empty,
                    |e| {
                        if let Fold::Dfn { empty_error } = fold {
                            let tr = e.b.constant_true(e.bool_t);
                            e.raise(cx, empty_error, tr)?;
                        }
                        let id = e.identity(op, t);
                        e.store(acc, id)
                    },
                    |e| {
                        let one = e.c_u32(1);
                        let last = e.b.i_sub(u, None, len, one).map_err(be)?;
                        e.fold_down(cx, (fold, false), t, acc, kvar, last, &x_at)
                    },
                )?;
                let a = e.load(tt, acc)?;
                return e.store_fold(cx, out, unit_id, a, t);
            }
            let p = e.b.u_div(u, None, unit_id, rows).map_err(be)?;
            let start = e.umul(p, per)?;
            let k0 = e.umin(start, len)?;
            let end = e.uadd(k0, per)?;
            let k1 = e.umin(end, len)?;
            let id = e.identity(op, t);
            e.store(acc, id)?;
            e.strided(k0, k1, off, step, &|e, k| {
                let x = x_at(e, k)?;
                let a = e.load(tt, acc)?;
                let r = e.binop(op, t, a, x)?;
                e.store(acc, r)
            })?;
            let a = e.load(tt, acc)?;
            match unit {
                Unit::Thread | Unit::Quad => e.store_fold(cx, out, unit_id, a, t),
                Unit::Subgroup => {
                    let r = e.group(op, t, GroupOperation::Reduce, a)?;
                    let el = e.elect()?;
                    e.if_then(el, |e| e.store_fold(cx, out, unit_id, r, t))
                }
                Unit::Workgroup => {
                    let r = e.group(op, t, GroupOperation::Reduce, a)?;
                    let el = e.elect()?;
                    e.if_then(el, |e| {
                        let p = e.shared_ptr(shared, t, sid)?;
                        e.store(p, r)
                    })?;
                    e.barrier()?;
                    let zero = e.c_u32(0);
                    let first = e.b.i_equal(e.bool_t, None, cx.lid, zero).map_err(be)?;
                    e.if_then(first, |e| {
                        let id = e.identity(op, t);
                        e.store(acc, id)?;
                        let zero = e.c_u32(0);
                        let one = e.c_u32(1);
                        e.count_loop(kvar, zero, nsg, one, |e, s| {
                            let p = e.shared_ptr(shared, t, s)?;
                            let v = e.load(tt, p)?;
                            let a = e.load(tt, acc)?;
                            let r = e.binop(op, t, a, v)?;
                            e.store(acc, r)
                        })?;
                        let a = e.load(tt, acc)?;
                        e.store_fold(cx, out, unit_id, a, t)
                    })?;
                    // The shared table is reused by the next unit.
                    e.barrier()
                }
            }
        };
        self.units_loop(cx, unit, units, &body)
    }

    /// Inclusive scan of each row (push constants 0, 1: rows, len); element
    /// (`Row`, `Pos`) is stored at `out_index`.
    pub(super) fn scan_axis_kernel(
        &mut self,
        cx: &mut Cx,
        fold: Fold,
        expr: &KExpr,
        out: u32,
        out_index: &IExpr,
        unit: Unit,
    ) -> R<()> {
        let t = expr.elem();
        let tt = self.ty(t);
        let u = self.u32_t;
        let op = fold.op();
        let rows = cx.n;
        let len = self.push_constant(cx, 1)?;
        let acc = self.local(tt);
        let carry = self.local(tt);
        let kvar = self.local(u);
        let jvar = self.local(u);
        let (lane, sgsize) = match unit {
            Unit::Subgroup => (
                self.load_builtin(cx, BuiltIn::SubgroupLocalInvocationId)?,
                self.load_builtin(cx, BuiltIn::SubgroupSize)?,
            ),
            _ => (0, 0),
        };
        let body = |e: &mut Self, cx: &Cx, row: Word| -> R<()> {
            let at = |k: Word| Ix {
                index: k,
                row,
                pos: k,
            };
            let store_at = |e: &mut Self, k: Word, v: Word| -> R<()> {
                let i = e.iexpr(cx, out_index, at(k))?;
                e.store_fold(cx, out, i, v, t)
            };
            let zero = e.c_u32(0);
            let one = e.c_u32(1);
            // Associative folds, one row per unit (right folds go per element, below).
            match unit {
                Unit::Subgroup => {
                    let id = e.identity(op, t);
                    e.store(carry, id)?;
                    e.count_loop(kvar, zero, len, sgsize, |e, base| {
                        let k = e.uadd(base, lane)?;
                        let valid = e.ult(k, len)?;
                        e.if_else(
                            valid,
                            |e| {
                                let x = e.expr(cx, expr, at(k))?;
                                e.store(acc, x)
                            },
                            |e| {
                                let id = e.identity(op, t);
                                e.store(acc, id)
                            },
                        )?;
                        let x = e.load(tt, acc)?;
                        let sc = e.group(op, t, GroupOperation::InclusiveScan, x)?;
                        let tot = e.group(op, t, GroupOperation::Reduce, x)?;
                        let c = e.load(tt, carry)?;
                        let r = e.binop(op, t, c, sc)?;
                        e.if_then(valid, |e| store_at(e, k, r))?;
                        let nc = e.binop(op, t, c, tot)?;
                        e.store(carry, nc)
                    })
                }
                _ => {
                    let id = e.identity(op, t);
                    e.store(acc, id)?;
                    e.count_loop(kvar, zero, len, one, |e, k| {
                        let x = e.expr(cx, expr, at(k))?;
                        let a = e.load(tt, acc)?;
                        let r = e.binop(op, t, a, x)?;
                        e.store(acc, r)?;
                        store_at(e, k, r)
                    })
                }
            }
        };
        if matches!(fold, Fold::Right { .. } | Fold::Dfn { .. }) {
            // One invocation per element (row, k): x0 f (x1 f (… f xk)). The prefixes
            // are independent, so a row of n costs n folds side by side rather than
            // n²/2 steps in one invocation (whose inner loop lavapipe cut off after
            // 65535 steps in all: `¯2↑-\⍳1000` was 0 0).
            let units = self.umul(rows, len)?;
            let per_elem = |e: &mut Self, cx: &Cx, unit_id: Word| -> R<()> {
                let row = e.b.u_div(u, None, unit_id, len).map_err(be)?;
                let k = e.b.u_mod(u, None, unit_id, len).map_err(be)?;
                let at = |j: Word| Ix {
                    index: j,
                    row,
                    pos: j,
                };
                let x_at = |e: &mut Self, j: Word| e.expr(cx, expr, at(j));
                e.fold_down(cx, (fold, true), t, acc, jvar, k, &x_at)?;
                let a = e.load(tt, acc)?;
                let i = e.iexpr(cx, out_index, at(k))?;
                e.store_fold(cx, out, i, a, t)
            };
            return self.units_loop(cx, Unit::Thread, units, &per_elem);
        }
        self.units_loop(cx, unit, rows, &body)
    }
}
