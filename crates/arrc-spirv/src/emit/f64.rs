//! `exp`, `log` and the circle functions in f64. Vulkan's GLSL.std.450 has them for
//! 16- and 32-bit floats only, so f64 programs get these: range reduction (by powers
//! of two for exp and log, by π/2 in three parts for sin and cos (by 2/π's bits
//! beyond 1.5e6 radians), by argument halving for atan) and polynomials accurate to a
//! few ulps. Also the correctly rounded quotient (`div_refined`, f64 and f32), which
//! shares their error-free products (Dekker's, no fused multiply-add needed).

use super::{be, Emitter, R};
use arrc_ir::scalar::BinOp;
use arrc_ir::ElemType;
use rspirv::spirv::Word;

const F64: ElemType = ElemType::F64;
// GLSL.std.450 instruction numbers.
const ROUND_EVEN: u32 = 2;
const FLOOR: u32 = 8;
const LDEXP: u32 = 53;
const FMA: u32 = 50;
const FABS: u32 = 4;
const FSIGN: u32 = 6;
const SQRT: u32 = 31;

/// π/2 in three parts of 33 bits each (fdlibm's pio2_1, pio2_2, pio2_3).
const PIO2: [f64; 3] = [
    1.570_796_326_734_125_6,
    6.077_100_506_303_966e-11,
    2.022_266_248_711_166_5e-21,
];
/// fdlibm's minimax coefficients of sin r = r + r³·S(r²) and
/// cos r = 1 - r²/2 + r⁴·C(r²) on |r| ≤ π/4, highest degree first.
const SIN_C: [f64; 6] = [
    1.589_690_995_211_55e-10,
    -2.505_076_025_340_686_3e-8,
    2.755_731_370_707_006_8e-6,
    -1.984_126_982_985_795e-4,
    8.333_333_333_322_49e-3,
    -1.666_666_666_666_663_2e-1,
];
const COS_C: [f64; 6] = [
    -1.135_964_755_778_819_5e-11,
    2.087_572_321_298_175e-9,
    -2.755_731_435_139_066_3e-7,
    2.480_158_728_947_673e-5,
    -1.388_888_888_887_411e-3,
    4.166_666_666_666_66e-2,
];

/// ln 2 split so that `k·LN2_HI` is exact for |k| < 2^11 (its low 32 bits are 0).
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);

impl Emitter {
    /// `a·b + c`, fused where the device fuses it (Vulkan does not require it), and
    /// kept as written (`NoContraction`): Mesa's compiler otherwise rewrites such
    /// steps (lavapipe's e^x erred by 22 ulps at 700, as if the two parts of ln 2
    /// in its reduction were one).
    fn fma64(&mut self, a: Word, b: Word, c: Word) -> R<Word> {
        let r = self.glsl(F64, FMA, &[a, b, c])?;
        self.b
            .decorate(r, rspirv::spirv::Decoration::NoContraction, []);
        Ok(r)
    }

    /// e^x: x = k·ln2 + r with |r| ≤ ln2/2, e^r by its Taylor series to degree 13
    /// (error below 1e-17), then scaled by 2^k. Beyond ±745 it is ∞ or 0.
    pub(super) fn exp64(&mut self, x: Word) -> R<Word> {
        self.exp64_parts(x, None)
    }

    /// e^(x + x_lo), `x_lo` a correction below an ulp of `x` (the low part of a
    /// double-double exponent, as `pow64` makes), added to the reduced argument.
    fn exp64_parts(&mut self, x: Word, x_lo: Option<Word>) -> R<Word> {
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
        let r = match x_lo {
            Some(l) => self.exact_op(BinOp::Add, r, l)?,
            None => r,
        };
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
        // 2^k in two steps of about k/2 each, so that neither Ldexp needs an exponent
        // outside the normal range (drivers scale by a normal power of two): the first
        // is exact, the second rounds once, into the subnormals too (`*¯740`); beyond
        // the range of f64 the result is ∞ or 0 outright.
        let half = self.fc(F64, 0.5);
        let kh = self.binop(BinOp::Mul, F64, k, half)?;
        let ka = self.glsl(F64, FLOOR, &[kh])?;
        let kb = self.binop(BinOp::Sub, F64, k, ka)?;
        let kai = self.b.convert_f_to_s(it, None, ka).map_err(be)?;
        let kbi = self.b.convert_f_to_s(it, None, kb).map_err(be)?;
        let scaled = self.glsl(F64, LDEXP, &[p, kai])?;
        let r = self.glsl(F64, LDEXP, &[scaled, kbi])?;
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

    /// ln x for x > 0 (see [`Self::log64_parts`]).
    pub(super) fn log64(&mut self, x: Word) -> R<Word> {
        Ok(self.log64_parts(x)?.0)
    }

    /// ln x for x > 0 as a double-double `(hi, lo)`, `hi` the sum rounded: x = m·2^e
    /// with m in [√½, √2), then ln m = 2·atanh(s) = 2(s + s³/3 + … + s²³/23) with
    /// s = (m-1)/(m+1), |s| < 0.172. The quotient is kept as two parts (the first
    /// and its correction, from the exact residual against m+1 as two parts), and
    /// `e·ln2_hi + 2s` is summed exactly, so that `lo` carries what rounding `hi`
    /// leaves out: `pow64` multiplies the logarithm by exponents up to 1075/ln|x|,
    /// which would scale an ulp of error in `hi` by as much.
    pub(super) fn log64_parts(&mut self, x: Word) -> R<(Word, Word)> {
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
        // m-1 is exact (m in [½, 2]); m+1 is rounded, its error kept (TwoSum).
        let num = self.exact_op(BinOp::Sub, m, one)?;
        let den = self.exact_op(BinOp::Add, m, one)?;
        let den_lo = self.two_sum_error(m, one, den)?;
        let s = self.exact_op(BinOp::Div, num, den)?;
        // The residual num - s·(den + den_lo), then its quotient: s's correction
        // (Vulkan lets OpFDiv err by more than an ulp). s·den exactly as two parts
        // (`two_prod`), whose first part is within a few ulps of num.
        let (p, p_err) = self.two_prod(s, den)?;
        let res = self.exact_op(BinOp::Sub, num, p)?;
        let res = self.exact_op(BinOp::Sub, res, p_err)?;
        let ns = self.b.f_negate(ft, None, s).map_err(be)?;
        let res = self.fma64(ns, den_lo, res)?;
        let s_lo = self.exact_op(BinOp::Div, res, den)?;
        // ln m = 2(s + s_lo) + 2s³/3 + 2s·z²·q(z), z = s², q(z) = 1/5 + z/7 + … +
        // z⁹/23. 2s³/3 is about a hundredth of 2s: it is taken as a double-double
        // (s³ from Dekker's products, then a third of it with its remainder), so
        // that what is left in plain f64 errs by under 2^-60 of ln m (`pow64`
        // multiplies ln a by up to 1075/|ln a|).
        let (zh, zl) = self.dd_mul((s, s_lo), (s, s_lo))?;
        let (wh, wl) = self.dd_mul((s, s_lo), (zh, zl))?;
        let w2 = self.exact_op(BinOp::Add, wh, wh)?;
        let three = self.fc(F64, 3.0);
        let bh = self.exact_op(BinOp::Div, w2, three)?;
        let (p3, p3_err) = self.two_prod(bh, three)?;
        let rem = self.exact_op(BinOp::Sub, w2, p3)?;
        let rem = self.exact_op(BinOp::Sub, rem, p3_err)?;
        let wl2 = self.exact_op(BinOp::Add, wl, wl)?;
        let rem = self.exact_op(BinOp::Add, rem, wl2)?;
        let bl = self.exact_op(BinOp::Div, rem, three)?;
        let mut q = self.fc(F64, 1.0 / 23.0);
        for k in (2..11).rev() {
            let c = self.fc(F64, 1.0 / (2 * k + 1) as f64);
            q = self.fma64(q, zh, c)?;
        }
        let two_s = self.exact_op(BinOp::Add, s, s)?;
        let two_lo = self.exact_op(BinOp::Add, s_lo, s_lo)?;
        let c = self.exact_op(BinOp::Mul, two_s, zh)?;
        let c = self.exact_op(BinOp::Mul, c, zh)?;
        let c = self.exact_op(BinOp::Mul, c, q)?;
        // e·ln2_hi is exact (|e| < 2^11); it, 2s and 2s³/3's first part summed
        // exactly (TwoSum), then the small terms, then (hi, lo) by Fast2Sum
        // (|e·ln2 + 2s| ≥ 0.35 where e ≠ 0).
        let hi_c = self.fc(F64, LN2_HI);
        let lo_c = self.fc(F64, LN2_LO);
        let a = self.exact_op(BinOp::Mul, e, hi_c)?;
        let s1 = self.exact_op(BinOp::Add, a, two_s)?;
        let err1 = self.two_sum_error(a, two_s, s1)?;
        let s2 = self.exact_op(BinOp::Add, s1, bh)?;
        let err2 = self.two_sum_error(s1, bh, s2)?;
        let elo = self.exact_op(BinOp::Mul, e, lo_c)?;
        let mut small = err1;
        for t in [err2, two_lo, bl, c, elo] {
            small = self.exact_op(BinOp::Add, small, t)?;
        }
        let hi = self.exact_op(BinOp::Add, s2, small)?;
        let back = self.exact_op(BinOp::Sub, hi, s2)?;
        let lo = self.exact_op(BinOp::Sub, small, back)?;
        Ok((hi, lo))
    }

    /// `a op b` in f64, never fused with a neighbouring operation by the driver
    /// (error-free transformations rely on each rounding).
    fn exact_op(&mut self, op: BinOp, a: Word, b: Word) -> R<Word> {
        self.exact_op_t(F64, op, a, b)
    }

    /// [`Self::exact_op`] in float type `t`.
    fn exact_op_t(&mut self, t: ElemType, op: BinOp, a: Word, b: Word) -> R<Word> {
        let r = self.binop(op, t, a, b)?;
        self.b
            .decorate(r, rspirv::spirv::Decoration::NoContraction, []);
        Ok(r)
    }

    /// `a·b` as `(p, err)` with `p` the rounded product and `a·b = p + err` exactly
    /// (Dekker's product of Veltkamp's halves). Not by a fused multiply-add:
    /// Vulkan lets `Fma` round its product (its precision is that of a multiply
    /// then an add), and lavapipe does. |a| and |b| below 2^996.
    fn two_prod(&mut self, a: Word, b: Word) -> R<(Word, Word)> {
        self.two_prod_t(F64, a, b)
    }

    /// [`Self::two_prod`] in float type `t` (f32: halves of 12 bits, |a| and |b|
    /// below 2^114).
    fn two_prod_t(&mut self, t: ElemType, a: Word, b: Word) -> R<(Word, Word)> {
        let split = if t == F64 {
            134_217_729.0 // 2^27 + 1
        } else {
            4097.0 // 2^12 + 1
        };
        let halves = |e: &mut Self, x: Word| -> R<(Word, Word)> {
            let split = e.fc(t, split);
            let c = e.exact_op_t(t, BinOp::Mul, split, x)?;
            let d = e.exact_op_t(t, BinOp::Sub, c, x)?;
            let hi = e.exact_op_t(t, BinOp::Sub, c, d)?;
            let lo = e.exact_op_t(t, BinOp::Sub, x, hi)?;
            Ok((hi, lo))
        };
        let p = self.exact_op_t(t, BinOp::Mul, a, b)?;
        let (ah, al) = halves(self, a)?;
        let (bh, bl) = halves(self, b)?;
        let hh = self.exact_op_t(t, BinOp::Mul, ah, bh)?;
        let err = self.exact_op_t(t, BinOp::Sub, hh, p)?;
        let hl = self.exact_op_t(t, BinOp::Mul, ah, bl)?;
        let err = self.exact_op_t(t, BinOp::Add, err, hl)?;
        let lh = self.exact_op_t(t, BinOp::Mul, al, bh)?;
        let err = self.exact_op_t(t, BinOp::Add, err, lh)?;
        let ll = self.exact_op_t(t, BinOp::Mul, al, bl)?;
        let err = self.exact_op_t(t, BinOp::Add, err, ll)?;
        Ok((p, err))
    }

    /// `a÷b` in float type `t` as `(q0, q)`: `q0` the device's quotient, `q`
    /// refined once from its exact residual (Vulkan lets OpFDiv err by 2.5 ulp;
    /// NVIDIA's 301÷7 is not 43), correctly rounded where the tests reach (bit for
    /// bit against IEEE, subnormal quotients too). The residual `a − q·b` is
    /// Dekker's exact product ([`Self::exact_residual`]; a multiply-add is exact
    /// only where the driver fuses it, and lavapipe does not), whose parts must
    /// neither overflow nor fall below the subnormals ([`DivRange`] gives the
    /// bounds): where either operand is tiny (and both fit), both are multiplied
    /// up first, and where the divisor is huge, down (exact, or a quotient that
    /// rounds to 0 anyway: the same quotient). A huge quotient is refined scaled
    /// down and a tiny one scaled up (so that the refinement's step is no
    /// subnormal: it rounded an f64 quotient of 2^-1021 to a tie), then scaled
    /// back; a subnormal quotient rounds again there, and where that lands on a
    /// tie the true quotient's side of it decides. `a` below the type's largest
    /// value over 4 (the caller scales).
    pub(super) fn div_refined(&mut self, t: ElemType, a: Word, b: Word) -> R<(Word, Word)> {
        let g = DivRange::of(t);
        let bt = self.bool_t;
        let one = self.fc(t, 1.0);
        let p2 = |e: &mut Self, k: i32| e.fc(t, 2f64.powi(k));
        let (aa, ab) = (self.glsl(t, FABS, &[a])?, self.glsl(t, FABS, &[b])?);
        let (tiny, fit, huge) = (p2(self, g.tiny), p2(self, g.fit), p2(self, g.huge));
        let a_tiny = self.b.f_ord_less_than(bt, None, aa, tiny).map_err(be)?;
        let b_tiny = self.b.f_ord_less_than(bt, None, ab, tiny).map_err(be)?;
        let a_fit = self.b.f_ord_less_than(bt, None, aa, fit).map_err(be)?;
        let b_fit = self.b.f_ord_less_than(bt, None, ab, fit).map_err(be)?;
        let b_huge = self
            .b
            .f_ord_greater_than_equal(bt, None, ab, huge)
            .map_err(be)?;
        let either = self.or(a_tiny, b_tiny)?;
        let both = self.and(a_fit, b_fit)?;
        let small = self.and(either, both)?;
        let (up, down) = (p2(self, g.up), p2(self, -g.down));
        let k = self.sel(t, b_huge, down, one)?;
        let k = self.sel(t, small, up, k)?;
        let a = self.exact_op_t(t, BinOp::Mul, a, k)?;
        let b = self.exact_op_t(t, BinOp::Mul, b, k)?;
        let q0 = self.exact_op_t(t, BinOp::Div, a, b)?;
        // The quotient's own scale `s`, undone by `back`.
        let aq = self.glsl(t, FABS, &[q0])?;
        let q_huge = self
            .b
            .f_ord_greater_than_equal(bt, None, aq, huge)
            .map_err(be)?;
        let tiny_q = p2(self, g.tiny_q);
        let q_tiny = self.b.f_ord_less_than(bt, None, aq, tiny_q).map_err(be)?;
        let (q_up, q_down) = (p2(self, g.q_up), p2(self, -g.q_up));
        let (h_up, h_down) = (p2(self, g.down), p2(self, -g.down));
        let s = self.sel(t, q_tiny, q_up, one)?;
        let s = self.sel(t, q_huge, h_down, s)?;
        let back = self.sel(t, q_tiny, q_down, one)?;
        let back = self.sel(t, q_huge, h_up, back)?;
        let a_r = self.exact_op_t(t, BinOp::Mul, a, s)?;
        let q_r = self.exact_op_t(t, BinOp::Mul, q0, s)?;
        let ft = self.ty(t);
        let nq = self.b.f_negate(ft, None, q_r).map_err(be)?;
        let fused = self.glsl(t, FMA, &[nq, b, a_r])?;
        let r = self.exact_residual(t, a_r, q_r, b, fused)?;
        let c = self.exact_op_t(t, BinOp::Div, r, b)?;
        let q1 = self.exact_op_t(t, BinOp::Add, q_r, c)?;
        let q = self.exact_op_t(t, BinOp::Mul, q1, back)?;
        // Scaled back to a subnormal, `q1` may have been a tie between `q` and
        // the other neighbour (`q1 + m`, scaled): the true quotient's side of
        // `q1` (the sign of `(q_r − q1) + c`) picks.
        let bk = self.exact_op_t(t, BinOp::Mul, q, s)?;
        let m = self.exact_op_t(t, BinOp::Sub, q1, bk)?;
        let am = self.glsl(t, FABS, &[m])?;
        let half = p2(self, g.half_tie);
        let tie = self.b.f_ord_equal(bt, None, am, half).map_err(be)?;
        let d = self.exact_op_t(t, BinOp::Sub, q_r, q1)?;
        let d = self.exact_op_t(t, BinOp::Add, d, c)?;
        let zero = self.fc(t, 0.0);
        let want_above = self.b.f_ord_greater_than(bt, None, d, zero).map_err(be)?;
        let want_below = self.b.f_ord_less_than(bt, None, d, zero).map_err(be)?;
        let q_above = self.b.f_ord_less_than(bt, None, m, zero).map_err(be)?;
        let q_below = self.b.f_ord_greater_than(bt, None, m, zero).map_err(be)?;
        let up_wrong = self.and(want_above, q_below)?;
        let down_wrong = self.and(want_below, q_above)?;
        let wrong = self.or(up_wrong, down_wrong)?;
        let flip = self.and(tie, wrong)?;
        let other = self.exact_op_t(t, BinOp::Add, q1, m)?;
        let other = self.exact_op_t(t, BinOp::Mul, other, back)?;
        let q = self.sel(t, flip, other, q)?;
        Ok((q0, q))
    }

    /// `a - q·b` exactly in float type `t`, for `q` within a few ulps of `a÷b`,
    /// with no fused multiply-add (lavapipe's `Fma` rounds its product, and `÷`
    /// erred by an ulp): `q·b = p + e` by Dekker's product, `a - p` is exact (`p`
    /// is within a factor of 2 of `a`), and so is `(a - p) - e` (the residual of a
    /// faithful quotient is representable). Where the split is not exact (`q` or
    /// `b` too large, `a` so small that the product's low bits fall below the
    /// subnormals: [`DivRange::exact`]) or an operand is not finite, the
    /// multiply-add's residual `fused` is kept.
    fn exact_residual(&mut self, t: ElemType, a: Word, q: Word, b: Word, fused: Word) -> R<Word> {
        let (p, e) = self.two_prod_t(t, q, b)?;
        let d = self.exact_op_t(t, BinOp::Sub, a, p)?;
        let r = self.exact_op_t(t, BinOp::Sub, d, e)?;
        let [hi, lo] = DivRange::of(t).exact;
        let (hi, lo) = (self.fc(t, 2f64.powi(hi)), self.fc(t, 2f64.powi(lo)));
        let mut ok = None;
        for (x, bound, below) in [(q, hi, true), (b, hi, true), (a, lo, false)] {
            let ax = self.glsl(t, FABS, &[x])?;
            let c = if below {
                self.b.f_ord_less_than(self.bool_t, None, ax, bound)
            } else {
                self.b.f_ord_greater_than(self.bool_t, None, ax, bound)
            }
            .map_err(be)?;
            ok = Some(match ok {
                None => c,
                Some(o) => self.and(o, c)?,
            });
        }
        self.sel(t, ok.expect("three conditions"), r, fused)
    }

    /// The product of two double-doubles `(hi, lo)`, as one: Dekker's product of
    /// the high parts, and the cross terms (the low parts' product is below an ulp
    /// of them).
    fn dd_mul(&mut self, (ah, al): (Word, Word), (bh, bl): (Word, Word)) -> R<(Word, Word)> {
        let (h, l) = self.two_prod(ah, bh)?;
        let c1 = self.exact_op(BinOp::Mul, ah, bl)?;
        let c2 = self.exact_op(BinOp::Mul, al, bh)?;
        let c = self.exact_op(BinOp::Add, c1, c2)?;
        Ok((h, self.exact_op(BinOp::Add, l, c)?))
    }

    /// The rounding error of `sum = a + b` (Knuth's TwoSum: `a + b = sum + error`
    /// exactly, whichever is larger).
    fn two_sum_error(&mut self, a: Word, b: Word, sum: Word) -> R<Word> {
        let bb = self.exact_op(BinOp::Sub, sum, a)?;
        let ab = self.exact_op(BinOp::Sub, sum, bb)?;
        let da = self.exact_op(BinOp::Sub, a, ab)?;
        let db = self.exact_op(BinOp::Sub, b, bb)?;
        self.exact_op(BinOp::Add, da, db)
    }

    /// |a|^b for a > 0 to about an ulp: e^(b·ln a) with ln a as a double-double
    /// ([`Self::log64_parts`]) and b·ln a too (its product's rounding error by a
    /// fused step), the low part added to exp's reduced argument. (e^(b·ln a)
    /// from one f64 logarithm erred by b·ln a ulps: `1.001*1000` by 120.)
    pub(super) fn pow64(&mut self, a: Word, b: Word) -> R<Word> {
        let (hi, lo) = self.log64_parts(a)?;
        // |b| past 2^996 would overflow the product's halves (a NaN); past ±1100
        // e^(b·ln a) is ∞ or 0 whatever its low part, which is then 0.
        let ft = self.ty(F64);
        let bt = self.bool_t;
        let big = self.fc(F64, 1e200);
        let zero = self.fc(F64, 0.0);
        let ab = self.glsl(F64, FABS, &[b])?;
        let huge = self.b.f_ord_greater_than(bt, None, ab, big).map_err(be)?;
        let b_ = self.b.select(ft, None, huge, zero, b).map_err(be)?;
        let (yh, err) = self.two_prod(b_, hi)?;
        let blo = self.exact_op(BinOp::Mul, b_, lo)?;
        let yl = self.exact_op(BinOp::Add, err, blo)?;
        let plain = self.exact_op(BinOp::Mul, b, hi)?;
        let yh = self.b.select(ft, None, huge, plain, yh).map_err(be)?;
        let yl = self.b.select(ft, None, huge, zero, yl).map_err(be)?;
        self.exp64_parts(yh, Some(yl))
    }

    /// Horner's rule with fused steps: coefficients highest degree first.
    fn poly64(&mut self, x: Word, coefs: &[f64]) -> R<Word> {
        let mut acc = self.fc(F64, coefs[0]);
        for &k in &coefs[1..] {
            let c = self.fc(F64, k);
            acc = self.fma64(acc, x, c)?;
        }
        Ok(acc)
    }

    /// sin and cos: `y = q·π/2 + r` (π/2 in three parts, fused steps), fdlibm's
    /// polynomials on |r| ≤ π/4, the quadrant `q mod 4` choosing signs and roles.
    /// Each part has 33 significant bits, so `q·part` is exact while q < 2^20 even
    /// where the device does not fuse `Fma` (lavapipe): beyond |y| = 1.5e6 the
    /// reduction is [`Self::reduce_quadrants`]'s.
    pub(super) fn sin_cos64(&mut self, y: Word) -> R<(Word, Word)> {
        let ft = self.ty(F64);
        let two_over_pi = self.fc(F64, std::f64::consts::FRAC_2_PI);
        let t = self.binop(BinOp::Mul, F64, y, two_over_pi)?;
        let q = self.glsl(F64, ROUND_EVEN, &[t])?;
        let nq = self.b.f_negate(ft, None, q).map_err(be)?;
        let mut r = y;
        for part in PIO2 {
            let p = self.fc(F64, part);
            r = self.fma64(nq, p, r)?;
        }
        // Beyond 1.5e6 radians the three parts are not enough: the integer reduction.
        let it = self.ty(ElemType::I32);
        let qi = self.b.convert_f_to_s(it, None, q).map_err(be)?;
        let (r, qi) = self.reduce_beyond(y, F64, (r, qi), 1_500_000.0)?;
        let r2 = self.binop(BinOp::Mul, F64, r, r)?;
        let sp = self.poly64(r2, &SIN_C)?;
        let r3 = self.binop(BinOp::Mul, F64, r2, r)?;
        let sn = self.fma64(r3, sp, r)?;
        let cp = self.poly64(r2, &COS_C)?;
        let r4 = self.binop(BinOp::Mul, F64, r2, r2)?;
        let mhalf = self.fc(F64, -0.5);
        let one = self.fc(F64, 1.0);
        let c0 = self.fma64(mhalf, r2, one)?;
        let cs = self.fma64(r4, cp, c0)?;
        let (s, c) = self.by_quadrant(F64, qi, (sn, cs))?;
        let bt = self.bool_t;
        // An infinity has no sine: NaN, a DOMAIN ERROR.
        let inf = self.b.is_inf(bt, None, y).map_err(be)?;
        let nan = self.fc(F64, f64::NAN);
        let s = self.b.select(ft, None, inf, nan, s).map_err(be)?;
        let c = self.b.select(ft, None, inf, nan, c).map_err(be)?;
        Ok((s, c))
    }

    /// atan: |x| > 1 through π/2 - atan(1/|x|); two halvings
    /// `a → a/(1+√(1+a²))` bring the argument under tan(π/16) ≈ 0.2, where the
    /// series to degree 41 is exact to double precision.
    fn atan64(&mut self, x: Word) -> R<Word> {
        let ft = self.ty(F64);
        let bt = self.bool_t;
        let one = self.fc(F64, 1.0);
        let a = self.glsl(F64, FABS, &[x])?;
        let big = self.b.f_ord_greater_than(bt, None, a, one).map_err(be)?;
        let inv = self.binop(BinOp::Div, F64, one, a)?;
        let mut a = self.b.select(ft, None, big, inv, a).map_err(be)?;
        for _ in 0..2 {
            let a2 = self.binop(BinOp::Mul, F64, a, a)?;
            let s = self.binop(BinOp::Add, F64, one, a2)?;
            let s = self.glsl(F64, SQRT, &[s])?;
            let d = self.binop(BinOp::Add, F64, one, s)?;
            a = self.binop(BinOp::Div, F64, a, d)?;
        }
        let z = self.binop(BinOp::Mul, F64, a, a)?;
        let coefs: Vec<f64> = (0..21)
            .rev()
            .map(|k| {
                let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
                sign / (2 * k + 1) as f64
            })
            .collect();
        let p = self.poly64(z, &coefs)?;
        let t = self.binop(BinOp::Mul, F64, a, p)?;
        let four = self.fc(F64, 4.0);
        let t = self.binop(BinOp::Mul, F64, four, t)?;
        let hp = self.fc(F64, std::f64::consts::FRAC_PI_2);
        let comp = self.binop(BinOp::Sub, F64, hp, t)?;
        let t = self.b.select(ft, None, big, comp, t).map_err(be)?;
        let zero = self.fc(F64, 0.0);
        let neg = self.b.f_ord_less_than(bt, None, x, zero).map_err(be)?;
        let nt = self.b.f_negate(ft, None, t).map_err(be)?;
        self.b.select(ft, None, neg, nt, t).map_err(be)
    }

    /// An odd series `x·Σ c_k x^{2k}` for small |x|, else `general`, by |x| < `lim`.
    fn small_odd64(&mut self, x: Word, lim: f64, coefs: &[f64], general: Word) -> R<Word> {
        let ft = self.ty(F64);
        let z = self.binop(BinOp::Mul, F64, x, x)?;
        let p = self.poly64(z, coefs)?;
        let s = self.binop(BinOp::Mul, F64, x, p)?;
        let a = self.glsl(F64, FABS, &[x])?;
        let l = self.fc(F64, lim);
        let small = self
            .b
            .f_ord_less_than(self.bool_t, None, a, l)
            .map_err(be)?;
        self.b.select(ft, None, small, s, general).map_err(be)
    }

    /// `k○y` in f64 (`None` for a `k` outside ¯7…7). Out-of-domain arguments give NaN.
    pub(super) fn circle64_fn(&mut self, k: i64, y: Word) -> R<Option<Word>> {
        let ft = self.ty(F64);
        let bt = self.bool_t;
        let one = self.fc(F64, 1.0);
        let half = self.fc(F64, 0.5);
        let sqrt = |e: &mut Self, v: Word| e.glsl(F64, SQRT, &[v]);
        let fact = |n: u32| (1..=n).map(f64::from).product::<f64>();
        Ok(Some(match k {
            0 => {
                // √((1-y)(1+y)): no cancellation near |y| = 1.
                let a = self.binop(BinOp::Sub, F64, one, y)?;
                let b = self.binop(BinOp::Add, F64, one, y)?;
                let p = self.binop(BinOp::Mul, F64, a, b)?;
                sqrt(self, p)?
            }
            1..=3 => {
                let (s, c) = self.sin_cos64(y)?;
                match k {
                    1 => s,
                    2 => c,
                    _ => self.binop(BinOp::Div, F64, s, c)?,
                }
            }
            4 => {
                let y2 = self.binop(BinOp::Mul, F64, y, y)?;
                let d = self.binop(BinOp::Add, F64, one, y2)?;
                sqrt(self, d)?
            }
            5..=7 => {
                let ep = self.exp64(y)?;
                let ny = self.b.f_negate(ft, None, y).map_err(be)?;
                let en = self.exp64(ny)?;
                let sum = self.binop(BinOp::Add, F64, ep, en)?;
                let cosh = self.binop(BinOp::Mul, F64, half, sum)?;
                // sinh: the series x + x³/3! + … + x²³/23! below 1 (no cancellation).
                let diff = self.binop(BinOp::Sub, F64, ep, en)?;
                let sinh_g = self.binop(BinOp::Mul, F64, half, diff)?;
                let sc: Vec<f64> = (0..12).rev().map(|k| 1.0 / fact(2 * k + 1)).collect();
                let sinh = self.small_odd64(y, 1.0, &sc, sinh_g)?;
                match k {
                    5 => sinh,
                    6 => cosh,
                    _ => {
                        // sinh/cosh, and ±1 once cosh overflows.
                        let t = self.binop(BinOp::Div, F64, sinh, cosh)?;
                        let a = self.glsl(F64, FABS, &[y])?;
                        let l = self.fc(F64, 40.0);
                        let far = self.b.f_ord_less_than(bt, None, l, a).map_err(be)?;
                        let sg = self.glsl(F64, FSIGN, &[y])?;
                        self.b.select(ft, None, far, sg, t).map_err(be)?
                    }
                }
            }
            -1 => {
                // atan(y / √((1-y)(1+y))).
                let a = self.binop(BinOp::Sub, F64, one, y)?;
                let b = self.binop(BinOp::Add, F64, one, y)?;
                let p = self.binop(BinOp::Mul, F64, a, b)?;
                let d = sqrt(self, p)?;
                let q = self.binop(BinOp::Div, F64, y, d)?;
                let r = self.atan64(q)?;
                // |y| > 1 is outside the domain (√ of a negative: NaN).
                let zero = self.fc(F64, 0.0);
                let nan_in = self.b.f_ord_less_than(bt, None, p, zero).map_err(be)?;
                let nan = self.fc(F64, f64::NAN);
                self.b.select(ft, None, nan_in, nan, r).map_err(be)?
            }
            -2 => {
                // 2·atan(√((1-y)/(1+y))).
                let a = self.binop(BinOp::Sub, F64, one, y)?;
                let b = self.binop(BinOp::Add, F64, one, y)?;
                let q = self.binop(BinOp::Div, F64, a, b)?;
                let s = sqrt(self, q)?;
                let t = self.atan64(s)?;
                let r = self.binop(BinOp::Add, F64, t, t)?;
                let ay = self.glsl(F64, FABS, &[y])?;
                let out = self.b.f_ord_less_than(bt, None, one, ay).map_err(be)?;
                let nan = self.fc(F64, f64::NAN);
                self.b.select(ft, None, out, nan, r).map_err(be)?
            }
            -3 => self.atan64(y)?,
            -4 => {
                // (y+1)×√((y-1)÷(y+1)), for |y| ≥ 1 (else NaN).
                let yp = self.binop(BinOp::Add, F64, y, one)?;
                let ym = self.binop(BinOp::Sub, F64, y, one)?;
                let q = self.binop(BinOp::Div, F64, ym, yp)?;
                let s = sqrt(self, q)?;
                let r = self.binop(BinOp::Mul, F64, yp, s)?;
                let ay = self.glsl(F64, FABS, &[y])?;
                let lt1 = self.b.f_ord_less_than(bt, None, ay, one).map_err(be)?;
                let nan = self.fc(F64, f64::NAN);
                self.b.select(ft, None, lt1, nan, r).map_err(be)?
            }
            -5 => {
                // sign(y)·ln(|y| + √(y²+1)); the series below 1/8.
                let a = self.glsl(F64, FABS, &[y])?;
                let y2 = self.binop(BinOp::Mul, F64, y, y)?;
                let d = self.binop(BinOp::Add, F64, y2, one)?;
                let s = sqrt(self, d)?;
                let w = self.binop(BinOp::Add, F64, a, s)?;
                let l = self.log64(w)?;
                let sg = self.glsl(F64, FSIGN, &[y])?;
                let g = self.binop(BinOp::Mul, F64, sg, l)?;
                // asinh x = Σ (-1)^n (2n)! / (4^n (n!)² (2n+1)) x^{2n+1}.
                let sc: Vec<f64> = (0..10)
                    .rev()
                    .map(|n: u32| {
                        let sign = if n.is_multiple_of(2) { 1.0 } else { -1.0 };
                        sign * fact(2 * n)
                            / (4f64.powi(n as i32) * fact(n) * fact(n) * f64::from(2 * n + 1))
                    })
                    .collect();
                self.small_odd64(y, 0.125, &sc, g)?
            }
            -6 => {
                // ln(y + √(y²-1)) for y ≥ 1 (else NaN).
                let y2 = self.binop(BinOp::Mul, F64, y, y)?;
                let d = self.binop(BinOp::Sub, F64, y2, one)?;
                let s = sqrt(self, d)?;
                let w = self.binop(BinOp::Add, F64, y, s)?;
                let safe = self.b.f_ord_less_than(bt, None, w, one).map_err(be)?;
                let w1 = self.b.select(ft, None, safe, one, w).map_err(be)?;
                let l = self.log64(w1)?;
                let lt1 = self.b.f_ord_less_than(bt, None, y, one).map_err(be)?;
                let nan = self.fc(F64, f64::NAN);
                self.b.select(ft, None, lt1, nan, l).map_err(be)?
            }
            -7 => {
                // ½·ln((1+y)/(1-y)) for |y| < 1; the series below 1/8; ±1 is ±∞.
                let a = self.binop(BinOp::Add, F64, one, y)?;
                let b = self.binop(BinOp::Sub, F64, one, y)?;
                let q = self.binop(BinOp::Div, F64, a, b)?;
                let zero = self.fc(F64, 0.0);
                let pos = self.b.f_ord_less_than(bt, None, zero, q).map_err(be)?;
                let q1 = self.b.select(ft, None, pos, q, one).map_err(be)?;
                let l = self.log64(q1)?;
                let g = self.binop(BinOp::Mul, F64, half, l)?;
                // At 1 the quotient is +∞, whose logarithm `log64` does not take (it
                // gave ln of the largest f64: `¯7○1` was 354.89, not a DOMAIN ERROR).
                let huge = self.not_finite(F64, q)?;
                let inf = self.fc(F64, f64::INFINITY);
                let g = self.b.select(ft, None, huge, inf, g).map_err(be)?;
                let nan = self.fc(F64, f64::NAN);
                let g = self.b.select(ft, None, pos, g, nan).map_err(be)?;
                let sc: Vec<f64> = (0..10).rev().map(|n| 1.0 / f64::from(2 * n + 1)).collect();
                self.small_odd64(y, 0.125, &sc, g)?
            }
            _ => return Ok(None),
        }))
    }
}

/// Where [`Emitter::div_refined`]'s exact residual holds, for a float type, as
/// powers of two: operands below `2^tiny` (both below `2^fit`) are scaled by
/// `2^up`, a divisor of `2^huge` or more by `2^-down`; quotients of `2^huge` or
/// more are refined scaled by `2^-down`, below `2^tiny_q` by `2^q_up`, where a
/// tie of the subnormals is `2^half_tie` from either neighbour; Dekker's product
/// is exact for `q` and `b` below `2^exact[0]` and a product above `2^exact[1]`.
struct DivRange {
    tiny: i32,
    fit: i32,
    up: i32,
    huge: i32,
    down: i32,
    tiny_q: i32,
    q_up: i32,
    half_tie: i32,
    exact: [i32; 2],
}

impl DivRange {
    fn of(t: ElemType) -> DivRange {
        if t == F64 {
            // Splits overflow from 2^996; a product's low bits (2^-106 of it)
            // fall below 2^-1074 under 2^-968.
            DivRange {
                tiny: -900,
                fit: 395,
                up: 600,
                huge: 990,
                down: 128,
                tiny_q: -960,
                q_up: 128,
                half_tie: -1075 + 128,
                exact: [995, -960],
            }
        } else {
            // f32: splits overflow from 2^115; a product's low bits (2^-48 of
            // it) fall below 2^-149 under 2^-101.
            DivRange {
                tiny: -100,
                fit: 50,
                up: 64,
                huge: 110,
                down: 32,
                tiny_q: -100,
                q_up: 64,
                half_tie: -150 + 64,
                exact: [114, -100],
            }
        }
    }
}
