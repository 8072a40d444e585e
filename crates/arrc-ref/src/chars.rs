//! Characters on the reference (the first part of issue 17): literals, and the
//! functions that move, select, compare and search items, which treat a character
//! as an item like any other. Arithmetic on characters is a DOMAIN ERROR, as in
//! Dyalog. Arrays of characters and numbers together (Dyalog's mixed arrays) and the
//! operators and functions not listed here are NOT YET SUPPORTED with characters: each
//! is allowed here only once it has been checked to treat characters right (no
//! character is ever converted to a number, or a number to a character, except a
//! fill, which for characters is the blank).

use arrc_ir::array::{Array, Data, Scalar};
use arrc_ir::error::{err, Error, Result};
use arrc_syntax::Span;
use arrc_syntax::{Func, FuncKind, Op1, Prim};

/// A character literal: one character is a scalar, any other count a vector
/// (`''` is the empty character vector; `''''` is one quote, unescaped by the lexer).
pub(crate) fn literal(text: &str) -> Array {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() == 1 {
        Array::scalar(Scalar::Char(chars[0]))
    } else {
        Array::vector(Data::Char(chars))
    }
}

/// `⎕UCS ⍵`: the code points of characters, or the characters of code points.
pub(crate) fn ucs(x: &Array, span: &Span) -> Result<Array> {
    let data = match &x.data {
        Data::Char(c) => Data::I32(c.iter().map(|&c| c as i32).collect()),
        d => Data::Char(
            (0..d.len())
                .map(|i| {
                    d.get(i)
                        .as_i64()
                        .and_then(|n| u32::try_from(n).ok())
                        .and_then(char::from_u32)
                        .ok_or_else(|| {
                            err::domain(
                                "⎕UCS needs Unicode code points: integers from 0 to 1114111, not 55296 to 57343",
                                span.clone(),
                            )
                        })
                })
                .collect::<Result<Vec<char>>>()?,
        ),
    };
    Ok(Array::new(x.shape.clone(), data))
}

/// The error of an array that would hold characters and numbers together.
pub(crate) fn mixed(span: Span) -> Error {
    err::unsupported(
        "an array of both characters and numbers (a mixed array) is not supported yet",
        span,
    )
}

fn no_arithmetic(span: &Span) -> Error {
    err::domain("characters are not numbers", span.clone())
}

fn not_yet(what: &str, span: &Span) -> Error {
    err::unsupported(
        format!("{what} of characters is not supported yet"),
        span.clone(),
    )
}

/// Whether `f` (resolved) may be applied to a character array `⍵` alone.
pub(crate) fn monadic_allowed(f: &Func, span: &Span) -> Result<()> {
    match &f.kind {
        FuncKind::Prim(p) => match p {
            Prim::Rho
            | Prim::Comma
            | Prim::CommaBar
            | Prim::Epsilon
            | Prim::Reverse
            | Prim::ReverseFirst
            | Prim::Transpose
            | Prim::Tally
            | Prim::Match
            | Prim::Take
            | Prim::Squad
            | Prim::Right
            | Prim::Left
            | Prim::Union
            | Prim::NotEqual
            | Prim::GradeUp
            | Prim::GradeDown
            | Prim::Drop
            | Prim::Format
            | Prim::Execute
            | Prim::Enclose
            | Prim::Disclose
            | Prim::Nest => Ok(()),
            _ => Err(no_arithmetic(span)),
        },
        _ => composed(f, span),
    }
}

/// Whether `f` only applies functions that are checked again when they run: dfns,
/// names, trains, `∘`, `∘.`, operators of the user's.
pub(crate) fn applies_functions(f: &Func) -> bool {
    matches!(
        f.kind,
        FuncKind::Dfn(_)
            | FuncKind::Name(_)
            | FuncKind::SelfRef
            | FuncKind::Atop(..)
            | FuncKind::Fork(..)
            | FuncKind::Jot(..)
            | FuncKind::Outer(_)
            | FuncKind::UserOp { .. }
    )
}

/// Whether `f` is a primitive with an axis that only moves or selects items
/// (`⌽[k] ,[k] ↑[k] ↓[k] /[k] \[k] ⊂[k]`): it treats characters and nested items
/// as any other.
pub(crate) fn moves_along_axis(f: &Func) -> bool {
    let FuncKind::Axis(g, _) = &f.kind else {
        return false;
    };
    matches!(
        g.kind,
        FuncKind::Prim(
            Prim::Reverse
                | Prim::ReverseFirst
                | Prim::Comma
                | Prim::CommaBar
                | Prim::Take
                | Prim::Drop
                | Prim::Slash
                | Prim::SlashBar
                | Prim::Backslash
                | Prim::BackslashBar
                | Prim::Enclose
        )
    )
}

/// Functions whose bodies apply functions that are checked one by one (dfns, names,
/// trains, `∘`, operators of the user's); NOT YET SUPPORTED for the others.
fn composed(f: &Func, span: &Span) -> Result<()> {
    match &f.kind {
        _ if applies_functions(f) || moves_along_axis(f) => Ok(()),
        // Each applies its operand to each item, which checks it again.
        FuncKind::Derived {
            op: Op1::Each | Op1::Commute,
            ..
        } => Ok(()),
        // `+/'ab'`: arithmetic between characters, as the function itself would be.
        FuncKind::Derived {
            op: Op1::Reduce | Op1::ReduceFirst | Op1::Scan | Op1::ScanFirst,
            operand,
        } if matches!(&operand.kind, FuncKind::Prim(p)
            if arrc_ir::scalar::BinOp::from_prim(*p).is_some_and(|op| !op.is_comparison())) =>
        {
            Err(no_arithmetic(span))
        }
        _ => Err(not_yet("this operator", span)),
    }
}

/// Whether `a f b` may be applied where `a` or `b` holds characters.
pub(crate) fn dyadic_allowed(f: &Func, a: &Array, b: &Array, span: &Span) -> Result<()> {
    let numeric_left = |ok: bool| {
        if a.elem.is_char() {
            Err(err::domain(
                "the left argument must be numbers",
                span.clone(),
            ))
        } else if ok {
            Ok(())
        } else {
            Err(mixed(span.clone()))
        }
    };
    match &f.kind {
        FuncKind::Prim(p) => match p {
            // Items of ⍵ moved or selected by numbers.
            Prim::Rho
            | Prim::Reverse
            | Prim::ReverseFirst
            | Prim::Transpose
            | Prim::Take
            | Prim::Drop
            | Prim::Slash
            | Prim::SlashBar
            | Prim::Backslash
            | Prim::BackslashBar
            | Prim::Squad
            | Prim::Select
            | Prim::Enclose
            | Prim::Disclose
            | Prim::Nest => numeric_left(true),
            // Items of both in one array (a mixed one when they differ).
            Prim::Comma | Prim::CommaBar => Ok(()),
            Prim::Union => {
                if a.elem.mixes(b.elem) {
                    Err(mixed(span.clone()))
                } else {
                    Ok(())
                }
            }
            // Comparisons and searches: a character is never equal to a number.
            Prim::Equal
            | Prim::NotEqual
            | Prim::Match
            | Prim::Tally
            | Prim::Iota
            | Prim::Epsilon
            | Prim::Intersection
            | Prim::Tilde
            | Prim::Find
            | Prim::Right
            | Prim::Left => Ok(()),
            Prim::Where => Err(not_yet("⍺⍸⍵", span)),
            Prim::Format => numeric_left(true),
            _ => Err(no_arithmetic(span)),
        },
        // A table of comparisons: `'ab'∘.='abc'`.
        FuncKind::Outer(g) if matches!(g.kind, FuncKind::Prim(Prim::Equal | Prim::NotEqual)) => {
            Ok(())
        }
        _ => composed(f, span),
    }
}
