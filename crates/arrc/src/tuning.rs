//! Overrides of the device's kernel parameters ([`Tuning`]), for tests, benchmarks
//! and the fuzzer.

/// Overrides of the device's kernel parameters (`None` keeps the device's choice).
#[derive(Clone, Debug, Default)]
pub struct Tuning {
    /// `Some(false)`: plans as for a device without shaderFloat64 (f32 computed
    /// in f32 only, f64 refused), to test that path on one that has it.
    pub float64: Option<bool>,
    /// Invocations per workgroup of most kernels (`PlanOptions::workgroup_size`).
    pub workgroup_size: Option<u32>,
    /// Invocations per workgroup of scans.
    pub scan_workgroup_size: Option<u32>,
    /// Items each invocation of a scan tile holds.
    pub scan_items_per_thread: Option<u32>,
    /// Items each invocation of an elementwise kernel or fold reads.
    pub items_per_thread: Option<u32>,
    /// Workgroups of a grid-stride reduction.
    pub reduce_groups: Option<u32>,
    /// Workgroups the device runs at once (for kernels that wait on each other).
    pub busy_groups: Option<u32>,
    /// Polls of a scan's lookback before it takes the decoupled fallback.
    pub spin_limit: Option<u32>,
    /// Column folds of at least this many elements read four columns per invocation
    /// (`PlanOptions::quad_columns_from`).
    pub quad_columns_from: Option<u64>,
    /// Matrix products of at least this many result elements take 128×128 tiles
    /// (`PlanOptions::matmul_large_from`).
    pub matmul_large_from: Option<u64>,
    /// The large products' tile (`PlanOptions::matmul_tile`).
    pub matmul_tile: Option<arrc_ir::plan::MatMulTile>,
    /// Scan tiles in workgroup-id order (`PlanOptions::scan_tiles_by_workgroup`).
    pub scan_tiles_by_workgroup: Option<bool>,
    /// 8-byte scans' status words (`PlanOptions::scan_wide_status`).
    pub scan_wide_status: Option<bool>,
    /// A subgroup of each scan tile that only looks back
    /// (`PlanOptions::scan_lookback_subgroup`).
    pub scan_lookback_subgroup: Option<bool>,
    /// Scan tiles that look back with all their subgroups
    /// (`PlanOptions::scan_wide_lookback`).
    pub scan_wide_lookback: Option<bool>,
    /// Plans as for a device that cuts loops off after this many trips of an
    /// invocation (`PlanOptions::loop_trip_limit`); a device's own lower limit stays.
    pub loop_trip_limit: Option<u64>,
    /// Integer products of small operands on 8-bit cooperative matrices where the
    /// device has them (`PlanOptions::int8_matrices`); `Some(true)` changes nothing
    /// where it has none.
    pub int8_matrices: Option<bool>,
    /// Their tile (`PlanOptions::coop_tile`).
    pub int8_tile: Option<arrc_ir::plan::CoopTile>,
    /// Products from which operands within ±16319 are cut into 8-bit slices
    /// (`PlanOptions::int8_slices_from`).
    pub int8_slices_from: Option<u64>,
    /// Every subgroup of a scan tile looks back (`PlanOptions::every_subgroup_looks_back`);
    /// `Some(false)` changes nothing where the device needs it.
    pub every_subgroup_looks_back: Option<bool>,
    /// A vector's reduction in one dispatch (`PlanOptions::single_pass_reduce`).
    pub single_pass_reduce: Option<bool>,
    /// f32 `+` and `×` folds accumulate in f64 (`PlanOptions::wide_folds`; on by
    /// default: off only to measure what it costs, since f32 accumulation can differ
    /// from the reference where a sum cancels).
    pub wide_folds: Option<bool>,
    /// `⌺` stages its matrix in workgroup memory (`PlanOptions::stencil_tiles`).
    pub stencil_tiles: Option<bool>,
    /// The fewest window reads a staged stencil takes (`PlanOptions::stencil_from`).
    pub stencil_from: Option<u32>,
    /// Outputs an invocation of a staged stencil computes (`PlanOptions::stencil_rows`).
    pub stencil_rows: Option<u32>,
    /// A staged stencil's whole-window fold shares its rows among the outputs an
    /// invocation computes (`PlanOptions::window_folds`).
    pub window_folds: Option<bool>,
    /// A staged stencil's tile holds its items widened where every read widens
    /// them (`PlanOptions::stencil_widen`).
    pub stencil_widen: Option<bool>,
    /// Tests only: flush f32 subnormals on the guarded fast path
    /// (`PlanOptions::flush_f32`).
    pub flush_f32: Option<bool>,
    /// Columns a panel of `⌹`'s QR (`PlanOptions::qr_block`).
    pub qr_block: Option<u32>,
    /// `⍳ ∊` of exact 4-byte keys by a hash table (`PlanOptions::hash_search`).
    pub hash_search: Option<bool>,
    /// Spare slots of a hash table, in quarters of its keys
    /// (`PlanOptions::hash_spare_quarters`).
    pub hash_spare_quarters: Option<u32>,
    /// Workgroup memory a kernel may use, at most the device's
    /// (`PlanOptions::max_shared_bytes`): kernels that stage what does not fit take
    /// their other forms (16384 is what every Vulkan device has).
    pub max_shared_bytes: Option<u32>,
    /// Vectors from this many elements are graded by the radix sort
    /// (`PlanOptions::radix_from`), shorter ones by the bitonic network.
    pub radix_from: Option<u64>,
    /// Radix sorts of fewer keys take one kernel per pass (decoupled lookback);
    /// longer ones count and scan first (`PlanOptions::radix_lookback_below`).
    pub radix_lookback_below: Option<u64>,
    /// Keys per invocation of a radix pass (`PlanOptions::radix_items`).
    pub radix_items: Option<u32>,
    /// Kernels ask for maximal reconvergence (`PlanOptions::maximal_reconvergence`);
    /// `Some(true)` changes nothing where the device cannot.
    pub maximal_reconvergence: Option<bool>,
    /// A compaction's computed mask fused (`PlanOptions::fuse_computed_masks`).
    pub fuse_computed_masks: Option<bool>,
    /// A compaction holds the values it reads (`PlanOptions::compact_holds_values`).
    pub compact_holds_values: Option<bool>,
}

impl Tuning {
    /// Sets the overridden parameters in `o`, each clamped to what the kernels take.
    pub fn apply(&self, o: &mut arrc_ir::plan::PlanOptions) {
        if self.float64 == Some(false) {
            o.float64 = false;
        }
        // Each override, clamped to what the kernels accept.
        let set = |to: &mut u32, v: Option<u32>, lo: u32, hi: u32| {
            if let Some(v) = v {
                *to = v.clamp(lo, hi);
            }
        };
        set(&mut o.workgroup_size, self.workgroup_size, 32, 1024);
        set(
            &mut o.scan_workgroup_size,
            self.scan_workgroup_size,
            32,
            1024,
        );
        set(
            &mut o.scan_items_per_thread,
            self.scan_items_per_thread,
            1,
            64,
        );
        // A scan tile given is every scan's tile (as sweeps of shapes expect).
        if self.scan_workgroup_size.is_some() || self.scan_items_per_thread.is_some() {
            o.scan_widened_int_tile = None;
            o.scan_widened_float_tile = None;
            o.compact_tile = None;
        }
        set(&mut o.items_per_thread, self.items_per_thread, 1, 64);
        set(&mut o.reduce_groups, self.reduce_groups, 1, 65535);
        set(&mut o.busy_groups, self.busy_groups, 1, 1 << 20);
        set(&mut o.spin_limit, self.spin_limit, 1, 60000);
        if let Some(v) = self.quad_columns_from {
            o.quad_columns_from = v;
        }
        if let Some(v) = self.matmul_large_from {
            o.matmul_large_from = v;
        }
        if let Some(v) = self.matmul_tile {
            o.matmul_tile = v;
        }
        if let Some(v) = self.scan_tiles_by_workgroup {
            o.scan_tiles_by_workgroup = v;
        }
        if let Some(v) = self.scan_wide_status {
            o.scan_wide_status = v;
        }
        if let Some(v) = self.scan_lookback_subgroup {
            o.scan_lookback_subgroup = v;
        }
        if let Some(v) = self.scan_wide_lookback {
            o.scan_wide_lookback = v;
        }
        if let Some(v) = self.loop_trip_limit {
            o.loop_trip_limit = Some(o.loop_trip_limit.map_or(v, |l| l.min(v)));
        }
        if self.int8_matrices == Some(false) {
            o.int8_matrices = None;
        }
        if let Some(t) = self.int8_tile {
            o.coop_tile = Some(t);
        }
        if let Some(v) = self.int8_slices_from {
            o.int8_slices_from = v;
        }
        // On only: where the device needs every subgroup to look back (lavapipe
        // reads a prefix handed on through workgroup memory wrong), `false` is
        // ignored.
        if self.every_subgroup_looks_back == Some(true) {
            o.every_subgroup_looks_back = true;
        }
        if let Some(v) = self.single_pass_reduce {
            o.single_pass_reduce = v;
        }
        if let Some(v) = self.wide_folds {
            o.wide_folds = v;
        }
        if let Some(v) = self.stencil_tiles {
            o.stencil_tiles = v;
        }
        if let Some(v) = self.stencil_from {
            o.stencil_from = v;
        }
        if let Some(v) = self.stencil_rows {
            o.stencil_rows = v.min(8);
        }
        if let Some(v) = self.window_folds {
            o.window_folds = v;
        }
        if let Some(v) = self.stencil_widen {
            o.stencil_widen = v;
        }
        if let Some(v) = self.flush_f32 {
            o.flush_f32 = v;
        }
        if let Some(v) = self.qr_block {
            o.qr_block = v.max(1);
        }
        if let Some(v) = self.hash_search {
            o.hash_search = v;
        }
        if let Some(v) = self.hash_spare_quarters {
            o.hash_spare_quarters = v.clamp(1, 16);
        }
        if let Some(v) = self.max_shared_bytes {
            o.max_shared_bytes = o.max_shared_bytes.min(v);
        }
        if let Some(v) = self.radix_from {
            o.radix_from = v;
        }
        if let Some(v) = self.radix_lookback_below {
            o.radix_lookback_below = v;
        }
        if self.maximal_reconvergence == Some(false) {
            o.maximal_reconvergence = false;
        }
        if let Some(v) = self.fuse_computed_masks {
            o.fuse_computed_masks = v;
        }
        if let Some(v) = self.compact_holds_values {
            o.compact_holds_values = v;
        }
        set(&mut o.radix_items, self.radix_items, 1, 16);
    }
}
