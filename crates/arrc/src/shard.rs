//! Several devices in one session (`Session::with_devices`, `--devices 0,1`).
//!
//! A workspace array of at least [`Multi::split_from`] elements that a statement can
//! work on piece by piece is split along its first axis into one piece per device
//! ([`Sharded`]) and stays split: each device keeps its piece as a device array. A
//! statement over split arrays runs on every device at once (each with its own
//! queue, command buffers and pipelines), each on its own piece, when it is one of:
//! - a *split expression*: scalar functions of split arrays and scalars, `⍳n` (each
//!   device makes its own rows: its piece is compiled with `⎕IO` moved on by the
//!   rows before it, which only `⍳` reads in such an expression), reductions, scans
//!   and `⌽` along the last axis of a split matrix, `∘.f` with a split left
//!   argument, `f.g` with a split left argument and an unsplit right one (copied to
//!   every device once, [`Multi::replicas`]), and compress `m/x` of split vectors.
//!   Its value is split (the pieces of a compress have their own lengths);
//! - `f/` or `f⌿` of a split expression, `f` one of `+ × ⌈ ⌊ ∧ ∨`: the pieces'
//!   results are combined on the host by the reference (`f⌿` of one item per
//!   device). Inside a larger expression such a fold runs first and a hidden name
//!   holding its value takes its place (`m←(+/x)÷n`), as does `≢` of a split array;
//! - `f\` of a split vector, `f` as above: each device folds its piece, the host
//!   makes each device's carry from the folds before it, and each device scans its
//!   piece with the carry applied to its first item (`f\(c f 1↑x),1↓x`).
//!
//! Anything else that reads a split array gathers it to the host first, and the
//! statement runs as on one device. So does a statement that raised an error on any
//! device, or whose pieces disagree in type (an integer overflow on one device
//! only): it runs again as on one device, so that errors and types are APL's. Data
//! moves between devices through the host; `Stats::moved_bytes` counts it.
//!
//! Invariants: a name is split ([`Multi::arrays`]) or in the rest of the workspace,
//! never both; every piece is non-empty unless the array came from a compress; the
//! pieces of one array have one element type and one shape of a row.

use crate::gpu::{CompiledStatement, Gpu, Prepared};
use crate::workspace::{Arg, DeviceArray, Names, Val};
use crate::Session;
use arrc_ir::scalar::{BinOp, UnOp};
use arrc_ir::{Array, Data, ElemType, Error};
use arrc_syntax::{Expr, ExprKind, Func, FuncKind, Op1, Prim, Span, Stmt};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

/// Arrays of at least this many elements are split across devices by default.
pub const DEFAULT_SPLIT_FROM: usize = 1 << 20;

/// Other processes that hold the other pieces of split arrays (MPI ranks, as the
/// `arrc-mpi` crate provides them). Every process runs the same statements in the
/// same order; each holds the pieces of its own devices. A session alone is rank 0
/// of 1.
pub trait Peers {
    /// This process's index, from 0.
    fn rank(&self) -> usize;
    /// How many processes there are.
    fn size(&self) -> usize;
    /// Every process's `bytes`, in rank order (MPI_Allgatherv).
    fn all_gather(&self, bytes: &[u8]) -> Vec<Vec<u8>>;
}

/// The devices of a session beyond its first, the processes beside it, and the
/// arrays split across all their devices. Pieces are numbered across processes:
/// process `r`'s device `k` holds piece `r × local + k`.
pub(crate) struct Multi {
    /// Devices 1.. (device 0 is `Session::gpu`).
    pub gpus: Vec<Gpu>,
    peers: Option<Box<dyn Peers>>,
    pub arrays: HashMap<String, Sharded>,
    /// Copies of an unsplit array on each device, for `f.g` and `∘.f` (by name and
    /// device), dropped when the name is assigned again.
    replicas: HashMap<(String, usize), Rc<DeviceArray>>,
    /// The fewest elements of an array worth splitting.
    pub split_from: usize,
    pub split_statements: u64,
    pub moved_bytes: u64,
    hidden: u64,
    /// Numbers the running split statement drew (`run_pieces`), counted once it is
    /// done (`commit_draws`).
    draws: u64,
    /// `f⌿p` parsed once per function (`combine`).
    folds: std::cell::RefCell<HashMap<char, arrc_syntax::Program>>,
}

impl Multi {
    pub fn new(gpus: Vec<Gpu>, peers: Option<Box<dyn Peers>>) -> Multi {
        Multi {
            gpus,
            peers,
            arrays: HashMap::new(),
            replicas: HashMap::new(),
            split_from: DEFAULT_SPLIT_FROM,
            split_statements: 0,
            moved_bytes: 0,
            hidden: 0,
            draws: 0,
            folds: Default::default(),
        }
    }

    /// Devices of this process.
    fn local(&self) -> usize {
        self.gpus.len() + 1
    }

    /// Pieces of a split array, over every process.
    fn pieces(&self) -> usize {
        self.local() * self.peers.as_ref().map_or(1, |p| p.size())
    }

    /// The number of this process's first piece.
    fn first(&self) -> usize {
        self.local() * self.peers.as_ref().map_or(0, |p| p.rank())
    }

    /// Every process's `bytes`, in rank order.
    fn all_gather(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        match &self.peers {
            Some(p) => {
                let all = p.all_gather(bytes);
                self.moved_bytes +=
                    all.iter().map(|b| b.len() as u64).sum::<u64>() - bytes.len() as u64;
                all
            }
            None => vec![bytes.to_vec()],
        }
    }

    /// Whether any process says `yes`.
    fn any(&mut self, yes: bool) -> bool {
        self.all_gather(&[yes as u8])
            .iter()
            .any(|b| b.first() == Some(&1))
    }
}

impl Drop for Multi {
    fn drop(&mut self) {
        // Pieces and copies go before the devices that hold them.
        self.arrays.clear();
        self.replicas.clear();
    }
}

/// An array split along its first axis: the rows of every piece (over every
/// process), and this process's pieces (its device `k` holds local piece `k`).
#[derive(Clone)]
pub(crate) struct Sharded {
    pub shape: Vec<usize>,
    pub elem: ElemType,
    pub rows: Vec<usize>,
    pub pieces: Vec<Rc<DeviceArray>>,
}

impl Sharded {
    fn rows(&self) -> Vec<usize> {
        self.rows.clone()
    }
}

/// Where each of `rows` starts.
fn offsets(rows: &[usize]) -> Vec<usize> {
    rows.iter()
        .scan(0, |acc, r| {
            let o = *acc;
            *acc += r;
            Some(o)
        })
        .collect()
}

/// An array as bytes (type, rank, lengths, then its data), for other processes.
fn encode(a: &Array, out: &mut Vec<u8>) {
    out.push(a.elem as u8);
    out.push(a.shape.len() as u8);
    for d in &a.shape {
        out.extend((*d as u64).to_le_bytes());
    }
    let data = a.data.to_bytes();
    out.extend((data.len() as u64).to_le_bytes());
    out.extend(data);
}

/// The arrays `encode` wrote into `bytes`.
fn decode(bytes: &[u8]) -> Option<Vec<Array>> {
    let mut out = vec![];
    let mut at = 0;
    let take = |at: &mut usize, n: usize| -> Option<&[u8]> {
        let s = bytes.get(*at..*at + n)?;
        *at += n;
        Some(s)
    };
    let word = |at: &mut usize| -> Option<usize> {
        Some(u64::from_le_bytes(take(at, 8)?.try_into().ok()?) as usize)
    };
    while at < bytes.len() {
        let elem = match take(&mut at, 1)?[0] {
            0 => ElemType::Bool,
            1 => ElemType::I32,
            2 => ElemType::I64,
            3 => ElemType::F32,
            4 => ElemType::F64,
            _ => return None,
        };
        let rank = take(&mut at, 1)?[0] as usize;
        let shape = (0..rank)
            .map(|_| word(&mut at))
            .collect::<Option<Vec<_>>>()?;
        let len = word(&mut at)?;
        let data = take(&mut at, len)?;
        let count = arrc_ir::array::saturating_count(&shape);
        out.push(Array::new(shape, Data::from_bytes(elem, data, count)));
    }
    Some(out)
}

/// `n` rows dealt to `d` devices, as evenly as can be.
fn even(n: usize, d: usize) -> Vec<usize> {
    (0..d).map(|k| n * (k + 1) / d - n * k / d).collect()
}

/// How an expression's value is laid out across the devices.
#[derive(Clone, Debug, PartialEq)]
enum Form {
    /// The same scalar on every device.
    Scalar,
    /// Split along the first axis: the rows of each device (unknown after a
    /// compress) and the shape of one row.
    Split {
        rows: Option<Vec<usize>>,
        cell: Vec<usize>,
    },
}

/// What a statement's pieces read.
#[derive(Default)]
struct Needs {
    /// Split arrays, and arrays to split now.
    split: BTreeSet<String>,
    /// Unsplit arrays every device reads whole.
    replicated: BTreeSet<String>,
    /// Scalars of the workspace.
    scalars: BTreeSet<String>,
    /// Rows made by a generator (`⍳n`: the pieces compile with ⎕IO moved on;
    /// `?n⍴m`: each piece draws from its first row's place), and the rolls among
    /// them (at most one a statement: a second would draw after the first's rows).
    generated: bool,
    rolls: usize,
    /// `⍳n` generators (⎕IO moved on, which a roll would see: not both at once).
    iotas: usize,
}

impl Needs {
    /// At most one roll, and not beside `⍳` (whose moved ⎕IO it would see).
    fn generators_apart(&self) -> bool {
        self.rolls <= 1 && (self.rolls == 0 || self.iotas == 0)
    }
}

/// A statement that runs on every device.
enum Top {
    /// A split expression; its pieces are the value.
    Pieces(Expr),
    /// `f/` or `f⌿` of a split expression (`f`, the fold's expression).
    Fold(Prim, Expr),
    /// `f\` or `f⍀` of a split vector (`f`, the scanned expression).
    Scan(Prim, Expr),
}

/// Functions whose fold over pieces is the fold of the pieces' folds.
fn combines(p: Prim) -> bool {
    matches!(
        p,
        Prim::Plus | Prim::Times | Prim::Ceiling | Prim::Floor | Prim::And | Prim::Or
    )
}

fn prim(f: &Func) -> Option<Prim> {
    match f.kind {
        FuncKind::Prim(p) => Some(p),
        _ => None,
    }
}

fn expr(kind: ExprKind, span: &Span) -> Expr {
    Expr::new(kind, span.clone())
}

fn func(p: Prim, span: &Span) -> Func {
    Func::new(FuncKind::Prim(p), span.clone())
}

fn number(n: i64, span: &Span) -> Expr {
    expr(ExprKind::Number(arrc_syntax::lexer::Num::Int(n)), span)
}

fn dyadic(p: Prim, left: Expr, right: Expr, span: &Span) -> Expr {
    expr(
        ExprKind::Dyadic {
            func: func(p, span),
            left: Box::new(left),
            right: Box::new(right),
        },
        span,
    )
}

fn derived(op: Op1, p: Prim, arg: Expr, span: &Span) -> Expr {
    expr(
        ExprKind::Monadic {
            func: Func::new(
                FuncKind::Derived {
                    op,
                    operand: Box::new(func(p, span)),
                },
                span.clone(),
            ),
            arg: Box::new(arg),
        },
        span,
    )
}

/// Why a statement does not run split after all: it runs as on one device.
struct Abort;

impl Session {
    /// The multi-device path of a statement: its value (as `stmt` returns it) when
    /// it ran split, `None` when it should run as on one device (having gathered
    /// every split array it reads).
    pub(crate) fn split_statement(
        &mut self,
        stmt: &Stmt,
        notes: &mut Vec<String>,
        want: bool,
    ) -> Result<Option<Option<Array>>, Error> {
        if self.multi.is_none() {
            return Ok(None);
        }
        let Stmt::Expr(e) = stmt else {
            self.gather_all()?;
            return Ok(None);
        };
        // `x f←v` becomes `x←x f v` in `stmt`, which comes back here.
        if let ExprKind::AssignTo {
            target: arrc_syntax::Target::Names(n),
            func: Some(_),
            ..
        } = &e.kind
        {
            if n.len() == 1 {
                return Ok(None);
            }
        }
        let (names, value) = arrc_syntax::assign::assignment_chain(e);
        let names: Vec<String> = names.into_iter().map(str::to_string).collect();
        let plain = !matches!(value.kind, ExprKind::AssignTo { .. })
            && crate::inner_assignment(value).is_none();
        let mut reads = self.reads_through_calls(e);
        if let ExprKind::AssignTo { target, .. } = &e.kind {
            reads.extend(target.names().into_iter().map(str::to_string));
        }
        if plain && !reads.iter().any(|n| arrc_syntax::is_system_name(n)) {
            // Deferred names whose recipes read only scalars are put in place (the
            // scalars as hidden names for this statement), so that `x←⍳n ⋄ y←x×2 ⋄
            // +/y` folds generated rows on each device; others are computed first.
            let sub = self.substitute_reads(value)?;
            let scalars = sub
                .inputs
                .iter()
                .all(|(_, v)| v.host.as_ref().is_some_and(|a| a.rank() == 0));
            let mut temps = vec![];
            let value = if scalars {
                for (n, v) in &sub.inputs {
                    if let Some(a) = &v.host {
                        self.env.arrays.insert(n.clone(), a.clone());
                        temps.push(n.clone());
                    }
                }
                &sub.expr
            } else {
                for n in &reads {
                    self.force(n)?;
                }
                value
            };
            let before = self.hidden_names();
            let r = match self.try_split(value, &names, want) {
                // Folds ran first; the rest runs as on one device (the snapshots'
                // scalars it may read still bound).
                Ok(Some(Err(rest))) => {
                    let stmt = Stmt::Expr(names.iter().rev().fold(rest, |v, n| {
                        expr(
                            ExprKind::Assign {
                                name: n.clone(),
                                name_span: e.span.clone(),
                                value: Box::new(v),
                            },
                            &e.span,
                        )
                    }));
                    self.stmt(&stmt, notes, want).map(|v| Some(Ok(v)))
                }
                r => r,
            };
            for n in temps {
                self.env.arrays.remove(&n);
            }
            self.drop_hidden(before);
            match r {
                Ok(Some(Ok(v))) => return Ok(Some(v)),
                Ok(Some(Err(_))) | Ok(None) => {}
                Err(x) => return Err(x),
            }
        }
        for n in &reads {
            self.gather(n)?;
        }
        Ok(None)
    }

    /// Runs `value` split where it can: `Some(Ok(v))` when it ran, `Some(Err(rest))`
    /// when folds inside it ran and `rest` (reading their values) is left for one
    /// device, `None` when nothing ran split.
    #[allow(clippy::type_complexity)]
    fn try_split(
        &mut self,
        value: &Expr,
        names: &[String],
        want: bool,
    ) -> Result<Option<Result<Option<Array>, Expr>>, Error> {
        let mut needs = Needs::default();
        if let Some(top) = self.top(value, &mut needs) {
            // A bare name is not worth splitting (nor copying piece by piece).
            let bare = matches!(&top, Top::Pieces(e) if matches!(e.kind, ExprKind::Name(_)));
            if bare || !needs.generators_apart() || (needs.split.is_empty() && !needs.generated) {
                return Ok(None);
            }
            // A fold of rows made from scalars alone reads no memory: one device
            // does it in less time than splitting costs (`+/(⍳n)×2` took 36 µs on
            // the H100 alone, about 300 µs over two).
            if needs.split.is_empty() && matches!(top, Top::Fold(..)) {
                return Ok(None);
            }
            // Rows made from scalars alone are kept as a recipe where one device
            // would keep them (fused into the statements that read them).
            if matches!(top, Top::Pieces(_))
                && needs.split.is_empty()
                && !names.is_empty()
                && self.try_defer(value, names)?
            {
                return Ok(Some(Ok(None)));
            }
            return Ok(match self.run_top(&top, &needs, names, want)? {
                Ok(v) => Some(Ok(v)),
                Err(Abort) => None,
            });
        }
        let mut changed = false;
        let rest = match self.hoist_folds(value, true, &mut changed)? {
            Ok(rest) => rest,
            Err(Abort) => return Ok(None),
        };
        if !changed {
            return Ok(None);
        }
        let mut needs = Needs::default();
        if let Some(top) = self.top(&rest, &mut needs) {
            if needs.generators_apart() && (!needs.split.is_empty() || needs.generated) {
                return Ok(match self.run_top(&top, &needs, names, want)? {
                    Ok(v) => Some(Ok(v)),
                    Err(Abort) => None,
                });
            }
        }
        Ok(Some(Err(rest)))
    }

    /// `e` with each fold of a split expression inside it (not `e` itself, when
    /// `root`) run and replaced by a hidden name holding its value.
    fn hoist_folds(
        &mut self,
        e: &Expr,
        root: bool,
        changed: &mut bool,
    ) -> Result<Result<Expr, Abort>, Error> {
        if !root {
            let mut needs = Needs::default();
            match self.top(e, &mut needs) {
                Some(top @ Top::Fold(..))
                    if !needs.split.is_empty() && needs.generators_apart() =>
                {
                    return Ok(match self.run_top(&top, &needs, &[], true)? {
                        Ok(Some(a)) => {
                            *changed = true;
                            Ok(self.hidden(a, &e.span))
                        }
                        _ => Err(Abort),
                    });
                }
                _ => {}
            }
            if let ExprKind::Monadic { func, arg } = &e.kind {
                if let (Some(Prim::Tally), ExprKind::Name(n)) = (prim(func), &arg.kind) {
                    if let Some(s) = self.multi.as_ref().and_then(|m| m.arrays.get(n)) {
                        *changed = true;
                        return Ok(Ok(number(s.shape[0] as i64, &e.span)));
                    }
                }
            }
        }
        let mut abort = false;
        let out = e.map_children::<Error>(&mut |c| match self.hoist_folds(c, false, changed)? {
            Ok(x) => Ok(x),
            Err(Abort) => {
                abort = true;
                Ok(c.clone())
            }
        })?;
        Ok(if abort { Err(Abort) } else { Ok(out) })
    }

    /// A hidden workspace name holding `a`, as an expression.
    fn hidden(&mut self, a: Array, span: &Span) -> Expr {
        let m = self.multi.as_mut().expect("split statements have devices");
        m.hidden += 1;
        let name = format!("#split{}", m.hidden);
        self.env.arrays.insert(name.clone(), a);
        expr(ExprKind::Name(name), span)
    }

    fn hidden_names(&self) -> u64 {
        self.multi.as_ref().map_or(0, |m| m.hidden)
    }

    fn drop_hidden(&mut self, before: u64) {
        let now = self.hidden_names();
        for i in before + 1..=now {
            self.set_host(&format!("#split{i}"), None);
        }
    }

    /// The statement forms that run split.
    fn top(&self, e: &Expr, needs: &mut Needs) -> Option<Top> {
        if let ExprKind::Monadic { func, arg } = &e.kind {
            if let FuncKind::Derived { op, operand } = &func.kind {
                let p = prim(operand).filter(|&p| combines(p));
                match (op, p) {
                    (Op1::Reduce | Op1::ReduceFirst, Some(p)) => {
                        let f = self.form(arg, needs)?;
                        return match f {
                            Form::Split { cell, .. }
                                if cell.is_empty() || *op == Op1::ReduceFirst =>
                            {
                                Some(Top::Fold(p, (**arg).clone()))
                            }
                            // Along the last axis of a matrix: rows stay apart.
                            Form::Split { .. } => Some(Top::Pieces(e.clone())),
                            Form::Scalar => None,
                        };
                    }
                    (Op1::Scan | Op1::ScanFirst, Some(p)) => {
                        let f = self.form(arg, needs)?;
                        return match f {
                            Form::Split {
                                rows: Some(_),
                                cell,
                            } if cell.is_empty() => Some(Top::Scan(p, (**arg).clone())),
                            Form::Split { cell, .. } if !cell.is_empty() && *op == Op1::Scan => {
                                Some(Top::Pieces(e.clone()))
                            }
                            _ => None,
                        };
                    }
                    _ => {}
                }
            }
        }
        match self.form(e, needs)? {
            Form::Split { .. } => Some(Top::Pieces(e.clone())),
            Form::Scalar => None,
        }
    }

    /// The layout of a split expression's value, or `None` when it is not one.
    fn form(&self, e: &Expr, needs: &mut Needs) -> Option<Form> {
        let m = self.multi.as_ref()?;
        match &e.kind {
            ExprKind::Number(_) => Some(Form::Scalar),
            ExprKind::Name(n) => {
                if let Some(s) = m.arrays.get(n) {
                    needs.split.insert(n.clone());
                    return Some(Form::Split {
                        rows: Some(s.rows()),
                        cell: s.shape[1..].to_vec(),
                    });
                }
                let shape = self.numeric_shape(n)?;
                if shape.is_empty() {
                    needs.scalars.insert(n.clone());
                    return Some(Form::Scalar);
                }
                // Not one every device reads whole elsewhere in the statement.
                if needs.replicated.contains(n) {
                    return None;
                }
                let len = arrc_ir::array::saturating_count(&shape);
                (len >= m.split_from && shape[0] >= m.pieces()).then(|| {
                    needs.split.insert(n.clone());
                    Form::Split {
                        rows: Some(even(shape[0], m.pieces())),
                        cell: shape[1..].to_vec(),
                    }
                })
            }
            ExprKind::Monadic { func, .. } if self.generator_of(e).is_some() => {
                let (n, _) = self.generator_of(e)?;
                needs.generated = true;
                needs.rolls += (prim(func) == Some(Prim::Roll)) as usize;
                needs.iotas += (prim(func) == Some(Prim::Iota)) as usize;
                Some(Form::Split {
                    rows: Some(even(n, m.pieces())),
                    cell: vec![],
                })
            }
            ExprKind::Monadic { func, arg } => match &func.kind {
                FuncKind::Prim(p) if UnOp::from_prim(*p).is_some() => self.form(arg, needs),
                FuncKind::Prim(Prim::Reverse) => match self.form(arg, needs)? {
                    f @ Form::Split { .. } => Some(f).filter(|f| !cell_of(f).is_empty()),
                    Form::Scalar => None,
                },
                FuncKind::Derived {
                    op: Op1::Reduce | Op1::Scan,
                    operand,
                } if prim(operand).is_some_and(|p| BinOp::from_prim(p).is_some()) => {
                    let reduce = matches!(
                        func.kind,
                        FuncKind::Derived {
                            op: Op1::Reduce,
                            ..
                        }
                    );
                    match self.form(arg, needs)? {
                        Form::Split { rows, mut cell } if !cell.is_empty() => {
                            if reduce {
                                cell.pop();
                            }
                            Some(Form::Split { rows, cell })
                        }
                        _ => None,
                    }
                }
                _ => None,
            },
            ExprKind::Dyadic { func, left, right } => match &func.kind {
                FuncKind::Prim(p) if BinOp::from_prim(*p).is_some() => {
                    match (self.form(left, needs)?, self.form(right, needs)?) {
                        (Form::Scalar, x) | (x, Form::Scalar) => Some(x),
                        (l, r) => aligned(&l, &r).map(|(rows, cell)| Form::Split {
                            rows: Some(rows),
                            cell,
                        }),
                    }
                }
                // Compress of vectors: each piece keeps its own count.
                FuncKind::Prim(Prim::Slash) => {
                    let (l, r) = (self.form(left, needs)?, self.form(right, needs)?);
                    aligned(&l, &r)
                        .filter(|(_, cell)| cell.is_empty())
                        .map(|_| Form::Split {
                            rows: None,
                            cell: vec![],
                        })
                }
                FuncKind::Outer(f) if prim(f).is_some_and(|p| BinOp::from_prim(p).is_some()) => {
                    let l = self.form(left, needs)?;
                    let cell = self.replicated(right, needs)?;
                    match l {
                        Form::Split { rows, cell: c } if c.is_empty() => {
                            Some(Form::Split { rows, cell })
                        }
                        _ => None,
                    }
                }
                FuncKind::Inner(f, g)
                    if prim(f).is_some_and(|p| BinOp::from_prim(p).is_some())
                        && prim(g).is_some_and(|p| BinOp::from_prim(p).is_some()) =>
                {
                    let l = self.form(left, needs)?;
                    let shape = self.replicated(right, needs)?;
                    match l {
                        Form::Split { rows, cell: c }
                            if c.len() == 1 && shape.first() == Some(&c[0]) =>
                        {
                            Some(Form::Split {
                                rows,
                                cell: shape[1..].to_vec(),
                            })
                        }
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The shape of an unsplit workspace array `e` (a name) that every device reads
    /// whole.
    fn replicated(&self, e: &Expr, needs: &mut Needs) -> Option<Vec<usize>> {
        let ExprKind::Name(n) = &e.kind else {
            return None;
        };
        // Not one that is split, or to be split, elsewhere in the statement.
        if self.multi.as_ref()?.arrays.contains_key(n) || needs.split.contains(n) {
            return None;
        }
        let shape = self.numeric_shape(n)?;
        needs.replicated.insert(n.clone());
        Some(shape)
    }

    /// The shape of workspace array `n` where its items are numbers: nested and
    /// mixed arrays have no device layout to split, and the device path takes no
    /// characters.
    fn numeric_shape(&self, n: &str) -> Option<Vec<usize>> {
        let (shape, elem) = self.array_shape(n)?;
        (!matches!(elem, ElemType::Mixed | ElemType::Char)).then_some(shape)
    }

    /// `n` of `⍳n` when it is known and large enough to split.
    fn generator(&self, arg: &Expr) -> Option<usize> {
        let m = self.multi.as_ref()?;
        let n = match &arg.kind {
            ExprKind::Number(arrc_syntax::lexer::Num::Int(n)) => *n,
            ExprKind::Number(arrc_syntax::lexer::Num::Float(f))
                if f.fract() == 0.0 && *f >= 0.0 && *f <= i32::MAX as f64 =>
            {
                *f as i64
            }
            ExprKind::Name(x) => {
                let a = self.env.arrays.get(x)?;
                if a.rank() != 0 {
                    return None;
                }
                a.data.get(0).as_i64()?
            }
            _ => return None,
        };
        let n = usize::try_from(n).ok()?;
        (n >= m.split_from && n >= m.pieces() && n <= i32::MAX as usize).then_some(n)
    }

    /// The shape and type of workspace array `n` (not split), from its host or its
    /// device copy (a recipe not yet computed has none here).
    pub(crate) fn array_shape(&self, n: &str) -> Option<(Vec<usize>, ElemType)> {
        if self.env.functions.contains_key(n) {
            return None;
        }
        if let Some(a) = self.env.arrays.get(n) {
            return Some((a.shape.clone(), a.elem));
        }
        let d = self.gpu.as_ref()?.resident.get(n)?;
        Some((d.shape.clone(), d.elem))
    }

    /// Runs a statement form on every device and binds or returns its value.
    fn run_top(
        &mut self,
        top: &Top,
        needs: &Needs,
        names: &[String],
        want: bool,
    ) -> Result<Result<Option<Array>, Abort>, Error> {
        for n in &needs.split {
            if !self.is_split(n) {
                self.split_name(n)?;
            }
        }
        if let Some(m) = self.multi.as_mut() {
            m.split_statements += 1;
            m.draws = 0;
        }
        let local = self.local_devices();
        let first = self.first_piece();
        let span = match top {
            Top::Pieces(e) | Top::Fold(_, e) | Top::Scan(_, e) => e.span.clone(),
        };
        let value = match top {
            Top::Pieces(e) => {
                let exprs = vec![e.clone(); local];
                let Ok(vals) = self.run_pieces(&exprs, needs, &[], true)? else {
                    return Ok(Err(Abort));
                };
                let Some(s) = self.sharded(vals)? else {
                    return Ok(Err(Abort));
                };
                self.commit_draws();
                return self.bind_split(s, names, want).map(Ok);
            }
            Top::Fold(p, arg) => {
                let Ok(partials) = self.fold_pieces(*p, arg, needs)? else {
                    return Ok(Err(Abort));
                };
                match self.combine(*p, &partials)? {
                    Some(a) => a,
                    None => return Ok(Err(Abort)),
                }
            }
            Top::Scan(p, arg) => {
                let Ok(partials) = self.fold_pieces(*p, arg, needs)? else {
                    return Ok(Err(Abort));
                };
                // Piece g's carry: the fold of the pieces before it (on every process
                // alike, from the same partials).
                let mut carries = vec![];
                for k in 0..local {
                    let g = first + k;
                    if g == 0 {
                        carries.push(None);
                        continue;
                    }
                    match self.combine(*p, &partials[..g])? {
                        Some(c) => carries.push(Some(c)),
                        None => return Ok(Err(Abort)),
                    }
                }
                let carry = |k: usize| format!("#carry{k}");
                let exprs: Vec<Expr> = carries
                    .iter()
                    .enumerate()
                    .map(|(k, c)| {
                        let item = if c.is_none() {
                            arg.clone()
                        } else {
                            let c = expr(ExprKind::Name(carry(k)), &span);
                            let first = dyadic(
                                *p,
                                c,
                                dyadic(Prim::Take, number(1, &span), arg.clone(), &span),
                                &span,
                            );
                            let rest = dyadic(Prim::Drop, number(1, &span), arg.clone(), &span);
                            dyadic(Prim::Comma, first, rest, &span)
                        };
                        derived(Op1::Scan, *p, item, &span)
                    })
                    .collect();
                let carried: Vec<(String, Array)> = carries
                    .into_iter()
                    .enumerate()
                    .filter_map(|(k, c)| c.map(|c| (carry(k), c)))
                    .collect();
                let Ok(vals) = self.run_pieces(&exprs, needs, &carried, true)? else {
                    return Ok(Err(Abort));
                };
                let Some(s) = self.sharded(vals)? else {
                    return Ok(Err(Abort));
                };
                self.commit_draws();
                return self.bind_split(s, names, want).map(Ok);
            }
        };
        self.commit_draws();
        for n in names {
            self.bind_val(n, value.clone().into());
        }
        Ok(Ok((names.is_empty() && want).then_some(value)))
    }

    /// The draws of the statement that ran split move the session's generator on.
    fn commit_draws(&mut self) {
        let draws = self
            .multi
            .as_mut()
            .map_or(0, |m| std::mem::take(&mut m.draws));
        self.advance_rng(draws);
    }

    /// `f⌿` of `arg` on every device: every piece's result, over every process.
    fn fold_pieces(
        &mut self,
        p: Prim,
        arg: &Expr,
        needs: &Needs,
    ) -> Result<Result<Vec<Array>, Abort>, Error> {
        let fold = derived(Op1::ReduceFirst, p, arg.clone(), &arg.span);
        let exprs = vec![fold; self.local_devices()];
        let Ok(vals) = self.run_pieces(&exprs, needs, &[], false)? else {
            return Ok(Err(Abort));
        };
        let mut mine = vec![];
        for (k, v) in vals.into_iter().enumerate() {
            let a = match (v.host, v.device) {
                (Some(a), _) => a,
                (None, Some(d)) => self.gpu_at(k).read(&d)?,
                (None, None) => return Ok(Err(Abort)),
            };
            encode(&a, &mut mine);
        }
        let m = self.multi.as_mut().expect("split statements have devices");
        let mut all = vec![];
        for bytes in m.all_gather(&mine) {
            match decode(&bytes) {
                Some(v) => all.extend(v),
                None => return Ok(Err(Abort)),
            }
        }
        Ok(Ok(all))
    }

    /// `f⌿` of the pieces' results (one item each), by the reference; `None` when
    /// their types disagree or the fold changed the type (an integer overflow), which
    /// one device would have met in another order. (Every process combines the same
    /// results in the same order, so all get the same bits, which an MPI_Allreduce
    /// would not promise.)
    fn combine(&self, p: Prim, parts: &[Array]) -> Result<Option<Array>, Error> {
        let Some(first) = parts.first() else {
            return Ok(None);
        };
        if parts
            .iter()
            .any(|a| a.elem != first.elem || a.shape != first.shape)
        {
            return Ok(None);
        }
        let mut bytes = vec![];
        for a in parts {
            bytes.extend(a.data.to_bytes());
        }
        let mut shape = vec![parts.len()];
        shape.extend(&first.shape);
        let count = arrc_ir::array::saturating_count(&shape);
        let stacked = Array::new(shape, Data::from_bytes(first.elem, &bytes, count));
        let mut env = arrc_ref::Env {
            float: self.env.float,
            ct: self.env.ct,
            ..arrc_ref::Env::default()
        };
        env.arrays.insert("p".into(), stacked);
        if !combines(p) {
            return Ok(None);
        }
        let glyph = p.glyph();
        let m = self.multi.as_ref().expect("devices");
        let mut folds = m.folds.borrow_mut();
        let prog = match folds.entry(glyph) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                arrc_syntax::parse(&format!("{glyph}⌿p"), &|_| false).map_err(Error::from)?,
            ),
        };
        match arrc_ref::eval_program(prog, &mut env) {
            Ok(Some(a)) if a.elem == first.elem => Ok(Some(a)),
            _ => Ok(None),
        }
    }

    /// Runs `exprs[k]` on local device `k`, all devices at once, with the split
    /// arrays' pieces, the replicated arrays, the workspace's scalars and `extra`
    /// host arrays as free names. `Err(Abort)` when any device of any process raised
    /// an error (every process then aborts alike).
    fn run_pieces(
        &mut self,
        exprs: &[Expr],
        needs: &Needs,
        extra: &[(String, Array)],
        keep: bool,
    ) -> Result<Result<Vec<Val>, Abort>, Error> {
        let local = self.local_devices();
        let first = self.first_piece();
        let mut hosts: Vec<(String, Array)> = extra.to_vec();
        for n in &needs.scalars {
            self.materialize(n)?;
            match self.env.arrays.get(n) {
                Some(a) => hosts.push((n.clone(), a.clone())),
                None => return Ok(Err(Abort)),
            }
        }
        let mut replicas: Vec<Vec<(String, Rc<DeviceArray>)>> = vec![vec![]; local];
        for n in &needs.replicated {
            for (k, r) in replicas.iter_mut().enumerate() {
                r.push((n.clone(), self.replica(n, k)?));
            }
        }
        // The rows of every piece: the split arrays', or those a generator deals.
        let rows: Vec<usize> = {
            let m = self.multi.as_ref().expect("split statements have devices");
            match needs.split.iter().next() {
                Some(n) => match m.arrays.get(n) {
                    Some(a) => a.rows(),
                    None => return Ok(Err(Abort)),
                },
                None => match exprs.first().and_then(|e| self.generated_rows(e)) {
                    Some(n) => even(n, m.pieces()),
                    None => return Ok(Err(Abort)),
                },
            }
        };
        let starts = offsets(&rows);
        let mut arrays: Vec<Names> = vec![];
        for (k, reps) in replicas.iter().enumerate() {
            let mut names: Names = HashMap::new();
            for (n, a) in &hosts {
                if n.starts_with("#carry") && *n != format!("#carry{k}") {
                    continue;
                }
                names.insert(n.clone(), Arg::host(a));
            }
            for n in &needs.split {
                let m = self.multi.as_ref().expect("devices");
                let Some(piece) = m.arrays.get(n).and_then(|a| a.pieces.get(k)).cloned() else {
                    return Ok(Err(Abort));
                };
                names.insert(
                    n.clone(),
                    Arg {
                        host: None,
                        device: Some(piece),
                    },
                );
            }
            for (n, d) in reps {
                names.insert(
                    n.clone(),
                    Arg {
                        host: None,
                        device: Some(d.clone()),
                    },
                );
            }
            arrays.push(names);
        }
        let mut compiled: Vec<Rc<CompiledStatement>> = vec![];
        let mut failed = false;
        for k in 0..local {
            // Piece g makes rows starts[g] + 1 … of a generator: `⍳` of its own count
            // with ⎕IO moved on, or `?` of its own count drawing from its first row's
            // place in the generator's sequence.
            let g = first + k;
            let (io, e) = if needs.generated {
                (
                    self.env.io + if needs.iotas > 0 { starts[g] as i64 } else { 0 },
                    self.own_rows(&exprs[k], rows[g]),
                )
            } else {
                (self.env.io, exprs[k].clone())
            };
            match self.compile_on(k, io, &e, &arrays[k], &[], keep) {
                Ok(c) => compiled.push(c),
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        let m = self.multi.as_mut().expect("devices");
        if m.any(failed) {
            return Ok(Err(Abort));
        }
        let rng = self.env.rng;
        let mut gpus = self.every_gpu();
        // Every device prepares (uploads included) before any starts: on the H100
        // pair, an upload to one device waited for the other's running kernels.
        let mut preps: Vec<(Prepared, bool)> = vec![];
        for (k, g) in gpus.iter_mut().enumerate() {
            g.clock += 1;
            g.rng = arrc_ir::random::Rng {
                next: rng.next.wrapping_add(if needs.rolls > 0 {
                    starts[first + k] as u64
                } else {
                    0
                }),
                ..rng
            };
            let mut p = Prepared::keeping(keep);
            let ok = g.prepare(&compiled[k], &arrays[k], &mut p).is_ok();
            failed |= !ok;
            preps.push((p, ok));
        }
        for (g, (p, ok)) in gpus.iter_mut().zip(preps.iter_mut()) {
            if *ok && !failed {
                *ok = g.launch(p).is_ok();
                failed |= !*ok;
            } else {
                *ok = false;
            }
        }
        let mut vals = vec![];
        for (k, (g, (mut p, launched))) in gpus.iter_mut().zip(preps).enumerate() {
            if launched {
                match g.wait(&p).and_then(|_| g.finish_val(&compiled[k], &mut p)) {
                    Ok(v) => vals.push(v),
                    Err(_) => failed = true,
                }
            }
            g.release(p);
        }
        drop(arrays);
        let m = self.multi.as_mut().expect("devices");
        if m.any(failed) {
            return Ok(Err(Abort));
        }
        if needs.rolls > 0 {
            // The generator drew one number a row, over every piece: the session's
            // counter moves on once the statement is done (`run_top`), not if it
            // then runs again as on one device, which draws them itself.
            let m = self.multi.as_mut().expect("devices");
            m.draws = rows.iter().sum::<usize>() as u64;
        }
        Ok(Ok(vals))
    }

    /// `e` with each generator (`generator_of`) made to give `rows` rows.
    fn own_rows(&self, e: &Expr, rows: usize) -> Expr {
        if let Some((_, count)) = self.generator_of(e) {
            let n = number(rows as i64, &count.span);
            return match &e.kind {
                ExprKind::Monadic { func, arg } => match &arg.kind {
                    ExprKind::Dyadic {
                        func: rho, right, ..
                    } => expr(
                        ExprKind::Monadic {
                            func: func.clone(),
                            arg: Box::new(expr(
                                ExprKind::Dyadic {
                                    func: rho.clone(),
                                    left: Box::new(n),
                                    right: right.clone(),
                                },
                                &arg.span,
                            )),
                        },
                        &e.span,
                    ),
                    _ => expr(
                        ExprKind::Monadic {
                            func: func.clone(),
                            arg: Box::new(n),
                        },
                        &e.span,
                    ),
                },
                _ => e.clone(),
            };
        }
        e.map_children::<()>(&mut |c| Ok(self.own_rows(c, rows)))
            .unwrap_or_else(|()| e.clone())
    }

    /// The rows of the generator in `e`.
    fn generated_rows(&self, e: &Expr) -> Option<usize> {
        if let Some((n, _)) = self.generator_of(e) {
            return Some(n);
        }
        let mut found = None;
        let _ = e.map_children::<()>(&mut |c| {
            if found.is_none() {
                found = self.generated_rows(c);
            }
            Ok(c.clone())
        });
        found
    }

    /// Whether `e` is a generator of rows: `⍳n`, or `?n⍴m` with `m` a scalar (one
    /// draw a row); its rows and the expression giving them.
    fn generator_of<'e>(&self, e: &'e Expr) -> Option<(usize, &'e Expr)> {
        let ExprKind::Monadic { func, arg } = &e.kind else {
            return None;
        };
        match prim(func)? {
            Prim::Iota => Some((self.generator(arg)?, arg)),
            Prim::Roll => {
                let ExprKind::Dyadic { func, left, right } = &arg.kind else {
                    return None;
                };
                let scalar = match &right.kind {
                    ExprKind::Number(_) => true,
                    ExprKind::Name(x) => self.env.arrays.get(x).is_some_and(|a| a.rank() == 0),
                    _ => false,
                };
                (prim(func)? == Prim::Rho && scalar).then_some(())?;
                Some((self.generator(left)?, &**left))
            }
            _ => None,
        }
    }

    /// The pieces' values (this process's) as one split array; `None` when a piece is
    /// not on its device or the pieces of all processes disagree in type or row
    /// shape.
    fn sharded(&mut self, vals: Vec<Val>) -> Result<Option<Sharded>, Error> {
        let mut pieces = vec![];
        let mut mine = vec![];
        let mut ok = true;
        for v in vals {
            match v.device {
                Some(d) if !d.shape.is_empty() => {
                    // Each piece's type and shape, for the other processes: a vector
                    // of the type's code and the lengths.
                    let meta: Vec<i64> = std::iter::once(d.elem as i64)
                        .chain(d.shape.iter().map(|&n| n as i64))
                        .collect();
                    encode(&Array::vector(Data::I64(meta)), &mut mine);
                    pieces.push(d);
                }
                _ => ok = false,
            }
        }
        let m = self.multi.as_mut().expect("devices");
        if m.any(!ok) {
            return Ok(None);
        }
        let mut all: Vec<Vec<i64>> = vec![];
        for bytes in m.all_gather(&mine) {
            for a in decode(&bytes).unwrap_or_default() {
                match a.data {
                    Data::I64(v) if v.len() >= 2 => all.push(v),
                    _ => return Ok(None),
                }
            }
        }
        let Some(head) = all.first() else {
            return Ok(None);
        };
        if all.iter().any(|p| p[0] != head[0] || p[2..] != head[2..]) {
            return Ok(None);
        }
        let rows: Vec<usize> = all.iter().map(|p| p[1] as usize).collect();
        let mut shape: Vec<usize> = head[1..].iter().map(|&n| n as usize).collect();
        shape[0] = rows.iter().sum();
        Ok(Some(Sharded {
            shape,
            elem: pieces[0].elem,
            rows,
            pieces,
        }))
    }

    /// Binds a split value to `names` (a small one is gathered to the host first);
    /// its host value when it is the statement's value.
    fn bind_split(
        &mut self,
        s: Sharded,
        names: &[String],
        want: bool,
    ) -> Result<Option<Array>, Error> {
        let split_from = self.multi.as_ref().map_or(usize::MAX, |m| m.split_from);
        let len = arrc_ir::array::saturating_count(&s.shape);
        if names.is_empty() || len < split_from {
            let a = self.read_sharded(&s)?;
            for n in names {
                self.bind_val(n, a.clone().into());
            }
            return Ok((names.is_empty() && want).then_some(a));
        }
        for n in names {
            self.bind_val(n, Val::default());
            if let Some(m) = self.multi.as_mut() {
                m.arrays.insert(n.clone(), s.clone());
            }
        }
        Ok(None)
    }

    /// The host value of a split array: every piece read back (from every process)
    /// and joined.
    fn read_sharded(&mut self, s: &Sharded) -> Result<Array, Error> {
        let mut mine = vec![];
        for (k, p) in s.pieces.iter().enumerate() {
            let a = self.gpu_at(k).read(p)?;
            if k > 0 {
                if let Some(m) = self.multi.as_mut() {
                    m.moved_bytes += p.bytes();
                }
            }
            mine.extend(a.data.to_bytes());
        }
        let m = self.multi.as_mut().expect("devices");
        let bytes: Vec<u8> = m.all_gather(&mine).concat();
        let count = arrc_ir::array::saturating_count(&s.shape);
        if bytes.len() != count * s.elem.size() {
            return Err(Error::new(
                arrc_ir::ErrorClass::Device,
                "the processes' pieces of a split array do not add up to it",
                0..0,
            ));
        }
        Ok(Array::new(
            s.shape.clone(),
            Data::from_bytes(s.elem, &bytes, count),
        ))
    }

    /// Splits workspace array `n` (the same on every process) across the devices:
    /// each process keeps its pieces' rows.
    fn split_name(&mut self, n: &str) -> Result<(), Error> {
        self.materialize(n)?;
        let Some(a) = self.env.arrays.get(n).cloned() else {
            return Err(Error::new(
                arrc_ir::ErrorClass::Value,
                format!("{n} has no value"),
                0..0,
            ));
        };
        let (local, first, pieces_n) = {
            let m = self.multi.as_ref().expect("devices");
            (m.local(), m.first(), m.pieces())
        };
        let rows = even(a.shape[0], pieces_n);
        let starts = offsets(&rows);
        let cell: usize = a.shape[1..].iter().product();
        let row_bytes = cell * a.elem.size();
        let bytes = a.data.to_bytes();
        let mut pieces = vec![];
        for k in 0..local {
            let g = first + k;
            let mut shape = a.shape.clone();
            shape[0] = rows[g];
            let at = starts[g] * row_bytes;
            let piece = &bytes[at..at + rows[g] * row_bytes];
            pieces.push(self.gpu_at(k).upload_bytes(shape, a.elem, piece)?);
            if k > 0 {
                if let Some(m) = self.multi.as_mut() {
                    m.moved_bytes += piece.len() as u64;
                }
            }
        }
        self.bind_val(n, Val::default());
        if let Some(m) = self.multi.as_mut() {
            m.arrays.insert(
                n.to_string(),
                Sharded {
                    shape: a.shape.clone(),
                    elem: a.elem,
                    rows,
                    pieces,
                },
            );
        }
        Ok(())
    }

    /// Unsplit array `n` on device `k` (uploaded once, kept until `n` changes).
    fn replica(&mut self, n: &str, k: usize) -> Result<Rc<DeviceArray>, Error> {
        let key = (n.to_string(), k);
        if let Some(d) = self.multi.as_ref().and_then(|m| m.replicas.get(&key)) {
            return Ok(d.clone());
        }
        if k == 0 {
            if let Some(d) = self.gpu.as_ref().and_then(|g| g.resident.get(n)) {
                return Ok(d.clone());
            }
        }
        self.materialize(n)?;
        let a = self.env.arrays.get(n).cloned().ok_or_else(|| {
            Error::new(
                arrc_ir::ErrorClass::Value,
                format!("{n} has no value"),
                0..0,
            )
        })?;
        let d = self
            .gpu_at(k)
            .upload_bytes(a.shape.clone(), a.elem, &a.data.to_bytes())?;
        if let Some(m) = self.multi.as_mut() {
            if k > 0 {
                m.moved_bytes += d.bytes();
            }
            m.replicas.insert(key, d.clone());
        }
        Ok(d)
    }

    /// Whether `n` is split across the devices.
    pub(crate) fn is_split(&self, n: &str) -> bool {
        self.multi
            .as_ref()
            .is_some_and(|m| m.arrays.contains_key(n))
    }

    /// `n` is assigned again: its pieces and copies go.
    pub(crate) fn forget_split(&mut self, n: &str) {
        if let Some(m) = self.multi.as_mut() {
            m.arrays.remove(n);
            m.replicas.retain(|(r, _), _| r != n);
        }
    }

    /// Brings split array `n` back to the host as one array (if it is split).
    pub(crate) fn gather(&mut self, n: &str) -> Result<(), Error> {
        let Some(s) = self.multi.as_ref().and_then(|m| m.arrays.get(n)).cloned() else {
            return Ok(());
        };
        let a = self.read_sharded(&s)?;
        self.forget_split(n);
        self.bind_val(n, a.into());
        Ok(())
    }

    /// Brings every split array back to the host.
    pub(crate) fn gather_all(&mut self) -> Result<(), Error> {
        let names: Vec<String> = self
            .multi
            .as_ref()
            .map(|m| m.arrays.keys().cloned().collect())
            .unwrap_or_default();
        for n in names {
            self.gather(&n)?;
        }
        Ok(())
    }

    /// Devices of this process in use.
    pub(crate) fn local_devices(&self) -> usize {
        self.multi.as_ref().map_or(1, |m| m.local())
    }

    /// The number of this process's first piece of a split array.
    fn first_piece(&self) -> usize {
        self.multi.as_ref().map_or(0, |m| m.first())
    }

    /// Device `k` (0: the session's first).
    fn gpu_at(&mut self, k: usize) -> &mut Gpu {
        if k == 0 {
            return self
                .gpu
                .as_mut()
                .expect("a session with devices has a first");
        }
        &mut self.multi.as_mut().expect("devices").gpus[k - 1]
    }

    pub(crate) fn every_gpu(&mut self) -> Vec<&mut Gpu> {
        let mut v: Vec<&mut Gpu> = self.gpu.iter_mut().collect();
        if let Some(m) = self.multi.as_mut() {
            v.extend(m.gpus.iter_mut());
        }
        v
    }

    /// Every name `e` reads: in its text and in the bodies of the functions it calls,
    /// at any depth.
    pub(crate) fn reads_through_calls(&self, e: &Expr) -> HashSet<String> {
        let mut all = HashSet::new();
        e.names(&mut all);
        let called = crate::called_reads(&self.env.functions, &all);
        all.extend(called);
        all
    }
}

/// The rows and row shape two split values share (known rows, the same pieces).
fn aligned(l: &Form, r: &Form) -> Option<(Vec<usize>, Vec<usize>)> {
    match (l, r) {
        (
            Form::Split {
                rows: Some(a),
                cell: c,
            },
            Form::Split {
                rows: Some(b),
                cell: d,
            },
        ) if a == b && c == d => Some((a.clone(), c.clone())),
        _ => None,
    }
}

fn cell_of(f: &Form) -> &[usize] {
    match f {
        Form::Split { cell, .. } => cell,
        Form::Scalar => &[],
    }
}
