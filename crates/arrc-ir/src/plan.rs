//! Kernel planning: fusion of a verified IR function into GPU kernels and the dispatch
//! sequence that runs them.
//!
//! Fusion rules:
//! - elementwise instructions (casts, scalar functions, `⍳`) with one use are computed
//!   inside their user's kernel; scalar literals become constants in the kernel;
//! - a reduction or scan reads its argument's fused expression directly (`+/x×x` reads
//!   `x` once and writes no temporary);
//! - a value is materialized into a buffer only when it is the result, a reduction or
//!   scan, or used more than once and costs more than a load (`analysis.rs`).
//!
//! Lengths are [`Count`]s evaluated at run time from the parameters' lengths, and reach
//! kernels as push constants, so one kernel serves every length. The workgroup size is
//! a specialization constant (id 0).

use crate::array::{Array, ElemType, Scalar};
use crate::error::{err, Error, ErrorClass, Result};
use crate::ir::{Comb, Dim, Gather, Inst, SearchKind, Value};
use crate::scalar::{BinOp, UnOp};
use crate::verify::Verified;
use analysis::{can_fail, integer_fits, integer_sum_bound, load_only, reads_part_of};
use arrc_syntax::Span;
use serde::Serialize;
use std::collections::HashSet;

mod analysis;
mod coop;
mod folds;
mod hash;
mod kexpr;
mod kinds;
mod scatter;
mod segscan;
mod solve;
mod sort;
mod stencil;
mod tile;
use sort::SortedKeys;

pub use tile::{BitProduct, CoopTile, MatMulTile};

pub use kexpr::{IExpr, KExpr};
pub use kinds::{
    scan_unpublished, Binding, Compact, Finish, Fold, HashLayout, KernelKind, RadixArg,
    RadixPlaces, ScanStatus, SegScanShape, Unit,
};

/// Planner settings.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Invocations per workgroup (the default of specialization constant 0).
    pub workgroup_size: u32,
    /// Most workgroups in the first pass of a reduction (its partials fit one workgroup's
    /// loop in the second pass).
    pub reduce_groups: u32,
    /// Most workgroups of an elementwise kernel (a grid-stride loop covers the rest).
    pub map_groups: u32,
    /// Elements each invocation of a reduction reads per loop trip (the default of
    /// specialization constant 1): several independent loads in flight.
    pub items_per_thread: u32,
    /// Polls of a predecessor tile's flag before a scan reduces that tile itself (the
    /// default of specialization constant 2).
    pub spin_limit: u32,
    /// The device's subgroup size (sizes grids of subgroup-per-row kernels, whose
    /// loops are correct with any value; rounds a chained scan's workgroup down to
    /// whole subgroups, which it needs).
    pub subgroup_size: u32,
    /// Workgroups that keep the device busy (chooses how many pieces long rows are
    /// split into).
    pub busy_groups: u32,
    /// Whether the device has shaderFloat64 (f64 arrays need it).
    pub float64: bool,
    /// f32 `+` and `×` folds (reductions, scans, inner products) accumulate in f64
    /// where the device has it, and round once, as the reference does: a sum that
    /// cancels then has the reference's digits, and a product whose partial products
    /// leave f32 but whose result does not is not an error. Off only to measure what
    /// it costs.
    pub wide_folds: bool,
    /// A map reading one matrix at several window offsets stages it in workgroup
    /// memory (`KernelKind::Stencil`); off, each offset is read from device memory.
    pub stencil_tiles: bool,
    /// The fewest window reads a staged stencil takes (fewer are left to the cache).
    /// 8: a 3×3 window's (its centre is the matrix itself); staged, with its tile
    /// unwidened, a 3×3 sum of f32 8192² took 204.4 µs against 271.2 read from
    /// device memory (H200, session 26).
    pub stencil_from: u32,
    /// Outputs each invocation of a staged stencil computes, one below another (0:
    /// chosen by the window: up to 25 positions, 6 for windows of five rows or
    /// more and 4 for fewer; else 2).
    pub stencil_rows: u32,
    /// A staged stencil's whole-window fold (`{+/,⍵}`, `⌈/`, `⌊/`, `∨/`, `∧/`) folds
    /// each staged row an invocation reads once, shared by the outputs above and
    /// below it (`KExpr::WindowFold`); off, each output folds its own window.
    pub window_folds: bool,
    /// A staged stencil whose reads all widen its matrix (f32 to f64, i32 to i64)
    /// holds the widened items in its tile, each converted once; off (the
    /// default), the tile holds the matrix's own items, converted at each read:
    /// half the workgroup memory read (H200, 8192², a 5×5 sum: f32 324.2 → 283.7
    /// µs, i32 358.0 → 255.0). The runtime turns it on where f32 is widened from
    /// its bits (a device that may flush f32 subnormals), each widening dearer.
    pub stencil_widen: bool,
    /// Tests only: native f32 on the guarded fast path (`emit/exact32.rs`) reads
    /// and gives subnormals as 0, as NVIDIA's does, so that a device keeping them
    /// (lavapipe) tests the guards. Only where f32 is widened from its bits.
    pub flush_f32: bool,
    /// Columns a panel of `⌹`'s QR factors in one dispatch before the later columns
    /// apply its reflectors in the next (`KernelKind::QrStep`). H200, 1024² f64
    /// (`bench/programs/solve.apl`), kernels: 1 column 13.9 ms, 4 7.3, 8 7.7, 16
    /// 10.2 (one dispatch a column before: 8.6).
    pub qr_block: u32,
    /// `x⍳y` and `y∊x` of exact 4-byte keys (i32, booleans, f32, and 64-bit
    /// integers known to fit 32 bits) by a hash table of `x` built with atomics
    /// and probed by each needle (`KernelKind::HashInsert`, `HashProbe`; session
    /// 27, H200: `x⍳y` of 2^24 i32 2274.6 → 1099.3 µs); off, by sorting `x` and a
    /// binary search of each needle.
    pub hash_search: bool,
    /// A hash table's slots beyond one a key, in quarters of the key count (4: 2n
    /// slots, at most half of them taken).
    pub hash_spare_quarters: u32,
    /// The device keeps f64 subnormals when a shader asks (DenormPreserve): every
    /// kernel that computes in f64 asks.
    pub denorm_preserve_f64: bool,
    /// The same for f32 (NVIDIA flushes f32 subnormals unless asked: `1e¯40=0` was 1).
    pub denorm_preserve_f32: bool,
    /// Vectors of at least this many elements are graded by the radix sort; shorter
    /// ones (and matrices) by the bitonic network. The radix sort is the faster from
    /// 64 elements on (H100: 111 against 125 µs; 113 against 348 µs at 1024).
    pub radix_from: u64,
    /// Radix sorts of fewer keys than this (at most 2^30: counts in 30 bits) take
    /// one kernel per pass (`RadixPlaces::Lookback`); longer ones a count kernel and
    /// a scan besides (`RadixPlaces::Counted`). On the H100 one kernel per pass wins
    /// up to 2^20 keys (2^16: 94 against 129 µs; 2^20: 162 against 172) and loses
    /// from 2^24 (1609 against 1259 µs; 2^28: 25.5 against 18.3 ms), where waiting on
    /// earlier tiles leaves its one workgroup per core idle (134 registers).
    pub radix_lookback_below: u64,
    /// Keys per invocation of a radix pass's tile (half for 8-byte keys): the tile is
    /// this × the workgroup's invocations, held in registers while they are ranked.
    pub radix_items: u32,
    /// The largest storage-buffer range a binding may have (a power of two); larger
    /// arrays are bound as several windows of this size.
    pub window_bytes: u64,
    /// Scans: every subgroup of a tile looks back itself. Needed on lavapipe (Mesa
    /// 22.3), where the other subgroups, past the barrier that follows subgroup 0's
    /// lookback, can still read the workgroup memory it wrote before that barrier.
    pub every_subgroup_looks_back: bool,
    /// The device has 64-bit storage-buffer atomics: a scan of 4-byte values packs
    /// each tile's flag and value into one word.
    pub int64_atomics: bool,
    /// The device has subgroup shuffles: a scan reads each round's total from the
    /// last lane instead of reducing the round again.
    pub subgroup_shuffle: bool,
    /// The most loop trips one invocation may make in all, where the device cuts
    /// loops off (lavapipe: 65535 over all of a shader's loops). A fold that must run
    /// serially over a longer axis (`-/`, `{⍺-⍵}/`, `-\`) is refused, so it runs on
    /// the CPU instead of giving a wrong answer.
    pub loop_trip_limit: Option<u64>,
    /// Invocations per workgroup of a chained scan (its tile is this × items): larger
    /// tiles mean fewer links in the lookback chain.
    pub scan_workgroup_size: u32,
    /// Elements per invocation of a chained scan of 4-byte values (a multiple of 4
    /// gives 16-byte loads and stores); scans of 8-byte values take half as many.
    pub scan_items_per_thread: u32,
    /// A chained scan's tile is its workgroup's id instead of a number claimed from
    /// a counter. Tiles may then start before their predecessors, which only the
    /// decoupled fallback gets past: a test of it, not a speed-up (1% on the H200).
    pub scan_tiles_by_workgroup: bool,
    /// A chained scan of 8-byte values publishes each tile's aggregate and
    /// inclusive prefix as 64-bit words that are their own flags
    /// (`ScanStatus::Wide`), where the device's 64-bit atomics are used; otherwise a
    /// flag word and two value words (`ScanStatus::Flagged`).
    pub scan_wide_status: bool,
    /// A chained scan's workgroup gives one subgroup to the lookback alone: it polls
    /// the earlier tiles' status while the others load and scan the tile, so that
    /// the prefix is often known when the tile's aggregate is. Not on devices whose
    /// subgroups may wait on each other only at barriers (`every_subgroup_looks_back`).
    pub scan_lookback_subgroup: bool,
    /// A chained scan's lookback polls with the whole workgroup: each subgroup reads
    /// a window of its width, one after another's, and subgroup 0 folds their
    /// summaries, so one poll reaches `min(subgroups, subgroup size)` windows back.
    /// Not on devices whose subgroups may wait on each other only at barriers
    /// (`every_subgroup_looks_back`), nor with a lookback subgroup.
    pub scan_wide_lookback: bool,
    /// The tile (workgroup, items an invocation) of a scan of i32 values folded in
    /// i64, where it differs from the 8-byte rule (`scan_workgroup_size` × half of
    /// `scan_items_per_thread`).
    pub scan_widened_int_tile: Option<(u32, u32)>,
    /// The tile of a scan of f32 values folded in f64 (`+\` of f32), where it
    /// differs from a 4-byte scan's.
    pub scan_widened_float_tile: Option<(u32, u32)>,
    /// The tile of a compaction (`(m)/x`, `⍸`), where it differs from three
    /// quarters of a 4-byte scan's.
    pub compact_tile: Option<(u32, u32)>,
    /// A reduction of a vector to one value is one dispatch: each workgroup stores
    /// its partial and counts itself done, and the last folds the partials
    /// (`KernelKind::Reduce::finish`); else a second dispatch of one workgroup does.
    /// Off: on the H100 the counter's zeroing fill and its barrier cost what the
    /// second dispatch does (`+/` of 2^20: 15.5 µs against 14.5; PERFORMANCE.md,
    /// session 18); it pays once counters need no fill.
    pub single_pass_reduce: bool,
    /// Folds along a leading axis of at least this many elements, whose rows come in
    /// fours in memory, read four columns per invocation (`Unit::Quad`).
    pub quad_columns_from: u64,
    /// The caller checks that the statement's result is finite after reading it back
    /// (`Plan::finite_result`), so a float fold that is the result needs no overflow
    /// check on the device (a session does; an `arrc build` module's user would not).
    pub host_checks_result: bool,
    /// The most storage buffers one kernel may bind (the device's
    /// maxPerStageDescriptorStorageBuffers; lavapipe's is small): a fused expression
    /// that would read more arrays is computed in parts, and a kernel still over it
    /// is refused.
    pub max_bindings: u32,
    /// Matrix products of at least this many result elements take `matmul_tile`
    /// (128×128 tiles, 8×8 outputs per invocation); smaller ones
    /// `MatMulTile::SMALL` (64×64, 4×4), so that there are tiles enough for every
    /// core.
    pub matmul_large_from: u64,
    pub matmul_tile: MatMulTile,
    /// Workgroup memory a kernel may use (the device's maxComputeSharedMemorySize;
    /// by default Vulkan's least, 16 KiB).
    pub max_shared_bytes: u32,
    /// The shape `(M, N, K)` of the 8-bit integer products (i32 sums) the device's
    /// subgroups compute on cooperative matrices (VK_KHR_cooperative_matrix), where
    /// kernels may use them: integer `+.×` of operands within ±127.
    pub int8_matrices: Option<(u32, u32, u32)>,
    /// The work of those products (`CoopTile`; its fragment shape is the device's),
    /// where it runs on the device (else `CoopTile::of_shape`).
    pub coop_tile: Option<CoopTile>,
    /// Products (`m·n·k`) from which integer `+.×` of operands found within ±16319
    /// on the device runs in two 8-bit slices of each (`RangeTiers::slices`) rather
    /// than in i32 tiles.
    pub int8_slices_from: u64,
    /// Kernels ask the device to run invocations that diverged together again where
    /// their paths meet (SPIR-V's MaximallyReconvergesKHR), so that a subgroup
    /// operation after a branch taken by some invocations sees the whole subgroup.
    /// Without it a device may leave them apart (NVIDIA's may).
    pub maximal_reconvergence: bool,
    /// A compaction fuses a mask (and values) that compute more than a read and a
    /// comparison (the default); off, they are computed by a kernel of their own
    /// first (session 35's way around open question 13, a test of that path now).
    pub fuse_computed_masks: bool,
    /// A compaction of a plain array's values holds the values it reads in its
    /// tile instead of the mask's counts, and computes the mask from them: each
    /// value is read once, not once for the mask and again to store it (the
    /// default since session 39: 7% faster at 2^28 f32, 21% with a computed mask,
    /// on the H200, at the same registers).
    pub compact_holds_values: bool,
}

impl PlanOptions {
    /// Whether kernels compute f32 from its bits, in f64: the device may use f64
    /// and may flush f32 subnormals (`Kernel::exact32`, the emitter's `exact32.rs`).
    pub fn exact32(&self) -> bool {
        self.float64 && !self.denorm_preserve_f32
    }
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            workgroup_size: 256,
            reduce_groups: 1024,
            map_groups: 65535,
            items_per_thread: 16,
            spin_limit: 2048,
            subgroup_size: 32,
            busy_groups: 2048,
            float64: true,
            wide_folds: true,
            stencil_tiles: true,
            stencil_from: 8,
            stencil_rows: 0,
            window_folds: true,
            stencil_widen: false,
            flush_f32: false,
            qr_block: 4,
            hash_search: true,
            hash_spare_quarters: 4,
            denorm_preserve_f64: false,
            denorm_preserve_f32: false,
            radix_from: 2,
            radix_lookback_below: 1 << 21,
            radix_items: 16,
            window_bytes: 1 << 31,
            // Right on every device; a device known to order a barrier after one
            // subgroup's spin (the GPUs arrc's runtime finds) turns it off.
            every_subgroup_looks_back: true,
            int64_atomics: false,
            subgroup_shuffle: false,
            loop_trip_limit: None,
            scan_workgroup_size: 256,
            scan_items_per_thread: 16,
            scan_tiles_by_workgroup: false,
            scan_wide_status: true,
            scan_lookback_subgroup: false,
            scan_wide_lookback: false,
            scan_widened_int_tile: None,
            scan_widened_float_tile: None,
            compact_tile: None,
            single_pass_reduce: false,
            quad_columns_from: 1 << 25,
            host_checks_result: false,
            max_bindings: 1 << 20,
            matmul_large_from: 1 << 21,
            matmul_tile: MatMulTile::LARGE,
            max_shared_bytes: 16 << 10,
            int8_matrices: None,
            coop_tile: None,
            // Below, the slices' two to four products (and their eight guarded
            // dispatches where another way runs, about 5 µs each) cost more than
            // the tiles: on an H200, `x+.×y` of i32 1024² took 124.6 µs in i32
            // tiles and about as long in slices; 2048² 734 µs in the tiles and 185
            // in two products of slices (`paths`).
            int8_slices_from: 1 << 32,
            maximal_reconvergence: false,
            fuse_computed_masks: true,
            compact_holds_values: true,
        }
    }
}

/// Most windows one array may be split across (`Binding::windows`).
pub const MAX_WINDOWS: u32 = 64;

/// A length known at run time.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Count {
    /// The product of these axis lengths.
    Product(Vec<Dim>),
    /// `max(1, min(ceil(of / per_group), max))`: a grid size.
    Groups {
        of: Box<Count>,
        per_group: u32,
        max: u32,
    },
    /// `of × times`.
    Scaled { of: Box<Count>, times: u32 },
    /// The product of these counts.
    Times(Vec<Count>),
    /// The sum of these counts.
    Sum(Vec<Count>),
}

/// The most elements an array (stored or only indexed, such as the outer product
/// under `+/,a∘.×b`) may have on the device: kernels index in 32 bits, and indices,
/// `⍳` and `≢` are i32. A statement that needs more is refused (WS FULL) before
/// anything runs.
pub const MAX_DEVICE_COUNT: u64 = i32::MAX as u64;

impl Count {
    pub fn known(n: u64) -> Count {
        Count::Product(vec![Dim::Known(n)])
    }

    /// Its value where it names no length symbol (known before the program runs).
    pub fn constant(&self) -> Option<u64> {
        match self {
            Count::Product(dims) => known(dims),
            Count::Scaled { of, .. } | Count::Groups { of, .. } => {
                of.constant().map(|_| self.eval(&[]))
            }
            Count::Times(cs) | Count::Sum(cs) => cs
                .iter()
                .all(|c| c.constant().is_some())
                .then(|| self.eval(&[])),
        }
    }

    /// Evaluates with `syms[i]` the value of length symbol `i`, saturating at
    /// `u64::MAX` (the caller refuses counts beyond the device's 32-bit indexing, see
    /// [`MAX_DEVICE_COUNT`]).
    pub fn eval(&self, syms: &[u64]) -> u64 {
        let product = |it: &mut dyn Iterator<Item = u64>| it.fold(1u64, |a, b| a.saturating_mul(b));
        match self {
            Count::Product(dims) => product(&mut dims.iter().map(|d| match d {
                Dim::Known(n) => *n,
                Dim::Sym(s) => syms.get(s.0 as usize).copied().unwrap_or(0),
                // The planner bounds these before they reach a count.
                Dim::Dyn(_) => 0,
            })),
            Count::Scaled { of, times } => of.eval(syms).saturating_mul(*times as u64),
            Count::Times(cs) => product(&mut cs.iter().map(|c| c.eval(syms))),
            Count::Sum(cs) => cs.iter().fold(0u64, |a, c| a.saturating_add(c.eval(syms))),
            Count::Groups { of, per_group, max } => of
                .eval(syms)
                .div_ceil(*per_group as u64)
                .clamp(1, *max as u64),
        }
    }
}

/// Where a buffer's contents come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferRole {
    /// The program's parameter of this index, uploaded by the host.
    Param(u32),
    /// A literal array, uploaded by the host.
    Const(Array),
    /// The session's generator state (`Inst::RngState`), uploaded by the host at
    /// each run.
    Rng,
    /// Written and read by kernels only.
    Temp,
    /// The program's result, read back by the host.
    Result,
    /// One u32 of error flags, zeroed before the first dispatch; bit `i` set means
    /// `Plan::errors[i]` happened.
    Status,
    /// Kernel state zeroed before the first dispatch (scan tile flags and counters).
    Zeroed,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Buffer {
    pub elem: ElemType,
    pub len: Count,
    pub role: BufferRole,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Kernel {
    pub name: String,
    #[serde(skip)]
    pub kind: KernelKind,
    pub bindings: Vec<Binding>,
    /// Names of the u32 push constants, in order at offsets 0, 4, ….
    pub push_constants: Vec<String>,
    /// Default of specialization constant 0, the workgroup size.
    pub workgroup_size: u32,
    /// Default of specialization constant 1, elements per invocation per loop trip.
    pub items_per_thread: u32,
    /// Default of specialization constant 2, the scan lookback's spin limit.
    pub spin_limit: u32,
    /// When the element count is computed on the device: how to find it (the
    /// kernel then ignores push constant 0, which holds an upper bound).
    #[serde(skip)]
    pub n_from: Option<IExpr>,
    /// The step of a `Fold::Dfn`: an expression of `Operand` 0 (⍺) and 1 (⍵).
    #[serde(skip)]
    pub combine: Option<KExpr>,
    /// The bytes of one window of a binding split across several (see
    /// `Binding::windows`).
    pub window_bytes: u64,
    /// The device has shaderFloat64: f32 functions whose intermediate values leave
    /// f32's range (`⍺!⍵` through Γ) compute in f64 there.
    pub float64: bool,
    /// Ask the device to keep f64 subnormals (`PlanOptions::denorm_preserve_f64`).
    pub denorm_preserve_f64: bool,
    /// Ask the device to keep f32 subnormals (`PlanOptions::denorm_preserve_f32`).
    pub denorm_preserve_f32: bool,
    /// Flush f32 subnormals on the guarded fast path (`PlanOptions::flush_f32`).
    #[serde(default)]
    pub flush_f32: bool,
    /// Ask for maximal reconvergence (`PlanOptions::maximal_reconvergence`).
    #[serde(default)]
    pub maximal_reconvergence: bool,
    /// ⎕CT of the program's f64 comparisons, floors and ceilings.
    pub ct: f64,
    /// Checks of push constants that a loop's trips grow with, where the device cuts
    /// loops off and the value is known only when the kernel runs.
    #[serde(skip)]
    pub trip_guards: Vec<TripGuard>,
    /// A chained scan's lookback trips, where the device cuts loops off.
    #[serde(skip)]
    pub lookback_budget: Option<LookbackBudget>,
    /// Runs only where the words of binding `binding` that the guard names are 0
    /// or are not: of several ways to the same result, the one kernels before chose
    /// on the device (every workgroup of the others returns at once).
    #[serde(skip)]
    pub guard: Option<KernelGuard>,
}

/// See [`Kernel::guard`]: the kernel runs where word `zero` of the binding is 0
/// and word `nonzero` is not (each where given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelGuard {
    pub binding: u32,
    pub zero: Option<u32>,
    pub nonzero: Option<u32>,
}

/// A kernel raises error `bit` where push constant `push` is above `most`: one of
/// its loops would then run more trips in one invocation than the device runs
/// (`PlanOptions::loop_trip_limit`), and end early with a wrong answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TripGuard {
    pub push: u32,
    pub most: u32,
    pub bit: u32,
}

/// Where the device cuts loops off (`PlanOptions::loop_trip_limit`): the most loop
/// trips a chained scan's lookback may take (its polls, and a subgroup's trips over
/// each tile it reduces itself), leaving the rest of the limit to the kernel's other
/// loops; past them the lookback stops and the kernel raises error `bit`, where the
/// device would have cut a loop short and left a wrong prefix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LookbackBudget {
    pub trips: u32,
    pub bit: u32,
}

impl Kernel {
    /// Whether it computes f32 from its bits, in f64 (`PlanOptions::exact32`).
    pub fn exact32(&self) -> bool {
        self.float64 && !self.denorm_preserve_f32
    }
}

/// One dispatch: a kernel, the buffers bound to its bindings in order, its push
/// constants and its workgroup count. A barrier separates consecutive dispatches.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dispatch {
    pub kernel: usize,
    pub buffers: Vec<usize>,
    pub push: Vec<Count>,
    /// The workgroup count (an upper bound when `indirect` is set).
    pub groups: Count,
    /// vkCmdDispatchIndirect: the workgroup count is read from this buffer (three
    /// u32), written by an earlier `IndirectArgs` kernel from a length on the device.
    pub indirect: Option<usize>,
    /// Dispatched this many times in a row, push constant `.1` holding the time
    /// (0, 1, …): a loop whose steps depend on each other (`KernelKind::QrStep`).
    pub repeat: Option<(Count, usize)>,
}

/// An error a kernel can raise at run time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceError {
    pub class: ErrorClass,
    pub message: String,
    pub span: Span,
}

/// Kernels, buffers and dispatches for one function.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    pub buffers: Vec<Buffer>,
    pub kernels: Vec<Kernel>,
    pub dispatches: Vec<Dispatch>,
    pub result: usize,
    pub result_shape: Vec<Dim>,
    pub status: Option<usize>,
    pub errors: Vec<DeviceError>,
    /// Which parameter axis each length symbol stands for.
    pub syms: Vec<(u32, u32)>,
    /// The buffer (one i32) holding each device-computed length, read back with the
    /// result.
    pub dyn_lengths: Vec<(u32, usize)>,
    /// `⌈/` and `⌊/` of integers over an axis whose length is computed on the device:
    /// when that length is 0 the result is APL's float identity instead (a type the
    /// kernel cannot know).
    pub empty_identity: Option<(u32, Scalar)>,
    /// The error when the result read back holds a value that is not finite (a float
    /// fold that overflowed; `PlanOptions::host_checks_result`).
    pub finite_result: Option<DeviceError>,
    /// The result is a scatter into a parameter (`x←V@I⊢x`, an indexed assignment):
    /// where the caller lets the statement consume that parameter, the result is the
    /// parameter's own buffer and the copy into it is skipped.
    pub in_place: Option<InPlace>,
}

/// See [`Plan::in_place`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InPlace {
    /// The parameter's index and its buffer.
    pub param: u32,
    pub buffer: usize,
    /// The dispatch that copies the parameter into the result.
    pub copy: usize,
}

impl Plan {
    pub fn error_for(&self, status: u32) -> Option<Error> {
        (0..32)
            .find(|b| status & (1 << b) != 0)
            .and_then(|b| self.errors.get(b as usize))
            .map(|e| Error::new(e.class, e.message.clone(), e.span.clone()))
    }
}

struct Planner<'a> {
    v: &'a Verified<'a>,
    opts: PlanOptions,
    plan: Plan,
    /// The buffer holding each value, once materialized.
    buffer_of: Vec<Option<usize>>,
    /// The buffer holding each device-computed length, once planned.
    dyn_buffers: Vec<Option<usize>>,
    /// For each radix-sorted grade, its keys in sorted order, where some `keys[⍋keys]`
    /// or search reads them.
    sorted_keys: Vec<Option<SortedKeys>>,
    /// The matrix a stencil kernel being planned stages in workgroup memory (and
    /// the wider type it is staged as, if any): its windows read there
    /// (`KExpr::Staged`).
    staged: Option<(Value, Option<ElemType>)>,
    /// The dfn fold being planned: its step (with the fold's type and span), turned
    /// into `dfn` once the items' expression is built (error bits in evaluation order).
    dfn_src: Option<(Comb, ElemType, Span)>,
    /// The step of the dfn fold being planned (`Fold::Dfn`).
    dfn: Option<KExpr>,
    /// While set, each kernel pushed binds this buffer and runs only where the
    /// words named are 0 and not 0 (`Kernel::guard`).
    guard: Option<(usize, Option<u32>, Option<u32>)>,
}

/// Bindings of a kernel being built, from plan buffers, and the run-time lengths its
/// expressions read (extra push constants).
#[derive(Default, Clone)]
struct KernelBindings {
    buffers: Vec<usize>,
    bindings: Vec<Binding>,
    lengths: Vec<Dim>,
    /// The buffer holding each device-computed length (`Dim::Dyn`) planned so far.
    dyns: Vec<Option<usize>>,
}

impl KernelBindings {
    /// A length as index arithmetic: a constant, or an extra push constant.
    fn dim(&mut self, d: Dim) -> IExpr {
        match d {
            Dim::Known(n) => IExpr::Const(n as u32),
            Dim::Sym(_) => {
                let slot = match self.lengths.iter().position(|x| *x == d) {
                    Some(i) => i,
                    None => {
                        self.lengths.push(d);
                        self.lengths.len() - 1
                    }
                };
                IExpr::Push(slot as u32)
            }
            Dim::Dyn(i) => {
                // Read from the device, where the kernel that computed it left it
                // (planned before any kernel reads it: values come in SSA order).
                let buffer = self.dyns.get(i as usize).copied().flatten();
                debug_assert!(buffer.is_some(), "length {i} read before it is computed");
                let buffer = buffer.unwrap_or(0);
                let binding = self.bind(buffer, ElemType::I32, false);
                IExpr::Data(Box::new(KExpr::Load {
                    binding,
                    elem: ElemType::I32,
                    index: IExpr::Const(0),
                }))
            }
        }
    }

    fn product(&mut self, dims: &[Dim]) -> IExpr {
        dims.iter()
            .fold(IExpr::Const(1), |acc, d| IExpr::times(acc, self.dim(*d)))
    }

    /// The coordinates of ravel index `idx` in an array of this shape.
    fn coords(&mut self, idx: &IExpr, shape: &[Dim]) -> Vec<IExpr> {
        let r = shape.len();
        (0..r)
            .map(|a| {
                let stride = self.product(&shape[a + 1..]);
                let q = IExpr::quot(idx.clone(), stride);
                if a == 0 {
                    q
                } else {
                    let d = self.dim(shape[a]);
                    IExpr::modulo(q, d)
                }
            })
            .collect()
    }

    /// The ravel index of these coordinates in an array of this shape.
    fn linear(&mut self, coords: &[IExpr], shape: &[Dim]) -> IExpr {
        let mut acc = IExpr::Const(0);
        for (c, d) in coords.iter().zip(shape) {
            let d = self.dim(*d);
            acc = IExpr::plus(IExpr::times(acc, d), c.clone());
        }
        acc
    }

    fn bind(&mut self, buffer: usize, elem: ElemType, writable: bool) -> u32 {
        if let Some(i) = self.buffers.iter().position(|&b| b == buffer) {
            return i as u32;
        }
        let i = self.buffers.len() as u32;
        self.buffers.push(buffer);
        self.bindings.push(Binding {
            binding: i,
            elem,
            writable,
            status: false,
            shared_between_groups: false,
            atomic: false,
            windows: 1,
        });
        i
    }
}

/// Plans the kernels of a verified function.
pub fn plan(v: &Verified<'_>, opts: &PlanOptions) -> Result<Plan> {
    let f = v.func;
    if !opts.float64 {
        if let Some(i) = f.types.iter().position(|t| t.elem == ElemType::F64) {
            return Err(err::unsupported(
                "f64 needs shaderFloat64, which this Vulkan device lacks: use f32 (⎕FR←32, --float f32) or --backend cpu",
                f.spans[i].clone(),
            ));
        }
    }
    let mut p = Planner {
        v,
        opts: opts.clone(),
        plan: Plan {
            buffers: vec![],
            kernels: vec![],
            dispatches: vec![],
            result: 0,
            result_shape: vec![],
            status: None,
            errors: vec![],
            syms: f.syms.clone(),
            dyn_lengths: vec![],
            empty_identity: None,
            finite_result: None,
            in_place: None,
        },
        buffer_of: vec![None; f.insts.len()],
        dyn_buffers: vec![None; f.dyn_bounds.len()],
        sorted_keys: vec![None; f.insts.len()],
        staged: None,
        dfn_src: None,
        dfn: None,
        guard: None,
    };
    let result = f.result.expect("verified");
    // Whether computing a value, with what it is computed from, can raise an error,
    // and whether some use reads only part of it. APL computes every element of an
    // array before it is indexed or counted, so such a value is computed whole.
    let mut fails = vec![false; f.insts.len()];
    let mut partly_read = vec![false; f.insts.len()];
    for (i, inst) in f.insts.iter().enumerate() {
        let ops = inst.operands();
        fails[i] =
            can_fail(f, Value(i as u32), opts.float64) || ops.iter().any(|o| fails[o.index()]);
        for o in reads_part_of(f, inst, &f.types[i].shape) {
            partly_read[o.index()] = true;
        }
    }
    // The arrays a value's fused expression reads (each once, however many times
    // and at whatever offsets it reads it: a stencil reads one array nine times): a
    // value whose expression would read more than a third of what a kernel may bind
    // (less room for its output and status) is computed on its own, so no kernel
    // that fuses it, with two more such operands, goes over the device's limit.
    let most_reads = (opts.max_bindings.saturating_sub(8) / 3).max(2) as usize;
    let mut reads: Vec<Vec<usize>> = vec![Vec::new(); f.insts.len()];
    // Values that cost one load (a gather of a stored array, an index, a cast of
    // either) are read again where each use needs them rather than stored for their
    // several uses: a stencil's shifted reads of a board, each used twice by `⍵×⍵`.
    let mut cheap = vec![false; f.insts.len()];
    // A search by hashing reads no grade: one used only there is not computed.
    let mut uses = v.uses.clone();
    let mut hashed = vec![false; f.insts.len()];
    for (i, h) in hashed.iter_mut().enumerate() {
        if let Inst::Search { order, .. } = f.inst(Value(i as u32)) {
            *h = p.hashes(Value(i as u32));
            if *h {
                uses[order.index()] -= 1;
            }
        }
    }
    for (i, &fails) in fails.iter().enumerate() {
        let val = Value(i as u32);
        let is_result = val == result;
        // Dead values (an unused parameter, a literal replaced by its cast) cost
        // nothing, unless computing them can fail: `≢0*x` must still find `0*¯1`.
        let dead = uses[i] == 0;
        if dead && !fails {
            continue;
        }
        match f.inst(val) {
            Inst::Param { index } => {
                let b = p.buffer(val, BufferRole::Param(*index));
                p.buffer_of[i] = Some(b);
            }
            Inst::Const(a) if a.len() != 1 => {
                let b = p.buffer(val, BufferRole::Const(a.clone()));
                p.buffer_of[i] = Some(b);
            }
            Inst::RngState => {
                let b = p.buffer(val, BufferRole::Rng);
                p.buffer_of[i] = Some(b);
            }
            Inst::ScatterAdd { op, index, values } => p.scatter_add(val, *op, *index, *values),
            Inst::Scatter {
                arg,
                index,
                values,
                owner,
            } => p.scatter(val, *arg, *index, *values, *owner, is_result),
            Inst::Solve { a, b, scale, limit } => {
                p.solve(val, *a, *b, *scale, *limit, is_result)?
            }
            Inst::Reduce { op, arg, axis } => p.reduce(val, *op, *arg, *axis, is_result)?,
            Inst::Scan { op, arg, axis } => p.scan(val, *op, *arg, *axis, is_result)?,
            Inst::SegScan { op, arg, starts } => {
                p.seg_scan(val, *op, (*arg, *starts), is_result)?
            }
            Inst::MatMul {
                lhs,
                rhs,
                fold,
                pair,
            } => p.matmul(val, (*lhs, *rhs), (*fold, *pair), is_result)?,
            Inst::Compress { mask, arg } => p.compress(val, *mask, *arg, is_result),
            Inst::Grade { arg, down, origin } => p.grade(val, *arg, *down, *origin, is_result)?,
            Inst::FoldDfn {
                comb,
                arg,
                axis,
                scan,
            } => {
                // A right fold (Sub stands for "not associative") whose step is `comb`.
                p.dfn_src = Some((comb.clone(), f.ty(val).elem, f.span(val)));
                let r = if *scan {
                    p.scan(val, BinOp::Sub, *arg, *axis, is_result)
                } else {
                    p.reduce(val, BinOp::Sub, *arg, *axis, is_result)
                };
                p.dfn_src = None;
                p.dfn = None;
                r?
            }
            Inst::Search {
                hay,
                order,
                needles,
                kind,
            } if hashed[i] => p.hash_search(val, *hay, *needles, *kind, is_result),
            Inst::Search {
                hay,
                order,
                needles,
                kind,
            } => p.search(val, *hay, *order, *needles, *kind, is_result),
            inst if inst.is_elementwise()
                && (is_result
                    || dead
                    || uses[i] > 1 && !load_only(inst, &p.buffer_of, &cheap)
                    || fails && partly_read[i]) =>
            {
                p.map(val, is_result)
            }
            inst if inst.is_elementwise() => {
                let mut r: Vec<usize> = Vec::new();
                for o in inst.operands() {
                    match p.buffer_of[o.index()] {
                        Some(b) => r.push(b),
                        None => r.extend_from_slice(&reads[o.index()]),
                    }
                }
                r.sort_unstable();
                r.dedup();
                if r.len() > most_reads {
                    p.map(val, false);
                } else {
                    reads[i] = r;
                    cheap[i] = !fails && load_only(inst, &p.buffer_of, &cheap);
                }
            }
            _ => {}
        }
    }
    // A result that no kernel computes (a parameter or literal) is copied by one.
    if p.plan.buffers.get(p.plan.result).map(|b| &b.role) != Some(&BufferRole::Result)
        || p.plan.dispatches.is_empty()
    {
        p.map(result, true);
    }
    p.plan.result_shape = f.ty(result).shape.clone();
    p.split_large_bindings()?;
    // A kernel over the device's limit (many arrays in one product, or one array in
    // many windows) is refused rather than handed to the driver.
    for k in &p.plan.kernels {
        let descriptors: u32 = k.bindings.iter().map(|b| b.windows.max(1)).sum();
        if descriptors > opts.max_bindings {
            return Err(err::unsupported(
                format!(
                    "a kernel binding {descriptors} arrays, more than the device's {}, is not supported on the GPU path yet",
                    opts.max_bindings
                ),
                f.span(result),
            ));
        }
    }
    p.plan.dyn_lengths = p
        .dyn_buffers
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.map(|b| (i as u32, b)))
        .collect();
    Ok(p.plan)
}

/// Whether the device reduces `op` on `elem` in parallel. An integer `×/` is a right
/// fold, checked at every step as the reference's: a product's overflow is not decided
/// by the wrapped result (scans check theirs in lowering).
fn parallel_reduce(op: BinOp, elem: ElemType) -> bool {
    parallel(op, elem) && !(op == BinOp::Mul && elem.is_int())
}

/// Whether the device folds `op` on `elem` with subgroup operations (in any grouping).
fn parallel(op: BinOp, elem: ElemType) -> bool {
    match op {
        BinOp::Add | BinOp::Mul | BinOp::Max | BinOp::Min => true,
        BinOp::And | BinOp::Or => elem == ElemType::Bool,
        _ => false,
    }
}

/// The element count of `dims` where every length is known (0 when one is 0,
/// whatever the others; saturating, so a count past `u64` reads as too large).
fn known(dims: &[Dim]) -> Option<u64> {
    if dims.contains(&Dim::Known(0)) {
        return Some(0);
    }
    dims.iter().try_fold(1u64, |acc, d| match d {
        Dim::Known(n) => Some(acc.saturating_mul(*n)),
        Dim::Sym(_) | Dim::Dyn(_) => None,
    })
}

/// The shape around a folded axis: the axes before it, its length, the axes after it.
struct AxisSplit {
    pre: Vec<Dim>,
    len: Dim,
    post: Vec<Dim>,
}

impl AxisSplit {
    fn new(shape: &[Dim], axis: usize) -> AxisSplit {
        AxisSplit {
            pre: shape[..axis].to_vec(),
            len: shape[axis],
            post: shape[axis + 1..].to_vec(),
        }
    }

    fn rows(&self) -> Vec<Dim> {
        let mut r = self.pre.clone();
        r.extend(self.post.iter().copied());
        r
    }

    /// The ravel index of element (`Row`, `Pos`).
    fn index(&self, kb: &mut KernelBindings) -> IExpr {
        let p = kb.product(&self.post);
        let l = kb.dim(self.len);
        let outer = IExpr::quot(IExpr::Row, p.clone());
        let inner = IExpr::modulo(IExpr::Row, p.clone());
        IExpr::plus(
            IExpr::plus(
                IExpr::times(outer, IExpr::times(l, p.clone())),
                IExpr::times(IExpr::Pos, p),
            ),
            inner,
        )
    }
}

impl Planner<'_> {
    /// Gives each binding of an array larger than one window as many windows as it
    /// needs (the largest over the kernel's dispatches).
    fn split_large_bindings(&mut self) -> Result<()> {
        let window = self.opts.window_bytes.max(1 << 16);
        for d in &self.plan.dispatches {
            for (i, &b) in d.buffers.iter().enumerate() {
                let buf = &self.plan.buffers[b];
                let Some(n) = buf.len.constant() else {
                    continue;
                };
                if n > MAX_DEVICE_COUNT {
                    return Err(err::ws_full(
                        format!(
                            "an array of {n} elements; the device computes on arrays of at most {MAX_DEVICE_COUNT} elements"
                        ),
                        self.span_of_buffer(b),
                    ));
                }
                let bytes = n.saturating_mul(buf.elem.size() as u64);
                let w = bytes.div_ceil(window).max(1);
                let k = &mut self.plan.kernels[d.kernel];
                let bnd = &mut k.bindings[i];
                if w > 1 && (bnd.status || bnd.atomic) {
                    return Err(err::unsupported(
                        "scan state larger than one storage binding",
                        self.span_of_buffer(b),
                    ));
                }
                if w > MAX_WINDOWS as u64 {
                    return Err(err::unsupported(
                        format!(
                            "an array of {bytes} bytes needs more than {MAX_WINDOWS} bindings of {window} bytes on this device"
                        ),
                        self.span_of_buffer(b),
                    ));
                }
                bnd.windows = bnd.windows.max(w as u32);
            }
        }
        Ok(())
    }

    /// The span of the instruction whose value buffer `b` holds (for a parameter,
    /// of its first use), else the result's.
    fn span_of_buffer(&self, b: usize) -> Span {
        let f = self.v.func;
        let at = self.buffer_of.iter().position(|&x| x == Some(b));
        let v = at.map_or_else(|| f.result.unwrap_or(Value(0)), |i| Value(i as u32));
        if f.span(v).is_empty() {
            let user = (0..f.insts.len()).find(|&i| f.insts[i].operands().contains(&v));
            if let Some(i) = user {
                return f.span(Value(i as u32)).clone();
            }
        }
        f.span(v).clone()
    }

    fn kb(&self) -> KernelBindings {
        KernelBindings {
            dyns: self.dyn_buffers.clone(),
            ..Default::default()
        }
    }

    /// A shape with each device-computed length replaced by its bound.
    fn bounded(&self, shape: &[Dim]) -> Vec<Dim> {
        shape
            .iter()
            .map(|d| match d {
                Dim::Dyn(i) => self.v.func.dyn_bounds[*i as usize],
                d => *d,
            })
            .collect()
    }

    fn has_dyn(&self, v: Value) -> bool {
        self.v
            .func
            .ty(v)
            .shape
            .iter()
            .any(|d| matches!(d, Dim::Dyn(_)))
    }

    /// An upper bound of the element count of `v` (exact without device lengths).
    fn len_of(&self, v: Value) -> Count {
        Count::Product(self.bounded(&self.v.func.ty(v).shape))
    }

    /// How a kernel over the elements of `v` finds their count when it is computed
    /// on the device.
    fn n_from(&self, v: Value, kb: &mut KernelBindings) -> Option<IExpr> {
        self.has_dyn(v)
            .then(|| kb.product(&self.v.func.ty(v).shape.clone()))
    }

    fn buffer(&mut self, v: Value, role: BufferRole) -> usize {
        let ty = self.v.func.ty(v);
        self.plan.buffers.push(Buffer {
            elem: ty.elem,
            len: Count::Product(self.bounded(&ty.shape)),
            role,
        });
        self.plan.buffers.len() - 1
    }

    fn new_buffer(&mut self, elem: ElemType, len: Count, role: BufferRole) -> usize {
        self.plan.buffers.push(Buffer { elem, len, role });
        self.plan.buffers.len() - 1
    }

    /// The error bit of an associative float `+` or `×` fold whose stored values
    /// must be finite: its items are, so a value that is not left the type's range.
    /// When the fold stores the statement's result and the caller checks it after
    /// the readback, the check is left to the host (`Plan::finite_result`).
    fn overflow_bit(&mut self, v: Value, fold: &Fold, is_result: bool) -> Option<u32> {
        let elem = self.v.func.ty(v).elem;
        match fold {
            Fold::Assoc(BinOp::Add | BinOp::Mul) if elem.is_float() => {
                let span = self.v.func.span(v);
                let message = crate::scalar::not_finite(elem);
                if is_result && self.opts.host_checks_result {
                    self.plan.finite_result = Some(DeviceError {
                        class: ErrorClass::Domain,
                        message: message.into(),
                        span,
                    });
                    return None;
                }
                Some(self.error_bit(ErrorClass::Domain, message, span))
            }
            _ => None,
        }
    }

    fn error_bit(&mut self, class: ErrorClass, message: &str, span: Span) -> u32 {
        let bit = self.plan.errors.len().min(31) as u32;
        if self.plan.errors.len() < 32 {
            self.plan.errors.push(DeviceError {
                class,
                message: message.to_string(),
                span,
            });
        }
        bit
    }

    /// Polls of a lookback before it reduces the awaited tile itself. Where the
    /// device cuts loops off after so many trips in all (lavapipe), a lookback must
    /// not spend them polling: a few polls, then the tile is reduced.
    fn spin_limit(&self) -> u32 {
        match self.opts.loop_trip_limit {
            Some(_) => self.opts.spin_limit.min(4),
            None => self.opts.spin_limit,
        }
    }

    /// Adds the status binding to a kernel whose expressions may fail.
    fn bind_status(&mut self, kb: &mut KernelBindings, may_fail: bool) {
        if may_fail {
            let s = match self.plan.status {
                Some(s) => s,
                None => {
                    let s = self.new_buffer(ElemType::I32, Count::known(1), BufferRole::Status);
                    self.plan.status = Some(s);
                    s
                }
            };
            let i = kb.bind(s, ElemType::I32, true);
            kb.bindings[i as usize].status = true;
        }
    }

    fn push_kernel(
        &mut self,
        name: &str,
        kind: KernelKind,
        kb: KernelBindings,
        push: Vec<(&'static str, Count)>,
        groups: Count,
    ) {
        let shape = (self.opts.workgroup_size, self.opts.items_per_thread);
        self.push_kernel_shaped(name, kind, kb, push, groups, shape);
    }

    /// [`Self::push_kernel`] with its own workgroup size and items per invocation
    /// (the defaults of specialization constants 0 and 1).
    fn push_kernel_shaped(
        &mut self,
        name: &str,
        kind: KernelKind,
        kb: KernelBindings,
        push: Vec<(&'static str, Count)>,
        groups: Count,
        (workgroup_size, items_per_thread): (u32, u32),
    ) {
        let k = self.plan.kernels.len();
        debug_assert_eq!(push.len() as u32, kind.fixed_push());
        let mut kb = kb;
        let guard = self.guard.map(|(b, zero, nonzero)| KernelGuard {
            binding: kb.bind(b, ElemType::I32, false),
            zero,
            nonzero,
        });
        let mut names: Vec<String> = push.iter().map(|(n, _)| n.to_string()).collect();
        let mut counts: Vec<Count> = push.into_iter().map(|(_, c)| c).collect();
        for d in &kb.lengths {
            names.push(d.to_string());
            counts.push(Count::Product(vec![*d]));
        }
        self.plan.kernels.push(Kernel {
            name: format!("{name}_{k}"),
            kind,
            bindings: kb.bindings,
            push_constants: names,
            workgroup_size,
            items_per_thread,
            spin_limit: self.spin_limit(),
            n_from: None,
            combine: self.dfn.clone(),
            window_bytes: self.opts.window_bytes.max(1 << 16),
            float64: self.opts.float64,
            denorm_preserve_f64: self.opts.denorm_preserve_f64,
            denorm_preserve_f32: self.opts.denorm_preserve_f32,
            flush_f32: self.opts.flush_f32,
            maximal_reconvergence: self.opts.maximal_reconvergence,
            ct: self.v.func.ct,
            trip_guards: vec![],
            lookback_budget: None,
            guard,
        });
        self.plan.dispatches.push(Dispatch {
            kernel: k,
            buffers: kb.buffers,
            push: counts,
            groups,
            indirect: None,
            repeat: None,
        });
    }

    fn result_or_temp(&mut self, v: Value, is_result: bool) -> usize {
        let b = self.buffer(
            v,
            if is_result {
                BufferRole::Result
            } else {
                BufferRole::Temp
            },
        );
        if is_result {
            self.plan.result = b;
        }
        b
    }

    /// Workgroups for a grid-stride loop over `n` elements, `items` per invocation per
    /// trip, at most `max`.
    fn grid(&self, n: &Count, max: u32) -> Count {
        Count::Groups {
            of: Box::new(n.clone()),
            per_group: self.opts.workgroup_size * self.opts.items_per_thread,
            max,
        }
    }

    fn map(&mut self, v: Value, is_result: bool) {
        let b = self.result_or_temp(v, is_result);
        if !self.stencil_map(v, b) {
            self.map_into(v, v, b);
        }
        self.buffer_of[v.index()] = Some(b);
    }

    /// Computes `from` (of `v`'s length and type) into buffer `b`.
    fn map_into(&mut self, v: Value, from: Value, b: usize) {
        let mut kb = self.kb();
        let expr = self.expr(from, &IExpr::Index, &mut kb);
        self.push_map("map", v, kb, expr, b);
    }

    /// A map kernel storing `expr` (its inputs bound in `kb`) at each element of
    /// `v`'s length and type, into buffer `b`.
    fn push_map(&mut self, name: &str, v: Value, mut kb: KernelBindings, expr: KExpr, b: usize) {
        let out = kb.bind(b, self.v.func.ty(v).elem, true);
        self.bind_status(&mut kb, expr.may_fail());
        let n = self.len_of(v);
        let n_from = self.n_from(v, &mut kb);
        let groups = self.grid(&n, self.opts.map_groups);
        self.push_kernel(
            name,
            KernelKind::Map { expr, out },
            kb,
            vec![("n", n)],
            groups,
        );
        self.set_n_from(n_from);
    }

    /// Makes the last kernel read its element count `n_from` on the device (when
    /// given), and sizes its grid with an indirect dispatch whose arguments a small
    /// kernel computes just before it. Returns the arguments' buffer, whose first word
    /// is that workgroup count.
    fn set_n_from(&mut self, n_from: Option<IExpr>) -> Option<usize> {
        let n_from = n_from?;
        let last = self.plan.dispatches.len().checked_sub(1)?;
        let (per_group, max) = match &self.plan.dispatches[last].groups {
            Count::Groups { per_group, max, .. } => (*per_group, *max),
            _ => (1, self.opts.map_groups),
        };
        // A grid-stride kernel takes at most `map_groups`; one that needs exactly one
        // workgroup per tile (a chained scan: `max` unbounded) gets them all, its
        // bound checked against the device's limit when it is recorded (clamped, the
        // last tiles were never scanned: `+\` or a compaction of a compress result of
        // more than 65535 tiles lost its end).
        let max = match max {
            u32::MAX => max,
            m => m.min(self.opts.map_groups),
        };
        let consumer = self.plan.dispatches.pop()?;
        let ck = self.plan.kernels.pop()?;
        let args = self.new_buffer(ElemType::I32, Count::known(3), BufferRole::Temp);
        // The arguments kernel reads the length where the consumer would.
        let mut kb = self.kb();
        for (b, binding) in consumer.buffers.iter().zip(&ck.bindings) {
            kb.bind(*b, binding.elem, binding.writable);
        }
        // And the same run-time lengths in the same push-constant slots.
        for c in &consumer.push[ck.kind.fixed_push() as usize..] {
            if let Count::Product(d) = c {
                kb.lengths.extend(d.iter().copied());
            }
        }
        let n = n_from.clone();
        let out = kb.bind(args, ElemType::I32, true);
        let bound = consumer.push.first().cloned().unwrap_or(Count::known(0));
        let kind = KernelKind::IndirectArgs {
            n,
            per_group,
            max,
            out,
        };
        // Never guarded: a guarded consumer is dispatched all the same, and would
        // take whatever its arguments' temporary buffer held as its workgroups.
        let guard = self.guard.take();
        self.push_kernel(
            "indirect_args",
            kind,
            kb,
            vec![("n", bound)],
            Count::known(1),
        );
        self.guard = guard;
        let ci = self.plan.kernels.len();
        self.plan.kernels.push(Kernel {
            n_from: Some(n_from),
            name: format!(
                "{}_{ci}",
                ck.name.rsplit_once('_').map_or(&*ck.name, |x| x.0)
            ),
            ..ck
        });
        self.plan.dispatches.push(Dispatch {
            kernel: ci,
            indirect: Some(args),
            ..consumer
        });
        Some(args)
    }

    /// The buffer holding `v`, computing it into one first if it is fused so far.
    fn materialize(&mut self, v: Value) -> usize {
        if let Some(b) = self.buffer_of[v.index()] {
            return b;
        }
        self.map(v, false);
        self.buffer_of[v.index()].unwrap_or(0)
    }
}

fn dyn_unsupported(span: Span) -> Error {
    err::needs_known(
        "this function of an array whose length is computed on the device (a compress) is not supported on the GPU path yet",
        span,
    )
}

fn unreachable_materialized(inst: &Inst) -> KExpr {
    debug_assert!(false, "{inst:?} should have been materialized");
    KExpr::Const(Scalar::I32(0))
}

/// `expr` converted to the fold type `acc`, where that differs.
fn widen(expr: KExpr, acc: ElemType) -> KExpr {
    match expr.elem() == acc {
        true => expr,
        false => KExpr::Cast {
            to: acc,
            arg: Box::new(expr),
        },
    }
}
