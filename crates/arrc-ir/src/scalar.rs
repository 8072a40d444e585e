//! Scalar functions: which glyph is which function, their type rules, identities and
//! exact element semantics (Dyalog APL). The CPU reference and constant folding use
//! these; the SPIR-V back end implements the same rules on the device for the functions
//! [`BinOp::on_gpu`] and [`UnOp::on_gpu`] name.

use crate::array::{ElemType, Scalar};
use arrc_syntax::Prim;

/// A monadic scalar function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum UnOp {
    /// `+x` (identity on real numbers)
    Conjugate,
    /// `-x`
    Neg,
    /// `×x`: ¯1, 0 or 1
    Signum,
    /// `÷x`
    Recip,
    /// `|x`
    Abs,
    /// `⌈x`
    Ceil,
    /// `⌊x`
    Floor,
    /// `*x`
    Exp,
    /// `⍟x`
    Ln,
    /// `○x`: π times x
    PiTimes,
    /// `!x`: factorial, Γ(x+1)
    Factorial,
    /// `~x`: boolean not
    Not,
    /// The high 32 bits of an i64, sign-extended (`⌊x÷2*32`): not a glyph of the
    /// language; lowering sums them to check a sum of i64 items for overflow.
    HighHalf,
    /// A float's bits as an integer of its width whose order is the floats' order
    /// (a negative float's magnitude bits flipped): not a glyph; `⌸` takes maxima
    /// and minima of floats as integer atomics of these.
    OrderedBits,
    /// The float whose `OrderedBits` the integer argument is.
    FromOrderedBits,
}

/// A dyadic scalar function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `⍺|⍵`: ⍵ modulo ⍺, with the sign of ⍺.
    Residue,
    Max,
    Min,
    /// `⍺*⍵`
    Power,
    /// `⍺⍟⍵`: logarithm of ⍵ in base ⍺.
    Log,
    /// `⍺○⍵`: circular functions.
    Circle,
    /// `⍺!⍵`: binomial coefficient.
    Binomial,
    Less,
    LessEq,
    Equal,
    GreaterEq,
    Greater,
    NotEqual,
    /// `∧`: and on booleans, least common multiple on integers.
    And,
    /// `∨`: or on booleans, greatest common divisor on integers.
    Or,
    Nand,
    Nor,
    /// Not glyphs of the language: lowering's overflow checks of integer folds, which
    /// the device computes wrapping modulo 2^64 (subgroup operations cannot trap).
    /// `r SumFits h` is `r`, the wrapped `+/x` of i64 items, when the exact sum fits in
    /// 64 bits, which `h`, the exact `+/` of their high halves, decides; else a DOMAIN
    /// ERROR (see [`sum_fits`]).
    SumFits,
    /// `r ScanSumFits x` is `r`, an item of the wrapped `+\x`, when adding `x` to the
    /// item before it did not overflow: the first running sum that leaves 64 bits is
    /// found exactly, from the item and the wrapped result alone.
    ScanSumFits,
    /// `r FitsOr ok` is `r` when `ok` is 1, else a DOMAIN ERROR (the check of a wrapped
    /// `×\` against the same scan in floats).
    FitsOr,
    /// `r Ordered ok` is `r` when `ok` is 1, else a DOMAIN ERROR: `⍺⍸⍵` with an ⍺
    /// computed on the device, `ok` saying whether it is ascending.
    Ordered,
    /// `c Counts ok` is `c` when `ok` is 1, else a DOMAIN ERROR: `⍸c` of counts
    /// computed on the device, `ok` saying whether the count is not negative.
    Counts,
    /// `a Quot b` is the exact quotient of i64 `a` by `b` where `b` divides it (the
    /// steps of `⊤` of 64-bit integers: `(q-r|q)÷r`); a DOMAIN ERROR only for
    /// `¯9223372036854775808 Quot ¯1`.
    Quot,
}

/// A float's bits (as a signed integer) to an integer of the floats' order, and back
/// (`UnOp::OrderedBits`): a negative float's magnitude bits flipped.
pub fn ordered_bits32(b: i32) -> i32 {
    b ^ ((b >> 31) & i32::MAX)
}

/// `ordered_bits32` of f64 bits.
pub fn ordered_bits64(b: i64) -> i64 {
    b ^ ((b >> 63) & i64::MAX)
}

/// Whether `r`, a sum of i64 items wrapped modulo 2^64, is the exact sum, given `h`,
/// the exact sum of the items' high halves (`x >> 32`; the low halves are in
/// [0, 2^32)). With S the exact sum and fewer than 2^32 items, `S >> 32` lies in
/// `[h, h + 2^32)`, and `r >> 32` differs from it by a multiple of 2^32: they agree,
/// and S fits, exactly when `r >> 32` is in that range too.
pub fn sum_fits(r: i64, h: i64) -> bool {
    let top = r >> 32;
    h <= top && top - (1 << 32) < h
}

/// The DOMAIN ERROR of `⍺⍸⍵` with an ⍺ not in ascending order.
pub const NOT_ASCENDING: &str = "⍺⍸⍵ needs ⍺ in ascending order";

/// The DOMAIN ERROR of `⍸c` with a negative count.
pub const NEGATIVE_COUNT: &str = "⍸ needs non-negative integers";

/// Why a scalar function has no value for its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarError {
    /// `1÷0`.
    DivideByZero,
    /// An integer result beyond 64 bits.
    Overflow,
    /// An argument outside the function's domain (`⍟0`, `~2`, `¯1!3`…).
    Domain(&'static str),
}

fn domain(why: &'static str) -> ScalarError {
    ScalarError::Domain(why)
}

/// A float result of type `ty` (f32 or f64); beyond its range (or not a number) it is
/// a DOMAIN ERROR, as APL has no infinities.
fn fr(v: f64, ty: ElemType) -> Result<Scalar, ScalarError> {
    let s = Scalar::float(v, ty);
    if s.as_f64().is_finite() {
        Ok(s)
    } else {
        Err(domain(not_finite(ty)))
    }
}

/// The DOMAIN ERROR message of a float result beyond the range of `ty`.
pub fn not_finite(ty: ElemType) -> &'static str {
    if ty == ElemType::F64 {
        "the result is not a finite f64 number"
    } else {
        "the result is not a finite f32 number"
    }
}

/// Dyalog's comparison tolerance ⎕CT in a clear workspace, applied to f64
/// comparisons, floors and ceilings. (Every ⎕CT Dyalog allows is below one f32
/// rounding step, so f32 comparisons are exact.)
pub const COMPARISON_TOLERANCE: f64 = 1e-14;

/// The largest ⎕CT (Dyalog's: 2*¯32).
pub const MAX_COMPARISON_TOLERANCE: f64 = 2.3283064365386963e-10;

thread_local! {
    static CT: std::cell::Cell<f64> = const { std::cell::Cell::new(COMPARISON_TOLERANCE) };
}

/// This thread's ⎕CT, which the reference and the compiler read (a session sets it
/// before it evaluates).
pub fn comparison_tolerance() -> f64 {
    CT.with(|c| c.get())
}

/// Sets this thread's ⎕CT.
pub fn set_comparison_tolerance(ct: f64) {
    CT.with(|c| c.set(ct));
}

/// `x = y` within ⎕CT: |x-y| ≤ ⎕CT × (|x| ⌈ |y|).
pub fn tolerant_eq(x: f64, y: f64) -> bool {
    x == y || (x - y).abs() <= comparison_tolerance() * x.abs().max(y.abs())
}

/// Dyalog's tolerant floor: the nearest integer, less one when that is above `x` by
/// more than ⎕CT relative to `x` (so `⌊2.99999999999999996` is 3).
pub fn tolerant_floor(x: f64) -> f64 {
    if x.floor() == x {
        // (Also keeps odd integers beyond 2^52, where x + 0.5 rounds up.)
        return x;
    }
    let n = (x + 0.5).floor();
    if n - x > comparison_tolerance() * x.abs().max(1.0) {
        n - 1.0
    } else {
        n
    }
}

impl UnOp {
    pub fn from_prim(p: Prim) -> Option<UnOp> {
        Some(match p {
            Prim::Plus => UnOp::Conjugate,
            Prim::Minus => UnOp::Neg,
            Prim::Times => UnOp::Signum,
            Prim::Divide => UnOp::Recip,
            Prim::Stile => UnOp::Abs,
            Prim::Ceiling => UnOp::Ceil,
            Prim::Floor => UnOp::Floor,
            Prim::Star => UnOp::Exp,
            Prim::Log => UnOp::Ln,
            Prim::Circle => UnOp::PiTimes,
            Prim::Bang => UnOp::Factorial,
            Prim::Tilde => UnOp::Not,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            UnOp::Conjugate => "conj",
            UnOp::Neg => "neg",
            UnOp::Signum => "signum",
            UnOp::Recip => "recip",
            UnOp::Abs => "abs",
            UnOp::Ceil => "ceil",
            UnOp::Floor => "floor",
            UnOp::Exp => "exp",
            UnOp::Ln => "ln",
            UnOp::PiTimes => "pitimes",
            UnOp::Factorial => "factorial",
            UnOp::Not => "not",
            UnOp::HighHalf => "highhalf",
            UnOp::OrderedBits => "orderedbits",
            UnOp::FromOrderedBits => "fromorderedbits",
        }
    }

    /// Whether the SPIR-V back end implements it (every monadic scalar function).
    pub fn on_gpu(self) -> bool {
        true
    }

    /// Whether the SPIR-V back end implements it for an argument of this type in a
    /// program whose floats are `float` (`~` of floats is a DOMAIN ERROR there).
    pub fn on_gpu_for(self, arg: ElemType, _float: ElemType) -> bool {
        !matches!(self, UnOp::Not if arg.is_float())
    }

    /// The DOMAIN ERROR the device may raise computing it on an argument of this type.
    /// (`result` is the result's type).
    pub fn device_error(self, arg: ElemType, result: ElemType) -> Option<&'static str> {
        use ElemType::*;
        match self {
            UnOp::Recip => Some("division by zero, or a reciprocal beyond the float range"),
            UnOp::Ln => Some("⍟ needs a positive argument"),
            UnOp::Exp | UnOp::PiTimes => Some(not_finite(result)),
            UnOp::Factorial => Some(if result == F64 {
                "! of a negative integer, or a result beyond f64"
            } else {
                "! of a negative integer, or a result beyond f32"
            }),
            UnOp::Not if arg != Bool => Some("~ needs booleans (0 or 1)"),
            UnOp::Neg | UnOp::Abs if arg == I64 => Some("integer result does not fit in 64 bits"),
            UnOp::Ceil | UnOp::Floor if arg.is_float() => {
                Some("the result is too large for an integer")
            }
            _ => None,
        }
    }

    /// Element type of the result in a program whose floats are `float`. Integers
    /// negate in 64 bits (`-¯2147483648` leaves i32's range); floors and ceilings of
    /// floats are integers.
    pub fn result_type(self, arg: ElemType, float: ElemType) -> ElemType {
        use ElemType::*;
        match self {
            UnOp::Conjugate => arg,
            UnOp::Neg | UnOp::Abs if arg.is_float() => arg,
            UnOp::Abs if arg == Bool => Bool,
            UnOp::Neg | UnOp::Abs => I64,
            UnOp::Signum => I32,
            UnOp::Ceil | UnOp::Floor if arg.is_float() => I64,
            UnOp::Ceil | UnOp::Floor => arg,
            UnOp::Recip | UnOp::Exp | UnOp::Ln | UnOp::PiTimes | UnOp::Factorial => arg.join(float),
            UnOp::Not => Bool,
            UnOp::HighHalf => I64,
            UnOp::OrderedBits if arg == F32 => I32,
            UnOp::OrderedBits => I64,
            UnOp::FromOrderedBits if arg == I64 => F64,
            UnOp::FromOrderedBits => F32,
        }
    }

    pub fn apply(self, x: Scalar, float: ElemType) -> Result<Scalar, ScalarError> {
        if x.elem_type().is_char() {
            return Err(domain("characters are not numbers"));
        }
        let ty = self.result_type(x.elem_type(), float);
        let f = x.as_f64();
        let int = x.elem_type().is_int();
        Ok(match self {
            UnOp::Conjugate => x,
            UnOp::Neg if int => Scalar::I64(
                x.as_i64()
                    .unwrap_or(0)
                    .checked_neg()
                    .ok_or(ScalarError::Overflow)?,
            ),
            UnOp::Neg => Scalar::float(-f, ty),
            UnOp::Abs if ty == ElemType::Bool => x,
            UnOp::Abs if int => Scalar::I64(
                x.as_i64()
                    .unwrap_or(0)
                    .checked_abs()
                    .ok_or(ScalarError::Overflow)?,
            ),
            UnOp::Abs => Scalar::float(f.abs(), ty),
            UnOp::Signum => Scalar::I32(if f > 0.0 {
                1
            } else if f < 0.0 {
                -1
            } else {
                0
            }),
            UnOp::Ceil | UnOp::Floor if int => x.cast(ty),
            UnOp::Ceil | UnOp::Floor => {
                let r = match (self, x.elem_type()) {
                    (UnOp::Floor, ElemType::F64) => tolerant_floor(f),
                    (_, ElemType::F64) => -tolerant_floor(-f),
                    (UnOp::Floor, _) => f.floor(),
                    _ => f.ceil(),
                };
                if r.abs() >= 9.2e18 {
                    return Err(domain("the result is too large for an integer"));
                }
                Scalar::I64(r as i64)
            }
            UnOp::Recip => {
                if f == 0.0 {
                    return Err(ScalarError::DivideByZero);
                }
                fr(1.0 / f, ty)?
            }
            UnOp::Exp => fr(f.exp(), ty)?,
            UnOp::Ln => {
                if f <= 0.0 {
                    return Err(domain("⍟ needs a positive argument"));
                }
                fr(f.ln(), ty)?
            }
            UnOp::PiTimes => fr(std::f64::consts::PI * f, ty)?,
            UnOp::Factorial => {
                if f < 0.0 && f.fract() == 0.0 {
                    return Err(domain("! of a negative integer"));
                }
                fr(gamma(f + 1.0), ty)?
            }
            UnOp::Not => match x.as_i64() {
                Some(0) => Scalar::Bool(true),
                Some(1) => Scalar::Bool(false),
                _ => return Err(domain("~ needs booleans (0 or 1)")),
            },
            UnOp::HighHalf => Scalar::I64(x.as_i64().unwrap_or(0) >> 32),
            UnOp::OrderedBits => match x {
                Scalar::F32(v) => Scalar::I32(ordered_bits32(v.to_bits() as i32)),
                _ => Scalar::I64(ordered_bits64(f.to_bits() as i64)),
            },
            UnOp::FromOrderedBits => match x {
                Scalar::I64(v) => Scalar::F64(f64::from_bits(ordered_bits64(v) as u64)),
                _ => {
                    let v = x.as_i64().unwrap_or(0) as i32;
                    Scalar::F32(f32::from_bits(ordered_bits32(v) as u32))
                }
            },
        })
    }
}

/// Lanczos coefficients (g = 7, n = 9) for the gamma function (the reference's and
/// the device's).
pub const LANCZOS: [f64; 9] = [
    0.999_999_999_999_809_9,
    676.520_368_121_885_1,
    -1_259.139_216_722_402_8,
    771.323_428_777_653_1,
    -176.615_029_162_140_6,
    12.507_343_278_686_905,
    -0.138_571_095_265_720_12,
    9.984_369_578_019_572e-6,
    1.505_632_735_149_311_6e-7,
];

/// The gamma function (Lanczos approximation, g=7), exact at small integers.
pub fn gamma(x: f64) -> f64 {
    if x.fract() == 0.0 && x > 0.0 && x <= 171.0 {
        return (1..x as u64).fold(1.0, |a, k| a * k as f64);
    }
    if x < 0.5 {
        return std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x));
    }
    const G: [f64; 9] = LANCZOS;
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    // t^(x+½)·e^(-t) in one exponential: the two factors overflow and underflow
    // apart from x ≈ 140 while their product is still finite (up to x ≈ 171).
    let p = if x < 100.0 {
        t.powf(x + 0.5) * (-t).exp()
    } else {
        ((x + 0.5) * t.ln() - t).exp()
    };
    (2.0 * std::f64::consts::PI).sqrt() * p * a
}

/// The greatest common divisor of the magnitudes (2^63 for ¯9223372036854775808
/// with itself or 0).
fn gcd(a: i64, b: i64) -> u64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl BinOp {
    pub fn from_prim(p: Prim) -> Option<BinOp> {
        Some(match p {
            Prim::Plus => BinOp::Add,
            Prim::Minus => BinOp::Sub,
            Prim::Times => BinOp::Mul,
            Prim::Divide => BinOp::Div,
            Prim::Stile => BinOp::Residue,
            Prim::Ceiling => BinOp::Max,
            Prim::Floor => BinOp::Min,
            Prim::Star => BinOp::Power,
            Prim::Log => BinOp::Log,
            Prim::Circle => BinOp::Circle,
            Prim::Bang => BinOp::Binomial,
            Prim::Less => BinOp::Less,
            Prim::LessEq => BinOp::LessEq,
            Prim::Equal => BinOp::Equal,
            Prim::GreaterEq => BinOp::GreaterEq,
            Prim::Greater => BinOp::Greater,
            Prim::NotEqual => BinOp::NotEqual,
            Prim::And => BinOp::And,
            Prim::Or => BinOp::Or,
            Prim::Nand => BinOp::Nand,
            Prim::Nor => BinOp::Nor,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "add",
            Sub => "sub",
            Mul => "mul",
            Div => "div",
            Residue => "residue",
            Max => "max",
            Min => "min",
            Power => "power",
            Log => "log",
            Circle => "circle",
            Binomial => "binomial",
            Less => "lt",
            LessEq => "le",
            Equal => "eq",
            GreaterEq => "ge",
            Greater => "gt",
            NotEqual => "ne",
            And => "and",
            Or => "or",
            Nand => "nand",
            Nor => "nor",
            SumFits => "sumfits",
            ScanSumFits => "scansumfits",
            FitsOr => "fitsor",
            Ordered => "ordered",
            Counts => "counts",
            Quot => "quot",
        }
    }

    pub fn glyph(self) -> char {
        use BinOp::*;
        match self {
            Add => '+',
            Sub => '-',
            Mul => '×',
            Div => '÷',
            Residue => '|',
            Max => '⌈',
            Min => '⌊',
            Power => '*',
            Log => '⍟',
            Circle => '○',
            Binomial => '!',
            Less => '<',
            LessEq => '≤',
            Equal => '=',
            GreaterEq => '≥',
            Greater => '>',
            NotEqual => '≠',
            And => '∧',
            Or => '∨',
            Nand => '⍲',
            Nor => '⍱',
            SumFits | ScanSumFits => '+',
            FitsOr => '×',
            Ordered | Counts => '⍸',
            Quot => '÷',
        }
    }

    /// Whether the SPIR-V back end implements it for arithmetic arguments.
    pub fn on_gpu(self) -> bool {
        !matches!(
            self,
            BinOp::Binomial | BinOp::And | BinOp::Or | BinOp::Nand | BinOp::Nor
        ) && !self.is_comparison()
    }

    /// Whether the SPIR-V back end implements it for arguments of these types:
    /// comparisons on any numbers; `∧ ∨` on booleans and integers (LCM and GCD) and
    /// `⍲ ⍱` on booleans and integers (a DOMAIN ERROR unless 0 or 1), not on floats.
    pub fn on_gpu_for(self, a: ElemType, b: ElemType, _float: ElemType) -> bool {
        let j = a.join(b);
        match self {
            BinOp::Nand | BinOp::Nor => !j.is_float(),
            _ => true,
        }
    }

    /// The DOMAIN ERROR the device may raise computing it on operands of type
    /// `operand` (after conversion).
    pub fn device_error(self, operand: ElemType) -> Option<&'static str> {
        use ElemType::*;
        match self {
            BinOp::Div => Some("division by zero, or a quotient beyond the float range"),
            BinOp::Add | BinOp::Sub | BinOp::Mul if operand.is_float() => Some(not_finite(operand)),
            BinOp::Add | BinOp::Sub | BinOp::Mul => Some("integer result does not fit in 64 bits"),
            BinOp::Power => Some("⍺*⍵ has no finite real result here"),
            BinOp::Log => Some("⍟ needs positive arguments (and a base other than 1)"),
            BinOp::Circle => Some("⍺○⍵ outside its domain"),
            BinOp::Binomial => Some("⍺!⍵ beyond f32, or ⍵ a negative integer and ⍺ not"),
            BinOp::And | BinOp::Or if operand.is_float() => {
                Some("∧ and ∨ need booleans or integers")
            }
            BinOp::And | BinOp::Or if operand != Bool => {
                Some("integer result does not fit in 64 bits")
            }
            BinOp::Nand | BinOp::Nor if operand != Bool => Some("needs booleans (0 or 1)"),
            BinOp::SumFits | BinOp::ScanSumFits | BinOp::FitsOr | BinOp::Quot => {
                Some("integer result does not fit in 64 bits")
            }
            BinOp::Ordered => Some(NOT_ASCENDING),
            BinOp::Counts => Some(NEGATIVE_COUNT),
            _ => None,
        }
    }

    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Less | LessEq | Equal | GreaterEq | Greater | NotEqual)
    }

    /// Element type of `a f b` in a program whose floats are `float`.
    pub fn result_type(self, a: ElemType, b: ElemType, float: ElemType) -> ElemType {
        use ElemType::*;
        let j = a.join(b);
        match self {
            _ if self.is_comparison() => Bool,
            BinOp::Div | BinOp::Power | BinOp::Log | BinOp::Circle | BinOp::Binomial => {
                j.join(float)
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul if j.is_int() => I64,
            BinOp::And | BinOp::Or if j == Bool => Bool,
            BinOp::And | BinOp::Or if j.is_int() => I64,
            BinOp::Nand | BinOp::Nor => Bool,
            BinOp::SumFits
            | BinOp::ScanSumFits
            | BinOp::FitsOr
            | BinOp::Quot
            | BinOp::Ordered
            | BinOp::Counts => I64,
            _ => j,
        }
    }

    /// The type both arguments are converted to before the function applies.
    pub fn operand_type(self, a: ElemType, b: ElemType, float: ElemType) -> ElemType {
        let j = a.join(b);
        match self {
            _ if self.is_comparison() => j,
            BinOp::And
            | BinOp::Or
            | BinOp::Nand
            | BinOp::Nor
            | BinOp::Residue
            | BinOp::Max
            | BinOp::Min => j,
            _ => self.result_type(a, b, float),
        }
    }

    /// Whether the function is associative on items of type `elem`, so that it reduces
    /// and scans in any bracketing: `= ≠` only on booleans (`=/1 2 0` is `1=(2=0)`, 0,
    /// but `(1=2)=0` is 1); `∧ ∨` not on floats, whose least common multiples are
    /// rounded, so that each bracketing gives another number (the device scans them
    /// as APL defines, each prefix folded from the right: `∧\` of f32 multiples of
    /// 2^32 differed 8-fold, fuzzer seed 103 index 1191).
    pub fn is_associative(self, elem: ElemType) -> bool {
        use BinOp::*;
        match self {
            Add | Mul | Max | Min => true,
            And | Or => !elem.is_float(),
            Equal | NotEqual => elem == ElemType::Bool,
            _ => false,
        }
    }

    /// Type of `f/x` and `f\x` for elements of type `elem`.
    pub fn reduce_type(self, elem: ElemType, float: ElemType) -> ElemType {
        self.result_type(elem, elem, float)
    }

    /// The identity element: the value of a reduction over an empty axis, `None` when
    /// the function has none (DOMAIN ERROR). `⌈/⍬` is the most negative float.
    pub fn identity(self, elem: ElemType, float: ElemType) -> Option<Scalar> {
        use BinOp::*;
        let ty = self.reduce_type(elem, float);
        let ft = if elem.is_float() { elem } else { float };
        let max = if ft == ElemType::F64 {
            f64::MAX
        } else {
            f32::MAX as f64
        };
        Some(match self {
            Add | Sub | Residue | Or | Less | Greater | NotEqual => Scalar::I32(0).cast(ty),
            Mul | Div | Power | Binomial | And | LessEq | Equal | GreaterEq => {
                Scalar::I32(1).cast(ty)
            }
            Max => Scalar::float(-max, ft),
            Min => Scalar::float(max, ft),
            Log | Circle | Nand | Nor | SumFits | ScanSumFits | FitsOr | Quot | Ordered
            | Counts => return None,
        })
    }

    /// Applies the function (arguments of any types; they are converted here).
    pub fn apply(self, a: Scalar, b: Scalar, float: ElemType) -> Result<Scalar, ScalarError> {
        use BinOp::*;
        // Characters only compare: equal to the same character, never to a number.
        if a.elem_type().is_char() || b.elem_type().is_char() {
            return match self {
                Equal => Ok(Scalar::Bool(a == b)),
                NotEqual => Ok(Scalar::Bool(a != b)),
                _ => Err(domain("characters are not numbers")),
            };
        }
        let ot = self.operand_type(a.elem_type(), b.elem_type(), float);
        let rt = self.result_type(a.elem_type(), b.elem_type(), float);
        let int = ot.is_int();
        // Floats are converted to the operand type first; f32 results computed in f64
        // and rounded once are the correctly rounded f32 results of + - × ÷.
        let (x, y) = if int {
            (a.as_f64(), b.as_f64())
        } else {
            (a.cast(ot).as_f64(), b.cast(ot).as_f64())
        };
        let f64_ops = ot == ElemType::F64;
        let eq = |x: f64, y: f64| if f64_ops { tolerant_eq(x, y) } else { x == y };
        let (i, j) = (a.as_i64().unwrap_or(0), b.as_i64().unwrap_or(0));
        let ovf = ScalarError::Overflow;
        let boolean = |v: i64| -> Result<bool, ScalarError> {
            match v {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(domain("needs booleans (0 or 1)")),
            }
        };
        Ok(match self {
            Add if int => Scalar::I64(i.checked_add(j).ok_or(ovf)?),
            Sub if int => Scalar::I64(i.checked_sub(j).ok_or(ovf)?),
            Mul if int => Scalar::I64(i.checked_mul(j).ok_or(ovf)?),
            Add => fr(x + y, rt)?,
            Sub => fr(x - y, rt)?,
            Mul => fr(x * y, rt)?,
            Div => {
                if y == 0.0 {
                    if x == 0.0 {
                        Scalar::float(1.0, rt)
                    } else {
                        return Err(ScalarError::DivideByZero);
                    }
                } else {
                    fr(x / y, rt)?
                }
            }
            Residue if int => {
                if i == 0 {
                    b.cast(rt)
                } else {
                    let r = j.rem_euclid(i.abs());
                    let r = if i < 0 && r != 0 { r + i } else { r };
                    Scalar::I64(r).cast(rt)
                }
            }
            Residue => {
                if x == 0.0 {
                    Scalar::float(y, rt)
                } else if rt == ElemType::F64 {
                    // Dyalog's tolerant residue (⎕CT): a quotient within ⎕CT of an
                    // integer leaves nothing (`0.1|0.3` is 0), else ⍵-⍺×⌊⍵÷⍺.
                    let q = y / x;
                    let f = tolerant_floor(q);
                    let r = if tolerant_eq(q, f) {
                        0.0
                    } else {
                        y - x * q.floor()
                    };
                    Scalar::float(r, rt)
                } else {
                    let r = y - x * (y / x).floor();
                    Scalar::float(r, rt)
                }
            }
            Max | Min => {
                let a_wins = if int {
                    (i >= j) == (self == Max)
                } else {
                    (x >= y) == (self == Max)
                };
                (if a_wins || (int && i == j) || (!int && x == y) {
                    a
                } else {
                    b
                })
                .cast(rt)
            }
            Power => {
                if x == 0.0 && y < 0.0 {
                    return Err(domain("0 to a negative power"));
                }
                if x < 0.0 && y.fract() != 0.0 {
                    return Err(domain("a negative number to a fractional power"));
                }
                fr(x.powf(y), rt)?
            }
            Log => {
                if x <= 0.0 || y <= 0.0 {
                    return Err(domain("⍟ needs positive arguments"));
                }
                if x == 1.0 {
                    if y == 1.0 {
                        return Ok(Scalar::float(1.0, rt));
                    }
                    return Err(domain("logarithm in base 1"));
                }
                fr(y.ln() / x.ln(), rt)?
            }
            Circle => {
                let k = a
                    .as_i64()
                    .filter(|k| (-7..=7).contains(k))
                    .ok_or(domain("⍺○⍵ needs ⍺ an integer from ¯7 to 7"))?;
                let v = match k {
                    0 => (1.0 - y * y).sqrt(),
                    1 => y.sin(),
                    2 => y.cos(),
                    3 => y.tan(),
                    4 => (1.0 + y * y).sqrt(),
                    5 => y.sinh(),
                    6 => y.cosh(),
                    7 => y.tanh(),
                    -1 => y.asin(),
                    -2 => y.acos(),
                    -3 => y.atan(),
                    -4 => {
                        if y.abs() < 1.0 {
                            return Err(domain("¯4○⍵ needs |⍵| ≥ 1"));
                        }
                        (y + 1.0) * ((y - 1.0) / (y + 1.0)).sqrt()
                    }
                    -5 => y.asinh(),
                    -6 => y.acosh(),
                    _ => y.atanh(),
                };
                fr(v, rt)?
            }
            Binomial => {
                if a.elem_type().is_int() && b.elem_type().is_int()
                    || (x.fract() == 0.0 && y.fract() == 0.0)
                {
                    let (k, n) = (x, y);
                    if k < 0.0 || n < 0.0 {
                        if n < 0.0 && k >= 0.0 {
                            // (¯1*k)×(k-n-1)!k
                            let s = if even(k) { 1.0 } else { -1.0 };
                            return fr(s * binomial(k, k - n - 1.0), rt);
                        }
                        if n < 0.0 && k < 0.0 && k <= n {
                            let s = if even(n - k) { 1.0 } else { -1.0 };
                            return fr(s * binomial(n - k, -k - 1.0), rt);
                        }
                        return Ok(Scalar::float(0.0, rt));
                    }
                    if k > n {
                        return Ok(Scalar::float(0.0, rt));
                    }
                    fr(binomial(k, n), rt)?
                } else {
                    // Γ(⍵+1) ÷ Γ(⍺+1) × Γ(⍵-⍺+1): a pole above is a DOMAIN ERROR, a
                    // pole below makes the result 0.
                    let pole = |v: f64| v < 0.0 && v.fract() == 0.0;
                    if pole(y) {
                        return Err(domain("⍺!⍵ with ⍵ a negative integer and ⍺ not"));
                    }
                    if pole(x) || pole(y - x) {
                        return Ok(Scalar::float(0.0, rt));
                    }
                    fr(gamma(y + 1.0) / (gamma(x + 1.0) * gamma(y - x + 1.0)), rt)?
                }
            }
            // Integers compare exactly (as f64, 2^62-1 and 2^62 are equal).
            Less if int => Scalar::Bool(i < j),
            LessEq if int => Scalar::Bool(i <= j),
            GreaterEq if int => Scalar::Bool(i >= j),
            Greater if int => Scalar::Bool(i > j),
            Less => Scalar::Bool(x < y && !eq(x, y)),
            LessEq => Scalar::Bool(x <= y || eq(x, y)),
            Equal => Scalar::Bool(if int { i == j } else { eq(x, y) }),
            GreaterEq => Scalar::Bool(x >= y || eq(x, y)),
            Greater => Scalar::Bool(x > y && !eq(x, y)),
            NotEqual => Scalar::Bool(if int { i != j } else { !eq(x, y) }),
            And | Or if rt == ElemType::Bool => {
                let (p, q) = (boolean(i)?, boolean(j)?);
                Scalar::Bool(if self == And { p && q } else { p || q })
            }
            And | Or if int => {
                let g = gcd(i, j);
                let r = if self == Or {
                    g as i128
                } else if g == 0 {
                    0
                } else {
                    (i as i128 / g as i128) * j as i128
                };
                Scalar::I64(i64::try_from(r).map_err(|_| ovf)?)
            }
            And | Or => {
                // Integers that fit in 64 bits (as the device converts them).
                if x.fract() != 0.0 || y.fract() != 0.0 || x.abs() >= 9.2e18 || y.abs() >= 9.2e18 {
                    return Err(domain("∧ and ∨ need booleans or integers"));
                }
                let g = gcd(x as i64, y as i64) as i64;
                if self == Or {
                    Scalar::float(g as f64, rt)
                } else if g == 0 {
                    Scalar::float(0.0, rt)
                } else {
                    Scalar::float((x as i64 / g) as f64 * y, rt)
                }
            }
            SumFits if sum_fits(i, j) => Scalar::I64(i),
            ScanSumFits if i.wrapping_sub(j).checked_add(j).is_some() => Scalar::I64(i),
            FitsOr | Ordered | Counts if j != 0 => Scalar::I64(i),
            Ordered => return Err(domain(NOT_ASCENDING)),
            Counts => return Err(domain(NEGATIVE_COUNT)),
            Quot if j != 0 && i.checked_div(j).is_some() => Scalar::I64(i / j),
            SumFits | ScanSumFits | FitsOr | Quot => return Err(ovf),
            // Both arguments are checked: `1⍱2` is a DOMAIN ERROR, not 0.
            Nand | Nor => {
                let (p, q) = (boolean(i)?, boolean(j)?);
                Scalar::Bool(if self == Nand { !(p && q) } else { !(p || q) })
            }
        })
    }
}

/// Whether an integral float is even, as the device tests it (from the float: beyond
/// 2^53 every float is even; a conversion to i64 would saturate at an odd number).
fn even(v: f64) -> bool {
    (v * 0.5).floor() == v * 0.5
}

/// k!n for non-negative integers k ≤ n, by the multiplicative formula.
fn binomial(k: f64, n: f64) -> f64 {
    let k = k.min(n - k);
    if k > 200.0 {
        // C(n, k) ≥ C(400, 200) ≈ 1e119: beyond f32 (and near f64's end); `fr` turns this into DOMAIN ERROR.
        return f64::INFINITY;
    }
    let mut r = 1.0f64;
    let mut i = 1.0;
    while i <= k {
        r = r * (n - k + i) / i;
        i += 1.0;
    }
    r.round()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `OrderedBits` orders floats as they compare (negative zero just below zero),
    /// and `FromOrderedBits` gives each back, bit for bit.
    #[test]
    fn ordered_bits_keep_the_floats_order() {
        let xs = [
            f64::MIN,
            -3e38,
            -2.0,
            -1.0,
            -1e-40,
            -0.0,
            0.0,
            1e-40,
            1.0,
            3e38,
            f64::MAX,
        ];
        let f32s: Vec<Scalar> = xs.iter().map(|&x| Scalar::F32(x as f32)).collect();
        let f64s: Vec<Scalar> = xs.iter().map(|&x| Scalar::F64(x)).collect();
        for v in [f32s, f64s] {
            let float = v[0].elem_type();
            let o: Vec<Scalar> = v
                .iter()
                .map(|&x| UnOp::OrderedBits.apply(x, float).unwrap())
                .collect();
            for w in o.windows(2) {
                let (a, b) = (w[0].as_i64().unwrap(), w[1].as_i64().unwrap());
                assert!(a < b, "{w:?}");
            }
            for (&x, &y) in v.iter().zip(&o) {
                let back = UnOp::FromOrderedBits.apply(y, float).unwrap();
                assert_eq!(format!("{back:?}"), format!("{x:?}"));
            }
        }
    }
}
