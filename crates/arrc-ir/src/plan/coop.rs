//! Integer `+.×` on the device's cooperative matrices (VK_KHR_cooperative_matrix):
//! operands within ±127 packed to 8-bit integers, multiplied a fragment at a time by
//! a subgroup with exact i32 sums, then stored in the result's shape and type.

use super::*;
use tile::CoopTile;

impl Planner<'_> {
    /// The tile of an 8-bit product on this device: the tuned one where it runs
    /// here, else the default; `None` where the device has no 8-bit matrices or
    /// the tile does not fit it.
    pub(super) fn int8_tile(&self) -> Option<CoopTile> {
        let (m, n, k) = self.opts.int8_matrices?;
        let runs = |t: CoopTile| {
            // (Devices with cooperative matrices take workgroups of 1024.)
            t.runs_on(self.opts.subgroup_size, 1024, self.opts.max_shared_bytes)
        };
        let tuned = self
            .opts
            .coop_tile
            .map(|t| CoopTile { m, n, k, ..t })
            .filter(|&t| runs(t));
        tuned.or(Some(CoopTile::of_shape((m, n, k))).filter(|&t| runs(t)))
    }

    /// Whether integer `lhs+.×rhs` (matrices `m×k` and `k×n`, result `v`) goes to
    /// the device's 8-bit cooperative matrices: the device has them, both operands
    /// are within ±127 by their bounds (booleans, small literals, residues), the sums
    /// stay within i32 (127²·k), no length is computed on the device, and the
    /// kernel's two staged steps fit the workgroup memory.
    pub(super) fn takes_int8_matrices(&self, v: Value, (lhs, rhs): (Value, Value)) -> bool {
        let f = self.v.func;
        if self.int8_tile().is_none() {
            return false;
        }
        let small = |x: Value| crate::bounds::magnitude(f, x).is_some_and(|m| m <= 127);
        let dims = [f.ty(lhs).shape[0], f.ty(lhs).shape[1], f.ty(rhs).shape[1]];
        f.ty(v).elem.is_int()
            && small(lhs)
            && small(rhs)
            && integer_sum_bound(f, lhs, rhs).is_some_and(|s| s < 1 << 31)
            && !dims.iter().any(|d| matches!(d, Dim::Dyn(_)))
    }

    /// `lhs+.×rhs` as [`Self::takes_int8_matrices`] allows: each operand packed four
    /// 8-bit integers to a word along its rows (padded to whole workgroup tiles
    /// and staged steps of `k`), their product on
    /// cooperative matrices into an i32 array of padded rows, then each output read
    /// from there into the result.
    ///
    /// With `range` (words zeroed, and each operand's limit for the i32 tiles), the
    /// packing also finds how large the operands are (`PackI8::range`: word 0 past
    /// ±127, word 1 past the limit), and the product and the read-out run only
    /// where word 0 stays 0.
    pub(super) fn int8_matmul(
        &mut self,
        v: Value,
        (lhs, rhs): (Value, Value),
        out_b: usize,
        range: Option<(usize, (u32, u32))>,
    ) -> Result<()> {
        let f = self.v.func;
        let tile = self
            .int8_tile()
            .unwrap_or_else(|| CoopTile::of_shape((16, 16, 32)));
        let (m, k, n) = (f.ty(lhs).shape[0], f.ty(lhs).shape[1], f.ty(rhs).shape[1]);
        let whole = |d: Dim, per: u32| Count::Groups {
            of: Box::new(Count::Product(vec![d])),
            per_group: per,
            max: u32::MAX,
        };
        // A length padded to whole `per`, counted in units of `unit`.
        let padded = |d: Dim, per: u32, unit: u32| Count::Scaled {
            of: Box::new(whole(d, per)),
            times: per / unit,
        };
        // Both operands packed along their rows: `a` m×k to whole tiles of rows and
        // steps of `k`, `b` k×n to whole steps of rows and tiles of columns.
        let kw = padded(k, tile.tile_k(), 4);
        let np = padded(n, tile.tile_n(), 1);
        let operands = [
            (lhs, (m, k), padded(m, tile.tile_m(), 1), kw.clone()),
            (
                rhs,
                (k, n),
                padded(k, tile.tile_k(), 1),
                padded(n, tile.tile_n(), 4),
            ),
        ];
        let mut packed = [0; 2];
        let limits = range.map_or([None, None], |(_, (la, lb))| [Some(la), Some(lb)]);
        for (i, (arg, (r, c), rows, words)) in operands.into_iter().enumerate() {
            let len = Count::Times(vec![rows, words.clone()]);
            let b = self.new_buffer(ElemType::I32, len.clone(), BufferRole::Temp);
            let mut kb = self.kb();
            // (Read in its own type: the range is checked before it is narrowed.)
            let expr = read_as_is(self.expr(arg, &IExpr::Index, &mut kb));
            let out = kb.bind(b, ElemType::I32, true);
            self.bind_status(&mut kb, expr.may_fail());
            let range = range
                .zip(limits[i])
                .map(|((flags, _), limit)| (kb.bind(flags, ElemType::I32, true), vec![127, limit]));
            let kind = KernelKind::PackI8 {
                arg: expr,
                out,
                range,
            };
            let push = vec![
                ("n", len.clone()),
                ("r", Count::Product(vec![r])),
                ("c", Count::Product(vec![c])),
                ("w", words),
            ];
            let groups = self.grid(&len, self.opts.map_groups);
            self.push_kernel("pack_i8", kind, kb, push, groups);
            packed[i] = b;
        }
        // The product, in padded rows of i32 (where the operands were small).
        if let Some((flags, _)) = range {
            self.guard = Some((flags, Some(0), None));
        }
        let sums = self.new_buffer(
            ElemType::I32,
            Count::Times(vec![padded(m, tile.tile_m(), 1), np.clone()]),
            BufferRole::Temp,
        );
        let mut kb = self.kb();
        let a = kb.bind(packed[0], ElemType::I32, false);
        let b = kb.bind(packed[1], ElemType::I32, false);
        let out = kb.bind(sums, ElemType::I32, true);
        self.bind_status(&mut kb, false);
        let tiles_n = whole(n, tile.tile_n());
        let tiles = Count::Times(vec![whole(m, tile.tile_m()), tiles_n.clone()]);
        let groups = Count::Groups {
            of: Box::new(tiles.clone()),
            per_group: 1,
            max: self.opts.map_groups,
        };
        let push = vec![("n", tiles), ("tn", tiles_n), ("kw", kw), ("np", np)];
        let kind = KernelKind::CoopMatMul { a, b, out, tile };
        self.push_kernel("int8_matmul", kind, kb, push, groups);
        if let Some(kernel) = self.plan.kernels.last_mut() {
            kernel.workgroup_size = tile.subgroups() * self.opts.subgroup_size.max(1);
        }
        // Each output from its padded row, in the result's type.
        let mut kb = self.kb();
        let step = tile.tile_n();
        let cols = kb.dim(n);
        let row_len = IExpr::times(
            IExpr::quot(
                IExpr::plus(cols.clone(), IExpr::Const(step - 1)),
                IExpr::Const(step),
            ),
            IExpr::Const(step),
        );
        let at = IExpr::plus(
            IExpr::times(IExpr::quot(IExpr::Index, cols.clone()), row_len),
            IExpr::Rem(Box::new(IExpr::Index), Box::new(cols)),
        );
        let load = KExpr::Load {
            binding: kb.bind(sums, ElemType::I32, false),
            elem: ElemType::I32,
            index: at,
        };
        let elem = f.ty(v).elem;
        let expr = if elem == ElemType::I32 {
            load
        } else {
            KExpr::Cast {
                to: elem,
                arg: Box::new(load),
            }
        };
        self.push_map("int8_matmul_out", v, kb, expr, out_b);
        self.guard = None;
        Ok(())
    }

    /// For an integer `+.×` whose operands' bounds leave its sums open (arrays from
    /// outside, results of earlier statements), with a known inner length `k` and
    /// operands that cannot fail: the faster products exact for operands found
    /// small enough on the device (`RangeTiers`).
    pub(super) fn range_tiers(
        &self,
        v: Value,
        (lhs, rhs): (Value, Value),
        (fold, pair): (BinOp, BinOp),
    ) -> Option<RangeTiers> {
        let f = self.v.func;
        let Dim::Known(k) = f.ty(lhs).shape[1] else {
            return None;
        };
        let dims = [f.ty(lhs).shape[0], f.ty(rhs).shape[1]];
        let ints = [lhs, rhs].iter().all(|&x| f.ty(x).elem.is_int());
        if (fold, pair) != (BinOp::Add, BinOp::Mul)
            || !f.ty(v).elem.is_int()
            || !ints
            || k == 0
            || dims.iter().any(|d| matches!(d, Dim::Dyn(_)))
            || integer_sum_bound(f, lhs, rhs).is_some_and(|s| s < 1 << 31)
            || can_fail(f, lhs, self.opts.float64)
            || can_fail(f, rhs, self.opts.float64)
        {
            return None;
        }
        // i32 sums: |a|·|b|·k within i32. An operand whose bound is small leaves the
        // other the rest (`P+.×A` of a boolean `A`: P within 2^31÷k); else each
        // gets the square root.
        let most = (i32::MAX as u64) / k;
        let bound = |x: Value| crate::bounds::magnitude(f, x).map(|m| m.min(1 << 32) as u64);
        let root = most.isqrt();
        let (la, lb) = match (bound(lhs), bound(rhs)) {
            (Some(a), _) if (1..=root).contains(&a) => (a, most / a),
            (_, Some(b)) if (1..=root).contains(&b) => (most / b, b),
            _ => (root, root),
        };
        let cap = |l: u64| l.min(i32::MAX as u64) as u32;
        let int8 = self.int8_tile().is_some() && most >= 127 * 127;
        (la >= 1 && lb >= 1).then_some(RangeTiers {
            int8,
            i32_limits: (cap(la), cap(lb)),
        })
    }

    /// Words, zeroed, that kernels set where an element of `lhs` or `rhs` is past a
    /// tier's limit: with 8-bit matrices, word 0 for ±127 and word 1 for the i32
    /// tiles' limits (the packing finds both); else word 0 for those
    /// (`KernelKind::RangeFlag`).
    pub(super) fn range_flags(&mut self, (lhs, rhs): (Value, Value), tiers: &RangeTiers) -> usize {
        let words = 1 + tiers.int8 as u64;
        let flags = self.new_buffer(ElemType::I32, Count::known(words), BufferRole::Zeroed);
        if tiers.int8 {
            return flags;
        }
        for (x, limit) in [(lhs, tiers.i32_limits.0), (rhs, tiers.i32_limits.1)] {
            let mut kb = self.kb();
            let arg = read_as_is(self.expr(x, &IExpr::Index, &mut kb));
            let out = kb.bind(flags, ElemType::I32, true);
            self.bind_status(&mut kb, false);
            let n = self.len_of(x);
            let groups = self.grid(&n, self.opts.map_groups);
            let kind = KernelKind::RangeFlag {
                arg,
                limits: vec![limit],
                out,
            };
            self.push_kernel("range_flag", kind, kb, vec![("n", n)], groups);
        }
        flags
    }
}

/// The faster ways to an integer `+.×` whose operands' sizes are found on the
/// device: on 8-bit matrices (where the device has them and both operands are
/// within ±127), and in i32 tiles (where `a` is within `i32_limits.0` and `b`
/// within `i32_limits.1`, so that every sum fits i32).
pub(super) struct RangeTiers {
    pub int8: bool,
    pub i32_limits: (u32, u32),
}

/// An integer operand as the program reads it: not the i64 a product widens an i32
/// or a boolean to (range checks compare it as read; packing narrows it).
fn read_as_is(e: KExpr) -> KExpr {
    match e {
        KExpr::Cast { arg, .. } if matches!(arg.elem(), ElemType::I32 | ElemType::Bool) => *arg,
        e => e,
    }
}
