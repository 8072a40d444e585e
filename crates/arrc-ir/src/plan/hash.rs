//! `x⍳y` and `y∊x` by hashing: a table of `x`'s keys built with atomics, then one
//! probe of it for each needle (`KernelKind::HashInsert`, `HashProbe`). Where keys
//! compare exactly and fit 32 bits this replaces sorting `x` and a binary search in
//! device memory (about one random access per key and per needle, against a radix
//! sort and 11 or more dependent steps a needle).

use super::*;
use crate::plan::kinds::HashLayout;

impl Planner<'_> {
    /// Whether `Inst::Search` `v` is planned by hashing: its kind is `⍳` or `∊`,
    /// and its keys are f32, or integers or booleans that fit 32 bits (64-bit ones
    /// known to fit, in both arguments), with the key array's length known before
    /// the kernels run and its table (4n words for `⍳`, 2n for `∊`, see
    /// `HashLayout`) within one storage binding and [`MAX_DEVICE_COUNT`] words. Its
    /// grade is then not computed.
    pub(super) fn hashes(&self, v: Value) -> bool {
        let f = self.v.func;
        let Inst::Search {
            hay, needles, kind, ..
        } = f.inst(v)
        else {
            return false;
        };
        if !self.opts.hash_search || matches!(kind, SearchKind::Interval { .. }) {
            return false;
        }
        let exact = match f.ty(*hay).elem {
            // f32 keys compare exactly (only f64 ones within ⎕CT), by their bits
            // with -0 as 0, as the sorted search compares them.
            ElemType::I32 | ElemType::Bool | ElemType::F32 => true,
            ElemType::I64 => {
                crate::bounds::fits_i32(f, *hay) && crate::bounds::fits_i32(f, *needles)
            }
            _ => false,
        };
        // The table within one storage binding, its length known before the run:
        // else the sorted search. (A table bound as several windows chose one by a
        // branch at every access: on an H200, `x⍳y` of 2^27 keys in a table split
        // a third past its first window took 70 ms, against 21 ms in one window
        // and 50 ms sorted.)
        let layout = HashLayout {
            index: matches!(kind, SearchKind::IndexOf { .. }),
        };
        let window = self.opts.window_bytes.max(1 << 16);
        let (_, words) = self.table_size(*hay, layout);
        let fits = words
            .constant()
            .is_some_and(|w| w <= MAX_DEVICE_COUNT && w * 4 <= window);
        exact && !self.has_dyn(*hay) && fits
    }

    /// The slots of `hay`'s table, `n + max(1, ⌈n·q/4⌉)` for `n` keys
    /// (`PlanOptions::hash_spare_quarters` q: more slots than keys, so every probe
    /// meets an empty one), and its u32 words (see `HashLayout`).
    fn table_size(&self, hay: Value, layout: HashLayout) -> (Count, Count) {
        let n = self.len_of(hay);
        let slots = Count::Sum(vec![
            n.clone(),
            Count::Groups {
                of: Box::new(Count::Scaled {
                    of: Box::new(n),
                    times: self.opts.hash_spare_quarters.max(1),
                }),
                per_group: 4,
                max: u32::MAX,
            },
        ]);
        let words = Count::Scaled {
            of: Box::new(slots.clone()),
            times: layout.stride(),
        };
        (slots, words)
    }

    /// `hay⍳needles` / `needles∊hay` by a hash table of `hay` (see [`Self::hashes`]).
    pub(super) fn hash_search(
        &mut self,
        v: Value,
        hay: Value,
        needles: Value,
        kind: SearchKind,
        is_result: bool,
    ) {
        let layout = HashLayout {
            index: matches!(kind, SearchKind::IndexOf { .. }),
        };
        let n = self.len_of(hay);
        // Zeroed: every slot empty.
        let (slots, words) = self.table_size(hay, layout);
        let table_b = self.new_buffer(ElemType::I32, words, BufferRole::Zeroed);
        let zero_b = self.new_buffer(ElemType::I32, Count::known(1), BufferRole::Zeroed);

        let mut kb = self.kb();
        let key = as_word(self.expr(hay, &IExpr::Index, &mut kb));
        let table = kb.bind(table_b, ElemType::I32, true);
        let zero = kb.bind(zero_b, ElemType::I32, true);
        self.bind_status(&mut kb, key.may_fail());
        let groups = self.grid(&n, self.opts.map_groups);
        self.push_kernel(
            "hash_insert",
            KernelKind::HashInsert {
                key,
                table,
                zero,
                index: layout.index,
            },
            kb,
            vec![("n", n.clone()), ("slots", slots.clone())],
            groups,
        );

        let mut kb = self.kb();
        let needle = as_word(self.expr(needles, &IExpr::Index, &mut kb));
        let table = kb.bind(table_b, ElemType::I32, false);
        let zero = kb.bind(zero_b, ElemType::I32, false);
        let (out_b, out, m, n_from, groups) =
            self.search_output(v, is_result, &mut kb, needle.may_fail());
        self.push_kernel(
            "hash_probe",
            KernelKind::HashProbe {
                needle,
                table,
                zero,
                out,
                kind,
            },
            kb,
            vec![("m", m), ("n", n), ("slots", slots)],
            groups,
        );
        self.set_n_from(n_from);
        self.buffer_of[v.index()] = Some(out_b);
    }
}

/// A key as an i32 (booleans, and 64-bit integers known to fit); f32 keys stay
/// (the kernels take their bits).
fn as_word(e: KExpr) -> KExpr {
    match e.elem() {
        ElemType::I32 | ElemType::F32 => e,
        _ => KExpr::Cast {
            to: ElemType::I32,
            arg: Box::new(e),
        },
    }
}
