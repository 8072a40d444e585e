//! The typed array IR.
//!
//! A [`Function`] is a list of instructions in SSA form: instruction `i` defines value
//! `vi`, and uses only values defined before it. Beside each instruction, side tables
//! hold its [`Type`] (element type and shape) and the source [`Span`] it came from.
//! Shapes are made of [`Dim`]s: a length known when compiling, or a symbol standing for
//! a parameter's length, bound when the program runs (a push constant on the device).

use crate::array::{Array, ElemType, Scalar};
use crate::scalar::{BinOp, UnOp};
use arrc_syntax::Span;
use std::collections::HashMap;
use std::fmt;

/// A value defined by an instruction: `v3` is defined by instruction 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

impl Value {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// A length symbol: the length of one axis of one parameter, known at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Sym(pub u32);

/// One axis length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Known(u64),
    Sym(Sym),
    /// A length computed on the device (the result of a compress), entry `i` of
    /// [`Function::dyn_bounds`] bounding it; it stays on the device.
    Dyn(u32),
}

/// In manifests a known length is a number and a symbol is a string `"n0"`.
impl serde::Serialize for Dim {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Dim::Known(n) => s.serialize_u64(*n),
            Dim::Sym(_) | Dim::Dyn(_) => s.serialize_str(&self.to_string()),
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(n) => write!(f, "{n}"),
            Dim::Sym(s) => write!(f, "n{}", s.0),
            Dim::Dyn(i) => write!(f, "d{i}"),
        }
    }
}

/// Element type and shape of a value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Type {
    pub elem: ElemType,
    pub shape: Vec<Dim>,
}

impl Type {
    pub fn scalar(elem: ElemType) -> Type {
        Type {
            elem,
            shape: vec![],
        }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// True when the value has exactly one element whatever the run-time lengths.
    pub fn is_singleton(&self) -> bool {
        self.shape.iter().all(|d| *d == Dim::Known(1))
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.elem)?;
        for (i, d) in self.shape.iter().enumerate() {
            if i > 0 {
                write!(f, ",")?;
            }
            write!(f, "{d}")?;
        }
        write!(f, "]")
    }
}

/// One IR instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Inst {
    /// The program's `index`th argument.
    Param {
        index: u32,
    },
    /// A literal array.
    Const(Array),
    /// Stands for a nested array while a statement is lowered (`lower/nested.rs`
    /// keeps its items: a dense array of higher rank, or a list of values). Nothing is
    /// computed for it: a use that reaches the verifier is NOT YET SUPPORTED (a
    /// function that does not take nested arrays on the GPU path was given one).
    /// `held` says how (`--emit ir` and `--emit plan` show it).
    Nested {
        held: String,
    },
    /// `⍳len`: the integers origin…origin+len-1 (origin is ⎕IO), i32.
    Iota {
        len: Dim,
        origin: i32,
    },
    /// The length of `of` along `axis` as an i32 scalar, also one computed on the
    /// device (`≢` of a compress).
    Length {
        of: Value,
        axis: usize,
    },
    /// Element-type conversion to the instruction's result type.
    Cast(Value),
    Unary {
        op: UnOp,
        arg: Value,
    },
    /// A scalar function with scalar extension: operands have the result's shape or are
    /// singletons.
    Binary {
        op: BinOp,
        lhs: Value,
        rhs: Value,
    },
    /// `then` where `cond` (boolean) is 1, else `els`, element by element with scalar
    /// extension; only the chosen side is computed (a dfn guard on scalars:
    /// `{⍵=0:0 ⋄ ÷⍵}¨x`).
    Select {
        cond: Value,
        then: Value,
        els: Value,
    },
    /// `op/[axis] arg`: folds away one axis.
    Reduce {
        op: BinOp,
        arg: Value,
        axis: usize,
    },
    /// `op\[axis] arg` (inclusive).
    Scan {
        op: BinOp,
        arg: Value,
        axis: usize,
    },
    /// The inclusive `op` scan of the vector `arg` restarted at each item where the
    /// booleans `starts` (of its length) are 1, the first item always starting a
    /// run: item `i` folds its run's items from the run's start through `i` (`+`
    /// of floats: `⌸`'s sums of groups, which are runs of sorted keys). Only a run's
    /// last item is read as a result: a float total beyond the type's range raises
    /// its DOMAIN ERROR there alone, and other items may hold values past it.
    SegScan {
        op: BinOp,
        arg: Value,
        starts: Value,
    },
    /// A structural function computed as an index remapping: each element of the
    /// result (its type's shape) is one element of `arg`, or a fill.
    Gather {
        arg: Value,
        map: Gather,
    },
    /// `lhs,[axis] rhs` for arguments of the result's rank that agree on every other
    /// axis.
    Catenate {
        lhs: Value,
        rhs: Value,
        axis: usize,
    },
    /// `lhs fold.pair rhs` of two matrices, in tiles: `+.×` (operands already of the
    /// result's element type), or an inner product whose fold is associative and
    /// whose pairs are computed alike (operands of `pair`'s operand type; chosen by
    /// `lower/folds.rs`'s `tiled_inner`).
    MatMul {
        lhs: Value,
        rhs: Value,
        fold: BinOp,
        pair: BinOp,
    },
    /// `arg[i;j;…]`: one entry per axis of `arg`, an integer array of indices (⎕IO=1)
    /// or `None` for the whole axis. The result's axes are the indices' axes in order.
    Index {
        arg: Value,
        axes: Vec<Option<Value>>,
    },
    /// `mask/arg` of a vector by a boolean vector of its length, or by i32 counts of
    /// its length, none negative (replicate: each item that many times, the
    /// result's bound in [`Function::dyn_bounds`] covering their sum): the result's
    /// length is computed on the device.
    Compress {
        mask: Value,
        arg: Value,
    },
    /// `by⌽[axis] arg` with computed or per-row amounts: `by` (an integer scalar, or
    /// an array of `arg`'s shape without `axis`) rotates each line along `axis`.
    Rotate {
        arg: Value,
        by: Value,
        axis: usize,
    },
    /// `f/[axis] arg` (or `f\[axis]` when `scan`) with `f` a dfn made of scalar
    /// functions: an exact right fold, each step `comb` with ⍺ an item and ⍵ the
    /// fold so far (both of the result's type, to which `arg` is already converted).
    FoldDfn {
        comb: Comb,
        arg: Value,
        axis: usize,
        scan: bool,
    },
    /// `⍋arg` (or `⍒arg` when `down`) of a vector: the permutation that sorts it,
    /// stable, as indices from `origin`.
    Grade {
        arg: Value,
        down: bool,
        origin: i32,
    },
    /// For each item `i` of `index` (i32 group numbers from 0, below the result's
    /// length), folds item `i` of `values` (the same length, or a singleton) into the
    /// result's item `index[i]` with `op` (`+`, or `⌈ ⌊`), the result starting at
    /// `op`'s identity. Integers only (`⌸`'s counts, sums of i32 items in i64, and
    /// maxima and minima of i32 items).
    ScatterAdd {
        op: BinOp,
        index: Value,
        values: Value,
    },
    /// `arg` with some items replaced (indexed assignment, `@` with computed
    /// indices): for each item `j` of `index` (i32 positions in `arg`'s ravel, already
    /// checked) that `owner` names (`owner[index[j]] == j`: the last `j` naming that
    /// position, from a `ScatterAdd` of `⌈`), item `j` of `values` (the same shape as
    /// `index`, or a singleton, of the result's type) replaces the item there.
    Scatter {
        arg: Value,
        index: Value,
        values: Value,
        owner: Value,
    },
    /// `b⌹a` in f64: the least-squares solution `x` (`a`'s columns by `b`'s) of
    /// `a +.× x = b` by Householder QR, `a` an m×n and `b` an m×k f64 matrix given
    /// transposed (`⍉a`, n×m, and `⍉b`, k×m: their columns contiguous), `scale`
    /// the f64 scalar `⌈/|,a` (a column whose norm falls to `scale×1E¯13×m` is
    /// singular: DOMAIN ERROR, as the reference). Also a DOMAIN ERROR where m < n, or
    /// where an item of `x` is beyond `limit` (the session float's largest).
    Solve {
        a: Value,
        b: Value,
        scale: Value,
        limit: f64,
    },
    /// The session's generator when the program runs: i32 seed low, seed high,
    /// next draw low, next draw high (filled by the host at each run).
    RngState,
    /// `?arg` (roll): for each item n of `arg` (non-negative integers), an integer
    /// from `origin` to n-1+`origin`, or for 0 a float between 0 and 1, from draw
    /// `next+offset+i` of the generator (`crate::random`) for the item in ravel
    /// position `i`; `state` is the [`Inst::RngState`].
    Roll {
        arg: Value,
        state: Value,
        origin: i32,
        offset: u64,
        /// Its items were not known when it compiled: the device checks them (a
        /// negative one is a DOMAIN ERROR; 0, whose result would be a float, or one
        /// beyond 32 bits leaves the statement to the reference).
        checked: bool,
    },
    /// For each element of `needles`, where it first occurs in the vector `hay`
    /// (`hay⍳needles`, from `origin`, `origin+≢hay` when absent) or whether it occurs
    /// (`needles∊hay`). `order` is `⍋hay` from 0 (for an interval index, whose `hay`
    /// is in order already, `⍳≢hay` from 0); `hay` and `needles` have one type,
    /// compared exactly (f64 within ⎕CT).
    Search {
        hay: Value,
        order: Value,
        needles: Value,
        kind: SearchKind,
    },
}

/// A scalar function of ⍺ and ⍵ built from scalar functions: a dfn operand of a fold.
/// Each node carries its result type.
#[derive(Clone, Debug, PartialEq)]
pub enum Comb {
    Alpha,
    Omega,
    /// A scalar from outside the operand (a name it reads, such as `k` in
    /// `{⍺+⍵×k}/x`): the same value at every step.
    Outer(Value),
    Const(Scalar),
    Cast {
        to: ElemType,
        arg: Box<Comb>,
    },
    Unary {
        op: UnOp,
        elem: ElemType,
        arg: Box<Comb>,
    },
    Binary {
        op: BinOp,
        elem: ElemType,
        lhs: Box<Comb>,
        rhs: Box<Comb>,
    },
    /// `then` where `cond` is 1, else `els` (a guard); only the chosen side runs.
    Select {
        cond: Box<Comb>,
        then: Box<Comb>,
        els: Box<Comb>,
    },
}

impl Comb {
    /// Whether it reads ⍺ or ⍵.
    pub fn reads_arguments(&self) -> bool {
        match self {
            Comb::Alpha | Comb::Omega => true,
            Comb::Outer(_) | Comb::Const(_) => false,
            Comb::Cast { arg, .. } | Comb::Unary { arg, .. } => arg.reads_arguments(),
            Comb::Binary { lhs, rhs, .. } => lhs.reads_arguments() || rhs.reads_arguments(),
            Comb::Select { cond, then, els } => {
                cond.reads_arguments() || then.reads_arguments() || els.reads_arguments()
            }
        }
    }

    /// The outside values it reads.
    pub fn outer_values(&self, out: &mut Vec<Value>) {
        match self {
            Comb::Outer(v) => out.push(*v),
            Comb::Cast { arg, .. } | Comb::Unary { arg, .. } => arg.outer_values(out),
            Comb::Binary { lhs, rhs, .. } => {
                lhs.outer_values(out);
                rhs.outer_values(out);
            }
            Comb::Select { cond, then, els } => {
                cond.outer_values(out);
                then.outer_values(out);
                els.outer_values(out);
            }
            Comb::Alpha | Comb::Omega | Comb::Const(_) => {}
        }
    }

    /// Applies `f` to each outside value it reads, in place.
    pub fn map_outer(&mut self, f: &mut impl FnMut(Value) -> Value) {
        match self {
            Comb::Outer(v) => *v = f(*v),
            Comb::Cast { arg, .. } | Comb::Unary { arg, .. } => arg.map_outer(f),
            Comb::Binary { lhs, rhs, .. } => {
                lhs.map_outer(f);
                rhs.map_outer(f);
            }
            Comb::Select { cond, then, els } => {
                cond.map_outer(f);
                then.map_outer(f);
                els.map_outer(f);
            }
            Comb::Alpha | Comb::Omega | Comb::Const(_) => {}
        }
    }
}

/// What [`Inst::Search`] gives for each needle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SearchKind {
    /// The index of its first occurrence (i32).
    IndexOf { origin: i32 },
    /// Whether it occurs (bool).
    Member,
    /// `hay⍸needles` (interval index): how many keys are at most it, less 1 plus
    /// `origin` (i32), compared exactly.
    Interval { origin: i32 },
}

/// How a [`Inst::Gather`] finds, for a result element, the argument element it copies.
#[derive(Clone, Debug, PartialEq)]
pub enum Gather {
    /// `⌽[axis]`: coordinate `c` reads `len-1-c`.
    Reverse(usize),
    /// `by⌽[axis]`: coordinate `c` reads `(c+by) mod len`.
    Rotate { axis: usize, by: i64 },
    /// Argument axis `i` reads result coordinate `axes[i]`: transposes (`⍉`, with
    /// repeated entries taking diagonals) and the spread operands of products (result
    /// axes that no argument axis names are ignored).
    Axes(Vec<usize>),
    /// Coordinate `c` on each axis reads `c+start` when that is inside the argument,
    /// otherwise the result is `fill` (take with overtake, drop).
    Window { start: Vec<i64>, fill: Scalar },
    /// Coordinate `c` on each axis reads `c×step+start` when that is inside the
    /// argument, otherwise the result is `fill` (`⌺` with steps).
    Sample {
        start: Vec<i64>,
        step: Vec<u32>,
        fill: Scalar,
    },
    /// Element `i` in ravel order reads `i mod n` with `n` the argument's element count
    /// (`⍴` reshape and `,` ravel), or `fill` when the argument is empty.
    Cycle { fill: Scalar },
    /// The windows of n-wise reduction: the argument's `axis` becomes two result axes
    /// `axis, axis+1` (window, position `k` in it, of `w` = the latter's length);
    /// coordinates `(c, k)` read `c+k`, or `c+w-1-k` when `reverse`.
    Windows { axis: usize, reverse: bool },
    /// `k/[axis]` with one count `k` (at least 1) for every item: coordinate `c` on
    /// `axis` reads `⌊c÷times`.
    Repeat { axis: usize, times: u32 },
}

impl Inst {
    /// Applies `f` to each value this instruction uses, in place.
    pub fn map_operands(&mut self, f: &mut impl FnMut(Value) -> Value) {
        match self {
            Inst::Param { .. }
            | Inst::Const(_)
            | Inst::Nested { .. }
            | Inst::Iota { .. }
            | Inst::RngState => {}
            Inst::Length { of, .. } => *of = f(*of),
            Inst::Cast(v)
            | Inst::Unary { arg: v, .. }
            | Inst::Reduce { arg: v, .. }
            | Inst::Scan { arg: v, .. }
            | Inst::Grade { arg: v, .. }
            | Inst::Gather { arg: v, .. } => *v = f(*v),
            Inst::Binary { lhs, rhs, .. }
            | Inst::Catenate { lhs, rhs, .. }
            | Inst::MatMul { lhs, rhs, .. }
            | Inst::Compress {
                mask: lhs,
                arg: rhs,
            }
            | Inst::Rotate {
                arg: lhs, by: rhs, ..
            }
            | Inst::Roll {
                arg: lhs,
                state: rhs,
                ..
            }
            | Inst::ScatterAdd {
                index: lhs,
                values: rhs,
                ..
            }
            | Inst::SegScan {
                arg: lhs,
                starts: rhs,
                ..
            } => {
                *lhs = f(*lhs);
                *rhs = f(*rhs);
            }
            Inst::FoldDfn { arg, comb, .. } => {
                *arg = f(*arg);
                comb.map_outer(f);
            }
            Inst::Select { cond, then, els } => {
                *cond = f(*cond);
                *then = f(*then);
                *els = f(*els);
            }
            Inst::Solve { a, b, scale, .. } => {
                *a = f(*a);
                *b = f(*b);
                *scale = f(*scale);
            }
            Inst::Scatter {
                arg,
                index,
                values,
                owner,
            } => {
                *arg = f(*arg);
                *index = f(*index);
                *values = f(*values);
                *owner = f(*owner);
            }
            Inst::Search {
                hay,
                order,
                needles,
                ..
            } => {
                *hay = f(*hay);
                *order = f(*order);
                *needles = f(*needles);
            }
            Inst::Index { arg, axes } => {
                *arg = f(*arg);
                for v in axes.iter_mut().flatten() {
                    *v = f(*v);
                }
            }
        }
    }

    /// The values this instruction uses.
    pub fn operands(&self) -> Vec<Value> {
        match self {
            Inst::Param { .. }
            | Inst::Const(_)
            | Inst::Nested { .. }
            | Inst::Iota { .. }
            | Inst::RngState => vec![],
            Inst::Length { of, .. } => vec![*of],
            Inst::Cast(v)
            | Inst::Unary { arg: v, .. }
            | Inst::Reduce { arg: v, .. }
            | Inst::Scan { arg: v, .. } => {
                vec![*v]
            }
            Inst::Binary { lhs, rhs, .. }
            | Inst::Catenate { lhs, rhs, .. }
            | Inst::MatMul { lhs, rhs, .. } => vec![*lhs, *rhs],
            Inst::Compress { mask, arg } => vec![*mask, *arg],
            Inst::SegScan { arg, starts, .. } => vec![*arg, *starts],
            Inst::Select { cond, then, els } => vec![*cond, *then, *els],
            Inst::Rotate { arg, by, .. } => vec![*arg, *by],
            Inst::Roll { arg, state, .. } => vec![*arg, *state],
            Inst::ScatterAdd { index, values, .. } => vec![*index, *values],
            Inst::Scatter {
                arg,
                index,
                values,
                owner,
            } => vec![*arg, *index, *values, *owner],
            Inst::Solve { a, b, scale, .. } => vec![*a, *b, *scale],
            Inst::Grade { arg, .. } => vec![*arg],
            Inst::FoldDfn { arg, comb, .. } => {
                let mut v = vec![*arg];
                comb.outer_values(&mut v);
                v
            }
            Inst::Search {
                hay,
                order,
                needles,
                ..
            } => vec![*hay, *order, *needles],
            Inst::Gather { arg, .. } => vec![*arg],
            Inst::Index { arg, axes } => std::iter::once(*arg)
                .chain(axes.iter().flatten().copied())
                .collect(),
        }
    }

    /// True for instructions computed element by element (fusable into their users).
    pub fn is_elementwise(&self) -> bool {
        matches!(
            self,
            Inst::Cast(_)
                | Inst::Unary { .. }
                | Inst::Binary { .. }
                | Inst::Select { .. }
                | Inst::Iota { .. }
                | Inst::Length { .. }
                | Inst::Gather { .. }
                | Inst::Catenate { .. }
                | Inst::Index { .. }
                | Inst::Rotate { .. }
                | Inst::Roll { .. }
        )
    }
}

/// A parameter of a [`Function`].
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    /// Its value, when the host knows it while compiling (a session's small arrays):
    /// lengths and shapes computed from it (`⍳n`, `n↑x`, `n⍴x`) are then known too.
    /// Everything else still reads the parameter on the device.
    pub value: Option<crate::Array>,
    /// A bound on the magnitude of its every item, where it holds integers and the
    /// host knows one (a device array made by an earlier statement whose IR showed
    /// it: `c←?n⍴10`), which the IR's bounds then start from
    /// (`crate::bounds::magnitude`).
    pub magnitude: Option<u128>,
}

/// A run-time requirement that two lengths agree (checked by the host before any
/// dispatch; a LENGTH ERROR at `span` otherwise).
#[derive(Clone, Debug, PartialEq)]
pub struct LengthCheck {
    pub a: Dim,
    pub b: Dim,
    pub span: Span,
}

/// A function in the IR: instructions with their types and spans, and a result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Function {
    pub params: Vec<Param>,
    pub insts: Vec<Inst>,
    pub types: Vec<Type>,
    pub spans: Vec<Span>,
    pub checks: Vec<LengthCheck>,
    /// Which parameter axis each length symbol stands for.
    pub syms: Vec<(u32, u32)>,
    /// An upper bound of each device-computed length (`Dim::Dyn`).
    pub dyn_bounds: Vec<Dim>,
    pub result: Option<Value>,
    /// The program's float type (f32, or f64 when asked for): the type of `÷`, `*`…
    /// of integers and of non-integral literals.
    pub float: ElemType,
    /// The generator draws its `Roll`s make, all together: the session's counter
    /// moves on by this many once it has run.
    pub draws: u64,
    /// ⎕CT when it was compiled: its f64 comparisons, floors and ceilings use it.
    pub ct: f64,
    /// Where the result is a nested array (an [`Inst::Nested`] the verifier refuses),
    /// how it is held: its parts ([`Function::parts`]) are flat functions, one per
    /// stored array.
    pub nested: Option<NestedResult>,
}

/// How a nested result is held (`lower/nested.rs`).
#[derive(Clone, Debug, PartialEq)]
pub enum NestedResult {
    /// An array of `shape` whose items, in ravel order, are `items`.
    Items {
        shape: Vec<usize>,
        items: Vec<Value>,
    },
    /// Items of one shape and type: `v`'s trailing `inner` axes are an item's.
    Dense { v: Value, inner: usize },
}

impl NestedResult {
    /// How it is held, in words (`--emit ir` and `--emit plan` show it).
    pub fn held(&self, f: &Function) -> String {
        match self {
            NestedResult::Dense { v, inner } => {
                format!("dense: {} with its last {inner} axes an item's", f.ty(*v))
            }
            NestedResult::Items { items, .. } => format!("item by item: {} arrays", items.len()),
        }
    }

    /// The flat values that hold it.
    pub fn values(&self) -> Vec<Value> {
        match self {
            NestedResult::Items { items, .. } => items.clone(),
            NestedResult::Dense { v, .. } => vec![*v],
        }
    }
}

impl Function {
    /// Appends an instruction with its type and span; returns the value it defines.
    pub fn push(&mut self, inst: Inst, ty: Type, span: Span) -> Value {
        let v = Value(self.insts.len() as u32);
        self.insts.push(inst);
        self.types.push(ty);
        self.spans.push(span);
        v
    }

    pub fn inst(&self, v: Value) -> &Inst {
        &self.insts[v.index()]
    }

    pub fn ty(&self, v: Value) -> &Type {
        &self.types[v.index()]
    }

    pub fn span(&self, v: Value) -> Span {
        self.spans[v.index()].clone()
    }

    /// A function of a nested result as flat functions, one per value that holds it
    /// (in [`NestedResult::values`]'s order; `None` for a function whose result is
    /// not nested): each keeps only the instructions its result is computed from,
    /// and the first also every instruction no part needs (an error it may raise is
    /// still raised). Parameters all stay, at their places.
    pub fn parts(&self) -> Option<Vec<Function>> {
        let values = self.nested.as_ref()?.values();
        let n = self.insts.len();
        // The compress that computes each device length (a value of such a length
        // needs it, though no operand names it).
        let mut dyn_def: HashMap<u32, usize> = HashMap::new();
        for (i, inst) in self.insts.iter().enumerate() {
            if let (Inst::Compress { .. }, Some(Dim::Dyn(id))) = (inst, self.types[i].shape.first())
            {
                dyn_def.entry(*id).or_insert(i);
            }
        }
        let reach = |from: &[usize]| {
            let mut seen = vec![false; n];
            let mut todo: Vec<usize> = from.to_vec();
            while let Some(v) = todo.pop() {
                if std::mem::replace(&mut seen[v], true) {
                    continue;
                }
                todo.extend(self.insts[v].operands().iter().map(|o| o.index()));
                for d in &self.types[v].shape {
                    if let Dim::Dyn(id) = d {
                        todo.extend(dyn_def.get(id).copied());
                    }
                }
            }
            seen
        };
        let mut reached: Vec<Vec<bool>> = values.iter().map(|v| reach(&[v.index()])).collect();
        // The first part also computes what no part needs (an error it may raise is
        // still raised), with everything that is computed from.
        let unneeded: Vec<usize> = (0..n)
            .filter(|&i| !matches!(self.insts[i], Inst::Nested { .. }))
            .filter(|&i| !reached.iter().any(|s| s[i]))
            .chain(std::iter::once(values[0].index()))
            .collect();
        reached[0] = reach(&unneeded);
        let parts = values
            .iter()
            .enumerate()
            .map(|(k, &r)| {
                let keep = |i: usize| matches!(self.insts[i], Inst::Param { .. }) || reached[k][i];
                let mut f = Function {
                    insts: vec![],
                    types: vec![],
                    spans: vec![],
                    result: None,
                    nested: None,
                    ..self.clone()
                };
                let mut to = vec![Value(u32::MAX); n];
                for i in (0..n).filter(|&i| keep(i)) {
                    let mut inst = self.insts[i].clone();
                    inst.map_operands(&mut |v| to[v.index()]);
                    to[i] = f.push(inst, self.types[i].clone(), self.spans[i].clone());
                }
                f.result = Some(to[r.index()]);
                f
            })
            .collect();
        Some(parts)
    }

    /// Number of instructions using each value (one using it twice, as `mul v, v`,
    /// counts once; the result counts as a use).
    pub fn use_counts(&self) -> Vec<u32> {
        let mut uses = vec![0u32; self.insts.len()];
        for inst in &self.insts {
            let mut ops = inst.operands();
            ops.dedup();
            for o in ops {
                uses[o.index()] += 1;
            }
        }
        if let Some(r) = self.result {
            uses[r.index()] += 1;
        }
        uses
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fn(")?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{}: {}", p.name, p.ty)?;
        }
        writeln!(f, ") {{")?;
        for c in &self.checks {
            writeln!(f, "  check {} == {}", c.a, c.b)?;
        }
        for (i, inst) in self.insts.iter().enumerate() {
            let v = Value(i as u32);
            write!(f, "  {v} = ")?;
            match inst {
                Inst::Param { index } => write!(f, "param {index}")?,
                Inst::Nested { held } => write!(f, "nested ({held})")?,
                Inst::RngState => write!(f, "rng state")?,
                Inst::ScatterAdd { op, index, values } => {
                    write!(f, "scatter-{} {values} at {index}", op.name())?
                }
                Inst::Scatter {
                    arg,
                    index,
                    values,
                    owner,
                } => write!(f, "scatter {arg} with {values} at {index} by {owner}")?,
                Inst::Solve { a, b, scale, .. } => write!(f, "solve {b} by {a} scale {scale}")?,
                Inst::Const(a) => write!(
                    f,
                    "const {}",
                    crate::display::display(a).replace('\n', "; ")
                )?,
                Inst::Length { of, axis } => write!(f, "length {of} axis {axis}")?,
                Inst::Iota { len, origin: 1 } => write!(f, "iota {len}")?,
                Inst::Iota { len, origin } => write!(f, "iota {len} from {origin}")?,
                Inst::Cast(x) => write!(f, "cast {x}")?,
                Inst::Unary { op, arg } => write!(f, "{} {arg}", op.name())?,
                Inst::Binary { op, lhs, rhs } => write!(f, "{} {lhs}, {rhs}", op.name())?,
                Inst::Select { cond, then, els } => write!(f, "select {cond}, {then}, {els}")?,
                Inst::Reduce { op, arg, axis } => write!(f, "reduce[{axis}] {} {arg}", op.name())?,
                Inst::Scan { op, arg, axis } => write!(f, "scan[{axis}] {} {arg}", op.name())?,
                Inst::SegScan { op, arg, starts } => {
                    write!(f, "seg-scan {} {arg} from {starts}", op.name())?
                }
                Inst::Gather { arg, map } => write!(f, "gather {map:?} {arg}")?,
                Inst::Catenate { lhs, rhs, axis } => write!(f, "catenate[{axis}] {lhs}, {rhs}")?,
                Inst::MatMul {
                    lhs,
                    rhs,
                    fold: BinOp::Add,
                    pair: BinOp::Mul,
                } => write!(f, "matmul {lhs}, {rhs}")?,
                Inst::MatMul {
                    lhs,
                    rhs,
                    fold,
                    pair,
                } => write!(f, "matmul {}.{} {lhs}, {rhs}", fold.glyph(), pair.glyph())?,
                Inst::Compress { mask, arg } => write!(f, "compress {mask}, {arg}")?,
                Inst::Rotate { arg, by, axis } => write!(f, "rotate[{axis}] {arg} by {by}")?,
                Inst::Roll {
                    arg,
                    state,
                    origin,
                    offset,
                    checked,
                } => write!(
                    f,
                    "roll{} {arg} from {origin} with {state} +{offset}",
                    if *checked { " checked" } else { "" }
                )?,
                Inst::FoldDfn {
                    comb,
                    arg,
                    axis,
                    scan,
                } => write!(
                    f,
                    "{}[{axis}] {comb:?} {arg}",
                    if *scan { "scan" } else { "reduce" }
                )?,
                Inst::Grade { arg, down, origin } => write!(
                    f,
                    "grade {} {arg} from {origin}",
                    if *down { "down" } else { "up" }
                )?,
                Inst::Search {
                    hay,
                    order,
                    needles,
                    kind,
                } => write!(f, "search {kind:?} {needles} in {hay} by {order}")?,
                Inst::Index { arg, axes } => {
                    write!(f, "index {arg}[")?;
                    for (i, a) in axes.iter().enumerate() {
                        if i > 0 {
                            write!(f, ";")?;
                        }
                        if let Some(a) = a {
                            write!(f, "{a}")?;
                        }
                    }
                    write!(f, "]")?
                }
            }
            writeln!(f, " : {}", self.types[i])?;
        }
        if let Some(r) = self.result {
            writeln!(f, "  return {r}")?;
        }
        write!(f, "}}")
    }
}
