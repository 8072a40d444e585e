//! Lowering: AST → IR. Names are resolved, dfns are inlined at their call sites, scalar
//! functions get explicit casts and scalar extension, and every shape is inferred.
//! Shape and length errors that can be seen before running are reported here, with the
//! span of the function that raised them.

use crate::array::{Array, Data, ElemType, Scalar};
use crate::error::{err, Result};
use crate::ir::{Dim, Function, Inst, LengthCheck, Param, Type, Value};
use crate::scalar::{BinOp, ScalarError, UnOp};
use arrc_syntax::{Expr, ExprKind, Func, FuncKind, Op1, Prim, Program, Span, Stmt};
use std::collections::HashMap;

/// How deeply dfns may call each other before lowering gives up.
const MAX_INLINE_DEPTH: usize = 64;

/// What a name stands for while lowering.
#[derive(Clone, Debug)]
enum Binding {
    Array(Value),
    Func(Func),
}

struct Lower {
    f: Function,
    scopes: Vec<HashMap<String, Binding>>,
    depth: usize,
}

/// Lowers a program whose free names are the given parameters (arrays supplied at run
/// time). `functions` are named functions defined earlier (a session or library).
pub fn lower_program(
    prog: &Program,
    params: &[Param],
    functions: &[(String, Func)],
) -> Result<Function> {
    let mut l = Lower::new(functions);
    for (i, p) in params.iter().enumerate() {
        let v = l.param(i as u32, p);
        l.bind(&p.name, Binding::Array(v));
    }
    let span = 0..0;
    let result = l.stmts(&prog.stmts, &span)?;
    l.f.result = Some(result);
    Ok(l.f)
}

/// Lowers a program that denotes a function (such as `{+/⍵×⍵}`, or statements ending in
/// `f←{…}`) applied to `⍵` of type `omega` and, if given, `⍺` of type `alpha`.
pub fn lower_function(prog: &Program, omega: Type, alpha: Option<Type>) -> Result<Function> {
    let mut l = Lower::new(&[]);
    let mut func = None;
    for s in &prog.stmts {
        match s {
            Stmt::FnDef {
                name, func: fun, ..
            } => {
                l.bind(name, Binding::Func(fun.clone()));
                func = Some(fun.clone());
            }
            Stmt::Func(fun) => func = Some(fun.clone()),
            Stmt::Expr(Expr {
                kind: ExprKind::Assign { .. },
                ..
            }) => {
                if let Stmt::Expr(e) = s {
                    l.expr(e)?;
                }
                func = None;
            }
            Stmt::Expr(e) => {
                return Err(err::domain(
                    "a program for `arrc build` must define a function, such as {+/⍵×⍵}",
                    e.span.clone(),
                ))
            }
            Stmt::Guard { cond, .. } => {
                return Err(err::domain("a guard outside a dfn", cond.span.clone()))
            }
        }
    }
    let Some(func) = func else {
        return Err(err::domain(
            "the program defines no function; write one such as f←{+/⍵×⍵}",
            0..0,
        ));
    };
    let w = l.param(
        0,
        &Param {
            name: "⍵".into(),
            ty: omega,
        },
    );
    let result = match alpha {
        Some(a) => {
            let a = l.param(
                1,
                &Param {
                    name: "⍺".into(),
                    ty: a,
                },
            );
            l.dyadic(&func, a, w, &func.span.clone())?
        }
        None => l.monadic(&func, w, &func.span.clone())?,
    };
    l.f.result = Some(result);
    Ok(l.f)
}

impl Lower {
    fn new(functions: &[(String, Func)]) -> Lower {
        let mut global = HashMap::new();
        for (n, f) in functions {
            global.insert(n.clone(), Binding::Func(f.clone()));
        }
        Lower {
            f: Function::default(),
            scopes: vec![global],
            depth: 0,
        }
    }

    fn param(&mut self, index: u32, p: &Param) -> Value {
        for (axis, d) in p.ty.shape.iter().enumerate() {
            if let Dim::Sym(s) = d {
                while self.f.syms.len() <= s.0 as usize {
                    self.f.syms.push((u32::MAX, u32::MAX));
                }
                if self.f.syms[s.0 as usize].0 == u32::MAX {
                    self.f.syms[s.0 as usize] = (index, axis as u32);
                }
            }
        }
        self.f.params.push(p.clone());
        self.f.push(Inst::Param { index }, p.ty.clone(), 0..0)
    }

    fn bind(&mut self, name: &str, b: Binding) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), b);
        }
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn stmts(&mut self, stmts: &[Stmt], span: &Span) -> Result<Value> {
        let mut last = None;
        for s in stmts {
            match s {
                Stmt::Expr(e) => last = Some(self.expr(e)?),
                Stmt::FnDef { name, func, .. } => self.bind(name, Binding::Func(func.clone())),
                Stmt::Func(f) => {
                    return Err(err::domain(
                        "a function on its own has no array value",
                        f.span.clone(),
                    ));
                }
                Stmt::Guard { cond, .. } => {
                    return Err(err::unsupported(
                        "guards need a value on the host; the GPU path does not run them yet",
                        cond.span.clone(),
                    ))
                }
            }
        }
        last.ok_or_else(|| {
            err::value(
                "no result: the program or function body is empty",
                span.clone(),
            )
        })
    }

    fn konst(&mut self, a: Array, span: Span) -> Value {
        let ty = Type {
            elem: a.elem,
            shape: a.shape.iter().map(|&n| Dim::Known(n as u64)).collect(),
        };
        self.f.push(Inst::Const(a), ty, span)
    }

    fn as_const(&self, v: Value) -> Option<&Array> {
        match self.f.inst(v) {
            Inst::Const(a) => Some(a),
            _ => None,
        }
    }

    fn expr(&mut self, e: &Expr) -> Result<Value> {
        stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || self.expr_inner(e))
    }

    fn expr_inner(&mut self, e: &Expr) -> Result<Value> {
        let span = e.span.clone();
        match &e.kind {
            ExprKind::Number(n) => Ok(self.konst(Array::scalar(Scalar::from_literal(*n)), span)),
            ExprKind::Zilde => Ok(self.konst(Array::vector(Data::I32(vec![])), span)),
            ExprKind::Str(_) => Err(err::domain(
                "character data is not supported: arrc arrays are numeric",
                span,
            )),
            ExprKind::Strand(items) => {
                let mut vals = Vec::new();
                for it in items {
                    let v = self.expr(it)?;
                    match self
                        .as_const(v)
                        .and_then(|a| (a.rank() == 0).then(|| a.data.get(0)))
                    {
                        Some(s) => vals.push(s),
                        None => {
                            return Err(err::unsupported(
                                "a strand of computed values is not supported on the GPU path yet",
                                it.span.clone(),
                            ))
                        }
                    }
                }
                let ty = vals
                    .iter()
                    .map(|s| s.elem_type())
                    .max()
                    .unwrap_or(ElemType::I32);
                let mut d = Data::with_capacity(ty, vals.len());
                for s in vals {
                    d.push(s);
                }
                Ok(self.konst(Array::vector(d), span))
            }
            ExprKind::Name(n) => match self.lookup(n) {
                Some(Binding::Array(v)) => Ok(*v),
                Some(Binding::Func(_)) => Err(err::domain(
                    format!("{n} is a function, not an array"),
                    span,
                )),
                None => Err(err::value(format!("undefined name: {n}"), span)),
            },
            ExprKind::SysName(n) => Err(err::unsupported(
                format!("{n} is not supported on the GPU path"),
                span,
            )),
            ExprKind::Alpha => match self.lookup("⍺") {
                Some(Binding::Array(v)) => Ok(*v),
                _ => Err(err::value(
                    "⍺ has no value: the function was called with no left argument",
                    span,
                )),
            },
            ExprKind::Omega => match self.lookup("⍵") {
                Some(Binding::Array(v)) => Ok(*v),
                _ => Err(err::value("⍵ is only defined inside a dfn", span)),
            },
            ExprKind::Monadic { func, arg } => {
                let a = self.expr(arg)?;
                self.monadic(func, a, &span)
            }
            ExprKind::Dyadic { func, left, right } => {
                // APL evaluates the right argument first.
                let r = self.expr(right)?;
                let l = self.expr(left)?;
                self.dyadic(func, l, r, &span)
            }
            ExprKind::Assign { name, value, .. } => {
                if name == "⍺" && self.lookup("⍺").is_some() {
                    // `⍺←default` only applies when no left argument was given.
                    return match self.lookup("⍺") {
                        Some(Binding::Array(v)) => Ok(*v),
                        _ => Err(err::value("⍺", span)),
                    };
                }
                let v = self.expr(value)?;
                self.bind(name, Binding::Array(v));
                Ok(v)
            }
            ExprKind::Index { .. } => Err(err::unsupported(
                "indexing is not supported on the GPU path yet",
                span,
            )),
        }
    }

    fn resolve(&self, func: &Func) -> Result<Func> {
        match &func.kind {
            FuncKind::Name(n) => match self.lookup(n) {
                Some(Binding::Func(f)) => Ok(f.clone()),
                Some(Binding::Array(_)) => Err(err::domain(
                    format!("{n} is an array, not a function"),
                    func.span.clone(),
                )),
                None => Err(err::value(
                    format!("undefined function: {n}"),
                    func.span.clone(),
                )),
            },
            _ => Ok(func.clone()),
        }
    }

    fn monadic(&mut self, func: &Func, arg: Value, span: &Span) -> Result<Value> {
        let fspan = func.span.clone();
        match &self.resolve(func)?.kind {
            FuncKind::Prim(Prim::Iota) => self.iota(arg, fspan),
            FuncKind::Prim(Prim::Plus) => Ok(arg),
            FuncKind::Prim(p) => match UnOp::from_prim(*p) {
                Some(op) if op.on_gpu_for(self.f.ty(arg).elem) => self.unary(op, arg, fspan),
                _ => Err(err::unsupported(
                    format!("monadic {} is not supported on the GPU path yet", p.glyph()),
                    fspan,
                )),
            },
            FuncKind::Dfn(body) => self.call_dfn(body, None, arg, span),
            FuncKind::Derived { op, operand } => {
                let operand = self.resolve(operand)?;
                let bin = self.operand_op(&operand)?;
                let elem = self.f.ty(arg).elem;
                if !bin.on_gpu_for(elem, elem) || bin.is_comparison() {
                    return Err(err::unsupported(
                        format!(
                            "{}{} is not supported on the GPU path yet for {elem}",
                            bin.glyph(),
                            op.glyph()
                        ),
                        fspan,
                    ));
                }
                let empty_axis = self.f.ty(arg).shape.last() == Some(&Dim::Known(0));
                if matches!(operand.kind, FuncKind::Dfn(_)) && empty_axis && *op == Op1::Reduce {
                    // A dfn has no identity element: reducing an empty axis is an error.
                    return Err(err::domain(
                        "this function has no identity element for an empty reduction",
                        fspan,
                    ));
                }
                match op {
                    Op1::Reduce => self.reduce(bin, arg, fspan),
                    Op1::Scan => self.scan(bin, arg, fspan),
                    other => Err(err::unsupported(
                        format!(
                            "the operator {} is not supported on the GPU path yet",
                            other.glyph()
                        ),
                        fspan,
                    )),
                }
            }
            FuncKind::SelfRef => Err(err::unsupported(
                "∇ recursion is not supported on the GPU path",
                fspan,
            )),
            FuncKind::Name(_) => unreachable_name(fspan),
            FuncKind::Outer(_) | FuncKind::Inner(..) => Err(err::unsupported(
                "outer and inner products need a left argument",
                fspan,
            )),
            FuncKind::Axis(..) => Err(err::unsupported(
                "axis brackets are not supported on the GPU path yet",
                fspan,
            )),
        }
    }

    fn dyadic(&mut self, func: &Func, l: Value, r: Value, span: &Span) -> Result<Value> {
        let fspan = func.span.clone();
        match &self.resolve(func)?.kind {
            FuncKind::Prim(p) => match BinOp::from_prim(*p) {
                Some(op) if op.on_gpu_for(self.f.ty(l).elem, self.f.ty(r).elem) => {
                    self.binary(op, l, r, fspan)
                }
                Some(BinOp::Power) if self.small_power(r).is_some() => {
                    let k = self.small_power(r).unwrap_or(1);
                    self.power(l, k, fspan)
                }
                _ => Err(err::unsupported(
                    format!("dyadic {} is not supported on the GPU path yet", p.glyph()),
                    fspan,
                )),
            },
            FuncKind::Dfn(body) => self.call_dfn(body, Some(l), r, span),
            FuncKind::Name(_) => unreachable_name(fspan),
            _ => Err(err::unsupported(
                "this derived function is not supported dyadically on the GPU path yet",
                fspan,
            )),
        }
    }

    /// The scalar function an operator's operand denotes: a primitive, or a dfn whose
    /// body is `⍺ f ⍵`.
    fn operand_op(&self, operand: &Func) -> Result<BinOp> {
        let span = operand.span.clone();
        match &operand.kind {
            FuncKind::Prim(p) => BinOp::from_prim(*p)
                .filter(|op| op.on_gpu() || matches!(op, BinOp::And | BinOp::Or))
                .ok_or_else(|| {
                    err::unsupported(
                        format!(
                            "{} as an operand is not supported on the GPU path yet",
                            p.glyph()
                        ),
                        span,
                    )
                }),
            FuncKind::Dfn(body) => match body.stmts.as_slice() {
                [Stmt::Expr(Expr {
                    kind: ExprKind::Dyadic { func, left, right },
                    ..
                })] if matches!(left.kind, ExprKind::Alpha)
                    && matches!(right.kind, ExprKind::Omega) =>
                {
                    self.operand_op(&self.resolve(func)?)
                }
                _ => Err(err::unsupported(
                    "a dfn operand other than {⍺ f ⍵} is not supported on the GPU path yet",
                    span,
                )),
            },
            _ => Err(err::unsupported(
                "this operand is not supported on the GPU path yet",
                span,
            )),
        }
    }

    fn call_dfn(
        &mut self,
        body: &Program,
        alpha: Option<Value>,
        omega: Value,
        span: &Span,
    ) -> Result<Value> {
        if self.depth >= MAX_INLINE_DEPTH {
            return Err(err::domain("dfns nest too deeply", span.clone()));
        }
        self.depth += 1;
        let mut scope = HashMap::new();
        scope.insert("⍵".to_string(), Binding::Array(omega));
        if let Some(a) = alpha {
            scope.insert("⍺".to_string(), Binding::Array(a));
        }
        self.scopes.push(scope);
        let r = self.stmts(&body.stmts, span);
        self.scopes.pop();
        self.depth -= 1;
        r
    }

    fn cast(&mut self, v: Value, elem: ElemType) -> Value {
        let ty = self.f.ty(v).clone();
        if ty.elem == elem {
            return v;
        }
        if let Some(a) = self.as_const(v) {
            let a = a.cast(elem);
            let span = self.f.span(v);
            return self.konst(a, span);
        }
        let span = self.f.span(v);
        self.f.push(
            Inst::Cast(v),
            Type {
                elem,
                shape: ty.shape,
            },
            span,
        )
    }

    fn unary(&mut self, op: UnOp, arg: Value, span: Span) -> Result<Value> {
        let ty = self.f.ty(arg).clone();
        let elem = op.result_type(ty.elem);
        if let Some(a) = self.as_const(arg).filter(|a| a.len() <= 1) {
            let a = a.clone();
            let mut d = Data::with_capacity(elem, a.len());
            for i in 0..a.len() {
                d.push(
                    op.apply(a.data.get(i))
                        .map_err(|e| scalar_error(e, span.clone()))?,
                );
            }
            return Ok(self.konst(Array::new(a.shape.clone(), d), span));
        }
        Ok(self.f.push(
            Inst::Unary { op, arg },
            Type {
                elem,
                shape: ty.shape,
            },
            span,
        ))
    }

    fn binary(&mut self, op: BinOp, l: Value, r: Value, span: Span) -> Result<Value> {
        let (lt, rt) = (self.f.ty(l).clone(), self.f.ty(r).clone());
        let shape = self.extend(&lt, &rt, &span)?;
        let t = op.operand_type(lt.elem, rt.elem);
        let elem = op.result_type(lt.elem, rt.elem);
        let (l, r) = (self.cast(l, t), self.cast(r, t));
        if let (Some(a), Some(b)) = (self.as_const(l), self.as_const(r)) {
            if a.len() == 1 && b.len() == 1 {
                let s = op
                    .apply(a.data.get(0), b.data.get(0))
                    .map_err(|e| scalar_error(e, span.clone()))?;
                let shape: Vec<usize> = shape
                    .iter()
                    .map(|d| {
                        if let Dim::Known(n) = d {
                            *n as usize
                        } else {
                            1
                        }
                    })
                    .collect();
                return Ok(self.konst(Array::new(shape, single(s)), span));
            }
        }
        Ok(self.f.push(
            Inst::Binary { op, lhs: l, rhs: r },
            Type { elem, shape },
            span,
        ))
    }

    /// The result shape of a scalar function: equal shapes, or scalar/singleton extension.
    fn extend(&mut self, lt: &Type, rt: &Type, span: &Span) -> Result<Vec<Dim>> {
        if lt.rank() == 0 || (lt.is_singleton() && lt.rank() <= rt.rank()) {
            return Ok(rt.shape.clone());
        }
        if rt.rank() == 0 || (rt.is_singleton() && rt.rank() <= lt.rank()) {
            return Ok(lt.shape.clone());
        }
        if lt.rank() != rt.rank() {
            return Err(err::rank(
                format!(
                    "arguments of rank {} and {} do not conform",
                    lt.rank(),
                    rt.rank()
                ),
                span.clone(),
            ));
        }
        let mut out = Vec::new();
        for (a, b) in lt.shape.iter().zip(&rt.shape) {
            out.push(match (a, b) {
                (Dim::Known(x), Dim::Known(y)) if x != y => {
                    return Err(err::length(
                        format!("lengths {x} and {y} do not match"),
                        span.clone(),
                    ))
                }
                (Dim::Known(_), _) => *a,
                (_, Dim::Known(_)) => *b,
                (Dim::Sym(x), Dim::Sym(y)) => {
                    if x != y {
                        self.f.checks.push(LengthCheck {
                            a: *a,
                            b: *b,
                            span: span.clone(),
                        });
                    }
                    *a
                }
            });
            if let (Dim::Sym(_), Dim::Known(_)) | (Dim::Known(_), Dim::Sym(_)) = (a, b) {
                self.f.checks.push(LengthCheck {
                    a: *a,
                    b: *b,
                    span: span.clone(),
                });
            }
        }
        Ok(out)
    }

    fn iota(&mut self, arg: Value, span: Span) -> Result<Value> {
        let Some(a) = self.as_const(arg) else {
            return Err(err::unsupported(
                "⍳ of a value computed on the device is not supported yet: its length must be known before the program runs",
                span,
            ));
        };
        if a.rank() > 1 || a.len() != 1 {
            return Err(err::domain(
                "⍳ takes a single non-negative integer here",
                span,
            ));
        }
        let n = match a.data.get(0).as_i64() {
            Some(n) if n >= 0 => n,
            _ => return Err(err::domain("⍳ needs a non-negative integer", span)),
        };
        if n > i32::MAX as i64 {
            return Err(err::domain(
                format!("⍳{n} is too long: at most {} items", i32::MAX),
                span,
            ));
        }
        Ok(self.f.push(
            Inst::Iota {
                len: Dim::Known(n as u64),
            },
            Type {
                elem: ElemType::I32,
                shape: vec![Dim::Known(n as u64)],
            },
            span,
        ))
    }

    /// The exponent of `x*k` when `k` is a literal integer from 0 to 4.
    fn small_power(&self, r: Value) -> Option<i64> {
        let a = self.as_const(r)?;
        if a.len() != 1 || a.rank() != 0 {
            return None;
        }
        a.data.get(0).as_i64().filter(|k| (0..=4).contains(k))
    }

    /// `x*k` for a small literal integer `k`, as multiplications (f32, like `*`).
    fn power(&mut self, x: Value, k: i64, span: Span) -> Result<Value> {
        let xf = self.cast(x, ElemType::F32);
        let one = self.konst(Array::scalar(Scalar::F32(1.0)), span.clone());
        Ok(match k {
            0 => {
                // x*0 is 1 with x's shape.
                let zero = self.konst(Array::scalar(Scalar::F32(0.0)), span.clone());
                let z = self.binary(BinOp::Mul, xf, zero, span.clone())?;
                self.binary(BinOp::Add, z, one, span)?
            }
            1 => self.binary(BinOp::Mul, xf, one, span)?,
            2 => self.binary(BinOp::Mul, xf, xf, span)?,
            3 => {
                let sq = self.binary(BinOp::Mul, xf, xf, span.clone())?;
                self.binary(BinOp::Mul, sq, xf, span)?
            }
            _ => {
                let sq = self.binary(BinOp::Mul, xf, xf, span.clone())?;
                self.binary(BinOp::Mul, sq, sq, span)?
            }
        })
    }

    /// Shared checks of reduce and scan; `None` when the argument is a scalar.
    fn fold_type(
        &self,
        op: BinOp,
        arg: Value,
        span: &Span,
        what: &str,
    ) -> Result<Option<(Type, Dim)>> {
        let ty = self.f.ty(arg).clone();
        let Some(&axis) = ty.shape.last() else {
            return Ok(None);
        };
        if !op.is_associative() {
            return Err(err::unsupported(
                format!(
                    "{}{what} folds right to left; the GPU path does not run it yet",
                    op.glyph()
                ),
                span.clone(),
            ));
        }
        let elem = op.reduce_type(ty.elem);
        Ok(Some((
            Type {
                elem,
                shape: ty.shape,
            },
            axis,
        )))
    }

    fn reduce(&mut self, op: BinOp, arg: Value, span: Span) -> Result<Value> {
        let Some((mut ty, axis)) = self.fold_type(op, arg, &span, "/")? else {
            return Ok(arg);
        };
        ty.shape.pop();
        if axis == Dim::Known(0) {
            // The identity's type: `⌈/⍬` is the most negative float.
            if let (Some(id), true) = (
                op.identity(self.f.ty(arg).elem),
                ty.shape.iter().all(|d| matches!(d, Dim::Known(_))),
            ) {
                let shape: Vec<usize> = ty
                    .shape
                    .iter()
                    .map(|d| {
                        if let Dim::Known(n) = d {
                            *n as usize
                        } else {
                            0
                        }
                    })
                    .collect();
                let n = shape.iter().product();
                let mut d = Data::with_capacity(id.elem_type(), n);
                (0..n).for_each(|_| d.push(id));
                return Ok(self.konst(Array::new(shape, d), span));
            }
        }
        let arg = self.cast(arg, ty.elem);
        Ok(self.f.push(Inst::Reduce { op, arg }, ty, span))
    }

    fn scan(&mut self, op: BinOp, arg: Value, span: Span) -> Result<Value> {
        let Some((ty, _)) = self.fold_type(op, arg, &span, "\\")? else {
            return Ok(arg);
        };
        let arg = self.cast(arg, ty.elem);
        Ok(self.f.push(Inst::Scan { op, arg }, ty, span))
    }
}

fn single(s: Scalar) -> Data {
    let mut d = Data::with_capacity(s.elem_type(), 1);
    d.push(s);
    d
}

fn unreachable_name(span: Span) -> Result<Value> {
    Err(err::value("a function name did not resolve", span))
}

/// The APL error a scalar function raises.
pub fn scalar_error(e: ScalarError, span: Span) -> crate::error::Error {
    match e {
        ScalarError::DivideByZero => err::domain("division by zero", span),
        ScalarError::Overflow => err::domain("integer result does not fit in 64 bits", span),
        ScalarError::Domain(why) => err::domain(why, span),
    }
}
