//! `Inst::SegScan`, a scan restarted at each run's start, by tiles (reduce, then
//! scan): where there is more than one tile, a first kernel stores each tile's
//! aggregate (its fold from its last start, and whether it has one), the aggregates
//! are scanned the same way (recursively, a level per factor of the tile), and a
//! second kernel scans each tile again from the aggregate scan's value before it.
//! Every value is folded in the fold's accumulator (f64 for f32), each item in a
//! fixed order: the same input gives the same bits.

use super::*;

/// Invocations of a segmented scan's workgroup (at most; fewer where the planner's
/// workgroups are smaller), and elements each folds: a tile of 2048 elements, so
/// 2^26 items scan their tiles' aggregates in two more levels.
const SEG_INVOCATIONS: u32 = 256;
const SEG_ITEMS: u32 = 8;

/// What a level of a segmented scan reads.
#[derive(Clone, Copy)]
enum SegSource {
    /// The instruction's operands.
    Values { arg: Value, starts: Value },
    /// A lower level's tile aggregates: values (the accumulator's type) and flags
    /// (i32, not 0 where the tile has a start).
    Tiles { values: usize, flags: usize },
}

impl Planner<'_> {
    pub(super) fn seg_scan(
        &mut self,
        v: Value,
        op: BinOp,
        (arg, starts): (Value, Value),
        is_result: bool,
    ) -> Result<()> {
        let f = self.v.func;
        let Some(n) = known(&f.ty(v).shape) else {
            return Err(err::unsupported(
                "a scan restarted at runs of a length computed on the device",
                f.span(v),
            ));
        };
        let elem = f.ty(v).elem;
        let acc = self.accumulator(&Fold::Assoc(op), elem);
        let out = self.result_or_temp(v, is_result);
        // Both kernels of a level read the items: computed once where they are an
        // expression (`⌸`'s gather of the items in sorted order).
        if n > u64::from(self.seg_invocations() * SEG_ITEMS) {
            self.materialize(arg);
        }
        let source = SegSource::Values { arg, starts };
        self.seg_scan_level(op, source, acc, n, (out, elem), Some(v));
        self.buffer_of[v.index()] = Some(out);
        Ok(())
    }

    /// The value and flag expressions of `source`, bound in `kb`.
    fn seg_source(
        &mut self,
        source: SegSource,
        acc: ElemType,
        kb: &mut KernelBindings,
    ) -> (KExpr, KExpr) {
        match source {
            SegSource::Values { arg, starts } => {
                let value = widen(self.expr(arg, &IExpr::Index, kb), acc);
                (value, self.expr(starts, &IExpr::Index, kb))
            }
            SegSource::Tiles { values, flags } => {
                let load = |kb: &mut KernelBindings, b: usize, elem: ElemType| KExpr::Load {
                    binding: kb.bind(b, elem, false),
                    elem,
                    index: IExpr::Index,
                };
                (load(kb, values, acc), load(kb, flags, ElemType::I32))
            }
        }
    }

    fn seg_invocations(&self) -> u32 {
        SEG_INVOCATIONS.min(self.opts.workgroup_size).max(1)
    }

    /// One level: `n` elements of `source` scanned into `out` (of type `elem`);
    /// `checked`, the instruction whose overflow error the level raises (the last).
    fn seg_scan_level(
        &mut self,
        op: BinOp,
        source: SegSource,
        acc: ElemType,
        n: u64,
        (out, elem): (usize, ElemType),
        checked: Option<Value>,
    ) {
        let invocations = self.seg_invocations();
        let tile = u64::from(invocations * SEG_ITEMS);
        let tiles = n.div_ceil(tile);
        // Workgroups take tiles in turn.
        let groups = Count::Groups {
            of: Box::new(Count::known(n)),
            per_group: invocations * SEG_ITEMS,
            max: self.opts.map_groups,
        };
        let shape = (invocations, SEG_ITEMS);
        // The values go out through workgroup memory where it holds them beside
        // the invocations' folds and flags.
        let bytes = |t: ElemType| u64::from(invocations) * t.size() as u64;
        let staged_bytes =
            bytes(elem) * u64::from(SEG_ITEMS + 1) + bytes(acc) + bytes(ElemType::I32);
        let staged = staged_bytes <= u64::from(self.opts.max_shared_bytes);
        let kind = |value, flag, out, aggregates, carry, overflow| KernelKind::SegScan {
            value,
            flag,
            shape: SegScanShape {
                op,
                out,
                aggregates,
                carry,
                overflow,
                invocations,
                staged,
            },
        };
        let carry = if tiles > 1 {
            let values = self.new_buffer(acc, Count::known(tiles), BufferRole::Temp);
            let flags = self.new_buffer(ElemType::I32, Count::known(tiles), BufferRole::Temp);
            let mut kb = self.kb();
            let (value, flag) = self.seg_source(source, acc, &mut kb);
            let aggregates = (
                kb.bind(values, acc, true),
                kb.bind(flags, ElemType::I32, true),
            );
            self.bind_status(&mut kb, value.may_fail() || flag.may_fail());
            let k = kind(value, flag, None, Some(aggregates), None, None);
            let push = vec![("n", Count::known(n))];
            self.push_kernel_shaped("seg_scan_tiles", k, kb, push, groups.clone(), shape);
            let scanned = self.new_buffer(acc, Count::known(tiles), BufferRole::Temp);
            let tiles_source = SegSource::Tiles { values, flags };
            self.seg_scan_level(op, tiles_source, acc, tiles, (scanned, acc), None);
            Some(scanned)
        } else {
            None
        };
        let mut kb = self.kb();
        let (value, flag) = self.seg_source(source, acc, &mut kb);
        // Raised by the device (the host would check every item, and only the runs'
        // last ones are results), with a bit after the items' own.
        let overflow = checked.and_then(|v| self.overflow_bit(v, &Fold::Assoc(op), false));
        let carry = carry.map(|b| kb.bind(b, acc, false));
        let out = kb.bind(out, elem, true);
        let fails = value.may_fail() || flag.may_fail() || overflow.is_some();
        self.bind_status(&mut kb, fails);
        let k = kind(value, flag, Some(out), None, carry, overflow);
        self.push_kernel_shaped(
            "seg_scan",
            k,
            kb,
            vec![("n", Count::known(n))],
            groups,
            shape,
        );
    }
}
