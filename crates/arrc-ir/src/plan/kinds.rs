//! What each kernel computes: the kinds the planner chooses among (`KernelKind`),
//! how a fold combines items (`Fold`), what works on a row (`Unit`), and the parts
//! some kinds carry (`Finish`, `Compact`, `Binding`, `RadixPlaces`).

use super::{BitProduct, CoopTile, IExpr, KExpr, MatMulTile};
use crate::array::{ElemType, Scalar};
use crate::ir::SearchKind;
use crate::scalar::BinOp;
use serde::Serialize;

/// How a fold combines items.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fold {
    /// An associative function: any grouping gives the same result (up to float
    /// rounding), so it folds in parallel, keeping the items' order.
    Assoc(BinOp),
    /// Any other function: APL's right fold `x0 f (x1 f (… f xn))`, one row per
    /// invocation; `error_bit` for the errors the function can raise.
    Right { op: BinOp, error_bit: Option<u32> },
    /// A right fold whose step is the kernel's `combine` expression (a dfn operand);
    /// `empty_error` for a reduction along a length known only at run time, which is a
    /// DOMAIN ERROR when it is 0 (a dfn has no identity).
    Dfn { empty_error: Option<u32> },
}

impl Fold {
    /// The function (for `Dfn`, `-`: used for identities, which a right fold needs only
    /// for an empty row, and a dfn fold over an empty axis is refused at lowering).
    pub fn op(self) -> BinOp {
        match self {
            Fold::Assoc(op) | Fold::Right { op, .. } => op,
            Fold::Dfn { .. } => BinOp::Sub,
        }
    }

    /// Whether it folds one item at a time from the right.
    pub fn is_right(self) -> bool {
        !matches!(self, Fold::Assoc(_))
    }
}

/// What works on one row of an axis kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// One invocation per row: short rows, and columns (neighbouring invocations
    /// read neighbouring elements).
    Thread,
    /// One subgroup per row: medium rows.
    Subgroup,
    /// One workgroup per row (or per piece of a long row).
    Workgroup,
    /// Four neighbouring rows per invocation, for folds along a leading axis whose
    /// rows come in fours in memory (`+⌿` of a matrix of a width divisible by 4): a
    /// plain array is read 16 bytes at a time, four columns at once.
    Quad,
}

/// What a kernel computes. Push constant 0 is always the number of elements or rows
/// (a dispatch with 0 there is skipped, except for vector reductions, which write the
/// identity).
#[derive(Clone, Debug, PartialEq)]
pub enum KernelKind {
    /// `out[i] = expr(i)` for `i < n`, grid-stride.
    Map { expr: KExpr, out: u32 },
    /// A map over a `rows × cols` result (push constants `n, rows, cols`) that reads
    /// the matrix `x` of its shape at several offsets (`KExpr::Staged`): tile by
    /// tile (`tile` outputs: rows, columns), each workgroup stages the tile of `x`
    /// with `lo` rows and columns before it and `hi` after (`fill` outside `x`) in
    /// workgroup memory, converted to `staged`, then computes `expr` at each output
    /// of the tile. Each invocation computes `rows_each` neighbouring outputs, one
    /// below another; the kernel has `tile[0]·tile[1] / rows_each` invocations
    /// (its workgroup size, specialisation constant 0).
    Stencil {
        expr: KExpr,
        out: u32,
        x: u32,
        fill: Scalar,
        staged: ElemType,
        lo: [u32; 2],
        hi: [u32; 2],
        tile: [u32; 2],
        rows_each: u32,
    },
    /// `out[index(i)] op= value(i)` for `i < n`, atomically (`op` is `+`, `⌈` or
    /// `⌊`; `out` holds `op`'s identity first). `out` has `slots` items (each
    /// `index(i)` is below it); where they fit in workgroup memory, each workgroup
    /// folds its share there first and then adds one atomic per slot to `out`.
    ScatterAdd {
        op: BinOp,
        index: KExpr,
        value: KExpr,
        out: u32,
        slots: IExpr,
    },
    /// `out[index(i)] = value(i)` for `i < n` where `owner[index(i)] == i` (the last
    /// `i` naming that position). With `guard`, nothing is stored once an earlier
    /// kernel raised an error (`out` may be a parameter's own buffer: `Plan::in_place`).
    Scatter {
        index: KExpr,
        value: KExpr,
        owner: u32,
        out: u32,
        guard: bool,
    },
    /// One step of `Inst::Solve`'s Householder QR (f64) by panels of `block`
    /// columns (pushes n, m, k, t; the dispatch repeats for t = 0 … 2⌈n÷block⌉-1).
    /// Even t factors panel t÷2 in workgroup 0: for each column j of it, the
    /// reflector v (column j from its diagonal, which becomes v's first item), its
    /// squared norm into `taus`, R's diagonal item into `diag`, raising `singular`
    /// (the column's norm at most `scale`×1E¯13×m), and v applied to the panel's
    /// later columns. Odd t applies the panel's reflectors in order: workgroup w < n
    /// to column w of `a` where w is past the panel, workgroup n+c to column c of `b`.
    /// `shape` is raised where m < n.
    QrStep {
        a: u32,
        b: u32,
        diag: u32,
        scale: u32,
        taus: u32,
        block: u32,
        singular: u32,
        shape: u32,
    },
    /// `Inst::Solve`'s back substitution (pushes n, m, k): workgroup c solves column
    /// c of `out` (n by k) from R (`a` above its diagonal, `diag`) and `b`, raising
    /// `range` where an item is beyond `limit`.
    BackSubst {
        a: u32,
        b: u32,
        diag: u32,
        out: u32,
        limit: f64,
        range: u32,
    },
    /// `out[g] = op/ expr(i)` over workgroup `g`'s grid-stride share.
    /// `overflow`: the error bit raised where a stored value is not finite (a float
    /// `+` or `×` fold of finite items that left the type's range), as on the other
    /// fold kinds.
    Reduce {
        op: BinOp,
        expr: KExpr,
        out: u32,
        overflow: Option<u32>,
        /// The whole reduction in this dispatch: workgroup `g` stores its partial in
        /// `partials` (two u32 words each, atomically), then adds one to `counter`
        /// (acquire-release); the workgroup that finds every other one done loads
        /// the count with acquire semantics in every invocation, folds the partials in
        /// a fixed order (the same input gives the same bits) and stores `out[0]`.
        finish: Option<Finish>,
    },
    /// Single-pass inclusive scan: chained scan with decoupled lookback (and a bounded
    /// spin with a fallback that reduces the awaited tile itself, so no device without
    /// forward-progress guarantees can hang). Tiles of `WG×items` elements are taken
    /// in order from `counter`; each publishes its aggregate, then its inclusive prefix,
    /// in `aggregates`/`inclusive` with a flag in `flags` (0 none, 1 aggregate,
    /// 2 inclusive).
    ScanChained {
        op: BinOp,
        expr: KExpr,
        out: u32,
        flags: u32,
        aggregates: u32,
        inclusive: u32,
        counter: u32,
        /// Every subgroup looks back on its own and finds the same prefix (subgroup 0
        /// publishes), instead of subgroup 0 alone handing the prefix on through
        /// workgroup memory: for devices where a workgroup barrier after one
        /// subgroup's spin does not order its stores (`PlanOptions`).
        every_subgroup_looks_back: bool,
        /// How a tile's status is published and read (`ScanStatus`).
        status: ScanStatus,
        /// The workgroup's last `L` invocations (one subgroup of the planner's size
        /// `L`) hold no elements and look back from the moment the tile is claimed,
        /// until the prefix is found or the other subgroups have their totals
        /// (`PlanOptions::scan_lookback_subgroup`); a tile is the other invocations'
        /// `items` each.
        lookback_subgroup: Option<u32>,
        /// The whole workgroup polls, a window of a subgroup's width each
        /// (`PlanOptions::scan_wide_lookback`).
        wide_lookback: bool,
        /// Round totals by a shuffle from the last lane (`PlanOptions::subgroup_shuffle`).
        shuffle: bool,
        /// The tile is the workgroup id, not claimed from `counter` (`PlanOptions`).
        tiles_by_workgroup: bool,
        overflow: Option<u32>,
        /// Stream compaction in the scan's own pass (`c/⍵` of a boolean `c`): `expr`
        /// is the mask as counts, and in place of the scan each element whose count
        /// is 1 stores `value` at its inclusive count less one in `out`; the last
        /// element stores the kept count in `len`. The counts never leave the device
        /// and no array of positions is written (one pass, as the decoupled-fallback
        /// paper's compaction).
        compact: Option<Compact>,
        /// An f32 scan in f64 on a device that may flush f32 subnormals: widen by
        /// OpFConvert alone, and set word 0 of this binding where a subgroup holds
        /// a subnormal (a second, guarded dispatch then scans the exact way).
        subnormals: Option<u32>,
    },
    /// Push constants `rows, len, parts`: for `u < rows×parts`, `out[u]` folds
    /// positions `[p·per, min(len, (p+1)·per))` of row `u mod rows`, with
    /// `p = u div rows` and `per = ceil(len/parts)`; `expr` reads `Row` and `Pos`.
    ReduceAxis {
        fold: Fold,
        expr: KExpr,
        out: u32,
        unit: Unit,
        overflow: Option<u32>,
    },
    /// Push constants `m, n, k`: `out = a+.×b` for `a` m×k and `b` k×n (elements by
    /// ravel index), in tiles of `16·rows × 16·cols` per workgroup of 256
    /// invocations (`MatMulTile`). `overflow` as on `Reduce`. With a `pair`, a
    /// generalized inner product: each output is `fold` (from its identity, in the
    /// output's type) over `pair` of (`a`'s, `b`'s) elements as `KExpr::Operand` 0
    /// and 1. With `bits`, a product of booleans packed 32 to a word (`PackBits`):
    /// `a` and `b` are the words (i32), `k` counts words, and `BitProduct` says how
    /// they combine. An integer `+.×` whose sums the operands' bounds keep within
    /// i32 comes with `a` and `b` in i32 and folds in i32.
    MatMul {
        a: KExpr,
        b: KExpr,
        fold: BinOp,
        pair: Option<KExpr>,
        out: u32,
        tile: MatMulTile,
        overflow: Option<u32>,
        bits: Option<BitProduct>,
        /// An integer sum's bit, raised where the sum leaves i64 (its partial sums
        /// may, where later pairs bring them back).
        checked_sum: Option<u32>,
    },
    /// Push constants `n, tn, kw, np`: `out` (i32, `np` to a row) is the product of
    /// `a` and `b`, 8-bit integers packed four to an i32 word (`PackI8`): `a` along
    /// its rows, `kw` words to a row; `b` down its columns, `kw` words to a column;
    /// multiplied on the device's
    /// cooperative matrices (`CoopTile`) with exact i32 sums. `n` counts the
    /// workgroup tiles, `tn` those along a row; every operand and output is padded
    /// to whole tiles and steps, so no fragment reads or writes past them.
    CoopMatMul {
        a: u32,
        b: u32,
        out: u32,
        tile: CoopTile,
    },
    /// Sets word `j` of `out` (to 1) where an element of the integers `arg` (`n`
    /// of them) is past `limits[j]` in magnitude; stores nothing elsewhere.
    RangeFlag {
        arg: KExpr,
        limits: Vec<u32>,
        out: u32,
    },
    /// Push constants `n, r, c, w`: the integers `arg` of an `r×c` matrix packed
    /// four to an i32 word of `out` along its rows, as 8-bit two's complement (byte
    /// `j` of word `i·w+q` the element `(i, 4q+j)`), `w` words to a row; bytes past
    /// the matrix are 0. `n` counts the words (rows past the matrix too: zeros).
    /// The elements are within ±127, or, with `range`, word `j` of that binding is
    /// set where one is past `limits[j]` (and the packed word means nothing). With
    /// `slice`, each element `x` (within ±16319) is packed as its high (`true`) or
    /// low slice of `x = 128h + l`, `l` in -64..63. With `cols`, down its columns
    /// instead: `out` has `n/w` lines of `w` words, byte `j` of word `i·w+q` the
    /// element `(4q+j, i)`.
    PackI8 {
        arg: KExpr,
        out: u32,
        range: Option<(u32, Vec<u32>)>,
        slice: Option<bool>,
        cols: bool,
    },
    /// Push constants `n, r, c, w`: the booleans `arg` of an `r×c` matrix packed 32 to
    /// an i32 word of `out` (bit `j` is element `32w+j`; bits past the matrix 0),
    /// along its rows (`out` is `r × ⌈c÷32⌉`) or, with `cols`, down its columns
    /// (`⌈r÷32⌉ × c`), each `⌈÷32⌉` at least 1 as `Count::Groups` counts it; `n`
    /// counts the words, `w` those along a packed line (`⌈c÷32⌉` or `⌈r÷32⌉`). With `invert`, each bit is the element's negation. (With
    /// `bits`, `MatMul`'s `pair` is `None` and its `fold` only names the product.)
    PackBits {
        arg: KExpr,
        out: u32,
        cols: bool,
        invert: bool,
    },
    /// One invocation writes `clamp(ceil(n / per_group), 1, max), 1, 1` to `out`: the
    /// workgroup count of the next dispatch, from a length computed on the device.
    IndirectArgs {
        n: IExpr,
        per_group: u32,
        max: u32,
        out: u32,
    },
    /// One step of a bitonic sorting network over the index array `idx` (a power of
    /// two long, entries `origin…`; entries at or beyond `len` after subtracting
    /// `origin` sort last). Push constants `pairs, len, k, j, cols`: pair `t` compares
    /// positions `i = 2j·(t div j) + t mod j` and `i+j` by their rows of `cols` keys
    /// in ravel order (ascending, or descending when `down`, ties by index, so the
    /// result is stable), ascending where `i & k` is 0.
    SortStep {
        keys: u32,
        idx: u32,
        down: bool,
        origin: i32,
    },
    /// A radix sort's keys: for `i < n`, `key(i)` as unsigned 32-bit words (two for an
    /// 8-byte key, low word first) that sort as the keys do (complemented when
    /// `down`; a float's -0 as 0), in `out` (as i32 words).
    RadixKeys {
        key: KExpr,
        out: u32,
        down: bool,
        /// `(binding, passes)`: the digit counts of every pass, `hist[p·256 + d]`,
        /// added up here (the binding is zeroed) for `RadixPlaces::Lookback`.
        hist: Option<(u32, u32)>,
        /// The keys' range, for 4-byte keys (see `RadixArgs`): a zeroed pair of u32
        /// words raised by atomic maxima to the complement of the least key word
        /// and the greatest.
        range: Option<u32>,
    },
    /// Which passes of a radix sort of 4-byte keys are run: the passes sort the key
    /// words less the least (`range`, from `RadixKeys`), and pass `p > 0` is needed
    /// only where the greatest less the least has a bit at `8p` or above (else every
    /// key's digit there is 0, and the pass would keep the order it finds). One
    /// invocation writes each `RadixArg`'s indirect dispatch arguments.
    RadixArgs { range: u32, args: Vec<RadixArg> },
    /// After a radix sort of `passes` passes of which the last were not needed
    /// (`RadixArgs`): the indices from the buffer the last pass run wrote
    /// (`idx[L mod 2]`, L the passes run) to `idx_out`, plus `origin`; with
    /// `sorted_keys`, the keys from `keys[L mod 2]` to `keys[passes mod 2]`, where
    /// the sort's readers find them. A grid-stride map over push constant `n`.
    RadixSettle {
        range: u32,
        keys: [u32; 2],
        idx: [u32; 2],
        idx_out: u32,
        origin: i32,
        passes: u32,
        sorted_keys: bool,
    },
    /// One pass of the multi-kernel radix sort (`RadixPlaces::Counted`): push
    /// constants `n, tile, shift, tiles`. Workgroup
    /// `t` counts, in `counts[d·tiles + t]`, the keys of positions
    /// `[t·tile, min(n, (t+1)·tile))` whose 8-bit digit at bit `shift` is `d`.
    /// With `range` (see `RadixArgs`), digits are those of each key word less the
    /// least (`RadixScatter` likewise).
    RadixCount {
        keys: u32,
        wide: bool,
        counts: u32,
        range: Option<u32>,
    },
    /// One pass of a radix sort over tiles of `tile` keys (push constants `n, tile,
    /// shift, tiles`): each key (and its index: `idx[i]`, or `i` in the first pass,
    /// plus `origin`) goes to the start of its digit's run among the tile's (from
    /// `places`) plus the number of earlier keys of the tile with the same digit:
    /// stable. `keys_out` is `None` in the last pass unless the keys are read in
    /// sorted order (`KExpr::SortedKey`). The workgroup is `subgroups`
    /// subgroups of the device's size, each ranking `items` keys per invocation;
    /// `tile` (their product) keys are sorted in workgroup memory before they go out.
    RadixScatter {
        keys: u32,
        idx: Option<u32>,
        places: RadixPlaces,
        keys_out: Option<u32>,
        idx_out: u32,
        wide: bool,
        origin: i32,
        subgroups: u32,
        items: u32,
        tile: u32,
        /// The error bit raised where the device runs subgroups of another size than
        /// the one the tile was made for (`tile / (subgroups × items)`, the size it
        /// reports), or a lookback ends with a digit's place unknown (a loop the
        /// device cut short).
        wrong_subgroups: u32,
        /// The keys' range (`RadixKeys::range`): digits are those of each key word
        /// less the least, in every pass, so that keys of a narrow range need few
        /// passes wherever it lies.
        range: Option<u32>,
    },
    /// Push constants `m, n`: for each of `m` needles, a binary search among the `n`
    /// sorted `keys`, whose 0-based indices before sorting are `order` (a grade);
    /// `tolerant` for f64 (⎕CT). Stores the first index (from `origin`; `origin+n` when absent) or
    /// whether it was found.
    Search {
        keys: u32,
        order: u32,
        needle: KExpr,
        out: u32,
        kind: SearchKind,
        tolerant: bool,
    },
    /// Push constants `n, slots`: puts each of `n` keys (`key`, an i32 expression)
    /// in the hash table `table` of `slots` slots (u32 words, zeroed before: 0 is
    /// an empty slot), by open addressing from the slot of its hash. The key
    /// whose word is 0 is kept apart, in the one word of `zero`. With `index`, each slot is a pair
    /// (key, `!i` of its least index `i`, by an atomic max) for `x⍳y`; without,
    /// one word (the key) for `y∊x`. See [`HashLayout`].
    HashInsert {
        key: KExpr,
        table: u32,
        zero: u32,
        index: bool,
    },
    /// Push constants `m, n, slots`: for each of `m` needles (`needle`, an i32
    /// expression), looks in the `HashInsert` table of `n` keys: stores the first
    /// index of the needle among them (from `origin`; `origin+n` when absent) or
    /// whether it is there.
    HashProbe {
        needle: KExpr,
        table: u32,
        zero: u32,
        out: u32,
        kind: SearchKind,
    },
    /// `Inst::SegScan` over tiles of `invocations × items` elements (push constant
    /// `n`; the fields in `SegScanShape`), a workgroup a tile in turn: each
    /// invocation folds its `items` consecutive elements of `value` with `op`
    /// (restarting where `flag` is not 0, and at element 0), the invocations' folds
    /// are scanned in workgroup memory, and each element's value is its
    /// invocation's carry folded with its own elements. Tile `t` starts from
    /// `carry[t-1]` (the scan of the tiles' aggregates, from a kernel before) where
    /// it has one. With `aggregates` (`values`, `flags`), each tile stores its fold
    /// from its last start (of the whole tile where none) and whether it has a
    /// start, and nothing else. With `out`, each element's value is stored there
    /// converted to its type; `overflow` is raised where a run's last value is not
    /// finite (the other values are not results). `staged`: the values go out
    /// through workgroup memory (`invocations × (items+1)` of `out`'s type), so
    /// that neighbouring invocations store neighbouring elements. The kernel has
    /// `invocations` invocations (its workgroup size).
    SegScan {
        value: KExpr,
        flag: KExpr,
        shape: SegScanShape,
    },
    /// Push constants `rows, len`: inclusive scan of each row, element `(Row, Pos)`
    /// stored at `out_index`.
    ScanAxis {
        fold: Fold,
        expr: KExpr,
        out: u32,
        out_index: IExpr,
        unit: Unit,
        overflow: Option<u32>,
    },
}

/// Where [`KernelKind::HashInsert`] keeps a key in its table (u32 words, a key as
/// its ordered bits: i32's sign bit flipped, an f32's -0 as 0): with indices, slot
/// `s` as the pair of words `2s` (key) and `2s+1` (`!i`); without, slot `s`'s key
/// in word `s`. The key whose word is 0, the empty slot's mark (i32's least), has its entry (`!i`,
/// or 1 where it is there) in a word of its own (`zero`). More slots than keys
/// (`Planner::table_size`), so every probe meets an empty one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashLayout {
    pub index: bool,
}

impl HashLayout {
    /// Words a slot.
    pub fn stride(self) -> u32 {
        1 + self.index as u32
    }
}

impl KernelKind {
    /// Push constants the kind itself uses, before the expression's extra lengths.
    pub fn fixed_push(&self) -> u32 {
        match self {
            KernelKind::ReduceAxis { .. }
            | KernelKind::MatMul { .. }
            | KernelKind::Stencil { .. } => 3,
            KernelKind::PackBits { .. }
            | KernelKind::PackI8 { .. }
            | KernelKind::CoopMatMul { .. } => 4,
            KernelKind::ScanAxis { .. }
            | KernelKind::Search { .. }
            | KernelKind::HashInsert { .. } => 2,
            KernelKind::HashProbe { .. } => 3,
            KernelKind::SortStep { .. } => 5,
            KernelKind::QrStep { .. } => 4,
            KernelKind::BackSubst { .. } => 3,
            KernelKind::RadixCount { .. } | KernelKind::RadixScatter { .. } => 4,
            _ => 1,
        }
    }

    /// For the folds that check their stored values: the output binding and the
    /// error bit raised where a value stored there is not finite.
    pub fn overflow(&self) -> Option<(u32, u32)> {
        match self {
            KernelKind::Reduce { out, overflow, .. }
            | KernelKind::ScanChained { out, overflow, .. }
            | KernelKind::ReduceAxis { out, overflow, .. }
            | KernelKind::ScanAxis { out, overflow, .. }
            | KernelKind::MatMul { out, overflow, .. } => overflow.map(|b| (*out, b)),
            _ => None,
        }
    }
}

/// `KernelKind::SegScan`'s fields but its expressions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegScanShape {
    pub op: BinOp,
    pub out: Option<u32>,
    pub aggregates: Option<(u32, u32)>,
    pub carry: Option<u32>,
    pub overflow: Option<u32>,
    pub invocations: u32,
    pub staged: bool,
}

/// See `KernelKind::Reduce::finish`.
#[derive(Clone, Debug, PartialEq)]
pub struct Finish {
    pub partials: u32,
    pub counter: u32,
}

/// How a chained scan's tiles publish their status (`KernelKind::ScanChained`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanStatus {
    /// A flag word per tile in `flags` (0 unpublished, 1 aggregate, 2 inclusive
    /// prefix), stored with release semantics after the value's two u32 words in
    /// `aggregates` or `inclusive`; a reader acquires the flag, then reads the words.
    /// Where the device has no 64-bit atomics that can be trusted.
    Flagged,
    /// A 4-byte fold's status is one 64-bit word per tile in `flags` (the value in
    /// the high half, the flag in the low half), published and read with one 64-bit
    /// atomic each, as in CUB; `aggregates` and `inclusive` go unused.
    Packed,
    /// An 8-byte fold's aggregate and inclusive prefix are each one 64-bit word per
    /// tile in `aggregates` and `inclusive` (zeroed), stored once with one 64-bit
    /// atomic as the value's bits exclusive-or `scan_unpublished` (so that zero
    /// means unpublished and the value is its own flag). A reader loads both words at
    /// once: one round trip a poll, where a flag and then the value are two. A value
    /// whose bits are the pattern itself reads as unpublished, and the tile is
    /// reduced by the decoupled fallback instead: slower, never wrong. `flags` goes
    /// unused.
    Wide,
}

/// The bit pattern a `ScanStatus::Wide` word is exclusive-ored with: a NaN that no
/// arithmetic produces for f64 folds, and the most negative integer for i64 ones
/// (no sum of fewer than 2^32 i32 values reaches it).
pub fn scan_unpublished(t: ElemType) -> u64 {
    match t {
        ElemType::F64 => 0x7ff4_a5a5_5a5a_a5a5,
        _ => 1 << 63,
    }
}

/// See `KernelKind::ScanChained::compact`.
#[derive(Clone, Debug, PartialEq)]
pub struct Compact {
    pub value: KExpr,
    pub len: u32,
    /// Each round's kept values are staged in workgroup memory and stored as one
    /// run (where that fits `PlanOptions::max_shared_bytes`).
    pub staged: bool,
    /// The tile holds the values as read, not the mask: each is read once, and the
    /// mask computed from it where it reads the same element
    /// (`PlanOptions::compact_holds_values`).
    pub holds_values: bool,
    /// Counts may be more than 1 (replicate by computed counts, none negative): the
    /// scan is a plain one of the counts, and each element stores `value` its count
    /// of times from its inclusive count less its count (no keep bits, staging or
    /// held values).
    pub repeat: bool,
    /// A replicate's counts' bound (0 where none is known; 1 otherwise).
    pub most: u32,
    /// A replicate's stage holds `copies` copies an element of its round: where
    /// `most` is at most that, a round's copies are staged at once (one window).
    pub copies: u32,
}

/// One storage-buffer binding of a kernel (descriptor set 0).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Binding {
    pub binding: u32,
    pub elem: ElemType,
    pub writable: bool,
    /// The status word (u32, atomically OR-ed).
    pub status: bool,
    /// Read by other workgroups while the kernel runs (coherent).
    pub shared_between_groups: bool,
    /// u32 words accessed with atomics (scan flags and tile counter).
    pub atomic: bool,
    /// Descriptor bindings the array is split across: arrays larger than the device's
    /// largest storage-buffer range are bound as consecutive windows of
    /// `Kernel::window_bytes` each (descriptor bindings numbered on from this one's).
    pub windows: u32,
}

/// One indirect dispatch of a radix sort's pass (`KernelKind::RadixArgs`): `groups`
/// workgroups in binding `out` where pass `pass` is needed (`needed`) or not
/// (`!needed`: the settling copy after the passes run), none otherwise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RadixArg {
    pub out: u32,
    pub pass: u32,
    pub needed: bool,
    pub groups: u32,
}

/// Where a radix-sort pass finds the start of each digit's run for a tile.
#[derive(Clone, Debug, PartialEq)]
pub enum RadixPlaces {
    /// `starts[q - 1]`, 0 at `q = 0` (`q = d·tiles + t`): a `RadixCount` kernel
    /// counted each tile's digits and a chained scan made `starts`, their
    /// inclusive scan in digit-major order (one read a digit a tile). For any length.
    Counted { starts: u32 },
    /// OneSweep (one kernel per pass): `hist[pass·256 + d]`, all keys' digit counts,
    /// gives each digit's start; tiles are claimed in order from `counter[pass]`, and
    /// each publishes its digits' counts in `status[t·256 + d]` (a flag in the top two
    /// bits: 1 the tile's count, 2 the count of this and every earlier tile) for the
    /// tiles after it, which look back through them, counting a tile's keys
    /// themselves when it stays unpublished for `spin` polls (so no tile waits on
    /// one that has not started). Counts take 30 bits: for fewer than 2^30 keys.
    /// The pass zeroes its tiles' words of `next`, the next pass's status. A word
    /// is polled `polls` times before the tile is counted here.
    Lookback {
        hist: u32,
        status: u32,
        next: u32,
        counter: u32,
        pass: u32,
        polls: u32,
    },
}
