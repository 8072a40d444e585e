//! Assignment forms the device path runs as plain assignments: `x f←v` as
//! `x←x f v`; `x[I]←V` (and `m[I;]←V`, `x[I] f←V`) of a workspace array indexed on
//! its first axis as `x←V@I⊢x` (`x←V f⍨@I⊢x`); a selective assignment
//! `m[I;J]←V` as `(m[I;J])←V`; `(sel x)←V` as `x←(⍴x)⍴V@((sel (⍴x)⍴1+⍳≢,x)-1)⊢,x`: the selection applied to
//! the items' places (1-based whatever ⎕IO is, a fill item 0, which falls outside
//! `,x` and is an INDEX ERROR, as on the reference). The scatter of `@` with
//! computed indices may then write x's device buffer in place (`Gpu::consumable`).

use crate::{workspace, Session};
use arrc_syntax::lexer::{Num, Prim};
use arrc_syntax::{Expr, ExprKind, Func, FuncKind, Op1, Span, Stmt, Target, Tine};

/// A primitive applied to one or two arguments, all at `span`.
fn prim(p: Prim, left: Option<Expr>, right: Expr, span: &Span) -> Expr {
    let func = Func::new(FuncKind::Prim(p), span.clone());
    let kind = match left {
        None => ExprKind::Monadic {
            func,
            arg: Box::new(right),
        },
        Some(l) => ExprKind::Dyadic {
            func,
            left: Box::new(l),
            right: Box::new(right),
        },
    };
    Expr::new(kind, span.clone())
}

/// `new@idx⊢x`, or `value f⍨@idx⊢x` for a modified assignment.
fn at(func: Option<&Func>, value: &Expr, idx: Expr, x: Expr, span: &Span) -> Expr {
    let at = |l: Tine| {
        Func::new(
            FuncKind::At(Box::new(l), Box::new(Tine::Array(idx.clone()))),
            span.clone(),
        )
    };
    let kind = match func {
        None => ExprKind::Monadic {
            func: at(Tine::Array(value.clone())),
            arg: Box::new(x),
        },
        Some(f) => ExprKind::Dyadic {
            func: at(Tine::Func(Func::new(
                FuncKind::Derived {
                    op: Op1::Commute,
                    operand: Box::new(f.clone()),
                },
                f.span.clone(),
            ))),
            left: Box::new(value.clone()),
            right: Box::new(x),
        },
    };
    Expr::new(kind, span.clone())
}

fn assign(name: &str, name_span: &Span, value: Expr, span: &Span) -> Stmt {
    Stmt::Expr(Expr::new(
        ExprKind::Assign {
            name: name.to_string(),
            name_span: name_span.clone(),
            value: Box::new(value),
        },
        span.clone(),
    ))
}

impl Session {
    /// The plain statement an assignment `e` of another form runs as, with the name
    /// whose array a scatter may write in place; `None` where it runs on the
    /// reference.
    pub(crate) fn plain_assignment(
        &self,
        e: &Expr,
        target: &Target,
        func: Option<&Func>,
        value: &Expr,
    ) -> Option<(Stmt, Option<String>)> {
        let span = &e.span;
        let rank = |name: &str| {
            workspace::workspace_names(&self.env.arrays, self.gpu.as_ref())
                .get(name)
                .map(|a| a.shape().len())
        };
        match (target, func) {
            (Target::Names(names), Some(f)) if names.len() == 1 => {
                let (name, name_span) = &names[0];
                let x = Expr::new(ExprKind::Name(name.clone()), name_span.clone());
                let new = Expr::new(
                    ExprKind::Dyadic {
                        func: f.clone(),
                        left: Box::new(x),
                        right: Box::new(value.clone()),
                    },
                    span.clone(),
                );
                Some((assign(name, name_span, new, span), None))
            }
            (
                Target::Indexed {
                    name,
                    name_span,
                    axes,
                },
                func,
            ) if matches!(axes.first(), Some(Some(_)))
                && axes[1..].iter().all(|a| a.is_none())
                && rank(name) == Some(axes.len()) =>
            {
                let Some(Some(idx)) = axes.first() else {
                    return None;
                };
                let x = Expr::new(ExprKind::Name(name.clone()), name_span.clone());
                let new = at(func, value, idx.clone(), x, span);
                Some((assign(name, name_span, new, span), Some(name.clone())))
            }
            // Other indexed assignments (`m[i;j]←v`) are selective ones of `m[i;j]`.
            (
                Target::Indexed {
                    name,
                    name_span,
                    axes,
                },
                func,
            ) if rank(name) == Some(axes.len()) => {
                let sel = Expr::new(
                    ExprKind::Index {
                        array: Box::new(Expr::new(ExprKind::Name(name.clone()), name_span.clone())),
                        axes: axes.clone(),
                    },
                    span.clone(),
                );
                let target = Target::Selective {
                    name: name.clone(),
                    name_span: name_span.clone(),
                    expr: Box::new(sel),
                };
                self.plain_assignment(e, &target, func, value)
            }
            (
                Target::Selective {
                    name,
                    name_span,
                    expr,
                },
                func,
            ) if rank(name).is_some() && arrc_ref::selection_only(expr, name).is_ok() => {
                let x = || Expr::new(ExprKind::Name(name.clone()), name_span.clone());
                let ravel = prim(Prim::Comma, None, x(), span);
                let one = || Expr::new(ExprKind::Number(Num::Int(1)), span.clone());
                let count = prim(Prim::Tally, None, ravel.clone(), span);
                let places = prim(Prim::Iota, None, count, span);
                let places = prim(Prim::Plus, Some(one()), places, span);
                let shape = || prim(Prim::Rho, None, x(), span);
                let places = prim(Prim::Rho, Some(shape()), places, span);
                let picked =
                    crate::deferred::replace(expr, &mut |n| (n == name).then(|| places.clone()));
                let idx = prim(Prim::Minus, Some(picked), one(), span);
                // A vector is its own ravel (and its scatter may then be in place).
                let new = if rank(name) == Some(1) {
                    at(func, value, idx, x(), span)
                } else {
                    let new = at(func, value, idx, ravel, span);
                    prim(Prim::Rho, Some(shape()), new, span)
                };
                Some((assign(name, name_span, new, span), Some(name.clone())))
            }
            _ => None,
        }
    }
}
