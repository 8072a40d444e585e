//! Lowering `⌸` for the operands that count or fold their groups (`{≢⍵}⌸k`,
//! `{⍺,≢⍵}⌸k`, `k{+/⍵}⌸v` with `v` of booleans, i32 or floats (floats where the keys
//! are not f64), `k{⌈/⍵}⌸v` and `⌊/` with `v` of integers or floats, and `{⍺,…}` of
//! each). Exactly compared keys are sorted
//! and each run of equal keys is a group (`Lower::runs`, which `≠` and `∪` share):
//! one value per group is computed in sorted order and put in order of first
//! occurrence. f64 keys (tolerant equality, not transitive) take their groups from
//! `k⍳k` and fold each item into its group with an atomic (`Inst::ScatterAdd`).
//! Floats' maxima are taken of integers in the floats' order.

use super::*;

/// `Lower::runs` numbers positions from 1 in i32, with `n+1` past the last: longer
/// vectors take the searches' path.
pub(super) const RUNS_BELOW: u64 = i32::MAX as u64;

/// What a `⌸` operand computes from its group.
#[derive(Clone, Copy, PartialEq)]
enum KeyOp {
    Count,
    /// `+/ ⌈/ ⌊/` of the group.
    Fold(BinOp),
}

/// `{≢⍵}`, `{+/⍵}`, `{⌈/⍵}`, `{⌊/⍵}` and `{⍺,…}` of each: the group's count or
/// fold, whether the key comes first, and the span of the count or fold (where its
/// errors point).
fn key_operand(f: &Func) -> Option<(KeyOp, bool, Span)> {
    let FuncKind::Dfn(body) = &f.kind else {
        return None;
    };
    let [Stmt::Expr(e)] = body.stmts.as_slice() else {
        return None;
    };
    let of_omega = |e: &Expr| -> Option<(KeyOp, Span)> {
        let ExprKind::Monadic { func, arg } = &e.kind else {
            return None;
        };
        if !matches!(arg.kind, ExprKind::Omega) {
            return None;
        }
        let op = match &func.kind {
            FuncKind::Prim(Prim::Tally) => Some(KeyOp::Count),
            FuncKind::Derived {
                op: Op1::Reduce | Op1::ReduceFirst,
                operand,
            } => match operand.kind {
                FuncKind::Prim(Prim::Plus) => Some(KeyOp::Fold(BinOp::Add)),
                FuncKind::Prim(Prim::Ceiling) => Some(KeyOp::Fold(BinOp::Max)),
                FuncKind::Prim(Prim::Floor) => Some(KeyOp::Fold(BinOp::Min)),
                _ => None,
            },
            _ => None,
        };
        op.map(|op| (op, func.span.clone()))
    };
    match &e.kind {
        ExprKind::Dyadic { func, left, right }
            if matches!(func.kind, FuncKind::Prim(Prim::Comma))
                && matches!(left.kind, ExprKind::Alpha) =>
        {
            of_omega(right).map(|(op, s)| (op, true, s))
        }
        _ => of_omega(e).map(|(op, s)| (op, false, s)),
    }
}

impl Lower {
    pub(super) fn key(
        &mut self,
        f: &Func,
        a: Option<Value>,
        x: Value,
        span: &Span,
    ) -> Result<Value> {
        let unsupported = || self.unsupported("⌸ with this operand or these arguments", span);
        let f = self.resolve(f)?;
        let Some((op, with_key, fold_span)) = key_operand(&f) else {
            return unsupported();
        };
        let keys = a.unwrap_or(x);
        let kt = self.f.ty(keys).clone();
        let Some(&Dim::Known(n)) = kt.shape.first() else {
            return unsupported();
        };
        if kt.rank() != 1 || n == 0 {
            return unsupported();
        }
        // `ordered`: maxima and minima of float items, taken of their `OrderedBits`.
        let (values, ordered) = match (op, a) {
            (KeyOp::Count, Some(_)) => {
                // `k{≢⍵}⌸x` counts the major cells of `x` by key: one per key (a
                // scalar is one).
                let xt = self.f.ty(x).clone();
                match xt.shape.first().copied().unwrap_or(Dim::Known(1)) {
                    Dim::Known(items) if items == n => {}
                    Dim::Known(items) => {
                        return Err(err::length(
                            format!("{n} keys for {items} items"),
                            span.clone(),
                        ))
                    }
                    Dim::Dyn(_) => return unsupported(),
                    // A length given at run time is checked then.
                    sym @ Dim::Sym(_) => self.f.checks.push(LengthCheck {
                        a: Dim::Known(n),
                        b: sym,
                        span: span.clone(),
                    }),
                }
                (
                    self.konst(Array::scalar(Scalar::I32(1)), span.clone()),
                    false,
                )
            }
            (KeyOp::Count, None) => (
                self.konst(Array::scalar(Scalar::I32(1)), span.clone()),
                false,
            ),
            (KeyOp::Fold(_), None) => {
                // `{+/⍵}⌸k` sums the indices of each group.
                let iota = self.iota_of(Dim::Known(n), self.io as i32, span);
                (iota, false)
            }
            (KeyOp::Fold(fold), Some(_)) => {
                let xt = self.f.ty(x).clone();
                if xt.shape != kt.shape {
                    return if xt.rank() == 1 && known_dims(&xt.shape).is_some() {
                        Err(err::length(
                            format!("{n} keys for {} items", xt.shape[0]),
                            span.clone(),
                        ))
                    } else {
                        unsupported()
                    };
                }
                // Sums of booleans or i32 (in i64); maxima and minima of integers,
                // and of floats as integers of the same order (`UnOp::OrderedBits`:
                // exact, whatever order the atomics take).
                let runs = kt.elem != ElemType::F64 && n < RUNS_BELOW;
                let fits = match fold {
                    // Floats sum by runs only (a scan restarted at each run).
                    BinOp::Add if xt.elem.is_float() => runs,
                    BinOp::Add => matches!(xt.elem, ElemType::Bool | ElemType::I32),
                    _ => matches!(
                        xt.elem,
                        ElemType::I32 | ElemType::I64 | ElemType::F32 | ElemType::F64
                    ),
                };
                if !fits {
                    return unsupported();
                }
                if xt.elem.is_float() && fold != BinOp::Add {
                    (self.unary(UnOp::OrderedBits, x, span.clone())?, true)
                } else {
                    (x, false)
                }
            }
        };
        if kt.elem != ElemType::F64 && n < RUNS_BELOW {
            let spans = (span, &fold_span);
            return self.key_by_runs(op, keys, values, ordered, with_key, n, spans);
        }
        let (elem, fold) = match op {
            KeyOp::Count => (ElemType::I32, BinOp::Add),
            KeyOp::Fold(BinOp::Add) => (ElemType::I64, BinOp::Add),
            // The items (their `OrderedBits` for floats), or the indices.
            KeyOp::Fold(f) => (self.f.ty(values).elem, f),
        };
        let values = self.cast(values, elem);
        // Tolerant equality is not transitive (and vectors too long for `runs`): the
        // groups are as `k⍳k` defines them, in order of first occurrence (where an item's first occurrence is itself),
        // and each item's group from 0 is the first occurrences up to its own.
        let iota = self.iota_of(Dim::Known(n), 1, span);
        let firsts = self.search(keys, keys, SearchKind::IndexOf { origin: 1 }, span.clone())?;
        let mask = self.binary(BinOp::Equal, firsts, iota, span.clone())?;
        let m32 = self.cast(mask, ElemType::I32);
        let count = self.scan(BinOp::Add, m32, 0, span.clone())?;
        let count = self.cast(count, ElemType::I32);
        let rank = self.index(count, vec![Some(firsts)], span.clone())?;
        let one = self.konst(Array::scalar(Scalar::I32(1)), span.clone());
        let group = self.binary(BinOp::Sub, rank, one, span.clone())?;
        let group = self.cast(group, ElemType::I32);
        let uniq = self.compress(mask, keys, false, None, span.clone())?;
        let d = self.f.ty(uniq).shape[0];
        let sums = self.f.push(
            Inst::ScatterAdd {
                op: fold,
                index: group,
                values,
            },
            Type {
                elem,
                shape: vec![d],
            },
            span.clone(),
        );
        self.key_result(sums, ordered, with_key.then_some(uniq), span)
    }

    /// The groups' values (floats back from their ordered bits where `ordered`),
    /// after each group's key where the operand is `{⍺,…}`.
    fn key_result(
        &mut self,
        values: Value,
        ordered: bool,
        keys: Option<Value>,
        span: &Span,
    ) -> Result<Value> {
        let values = if ordered {
            self.unary(UnOp::FromOrderedBits, values, span.clone())?
        } else {
            values
        };
        match keys {
            Some(keys) => self.laminate(keys, values, 1, span.clone()),
            None => Ok(values),
        }
    }

    /// `⌸` of exactly compared keys, group by group in the keys' sorted order, where
    /// a group is a run ([`Runs`]): counts are the runs' lengths, sums differences of
    /// a `+\` of the items in sorted order, maxima and minima an atomic fold into
    /// each run's first place. Only one value per group is then put in order of first
    /// occurrence: nothing is scattered back item by item.
    #[allow(clippy::too_many_arguments)]
    fn key_by_runs(
        &mut self,
        op: KeyOp,
        keys: Value,
        values: Value,
        ordered: bool,
        with_key: bool,
        n: u64,
        (span, fold_span): (&Span, &Span),
    ) -> Result<Value> {
        let runs = self.runs(keys, n, span)?;
        let one = self.konst(Array::scalar(Scalar::I32(1)), span.clone());
        let fold = match op {
            KeyOp::Count => None,
            KeyOp::Fold(fold) => {
                let sorted = self.index(values, vec![Some(runs.order)], span.clone())?;
                Some((fold, sorted))
            }
        };
        let per_run = match fold {
            None => {
                let lens = self.binary(BinOp::Sub, runs.next, runs.at, span.clone())?;
                self.cast(lens, ElemType::I32)
            }
            Some((BinOp::Add, sorted)) if self.f.ty(sorted).elem.is_float() => {
                // Float sums: a `+` scan restarted at each run, read at its last
                // item (a difference of a float `+\` would lose a small group's
                // digits to the groups before it). Its overflow is the `+/`'s.
                let ty = self.f.ty(sorted).clone();
                let seg = self.f.push(
                    Inst::SegScan {
                        op: BinOp::Add,
                        arg: sorted,
                        starts: runs.starts,
                    },
                    ty,
                    fold_span.clone(),
                );
                let last = self.run_ends(&runs, span)?;
                self.index(seg, vec![Some(last)], span.clone())?
            }
            Some((BinOp::Add, sorted)) => {
                // `+/` of a run is the `+\` at its last item less the one before its
                // first: exact in i64 (2^32 items of i32 cannot overflow it).
                let sums = self.scan(BinOp::Add, sorted, 0, span.clone())?;
                let sums = self.cast(sums, ElemType::I64);
                let before = self.gather(
                    sums,
                    Gather::Window {
                        start: vec![-1],
                        fill: Scalar::I64(0),
                    },
                    vec![Dim::Known(n)],
                    span.clone(),
                );
                let last = self.run_ends(&runs, span)?;
                let to = self.index(sums, vec![Some(last)], span.clone())?;
                let from = self.index(before, vec![Some(runs.at)], span.clone())?;
                let diff = self.binary(BinOp::Sub, to, from, span.clone())?;
                self.cast(diff, ElemType::I64)
            }
            Some((fold, sorted)) => {
                // Each item folds into the place where its run starts (each run's
                // items are together, so the atomics meet only within a run).
                let at = self.binary(BinOp::Mul, runs.starts, runs.iota, span.clone())?;
                let at = self.cast(at, ElemType::I32);
                let run_start = self.scan(BinOp::Max, at, 0, span.clone())?;
                let place = self.binary(BinOp::Sub, run_start, one, span.clone())?;
                let place = self.cast(place, ElemType::I32);
                let elem = self.f.ty(sorted).elem;
                let folded = self.f.push(
                    Inst::ScatterAdd {
                        op: fold,
                        index: place,
                        values: sorted,
                    },
                    Type {
                        elem,
                        shape: vec![Dim::Known(n)],
                    },
                    span.clone(),
                );
                self.index(folded, vec![Some(runs.at)], span.clone())?
            }
        };
        let result = self.index(per_run, vec![Some(runs.groups)], span.clone())?;
        let uniq = if with_key {
            let first = self.index(runs.first, vec![Some(runs.groups)], span.clone())?;
            Some(self.index(keys, vec![Some(first)], span.clone())?)
        } else {
            None
        };
        self.key_result(result, ordered, uniq, span)
    }

    /// Where each run ends: its last item's position (from 1).
    fn run_ends(&mut self, runs: &Runs, span: &Span) -> Result<Value> {
        let one = self.konst(Array::scalar(Scalar::I32(1)), span.clone());
        let last = self.binary(BinOp::Sub, runs.next, one, span.clone())?;
        Ok(self.cast(last, ElemType::I32))
    }

    /// The runs of equal items (exact equality) of the vector `keys` of `n` items, by
    /// a stable sort: where each run starts, where it ends, its first item (the
    /// smallest index, the sort being stable), and the runs in order of their first
    /// items. Only one value per run goes back to the items' order (a scatter of the
    /// run's number to its first item), and a compression of the items' order gives
    /// the runs' order; a random scatter of every item cost 4.7 ms at 2^26 on the
    /// H100.
    pub(super) fn runs(&mut self, keys: Value, n: u64, span: &Span) -> Result<Runs> {
        let order = self.narrow_keys(keys);
        let order = self.grade(order, false, 1, span.clone())?;
        debug_assert!(n < RUNS_BELOW, "runs of {n} items");
        let sorted = self.index(keys, vec![Some(order)], span.clone())?;
        let fill = Scalar::I32(0).cast(self.f.ty(sorted).elem);
        let prev = self.gather(
            sorted,
            Gather::Window {
                start: vec![-1],
                fill,
            },
            vec![Dim::Known(n)],
            span.clone(),
        );
        let differs = self.binary(BinOp::NotEqual, sorted, prev, span.clone())?;
        let iota = self.iota_of(Dim::Known(n), 1, span);
        let one = self.konst(Array::scalar(Scalar::I32(1)), span.clone());
        let first_item = self.binary(BinOp::Equal, iota, one, span.clone())?;
        let starts = self.binary(BinOp::Or, differs, first_item, span.clone())?;
        let at = self.compress(starts, iota, false, None, span.clone())?;
        let d = self.f.ty(at).shape[0];
        let next = self.gather(
            at,
            Gather::Window {
                start: vec![1],
                fill: Scalar::I32((n + 1) as i32),
            },
            vec![d],
            span.clone(),
        );
        let first = self.index(order, vec![Some(at)], span.clone())?;
        let first = self.cast(first, ElemType::I32);
        let to = self.binary(BinOp::Sub, first, one, span.clone())?;
        let to = self.cast(to, ElemType::I32);
        let number = self.iota_of(d, 1, span);
        let numbered = self.f.push(
            Inst::ScatterAdd {
                op: BinOp::Add,
                index: to,
                values: number,
            },
            Type {
                elem: ElemType::I32,
                shape: vec![Dim::Known(n)],
            },
            span.clone(),
        );
        let zero = self.konst(Array::scalar(Scalar::I32(0)), span.clone());
        let mask = self.binary(BinOp::Greater, numbered, zero, span.clone())?;
        let groups = self.compress(mask, numbered, false, None, span.clone())?;
        Ok(Runs {
            order,
            iota,
            starts,
            at,
            next,
            first,
            groups,
            mask,
        })
    }
}

/// The runs of equal keys (`Lower::runs`); positions and items count from 1.
pub(super) struct Runs {
    /// `⍋keys`.
    order: Value,
    /// `⍳n`.
    iota: Value,
    /// In sorted order: 1 where an item starts its run.
    starts: Value,
    /// For each run in sorted order: where it starts.
    at: Value,
    /// And where the next one does (`n+1` after the last).
    next: Value,
    /// Each run's first item.
    first: Value,
    /// The runs in order of their first items.
    groups: Value,
    /// In the items' order: 1 where an item is the first of its key.
    pub(super) mask: Value,
}
