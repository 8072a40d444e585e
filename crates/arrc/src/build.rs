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
    pub notes: Vec<&'static str>,
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

/// Compiles the function that `src` defines for arguments of the given types.
pub fn build(
    src: &str,
    omega: Type,
    alpha: Option<Type>,
    float: ElemType,
    opts: &PlanOptions,
) -> Result<Built, Error> {
    let prog = arrc_syntax::parse_str(src)?;
    let ir = arrc_ir::lower::lower_function(&prog, omega, alpha, float)?;
    let verified = arrc_ir::verify::verify(&ir)?;
    let plan = arrc_ir::plan::plan(&verified, opts)?;
    let kernels: Vec<_> = plan.kernels.iter().map(|k| (k, k.name.as_str())).collect();
    let words =
        arrc_spirv::emit_validated(&kernels).map_err(|e| err::unsupported(e.to_string(), 0..0))?;
    let result_ty = ir.ty(ir.result.expect("verified"));
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
        notes: vec![
            "counts: product = product of axis lengths (numbers or length symbols n<i>); groups = max(1, min(ceil(of/per_group), max))",
            "push constants are u32 at offsets 0, 4, ...; every kernel has n (its element count) first",
            "bindings are storage buffers at descriptor set 0; the status buffer (if any) is one u32 to zero before the first dispatch; a set bit i after the run means device_errors[i]",
            "the workgroup size must be a multiple of the device's subgroup size; request full subgroups where the device supports it",
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
