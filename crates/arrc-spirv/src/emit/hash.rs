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

    /// The word a key is kept as: its `ordered_bits` (the sorted search's exact
    /// comparison: an f32's -0 as 0, subnormals apart from 0), a bijection of the
    /// keys, so equal keys give equal words. The word 0, the empty slot's mark, is
    /// i32's least value.
    fn key_bits(&mut self, cx: &Cx, key: &KExpr, j: Word) -> R<Word> {
        let v = self.expr(cx, key, Ix::flat(j))?;
        Ok(self.ordered_bits(key.elem(), v)?.1)
    }

    /// The key word of slot `s`.
    fn key_word(&mut self, layout: HashLayout, s: Word) -> R<Word> {
        let stride = self.c_u32(layout.stride());
        self.umul(s, stride)
    }

    /// `s+1`, or 0 past the last slot.
    fn next_slot(&mut self, s: Word, slots: Word) -> R<Word> {
        let one = self.c_u32(1);
        let zero = self.c_u32(0);
        let s1 = self.uadd(s, one)?;
        let wrap = self.b.i_equal(self.bool_t, None, s1, slots).map_err(be)?;
        self.b.select(self.u32_t, None, wrap, zero, s1).map_err(be)
    }

    /// Open addressing: from the slot of `key`'s hash on, `visit(key_word)` at each
    /// slot until it says to stop (`s_var` and `done`: the caller's locals).
    fn probe_slots(
        &mut self,
        (key, slots, layout): (Word, Word, HashLayout),
        (s_var, done): (Word, Word),
        visit: impl FnOnce(&mut Self, Word) -> R<Word>,
    ) -> R<()> {
        let (u, bt) = (self.u32_t, self.bool_t);
        let s0 = self.hash_slot(key, slots)?;
        self.store(s_var, s0)?;
        let f = self.b.constant_false(bt);
        self.store(done, f)?;
        self.while_loop(
            |e| {
                let d = e.load(bt, done)?;
                e.b.logical_not(bt, None, d).map_err(be)
            },
            |e| {
                let s = e.load(u, s_var)?;
                let kw = e.key_word(layout, s)?;
                let stop = visit(e, kw)?;
                e.store(done, stop)?;
                let nx = e.next_slot(s, slots)?;
                e.store(s_var, nx)
            },
            |_| Ok(()),
        )
    }

    /// `op` on a pointer to word `at` of `binding` (the planner keeps a table in
    /// one storage binding); what `op` gives, as a u32.
    fn word_op(
        &mut self,
        cx: &Cx,
        binding: u32,
        at: Word,
        op: impl Fn(&mut Self, Word) -> R<Word>,
    ) -> R<Word> {
        debug_assert_eq!(cx.windows[binding as usize].len(), 1);
        let (ptr, _) = self.elem_ptr(cx, binding, at)?;
        let v = op(self, ptr)?;
        self.b.bitcast(self.u32_t, None, v).map_err(be)
    }

    /// Word `at` of `binding`, as a u32.
    fn load_word(&mut self, cx: &Cx, binding: u32, at: Word) -> R<Word> {
        self.word_op(cx, binding, at, |e, p| {
            let it = e.ty(ElemType::I32);
            e.load(it, p)
        })
    }

    fn atomic_load_word(&mut self, ptr: Word) -> R<Word> {
        let it = self.ty(ElemType::I32);
        let (dev, relaxed) = (self.c_u32(SCOPE_DEVICE), self.c_u32(0));
        self.b.atomic_load(it, None, ptr, dev, relaxed).map_err(be)
    }

    /// Raises word `at` to at least `v` (unsigned) with an atomic max; `look`: only
    /// where a read finds it below (a run of one key then queues no atomics on one
    /// word), else blind (an atomic whose result is unused need not be waited for).
    fn raise_word(&mut self, cx: &Cx, binding: u32, at: Word, v: Word, look: bool) -> R<()> {
        let it = self.ty(ElemType::I32);
        let vi = self.b.bitcast(it, None, v).map_err(be)?;
        let raise = |e: &mut Self| -> R<()> {
            e.word_op(cx, binding, at, |e, p| {
                let (dev, relaxed) = (e.c_u32(SCOPE_DEVICE), e.c_u32(0));
                e.b.atomic_u_max(it, None, p, dev, relaxed, vi).map_err(be)
            })?;
            Ok(())
        };
        if !look {
            return raise(self);
        }
        let cur = self.word_op(cx, binding, at, |e, p| e.atomic_load_word(p))?;
        let below = self.ult(cur, v)?;
        self.if_then(below, raise)
    }

    /// `KernelKind::HashInsert`: each key finds its slot (the first, from its
    /// hash's, that holds it or that it claims while empty); with `index`, its
    /// index's complement is then raised into the slot's second word. Word 0's
    /// entry is the word of `zero`.
    pub(super) fn hash_insert_kernel(
        &mut self,
        cx: &Cx,
        key: &KExpr,
        (table, zero_b): (u32, u32),
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
            // `!j`: the least index is the greatest complement.
            let enc = e.b.not(u, None, j).map_err(be)?;
            e.if_else(
                is_zero,
                |e| {
                    // Word 0 is the empty slot's mark: its key's entry is kept apart.
                    let mark = if index { enc } else { e.c_u32(1) };
                    e.raise_word(cx, zero_b, zero, mark, true)
                },
                |e| {
                    e.probe_slots((key, slots, layout), (s_var, done), |e, kw| {
                        e.store(kw_var, kw)?;
                        let cur = e.word_op(cx, table, kw, |e, p| e.atomic_load_word(p))?;
                        e.store(seen, cur)?;
                        let f = e.b.constant_false(bt);
                        e.store(claimed, f)?;
                        let empty = e.b.i_equal(bt, None, cur, zero).map_err(be)?;
                        e.if_then(empty, |e| {
                            let it = e.ty(ElemType::I32);
                            let ki = e.b.bitcast(it, None, key).map_err(be)?;
                            let zi = e.b.bitcast(it, None, zero).map_err(be)?;
                            let old = e.word_op(cx, table, kw, |e, p| {
                                let (dev, relaxed) = (e.c_u32(SCOPE_DEVICE), e.c_u32(0));
                                e.b.atomic_compare_exchange(
                                    it, None, p, dev, relaxed, relaxed, ki, zi,
                                )
                                .map_err(be)
                            })?;
                            // Claimed (it was empty), or another invocation claimed
                            // it first: for this key or another.
                            let won = e.b.i_equal(bt, None, old, zero).map_err(be)?;
                            e.store(claimed, won)?;
                            let now = e.b.select(u, None, won, key, old).map_err(be)?;
                            e.store(seen, now)
                        })?;
                        let now = e.load(u, seen)?;
                        e.b.i_equal(bt, None, now, key).map_err(be)
                    })?;
                    if !index {
                        return Ok(());
                    }
                    // The index word follows the key word. The invocation that
                    // claimed the slot raises it blind; the others, holding keys
                    // seen before, look first.
                    let kw = e.load(u, kw_var)?;
                    let one = e.c_u32(1);
                    let ew = e.uadd(kw, one)?;
                    let first = e.load(bt, claimed)?;
                    e.if_else(
                        first,
                        |e| e.raise_word(cx, table, ew, enc, false),
                        |e| e.raise_word(cx, table, ew, enc, true),
                    )
                },
            )
        };
        self.unrolled_share(cx, &per, i, k)
    }

    /// `KernelKind::HashProbe`: each needle looks from its hash's slot up to the
    /// slot holding it or the first empty one (word 0: at the word of `zero`).
    pub(super) fn hash_probe_kernel(
        &mut self,
        cx: &Cx,
        needle: &KExpr,
        (table, zero_b): (u32, u32),
        out: u32,
        kind: SearchKind,
    ) -> R<()> {
        let index = !matches!(kind, SearchKind::Member);
        let layout = HashLayout { index };
        let u = self.u32_t;
        let bt = self.bool_t;
        let (i, k) = (self.local(u), self.local(u));
        let s_var = self.local(u);
        // The needle's entry: 0 where it is absent, else its index word (`!i`),
        // or for membership any word not 0.
        let entry = self.local(u);
        let done = self.local_false();
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            let n = e.push_constant(cx, 1)?;
            let slots = e.push_constant(cx, 2)?;
            let key = e.key_bits(cx, needle, j)?;
            let zero = e.c_u32(0);
            let one = e.c_u32(1);
            let is_zero = e.b.i_equal(bt, None, key, zero).map_err(be)?;
            e.if_else(
                is_zero,
                |e| {
                    let w = e.load_word(cx, zero_b, zero)?;
                    e.store(entry, w)
                },
                |e| {
                    e.store(entry, zero)?;
                    e.probe_slots((key, slots, layout), (s_var, done), |e, kw| {
                        let cur = e.load_word(cx, table, kw)?;
                        let here = e.b.i_equal(bt, None, cur, key).map_err(be)?;
                        let empty = e.b.i_equal(bt, None, cur, zero).map_err(be)?;
                        e.if_then(here, |e| {
                            let w = if index {
                                let ew = e.uadd(kw, one)?;
                                e.load_word(cx, table, ew)?
                            } else {
                                one
                            };
                            e.store(entry, w)
                        })?;
                        e.b.logical_or(bt, None, here, empty).map_err(be)
                    })
                },
            )?;
            let w = e.load(u, entry)?;
            let there = e.b.i_not_equal(bt, None, w, zero).map_err(be)?;
            let v = match kind {
                SearchKind::Member => {
                    let (yes, no) = (e.scalar(Scalar::Bool(true)), e.scalar(Scalar::Bool(false)));
                    let it = e.ty(ElemType::Bool);
                    e.b.select(it, None, there, yes, no).map_err(be)?
                }
                SearchKind::IndexOf { origin } | SearchKind::Interval { origin } => {
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
