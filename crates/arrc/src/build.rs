//! Ahead-of-time compilation: `arrc build prog.apl -o prog.spv` writes one SPIR-V
//! module (every kernel an entry point) and a JSON manifest a host needs to run it.

use crate::Error;
use arrc_ir::error::err;
use arrc_ir::plan::{Plan, PlanOptions};
use arrc_ir::{Dim, ElemType, Function, Sym, Type};
use serde::Serialize;

/// An argument type as given on the command line: `f32` (a vector), `i32[2]` (rank 2),
/// `f32[0]` (a scalar).
pub fn parse_arg_type(s: &str, first_sym: u32) -> Result<Type, String> {
    let (elem, rank) = match s.split_once('[') {
        Some((e, r)) => {
            let r = r
                .strip_suffix(']')
                .ok_or_else(|| format!("bad type {s}: expected like i32[2]"))?;
            (e, r.parse::<u32>().map_err(|_| format!("bad rank in {s}"))?)
        }
        None => (s, 1),
    };
    let elem = ElemType::parse(elem)
        .ok_or_else(|| format!("unknown element type {elem}: use i32, i64 or f32"))?;
    if rank > 8 {
        return Err(format!("rank {rank} is too large"));
    }
    Ok(Type {
        elem,
        shape: (0..rank).map(|i| Dim::Sym(Sym(first_sym + i))).collect(),
    })
}

/// What `arrc build` produced.
pub struct Built {
    pub ir: Function,
    pub plan: Plan,
    pub words: Vec<u32>,
    pub manifest: Manifest,
}

#[derive(Serialize)]
pub struct Manifest {
    pub format: &'static str,
    pub spirv_version: &'static str,
    pub target_env: &'static str,
    pub source: String,
    pub params: Vec<ManifestParam>,
    /// Length symbol `i` is axis `axis` of parameter `param`.
    pub length_symbols: Vec<ManifestSym>,
    /// Length equalities the host must check before dispatching (LENGTH ERROR otherwise).
    pub length_checks: Vec<(String, String)>,
    pub specialization_constants: Vec<ManifestSpec>,
    pub entry_points: Vec<arrc_ir::plan::Kernel>,
    pub buffers: Vec<arrc_ir::plan::Buffer>,
    /// In order, with a compute→compute barrier between consecutive dispatches.
    pub dispatches: Vec<arrc_ir::plan::Dispatch>,
    pub result: ManifestResult,
    pub status_buffer: Option<usize>,
    pub device_errors: Vec<arrc_ir::plan::DeviceError>,
    /// Each length the device computes (`Dim::Dyn`, shown `d<i>`: a compress's
    /// count, say): the buffer whose first i32 holds it after the run.
    pub device_lengths: Vec<ManifestDeviceLength>,
    /// What the module needs of the device.
    pub requires: Requirements,
    /// The device the plan was made for.
    pub target: Target,
    /// The name of the function built (`--entry`, or the file's only one); null for
    /// an unnamed one (`{+/⍵×⍵}`).
    pub entry: Option<String>,
    pub notes: Vec<&'static str>,
}

#[derive(Serialize)]
pub struct ManifestDeviceLength {
    pub length: String,
    pub buffer: usize,
    /// An upper bound (the buffers that hold arrays of this length are this long).
    pub at_most: Dim,
}

/// The module's SPIR-V capabilities and extensions, and the Vulkan features and
/// subgroup operations they need a host to enable or check.
#[derive(Serialize)]
pub struct Requirements {
    pub vulkan: &'static str,
    pub capabilities: Vec<String>,
    pub extensions: Vec<String>,
    /// Device features to enable (`VkPhysicalDeviceFeatures`, its Vulkan 1.1/1.2
    /// structures), by their field names.
    pub features: Vec<&'static str>,
    /// `VkPhysicalDeviceSubgroupProperties::supportedOperations` bits needed, and
    /// that compute shaders be among its `supportedStages`.
    pub subgroup_operations: Vec<&'static str>,
    /// The subgroup size the plan assumed (kernels work at any size that divides
    /// the workgroup size; this one was tuned for).
    pub subgroup_size: u32,
}

/// The device the plan was made for: `--target lavapipe`, `nvidia`, `generic`, or
/// `device` (the facts of the Vulkan device found).
#[derive(Serialize, Clone)]
pub struct Target {
    pub name: String,
    pub subgroup_size: u32,
    pub float64: bool,
    pub int64_atomics: bool,
}

/// The functions of the standard library (`stdlib/`), for `arrc build --stdlib`.
pub fn stdlib_functions() -> Result<Vec<(String, arrc_syntax::Func)>, Error> {
    let mut s = crate::Session::new(crate::Backend::Cpu)?;
    s.load_stdlib()?;
    Ok(s.functions())
}

/// The plan options of a named target (`lavapipe`, `nvidia`, `generic`): the facts
/// arrc's runtime would find on such a device.
pub fn target_options(name: &str) -> Option<PlanOptions> {
    let mut o = PlanOptions::default();
    match name {
        // Mesa's lavapipe: subgroups of 8 (Mesa 22.3, avx2), f64, no 64-bit atomics
        // for scans, every subgroup looks back, loops of at most 65535 trips.
        "lavapipe" => {
            o.subgroup_size = 8;
            o.float64 = true;
            o.int64_atomics = false;
            o.every_subgroup_looks_back = true;
            o.loop_trip_limit = Some(65_000);
            o.max_shared_bytes = 32 << 10;
        }
        // NVIDIA (Hopper, Ampere): subgroups of 32, f64, 64-bit atomics, shuffles,
        // larger scan tiles.
        "nvidia" => {
            o.subgroup_size = 32;
            o.float64 = true;
            o.int64_atomics = true;
            o.every_subgroup_looks_back = false;
            o.subgroup_shuffle = true;
            o.scan_workgroup_size = 384;
            o.scan_items_per_thread = 32;
            o.scan_widened_int_tile = Some((256, 24));
            o.scan_widened_float_tile = Some((512, 24));
            o.compact_tile = Some((512, 24));
            o.max_shared_bytes = 48 << 10;
        }
        // An unknown device: every subgroup looks back, which is right on every
        // device (a tile handing its prefix on through workgroup memory read it
        // wrong on lavapipe: `{+\⍵}` of 200000 i32, 4096 wrong in one run of three),
        // and loops are checked against lavapipe's limit of trips (a loop it cuts
        // short gave `-/⍳70000` as ¯32768; the check raises a device error).
        "generic" => {
            o.every_subgroup_looks_back = true;
            o.loop_trip_limit = Some(65_000);
        }
        _ => return None,
    }
    Some(o)
}

/// The Vulkan features and subgroup operations the SPIR-V capabilities `caps` need.
fn features_of(caps: &[String]) -> (Vec<&'static str>, Vec<&'static str>) {
    let mut features = vec![];
    let mut ops = vec![];
    for c in caps {
        match c.as_str() {
            "Int64" => features.push("shaderInt64"),
            "Int16" => features.push("shaderInt16"),
            "Int8" => features.push("shaderInt8"),
            "Float64" => features.push("shaderFloat64"),
            "Int64Atomics" => features.push("shaderBufferInt64Atomics"),
            "VulkanMemoryModel" => features.push("vulkanMemoryModel"),
            "StorageBuffer8BitAccess" => features.push("storageBuffer8BitAccess"),
            "StorageBuffer16BitAccess" => features.push("storageBuffer16BitAccess"),
            "DenormPreserve" => {
                features.push("shaderDenormPreserveFloat32 or Float64 (float controls)")
            }
            "GroupNonUniform" => ops.push("BASIC"),
            "GroupNonUniformVote" => ops.push("VOTE"),
            "GroupNonUniformArithmetic" => ops.push("ARITHMETIC"),
            "GroupNonUniformBallot" => ops.push("BALLOT"),
            "GroupNonUniformShuffle" => ops.push("SHUFFLE"),
            "GroupNonUniformShuffleRelative" => ops.push("SHUFFLE_RELATIVE"),
            "GroupNonUniformClustered" => ops.push("CLUSTERED"),
            "GroupNonUniformQuad" => ops.push("QUAD"),
            _ => {}
        }
    }
    // Subgroup operations on 8-, 16- or 64-bit values need the extended types.
    let wide = caps
        .iter()
        .any(|c| matches!(c.as_str(), "Int64" | "Float64" | "Int16" | "Int8"));
    if wide && !ops.is_empty() {
        features.push("shaderSubgroupExtendedTypes");
    }
    features.sort_unstable();
    features.dedup();
    (features, ops)
}

#[derive(Serialize)]
pub struct ManifestParam {
    pub name: String,
    #[serde(rename = "type")]
    pub elem: ElemType,
    pub shape: Vec<Dim>,
}

#[derive(Serialize)]
pub struct ManifestSym {
    pub symbol: u32,
    pub param: u32,
    pub axis: u32,
}

#[derive(Serialize)]
pub struct ManifestSpec {
    pub id: u32,
    pub name: &'static str,
    pub default: u32,
}

#[derive(Serialize)]
pub struct ManifestResult {
    pub buffer: usize,
    #[serde(rename = "type")]
    pub elem: ElemType,
    pub shape: Vec<Dim>,
}

/// What to build: the function (`entry`, or the file's only one), the functions it
/// may call besides the file's own (`library`: the standard library's), and the
/// target the plan is for.
pub struct BuildOptions<'a> {
    pub entry: Option<&'a str>,
    pub library: &'a [(String, arrc_syntax::Func)],
    pub target: Target,
}

impl Default for BuildOptions<'_> {
    /// The file's only function, no library, planned for a generic device.
    fn default() -> Self {
        let o = PlanOptions::default();
        BuildOptions {
            entry: None,
            library: &[],
            target: Target {
                name: "generic".into(),
                subgroup_size: o.subgroup_size,
                float64: o.float64,
                int64_atomics: o.int64_atomics,
            },
        }
    }
}

/// Compiles the function that `src` defines for arguments of the given types.
pub fn build(
    src: &str,
    omega: Type,
    alpha: Option<Type>,
    float: ElemType,
    opts: &PlanOptions,
    what: &BuildOptions,
) -> Result<Built, Error> {
    let prog = arrc_syntax::parse_names(src, &|n| {
        what.library
            .iter()
            .find(|(m, _)| m == n)
            .map(|(_, f)| match f.operator_arity() {
                Some(k) => arrc_syntax::NameKind::Operator(k),
                None => arrc_syntax::NameKind::Function,
            })
    })?;
    let (ir, entry) =
        arrc_ir::lower::lower_function(&prog, omega, alpha, float, what.entry, what.library)?;
    let verified = arrc_ir::verify::verify(&ir)?;
    // No cooperative matrices: their kernel needs a module of its own (the Vulkan
    // memory model), and a build's kernels share one module. No maximal
    // reconvergence either: a host would have to enable its device extension, and
    // the manifest's requirements name features, not extensions to enable.
    let opts = &PlanOptions {
        int8_matrices: None,
        maximal_reconvergence: false,
        ..opts.clone()
    };
    let plan = arrc_ir::plan::plan(&verified, opts)?;
    let kernels: Vec<_> = plan.kernels.iter().map(|k| (k, k.name.as_str())).collect();
    let words =
        arrc_spirv::emit_validated(&kernels).map_err(|e| err::unsupported(e.to_string(), 0..0))?;
    let result_ty = ir.ty(ir.result.expect("verified"));
    let (capabilities, extensions) =
        arrc_spirv::requirements(&words).map_err(|e| err::unsupported(e.to_string(), 0..0))?;
    let (features, subgroup_operations) = features_of(&capabilities);
    let manifest = Manifest {
        format: "arrc-manifest/1",
        spirv_version: "1.3",
        target_env: "vulkan1.1",
        source: src.to_string(),
        params: ir
            .params
            .iter()
            .map(|p| ManifestParam {
                name: p.name.clone(),
                elem: p.ty.elem,
                shape: p.ty.shape.clone(),
            })
            .collect(),
        length_symbols: ir
            .syms
            .iter()
            .enumerate()
            .map(|(i, (p, a))| ManifestSym {
                symbol: i as u32,
                param: *p,
                axis: *a,
            })
            .collect(),
        length_checks: ir.checks.iter().map(|c| (c.a.to_string(), c.b.to_string())).collect(),
        specialization_constants: vec![
            ManifestSpec {
                id: 0,
                name: "workgroup_size",
                default: opts.workgroup_size,
            },
            ManifestSpec {
                id: 1,
                name: "items_per_thread",
                default: opts.items_per_thread,
            },
            ManifestSpec {
                id: 2,
                name: "scan_spin_limit",
                default: opts.spin_limit,
            },
        ],
        entry_points: plan.kernels.clone(),
        buffers: plan.buffers.clone(),
        dispatches: plan.dispatches.clone(),
        result: ManifestResult {
            buffer: plan.result,
            elem: result_ty.elem,
            shape: result_ty.shape.clone(),
        },
        status_buffer: plan.status,
        device_errors: plan.errors.clone(),
        device_lengths: plan
            .dyn_lengths
            .iter()
            .map(|&(d, buffer)| ManifestDeviceLength {
                length: Dim::Dyn(d).to_string(),
                buffer,
                at_most: ir.dyn_bounds[d as usize],
            })
            .collect(),
        requires: Requirements {
            vulkan: "1.1",
            capabilities,
            extensions,
            features,
            subgroup_operations,
            subgroup_size: opts.subgroup_size,
        },
        target: what.target.clone(),
        entry,
        notes: vec![
            "counts: product = product of axis lengths (numbers or length symbols n<i>); groups = max(1, min(ceil(of/per_group), max))",
            "push constants are u32 at offsets 0, 4, ...; every kernel has n (its element count) first",
            "bindings are storage buffers at descriptor set 0; the status buffer (if any) is one u32 to zero before the first dispatch; a set bit i after the run means device_errors[i]",
            "the workgroup size must be a multiple of the device's subgroup size; request full subgroups where the device supports it",
            "specialize constants 0 and 1 of each entry point's pipeline to its own workgroup_size and items_per_thread: kernels size workgroup memory and tiles by them (the module's defaults are the first entry point's)",
            "every array, parameter and count must have at most 2147483647 elements (kernels index in 32 bits): the host must refuse larger run-time lengths",
            "integer + - × wrap modulo 2^64 inside folds; the kernels that check them raise a device error bit, which the host must read",
        ],
    };
    Ok(Built {
        ir,
        plan,
        words,
        manifest,
    })
}
