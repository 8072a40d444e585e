//! Assignment forms as plain assignments, for the device path (the session's
//! statements and the dfns lowering inlines): `x f←v` is `x←x f v`; `x[I]←V` (and
//! `m[I;]←V`, `x[I] f←V`) of an array indexed on its first axis is `x←V@I⊢x`
//! (`x←V f⍨@I⊢x`); other indexed assignments are the selective assignment of
//! `m[I;J]`; a selective assignment `(sel x)←V` is
//! `x←(⍴x)⍴V@((sel (⍴x)⍴1+⍳≢,x)-1)⊢,x` (`x←V@(…)⊢x` for a vector): the selection
//! applied to the items' places (1-based whatever ⎕IO is, a fill item 0, which
//! falls outside `,x` and is an INDEX ERROR, as on the reference).

use crate::ast::{Expr, ExprKind, Func, FuncKind, Op1, Target, Tine};
use crate::lexer::{Num, Prim};
use crate::Span;

/// The names `a←b←value` assigns, outermost first, and `value` (no names, and `e`
/// itself, when it is not such an assignment).
pub fn assignment_chain(e: &Expr) -> (Vec<&str>, &Expr) {
    let mut names = vec![];
    let mut value = e;
    while let ExprKind::Assign { name, value: v, .. } = &value.kind {
        names.push(name.as_str());
        value = v;
    }
    (names, value)
}

/// Where a selective assignment's expression has something other than a selection
/// function between `name` and the `←`: the span of the first such thing. Selection
/// functions are the structural functions `↑ ↓ ⌽ ⊖ ⍉ , ⍪ ⍴ / ⌿ ⌷ ⊢` (with or without
/// an axis) with `name` in their right argument, and indexing with it in the indexed
/// array; their other arguments are any expressions without `name`.
pub fn not_a_selection(e: &Expr, name: &str) -> Option<Span> {
    let has = |x: &Expr| {
        let mut n = std::collections::HashSet::new();
        x.names(&mut n);
        n.contains(name)
    };
    use Prim::*;
    let prim = |f: &Func| match &f.kind {
        FuncKind::Prim(p) => Some(*p),
        FuncKind::Axis(g, _) => match g.kind {
            FuncKind::Prim(p) => Some(p),
            _ => None,
        },
        _ => None,
    };
    match &e.kind {
        ExprKind::Name(n) if n == name => None,
        ExprKind::Monadic { func, arg } => match prim(func) {
            Some(Take | Drop | Reverse | ReverseFirst | Transpose | Comma | CommaBar | Right) => {
                not_a_selection(arg, name)
            }
            _ => Some(func.span.clone()),
        },
        ExprKind::Dyadic { func, left, right }
            if !has(left)
                && matches!(
                    prim(func),
                    Some(
                        Take | Drop
                            | Reverse
                            | ReverseFirst
                            | Transpose
                            | Rho
                            | Slash
                            | SlashBar
                            | Squad
                            | Right
                    )
                ) =>
        {
            not_a_selection(right, name)
        }
        ExprKind::Index { array, axes } if !axes.iter().flatten().any(has) => {
            not_a_selection(array, name)
        }
        ExprKind::Dyadic { func, .. } => Some(func.span.clone()),
        _ => Some(e.span.clone()),
    }
}

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

fn assign(name: &str, name_span: &Span, value: Expr, span: &Span) -> Expr {
    Expr::new(
        ExprKind::Assign {
            name: name.to_string(),
            name_span: name_span.clone(),
            value: Box::new(value),
        },
        span.clone(),
    )
}

/// `e` with each `Name(n)` outside functions replaced by `f(n)` where that is
/// `Some`.
pub fn replace_names(e: &Expr, f: &mut dyn FnMut(&str) -> Option<Expr>) -> Expr {
    if let ExprKind::Name(n) = &e.kind {
        if let Some(x) = f(n) {
            return x;
        }
        return e.clone();
    }
    e.map_children::<()>(&mut |c| Ok(replace_names(c, f)))
        .unwrap_or_else(|()| e.clone())
}

/// The plain assignment (`ExprKind::Assign`) that the assignment `e` of another form
/// (its `target`, `func` and `value`) is, with the name whose array a scatter may
/// write in place; `None` for forms that stay as they are (strands). `rank` gives a
/// name's rank where it has an array.
pub fn plain_assignment(
    e: &Expr,
    target: &Target,
    func: Option<&Func>,
    value: &Expr,
    rank: &dyn Fn(&str) -> Option<usize>,
) -> Option<(Expr, Option<String>)> {
    let span = &e.span;
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
            plain_assignment(e, &target, func, value, rank)
        }
        (
            Target::Selective {
                name,
                name_span,
                expr,
            },
            func,
        ) if rank(name).is_some() && not_a_selection(expr, name).is_none() => {
            let x = || Expr::new(ExprKind::Name(name.clone()), name_span.clone());
            let ravel = prim(Prim::Comma, None, x(), span);
            let one = || Expr::new(ExprKind::Number(Num::Int(1)), span.clone());
            let count = prim(Prim::Tally, None, ravel.clone(), span);
            let places = prim(Prim::Iota, None, count, span);
            let places = prim(Prim::Plus, Some(one()), places, span);
            let shape = || prim(Prim::Rho, None, x(), span);
            let places = prim(Prim::Rho, Some(shape()), places, span);
            let picked = replace_names(expr, &mut |n| (n == name).then(|| places.clone()));
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
