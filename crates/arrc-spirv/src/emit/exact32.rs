//! f32 on a device that flushes f32 subnormals (`Emitter::exact32`).
//!
//! Without `shaderDenormPreserveFloat32` a device may read an f32 subnormal as 0
//! in any float instruction and give 0 for a subnormal result (NVIDIA's H200
//! does: `x×1e10` of `x←1e¯40` was 0, and so was its f32 → f64 conversion). Where
//! the kernel may use f64 (whose subnormals these devices keep), f32 is computed in
//! f64 instead: widened from its bits ([`Emitter::widen32`]), computed, narrowed by
//! one rounding (double rounding from f64 is harmless for `+ - × ÷` and √: f64 has
//! more than twice f32's bits and two more). Comparisons (`compare`: by ordered
//! bits; inside scalar functions `fcmp`: widened), `⌈`, `⌊`, `|`, `-` and the
//! finiteness test work on the bits. `flush.rs` checks each module for what is left.

use super::*;

const SIGN: u64 = 0x8000_0000;
const MAGNITUDE: u64 = 0x7fff_ffff;
const EXPONENT: u64 = 0x7f80_0000;
const LEAST_NORMAL: u64 = 0x0080_0000;

impl Emitter {
    /// f32 `v` as an f64, exactly, subnormals too: OpFConvert where `v` is normal
    /// (or 0, infinite, NaN), the mantissa times 2^-149 where it is subnormal.
    pub(super) fn widen32(&mut self, v: Word) -> R<Word> {
        self.uses_f64 = true;
        let (u, bt) = (self.u32_t, self.bool_t);
        let dt = self.ty(ElemType::F64);
        let bits = self.b.bitcast(u, None, v).map_err(be)?;
        let mask = self.c_u32(MAGNITUDE as u32);
        let mag = self.b.bitwise_and(u, None, bits, mask).map_err(be)?;
        let least = self.c_u32(LEAST_NORMAL as u32);
        let small = self.b.u_less_than(bt, None, mag, least).map_err(be)?;
        let sign = self.c_u32(SIGN as u32);
        let neg = self
            .b
            .u_greater_than_equal(bt, None, bits, sign)
            .map_err(be)?;
        let m = self.b.convert_u_to_f(dt, None, mag).map_err(be)?;
        let (up, down) = (
            self.fc(ElemType::F64, 2f64.powi(-149)),
            self.fc(ElemType::F64, -(2f64.powi(-149))),
        );
        let scale = self.b.select(dt, None, neg, down, up).map_err(be)?;
        let sub = self.b.f_mul(dt, None, m, scale).map_err(be)?;
        let normal = self.b.f_convert(dt, None, v).map_err(be)?;
        self.b
            .decorate(normal, rspirv::spirv::Decoration::NoContraction, []);
        self.b.select(dt, None, small, sub, normal).map_err(be)
    }

    /// `f` of f32 operands computed in f64, rounded once to f32 (`convert`: from
    /// the bits where the device may flush f32 subnormals; NVIDIA's narrowing
    /// keeps a subnormal result).
    pub(super) fn in_f64(
        &mut self,
        args: &[Word],
        f: impl FnOnce(&mut Self, &[Word]) -> R<Word>,
    ) -> R<Word> {
        let wide = args
            .iter()
            .map(|&a| self.convert(a, ElemType::F32, ElemType::F64))
            .collect::<R<Vec<_>>>()?;
        let r = f(self, &wide)?;
        self.convert(r, ElemType::F64, ElemType::F32)
    }

    /// f32 `v` with its sign bit flipped (`negate`: `-v`) or cleared (`|v|`).
    pub(super) fn sign32(&mut self, negate: bool, v: Word) -> R<Word> {
        let u = self.u32_t;
        let ft = self.ty(ElemType::F32);
        let bits = self.b.bitcast(u, None, v).map_err(be)?;
        let r = if negate {
            let sign = self.c_u32(SIGN as u32);
            self.b.bitwise_xor(u, None, bits, sign)
        } else {
            let mask = self.c_u32(MAGNITUDE as u32);
            self.b.bitwise_and(u, None, bits, mask)
        }
        .map_err(be)?;
        self.b.bitcast(ft, None, r).map_err(be)
    }

    /// Whether f32 `v` is infinite or NaN, from its exponent bits.
    pub(super) fn not_finite32(&mut self, v: Word) -> R<Word> {
        let u = self.u32_t;
        let bits = self.b.bitcast(u, None, v).map_err(be)?;
        let e = self.c_u32(EXPONENT as u32);
        let x = self.b.bitwise_and(u, None, bits, e).map_err(be)?;
        self.b.i_equal(self.bool_t, None, x, e).map_err(be)
    }

    /// f32 `v` as an i32 in the floats' order (`signed_order_bits`; -0 below
    /// 0, which `⌈` and `⌊` may give either way): its own inverse.
    pub(super) fn order32(&mut self, v: Word) -> R<Word> {
        let it = self.ty(ElemType::I32);
        let x = self.b.bitcast(it, None, v).map_err(be)?;
        self.signed_order_bits(false, x)
    }

    /// `a⌈c` or `a⌊c` of f32 by their ordered bits (one of the two, as it is).
    pub(super) fn max_min32(&mut self, max: bool, a: Word, c: Word) -> R<Word> {
        let (x, y) = (self.order32(a)?, self.order32(c)?);
        let bt = self.bool_t;
        let pick_a = if max {
            self.b.s_greater_than(bt, None, x, y)
        } else {
            self.b.s_less_than(bt, None, x, y)
        }
        .map_err(be)?;
        let ft = self.ty(ElemType::F32);
        self.b.select(ft, None, pick_a, a, c).map_err(be)
    }

    /// f32 from its ordered bits as an i32 (`order32`'s inverse).
    pub(super) fn unorder32(&mut self, x: Word) -> R<Word> {
        let y = self.signed_order_bits(false, x)?;
        let ft = self.ty(ElemType::F32);
        self.b.bitcast(ft, None, y).map_err(be)
    }
}

impl Emitter {
    /// `a op b` of floats of type `t` (`<`, `≤`, `=`, `≥`, `>`), as a SPIR-V
    /// boolean: of f32 widened first where the device may flush them.
    pub(super) fn fcmp(&mut self, t: ElemType, op: BinOp, a: Word, b: Word) -> R<Word> {
        let (a, b) = if self.exact32 && t == ElemType::F32 {
            (self.widen32(a)?, self.widen32(b)?)
        } else {
            (a, b)
        };
        let bt = self.bool_t;
        match op {
            BinOp::Less => self.b.f_ord_less_than(bt, None, a, b),
            BinOp::LessEq => self.b.f_ord_less_than_equal(bt, None, a, b),
            BinOp::Equal => self.b.f_ord_equal(bt, None, a, b),
            BinOp::GreaterEq => self.b.f_ord_greater_than_equal(bt, None, a, b),
            BinOp::Greater => self.b.f_ord_greater_than(bt, None, a, b),
            _ => return Err(SpirvError::Build(format!("{op:?} is no comparison"))),
        }
        .map_err(be)
    }
}
