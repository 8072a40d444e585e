//! `x⍳y` and `y∊x` by a hash table of `x` (`KernelKind::HashInsert`, `HashProbe`):
//! open addressing over u32 words, a slot's key claimed with one compare-exchange,
//! `x⍳y`'s least index kept with an atomic max of its complement. The layout is
//! `arrc_ir::plan::HashLayout`'s.

use super::{be, Cx, Emitter, Ix, R, SCOPE_DEVICE};
use arrc_ir::ir::SearchKind;
use arrc_ir::plan::{HashLayout, KExpr};
use arrc_ir::{ElemType, Scalar};
use rspirv::spirv::Word;

impl Emitter {
    /// The slot a key's probe starts from: a 32-bit mix of its bits (every bit of
    /// the key moves about half of the hash's, so runs and strides of keys spread
    /// over the table), modulo the slot count.
    fn hash_slot(&mut self, key: Word, slots: Word) -> R<Word> {
        let u = self.u32_t;
        let mut h = key;
        for (shift, mul) in [(16, Some(0x85eb_ca6b)), (13, Some(0xc2b2_ae35)), (16, None)] {
            let s = self.c_u32(shift);
            let x = self.b.shift_right_logical(u, None, h, s).map_err(be)?;
            h = self.b.bitwise_xor(u, None, h, x).map_err(be)?;
            if let Some(m) = mul {
                let m = self.c_u32(m);
                h = self.umul(h, m)?;
            }
        }
        self.b.u_mod(u, None, h, slots).map_err(be)
    }

    /// The bits a key is kept as: an i32's, or an f32's with -0 as 0 (equal keys,
    /// equal words; subnormals stay apart from 0, as in the sorted search).
    fn key_bits(&mut self, cx: &Cx, key: &KExpr, j: Word) -> R<Word> {
        let u = self.u32_t;
        let v = self.expr(cx, key, Ix::flat(j))?;
        let bits = self.b.bitcast(u, None, v).map_err(be)?;
        if key.elem() != ElemType::F32 {
            return Ok(bits);
        }
        let (top, zero) = (self.c_u32(1 << 31), self.c_u32(0));
        let neg_zero = self.b.i_equal(self.bool_t, None, bits, top).map_err(be)?;
        self.b.select(u, None, neg_zero, zero, bits).map_err(be)
    }

    /// The key word of slot `s`.
    fn key_word(&mut self, layout: HashLayout, s: Word) -> R<Word> {
        let (base, stride) = layout.base_stride();
        let (base, stride) = (self.c_u32(base), self.c_u32(stride));
        let at = self.umul(s, stride)?;
        self.uadd(at, base)
    }

    /// `s+1`, or 0 past the last slot.
    fn next_slot(&mut self, s: Word, slots: Word) -> R<Word> {
        let one = self.c_u32(1);
        let zero = self.c_u32(0);
        let s1 = self.uadd(s, one)?;
        let wrap = self.b.i_equal(self.bool_t, None, s1, slots).map_err(be)?;
        self.b.select(self.u32_t, None, wrap, zero, s1).map_err(be)
    }

    /// `op` on a pointer to word `at` of the table (through its windows where it is
    /// bound in several); what `op` gives, as a u32.
    fn table_op(
        &mut self,
        cx: &Cx,
        table: u32,
        at: Word,
        op: impl Fn(&mut Self, Word) -> R<Word>,
    ) -> R<Word> {
        let u = self.u32_t;
        if cx.windows[table as usize].len() > 1 {
            let out = self.local(u);
            self.in_window(cx, table, at, |e, ptr| {
                let v = op(e, ptr)?;
                let v = e.b.bitcast(u, None, v).map_err(be)?;
                e.store(out, v)
            })?;
            return self.load(u, out);
        }
        let (ptr, _) = self.elem_ptr(cx, table, at)?;
        let v = op(self, ptr)?;
        self.b.bitcast(u, None, v).map_err(be)
    }

    fn atomic_load_word(&mut self, ptr: Word) -> R<Word> {
        let it = self.ty(ElemType::I32);
        let (dev, relaxed) = (self.c_u32(SCOPE_DEVICE), self.c_u32(0));
        self.b.atomic_load(it, None, ptr, dev, relaxed).map_err(be)
    }

    /// Sets word `at` to at least `v` (unsigned), with no atomic where it already is.
    fn raise_word(&mut self, cx: &Cx, table: u32, at: Word, v: Word) -> R<()> {
        let cur = self.table_op(cx, table, at, |e, p| e.atomic_load_word(p))?;
        let below = self.ult(cur, v)?;
        self.if_then(below, |e| {
            let it = e.ty(ElemType::I32);
            let vi = e.b.bitcast(it, None, v).map_err(be)?;
            e.table_op(cx, table, at, |e, p| {
                let (dev, relaxed) = (e.c_u32(SCOPE_DEVICE), e.c_u32(0));
                e.b.atomic_u_max(it, None, p, dev, relaxed, vi).map_err(be)
            })?;
            Ok(())
        })
    }

    /// `KernelKind::HashInsert`: each key finds its slot (the first, from its
    /// hash's, that holds it or that it claims while empty); with `index`, its
    /// index's complement is then raised into the slot's second word.
    pub(super) fn hash_insert_kernel(
        &mut self,
        cx: &Cx,
        key: &KExpr,
        table: u32,
        index: bool,
    ) -> R<()> {
        let layout = HashLayout { index };
        let u = self.u32_t;
        let bt = self.bool_t;
        let (i, k) = (self.local(u), self.local(u));
        let s_var = self.local(u);
        let kw_var = self.local(u);
        let seen = self.local(u);
        let done = self.local_false();
        let claimed = self.local_false();
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            let slots = e.push_constant(cx, 1)?;
            let key = e.key_bits(cx, key, j)?;
            let zero = e.c_u32(0);
            let is_zero = e.b.i_equal(bt, None, key, zero).map_err(be)?;
            let f = e.b.constant_false(bt);
            e.store(claimed, f)?;
            let zw = e.c_u32(layout.zero_word());
            e.if_else(
                is_zero,
                |e| {
                    // Key 0 is the empty slot's mark: its entry is kept apart.
                    if index {
                        e.store(kw_var, zero)
                    } else {
                        let one = e.c_u32(1);
                        e.raise_word(cx, table, zw, one)
                    }
                },
                |e| {
                    let s0 = e.hash_slot(key, slots)?;
                    e.store(s_var, s0)?;
                    let f = e.b.constant_false(bt);
                    e.store(done, f)?;
                    e.while_loop(
                        |e| {
                            let d = e.load(bt, done)?;
                            e.b.logical_not(bt, None, d).map_err(be)
                        },
                        |e| {
                            let s = e.load(u, s_var)?;
                            let kw = e.key_word(layout, s)?;
                            e.store(kw_var, kw)?;
                            let cur = e.table_op(cx, table, kw, |e, p| e.atomic_load_word(p))?;
                            e.store(seen, cur)?;
                            let f = e.b.constant_false(bt);
                            e.store(claimed, f)?;
                            let empty = e.b.i_equal(bt, None, cur, zero).map_err(be)?;
                            e.if_then(empty, |e| {
                                let it = e.ty(ElemType::I32);
                                let ki = e.b.bitcast(it, None, key).map_err(be)?;
                                let zi = e.b.bitcast(it, None, zero).map_err(be)?;
                                let old = e.table_op(cx, table, kw, |e, p| {
                                    let (dev, relaxed) = (e.c_u32(SCOPE_DEVICE), e.c_u32(0));
                                    e.b.atomic_compare_exchange(
                                        it, None, p, dev, relaxed, relaxed, ki, zi,
                                    )
                                    .map_err(be)
                                })?;
                                // Claimed (it was empty), or another invocation
                                // claimed it first: for this key or another.
                                let won = e.b.i_equal(bt, None, old, zero).map_err(be)?;
                                e.store(claimed, won)?;
                                let now = e.b.select(u, None, won, key, old).map_err(be)?;
                                e.store(seen, now)
                            })?;
                            let now = e.load(u, seen)?;
                            let here = e.b.i_equal(bt, None, now, key).map_err(be)?;
                            e.store(done, here)
                        },
                        |e| {
                            let d = e.load(bt, done)?;
                            let more = e.b.logical_not(bt, None, d).map_err(be)?;
                            e.if_then(more, |e| {
                                let s = e.load(u, s_var)?;
                                let nx = e.next_slot(s, slots)?;
                                e.store(s_var, nx)
                            })
                        },
                    )
                },
            )?;
            if index {
                // The entry's index word follows its key word (key 0's is word 1).
                // The invocation that claimed the slot raises it without looking
                // (an atomic whose result is unused need not wait for it); the
                // others, holding keys seen before, first look whether theirs is
                // the least index yet, so a run of one key does not queue atomics
                // on one word.
                let kw = e.load(u, kw_var)?;
                let one = e.c_u32(1);
                let ew = e.uadd(kw, one)?;
                let enc = e.b.not(u, None, j).map_err(be)?;
                let first = e.load(bt, claimed)?;
                e.if_else(
                    first,
                    |e| {
                        let it = e.ty(ElemType::I32);
                        let vi = e.b.bitcast(it, None, enc).map_err(be)?;
                        e.table_op(cx, table, ew, |e, p| {
                            let (dev, relaxed) = (e.c_u32(SCOPE_DEVICE), e.c_u32(0));
                            e.b.atomic_u_max(it, None, p, dev, relaxed, vi).map_err(be)
                        })?;
                        Ok(())
                    },
                    |e| e.raise_word(cx, table, ew, enc),
                )?;
            }
            Ok(())
        };
        self.unrolled_share(cx, &per, i, k)
    }

    /// `KernelKind::HashProbe`: each needle looks from its hash's slot up to the
    /// slot holding it or the first empty one.
    pub(super) fn hash_probe_kernel(
        &mut self,
        cx: &Cx,
        needle: &KExpr,
        table: u32,
        out: u32,
        kind: SearchKind,
    ) -> R<()> {
        let index = !matches!(kind, SearchKind::Member);
        let layout = HashLayout { index };
        let u = self.u32_t;
        let bt = self.bool_t;
        let (i, k) = (self.local(u), self.local(u));
        let s_var = self.local(u);
        let entry = self.local(u);
        let found = self.local_false();
        let done = self.local_false();
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            let n = e.push_constant(cx, 1)?;
            let slots = e.push_constant(cx, 2)?;
            let key = e.key_bits(cx, needle, j)?;
            let zero = e.c_u32(0);
            let one = e.c_u32(1);
            let f = e.b.constant_false(bt);
            e.store(found, f)?;
            let is_zero = e.b.i_equal(bt, None, key, zero).map_err(be)?;
            e.if_else(
                is_zero,
                |e| {
                    let zw = e.c_u32(layout.zero_word());
                    let w = e.load_elem(cx, table, zw)?;
                    let w = e.b.bitcast(u, None, w).map_err(be)?;
                    let there = e.b.i_not_equal(bt, None, w, zero).map_err(be)?;
                    e.store(found, there)?;
                    e.store(entry, zw)
                },
                |e| {
                    let s0 = e.hash_slot(key, slots)?;
                    e.store(s_var, s0)?;
                    e.store(done, f)?;
                    e.while_loop(
                        |e| {
                            let d = e.load(bt, done)?;
                            e.b.logical_not(bt, None, d).map_err(be)
                        },
                        |e| {
                            let s = e.load(u, s_var)?;
                            let kw = e.key_word(layout, s)?;
                            let cur = e.load_elem(cx, table, kw)?;
                            let cur = e.b.bitcast(u, None, cur).map_err(be)?;
                            let here = e.b.i_equal(bt, None, cur, key).map_err(be)?;
                            let empty = e.b.i_equal(bt, None, cur, zero).map_err(be)?;
                            let stop = e.b.logical_or(bt, None, here, empty).map_err(be)?;
                            e.store(found, here)?;
                            e.store(done, stop)?;
                            let ew = e.uadd(kw, one)?;
                            e.store(entry, ew)?;
                            let nx = e.next_slot(s, slots)?;
                            e.store(s_var, nx)
                        },
                        |_| Ok(()),
                    )
                },
            )?;
            let there = e.load(bt, found)?;
            let v = match kind {
                SearchKind::Member => {
                    let (yes, no) = (e.scalar(Scalar::Bool(true)), e.scalar(Scalar::Bool(false)));
                    let it = e.ty(ElemType::Bool);
                    e.b.select(it, None, there, yes, no).map_err(be)?
                }
                SearchKind::IndexOf { origin } | SearchKind::Interval { origin } => {
                    let at = e.load(u, entry)?;
                    let w = e.load_elem(cx, table, at)?;
                    let w = e.b.bitcast(u, None, w).map_err(be)?;
                    let ix = e.b.not(u, None, w).map_err(be)?;
                    let ix = e.b.select(u, None, there, ix, n).map_err(be)?;
                    let o = e.c_u32(origin as u32);
                    let r = e.uadd(ix, o)?;
                    let it = e.ty(ElemType::I32);
                    e.b.bitcast(it, None, r).map_err(be)?
                }
            };
            e.store_elem(cx, out, j, v)
        };
        self.unrolled_share(cx, &per, i, k)
    }
}
