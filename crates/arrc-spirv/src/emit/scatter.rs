//! `⌸`'s folds on the device: each item folds its value into its group's slot with
//! one atomic add, max or min (integers: counts, sums of i32 items in 64 bits, which
//! no group of fewer than 2^32 items can leave, and maxima and minima).

use super::{be, Cx, Emitter, Ix, R, SCOPE_DEVICE, SCOPE_WORKGROUP, SHARED_MIN_WORDS};
use arrc_ir::plan::{IExpr, KExpr};
use arrc_ir::scalar::BinOp;
use arrc_ir::{ElemType, Scalar};
use rspirv::spirv::{StorageClass, Word};

/// The most workgroups that fold their shares in workgroup memory: each flushes up
/// to all its slots, so fewer, longer shares keep those atomics few beside the
/// items' (the other workgroups of the grid have nothing to do there).
const SHARED_FOLD_GROUPS: u32 = 1024;

impl Emitter {
    /// `KernelKind::ScatterAdd`. Where `slots` fit in workgroup memory (`+` of i32 or
    /// i64, `⌈ ⌊` of i32), each of at most [`SHARED_FOLD_GROUPS`] workgroups folds
    /// its grid-stride share there (an i64 slot as two words, the low word's carries
    /// added to the high one) and then adds each slot it touched to `out` with one
    /// atomic: a few groups' counts no longer queue thousands of atomics on one
    /// word. Otherwise every item folds into `out` directly, over the whole grid.
    pub(super) fn scatter_add_kernel(
        &mut self,
        cx: &Cx,
        op: BinOp,
        index: &KExpr,
        value: &KExpr,
        out: u32,
        slots: &IExpr,
    ) -> R<()> {
        let elem = cx.bindings[out as usize].1;
        let wide = elem == ElemType::I64;
        self.uses_i64_atomics |= wide;
        let cap = if wide {
            SHARED_MIN_WORDS / 2
        } else {
            SHARED_MIN_WORDS
        };
        let never = matches!(slots, IExpr::Const(c) if *c > cap);
        if (wide && op != BinOp::Add) || never {
            return self.scatter_add_direct(cx, op, index, value, out);
        }
        // A length: the same at every index.
        let zero = self.c_u32(0);
        let slots = self.iexpr(cx, slots, Ix::flat(zero))?;
        let capc = self.c_u32(cap);
        let fits = self
            .b
            .u_less_than_equal(self.bool_t, None, slots, capc)
            .map_err(be)?;
        let it = ElemType::I32;
        // Low words (or the i32 slots), and high words.
        let lo = self.shared_sized(it, cap);
        let hi = if wide {
            Some(self.shared_sized(it, cap))
        } else {
            None
        };
        // The i32 slots, and the low and high words of i64 ones, start at `op`'s
        // identity (0 for the words of an i64 sum).
        let identity = self.identity(op, it);
        let most = self.c_u32(SHARED_FOLD_GROUPS);
        let mut few = cx.clone();
        few.groups = self.umin(cx.groups, most)?;
        let folding = self.ult(cx.group, few.groups)?;
        let kvar = self.local(self.u32_t);
        let shared = |e: &mut Self| -> R<()> {
            e.count_loop(kvar, cx.lid, slots, e.wg_size, |e, k| {
                for words in [Some(lo), hi].into_iter().flatten() {
                    let p = e.shared_ptr(words, it, k)?;
                    e.store(p, identity)?;
                }
                Ok(())
            })?;
            e.barrier()?;
            let i = e.local(e.u32_t);
            let k = e.local(e.u32_t);
            let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
                let g = e.expr(cx, index, Ix::flat(j))?;
                let g = e.b.bitcast(e.u32_t, None, g).map_err(be)?;
                // An index is below `slots` unless an error was raised computing it:
                // then nothing is folded.
                let inside = e.ult(g, slots)?;
                let v = e.expr(cx, value, Ix::flat(j))?;
                e.if_then(inside, |e| e.shared_fold(op, lo, hi, g, v))
            };
            e.unrolled_share(&few, &per, i, k)?;
            e.barrier()?;
            e.count_loop(kvar, cx.lid, slots, e.wg_size, |e, k| {
                e.flush_slot(cx, op, out, lo, hi, k, identity)
            })
        };
        self.if_else(
            fits,
            // Whole workgroups take one side or the other: their barriers are met
            // by all their invocations.
            |e| e.if_then(folding, shared),
            |e| e.scatter_add_direct(cx, op, index, value, out),
        )
    }

    /// Each item folds into `out` with one device atomic.
    fn scatter_add_direct(
        &mut self,
        cx: &Cx,
        op: BinOp,
        index: &KExpr,
        value: &KExpr,
        out: u32,
    ) -> R<()> {
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        let per = |e: &mut Self, cx: &Cx, j: Word| -> R<()> {
            let g = e.expr(cx, index, Ix::flat(j))?;
            let g = e.b.bitcast(e.u32_t, None, g).map_err(be)?;
            let v = e.expr(cx, value, Ix::flat(j))?;
            e.device_fold(cx, op, out, g, v)
        };
        self.unrolled_share(cx, &per, i, k)
    }

    /// `out[g] op= v` with one device-scope atomic.
    fn device_fold(&mut self, cx: &Cx, op: BinOp, out: u32, g: Word, v: Word) -> R<()> {
        let elem = cx.bindings[out as usize].1;
        let fold = |e: &mut Self, ptr: Word| {
            e.atomic_fold(op, elem, SCOPE_DEVICE, ptr, v)?;
            Ok(())
        };
        if cx.windows[out as usize].len() > 1 {
            return self.in_window(cx, out, g, fold);
        }
        let (ptr, _) = self.elem_ptr(cx, out, g)?;
        fold(self, ptr)
    }

    /// `*ptr op= v` (`⌈ ⌊`, else `+`) with one relaxed atomic at `scope`; the value
    /// `*ptr` held before.
    fn atomic_fold(
        &mut self,
        op: BinOp,
        elem: ElemType,
        scope: u32,
        ptr: Word,
        v: Word,
    ) -> R<Word> {
        let t = self.ty(elem);
        let scope = self.c_u32(scope);
        let relaxed = self.c_u32(0);
        match op {
            BinOp::Max => self.b.atomic_s_max(t, None, ptr, scope, relaxed, v),
            BinOp::Min => self.b.atomic_s_min(t, None, ptr, scope, relaxed, v),
            _ => self.b.atomic_i_add(t, None, ptr, scope, relaxed, v),
        }
        .map_err(be)
    }

    /// `slot[g] op= v` in workgroup memory: an i32 slot in `lo`; with `hi`, an i64
    /// slot as its low word in `lo` and its high word in `hi` (the low word's
    /// carry, seen from the value it held before, goes to the high word with `v`'s
    /// own high word: the pair sums exactly, modulo 2^64 as an i64 would).
    fn shared_fold(&mut self, op: BinOp, lo: Word, hi: Option<Word>, g: Word, v: Word) -> R<()> {
        let it = ElemType::I32;
        let ity = self.ty(it);
        let u = self.u32_t;
        let pl = self.shared_ptr(lo, it, g)?;
        let Some(hi) = hi else {
            self.atomic_fold(op, it, SCOPE_WORKGROUP, pl, v)?;
            return Ok(());
        };
        let t64 = self.ty(ElemType::I64);
        let vl = self.b.u_convert(u, None, v).map_err(be)?;
        let c32 = self.c_u32(32);
        let vh = self.b.shift_right_logical(t64, None, v, c32).map_err(be)?;
        let vh = self.b.u_convert(u, None, vh).map_err(be)?;
        let vli = self.b.bitcast(ity, None, vl).map_err(be)?;
        let old = self.atomic_fold(BinOp::Add, it, SCOPE_WORKGROUP, pl, vli)?;
        let old = self.b.bitcast(u, None, old).map_err(be)?;
        let new = self.uadd(old, vl)?;
        let carry = self.ult(new, old)?;
        let (one, zero) = (self.c_u32(1), self.c_u32(0));
        let c = self.b.select(u, None, carry, one, zero).map_err(be)?;
        let add_hi = self.uadd(vh, c)?;
        let any = self
            .b
            .i_not_equal(self.bool_t, None, add_hi, zero)
            .map_err(be)?;
        self.if_then(any, |e| {
            let ph = e.shared_ptr(hi, it, g)?;
            let a = e.b.bitcast(ity, None, add_hi).map_err(be)?;
            e.atomic_fold(BinOp::Add, it, SCOPE_WORKGROUP, ph, a)?;
            Ok(())
        })
    }

    /// Adds workgroup slot `k` to `out[k]` unless it holds `identity` (an i32 slot's;
    /// no item of the share folded into it).
    #[allow(clippy::too_many_arguments)]
    fn flush_slot(
        &mut self,
        cx: &Cx,
        op: BinOp,
        out: u32,
        lo: Word,
        hi: Option<Word>,
        k: Word,
        identity: Word,
    ) -> R<()> {
        let it = ElemType::I32;
        let ity = self.ty(it);
        let pl = self.shared_ptr(lo, it, k)?;
        let l = self.load(ity, pl)?;
        let (v, id) = match hi {
            None => (l, identity),
            Some(hi) => {
                let ph = self.shared_ptr(hi, it, k)?;
                let h = self.load(ity, ph)?;
                let u = self.u32_t;
                let v2 = self.b.type_vector(u, 2);
                let l = self.b.bitcast(u, None, l).map_err(be)?;
                let h = self.b.bitcast(u, None, h).map_err(be)?;
                let pair = self.b.composite_construct(v2, None, [l, h]).map_err(be)?;
                // The first component is the low half.
                let t64 = self.ty(ElemType::I64);
                let v = self.b.bitcast(t64, None, pair).map_err(be)?;
                (v, self.scalar(Scalar::I64(0)))
            }
        };
        let touched = self.b.i_not_equal(self.bool_t, None, v, id).map_err(be)?;
        self.if_then(touched, |e| e.device_fold(cx, op, out, k, v))
    }
}

impl Emitter {
    /// Indexed assignment's scatter: item `j` is stored at its position `p` when
    /// `owner[p]` is `j` (the last item naming `p`), so repeated positions take the
    /// last item, as APL's do. With `guard`, nothing is stored once the status word
    /// holds an error (`out` may be the array being assigned).
    pub(super) fn scatter_kernel(
        &mut self,
        cx: &mut Cx,
        index: &KExpr,
        value: &KExpr,
        owner: u32,
        out: u32,
        guard: bool,
    ) -> R<()> {
        let i = self.local(self.u32_t);
        let k = self.local(self.u32_t);
        if guard {
            let status = cx.status.ok_or_else(|| {
                crate::SpirvError::Build("a guarded scatter without a status word".into())
            })?;
            let p = self.ptr(StorageClass::StorageBuffer, self.u32_t);
            let zero = self.c_u32(0);
            let ptr = self
                .b
                .access_chain(p, None, status, [zero, zero])
                .map_err(be)?;
            let word = self.load(self.u32_t, ptr)?;
            let clean = self.b.i_equal(self.bool_t, None, word, zero).map_err(be)?;
            return self.if_then(clean, |e| {
                e.scatter_items(cx, index, value, owner, out, i, k)
            });
        }
        self.scatter_items(cx, index, value, owner, out, i, k)
    }

    #[allow(clippy::too_many_arguments)]
    fn scatter_items(
        &mut self,
        cx: &mut Cx,
        index: &KExpr,
        value: &KExpr,
        owner: u32,
        out: u32,
        i: rspirv::spirv::Word,
        k: rspirv::spirv::Word,
    ) -> R<()> {
        let per = |e: &mut Self, cx: &Cx, j: rspirv::spirv::Word| -> R<()> {
            let p = e.expr(cx, index, Ix::flat(j))?;
            let p = e.b.bitcast(e.u32_t, None, p).map_err(be)?;
            let o = e.load_elem(cx, owner, p)?;
            let o = e.b.bitcast(e.u32_t, None, o).map_err(be)?;
            let mine = e.b.i_equal(e.bool_t, None, o, j).map_err(be)?;
            e.if_then(mine, |e| {
                let v = e.expr(cx, value, Ix::flat(j))?;
                e.store_elem(cx, out, p, v)
            })
        };
        self.unrolled_share(cx, &per, i, k)
    }
}
