//! What planning needs to know of a value before it decides where it is computed:
//! whether computing it can raise an error, whether it costs no more than a load
//! (then it is read again at each use rather than stored), and how much of their
//! operands instructions read.

use crate::ir::{Function, Gather, Inst, Value};
use crate::scalar::BinOp;
use crate::{Dim, ElemType};

/// Whether `inst` is at most one load: a gather or cast of a stored array or of such
/// a value, or an index.
pub(super) fn load_only(inst: &Inst, buffer_of: &[Option<usize>], cheap: &[bool]) -> bool {
    let stored = |v: &Value| buffer_of[v.index()].is_some() || cheap[v.index()];
    match inst {
        Inst::Iota { .. } => true,
        Inst::Gather { arg, .. } | Inst::Cast(arg) => stored(arg),
        _ => false,
    }
}

/// Whether integer `lhs op rhs` (`+ - ×`) cannot leave 64 bits, by the bounds the
/// IR shows on its operands (`(⍳n)×2`, `x+1` of i32 `x`), or a float one cannot
/// leave the float range ([`float_bounded`]): then it needs no check.
pub(super) fn integer_fits(f: &Function, op: BinOp, lhs: Value, rhs: Value, float64: bool) -> bool {
    let ints = f.ty(lhs).elem.is_int() && f.ty(rhs).elem.is_int();
    let bound = || {
        let (a, b) = (
            crate::bounds::magnitude(f, lhs)?,
            crate::bounds::magnitude(f, rhs)?,
        );
        match op {
            BinOp::Add | BinOp::Sub => a.checked_add(b),
            BinOp::Mul => a.checked_mul(b),
            _ => None,
        }
    };
    // (A product of integers with ¯1 can leave them: ¯9223372036854775808×¯1.)
    let floats = f.ty(lhs).elem.join(f.ty(rhs).elem).is_float();
    ints && bound().is_some_and(|m| m < 1 << 63)
        || floats && float_bounded(f, op, rhs, float64)
        || float_fits(f, op, lhs, rhs, float64)
}

/// A bound on the magnitude of every partial sum of an integer `lhs+.×rhs` (of
/// matrices): the operands' bounds times the inner length's; `None` where either
/// operand has none (an i64 array from outside).
pub(super) fn integer_sum_bound(f: &Function, lhs: Value, rhs: Value) -> Option<u128> {
    let (a, b) = (
        crate::bounds::magnitude(f, lhs)?,
        crate::bounds::magnitude(f, rhs)?,
    );
    let k = crate::bounds::dim_bound(*f.ty(lhs).shape.last()?);
    a.checked_mul(b)?.checked_mul(k)
}

/// Whether float `lhs op rhs` (`+ - ×`) stays far inside its type's range by the
/// bounds the IR shows on its operands ([`crate::bounds::float_magnitude`]): an f32
/// window summed in f64 cannot overflow it, nor can f64 sums of f32 values.
fn float_fits(f: &Function, op: BinOp, lhs: Value, rhs: Value, float64: bool) -> bool {
    let elem = f.ty(lhs).elem.join(f.ty(rhs).elem);
    let limit = match elem {
        ElemType::F64 => 1e300,
        ElemType::F32 => 1e38,
        _ => return false,
    };
    // Functions that raise an error where their result would not be finite.
    let checked = |v: Value| match f.inst(v) {
        Inst::Unary { op, arg } => op.device_error(f.ty(*arg).elem, f.ty(v).elem).is_some(),
        Inst::Binary { op, lhs, rhs } => {
            op.device_error(f.ty(*lhs).elem.join(f.ty(*rhs).elem))
                .is_some()
                && !float_bounded(f, *op, *rhs, float64)
        }
        _ => false,
    };
    let m = |v: Value| crate::bounds::float_magnitude(f, v, &checked);
    let Some((a, b)) = m(lhs).zip(m(rhs)) else {
        return false;
    };
    let r = match op {
        BinOp::Add | BinOp::Sub => a + b,
        BinOp::Mul => a * b,
        _ => return false,
    };
    r < limit
}

/// Whether float `lhs op rhs` keeps the magnitude of the finite `lhs` (so it cannot
/// leave the float range): a product with a literal of magnitude at most 1 (`x×0.5`),
/// and in f32 on a device with f64 (where the quotient is computed in f64, with room
/// to spare) a division by one of at least 1 (`x÷1000`). An f64 quotient keeps its
/// check: the device refines it with a multiply-add, which a driver that does not
/// fuse it (lavapipe) can take past the range near the largest f64.
pub(super) fn float_bounded(f: &Function, op: BinOp, rhs: Value, float64: bool) -> bool {
    let Inst::Const(c) = f.inst(rhs) else {
        return false;
    };
    let Some(c) = (c.len() == 1).then(|| c.data.get(0).as_f64()) else {
        return false;
    };
    c.is_finite()
        && match op {
            BinOp::Div => c.abs() >= 1.0 && f.float == ElemType::F32 && float64,
            BinOp::Mul => c.abs() <= 1.0,
            _ => false,
        }
}

/// Whether the instruction itself can raise an APL error on the device (its operands
/// aside): scalar functions with a domain, indexing, dfn folds, replicate counts.
pub(super) fn can_fail(f: &Function, v: Value, float64: bool) -> bool {
    match f.inst(v) {
        Inst::Unary { op, arg } => op.device_error(f.ty(*arg).elem, f.ty(v).elem).is_some(),
        Inst::Binary { op, lhs, rhs } if integer_fits(f, *op, *lhs, *rhs, float64) => false,
        Inst::Binary { op, lhs, rhs } => {
            let operand = f.ty(*lhs).elem.join(f.ty(*rhs).elem);
            op.device_error(operand).is_some() || op.device_error(f.ty(*lhs).elem).is_some()
        }
        Inst::Index { .. } | Inst::FoldDfn { .. } | Inst::Compress { .. } => true,
        // A fold's steps (`⍴2 ⍟/m` must still find the ⍟ of a 0).
        Inst::Reduce { op, .. } | Inst::Scan { op, .. } | Inst::SegScan { op, .. } => {
            op.device_error(f.ty(v).elem).is_some()
        }
        // A float result can leave its type's range; a pair may fail as its function.
        Inst::MatMul {
            lhs,
            rhs,
            fold,
            pair,
        } => {
            f.ty(v).elem.is_float()
                || (pair.device_error(f.ty(*lhs).elem).is_some()
                    && !integer_fits(f, *pair, *lhs, *rhs, float64))
                || (*fold == BinOp::Add
                    && f.ty(v).elem.is_int()
                    && integer_sum_bound(f, *lhs, *rhs).is_none_or(|b| b >= 1 << 63))
        }
        _ => false,
    }
}

/// The operands of `inst` (whose shape is `shape`) of which it may read only some
/// elements, or none.
pub(super) fn reads_part_of(f: &Function, inst: &Inst, shape: &[Dim]) -> Vec<Value> {
    let may_be_empty = !matches!(super::known(shape), Some(n) if n > 0);
    match inst {
        // An empty result reads nothing (`(⍳0)∘.+s` never reads `s`).
        Inst::Gather { arg, .. } if may_be_empty => vec![*arg],
        Inst::Gather { arg, map } => match map {
            Gather::Reverse(_) | Gather::Rotate { .. } | Gather::Repeat { .. } => vec![],
            Gather::Axes(axes) if (0..axes.len()).all(|a| axes.contains(&a)) => vec![],
            // A reshape or ravel at least as long as its argument reads all of it.
            Gather::Cycle { .. } if matches!((super::known(shape), super::known(&f.ty(*arg).shape)), (Some(o), Some(a)) if o >= a) =>
            {
                vec![]
            }
            _ => vec![*arg],
        },
        Inst::Index { arg, .. } | Inst::Compress { arg, .. } => vec![*arg],
        // A scalar or singleton extended over a result that may be empty may never be
        // read (`⍬!{⍵=2}¨0⍟1 2` must still find the error of the one-item `0⍟…`).
        Inst::Binary { lhs, rhs, .. }
        | Inst::Select {
            then: lhs,
            els: rhs,
            ..
        } if may_be_empty => [lhs, rhs]
            .into_iter()
            .filter(|o| {
                let t = f.ty(**o);
                t.is_singleton() && t.shape.as_slice() != shape
            })
            .copied()
            .collect(),
        Inst::Length { of, .. } => vec![*of],
        Inst::Search { hay, .. } => vec![*hay],
        // Only the items that land are read (`0@(1 1)⊢x` reads the second).
        Inst::Scatter { values, .. } => vec![*values],
        _ => vec![],
    }
}
