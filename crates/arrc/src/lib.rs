#![warn(missing_docs)]
//! arrc: an APL-style array language compiled to SPIR-V and run on Vulkan.
//!
//! This crate is the facade for embedding and the home of the `arrc` binary.
//!
//! ```no_run
//! let mut s = arrc::Session::new(arrc::Backend::Auto).unwrap();
//! s.set("x", arrc::Array::vector(arrc::Data::F32(vec![1.0, 2.0, 3.0]))).unwrap();
//! let r = s.eval("+/x×x").unwrap().value.unwrap();
//! assert_eq!(r.data, arrc::Data::F32(vec![14.0]));
//! ```
//!
//! Invariants:
//! - Every statement the GPU path supports runs on the Vulkan device; a statement it
//!   does not support runs on the CPU reference only when the backend was not forced,
//!   and the outcome says so in a note.
//! - Errors are [`Error`] values with spans; [`diagnostics::render`] draws them.

mod assign;
mod compile;
// What the `arrc` command is made of (benchmarks, AOT builds, the fuzzer, the device
// layer, the REPL's keys): public for it, not the library's API.
#[doc(hidden)]
pub mod bench;
#[doc(hidden)]
pub mod build;
mod caches;
mod deferred;
pub mod diagnostics;
#[doc(hidden)]
pub mod fuzz;
#[doc(hidden)]
pub mod gpu;
mod hoist;
mod hosted;
#[doc(hidden)]
pub mod keymap;
mod nests;
pub mod npy;
pub mod saved;
pub mod shard;
mod source;
mod speculate;
mod tuning;
pub mod workspace;

pub use arrc_ir::display::{display, display_pp};
pub use arrc_ir::interrupt;
pub use arrc_ir::{Array, Data, ElemType, Error, ErrorClass, Scalar};
pub use arrc_vk::DeviceInfo;
pub use gpu::CompiledStatement;
pub use npy::Npy;
pub use tuning::Tuning;

use arrc_ir::error::err;
use arrc_syntax::{Expr, ExprKind, Program, Stmt};
pub(crate) use hoist::{called_reads, inner_assignment, names_system_variable};
use hoist::{completed_before, Hoist};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

/// The standard library: (file name, APL source), compiled into the crate.
pub const STDLIB: &[(&str, &str)] = &[
    ("stats.apl", include_str!("../../../stdlib/stats.apl")),
    ("vector.apl", include_str!("../../../stdlib/vector.apl")),
];

/// Which backend evaluates expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Vulkan when a device exists, else the CPU reference (with a note).
    Auto,
    /// Vulkan only: no device or an unsupported expression is an error.
    Vulkan,
    /// The CPU reference evaluator.
    Cpu,
}

/// Counters of device work, for tests and `--stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Kernels whose pipelines were created.
    pub kernels: u64,
    /// Dispatches recorded.
    pub dispatches: u64,
    /// Submissions whose results came back (one per statement run, with its status
    /// word), and device arrays read back for the host.
    pub readbacks: u64,
    /// Arrays uploaded from the host, and their bytes.
    pub uploads: u64,
    /// The bytes of `uploads`.
    pub upload_bytes: u64,
    /// Bytes of results and device arrays read back (not status words).
    pub readback_bytes: u64,
    /// Device arrays the workspace holds now, and their bytes.
    pub resident_arrays: u64,
    /// The bytes of `resident_arrays`.
    pub resident_bytes: u64,
    /// Device arrays sent back to the host for room.
    pub evictions: u64,
    /// Assignments not run but kept as recipes, fused into the statements that read
    /// them (`deferred.rs`).
    pub deferred: u64,
    /// Statements whose compiled form came from the session's cache.
    pub compiles_reused: u64,
    /// Statements compiled (not found in the cache).
    pub compiles: u64,
    /// Where the time went, in nanoseconds of wall time: compiling statements
    /// (lowering, planning, SPIR-V from the session's cache or emitted and
    /// validated), creating pipelines, uploading, creating buffers and recording
    /// commands (`prepare_ns`), submitting with the wait for the device, and reading
    /// results back; `device_ns` is the kernels' own
    /// time between the first and last timestamp of each submission.
    pub compile_ns: u64,
    /// Creating pipelines.
    pub pipeline_ns: u64,
    /// Uploading arrays.
    pub upload_ns: u64,
    /// Creating the statements' device buffers and recording their commands.
    pub prepare_ns: u64,
    /// Submitting (statements launched without waiting too), with the waits for
    /// the device.
    pub run_ns: u64,
    /// The kernels' own time (timestamps).
    pub device_ns: u64,
    /// Reading results back.
    pub readback_ns: u64,
    /// Devices in use (1 unless the session has several), statements run split
    /// across them, and bytes moved from one device to another (through the host).
    pub devices: u64,
    /// Statements run split across devices.
    pub split_statements: u64,
    /// Bytes moved from one device to another.
    pub moved_bytes: u64,
    /// Indexed assignments that wrote the array's own device buffer (no copy).
    pub in_place: u64,
    /// Readbacks of results that their kernels wrote into host-visible memory
    /// themselves, with the status word (no copy after the last kernel).
    pub direct_results: u64,
    /// Assignments submitted without waiting for them (`speculate.rs`), and those
    /// of them found to have raised an error, so that their statements ran again.
    pub launched: u64,
    /// Launched assignments that raised an error and ran again.
    pub relaunched: u64,
    /// Pipelines the device keeps now (at most `arrc_vk::MAX_PIPELINES`).
    pub pipelines_cached: u64,
    /// SPIR-V modules the session keeps now (at most `gpu::MAX_MODULES`).
    pub modules_cached: u64,
    /// SPIR-V modules read from the disk cache instead of emitted and validated.
    pub modules_from_disk: u64,
}

impl Stats {
    /// The counts and times since `before` (the gauges, such as resident bytes and
    /// caches, as they are now).
    pub fn since(&self, before: &Stats) -> Stats {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        Stats {
            kernels: d(self.kernels, before.kernels),
            dispatches: d(self.dispatches, before.dispatches),
            readbacks: d(self.readbacks, before.readbacks),
            uploads: d(self.uploads, before.uploads),
            upload_bytes: d(self.upload_bytes, before.upload_bytes),
            readback_bytes: d(self.readback_bytes, before.readback_bytes),
            evictions: d(self.evictions, before.evictions),
            deferred: d(self.deferred, before.deferred),
            compiles_reused: d(self.compiles_reused, before.compiles_reused),
            compiles: d(self.compiles, before.compiles),
            modules_from_disk: d(self.modules_from_disk, before.modules_from_disk),
            compile_ns: d(self.compile_ns, before.compile_ns),
            pipeline_ns: d(self.pipeline_ns, before.pipeline_ns),
            upload_ns: d(self.upload_ns, before.upload_ns),
            prepare_ns: d(self.prepare_ns, before.prepare_ns),
            run_ns: d(self.run_ns, before.run_ns),
            device_ns: d(self.device_ns, before.device_ns),
            readback_ns: d(self.readback_ns, before.readback_ns),
            split_statements: d(self.split_statements, before.split_statements),
            moved_bytes: d(self.moved_bytes, before.moved_bytes),
            in_place: d(self.in_place, before.in_place),
            direct_results: d(self.direct_results, before.direct_results),
            launched: d(self.launched, before.launched),
            relaunched: d(self.relaunched, before.relaunched),
            ..*self
        }
    }

    /// Adds another device's counts and times.
    fn add(&mut self, o: &Stats) {
        self.kernels += o.kernels;
        self.dispatches += o.dispatches;
        self.readbacks += o.readbacks;
        self.uploads += o.uploads;
        self.upload_bytes += o.upload_bytes;
        self.readback_bytes += o.readback_bytes;
        self.evictions += o.evictions;
        self.in_place += o.in_place;
        self.direct_results += o.direct_results;
        self.launched += o.launched;
        self.relaunched += o.relaunched;
        self.compile_ns += o.compile_ns;
        self.pipeline_ns += o.pipeline_ns;
        self.upload_ns += o.upload_ns;
        self.prepare_ns += o.prepare_ns;
        self.run_ns += o.run_ns;
        self.device_ns += o.device_ns;
        self.readback_ns += o.readback_ns;
    }

    /// Wall time the parts above do not account for, out of `wall_ns`.
    pub fn host_ns(&self, wall_ns: u64) -> u64 {
        wall_ns.saturating_sub(
            self.compile_ns
                + self.pipeline_ns
                + self.upload_ns
                + self.prepare_ns
                + self.run_ns
                + self.readback_ns,
        )
    }
}

/// The value of a program and notes about how it ran.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The last statement's value; `None` when it was an assignment or definition.
    pub value: Option<Array>,
    /// Messages for stderr, such as a fallback to the CPU.
    pub notes: Vec<String>,
    /// The source text of the last statement when it denotes a function (`{⍵}`,
    /// `+/`, or a function's name, shown as it was defined), which APL displays.
    pub function: Option<String>,
}

/// An evaluation session: names defined so far and the device.
///
/// A session is neither `Send` nor `Sync`: it holds its device arrays by `Rc` (a
/// name and the statements reading it share one buffer) and its counters in
/// `Cell`s, and a Vulkan queue is used from one thread. Make one session per thread
/// (each opens the device for itself); arrays ([`Array`]) are plain data and move
/// between threads freely.
///
/// ```
/// let mut s = arrc::Session::new(arrc::Backend::Cpu).unwrap();
/// s.eval("x←⍳5").unwrap();
/// let v = s.eval("+/x×x").unwrap().value.unwrap();
/// assert_eq!(arrc::display(&v), "55");
/// assert_eq!(s.variables(), ["x"]);
/// ```
pub struct Session {
    env: arrc_ref::Env,
    backend: Backend,
    gpu: Option<gpu::Gpu>,
    /// Why there is no device, when the backend is `Auto` and none was found.
    pub no_device: Option<String>,
    /// Kernels already emitted and validated, so a repeated statement skips both.
    modules: gpu::ModuleCache,
    /// Statements already compiled (`compile_with`), and the count of changes to the
    /// workspace's functions, part of their key.
    compiled: gpu::CompiledCache,
    functions_changed: std::cell::Cell<u64>,
    /// The functions that set a system variable, show output, read input or call a
    /// system function (at any depth), as of a count of `functions_changed`.
    system_callers: std::cell::RefCell<(Option<u64>, HashSet<String>)>,
    compiles_reused: std::cell::Cell<u64>,
    compiles: std::cell::Cell<u64>,
    /// Time spent compiling statements (`Stats::compile_ns`).
    compile_ns: std::cell::Cell<u64>,
    tune: Tuning,
    /// `tune` as compiled statements' keys hold it (formatting it for each
    /// statement took half of looking a compiled statement up).
    tune_key: String,
    /// The source text of each function defined by name, to show it.
    sources: HashMap<String, String>,
    /// Where each function defined by name was written: errors in it are shown in
    /// its own text.
    definitions: HashMap<String, source::Definition>,
    /// The name of the source `eval` and `load` read (`input`, or a file's path).
    origin: Arc<str>,
    /// Names bound to recipes not yet computed (`deferred.rs`), and the count of
    /// snapshot names made for them.
    deferred: HashMap<String, std::rc::Rc<deferred::Deferred>>,
    snapshots: u64,
    /// Nested names held on the device by flat arrays (`nests.rs`).
    nests: HashMap<String, std::rc::Rc<nests::Nested>>,
    /// Devices beyond the first and the arrays split across all (`shard.rs`).
    multi: Option<Box<shard::Multi>>,
    /// Statements run while launched ones are unchecked (`speculate.rs`).
    journal: speculate::Journal,
    /// The last program `eval` parsed, with the count of function changes it was
    /// parsed under (a name's kind decides the parse): a program run again (a loop,
    /// `arrc bench`) is not parsed again.
    parsed: std::cell::RefCell<Option<(String, u64, Program)>>,
}

impl Drop for Session {
    fn drop(&mut self) {
        // Recipes, launched statements and split arrays hold device arrays: released
        // before the devices close.
        let _ = self.settle();
        self.deferred.clear();
        self.nests.clear();
        self.multi = None;
    }
}

impl Session {
    /// A session on `backend`. `Backend::Vulkan` fails when no device can be opened.
    pub fn new(backend: Backend) -> Result<Session, Error> {
        Self::with_device(backend, None)
    }

    /// Like [`Session::new`], on device `index` of [`devices`].
    pub fn with_device(backend: Backend, index: Option<usize>) -> Result<Session, Error> {
        let mut s = Session {
            env: arrc_ref::Env::default(),
            backend,
            gpu: None,
            no_device: None,
            modules: gpu::ModuleCache::default(),
            compiled: gpu::CompiledCache::default(),
            functions_changed: std::cell::Cell::new(0),
            system_callers: Default::default(),
            compiles_reused: std::cell::Cell::new(0),
            compiles: std::cell::Cell::new(0),
            compile_ns: std::cell::Cell::new(0),
            tune: Tuning::default(),
            tune_key: format!("{:?}", Tuning::default()),
            sources: HashMap::new(),
            definitions: HashMap::new(),
            origin: Arc::from("input"),
            deferred: HashMap::new(),
            journal: speculate::Journal::default(),
            snapshots: 0,
            nests: HashMap::new(),
            multi: None,
            parsed: Default::default(),
        };
        if backend != Backend::Cpu {
            match gpu::Gpu::new(index) {
                Ok(g) => s.gpu = Some(g),
                Err(e) if backend == Backend::Auto => s.no_device = Some(e.to_string()),
                Err(e) => return Err(device_error(e)),
            }
        }
        Ok(s)
    }

    /// A session on several Vulkan devices (indices of [`devices`]; the same index
    /// twice opens that device twice). Large arrays are split along their first axis
    /// across them (`shard.rs`); the first device does everything else.
    pub fn with_devices(backend: Backend, indices: &[usize]) -> Result<Session, Error> {
        if backend != Backend::Cpu {
            let found = devices().map(|d| d.len()).unwrap_or(0);
            if let Some(i) = indices.iter().find(|&&i| i >= found) {
                return Err(Error::new(
                    ErrorClass::Device,
                    format!("device {i} does not exist ({found} found: see `arrc devices`)"),
                    0..0,
                ));
            }
        }
        let mut s = Self::with_device(backend, indices.first().copied())?;
        if indices.len() > 1 && s.gpu.is_some() {
            s.multi = Some(Box::new(shard::Multi::new(open_gpus(&indices[1..])?, None)));
        }
        Ok(s)
    }

    /// A session of one process among several (MPI ranks: the `arrc-mpi` crate),
    /// on devices `indices` of this process: arrays split across the devices of all
    /// of them, each process holding its pieces. Every process must evaluate the
    /// same statements in the same order.
    pub fn with_peers(
        backend: Backend,
        indices: &[usize],
        peers: Box<dyn shard::Peers>,
    ) -> Result<Session, Error> {
        let mut s = Self::with_device(backend, indices.first().copied())?;
        if s.gpu.is_none() {
            return Err(Error::new(
                ErrorClass::Device,
                "a process among several needs a Vulkan device",
                0..0,
            ));
        }
        let gpus = open_gpus(indices.get(1..).unwrap_or_default())?;
        s.multi = Some(Box::new(shard::Multi::new(gpus, Some(peers))));
        Ok(s)
    }

    /// The devices of this process in use (`with_devices`).
    pub fn device_count(&self) -> usize {
        self.local_devices()
    }

    /// Arrays of at least `elements` elements are split across the devices (by
    /// default [`shard::DEFAULT_SPLIT_FROM`]); at least 1.
    pub fn set_split_from(&mut self, elements: usize) {
        if let Some(m) = self.multi.as_mut() {
            m.split_from = elements.max(1);
        }
    }

    /// Whether workspace array `name` is split across the devices now.
    pub fn is_split_array(&self, name: &str) -> bool {
        self.is_split(name)
    }

    /// Runs `arrc bench` on this session's device.
    pub fn bench(
        &mut self,
        opts: &bench::BenchOptions,
        report: impl FnMut(&bench::BenchResult),
    ) -> Result<Vec<bench::BenchResult>, Error> {
        let g = self.gpu.as_mut().ok_or_else(|| {
            Error::new(ErrorClass::Device, "benchmarks need a Vulkan device", 0..0)
        })?;
        bench::run(g, opts, report)
    }

    /// Times the submissions recorded from here on, on every device of the session
    /// (`Stats::device_ns`: a timestamp before and after their kernels). Off by
    /// default: the queries lengthen a submission's wait (about 6 µs on NVIDIA).
    pub fn set_timing(&mut self, on: bool) {
        for g in self.every_gpu() {
            g.ctx.timing = on;
        }
    }

    /// Times every dispatch from here on, on every device of the session (a
    /// timestamp after each; statements recorded before keep their recordings) for
    /// [`Self::take_profile`].
    pub fn set_profile(&mut self, on: bool) {
        for g in self.every_gpu() {
            g.ctx.profile = on;
        }
    }

    /// The dispatches run since the last call, with [`Self::set_profile`] on: each
    /// kernel's name and device time in nanoseconds, in the order they ran on the
    /// first device, then those of each other device (their names prefixed by the
    /// device's number from 1).
    pub fn take_profile(&mut self) -> Vec<(String, f64)> {
        let mut all = vec![];
        for (k, g) in self.every_gpu().into_iter().enumerate() {
            let log = std::mem::take(&mut g.profile_log);
            if k == 0 {
                all = log;
            } else {
                all.extend(
                    log.into_iter()
                        .map(|(n, t)| (format!("device {k}: {n}"), t)),
                );
            }
        }
        all
    }

    /// Whether a device of this session stopped answering: a submission outlasted
    /// the runtime's wait (a DEVICE ERROR said so). The device may still be running
    /// it, so every later statement fails the same way: start a new session.
    pub fn device_stalled(&self) -> bool {
        self.gpu
            .iter()
            .chain(self.multi.iter().flat_map(|m| m.gpus.iter()))
            .any(|g| g.ctx.stalled())
    }

    /// The Vulkan device in use, if any.
    pub fn device(&self) -> Option<&DeviceInfo> {
        self.gpu.as_ref().map(|g| &g.ctx.info)
    }

    /// The kernel plan options this session's device gives (the defaults without
    /// one): what `arrc build --target device` plans for.
    pub fn plan_options(&self) -> arrc_ir::plan::PlanOptions {
        self.gpu
            .as_ref()
            .map_or_else(Default::default, |g| g.plan_options())
    }

    /// The session's device counters so far (subtract an earlier reading with
    /// [`Stats::since`] for one statement's).
    pub fn stats(&self) -> Stats {
        let mut st = self.gpu.as_ref().map(|g| g.stats).unwrap_or_default();
        st.pipelines_cached = self
            .gpu
            .as_ref()
            .map_or(0, |g| g.ctx.pipelines_cached() as u64);
        st.modules_cached = self.modules.len() as u64;
        st.modules_from_disk = self.modules.from_disk.get();
        st.compiles_reused = self.compiles_reused.get();
        st.compiles = self.compiles.get();
        st.compile_ns = self.compile_ns.get();
        if let Some(g) = &self.gpu {
            st.resident_arrays = g.resident_arrays() as u64;
            st.resident_bytes = g.resident_bytes();
        }
        if let Some(m) = &self.multi {
            // Counts and times summed over the devices (times of devices that ran at
            // once add up to more than the wall time).
            for g in &m.gpus {
                st.add(&g.stats);
                st.resident_arrays += g.resident_arrays() as u64;
                st.resident_bytes += g.resident_bytes();
            }
            st.devices = m.gpus.len() as u64 + 1;
            st.split_statements = m.split_statements;
            st.moved_bytes = m.moved_bytes;
        }
        st
    }

    /// Defines `name` as an array. Refuses a name APL cannot write and an array whose
    /// fields disagree (a shape that does not match its data), which would otherwise
    /// reach the device with the wrong length.
    pub fn set(&mut self, name: &str, value: Array) -> Result<(), Error> {
        let mut chars = name.chars();
        let first = chars.next();
        let ok_first = |c: char| c.is_ascii_alphabetic() || matches!(c, '_' | '∆' | '⍙');
        if !first.is_some_and(ok_first)
            || !chars.all(|c| ok_first(c) || c.is_ascii_digit() || c == '¯')
        {
            return Err(Error::new(
                ErrorClass::Syntax,
                format!("{name:?} is not a name APL can write"),
                0..0,
            ));
        }
        value.check().map_err(|m| {
            Error::new(
                ErrorClass::Domain,
                format!("Session::set({name:?}): {m}"),
                0..0,
            )
        })?;
        // APL has no NaN or infinity, and kernels rely on arrays holding none (an
        // f32 value's bound is the largest finite f32).
        if let Some(i) = value.data.first_not_finite() {
            return Err(Error::new(
                ErrorClass::Domain,
                format!("Session::set({name:?}): item {i} is not a finite number"),
                0..0,
            ));
        }
        self.bind_val(name, value.into());
        Ok(())
    }

    /// The most bytes of arrays kept in device memory between statements (half the
    /// device's memory by default); past it the least recently used go back to the
    /// host.
    pub fn set_device_budget(&mut self, bytes: u64) {
        if let Some(g) = self.gpu.as_mut() {
            g.budget = bytes;
        }
    }

    /// Chooses the float type (as `⎕FR` does): f32 (the default) or f64, which needs
    /// shaderFloat64 on the device. Any other type is ignored.
    pub fn set_float(&mut self, float: ElemType) {
        if float.is_float() {
            self.env.float = float;
        }
    }

    /// Overrides the device's kernel parameters for later statements (for tuning, and
    /// for tests: a spin limit of 1 makes every scan tile take the decoupled fallback).
    pub fn tune(&mut self, t: Tuning) {
        self.tune_key = format!("{t:?}");
        self.tune = t;
    }

    /// The float type in use.
    pub fn float(&self) -> ElemType {
        self.env.float
    }

    /// The value of array `name`, read back from the device if it is only there (once:
    /// the host copy is kept). `None` for a name that is not an array, or whose
    /// readback failed.
    pub fn get(&mut self, name: &str) -> Option<&Array> {
        self.materialize(name).ok()?;
        self.env.arrays.get(name)
    }

    /// A statement that drew `draws` numbers on the device has run: the generator's
    /// counter moves on, for the reference and the next compile.
    pub(crate) fn advance_rng(&mut self, draws: u64) {
        if draws > 0 {
            self.env.rng.next = self.env.rng.next.wrapping_add(draws);
            arrc_ir::random::set_device_rng(Some(self.env.rng));
        }
    }

    /// ⎕PP: the significant digits floats are displayed with (`⎕PP←n` sets it).
    pub fn print_precision(&self) -> usize {
        self.env.pp
    }

    /// ⎕PW: the characters of a displayed line before it folds (`⎕PW←n` sets it).
    pub fn print_width(&self) -> usize {
        self.env.pw
    }

    /// `v` as this session displays it (⎕PP, ⎕PW).
    pub fn display(&self, v: &Array) -> String {
        arrc_ir::display::display_as(v, self.env.pp, self.env.pw, self.env.boxing)
    }

    /// Whether nested arrays are shown in frames (Dyalog's `]box on`).
    pub fn boxing(&self) -> bool {
        self.env.boxing
    }

    /// Shows nested arrays in frames (`true`) or as Dyalog's default display.
    pub fn set_boxing(&mut self, on: bool) {
        self.env.boxing = on;
    }

    /// Evaluates a program: statements separated by newlines or `⋄`.
    pub fn eval(&mut self, src: &str) -> Result<Outcome, Error> {
        // The reference and the compiler read ⎕CT and the generator from this thread.
        arrc_ir::scalar::set_comparison_tolerance(self.env.ct);
        arrc_ir::random::set_device_rng(Some(self.env.rng));
        let prog = self.parse_again(src)?;
        let mut out = Outcome::default();
        if let (Backend::Auto, Some(why)) = (self.backend, &self.no_device) {
            out.notes
                .push(format!("no Vulkan device ({why}); computing on the CPU"));
        }
        let last = prog.stmts.len().saturating_sub(1);
        let mut source: Option<Arc<str>> = None;
        self.journal.no_launch_at = None;
        let mut i = 0;
        loop {
            // Statements launched without waiting are checked before the program
            // ends; one that raised an error runs again, waited for (`speculate.rs`).
            let r = match prog.stmts.get(i) {
                Some(stmt) => self.program_stmt(stmt, i, i == last, &mut out.notes),
                None => self.settle().map(|()| None),
            };
            let v = match r {
                Err(_) if self.journal.restart_at.is_some() => {
                    let j = self.journal.restart_at.take().unwrap_or(i);
                    self.journal.no_launch_at = Some(j);
                    i = j;
                    continue;
                }
                Err(e) => return Err(e),
                Ok(v) => v,
            };
            let Some(stmt) = prog.stmts.get(i) else {
                break;
            };
            i += 1;
            out.value = v;
            out.function = None;
            let text = |span: &arrc_syntax::Span| src.get(span.clone()).unwrap_or("").to_string();
            match stmt {
                Stmt::FnDef { name, func, .. } => {
                    self.sources.insert(name.clone(), text(&func.span));
                    let whole = source.get_or_insert_with(|| Arc::from(src)).clone();
                    self.define(stmt, &whole);
                }
                Stmt::Func(f) => {
                    out.function = Some(match &f.kind {
                        arrc_syntax::FuncKind::Name(n) => self
                            .sources
                            .get(n)
                            .cloned()
                            .unwrap_or_else(|| text(&f.span)),
                        _ => text(&f.span),
                    })
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// Runs statement `i` of a program (`want`: its value is the program's), and
    /// makes room on the device after it. Only a statement of the simple path runs
    /// while launched statements are unchecked; an error is APL's once they are.
    fn program_stmt(
        &mut self,
        stmt: &Stmt,
        i: usize,
        want: bool,
        notes: &mut Vec<String>,
    ) -> Result<Option<Array>, Error> {
        let r = (|| {
            arrc_ir::interrupt::check(&stmt_span(stmt))?;
            if self.journal.is_open() && (want || !self.journalable(stmt)) {
                self.settle()?;
            }
            // (The reference may have set ⎕CT or ⎕RL, or drawn numbers.)
            arrc_ir::scalar::set_comparison_tolerance(self.env.ct);
            arrc_ir::random::set_device_rng(Some(self.env.rng));
            // Only the last statement's value is the program's: the others' stay on
            // the device.
            self.journal.stmt = Some(i);
            let v = self.stmt(stmt, notes, want)?;
            self.evict_to(self.gpu.as_ref().map_or(u64::MAX, |g| g.budget))?;
            Ok(v)
        })();
        self.journal.stmt = None;
        if r.is_err() && self.journal.restart_at.is_none() {
            self.settle()?;
        }
        r
    }

    /// Runs one statement; its value (`None` after an assignment, or when `want` is
    /// false: then a value is not read back).
    fn stmt(
        &mut self,
        stmt: &Stmt,
        notes: &mut Vec<String>,
        want: bool,
    ) -> Result<Option<Array>, Error> {
        self.stmt_as(stmt, stmt, notes, want)
    }

    /// Runs `stmt`, which is `orig` as the user wrote it or rewritten (`x[I]←V` as
    /// `x←V@I⊢x`): the reference, when it takes over or confirms an error, runs
    /// `orig`, so its errors are about what the user wrote.
    fn stmt_as(
        &mut self,
        stmt: &Stmt,
        orig: &Stmt,
        notes: &mut Vec<String>,
        want: bool,
    ) -> Result<Option<Array>, Error> {
        if let Some(r) = self.split_statement(stmt, notes, want)? {
            return Ok(r);
        }
        let Stmt::Expr(e) = stmt else {
            return self.cpu(orig);
        };
        if self.gpu.is_none() {
            return self.cpu(orig);
        }
        if let ExprKind::AssignTo {
            target,
            func,
            value,
        } = &e.kind
        {
            // Assignments of other forms run as plain ones (`assign.rs`), or on the
            // reference.
            if let arrc_syntax::Target::Indexed { name, .. }
            | arrc_syntax::Target::Selective { name, .. } = target
            {
                self.force(name)?;
            }
            if let (arrc_syntax::Target::Names(names), None) = (target, func) {
                if names.len() > 1 {
                    return self.strand_assignment(names, value, orig, notes);
                }
            }
            let Some((plain, name)) = self.plain_assignment(e, target, func.as_ref(), value) else {
                return self.cpu(orig);
            };
            // Where nothing else holds x's device array (no other name, no recipe),
            // an indexed or selective assignment's scatter writes it in place.
            if let (Some(g), Some(name)) = (self.gpu.as_mut(), &name) {
                let alone = g
                    .resident
                    .get(name)
                    .is_some_and(|d| Rc::strong_count(d) == 2);
                g.consumable = alone.then(|| name.clone());
            }
            let r = self.stmt_as(&plain, orig, notes, want);
            if let Some(g) = self.gpu.as_mut() {
                g.consumable = None;
            }
            return r;
        }
        // `a←b←expr` at the top level: compute `expr`, then bind each name.
        let (names, value) = arrc_syntax::assign::assignment_chain(e);
        let names: Vec<String> = names.into_iter().map(str::to_string).collect();
        // A statement that sets a system variable anywhere (`x←(⎕IO←0)+1`) runs on
        // the reference, which checks and applies it in APL's order.
        // So does one that calls a function which sets one, shows output (`⎕←`) or
        // calls a system function, at any depth (the device path would bind `⎕IO` as
        // a local name and keep the session's origin).
        if names_system_variable(e) || self.calls_system_names(e) {
            return self.cpu(orig);
        }
        // Most statements: compiled once and run, or deferred (`deferred.rs`).
        if inner_assignment(value).is_none() && !self.has_host_calls(value) {
            if let Some(r) = self.simple_statement(value, &names, want)? {
                return Ok(r);
            }
        } else {
            self.force_read(value)?;
        }
        // Assignments inside the statement run first, in the order APL meets them,
        // where nothing evaluated before them could see the difference.
        let mut hoist = Hoist {
            functions: &self.env.functions,
            first: vec![],
            read: HashSet::new(),
            called: HashSet::new(),
            renamed: HashMap::new(),
        };
        let whole = value;
        let split;
        let value = match inner_assignment(value) {
            None => value,
            Some(span) => match hoist.expr(value) {
                Some(rest) => {
                    split = rest;
                    &split
                }
                None => {
                    return self.fallback(
                        orig,
                        notes,
                        err::unsupported(
                            "assignment inside an expression, before a call of a function that could read its name, is not supported on the GPU path yet",
                            span,
                        ),
                    )
                }
            },
        };
        // Each assignment made under its own name keeps what it displaced, to be put
        // back if APL would not have made it: after an error, those it meets later;
        // after a refusal, all of them (the reference then runs the whole statement).
        // Those names are host arrays while the statement runs.
        let first = hoist.first;
        if !first.is_empty() {
            let assigned: HashSet<String> = first.iter().map(|h| h.name.clone()).collect();
            for n in &assigned {
                self.materialize(n)?;
            }
            self.forget_device(&assigned);
        }
        let mut displaced: Vec<Option<Option<Array>>> = vec![None; first.len()];
        let result = first
            .iter()
            .zip(&mut displaced)
            .try_for_each(|(h, old)| {
                let a = self.gpu_expr(&h.value, false)?;
                let a = self.host_of(a)?;
                if self.env.functions.remove(h.bind()).is_some() {
                    self.functions_changed();
                }
                let prev = self.set_host(h.bind(), Some(a));
                if h.temp.is_none() {
                    *old = Some(prev);
                }
                Ok(())
            })
            .and_then(|()| self.gpu_expr(value, !names.is_empty() || !want));
        // APL reports the first error in its order of evaluation; the device may meet
        // another first (a shape error at compile time before a data error to its
        // right). Under `Auto` the reference runs the statement again, from the state
        // before it, and says which.
        let confirm = self.backend == Backend::Auto
            && matches!(&result, Err(e) if e.class.is_apl() || e.class == ErrorClass::WsFull);
        let done: Vec<bool> = match &result {
            Ok(_) => vec![true; first.len()],
            Err(e) if e.class == ErrorClass::Unsupported || confirm => vec![false; first.len()],
            Err(e) => completed_before(whole, &first, &e.span),
        };
        // The assignments made are a prefix of `first` (in APL's order): undo the
        // rest, latest first; then the renamed ones made take their names, in order
        // (an assignment after a renamed one to the same name is renamed too).
        for (h, old) in first
            .iter()
            .zip(displaced)
            .zip(&done)
            .rev()
            .filter_map(|(p, d)| (!d).then_some(p))
        {
            if let Some(prev) = old {
                match prev {
                    Some(a) => self.set_host(&h.name, Some(a)),
                    None => self.set_host(&h.name, None),
                };
            }
        }
        for (h, &made) in first.iter().zip(&done) {
            if let Some(a) = h.temp.as_ref().and_then(|t| self.set_host(t, None)) {
                if made {
                    self.bind_val(&h.name, a.into());
                }
            }
        }
        let result = match result {
            Err(e) if confirm => return self.confirm_error(orig, notes, e),
            Err(e) => return self.fallback(orig, notes, e),
            Ok(r) => r,
        };
        for n in &names {
            self.bind_val(n, result.clone());
        }
        if !names.is_empty() || !want {
            return Ok(None);
        }
        self.host_of(result).map(Some)
    }

    /// A statement the device path refused: on the CPU reference with `--backend
    /// auto` (and a note saying so), otherwise the error.
    fn fallback(
        &mut self,
        stmt: &Stmt,
        notes: &mut Vec<String>,
        e: Error,
    ) -> Result<Option<Array>, Error> {
        if e.class == ErrorClass::Unsupported && self.backend == Backend::Auto {
            notes.push(format!(
                "{}: {} — computed on the CPU reference",
                e.class.name(),
                e.message
            ));
            return self.cpu(stmt);
        }
        Err(e)
    }

    /// The error APL gives for a statement the device found an error in: the
    /// reference's, where it can tell (its own limits leave the device's).
    fn confirm_error(
        &mut self,
        stmt: &Stmt,
        notes: &mut Vec<String>,
        e: Error,
    ) -> Result<Option<Array>, Error> {
        match self.cpu(stmt) {
            // A WS FULL of the reference's own limit (2^28 elements) where the device
            // has a larger one: the device's error stands (`÷3e8⍴0` is a DOMAIN ERROR).
            Err(r)
                if r.class == ErrorClass::WsFull
                    && (1..=arrc_ir::plan::MAX_DEVICE_COUNT)
                        .contains(&(arrc_ref::last_refused_size() as u64)) =>
            {
                Err(e)
            }
            // Also WS FULL and NOT YET SUPPORTED: what the reference met before the
            // error the device found further on (`{⍺∨⍵}/[2]4611686018427387904↑⍬`).
            Err(r) if !matches!(r.class, ErrorClass::Interrupt | ErrorClass::Device) => Err(r),
            Err(_) => Err(e),
            Ok(v) => {
                notes.push(format!(
                    "the device path raised {}: {} — computed on the CPU reference",
                    e.class.name(),
                    e.message
                ));
                Ok(v)
            }
        }
    }

    /// Whether a function `e` calls, at any depth, sets a system variable or calls
    /// a system function ([`names_system_variable`] through the calls).
    fn calls_system_names(&self, e: &Expr) -> bool {
        // The functions that do are found once per change of the functions, not for
        // every statement.
        let now = self.functions_changed.get();
        let mut cache = self.system_callers.borrow_mut();
        if cache.0 != Some(now) {
            let fs = &self.env.functions;
            let callers = fs
                .keys()
                .filter(|f| {
                    let one = HashSet::from([(*f).clone()]);
                    called_reads(fs, &one)
                        .iter()
                        .any(|n| arrc_syntax::is_system_name(n))
                })
                .cloned()
                .collect();
            *cache = (Some(now), callers);
        }
        let mut names = HashSet::new();
        e.names(&mut names);
        names.iter().any(|n| cache.1.contains(n))
    }

    fn cpu(&mut self, stmt: &Stmt) -> Result<Option<Array>, Error> {
        let prog = Program {
            stmts: vec![stmt.clone()],
            operand_variants: vec![],
        };
        // The reference reads host arrays, and may assign the names it mentions.
        let mut mentioned = HashSet::new();
        match stmt {
            Stmt::FnDef { name, .. } => {
                mentioned.insert(name.clone());
            }
            Stmt::Expr(e) => e.names(&mut mentioned),
            Stmt::Func(f) => f.names(&mut mentioned),
            Stmt::Guard { cond, value } => {
                cond.names(&mut mentioned);
                value.names(&mut mentioned);
            }
        }
        if !matches!(stmt, Stmt::FnDef { .. }) {
            self.materialize_reads(stmt, &mentioned)?;
        }
        // The functions it could change: those it names (a definition, or an array
        // assigned over one). Compiled statements stay valid if none did: a program
        // that defines `f←{…}` again on each run still compiles once.
        let before: Vec<(String, Option<arrc_syntax::Func>)> = mentioned
            .iter()
            .map(|n| (n.clone(), self.env.functions.get(n).cloned()))
            .collect();
        let count = self.env.functions.len();
        self.env.assigned.clear();
        let v = arrc_ref::eval_program(&prog, &mut self.env);
        arrc_ir::random::set_device_rng(Some(self.env.rng));
        // Names the text does not show but the reference assigned (`⍎'x←5'`): their
        // device copies, recipes and nested values are stale too.
        let unseen: HashSet<String> = std::mem::take(&mut self.env.assigned)
            .into_iter()
            .filter(|n| !mentioned.contains(n))
            .collect();
        let changed = self.env.functions.len() != count
            || before
                .iter()
                .any(|(n, f)| self.env.functions.get(n) != f.as_ref())
            || unseen.iter().any(|n| self.env.functions.contains_key(n));
        mentioned.extend(unseen);
        if changed {
            self.functions_changed();
        }
        self.forget_device(&mentioned);
        let v = v?;
        Ok(match stmt {
            Stmt::Expr(e) if e.is_assignment() => None,
            _ => v,
        })
    }

    /// The names a statement naming `names` can read: those, and every name in the
    /// bodies of the functions it calls, at any depth.
    pub(crate) fn names_read(&self, mut names: HashSet<String>) -> HashSet<String> {
        let called = called_reads(&self.env.functions, &names);
        names.extend(called);
        names
    }

    /// Gives every array a statement on the reference can read a host copy: the names
    /// it shows (`mentioned`) and those of the functions it calls; every array where
    /// it may read names no text shows (`⍎`). (All of them were read back before:
    /// a statement of text in a loop read every device array back each time.)
    fn materialize_reads(&mut self, stmt: &Stmt, mentioned: &HashSet<String>) -> Result<(), Error> {
        let names = self.names_read(mentioned.clone());
        let executes = |text: String| text.contains('⍎');
        let dynamic = executes(stmt.to_string())
            || names
                .iter()
                .filter_map(|n| self.env.functions.get(n))
                .any(|f| executes(f.to_string()));
        if dynamic {
            return self.materialize_all();
        }
        let mut names: Vec<String> = names.into_iter().collect();
        names.sort();
        for n in names {
            self.materialize(&n)?;
        }
        Ok(())
    }

    /// Evaluates a statement's expression on the device path; `keep`: a large result
    /// may stay on the device.
    fn gpu_expr(&mut self, e: &Expr, keep: bool) -> Result<workspace::Val, Error> {
        self.device_eval_val(e, &mut hosted::Calls::default(), keep)
    }

    /// Compiles `e` and runs it. Its free names are the workspace's, with `arrays`
    /// and `functions` (a hosted dfn's locals) over them. With `keep`, a large result
    /// stays on the device; workspace arrays uploaded for it stay there too.
    fn run_on_device(
        &mut self,
        e: &Expr,
        arrays: &gpu::Names,
        locals: &[arrc_ir::lower::LocalScope],
        keep: bool,
    ) -> Result<workspace::Val, Error> {
        let mut retried = false;
        loop {
            match self.run_once(e, arrays, locals, keep) {
                // Lowering needs a value only the device has (replicate counts): the
                // workspace comes back to the host, and the statement compiles again.
                Err(why) if why.needs_known && !retried && self.has_device_only() => {
                    self.materialize_all()?;
                }
                // Out of device memory: the workspace goes back to the host, and the
                // statement runs once more with the whole device.
                Err(why)
                    if why.class == ErrorClass::WsFull
                        && why.span == (0..0)
                        && !retried
                        && self.gpu.as_ref().is_some_and(|g| !g.resident.is_empty()) =>
                {
                    self.evict_to(0)?;
                }
                r => return r,
            }
            retried = true;
        }
    }

    fn run_once(
        &mut self,
        e: &Expr,
        arrays: &gpu::Names,
        locals: &[arrc_ir::lower::LocalScope],
        keep: bool,
    ) -> Result<workspace::Val, Error> {
        let mut names = workspace::workspace_names(&self.env.arrays, self.gpu.as_ref());
        // Names of the workspace that a local does not hide.
        let workspace: HashSet<String> = names
            .keys()
            .filter(|n| !arrays.contains_key(*n))
            .cloned()
            .collect();
        names.extend(arrays.iter().map(|(n, a)| (n.clone(), a.clone())));
        let compiled = self.compile_with(e, &names, locals, keep)?;
        let gpu = self
            .gpu
            .as_mut()
            .ok_or_else(|| err::unsupported("no Vulkan device", e.span.clone()))?;
        gpu.rng = self.env.rng;
        let (v, uploaded) = gpu.run_val(&compiled, &names, keep)?;
        drop(names);
        self.advance_rng(compiled.ir.draws);
        self.keep_uploads(uploaded, |n| workspace.contains(n));
        Ok(v)
    }
}

/// Devices `indices` opened, each its own Vulkan device.
fn open_gpus(indices: &[usize]) -> Result<Vec<gpu::Gpu>, Error> {
    indices
        .iter()
        .map(|&i| gpu::Gpu::new(Some(i)).map_err(device_error))
        .collect()
}

fn device_error(e: arrc_vk::VkError) -> Error {
    gpu::dev(e)
}

/// The Vulkan devices of this machine.
pub fn devices() -> Result<Vec<DeviceInfo>, Error> {
    arrc_vk::enumerate().map_err(device_error)
}

/// Evaluates with the CPU reference in a fresh environment.
pub fn eval_cpu(src: &str) -> Result<Option<Array>, Error> {
    arrc_ref::eval_str(src)
}

/// The source span of a statement.
fn stmt_span(s: &Stmt) -> arrc_syntax::Span {
    match s {
        Stmt::Expr(e) => e.span.clone(),
        Stmt::Func(f) => f.span.clone(),
        Stmt::FnDef { func, .. } => func.span.clone(),
        Stmt::Guard { cond, value } => cond.span.start..value.span.end,
    }
}
