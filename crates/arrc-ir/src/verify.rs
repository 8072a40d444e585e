//! The IR verifier. It checks, for a [`Function`]:
//!
//! 1. the side tables (types, spans) have one entry per instruction;
//! 2. every operand is defined before the instruction that uses it (SSA order);
//! 3. `Param` indices name a parameter, and the instruction's type is the parameter's;
//! 4. a `Const`'s type is its array's element type and shape;
//! 5. `Iota` is an i32 vector of its length;
//! 6. `Cast` keeps the shape;
//! 7. `Unary`/`Binary`: operands have the operand type of the function and the result
//!    has its result type; each operand has the result's shape or is a singleton;
//! 8. `Reduce` drops its axis and `Scan` keeps the shape; both keep the element type of
//!    their (already cast) argument, whose rank exceeds the axis; `SegScan` is `+` of
//!    a float vector, its type, with boolean run starts of its shape;
//! 9. `Gather` keeps the element type (its fill too) and its map fits the ranks;
//!    `Catenate`'s operands have the result's element type and rank;
//! 10. every length symbol in a type is bound to a parameter axis;
//! 11. the result is set and defined;
//! 12. no instruction uses an `Nested` stand-in, and the result is none (NOT YET
//!     SUPPORTED: a nested array reached a function that does not take one on the GPU
//!     path).
//!
//! Errors point at the offending value. Success returns [`Verified`], the facts the
//! planner needs; the planner accepts nothing else.

use crate::error::{Error, ErrorClass};
use crate::ir::{Dim, Function, Gather, Inst, Type, Value};

/// A function that passed the verifier, with the use count of each value.
pub struct Verified<'f> {
    pub func: &'f Function,
    pub uses: Vec<u32>,
}

/// A nested array given to a function that does not take one on the GPU path (see
/// `Inst::Nested`).
fn nested_use(f: &Function, v: Value) -> Error {
    Error::new(
        ErrorClass::Unsupported,
        "this function of a nested array is not supported on the GPU path yet",
        f.spans.get(v.index()).cloned().unwrap_or(0..0),
    )
}

fn fail(f: &Function, v: Value, msg: String) -> Error {
    Error::new(
        ErrorClass::Unsupported,
        format!("internal compiler error: IR verifier: {v}: {msg}"),
        f.spans.get(v.index()).cloned().unwrap_or(0..0),
    )
}

/// An operand of a scalar function conforms to its result: the same shape, where two
/// lengths the host checks equal before the program runs (a `LengthCheck`, such as the
/// lengths of ⍺ and ⍵ in `{⍺+⍵}`) count as the same; or a singleton.
fn conforms(f: &Function, operand: &Type, result: &Type) -> bool {
    let checked = |a: &Dim, b: &Dim| {
        a == b
            || f.checks
                .iter()
                .any(|c| (c.a == *a && c.b == *b) || (c.a == *b && c.b == *a))
    };
    (operand.rank() == result.rank()
        && operand
            .shape
            .iter()
            .zip(&result.shape)
            .all(|(a, b)| checked(a, b)))
        || operand.is_singleton()
        || operand.rank() == 0
}

pub fn verify(f: &Function) -> Result<Verified<'_>, Error> {
    let n = f.insts.len();
    if f.types.len() != n || f.spans.len() != n {
        return Err(Error::new(
            ErrorClass::Unsupported,
            "internal compiler error: IR side tables",
            0..0,
        ));
    }
    for (i, inst) in f.insts.iter().enumerate() {
        let v = Value(i as u32);
        let ty = &f.types[i];
        for o in inst.operands() {
            if o.index() >= i {
                return Err(fail(f, v, format!("uses {o} before its definition")));
            }
            if matches!(f.insts[o.index()], Inst::Nested { .. }) {
                return Err(nested_use(f, v));
            }
        }
        for d in &ty.shape {
            if let Dim::Sym(s) = d {
                if f.syms.get(s.0 as usize).is_none_or(|b| b.0 == u32::MAX) {
                    return Err(fail(f, v, format!("length symbol n{} is unbound", s.0)));
                }
            }
        }
        let ok = match inst {
            Inst::Param { index } => f.params.get(*index as usize).is_some_and(|p| p.ty == *ty),
            Inst::RngState => ty.elem == crate::ElemType::I32 && ty.shape == vec![Dim::Known(4)],
            Inst::Nested { .. } => ty.elem == crate::ElemType::Mixed,
            Inst::ScatterAdd { op, index, values } => {
                let (it, vt) = (f.ty(*index), f.ty(*values));
                matches!(
                    op,
                    crate::scalar::BinOp::Add
                        | crate::scalar::BinOp::Max
                        | crate::scalar::BinOp::Min
                ) && it.elem == crate::ElemType::I32
                    && (vt.is_singleton() || vt.shape == it.shape)
                    && vt.elem == ty.elem
                    && matches!(ty.elem, crate::ElemType::I32 | crate::ElemType::I64)
            }
            Inst::Solve { a, b, scale, .. } => {
                let (at, bt, st) = (f.ty(*a), f.ty(*b), f.ty(*scale));
                let f64 = crate::ElemType::F64;
                at.elem == f64
                    && bt.elem == f64
                    && st.elem == f64
                    && st.rank() == 0
                    && at.rank() == 2
                    && bt.rank() == 2
                    && ty.elem == f64
                    && ty.shape == vec![at.shape[0], bt.shape[0]]
                    && at.shape[1] == bt.shape[1]
            }
            Inst::Scatter {
                arg,
                index,
                values,
                owner,
            } => {
                let (at, it, vt, ot) = (f.ty(*arg), f.ty(*index), f.ty(*values), f.ty(*owner));
                at == ty
                    && it.elem == crate::ElemType::I32
                    && (vt.is_singleton() || vt.shape == it.shape)
                    && vt.elem == ty.elem
                    && ot.elem == crate::ElemType::I32
                    && ot.shape == ty.shape
                    && matches!(f.inst(*owner), Inst::ScatterAdd { op: crate::scalar::BinOp::Max, index: i, .. } if i == index)
            }
            Inst::Const(a) => {
                a.elem == ty.elem
                    && a.shape.len() == ty.rank()
                    && a.shape
                        .iter()
                        .zip(&ty.shape)
                        .all(|(x, d)| *d == Dim::Known(*x as u64))
            }
            Inst::Iota { len, .. } => ty.elem == crate::ElemType::I32 && ty.shape == vec![*len],
            Inst::Length { of, axis } => {
                ty.elem == crate::ElemType::I32 && ty.rank() == 0 && *axis < f.ty(*of).rank()
            }
            Inst::Cast(x) => f.ty(*x).shape == ty.shape,
            Inst::Roll { arg, state, .. } => {
                let (at, st) = (f.ty(*arg), f.ty(*state));
                at.shape == ty.shape
                    && at.elem.is_int()
                    && st.elem == crate::ElemType::I32
                    && st.shape == vec![Dim::Known(4)]
                    && matches!(
                        ty.elem,
                        crate::ElemType::I32 | crate::ElemType::F32 | crate::ElemType::F64
                    )
            }
            Inst::Select { cond, then, els } => {
                let (ct, tt, et) = (f.ty(*cond), f.ty(*then), f.ty(*els));
                ct.elem == crate::ElemType::Bool
                    && tt.elem == ty.elem
                    && et.elem == ty.elem
                    && conforms(f, ct, ty)
                    && conforms(f, tt, ty)
                    && conforms(f, et, ty)
            }
            Inst::Unary { op, arg } => {
                let at = f.ty(*arg);
                op.result_type(at.elem, f.float) == ty.elem && at.shape == ty.shape
            }
            Inst::Binary { op, lhs, rhs } => {
                let (lt, rt) = (f.ty(*lhs), f.ty(*rhs));
                let t = op.operand_type(lt.elem, rt.elem, f.float);
                lt.elem == t
                    && rt.elem == t
                    && op.result_type(lt.elem, rt.elem, f.float) == ty.elem
                    && conforms(f, lt, ty)
                    && conforms(f, rt, ty)
            }
            Inst::Reduce { arg, axis, .. } => {
                let at = f.ty(*arg);
                let mut kept = at.shape.clone();
                *axis < at.rank() && {
                    kept.remove(*axis);
                    at.elem == ty.elem && kept == ty.shape
                }
            }
            Inst::FoldDfn {
                arg, axis, scan, ..
            } => {
                let at = f.ty(*arg);
                let mut kept = at.shape.clone();
                *axis < at.rank()
                    && at.elem == ty.elem
                    && if *scan {
                        at.shape == ty.shape
                    } else {
                        kept.remove(*axis);
                        kept == ty.shape
                    }
            }
            Inst::Scan { arg, axis, .. } => {
                let at = f.ty(*arg);
                *axis < at.rank() && at.elem == ty.elem && at.shape == ty.shape
            }
            Inst::SegScan { op, arg, starts } => {
                let (at, st) = (f.ty(*arg), f.ty(*starts));
                *op == crate::scalar::BinOp::Add
                    && at == ty
                    && at.rank() == 1
                    && at.elem.is_float()
                    && st.elem == crate::ElemType::Bool
                    && st.shape == at.shape
            }
            Inst::Gather { arg, map } => {
                let at = f.ty(*arg);
                at.elem == ty.elem
                    && match map {
                        Gather::Reverse(axis) | Gather::Rotate { axis, .. } => {
                            *axis < at.rank() && at.shape == ty.shape
                        }
                        Gather::Axes(axes) => {
                            axes.len() == at.rank() && axes.iter().all(|&a| a < ty.rank())
                        }
                        Gather::Window { start, fill } => {
                            start.len() == at.rank()
                                && at.rank() == ty.rank()
                                && fill.elem_type() == ty.elem
                        }
                        Gather::Sample { start, step, fill } => {
                            start.len() == at.rank()
                                && step.len() == at.rank()
                                && at.rank() == ty.rank()
                                && fill.elem_type() == ty.elem
                        }
                        Gather::Cycle { fill } => fill.elem_type() == ty.elem,
                        Gather::Windows { axis, .. } => {
                            *axis < at.rank() && ty.rank() == at.rank() + 1
                        }
                        Gather::Repeat { axis, times } => {
                            *axis < at.rank()
                                && *times >= 1
                                && at.rank() == ty.rank()
                                && (0..at.rank()).all(|a| match (at.shape[a], ty.shape[a]) {
                                    (Dim::Known(n), Dim::Known(m)) if a == *axis => {
                                        n.checked_mul(u64::from(*times)) == Some(m)
                                    }
                                    (p, q) => a == *axis || p == q,
                                })
                        }
                    }
            }
            Inst::Index { arg, axes } => {
                let at = f.ty(*arg);
                let mut shape = vec![];
                for (a, ix) in axes.iter().enumerate() {
                    match ix {
                        Some(i) => shape.extend(f.ty(*i).shape.iter().copied()),
                        None => shape.extend(at.shape.get(a).copied()),
                    }
                }
                at.rank() == axes.len()
                    && at.elem == ty.elem
                    && shape == ty.shape
                    && axes.iter().flatten().all(|i| !f.ty(*i).elem.is_float())
            }
            Inst::Compress { mask, arg } => {
                let (mt, at) = (f.ty(*mask), f.ty(*arg));
                matches!(mt.elem, crate::ElemType::Bool | crate::ElemType::I32)
                    && mt.rank() == 1
                    && at.rank() == 1
                    && at.elem == ty.elem
                    && matches!(ty.shape.as_slice(), [Dim::Dyn(i)] if (*i as usize) < f.dyn_bounds.len())
            }
            Inst::Rotate { arg, by, axis } => {
                let (at, bt) = (f.ty(*arg), f.ty(*by));
                let mut lines = at.shape.clone();
                *axis < at.rank() && {
                    lines.remove(*axis);
                    at.elem == ty.elem
                        && at.shape == ty.shape
                        && !bt.elem.is_float()
                        && (bt.rank() == 0 || bt.shape == lines)
                }
            }
            Inst::Grade { arg, .. } => {
                let at = f.ty(*arg);
                at.rank() >= 1 && ty.elem == crate::ElemType::I32 && ty.shape == at.shape[..1]
            }
            Inst::Search {
                hay,
                order,
                needles,
                kind,
            } => {
                let (ht, ot, nt) = (f.ty(*hay), f.ty(*order), f.ty(*needles));
                let want = match kind {
                    crate::ir::SearchKind::IndexOf { .. }
                    | crate::ir::SearchKind::Interval { .. } => crate::ElemType::I32,
                    crate::ir::SearchKind::Member => crate::ElemType::Bool,
                };
                ht.rank() == 1
                    && ot.shape == ht.shape
                    && match f.inst(*order) {
                        Inst::Grade {
                            arg,
                            down: false,
                            origin: 0,
                        } => arg == hay,
                        Inst::Iota { origin: 0, .. } => {
                            matches!(kind, crate::ir::SearchKind::Interval { .. })
                        }
                        _ => false,
                    }
                    && nt.elem == ht.elem
                    && ty.elem == want
                    && ty.shape == nt.shape
            }
            Inst::MatMul {
                lhs,
                rhs,
                fold,
                pair,
            } => {
                let (lt, rt) = (f.ty(*lhs), f.ty(*rhs));
                let pair_t = pair.result_type(lt.elem, rt.elem, f.float);
                lt.rank() == 2
                    && rt.rank() == 2
                    && lt.elem == rt.elem
                    && pair.operand_type(lt.elem, rt.elem, f.float) == lt.elem
                    && fold.reduce_type(pair_t, f.float) == ty.elem
                    && ty.shape == vec![lt.shape[0], rt.shape[1]]
            }
            Inst::Catenate { lhs, rhs, axis } => {
                let (lt, rt) = (f.ty(*lhs), f.ty(*rhs));
                lt.elem == ty.elem
                    && rt.elem == ty.elem
                    && lt.rank() == ty.rank()
                    && rt.rank() == ty.rank()
                    && *axis < ty.rank()
            }
        };
        if !ok {
            return Err(fail(f, v, format!("ill-typed instruction {inst:?} : {ty}")));
        }
    }
    match f.result {
        Some(r) if r.index() < n && matches!(f.insts[r.index()], Inst::Nested { .. }) => {
            return Err(Error::new(
                ErrorClass::Unsupported,
                "a nested result is not supported on the GPU path yet",
                f.spans[r.index()].clone(),
            ))
        }
        Some(r) if r.index() < n => {}
        _ => {
            return Err(Error::new(
                ErrorClass::Unsupported,
                "internal compiler error: no result",
                0..0,
            ))
        }
    }
    Ok(Verified {
        func: f,
        uses: f.use_counts(),
    })
}
