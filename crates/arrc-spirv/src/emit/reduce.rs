//! Argument reduction for sin, cos and tan of large arguments (Payne–Hanek), in f32
//! and f64 alike: `y = q·π/2 + r` from the bits of 2/π, with 32-bit integer
//! operations only (UMulExtended, IAddCarry), so that any finite argument keeps `r`
//! to its type's precision.

use super::{be, Emitter, R};
use arrc_ir::scalar::BinOp;
use arrc_ir::ElemType;
use rspirv::spirv::{StorageClass, Word};

/// 2/π in 32-bit words, after two zero words (bits -63…0): the window from bit e-1
/// of any |y| = m·2^e ≥ 2^-53 lies in the table, up to infinity's exponent.
const TWO_OVER_PI: [u32; 38] = [
    0,
    0,
    0xa2f9_836e,
    0x4e44_1529,
    0xfc27_57d1,
    0xf534_ddc0,
    0xdb62_9599,
    0x3c43_9041,
    0xfe51_63ab,
    0xdebb_c561,
    0xb724_6e3a,
    0x424d_d2e0,
    0x0649_2eea,
    0x09d1_921c,
    0xfe1d_eb1c,
    0xb129_a73e,
    0xe882_35f5,
    0x2ebb_4484,
    0xe99c_7026,
    0xb45f_7e41,
    0x3991_d639,
    0x8353_39f4,
    0x9c84_5f8b,
    0xbdf9_283b,
    0x1ff8_97ff,
    0xde05_980f,
    0xef2f_118b,
    0x5a0a_6d1f,
    0x6d36_7ecf,
    0x27cb_09b7,
    0x4f46_3f66,
    0x9e5f_ea2d,
    0x7527_bac7,
    0xebe5_f17b,
    0x3d07_39f7,
    0x8a52_92ea,
    0x6bfb_5fb1,
    0x1f8d_5d08,
];

impl Emitter {
    /// `r` and `q` (i32) of a cheaper reduction of `y`, replaced by
    /// [`Self::reduce_quadrants`]'s where |y| is not below `lim` (only those
    /// invocations run it).
    pub(super) fn reduce_beyond(
        &mut self,
        y: Word,
        t: ElemType,
        (r, q): (Word, Word),
        lim: f64,
    ) -> R<(Word, Word)> {
        let ft = self.ty(t);
        let it = self.ty(ElemType::I32);
        let (rv, qv) = (self.local(ft), self.local(it));
        self.store(rv, r)?;
        self.store(qv, q)?;
        let ay = self.glsl(t, 4, &[y])?; // FAbs
        let l = self.fc(t, lim);
        let below = self
            .b
            .f_ord_less_than(self.bool_t, None, ay, l)
            .map_err(be)?;
        let big = self.b.logical_not(self.bool_t, None, below).map_err(be)?;
        self.if_then(big, |e| {
            let (r, q) = e.reduce_quadrants(y, t)?;
            e.store(rv, r)?;
            e.store(qv, q)
        })?;
        Ok((self.load(ft, rv)?, self.load(it, qv)?))
    }

    /// sin and cos of `q·π/2 + r` from those of `r`: the quadrant `q mod 4` chooses
    /// signs and which one is which.
    pub(super) fn by_quadrant(
        &mut self,
        t: ElemType,
        q: Word,
        (sn, cs): (Word, Word),
    ) -> R<(Word, Word)> {
        let ft = self.ty(t);
        let it = self.ty(ElemType::I32);
        let three = self.scalar(arrc_ir::Scalar::I32(3));
        let k = self.b.bitwise_and(it, None, q, three).map_err(be)?;
        let nsn = self.b.f_negate(ft, None, sn).map_err(be)?;
        let ncs = self.b.f_negate(ft, None, cs).map_err(be)?;
        let pick = |e: &mut Self, vals: [Word; 4]| -> R<Word> {
            let mut out = vals[3];
            for i in (0..3).rev() {
                let ki = e.scalar(arrc_ir::Scalar::I32(i as i32));
                let is = e.b.i_equal(e.bool_t, None, k, ki).map_err(be)?;
                out = e.b.select(ft, None, is, vals[i], out).map_err(be)?;
            }
            Ok(out)
        };
        Ok((
            pick(self, [sn, cs, nsn, ncs])?,
            pick(self, [cs, nsn, ncs, sn])?,
        ))
    }

    /// `y = q·π/2 + r` for |y| ≥ 2^-7 (f32) or 2^-53 (f64): with |y| = m·2^e, `|y|·2/π
    /// mod 4` needs only the bits of 2/π from e-1 on, 32 more than `m` has and 64
    /// beyond (96 for f32, 160 for f64); `m` times them, modulo that many bits, holds
    /// the quadrant in its top two bits and the fraction in the others. Returns `r`
    /// (of type `t`, |r| ≤ π/4) and `q` (i32, to be taken mod 4). A non-finite `y`
    /// gives garbage: callers test it.
    pub(super) fn reduce_quadrants(&mut self, y: Word, t: ElemType) -> R<(Word, Word)> {
        let u = self.u32_t;
        let bt = self.bool_t;
        let cu = |e: &mut Self, v: u32| e.c_u32(v);
        // Mantissa words (least significant first), exponent, and where bit e-1 of
        // 2/π sits in the table (e = expo - bias - fraction bits).
        let (mant, expo, bias, n) = if t == ElemType::F64 {
            let uv2 = self.b.type_vector(u, 2);
            let bits = self.b.bitcast(uv2, None, y).map_err(be)?;
            let lo = self.b.composite_extract(u, None, bits, [0]).map_err(be)?;
            let hi = self.b.composite_extract(u, None, bits, [1]).map_err(be)?;
            let (expo, m) = self.split_float(hi, 20, 0x7ff)?;
            (vec![lo, m], expo, 1075 + 1 - 63, 5)
        } else {
            let bits = self.b.bitcast(u, None, y).map_err(be)?;
            let (expo, m) = self.split_float(bits, 23, 0xff)?;
            (vec![m], expo, 150 + 1 - 63, 3)
        };
        let biasc = cu(self, bias);
        let g0 = self.b.i_sub(u, None, expo, biasc).map_err(be)?;
        let c5 = cu(self, 5);
        let w = self.b.shift_right_logical(u, None, g0, c5).map_err(be)?;
        let c31 = cu(self, 31);
        let s = self.b.bitwise_and(u, None, g0, c31).map_err(be)?;
        let table = self.two_over_pi_table();
        let pu = self.ptr(StorageClass::Private, u);
        let mut tw = vec![];
        for j in 0..=n {
            let jc = cu(self, j as u32);
            let at = self.b.i_add(u, None, w, jc).map_err(be)?;
            let p = self.b.access_chain(pu, None, table, [at]).map_err(be)?;
            tw.push(self.load(u, p)?);
        }
        let zero = cu(self, 0);
        let s0 = self.b.i_equal(bt, None, s, zero).map_err(be)?;
        let c32 = cu(self, 32);
        let rs = self.b.i_sub(u, None, c32, s).map_err(be)?;
        // The window's words, least significant first: t[j] << s | t[j+1] >> (32-s).
        let mut win = vec![];
        for j in (0..n).rev() {
            let a = self.b.shift_left_logical(u, None, tw[j], s).map_err(be)?;
            let b = self
                .b
                .shift_right_logical(u, None, tw[j + 1], rs)
                .map_err(be)?;
            let b = self.b.select(u, None, s0, zero, b).map_err(be)?;
            win.push(self.b.bitwise_or(u, None, a, b).map_err(be)?);
        }
        let pair = self.b.type_struct([u, u]);
        let part =
            |e: &mut Self, x: Word, k: u32| e.b.composite_extract(u, None, x, [k]).map_err(be);
        // m · window, modulo 2^(32n).
        let mut acc = vec![zero; n];
        let add_at = |e: &mut Self, acc: &mut Vec<Word>, k: usize, x: Word| -> R<()> {
            let mut carry = x;
            for a in acc.iter_mut().skip(k) {
                let sum = e.b.i_add_carry(pair, None, *a, carry).map_err(be)?;
                *a = part(e, sum, 0)?;
                carry = part(e, sum, 1)?;
            }
            Ok(())
        };
        for (i, &wi) in win.iter().enumerate() {
            for (shift, &m) in mant.iter().enumerate() {
                let k = i + shift;
                if k >= n {
                    continue;
                }
                let p = self.b.u_mul_extended(pair, None, m, wi).map_err(be)?;
                let (pl, ph) = (part(self, p, 0)?, part(self, p, 1)?);
                add_at(self, &mut acc, k, pl)?;
                if k + 1 < n {
                    add_at(self, &mut acc, k + 1, ph)?;
                }
            }
        }
        // Quadrant and the fraction's sign: at or past a half, round up and negate.
        let top = acc[n - 1];
        let c30 = cu(self, 30);
        let q = self.b.shift_right_logical(u, None, top, c30).map_err(be)?;
        let c29 = cu(self, 29);
        let hb = self.b.shift_right_logical(u, None, top, c29).map_err(be)?;
        let one = cu(self, 1);
        let hb = self.b.bitwise_and(u, None, hb, one).map_err(be)?;
        let up = self.b.i_equal(bt, None, hb, one).map_err(be)?;
        let fmask = cu(self, 0x3fff_ffff);
        let mut frac = acc.clone();
        frac[n - 1] = self.b.bitwise_and(u, None, top, fmask).map_err(be)?;
        let mut carry = one;
        let ft = self.ty(t);
        let mut mag = self.fc(t, 0.0);
        // |fraction| ≤ 1/2 of a quarter turn, smallest words first.
        for (k, &f) in frac.iter().enumerate() {
            let nf = self.b.not(u, None, f).map_err(be)?;
            let nf = if k + 1 == n {
                self.b.bitwise_and(u, None, nf, fmask).map_err(be)?
            } else {
                nf
            };
            let sum = self.b.i_add_carry(pair, None, nf, carry).map_err(be)?;
            let neg = part(self, sum, 0)?;
            carry = part(self, sum, 1)?;
            let x = self.b.select(u, None, up, neg, f).map_err(be)?;
            let x = self.b.convert_u_to_f(ft, None, x).map_err(be)?;
            let scale = self.fc(t, 2f64.powi(32 * k as i32 + 2 - 32 * n as i32));
            let x = self.binop(BinOp::Mul, t, x, scale)?;
            mag = self.binop(BinOp::Add, t, mag, x)?;
        }
        let q1 = self.b.i_add(u, None, q, one).map_err(be)?;
        let q = self.b.select(u, None, up, q1, q).map_err(be)?;
        let pio2 = self.fc(t, std::f64::consts::FRAC_PI_2);
        let r = self.binop(BinOp::Mul, t, mag, pio2)?;
        // The negated fraction, and y < 0 (-y = -q·π/2 - r), flip r's sign.
        let fz = self.fc(t, 0.0);
        let negy = self.b.f_ord_less_than(bt, None, y, fz).map_err(be)?;
        let flip = self.b.logical_not_equal(bt, None, up, negy).map_err(be)?;
        let nr = self.b.f_negate(ft, None, r).map_err(be)?;
        let r = self.b.select(ft, None, flip, nr, r).map_err(be)?;
        let nq = self.b.s_negate(u, None, q).map_err(be)?;
        let q = self.b.select(u, None, negy, nq, q).map_err(be)?;
        let it = self.ty(ElemType::I32);
        let q = self.b.bitcast(it, None, q).map_err(be)?;
        Ok((r, q))
    }

    /// The biased exponent and the mantissa with its hidden bit, from the word that
    /// holds the exponent above `frac_bits` bits of mantissa.
    fn split_float(&mut self, word: Word, frac_bits: u32, emask: u32) -> R<(Word, Word)> {
        let u = self.u32_t;
        let sh = self.c_u32(frac_bits);
        let e = self.b.shift_right_logical(u, None, word, sh).map_err(be)?;
        let em = self.c_u32(emask);
        let expo = self.b.bitwise_and(u, None, e, em).map_err(be)?;
        let mm = self.c_u32((1 << frac_bits) - 1);
        let m = self.b.bitwise_and(u, None, word, mm).map_err(be)?;
        let hidden = self.c_u32(1 << frac_bits);
        let m = self.b.bitwise_or(u, None, m, hidden).map_err(be)?;
        Ok((expo, m))
    }

    /// The module's private table of 2/π's bits ([`TWO_OVER_PI`]), made once.
    fn two_over_pi_table(&mut self) -> Word {
        if let Some(t) = self.two_over_pi {
            return t;
        }
        let u = self.u32_t;
        let n = self.c_u32(TWO_OVER_PI.len() as u32);
        let arr = self.b.type_array(u, n);
        let words: Vec<Word> = TWO_OVER_PI.iter().map(|&w| self.c_u32(w)).collect();
        let init = self.b.constant_composite(arr, words);
        let p = self.ptr(StorageClass::Private, arr);
        let current = self.b.selected_block();
        let _ = self.b.select_block(None);
        let var = self.b.variable(p, None, StorageClass::Private, Some(init));
        let _ = self.b.select_block(current);
        self.two_over_pi = Some(var);
        var
    }
}
