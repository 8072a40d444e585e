//! Bounds the IR shows on its values: the most a length can be, and the largest
//! magnitude an integer value can hold (from literals, `⍳`, and the scalar functions
//! and folds applied to them). Lowering uses them to leave out the overflow checks of
//! folds that cannot overflow; planning those of `+ - ×` in kernels.

use crate::array::{Array, ElemType};
use crate::ir::{Dim, Function, Gather, Inst, Value};
use crate::scalar::{BinOp, UnOp};
use std::collections::HashMap;

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
    magnitude(f, v).is_some_and(|m| m < 1 << 31)
}

/// A bound on the magnitude of every element of integer value `v` of `f`, where the
/// IR shows one (`None`: unknown, or a float): lets folds skip overflow checks
/// (`+/(⍳10)×⍳10`) and kernels skip them on `+ - ×` whose operands cannot overflow.
pub(crate) fn magnitude(f: &Function, v: Value) -> Option<u128> {
    bottom_up(f, v, int_operands, |u, known| int_bound(f, u, known))?
}

/// A bound on the magnitude of every item of `f`'s result, where it holds integers
/// and the IR shows one: kept with the array it makes on the device, for later
/// statements' [`crate::ir::Param::magnitude`].
pub fn result_magnitude(f: &Function) -> Option<u128> {
    let v = f.result?;
    if f.nested.is_some() {
        return None;
    }
    magnitude(f, v)
}

/// Computes `step` for `v` and every value it reaches through `operands`, each once
/// and operands first (a 5×5 window's sum is a chain of 24 adds, and a DAG can share
/// its values); `None` where that is more values than are worth it.
fn bottom_up<T: Copy>(
    f: &Function,
    v: Value,
    operands: fn(&Function, Value) -> Vec<Value>,
    step: impl Fn(Value, &HashMap<Value, T>) -> T,
) -> Option<T> {
    const MOST_VALUES: usize = 4096;
    let mut known: HashMap<Value, T> = HashMap::new();
    let mut stack = vec![(v, false)];
    while let Some((u, ready)) = stack.pop() {
        if known.contains_key(&u) {
            continue;
        }
        if ready {
            let b = step(u, &known);
            known.insert(u, b);
            continue;
        }
        if known.len() + stack.len() > MOST_VALUES {
            return None;
        }
        stack.push((u, true));
        stack.extend(operands(f, u).into_iter().map(|o| (o, false)));
    }
    known.get(&v).copied()
}

/// The operands [`int_bound`] reads.
fn int_operands(f: &Function, v: Value) -> Vec<Value> {
    if !(f.ty(v).elem.is_int() || f.ty(v).elem == ElemType::Bool) {
        return vec![];
    }
    match f.inst(v) {
        Inst::Cast(a)
        | Inst::Unary {
            op: UnOp::Neg | UnOp::Abs | UnOp::Conjugate,
            arg: a,
        }
        | Inst::Gather { arg: a, .. }
        | Inst::Roll { arg: a, .. }
        | Inst::Reduce {
            op: BinOp::Add | BinOp::Max | BinOp::Min,
            arg: a,
            ..
        }
        | Inst::Binary {
            op: BinOp::FitsOr | BinOp::Ordered | BinOp::Counts,
            lhs: a,
            ..
        } => vec![*a],
        Inst::Binary {
            op: BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Max | BinOp::Min | BinOp::Residue,
            lhs,
            rhs,
        } => vec![*lhs, *rhs],
        _ => vec![],
    }
}

/// Integer `v`'s bound from its operands' (in `known`).
fn int_bound(f: &Function, v: Value, known: &HashMap<Value, Option<u128>>) -> Option<u128> {
    let ty = f.ty(v);
    let by_type = match ty.elem {
        ElemType::Bool => return Some(1),
        ElemType::I32 => Some(1u128 << 31),
        ElemType::I64 => None,
        ElemType::F32 | ElemType::F64 | ElemType::Char | ElemType::Mixed => return None,
    };
    let m = |x: Value| known[&x];
    let found = match f.inst(v) {
        Inst::Const(a) => (0..a.len())
            .map(|i| a.data.get(i).as_i64().map(|x| x.unsigned_abs() as u128))
            .try_fold(0u128, |acc, x| Some(acc.max(x?))),
        Inst::Iota {
            len: Dim::Known(n),
            origin,
        } => Some(*n as u128 + origin.unsigned_abs() as u128),
        Inst::Param { index } => f.params.get(*index as usize).and_then(|p| p.magnitude),
        // An integer from `origin` to an item less 1 plus `origin`.
        Inst::Roll { arg, origin, .. } => Some(m(*arg)? + u128::from(origin.unsigned_abs())),
        Inst::Cast(a) => m(*a),
        Inst::Unary {
            op: UnOp::Neg | UnOp::Abs | UnOp::Conjugate,
            arg,
        } => m(*arg),
        // `r` itself, or an error.
        Inst::Binary {
            op: BinOp::FitsOr | BinOp::Ordered | BinOp::Counts,
            lhs,
            ..
        } => m(*lhs),
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
                // (An empty `a` has no items and magnitude 0.)
                Some(a.saturating_sub(1))
            } else {
                Some(a.max(m(*rhs)?))
            }
        }
        Inst::Gather { arg, map } => {
            let fill = gather_fill(map).map_or(Some(0), |f| f.as_i64())?;
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

/// A bound on the magnitude of every element of numeric value `v`, as a float, where
/// the IR shows one: integers by [`magnitude`], an f32 value that nothing can have
/// taken past the range at most f32's largest, and sums, products and selections of
/// those (an f32 window summed in f64). `None`: unknown. Lets kernels skip the
/// overflow checks of float `+ - ×` that cannot leave their type's range.
///
/// Arrays hold finite numbers, and every f32 function that can leave the range
/// raises an error where it does (with a lower error bit than anything computed
/// from it); only a narrowing from f64 (which the lowering checks after) and
/// functions of such a value, which are unchecked, can be infinite unflagged.
pub(crate) fn float_magnitude(
    f: &Function,
    v: Value,
    checked: &dyn Fn(Value) -> bool,
) -> Option<f64> {
    bottom_up(f, v, float_operands, |u, known| {
        float_bound(f, u, checked, known)
    })?
    .magnitude
}

/// A float value's magnitude bound, and whether it is finite wherever no error was
/// raised.
#[derive(Clone, Copy)]
struct FloatBound {
    magnitude: Option<f64>,
    finite: bool,
}

/// The operands [`float_bound`] reads.
fn float_operands(f: &Function, v: Value) -> Vec<Value> {
    if !f.ty(v).elem.is_float() {
        return vec![];
    }
    match f.inst(v) {
        Inst::Cast(a) => vec![*a],
        Inst::Unary {
            op: UnOp::Neg | UnOp::Abs | UnOp::Conjugate,
            arg,
        } => vec![*arg],
        Inst::Binary {
            op: BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Max | BinOp::Min,
            lhs,
            rhs,
        } => vec![*lhs, *rhs],
        Inst::Binary {
            op: BinOp::Div,
            lhs,
            rhs,
        } if divisor_at_least_one(f, *rhs) => vec![*lhs],
        Inst::Select { then, els, .. } => vec![*then, *els],
        Inst::Gather { arg, .. } => vec![*arg],
        _ => vec![],
    }
}

/// `v`'s bound from its operands' (in `known`).
fn float_bound(
    f: &Function,
    v: Value,
    checked: &dyn Fn(Value) -> bool,
    known: &HashMap<Value, FloatBound>,
) -> FloatBound {
    let elem = f.ty(v).elem;
    if elem.is_int() || elem == ElemType::Bool {
        return FloatBound {
            magnitude: magnitude(f, v).map(|m| m as f64),
            finite: true,
        };
    }
    if !elem.is_float() {
        return FloatBound {
            magnitude: None,
            finite: false,
        };
    }
    let b = |x: &Value| known[x];
    let both = |x: &Value, y: &Value, g: fn(f64, f64) -> f64| {
        let (a, c) = (b(x), b(y));
        let m = a.magnitude.zip(c.magnitude).map(|(a, c)| g(a, c));
        (m, a.finite && c.finite)
    };
    let (derived, finite) = match f.inst(v) {
        Inst::Const(a) => {
            let m = (0..a.len())
                .map(|i| a.data.get(i).as_f64().abs())
                .fold(0.0, f64::max);
            (Some(m), m.is_finite())
        }
        Inst::Cast(a) => {
            let a_b = b(a);
            // Narrowed from f64, it is finite where the bound says so.
            let narrowed = elem == ElemType::F32 && f.ty(*a).elem == ElemType::F64;
            let fits = a_b.magnitude.is_some_and(|m| m <= f64::from(f32::MAX));
            (a_b.magnitude, a_b.finite && (fits || !narrowed))
        }
        Inst::Unary {
            op: UnOp::Neg | UnOp::Abs | UnOp::Conjugate,
            arg,
        } => (b(arg).magnitude, b(arg).finite),
        Inst::Binary {
            op: BinOp::Add | BinOp::Sub,
            lhs,
            rhs,
        } => both(lhs, rhs, |a, c| a + c),
        Inst::Binary {
            op: BinOp::Mul,
            lhs,
            rhs,
        } => both(lhs, rhs, |a, c| a * c),
        Inst::Binary {
            op: BinOp::Max | BinOp::Min,
            lhs,
            rhs,
        } => both(lhs, rhs, f64::max),
        // A quotient by a literal of magnitude at least 1 (`x÷1000`) is at most
        // the dividend's magnitude (a little more where a device's division is
        // within a few ulps: the slack), and finite where the dividend is: an f32
        // quotient unchecked is computed in f64 and narrowed (`float_bounded`),
        // and any other quotient keeps its check.
        Inst::Binary {
            op: BinOp::Div,
            lhs,
            rhs,
        } if divisor_at_least_one(f, *rhs) => {
            let a = b(lhs);
            (a.magnitude.map(|m| m * (1.0 + 1e-6)), a.finite)
        }
        Inst::Select { then, els, .. } => both(then, els, f64::max),
        Inst::Gather { arg, map } => {
            let fill = gather_fill(map).map_or(0.0, |f| f.as_f64().abs());
            let a = b(arg);
            (
                a.magnitude.map(|m| m.max(fill)),
                a.finite && fill.is_finite(),
            )
        }
        // Elementwise functions not above: finite only where checked.
        Inst::Unary { .. } | Inst::Binary { .. } => (None, false),
        // Anything else is an array a kernel made or the caller gave: finite.
        _ => (None, true),
    };
    // A checked function's result is finite, or its error is raised.
    let finite = finite || checked(v);
    // A value that may be infinite unflagged has no bound, whatever its operands'.
    let derived = derived.filter(|m| m.is_finite() && finite);
    let by_type = (finite && elem == ElemType::F32).then_some(f64::from(f32::MAX));
    let magnitude = match (derived, by_type) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    FloatBound { magnitude, finite }
}

/// The constant `v` is, converted or not.
fn constant_of(f: &Function, v: Value) -> Option<&Array> {
    match f.inst(v) {
        Inst::Const(c) => Some(c),
        Inst::Cast(a) => constant_of(f, *a),
        _ => None,
    }
}

/// Whether `v` is a constant (converted or not) whose every item is a finite number
/// of magnitude at least 1.
fn divisor_at_least_one(f: &Function, v: Value) -> bool {
    constant_of(f, v).is_some_and(|c| {
        !c.is_empty()
            && (0..c.len()).all(|i| {
                let x = c.data.get(i).as_f64();
                x.is_finite() && x.abs() >= 1.0
            })
    })
}

/// Whether every item of integer or boolean value `v` is at least 0, where the IR
/// shows it (booleans, `⍳` and `?` from ⎕IO, `|`, residues by positive literals, and
/// sums, products, maxima and minima of such; their results are exact, since they
/// raise an error where they would leave 64 bits). A replicate by such counts needs
/// no fill items.
pub(crate) fn nonnegative(f: &Function, v: Value) -> bool {
    bottom_up(f, v, nonnegative_operands, |u, known| {
        nonnegative_step(f, u, known)
    })
    .unwrap_or(false)
}

/// The operands [`nonnegative_step`] reads.
fn nonnegative_operands(f: &Function, v: Value) -> Vec<Value> {
    if !f.ty(v).elem.is_int() {
        return vec![];
    }
    match f.inst(v) {
        Inst::Cast(a)
        | Inst::Gather { arg: a, .. }
        | Inst::Reduce {
            op: BinOp::Add | BinOp::Max | BinOp::Min,
            arg: a,
            ..
        } => vec![*a],
        Inst::Binary {
            op: BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max,
            lhs,
            rhs,
        } => vec![*lhs, *rhs],
        _ => vec![],
    }
}

/// Whether `v` is never negative, from its operands' answers (in `known`).
fn nonnegative_step(f: &Function, v: Value, known: &HashMap<Value, bool>) -> bool {
    let t = f.ty(v).elem;
    if t == ElemType::Bool {
        return true;
    }
    if !t.is_int() {
        return false;
    }
    let k = |v: &Value| known[v];
    let all_at_least = |c: &Array, least: i64| {
        (0..c.len()).all(|i| c.data.get(i).as_i64().is_some_and(|x| x >= least))
    };
    match f.inst(v) {
        Inst::Const(a) => all_at_least(a, 0),
        Inst::Iota { origin, .. } | Inst::Roll { origin, .. } => *origin >= 0,
        Inst::Cast(a) => k(a),
        Inst::Gather { arg, map } => {
            let fill = gather_fill(map).map_or(Some(0), |f| f.as_i64());
            fill.is_some_and(|x| x >= 0) && k(arg)
        }
        Inst::Unary { op: UnOp::Abs, .. } => true,
        // A negative count is an error.
        Inst::Binary {
            op: BinOp::Counts, ..
        } => true,
        Inst::Binary {
            op: BinOp::Add | BinOp::Mul | BinOp::Min,
            lhs,
            rhs,
        } => k(lhs) && k(rhs),
        Inst::Binary {
            op: BinOp::Max,
            lhs,
            rhs,
        } => k(lhs) || k(rhs),
        // `a|b` has the sign of `a`.
        Inst::Binary {
            op: BinOp::Residue,
            lhs,
            ..
        } => constant_of(f, *lhs).is_some_and(|c| all_at_least(c, 1)),
        Inst::Reduce {
            op: BinOp::Add | BinOp::Max | BinOp::Min,
            arg,
            ..
        } => k(arg),
        _ => false,
    }
}

/// The fill item a gather puts where it reads outside its argument, if it has one.
fn gather_fill(map: &Gather) -> Option<&crate::array::Scalar> {
    match map {
        Gather::Window { fill, .. } | Gather::Sample { fill, .. } | Gather::Cycle { fill } => {
            Some(fill)
        }
        _ => None,
    }
}

/// Whether `v` is a constant (converted or not) with no item 0.
fn nonzero_constant(f: &Function, v: Value) -> bool {
    constant_of(f, v)
        .is_some_and(|c| (0..c.len()).all(|i| c.data.get(i).as_i64().is_some_and(|x| x != 0)))
}
