//! Integer `+.×` on the device's cooperative matrices (VK_KHR_cooperative_matrix):
//! operands within ±127 packed to 8-bit integers, multiplied a fragment at a time by
//! a subgroup with exact i32 sums, then stored in the result's shape and type.

use super::*;
use folds::read_as_is;
use tile::CoopTile;

impl Planner<'_> {
    /// The tile of an 8-bit product on this device: the tuned one where it runs
    /// here, else the default (`CoopTile::for_device`); `None` where the device
    /// has no 8-bit matrices or no tile fits it.
    pub(super) fn int8_tile(&self) -> Option<CoopTile> {
        let (m, n, k) = self.opts.int8_matrices?;
        // (Devices with cooperative matrices take workgroups of 1024.)
        let (sg, shared) = (self.opts.subgroup_size, self.opts.max_shared_bytes);
        let tuned = self
            .opts
            .coop_tile
            .map(|t| CoopTile { m, n, k, ..t })
            .filter(|&t| t.runs_on(sg, 1024, shared));
        tuned.or_else(|| CoopTile::for_device((m, n, k), sg, 1024, shared))
    }

    /// Whether integer `lhs+.×rhs` (matrices `m×k` and `k×n`, result `v`) goes to
    /// the device's 8-bit cooperative matrices: the device has them, both operands
    /// are within ±127 by their bounds (booleans, small literals, residues), the sums
    /// stay within i32 (127²·k), no length is computed on the device, and the
    /// kernel's two staged steps fit the workgroup memory.
    pub(super) fn takes_int8_matrices(&self, v: Value, (lhs, rhs): (Value, Value)) -> bool {
        let f = self.v.func;
        let small = |x: Value| crate::bounds::magnitude(f, x).is_some_and(|m| m <= 127);
        self.int8_tile().is_some()
            && integer_product_of_planned_lengths(f, v, (lhs, rhs))
            && small(lhs)
            && small(rhs)
            && integer_sum_bound(f, lhs, rhs).is_some_and(|s| s < 1 << 31)
    }

    /// `lhs+.×rhs` as [`Self::takes_int8_matrices`] allows: each operand packed four
    /// 8-bit integers to a word along its rows (padded to whole workgroup tiles
    /// and staged steps of `k`), their product on cooperative matrices into an i32
    /// array of padded rows, then each output read from there into the result.
    ///
    /// With `range` (zeroed words, and the tiers), the packing also finds how large
    /// the operands are (`PackI8::range`: word 0 past ±127, word 1 past ±16319,
    /// word 2 past the i32 tiles' limits), the product runs only where word 0 stays
    /// 0, and where only word 0 is set, each operand not known to be within ±127
    /// is cut into two 8-bit slices (`x = 128h + l`, `PackI8::slice`) and the two
    /// or four products of slices are summed in i64 (exact: 127²·k fits i32 in
    /// each).
    pub(super) fn int8_matmul(
        &mut self,
        v: Value,
        (lhs, rhs): (Value, Value),
        out_b: usize,
        range: Option<(usize, &RangeTiers)>,
    ) -> Result<()> {
        let f = self.v.func;
        let tile = self
            .int8_tile()
            .unwrap_or_else(|| CoopTile::of_shape((16, 16, 32)));
        let limits = range.map(|(flags, t)| {
            let (la, lb) = t.i32_limits;
            (
                flags,
                [vec![127, SLICED_MOST, la], vec![127, SLICED_MOST, lb]],
            )
        });
        let mut whole = [0; 2];
        for (i, packed) in whole.iter_mut().enumerate() {
            let r = limits.as_ref().map(|(flags, l)| (*flags, l[i].clone()));
            *packed = self.pack_i8([lhs, rhs], i, tile, None, r);
        }
        if let Some((flags, _)) = range {
            self.guard = Some((flags, Some(0), None));
        }
        let sums = self.coop_product((lhs, rhs), whole, tile);
        self.read_out(v, (rhs, tile), &[(sums, 0)], out_b);
        if let Some((flags, _)) = range.filter(|(_, t)| t.slices) {
            // Within ±16319: operands past ±127 in two slices.
            self.guard = Some((flags, Some(1), Some(0)));
            let small = |x: Value| crate::bounds::magnitude(f, x).is_some_and(|m| m <= 127);
            let mut slices: [Vec<(usize, u32)>; 2] = [vec![], vec![]];
            for (i, x) in [lhs, rhs].into_iter().enumerate() {
                slices[i] = if small(x) {
                    vec![(whole[i], 0)]
                } else {
                    vec![
                        (self.pack_i8([lhs, rhs], i, tile, Some(true), None), 1),
                        (self.pack_i8([lhs, rhs], i, tile, Some(false), None), 0),
                    ]
                };
            }
            let mut parts = vec![];
            for &(pa, sa) in &slices[0] {
                for &(pb, sb) in &slices[1] {
                    parts.push((self.coop_product((lhs, rhs), [pa, pb], tile), sa + sb));
                }
            }
            self.read_out(v, (rhs, tile), &parts, out_b);
        }
        self.guard = None;
        Ok(())
    }

    /// Operand `i` of `ops` (`a` m×k or `b` k×n) packed, padded to the tile
    /// (`PackI8`): `a` along its rows, `b` down its columns; whole, or its high or
    /// low slice (`slice`), checking its range where given.
    fn pack_i8(
        &mut self,
        ops: [Value; 2],
        i: usize,
        tile: CoopTile,
        slice: Option<bool>,
        range: Option<(usize, Vec<u32>)>,
    ) -> usize {
        let f = self.v.func;
        let arg = ops[i];
        let (r, c) = (f.ty(arg).shape[0], f.ty(arg).shape[1]);
        let cols = i == 1;
        // Lines to whole tiles, the inner length `k` along them to whole steps:
        // `a`'s rows, `b`'s columns.
        let (lines, along) = if cols {
            (padded(c, tile.tile_n(), 1), padded(r, tile.tile_k(), 4))
        } else {
            (padded(r, tile.tile_m(), 1), padded(c, tile.tile_k(), 4))
        };
        let len = Count::Times(vec![lines, along.clone()]);
        let b = self.new_buffer(ElemType::I32, len.clone(), BufferRole::Temp);
        let mut kb = self.kb();
        // (Read in its own type: the range is checked before it is narrowed.)
        let expr = read_as_is(self.expr(arg, &IExpr::Index, &mut kb));
        let out = kb.bind(b, ElemType::I32, true);
        self.bind_status(&mut kb, expr.may_fail());
        let range = range.map(|(flags, l)| (kb.bind(flags, ElemType::I32, true), l));
        let kind = KernelKind::PackI8 {
            arg: expr,
            out,
            range,
            slice,
            cols,
        };
        let push = vec![
            ("n", len.clone()),
            ("r", Count::Product(vec![r])),
            ("c", Count::Product(vec![c])),
            ("w", along),
        ];
        // Four words an invocation (not the maps' 16): each word is four reads and
        // their range checks, and a 1024² operand is 2^18 words, which 16 an
        // invocation left to 64 workgroups.
        let (wg, items) = (self.opts.workgroup_size, 4);
        let groups = Count::Groups {
            of: Box::new(len),
            per_group: wg * items,
            max: self.opts.map_groups,
        };
        self.push_kernel_shaped("pack_i8", kind, kb, push, groups, (wg, items));
        b
    }

    /// The product of packed operands (`CoopMatMul`), in padded rows of i32.
    fn coop_product(
        &mut self,
        (lhs, rhs): (Value, Value),
        packed: [usize; 2],
        tile: CoopTile,
    ) -> usize {
        let f = self.v.func;
        let (m, k, n) = (f.ty(lhs).shape[0], f.ty(lhs).shape[1], f.ty(rhs).shape[1]);
        let np = padded(n, tile.tile_n(), 1);
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
        let kw = padded(k, tile.tile_k(), 4);
        let push = vec![("n", tiles), ("tn", tiles_n), ("kw", kw), ("np", np)];
        let kind = KernelKind::CoopMatMul { a, b, out, tile };
        self.push_kernel("int8_matmul", kind, kb, push, groups);
        if let Some(kernel) = self.plan.kernels.last_mut() {
            kernel.workgroup_size = tile.subgroups() * self.opts.subgroup_size.max(1);
        }
        sums
    }

    /// Each output of `v` into buffer `out_b`: the sum over `parts` of the output's
    /// element of each padded product times 128^shift (in i64 where there is more
    /// than one), in the result's type.
    fn read_out(
        &mut self,
        v: Value,
        (rhs, tile): (Value, CoopTile),
        parts: &[(usize, u32)],
        out_b: usize,
    ) {
        let f = self.v.func;
        let n = f.ty(rhs).shape[1];
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
        let elem = f.ty(v).elem;
        let load = |e: &mut KernelBindings, b: usize| KExpr::Load {
            binding: e.bind(b, ElemType::I32, false),
            elem: ElemType::I32,
            index: at.clone(),
        };
        let expr = match parts {
            [(b, 0)] => load(&mut kb, *b),
            _ => {
                let wide = |x: KExpr| KExpr::Cast {
                    to: ElemType::I64,
                    arg: Box::new(x),
                };
                let binary = |op, lhs, rhs| KExpr::Binary {
                    op,
                    elem: ElemType::I64,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                    error_bit: None,
                };
                let mut sum: Option<KExpr> = None;
                for &(b, shift) in parts {
                    let scaled = binary(
                        BinOp::Mul,
                        wide(load(&mut kb, b)),
                        KExpr::Const(Scalar::I64(1 << (7 * shift))),
                    );
                    sum = Some(match sum {
                        None => scaled,
                        Some(s) => binary(BinOp::Add, s, scaled),
                    });
                }
                sum.expect("a part")
            }
        };
        let expr = if expr.elem() == elem {
            expr
        } else {
            KExpr::Cast {
                to: elem,
                arg: Box::new(expr),
            }
        };
        self.push_map("int8_matmul_out", v, kb, expr, out_b);
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
        let ints = [lhs, rhs].iter().all(|&x| f.ty(x).elem.is_int());
        if (fold, pair) != (BinOp::Add, BinOp::Mul)
            || !integer_product_of_planned_lengths(f, v, (lhs, rhs))
            || !ints
            || k == 0
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
        // (A symbolic length counts as 0: no slices.)
        let known = |d: Dim| match d {
            Dim::Known(d) => d,
            _ => 0,
        };
        let products = [f.ty(lhs).shape[0], f.ty(rhs).shape[1]]
            .into_iter()
            .map(known)
            .fold(k, u64::saturating_mul);
        (la >= 1 && lb >= 1).then_some(RangeTiers {
            int8,
            slices: int8 && products >= self.opts.int8_slices_from,
            i32_limits: (cap(la), cap(lb)),
        })
    }

    /// Words, zeroed, that kernels set where an element of `lhs` or `rhs` is past a
    /// tier's limit: with 8-bit matrices, word 0 for ±127, word 1 for two slices'
    /// ±16319 and word 2 for the i32 tiles' limits (the packing finds them); else
    /// word 0 for those (`KernelKind::RangeFlag`).
    pub(super) fn range_flags(&mut self, (lhs, rhs): (Value, Value), tiers: &RangeTiers) -> usize {
        let words = if tiers.int8 { 3 } else { 1 };
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
/// within ±127, or, with `slices`, in two slices within ±16319), and in i32 tiles
/// (where `a` is within `i32_limits.0` and `b` within `i32_limits.1`, so that every
/// sum fits i32).
pub(super) struct RangeTiers {
    pub int8: bool,
    pub slices: bool,
    pub i32_limits: (u32, u32),
}

/// Whether `v = lhs+.×rhs` has an integer result and no length computed on the
/// device (a compress's): the products on 8-bit matrices and the choice of way on
/// the device need both.
fn integer_product_of_planned_lengths(
    f: &crate::Function,
    v: Value,
    (lhs, rhs): (Value, Value),
) -> bool {
    let dims = [f.ty(lhs).shape[0], f.ty(lhs).shape[1], f.ty(rhs).shape[1]];
    f.ty(v).elem.is_int() && !dims.iter().any(|d| matches!(d, Dim::Dyn(_)))
}

/// The most magnitude two 8-bit slices hold (`x = 128h + l`, `l` in -64..63, `h`
/// within ±127).
const SLICED_MOST: u32 = 127 * 128 + 63;

/// `max(1, ⌈d ÷ per⌉)`: whole tiles of `per` (at least one).
fn whole(d: Dim, per: u32) -> Count {
    Count::Groups {
        of: Box::new(Count::Product(vec![d])),
        per_group: per,
        max: u32::MAX,
    }
}

/// `d` padded to whole `per`, counted in units of `unit`.
fn padded(d: Dim, per: u32, unit: u32) -> Count {
    Count::Scaled {
        of: Box::new(whole(d, per)),
        times: per / unit,
    }
}
