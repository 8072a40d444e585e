//! SPIR-V back end: emits the kernels of an `arrc_ir::plan::Plan` as a SPIR-V 1.3
//! module (Vulkan 1.1) with rspirv, and validates modules with spirv-tools.
//!
//! Invariants:
//! - Input is a plan made from verified IR; the emitter never sees the AST.
//! - Every kernel is a 1-D grid with element count `n` in push constant 0 and the
//!   workgroup size in specialization constant 0 (`WorkgroupSize` built-in), so one
//!   module serves every length and every device.
//! - Nothing assumes a subgroup size: kernels read `SubgroupSize`, `SubgroupId` and
//!   `NumSubgroups`, and cross-subgroup steps go through workgroup memory.
//! - The emitter is testable with no GPU; [`validate`] runs spirv-val in process.

mod emit;
mod flush;

pub use emit::{emit, SCAN_TOTALS};
pub use flush::f32_flushing;

/// A hash of the sources that decide the SPIR-V emitted for a kernel (see
/// `build.rs`): modules cached on disk are kept per emitter.
pub const EMITTER_HASH: &str = env!("ARRC_EMITTER_HASH");
use spirv_tools::assembler::{Assembler, DisassembleOptions};
use spirv_tools::val::Validator;

/// The Vulkan environment modules are validated for.
pub const TARGET_ENV: spirv_tools::TargetEnv = spirv_tools::TargetEnv::Vulkan_1_1;

#[derive(Debug, thiserror::Error)]
pub enum SpirvError {
    #[error("internal compiler error: SPIR-V builder: {0}")]
    Build(String),
    #[error("internal compiler error: emitted SPIR-V failed validation: {0}")]
    Invalid(String),
}

/// Validates a module with spirv-val for [`TARGET_ENV`].
pub fn validate(words: &[u32]) -> Result<(), SpirvError> {
    let v = spirv_tools::val::create(Some(TARGET_ENV));
    v.validate(words, None)
        .map_err(|e| SpirvError::Invalid(e.to_string()))
}

/// The module as SPIR-V assembly text.
/// What a module asks of the device: its `OpCapability`s and `OpExtension`s, by
/// name (`Int64`, `GroupNonUniformArithmetic`, `SPV_KHR_float_controls`).
pub fn requirements(words: &[u32]) -> Result<(Vec<String>, Vec<String>), SpirvError> {
    let m = rspirv::dr::load_words(words).map_err(|e| SpirvError::Invalid(e.to_string()))?;
    let caps = m
        .capabilities
        .iter()
        .filter_map(|i| match i.operands.first() {
            Some(rspirv::dr::Operand::Capability(c)) => Some(format!("{c:?}")),
            _ => None,
        })
        .collect();
    let exts = m
        .extensions
        .iter()
        .filter_map(|i| match i.operands.first() {
            Some(rspirv::dr::Operand::LiteralString(s)) => Some(s.clone()),
            _ => None,
        })
        .collect();
    Ok((caps, exts))
}

pub fn disassemble(words: &[u32]) -> Result<String, SpirvError> {
    let a = spirv_tools::assembler::create(Some(TARGET_ENV));
    let opts = DisassembleOptions {
        comment: false,
        ..Default::default()
    };
    a.disassemble(words, opts)
        .map_err(|e| SpirvError::Invalid(e.to_string()))
        .map(|s| s.unwrap_or_default())
}

/// Emits and validates in one step.
pub fn emit_validated(kernels: &[(&arrc_ir::plan::Kernel, &str)]) -> Result<Vec<u32>, SpirvError> {
    let words = emit(kernels)?;
    validate(&words)?;
    Ok(words)
}
