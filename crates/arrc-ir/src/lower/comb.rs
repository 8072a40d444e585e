//! Dfn operands of folds and scans held as `Comb` trees: the operand lowered once on
//! scalar stand-ins for ⍺ and ⍵ (`Lower::trial`), its formula settled, and the type
//! questions a fold asks of it.

use super::*;

impl Lower {
    /// Whether a guard in `c` (with ⍺ and ⍵ of type `r`) chooses between an integer and
    /// a float.
    pub(super) fn mixed_guard(&self, c: &Comb, r: ElemType) -> bool {
        match c {
            Comb::Select { cond, then, els } => {
                // Each side's own type, under the cast to their join.
                let own = |c: &Comb| match c {
                    Comb::Cast { arg, .. } => self.comb_elem(arg, r),
                    c => self.comb_elem(c, r),
                };
                own(then).is_float() != own(els).is_float()
                    || self.mixed_guard(cond, r)
                    || self.mixed_guard(then, r)
                    || self.mixed_guard(els, r)
            }
            Comb::Cast { arg, .. } | Comb::Unary { arg, .. } => self.mixed_guard(arg, r),
            Comb::Binary { lhs, rhs, .. } => self.mixed_guard(lhs, r) || self.mixed_guard(rhs, r),
            Comb::Alpha | Comb::Omega | Comb::Outer(_) | Comb::Const(_) => false,
        }
    }

    /// The element type a `Comb` gives, with ⍺ and ⍵ of type `r`.
    /// Whether some function in `c` takes an integer computed from ⍺ or ⍵ (⍺ and ⍵
    /// of type `r`) as an integer, not converted to a float first.
    pub(super) fn int_operands(&self, c: &Comb, r: ElemType) -> bool {
        let int_from_args = |x: &Comb| x.reads_arguments() && self.comb_elem(x, r).is_int();
        match c {
            Comb::Alpha | Comb::Omega | Comb::Outer(_) | Comb::Const(_) => false,
            Comb::Cast { arg, .. } => self.int_operands(arg, r),
            Comb::Unary { arg, .. } => int_from_args(arg) || self.int_operands(arg, r),
            Comb::Binary { lhs, rhs, .. } => {
                int_from_args(lhs)
                    || int_from_args(rhs)
                    || self.int_operands(lhs, r)
                    || self.int_operands(rhs, r)
            }
            Comb::Select { cond, then, els } => {
                int_from_args(cond)
                    || self.int_operands(cond, r)
                    || self.int_operands(then, r)
                    || self.int_operands(els, r)
            }
        }
    }

    pub(super) fn comb_elem(&self, c: &Comb, r: ElemType) -> ElemType {
        match c {
            Comb::Alpha | Comb::Omega => r,
            Comb::Outer(v) => self.f.ty(*v).elem,
            Comb::Const(s) => s.elem_type(),
            Comb::Cast { to, .. } => *to,
            Comb::Unary { elem, .. } | Comb::Binary { elem, .. } => *elem,
            Comb::Select { then, els, .. } => self.comb_elem(then, r).join(self.comb_elem(els, r)),
        }
    }

    /// Runs `f` as a trial on the IR and undoes every instruction and length check it
    /// added (the IR only grows at its end).
    pub(super) fn undone<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let (start, checks, draws) = (self.f.insts.len(), self.f.checks.len(), self.f.draws);
        let r = f(self);
        self.f.draws = draws;
        self.f.insts.truncate(start);
        self.f.types.truncate(start);
        self.f.spans.truncate(start);
        self.f.checks.truncate(checks);
        r
    }

    /// The dfn `g` applied to scalar ⍺ and ⍵ of type `t`, as a [`Formula`]; NOT YET
    /// SUPPORTED unless it is made of scalar functions.
    pub(super) fn comb(&mut self, g: &Func, t: ElemType, span: &Span) -> Result<Formula> {
        let result = self.trial(span, |l| {
            let a =
                l.f.push(Inst::Param { index: 1 }, Type::scalar(t), span.clone());
            let w =
                l.f.push(Inst::Param { index: 0 }, Type::scalar(t), span.clone());
            let r = l.dyadic(g, a, w, span)?;
            Ok((r, a, w))
        });
        result.map_err(|e| {
            if e.class == crate::ErrorClass::Unsupported {
                err::unsupported(
                    format!(
                        "a dfn operand made of more than scalar functions is not supported on the GPU path yet ({})",
                        e.message
                    ),
                    span.clone(),
                )
            } else {
                e
            }
        })
    }

    /// Runs `build` as a trial on scalar stand-ins for ⍺ and ⍵ (it gives the result
    /// and the two stand-ins, which may be one) and undoes it. The result must be a
    /// scalar computed from the stand-ins by scalar functions: a [`Comb`]. Scalars it
    /// reads that do not depend on the stand-ins (`+/v` in `{⍺+⍵×+/v}`) are kept, with
    /// what computes them, for [`Self::settle`].
    pub(super) fn trial(
        &mut self,
        span: &Span,
        build: impl FnOnce(&mut Self) -> Result<(Value, Value, Value)>,
    ) -> Result<Formula> {
        let start = self.f.insts.len();
        self.trials += 1;
        let formula = self.undone(|l| {
            let checks = l.f.checks.len();
            let (r, a, w) = build(l)?;
            if l.f.ty(r).rank() != 0 {
                return Err(err::unsupported(
                    "the operand must give a scalar",
                    span.clone(),
                ));
            }
            let end = l.f.insts.len();
            let mut varies = vec![false; end - start];
            for i in start..end {
                let v = Value(i as u32);
                varies[i - start] = v == a
                    || v == w
                    || l.f
                        .inst(v)
                        .operands()
                        .iter()
                        .any(|o| o.index() >= start && varies[o.index() - start]);
            }
            let trial = Trial {
                a,
                w,
                start,
                varies,
            };
            let mut reads = Vec::new();
            let comb = l.comb_of(r, &trial, &mut reads, span)?;
            // What computes the scalars read, in order.
            let mut need = vec![false; end - start];
            while let Some(v) = reads.pop() {
                if v.index() >= start && !need[v.index() - start] {
                    need[v.index() - start] = true;
                    reads.extend(l.f.inst(v).operands());
                }
            }
            let hoisted = (start..end)
                .filter(|&i| need[i - start])
                .map(|i| {
                    let v = Value(i as u32);
                    (
                        v,
                        l.f.inst(v).clone(),
                        l.f.ty(v).clone(),
                        l.f.spans[i].clone(),
                    )
                })
                .collect();
            Ok(Formula {
                comb,
                elem: l.f.ty(r).elem,
                hoisted,
                checks: l.f.checks.len() > checks,
            })
        });
        self.trials -= 1;
        formula
    }

    /// The formula's [`Comb`], after the scalars it reads from outside names are
    /// computed again, once, outside the trial. They are computed whether or not
    /// the operand ever runs, so `runs` must say that it certainly does (an error
    /// they raise is then the operand's own).
    pub(super) fn settle(&mut self, f: Formula, runs: bool, span: &Span) -> Result<Comb> {
        if f.hoisted.is_empty() {
            return Ok(f.comb);
        }
        if f.checks || !runs {
            return Err(err::unsupported(
                "an operand that computes a value from outside names runs on the GPU path only where its arguments' lengths are known and not 0",
                span.clone(),
            ));
        }
        let mut map = HashMap::new();
        for (old, mut inst, ty, at) in f.hoisted {
            inst.map_operands(&mut |v| *map.get(&v).unwrap_or(&v));
            map.insert(old, self.f.push(inst, ty, at));
        }
        let mut comb = f.comb;
        comb.map_outer(&mut |v| *map.get(&v).unwrap_or(&v));
        Ok(comb)
    }

    pub(super) fn comb_of(
        &self,
        v: Value,
        t: &Trial,
        reads: &mut Vec<Value>,
        span: &Span,
    ) -> Result<Comb> {
        let mut sub = |x: &Value| self.comb_of(*x, t, reads, span).map(Box::new);
        let elem = self.f.ty(v).elem;
        let scalar = self.f.ty(v).rank() == 0;
        Ok(match self.f.inst(v) {
            _ if v == t.a => Comb::Alpha,
            _ if v == t.w => Comb::Omega,
            Inst::Const(c) if c.len() == 1 => Comb::Const(c.data.get(0)),
            // A scalar computed before the trial began: a name from outside the
            // operand.
            _ if v.index() < t.start && scalar => Comb::Outer(v),
            Inst::Cast(x) => Comb::Cast {
                to: elem,
                arg: sub(x)?,
            },
            Inst::Unary { op, arg } => Comb::Unary {
                op: *op,
                elem,
                arg: sub(arg)?,
            },
            Inst::Binary { op, lhs, rhs } => Comb::Binary {
                op: *op,
                elem,
                lhs: sub(lhs)?,
                rhs: sub(rhs)?,
            },
            Inst::Select { cond, then, els } => Comb::Select {
                cond: sub(cond)?,
                then: sub(then)?,
                els: sub(els)?,
            },
            // A scalar the trial computed without the stand-ins (`+/v`).
            _ if scalar && !t.varies[v.index() - t.start] => {
                reads.push(v);
                Comb::Outer(v)
            }
            _ => {
                return Err(err::unsupported(
                    "only scalar functions of ⍺, ⍵ and literals",
                    span.clone(),
                ))
            }
        })
    }

    /// The scalar function an operator's operand denotes: a primitive, or a dfn whose
    /// body is `⍺ f ⍵`.
    pub(super) fn operand_op(&self, operand: &Func) -> Result<BinOp> {
        let span = operand.span.clone();
        match &operand.kind {
            FuncKind::Prim(p) => BinOp::from_prim(*p).ok_or_else(|| {
                err::unsupported(
                    format!(
                        "{} as an operand is not supported on the GPU path yet",
                        p.glyph()
                    ),
                    span,
                )
            }),
            FuncKind::Dfn(body) => match body.stmts.as_slice() {
                [Stmt::Expr(Expr {
                    kind: ExprKind::Dyadic { func, left, right },
                    ..
                })] if matches!(left.kind, ExprKind::Alpha)
                    && matches!(right.kind, ExprKind::Omega) =>
                {
                    self.operand_op(&self.resolve(func)?)
                }
                _ => Err(err::unsupported(
                    "a dfn operand other than {⍺ f ⍵} is not supported on the GPU path yet",
                    span,
                )),
            },
            _ => Err(err::unsupported(
                "this operand is not supported on the GPU path yet",
                span,
            )),
        }
    }
}
