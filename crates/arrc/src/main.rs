//! The `arrc` command line: eval, build, devices, repl.

use arrc::{diagnostics, Backend, Session};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "arrc",
    version,
    about = "An APL-style array language compiled to SPIR-V and run on Vulkan"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum BackendArg {
    Vulkan,
    Cpu,
}

/// The float type of a program (`⎕FR`).
#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum FloatArg {
    /// 32-bit floats (the default; every Vulkan device has them).
    F32,
    /// 64-bit floats, as Dyalog computes (needs shaderFloat64 on the device).
    F64,
}

impl FloatArg {
    fn elem(self) -> arrc::ElemType {
        match self {
            FloatArg::F32 => arrc::ElemType::F32,
            FloatArg::F64 => arrc::ElemType::F64,
        }
    }
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Format {
    Apl,
    Json,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum EvalEmit {
    /// The typed IR.
    Ir,
    /// The kernels and dispatches.
    Plan,
    /// SPIR-V assembly of every kernel.
    Spvasm,
}

#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum BuildEmit {
    Ir,
    Spvasm,
}

// Parsed once per process: the bench's many tuning flags make its variant large.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Cmd {
    /// Evaluate an expression (or a program file with --file) and print the result.
    Eval {
        /// The expression; statements may be separated by ⋄.
        #[arg(allow_hyphen_values = true)]
        expr: Option<String>,
        /// Read the program from a file.
        #[arg(long, short)]
        file: Option<PathBuf>,
        /// Vulkan (default: Vulkan if a device exists, else the CPU) or the CPU reference.
        #[arg(long, value_enum)]
        backend: Option<BackendArg>,
        /// How to print the value: as APL displays it, or JSON (`{"shape","type","data"}`; errors too).
        #[arg(long, value_enum, default_value = "apl")]
        format: Format,
        /// Show the compiled form instead of running (of a program's last statement;
        /// the statements before it run first).
        #[arg(long, value_enum)]
        emit: Option<EvalEmit>,
        /// Vulkan device index (see `arrc devices`; default: `ARRC_DEVICE`, else the first).
        #[arg(long)]
        device: Option<usize>,
        /// Several Vulkan devices (`0,1`; `0,0` opens device 0 twice): large arrays are
        /// split along their first axis across them.
        #[arg(long, value_delimiter = ',')]
        devices: Vec<usize>,
        /// With --devices: the fewest elements of an array worth splitting.
        #[arg(long, default_value_t = arrc::shard::DEFAULT_SPLIT_FROM)]
        split_from: usize,
        /// Load APL definitions first (repeatable).
        #[arg(long)]
        load: Vec<PathBuf>,
        /// Define a name from a data file first: `--set x=data.npy` (NumPy),
        /// `--set x=data.csv` (a matrix: numbers, and text where a field is no number)
        /// or `--set x=data.bin:f32:100,3` (raw little-endian u8 i8 i16 u16 i32 u32
        /// i64 f32 f64, with a shape or as a vector) (repeatable).
        #[arg(long, value_name = "NAME=FILE")]
        set: Vec<String>,
        /// Write the program's value to a NumPy file instead of showing it.
        #[arg(long, value_name = "FILE.npy")]
        out: Option<PathBuf>,
        /// Load the standard library (mean, variance, norm, softmax, …).
        #[arg(long)]
        stdlib: bool,
        /// Print kernel, dispatch and readback counts on stderr.
        #[arg(long)]
        stats: bool,
        /// Show nested arrays in frames (Dyalog's `]box on`).
        #[arg(long = "box")]
        boxed: bool,
        /// Print where the time went on stderr: compile, pipelines, upload, submit
        /// (with the kernels' own time), readback, host.
        #[arg(long)]
        time: bool,
        /// Float type of results such as `÷` and of non-integral literals (`⎕FR`).
        #[arg(long, value_enum, default_value = "f32")]
        float: FloatArg,
        #[command(flatten)]
        tune: TuneArgs,
    },
    /// Compile a function to a SPIR-V module and a JSON manifest.
    Build {
        /// The program: defines a dfn, e.g. `{+/⍵×⍵}` or `f←{…}`.
        input: PathBuf,
        /// The SPIR-V file to write (default: the program's name with `.spv`); the manifest goes beside it (`.json`).
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Element type and rank of ⍵: `f32` (vector), `i32[2]` (matrix), `f32[0]` (scalar).
        #[arg(long, default_value = "f32")]
        omega: String,
        /// Element type and rank of ⍺, for a dyadic function.
        #[arg(long)]
        alpha: Option<String>,
        /// Print the IR or SPIR-V assembly instead of writing files.
        #[arg(long, value_enum)]
        emit: Option<BuildEmit>,
        /// Workgroup size (default of specialization constant 0).
        #[arg(long, default_value_t = 256)]
        workgroup_size: u32,
        /// Float type of results such as `÷` and of non-integral literals (`⎕FR`).
        #[arg(long, value_enum, default_value = "f32")]
        float: FloatArg,
        /// For a host without shaderFloat64: f32 `+` and `×` folds then accumulate in
        /// f32 (where a sum cancels, their digits can differ from arrc's own), and
        /// f64 is refused. By default a module may compute in f64 (Float64 capability).
        #[arg(long)]
        no_float64: bool,
        /// The function to build, where the file defines several.
        #[arg(long, value_name = "NAME")]
        entry: Option<String>,
        /// The standard library's functions may be called (`stdlib/`).
        #[arg(long)]
        stdlib: bool,
        /// The device to plan for: lavapipe (subgroups of 8), nvidia (32), generic,
        /// or device (the facts of the Vulkan device found here).
        #[arg(long, default_value = "generic")]
        target: String,
    },
    /// List the Vulkan devices with API version and subgroup size.
    Devices,
    /// Print a completion script for a shell (`arrc completions bash >
    /// ~/.local/share/bash-completion/completions/arrc`).
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff: `arrc man > arrc.1 && man ./arrc.1`), or a
    /// subcommand's (`arrc man eval` is arrc-eval(1)).
    Man {
        /// The subcommand (eval, repl, build, bench, fuzz, …).
        subcommand: Option<String>,
    },
    /// Differential fuzzing: random programs on the device and on the CPU reference,
    /// which must agree (value, or error class). Exits 1 on any disagreement.
    Fuzz {
        /// Run for this many seconds (default: --programs).
        #[arg(long)]
        seconds: Option<f64>,
        /// Run this many programs.
        #[arg(long)]
        programs: Option<u64>,
        /// The random generator's seed: the same seed, the same programs.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Run only program INDEX of the seed's sequence (to reproduce a finding).
        #[arg(long)]
        index: Option<u64>,
        /// Start at program FROM of the seed's sequence (to go on after a run that
        /// stopped where the device stalled).
        #[arg(long, default_value_t = 0)]
        from: u64,
        /// Floats: f32 or f64 (⎕FR←645).
        #[arg(long, default_value = "f32")]
        float: String,
        /// The largest array length used.
        #[arg(long, default_value_t = 100_000)]
        max_len: usize,
        /// Seconds one program may run on one side before it is skipped.
        #[arg(long, default_value_t = 20.0)]
        timeout: f64,
        /// Print each program as it runs.
        #[arg(long)]
        show: bool,
        /// Compare the device path alone (--backend vulkan): its errors as it finds
        /// them, not APL's first in evaluation order (which the default asks the
        /// reference for).
        #[arg(long)]
        raw_device: bool,
        /// The device's native f32 fast paths flush f32 subnormals as NVIDIA's do,
        /// on any device (a test of their checks).
        #[arg(long)]
        flush_f32: bool,
        /// Several devices (`0,0` opens device 0 twice): arrays split across them.
        #[arg(long, value_delimiter = ',')]
        devices: Vec<usize>,
        /// With --devices: the fewest elements of an array split.
        #[arg(long, default_value_t = 2)]
        split_from: usize,
    },
    /// Time workloads on the device (Vulkan timestamps, resident input, median of runs).
    Bench {
        /// A program of your own (`arrc bench prog.apl`): run --warmup times, then
        /// --runs times in one session; median and spread of the wall time, split into
        /// compile, pipelines, upload, submit (and kernel time), readback and host.
        program: Option<PathBuf>,
        /// Float type of the program (`⎕FR`).
        #[arg(long, value_enum, default_value = "f32")]
        float: FloatArg,
        /// Workloads (default all).
        #[arg(
            long,
            value_delimiter = ',',
            value_parser = clap::builder::PossibleValuesParser::new(
                arrc::bench::WORKLOADS.iter().map(|w| w.name)
            )
        )]
        workloads: Vec<String>,
        /// log2 of the sizes, e.g. 10,20,28 (default 10,12,…,28).
        #[arg(long, value_delimiter = ',')]
        sizes: Vec<u32>,
        /// Element types: f32, i32.
        #[arg(long, value_delimiter = ',', default_value = "f32,i32")]
        types: Vec<String>,
        /// Timed runs per measurement (at least 20).
        #[arg(long, default_value_t = 30)]
        runs: usize,
        /// Untimed runs before the timed ones.
        #[arg(long, default_value_t = 5)]
        warmup: usize,
        /// Runs per submission, back to back; the last is timed (the device does not
        /// idle between timed runs, so its clocks stay up).
        #[arg(long, default_value_t = 1)]
        batch: usize,
        /// Print one JSON object per result instead of the table.
        #[arg(long)]
        json: bool,
        /// Check device results against the CPU reference up to this many elements.
        #[arg(long, default_value_t = 1 << 22)]
        check_up_to: usize,
        /// Idle milliseconds before each measurement (a diagnostic).
        #[arg(long, default_value_t = 0)]
        pause_ms: u64,
        /// Vulkan device index (see `arrc devices`; default: `ARRC_DEVICE`, else the first).
        #[arg(long)]
        device: Option<usize>,
        /// Several Vulkan devices (`0,1`; `0,0` opens device 0 twice): large arrays are
        /// split along their first axis across them.
        #[arg(long, value_delimiter = ',')]
        devices: Vec<usize>,
        /// With --devices: the fewest elements of an array worth splitting.
        #[arg(long, default_value_t = arrc::shard::DEFAULT_SPLIT_FROM)]
        split_from: usize,
        /// With a program: APL statements run once before the warm-up (inputs).
        #[arg(long)]
        setup: Option<String>,
        #[command(flatten)]
        tune: TuneArgs,
        /// Print what the driver compiled for each kernel (registers, shared memory,
        /// ...), where it reports that (VK_KHR_pipeline_executable_properties).
        #[arg(long)]
        pipeline_stats: bool,
        /// Time each kernel on its own: a timestamp after every dispatch, the median
        /// per kernel listed under each result.
        #[arg(long)]
        profile: bool,
    },
    /// Interactive session; APL glyphs with a backtick prefix (`i → ⍳).
    Repl {
        /// Vulkan (default: Vulkan if a device exists, else the CPU) or the CPU reference.
        #[arg(long, value_enum)]
        backend: Option<BackendArg>,
        /// Vulkan device index (see `arrc devices`; default: `ARRC_DEVICE`, else the first).
        #[arg(long)]
        device: Option<usize>,
        /// Several Vulkan devices (`0,1`; `0,0` opens device 0 twice): large arrays are
        /// split along their first axis across them.
        #[arg(long, value_delimiter = ',')]
        devices: Vec<usize>,
        /// With --devices: the fewest elements of an array worth splitting.
        #[arg(long, default_value_t = arrc::shard::DEFAULT_SPLIT_FROM)]
        split_from: usize,
        /// Load APL definitions first (repeatable).
        #[arg(long)]
        load: Vec<PathBuf>,
        /// Load the standard library.
        #[arg(long)]
        stdlib: bool,
        /// Float type of results such as `÷` and of non-integral literals (`⎕FR`).
        #[arg(long, value_enum, default_value = "f32")]
        float: FloatArg,
    },
}

/// `arrc bench`'s tuning flags (for workloads and programs alike).
#[derive(clap::Args)]
struct TuneArgs {
    /// Tuning: workgroup size (specialization constant 0).
    #[arg(long)]
    workgroup_size: Option<u32>,
    /// Tuning: elements per invocation per loop trip in reductions (specialization constant 1).
    #[arg(long)]
    items: Option<u32>,
    /// Tuning: invocations per workgroup of chained scans (a tile is this × scan items).
    #[arg(long)]
    scan_workgroup_size: Option<u32>,
    /// Tuning: elements per invocation of chained scans of 4-byte values (multiples
    /// of 4 use 16-byte loads; 8-byte values take half as many).
    #[arg(long)]
    scan_items: Option<u32>,
    /// Tuning: most workgroups in a reduction's first pass.
    #[arg(long)]
    reduce_groups: Option<u32>,
    /// Tuning: workgroups that keep the device busy (how many pieces long rows and
    /// columns are split into).
    #[arg(long)]
    busy_groups: Option<u32>,
    /// Tuning: polls of a predecessor tile before a scan reduces it itself
    /// (specialization constant 2; lavapipe needs it under 65535).
    #[arg(long)]
    spin: Option<u32>,
    /// Tuning: every subgroup of a scan tile looks back on its own (as on
    /// lavapipe) instead of subgroup 0 handing the prefix on (`false` is ignored
    /// where the device needs it).
    #[arg(long)]
    scan_every_subgroup: Option<bool>,
    /// Tuning: a chained scan's tile is its workgroup's id instead of a number
    /// claimed from a counter.
    #[arg(long)]
    scan_tiles_by_workgroup: Option<bool>,
    /// Tuning: a scan of 8-byte values (`+\` of f32 in f64, of i32 in i64) publishes
    /// its tiles' values as 64-bit words that are their own flags (the default
    /// where the device has 64-bit atomics); `false`: a flag, then two value words.
    #[arg(long)]
    scan_wide_status: Option<bool>,
    /// Tuning: one subgroup of each scan workgroup holds no elements and looks back
    /// from the moment the tile is claimed (the tile is the other subgroups').
    #[arg(long)]
    scan_lookback_subgroup: Option<bool>,
    /// Tuning: a scan tile looks back with all its subgroups, a window each, so
    /// one poll reaches several windows back (ignored where every subgroup looks
    /// back on its own).
    #[arg(long)]
    scan_wide_lookback: Option<bool>,
    /// Tuning: integer products of operands within ±127 on the device's 8-bit
    /// cooperative matrices (tensor cores), where it has them (default: true).
    #[arg(long)]
    int8_matrices: Option<bool>,
    /// Tuning: their tile, ROWSxCOLSxSMxSNxSTEPS (fragments a subgroup, subgroups
    /// a workgroup, steps of the inner length staged at a time), as 4x2x2x4x2.
    #[arg(long, value_parser = arrc_ir::plan::CoopTile::parse)]
    int8_tile: Option<arrc_ir::plan::CoopTile>,
    /// Tuning: products (m·n·k) from which integer operands found within ±16319
    /// are cut into two 8-bit slices each rather than multiplied in i32 tiles
    /// (default: 2^32).
    #[arg(long)]
    int8_slices_from: Option<u64>,
    /// Tuning: a vector's reduction in one dispatch (the last workgroup done folds
    /// the partials) instead of two.
    #[arg(long)]
    single_pass_reduce: Option<bool>,
    /// Tuning: column folds of at least this many elements read four columns per
    /// invocation (16-byte loads).
    #[arg(long)]
    quad_columns_from: Option<u64>,
    /// Tuning: matrix products of at least this many result elements take
    /// 128×128 tiles (8×8 per invocation), smaller ones 64×64.
    #[arg(long)]
    matmul_large_from: Option<u64>,
    /// Tuning: the large products' tile, ROWSxCOLSxSTEPS (outputs per invocation
    /// of a 16×16 workgroup, and steps of the inner length staged at a time).
    #[arg(long, value_parser = arrc_ir::plan::MatMulTile::parse)]
    matmul_tile: Option<arrc_ir::plan::MatMulTile>,
    /// Tuning: f32 `+` and `×` folds accumulate in f64 (the default, where the
    /// device has f64); `false` measures what that costs (and gives f32
    /// accumulation's answers, which can differ from the reference's).
    #[arg(long)]
    wide_folds: Option<bool>,
    /// Tuning: `⌺` stages its matrix in workgroup memory, tile by tile (the
    /// default); `false` reads each window offset from device memory.
    #[arg(long)]
    stencil_tiles: Option<bool>,
    /// Tuning: the fewest window reads a staged `⌺` takes (8 by default, a
    /// 3×3 window's besides its centre; fewer read device memory).
    #[arg(long)]
    stencil_from: Option<u32>,
    /// Tuning: outputs each invocation of a staged `⌺` computes, one below
    /// another (1 to 8; by default, up to 25 window positions, 6 for windows of
    /// five rows or more and 4 for fewer; else 2).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=8))]
    stencil_rows: Option<u32>,
    /// Tuning: a staged `⌺`'s whole-window fold (`{+/,⍵}`, `⌈/`, `⌊/`, `∨/`,
    /// `∧/`) folds each row it reads once, shared by the outputs above and below
    /// (the default); `false` folds each output's window apart.
    #[arg(long)]
    window_folds: Option<bool>,
    /// Tuning: a staged `⌺` whose reads all widen its matrix (f32 to f64, i32
    /// to i64) holds the widened items in workgroup memory, each converted
    /// once (the default where the device may flush f32 subnormals, whose f32
    /// is widened from its bits); `false` holds the matrix's own, converted at
    /// each read (the default elsewhere).
    #[arg(long)]
    stencil_widen: Option<bool>,
    /// Tuning: columns `⌹`'s QR factors a panel at a time in one workgroup, before
    /// the later columns apply the panel's reflectors (default 4).
    #[arg(long)]
    qr_block: Option<u32>,
    /// Tuning: `x⍳y` and `y∊x` of integers or booleans build a hash table of
    /// `x` and probe it with each item of `y` (the default); `false` sorts `x`
    /// and searches it.
    #[arg(long)]
    hash_search: Option<bool>,
    /// Tuning: a hash table's slots beyond one a key, in quarters of the keys
    /// (1 to 16; 4, the default, gives 2n slots for n keys).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=16))]
    hash_spare_quarters: Option<u32>,
    /// Tuning: workgroup memory a kernel may use, in bytes, at most the
    /// device's (kernels that stage what does not fit take their other forms).
    #[arg(long)]
    max_shared_bytes: Option<u32>,
    /// Tuning: vectors from this many elements are graded by the radix sort,
    /// shorter ones by the bitonic network.
    #[arg(long)]
    radix_from: Option<u64>,
    /// Tuning: radix sorts of fewer keys take one kernel per pass (decoupled
    /// lookback), longer ones a count kernel and a scan besides (at most 2^30).
    #[arg(long)]
    radix_lookback_below: Option<u64>,
    /// Tuning: keys per invocation of a radix pass (at most 16; half for 8-byte keys).
    #[arg(long)]
    radix_items: Option<u32>,
    /// Tuning: kernels ask that diverged invocations run together again where
    /// their paths meet (VK_KHR_shader_maximal_reconvergence; the default where
    /// the device has it); `false` does not ask.
    #[arg(long)]
    maximal_reconvergence: Option<bool>,
    /// Tuning: a compaction whose mask or values compute more than a read and a
    /// comparison computes them fused (`true`, the default) or in a pass of
    /// their own first (`false`).
    #[arg(long)]
    fuse_computed_masks: Option<bool>,
    /// Tuning: a compaction of a plain array holds the values it reads and
    /// computes the mask from them (`true`, the default), reading each once;
    /// `false` holds the mask and reads the values again to store them.
    #[arg(long)]
    compact_holds_values: Option<bool>,
}

impl TuneArgs {
    fn tuning(&self) -> arrc::Tuning {
        arrc::Tuning {
            float64: None,
            workgroup_size: self.workgroup_size,
            scan_workgroup_size: self.scan_workgroup_size,
            scan_items_per_thread: self.scan_items,
            items_per_thread: self.items,
            reduce_groups: self.reduce_groups,
            busy_groups: self.busy_groups,
            spin_limit: self.spin,
            scan_tiles_by_workgroup: self.scan_tiles_by_workgroup,
            scan_wide_status: self.scan_wide_status,
            scan_lookback_subgroup: self.scan_lookback_subgroup,
            scan_wide_lookback: self.scan_wide_lookback,
            loop_trip_limit: None,
            int8_matrices: self.int8_matrices,
            int8_tile: self.int8_tile,
            int8_slices_from: self.int8_slices_from,
            single_pass_reduce: self.single_pass_reduce,
            quad_columns_from: self.quad_columns_from,
            matmul_large_from: self.matmul_large_from,
            matmul_tile: self.matmul_tile,
            every_subgroup_looks_back: self.scan_every_subgroup,
            wide_folds: self.wide_folds,
            stencil_tiles: self.stencil_tiles,
            stencil_from: self.stencil_from,
            stencil_rows: self.stencil_rows,
            window_folds: self.window_folds,
            stencil_widen: self.stencil_widen,
            flush_f32: None,
            qr_block: self.qr_block,
            hash_search: self.hash_search,
            hash_spare_quarters: self.hash_spare_quarters,
            max_shared_bytes: self.max_shared_bytes,
            radix_from: self.radix_from,
            radix_lookback_below: self.radix_lookback_below,
            radix_items: self.radix_items,
            maximal_reconvergence: self.maximal_reconvergence,
            fuse_computed_masks: self.fuse_computed_masks,
            compact_holds_values: self.compact_holds_values,
        }
    }
}

/// A session on `--device` or, with several, on `--devices`.
fn open(
    b: Backend,
    device: Option<usize>,
    devices: &[usize],
    split_from: usize,
) -> Result<Session, ExitCode> {
    let s = match devices {
        [] => Session::with_device(b, device),
        [one] => Session::with_device(b, Some(*one)),
        several => Session::with_devices(b, several),
    };
    let mut s = s.map_err(|e| fail("", &e))?;
    s.set_split_from(split_from);
    s.set_input(repl::read_stdin_line);
    Ok(s)
}

fn backend(b: Option<BackendArg>) -> Backend {
    match b {
        None => Backend::Auto,
        Some(BackendArg::Vulkan) => Backend::Vulkan,
        Some(BackendArg::Cpu) => Backend::Cpu,
    }
}

/// Writes a value to stdout as it is formatted: a display of 10^8 numbers never
/// builds one string of them.
fn show(v: &arrc::Array, format: Format, (pp, pw): (usize, usize), boxing: bool) {
    use std::io::Write;
    /// `fmt::Write` onto an `io::Write`.
    struct Out<W: Write>(W);
    impl<W: Write> std::fmt::Write for Out<W> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write_all(s.as_bytes()).map_err(|_| std::fmt::Error)
        }
    }
    let mut out = Out(std::io::BufWriter::with_capacity(
        1 << 16,
        std::io::stdout().lock(),
    ));
    let ok = match format {
        Format::Apl if boxing && !v.is_simple() => {
            std::fmt::Write::write_str(&mut out, &arrc_ir::display::display_boxed(v, pp)).is_ok()
        }
        Format::Apl => arrc_ir::display::write_display_session(v, pp, pw, &mut out).is_ok(),
        Format::Json => serde_json::to_writer(&mut out.0, v).is_ok(),
    };
    if ok {
        let _ = writeln!(out.0);
        let _ = out.0.flush();
    }
}

/// Where `wall` nanoseconds went, from the counters `st` of the same span:
/// `12.34 ms = compile … + … + host …` (`--time`, `]time`).
fn time_breakdown(st: &arrc::Stats, wall: u64) -> String {
    let ms = |ns: u64| ns as f64 / 1e6;
    format!(
        "{:.2} ms = compile {:.2} + pipelines {:.2} + upload {:.2} + buffers {:.2} + submit {:.2} (kernels {:.2}) + readback {:.2} + host {:.2}",
        ms(wall),
        ms(st.compile_ns),
        ms(st.pipeline_ns),
        ms(st.upload_ns),
        ms(st.prepare_ns),
        ms(st.run_ns),
        ms(st.device_ns),
        ms(st.readback_ns),
        ms(st.host_ns(wall)),
    )
}

/// Defines `name` from a data file: CSV (`.csv`: a matrix, numbers and text), raw
/// little-endian numbers (`FILE:TYPE` or `FILE:TYPE:SHAPE`, as `data.bin:f32:100,3`)
/// or NumPy.
fn load_file(s: &mut Session, name: &str, spec: &str) -> Result<(), arrc::Error> {
    let mut parts = spec.split(':');
    let file = parts.next().unwrap_or_default();
    if let Some(dtype) = parts.next().filter(|t| arrc::npy::RAW_TYPES.contains(t)) {
        let shape = match parts.next() {
            Some(dims) => Some(
                dims.split(',')
                    .map(|d| d.trim().parse::<usize>())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| {
                        arrc::Error::new(
                            arrc::ErrorClass::Domain,
                            format!("{spec}: the shape must be counts, as 100,3"),
                            0..0,
                        )
                    })?,
            ),
            None => None,
        };
        return s.set_raw(name, std::path::Path::new(file), dtype, shape.as_deref());
    }
    let path = std::path::Path::new(spec);
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
    {
        s.set_csv(name, path)
    } else {
        s.set_npy(name, path)
    }
}

/// The device counters `--stats` and `]stats` show.
fn stats_line(st: &arrc::Stats) -> String {
    format!(
        "kernels {} dispatches {} uploads {} ({} bytes) readbacks {} ({} bytes) resident {} arrays ({} bytes) deferred {} in place {} launched {} evictions {} pipelines cached {} modules cached {} from disk {}",
        st.kernels,
        st.dispatches,
        st.uploads,
        st.upload_bytes,
        st.readbacks,
        st.readback_bytes,
        st.resident_arrays,
        st.resident_bytes,
        st.deferred,
        st.in_place,
        st.launched,
        st.evictions,
        st.pipelines_cached,
        st.modules_cached,
        st.modules_from_disk
    )
}

fn color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn fail(src: &str, e: &arrc::Error) -> ExitCode {
    eprint!("{}", diagnostics::render(src, e, color()));
    ExitCode::from(1)
}

fn read(path: &PathBuf) -> Result<String, ExitCode> {
    std::fs::read_to_string(path).map_err(|e| {
        eprintln!("arrc: cannot read {}: {e}", path.display());
        ExitCode::from(2)
    })
}

fn load_all(s: &mut Session, files: &[PathBuf]) -> Result<(), ExitCode> {
    for f in files {
        let src = read(f)?;
        s.set_source_name(&f.display().to_string());
        let r = s.load(&src);
        if let Err(e) = r {
            eprint!("{}", s.render_error(&src, &e, color()));
            return Err(ExitCode::from(1));
        }
        s.set_source_name("input");
    }
    Ok(())
}

fn main() -> ExitCode {
    // Output into a closed pipe (`arrc eval '⍳100000' | head -c1`) ends the process
    // quietly, as Unix tools do, instead of a panic in `println!`.
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(c) | Err(c) => c,
    }
}

fn run(cli: Cli) -> Result<ExitCode, ExitCode> {
    match cli.cmd {
        Cmd::Eval {
            expr,
            file,
            backend: b,
            format,
            emit,
            device,
            devices,
            split_from,
            load,
            set,
            out: out_file,
            stdlib,
            stats,
            boxed,
            time,
            float,
            tune,
        } => {
            let origin = file.as_ref().map(|f| f.display().to_string());
            // `arrc eval --bogus`: a mistyped option, not the APL `-(-bogus)`.
            if let Some(e) = &expr {
                let word = e.strip_prefix("--").unwrap_or("");
                let flag = word.split('=').next().unwrap_or("");
                if flag.len() > 1
                    && flag
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit())
                {
                    eprintln!(
                        "error: unknown option '--{flag}' (`arrc eval --help` lists them; for the APL expression, write `- -{flag}`)"
                    );
                    return Err(ExitCode::from(2));
                }
            }
            let src = match (expr, file) {
                (Some(e), None) => e,
                (None, Some(f)) => read(&f)?,
                // The program from a pipe: `echo '+/⍳10' | arrc eval`.
                (None, None) if !std::io::stdin().is_terminal() => {
                    let mut text = String::new();
                    if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                    {
                        eprintln!("arrc eval: cannot read the program from standard input: {e}");
                        return Err(ExitCode::from(2));
                    }
                    text
                }
                _ => {
                    eprintln!(
                        "arrc eval: give an expression, --file, or the program on standard input"
                    );
                    return Err(ExitCode::from(2));
                }
            };
            let opened = std::time::Instant::now();
            let mut s = open(backend(b), device, &devices, split_from)?;
            let open_ms = opened.elapsed().as_secs_f64() * 1e3;
            s.tune(tune.tuning());
            s.set_float(float.elem());
            s.set_boxing(boxed);
            // `--time` reports the kernels' own time: the device's timestamps.
            s.set_timing(time);
            if stdlib {
                s.load_stdlib().map_err(|e| fail("", &e))?;
            }
            for def in &set {
                let Some((name, path)) = def.split_once('=') else {
                    eprintln!(
                        "arrc eval: --set {def}: give NAME=FILE (.npy, .csv, or FILE:TYPE[:SHAPE])"
                    );
                    return Err(ExitCode::from(2));
                };
                load_file(&mut s, name.trim(), path.trim()).map_err(|e| fail("", &e))?;
            }
            load_all(&mut s, &load)?;
            if let Some(o) = &origin {
                s.set_source_name(o);
            }
            if let Some(emit) = emit {
                // A program of several statements: those before the last run, and
                // the last one's compiled form is shown.
                let src = match s.parse(&src).ok().and_then(|p| match p.stmts.as_slice() {
                    [_, .., arrc_syntax::ast::Stmt::Expr(e)] => Some(e.span.clone()),
                    _ => None,
                }) {
                    Some(last) => {
                        let head = &src[..last.start];
                        s.eval(head).map_err(|e| fail(head, &e))?;
                        src[last].to_string()
                    }
                    None => src,
                };
                let c = match s.compile(&src) {
                    Ok(c) => c,
                    Err(e) if e.class == arrc::ErrorClass::Unsupported => {
                        let parts = s.host_driven(&src);
                        if parts.is_empty() {
                            return Err(fail(&src, &e));
                        }
                        println!(
                            "no single plan: the device path applies {} from the host, one device call per item, cell or group (or per dfn call), each with a plan of its own; the rest of the statement compiles around their results",
                            parts.join(", ")
                        );
                        return Ok(ExitCode::SUCCESS);
                    }
                    Err(e) => return Err(fail(&src, &e)),
                };
                match emit {
                    EvalEmit::Ir => println!("{}", c.ir),
                    EvalEmit::Plan => print!("{}", c.plan_text()),
                    EvalEmit::Spvasm => {
                        let parts = c.nested.as_deref().unwrap_or(std::slice::from_ref(&c));
                        for (i, p) in parts.iter().enumerate() {
                            if c.nested.is_some() {
                                println!("; part {i} of a nested value");
                            }
                            for (k, m) in p.plan.kernels.iter().zip(&p.modules) {
                                println!("; kernel {}", k.name);
                                println!("{}", arrc_spirv::disassemble(m).unwrap_or_default());
                            }
                        }
                    }
                }
                return Ok(ExitCode::SUCCESS);
            }
            let before = s.stats();
            let started = std::time::Instant::now();
            let r = s.eval(&src);
            for o in s.take_output() {
                println!("{o}");
            }
            let out = r.map_err(|e| match format {
                // Errors too as JSON, on stdout, for the program reading it.
                Format::Json => {
                    let mut j = serde_json::json!({
                        "error": e.class.name(),
                        "message": e.message,
                        "span": [e.span.start, e.span.end],
                    });
                    if let Some(f) = &e.within {
                        j["function"] = serde_json::json!(f);
                    }
                    println!("{j}");
                    ExitCode::from(1)
                }
                Format::Apl => {
                    eprint!("{}", s.render_error(&src, &e, color()));
                    ExitCode::from(1)
                }
            })?;
            for n in &out.notes {
                eprintln!("arrc: {n}");
            }
            match (out.value, &out_file) {
                (Some(v), Some(path)) => {
                    arrc::npy::write_npy(path, &v).map_err(|e| fail("", &e))?
                }
                (None, Some(path)) => {
                    eprintln!(
                        "arrc eval: --out {}: the program has no value to write",
                        path.display()
                    );
                    return Err(ExitCode::from(1));
                }
                (Some(v), None) => show(
                    &v,
                    format,
                    (s.print_precision(), s.print_width()),
                    s.boxing(),
                ),
                (None, None) => {}
            }
            if time {
                let wall = started.elapsed().as_nanos() as u64;
                let st = s.stats().since(&before);
                eprintln!(
                    "arrc: time: device open {open_ms:.2} ms; program {}",
                    time_breakdown(&st, wall)
                );
            }
            if let Some(f) = out.function {
                match format {
                    Format::Apl => println!("{f}"),
                    Format::Json => println!("{}", serde_json::json!({ "function": f })),
                }
            }
            if stats {
                let st = s.stats();
                if st.devices > 1 {
                    eprintln!(
                        "arrc: devices {} statements split {} bytes moved between devices {}",
                        st.devices, st.split_statements, st.moved_bytes
                    );
                }
                eprintln!(
                    "arrc: device {} {}",
                    s.device().map_or("none", |d| d.name.as_str()),
                    stats_line(&st)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Fuzz {
            seconds,
            programs,
            seed,
            index,
            from,
            float,
            max_len,
            timeout,
            show,
            raw_device,
            flush_f32,
            devices,
            split_from,
        } => {
            let float = match float.as_str() {
                "f32" => arrc::ElemType::F32,
                "f64" => arrc::ElemType::F64,
                other => {
                    eprintln!("arrc fuzz: --float {other}: use f32 or f64");
                    return Err(ExitCode::from(2));
                }
            };
            let opts = arrc::fuzz::FuzzOptions {
                seed,
                programs: if seconds.is_some() && programs.is_none() {
                    None
                } else {
                    Some(programs.unwrap_or(500))
                },
                seconds,
                index,
                from,
                float,
                max_len,
                timeout: std::time::Duration::from_secs_f64(timeout.max(0.1)),
                devices,
                split_from,
                raw_device,
                flush_f32,
            };
            if index.is_some() || show {
                let case = arrc::fuzz::Case::new(&opts, index.unwrap_or(from));
                eprintln!("arrc fuzz: program {}: {}", case.index, case.program);
                if index.is_some() {
                    // What it runs on, to reproduce by hand even where it finds nothing
                    // (a slow program, say).
                    eprintln!("  arrays: {}", case.describe());
                }
            }
            let mut last = std::time::Instant::now();
            // Findings shown so far, of each list.
            let mut seen = [0; 4];
            let report = arrc::fuzz::run(&opts, &mut |r| {
                let lists = [
                    ("", &r.disagreements),
                    ("", &r.class_mismatches),
                    ("", &r.crashes),
                    ("ill-conditioned (not a disagreement): ", &r.ill_conditioned),
                ];
                for ((label, list), seen) in lists.into_iter().zip(&mut seen) {
                    for f in &list[*seen..] {
                        eprintln!("arrc fuzz: {label}{f}");
                    }
                    *seen = list.len();
                }
                if show {
                    let next = arrc::fuzz::Case::new(&opts, from + r.programs);
                    eprintln!("arrc fuzz: program {}: {}", next.index, next.program);
                }
                if last.elapsed().as_secs() >= 10 {
                    eprintln!("arrc fuzz: {}", r.summary());
                    last = std::time::Instant::now();
                }
            })
            .map_err(|e| fail("", &e))?;
            println!("{}", report.summary());
            if let Some(i) = report.stalled_at {
                println!(
                    "arrc fuzz: program {i} outlasted the device's wait (slow, not wrong: \
                     `--index {i}` shows it); the device may still be running it, so the \
                     run stopped there; go on with `--from {}`",
                    i + 1
                );
            }
            Ok(if report.clean() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Cmd::Build {
            input,
            output,
            omega,
            alpha,
            emit,
            workgroup_size,
            float,
            no_float64,
            entry,
            stdlib,
            target,
        } => {
            let src = read(&input)?;
            let omega_t = arrc::build::parse_arg_type(&omega, 0).map_err(|m| {
                eprintln!("arrc build: --omega: {m}");
                ExitCode::from(2)
            })?;
            let alpha_t = match &alpha {
                Some(a) => Some(
                    arrc::build::parse_arg_type(a, omega_t.rank() as u32).map_err(|m| {
                        eprintln!("arrc build: --alpha: {m}");
                        ExitCode::from(2)
                    })?,
                ),
                None => None,
            };
            if workgroup_size == 0 || workgroup_size > 1024 {
                eprintln!("arrc build: --workgroup-size must be between 1 and 1024");
                return Err(ExitCode::from(2));
            }
            let base = match target.as_str() {
                "device" => {
                    let s =
                        Session::with_device(Backend::Vulkan, None).map_err(|e| fail("", &e))?;
                    s.plan_options()
                }
                t => arrc::build::target_options(t).ok_or_else(|| {
                    eprintln!("arrc build: --target {t}: use lavapipe, nvidia, generic or device");
                    ExitCode::from(2)
                })?,
            };
            let opts = arrc_ir::plan::PlanOptions {
                workgroup_size,
                float64: base.float64 && !no_float64,
                ..base
            };
            let library = if stdlib {
                arrc::build::stdlib_functions().map_err(|e| fail("", &e))?
            } else {
                vec![]
            };
            let what = arrc::build::BuildOptions {
                entry: entry.as_deref(),
                library: &library,
                target: arrc::build::Target {
                    name: target.clone(),
                    subgroup_size: opts.subgroup_size,
                    float64: opts.float64,
                    int64_atomics: opts.int64_atomics,
                },
            };
            let built = arrc::build::build(&src, omega_t, alpha_t, float.elem(), &opts, &what)
                .map_err(|e| fail(&src, &e))?;
            match emit {
                Some(BuildEmit::Ir) => println!("{}", built.ir),
                Some(BuildEmit::Spvasm) => println!(
                    "{}",
                    arrc_spirv::disassemble(&built.words).unwrap_or_default()
                ),
                None => {
                    let out = output.unwrap_or_else(|| input.with_extension("spv"));
                    let bytes: Vec<u8> = built.words.iter().flat_map(|w| w.to_le_bytes()).collect();
                    let manifest = out.with_extension("json");
                    let json = serde_json::to_string_pretty(&built.manifest).unwrap_or_default();
                    if let Err(e) = std::fs::write(&out, bytes)
                        .and_then(|_| std::fs::write(&manifest, json + "\n"))
                    {
                        eprintln!("arrc build: cannot write output: {e}");
                        return Err(ExitCode::from(2));
                    }
                    eprintln!(
                        "arrc: wrote {} ({} entry points, validated for vulkan1.1) and {}",
                        out.display(),
                        built.plan.kernels.len(),
                        manifest.display()
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench {
            program: Some(path),
            float,
            runs,
            warmup,
            json,
            device,
            devices,
            split_from,
            setup,
            profile,
            tune,
            ..
        } => {
            let src = read(&path)?;
            let mut s = open(Backend::Vulkan, device, &devices, split_from)?;
            s.set_float(float.elem());
            // The tuning flags apply to a program too (they were ignored).
            s.tune(tune.tuning());
            if let Some(setup) = setup {
                s.eval(&setup).map_err(|e| fail(&setup, &e))?;
            }
            let name = path.display().to_string();
            let b = arrc::bench::program(&mut s, &name, &src, warmup, runs, profile)
                .map_err(|e| fail(&src, &e))?;
            if json {
                println!("{}", serde_json::to_string(&b).unwrap_or_default());
            } else {
                println!("{}", arrc::bench::program_report(&b));
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench {
            program: None,
            workloads,
            sizes,
            types,
            runs,
            warmup,
            batch,
            json,
            check_up_to,
            pause_ms,
            device,
            tune,
            pipeline_stats,
            profile,
            ..
        } => {
            let mut s = Session::with_device(Backend::Vulkan, device).map_err(|e| fail("", &e))?;
            let types: Result<Vec<_>, _> = types
                .iter()
                .map(|t| arrc::ElemType::parse(t).ok_or_else(|| format!("unknown type {t}")))
                .collect();
            let types = types.map_err(|m| {
                eprintln!("arrc bench: {m}");
                ExitCode::from(2)
            })?;
            if sizes.iter().any(|&s| s > 31) {
                eprintln!("arrc bench: sizes are log2 of the element count, at most 31");
                return Err(ExitCode::from(2));
            }
            let opts = arrc::bench::BenchOptions {
                workloads,
                sizes: if sizes.is_empty() {
                    (10..=28).step_by(2).collect()
                } else {
                    sizes
                },
                types,
                runs: runs.max(20),
                warmup,
                batch: batch.clamp(1, 1000),
                check_up_to,
                pause_ms,
                progress: !json && std::io::stderr().is_terminal(),
                tune: tune.tuning(),
                pipeline_stats,
                profile,
            };
            if let Some(d) = s.device() {
                eprintln!(
                    "arrc bench on {} (Vulkan {}, driver {}, subgroup {})",
                    d.name, d.api_version, d.driver, d.subgroup_size
                );
            }
            let results = s
                .bench(&opts, |r| {
                    if json {
                        println!("{}", serde_json::to_string(r).unwrap_or_default());
                    }
                })
                .map_err(|e| fail("", &e))?;
            if !json {
                print!("{}", arrc::bench::table(&results));
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "arrc", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Man { subcommand } => {
            let cli = Cli::command();
            let page = match &subcommand {
                None => cli,
                Some(name) => match cli.find_subcommand(name) {
                    // (clap names are static; this runs once and exits)
                    Some(c) => c
                        .clone()
                        .name(&*Box::leak(format!("arrc-{name}").into_boxed_str())),
                    None => {
                        eprintln!("arrc man: no subcommand {name}");
                        return Err(ExitCode::from(2));
                    }
                },
            };
            clap_mangen::Man::new(page)
                .render(&mut std::io::stdout())
                .map_err(|e| {
                    eprintln!("arrc man: {e}");
                    ExitCode::from(1)
                })?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Devices => {
            let ds = arrc::devices().map_err(|e| fail("", &e))?;
            if ds.is_empty() {
                println!("no Vulkan devices");
            }
            for d in ds {
                println!(
                    "{}: {} ({}), Vulkan {}, subgroup size {}, int64 {}, float64 {}, subnormals kept on request f32 {} f64 {}, maximal reconvergence {}, max storage buffer {} bytes, storage buffers per kernel {}, workgroup memory {} bytes, driver {}",
                    d.index,
                    d.name,
                    d.device_type,
                    d.api_version,
                    d.subgroup_size,
                    d.shader_int64,
                    d.shader_float64,
                    d.denorm_preserve_f32,
                    d.denorm_preserve_f64,
                    d.maximal_reconvergence,
                    d.max_storage_buffer_range,
                    d.max_storage_buffers,
                    d.max_shared_memory,
                    d.driver
                );
                if !d.cooperative_matrices.is_empty() {
                    let shapes: Vec<String> = d
                        .cooperative_matrices
                        .iter()
                        .map(|c| c.to_string())
                        .collect();
                    println!("   cooperative matrices: {}", shapes.join(", "));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Repl {
            backend: b,
            device,
            devices,
            split_from,
            load,
            stdlib,
            float,
        } => {
            let mut s = open(backend(b), device, &devices, split_from)?;
            s.set_float(float.elem());
            if stdlib {
                s.load_stdlib().map_err(|e| fail("", &e))?;
            }
            load_all(&mut s, &load)?;
            repl::run(&mut s);
            Ok(ExitCode::SUCCESS)
        }
    }
}

mod repl;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option and argument of every subcommand says what it is (`--help`, the
    /// man page and the completions show it).
    #[test]
    fn every_option_has_help_text() {
        let cli = Cli::command();
        let mut missing = vec![];
        for sub in cli.get_subcommands() {
            for a in sub.get_arguments() {
                if a.get_id() != "help" && a.get_help().is_none() && a.get_long_help().is_none() {
                    missing.push(format!("{} {}", sub.get_name(), a.get_id()));
                }
            }
        }
        assert!(missing.is_empty(), "no help text: {missing:?}");
    }
}
