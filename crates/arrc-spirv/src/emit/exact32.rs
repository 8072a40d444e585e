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
/// 2^-100: f32 sums and differences of values that are 0 or at least this large
/// are multiples of 2^-123, never subnormal (`guarded_expr`).
const TINY: u32 = 0x0d80_0000;

impl Emitter {
    /// f32 `v` as an f64, exactly, subnormals too: OpFConvert where `v` is normal
    /// (or 0, infinite, NaN), the mantissa times 2^-149 where it is subnormal.
    /// Known normal (`clean32`), or checked (`guard`), it is OpFConvert alone.
    pub(super) fn widen32(&mut self, v: Word) -> R<Word> {
        self.uses_f64 = true;
        let (u, bt) = (self.u32_t, self.bool_t);
        let dt = self.ty(ElemType::F64);
        if self.clean32 || self.guard.is_some() {
            if self.guard.is_some() {
                let mag = self.mag32(v)?;
                let sub = self.below32(mag, LEAST_NORMAL as u32)?;
                self.suspect(sub)?;
            }
            let v = self.flushed(v)?;
            let r = self.b.f_convert(dt, None, v).map_err(be)?;
            return Ok(self.native(r));
        }
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

/// The guarded fast path: f32 computed natively where no subnormal can be met.
///
/// A device that flushes f32 subnormals gives IEEE f32 results wherever no operand
/// and no exact result is subnormal; computing every f32 instruction in f64 from
/// the bits (above) costs several conversions an operation (on the H200 `+/(x-y)*2`
/// took 149 µs for 91 at 2^26). So an expression of plain values is computed first
/// with native f32 `+ - ×` and OpFConvert, each checked (`suspect`): an operand
/// that is subnormal, or for `+ -` nonzero below 2^-100 (`TINY`), or a product
/// flushed to 0 from nonzero factors. Where a check fails, the invocation computes
/// the expression again the exact way; errors raised on the fast path count only
/// where no check has failed. A scan's or a fold's widenings of values held in
/// registers (`widen_all`) branch on the values instead: any subnormal among them,
/// or none.
impl Emitter {
    /// `e` with the guarded fast path, where it applies: in an `exact32` kernel, a
    /// tree of plain values (`guardable`) with f32 arithmetic to gain on.
    pub(super) fn guarded_expr(&mut self, cx: &Cx, e: &KExpr, ix: Ix) -> R<Word> {
        let bt = self.bool_t;
        let no = self.b.constant_false(bt);
        let var = self.local_false();
        self.store(var, no)?;
        self.guard = Some(var);
        let fast = self.expr_inner(cx, e, ix);
        self.guard = None;
        let fast = fast?;
        let t = self.ty(e.elem());
        let out = self.local(t);
        self.store(out, fast)?;
        let redo = self.load(bt, var)?;
        self.exact_only = true;
        let slow = self.if_then(redo, |em| {
            let v = em.expr_inner(cx, e, ix)?;
            em.store(out, v)
        });
        self.exact_only = false;
        slow?;
        self.load(t, out)
    }

    /// Or-s `cond` into the guard's flag (none outside a guarded expression).
    pub(super) fn suspect(&mut self, cond: Word) -> R<()> {
        let Some(var) = self.guard else {
            return Ok(());
        };
        let bt = self.bool_t;
        let cur = self.load(bt, var)?;
        let now = self.or(cur, cond)?;
        self.store(var, now)
    }

    /// Whether the guard's checks have failed so far (`raise` holds back the
    /// fast path's errors then).
    pub(super) fn suspected(&mut self) -> R<Option<Word>> {
        let Some(var) = self.guard else {
            return Ok(None);
        };
        let bt = self.bool_t;
        self.load(bt, var).map(Some)
    }

    /// f32 `v`, or where flushing is simulated (`flush_sim`) and `v` is subnormal,
    /// 0 of its sign.
    pub(super) fn flushed(&mut self, v: Word) -> R<Word> {
        if !self.flush_sim {
            return Ok(v);
        }
        let u = self.u32_t;
        let ft = self.ty(ElemType::F32);
        let mag = self.mag32(v)?;
        let sub = self.below32(mag, LEAST_NORMAL as u32)?;
        let bits = self.b.bitcast(u, None, v).map_err(be)?;
        let sign = self.c_u32(SIGN as u32);
        let s = self.b.bitwise_and(u, None, bits, sign).map_err(be)?;
        let zero = self.b.bitcast(ft, None, s).map_err(be)?;
        self.b.select(ft, None, sub, zero, v).map_err(be)
    }

    /// The magnitude bits of f32 `v`, as a u32.
    fn mag32(&mut self, v: Word) -> R<Word> {
        let u = self.u32_t;
        let bits = self.b.bitcast(u, None, v).map_err(be)?;
        let mask = self.c_u32(MAGNITUDE as u32);
        self.b.bitwise_and(u, None, bits, mask).map_err(be)
    }

    /// Whether magnitude bits `mag` are nonzero and below `limit`'s.
    fn below32(&mut self, mag: Word, limit: u32) -> R<Word> {
        let u = self.u32_t;
        let one = self.c_u32(1);
        let m1 = self.b.i_sub(u, None, mag, one).map_err(be)?;
        let lim = self.c_u32(limit - 1);
        self.ult(m1, lim)
    }

    /// A native f32 instruction's result, allowed by the module check (`flush.rs`)
    /// because a guard stands over it, and rounded on its own.
    pub(super) fn native(&mut self, r: Word) -> Word {
        self.b
            .decorate(r, rspirv::spirv::Decoration::NoContraction, []);
        self.guarded.insert(r);
        r
    }

    /// `a op c` (`+ - ×`) of f32 on the guarded fast path, with its checks.
    pub(super) fn guarded_binop(&mut self, op: BinOp, a: Word, c: Word) -> R<Word> {
        let ft = self.ty(ElemType::F32);
        let (fa, fc) = (self.flushed(a)?, self.flushed(c)?);
        let r = match op {
            BinOp::Add => self.b.f_add(ft, None, fa, fc),
            BinOp::Sub => self.b.f_sub(ft, None, fa, fc),
            BinOp::Mul => self.b.f_mul(ft, None, fa, fc),
            _ => return Err(SpirvError::Build(format!("{op:?} has no guarded form"))),
        }
        .map_err(be)?;
        let r = self.native(r);
        let r = self.flushed(r)?;
        let (ma, mc) = (self.mag32(a)?, self.mag32(c)?);
        // The smaller magnitude, minus one: below 2^-100's bits if either operand is
        // tiny and nonzero.
        let u = self.u32_t;
        let one = self.c_u32(1);
        let (a1, c1) = (
            self.b.i_sub(u, None, ma, one).map_err(be)?,
            self.b.i_sub(u, None, mc, one).map_err(be)?,
        );
        let least = self
            .b
            .ext_inst(
                u,
                None,
                self.glsl,
                UMIN,
                [Operand::IdRef(a1), Operand::IdRef(c1)],
            )
            .map_err(be)?;
        let tiny = self.c_u32(TINY - 1);
        let mut bad = self.ult(least, tiny)?;
        if op == BinOp::Mul {
            // A product flushed to 0 from nonzero factors: the least magnitude is
            // nonzero (its `-1` did not wrap) and the product's is 0.
            let mr = self.mag32(r)?;
            let zero = self.c_u32(0);
            let rz = self.b.i_equal(self.bool_t, None, mr, zero).map_err(be)?;
            let wrapped = self.c_u32(u32::MAX);
            let nz = self
                .b
                .i_not_equal(self.bool_t, None, least, wrapped)
                .map_err(be)?;
            let under = self.and(rz, nz)?;
            bad = self.or(bad, under)?;
        }
        self.suspect(bad)?;
        Ok(r)
    }

    /// f32 `vals` widened to f64 (exactly): where the device may flush, in a
    /// branch on whether any of them is subnormal (from the bits: the smallest
    /// magnitude minus one), OpFConvert alone where none is.
    pub(super) fn widen_all(&mut self, vals: &[Word]) -> R<Vec<Word>> {
        if vals.len() < 2 || !self.exact32 || self.clean32 || self.guard.is_some() {
            return vals
                .iter()
                .map(|&v| self.convert(v, ElemType::F32, ElemType::F64))
                .collect();
        }
        let any = self.any_subnormal(vals)?;
        let dt = self.ty(ElemType::F64);
        let vars: Vec<Word> = vals.iter().map(|_| self.local(dt)).collect();
        self.if_else(
            any,
            |e| {
                for (&v, &var) in vals.iter().zip(&vars) {
                    let w = e.widen32(v)?;
                    e.store(var, w)?;
                }
                Ok(())
            },
            |e| {
                let wide = e.widen_normal(vals)?;
                wide.iter()
                    .zip(&vars)
                    .try_for_each(|(&w, &var)| e.store(var, w))
            },
        )?;
        vars.iter().map(|&var| self.load(dt, var)).collect()
    }

    /// f32 `vals` known to hold no subnormal widened to f64 by OpFConvert alone
    /// (`clean32` for them, as it was after).
    pub(super) fn widen_normal(&mut self, vals: &[Word]) -> R<Vec<Word>> {
        let was = std::mem::replace(&mut self.clean32, true);
        let wide = vals.iter().map(|&v| self.widen32(v)).collect();
        self.clean32 = was;
        wide
    }
}

impl Emitter {
    /// Whether none of the f32 values in function variables `vars` is subnormal in
    /// this subgroup (a vote, the same in every invocation of the subgroup).
    pub(super) fn none_subnormal(&mut self, vars: &[Word]) -> R<Word> {
        let ft = self.ty(ElemType::F32);
        let vals = vars
            .iter()
            .map(|&var| self.load(ft, var))
            .collect::<R<Vec<_>>>()?;
        let mine = self.any_subnormal(&vals)?;
        let sg = self.c_u32(SCOPE_SUBGROUP);
        self.uses_vote = true;
        let any = self
            .b
            .group_non_uniform_any(self.bool_t, None, sg, mine)
            .map_err(be)?;
        self.not(any)
    }
}

impl Emitter {
    /// Whether any of the f32 `vals` is subnormal: the least magnitude's bits less
    /// one (0 wraps to the largest) below the least normal's less one.
    fn any_subnormal(&mut self, vals: &[Word]) -> R<Word> {
        let most = self.c_u32(u32::MAX);
        let least = self.least_magnitude(vals, most)?;
        self.subnormal_least(least)
    }

    /// `least` lowered to the least of the f32 `vals`' magnitude bits less one (0
    /// wraps to the largest): a running test for subnormals, checked at the end by
    /// [`Self::subnormal_least`] (`u32::MAX` to start).
    pub(super) fn least_magnitude(&mut self, vals: &[Word], mut least: Word) -> R<Word> {
        let u = self.u32_t;
        let one = self.c_u32(1);
        for &v in vals {
            let m = self.mag32(v)?;
            let m1 = self.b.i_sub(u, None, m, one).map_err(be)?;
            let ops = [Operand::IdRef(least), Operand::IdRef(m1)];
            least = self.b.ext_inst(u, None, self.glsl, UMIN, ops).map_err(be)?;
        }
        Ok(least)
    }

    /// Whether a [`Self::least_magnitude`] is a subnormal's.
    pub(super) fn subnormal_least(&mut self, least: Word) -> R<Word> {
        let lim = self.c_u32(LEAST_NORMAL as u32 - 1);
        self.ult(least, lim)
    }
}

/// GLSL.std.450 UMin.
const UMIN: u32 = 38;

/// Whether `e` may take the guarded fast path (`guarded_expr`): loads, constants,
/// indices, casts, scalar functions, choices and failures only (evaluated twice
/// where a check fails, with nothing else to repeat), with some f32 arithmetic or
/// widening to gain on.
pub(super) fn guardable(e: &KExpr) -> bool {
    fn walk(e: &KExpr, gain: &mut bool) -> bool {
        match e {
            KExpr::Load { .. } | KExpr::Iota { .. } | KExpr::Const(_) | KExpr::Fail { .. } => true,
            KExpr::Cast { to, arg } => {
                *gain |= arg.elem() == ElemType::F32 && *to == ElemType::F64;
                walk(arg, gain)
            }
            KExpr::Unary { arg, .. } => {
                *gain |= arg.elem() == ElemType::F32;
                walk(arg, gain)
            }
            KExpr::Binary { op, lhs, rhs, .. } => {
                *gain |= lhs.elem() == ElemType::F32
                    && !op.is_comparison()
                    && !matches!(op, BinOp::Max | BinOp::Min);
                walk(lhs, gain) && walk(rhs, gain)
            }
            KExpr::Select { then, els, .. } => walk(then, gain) && walk(els, gain),
            KExpr::If { cond, then, els } => {
                walk(cond, gain) && walk(then, gain) && walk(els, gain)
            }
            _ => false,
        }
    }
    let mut gain = false;
    walk(e, &mut gain) && gain
}
