//! Bounds the IR shows on its values: the most a length can be, and the largest
//! magnitude an integer value can hold (from literals, `⍳`, and the scalar functions
//! and folds applied to them). Lowering uses them to leave out the overflow checks of
//! folds that cannot overflow; planning those of `+ - ×` in kernels.

use crate::array::ElemType;
use crate::ir::{Dim, Function, Gather, Inst, Value};
use crate::scalar::{BinOp, UnOp};

/// The most a length can be: itself where known, else the device's largest count.
pub(crate) fn dim_bound(d: Dim) -> u128 {
    match d {
        Dim::Known(n) => n as u128,
        Dim::Sym(_) | Dim::Dyn(_) => crate::plan::MAX_DEVICE_COUNT as u128,
    }
}

/// Whether every element of integer value `v` fits in i32 by its bound: such i64
/// keys are sorted as i32 (`Lower::narrow_keys`).
pub(crate) fn fits_i32(f: &Function, v: Value) -> bool {
    magnitude(f, v, 0).is_some_and(|m| m < 1 << 31)
}

/// A bound on the magnitude of every element of integer value `v` of `f`, where the
/// IR shows one (`None`: unknown, or a float): lets folds skip overflow checks
/// (`+/(⍳10)×⍳10`) and kernels skip them on `+ - ×` whose operands cannot overflow.
pub(crate) fn magnitude(f: &Function, v: Value, depth: u32) -> Option<u128> {
    let ty = f.ty(v);
    let by_type = match ty.elem {
        ElemType::Bool => return Some(1),
        ElemType::I32 => Some(1u128 << 31),
        ElemType::I64 => None,
        ElemType::F32 | ElemType::F64 | ElemType::Char | ElemType::Mixed => return None,
    };
    if depth > 16 {
        return by_type;
    }
    let m = |x: Value| magnitude(f, x, depth + 1);
    let found = match f.inst(v) {
        Inst::Const(a) => (0..a.len())
            .map(|i| a.data.get(i).as_i64().map(|x| x.unsigned_abs() as u128))
            .try_fold(0u128, |acc, x| Some(acc.max(x?))),
        Inst::Iota {
            len: Dim::Known(n),
            origin,
        } => Some(*n as u128 + origin.unsigned_abs() as u128),
        Inst::Cast(a) => m(*a),
        Inst::Unary {
            op: UnOp::Neg | UnOp::Abs | UnOp::Conjugate,
            arg,
        } => m(*arg),
        Inst::Binary {
            op: BinOp::Add | BinOp::Sub,
            lhs,
            rhs,
        } => Some(m(*lhs)?.saturating_add(m(*rhs)?)),
        Inst::Binary {
            op: BinOp::Mul,
            lhs,
            rhs,
        } => Some(m(*lhs)?.saturating_mul(m(*rhs)?)),
        Inst::Binary {
            op: BinOp::Max | BinOp::Min,
            lhs,
            rhs,
        } => Some(m(*lhs)?.max(m(*rhs)?)),
        // |a|b| < |a| where a is not 0 (`0|b` is b).
        Inst::Binary {
            op: BinOp::Residue,
            lhs,
            rhs,
        } => {
            let a = m(*lhs)?;
            if nonzero_constant(f, *lhs) {
                Some(a - 1)
            } else {
                Some(a.max(m(*rhs)?))
            }
        }
        Inst::Gather { arg, map } => {
            let fill = match map {
                Gather::Window { fill, .. } | Gather::Cycle { fill } => fill.as_i64()?,
                _ => 0,
            };
            Some(m(*arg)?.max(fill.unsigned_abs() as u128))
        }
        Inst::Reduce {
            op: BinOp::Add,
            arg,
            axis,
        } => Some(m(*arg)?.saturating_mul(dim_bound(f.ty(*arg).shape[*axis]))),
        Inst::Reduce {
            op: BinOp::Max | BinOp::Min,
            arg,
            ..
        } => m(*arg),
        _ => None,
    };
    match (found, by_type) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether `v` is a constant (converted or not) with no item 0.
fn nonzero_constant(f: &Function, v: Value) -> bool {
    match f.inst(v) {
        Inst::Const(c) => (0..c.len()).all(|i| c.data.get(i).as_i64().is_some_and(|x| x != 0)),
        Inst::Cast(a) => nonzero_constant(f, *a),
        _ => false,
    }
}
