//! Scalar functions on the device: every monadic and dyadic scalar function as SPIR-V
//! (GLSL.std.450 for the transcendental ones), with the DOMAIN ERROR conditions of the
//! CPU reference raised through the status word. Integer results that leave 64 bits
//! and float results that leave f32 (infinities, NaN) are errors, as on the reference.

use super::{be, Cx, Emitter, R, SCOPE_DEVICE};
use crate::SpirvError;
use arrc_ir::scalar::{BinOp, UnOp, LANCZOS};
use arrc_ir::{ElemType, Scalar};
use rspirv::dr::Operand;
use rspirv::spirv::{StorageClass, Word};
use ElemType::F32;

// GLSL.std.450 instruction numbers.
const ROUND_EVEN: u32 = 2;
const FLOOR: u32 = 8;
const CEIL: u32 = 9;
pub(super) const SINH: u32 = 19;
pub(super) const COSH: u32 = 20;
pub(super) const TANH: u32 = 21;
pub(super) const ASINH: u32 = 22;
pub(super) const ACOSH: u32 = 23;
pub(super) const ATANH: u32 = 24;
const POW: u32 = 26;
const EXP: u32 = 27;
const LOG: u32 = 28;
pub(super) const SQRT: u32 = 31;
/// The GLSL.std.450 instructions Vulkan allows on f64: Round, RoundEven, Trunc,
/// FAbs, FSign, Floor, Ceil, Fract, Sqrt, InverseSqrt, FMin, FMax, FClamp, FMix,
/// Step, SmoothStep, Fma.
const F64_GLSL: [u32; 17] = [1, 2, 3, 4, 6, 8, 9, 10, 31, 32, 37, 40, 43, 46, 48, 49, 50];

impl Emitter {
    /// A GLSL.std.450 instruction on floats of type `t` (Vulkan allows only the
    /// non-transcendental ones on f64).
    pub(super) fn glsl(&mut self, t: ElemType, inst: u32, args: &[Word]) -> R<Word> {
        if self.exact32 && t == F32 {
            // FAbs on the bits; the others that Vulkan allows on f64 in f64.
            if inst == 4 {
                return self.sign32(false, args[0]);
            }
            if F64_GLSL.contains(&inst) {
                return self.in_f64(args, |e, w| e.glsl(ElemType::F64, inst, w));
            }
        }
        let f = self.ty(t);
        let ops: Vec<Operand> = args.iter().map(|&a| Operand::IdRef(a)).collect();
        self.b.ext_inst(f, None, self.glsl, inst, ops).map_err(be)
    }

    /// ln, e^ and sin in f32 (GLSL.std.450) or f64 (arrc's own).
    fn flog(&mut self, t: ElemType, v: Word) -> R<Word> {
        if t == ElemType::F64 {
            self.log64(v)
        } else {
            self.glsl(F32, LOG, &[v])
        }
    }

    fn fexp(&mut self, t: ElemType, v: Word) -> R<Word> {
        if t == ElemType::F64 {
            self.exp64(v)
        } else {
            self.glsl(F32, EXP, &[v])
        }
    }

    fn fsin(&mut self, t: ElemType, v: Word) -> R<Word> {
        Ok(if t == ElemType::F64 {
            self.sin_cos64(v)?.0
        } else {
            self.sin_cos(v)?.0
        })
    }

    /// A float constant of type `t`.
    pub(super) fn fc(&mut self, t: ElemType, v: f64) -> Word {
        self.scalar(Scalar::float(v, t))
    }

    pub(super) fn fop(&mut self, t: ElemType, op: BinOp, a: Word, b: Word) -> R<Word> {
        self.binop(op, t, a, b)
    }

    pub(super) fn flt(&mut self, a: Word, b: Word) -> R<Word> {
        self.b.f_ord_less_than(self.bool_t, None, a, b).map_err(be)
    }

    fn feq(&mut self, a: Word, b: Word) -> R<Word> {
        self.b.f_ord_equal(self.bool_t, None, a, b).map_err(be)
    }

    pub(super) fn or(&mut self, a: Word, b: Word) -> R<Word> {
        self.b.logical_or(self.bool_t, None, a, b).map_err(be)
    }

    pub(super) fn and(&mut self, a: Word, b: Word) -> R<Word> {
        self.b.logical_and(self.bool_t, None, a, b).map_err(be)
    }

    pub(super) fn not(&mut self, a: Word) -> R<Word> {
        self.b.logical_not(self.bool_t, None, a).map_err(be)
    }

    pub(super) fn sel(&mut self, t: ElemType, c: Word, a: Word, b: Word) -> R<Word> {
        let ty = self.ty(t);
        self.b.select(ty, None, c, a, b).map_err(be)
    }

    /// Infinity or NaN: `|r| > MAX` or unordered, one comparison.
    pub(super) fn not_finite(&mut self, t: ElemType, r: Word) -> R<Word> {
        if self.exact32 && t == F32 {
            return self.not_finite32(r);
        }
        let a = self.glsl(t, 4, &[r])?; // FAbs
        let max = if t == ElemType::F64 {
            self.scalar(Scalar::F64(f64::MAX))
        } else {
            self.scalar(Scalar::F32(f32::MAX))
        };
        self.b
            .f_unord_greater_than(self.bool_t, None, a, max)
            .map_err(be)
    }

    /// Sets `bit` when `bad` holds of `a` or of `b`.
    fn raise_either(
        &mut self,
        cx: &Cx,
        bit: Option<u32>,
        a: Word,
        b: Word,
        bad: impl Fn(&mut Self, Word) -> R<Word>,
    ) -> R<()> {
        let ba = bad(self, a)?;
        let bb = bad(self, b)?;
        let either = self.or(ba, bb)?;
        self.raise(cx, bit, either)
    }

    /// Sets `bit` of the status word when `bad` holds.
    pub(super) fn raise(&mut self, cx: &Cx, bit: Option<u32>, bad: Word) -> R<()> {
        let Some(bit) = bit else {
            return Ok(());
        };
        // On a guarded fast path, only where no check has failed (the exact way
        // raises the rest).
        let bad = match self.suspected()? {
            Some(s) => {
                let fine = self.not(s)?;
                self.and(bad, fine)?
            }
            None => bad,
        };
        // An error the kernel could raise with nowhere to report it would be lost: a
        // planning fault, not a silent success.
        let Some(status) = cx.status else {
            return Err(crate::SpirvError::Build(format!(
                "error bit {bit} in a kernel without a status binding"
            )));
        };
        if let Some(mut flags) = self.deferred.take() {
            let var = match flags.iter().find(|(b, _)| *b == bit) {
                Some(&(_, var)) => var,
                None => {
                    let var = self.local_false();
                    flags.push((bit, var));
                    var
                }
            };
            self.deferred = Some(flags);
            let bt = self.bool_t;
            let cur = self.load(bt, var)?;
            let now = self.or(cur, bad)?;
            return self.store(var, now);
        }
        self.if_then(bad, |e| {
            let ut = e.u32_t;
            let p = e.ptr(StorageClass::StorageBuffer, ut);
            let zero = e.c_u32(0);
            let ptr =
                e.b.access_chain(p, None, status, [zero, zero])
                    .map_err(be)?;
            let dev = e.c_u32(SCOPE_DEVICE);
            let relaxed = e.c_u32(0);
            let mask = e.c_u32(1 << bit);
            e.b.atomic_or(ut, None, ptr, dev, relaxed, mask)
                .map_err(be)?;
            Ok(())
        })
    }

    /// Raises the errors deferred since `deferred` was set (see there), and stops
    /// deferring.
    pub(super) fn flush_errors(&mut self, cx: &Cx) -> R<()> {
        let bt = self.bool_t;
        for (bit, var) in self.deferred.take().unwrap_or_default() {
            let bad = self.load(bt, var)?;
            self.raise(cx, Some(bit), bad)?;
        }
        Ok(())
    }

    /// `a mod b` of non-negative integers of type `t` (through the unsigned type of
    /// its width).
    fn umod(&mut self, t: ElemType, a: Word, b: Word) -> R<Word> {
        let ty = self.ty(t);
        let ut = if t == ElemType::I64 {
            self.b.type_int(64, 0)
        } else {
            self.u32_t
        };
        let ua = self.b.bitcast(ut, None, a).map_err(be)?;
        let ub = self.b.bitcast(ut, None, b).map_err(be)?;
        let r = self.b.u_mod(ut, None, ua, ub).map_err(be)?;
        self.b.bitcast(ty, None, r).map_err(be)
    }

    /// `|v|` of an integer: `(v ^ s) - s` with `s` the sign mask. (lavapipe turns the
    /// compare-and-select form into a 64-bit iabs that gets it wrong.)
    fn iabs(&mut self, t: ElemType, v: Word) -> R<Word> {
        let ty = self.ty(t);
        let bits = self.scalar(Scalar::I32(t.size() as i32 * 8 - 1).cast(t));
        let sign = self
            .b
            .shift_right_arithmetic(ty, None, v, bits)
            .map_err(be)?;
        let x = self.b.bitwise_xor(ty, None, v, sign).map_err(be)?;
        self.b.i_sub(ty, None, x, sign).map_err(be)
    }

    /// `x = y` within ⎕CT for f64: `|x-y| ≤ ⎕CT × (|x| ⌈ |y|)` (as the reference's
    /// `tolerant_eq`), a boolean.
    pub(super) fn tolerant_eq(&mut self, x: Word, y: Word) -> R<Word> {
        let t = ElemType::F64;
        let d = self.fop(t, BinOp::Sub, x, y)?;
        let ad = self.glsl(t, 4, &[d])?; // FAbs
        let ax = self.glsl(t, 4, &[x])?;
        let ay = self.glsl(t, 4, &[y])?;
        let m = self.binop(BinOp::Max, t, ax, ay)?;
        let ct = self.fc(t, self.ct);
        let lim = self.fop(t, BinOp::Mul, ct, m)?;
        let near = self
            .b
            .f_ord_less_than_equal(self.bool_t, None, ad, lim)
            .map_err(be)?;
        let same = self.feq(x, y)?;
        self.or(same, near)
    }

    /// Dyalog's tolerant `⌊x` of an f64 (as the reference's `tolerant_floor`); `⌈x` is
    /// `-⌊-x`. The result is still a float.
    fn tolerant_floor(&mut self, op: UnOp, raw: Word) -> R<Word> {
        let t = ElemType::F64;
        let ty = self.ty(t);
        let x = if op == UnOp::Ceil {
            self.b.f_negate(ty, None, raw).map_err(be)?
        } else {
            raw
        };
        let half = self.fc(t, 0.5);
        let xh = self.fop(t, BinOp::Add, x, half)?;
        let n = self.glsl(t, FLOOR, &[xh])?;
        let above = self.fop(t, BinOp::Sub, n, x)?;
        let ax = self.glsl(t, 4, &[x])?;
        let one = self.fc(t, 1.0);
        let m = self.binop(BinOp::Max, t, ax, one)?;
        let ct = self.fc(t, self.ct);
        let lim = self.fop(t, BinOp::Mul, ct, m)?;
        let too_high = self.flt(lim, above)?;
        let n1 = self.fop(t, BinOp::Sub, n, one)?;
        let f = self.sel(t, too_high, n1, n)?;
        // An integral x is itself (x + 0.5 rounds up for odd x beyond 2^52).
        let fx = self.glsl(t, FLOOR, &[x])?;
        let integral = self.feq(fx, x)?;
        let f = self.sel(t, integral, x, f)?;
        if op == UnOp::Ceil {
            self.b.f_negate(ty, None, f).map_err(be)
        } else {
            Ok(f)
        }
    }

    /// A monadic scalar function of `raw` (of type `at`), giving type `elem`.
    pub(super) fn unary(
        &mut self,
        cx: &Cx,
        op: UnOp,
        at: ElemType,
        elem: ElemType,
        raw: Word,
        bit: Option<u32>,
    ) -> R<Word> {
        let bt = self.bool_t;
        let float = at.is_float();
        if op == UnOp::Signum {
            // ¯1, 0 or 1 (i32), from the argument as it is.
            let z = self.scalar(Scalar::I32(0).cast(at));
            let (gt, lt) = if float {
                (
                    self.fcmp(at, BinOp::Greater, raw, z)?,
                    self.fcmp(at, BinOp::Less, raw, z)?,
                )
            } else {
                (
                    self.b.s_greater_than(bt, None, raw, z).map_err(be)?,
                    self.b.s_less_than(bt, None, raw, z).map_err(be)?,
                )
            };
            let (one, zero, minus) = (
                self.scalar(Scalar::I32(1)),
                self.scalar(Scalar::I32(0)),
                self.scalar(Scalar::I32(-1)),
            );
            let neg = self.sel(ElemType::I32, lt, minus, zero)?;
            return self.sel(ElemType::I32, gt, one, neg);
        }
        if let (UnOp::Ceil | UnOp::Floor, true) = (op, float) {
            if self.exact32 && at == F32 {
                // In f64 (the f32's own floor: no tolerance, as the reference).
                let w = self.widen32(raw)?;
                let inst = if op == UnOp::Floor { FLOOR } else { CEIL };
                let f = self.glsl(ElemType::F64, inst, &[w])?;
                let af = self.glsl(ElemType::F64, 4, &[f])?; // FAbs
                let lim = self.fc(ElemType::F64, 9.2e18);
                let big = self.flt(lim, af)?;
                self.raise(cx, bit, big)?;
                return self.convert(f, ElemType::F64, elem);
            }
            let f = if at == ElemType::F64 {
                self.tolerant_floor(op, raw)?
            } else {
                self.glsl(at, if op == UnOp::Floor { FLOOR } else { CEIL }, &[raw])?
            };
            let af = self.glsl(at, 4, &[f])?; // FAbs
            let lim = self.fc(at, 9.2e18);
            let big = self.flt(lim, af)?;
            self.raise(cx, bit, big)?;
            return self.convert(f, at, elem);
        }
        if let UnOp::OrderedBits | UnOp::FromOrderedBits = op {
            // On the bits as a signed integer (`signed_order_bits`): from a float for
            // `OrderedBits`, to one for `FromOrderedBits`.
            if float != (op == UnOp::OrderedBits) {
                return Err(SpirvError::Build(format!("{op:?} of {at:?}")));
            }
            let (it, ft) = match at {
                ElemType::F32 | ElemType::I32 => (ElemType::I32, ElemType::F32),
                _ => (ElemType::I64, ElemType::F64),
            };
            let ity = self.ty(it);
            let b = if float {
                self.b.bitcast(ity, None, raw).map_err(be)?
            } else {
                raw
            };
            let r = self.signed_order_bits(it == ElemType::I64, b)?;
            return if float {
                Ok(r)
            } else {
                let fty = self.ty(ft);
                self.b.bitcast(fty, None, r).map_err(be)
            };
        }
        if op == UnOp::Not && at != ElemType::Bool {
            // 0 → 1, 1 → 0, anything else a DOMAIN ERROR.
            let one = self.scalar(Scalar::I32(1).cast(at));
            let zero = self.scalar(Scalar::I32(0).cast(at));
            let (is1, is0) = match at.is_float() {
                true => (
                    self.fcmp(at, BinOp::Equal, raw, one)?,
                    self.fcmp(at, BinOp::Equal, raw, zero)?,
                ),
                false => (
                    self.b.i_equal(bt, None, raw, one).map_err(be)?,
                    self.b.i_equal(bt, None, raw, zero).map_err(be)?,
                ),
            };
            let ok = self.or(is0, is1)?;
            let bad = self.not(ok)?;
            self.raise(cx, bit, bad)?;
            let (t, f) = (
                self.scalar(Scalar::Bool(true)),
                self.scalar(Scalar::Bool(false)),
            );
            return self.sel(ElemType::Bool, is0, t, f);
        }
        let v = self.convert(raw, at, elem)?;
        let ty = self.ty(elem);
        match (op, elem) {
            (UnOp::Conjugate, _) | (UnOp::Abs, ElemType::Bool) | (UnOp::Ceil | UnOp::Floor, _) => {
                Ok(v)
            }
            (UnOp::HighHalf, _) => {
                let c32 = self.c_u32(32);
                self.b.shift_right_arithmetic(ty, None, v, c32).map_err(be)
            }
            (UnOp::Not, _) => {
                let one = self.scalar(Scalar::Bool(true));
                self.b.i_sub(ty, None, one, v).map_err(be)
            }
            (UnOp::Abs | UnOp::Neg, ElemType::F32) if self.exact32 => {
                self.sign32(op == UnOp::Neg, v)
            }
            (UnOp::Abs, ElemType::F32 | ElemType::F64) => {
                let z = self.fc(elem, 0.0);
                let lt = self.flt(v, z)?;
                let n = self.b.f_negate(ty, None, v).map_err(be)?;
                self.b.select(ty, None, lt, n, v).map_err(be)
            }
            (UnOp::Neg | UnOp::Abs, _) => {
                if at == ElemType::I64 {
                    let min = self.scalar(Scalar::I64(i64::MIN));
                    let bad = self.b.i_equal(bt, None, v, min).map_err(be)?;
                    self.raise(cx, bit, bad)?;
                }
                if op == UnOp::Abs {
                    self.iabs(elem, v)
                } else if elem.is_float() {
                    self.b.f_negate(ty, None, v).map_err(be)
                } else {
                    self.b.s_negate(ty, None, v).map_err(be)
                }
            }
            (UnOp::Recip, _) => {
                // `÷0`, and a reciprocal beyond the range (`÷1e¯39` in f32), are
                // DOMAIN ERRORs: the division raises both on this bit.
                let one = self.fc(elem, 1.0);
                self.binary(cx, BinOp::Div, elem, elem, one, v, None, bit)
            }
            (UnOp::Exp, _) => {
                // f32 in f64 where the device has it, rounded once as the reference
                // rounds (GLSL's f32 exp errs by a few ulps, which `⌊*x` shows).
                let r = if elem == ElemType::F64 {
                    self.exp64(v)?
                } else if self.float64 {
                    let w = self.convert(v, F32, ElemType::F64)?;
                    let r = self.exp64(w)?;
                    self.convert(r, ElemType::F64, F32)?
                } else {
                    self.glsl(F32, EXP, &[v])?
                };
                let bad = self.not_finite(elem, r)?;
                self.raise(cx, bit, bad)?;
                Ok(r)
            }
            (UnOp::Ln, _) => {
                let z = self.fc(elem, 0.0);
                let nonpos = self.fcmp(elem, BinOp::LessEq, v, z)?;
                self.raise(cx, bit, nonpos)?;
                if elem == ElemType::F64 || self.float64 {
                    // (A non-positive argument has raised its error; its value is moot.)
                    // f32 in f64 where the device has it, as for exp.
                    let one = self.fc(elem, 1.0);
                    let safe = self.sel(elem, nonpos, one, v)?;
                    let w = self.convert(safe, elem, ElemType::F64)?;
                    let r = self.log64(w)?;
                    self.convert(r, ElemType::F64, elem)
                } else {
                    self.glsl(F32, LOG, &[v])
                }
            }
            (UnOp::PiTimes, _) => {
                // f32 in f64 where the device has it: π×x rounded once, as the
                // reference (f32 π times x rounds twice, an ulp apart at times).
                let r = if elem == F32 && self.float64 {
                    let w = self.convert(v, F32, ElemType::F64)?;
                    let pi = self.fc(ElemType::F64, std::f64::consts::PI);
                    let p = self.fop(ElemType::F64, BinOp::Mul, pi, w)?;
                    self.convert(p, ElemType::F64, F32)?
                } else {
                    let pi = self.fc(elem, std::f64::consts::PI);
                    self.fop(elem, BinOp::Mul, pi, v)?
                };
                let bad = self.not_finite(elem, r)?;
                self.raise(cx, bit, bad)?;
                Ok(r)
            }
            (UnOp::Factorial, _) => self.factorial(cx, elem, v, bit),
            // Returned above.
            (UnOp::Signum | UnOp::OrderedBits | UnOp::FromOrderedBits, _) => {
                Err(SpirvError::Build(format!("{op:?}")))
            }
        }
    }

    /// `k!n` in f32 or f64 (`t`), as the reference computes it: for integers the multiplicative
    /// formula (with Dyalog's extension to negative integers), otherwise
    /// Γ(n+1) ÷ Γ(k+1) × Γ(n-k+1) with a pole above a DOMAIN ERROR and one below 0.
    /// An f32 function computed in f64 where the device has it, rounded once and
    /// checked for the f32 range, as the reference computes it; `None` elsewhere (the
    /// caller computes in f32).
    fn via_f64(
        &mut self,
        cx: &Cx,
        t: ElemType,
        args: &[Word],
        bit: Option<u32>,
        f: impl FnOnce(&mut Self, &[Word]) -> R<Word>,
    ) -> R<Option<Word>> {
        if t != ElemType::F32 || !self.float64 {
            return Ok(None);
        }
        let r = self.in_f64(args, f)?;
        let bad = self.not_finite(t, r)?;
        self.raise(cx, bit, bad)?;
        Ok(Some(r))
    }

    fn binomial(&mut self, cx: &Cx, t: ElemType, k: Word, n: Word, bit: Option<u32>) -> R<Word> {
        // In f32, `(2*31)-1)!¯14` took k-n-1 = 2^31+12 as 2^31 and gave 1.
        if let Some(r) = self.via_f64(cx, t, &[k, n], bit, |e, w| {
            e.binomial(cx, ElemType::F64, w[0], w[1], bit)
        })? {
            return Ok(r);
        }
        let f = self.ty(t);
        let out = self.local(f);
        let zero = self.fc(t, 0.0);
        let one = self.fc(t, 1.0);
        let is_int = |e: &mut Self, v: Word| -> R<Word> {
            let fl = e.glsl(t, FLOOR, &[v])?;
            e.feq(fl, v)
        };
        let neg_int = |e: &mut Self, v: Word| -> R<Word> {
            let i = is_int(e, v)?;
            let z = e.fc(t, 0.0);
            let neg = e.flt(v, z)?;
            e.and(i, neg)
        };
        let ki = is_int(self, k)?;
        let ni = is_int(self, n)?;
        let ints = self.and(ki, ni)?;
        let n_pole = neg_int(self, n)?;
        let nk = self.fop(t, BinOp::Sub, n, k)?;
        self.if_else(
            ints,
            |e| {
                let bt = e.bool_t;
                let kneg = e.flt(k, zero)?;
                let nneg = e.flt(n, zero)?;
                let knn = e.not(kneg)?;
                let nnn = e.not(nneg)?;
                // n<0≤k: (¯1*k)×(k-n-1)!k; k≤n<0: (¯1*n-k)×(n-k)!(-k-1); 0≤k≤n: k!n.
                let case1 = e.and(nneg, knn)?;
                let kle = e.b.f_ord_less_than_equal(bt, None, k, n).map_err(be)?;
                let case2 = e.and(nneg, kneg)?;
                let case2 = e.and(case2, kle)?;
                let pos = e.and(knn, nnn)?;
                let pos = e.and(pos, kle)?;
                let kmn = e.fop(t, BinOp::Sub, k, n)?;
                let n1 = e.fop(t, BinOp::Sub, kmn, one)?; // k-n-1
                let nk2 = e.b.f_negate(f, None, k).map_err(be)?;
                let n2 = e.fop(t, BinOp::Sub, nk2, one)?; // -k-1
                let kk = e.sel(t, case2, nk, k)?;
                let nn = e.sel(t, case1, n1, n)?;
                let nn = e.sel(t, case2, n2, nn)?;
                let parity = e.sel(t, case1, k, nk)?;
                let half = e.fc(t, 0.5);
                let hp = e.fop(t, BinOp::Mul, parity, half)?;
                let fhp = e.glsl(t, FLOOR, &[hp])?;
                let even = e.feq(fhp, hp)?;
                let any_neg = e.or(case1, case2)?;
                let odd = e.not(even)?;
                let flip = e.and(any_neg, odd)?;
                // C(nn, kk) = Π (nn-m+i)/i over i ≤ m = kk ⌊ nn-kk; beyond 200 steps
                // the value is beyond f32 anyway.
                let rest = e.fop(t, BinOp::Sub, nn, kk)?;
                let m = e.binop(BinOp::Min, t, kk, rest)?;
                let cap = e.fc(t, if t == ElemType::F64 { 1101.0 } else { 201.0 });
                let m = e.binop(BinOp::Min, t, m, cap)?;
                let m = e.binop(BinOp::Max, t, m, zero)?;
                let u = e.u32_t;
                let mu = e.b.convert_f_to_u(u, None, m).map_err(be)?;
                let base = e.fop(t, BinOp::Sub, nn, m)?;
                e.store(out, one)?;
                // The same product exactly in i64 while it fits (each step's
                // r·(base+i) is divisible by i), in f32 beyond.
                let i64t = e.ty(ElemType::I64);
                let exact = e.local(i64t);
                let spilled = e.local(bt);
                let one64 = e.scalar(Scalar::I64(1));
                e.store(exact, one64)?;
                // A base beyond 2^62 has no exact i64 form (converting 2^63 wraps to
                // a negative): the float product is the result from the start.
                let abase = e.glsl(t, 4, &[base])?; // FAbs
                let lim = e.fc(t, 2f64.powi(62));
                let fits = e.flt(abase, lim)?;
                let no = e.not(fits)?;
                e.store(spilled, no)?;
                let safe_base = e.sel(t, fits, base, zero)?;
                let base64 = e.b.convert_f_to_s(i64t, None, safe_base).map_err(be)?;
                let i = e.local(u);
                let one_u = e.c_u32(1);
                let end = e.uadd(mu, one_u)?;
                e.count_loop(i, one_u, end, one_u, |e, iv| {
                    let fi = e.b.convert_u_to_f(f, None, iv).map_err(be)?;
                    let acc = e.load(f, out)?;
                    let num = e.fop(t, BinOp::Add, base, fi)?;
                    let p = e.fop(t, BinOp::Mul, acc, num)?;
                    let q = e.fop(t, BinOp::Div, p, fi)?;
                    e.store(out, q)?;
                    let u64t = e.b.type_int(64, 0);
                    let w = e.b.u_convert(u64t, None, iv).map_err(be)?;
                    let i64v = e.b.bitcast(i64t, None, w).map_err(be)?;
                    let n64 = e.b.i_add(i64t, None, base64, i64v).map_err(be)?;
                    let r64 = e.load(i64t, exact)?;
                    let p64 = e.b.i_mul(i64t, None, r64, n64).map_err(be)?;
                    let ov = e.overflow(BinOp::Mul, r64, n64, p64)?;
                    let sp = e.load(bt, spilled)?;
                    let sp = e.or(sp, ov)?;
                    e.store(spilled, sp)?;
                    let q64 = e.b.s_div(i64t, None, p64, i64v).map_err(be)?;
                    e.store(exact, q64)
                })?;
                let rf = e.load(f, out)?;
                let r64 = e.load(i64t, exact)?;
                let re = e.b.convert_s_to_f(f, None, r64).map_err(be)?;
                let sp = e.load(bt, spilled)?;
                let r = e.sel(t, sp, rf, re)?;
                let big = e.fc(t, if t == ElemType::F64 { 1100.0 } else { 200.0 });
                let over = e.flt(big, m)?;
                let inf = e.fc(t, f64::INFINITY);
                let r = e.glsl(t, ROUND_EVEN, &[r])?;
                let r = e.sel(t, over, inf, r)?;
                let nr = e.b.f_negate(f, None, r).map_err(be)?;
                let r = e.sel(t, flip, nr, r)?;
                let valid = e.or(any_neg, pos)?;
                let r = e.sel(t, valid, r, zero)?;
                e.store(out, r)
            },
            |e| {
                // Γ(n+1) leaves f32's range from n = 35 on while the quotient need
                // not: in f64 where the device has it.
                let w = if t == ElemType::F32 && e.float64 {
                    ElemType::F64
                } else {
                    t
                };
                let g = |e: &mut Self, v: Word| {
                    let v = e.convert(v, t, w)?;
                    e.factorial(cx, w, v, None)
                };
                let gn = g(e, n)?;
                let gk = g(e, k)?;
                let gnk = g(e, nk)?;
                let d = e.fop(w, BinOp::Mul, gk, gnk)?;
                let r = e.fop(w, BinOp::Div, gn, d)?;
                let r = e.convert(r, w, t)?;
                let kp = neg_int(e, k)?;
                let nkp = neg_int(e, nk)?;
                let below = e.or(kp, nkp)?;
                let r = e.sel(t, below, zero, r)?;
                e.store(out, r)
            },
        )?;
        let r = self.load(f, out)?;
        let nf = self.not_finite(t, r)?;
        let not_ints = self.not(ints)?;
        let above = self.and(not_ints, n_pole)?;
        let bad = self.or(nf, above)?;
        self.raise(cx, bit, bad)?;
        Ok(r)
    }

    /// `!v` = Γ(v+1): an exact product for small non-negative integers, Lanczos
    /// (with the reflection formula below ½) otherwise; negative integers are errors.
    fn factorial(&mut self, cx: &Cx, t: ElemType, v: Word, bit: Option<u32>) -> R<Word> {
        // The f32 Lanczos sum erred by 1E¯5, which `x|!x` magnified.
        if let Some(r) = self.via_f64(cx, t, &[v], bit, |e, w| {
            e.factorial(cx, ElemType::F64, w[0], bit)
        })? {
            return Ok(r);
        }
        let f = self.ty(t);
        let u = self.u32_t;
        let out = self.local(f);
        let fl = self.glsl(t, FLOOR, &[v])?;
        let isint = self.feq(fl, v)?;
        let zero = self.fc(t, 0.0);
        let neg = self.flt(v, zero)?;
        let negint = self.and(isint, neg)?;
        let lim = self.fc(t, if t == ElemType::F64 { 170.0 } else { 34.0 });
        let small = self
            .b
            .f_ord_less_than_equal(self.bool_t, None, v, lim)
            .map_err(be)?;
        let nonneg = self.not(neg)?;
        let exact = self.and(isint, nonneg)?;
        let exact = self.and(exact, small)?;
        self.if_else(
            exact,
            |e| {
                let n = e.b.convert_f_to_u(u, None, v).map_err(be)?;
                let one = e.fc(t, 1.0);
                e.store(out, one)?;
                let k = e.local(u);
                let two = e.c_u32(2);
                let one_u = e.c_u32(1);
                let end = e.uadd(n, one_u)?;
                e.count_loop(k, two, end, one_u, |e, kv| {
                    let kf = e.b.convert_u_to_f(f, None, kv).map_err(be)?;
                    let acc = e.load(f, out)?;
                    let r = e.fop(t, BinOp::Mul, acc, kf)?;
                    e.store(out, r)
                })
            },
            |e| {
                let one = e.fc(t, 1.0);
                let z = e.fop(t, BinOp::Add, v, one)?;
                let half = e.fc(t, 0.5);
                let reflect = e.flt(z, half)?;
                let omz = e.fop(t, BinOp::Sub, one, z)?;
                let w = e.sel(t, reflect, omz, z)?;
                // Lanczos: Γ(w) = √(2π) t^(x+½) e^(-t) a, x = w-1, t = x+7.5.
                let x = e.fop(t, BinOp::Sub, w, one)?;
                let mut a = e.fc(t, LANCZOS[0]);
                for (i, g) in LANCZOS.iter().enumerate().skip(1) {
                    let gi = e.fc(t, *g);
                    let fi = e.fc(t, i as f64);
                    let d = e.fop(t, BinOp::Add, x, fi)?;
                    let q = e.fop(t, BinOp::Div, gi, d)?;
                    a = e.fop(t, BinOp::Add, a, q)?;
                }
                let tt = {
                    let c = e.fc(t, 7.5);
                    e.fop(t, BinOp::Add, x, c)?
                };
                let lt = e.flog(t, tt)?;
                let xh = e.fop(t, BinOp::Add, x, half)?;
                let p = e.fop(t, BinOp::Mul, xh, lt)?;
                let p = e.fop(t, BinOp::Sub, p, tt)?;
                let ex = e.fexp(t, p)?;
                let s2pi = e.fc(t, (2.0 * std::f64::consts::PI).sqrt());
                let g = e.fop(t, BinOp::Mul, s2pi, ex)?;
                let g = e.fop(t, BinOp::Mul, g, a)?;
                // Γ(z) = π / (sin(πz) Γ(1-z)) below ½.
                let pi = e.fc(t, std::f64::consts::PI);
                let pz = e.fop(t, BinOp::Mul, pi, z)?;
                let s = e.fsin(t, pz)?;
                let sg = e.fop(t, BinOp::Mul, s, g)?;
                let refl = e.fop(t, BinOp::Div, pi, sg)?;
                let r = e.sel(t, reflect, refl, g)?;
                e.store(out, r)
            },
        )?;
        let r = self.load(f, out)?;
        let nf = self.not_finite(t, r)?;
        let bad = self.or(nf, negint)?;
        self.raise(cx, bit, bad)?;
        Ok(r)
    }

    /// A dyadic scalar function of `a` and `b` (both of type `t`), giving `elem`.
    /// `circle` is the left argument of `○` when it is a literal.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn binary(
        &mut self,
        cx: &Cx,
        op: BinOp,
        t: ElemType,
        elem: ElemType,
        a: Word,
        b: Word,
        circle: Option<i64>,
        bit: Option<u32>,
    ) -> R<Word> {
        let bt = self.bool_t;
        if op.is_comparison() {
            return self.compare(op, t, a, b);
        }
        let float = t.is_float();
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul if float => {
                let r = self.binop(op, t, a, b)?;
                let bad = self.not_finite(t, r)?;
                self.raise(cx, bit, bad)?;
                Ok(r)
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul if t == ElemType::I64 => {
                let r = self.binop(op, t, a, b)?;
                let bad = self.overflow(op, a, b, r)?;
                self.raise(cx, bit, bad)?;
                Ok(r)
            }
            BinOp::Div if t == ElemType::F32 && self.float64 => {
                // In f64 and rounded once, where the device has f64: the correctly
                // rounded f32 quotient, as the reference's (lavapipe does not fuse the
                // refinement's multiply-add, and `⌈m÷g` showed an ulp).
                let w = ElemType::F64;
                let (a, b) = (self.convert(a, t, w)?, self.convert(b, t, w)?);
                let q = self.binary(cx, BinOp::Div, w, w, a, b, None, bit)?;
                let q = self.convert(q, w, t)?;
                let bad = self.not_finite(t, q)?;
                self.raise(cx, bit, bad)?;
                Ok(q)
            }
            BinOp::Div => {
                // One refinement of the device's quotient (Vulkan lets OpFDiv err by
                // 2.5 ulp; NVIDIA's 301÷7 is not 43) from its exact residual
                // (`div_refined`; f32 here only on a device without f64). A
                // dividend near the largest value is divided by 4 first and the
                // quotient multiplied back (both exact): q·b would leave the range
                // and the refinement give ¯∞ (`(⌊/⍬)÷3`).
                let aa = self.glsl(t, 4, &[a])?; // FAbs
                let near = self.fc(
                    t,
                    if t == ElemType::F64 {
                        2f64.powi(1020)
                    } else {
                        2f64.powi(124)
                    },
                );
                let large = self
                    .b
                    .f_ord_greater_than(self.bool_t, None, aa, near)
                    .map_err(be)?;
                let (quarter, one_s, four) = (self.fc(t, 0.25), self.fc(t, 1.0), self.fc(t, 4.0));
                let down = self.sel(t, large, quarter, one_s)?;
                let up = self.sel(t, large, four, one_s)?;
                let a_s = self.fop(t, BinOp::Mul, a, down)?;
                self.b
                    .decorate(a_s, rspirv::spirv::Decoration::NoContraction, []);
                let (q0, q1) = self.div_refined(t, a_s, b)?;
                // x÷0 leaves the first quotient (the refinement would give NaN).
                let zero0 = self.fc(t, 0.0);
                let bz0 = self.feq(b, zero0)?;
                let q = self.sel(t, bz0, q0, q1)?;
                let q = self.fop(t, BinOp::Mul, q, up)?;
                self.b
                    .decorate(q, rspirv::spirv::Decoration::NoContraction, []);
                // 0÷0 is 1; x÷0 a DOMAIN ERROR, and so is a quotient beyond the
                // type's range (`1e30÷1e¯30` in f32; its refinement gave NaN).
                let zero = self.fc(t, 0.0);
                let one = self.fc(t, 1.0);
                let bz = self.feq(b, zero)?;
                let az = self.feq(a, zero)?;
                let anz = self.not(az)?;
                let by_zero = self.and(bz, anz)?;
                let big = self.not_finite(t, q)?;
                let bnz = self.not(bz)?;
                let big = self.and(big, bnz)?;
                let bad = self.or(by_zero, big)?;
                self.raise(cx, bit, bad)?;
                let both = self.and(bz, az)?;
                self.sel(t, both, one, q)
            }
            BinOp::Residue => {
                // ⍵ - ⍺×⌊⍵÷⍺, with the sign of ⍺; 0|⍵ is ⍵.
                let zero = self.scalar(Scalar::I32(0).cast(t));
                let one = self.scalar(Scalar::I32(1).cast(t));
                let az = if float {
                    self.fcmp(t, BinOp::Equal, a, zero)?
                } else {
                    self.b.i_equal(bt, None, a, zero).map_err(be)?
                };
                let safe = self.sel(t, az, one, a)?;
                let ty = self.ty(t);
                let r = if float {
                    // f32 in f64 where the device has it, as the reference computes:
                    // in f32, (÷6)|0.5 rounds ⍵÷⍺ up to 3 and gives 0, not 0.16666666.
                    let w = if t == ElemType::F32 && self.float64 {
                        ElemType::F64
                    } else {
                        t
                    };
                    let (bw, aw) = (self.convert(b, t, w)?, self.convert(safe, t, w)?);
                    let q = self.fop(w, BinOp::Div, bw, aw)?;
                    let fq = self.glsl(w, FLOOR, &[q])?;
                    let m = self.fop(w, BinOp::Mul, aw, fq)?;
                    let r = self.fop(w, BinOp::Sub, bw, m)?;
                    // Rounded as the reference rounds: NVIDIA fused ⍵-⍺×q into one
                    // operation, whose exact residue of a huge ⍵ differed (176, not 0).
                    for id in [q, m, r] {
                        self.b
                            .decorate(id, rspirv::spirv::Decoration::NoContraction, []);
                    }
                    let r = if t == ElemType::F64 {
                        // Dyalog's tolerant residue, as the reference: a quotient
                        // within ⎕CT of an integer leaves 0 (`0.1|0.3`).
                        let tf = self.tolerant_floor(UnOp::Floor, q)?;
                        let integral = self.tolerant_eq(q, tf)?;
                        let z = self.scalar(Scalar::F64(0.0));
                        self.sel(w, integral, z, r)?
                    } else {
                        r
                    };
                    self.convert(r, w, t)?
                } else {
                    // On magnitudes, then the signs: lavapipe's OpSMod takes the
                    // dividend's sign and NVIDIA's 32-bit OpSRem acts unsigned, so
                    // only OpUMod of non-negative values is trusted.
                    let m = self.iabs(t, safe)?;
                    let bm = self.iabs(t, b)?;
                    let r0 = self.umod(t, bm, m)?;
                    let r0z = self.b.i_equal(bt, None, r0, zero).map_err(be)?;
                    let r0nz = self.not(r0z)?;
                    let bn = self.b.s_less_than(bt, None, b, zero).map_err(be)?;
                    let flip = self.and(bn, r0nz)?;
                    let mr = self.b.i_sub(ty, None, m, r0).map_err(be)?;
                    // b mod |a|, in [0, |a|).
                    let r1 = self.sel(t, flip, mr, r0)?;
                    let r1z = self.b.i_equal(bt, None, r1, zero).map_err(be)?;
                    let r1nz = self.not(r1z)?;
                    let an = self.b.s_less_than(bt, None, safe, zero).map_err(be)?;
                    let neg = self.and(an, r1nz)?;
                    let r1m = self.b.i_sub(ty, None, r1, m).map_err(be)?;
                    self.sel(t, neg, r1m, r1)?
                };
                let r = self.sel(t, az, b, r)?;
                self.convert(r, t, elem)
            }
            BinOp::Power => self.power(cx, t, a, b, bit),
            BinOp::Log => {
                let zero = self.fc(t, 0.0);
                let one = self.fc(t, 1.0);
                let an = self.fcmp(t, BinOp::LessEq, a, zero)?;
                let bn = self.fcmp(t, BinOp::LessEq, b, zero)?;
                let a1 = self.fcmp(t, BinOp::Equal, a, one)?;
                let b1 = self.fcmp(t, BinOp::Equal, b, one)?;
                let nb1 = self.not(b1)?;
                let base1 = self.and(a1, nb1)?;
                let bad = self.or(an, bn)?;
                let bad = self.or(bad, base1)?;
                self.raise(cx, bit, bad)?;
                if t == ElemType::F64 || self.float64 {
                    // f32 in f64 where the device has it, rounded once.
                    let sa = self.sel(t, an, one, a)?;
                    let sb = self.sel(t, bn, one, b)?;
                    let w = ElemType::F64;
                    let (sa, sb) = (self.convert(sa, t, w)?, self.convert(sb, t, w)?);
                    let (lb, la) = (self.log64(sb)?, self.log64(sa)?);
                    let r = self.binary(cx, BinOp::Div, w, w, lb, la, None, None)?;
                    let r = self.convert(r, w, t)?;
                    return self.sel(t, a1, one, r);
                }
                let (lb, la) = (self.glsl(F32, LOG, &[b])?, self.glsl(F32, LOG, &[a])?);
                let r = self.binary(cx, BinOp::Div, t, t, lb, la, None, None)?;
                self.sel(t, a1, one, r)
            }
            BinOp::SumFits => {
                // arrc_ir::scalar::sum_fits: h ≤ r>>32 < h + 2^32.
                let ty = self.ty(ElemType::I64);
                let c32 = self.c_u32(32);
                let top = self
                    .b
                    .shift_right_arithmetic(ty, None, a, c32)
                    .map_err(be)?;
                let two32 = self.scalar(Scalar::I64(1 << 32));
                let low = self.b.i_sub(ty, None, top, two32).map_err(be)?;
                let above = self.b.s_less_than_equal(bt, None, b, top).map_err(be)?;
                let below = self.b.s_less_than(bt, None, low, b).map_err(be)?;
                let ok = self.and(above, below)?;
                let bad = self.not(ok)?;
                self.raise(cx, bit, bad)?;
                Ok(a)
            }
            BinOp::ScanSumFits => {
                // The item before is a - b (wrapping); adding b to it overflowed?
                let ty = self.ty(ElemType::I64);
                let prev = self.b.i_sub(ty, None, a, b).map_err(be)?;
                let bad = self.overflow(BinOp::Add, prev, b, a)?;
                self.raise(cx, bit, bad)?;
                Ok(a)
            }
            BinOp::FitsOr | BinOp::Ordered | BinOp::Counts => {
                let zero = self.scalar(Scalar::I64(0));
                let bad = self.b.i_equal(bt, None, b, zero).map_err(be)?;
                self.raise(cx, bit, bad)?;
                if op == BinOp::Counts {
                    // A negative count counts 0 in the kernel that found it (a
                    // replicate's copies stay within its bound).
                    let ty = self.ty(ElemType::I64);
                    return self.b.select(ty, None, bad, zero, a).map_err(be);
                }
                Ok(a)
            }
            BinOp::Quot => {
                // Exact: b divides a. Only MIN ÷ ¯1 leaves 64 bits; a 0 divisor (never
                // given) divides by 1 rather than being undefined.
                let ty = self.ty(ElemType::I64);
                let (min, m1) = (
                    self.scalar(Scalar::I64(i64::MIN)),
                    self.scalar(Scalar::I64(-1)),
                );
                let a_min = self.b.i_equal(bt, None, a, min).map_err(be)?;
                let b_m1 = self.b.i_equal(bt, None, b, m1).map_err(be)?;
                let bad = self.and(a_min, b_m1)?;
                self.raise(cx, bit, bad)?;
                let (zero, one) = (self.scalar(Scalar::I64(0)), self.scalar(Scalar::I64(1)));
                let b0 = self.b.i_equal(bt, None, b, zero).map_err(be)?;
                let avoid = self.b.logical_or(bt, None, bad, b0).map_err(be)?;
                let d = self.b.select(ty, None, avoid, one, b).map_err(be)?;
                self.b.s_div(ty, None, a, d).map_err(be)
            }
            BinOp::Circle => self.circle(cx, t, a, b, circle, bit),
            BinOp::Binomial => self.binomial(cx, t, a, b, bit),
            BinOp::And | BinOp::Or if t == ElemType::Bool => self.binop(op, t, a, b),
            BinOp::And | BinOp::Or => self.gcd_lcm(cx, op, t, a, b, bit),
            BinOp::Nand | BinOp::Nor => {
                let (a, b) = if t == ElemType::Bool {
                    (a, b)
                } else {
                    self.raise_either(cx, bit, a, b, |e, x| {
                        let z = e.scalar(Scalar::I32(0).cast(t));
                        let o = e.scalar(Scalar::I32(1).cast(t));
                        let x0 = e.b.i_equal(e.bool_t, None, x, z).map_err(be)?;
                        let x1 = e.b.i_equal(e.bool_t, None, x, o).map_err(be)?;
                        let ok = e.or(x0, x1)?;
                        e.not(ok)
                    })?;
                    (
                        self.convert(a, t, ElemType::I32)?,
                        self.convert(b, t, ElemType::I32)?,
                    )
                };
                let inner = if op == BinOp::Nand {
                    BinOp::And
                } else {
                    BinOp::Or
                };
                let r = self.binop(inner, ElemType::Bool, a, b)?;
                let one = self.scalar(Scalar::Bool(true));
                let ty = self.ty(ElemType::Bool);
                self.b.i_sub(ty, None, one, r).map_err(be)
            }
            _ => self.binop(op, t, a, b),
        }
    }

    /// Whether `r = a op b` (i64) overflowed.
    pub(super) fn overflow(&mut self, op: BinOp, a: Word, b: Word, r: Word) -> R<Word> {
        let ty = self.ty(ElemType::I64);
        let bt = self.bool_t;
        let zero = self.scalar(Scalar::I64(0));
        match op {
            BinOp::Add | BinOp::Sub => {
                // Add: a and b agree in sign and r does not; sub: a and b differ and r
                // differs from a.
                let ar = self.b.bitwise_xor(ty, None, a, r).map_err(be)?;
                let other = if op == BinOp::Add {
                    self.b.bitwise_xor(ty, None, b, r).map_err(be)?
                } else {
                    self.b.bitwise_xor(ty, None, a, b).map_err(be)?
                };
                let both = self.b.bitwise_and(ty, None, ar, other).map_err(be)?;
                self.b.s_less_than(bt, None, both, zero).map_err(be)
            }
            _ => {
                // The full 128-bit product's high word is not the sign of its low
                // word, r (a 64-bit division here was slow, and a kernel of many
                // such checks came out wrong on NVIDIA's compiler).
                let pair = self.b.type_struct([ty, ty]);
                let p = self.b.s_mul_extended(pair, None, a, b).map_err(be)?;
                let hi = self.b.composite_extract(ty, None, p, [1]).map_err(be)?;
                let sh = self.scalar(Scalar::I64(63));
                let sign = self.b.shift_right_arithmetic(ty, None, r, sh).map_err(be)?;
                self.b.i_not_equal(bt, None, hi, sign).map_err(be)
            }
        }
    }

    /// `a*b` in f32 or f64: repeated squaring for integer exponents, otherwise `pow`
    /// (f32) or `e^(b·ln|a|)` (f64);
    /// a negative base needs an integer exponent.
    fn power(&mut self, cx: &Cx, t: ElemType, a: Word, b: Word, bit: Option<u32>) -> R<Word> {
        if let Some(r) = self.via_f64(cx, t, &[a, b], bit, |e, w| {
            e.power(cx, ElemType::F64, w[0], w[1], bit)
        })? {
            return Ok(r);
        }
        let f = self.ty(t);
        let u = self.u32_t;
        let out = self.local(f);
        let zero = self.fc(t, 0.0);
        let one = self.fc(t, 1.0);
        let aa = self.glsl(t, 4, &[a])?; // FAbs
        let ab = self.glsl(t, 4, &[b])?;
        let fl = self.glsl(t, FLOOR, &[b])?;
        let isint = self.feq(fl, b)?;
        // Integral exponents below 2^24 (f32) or 2^32 (f64) by repeated squaring.
        let lim = self.fc(
            t,
            if t == ElemType::F64 {
                4294967295.0
            } else {
                16777216.0
            },
        );
        let small = self.flt(ab, lim)?;
        let by_squares = self.and(isint, small)?;
        self.if_else(
            by_squares,
            |e| {
                let n = e.local(u);
                let base = e.local(f);
                let nv = e.b.convert_f_to_u(u, None, ab).map_err(be)?;
                e.store(n, nv)?;
                e.store(base, aa)?;
                e.store(out, one)?;
                e.while_loop(
                    |e| {
                        let nv = e.load(u, n)?;
                        let z = e.c_u32(0);
                        e.ult(z, nv)
                    },
                    |e| {
                        let nv = e.load(u, n)?;
                        let one_u = e.c_u32(1);
                        let low = e.b.bitwise_and(u, None, nv, one_u).map_err(be)?;
                        let odd = e.b.i_equal(e.bool_t, None, low, one_u).map_err(be)?;
                        e.if_then(odd, |e| {
                            let r = e.load(f, out)?;
                            let bv = e.load(f, base)?;
                            let m = e.fop(t, BinOp::Mul, r, bv)?;
                            e.store(out, m)
                        })?;
                        let bv = e.load(f, base)?;
                        let sq = e.fop(t, BinOp::Mul, bv, bv)?;
                        e.store(base, sq)?;
                        let half = e.b.shift_right_logical(u, None, nv, one_u).map_err(be)?;
                        e.store(n, half)
                    },
                    |_| Ok(()),
                )?;
                let reciprocal = |e: &mut Self| -> R<()> {
                    let neg = e.flt(b, zero)?;
                    e.if_then(neg, |e| {
                        let r = e.load(f, out)?;
                        let q = e.fop(t, BinOp::Div, one, r)?;
                        e.store(out, q)
                    })
                };
                if t != ElemType::F64 {
                    return reciprocal(e);
                }
                // In f64 the squares are exact where |a| is an integer and the
                // power below 2^53 (`3*33`); elsewhere each squaring doubles the
                // error before it (`1.001*1000` erred by 1000 ulps), and a power
                // past f64 whose reciprocal is a subnormal (`2*¯1070`) would be 0:
                // `pow64` instead (b < 0 included).
                let r = e.load(f, out)?;
                let fla = e.glsl(t, FLOOR, &[aa])?;
                let int_a = e.feq(fla, aa)?;
                let below = e.fc(t, 9007199254740992.0);
                let small_r = e.flt(r, below)?;
                let exact = e.and(int_a, small_r)?;
                e.if_else(exact, reciprocal, |e| {
                    let p = e.pow64(aa, b)?;
                    e.store(out, p)
                })
            },
            |e| {
                // pow(|a|, b); pow(0, b) is 0 for b > 0 and ∞ (a DOMAIN ERROR below)
                // for b < 0 (b is not an integer here).
                let p = if t == ElemType::F64 {
                    // e^(b·ln|a|); |a| = 0 is replaced below.
                    let one = e.fc(t, 1.0);
                    let az = e.feq(aa, zero)?;
                    let sa = e.sel(t, az, one, aa)?;
                    e.pow64(sa, b)?
                } else {
                    e.glsl(F32, POW, &[aa, b])?
                };
                let az = e.feq(aa, zero)?;
                let bneg = e.flt(b, zero)?;
                let inf = e.fc(t, f64::INFINITY);
                let at0 = e.sel(t, bneg, inf, zero)?;
                let r = e.sel(t, az, at0, p)?;
                e.store(out, r)
            },
        )?;
        // The sign: a negative base to an odd power is negative; to a fractional power
        // it has no real result.
        let r = self.load(f, out)?;
        let aneg = self.flt(a, zero)?;
        let half = self.fc(t, 0.5);
        let hb = self.fop(t, BinOp::Mul, b, half)?;
        let hfl = self.glsl(t, FLOOR, &[hb])?;
        let even = self.feq(hfl, hb)?;
        let odd = self.not(even)?;
        let flip = self.and(aneg, odd)?;
        let nr = self.b.f_negate(f, None, r).map_err(be)?;
        let r = self.sel(t, flip, nr, r)?;
        let frac = self.not(isint)?;
        let bad1 = self.and(aneg, frac)?;
        let nf = self.not_finite(t, r)?;
        let bad = self.or(bad1, nf)?;
        self.raise(cx, bit, bad)?;
        Ok(r)
    }

    /// `a∨b` (greatest common divisor) and `a∧b` (least common multiple) of integers,
    /// as i64; of floats with integral values (others are a DOMAIN ERROR), in their
    /// type.
    fn gcd_lcm(
        &mut self,
        cx: &Cx,
        op: BinOp,
        t: ElemType,
        a: Word,
        b: Word,
        bit: Option<u32>,
    ) -> R<Word> {
        if self.exact32 {
            // f32 in f64, rounded once (as the reference computes).
            if let Some(r) = self.via_f64(cx, t, &[a, b], bit, |e, w| {
                e.gcd_lcm(cx, op, ElemType::F64, w[0], w[1], bit)
            })? {
                return Ok(r);
            }
        }
        let i = ElemType::I64;
        let ty = self.ty(i);
        let fb = b;
        let (a, b) = if t.is_float() {
            // Integers of 64 bits only: beyond, the conversion has no value.
            self.raise_either(cx, bit, a, b, |e, v| {
                let fl = e.glsl(t, FLOOR, &[v])?;
                let same = e.feq(fl, v)?;
                let av = e.glsl(t, 4, &[v])?; // FAbs
                let lim = e.fc(t, 9.2e18);
                let small = e.flt(av, lim)?;
                let ok = e.and(same, small)?;
                e.not(ok)
            })?;
            // Out-of-range values (which raised) convert as 0.
            let zero = self.fc(t, 0.0);
            let lim = self.fc(t, 9.2e18);
            let safe = |e: &mut Self, v: Word| -> R<Word> {
                let av = e.glsl(t, 4, &[v])?;
                let small = e.flt(av, lim)?;
                e.sel(t, small, v, zero)
            };
            (safe(self, a)?, safe(self, b)?)
        } else {
            (a, b)
        };
        let a = self.convert(a, t, i)?;
        let b = self.convert(b, t, i)?;
        // Euclid on the magnitudes as unsigned words: |¯9223372036854775808| is
        // 2^63 there (a signed remainder of its wrapped magnitude came out negative).
        let ut = self.b.type_int(64, 0);
        let x = self.local(ut);
        let y = self.local(ut);
        let ax = self.iabs(i, a)?;
        let by = self.iabs(i, b)?;
        let ax = self.b.bitcast(ut, None, ax).map_err(be)?;
        let by = self.b.bitcast(ut, None, by).map_err(be)?;
        self.store(x, ax)?;
        self.store(y, by)?;
        let zero = self.scalar(Scalar::I64(0));
        let uzero = self.b.bitcast(ut, None, zero).map_err(be)?;
        self.while_loop(
            |e| {
                let yv = e.load(ut, y)?;
                e.b.i_not_equal(e.bool_t, None, yv, uzero).map_err(be)
            },
            |e| {
                let xv = e.load(ut, x)?;
                let yv = e.load(ut, y)?;
                let r = e.b.u_mod(ut, None, xv, yv).map_err(be)?;
                e.store(x, yv)?;
                e.store(y, r)
            },
            |_| Ok(()),
        )?;
        let g = self.load(ut, x)?;
        let g = self.b.bitcast(ty, None, g).map_err(be)?;
        // 2^63 (of ¯9223372036854775808 with itself or 0) does not fit: the gcd,
        // and the lcm of two such numbers.
        let wide = self.b.s_less_than(self.bool_t, None, g, zero).map_err(be)?;
        let wide = if op == BinOp::Or {
            wide
        } else {
            let an = self.b.i_not_equal(self.bool_t, None, a, zero).map_err(be)?;
            let bn = self.b.i_not_equal(self.bool_t, None, b, zero).map_err(be)?;
            let both = self.and(an, bn)?;
            self.and(wide, both)?
        };
        // Inside a scan item's steps a gcd of 2^63 goes on as its bits, and an lcm
        // that leaves i64 is noted (`ScanSteps`).
        if !(op == BinOp::Or && matches!(self.scan_steps, Some(super::ScanSteps::Gcd))) {
            self.raise_lcm(cx, bit, wide)?;
        }
        if op == BinOp::Or {
            let rt = if t.is_float() { t } else { i };
            return self.convert(g, i, rt);
        }
        let gz = self.b.i_equal(self.bool_t, None, g, zero).map_err(be)?;
        let one = self.scalar(Scalar::I64(1));
        let safe = self.sel(i, gz, one, g)?;
        let q = self.b.s_div(ty, None, a, safe).map_err(be)?;
        if t.is_float() {
            // (a÷g)×b in the floats' type, as the reference computes it.
            let qf = self.convert(q, i, t)?;
            let m = self.binop(BinOp::Mul, t, qf, fb)?;
            let z = self.scalar(Scalar::I32(0).cast(t));
            return self.sel(t, gz, z, m);
        }
        let m = self.b.i_mul(ty, None, q, b).map_err(be)?;
        let bad = self.overflow(BinOp::Mul, q, b, m)?;
        self.raise_lcm(cx, bit, bad)?;
        self.sel(i, gz, zero, m)
    }

    /// Raises `bit` where `bad` holds, or, inside a scan item's lcm steps
    /// (`ScanSteps::Lcm`), notes it in that flag.
    fn raise_lcm(&mut self, cx: &Cx, bit: Option<u32>, bad: Word) -> R<()> {
        match self.scan_steps {
            Some(super::ScanSteps::Lcm(flag)) if bit.is_some() => {
                let bt = self.bool_t;
                let cur = self.load(bt, flag)?;
                let now = self.or(cur, bad)?;
                self.store(flag, now)
            }
            _ => self.raise(cx, bit, bad),
        }
    }
}
