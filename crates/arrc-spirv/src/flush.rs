//! The instructions of a module that a device flushing f32 subnormals would get
//! wrong.
//!
//! Where the device can neither keep f32 subnormals (no
//! `shaderDenormPreserveFloat32`: NVIDIA's H100 and H200, lavapipe) nor is asked to,
//! it may take an f32 subnormal that an instruction reads as 0, and give 0 for a
//! subnormal result: on NVIDIA `x×1e10` gave 0 for `x←1e¯40` (1e¯30 on the
//! reference), `×x` gave 0, and so did the f32 → f64 conversion itself. Kernels
//! planned for such a device with f64 (`Kernel::float64` and not
//! `denorm_preserve_f32`) compute f32 in f64 instead, widened from the bits
//! (`emit/exact32.rs`); this check is what keeps them so: an emitted module that
//! still holds one of these instructions is refused (the statement is then NOT YET
//! SUPPORTED on the device, never a wrong answer).
//!
//! Reads of f32 that cannot flush stay allowed: loads, stores, selects, bit casts,
//! shuffles, `IsNan`/`IsInf`, conversions to integers (a subnormal truncates to 0
//! either way) and narrowing f64 → f32 (NVIDIA's keeps a subnormal result: `*¯100`
//! is 3.8E¯44 there).

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Op, Word};
use std::collections::{HashMap, HashSet};

/// The instructions of `words` that read or compute f32 floats as a flushing
/// device would (at most `limit`, as disassembly-like lines), but for those whose
/// results are in `guarded`: the emitter's native f32 under a guard, whose operands
/// and results it checks and computes again the exact way where a subnormal could
/// matter (`emit/exact32.rs`).
pub fn f32_flushing(
    words: &[u32],
    limit: usize,
    guarded: &HashSet<Word>,
) -> Result<Vec<String>, crate::SpirvError> {
    let m = rspirv::dr::load_words(words).map_err(|e| crate::SpirvError::Invalid(e.to_string()))?;
    Ok(flushing(&m, limit, guarded))
}

fn flushing(m: &Module, limit: usize, guarded: &HashSet<Word>) -> Vec<String> {
    // f32 scalar and vector types, and the type of every value.
    let mut f32_types: HashSet<Word> = HashSet::new();
    let mut type_of: HashMap<Word, Word> = HashMap::new();
    for i in &m.types_global_values {
        match i.class.opcode {
            Op::TypeFloat => {
                if let (Some(id), Some(Operand::LiteralBit32(32))) =
                    (i.result_id, i.operands.first())
                {
                    f32_types.insert(id);
                }
            }
            Op::TypeVector => {
                if let (Some(id), Some(Operand::IdRef(c))) = (i.result_id, i.operands.first()) {
                    if f32_types.contains(c) {
                        f32_types.insert(id);
                    }
                }
            }
            _ => {}
        }
        if let (Some(id), Some(t)) = (i.result_id, i.result_type) {
            type_of.insert(id, t);
        }
    }
    let insts: Vec<&Instruction> = m
        .functions
        .iter()
        .flat_map(|f| {
            f.parameters
                .iter()
                .chain(f.blocks.iter().flat_map(|b| b.instructions.iter()))
        })
        .collect();
    for i in &insts {
        if let (Some(id), Some(t)) = (i.result_id, i.result_type) {
            type_of.insert(id, t);
        }
    }
    let is_f32 = |id: &Word| type_of.get(id).is_some_and(|t| f32_types.contains(t));
    let reads_f32 = |i: &Instruction| {
        i.operands.iter().any(|o| match o {
            Operand::IdRef(id) => is_f32(id),
            _ => false,
        })
    };
    // Every use of a value, as (instruction, operand index).
    let mut uses: HashMap<Word, Vec<(Op, usize)>> = HashMap::new();
    for i in &insts {
        for (k, o) in i.operands.iter().enumerate() {
            if let Operand::IdRef(id) = o {
                uses.entry(*id).or_default().push((i.class.opcode, k));
            }
        }
    }
    let select_fallback = |id: Option<Word>| {
        id.and_then(|id| uses.get(&id))
            .is_some_and(|u| u.iter().all(|&(op, k)| op == Op::Select && k == 2))
    };
    let gives_f32 = |i: &Instruction| i.result_type.is_some_and(|t| f32_types.contains(&t));
    let mut out = vec![];
    for i in insts {
        if i.result_id.is_some_and(|id| guarded.contains(&id)) {
            continue;
        }
        let bad = match i.class.opcode {
            // Arithmetic, and comparisons, of f32.
            Op::FAdd
            | Op::FSub
            | Op::FMul
            | Op::FDiv
            | Op::FRem
            | Op::FMod
            | Op::FNegate
            | Op::VectorTimesScalar
            | Op::Dot
            | Op::FOrdEqual
            | Op::FUnordEqual
            | Op::FOrdNotEqual
            | Op::FUnordNotEqual
            | Op::FOrdLessThan
            | Op::FUnordLessThan
            | Op::FOrdGreaterThan
            | Op::FUnordGreaterThan
            | Op::FOrdLessThanEqual
            | Op::FUnordLessThanEqual
            | Op::FOrdGreaterThanEqual
            | Op::FUnordGreaterThanEqual
            | Op::GroupNonUniformFAdd
            | Op::GroupNonUniformFMul
            | Op::GroupNonUniformFMin
            | Op::GroupNonUniformFMax => gives_f32(i) || reads_f32(i),
            // GLSL.std.450 (the only extended set arrc imports) on f32.
            Op::ExtInst => gives_f32(i) || reads_f32(i),
            // Widening an f32 (NVIDIA's flushes a subnormal to 0), but where the
            // widened value is only the other choice of a select (`widen32`: the
            // subnormals' own value is the first).
            Op::FConvert => reads_f32(i) && !select_fallback(i.result_id),
            _ => false,
        };
        if bad {
            if out.len() == limit {
                break;
            }
            out.push(format!(
                "%{} = {:?} {:?}",
                i.result_id.unwrap_or(0),
                i.class.opcode,
                i.operands
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use spirv_tools::assembler::{Assembler, AssemblerOptions};

    /// A compute module whose body is `body`, with `%f`, `%d`, `%u`, `%b` the
    /// f32, f64, u32 and bool types and `%x` an f32 and `%k` a u32.
    fn module(body: &str) -> Vec<u32> {
        let text = format!(
            "OpCapability Shader
             OpCapability Float64
             OpMemoryModel Logical GLSL450
             OpEntryPoint GLCompute %main \"main\"
             OpExecutionMode %main LocalSize 1 1 1
     %void = OpTypeVoid
       %fn = OpTypeFunction %void
        %f = OpTypeFloat 32
        %d = OpTypeFloat 64
        %u = OpTypeInt 32 0
        %b = OpTypeBool
        %x = OpConstant %f 1.5
        %k = OpConstant %u 7
     %main = OpFunction %void None %fn
    %entry = OpLabel
             {body}
             OpReturn
             OpFunctionEnd"
        );
        let a = spirv_tools::assembler::create(Some(crate::TARGET_ENV));
        a.assemble(&text, AssemblerOptions::default())
            .expect("assembles")
            .as_words()
            .to_vec()
    }

    #[test]
    fn f32_arithmetic_and_comparisons_are_found() {
        for body in [
            "%r = OpFAdd %f %x %x",
            "%r = OpFNegate %f %x",
            "%r = OpFOrdLessThan %b %x %x",
            "%r = OpFConvert %d %x",
        ] {
            let found = f32_flushing(&module(body), 4, &HashSet::new()).unwrap();
            assert_eq!(found.len(), 1, "{body}: {found:?}");
        }
    }

    #[test]
    fn the_emitters_guarded_instructions_are_not() {
        // An f32 sum the emitter names as guarded (`Emitter::native`) passes; the
        // same sum unnamed, and another beside it, do not.
        let words = module(
            "%r = OpFAdd %f %x %x
             %s = OpFMul %f %x %x",
        );
        let m = rspirv::dr::load_words(&words).unwrap();
        let add = m.functions[0].blocks[0]
            .instructions
            .iter()
            .find(|i| i.class.opcode == Op::FAdd)
            .and_then(|i| i.result_id)
            .unwrap();
        let guarded = HashSet::from([add]);
        let found = f32_flushing(&words, 4, &guarded).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("FMul"), "{found:?}");
        assert_eq!(f32_flushing(&words, 4, &HashSet::new()).unwrap().len(), 2);
    }

    #[test]
    fn moves_and_guarded_widenings_are_not() {
        for body in [
            // The widening that `widen32` makes: chosen only where not subnormal.
            "%w = OpFConvert %d %x
             %z = OpConvertUToF %d %k
             %c = OpULessThan %b %k %k
             %r = OpSelect %d %c %z %w",
            "%r = OpBitcast %u %x",
            "%w = OpFConvert %d %x
             %r = OpFConvert %f %w",
        ] {
            let found = f32_flushing(&module(body), 4, &HashSet::new()).unwrap();
            // The last widens unguarded: exactly that one is found.
            let want = usize::from(body.contains("%r = OpFConvert %f"));
            assert_eq!(found.len(), want, "{body}: {found:?}");
        }
    }
}
