//! `?` on the device: Philox4x32-10 of the draw's 64-bit counter under the seed (the
//! same arithmetic as `arrc_ir::random`, so every device draws the reference's
//! numbers), then an integer below n or a float between 0 and 1.

use super::{be, Cx, Emitter, Ix, R};
use arrc_ir::plan::{IExpr, KExpr};
use arrc_ir::random::{PHILOX_M0, PHILOX_M1, PHILOX_W0, PHILOX_W1};
use arrc_ir::scalar::BinOp;
use arrc_ir::ElemType;
use rspirv::spirv::Word;

impl Emitter {
    /// `(elem, origin, offset, checks)`: the result's type, ⎕IO, the roll's first draw
    /// after the state's next one, and the error bits of items it must check.
    pub(super) fn roll(
        &mut self,
        cx: &Cx,
        n: &KExpr,
        index: &IExpr,
        state: &[KExpr],
        (elem, origin, offset, checks): (ElemType, i32, u64, Option<(u32, u32)>),
        ix: Ix,
    ) -> R<Word> {
        let u = self.u32_t;
        self.ty(ElemType::I64);
        let u64t = self.b.type_int(64, 0);
        let pair = self.b.type_struct([u, u]);
        let words: Vec<Word> = state
            .iter()
            .map(|k| {
                let v = self.expr(cx, k, ix)?;
                self.b.bitcast(u, None, v).map_err(be)
            })
            .collect::<R<_>>()?;
        let i = self.iexpr(cx, index, ix)?;
        let wide = |e: &mut Self, x: Word| e.b.u_convert(u64t, None, x).map_err(be);
        let c32 = self.constant(u64t, 32, true);
        // The counter: the first draw's number plus the item's position.
        let base_lo = wide(self, words[2])?;
        let base_hi = wide(self, words[3])?;
        let base_hi = self
            .b
            .shift_left_logical(u64t, None, base_hi, c32)
            .map_err(be)?;
        let base = self
            .b
            .bitwise_or(u64t, None, base_hi, base_lo)
            .map_err(be)?;
        let off = self.constant(u64t, offset, true);
        let base = self.b.i_add(u64t, None, base, off).map_err(be)?;
        let i64v = wide(self, i)?;
        let ctr = self.b.i_add(u64t, None, base, i64v).map_err(be)?;
        let lo = self.b.u_convert(u, None, ctr).map_err(be)?;
        let hi = self
            .b
            .shift_right_logical(u64t, None, ctr, c32)
            .map_err(be)?;
        let hi = self.b.u_convert(u, None, hi).map_err(be)?;
        let zero = self.c_u32(0);
        let mut c = [lo, hi, zero, zero];
        let mut k = [words[0], words[1]];
        let (m0, m1) = (self.c_u32(PHILOX_M0), self.c_u32(PHILOX_M1));
        let (w0, w1) = (self.c_u32(PHILOX_W0), self.c_u32(PHILOX_W1));
        let part =
            |e: &mut Self, x: Word, j: u32| e.b.composite_extract(u, None, x, [j]).map_err(be);
        for round in 0..10 {
            if round > 0 {
                k = [self.uadd(k[0], w0)?, self.uadd(k[1], w1)?];
            }
            let p0 = self.b.u_mul_extended(pair, None, m0, c[0]).map_err(be)?;
            let p1 = self.b.u_mul_extended(pair, None, m1, c[2]).map_err(be)?;
            let (lo0, hi0) = (part(self, p0, 0)?, part(self, p0, 1)?);
            let (lo1, hi1) = (part(self, p1, 0)?, part(self, p1, 1)?);
            let x0 = self.b.bitwise_xor(u, None, hi1, c[1]).map_err(be)?;
            let x0 = self.b.bitwise_xor(u, None, x0, k[0]).map_err(be)?;
            let x2 = self.b.bitwise_xor(u, None, hi0, c[3]).map_err(be)?;
            let x2 = self.b.bitwise_xor(u, None, x2, k[1]).map_err(be)?;
            c = [x0, lo1, x2, lo0];
        }
        // An integer below n: the high 64 bits of the 128-bit product of the draw's
        // 64 bits (c1:c0) and n.
        let nv = self.expr(cx, n, ix)?;
        let n64 = match n.elem() {
            ElemType::I64 => self.b.bitcast(u64t, None, nv).map_err(be)?,
            _ => self.b.u_convert(u64t, None, nv).map_err(be)?,
        };
        if let Some((negative, other)) = checks {
            // Items not known when compiling: negative (as signed), 0, or beyond what
            // an i32 result holds (n-1+⎕IO > 2^31-1).
            let bt = self.bool_t;
            let i64t = self.ty(ElemType::I64);
            let s = match n.elem() {
                ElemType::I64 => nv,
                _ => self.b.s_convert(i64t, None, nv).map_err(be)?,
            };
            let zero = self.scalar(arrc_ir::Scalar::I64(0));
            let neg = self.b.s_less_than(bt, None, s, zero).map_err(be)?;
            self.raise(cx, Some(negative), neg)?;
            let is0 = self.b.i_equal(bt, None, s, zero).map_err(be)?;
            let limit = self.scalar(arrc_ir::Scalar::I64(i32::MAX as i64 + 1 - origin as i64));
            let big = self.b.s_greater_than(bt, None, s, limit).map_err(be)?;
            let other_bad = self.b.logical_or(bt, None, is0, big).map_err(be)?;
            self.raise(cx, Some(other), other_bad)?;
        }
        let lo64 = wide(self, c[0])?;
        let hi64 = wide(self, c[1])?;
        let t = self.b.i_mul(u64t, None, lo64, n64).map_err(be)?;
        let t = self.b.shift_right_logical(u64t, None, t, c32).map_err(be)?;
        let s = self.b.i_mul(u64t, None, hi64, n64).map_err(be)?;
        let s = self.b.i_add(u64t, None, s, t).map_err(be)?;
        let below = self.b.shift_right_logical(u64t, None, s, c32).map_err(be)?;
        let below = self.b.u_convert(u, None, below).map_err(be)?;
        let it = self.ty(ElemType::I32);
        let below = self.b.bitcast(it, None, below).map_err(be)?;
        let o = self.scalar(arrc_ir::Scalar::I32(origin));
        let int = self.b.i_add(it, None, below, o).map_err(be)?;
        if !elem.is_float() {
            return Ok(int);
        }
        // A float between 0 and 1 for n = 0 (`arrc_ir::random::unit_in`).
        let ft = self.ty(elem);
        let unit = if elem == ElemType::F64 {
            let c11 = self.constant(u64t, 11, true);
            let bits = self
                .b
                .shift_left_logical(u64t, None, hi64, c32)
                .map_err(be)?;
            let bits = self.b.bitwise_or(u64t, None, bits, lo64).map_err(be)?;
            let top = self
                .b
                .shift_right_logical(u64t, None, bits, c11)
                .map_err(be)?;
            let f = self.b.convert_u_to_f(ft, None, top).map_err(be)?;
            let half = self.scalar(arrc_ir::Scalar::F64(0.5));
            let f = self.b.f_add(ft, None, f, half).map_err(be)?;
            let scale = self.scalar(arrc_ir::Scalar::F64(1.0 / (1u64 << 53) as f64));
            self.b.f_mul(ft, None, f, scale).map_err(be)?
        } else {
            // ((high 23 bits)×2+1)×2^-24, exact in f32.
            let c9 = self.c_u32(9);
            let top = self.b.shift_right_logical(u, None, c[1], c9).map_err(be)?;
            let one = self.c_u32(1);
            let top = self.b.shift_left_logical(u, None, top, one).map_err(be)?;
            let top = self.b.bitwise_or(u, None, top, one).map_err(be)?;
            let f = self.b.convert_u_to_f(ft, None, top).map_err(be)?;
            let scale = self.scalar(arrc_ir::Scalar::F32(1.0 / (1u32 << 24) as f32));
            self.binop(BinOp::Mul, elem, f, scale)?
        };
        let as_float = self.b.convert_s_to_f(ft, None, int).map_err(be)?;
        let bt = self.bool_t;
        let z64 = self.constant(u64t, 0, true);
        let is_zero = self.b.i_equal(bt, None, n64, z64).map_err(be)?;
        self.b.select(ft, None, is_zero, unit, as_float).map_err(be)
    }
}
