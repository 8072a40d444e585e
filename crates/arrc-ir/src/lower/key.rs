//! Lowering `⌸` for the operands that count or fold their groups (`{≢⍵}⌸k`,
//! `{⍺,≢⍵}⌸k`, `k{+/⍵}⌸v` with `v` of booleans or i32, `k{⌈/⍵}⌸v` and `⌊/` with `v`
//! of integers or floats, and `{⍺,…}` of each): the keys' first occurrences give the
//! groups in order (`∪k`), each item's group is the count of first occurrences up to
//! its key's first one, and one atomic per item folds the groups
//! (`Inst::ScatterAdd`; floats' maxima as integers in their order).

use super::*;

/// What a `⌸` operand computes from its group.
#[derive(Clone, Copy, PartialEq)]
enum KeyOp {
    Count,
    /// `+/ ⌈/ ⌊/` of the group.
    Fold(BinOp),
}

/// `{≢⍵}`, `{+/⍵}`, `{⌈/⍵}`, `{⌊/⍵}` and `{⍺,…}` of each: the group's count or
/// fold, and whether the key comes first.
fn key_operand(f: &Func) -> Option<(KeyOp, bool)> {
    let FuncKind::Dfn(body) = &f.kind else {
        return None;
    };
    let [Stmt::Expr(e)] = body.stmts.as_slice() else {
        return None;
    };
    let of_omega = |e: &Expr| -> Option<KeyOp> {
        let ExprKind::Monadic { func, arg } = &e.kind else {
            return None;
        };
        if !matches!(arg.kind, ExprKind::Omega) {
            return None;
        }
        match &func.kind {
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
        }
    };
    match &e.kind {
        ExprKind::Dyadic { func, left, right }
            if matches!(func.kind, FuncKind::Prim(Prim::Comma))
                && matches!(left.kind, ExprKind::Alpha) =>
        {
            of_omega(right).map(|op| (op, true))
        }
        _ => of_omega(e).map(|op| (op, false)),
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
        let Some((op, with_key)) = key_operand(&f) else {
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
                let iota = self.f.push(
                    Inst::Iota {
                        len: Dim::Known(n),
                        origin: self.io as i32,
                    },
                    Type {
                        elem: ElemType::I32,
                        shape: vec![Dim::Known(n)],
                    },
                    span.clone(),
                );
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
                let fits = match fold {
                    BinOp::Add => matches!(xt.elem, ElemType::Bool | ElemType::I32),
                    _ => matches!(
                        xt.elem,
                        ElemType::I32 | ElemType::I64 | ElemType::F32 | ElemType::F64
                    ),
                };
                if !fits {
                    return unsupported();
                }
                if xt.elem.is_float() {
                    (self.unary(UnOp::OrderedBits, x, span.clone())?, true)
                } else {
                    (x, false)
                }
            }
        };
        let (elem, fold) = match op {
            KeyOp::Count => (ElemType::I32, BinOp::Add),
            KeyOp::Fold(BinOp::Add) => (ElemType::I64, BinOp::Add),
            // The items (their `OrderedBits` for floats), or the indices.
            KeyOp::Fold(f) => (self.f.ty(values).elem, f),
        };
        let values = self.cast(values, elem);
        // Groups in order of first occurrence (where an item's first occurrence is
        // itself), and each item's group from 0: the first occurrences up to its own.
        let iota = self.f.push(
            Inst::Iota {
                len: Dim::Known(n),
                origin: 1,
            },
            Type {
                elem: ElemType::I32,
                shape: vec![Dim::Known(n)],
            },
            span.clone(),
        );
        let (firsts, mask) = if kt.elem == ElemType::F64 {
            // Tolerant equality is not transitive: as `k⍳k` defines it.
            let firsts =
                self.search(keys, keys, SearchKind::IndexOf { origin: 1 }, span.clone())?;
            let mask = self.binary(BinOp::Equal, firsts, iota, span.clone())?;
            (firsts, mask)
        } else {
            self.first_occurrences(keys, iota, n, span)?
        };
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
        let sums = if ordered {
            self.unary(UnOp::FromOrderedBits, sums, span.clone())?
        } else {
            sums
        };
        if !with_key {
            return Ok(sums);
        }
        self.laminate(uniq, sums, 1, span.clone())
    }

    /// For each item of `keys` (exact equality), where its key first occurs (from 1)
    /// and whether that is itself: a stable sort, runs of equal keys, each run's
    /// first position spread along it by a `⌈\`, and both put back in the items'
    /// order by one scatter (each slot written once; the position negated where the
    /// item starts its run).
    pub(super) fn first_occurrences(
        &mut self,
        keys: Value,
        iota: Value,
        n: u64,
        span: &Span,
    ) -> Result<(Value, Value)> {
        let order = self.narrow_keys(keys);
        let order = self.grade(order, false, 1, span.clone())?;
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
        let one = self.konst(Array::scalar(Scalar::I32(1)), span.clone());
        let first_item = self.binary(BinOp::Equal, iota, one, span.clone())?;
        let starts = self.binary(BinOp::Or, differs, first_item, span.clone())?;
        let starts = self.cast(starts, ElemType::I32);
        let at = self.binary(BinOp::Mul, starts, iota, span.clone())?;
        let at = self.cast(at, ElemType::I32);
        let run_start = self.scan(BinOp::Max, at, 0, span.clone())?;
        let run_start = self.cast(run_start, ElemType::I32);
        // The first item of a run has the smallest index: the sort is stable.
        let first_sorted = self.index(order, vec![Some(run_start)], span.clone())?;
        let first_sorted = self.cast(first_sorted, ElemType::I32);
        let to = self.binary(BinOp::Sub, order, one, span.clone())?;
        let to = self.cast(to, ElemType::I32);
        // One scatter puts both back: the run's first position (from 1), negated
        // where the item starts its run (a random scatter of 2^26 items cost 3.5 ms
        // on the H100; two did).
        let two = self.konst(Array::scalar(Scalar::I32(2)), span.clone());
        let twice = self.binary(BinOp::Mul, starts, two, span.clone())?;
        let sign = self.binary(BinOp::Sub, one, twice, span.clone())?;
        let signed = self.binary(BinOp::Mul, first_sorted, sign, span.clone())?;
        let signed = self.cast(signed, ElemType::I32);
        let both = self.f.push(
            Inst::ScatterAdd {
                op: BinOp::Add,
                index: to,
                values: signed,
            },
            Type {
                elem: ElemType::I32,
                shape: vec![Dim::Known(n)],
            },
            span.clone(),
        );
        let firsts = self.unary(UnOp::Abs, both, span.clone())?;
        let firsts = self.cast(firsts, ElemType::I32);
        let zero = self.konst(Array::scalar(Scalar::I32(0)), span.clone());
        let mask = self.binary(BinOp::Less, both, zero, span.clone())?;
        Ok((firsts, mask))
    }
}
