//! Running statements on the Vulkan device: lower → verify → plan → emit → dispatch.

pub use crate::caches::{CompiledCache, Lru, ModuleCache, MAX_COMPILED, MAX_MODULES};
pub use crate::workspace::{host_names, Arg, Names};
use crate::workspace::{DeviceArray, Uploaded, Val, HOST_COPY_LIMIT};
use crate::Stats;
use arrc_ir::error::err;
use arrc_ir::lower::{lower_program, LocalScope};
use arrc_ir::plan::{BufferRole, Plan, PlanOptions};
use arrc_ir::{Array, Data, Dim, ElemType, Error, ErrorClass, Function, Param, Type};
use arrc_syntax::{Expr, Func, Program, Stmt};
use arrc_vk::{Buffer, Context, Dispatch, PipelineId, Recording, RunStats, VkError};
use std::collections::HashMap;
use std::rc::Rc;

/// Pipeline, buffers, push constants, workgroups, indirect-arguments buffer.
/// Pipeline, descriptor bindings (buffer, byte offset, byte range), push constants,
/// workgroups, indirect-arguments buffer.
type PreparedDispatch = (
    PipelineId,
    Vec<(usize, u64, u64)>,
    Vec<u32>,
    u32,
    Option<usize>,
);

/// One statement compiled for the device.
#[derive(Clone, Debug)]
pub struct CompiledStatement {
    pub ir: Function,
    pub plan: Plan,
    /// One SPIR-V module per kernel, entry point `main`.
    pub modules: Vec<Vec<u32>>,
    /// Each module's key (`arrc_vk::module_key`), computed once.
    pub module_keys: Vec<u64>,
    /// Lowered with the values of arrays larger than the known-value limit (replicate
    /// counts): not reusable for other values of them.
    pub uses_large_values: bool,
    /// A statement whose value is a nested array, compiled only where the caller
    /// asked for one (`compile`'s `nested`): its parts, one flat statement per array
    /// that holds it ([`Function::parts`]); then `plan` and `modules` are the first
    /// part's.
    pub nested: Option<Vec<CompiledStatement>>,
}

impl CompiledStatement {
    /// The plan as text: one line per kernel and per dispatch.
    pub fn plan_text(&self) -> String {
        if let Some(parts) = &self.nested {
            // A nested value: how it is held, then each array's own plan.
            let held = self
                .ir
                .nested
                .as_ref()
                .map(|n| n.held(&self.ir))
                .unwrap_or_default();
            let mut s = format!(
                "nested result {}: {held}\n",
                self.ir.ty(self.ir.result.expect("a result"))
            );
            for (k, p) in parts.iter().enumerate() {
                s.push_str(&format!("part {k}:\n{}", p.plan_text()));
            }
            return s;
        }
        let mut s = String::new();
        for (i, k) in self.plan.kernels.iter().enumerate() {
            s.push_str(&format!("kernel {i} {}: {:?}\n", k.name, k.kind));
        }
        for d in &self.plan.dispatches {
            s.push_str(&format!(
                "dispatch {} buffers {:?} push {:?} groups {:?}",
                self.plan.kernels[d.kernel].name, d.buffers, d.push, d.groups
            ));
            // An indirect dispatch's workgroups come from a buffer (`groups` is a
            // bound), and a guarded kernel runs only where its words say.
            if let Some(b) = d.indirect {
                s.push_str(&format!(" indirect {b}"));
            }
            if let Some(g) = &self.plan.kernels[d.kernel].guard {
                s.push_str(&format!(" {g:?}"));
            }
            s.push('\n');
        }
        // How the statement's nested arrays are held (`lower/nested.rs`).
        for (i, inst) in self.ir.insts.iter().enumerate() {
            if let arrc_ir::ir::Inst::Nested { held } = inst {
                s.push_str(&format!("nested v{i} {}: {held}\n", self.ir.types[i]));
            }
        }
        s
    }
}

pub(crate) struct Gpu {
    pub ctx: Context,
    pub stats: Stats,
    /// Workspace names whose value is in device memory (see `workspace`).
    pub resident: HashMap<String, Rc<DeviceArray>>,
    /// Every device array made, freed by `collect` once nothing else holds it.
    pub(crate) owned: Vec<Rc<DeviceArray>>,
    /// Statements run, the clock of least-recently-used eviction.
    pub(crate) clock: u64,
    /// Resident bytes kept at most (half the device-local memory by default).
    pub budget: u64,
    /// The session's generator as the next statement starts (`BufferRole::Rng`).
    pub rng: arrc_ir::random::Rng,
    /// A workspace name whose device array nothing else holds, which the statement
    /// being run assigns: a plan that scatters into it (`Plan::in_place`) writes its
    /// buffer in place.
    pub(crate) consumable: Option<String>,
    /// With `ctx.profile`: every dispatch run since it was last taken, its kernel's
    /// name and device time in nanoseconds, in order (`Session::take_profile`).
    pub(crate) profile_log: Vec<(String, f64)>,
    /// The last submission's first and last timestamps (`RunStats::device_ticks`).
    pub(crate) last_ticks: Option<(u64, u64)>,
    /// The last submission's timestamp after its readback copies.
    pub(crate) last_copied: Option<u64>,
    /// Parameters from the host are uploaded before the recording is submitted,
    /// never written by it (`arrc bench`: a statement run again and again then
    /// finds its inputs in place, as torch's do, instead of writing them at every
    /// run).
    pub(crate) resident_params: bool,
}

/// A device failure as an error: running out of device memory is APL's WS FULL (the
/// array does not fit), a kernel the driver's compiler rejects NOT YET SUPPORTED on
/// this device (nothing ran: the default backend hands the statement to the
/// reference), anything else a DEVICE ERROR.
pub(crate) fn dev(e: VkError) -> Error {
    let class = match e {
        VkError::OutOfMemory { .. } => ErrorClass::WsFull,
        VkError::Compiler(_) => ErrorClass::Unsupported,
        _ => ErrorClass::Device,
    };
    Error::new(class, e.to_string(), 0..0)
}

/// Arrays up to this many elements are known to the compiler as well as passed.
/// Larger ones are known only when a statement cannot be lowered without them
/// (see [`compile`]).
const KNOWN_PARAM_LIMIT: usize = HOST_COPY_LIMIT;

/// Results up to this many bytes that come back to the host are written by their
/// kernels into host-visible memory (`Gpu::direct_result`): the copies after the
/// last kernel cost about 5 µs of an H200's submission, and a kernel's stores of a
/// few kilobytes over the bus far less.
const DIRECT_RESULT_BYTES: u64 = 4096;

/// The functions a statement may call: the workspace's, and the locals of the dfns
/// running around it (outermost first).
#[derive(Clone, Copy, Default)]
pub(crate) struct Scopes<'a> {
    pub functions: &'a [(String, Func)],
    pub locals: &'a [LocalScope],
}

/// Compiles an expression whose free names are `arrays` (passed as parameters). A
/// nested value is NOT YET SUPPORTED unless `nested` asks for its parts.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compile(
    e: &Expr,
    arrays: &Names,
    scopes: Scopes,
    float: ElemType,
    io: i64,
    opts: &PlanOptions,
    cache: &ModuleCache,
    nested: bool,
) -> Result<CompiledStatement, Error> {
    let Scopes { functions, locals } = scopes;
    let mut names: Vec<&String> = arrays.keys().collect();
    names.sort();
    let params = |known: &dyn Fn(&Arg) -> bool| -> Vec<Param> {
        names
            .iter()
            .map(|n| {
                let a = &arrays[*n];
                Param {
                    name: (*n).clone(),
                    ty: Type {
                        elem: a.elem(),
                        shape: a.shape().iter().map(|&d| Dim::Known(d as u64)).collect(),
                    },
                    value: a.host.filter(|_| known(a)).cloned(),
                    magnitude: a.device.as_ref().and_then(|d| d.magnitude()),
                }
            })
            .collect()
    };
    let prog = Program {
        stmts: vec![Stmt::Expr(e.clone())],
        operand_variants: vec![],
    };
    // Small arrays may give lengths and shapes (`n←3 ⋄ ⍳n`). A statement that needs
    // a larger array's value (replicate counts, `c/x` and `⍸c`, which then expand
    // into gather indices here) is lowered again with every value known. An array
    // only on the device is not known: the caller reads the workspace back and
    // compiles again when the error says a value is needed.
    let small = params(&|a| a.len() <= KNOWN_PARAM_LIMIT);
    let lower = |params: &[Param]| lower_program(&prog, params, functions, locals, float, io);
    let mut uses_large_values = false;
    let ir = match lower(&small) {
        Err(why)
            if why.needs_known
                && arrays
                    .values()
                    .any(|a| a.len() > KNOWN_PARAM_LIMIT && a.host.is_some()) =>
        {
            uses_large_values = true;
            lower(&params(&|_| true))?
        }
        r => r?,
    };
    let flat = |ir: Function| -> Result<CompiledStatement, Error> {
        let verified = arrc_ir::verify::verify(&ir)?;
        let plan = arrc_ir::plan::plan(&verified, opts)?;
        let mut modules = Vec::new();
        for k in &plan.kernels {
            let words = cache
                .get(k)
                .map_err(|x| err::unsupported(x.to_string(), e.span.clone()))?;
            modules.push(words);
        }
        Ok(CompiledStatement {
            ir,
            plan,
            module_keys: modules.iter().map(|w| arrc_vk::module_key(w)).collect(),
            modules,
            uses_large_values,
            nested: None,
        })
    };
    match nested.then(|| ir.parts()).flatten() {
        Some(parts) => {
            let parts = parts.into_iter().map(flat).collect::<Result<Vec<_>, _>>()?;
            let Some(first) = parts.first() else {
                return Err(err::unsupported(
                    "a nested value of no arrays",
                    e.span.clone(),
                ));
            };
            Ok(CompiledStatement {
                plan: first.plan.clone(),
                modules: first.modules.clone(),
                module_keys: first.module_keys.clone(),
                ir,
                uses_large_values,
                nested: Some(parts),
            })
        }
        None => flat(ir),
    }
}

impl Gpu {
    pub fn new(index: Option<usize>) -> Result<Gpu, VkError> {
        let ctx = Context::new(index)?;
        let budget = ctx.info.device_local_bytes / 2;
        Ok(Gpu {
            ctx,
            stats: Stats::default(),
            resident: HashMap::new(),
            owned: Vec::new(),
            clock: 0,
            budget,
            rng: arrc_ir::random::Rng::default(),
            consumable: None,
            profile_log: Vec::new(),
            last_ticks: None,
            last_copied: None,
            resident_params: false,
        })
    }

    pub fn plan_options(&self) -> PlanOptions {
        let mut o = PlanOptions::default();
        let info = &self.ctx.info;
        o.map_groups = o.map_groups.min(info.max_workgroup_count[0]);
        o.workgroup_size = o.workgroup_size.min(info.max_workgroup_invocations);
        o.float64 = info.shader_float64;
        o.max_bindings = info.max_storage_buffers;
        o.max_shared_bytes = info.max_shared_memory;
        o.denorm_preserve_f64 = info.denorm_preserve_f64;
        o.denorm_preserve_f32 = info.denorm_preserve_f32;
        // Where f32 is widened from its bits (a device that may flush f32
        // subnormals: `exact32` in the emitter), a staged `⌺` widens each item once
        // (on the H200 at 2^26 f32: 3×3 297.9 µs against 316.9 widening at each
        // read, 5×5 388.4 against 443.4).
        o.stencil_widen = o.exact32();
        // `finish` checks the result read back (`Plan::finite_result`).
        o.host_checks_result = true;
        let cpu = info.device_type == "CPU";
        o.every_subgroup_looks_back = cpu;
        // lavapipe (Mesa 22.3) advertises 64-bit storage atomics, but a scan whose
        // tiles publish one packed 64-bit status word read wrong prefixes there when
        // tiles ran out of order: the word's halves are not read as one. Its scans
        // keep a flag word and value words apart.
        o.int64_atomics = info.int64_atomics && !cpu;
        o.subgroup_shuffle = info.subgroup_shuffle;
        o.maximal_reconvergence = info.maximal_reconvergence;
        o.subgroup_size = info.subgroup_size.max(1);
        // lavapipe (Mesa 22.3) counts every loop trip of an invocation against one
        // limit of 65535 and leaves the loop past it: `-/⍳70000` gave ¯32768.
        o.loop_trip_limit = cpu.then_some(65_000);
        // Discrete GPUs: 384 invocations of 32 elements each (on the H200, 2^28 f32:
        // 731 µs, against 763 µs with 256 × 32, 826 µs with 512 × 16 and 980 µs with
        // 1024 × 16).
        if info.device_type == "DISCRETE_GPU" {
            o.scan_workgroup_size = 384;
            o.scan_items_per_thread = 32;
            // `+\` of i32 in i64 (H200, 2^28, session 30): 256 × 24 1306.7 µs,
            // 384 × 16 1383.4, 256 × 16 1377.1, 384 × 12 1425.9, 512 × 16 1403.1.
            o.scan_widened_int_tile = Some((256, 24));
            // `+\` of f32 in f64 (H200, session 41, twice each): 512 × 24 729.0 and
            // 731.4 µs at 2^28, 191.9 and 191.3 at 2^26; 384 × 32 758.2 and 757.7,
            // 200.6 and 199.0.
            o.scan_widened_float_tile = Some((512, 24));
            // Compactions (H200, 2^28 f32, session 42): 512 × 24 504.5 µs, 384 × 24
            // 542.6, 256 × 24 529.3, 256 × 36 525.2, 384 × 36 564.4, 512 × 16 656.9.
            o.compact_tile = Some((512, 24));
        }
        o.scan_workgroup_size = o.scan_workgroup_size.min(info.max_workgroup_invocations);
        for (w, _) in [
            &mut o.scan_widened_int_tile,
            &mut o.scan_widened_float_tile,
            &mut o.compact_tile,
        ]
        .into_iter()
        .flatten()
        {
            *w = (*w).min(info.max_workgroup_invocations);
        }
        // 8-bit integer products with i32 sums on cooperative matrices, in the
        // shape with the most outputs (NVIDIA offers 16×16×32 and 16×8×32).
        o.int8_matrices = info
            .cooperative_matrices
            .iter()
            .filter(|c| {
                info.cooperative_matrix
                    && c.subgroup_scope
                    && !c.saturating
                    && (c.a.as_str(), c.b.as_str(), c.c.as_str(), c.result.as_str())
                        == ("i8", "i8", "i32", "i32")
                    && c.k % 4 == 0
            })
            .max_by_key(|c| c.m * c.n)
            .map(|c| (c.m, c.n, c.k));
        // The largest power of two a storage binding may span.
        o.window_bytes = 1u64
            << (63
                - (info.max_storage_buffer_range as u64)
                    .max(1 << 16)
                    .leading_zeros());
        o
    }

    /// Runs a compiled statement whose result may stay on the device (`keep`: it is
    /// assigned, or not needed on the host): a result of more than
    /// [`HOST_COPY_LIMIT`] elements is not read back. Also returns the parameters
    /// uploaded from the host, now device arrays, by name.
    pub(crate) fn run_val(
        &mut self,
        c: &CompiledStatement,
        arrays: &Names,
        keep: bool,
    ) -> Result<(Val, Uploaded), Error> {
        self.clock += 1;
        let mut p = Prepared::keeping(keep);
        if let Err(e) = self.prepare(c, arrays, &mut p) {
            self.release(p);
            return Err(e);
        }
        self.run_prepared(c, p)
    }

    /// Runs a prepared statement, waits for it and reads what comes back; the
    /// parameters it uploaded become device arrays.
    fn run_prepared(
        &mut self,
        c: &CompiledStatement,
        mut p: Prepared,
    ) -> Result<(Val, Uploaded), Error> {
        let r = self.execute(&p).and_then(|_| self.finish_val(c, &mut p));
        let uploaded = match &r {
            Ok(_) => self.adopt_uploads(c, &mut p),
            Err(_) => vec![],
        };
        self.release(p);
        r.map(|v| (v, uploaded))
    }

    /// As [`Self::run_val`] for an assignment, but submitted without waiting where
    /// the statement allows it: its result stays on the device (more than
    /// [`HOST_COPY_LIMIT`] elements) and its shape is known
    /// before it runs (no length computed on the device, no identity or finiteness
    /// read on the host, no scatter in place). Then the value is the device array
    /// the submission is writing, and the [`Launched`] statement must be settled
    /// ([`Self::settle`]) before anything reads it on the host; its status word says
    /// then whether it raised an error.
    pub(crate) fn launch_val(
        &mut self,
        c: &Rc<CompiledStatement>,
        arrays: &Names,
    ) -> Result<(Val, Uploaded, Option<Launched>), Error> {
        let plan = &c.plan;
        let launchable = plan.dyn_lengths.is_empty()
            && plan.empty_identity.is_none()
            && plan.finite_result.is_none()
            && plan.in_place.is_none()
            // Profiled recordings share their timestamps: one at a time.
            && !self.ctx.profile;
        if !launchable {
            return self.run_val(c, arrays, true).map(|(v, u)| (v, u, None));
        }
        self.clock += 1;
        let mut p = Prepared::keeping(true);
        if let Err(e) = self.prepare(c, arrays, &mut p) {
            self.release(p);
            return Err(e);
        }
        // A small result comes back with the status word, and the host knows its
        // values (lengths and shapes of later statements may depend on them): waited
        // for, as `run_val` does.
        if p.read_result {
            return self.run_prepared(c, p).map(|(v, u)| (v, u, None));
        }
        let r = p
            .result_dims
            .iter()
            .map(|d| d.map_err(|_| err::unsupported("a length computed on the device", 0..0)))
            .collect::<Result<Vec<usize>, Error>>()
            .and_then(|shape| {
                self.launch(&p)?;
                self.stats.launched += 1;
                Ok(shape)
            });
        let shape = match r {
            Ok(shape) => shape,
            Err(e) => {
                self.release(p);
                return Err(e);
            }
        };
        let i = plan.result;
        let device = match std::mem::replace(&mut p.buffers[i], Slot::Taken) {
            Slot::Owned(b) => {
                let d = self.adopt_result(b, shape, p.result_elem, &c.ir);
                p.buffers[i] = Slot::Shared(d.clone());
                d
            }
            // Not launched without a buffer of its own (`plan` copies a parameter).
            other => {
                p.buffers[i] = other;
                let launched = Launched {
                    compiled: c.clone(),
                    prepared: p,
                };
                let _ = self.settle(launched);
                return Err(Error::new(
                    ErrorClass::Device,
                    "internal: the result is not the statement's own buffer",
                    0..0,
                ));
            }
        };
        let uploaded = self.adopt_uploads(c, &mut p);
        let val = Val {
            host: None,
            device: Some(device),
        };
        Ok((
            val,
            uploaded,
            Some(Launched {
                compiled: c.clone(),
                prepared: p,
            }),
        ))
    }

    /// Waits for a launched statement and checks its status word: the error it
    /// raised, if any.
    pub(crate) fn settle(&mut self, l: Launched) -> Result<(), Error> {
        let r = self
            .wait(&l.prepared)
            .and_then(|_| self.finish_parts(&l.compiled, &l.prepared).map(|_| ()));
        self.release(l.prepared);
        r
    }

    /// The parameters uploaded for `p`, as device arrays.
    fn adopt_uploads(&mut self, c: &CompiledStatement, p: &mut Prepared) -> Uploaded {
        let mut out = vec![];
        for (name, i) in std::mem::take(&mut p.uploaded) {
            let Some(param) = c.ir.params.iter().find(|q| q.name == name) else {
                continue;
            };
            let Some(Slot::Owned(_)) = p.buffers.get(i) else {
                continue;
            };
            let Slot::Owned(b) = std::mem::replace(&mut p.buffers[i], Slot::Taken) else {
                continue;
            };
            let shape = param
                .ty
                .shape
                .iter()
                .map(|d| match d {
                    Dim::Known(n) => *n as usize,
                    _ => 0,
                })
                .collect();
            let d = self.adopt(b, shape, param.ty.elem);
            out.push((name, d.clone()));
            p.buffers[i] = Slot::Shared(d);
        }
        out
    }

    /// Checks lengths, creates pipelines and buffers, and uploads the inputs.
    pub fn prepare(
        &mut self,
        c: &CompiledStatement,
        arrays: &Names,
        out: &mut Prepared,
    ) -> Result<(), Error> {
        // Pipelines of earlier recordings (all released) may be evicted from here on.
        self.ctx.begin_epoch();
        let plan = &c.plan;
        let info = self.ctx.info.clone();
        let syms: Vec<u64> = plan
            .syms
            .iter()
            .map(|(p, axis)| {
                let name = &c.ir.params[*p as usize].name;
                arrays
                    .get(name)
                    .map_or(0, |a| a.shape()[*axis as usize] as u64)
            })
            .collect();
        for check in &c.ir.checks {
            if matches!(check.a, Dim::Dyn(_)) || matches!(check.b, Dim::Dyn(_)) {
                // Lowering checks such lengths on the device or refuses; never here.
                return Err(err::unsupported(
                    "a length computed on the device cannot be checked before the program runs",
                    check.span.clone(),
                ));
            }
            let v = |d: &Dim| match d {
                Dim::Known(n) => *n,
                Dim::Sym(s) => syms[s.0 as usize],
                Dim::Dyn(_) => 0, // refused above
            };
            if v(&check.a) != v(&check.b) {
                return Err(err::length(
                    format!("lengths {} and {} do not match", v(&check.a), v(&check.b)),
                    check.span.clone(),
                ));
            }
        }
        // Every value's element count, stored or only indexed (the outer product under
        // `=/[1]x∘.<y`), within the kernels' 32-bit indexing: a 65537×65537 array
        // would wrap its indices.
        for (i, t) in c.ir.types.iter().enumerate() {
            let n = t.shape.iter().fold(1u64, |acc, d| {
                let len = match d {
                    Dim::Known(n) => *n,
                    Dim::Sym(s) => syms[s.0 as usize],
                    // A device-computed length is at most its bound.
                    Dim::Dyn(b) => match c.ir.dyn_bounds.get(*b as usize) {
                        Some(Dim::Known(n)) => *n,
                        Some(Dim::Sym(s)) => syms[s.0 as usize],
                        _ => 0,
                    },
                };
                acc.saturating_mul(len)
            });
            if n > arrc_ir::plan::MAX_DEVICE_COUNT {
                return Err(too_many(n, c.ir.spans[i].clone()));
            }
        }
        // A scan tile's table of subgroup totals has a fixed size.
        let scans = plan
            .kernels
            .iter()
            .filter(|k| matches!(k.kind, arrc_ir::plan::KernelKind::ScanChained { .. }));
        for k in scans {
            if k.workgroup_size.div_ceil(info.subgroup_size.max(1)) > arrc_spirv::SCAN_TOTALS {
                return Err(Error::new(
                    ErrorClass::Device,
                    format!(
                        "scans of {} invocations have more than {} subgroups of {}",
                        k.workgroup_size,
                        arrc_spirv::SCAN_TOTALS,
                        info.subgroup_size
                    ),
                    0..0,
                ));
            }
        }
        let mut pipelines: Vec<PipelineId> = Vec::new();
        let t = std::time::Instant::now();
        for ((k, words), &key) in plan.kernels.iter().zip(&c.modules).zip(&c.module_keys) {
            let spec = [
                (0u32, k.workgroup_size),
                (1u32, k.items_per_thread),
                (2u32, k.spin_limit),
            ];
            let p = self
                .ctx
                .pipeline(
                    words,
                    key,
                    "main",
                    k.bindings.iter().map(|b| b.windows.max(1)).sum::<u32>(),
                    k.push_constants.len() as u32,
                    &spec,
                )
                .map_err(dev)?;
            pipelines.push(p);
            self.stats.kernels += 1;
        }
        self.stats.pipeline_ns += t.elapsed().as_nanos() as u64;
        // A scatter into an array the statement may consume writes its buffer.
        let in_place = plan.in_place.as_ref().and_then(|ip| {
            let name = &c.ir.params[ip.param as usize].name;
            (self.consumable.as_ref() == Some(name))
                .then(|| arrays.get(name).and_then(|a| a.device.clone()))
                .flatten()
                .map(|d| (ip.copy, d))
        });
        out.in_place = in_place.is_some();
        out.direct = self.direct_result(plan, &syms, out.keep || in_place.is_some());
        let mut uploads: Vec<(usize, Vec<u8>, bool)> = Vec::new();
        for (i, b) in plan.buffers.iter().enumerate() {
            if let Some((_, d)) = in_place.as_ref().filter(|_| i == plan.result) {
                out.buffers.push(Slot::Shared(d.clone()));
                continue;
            }
            // A parameter already on the device is bound as it is.
            if let BufferRole::Param(p) = &b.role {
                let name = &c.ir.params[*p as usize].name;
                if let Some(d) = arrays.get(name).and_then(|a| a.device.as_ref()) {
                    self.touch(d);
                    out.buffers.push(Slot::Shared(d.clone()));
                    continue;
                }
            }
            let len = device_count(b.len.eval(&syms))? as u64;
            let bytes = len
                .checked_mul(b.elem.size() as u64)
                .ok_or_else(|| Error::new(ErrorClass::Device, "array too large", 0..0))?;
            let t = std::time::Instant::now();
            let made = match out.direct && (i == plan.result || Some(i) == plan.status) {
                true => self.ctx.create_readback(bytes),
                false => self.ctx.create_buffer(bytes),
            };
            self.stats.prepare_ns += t.elapsed().as_nanos() as u64;
            out.buffers.push(Slot::Owned(made.map_err(dev)?));
            match &b.role {
                BufferRole::Param(p) => {
                    let name = &c.ir.params[*p as usize].name;
                    if let Some(a) = arrays.get(name).and_then(|a| a.host) {
                        uploads.push((i, a.data.to_bytes(), !self.resident_params));
                        out.uploaded.push((name.clone(), i));
                    }
                }
                BufferRole::Const(a) => uploads.push((i, a.data.to_bytes(), true)),
                BufferRole::Rng => {
                    let r = self.rng;
                    let words = [r.seed, r.seed >> 32, r.next, r.next >> 32];
                    let bytes = words
                        .iter()
                        .flat_map(|w| (*w as u32).to_le_bytes())
                        .collect();
                    uploads.push((i, bytes, true));
                }
                _ => {}
            }
        }
        // Small inputs are written by the recording itself (a separate submission
        // and wait cost about 0.7 ms each on the H100); larger ones go through a
        // staging buffer now.
        let t = std::time::Instant::now();
        let mut fills: Vec<(usize, Vec<u8>)> = vec![];
        for (i, bytes, may_fill) in uploads {
            self.stats.uploads += 1;
            self.stats.upload_bytes += bytes.len() as u64;
            if bytes.is_empty() {
                continue;
            }
            if may_fill && bytes.len() <= arrc_vk::MAX_FILL_BYTES && bytes.len().is_multiple_of(4) {
                fills.push((i, bytes));
                continue;
            }
            self.ctx
                .upload(out.buffers[i].buffer()?, &bytes)
                .map_err(dev)?;
        }
        self.stats.upload_ns += t.elapsed().as_nanos() as u64;
        for (at, d) in plan.dispatches.iter().enumerate() {
            if in_place.as_ref().is_some_and(|(copy, _)| *copy == at) {
                continue;
            }
            let groups = d.groups.eval(&syms);
            let push = d
                .push
                .iter()
                .map(|p| device_count(p.eval(&syms)))
                .collect::<Result<Vec<u32>, Error>>()?;
            if push.first().copied().unwrap_or(0) == 0
                && !matches!(
                    plan.kernels[d.kernel].kind,
                    arrc_ir::plan::KernelKind::Reduce { .. }
                        | arrc_ir::plan::KernelKind::IndirectArgs { .. }
                )
            {
                // Nothing to do for an empty array, except reductions (which write the identity)
                // and the arguments of indirect dispatches (which a reduction may read).
                continue;
            }
            // Each binding as its windows: arrays beyond the device's largest storage
            // range are bound in consecutive pieces of `window_bytes`.
            let k = &plan.kernels[d.kernel];
            let mut views = Vec::with_capacity(d.buffers.len());
            for (bnd, &b) in k.bindings.iter().zip(&d.buffers) {
                let size = out.buffers[b].buffer()?.size().max(16);
                // Planned with a length known only now: an array past its binding's
                // windows would be read short (robust access gives zeros), so it is
                // refused.
                let reach = bnd.windows.max(1) as u64 * k.window_bytes;
                let needed = plan.buffers[b]
                    .len
                    .eval(&syms)
                    .saturating_mul(plan.buffers[b].elem.size() as u64);
                if needed > reach {
                    return Err(err::unsupported(
                        format!(
                            "an array of {needed} bytes, beyond the {reach} bytes of storage its kernel binds (its length was not known when the kernel was planned)"
                        ),
                        0..0,
                    ));
                }
                for w in 0..bnd.windows.max(1) as u64 {
                    let offset = w * k.window_bytes;
                    views.push(if offset < size {
                        (b, offset, (size - offset).min(k.window_bytes))
                    } else {
                        // A window past this array's end is never read.
                        (b, 0, size.min(k.window_bytes))
                    });
                }
            }
            // A loop of dispatches (`Dispatch::repeat`): push constant `slot` counts.
            let (times, slot) = match &d.repeat {
                Some((times, slot)) => (times.eval(&syms), Some(*slot)),
                None => (1, None),
            };
            for time in 0..times {
                let mut push = push.clone();
                if let Some(p) = slot.and_then(|s| push.get_mut(s)) {
                    *p = device_count(time)?;
                }
                out.dispatches.push((
                    pipelines[d.kernel],
                    views.clone(),
                    push,
                    groups as u32,
                    d.indirect,
                ));
                out.kernels.push(d.kernel);
                // Names only for profiles: not cloned on every run otherwise.
                if self.ctx.profile {
                    out.names.push(plan.kernels[d.kernel].name.clone());
                }
            }
        }
        out.status = plan.status;
        out.result_len = plan.buffers[plan.result].len.eval(&syms);
        out.result_elem = plan.buffers[plan.result].elem;
        out.result_dims = plan
            .result_shape
            .iter()
            .map(|d| match d {
                Dim::Known(n) => Ok(*n as usize),
                Dim::Sym(s) => Ok(syms[s.0 as usize] as usize),
                Dim::Dyn(i) => Err(*i),
            })
            .collect();
        // Record once: the dispatches, then copies of the result (its capacity when
        // its length is computed on the device), the status word and the device
        // lengths (after the result, 4-byte aligned) into one host-visible buffer, so
        // that a run is one submission and one readback.
        out.read_result = !out.keep || out.result_len <= HOST_COPY_LIMIT as u64;
        let result_bytes = match out.read_result {
            true => out.result_len * out.result_elem.size() as u64,
            false => 0,
        };
        out.status_offset = result_bytes.next_multiple_of(4);
        out.dyn_lengths = plan.dyn_lengths.iter().map(|(i, _)| *i).collect();
        let stage_bytes = out.status_offset + 4 + 4 * plan.dyn_lengths.len() as u64;
        if !out.direct {
            let t = std::time::Instant::now();
            let stage = self.ctx.create_readback(stage_bytes.max(4));
            self.stats.prepare_ns += t.elapsed().as_nanos() as u64;
            out.result_stage = Some(stage.map_err(dev)?);
        }
        let buffers: Vec<&Buffer> = out
            .buffers
            .iter()
            .map(Slot::buffer)
            .collect::<Result<_, _>>()?;
        let dispatches: Vec<Dispatch> = out
            .dispatches
            .iter()
            .map(|(pipe, bufs, push, groups, indirect)| Dispatch {
                pipeline: *pipe,
                buffers: bufs
                    .iter()
                    .map(|&(b, offset, range)| arrc_vk::View {
                        buffer: buffers[b],
                        offset,
                        range,
                    })
                    .collect(),
                push: push.clone(),
                groups: *groups,
                indirect: indirect.map(|b| buffers[b]),
            })
            .collect();
        let zero: Vec<&Buffer> = plan
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b.role, BufferRole::Status | BufferRole::Zeroed))
            // (A status word in host memory is zeroed by the host: `zero_direct`.)
            .filter(|&(i, _)| !(out.direct && Some(i) == plan.status))
            .map(|(i, _)| buffers[i])
            .collect();
        let mut readback = Vec::new();
        if let Some(stage) = &out.result_stage {
            if result_bytes > 0 {
                readback.push((buffers[plan.result], stage, result_bytes, 0));
            }
            if let Some(s) = out.status {
                readback.push((buffers[s], stage, 4, out.status_offset));
            }
            for (k, (_, b)) in plan.dyn_lengths.iter().enumerate() {
                let at = out.status_offset + 4 + 4 * k as u64;
                readback.push((buffers[*b], stage, 4, at));
            }
        }
        let fill: Vec<(&Buffer, &[u8])> = fills
            .iter()
            .map(|(i, bytes)| (buffers[*i], bytes.as_slice()))
            .collect();
        let t = std::time::Instant::now();
        let recording = self.ctx.record(&zero, &fill, &dispatches, &readback);
        self.stats.prepare_ns += t.elapsed().as_nanos() as u64;
        out.recording = Some(recording.map_err(dev)?);
        Ok(())
    }

    /// Runs the recorded dispatches once (one submission, waited on).
    pub fn execute(&mut self, p: &Prepared) -> Result<RunStats, Error> {
        self.execute_repeated(p, 1)
    }

    /// Runs the recorded dispatches `times` times back to back in one submission;
    /// the device time is the last run's.
    pub fn execute_repeated(&mut self, p: &Prepared, times: usize) -> Result<RunStats, Error> {
        self.zero_direct(p)?;
        let t = std::time::Instant::now();
        let stats = self
            .ctx
            .submit_repeated(p.recording()?, times)
            .map_err(dev)?;
        self.count_run(t, &stats, p, times.max(1));
        Ok(stats)
    }

    /// `times` runs of `p` (one submission) that started at `t` and have ended.
    fn count_run(&mut self, t: std::time::Instant, stats: &RunStats, p: &Prepared, times: usize) {
        if self.ctx.profile {
            let timed = p
                .names
                .iter()
                .cloned()
                .zip(stats.dispatch_ns.iter().copied());
            self.profile_log.extend(timed);
        }
        self.stats.run_ns += t.elapsed().as_nanos() as u64;
        self.stats.device_ns += stats.device_ns.unwrap_or(0.0) as u64;
        self.last_ticks = stats.device_ticks;
        self.last_copied = stats.copied_tick;
        self.stats.dispatches += (times * p.dispatches.len()) as u64;
    }

    /// Starts the recorded dispatches without waiting (several devices at once);
    /// [`Self::wait`] must follow.
    pub(crate) fn launch(&mut self, p: &Prepared) -> Result<(), Error> {
        self.zero_direct(p)?;
        // The submission counts as running (`Stats::run_ns`), as a waited one does.
        let t = std::time::Instant::now();
        let r = self.ctx.launch(p.recording()?).map_err(dev);
        self.stats.run_ns += t.elapsed().as_nanos() as u64;
        r
    }

    /// Whether the result of `plan` goes straight into host-visible memory with its
    /// status word (`Prepared::direct`): a small result read back, not `kept` on the
    /// device, of no length computed on the device, and stored plainly by the
    /// kernels that bind it (maps and folds: no atomics in host memory, which a
    /// device may not offer there).
    fn direct_result(&self, plan: &arrc_ir::plan::Plan, syms: &[u64], kept: bool) -> bool {
        use arrc_ir::plan::KernelKind as K;
        let r = &plan.buffers[plan.result];
        let bytes = r.len.eval(syms).saturating_mul(r.elem.size() as u64);
        self.ctx.host_storage()
            && !kept
            && plan.dyn_lengths.is_empty()
            && matches!(r.role, BufferRole::Result)
            && bytes <= DIRECT_RESULT_BYTES
            && plan
                .dispatches
                .iter()
                .filter(|d| d.buffers.contains(&plan.result))
                .all(|d| {
                    matches!(
                        plan.kernels[d.kernel].kind,
                        K::Map { .. } | K::Reduce { .. } | K::ReduceAxis { .. }
                    )
                })
    }

    /// Zeroes a status word that kernels write in host memory, before a submission.
    fn zero_direct(&self, p: &Prepared) -> Result<(), Error> {
        if let (true, Some(s)) = (p.direct, p.status) {
            self.ctx.zero_mapped(p.buffers[s].buffer()?, 0, 4);
        }
        Ok(())
    }

    /// Waits for dispatches started by [`Self::launch`].
    pub(crate) fn wait(&mut self, p: &Prepared) -> Result<(), Error> {
        let t = std::time::Instant::now();
        let stats = self.ctx.wait(p.recording()?).map_err(dev)?;
        self.count_run(t, &stats, p, 1);
        Ok(())
    }

    /// Checks the status word and reads the result (copied by the last submission).
    pub fn finish(&mut self, c: &CompiledStatement, p: &Prepared) -> Result<Array, Error> {
        let (shape, host) = self.finish_parts(c, p)?;
        host.ok_or_else(|| {
            Error::new(
                ErrorClass::Device,
                format!("internal: a result of shape {shape:?} was not read back"),
                0..0,
            )
        })
    }

    /// As [`Self::finish`], keeping the result on the device where `p` says so.
    pub(crate) fn finish_val(
        &mut self,
        c: &CompiledStatement,
        p: &mut Prepared,
    ) -> Result<Val, Error> {
        let (shape, host) = self.finish_parts(c, p)?;
        let device = match (&host, p.keep) {
            // An empty-axis identity made on the host.
            (Some(a), _) if p.result_dims.iter().any(|d| d.is_err()) && a.is_empty() => None,
            (_, true) => {
                let i = c.plan.result;
                Some(match std::mem::replace(&mut p.buffers[i], Slot::Taken) {
                    Slot::Owned(b) => {
                        let bytes = arrc_ir::array::saturating_count(&shape) as u64
                            * p.result_elem.size() as u64;
                        let b = self.fitted(b, bytes);
                        let d = self.adopt_result(b, shape.clone(), p.result_elem, &c.ir);
                        p.buffers[i] = Slot::Shared(d.clone());
                        d
                    }
                    // A scatter into the array it assigns, in place.
                    Slot::Shared(d) if p.in_place => {
                        self.stats.in_place += 1;
                        d.set_magnitude(arrc_ir::bounds::result_magnitude(&c.ir));
                        p.buffers[i] = Slot::Shared(d.clone());
                        d
                    }
                    // A kernel always writes the result (`plan` copies a parameter).
                    other => {
                        p.buffers[i] = other;
                        return Err(Error::new(
                            ErrorClass::Device,
                            "internal: the result is not the statement's own buffer",
                            0..0,
                        ));
                    }
                })
            }
            (_, false) => None,
        };
        Ok(Val { host, device })
    }

    /// `b`, or where it holds far more bytes than the `bytes` of the result it
    /// keeps (a length computed on the device, within a larger bound: a replicate
    /// by computed counts allocates up to 64 slots an item), a copy of them in a
    /// buffer of their size. `b` stays where that cannot be made.
    fn fitted(&mut self, b: Buffer, bytes: u64) -> Buffer {
        const SLACK: u64 = 1 << 20;
        if b.size() <= bytes.saturating_mul(2).max(SLACK) {
            return b;
        }
        let Ok(nb) = self.ctx.create_buffer(bytes.max(4)) else {
            return b;
        };
        match self.ctx.copy(&b, &nb, bytes) {
            Ok(()) => {
                self.ctx.free_buffer(b);
                nb
            }
            Err(_) => {
                self.ctx.free_buffer(nb);
                b
            }
        }
    }

    /// The result's shape, and its value where it was read back.
    fn finish_parts(
        &mut self,
        c: &CompiledStatement,
        p: &Prepared,
    ) -> Result<(Vec<usize>, Option<Array>), Error> {
        let t = std::time::Instant::now();
        let r = self.read_parts(c, p);
        self.stats.readback_ns += t.elapsed().as_nanos() as u64;
        r
    }

    fn read_parts(
        &mut self,
        c: &CompiledStatement,
        p: &Prepared,
    ) -> Result<(Vec<usize>, Option<Array>), Error> {
        // The status word and the result: copied into one stage, or written where
        // the host reads them.
        let (stage, status_at, result_src) = match (&p.result_stage, p.direct) {
            (Some(stage), false) => (stage, p.status_offset, stage),
            (_, true) => {
                let result = p.buffers[c.plan.result].buffer()?;
                match p.status {
                    Some(s) => (p.buffers[s].buffer()?, 0, result),
                    None => (result, 0, result),
                }
            }
            (None, false) => {
                return Err(Error::new(
                    ErrorClass::Device,
                    "statement not prepared",
                    0..0,
                ))
            }
        };
        // One readback: the status word after the result (none when the submission
        // copied nothing back).
        if p.status.is_some() || p.read_result || !p.dyn_lengths.is_empty() {
            self.stats.readbacks += 1;
            self.stats.direct_results += p.direct as u64;
        }
        if p.status.is_some() {
            let bytes = self.ctx.read_mapped(stage, status_at, 4);
            let word = u32::from_le_bytes(
                bytes
                    .get(..4)
                    .and_then(|b| b.try_into().ok())
                    .unwrap_or([0; 4]),
            );
            if let Some(e) = c.plan.error_for(word) {
                return Err(e);
            }
        }
        // Lengths computed on the device.
        let word = |at: u64| {
            let b = self.ctx.read_mapped(stage, at, 4);
            u32::from_le_bytes(b.get(..4).and_then(|b| b.try_into().ok()).unwrap_or([0; 4]))
        };
        let dyns: Vec<(u32, usize)> = p
            .dyn_lengths
            .iter()
            .enumerate()
            .map(|(k, id)| (*id, word(p.status_offset + 4 + 4 * k as u64) as usize))
            .collect();
        let shape: Vec<usize> = p
            .result_dims
            .iter()
            .map(|d| match d {
                Ok(n) => *n,
                Err(id) => dyns.iter().find(|(i, _)| i == id).map_or(0, |(_, n)| *n),
            })
            .collect();
        if let Some((id, s)) = c.plan.empty_identity {
            if dyns.iter().any(|(i, n)| *i == id && *n == 0) {
                let n = arrc_ir::array::saturating_count(&shape);
                let mut d = Data::with_capacity(s.elem_type(), n);
                (0..n).for_each(|_| d.push(s));
                return Ok((shape.clone(), Some(Array::new(shape, d))));
            }
        }
        if !p.read_result {
            return Ok((shape, None));
        }
        // A length computed on the device is never more than the result holds; one
        // that is would be a fault in arrc's kernel, reported, never a panic.
        let count = arrc_ir::array::saturating_count(&shape) as u64;
        if count > p.result_len {
            return Err(Error::new(
                ErrorClass::Device,
                format!(
                    "the device computed a result of {count} items, where at most {} fit: \
                     a fault in arrc's kernel (please report the statement)",
                    p.result_len
                ),
                0..0,
            ));
        }
        let len = count;
        let bytes = self
            .ctx
            .read_mapped(result_src, 0, len * p.result_elem.size() as u64);
        self.stats.readback_bytes += bytes.len() as u64;
        let data = Data::from_bytes(p.result_elem, &bytes, len as usize);
        if let Some(e) = &c.plan.finite_result {
            if (0..data.len()).any(|i| !data.get(i).as_f64().is_finite()) {
                return Err(Error::new(e.class, e.message.clone(), e.span.clone()));
            }
        }
        Ok((shape.clone(), Some(Array::new(shape, data))))
    }

    /// Times `runs` device copies of `bytes` bytes after `warmup` untimed ones (ns).
    pub fn time_copy(&mut self, bytes: u64, warmup: usize, runs: usize) -> Result<Vec<f64>, Error> {
        let a = self.ctx.create_buffer(bytes).map_err(dev)?;
        let b = match self.ctx.create_buffer(bytes) {
            Ok(b) => b,
            Err(e) => {
                self.ctx.free_buffer(a);
                return Err(dev(e));
            }
        };
        let mut times = Vec::new();
        let mut r = Ok(());
        for i in 0..warmup + runs {
            match self.ctx.time_copy(&a, &b, bytes) {
                Ok(s) if i >= warmup => times.extend(s.device_ns),
                Ok(_) => {}
                Err(e) => {
                    r = Err(dev(e));
                    break;
                }
            }
        }
        self.ctx.free_buffer(a);
        self.ctx.free_buffer(b);
        r.map(|_| times)
    }

    pub fn release(&mut self, p: Prepared) {
        if let Some(r) = p.recording {
            self.ctx.free_recording(r);
        }
        for b in p.buffers {
            if let Slot::Owned(b) = b {
                self.ctx.free_buffer(b);
            }
        }
        if let Some(b) = p.result_stage {
            self.ctx.free_buffer(b);
        }
        // Device arrays this statement held and nothing else does.
        self.collect();
    }
}

/// A statement's buffer: its own, or a device array it reads (or made, once taken
/// as a result).
enum Slot {
    Owned(Buffer),
    Shared(Rc<DeviceArray>),
    /// Between being taken and put back as `Shared`.
    Taken,
}

impl Slot {
    fn buffer(&self) -> Result<&Buffer, Error> {
        match self {
            Slot::Owned(b) => Ok(b),
            Slot::Shared(d) => Ok(&d.buffer),
            Slot::Taken => Err(Error::new(
                ErrorClass::Device,
                "internal: a buffer was used after it was taken",
                0..0,
            )),
        }
    }
}

/// A statement ready to run: its device buffers (inputs uploaded) and dispatches.
#[derive(Default)]
pub struct Prepared {
    buffers: Vec<Slot>,
    /// The result stays on the device (see `Gpu::run_val`).
    keep: bool,
    /// The result is copied back with the status word.
    read_result: bool,
    /// Parameters uploaded from the host: name, buffer.
    uploaded: Vec<(String, usize)>,
    /// Pipeline, buffers, push constants, workgroups, indirect-arguments buffer.
    dispatches: Vec<PreparedDispatch>,
    /// The plan's kernel each dispatch runs, and its name (for profiles).
    kernels: Vec<usize>,
    names: Vec<String>,
    status: Option<usize>,
    result_len: u64,
    result_elem: ElemType,
    /// The result's shape: lengths, or the ids of lengths computed on the device.
    result_dims: Vec<Result<usize, u32>>,
    /// Ids of the device lengths read back after the status word.
    dyn_lengths: Vec<u32>,
    result_stage: Option<Buffer>,
    /// Where the status word lies in `result_stage`.
    status_offset: u64,
    /// The result and the status word are readback buffers the kernels write
    /// themselves (no stage, no copies: `Gpu::direct_result`).
    direct: bool,
    recording: Option<Recording>,
    /// The result is a parameter's buffer, scattered into (`Plan::in_place`).
    in_place: bool,
}

/// A statement submitted and not yet waited for (`Gpu::launch_val`).
pub(crate) struct Launched {
    compiled: Rc<CompiledStatement>,
    prepared: Prepared,
}

impl Prepared {
    /// A statement to prepare whose result stays on the device where `keep` says so.
    pub(crate) fn keeping(keep: bool) -> Prepared {
        Prepared {
            keep,
            ..Prepared::default()
        }
    }

    fn recording(&self) -> Result<&Recording, Error> {
        self.recording
            .as_ref()
            .ok_or_else(|| Error::new(ErrorClass::Device, "statement not prepared", 0..0))
    }

    /// The plan's kernel index of each recorded dispatch, in order.
    pub fn kernels(&self) -> &[usize] {
        &self.kernels
    }
}

/// A count (elements, rows, a run-time length) as the kernels take it, or WS FULL
/// when it is beyond their 32-bit indexing: never truncated (`+/,(1e5⍴1)∘.×1e5⍴1`
/// indexes 10^10 elements).
fn device_count(n: u64) -> Result<u32, Error> {
    if n > arrc_ir::plan::MAX_DEVICE_COUNT {
        return Err(too_many(n, 0..0));
    }
    Ok(n as u32)
}

/// WS FULL for an array of `n` elements, beyond the device's 32-bit indexing.
fn too_many(n: u64, span: arrc_syntax::Span) -> Error {
    Error::new(
        ErrorClass::WsFull,
        format!(
            "this statement needs an array of {n} elements; the device computes on arrays of at most {} elements",
            arrc_ir::plan::MAX_DEVICE_COUNT
        ),
        span,
    )
}

#[cfg(test)]
mod tests {
    use arrc_ir::ir::{Dim, Param, Type};
    use arrc_ir::plan::{plan, KernelKind, PlanOptions};
    use arrc_ir::ElemType;

    /// The checked tiles of an integer `+.×` whose operands' sizes are found on the
    /// device: the same kernel but for its guard with and without 8-bit matrices
    /// (the word it waits on). Cached as one module, the second plan ran the first's
    /// guard, and neither of its ways ran (on the H200: `x+.×y` of 4096² i32 "took"
    /// 62 µs with `--int8-matrices false` after a run with them).
    #[test]
    fn kernels_that_differ_in_their_guard_are_different_modules() {
        let prog = arrc_syntax::parse_str("a+.×b").unwrap();
        let param = |name: &str| Param {
            name: name.into(),
            ty: Type {
                elem: ElemType::I32,
                shape: vec![Dim::Known(512), Dim::Known(512)],
            },
            value: None,
            magnitude: None,
        };
        let f = arrc_ir::lower::lower_program(
            &prog,
            &[param("a"), param("b")],
            &[],
            &[],
            ElemType::F32,
            1,
        )
        .unwrap();
        let v = arrc_ir::verify::verify(&f).unwrap();
        let checked = |int8: bool| {
            let opts = PlanOptions {
                int8_matrices: int8.then_some((16, 16, 32)),
                max_shared_bytes: 48 << 10,
                ..PlanOptions::default()
            };
            let p = plan(&v, &opts).unwrap();
            p.kernels
                .into_iter()
                .find(|k| {
                    matches!(
                        k.kind,
                        KernelKind::MatMul {
                            checked_sum: Some(_),
                            ..
                        }
                    )
                })
                .unwrap()
        };
        let (with, without) = (checked(true), checked(false));
        assert_eq!(format!("{:?}", with.kind), format!("{:?}", without.kind));
        assert_ne!(with.guard, without.guard);
        assert_ne!(
            crate::caches::module_cache_key(&with),
            crate::caches::module_cache_key(&without)
        );
    }
}
