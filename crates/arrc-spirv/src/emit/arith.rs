//! Arithmetic on SPIR-V words: unsigned index helpers, comparisons (f32 by their
//! ordered bits, f64 tolerant), the binary operations and subgroup collectives of
//! every element type (f32 in f64 where the device may flush its subnormals), and
//! conversions between element types.

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
        if t == ElemType::F32 {
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
