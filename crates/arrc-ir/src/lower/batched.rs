//! Lowering `f⍤1 ⍵` for a function of a row made of scalar functions and reductions
//! (`{⍵÷+/⍵}⍤1`, `(+/÷≢)⍤1`, `{e÷+/e←*⍵-⌈/⍵}⍤1`): `f` is applied to every row at once.
//! A value is either the same for every row (a constant), one number per row (the
//! frame's shape: a reduction's result) or a whole row per row (the argument's shape);
//! scalar functions spread a number per row along its row, reductions fold the last
//! axis. Anything else leaves the statement to the reference.

use super::*;

/// What a value holds for each row.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Per {
    /// One value for every row (a scalar).
    All,
    /// One number per row: the frame's shape.
    Row,
    /// A whole row per row: the argument's shape.
    Item,
}

struct Rows {
    /// The argument's shape: the frame, then the row's length.
    shape: Vec<Dim>,
    /// The row's length, when it is known here.
    len: Option<u64>,
    /// The dfn's local names.
    locals: HashMap<String, (Value, Per)>,
}

impl Lower {
    /// `f⍤1 ⍵` by rows, or `None` where `f` is not of that kind.
    pub(super) fn by_rows(&mut self, f: &Func, x: Value, span: &Span) -> Result<Option<Value>> {
        let xt = self.f.ty(x).clone();
        let Some(&last) = xt.shape.last() else {
            return Ok(None);
        };
        let mut rows = Rows {
            shape: xt.shape.clone(),
            len: match last {
                Dim::Known(n) => Some(n),
                _ => None,
            },
            locals: HashMap::new(),
        };
        let r = self.undone_on_none(|l| l.row_apply(f, None, (x, Per::Item), &mut rows, span))?;
        Ok(r.map(|(v, per)| match per {
            Per::Item => v,
            // One number per row: the frame; the same for every row: spread over it.
            Per::Row => v,
            Per::All => {
                let frame = rows.shape[..rows.shape.len() - 1].to_vec();
                self.reshape(v, frame, span.clone())
            }
        }))
    }

    /// Runs `f`, and takes back what it added to the function when it gives `None`.
    fn undone_on_none<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<Option<T>>,
    ) -> Result<Option<T>> {
        let (start, checks, draws) = (self.f.insts.len(), self.f.checks.len(), self.f.draws);
        let r = f(self)?;
        if r.is_none() {
            self.f.insts.truncate(start);
            self.f.types.truncate(start);
            self.f.spans.truncate(start);
            self.f.checks.truncate(checks);
            self.f.draws = draws;
        }
        Ok(r)
    }

    /// `v` as a whole row per row.
    fn spread_rows(&mut self, (v, per): (Value, Per), rows: &Rows, span: &Span) -> Value {
        match per {
            Per::Item | Per::All => v,
            Per::Row => {
                let axes: Vec<usize> = (0..rows.shape.len() - 1).collect();
                self.gather(v, Gather::Axes(axes), rows.shape.clone(), span.clone())
            }
        }
    }

    fn row_apply(
        &mut self,
        f: &Func,
        a: Option<(Value, Per)>,
        x: (Value, Per),
        rows: &mut Rows,
        span: &Span,
    ) -> Result<Option<(Value, Per)>> {
        let f = self.resolve(f)?;
        Ok(Some(match (&f.kind, a) {
            (FuncKind::Prim(Prim::Right), _) => x,
            (FuncKind::Prim(Prim::Left), Some(a)) => a,
            (FuncKind::Prim(Prim::Tally), None) => {
                let n = match x.1 {
                    Per::Item => match rows.len {
                        Some(n) => n as i32,
                        None => return Ok(None),
                    },
                    _ => 1,
                };
                (
                    self.konst(Array::scalar(Scalar::I32(n)), span.clone()),
                    Per::All,
                )
            }
            (FuncKind::Prim(p), None) => match UnOp::from_prim(*p) {
                Some(op) if op.on_gpu_for(self.f.ty(x.0).elem, self.f.float) => {
                    (self.unary(op, x.0, span.clone())?, x.1)
                }
                _ => return Ok(None),
            },
            (FuncKind::Prim(p), Some(a)) => {
                let Some(op) = BinOp::from_prim(*p) else {
                    return Ok(None);
                };
                let per = match (a.1, x.1) {
                    (Per::All, p) | (p, Per::All) => p,
                    (Per::Row, Per::Row) => Per::Row,
                    _ => Per::Item,
                };
                let (l, r) = if per == Per::Item {
                    (
                        self.spread_rows(a, rows, span),
                        self.spread_rows(x, rows, span),
                    )
                } else {
                    (a.0, x.0)
                };
                (self.apply_binary(op, l, r, span.clone())?, per)
            }
            (
                FuncKind::Derived {
                    op: op @ (Op1::Reduce | Op1::ReduceFirst),
                    operand,
                },
                None,
            ) => {
                let operand = self.resolve(operand)?;
                if !matches!(operand.kind, FuncKind::Prim(_)) {
                    return Ok(None);
                }
                match x.1 {
                    Per::Item => {
                        let axis = rows.shape.len() - 1;
                        (self.fold(&operand, *op, x.0, axis, span.clone())?, Per::Row)
                    }
                    // A reduction of one number is that number.
                    _ => x,
                }
            }
            (FuncKind::Atop(g, h), a) => {
                let Some(y) = self.row_apply(h, a, x, rows, span)? else {
                    return Ok(None);
                };
                return self.row_apply(g, None, y, rows, span);
            }
            (FuncKind::Fork(t, g, h), a) => {
                let Some(r) = self.row_apply(h, a, x, rows, span)? else {
                    return Ok(None);
                };
                let l = match &**t {
                    Tine::Func(t) => match self.row_apply(t, a, x, rows, span)? {
                        Some(l) => l,
                        None => return Ok(None),
                    },
                    Tine::Array(e) => {
                        let v = self.expr(e)?;
                        if self.f.ty(v).rank() != 0 {
                            return Ok(None);
                        }
                        (v, Per::All)
                    }
                };
                return self.row_apply(g, Some(l), r, rows, span);
            }
            (FuncKind::Dfn(body), a) => {
                let saved = std::mem::take(&mut rows.locals);
                rows.locals.insert("⍵".into(), x);
                if let Some(a) = a {
                    rows.locals.insert("⍺".into(), a);
                }
                let mut result = None;
                for s in &body.stmts {
                    let Stmt::Expr(e) = s else {
                        rows.locals = saved;
                        return Ok(None);
                    };
                    let Some(v) = self.row_expr(e, rows)? else {
                        rows.locals = saved;
                        return Ok(None);
                    };
                    result = Some(v);
                    if !e.is_assignment() {
                        break;
                    }
                }
                rows.locals = saved;
                return Ok(result);
            }
            _ => return Ok(None),
        }))
    }

    fn row_expr(&mut self, e: &Expr, rows: &mut Rows) -> Result<Option<(Value, Per)>> {
        Ok(match &e.kind {
            ExprKind::Omega | ExprKind::Alpha => {
                let n = if matches!(e.kind, ExprKind::Omega) {
                    "⍵"
                } else {
                    "⍺"
                };
                rows.locals.get(n).copied()
            }
            ExprKind::Name(n) if rows.locals.contains_key(n) => rows.locals.get(n).copied(),
            ExprKind::Number(_) | ExprKind::Name(_) => {
                let v = self.expr(e)?;
                (self.f.ty(v).rank() == 0).then_some((v, Per::All))
            }
            // A system variable set in the operand is not a local name.
            ExprKind::Assign { name, .. } if arrc_syntax::is_system_name(name) => None,
            ExprKind::Assign { name, value, .. } => {
                let Some(v) = self.row_expr(value, rows)? else {
                    return Ok(None);
                };
                rows.locals.insert(name.clone(), v);
                Some(v)
            }
            ExprKind::Monadic { func, arg } => {
                let Some(x) = self.row_expr(arg, rows)? else {
                    return Ok(None);
                };
                self.row_apply(func, None, x, rows, &e.span)?
            }
            ExprKind::Dyadic { func, left, right } => {
                let Some(r) = self.row_expr(right, rows)? else {
                    return Ok(None);
                };
                let Some(l) = self.row_expr(left, rows)? else {
                    return Ok(None);
                };
                self.row_apply(func, Some(l), r, rows, &e.span)?
            }
            _ => None,
        })
    }
}
