//! The shape of a tiled kernel's work (`KernelKind::MatMul`).

use crate::scalar::BinOp;
use serde::Serialize;

/// How a product of booleans combines its operands' words of 32 (`KernelKind::MatMul`
/// with `bits`): each pair of words by `and` (`or` with `or`), the results then
/// folded by `or`, the output whether any bit is set, or (with `count`) by counting
/// the bits set. With `negate` the operands are packed negated and the output is
/// negated too (`∧.∨` is `~(~a)∨.∧~b`, `∧.∧` is `~(~a)∨.∨~b`). Bits past `k` are 0
/// in both operands, which none of these counts or sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BitProduct {
    pub or: bool,
    pub count: bool,
    pub negate: bool,
}

impl BitProduct {
    /// The packed form of `fold.pair` of booleans, where it has one: `∨ ∧ +` of
    /// `∧ ∨`.
    pub fn of(fold: BinOp, pair: BinOp) -> Option<BitProduct> {
        let or = match pair {
            BinOp::And => false,
            BinOp::Or => true,
            _ => return None,
        };
        let (count, negate) = match fold {
            BinOp::Or => (false, false),
            BinOp::And => (false, true),
            BinOp::Add => (true, false),
            _ => return None,
        };
        // The negated operands combine by the other function (De Morgan).
        let or = or != negate;
        Some(BitProduct { or, count, negate })
    }
}

/// The work of one invocation of a `+.×` kernel (`KernelKind::MatMul`): `rows ×
/// cols` outputs of a workgroup of 16×16 (a tile of `16·rows × 16·cols`), `steps`
/// of the inner length staged in workgroup memory at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MatMulTile {
    pub rows: u32,
    pub cols: u32,
    pub steps: u32,
}

impl MatMulTile {
    /// Products with many tiles: 128×128, 16 steps at a time. On the H100 (f32 in
    /// f64, 4096², `--matmul-tile`): 8x8x16 6774 µs (234 registers), 8x8x8 7163
    /// (214), 8x4x8 7377, 4x8x8 7561, 8x4x16 7806 (160), 4x4x16 8152.
    pub const LARGE: MatMulTile = MatMulTile {
        rows: 8,
        cols: 8,
        steps: 16,
    };
    /// Smaller products (tiles enough for every core): 64×64.
    pub const SMALL: MatMulTile = MatMulTile {
        rows: 4,
        cols: 4,
        steps: 8,
    };

    /// Invocations along each side of a workgroup (`SIDE × SIDE` of them).
    pub const SIDE: u32 = 16;

    /// Rows of `a` a tile covers (`SIDE·rows`).
    pub fn tile_m(self) -> u32 {
        Self::SIDE * self.rows
    }

    /// Columns of `b` a tile covers (`SIDE·cols`).
    pub fn tile_n(self) -> u32 {
        Self::SIDE * self.cols
    }

    /// Elements between two staged columns of `a` in workgroup memory: its rows,
    /// padded by one against bank conflicts.
    pub fn a_stride(self) -> u32 {
        self.tile_m() + 1
    }

    /// Elements of workgroup memory for one step's `a` (column-major, padded) and
    /// `b` (row-major), as the kernel stages them.
    pub fn staged_elems(self) -> (u32, u32) {
        (self.steps * self.a_stride(), self.steps * self.tile_n())
    }

    /// Bytes of workgroup memory it stages, for elements of `elem` bytes.
    pub fn shared_bytes(self, elem: u32) -> u32 {
        let (a, b) = self.staged_elems();
        (a + b) * elem
    }

    /// This tile with fewer steps where it needs more than `max` bytes of workgroup
    /// memory (the device's maxComputeSharedMemorySize); `SMALL` (at most 8 KiB)
    /// where that is not enough.
    pub fn fitted(mut self, max: u32, elem: u32) -> MatMulTile {
        while self.shared_bytes(elem) > max {
            let fewer = MatMulTile {
                steps: self.steps / 2,
                ..self
            };
            if !fewer.takes() {
                return MatMulTile::SMALL;
            }
            self = fewer;
        }
        self
    }

    /// Whether the kernel takes this shape: rows and columns 1, 2, 4 or 8, steps 4,
    /// 8 or 16, and every invocation of 256 staging whole elements of each step.
    fn takes(self) -> bool {
        let side = |x: u32| matches!(x, 1 | 2 | 4 | 8);
        side(self.rows)
            && side(self.cols)
            && matches!(self.steps, 4 | 8 | 16)
            && (self.rows * self.steps).is_multiple_of(16)
            && (self.cols * self.steps).is_multiple_of(16)
    }

    /// `ROWSxCOLSxSTEPS` (as `8x8x8`): each of rows and columns 1, 2, 4 or 8, steps
    /// 4, 8 or 16, with every invocation staging whole elements of each step.
    pub fn parse(s: &str) -> Result<MatMulTile, String> {
        let v: Vec<u32> = s
            .split('x')
            .map(|p| p.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{s}: {e}"))?;
        let [rows, cols, steps] = v[..] else {
            return Err(format!("{s}: give ROWSxCOLSxSTEPS, as 8x8x8"));
        };
        let t = MatMulTile { rows, cols, steps };
        if t.takes() {
            Ok(t)
        } else {
            Err(format!(
                "{s}: rows and columns 1, 2, 4 or 8, steps 4, 8 or 16, rows×steps and columns×steps multiples of 16"
            ))
        }
    }
}

/// The work of a product on cooperative matrices (`KernelKind::CoopMatMul`): each
/// subgroup multiplies `rows × cols` fragments of `m × n` outputs, `k` of the inner
/// length at a time (the device's shape, `PlanOptions::int8_matrices`); a workgroup
/// is `subgroups_m × subgroups_n` subgroups and stages `steps · k` of the inner
/// length of both operands in workgroup memory at a time, in two buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CoopTile {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub rows: u32,
    pub cols: u32,
    pub subgroups_m: u32,
    pub subgroups_n: u32,
    pub steps: u32,
}

impl CoopTile {
    /// Fragments of 4×2 a subgroup, 2×4 subgroups a workgroup, one step of `k`
    /// staged at a time: 128×128 outputs of 16×16 fragments, 32 bytes of `k`
    /// (H200, 4096²: 532 µs for `boolcount` against 611 with two steps, now that
    /// copies are read two steps ahead).
    pub fn of_shape((m, n, k): (u32, u32, u32)) -> CoopTile {
        CoopTile {
            m,
            n,
            k,
            rows: 4,
            cols: 2,
            subgroups_m: 2,
            subgroups_n: 4,
            steps: 1,
        }
    }

    /// [`Self::of_shape`] where it runs on the device ([`Self::runs_on`]), else
    /// with two steps of `k` staged at a time (each invocation then copies whole
    /// vectors in workgroups of subgroups of 64), where that runs.
    pub fn for_device(
        shape: (u32, u32, u32),
        subgroup: u32,
        max_invocations: u32,
        max_shared: u32,
    ) -> Option<CoopTile> {
        let one = CoopTile::of_shape(shape);
        [one, CoopTile { steps: 2, ..one }]
            .into_iter()
            .find(|t| t.runs_on(subgroup, max_invocations, max_shared))
    }

    /// Rows of outputs a workgroup computes.
    pub fn tile_m(self) -> u32 {
        self.m * self.rows * self.subgroups_m
    }

    /// Columns of outputs a workgroup computes.
    pub fn tile_n(self) -> u32 {
        self.n * self.cols * self.subgroups_n
    }

    /// The inner length a workgroup stages at a time (bytes of a packed line).
    pub fn tile_k(self) -> u32 {
        self.k * self.steps
    }

    /// Subgroups a workgroup.
    pub fn subgroups(self) -> u32 {
        self.subgroups_m * self.subgroups_n
    }

    /// Words between staged lines of `a`'s rows and of `b`'s columns (`tile_k`
    /// bytes each) in workgroup memory: padded by 16 bytes, so that a fragment's
    /// lines fall in different banks and stay 16-byte aligned. (`b` is packed
    /// down its columns, each column's `k` bytes consecutive, and its fragments
    /// loaded column-major: NVIDIA's 8-bit products take both operands so, and
    /// `b` packed along its rows was transposed byte by byte as each fragment was
    /// loaded, no 8-bit `ldmatrix.trans`: 35% slower on the H200, session 32.)
    pub fn staged_strides(self) -> (u32, u32) {
        let line = self.tile_k() / 4 + 4;
        (line, line)
    }

    /// Words of workgroup memory one staged step takes: `tile_m` lines of `a`,
    /// `tile_n` of `b`.
    pub fn stage_words(self) -> u32 {
        let (sa, sb) = self.staged_strides();
        self.tile_m() * sa + self.tile_n() * sb
    }

    /// Bytes of workgroup memory the kernel takes (two stages).
    pub fn shared_bytes(self) -> u32 {
        2 * 4 * self.stage_words()
    }

    /// Whether a workgroup of subgroups of `subgroup` invocations can run it: a
    /// step's 16-byte vectors of each operand shared out evenly, within
    /// `max_invocations` and `max_shared` bytes of workgroup memory.
    /// The fragments' `n` and `k` must be whole 16-byte vectors: the kernel
    /// addresses workgroup memory in them (a 16×8 fragment's second half would be
    /// read from its first).
    pub fn runs_on(self, subgroup: u32, max_invocations: u32, max_shared: u32) -> bool {
        let inv = self.subgroups() * subgroup;
        let a = self.tile_m() * self.tile_k() / 16;
        let b = self.tile_k() * self.tile_n() / 16;
        self.n.is_multiple_of(16)
            && self.k.is_multiple_of(16)
            && self.m > 0
            && inv > 0
            && inv <= max_invocations
            && a.is_multiple_of(inv)
            && b.is_multiple_of(inv)
            && self.shared_bytes() <= max_shared
    }

    /// `ROWSxCOLSxSMxSNxSTEPS` (fragments a subgroup, subgroups a workgroup, steps
    /// of `k` staged), as `4x2x2x4x2`; the fragment's shape is the device's.
    pub fn parse(s: &str) -> Result<CoopTile, String> {
        let v: Vec<u32> = s
            .trim()
            .split('x')
            .map(|p| p.trim().parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{s}: {e}"))?;
        let [rows, cols, subgroups_m, subgroups_n, steps] = v[..] else {
            return Err(format!("{s}: give ROWSxCOLSxSMxSNxSTEPS, as 4x2x2x4x2"));
        };
        if v.iter().any(|&x| x == 0 || x > 16) {
            return Err(format!("{s}: each from 1 to 16"));
        }
        Ok(CoopTile {
            rows,
            cols,
            subgroups_m,
            subgroups_n,
            steps,
            ..CoopTile::of_shape((16, 16, 32))
        })
    }
}
