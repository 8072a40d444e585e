//! Scalar functions: which glyph is which function, their type rules, identities and
//! exact element semantics. The CPU reference and constant folding use these; the
//! SPIR-V back end implements the same rules on the device.

use crate::array::{ElemType, Scalar};
use arrc_syntax::Prim;

/// A monadic scalar function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum UnOp {
    /// `-x`
    Neg,
}

/// A dyadic scalar function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
}

/// Why a scalar function has no value for its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarError {
    /// `1÷0`.
    DivideByZero,
    /// An integer result beyond 64 bits.
    Overflow,
}

impl UnOp {
    pub fn from_prim(p: Prim) -> Option<UnOp> {
        match p {
            Prim::Minus => Some(UnOp::Neg),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            UnOp::Neg => "neg",
        }
    }

    pub fn glyph(self) -> char {
        match self {
            UnOp::Neg => '-',
        }
    }

    /// Element type of the result. Negating an i32 can leave i32's range (`-¯2147483648`),
    /// so integers negate in 64 bits.
    pub fn result_type(self, arg: ElemType) -> ElemType {
        match self {
            UnOp::Neg if arg.is_int() => ElemType::I64,
            UnOp::Neg => ElemType::F32,
        }
    }

    /// Applies the function to an argument already converted to the result type.
    pub fn apply(self, x: Scalar) -> Result<Scalar, ScalarError> {
        match (self, x) {
            (UnOp::Neg, Scalar::I32(v)) => Ok(Scalar::I64(-(v as i64))),
            (UnOp::Neg, Scalar::I64(v)) => v
                .checked_neg()
                .map(Scalar::I64)
                .ok_or(ScalarError::Overflow),
            (UnOp::Neg, Scalar::F32(v)) => Ok(Scalar::F32(-v)),
        }
    }
}

impl BinOp {
    pub fn from_prim(p: Prim) -> Option<BinOp> {
        Some(match p {
            Prim::Plus => BinOp::Add,
            Prim::Minus => BinOp::Sub,
            Prim::Times => BinOp::Mul,
            Prim::Divide => BinOp::Div,
            Prim::Ceiling => BinOp::Max,
            Prim::Floor => BinOp::Min,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Max => "max",
            BinOp::Min => "min",
        }
    }

    pub fn glyph(self) -> char {
        match self {
            BinOp::Add => '+',
            BinOp::Sub => '-',
            BinOp::Mul => '×',
            BinOp::Div => '÷',
            BinOp::Max => '⌈',
            BinOp::Min => '⌊',
        }
    }

    /// Element type of `a f b`. `÷` gives floats; `+ - ×` on integers give i64 so that
    /// no i32 result wraps; `⌈ ⌊` stay in the joined type.
    pub fn result_type(self, a: ElemType, b: ElemType) -> ElemType {
        let j = a.join(b);
        match self {
            BinOp::Div => ElemType::F32,
            BinOp::Add | BinOp::Sub | BinOp::Mul if j.is_int() => ElemType::I64,
            _ => j,
        }
    }

    /// The type both arguments are converted to before the function applies.
    pub fn operand_type(self, a: ElemType, b: ElemType) -> ElemType {
        self.result_type(a, b)
    }

    /// Associative functions reduce and scan in parallel with any bracketing.
    pub fn is_associative(self) -> bool {
        matches!(self, BinOp::Add | BinOp::Mul | BinOp::Max | BinOp::Min)
    }

    /// Type of `f/x` and `f\x` for elements of type `elem`: sums and products of
    /// integers accumulate in 64 bits.
    pub fn reduce_type(self, elem: ElemType) -> ElemType {
        self.result_type(elem, elem)
    }

    /// The identity element: the value of a reduction over an empty axis.
    /// `⌈/⍬` is the most negative float (as in Dyalog), so its type is f32.
    pub fn identity(self, elem: ElemType) -> Option<Scalar> {
        let ty = self.reduce_type(elem);
        Some(match self {
            BinOp::Add | BinOp::Sub => Scalar::I32(0).cast(ty),
            BinOp::Mul | BinOp::Div => Scalar::I32(1).cast(ty),
            BinOp::Max => Scalar::F32(-f32::MAX),
            BinOp::Min => Scalar::F32(f32::MAX),
        })
    }

    /// Applies the function to arguments already converted to [`Self::operand_type`].
    pub fn apply(self, a: Scalar, b: Scalar) -> Result<Scalar, ScalarError> {
        use Scalar::*;
        let ovf = ScalarError::Overflow;
        Ok(match (self, a, b) {
            (BinOp::Div, F32(x), F32(y)) => {
                if y == 0.0 {
                    if x == 0.0 {
                        F32(1.0)
                    } else {
                        return Err(ScalarError::DivideByZero);
                    }
                } else {
                    F32(x / y)
                }
            }
            (BinOp::Add, I64(x), I64(y)) => I64(x.checked_add(y).ok_or(ovf)?),
            (BinOp::Sub, I64(x), I64(y)) => I64(x.checked_sub(y).ok_or(ovf)?),
            (BinOp::Mul, I64(x), I64(y)) => I64(x.checked_mul(y).ok_or(ovf)?),
            (BinOp::Add, F32(x), F32(y)) => F32(x + y),
            (BinOp::Sub, F32(x), F32(y)) => F32(x - y),
            (BinOp::Mul, F32(x), F32(y)) => F32(x * y),
            (BinOp::Max, I32(x), I32(y)) => I32(x.max(y)),
            (BinOp::Max, I64(x), I64(y)) => I64(x.max(y)),
            (BinOp::Max, F32(x), F32(y)) => F32(x.max(y)),
            (BinOp::Min, I32(x), I32(y)) => I32(x.min(y)),
            (BinOp::Min, I64(x), I64(y)) => I64(x.min(y)),
            (BinOp::Min, F32(x), F32(y)) => F32(x.min(y)),
            (op, a, b) => {
                // Arguments of mixed or unconverted types: convert and retry.
                let t = op.operand_type(a.elem_type(), b.elem_type());
                if a.elem_type() == t && b.elem_type() == t {
                    unreachable_pair(op, a, b)
                } else {
                    return op.apply(a.cast(t), b.cast(t));
                }
            }
        })
    }
}

#[cold]
fn unreachable_pair(op: BinOp, a: Scalar, b: Scalar) -> Scalar {
    // Every (op, type) pair that operand_type produces is matched above.
    debug_assert!(false, "no rule for {op:?} on {a:?} {b:?}");
    Scalar::F32(f32::NAN)
}
