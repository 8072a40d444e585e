//! The CPU reference evaluator: a direct interpreter of the AST with exact APL
//! semantics (Dyalog, ⎕IO=1). It is the oracle of every GPU test and the fallback when
//! no Vulkan device exists.
//!
//! Invariants:
//! - Type rules come from `arrc_ir::scalar`, the same rules the GPU path lowers with, so
//!   both backends give the same element type for the same expression.
//! - Sums and products of floats accumulate in f64 and round once, so the oracle is at
//!   least as accurate as any device order of summation.
//! - Evaluation never panics; every failure is an [`Error`] with a span.

use arrc_ir::error::{err, Error, Result};
use arrc_ir::lower::scalar_error;
use arrc_ir::scalar::{BinOp, UnOp};
use arrc_ir::{Array, Data, ElemType, Scalar};
use arrc_syntax::{Expr, ExprKind, Func, FuncKind, Op1, Prim, Program, Span, Stmt};
use std::collections::HashMap;

/// How deeply dfns may call each other.
const MAX_DEPTH: usize = 256;

/// Names defined in a session: arrays and functions.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub arrays: HashMap<String, Array>,
    pub functions: HashMap<String, Func>,
}

struct Frame {
    arrays: HashMap<String, Array>,
    functions: HashMap<String, Func>,
    dfn: Option<Func>,
}

struct Interp<'e> {
    env: &'e mut Env,
    frames: Vec<Frame>,
}

/// Runs a program; top-level assignments and definitions update `env`. Returns the
/// value of the last expression statement, or `None` when the program only defines
/// functions.
pub fn eval_program(prog: &Program, env: &mut Env) -> Result<Option<Array>> {
    let mut it = Interp {
        env,
        frames: vec![],
    };
    let mut last = None;
    for s in &prog.stmts {
        match s {
            Stmt::Expr(e) => last = Some(it.expr(e)?),
            Stmt::FnDef { name, func, .. } => {
                it.env.functions.insert(name.clone(), func.clone());
                it.env.arrays.remove(name);
                last = None;
            }
            Stmt::Func(_) => last = None,
            Stmt::Guard { cond, .. } => {
                return Err(err::domain("a guard outside a dfn", cond.span.clone()))
            }
        }
    }
    Ok(last)
}

/// Applies `func` (as written in a program) to arguments.
pub fn apply(func: &Func, alpha: Option<&Array>, omega: &Array, env: &mut Env) -> Result<Array> {
    let mut it = Interp {
        env,
        frames: vec![],
    };
    let span = func.span.clone();
    match alpha {
        Some(a) => it.dyadic(func, a.clone(), omega.clone(), &span),
        None => it.monadic(func, omega.clone(), &span),
    }
}

enum Flow {
    Value(Array),
    Return(Array),
}

impl Interp<'_> {
    fn lookup_array(&self, name: &str) -> Option<&Array> {
        for f in self.frames.iter().rev() {
            if let Some(a) = f.arrays.get(name) {
                return Some(a);
            }
        }
        self.env.arrays.get(name)
    }

    fn lookup_fn(&self, name: &str) -> Option<Func> {
        for f in self.frames.iter().rev() {
            if let Some(g) = f.functions.get(name) {
                return Some(g.clone());
            }
        }
        self.env.functions.get(name).cloned()
    }

    fn assign(&mut self, name: &str, v: Array) {
        match self.frames.last_mut() {
            Some(f) => {
                f.arrays.insert(name.to_string(), v);
            }
            None => {
                self.env.functions.remove(name);
                self.env.arrays.insert(name.to_string(), v);
            }
        }
    }

    fn expr(&mut self, e: &Expr) -> Result<Array> {
        let span = e.span.clone();
        match &e.kind {
            ExprKind::Number(n) => Ok(Array::scalar(Scalar::from_literal(*n))),
            ExprKind::Zilde => Ok(Array::vector(Data::I32(vec![]))),
            ExprKind::Str(_) => Err(err::domain(
                "character data is not supported: arrc arrays are numeric",
                span,
            )),
            ExprKind::Strand(items) => {
                let mut vals = Vec::with_capacity(items.len());
                for it in items {
                    let a = self.expr(it)?;
                    if a.rank() != 0 {
                        return Err(err::domain(
                            "nested arrays are not supported: each item of a strand must be a scalar",
                            it.span.clone(),
                        ));
                    }
                    vals.push(a.data.get(0));
                }
                let ty = vals
                    .iter()
                    .map(|s| s.elem_type())
                    .max()
                    .unwrap_or(ElemType::I32);
                let mut d = Data::with_capacity(ty, vals.len());
                vals.into_iter().for_each(|s| d.push(s));
                Ok(Array::vector(d))
            }
            ExprKind::Name(n) => self
                .lookup_array(n)
                .cloned()
                .ok_or_else(|| err::value(format!("undefined name: {n}"), span)),
            ExprKind::SysName(n) => Err(err::value(format!("unknown system name {n}"), span)),
            ExprKind::Alpha => self.lookup_array("⍺").cloned().ok_or_else(|| {
                err::value(
                    "⍺ has no value: the function was called with no left argument",
                    span,
                )
            }),
            ExprKind::Omega => self
                .lookup_array("⍵")
                .cloned()
                .ok_or_else(|| err::value("⍵ is only defined inside a dfn", span)),
            ExprKind::Monadic { func, arg } => {
                let a = self.expr(arg)?;
                self.monadic(func, a, &span)
            }
            ExprKind::Dyadic { func, left, right } => {
                let r = self.expr(right)?;
                let l = self.expr(left)?;
                self.dyadic(func, l, r, &span)
            }
            ExprKind::Assign { name, value, .. } => {
                if name == "⍺" {
                    if let Some(a) = self.lookup_array("⍺") {
                        return Ok(a.clone());
                    }
                }
                let v = self.expr(value)?;
                self.assign(name, v.clone());
                Ok(v)
            }
            ExprKind::Index { .. } => Err(err::unsupported(
                "bracket indexing is not implemented yet",
                span,
            )),
        }
    }

    fn resolve(&self, func: &Func) -> Result<Func> {
        match &func.kind {
            FuncKind::Name(n) => self
                .lookup_fn(n)
                .ok_or_else(|| err::value(format!("undefined function: {n}"), func.span.clone())),
            FuncKind::SelfRef => self
                .frames
                .iter()
                .rev()
                .find_map(|f| f.dfn.clone())
                .ok_or_else(|| err::value("∇ outside a dfn", func.span.clone())),
            _ => Ok(func.clone()),
        }
    }

    fn monadic(&mut self, func: &Func, x: Array, span: &Span) -> Result<Array> {
        let f = self.resolve(func)?;
        let fspan = f.span.clone();
        match &f.kind {
            FuncKind::Prim(Prim::Iota) => iota(&x, fspan),
            FuncKind::Prim(Prim::Plus) => Ok(x),
            FuncKind::Prim(p) => match UnOp::from_prim(*p) {
                Some(op) => unary(op, &x, fspan),
                None => Err(err::unsupported(
                    format!("monadic {} is not implemented yet", p.glyph()),
                    fspan,
                )),
            },
            FuncKind::Dfn(body) => self.call_dfn(&f, body, None, x, span),
            FuncKind::Derived { op, operand } => match op {
                Op1::Reduce => self.fold(operand, &x, fspan, false),
                Op1::Scan => self.fold(operand, &x, fspan, true),
                other => Err(err::unsupported(
                    format!("the operator {} is not implemented yet", other.glyph()),
                    fspan,
                )),
            },
            _ => Err(err::unsupported(
                "this function is not implemented yet",
                fspan,
            )),
        }
    }

    fn dyadic(&mut self, func: &Func, a: Array, b: Array, span: &Span) -> Result<Array> {
        let f = self.resolve(func)?;
        let fspan = f.span.clone();
        match &f.kind {
            FuncKind::Prim(p) => match BinOp::from_prim(*p) {
                Some(op) => binary(op, &a, &b, fspan),
                None => Err(err::unsupported(
                    format!("dyadic {} is not implemented yet", p.glyph()),
                    fspan,
                )),
            },
            FuncKind::Dfn(body) => self.call_dfn(&f, body, Some(a), b, span),
            _ => Err(err::unsupported(
                "this function is not implemented dyadically yet",
                fspan,
            )),
        }
    }

    fn call_dfn(
        &mut self,
        f: &Func,
        body: &Program,
        alpha: Option<Array>,
        omega: Array,
        span: &Span,
    ) -> Result<Array> {
        if self.frames.len() >= MAX_DEPTH {
            return Err(err::domain("dfns nest too deeply", span.clone()));
        }
        let mut arrays = HashMap::new();
        arrays.insert("⍵".to_string(), omega);
        if let Some(a) = alpha {
            arrays.insert("⍺".to_string(), a);
        }
        self.frames.push(Frame {
            arrays,
            functions: HashMap::new(),
            dfn: Some(f.clone()),
        });
        let r = self.body(&body.stmts, span);
        self.frames.pop();
        r
    }

    fn body(&mut self, stmts: &[Stmt], span: &Span) -> Result<Array> {
        let mut last = None;
        for s in stmts {
            match self.stmt(s)? {
                Some(Flow::Return(v)) => return Ok(v),
                Some(Flow::Value(v)) => last = Some(v),
                None => {}
            }
        }
        last.ok_or_else(|| err::value("the function body gives no result", span.clone()))
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Option<Flow>> {
        match s {
            Stmt::Expr(e) => {
                let v = self.expr(e)?;
                // In a dfn, the first expression that is not an assignment is the result.
                Ok(Some(if matches!(e.kind, ExprKind::Assign { .. }) {
                    Flow::Value(v)
                } else {
                    Flow::Return(v)
                }))
            }
            Stmt::Func(f) => Err(err::domain(
                "a function on its own has no array value",
                f.span.clone(),
            )),
            Stmt::FnDef { name, func, .. } => {
                if let Some(f) = self.frames.last_mut() {
                    f.functions.insert(name.clone(), func.clone());
                }
                Ok(None)
            }
            Stmt::Guard { cond, value } => {
                let c = self.expr(cond)?;
                match c.as_singleton().and_then(|s| s.as_i64()) {
                    Some(1) => Ok(Some(Flow::Return(self.expr(value)?))),
                    Some(0) => Ok(None),
                    _ => Err(err::domain(
                        "a guard's condition must be a single 0 or 1",
                        cond.span.clone(),
                    )),
                }
            }
        }
    }

    /// `f/x` (right to left) or `f\x` along the last axis.
    fn fold(&mut self, operand: &Func, x: &Array, span: Span, scan: bool) -> Result<Array> {
        let operand = self.resolve(operand)?;
        if x.rank() == 0 {
            return Ok(x.clone());
        }
        let prim = match &operand.kind {
            FuncKind::Prim(p) => Some(BinOp::from_prim(*p).ok_or_else(|| {
                err::unsupported(
                    format!("{} as an operand is not implemented yet", p.glyph()),
                    span.clone(),
                )
            })?),
            _ => None,
        };
        let n = *x.shape.last().unwrap_or(&0);
        let rows: usize = x.shape[..x.rank() - 1].iter().product();
        let mut shape = x.shape.clone();
        if !scan {
            shape.pop();
        }
        let elem = match prim {
            Some(op) if n == 0 && !scan => op
                .identity(x.elem)
                .map_or(op.reduce_type(x.elem), |s| s.elem_type()),
            Some(op) => op.reduce_type(x.elem),
            None => x.elem,
        };
        let mut out: Vec<Scalar> = Vec::with_capacity(if scan { x.len() } else { rows });
        for r in 0..rows {
            let row: Vec<Scalar> = (0..n).map(|j| x.data.get(r * n + j).cast(elem)).collect();
            if scan {
                match prim {
                    Some(op) if op.is_associative() => {
                        scan_associative(op, &row, elem, &span, &mut out)?
                    }
                    _ => {
                        for i in 0..n {
                            out.push(self.fold_row(prim, &operand, &row[..=i], elem, &span)?);
                        }
                    }
                }
            } else if n == 0 {
                let id = prim.and_then(|op| op.identity(x.elem)).ok_or_else(|| {
                    err::domain(
                        "this function has no identity element for an empty reduction",
                        span.clone(),
                    )
                })?;
                out.push(id);
            } else {
                out.push(self.fold_row(prim, &operand, &row, elem, &span)?);
            }
        }
        let mut d = Data::with_capacity(elem, out.len());
        out.into_iter().for_each(|s| d.push(s));
        Ok(Array::new(shape, d))
    }

    /// The right-to-left reduction of a non-empty row.
    fn fold_row(
        &mut self,
        prim: Option<BinOp>,
        operand: &Func,
        row: &[Scalar],
        elem: ElemType,
        span: &Span,
    ) -> Result<Scalar> {
        match prim {
            Some(op @ (BinOp::Add | BinOp::Mul)) if elem == ElemType::F32 => {
                // Exact-as-possible oracle: accumulate in f64, round once.
                let mut acc = if op == BinOp::Add { 0.0f64 } else { 1.0 };
                for s in row {
                    acc = if op == BinOp::Add {
                        acc + s.as_f64()
                    } else {
                        acc * s.as_f64()
                    };
                }
                Ok(Scalar::F32(acc as f32))
            }
            Some(op) => {
                let mut acc = row[row.len() - 1];
                for s in row[..row.len() - 1].iter().rev() {
                    acc = combine(op, *s, acc, elem, span)?;
                }
                Ok(acc)
            }
            None => {
                let mut acc = Array::scalar(row[row.len() - 1]);
                for s in row[..row.len() - 1].iter().rev() {
                    acc = self.dyadic(operand, Array::scalar(*s), acc, span)?;
                }
                acc.as_singleton()
                    .filter(|_| acc.rank() == 0)
                    .ok_or_else(|| err::domain("the operand must return a scalar", span.clone()))
            }
        }
    }
}

/// A running scan of an associative function; float sums and products accumulate in f64.
fn scan_associative(
    op: BinOp,
    row: &[Scalar],
    elem: ElemType,
    span: &Span,
    out: &mut Vec<Scalar>,
) -> Result<()> {
    if elem == ElemType::F32 && matches!(op, BinOp::Add | BinOp::Mul) {
        let mut acc = if op == BinOp::Add { 0.0f64 } else { 1.0 };
        for s in row {
            acc = if op == BinOp::Add {
                acc + s.as_f64()
            } else {
                acc * s.as_f64()
            };
            out.push(Scalar::F32(acc as f32));
        }
        return Ok(());
    }
    let mut acc: Option<Scalar> = None;
    for s in row {
        let next = match acc {
            None => *s,
            Some(a) => combine(op, a, *s, elem, span)?,
        };
        out.push(next);
        acc = Some(next);
    }
    Ok(())
}

fn combine(op: BinOp, a: Scalar, b: Scalar, elem: ElemType, span: &Span) -> Result<Scalar> {
    op.apply(a, b)
        .map(|s| s.cast(elem))
        .map_err(|e| scalar_error(e, span.clone()))
}

fn iota(x: &Array, span: Span) -> Result<Array> {
    if x.rank() > 1 || x.len() != 1 {
        return Err(err::domain(
            "⍳ takes a single non-negative integer here",
            span,
        ));
    }
    match x.data.get(0).as_i64() {
        Some(n) if (0..=i32::MAX as i64).contains(&n) => {
            Ok(Array::vector(Data::I32((1..=n as i32).collect())))
        }
        Some(n) if n > i32::MAX as i64 => Err(err::domain(
            format!("⍳{n} is too long: at most {} items", i32::MAX),
            span,
        )),
        _ => Err(err::domain("⍳ needs a non-negative integer", span)),
    }
}

fn unary(op: UnOp, x: &Array, span: Span) -> Result<Array> {
    let elem = op.result_type(x.elem);
    let mut d = Data::with_capacity(elem, x.len());
    for i in 0..x.len() {
        d.push(
            op.apply(x.data.get(i))
                .map_err(|e| scalar_error(e, span.clone()))?,
        );
    }
    Ok(Array::new(x.shape.clone(), d))
}

/// A dyadic scalar function with scalar and singleton extension.
pub fn binary(op: BinOp, a: &Array, b: &Array, span: Span) -> Result<Array> {
    let a_ext = a.rank() == 0 || (a.len() == 1 && a.rank() <= b.rank());
    let b_ext = b.rank() == 0 || (b.len() == 1 && b.rank() <= a.rank());
    let shape = if a_ext {
        b.shape.clone()
    } else if b_ext {
        a.shape.clone()
    } else if a.rank() != b.rank() {
        return Err(err::rank(
            format!(
                "arguments of rank {} and {} do not conform",
                a.rank(),
                b.rank()
            ),
            span,
        ));
    } else if a.shape != b.shape {
        let (x, y) = a
            .shape
            .iter()
            .zip(&b.shape)
            .find(|(x, y)| x != y)
            .map_or((0, 0), |(x, y)| (*x, *y));
        return Err(err::length(
            format!("lengths {x} and {y} do not match"),
            span,
        ));
    } else {
        a.shape.clone()
    };
    let t = op.operand_type(a.elem, b.elem);
    let elem = op.result_type(a.elem, b.elem);
    let n: usize = shape.iter().product();
    let mut d = Data::with_capacity(elem, n);
    for i in 0..n {
        let x = a.data.get(if a_ext { 0 } else { i }).cast(t);
        let y = b.data.get(if b_ext { 0 } else { i }).cast(t);
        d.push(op.apply(x, y).map_err(|e| scalar_error(e, span.clone()))?);
    }
    Ok(Array::new(shape, d))
}

/// Parses and evaluates `src` in a fresh environment.
pub fn eval_str(src: &str) -> Result<Option<Array>> {
    let prog = arrc_syntax::parse_str(src).map_err(Error::from)?;
    eval_program(&prog, &mut Env::default())
}
