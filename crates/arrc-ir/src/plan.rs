//! Kernel planning: fusion of a verified IR function into GPU kernels and the dispatch
//! sequence that runs them.
//!
//! Fusion rules:
//! - elementwise instructions (casts, scalar functions, `⍳`) with one use are computed
//!   inside their user's kernel; scalar literals become constants in the kernel;
//! - a reduction or scan reads its argument's fused expression directly (`+/x×x` reads
//!   `x` once and writes no temporary);
//! - a value is materialized into a buffer only when it is the result, a reduction or
//!   scan, or used more than once.
//!
//! Lengths are [`Count`]s evaluated at run time from the parameters' lengths, and reach
//! kernels as push constants, so one kernel serves every length. The workgroup size is
//! a specialization constant (id 0).

use crate::array::{Array, ElemType, Scalar};
use crate::error::{err, Error, ErrorClass, Result};
use crate::ir::{Dim, Inst, Value};
use crate::scalar::{BinOp, UnOp};
use crate::verify::Verified;
use arrc_syntax::Span;
use serde::Serialize;

/// Planner settings.
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Invocations per workgroup (the default of specialization constant 0).
    pub workgroup_size: u32,
    /// Most workgroups in the first pass of a reduction (its partials fit one workgroup's
    /// loop in the second pass).
    pub reduce_groups: u32,
    /// Most workgroups of an elementwise kernel (a grid-stride loop covers the rest).
    pub map_groups: u32,
    /// Elements each invocation of a reduction reads per loop trip (the default of
    /// specialization constant 1): several independent loads in flight.
    pub items_per_thread: u32,
    /// Polls of a predecessor tile's flag before a scan reduces that tile itself (the
    /// default of specialization constant 2).
    pub spin_limit: u32,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            workgroup_size: 256,
            reduce_groups: 1024,
            map_groups: 65535,
            items_per_thread: 16,
            spin_limit: 2048,
        }
    }
}

/// A length known at run time.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Count {
    /// The product of these axis lengths.
    Product(Vec<Dim>),
    /// `max(1, min(ceil(of / per_group), max))`: a grid size.
    Groups {
        of: Box<Count>,
        per_group: u32,
        max: u32,
    },
    /// `of × times`.
    Scaled { of: Box<Count>, times: u32 },
}

impl Count {
    pub fn known(n: u64) -> Count {
        Count::Product(vec![Dim::Known(n)])
    }

    /// Evaluates with `syms[i]` the value of length symbol `i`.
    pub fn eval(&self, syms: &[u64]) -> u64 {
        match self {
            Count::Product(dims) => dims
                .iter()
                .map(|d| match d {
                    Dim::Known(n) => *n,
                    Dim::Sym(s) => syms.get(s.0 as usize).copied().unwrap_or(0),
                })
                .product(),
            Count::Scaled { of, times } => of.eval(syms) * *times as u64,
            Count::Groups { of, per_group, max } => of
                .eval(syms)
                .div_ceil(*per_group as u64)
                .clamp(1, *max as u64),
        }
    }
}

/// Where a buffer's contents come from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BufferRole {
    /// The program's parameter of this index, uploaded by the host.
    Param(u32),
    /// A literal array, uploaded by the host.
    Const(Array),
    /// Written and read by kernels only.
    Temp,
    /// The program's result, read back by the host.
    Result,
    /// One u32 of error flags, zeroed before the first dispatch; bit `i` set means
    /// `Plan::errors[i]` happened.
    Status,
    /// Kernel state zeroed before the first dispatch (scan tile flags and counters).
    Zeroed,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Buffer {
    pub elem: ElemType,
    pub len: Count,
    pub role: BufferRole,
}

/// An expression computed per element inside a kernel.
#[derive(Clone, Debug, PartialEq)]
pub enum KExpr {
    /// Element `i` of a binding (element 0 when `broadcast`).
    Load {
        binding: u32,
        elem: ElemType,
        broadcast: bool,
    },
    /// `i + 1` as i32: a fused `⍳`.
    Iota,
    Const(Scalar),
    Cast {
        to: ElemType,
        arg: Box<KExpr>,
    },
    Unary {
        op: UnOp,
        elem: ElemType,
        arg: Box<KExpr>,
    },
    /// `error_bit` is set for functions that can raise an error (`÷`).
    Binary {
        op: BinOp,
        elem: ElemType,
        lhs: Box<KExpr>,
        rhs: Box<KExpr>,
        error_bit: Option<u32>,
    },
}

impl KExpr {
    pub fn elem(&self) -> ElemType {
        match self {
            KExpr::Load { elem, .. } | KExpr::Unary { elem, .. } | KExpr::Binary { elem, .. } => {
                *elem
            }
            KExpr::Cast { to, .. } => *to,
            KExpr::Iota => ElemType::I32,
            KExpr::Const(s) => s.elem_type(),
        }
    }

    /// Whether evaluating it may set a status bit.
    pub fn may_fail(&self) -> bool {
        match self {
            KExpr::Binary {
                lhs,
                rhs,
                error_bit,
                ..
            } => error_bit.is_some() || lhs.may_fail() || rhs.may_fail(),
            KExpr::Cast { arg, .. } | KExpr::Unary { arg, .. } => arg.may_fail(),
            _ => false,
        }
    }
}

/// What a kernel computes. Every kernel is a 1-D grid over `n` (push constant 0).
#[derive(Clone, Debug, PartialEq)]
pub enum KernelKind {
    /// `out[i] = expr(i)` for `i < n`, grid-stride.
    Map { expr: KExpr, out: u32 },
    /// `out[g] = op/ expr(i)` over workgroup `g`'s grid-stride share.
    Reduce { op: BinOp, expr: KExpr, out: u32 },
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
    },
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
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Kernel {
    pub name: String,
    #[serde(skip)]
    pub kind: KernelKind,
    pub bindings: Vec<Binding>,
    /// Names of the u32 push constants, in order at offsets 0, 4, ….
    pub push_constants: Vec<&'static str>,
    /// Default of specialization constant 0, the workgroup size.
    pub workgroup_size: u32,
    /// Default of specialization constant 1, elements per invocation per loop trip.
    pub items_per_thread: u32,
    /// Default of specialization constant 2, the scan lookback's spin limit.
    pub spin_limit: u32,
}

/// One dispatch: a kernel, the buffers bound to its bindings in order, its push
/// constants and its workgroup count. A barrier separates consecutive dispatches.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Dispatch {
    pub kernel: usize,
    pub buffers: Vec<usize>,
    pub push: Vec<Count>,
    pub groups: Count,
}

/// An error a kernel can raise at run time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceError {
    pub class: ErrorClass,
    pub message: String,
    pub span: Span,
}

/// Kernels, buffers and dispatches for one function.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    pub buffers: Vec<Buffer>,
    pub kernels: Vec<Kernel>,
    pub dispatches: Vec<Dispatch>,
    pub result: usize,
    pub result_shape: Vec<Dim>,
    pub status: Option<usize>,
    pub errors: Vec<DeviceError>,
    /// Which parameter axis each length symbol stands for.
    pub syms: Vec<(u32, u32)>,
}

impl Plan {
    pub fn error_for(&self, status: u32) -> Option<Error> {
        (0..32)
            .find(|b| status & (1 << b) != 0)
            .and_then(|b| self.errors.get(b as usize))
            .map(|e| Error::new(e.class, e.message.clone(), e.span.clone()))
    }
}

struct Planner<'a> {
    v: &'a Verified<'a>,
    opts: PlanOptions,
    plan: Plan,
    /// The buffer holding each value, once materialized.
    buffer_of: Vec<Option<usize>>,
}

/// Bindings of a kernel being built, from plan buffers.
#[derive(Default)]
struct KernelBindings {
    buffers: Vec<usize>,
    bindings: Vec<Binding>,
}

impl KernelBindings {
    fn bind(&mut self, buffer: usize, elem: ElemType, writable: bool) -> u32 {
        if let Some(i) = self.buffers.iter().position(|&b| b == buffer) {
            return i as u32;
        }
        let i = self.buffers.len() as u32;
        self.buffers.push(buffer);
        self.bindings.push(Binding {
            binding: i,
            elem,
            writable,
            status: false,
            shared_between_groups: false,
            atomic: false,
        });
        i
    }
}

/// Plans the kernels of a verified function.
pub fn plan(v: &Verified<'_>, opts: &PlanOptions) -> Result<Plan> {
    let f = v.func;
    let mut p = Planner {
        v,
        opts: opts.clone(),
        plan: Plan {
            buffers: vec![],
            kernels: vec![],
            dispatches: vec![],
            result: 0,
            result_shape: vec![],
            status: None,
            errors: vec![],
            syms: f.syms.clone(),
        },
        buffer_of: vec![None; f.insts.len()],
    };
    let result = f.result.expect("verified");
    for i in 0..f.insts.len() {
        let val = Value(i as u32);
        let is_result = val == result;
        if v.uses[i] == 0 {
            // Dead values (an unused parameter, a literal replaced by its cast) cost nothing.
            continue;
        }
        match f.inst(val) {
            Inst::Param { index } => {
                let b = p.buffer(val, BufferRole::Param(*index));
                p.buffer_of[i] = Some(b);
            }
            Inst::Const(a) if a.len() != 1 => {
                let b = p.buffer(val, BufferRole::Const(a.clone()));
                p.buffer_of[i] = Some(b);
            }
            Inst::Reduce { op, arg } => p.reduce(val, *op, *arg, is_result)?,
            Inst::Scan { op, arg } => p.scan(val, *op, *arg, is_result)?,
            inst if inst.is_elementwise() && (is_result || v.uses[i] > 1) => p.map(val, is_result),
            _ => {}
        }
    }
    // A result that no kernel computes (a parameter or literal) is copied by one.
    if p.plan.buffers.get(p.plan.result).map(|b| &b.role) != Some(&BufferRole::Result)
        || p.plan.dispatches.is_empty()
    {
        p.map(result, true);
    }
    p.plan.result_shape = f.ty(result).shape.clone();
    Ok(p.plan)
}

impl Planner<'_> {
    fn len_of(&self, v: Value) -> Count {
        Count::Product(self.v.func.ty(v).shape.clone())
    }

    fn buffer(&mut self, v: Value, role: BufferRole) -> usize {
        let ty = self.v.func.ty(v);
        self.plan.buffers.push(Buffer {
            elem: ty.elem,
            len: Count::Product(ty.shape.clone()),
            role,
        });
        self.plan.buffers.len() - 1
    }

    fn new_buffer(&mut self, elem: ElemType, len: Count, role: BufferRole) -> usize {
        self.plan.buffers.push(Buffer { elem, len, role });
        self.plan.buffers.len() - 1
    }

    /// The fused expression computing `v` per element inside a kernel.
    fn expr(&mut self, v: Value, kb: &mut KernelBindings) -> KExpr {
        let f = self.v.func;
        let ty = f.ty(v);
        if let Some(b) = self.buffer_of[v.index()] {
            let binding = kb.bind(b, ty.elem, false);
            return KExpr::Load {
                binding,
                elem: ty.elem,
                broadcast: ty.rank() == 0 || ty.is_singleton(),
            };
        }
        match f.inst(v) {
            Inst::Const(a) => KExpr::Const(a.data.get(0)),
            Inst::Iota { .. } => KExpr::Iota,
            Inst::Cast(x) => KExpr::Cast {
                to: ty.elem,
                arg: Box::new(self.expr(*x, kb)),
            },
            Inst::Unary { op, arg } => KExpr::Unary {
                op: *op,
                elem: ty.elem,
                arg: Box::new(self.expr(*arg, kb)),
            },
            Inst::Binary { op, lhs, rhs } => {
                let error_bit = (*op == BinOp::Div)
                    .then(|| self.error_bit(ErrorClass::Domain, "division by zero", f.span(v)));
                KExpr::Binary {
                    op: *op,
                    elem: ty.elem,
                    lhs: Box::new(self.expr(*lhs, kb)),
                    rhs: Box::new(self.expr(*rhs, kb)),
                    error_bit,
                }
            }
            // Params, non-scalar consts, reductions and scans are always materialized
            // before their users (instructions are planned in order).
            other => unreachable_materialized(other),
        }
    }

    fn error_bit(&mut self, class: ErrorClass, message: &str, span: Span) -> u32 {
        let bit = self.plan.errors.len().min(31) as u32;
        if self.plan.errors.len() < 32 {
            self.plan.errors.push(DeviceError {
                class,
                message: message.to_string(),
                span,
            });
        }
        bit
    }

    /// Adds the status binding to a kernel whose expressions may fail.
    fn bind_status(&mut self, kb: &mut KernelBindings, exprs: &[&KExpr]) {
        if exprs.iter().any(|e| e.may_fail()) {
            let s = match self.plan.status {
                Some(s) => s,
                None => {
                    let s = self.new_buffer(ElemType::I32, Count::known(1), BufferRole::Status);
                    self.plan.status = Some(s);
                    s
                }
            };
            let i = kb.bind(s, ElemType::I32, true);
            kb.bindings[i as usize].status = true;
        }
    }

    fn push_kernel(
        &mut self,
        name: &str,
        kind: KernelKind,
        kb: KernelBindings,
        push: Vec<(&'static str, Count)>,
        groups: Count,
    ) {
        let k = self.plan.kernels.len();
        self.plan.kernels.push(Kernel {
            name: format!("{name}_{k}"),
            kind,
            bindings: kb.bindings,
            push_constants: push.iter().map(|(n, _)| *n).collect(),
            workgroup_size: self.opts.workgroup_size,
            items_per_thread: self.opts.items_per_thread,
            spin_limit: self.opts.spin_limit,
        });
        self.plan.dispatches.push(Dispatch {
            kernel: k,
            buffers: kb.buffers,
            push: push.into_iter().map(|(_, c)| c).collect(),
            groups,
        });
    }

    fn result_or_temp(&mut self, v: Value, is_result: bool) -> usize {
        let b = self.buffer(
            v,
            if is_result {
                BufferRole::Result
            } else {
                BufferRole::Temp
            },
        );
        if is_result {
            self.plan.result = b;
        }
        b
    }

    /// Workgroups for a grid-stride loop over `n` elements, `items` per invocation per
    /// trip, at most `max`.
    fn grid(&self, n: &Count, max: u32) -> Count {
        Count::Groups {
            of: Box::new(n.clone()),
            per_group: self.opts.workgroup_size * self.opts.items_per_thread,
            max,
        }
    }

    fn map(&mut self, v: Value, is_result: bool) {
        let mut kb = KernelBindings::default();
        let expr = self.expr(v, &mut kb);
        let b = self.result_or_temp(v, is_result);
        let out = kb.bind(b, self.v.func.ty(v).elem, true);
        self.bind_status(&mut kb, &[&expr]);
        let n = self.len_of(v);
        let groups = self.grid(&n, self.opts.map_groups);
        self.push_kernel(
            "map",
            KernelKind::Map { expr, out },
            kb,
            vec![("n", n)],
            groups,
        );
        self.buffer_of[v.index()] = Some(b);
    }

    fn rank1(&self, what: &str, arg: Value, span: Span) -> Result<()> {
        if self.v.func.ty(arg).rank() != 1 {
            return Err(err::unsupported(
                format!(
                    "{what} of a rank-{} array is not supported on the GPU path yet",
                    self.v.func.ty(arg).rank()
                ),
                span,
            ));
        }
        Ok(())
    }

    fn reduce(&mut self, v: Value, op: BinOp, arg: Value, is_result: bool) -> Result<()> {
        self.rank1("reduction", arg, self.v.func.span(v))?;
        let elem = self.v.func.ty(v).elem;
        let n = self.len_of(arg);
        let groups = self.grid(&n, self.opts.reduce_groups);
        // Pass 1: each workgroup folds its grid-stride share into partials[g].
        let partials = self.new_buffer(elem, groups.clone(), BufferRole::Temp);
        let mut kb = KernelBindings::default();
        let expr = self.expr(arg, &mut kb);
        let out = kb.bind(partials, elem, true);
        self.bind_status(&mut kb, &[&expr]);
        let kind = KernelKind::Reduce { op, expr, out };
        self.push_kernel("reduce", kind, kb, vec![("n", n)], groups.clone());
        // Pass 2: one workgroup folds the partials, in a fixed order: the same input
        // gives the same bits on every run.
        let b = self.result_or_temp(v, is_result);
        let mut kb = KernelBindings::default();
        let pin = kb.bind(partials, elem, false);
        let out = kb.bind(b, elem, true);
        let expr = KExpr::Load {
            binding: pin,
            elem,
            broadcast: false,
        };
        let kind = KernelKind::Reduce { op, expr, out };
        self.push_kernel("reduce", kind, kb, vec![("n", groups)], Count::known(1));
        self.buffer_of[v.index()] = Some(b);
        Ok(())
    }

    fn scan(&mut self, v: Value, op: BinOp, arg: Value, is_result: bool) -> Result<()> {
        self.rank1("scan", arg, self.v.func.span(v))?;
        let elem = self.v.func.ty(v).elem;
        let n = self.len_of(arg);
        let tile = self.opts.workgroup_size * self.opts.items_per_thread;
        let tiles = Count::Groups {
            of: Box::new(n.clone()),
            per_group: tile,
            max: u32::MAX,
        };
        // One workgroup per tile.
        let groups = tiles.clone();
        let flags = self.new_buffer(ElemType::I32, tiles.clone(), BufferRole::Zeroed);
        let counter = self.new_buffer(ElemType::I32, Count::known(1), BufferRole::Zeroed);
        // Tile values travel as two u32 words each, written and read with atomics.
        let words = Count::Scaled {
            of: Box::new(tiles),
            times: 2,
        };
        let aggregates = self.new_buffer(ElemType::I32, words.clone(), BufferRole::Temp);
        let inclusive = self.new_buffer(ElemType::I32, words, BufferRole::Temp);
        let b = self.result_or_temp(v, is_result);
        let mut kb = KernelBindings::default();
        let expr = self.expr(arg, &mut kb);
        let out = kb.bind(b, elem, true);
        let shared = |kb: &mut KernelBindings, buf: usize, elem: ElemType, atomic: bool| {
            let i = kb.bind(buf, elem, true);
            kb.bindings[i as usize].shared_between_groups = true;
            kb.bindings[i as usize].atomic = atomic;
            i
        };
        let flags = shared(&mut kb, flags, ElemType::I32, true);
        let aggregates = shared(&mut kb, aggregates, ElemType::I32, true);
        let inclusive = shared(&mut kb, inclusive, ElemType::I32, true);
        let counter = shared(&mut kb, counter, ElemType::I32, true);
        self.bind_status(&mut kb, &[&expr]);
        let kind = KernelKind::ScanChained {
            op,
            expr,
            out,
            flags,
            aggregates,
            inclusive,
            counter,
        };
        self.push_kernel("scan", kind, kb, vec![("n", n)], groups);
        self.buffer_of[v.index()] = Some(b);
        Ok(())
    }
}

fn unreachable_materialized(inst: &Inst) -> KExpr {
    debug_assert!(false, "{inst:?} should have been materialized");
    KExpr::Const(Scalar::I32(0))
}
