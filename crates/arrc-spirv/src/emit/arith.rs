//! Arithmetic on SPIR-V words: unsigned index helpers, comparisons (f32 by their
//! ordered bits or, against a normal constant, natively; f64 tolerant; an i32
//! converted to compare with a float constant as integers), the binary operations
//! and subgroup collectives of every element type (f32 in f64 where the device may
//! flush its subnormals), and conversions between element types.

use super::*;

impl Emitter {
    pub(super) fn ult(&mut self, a: Word, b: Word) -> R<Word> {
        self.b.u_less_than(self.bool_t, None, a, b).map_err(be)
    }

    pub(super) fn uadd(&mut self, a: Word, b: Word) -> R<Word> {
        self.b.i_add(self.u32_t, None, a, b).map_err(be)
    }

    pub(super) fn umul(&mut self, a: Word, b: Word) -> R<Word> {
        self.b.i_mul(self.u32_t, None, a, b).map_err(be)
    }

    /// `⌈a÷b` of unsigned words (`b` at least 1).
    pub(super) fn ceil_div(&mut self, a: Word, b: Word) -> R<Word> {
        let one = self.c_u32(1);
        let bm1 = self.b.i_sub(self.u32_t, None, b, one).map_err(be)?;
        let up = self.uadd(a, bm1)?;
        self.b.u_div(self.u32_t, None, up, b).map_err(be)
    }

    /// A comparison of two values of type `t`, as a boolean (i32 0 or 1).
    pub(super) fn compare(&mut self, op: BinOp, t: ElemType, a: Word, c: Word) -> R<Word> {
        let bt = self.bool_t;
        let float = t.is_float();
        if t == ElemType::F64 {
            return self.tolerant_compare(op, a, c);
        }
        // Against an f32 constant that is neither 0 nor subnormal, a float
        // comparison is exact even where the device flushes subnormals: a flushed
        // operand (±0) lies on the same side of the constant as the subnormal did,
        // and equals it no more. One instruction, where the ordered bits take seven
        // (a compaction's mask `x>0.5`, on every element).
        let normal = |e: &mut Self, w: Word| {
            e.f32_const(w)
                .is_some_and(|v| v.is_normal() || v.is_infinite())
        };
        let native = t == ElemType::F32 && (normal(self, a) || normal(self, c));
        // (As NVIDIA's would, where flushing is simulated.)
        let (a, c) = if native {
            (self.flushed(a)?, self.flushed(c)?)
        } else {
            (a, c)
        };
        if t == ElemType::F32 && !native {
            // Exact comparisons of f32 by their ordered bits (-0 as 0): NVIDIA flushes
            // f32 subnormals in float comparisons (`1e¯40=0` was 1 there).
            let (_, x) = self.ordered_bits(t, a)?;
            let (_, y) = self.ordered_bits(t, c)?;
            let b = &mut self.b;
            let r = match op {
                BinOp::Less => b.u_less_than(bt, None, x, y),
                BinOp::LessEq => b.u_less_than_equal(bt, None, x, y),
                BinOp::Equal => b.i_equal(bt, None, x, y),
                BinOp::GreaterEq => b.u_greater_than_equal(bt, None, x, y),
                BinOp::Greater => b.u_greater_than(bt, None, x, y),
                BinOp::NotEqual => b.i_not_equal(bt, None, x, y),
                _ => {
                    return Err(SpirvError::Build(format!(
                        "{} is not a comparison",
                        op.glyph()
                    )))
                }
            }
            .map_err(be)?;
            return self.bool_word(r);
        }
        let b = &mut self.b;
        let r = match (op, float) {
            (BinOp::Less, false) => b.s_less_than(bt, None, a, c),
            (BinOp::Less, true) => b.f_ord_less_than(bt, None, a, c),
            (BinOp::LessEq, false) => b.s_less_than_equal(bt, None, a, c),
            (BinOp::LessEq, true) => b.f_ord_less_than_equal(bt, None, a, c),
            (BinOp::Equal, false) => b.i_equal(bt, None, a, c),
            (BinOp::Equal, true) => b.f_ord_equal(bt, None, a, c),
            (BinOp::GreaterEq, false) => b.s_greater_than_equal(bt, None, a, c),
            (BinOp::GreaterEq, true) => b.f_ord_greater_than_equal(bt, None, a, c),
            (BinOp::Greater, false) => b.s_greater_than(bt, None, a, c),
            (BinOp::Greater, true) => b.f_ord_greater_than(bt, None, a, c),
            (BinOp::NotEqual, false) => b.i_not_equal(bt, None, a, c),
            (BinOp::NotEqual, true) => b.f_unord_not_equal(bt, None, a, c),
            _ => {
                return Err(SpirvError::Build(format!(
                    "{} is not a comparison",
                    op.glyph()
                )))
            }
        }
        .map_err(be)?;
        if native {
            // Exact (above): `flush.rs` need not refuse it.
            self.guarded.insert(r);
        }
        self.bool_word(r)
    }

    /// A SPIR-V boolean as an APL boolean (an i32 word, 0 or 1).
    pub(super) fn bool_word(&mut self, r: Word) -> R<Word> {
        let it = self.ty(ElemType::Bool);
        let (one, zero) = (
            self.scalar(Scalar::Bool(true)),
            self.scalar(Scalar::Bool(false)),
        );
        self.b.select(it, None, r, one, zero).map_err(be)
    }

    /// A comparison of f64s within ⎕CT: `x<y` is `(x<y) ∧ x≠y` tolerantly, and so on.
    pub(super) fn tolerant_compare(&mut self, op: BinOp, a: Word, c: Word) -> R<Word> {
        let bt = self.bool_t;
        let eq = self.tolerant_eq(a, c)?;
        let neq = self.b.logical_not(bt, None, eq).map_err(be)?;
        let r = match op {
            BinOp::Equal => eq,
            BinOp::NotEqual => neq,
            BinOp::Less | BinOp::Greater => {
                let strict = if op == BinOp::Less {
                    self.b.f_ord_less_than(bt, None, a, c)
                } else {
                    self.b.f_ord_greater_than(bt, None, a, c)
                }
                .map_err(be)?;
                self.b.logical_and(bt, None, strict, neq).map_err(be)?
            }
            _ => {
                let strict = if op == BinOp::LessEq {
                    self.b.f_ord_less_than(bt, None, a, c)
                } else {
                    self.b.f_ord_greater_than(bt, None, a, c)
                }
                .map_err(be)?;
                self.b.logical_or(bt, None, strict, eq).map_err(be)?
            }
        };
        self.bool_word(r)
    }

    pub(super) fn binop(&mut self, op: BinOp, t: ElemType, a: Word, c: Word) -> R<Word> {
        // On booleans (0 and 1), and is the minimum and or the maximum.
        let op = match (op, t) {
            (BinOp::And, ElemType::Bool) => BinOp::Min,
            (BinOp::Or, ElemType::Bool) => BinOp::Max,
            (op, _) => op,
        };
        if !op.on_gpu() {
            return Err(SpirvError::Build(format!(
                "{} has no device form yet",
                op.glyph()
            )));
        }
        if self.exact32 && t == ElemType::F32 {
            return match op {
                BinOp::Max | BinOp::Min => self.max_min32(op == BinOp::Max, a, c),
                BinOp::Add | BinOp::Sub | BinOp::Mul if self.guard.is_some() => {
                    self.guarded_binop(op, a, c)
                }
                _ => self.in_f64(&[a, c], |e, w| e.binop(op, ElemType::F64, w[0], w[1])),
            };
        }
        let ty = self.ty(t);
        let float = t.is_float();
        // NVIDIA's driver (580.159) multiplies a 64-bit integer by the constant 2^31
        // as if it were ¯2^31 (`s←,6 ⋄ s×2147483648` gave ¯12884901888; a shift by
        // 31 too): that constant goes in as a value it cannot fold (2^31 unless push
        // constant 0 is 2^32-1).
        let (a, c) = if (op, t) == (BinOp::Mul, ElemType::I64) {
            let two31 = self.consts.get(&(ty, 1u64 << 31)).copied();
            let hide = |e: &mut Self, v: Word| -> R<Word> {
                if Some(v) != two31 {
                    return Ok(v);
                }
                let never = e.c_u32(u32::MAX);
                let no = e.b.i_equal(e.bool_t, None, e.opaque, never).map_err(be)?;
                let zero = e.scalar(Scalar::I64(0));
                e.b.select(ty, None, no, zero, v).map_err(be)
            };
            (hide(self, a)?, hide(self, c)?)
        } else {
            (a, c)
        };
        let b = &mut self.b;
        let r = match (op, float) {
            (BinOp::Add, false) => b.i_add(ty, None, a, c),
            (BinOp::Add, true) => b.f_add(ty, None, a, c),
            (BinOp::Sub, false) => b.i_sub(ty, None, a, c),
            (BinOp::Sub, true) => b.f_sub(ty, None, a, c),
            (BinOp::Mul, false) => b.i_mul(ty, None, a, c),
            (BinOp::Mul, true) => b.f_mul(ty, None, a, c),
            (BinOp::Div, _) => b.f_div(ty, None, a, c),
            (BinOp::Max, _) | (BinOp::Min, _) => {
                let bt = self.bool_t;
                let gt = match (op, float) {
                    (BinOp::Max, false) => b.s_greater_than(bt, None, a, c),
                    (BinOp::Max, true) => b.f_ord_greater_than(bt, None, a, c),
                    (_, false) => b.s_less_than(bt, None, a, c),
                    (_, true) => b.f_ord_less_than(bt, None, a, c),
                }
                .map_err(be)?;
                b.select(ty, None, gt, a, c)
            }
            _ => {
                return Err(SpirvError::Build(format!(
                    "{} has no device form yet",
                    op.glyph()
                )))
            }
        };
        r.map_err(be)
    }

    /// A subgroup collective of `op` over `v`.
    pub(super) fn group(
        &mut self,
        op: BinOp,
        t: ElemType,
        gop: GroupOperation,
        v: Word,
    ) -> R<Word> {
        let op = match (op, t) {
            (BinOp::And, ElemType::Bool) => BinOp::Min,
            (BinOp::Or, ElemType::Bool) => BinOp::Max,
            (op, _) => op,
        };
        if self.exact32 && t == ElemType::F32 {
            return match op {
                BinOp::Max | BinOp::Min => {
                    // By ordered bits, as signed integers.
                    let x = self.order32(v)?;
                    let it = self.ty(ElemType::I32);
                    let sg = self.c_u32(SCOPE_SUBGROUP);
                    let r = if op == BinOp::Max {
                        self.b.group_non_uniform_s_max(it, None, sg, gop, x, None)
                    } else {
                        self.b.group_non_uniform_s_min(it, None, sg, gop, x, None)
                    }
                    .map_err(be)?;
                    self.unorder32(r)
                }
                _ => self.in_f64(&[v], |e, w| e.group(op, ElemType::F64, gop, w[0])),
            };
        }
        let ty = self.ty(t);
        let sg = self.c_u32(SCOPE_SUBGROUP);
        let float = t.is_float();
        let b = &mut self.b;
        match (op, float) {
            (BinOp::Add, false) => b.group_non_uniform_i_add(ty, None, sg, gop, v, None),
            (BinOp::Add, true) => b.group_non_uniform_f_add(ty, None, sg, gop, v, None),
            (BinOp::Mul, false) => b.group_non_uniform_i_mul(ty, None, sg, gop, v, None),
            (BinOp::Mul, true) => b.group_non_uniform_f_mul(ty, None, sg, gop, v, None),
            (BinOp::Max, false) => b.group_non_uniform_s_max(ty, None, sg, gop, v, None),
            (BinOp::Max, true) => b.group_non_uniform_f_max(ty, None, sg, gop, v, None),
            (BinOp::Min, false) => b.group_non_uniform_s_min(ty, None, sg, gop, v, None),
            (BinOp::Min, true) => b.group_non_uniform_f_min(ty, None, sg, gop, v, None),
            (op, _) => {
                return Err(SpirvError::Build(format!(
                    "{op:?} is not associative: no subgroup form"
                )))
            }
        }
        .map_err(be)
    }

    pub(super) fn elect(&mut self) -> R<Word> {
        let sg = self.c_u32(SCOPE_SUBGROUP);
        self.b
            .group_non_uniform_elect(self.bool_t, None, sg)
            .map_err(be)
    }

    /// `vals` converted from `from` to `to` (f32 widened together: `widen_all`).
    pub(super) fn convert_all(
        &mut self,
        vals: &[Word],
        from: ElemType,
        to: ElemType,
    ) -> R<Vec<Word>> {
        if (from, to) == (ElemType::F32, ElemType::F64) {
            return self.widen_all(vals);
        }
        vals.iter().map(|&v| self.convert(v, from, to)).collect()
    }

    pub(super) fn convert(&mut self, v: Word, from: ElemType, to: ElemType) -> R<Word> {
        // Booleans are i32 words already.
        if from == to || self.ty(from) == self.ty(to) {
            return Ok(v);
        }
        if self.exact32 && (from, to) == (ElemType::F32, ElemType::F64) {
            return self.widen32(v);
        }
        let ty = self.ty(to);
        if to == ElemType::I64 && !from.is_float() {
            // i32 → i64 as ((u64)(u32)v ^ 2^31) - 2^31, not OpSConvert: lavapipe then
            // tests the sign of the widened value as if it were zero-extended
            // (`k←¯2 ⋄ (k+0)<0` gave 0).
            let u64t = self.b.type_int(64, 0);
            let u = self.b.bitcast(self.u32_t, None, v).map_err(be)?;
            let w = self.b.u_convert(u64t, None, u).map_err(be)?;
            let bias = self.constant(u64t, 1 << 31, true);
            let x = self.b.bitwise_xor(u64t, None, w, bias).map_err(be)?;
            let d = self.b.i_sub(u64t, None, x, bias).map_err(be)?;
            return self.b.bitcast(ty, None, d).map_err(be);
        }
        let r = match (from.is_float(), to.is_float()) {
            (true, true) => self.b.f_convert(ty, None, v),
            (true, false) => self.b.convert_f_to_s(ty, None, v),
            (false, true) => self.b.convert_s_to_f(ty, None, v),
            _ => return self.b.s_convert(ty, None, v).map_err(be),
        }
        .map_err(be)?;
        // Conversions to and from floats round: `NoContraction` keeps them (Mesa
        // folds an unmarked float→int of an int→float to the integer itself, so
        // `⌊(4611686018427387904+⍳3)×1` kept integers no f32 holds).
        self.b
            .decorate(r, rspirv::spirv::Decoration::NoContraction, []);
        Ok(r)
    }
}

/// The integers `x` for which `x op c` holds, where `x` is converted to a float
/// to compare with the constant `c` (`Emitter::int_const_compare`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum IntSet {
    None,
    All,
    /// `lo ≤ x`.
    From(i32),
    /// `x ≤ hi`.
    UpTo(i32),
    /// `lo ≤ x ≤ hi`.
    Between(i32, i32),
    /// Not `lo ≤ x ≤ hi`.
    Outside(i32, i32),
}

impl IntSet {
    fn holds(self, x: i32) -> bool {
        match self {
            IntSet::None => false,
            IntSet::All => true,
            IntSet::From(lo) => lo <= x,
            IntSet::UpTo(hi) => x <= hi,
            IntSet::Between(lo, hi) => lo <= x && x <= hi,
            IntSet::Outside(lo, hi) => !(lo <= x && x <= hi),
        }
    }

    /// The set where `holds(x)` is `x op c` as the reference computes it
    /// (`BinOp::apply`: `x` converted to `c`'s type, f32 rounded to nearest, f64
    /// within ⎕CT), with `c` on the left where `c_first`. Each comparison holds on
    /// a run of integers or off one, since the conversion keeps order; the run's
    /// ends are found by bisection, then checked at and around them and at the
    /// extremes. `None` where a check fails or the reference gives no boolean.
    fn of(op: BinOp, c: Scalar, c_first: bool) -> Option<IntSet> {
        // `x op c` (`c op x` where `c_first`) as the reference has it.
        let at = |op: BinOp, x: i64, c_first: bool| -> Option<bool> {
            let x = Scalar::I32(x as i32);
            let (a, b) = if c_first { (c, x) } else { (x, c) };
            match op.apply(a, b, c.elem_type()) {
                Ok(Scalar::Bool(v)) => Some(v),
                _ => None,
            }
        };
        // `x op' c` with `x` on the left.
        let mirrored = match (op, c_first) {
            (BinOp::Less, true) => BinOp::Greater,
            (BinOp::LessEq, true) => BinOp::GreaterEq,
            (BinOp::Greater, true) => BinOp::Less,
            (BinOp::GreaterEq, true) => BinOp::LessEq,
            (op, _) => op,
        };
        let left = |op: BinOp, x: i64| at(op, x, false);
        // The least x in i32 where `g` (false, then true) holds; i32::MAX + 1 where
        // it never does.
        let first = |g: &dyn Fn(i64) -> Option<bool>| -> Option<i64> {
            let (mut lo, mut hi) = (i64::from(i32::MIN), i64::from(i32::MAX) + 1);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if g(mid)? {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            Some(lo)
        };
        let (min, max) = (i64::from(i32::MIN), i64::from(i32::MAX));
        let run = |lo: i64, hi: i64| -> IntSet {
            match (lo <= min, hi >= max) {
                _ if lo > hi => IntSet::None,
                (true, true) => IntSet::All,
                (true, false) => IntSet::UpTo(hi as i32),
                (false, true) => IntSet::From(lo as i32),
                (false, false) => IntSet::Between(lo as i32, hi as i32),
            }
        };
        let set = match mirrored {
            BinOp::Greater | BinOp::GreaterEq => run(first(&|x| left(mirrored, x))?, max),
            BinOp::Less | BinOp::LessEq => run(min, first(&|x| left(mirrored, x).map(|v| !v))? - 1),
            BinOp::Equal | BinOp::NotEqual => {
                let lo = first(&|x| left(BinOp::GreaterEq, x))?;
                let hi = first(&|x| left(BinOp::Greater, x))? - 1;
                match (run(lo, hi), mirrored) {
                    (s, BinOp::Equal) => s,
                    (IntSet::None, _) => IntSet::All,
                    (IntSet::All, _) => IntSet::None,
                    (IntSet::From(lo), _) => IntSet::UpTo(lo - 1),
                    (IntSet::UpTo(hi), _) => IntSet::From(hi + 1),
                    (IntSet::Between(lo, hi), _) => IntSet::Outside(lo, hi),
                    (IntSet::Outside(..), _) => return None,
                }
            }
            _ => return None,
        };
        let ends: Vec<i64> = match set {
            IntSet::From(a) | IntSet::UpTo(a) => vec![a.into()],
            IntSet::Between(a, b) | IntSet::Outside(a, b) => vec![a.into(), b.into()],
            IntSet::None | IntSet::All => vec![],
        };
        let mut probes = vec![min, min + 1, -1, 0, 1, max - 1, max];
        for e in ends {
            probes.extend((e - 2..=e + 2).filter(|x| (min..=max).contains(x)));
        }
        for x in probes {
            if at(op, x, c_first)? != set.holds(x as i32) {
                return None;
            }
        }
        Some(set)
    }
}

impl Emitter {
    /// `x op c` or `c op x` (a comparison) of an i32 `x` converted to a float and a
    /// float constant `c`, as the same answer from `x` itself: one or two integer
    /// comparisons with constants, where the conversion would take the device's
    /// slow conversion unit on every element (`(x>0.5)/x` of i32). `None` where
    /// the comparison is not of that form.
    pub(super) fn int_const_compare(
        &mut self,
        cx: &Cx,
        op: BinOp,
        lhs: &KExpr,
        rhs: &KExpr,
        ix: Ix,
    ) -> R<Option<Word>> {
        let (x, c, c_first) = match (lhs, rhs) {
            (KExpr::Cast { to, arg }, KExpr::Const(c)) if c.elem_type() == *to => (arg, *c, false),
            (KExpr::Const(c), KExpr::Cast { to, arg }) if c.elem_type() == *to => (arg, *c, true),
            _ => return Ok(None),
        };
        if x.elem() != ElemType::I32 || !c.elem_type().is_float() {
            return Ok(None);
        }
        let Some(set) = IntSet::of(op, c, c_first) else {
            return Ok(None);
        };
        let v = self.expr(cx, x, ix)?;
        let bt = self.bool_t;
        let k = |e: &mut Self, v: i32| e.scalar(Scalar::I32(v));
        let r = match set {
            IntSet::None => self.b.constant_false(bt),
            IntSet::All => self.b.constant_true(bt),
            IntSet::From(lo) => {
                let lo = k(self, lo);
                self.b.s_greater_than_equal(bt, None, v, lo).map_err(be)?
            }
            IntSet::UpTo(hi) => {
                let hi = k(self, hi);
                self.b.s_less_than_equal(bt, None, v, hi).map_err(be)?
            }
            IntSet::Between(lo, hi) | IntSet::Outside(lo, hi) => {
                // `lo ≤ v ≤ hi` as one unsigned comparison of `v - lo`.
                let u = self.u32_t;
                let width = self.c_u32(hi.wrapping_sub(lo) as u32);
                let lo = k(self, lo);
                let it = self.ty(ElemType::I32);
                let d = self.b.i_sub(it, None, v, lo).map_err(be)?;
                let d = self.b.bitcast(u, None, d).map_err(be)?;
                let inside = self.b.u_less_than_equal(bt, None, d, width).map_err(be)?;
                if matches!(set, IntSet::Outside(..)) {
                    self.not(inside)?
                } else {
                    inside
                }
            }
        };
        self.bool_word(r).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every comparison of an integer with a float constant, as sets, against the
    /// reference at each integer near the constant and at the extremes: f32 rounds
    /// integers past 2^24 (16777217 > 16777216 is 0 in f32), f64 compares within
    /// ⎕CT.
    #[test]
    fn integer_comparisons_with_float_constants_are_the_reference_s() {
        let ops = [
            BinOp::Less,
            BinOp::LessEq,
            BinOp::Equal,
            BinOp::GreaterEq,
            BinOp::Greater,
            BinOp::NotEqual,
        ];
        let consts: Vec<Scalar> = [
            0.5,
            0.0,
            -0.0,
            3.0,
            -3.0,
            1e-40,
            -2.5,
            16777216.0,
            16777217.0,
            2147483520.0,
            2147483648.0,
            -2147483648.0,
            3e9,
            -3e9,
            1e30,
        ]
        .iter()
        .flat_map(|&c| [Scalar::F32(c as f32), Scalar::F64(c)])
        .collect();
        for &c in &consts {
            for op in ops {
                for c_first in [false, true] {
                    let set = IntSet::of(op, c, c_first)
                        .unwrap_or_else(|| panic!("{op:?} {c:?} {c_first}: no set"));
                    let centre = c.as_f64().clamp(i32::MIN as f64, i32::MAX as f64) as i64;
                    let near = (centre - 300..=centre + 300)
                        .chain(i32::MIN as i64..i32::MIN as i64 + 3)
                        .chain(i32::MAX as i64 - 3..=i32::MAX as i64)
                        .filter(|x| (i32::MIN as i64..=i32::MAX as i64).contains(x));
                    for x in near {
                        let xs = Scalar::I32(x as i32);
                        let (a, b) = if c_first { (c, xs) } else { (xs, c) };
                        let want = op.apply(a, b, c.elem_type()).unwrap();
                        assert_eq!(
                            Scalar::Bool(set.holds(x as i32)),
                            want,
                            "{x} {op:?} {c:?} (constant first: {c_first}): {set:?}"
                        );
                    }
                }
            }
        }
        // 16777217 rounds to 16777216 in f32: equal there, as the reference has it.
        assert_eq!(
            IntSet::of(BinOp::Equal, Scalar::F32(16777216.0), false),
            Some(IntSet::Between(16777216, 16777217))
        );
    }
}
