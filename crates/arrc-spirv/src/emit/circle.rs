//! The circle functions (`○`) on the device: sin and cos by arrc's own reduction
//! and polynomials, f32 atan (and asin, acos through it), and the others from
//! GLSL.std.450 or, where the kernel may use f64, arrc's f64 ones rounded once.

use super::scalars::*;
use super::{be, Cx, Emitter, R};
use arrc_ir::scalar::BinOp;
use arrc_ir::{ElemType, Scalar};
use rspirv::spirv::Word;
use ElemType::F32;

impl Emitter {
    /// sin and cos of `y` to about an ulp, not trusting the device's (Vulkan lets
    /// `sin`/`cos` err by 2^-11, and NVIDIA's do): `y = q·π/2 + r` by integer
    /// arithmetic on 2/π's bits ([`Self::reduce_quadrants`], so that `r` keeps its
    /// relative precision even next to a multiple of π/2, where tan has a pole),
    /// polynomials on |r| ≤ π/4, the quadrant `q mod 4` choosing signs and which one
    /// is which.
    pub(super) fn sin_cos(&mut self, y: Word) -> R<(Word, Word)> {
        let q0 = self.scalar(Scalar::I32(0));
        let (r, qi) = self.reduce_beyond(y, F32, (y, q0), std::f64::consts::FRAC_PI_4)?;
        let r2 = self.fop(F32, BinOp::Mul, r, r)?;
        let poly = |e: &mut Self, coefs: &[f64]| -> R<Word> {
            let mut acc = e.fc(F32, coefs[0]);
            for &k in &coefs[1..] {
                let m = e.fop(F32, BinOp::Mul, acc, r2)?;
                let kk = e.fc(F32, k);
                acc = e.fop(F32, BinOp::Add, m, kk)?;
            }
            Ok(acc)
        };
        // sin r = r + r³·P(r²); cos r = 1 - r²/2 + r⁴·Q(r²).
        let p = poly(self, &[-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1])?;
        let r3 = self.fop(F32, BinOp::Mul, r2, r)?;
        let sp = self.fop(F32, BinOp::Mul, r3, p)?;
        let sn = self.fop(F32, BinOp::Add, r, sp)?;
        let qc = poly(
            self,
            &[
                2.443315711809948e-5,
                -1.388731625493765e-3,
                4.166664568298827e-2,
            ],
        )?;
        let r4 = self.fop(F32, BinOp::Mul, r2, r2)?;
        let cq = self.fop(F32, BinOp::Mul, r4, qc)?;
        let half = self.fc(F32, 0.5);
        let hr2 = self.fop(F32, BinOp::Mul, half, r2)?;
        let one = self.fc(F32, 1.0);
        let cs = self.fop(F32, BinOp::Sub, one, hr2)?;
        let cs = self.fop(F32, BinOp::Add, cs, cq)?;
        self.by_quadrant(F32, qi, (sn, cs))
    }

    /// atan of an f32 in f32 (a device without f64; the devices' own may err by
    /// 1e-4): |y| above 1 folded to π/2 − atan(1/|y|), above tan(π/12) reduced by
    /// π/6 (atan x = π/6 + atan((x√3 − 1)/(x + √3))), then atan's series to x^15
    /// (below 1e-11 for |x| ≤ 0.268), and y's sign.
    pub(super) fn atan32(&mut self, y: Word) -> R<Word> {
        let bt = self.bool_t;
        let one = self.fc(F32, 1.0);
        let ay = self.glsl(F32, 4, &[y])?; // FAbs
        let big = self.b.f_ord_greater_than(bt, None, ay, one).map_err(be)?;
        let inv = self.fop(F32, BinOp::Div, one, ay)?;
        let x = self.sel(F32, big, inv, ay)?;
        let t12 = self.fc(F32, (std::f64::consts::PI / 12.0).tan());
        let mid = self.b.f_ord_greater_than(bt, None, x, t12).map_err(be)?;
        let r3 = self.fc(F32, 3f64.sqrt());
        let num = self.fop(F32, BinOp::Mul, x, r3)?;
        let num = self.fop(F32, BinOp::Sub, num, one)?;
        let den = self.fop(F32, BinOp::Add, x, r3)?;
        let xr = self.fop(F32, BinOp::Div, num, den)?;
        let x = self.sel(F32, mid, xr, x)?;
        let z = self.fop(F32, BinOp::Mul, x, x)?;
        // (-1)^k / (2k+1), k = 1..7, by Horner from the highest.
        let mut p = self.fc(F32, -1.0 / 15.0);
        for k in (1..7).rev() {
            let c = self.fc(
                F32,
                if k % 2 == 0 { 1.0 } else { -1.0 } / f64::from(2 * k + 1),
            );
            let pz = self.fop(F32, BinOp::Mul, p, z)?;
            p = self.fop(F32, BinOp::Add, pz, c)?;
        }
        let xz = self.fop(F32, BinOp::Mul, x, z)?;
        let tail = self.fop(F32, BinOp::Mul, xz, p)?;
        let r = self.fop(F32, BinOp::Add, x, tail)?;
        let pi6 = self.fc(F32, std::f64::consts::FRAC_PI_6);
        let rm = self.fop(F32, BinOp::Add, pi6, r)?;
        let r = self.sel(F32, mid, rm, r)?;
        let pi2 = self.fc(F32, std::f64::consts::FRAC_PI_2);
        let rb = self.fop(F32, BinOp::Sub, pi2, r)?;
        let r = self.sel(F32, big, rb, r)?;
        let zero = self.fc(F32, 0.0);
        let neg = self.b.f_ord_less_than(bt, None, y, zero).map_err(be)?;
        let ft = self.ty(F32);
        let nr = self.b.f_negate(ft, None, r).map_err(be)?;
        self.sel(F32, neg, nr, r)
    }

    pub(super) fn circle_fn(&mut self, t: ElemType, k: i64, y: Word) -> R<Option<Word>> {
        if t == ElemType::F64 {
            return self.circle64_fn(k, y);
        }
        let one = self.fc(F32, 1.0);
        if (1..=3).contains(&k) && !self.exact32 {
            // An infinity has no sine (NaN: a DOMAIN ERROR).
            let inf = self.not_finite(ElemType::F32, y)?;
            let nan = self.fc(F32, f64::NAN);
            let (sn, cs) = self.sin_cos(y)?;
            let v = match k {
                1 => sn,
                2 => cs,
                _ => self.fop(F32, BinOp::Div, sn, cs)?,
            };
            return Ok(Some(self.sel(ElemType::F32, inf, nan, v)?));
        }
        if self.float64 {
            // The devices' asin, acos and atan may err by 1e-4 (lavapipe's do), and
            // their cosh by 2 ulps (NVIDIA's and lavapipe's: `⌊6○19` gave 89241136):
            // arrc's own f64 ones, rounded once, as the reference rounds.
            let y64 = self.convert(y, F32, ElemType::F64)?;
            return match self.circle64_fn(k, y64)? {
                Some(r) => Ok(Some(self.convert(r, ElemType::F64, F32)?)),
                None => Ok(None),
            };
        }
        let yy = self.fop(F32, BinOp::Mul, y, y)?;
        Ok(Some(match k {
            0 => {
                let d = self.fop(F32, BinOp::Sub, one, yy)?;
                self.glsl(F32, SQRT, &[d])?
            }
            4 => {
                let d = self.fop(F32, BinOp::Add, one, yy)?;
                self.glsl(F32, SQRT, &[d])?
            }
            5 => self.glsl(F32, SINH, &[y])?,
            6 => self.glsl(F32, COSH, &[y])?,
            7 => self.glsl(F32, TANH, &[y])?,
            // The devices' own may err by 1e-4 (lavapipe's ¯1○ by 3e-4): arrc's.
            -1 => {
                // atan(y ÷ √((1-y)(1+y))); ±1 gives ±∞, whose atan is ±π/2.
                let ym = self.fop(F32, BinOp::Sub, one, y)?;
                let yp = self.fop(F32, BinOp::Add, one, y)?;
                let d = self.fop(F32, BinOp::Mul, ym, yp)?;
                let d = self.glsl(F32, SQRT, &[d])?;
                let q = self.fop(F32, BinOp::Div, y, d)?;
                self.atan32(q)?
            }
            -2 => {
                // 2·atan(√((1-y)÷(1+y))): no cancellation near 1; ¯1 gives π.
                let ym = self.fop(F32, BinOp::Sub, one, y)?;
                let yp = self.fop(F32, BinOp::Add, one, y)?;
                let q = self.fop(F32, BinOp::Div, ym, yp)?;
                let q = self.glsl(F32, SQRT, &[q])?;
                let a = self.atan32(q)?;
                self.fop(F32, BinOp::Add, a, a)?
            }
            -3 => self.atan32(y)?,
            -4 => {
                // (y+1)×√((y-1)÷(y+1)), for |y| ≥ 1 (else NaN, an error).
                let yp = self.fop(F32, BinOp::Add, y, one)?;
                let ym = self.fop(F32, BinOp::Sub, y, one)?;
                let q = self.fop(F32, BinOp::Div, ym, yp)?;
                let s = self.glsl(F32, SQRT, &[q])?;
                let r = self.fop(F32, BinOp::Mul, yp, s)?;
                let ay = self.glsl(F32, 4, &[y])?;
                let lt1 = self.flt(ay, one)?;
                let nan = self.fc(F32, f64::NAN);
                self.sel(ElemType::F32, lt1, nan, r)?
            }
            -5 => self.glsl(F32, ASINH, &[y])?,
            -6 => self.glsl(F32, ACOSH, &[y])?,
            -7 => self.glsl(F32, ATANH, &[y])?,
            _ => return Ok(None),
        }))
    }

    /// `k○y`: one function when `k` is a literal, else every one selected by `k`.
    /// Results outside the reals (NaN) and infinities are DOMAIN ERRORs, as is a `k`
    /// outside ¯7…7.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn circle(
        &mut self,
        cx: &Cx,
        t: ElemType,
        k: Word,
        y: Word,
        literal: Option<i64>,
        bit: Option<u32>,
    ) -> R<Word> {
        let r = match literal {
            Some(kk) => match self.circle_fn(t, kk, y)? {
                Some(r) => r,
                None => {
                    let tr = self.b.constant_true(self.bool_t);
                    self.raise(cx, bit, tr)?;
                    return Ok(self.fc(t, 0.0));
                }
            },
            None => {
                let mut r = self.fc(t, f64::NAN);
                for kk in -7..=7 {
                    let v = self.circle_fn(t, kk, y)?.unwrap_or(r);
                    let kc = self.fc(t, kk as f64);
                    let is = self.fcmp(t, BinOp::Equal, k, kc)?;
                    r = self.sel(t, is, v, r)?;
                }
                r
            }
        };
        let bad = self.not_finite(t, r)?;
        self.raise(cx, bit, bad)?;
        Ok(r)
    }
}
