//! The SPIR-V emitter. One `rspirv::dr::Builder` per module, with caches of type and
//! constant ids keyed by our own types. Function-local variables hold loop state (the
//! driver's compiler promotes them to registers), which keeps control flow structured
//! and simple.

use crate::SpirvError;
use arrc_ir::plan::{
    scan_unpublished, Fold, IExpr, KExpr, Kernel, KernelKind, LookbackBudget, ScanStatus, Unit,
};
use arrc_ir::scalar::BinOp;
use arrc_ir::{ElemType, Scalar};
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    self, AddressingModel, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel,
    FunctionControl, GroupOperation, MemoryModel, SelectionControl, StorageClass, Word,
};
use std::collections::HashMap;

mod arith;
mod buffers;
mod circle;
mod control;
mod coop;
mod exact32;
mod f64;
mod folds;
mod hash;
mod lookback;
mod map;
mod matmul;
mod radix;
mod radix_range;
mod random;
mod reduce;
mod scalars;
mod scan;
mod scatter;
mod segscan;
mod solve;
mod sort;
mod stencil;

type R<T> = Result<T, SpirvError>;

fn be(e: rspirv::dr::Error) -> SpirvError {
    SpirvError::Build(e.to_string())
}

/// Scope and memory-semantics values (SPIR-V passes them as constant ids).
const SCOPE_DEVICE: u32 = 1;
const SCOPE_WORKGROUP: u32 = 2;
/// The 32-bit words of workgroup memory every Vulkan device gives a workgroup (16 KiB,
/// the least `maxComputeSharedMemorySize` may be): what a kernel may take without
/// asking the device.
const SHARED_MIN_WORDS: u32 = 4096;
const SCOPE_SUBGROUP: u32 = 3;
/// Entries of a scan tile's table of subgroup totals: `NumSubgroups` must fit.
pub const SCAN_TOTALS: u32 = 1024;
const SEM_ACQ_REL_WORKGROUP: u32 = 0x8 | 0x100;
/// Acquire / Release on storage-buffer (Uniform) memory.
const SEM_ACQUIRE_UNIFORM: u32 = 0x2 | 0x40;
const SEM_RELEASE_UNIFORM: u32 = 0x4 | 0x40;
const SEM_ACQ_REL_UNIFORM: u32 = 0x8 | 0x40;

/// Emits one module holding each kernel as an entry point with the given name.
pub fn emit(kernels: &[(&Kernel, &str)]) -> Result<Vec<u32>, SpirvError> {
    let wg = kernels.first().map_or(256, |(k, _)| k.workgroup_size);
    let items = kernels.first().map_or(8, |(k, _)| k.items_per_thread);
    let spin = kernels.first().map_or(2048, |(k, _)| k.spin_limit);
    let mut e = Emitter::new(wg, items, spin);
    for (k, name) in kernels {
        e.kernel(k, name)?;
    }
    // A module with a kernel computing f32 from its bits is checked by `flush.rs`.
    let check = kernels.iter().any(|(k, _)| k.exact32());
    let guarded = std::mem::take(&mut e.guarded);
    let words = e.finish();
    if check {
        let bad = crate::flush::f32_flushing(&words, 4, &guarded)?;
        if !bad.is_empty() {
            return Err(SpirvError::Build(format!(
                "f32 arithmetic that a device flushing f32 subnormals would get wrong: {}",
                bad.join("; ")
            )));
        }
    }
    Ok(words)
}

struct Emitter {
    b: Builder,
    scalar_types: HashMap<ElemType, Word>,
    consts: HashMap<(Word, u64), Word>,
    /// Each constant's type and bits (`consts` the other way).
    const_of: HashMap<Word, (Word, u64)>,
    builtins: HashMap<BuiltIn, Word>,
    ptr_types: HashMap<(StorageClass, Word), Word>,
    buffer_structs: HashMap<ElemType, Word>,
    /// `struct { T4 data[]; }` per element type (`vec4_view`).
    vec4_structs: HashMap<ElemType, Word>,
    /// Block structs by element type and stride (a type and its decorations are
    /// declared once in a module).
    blocks: HashMap<(Word, u32), Word>,
    /// The module's table of 2/π's bits (f64 argument reduction), once made.
    two_over_pi: Option<Word>,
    /// A radix pass's least key word, subtracted from each key before its digit is
    /// taken (`radix_range.rs`: `relative_keys`).
    radix_least: Option<Word>,
    status_struct: Option<Word>,
    push_structs: HashMap<usize, Word>,
    void: Word,
    bool_t: Word,
    u32_t: Word,
    v3u32: Word,
    wg_size: Word,
    /// Specialization constant 1: elements per invocation per loop trip.
    items: Word,
    /// Its default, which fixes the shape of a scan tile at emit time (a scan keeps
    /// its tile's elements in registers, one variable each).
    items_n: u32,
    /// Specialization constant 0's default, the workgroup size: kernels that keep a
    /// part of workgroup memory per invocation size it by this.
    wg_n: u32,
    /// The kernel may use f64 for f32 intermediates (`Kernel::float64`).
    float64: bool,
    /// f32 is computed in f64, widened from its bits: the device may flush f32
    /// subnormals (not `Kernel::denorm_preserve_f32`) and the kernel has f64
    /// (`exact32.rs`).
    exact32: bool,
    /// Inside a guarded expression's fast path (`exact32.rs`): the function-local
    /// flag its checks or into.
    guard: Option<Word>,
    /// The f32 values being widened are known not subnormal (`widen_all`).
    clean32: bool,
    /// Computing a guarded expression again, the exact way.
    exact_only: bool,
    /// Native f32 on the guarded fast path flushes subnormals (`Kernel::flush_f32`).
    flush_sim: bool,
    /// The native f32 instructions that a guard stands over (`Emitter::native`),
    /// which the module check allows.
    guarded: std::collections::HashSet<Word>,
    /// Push constant 0 as loaded in the kernel's entry block: a value the driver
    /// cannot fold (see `binop`'s 64-bit products).
    opaque: Word,
    /// ⎕CT of the kernel's f64 comparisons (`Kernel::ct`).
    ct: f64,
    /// The module declares DenormPreserve (once, for every entry point asking).
    denorm_preserve: bool,
    /// Specialization constant 2: polls before a scan's lookback falls back.
    spin: Word,
    /// The kernel's lookback budget (`Kernel::lookback_budget`), and the variable
    /// counting its trips (set by the scan kernel that declares it).
    lookback_budget: Option<LookbackBudget>,
    lookback_trips: Option<Word>,
    uses_i64: bool,
    uses_f64: bool,
    uses_ballot: bool,
    /// Subgroup votes (`OpGroupNonUniformAllEqual`).
    uses_vote: bool,
    uses_shuffle: bool,
    uses_i64_atomics: bool,
    /// ⍺ and ⍵ of the dfn step being evaluated (`KExpr::Operand`).
    operands: [Word; 2],
    /// Where `KExpr::Staged` reads, inside a stencil kernel's output.
    staged: Option<stencil::StagedAt>,
    /// Inside a stencil kernel's tile: each `KExpr::WindowFold`'s rows, folded once
    /// for all the outputs of the invocation.
    window_folds: Vec<stencil::WindowFolds>,
    /// While set, a raised error is or-ed into a function-local flag per bit
    /// (`Self::raise`) instead of branching to an atomic at once; `flush_errors`
    /// raises them (a kernel evaluating many pairs in straight-line code).
    deferred: Option<Vec<(u32, Word)>>,
    /// Inside a scan item's right fold of i64 `∨` or `∧`: how its steps' gcd or
    /// lcm errors wait for `fold_down`, which checks the item ([`ScanSteps`]).
    scan_steps: Option<ScanSteps>,
    /// The GLSL.std.450 extended instruction set.
    glsl: Word,
}

/// A binding read as vectors of four elements ([`Emitter::vec4_source`]).
struct Vec4Source {
    view: Word,
    from: ElemType,
    /// The element type, the vector type and a pointer to a vector.
    et: Word,
    vt: Word,
    ptr: Word,
}

/// `expr`, or the argument of its conversion, as a load from a plain array (one
/// window, stored in the type it is read in): its binding, element type and index.
/// Such a load may be done 16 or 32 bytes at a time.
fn plain_load<'k>(cx: &Cx, expr: &'k KExpr) -> Option<(u32, ElemType, &'k IExpr)> {
    let x = match expr {
        KExpr::Cast { arg, .. } => arg,
        x => x,
    };
    match x {
        KExpr::Load {
            binding,
            elem,
            index,
        } if cx.windows[*binding as usize].len() == 1
            && cx.bindings[*binding as usize].1 == *elem =>
        {
            Some((*binding, *elem, index))
        }
        _ => None,
    }
}

/// An elementwise `expr` of a plain array read at each element's own index (one
/// window, stored as read, 4 or 8 bytes): that array's binding and type, and
/// `expr` with those reads as `Operand` 0. The array is read wherever `expr` is
/// evaluated (it is found outside any `Select` or `If`), so it has an element at
/// every index evaluated, and a kernel may read it four elements at a time and
/// compute `expr` from each.
fn mapped_load(cx: &Cx, expr: &KExpr) -> Option<(u32, ElemType, KExpr)> {
    fn has_operand(e: &KExpr) -> bool {
        match e {
            KExpr::Operand { .. } => true,
            KExpr::Binary { lhs, rhs, .. } => has_operand(lhs) || has_operand(rhs),
            KExpr::Unary { arg, .. } | KExpr::Cast { arg, .. } => has_operand(arg),
            KExpr::Select { then, els, .. } => has_operand(then) || has_operand(els),
            KExpr::If { cond, then, els } => {
                has_operand(cond) || has_operand(then) || has_operand(els)
            }
            _ => false,
        }
    }
    fn found(cx: &Cx, e: &KExpr) -> Option<(u32, ElemType)> {
        match e {
            &KExpr::Load {
                binding,
                elem,
                index: IExpr::Index,
            } if cx.windows[binding as usize].len() == 1
                && cx.bindings[binding as usize].1 == elem
                && matches!(
                    elem,
                    ElemType::F32 | ElemType::I32 | ElemType::I64 | ElemType::F64
                ) =>
            {
                Some((binding, elem))
            }
            KExpr::Binary { lhs, rhs, .. } => found(cx, lhs).or_else(|| found(cx, rhs)),
            KExpr::Unary { arg, .. } | KExpr::Cast { arg, .. } => found(cx, arg),
            _ => None,
        }
    }
    if has_operand(expr) {
        return None;
    }
    let (binding, elem) = found(cx, expr)?;
    Some((
        binding,
        elem,
        expr.clone().with_operand_for(binding, elem, 0),
    ))
}

/// A chained scan's 64-bit views of its status bindings (`ScanStatus`).
#[derive(Clone, Copy)]
enum StatusViews {
    Flagged,
    Packed(Word),
    Wide { aggregates: Word, inclusive: Word },
}

/// Per-kernel state: binding variables, builtins already loaded, interface.
#[derive(Clone)]
struct Cx {
    bindings: Vec<(Word, ElemType)>,
    status: Option<Word>,
    interface: Vec<Word>,
    /// The kernel's workgroup array, declared before its function.
    shared: Word,
    n: Word,
    lid: Word,
    group: Word,
    groups: Word,
    /// The push-constant block and the slot of the first extra length in it.
    pc: Word,
    push_base: u32,
    /// A dfn fold's step (`Fold::Dfn`).
    combine: Option<KExpr>,
    /// Each binding's variables, one per window (see `Binding::windows`).
    windows: Vec<Vec<Word>>,
    /// Each binding's first descriptor binding number.
    numbers: Vec<u32>,
    window_bytes: u64,
    /// A scan's tile status words, as `struct { u64 data[]; }` views where they are
    /// 64-bit (`ScanStatus`).
    status_views: StatusViews,
    /// A binding whose stored values must be finite, and the error bit raised where
    /// one is not (a float fold's overflow).
    overflow: Option<(u32, u32)>,
}

/// The indices an expression is evaluated at: the element (ravel order) for flat
/// kernels, the row and position for axis kernels.
#[derive(Clone, Copy)]
struct Ix {
    index: Word,
    row: Word,
    pos: Word,
}

impl Ix {
    fn flat(i: Word) -> Ix {
        Ix {
            index: i,
            row: i,
            pos: i,
        }
    }
}

/// How a scan item's right fold of i64 `∨` or `∧` takes its steps' errors: the
/// reference folds each prefix from the left, so a step may leave i64 where the
/// prefix does not, and `fold_down` checks the item instead.
#[derive(Clone, Copy)]
enum ScanSteps {
    /// A gcd of 2^63 goes on as its bits (the most negative integer's); a result
    /// of at least one step that is 2^63 raises.
    Gcd,
    /// An lcm leaving i64 is or-ed into this flag; it raises where the item is not
    /// 0 (an lcm of no 0 only grows).
    Lcm(Word),
}

impl Emitter {
    fn new(workgroup_size: u32, items_per_thread: u32, spin_limit: u32) -> Emitter {
        let mut b = Builder::new();
        b.set_version(1, 3);
        b.capability(Capability::Shader);
        b.capability(Capability::GroupNonUniform);
        b.capability(Capability::GroupNonUniformArithmetic);
        b.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
        let void = b.type_void();
        let bool_t = b.type_bool();
        let u32_t = b.type_int(32, 0);
        let v3u32 = b.type_vector(u32_t, 3);
        // The workgroup size: specialization constant 0 inside the WorkgroupSize built-in.
        let glsl = b.ext_inst_import("GLSL.std.450");
        let wg_size = b.spec_constant_bit32(u32_t, workgroup_size);
        b.decorate(wg_size, Decoration::SpecId, [Operand::LiteralBit32(0)]);
        let items = b.spec_constant_bit32(u32_t, items_per_thread.max(1));
        b.decorate(items, Decoration::SpecId, [Operand::LiteralBit32(1)]);
        let spin = b.spec_constant_bit32(u32_t, spin_limit);
        b.decorate(spin, Decoration::SpecId, [Operand::LiteralBit32(2)]);
        let mut e = Emitter {
            b,
            scalar_types: HashMap::new(),
            consts: HashMap::new(),
            const_of: HashMap::new(),
            builtins: HashMap::new(),
            ptr_types: HashMap::new(),
            buffer_structs: HashMap::new(),
            vec4_structs: HashMap::new(),
            blocks: HashMap::new(),
            two_over_pi: None,
            radix_least: None,
            status_struct: None,
            push_structs: HashMap::new(),
            void,
            bool_t,
            u32_t,
            v3u32,
            wg_size,
            items,
            items_n: items_per_thread.max(1),
            wg_n: workgroup_size,
            opaque: 0,
            float64: false,
            exact32: false,
            guard: None,
            clean32: false,
            exact_only: false,
            flush_sim: false,
            guarded: Default::default(),
            ct: arrc_ir::scalar::COMPARISON_TOLERANCE,
            denorm_preserve: false,
            spin,
            lookback_budget: None,
            lookback_trips: None,
            uses_i64: false,
            uses_f64: false,
            uses_ballot: false,
            uses_vote: false,
            uses_shuffle: false,
            uses_i64_atomics: false,
            operands: [0; 2],
            staged: None,
            window_folds: Vec::new(),
            deferred: None,
            scan_steps: None,
            glsl,
        };
        let one = e.c_u32(1);
        let wgv = e.b.spec_constant_composite(v3u32, [wg_size, one, one]);
        e.b.decorate(
            wgv,
            Decoration::BuiltIn,
            [Operand::BuiltIn(BuiltIn::WorkgroupSize)],
        );
        // Built-in inputs are module-level variables: declare them before any function.
        for bi in [
            BuiltIn::LocalInvocationId,
            BuiltIn::WorkgroupId,
            BuiltIn::NumWorkgroups,
            BuiltIn::SubgroupId,
            BuiltIn::NumSubgroups,
            BuiltIn::SubgroupSize,
            BuiltIn::SubgroupLocalInvocationId,
        ] {
            e.builtin(bi);
        }
        e
    }

    fn finish(mut self) -> Vec<u32> {
        if self.uses_i64 {
            self.b.capability(Capability::Int64);
        }
        if self.uses_f64 {
            self.b.capability(Capability::Float64);
        }
        if self.uses_ballot {
            self.b.capability(Capability::GroupNonUniformBallot);
        }
        if self.uses_vote {
            self.b.capability(Capability::GroupNonUniformVote);
        }
        if self.uses_shuffle {
            self.b.capability(Capability::GroupNonUniformShuffle);
        }
        if self.uses_i64_atomics {
            self.b.capability(Capability::Int64Atomics);
        }
        use rspirv::binary::Assemble;
        self.b.module().assemble()
    }

    // ---- types and constants ----

    fn ty(&mut self, t: ElemType) -> Word {
        if let Some(&id) = self.scalar_types.get(&t) {
            return id;
        }
        let id = match t {
            // Booleans live in 32-bit words as 0 and 1, characters as code points.
            // Mixed arrays never reach a kernel (the lowering refuses them).
            ElemType::Bool | ElemType::I32 | ElemType::Char | ElemType::Mixed => {
                self.b.type_int(32, 1)
            }
            ElemType::I64 => {
                self.uses_i64 = true;
                self.b.type_int(64, 1)
            }
            ElemType::F32 => self.b.type_float(32, None),
            ElemType::F64 => {
                self.uses_f64 = true;
                self.b.type_float(64, None)
            }
        };
        self.scalar_types.insert(t, id);
        id
    }

    fn ptr(&mut self, sc: StorageClass, pointee: Word) -> Word {
        if let Some(&id) = self.ptr_types.get(&(sc, pointee)) {
            return id;
        }
        let id = self.b.type_pointer(None, sc, pointee);
        self.ptr_types.insert((sc, pointee), id);
        id
    }

    fn constant(&mut self, ty: Word, bits: u64, wide: bool) -> Word {
        if let Some(&id) = self.consts.get(&(ty, bits)) {
            return id;
        }
        let id = if wide {
            self.b.constant_bit64(ty, bits)
        } else {
            self.b.constant_bit32(ty, bits as u32)
        };
        self.consts.insert((ty, bits), id);
        self.const_of.insert(id, (ty, bits));
        id
    }

    /// The value of `w` where it is an f32 constant.
    fn f32_const(&mut self, w: Word) -> Option<f32> {
        let ft = self.ty(ElemType::F32);
        match self.const_of.get(&w) {
            Some(&(t, bits)) if t == ft => Some(f32::from_bits(bits as u32)),
            _ => None,
        }
    }

    fn c_u32(&mut self, v: u32) -> Word {
        let t = self.u32_t;
        self.constant(t, v as u64, false)
    }

    fn scalar(&mut self, s: Scalar) -> Word {
        let t = self.ty(s.elem_type());
        match s {
            Scalar::Bool(v) => self.constant(t, v as u64, false),
            Scalar::I32(v) => self.constant(t, v as u32 as u64, false),
            Scalar::I64(v) => self.constant(t, v as u64, true),
            Scalar::F32(v) => self.constant(t, v.to_bits() as u64, false),
            Scalar::F64(v) => self.constant(t, v.to_bits(), true),
            Scalar::Char(c) => self.constant(t, c as u64, false),
        }
    }

    /// The identity of `op` in type `t`, used to pad partial subgroups and empty shares.
    fn identity(&mut self, op: BinOp, t: ElemType) -> Word {
        let s = match (op, t) {
            (BinOp::Add | BinOp::Sub, t) => Scalar::I32(0).cast(t),
            (BinOp::Mul | BinOp::Div, t) => Scalar::I32(1).cast(t),
            // Booleans are 0 and 1: their identities are in range (the -∞ of ⌈/⍬
            // cast to a boolean would be 1).
            (BinOp::Max | BinOp::Or, ElemType::Bool) => Scalar::Bool(false),
            (BinOp::Min | BinOp::And, ElemType::Bool) => Scalar::Bool(true),
            (BinOp::Max, ElemType::I32) => Scalar::I32(i32::MIN),
            (BinOp::Max, ElemType::I64) => Scalar::I64(i64::MIN),
            (BinOp::Max, ElemType::F32) => Scalar::F32(-f32::MAX),
            (BinOp::Min, ElemType::I32) => Scalar::I32(i32::MAX),
            (BinOp::Min, ElemType::I64) => Scalar::I64(i64::MAX),
            (BinOp::Min, ElemType::F32) => Scalar::F32(f32::MAX),
            (BinOp::Max, ElemType::F64) => Scalar::F64(-f64::MAX),
            (BinOp::Min, ElemType::F64) => Scalar::F64(f64::MAX),
            (op, t) => op
                .identity(t, t.join(ElemType::F32))
                .unwrap_or(Scalar::I32(0))
                .cast(t),
        };
        self.scalar(s)
    }

    /// A second view of a binding as `struct { T4 data[]; }` (16-byte vectors of
    /// 4-byte elements, 32-byte ones of 8-byte elements; the same descriptor:
    /// storage-buffer variables may alias).
    fn vec4_view(&mut self, cx: &Cx, binding: u32, t: ElemType, writable: bool) -> R<Word> {
        // One struct type per element type in a module (types are declared once).
        let st = match self.vec4_structs.get(&t) {
            Some(&st) => st,
            None => {
                let et = self.ty(t);
                let vt = self.b.type_vector(et, 4);
                let stride = if matches!(t, ElemType::I64 | ElemType::F64) {
                    32
                } else {
                    16
                };
                let st = self.block_of(vt, stride);
                self.vec4_structs.insert(t, st);
                st
            }
        };
        let var = self.alias_var(cx, binding, st);
        if !writable {
            self.b.decorate(var, Decoration::NonWritable, []);
        }
        Ok(var)
    }

    /// A read-only vector view of `binding` (elements of type `from`) for
    /// [`Self::load_vec4`].
    fn vec4_source(&mut self, cx: &Cx, binding: u32, from: ElemType) -> R<Vec4Source> {
        let view = self.vec4_view(cx, binding, from, false)?;
        let et = self.ty(from);
        let vt = self.b.type_vector(et, 4);
        let ptr = self.ptr(StorageClass::StorageBuffer, vt);
        Ok(Vec4Source {
            view,
            from,
            et,
            vt,
            ptr,
        })
    }

    /// The four elements of vector `vi` of `src`, converted to `to`.
    fn load_vec4(&mut self, src: &Vec4Source, vi: Word, to: ElemType) -> R<[Word; 4]> {
        let zero = self.c_u32(0);
        let p = self
            .b
            .access_chain(src.ptr, None, src.view, [zero, vi])
            .map_err(be)?;
        let x = self.load(src.vt, p)?;
        let mut out = [0; 4];
        for (c, o) in out.iter_mut().enumerate() {
            let xc = self
                .b
                .composite_extract(src.et, None, x, [c as u32])
                .map_err(be)?;
            *o = self.convert(xc, src.from, to)?;
        }
        Ok(out)
    }

    /// A module-level variable of block type `st` on the descriptor of `binding`: a
    /// second view of the same buffer (storage-buffer variables may alias).
    fn alias_var(&mut self, cx: &Cx, binding: u32, st: Word) -> Word {
        let p = self.ptr(StorageClass::StorageBuffer, st);
        let current = self.b.selected_block();
        let _ = self.b.select_block(None);
        let var = self.b.variable(p, None, StorageClass::StorageBuffer, None);
        let _ = self.b.select_block(current);
        self.b
            .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
        self.b.decorate(
            var,
            Decoration::Binding,
            [Operand::LiteralBit32(cx.numbers[binding as usize])],
        );
        var
    }

    /// A coherent view of a words binding as `struct { u64 data[]; }` (64-bit atomics).
    fn u64_view(&mut self, cx: &Cx, binding: u32) -> R<Word> {
        self.uses_i64 = true;
        self.uses_i64_atomics = true;
        let u64t = self.b.type_int(64, 0);
        let st = self.block_of(u64t, 8);
        let var = self.alias_var(cx, binding, st);
        self.b.decorate(var, Decoration::Coherent, []);
        Ok(var)
    }

    /// `struct { E data[]; }` with elements `stride` bytes apart, a storage-buffer block.
    fn block_of(&mut self, elem: Word, stride: u32) -> Word {
        if let Some(&st) = self.blocks.get(&(elem, stride)) {
            return st;
        }
        let rt = self.b.type_runtime_array(elem);
        self.b
            .decorate(rt, Decoration::ArrayStride, [Operand::LiteralBit32(stride)]);
        let st = self.b.type_struct([rt]);
        self.b.decorate(st, Decoration::Block, []);
        self.b
            .member_decorate(st, 0, Decoration::Offset, [Operand::LiteralBit32(0)]);
        self.blocks.insert((elem, stride), st);
        st
    }

    /// `struct { T data[]; }` decorated as a storage-buffer block.
    fn buffer_struct(&mut self, t: ElemType) -> Word {
        // Booleans are stored as i32 words: one struct type serves both.
        let t = if t == ElemType::Bool {
            ElemType::I32
        } else {
            t
        };
        if let Some(&id) = self.buffer_structs.get(&t) {
            return id;
        }
        let et = self.ty(t);
        let st = self.block_of(et, t.size() as u32);
        self.buffer_structs.insert(t, st);
        st
    }

    fn builtin(&mut self, bi: BuiltIn) -> Word {
        if let Some(&id) = self.builtins.get(&bi) {
            return id;
        }
        let ty = match bi {
            BuiltIn::LocalInvocationId | BuiltIn::WorkgroupId | BuiltIn::NumWorkgroups => {
                self.v3u32
            }
            _ => self.u32_t,
        };
        let p = self.ptr(StorageClass::Input, ty);
        let v = self.b.variable(p, None, StorageClass::Input, None);
        self.b
            .decorate(v, Decoration::BuiltIn, [Operand::BuiltIn(bi)]);
        self.builtins.insert(bi, v);
        v
    }

    /// Loads a built-in; the x component for vector built-ins.
    fn load_builtin(&mut self, cx: &mut Cx, bi: BuiltIn) -> R<Word> {
        let var = self.builtin(bi);
        if !cx.interface.contains(&var) {
            cx.interface.push(var);
        }
        let vector = matches!(
            bi,
            BuiltIn::LocalInvocationId | BuiltIn::WorkgroupId | BuiltIn::NumWorkgroups
        );
        let ty = if vector { self.v3u32 } else { self.u32_t };
        let v = self.b.load(ty, None, var, None, []).map_err(be)?;
        if vector {
            self.b
                .composite_extract(self.u32_t, None, v, [0])
                .map_err(be)
        } else {
            Ok(v)
        }
    }

    /// Loads a scalar built-in already in the kernel's interface.
    fn load_builtin_cx(&mut self, bi: BuiltIn) -> R<Word> {
        let var = self.builtin(bi);
        self.b.load(self.u32_t, None, var, None, []).map_err(be)
    }

    // ---- expressions ----

    /// Index arithmetic.
    fn iexpr(&mut self, cx: &Cx, e: &IExpr, ix: Ix) -> R<Word> {
        let u = self.u32_t;
        let two = |e: &mut Self, a: &IExpr, b: &IExpr| -> R<(Word, Word)> {
            Ok((e.iexpr(cx, a, ix)?, e.iexpr(cx, b, ix)?))
        };
        match e {
            IExpr::Index => Ok(ix.index),
            IExpr::Row => Ok(ix.row),
            IExpr::Pos => Ok(ix.pos),
            IExpr::Const(c) => Ok(self.c_u32(*c)),
            IExpr::Push(k) => self.push_constant(cx, cx.push_base + k),
            IExpr::Add(a, b) => {
                let (a, b) = two(self, a, b)?;
                self.b.i_add(u, None, a, b).map_err(be)
            }
            IExpr::Sub(a, b) => {
                let (a, b) = two(self, a, b)?;
                self.b.i_sub(u, None, a, b).map_err(be)
            }
            IExpr::Mul(a, b) => {
                let (a, b) = two(self, a, b)?;
                self.b.i_mul(u, None, a, b).map_err(be)
            }
            IExpr::Div(a, b) => {
                let (a, b) = two(self, a, b)?;
                self.b.u_div(u, None, a, b).map_err(be)
            }
            IExpr::Rem(a, b) => {
                let (a, b) = two(self, a, b)?;
                self.b.u_mod(u, None, a, b).map_err(be)
            }
            IExpr::Data(k) => {
                let v = self.expr(cx, k, ix)?;
                let bt = self.bool_t;
                match k.elem() {
                    ElemType::I64 => {
                        // Beyond u32 (negative ones too, as unsigned) is out of range.
                        let u64t = self.b.type_int(64, 0);
                        let uv = self.b.bitcast(u64t, None, v).map_err(be)?;
                        let lim = self.constant(u64t, u32::MAX as u64, true);
                        let big = self.b.u_greater_than(bt, None, uv, lim).map_err(be)?;
                        let low = self.b.u_convert(u, None, uv).map_err(be)?;
                        let max = self.c_u32(u32::MAX);
                        self.b.select(u, None, big, max, low).map_err(be)
                    }
                    _ => {
                        // i32 (booleans are i32 words): negative ones wrap to huge.
                        self.b.bitcast(u, None, v).map_err(be)
                    }
                }
            }
        }
    }

    fn push_constant(&mut self, cx: &Cx, slot: u32) -> R<Word> {
        let up = self.ptr(StorageClass::PushConstant, self.u32_t);
        let k = self.c_u32(slot);
        let p = self.b.access_chain(up, None, cx.pc, [k]).map_err(be)?;
        self.load(self.u32_t, p)
    }

    fn expr(&mut self, cx: &Cx, e: &KExpr, ix: Ix) -> R<Word> {
        if self.exact32 && self.guard.is_none() && !self.exact_only && exact32::guardable(e) {
            return self.guarded_expr(cx, e, ix);
        }
        self.expr_inner(cx, e, ix)
    }

    fn expr_inner(&mut self, cx: &Cx, e: &KExpr, ix: Ix) -> R<Word> {
        match e {
            KExpr::Load { binding, index, .. } => {
                let idx = self.iexpr(cx, index, ix)?;
                self.load_elem(cx, *binding, idx)
            }
            KExpr::Operand { k, .. } => Ok(self.operands[*k as usize & 1]),
            KExpr::Staged { dy, dx, .. } => self.staged(*dy, *dx),
            KExpr::WindowFold { .. } => self.window_fold(e),
            KExpr::SortedKey {
                binding,
                elem,
                down,
                index,
            } => {
                let i = self.iexpr(cx, index, ix)?;
                self.sorted_key(cx, *binding, *elem, *down, i)
            }
            KExpr::Iota { index, origin } => {
                let i = self.iexpr(cx, index, ix)?;
                let o = self.c_u32(*origin as u32);
                let u = self.uadd(i, o)?;
                let it = self.ty(ElemType::I32);
                self.b.bitcast(it, None, u).map_err(be)
            }
            KExpr::Select { when, then, els } => {
                let mut cond = None;
                for (a, b) in when {
                    let a = self.iexpr(cx, a, ix)?;
                    let b = self.iexpr(cx, b, ix)?;
                    let c = self.ult(a, b)?;
                    cond = Some(match cond {
                        None => c,
                        Some(p) => self.b.logical_and(self.bool_t, None, p, c).map_err(be)?,
                    });
                }
                let cond = match cond {
                    Some(c) => c,
                    None => self.b.constant_true(self.bool_t),
                };
                self.choose(cx, cond, then, els, ix)
            }
            KExpr::If { cond, then, els } => {
                // A boolean: an i32 word holding 0 or 1.
                let c = self.expr(cx, cond, ix)?;
                let zero = self.scalar(Scalar::Bool(false));
                let c = self.b.i_not_equal(self.bool_t, None, c, zero).map_err(be)?;
                self.choose(cx, c, then, els, ix)
            }
            KExpr::Const(s) => Ok(self.scalar(*s)),
            KExpr::Roll {
                n,
                index,
                state,
                elem,
                origin,
                offset,
                checks,
            } => self.roll(cx, n, index, state, (*elem, *origin, *offset, *checks), ix),
            KExpr::Fail { elem, bit } => {
                let t = self.b.constant_true(self.bool_t);
                self.raise(cx, Some(*bit), t)?;
                Ok(self.scalar(Scalar::I32(0).cast(*elem)))
            }
            KExpr::Cast { to, arg } => {
                let v = self.expr(cx, arg, ix)?;
                self.convert(v, arg.elem(), *to)
            }
            KExpr::Unary {
                op,
                elem,
                arg,
                error_bit,
            } => {
                let raw = self.expr(cx, arg, ix)?;
                self.unary(cx, *op, arg.elem(), *elem, raw, *error_bit)
            }
            KExpr::Binary {
                op,
                elem,
                lhs,
                rhs,
                error_bit,
            } => {
                if op.is_comparison() {
                    if let Some(r) = self.int_const_compare(cx, *op, lhs, rhs, ix)? {
                        return Ok(r);
                    }
                }
                let a = self.expr(cx, lhs, ix)?;
                let b = self.expr(cx, rhs, ix)?;
                let circle = match **lhs {
                    KExpr::Const(s) => s.as_i64(),
                    _ => None,
                };
                self.binary(cx, *op, lhs.elem(), *elem, a, b, circle, *error_bit)
            }
        }
    }

    /// `then` where `cond` holds, else `els`: only the chosen one is evaluated.
    fn choose(&mut self, cx: &Cx, cond: Word, then: &KExpr, els: &KExpr, ix: Ix) -> R<Word> {
        let t = self.ty(then.elem());
        let var = self.local(t);
        self.if_else(
            cond,
            |e| {
                let v = e.expr(cx, then, ix)?;
                e.store(var, v)
            },
            |e| {
                let v = e.expr(cx, els, ix)?;
                e.store(var, v)
            },
        )?;
        self.load(t, var)
    }

    // ---- kernels ----

    fn kernel(&mut self, k: &Kernel, name: &str) -> R<()> {
        // A scan's tile shape is fixed here (one variable per element it holds).
        self.items_n = k.items_per_thread.max(1);
        self.wg_n = k.workgroup_size.max(1);
        self.float64 = k.float64;
        self.exact32 = k.exact32();
        self.flush_sim = self.exact32 && k.flush_f32;
        self.ct = k.ct;
        self.lookback_budget = k.lookback_budget;
        self.lookback_trips = None;
        // Bindings: set 0, binding i.
        let mut cx = Cx {
            bindings: vec![],
            status: None,
            interface: vec![],
            shared: 0,
            n: 0,
            lid: 0,
            group: 0,
            groups: 0,
            pc: 0,
            push_base: k.kind.fixed_push(),
            combine: k.combine.clone(),
            windows: vec![],
            numbers: vec![],
            window_bytes: k.window_bytes,
            status_views: StatusViews::Flagged,
            overflow: None,
        };
        // Descriptor bindings in order, a split array's windows consecutively.
        let mut number = 0;
        for bnd in &k.bindings {
            let words = bnd.status || bnd.atomic;
            let elem = if words { ElemType::I32 } else { bnd.elem };
            let st = if words {
                self.status_struct()
            } else {
                self.buffer_struct(elem)
            };
            let p = self.ptr(StorageClass::StorageBuffer, st);
            cx.numbers.push(number);
            let mut vars = vec![];
            for _ in 0..bnd.windows.max(1) {
                let var = self.b.variable(p, None, StorageClass::StorageBuffer, None);
                self.b
                    .decorate(var, Decoration::DescriptorSet, [Operand::LiteralBit32(0)]);
                self.b
                    .decorate(var, Decoration::Binding, [Operand::LiteralBit32(number)]);
                number += 1;
                if !bnd.writable {
                    self.b.decorate(var, Decoration::NonWritable, []);
                }
                if bnd.shared_between_groups {
                    // Written by one workgroup and read by another while the kernel runs.
                    self.b.decorate(var, Decoration::Coherent, []);
                }
                vars.push(var);
            }
            if bnd.status {
                cx.status = Some(vars[0]);
            }
            cx.bindings.push((vars[0], elem));
            cx.windows.push(vars);
        }
        let pc_t = self.push_struct(k.push_constants.len());
        let pc_p = self.ptr(StorageClass::PushConstant, pc_t);
        let pc = self
            .b
            .variable(pc_p, None, StorageClass::PushConstant, None);

        cx.pc = pc;
        let shared_elem = match &k.kind {
            KernelKind::Reduce { expr, .. }
            | KernelKind::ReduceAxis {
                expr,
                unit: Unit::Workgroup,
                ..
            } => Some(expr.elem()),
            _ => None,
        };
        if let Some(t) = shared_elem {
            cx.shared = self.shared_array(t);
        }
        let fn_t = self.b.type_function(self.void, vec![]);
        let f = self
            .b
            .begin_function(self.void, None, FunctionControl::NONE, fn_t)
            .map_err(be)?;
        self.b.begin_block(None).map_err(be)?;
        let up = self.ptr(StorageClass::PushConstant, self.u32_t);
        let zero = self.c_u32(0);
        let np = self.b.access_chain(up, None, pc, [zero]).map_err(be)?;
        cx.n = self.load(self.u32_t, np)?;
        self.opaque = cx.n;
        if let Some(n) = &k.n_from {
            // The element count was computed on the device.
            cx.n = self.iexpr(&cx, n, Ix::flat(zero))?;
        }
        cx.lid = self.load_builtin(&mut cx, BuiltIn::LocalInvocationId)?;
        cx.group = self.load_builtin(&mut cx, BuiltIn::WorkgroupId)?;
        cx.groups = self.load_builtin(&mut cx, BuiltIn::NumWorkgroups)?;

        cx.overflow = k.kind.overflow();
        // A loop the device would cut short raises a device error instead.
        for g in &k.trip_guards {
            let v = self.push_constant(&cx, g.push)?;
            let most = self.c_u32(g.most);
            let over = self.ult(most, v)?;
            self.raise(&cx, Some(g.bit), over)?;
        }
        // The other of two ways to a result: every workgroup returns at once.
        if let Some(g) = k.guard {
            let z = self.scalar(Scalar::I32(0));
            for (word, is_zero) in [(g.zero, true), (g.nonzero, false)] {
                let Some(word) = word else { continue };
                let at = self.c_u32(word);
                let w = self.load_elem(&cx, g.binding, at)?;
                let run = if is_zero {
                    self.b.i_equal(self.bool_t, None, w, z)
                } else {
                    self.b.i_not_equal(self.bool_t, None, w, z)
                }
                .map_err(be)?;
                self.return_unless(run)?;
            }
        }
        match &k.kind {
            KernelKind::Map { expr, out } => self.map_kernel(&mut cx, expr, *out)?,
            KernelKind::Stencil {
                expr,
                out,
                x,
                fill,
                staged,
                lo,
                hi,
                tile,
                rows_each,
            } => {
                let shape = stencil::StencilShape {
                    out: *out,
                    x: *x,
                    fill: *fill,
                    staged: *staged,
                    lo: *lo,
                    hi: *hi,
                    tile: *tile,
                    rows_each: *rows_each,
                };
                self.stencil_kernel(&mut cx, expr, &shape)?
            }
            KernelKind::ScatterAdd {
                op,
                index,
                value,
                out,
                slots,
            } => self.scatter_add_kernel(&cx, *op, index, value, *out, slots)?,
            KernelKind::QrStep {
                a,
                b,
                diag,
                scale,
                taus,
                block,
                singular,
                shape,
            } => self.qr_step_kernel(
                &mut cx,
                [*a, *b, *diag, *scale, *taus],
                *block,
                *singular,
                *shape,
            )?,
            KernelKind::BackSubst {
                a,
                b,
                diag,
                out,
                limit,
                range,
            } => self.back_subst_kernel(&mut cx, *a, *b, *diag, *out, *limit, *range)?,
            KernelKind::Scatter {
                index,
                value,
                owner,
                out,
                guard,
            } => self.scatter_kernel(&mut cx, index, value, *owner, *out, *guard)?,
            KernelKind::Reduce {
                op,
                expr,
                out,
                finish,
                ..
            } => self.reduce_kernel(&mut cx, *op, expr, *out, finish.as_ref())?,
            KernelKind::ScanChained {
                op,
                expr,
                out,
                flags,
                aggregates,
                inclusive,
                counter,
                every_subgroup_looks_back,
                status,
                lookback_subgroup,
                wide_lookback,
                shuffle,
                tiles_by_workgroup,
                compact,
                subnormals,
                ..
            } => {
                cx.status_views = match status {
                    ScanStatus::Flagged => StatusViews::Flagged,
                    ScanStatus::Packed => StatusViews::Packed(self.u64_view(&cx, *flags)?),
                    ScanStatus::Wide => StatusViews::Wide {
                        aggregates: self.u64_view(&cx, *aggregates)?,
                        inclusive: self.u64_view(&cx, *inclusive)?,
                    },
                };
                self.scan_kernel(
                    &mut cx,
                    *op,
                    expr,
                    *out,
                    [*flags, *aggregates, *inclusive, *counter],
                    *every_subgroup_looks_back,
                    *tiles_by_workgroup,
                    *shuffle,
                    compact.as_ref(),
                    *lookback_subgroup,
                    *wide_lookback,
                    *subnormals,
                )?
            }
            KernelKind::SegScan { value, flag, shape } => {
                self.seg_scan_kernel(&cx, value, flag, shape)?
            }
            KernelKind::ReduceAxis {
                fold,
                expr,
                out,
                unit,
                ..
            } => self.reduce_axis_kernel(&mut cx, *fold, expr, *out, *unit)?,
            KernelKind::ScanAxis {
                fold,
                expr,
                out,
                out_index,
                unit,
                ..
            } => self.scan_axis_kernel(&mut cx, *fold, expr, *out, out_index, *unit)?,
            KernelKind::MatMul {
                a,
                b,
                fold,
                pair,
                out,
                tile,
                bits,
                checked_sum,
                ..
            } => self.matmul_kernel(
                &mut cx,
                (a, b),
                (*fold, pair.as_ref(), *bits),
                (*out, *checked_sum),
                *tile,
            )?,
            KernelKind::PackBits {
                arg,
                out,
                cols,
                invert,
            } => self.pack_bits_kernel(&mut cx, arg, *out, *cols, *invert)?,
            KernelKind::PackI8 {
                arg,
                out,
                range,
                slice,
                cols,
            } => self.pack_i8_kernel(&mut cx, arg, *out, range.as_ref(), *slice, *cols)?,
            KernelKind::RangeFlag { arg, limits, out } => {
                self.range_flag_kernel(&mut cx, arg, limits, *out)?
            }
            KernelKind::CoopMatMul { a, b, out, tile } => {
                self.coop_matmul_kernel(&mut cx, (*a, *b, *out), *tile)?
            }
            KernelKind::IndirectArgs {
                n,
                per_group,
                max,
                out,
            } => {
                let zero = self.c_u32(0);
                let first = self
                    .b
                    .i_equal(self.bool_t, None, cx.lid, zero)
                    .map_err(be)?;
                let cxr = &cx;
                self.if_then(first, |e| {
                    let n = e.iexpr(cxr, n, Ix::flat(zero))?;
                    let per = e.c_u32(*per_group);
                    let pm1 = e.c_u32(per_group - 1);
                    let up = e.uadd(n, pm1)?;
                    let g = e.b.u_div(e.u32_t, None, up, per).map_err(be)?;
                    let mx = e.c_u32(*max);
                    let g = e.umin(g, mx)?;
                    let one = e.c_u32(1);
                    let is0 = e.b.i_equal(e.bool_t, None, g, zero).map_err(be)?;
                    let g = e.b.select(e.u32_t, None, is0, one, g).map_err(be)?;
                    let it = e.ty(ElemType::I32);
                    let gi = e.b.bitcast(it, None, g).map_err(be)?;
                    let onei = e.scalar(Scalar::I32(1));
                    e.store_elem(cxr, *out, zero, gi)?;
                    let c1 = e.c_u32(1);
                    e.store_elem(cxr, *out, c1, onei)?;
                    let c2 = e.c_u32(2);
                    e.store_elem(cxr, *out, c2, onei)
                })?;
            }
            KernelKind::RadixKeys {
                key,
                out,
                down,
                hist,
                range: None,
            } => self.radix_keys_kernel(&mut cx, key, *out, *down, *hist)?,
            KernelKind::RadixKeys {
                key,
                out,
                down,
                range: Some(range),
                ..
            } => self.radix_keys_ranged(&mut cx, key, *out, *down, *range)?,
            KernelKind::RadixArgs { range, args } => {
                self.radix_args_kernel(&mut cx, *range, args)?
            }
            KernelKind::RadixSettle {
                range,
                keys,
                idx,
                idx_out,
                origin,
                passes,
                sorted_keys,
            } => self.radix_settle_kernel(
                &mut cx,
                *range,
                *keys,
                *idx,
                *idx_out,
                *origin,
                *passes,
                *sorted_keys,
            )?,
            KernelKind::RadixCount {
                keys,
                wide,
                counts,
                range,
            } => {
                self.relative_keys(&cx, *range)?;
                self.radix_count_kernel(&mut cx, *keys, *wide, *counts)?
            }
            KernelKind::RadixScatter {
                keys,
                idx,
                places,
                keys_out,
                idx_out,
                wide,
                origin,
                subgroups,
                items,
                tile,
                wrong_subgroups,
                range,
            } => {
                self.relative_keys(&cx, *range)?;
                self.radix_scatter_kernel(
                    &mut cx,
                    *keys,
                    *idx,
                    places,
                    *keys_out,
                    *idx_out,
                    *wide,
                    *origin,
                    [*subgroups, *items, *tile, *wrong_subgroups],
                )?
            }
            KernelKind::SortStep {
                keys,
                idx,
                down,
                origin,
            } => self.sort_step_kernel(&mut cx, *keys, *idx, *down, *origin)?,
            KernelKind::Search {
                keys,
                order,
                needle,
                out,
                kind,
                tolerant,
            } => self.search_kernel(&mut cx, *keys, *order, needle, *out, *kind, *tolerant)?,
            KernelKind::HashInsert {
                key,
                table,
                zero,
                index,
            } => self.hash_insert_kernel(&cx, key, (*table, *zero), *index)?,
            KernelKind::HashProbe {
                needle,
                table,
                zero,
                out,
                kind,
            } => self.hash_probe_kernel(&cx, needle, (*table, *zero), *out, *kind)?,
        }
        self.b.ret().map_err(be)?;
        self.b.end_function().map_err(be)?;
        let mut iface = cx.interface.clone();
        iface.sort_unstable();
        self.b
            .entry_point(ExecutionModel::GLCompute, f, name, iface);
        self.b
            .execution_mode(f, ExecutionMode::LocalSize, [1, 1, 1]);
        if k.maximal_reconvergence {
            self.b.extension("SPV_KHR_maximal_reconvergence");
            self.b
                .execution_mode(f, ExecutionMode::MaximallyReconvergesKHR, []);
        }
        // Subnormals stay, as on the reference (`2*¯1070` and `1e¯40=0` are not 0).
        let widths = [
            (k.denorm_preserve_f32, 32),
            (self.uses_f64 && k.denorm_preserve_f64, 64),
        ];
        for (_, width) in widths.into_iter().filter(|w| w.0) {
            if !self.denorm_preserve {
                self.denorm_preserve = true;
                self.b.extension("SPV_KHR_float_controls");
                self.b.capability(Capability::DenormPreserve);
            }
            self.b
                .execution_mode(f, ExecutionMode::DenormPreserve, [width]);
        }
        Ok(())
    }

    /// Push constants: `count` u32 fields at offsets 0, 4, …
    fn push_struct(&mut self, count: usize) -> Word {
        if let Some(&id) = self.push_structs.get(&count) {
            return id;
        }
        let fields: Vec<Word> = (0..count).map(|_| self.u32_t).collect();
        let st = self.b.type_struct(fields);
        self.b.decorate(st, Decoration::Block, []);
        for i in 0..count {
            self.b.member_decorate(
                st,
                i as u32,
                Decoration::Offset,
                [Operand::LiteralBit32(4 * i as u32)],
            );
        }
        self.push_structs.insert(count, st);
        st
    }

    fn status_struct(&mut self) -> Word {
        if let Some(id) = self.status_struct {
            return id;
        }
        // A u32 runtime array; distinct from the i32 data struct so atomics see u32.
        let st = self.block_of(self.u32_t, 4);
        self.status_struct = Some(st);
        st
    }
}
