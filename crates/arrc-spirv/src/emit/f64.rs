//! `exp` and `log` in f64. Vulkan's GLSL.std.450 has them for 16- and 32-bit floats
//! only, so f64 programs get these: range reduction by powers of two (exact, through
//! the exponent bits and `Ldexp`) and polynomials accurate to a few ulps.

use super::{be, Emitter, R};
use arrc_ir::scalar::BinOp;
use arrc_ir::ElemType;
use rspirv::spirv::Word;

const F64: ElemType = ElemType::F64;
// GLSL.std.450 instruction numbers.
const ROUND_EVEN: u32 = 2;
const LDEXP: u32 = 53;
const FMA: u32 = 50;

/// ln 2 split so that `k·LN2_HI` is exact for |k| < 2^11 (its low 32 bits are 0).
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);

impl Emitter {
    /// `a·b + c`, fused.
    fn fma64(&mut self, a: Word, b: Word, c: Word) -> R<Word> {
        self.glsl(F64, FMA, &[a, b, c])
    }

    /// e^x: x = k·ln2 + r with |r| ≤ ln2/2, e^r by its Taylor series to degree 13
    /// (error below 1e-17), then scaled by 2^k. Beyond ±745 it is ∞ or 0.
    pub(super) fn exp64(&mut self, x: Word) -> R<Word> {
        let ft = self.ty(F64);
        let it = self.ty(ElemType::I32);
        // Keep k inside i32 and the scaling finite-or-infinite as it should be.
        let lo = self.fc(F64, -1100.0);
        let hi = self.fc(F64, 1100.0);
        let xc = self.binop(BinOp::Max, F64, x, lo)?;
        let xc = self.binop(BinOp::Min, F64, xc, hi)?;
        let inv = self.fc(F64, std::f64::consts::LOG2_E);
        let t = self.binop(BinOp::Mul, F64, xc, inv)?;
        let k = self.glsl(F64, ROUND_EVEN, &[t])?;
        let nk = self.b.f_negate(ft, None, k).map_err(be)?;
        let hi_c = self.fc(F64, LN2_HI);
        let lo_c = self.fc(F64, LN2_LO);
        let r = self.fma64(nk, hi_c, xc)?;
        let r = self.fma64(nk, lo_c, r)?;
        // Horner: Σ r^i / i!, i = 0…13.
        let mut fact = [1.0f64; 14];
        for i in 1..14 {
            fact[i] = fact[i - 1] * i as f64;
        }
        let mut p = self.fc(F64, 1.0 / fact[13]);
        for i in (0..13).rev() {
            let c = self.fc(F64, 1.0 / fact[i]);
            p = self.fma64(p, r, c)?;
        }
        // 2^k as 2^(k-1)·2, so that Ldexp never needs an exponent above 1023; beyond
        // the range of f64 the result is ∞ or 0 outright.
        let one = self.fc(F64, 1.0);
        let k1 = self.binop(BinOp::Sub, F64, k, one)?;
        let ki = self.b.convert_f_to_s(it, None, k1).map_err(be)?;
        let half_up = self.glsl(F64, LDEXP, &[p, ki])?;
        let r = self.binop(BinOp::Add, F64, half_up, half_up)?;
        let bt = self.bool_t;
        let over = self.fc(F64, 709.782_712_893_384);
        let under = self.fc(F64, -745.2);
        let big = self.b.f_ord_greater_than(bt, None, x, over).map_err(be)?;
        let small = self.b.f_ord_less_than(bt, None, x, under).map_err(be)?;
        let inf = self.fc(F64, f64::INFINITY);
        let zero = self.fc(F64, 0.0);
        let r = self.b.select(ft, None, big, inf, r).map_err(be)?;
        self.b.select(ft, None, small, zero, r).map_err(be)
    }

    /// ln x for x > 0: x = m·2^e with m in [√½, √2), then
    /// ln m = 2·atanh(s) = 2(s + s³/3 + … + s²³/23) with s = (m-1)/(m+1), |s| < 0.172.
    pub(super) fn log64(&mut self, x: Word) -> R<Word> {
        let u64t = self.b.type_int(64, 0);
        self.uses_i64 = true;
        let ft = self.ty(F64);
        let bt = self.bool_t;
        // Subnormals: scale by 2^54 first.
        let tiny = self.fc(F64, f64::MIN_POSITIVE);
        let sub = self.b.f_ord_less_than(bt, None, x, tiny).map_err(be)?;
        let scale = self.fc(F64, 2f64.powi(54));
        let xs = self.binop(BinOp::Mul, F64, x, scale)?;
        let x = self.b.select(ft, None, sub, xs, x).map_err(be)?;
        let z54 = self.fc(F64, 54.0);
        let z0 = self.fc(F64, 0.0);
        let adj = self.b.select(ft, None, sub, z54, z0).map_err(be)?;
        let bits = self.b.bitcast(u64t, None, x).map_err(be)?;
        let c52 = self.constant(u64t, 52, true);
        let ebits = self
            .b
            .shift_right_logical(u64t, None, bits, c52)
            .map_err(be)?;
        let mask_e = self.constant(u64t, 0x7ff, true);
        let ebits = self.b.bitwise_and(u64t, None, ebits, mask_e).map_err(be)?;
        let mant_mask = self.constant(u64t, (1u64 << 52) - 1, true);
        let one_bits = self.constant(u64t, 1.0f64.to_bits(), true);
        let mb = self
            .b
            .bitwise_and(u64t, None, bits, mant_mask)
            .map_err(be)?;
        let mb = self.b.bitwise_or(u64t, None, mb, one_bits).map_err(be)?;
        let m = self.b.bitcast(ft, None, mb).map_err(be)?;
        let ef = self.b.convert_u_to_f(ft, None, ebits).map_err(be)?;
        let bias = self.fc(F64, 1023.0);
        let e = self.binop(BinOp::Sub, F64, ef, bias)?;
        let e = self.binop(BinOp::Sub, F64, e, adj)?;
        // m in [1, 2): halve it above √2.
        let sqrt2 = self.fc(F64, std::f64::consts::SQRT_2);
        let big = self.b.f_ord_greater_than(bt, None, m, sqrt2).map_err(be)?;
        let half = self.fc(F64, 0.5);
        let mh = self.binop(BinOp::Mul, F64, m, half)?;
        let m = self.b.select(ft, None, big, mh, m).map_err(be)?;
        let one = self.fc(F64, 1.0);
        let e1 = self.binop(BinOp::Add, F64, e, one)?;
        let e = self.b.select(ft, None, big, e1, e).map_err(be)?;
        let num = self.binop(BinOp::Sub, F64, m, one)?;
        let den = self.binop(BinOp::Add, F64, m, one)?;
        let s = self.binop(BinOp::Div, F64, num, den)?;
        // Refine the quotient once (Vulkan lets OpFDiv err by more than an ulp).
        let ns = self.b.f_negate(ft, None, s).map_err(be)?;
        let res = self.fma64(ns, den, num)?;
        let c = self.binop(BinOp::Div, F64, res, den)?;
        let s = self.binop(BinOp::Add, F64, s, c)?;
        for id in [ns, res, c, s] {
            self.b
                .decorate(id, rspirv::spirv::Decoration::NoContraction, []);
        }
        let z = self.binop(BinOp::Mul, F64, s, s)?;
        let mut p = self.fc(F64, 1.0 / 23.0);
        for k in (0..11).rev() {
            let c = self.fc(F64, 1.0 / (2 * k + 1) as f64);
            p = self.fma64(p, z, c)?;
        }
        let two_s = self.binop(BinOp::Add, F64, s, s)?;
        let lnm = self.binop(BinOp::Mul, F64, two_s, p)?;
        let lo_c = self.fc(F64, LN2_LO);
        let hi_c = self.fc(F64, LN2_HI);
        let t = self.fma64(e, lo_c, lnm)?;
        self.fma64(e, hi_c, t)
    }
}
