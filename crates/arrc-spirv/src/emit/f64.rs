//! `exp`, `log` and the circle functions in f64. Vulkan's GLSL.std.450 has them for
//! 16- and 32-bit floats only, so f64 programs get these: range reduction (by powers
//! of two for exp and log, by π/2 in three parts for sin and cos (by 2/π's bits
//! beyond 1.5e6 radians), by argument halving for atan) and polynomials accurate to a
//! few ulps.

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
