//! Lowering: AST → IR. Names are resolved, dfns are inlined at their call sites, scalar
//! functions get explicit casts and scalar extension, and every shape is inferred.
//! Shape and length errors that can be seen before running are reported here, with the
//! span of the function that raised them.

use crate::array::{Array, Data, ElemType, Scalar};
use crate::error::{err, Result};
use crate::ir::{Comb, Dim, Function, Gather, Inst, LengthCheck, Param, SearchKind, Type, Value};
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
    /// ⎕IO: indices the program writes and reads start here (0 or 1). Inside the IR,
    /// `Index` takes 1-based indices.
    io: i64,
    scopes: Vec<HashMap<String, Binding>>,
    /// Host-known values of parameters (`Param::value`).
    known: HashMap<Value, Array>,
    /// Per scope past the first (the workspace's): the dfn body it runs and the scope
    /// of the dfn whose text encloses it (names resolve lexically, as in Dyalog).
    frames: Vec<(Program, usize)>,
    depth: usize,
    /// Trials on scalar stand-ins running ([`Lower::trial`]): their guards become
    /// selects.
    trials: usize,
}

/// The locals of a dfn the host is running (its body, and its local functions), over
/// which a statement of that body is lowered: names resolve lexically through them,
/// so a workspace function the statement calls does not see them. A parameter named
/// [`scoped_name`]`(n, k)` is the local `n` of the `k`-th of them (from 1).
#[derive(Clone, Debug, Default)]
pub struct LocalScope {
    pub body: Program,
    pub functions: Vec<(String, Func)>,
}

/// The most elements lowering makes into a literal on the host (identities of an
/// empty reduction, replicate's and `⍸`'s indices): the reference's own limit, past
/// which both say WS FULL.
pub const LITERAL_LIMIT: u64 = 1 << 28;

/// Separates a local's name from its scope in a parameter's name.
const SCOPE_MARK: char = '\u{1f}';

/// The parameter name of the local `name` of the `scope`-th [`LocalScope`] (from 1).
pub fn scoped_name(name: &str, scope: usize) -> String {
    format!("{name}{SCOPE_MARK}{scope}")
}

/// Lowers a program whose free names are the given parameters (arrays supplied at run
/// time). `functions` are named functions defined earlier (a session or library);
/// `locals`, outermost first, the dfns running around it (see [`LocalScope`]).
pub fn lower_program(
    prog: &Program,
    params: &[Param],
    functions: &[(String, Func)],
    locals: &[LocalScope],
    float: ElemType,
    io: i64,
) -> Result<Function> {
    let mut l = Lower::new(functions, float);
    l.io = io;
    // Scope k (from 1) is locals[k-1], whose dfn's text lies in that of scope k-1.
    for (k, s) in locals.iter().enumerate() {
        let fns = s.functions.iter();
        l.scopes.push(
            fns.map(|(n, f)| (n.clone(), Binding::Func(f.clone())))
                .collect(),
        );
        l.frames.push((s.body.clone(), k));
    }
    for (i, p) in params.iter().enumerate() {
        let v = l.param(i as u32, p);
        let (name, scope) = match p.name.split_once(SCOPE_MARK) {
            Some((n, k)) => (n, k.parse::<usize>().unwrap_or(0).min(locals.len())),
            None => (p.name.as_str(), 0),
        };
        l.scopes[scope].insert(name.to_string(), Binding::Array(v));
    }
    let span = 0..0;
    let result = l.stmts(&prog.stmts, &span)?;
    l.f.result = Some(result);
    Ok(l.f)
}

/// Lowers a program that denotes a function (such as `{+/⍵×⍵}`, or statements ending in
/// `f←{…}`) applied to `⍵` of type `omega` and, if given, `⍺` of type `alpha`; its floats
/// are `float`.
pub fn lower_function(
    prog: &Program,
    omega: Type,
    alpha: Option<Type>,
    float: ElemType,
) -> Result<Function> {
    let mut l = Lower::new(&[], float);
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
            value: None,
        },
    );
    let result = match alpha {
        Some(a) => {
            let a = l.param(
                1,
                &Param {
                    name: "⍺".into(),
                    ty: a,
                    value: None,
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
    fn new(functions: &[(String, Func)], float: ElemType) -> Lower {
        let mut global = HashMap::new();
        for (n, f) in functions {
            global.insert(n.clone(), Binding::Func(f.clone()));
        }
        Lower {
            f: Function {
                float,
                ..Function::default()
            },
            io: 1,
            scopes: vec![global],
            known: HashMap::new(),
            frames: vec![],
            depth: 0,
            trials: 0,
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
        let v = self.f.push(Inst::Param { index }, p.ty.clone(), 0..0);
        if let Some(a) = &p.value {
            self.known.insert(v, a.clone());
        }
        v
    }

    fn bind(&mut self, name: &str, b: Binding) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), b);
        }
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        let top = self.scopes.len() - 1;
        // ⍺ and ⍵ belong to the running dfn alone.
        if name == "⍺" || name == "⍵" {
            return self.scopes[top].get(name);
        }
        let mut k = top;
        loop {
            if let Some(b) = self.scopes[k].get(name) {
                return Some(b);
            }
            if k == 0 {
                return None;
            }
            k = self.frames[k - 1].1;
        }
    }

    fn stmts(&mut self, stmts: &[Stmt], span: &Span) -> Result<Value> {
        let mut last = None;
        for (i, s) in stmts.iter().enumerate() {
            match s {
                // In a dfn the first statement that is not an assignment gives the
                // result (`{1 ⋄ 2}0` is 1); a program's statements all run.
                Stmt::Expr(e) if self.depth > 0 && !matches!(e.kind, ExprKind::Assign { .. }) => {
                    return self.expr(e)
                }
                Stmt::Expr(e) => last = Some(self.expr(e)?),
                Stmt::FnDef { name, func, .. } => self.bind(name, Binding::Func(func.clone())),
                Stmt::Func(f) => {
                    return Err(err::domain(
                        "a function on its own has no array value",
                        f.span.clone(),
                    ));
                }
                Stmt::Guard { cond, value } => {
                    let c = self.expr(cond)?;
                    match self.known_value(c).map(|a| (a.len(), a.as_singleton())) {
                        Some((1, Some(s))) if s.as_i64() == Some(1) => return self.expr(value),
                        Some((1, Some(s))) if s.as_i64() == Some(0) => continue,
                        Some(_) => {
                            return Err(err::domain(
                                "a guard's condition must be a single 0 or 1",
                                cond.span.clone(),
                            ))
                        }
                        None => {}
                    }
                    return self.guard(c, value, &stmts[i + 1..], &cond.span, span);
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

    /// A guard whose condition `c` the device computes: inside a trial on scalar
    /// stand-ins, a select of `value` and the rest of the body (both scalars), of which
    /// only the chosen one runs. Elsewhere the host runs it.
    fn guard(
        &mut self,
        c: Value,
        value: &Expr,
        rest: &[Stmt],
        cspan: &Span,
        span: &Span,
    ) -> Result<Value> {
        let ct = self.f.ty(c).clone();
        if self.trials == 0 || rest.is_empty() || ct.rank() != 0 {
            return Err(err::unsupported(
                "guards need a value on the host; the GPU path does not run them yet",
                cspan.clone(),
            ));
        }
        if ct.elem != ElemType::Bool {
            return Err(err::unsupported(
                "a guard computed on the device must be a comparison (a boolean)",
                cspan.clone(),
            ));
        }
        // The value's assignments are not the rest's.
        let scope = self.scopes.last().cloned();
        let then = self.expr(value)?;
        if let (Some(s), Some(top)) = (scope, self.scopes.last_mut()) {
            *top = s;
        }
        let els = self.stmts(rest, span)?;
        if self.f.ty(then).rank() != 0 || self.f.ty(els).rank() != 0 {
            return Err(err::unsupported(
                "a guard computed on the device must choose between scalars",
                cspan.clone(),
            ));
        }
        self.select(c, then, els, span)
    }

    /// `then` where `c` is 1, else `els`, element by element (see [`Inst::Select`]).
    fn select(&mut self, c: Value, then: Value, els: Value, span: &Span) -> Result<Value> {
        let elem = self.f.ty(then).elem.join(self.f.ty(els).elem);
        let (then, els) = (self.cast(then, elem), self.cast(els, elem));
        let (ct, tt, et) = (
            self.f.ty(c).clone(),
            self.f.ty(then).clone(),
            self.f.ty(els).clone(),
        );
        let shape = self.extend(&ct, &tt, span)?;
        let shape = self.extend(&Type { elem, shape }, &et, span)?;
        Ok(self.f.push(
            Inst::Select { cond: c, then, els },
            Type { elem, shape },
            span.clone(),
        ))
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
            ExprKind::Number(n) => {
                Ok(self.konst(Array::scalar(Scalar::from_literal(*n, self.f.float)), span))
            }
            ExprKind::Zilde => Ok(self.konst(Array::vector(Data::I32(vec![])), span)),
            ExprKind::Str(_) => Err(err::domain(
                "character data is not supported: arrc arrays are numeric",
                span,
            )),
            ExprKind::Strand(items) => {
                let mut vals = Vec::new();
                let mut values = Vec::new();
                // Right to left, as APL evaluates (the first error met is the same).
                for it in items.iter().rev() {
                    let v = self.expr(it)?;
                    values.push(v);
                    if let Some(s) = self
                        .as_const(v)
                        .and_then(|a| (a.rank() == 0).then(|| a.data.get(0)))
                    {
                        vals.push(s);
                    }
                }
                values.reverse();
                vals.reverse();
                if vals.len() < values.len() {
                    return self.strand(&values, items, span);
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
            ExprKind::SysName(n) => {
                let v = match n.as_str() {
                    "⎕IO" => self.io as i32,
                    "⎕FR" => self.f.float.fr(),
                    "⎕PP" => crate::display::PRINT_PRECISION as i32,
                    _ => {
                        return Err(err::unsupported(
                            format!("{n} is not supported on the GPU path"),
                            span,
                        ))
                    }
                };
                Ok(self.konst(Array::scalar(Scalar::I32(v)), span))
            }
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
            ExprKind::Index { array, axes } => {
                let mut ix = Vec::with_capacity(axes.len());
                for a in axes.iter().rev() {
                    ix.push(match a {
                        Some(e) => Some(self.expr(e)?),
                        None => None,
                    });
                }
                ix.reverse();
                let x = self.expr(array)?;
                let ix = ix
                    .into_iter()
                    .map(|i| i.map(|i| self.one_based(i, span.clone())).transpose())
                    .collect::<Result<Vec<_>>>()?;
                self.index(x, ix, span)
            }
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
            FuncKind::Prim(Prim::Where) => self.where_(arg, fspan),
            FuncKind::Prim(p @ (Prim::GradeUp | Prim::GradeDown)) => {
                let origin = self.io as i32;
                self.grade(arg, *p == Prim::GradeDown, origin, fspan)
            }
            FuncKind::Prim(Prim::Plus) => Ok(arg),
            // ≡ of a simple array: its depth, 0 for a scalar and 1 otherwise.
            FuncKind::Prim(Prim::Match) => {
                let depth = (self.f.ty(arg).rank() > 0) as i32;
                Ok(self.konst(Array::scalar(Scalar::I32(depth)), fspan))
            }
            // ↑ (mix) of a simple array is the array; ∊ (enlist) its ravel.
            FuncKind::Prim(Prim::Take) => Ok(arg),
            FuncKind::Prim(Prim::Epsilon) => self.structural1(Prim::Comma, arg, None, fspan),
            FuncKind::Prim(p) if p.is_structural() => self.structural1(*p, arg, None, fspan),
            FuncKind::Prim(p) => match UnOp::from_prim(*p) {
                Some(op) if op.on_gpu_for(self.f.ty(arg).elem, self.f.float) => {
                    self.unary(op, arg, fspan)
                }
                _ => Err(err::unsupported(
                    format!("monadic {} is not supported on the GPU path yet", p.glyph()),
                    fspan,
                )),
            },
            FuncKind::Dfn(body) => self.call_dfn(body, None, arg, span),
            FuncKind::Derived {
                op: Op1::Commute,
                operand,
            } => self.dyadic(operand, arg, arg, span),
            FuncKind::Derived {
                op: Op1::Each,
                operand,
            } => self.each(operand, None, arg, span),
            FuncKind::Derived { op, operand } => {
                let operand = self.resolve(operand)?;
                let rank = self.f.ty(arg).rank();
                let axis = match op {
                    Op1::ReduceFirst | Op1::ScanFirst => 0,
                    _ => rank.saturating_sub(1),
                };
                self.fold(&operand, *op, arg, axis, fspan)
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
            FuncKind::Axis(g, k) => {
                let g = self.resolve(g)?;
                let axis = self.axis(k, self.f.ty(arg).rank())?;
                match &g.kind {
                    FuncKind::Derived { op, operand } => {
                        let operand = self.resolve(operand)?;
                        self.fold(&operand, *op, arg, axis, fspan)
                    }
                    FuncKind::Prim(Prim::Reverse | Prim::ReverseFirst) => {
                        let ty = self.f.ty(arg).clone();
                        if ty.rank() == 0 {
                            // A scalar reversed is itself.
                            return Ok(arg);
                        }
                        Ok(self.gather(arg, Gather::Reverse(axis), ty.shape, fspan))
                    }
                    FuncKind::Prim(_) => Err(err::axis("this function takes no axis", fspan)),
                    _ => Err(err::unsupported(
                        "this function with an axis is not supported on the GPU path yet",
                        fspan,
                    )),
                }
            }
        }
    }

    /// `f/`, `f⌿`, `f\`, `f⍀` (or with an axis) of `arg` along `axis`.
    fn fold(
        &mut self,
        operand: &Func,
        op: Op1,
        arg: Value,
        axis: usize,
        fspan: Span,
    ) -> Result<Value> {
        let bin = match self.operand_op(operand) {
            Ok(b) => b,
            Err(e)
                if e.class == crate::ErrorClass::Unsupported
                    && matches!(operand.kind, FuncKind::Dfn(_)) =>
            {
                return self.fold_dfn(operand, op, arg, axis, fspan)
            }
            Err(e) => return Err(e),
        };
        let elem = self.f.ty(arg).elem;
        // Items are converted to the fold's type r, and `r f r` must be an r again:
        // comparisons fold only booleans, `⍲ ⍱` only booleans.
        let r = bin.reduce_type(elem, self.f.float);
        let keeps_type = elem.join(r) == r && bin.operand_type(r, r, self.f.float) == r;
        let empty_axis = self.f.ty(arg).shape.get(axis) == Some(&Dim::Known(0));
        let reduce = matches!(op, Op1::Reduce | Op1::ReduceFirst);
        if bin.on_gpu_for(elem, elem, self.f.float) && !keeps_type && !(empty_axis && reduce) {
            // `=/` of integers: a comparison's booleans are integers again, so the fold
            // runs in the items' type as a right fold whose step is the function
            // followed by a conversion (as a dfn operand would).
            return self.fold_dfn(operand, op, arg, axis, fspan);
        }
        if !bin.on_gpu_for(elem, elem, self.f.float) || !keeps_type {
            return Err(err::unsupported(
                format!(
                    "{}{} is not supported on the GPU path yet for {elem}",
                    bin.glyph(),
                    op.glyph()
                ),
                fspan,
            ));
        }
        if matches!(operand.kind, FuncKind::Dfn(_)) && reduce {
            self.check_empty_fold(arg, axis, &fspan)?;
        }
        match op {
            Op1::Reduce | Op1::ReduceFirst => self.reduce(bin, arg, axis, fspan),
            Op1::Scan | Op1::ScanFirst => self.scan(bin, arg, axis, fspan),
            other => Err(err::unsupported(
                format!(
                    "the operator {} is not supported on the GPU path yet",
                    other.glyph()
                ),
                fspan,
            )),
        }
    }

    fn dyadic(&mut self, func: &Func, l: Value, r: Value, span: &Span) -> Result<Value> {
        let fspan = func.span.clone();
        match &self.resolve(func)?.kind {
            FuncKind::Prim(Prim::Squad) => {
                // `i⌷x`: scalar indices for the leading axes.
                let Some(ix) = self.const_ints(l) else {
                    return Err(err::unsupported(
                        "⌷ with a computed left argument is not supported on the GPU path yet",
                        fspan,
                    ));
                };
                let rank = self.f.ty(r).rank();
                if ix.len() > rank {
                    return Err(err::rank(
                        format!("{} indices for an array of rank {rank}", ix.len()),
                        fspan,
                    ));
                }
                let mut axes = vec![];
                for &i in &ix {
                    let one_based = Scalar::from_literal(
                        arrc_syntax::lexer::Num::Int(i + 1 - self.io),
                        self.f.float,
                    );
                    let c = self.konst(Array::scalar(one_based), fspan.clone());
                    axes.push(Some(c));
                }
                axes.resize(rank, None);
                self.index(r, axes, fspan)
            }
            FuncKind::Prim(p @ (Prim::Match | Prim::Tally)) => {
                let m = self.matches(l, r, fspan.clone())?;
                if *p == Prim::Match {
                    Ok(m)
                } else {
                    self.unary(UnOp::Not, m, fspan)
                }
            }
            FuncKind::Prim(p @ (Prim::Slash | Prim::SlashBar)) => {
                self.compress(l, r, *p == Prim::SlashBar, None, fspan)
            }
            FuncKind::Prim(Prim::Iota) => {
                let kind = SearchKind::IndexOf {
                    origin: self.io as i32,
                };
                self.search(l, r, kind, fspan)
            }
            FuncKind::Prim(Prim::Epsilon) => self.search(r, l, SearchKind::Member, fspan),
            FuncKind::Prim(p) if p.is_structural() => self.structural2(*p, l, r, None, fspan),
            FuncKind::Prim(p) => match BinOp::from_prim(*p) {
                Some(BinOp::Power) if self.small_power(r).is_some() => {
                    let k = self.small_power(r).unwrap_or(1);
                    self.power(l, k, fspan)
                }
                Some(op) if op.on_gpu_for(self.f.ty(l).elem, self.f.ty(r).elem, self.f.float) => {
                    self.binary(op, l, r, fspan)
                }
                _ => Err(err::unsupported(
                    format!("dyadic {} is not supported on the GPU path yet", p.glyph()),
                    fspan,
                )),
            },
            FuncKind::Dfn(body) => self.call_dfn(body, Some(l), r, span),
            FuncKind::Name(_) => unreachable_name(fspan),
            FuncKind::Derived {
                op: Op1::Commute,
                operand,
            } => self.dyadic(operand, r, l, span),
            FuncKind::Derived {
                op: Op1::Each,
                operand,
            } => self.each(operand, Some(l), r, span),
            FuncKind::Outer(g) => {
                let g = self.resolve(g)?;
                self.outer(&g, l, r, fspan)
            }
            FuncKind::Inner(f, g) => {
                let (f, g) = (self.resolve(f)?, self.resolve(g)?);
                self.inner(&f, &g, l, r, fspan)
            }
            FuncKind::Derived {
                op: op @ (Op1::Reduce | Op1::ReduceFirst),
                operand,
            } => {
                let operand = self.resolve(operand)?;
                let rank = self.f.ty(r).rank().max(1);
                let axis = if *op == Op1::ReduceFirst { 0 } else { rank - 1 };
                self.nwise(&operand, l, r, axis, fspan)
            }
            FuncKind::Axis(g, k) => {
                let g = self.resolve(g)?;
                if let FuncKind::Derived {
                    op: Op1::Reduce | Op1::ReduceFirst,
                    operand,
                } = &g.kind
                {
                    let axis = self.axis(k, self.f.ty(r).rank())?;
                    let operand = self.resolve(operand)?;
                    return self.nwise(&operand, l, r, axis, fspan);
                }
                let rank = self.f.ty(l).rank().max(self.f.ty(r).rank());
                let axis = self.axis(k, rank)?;
                match &g.kind {
                    FuncKind::Prim(
                        p @ (Prim::Comma
                        | Prim::CommaBar
                        | Prim::Reverse
                        | Prim::ReverseFirst
                        | Prim::Take
                        | Prim::Drop),
                    ) => self.structural2(*p, l, r, Some(axis), fspan),
                    // As the reference: `2 2⍴[1]⍳4` is an AXIS ERROR, never a reshape.
                    FuncKind::Prim(p) if p.is_structural() || BinOp::from_prim(*p).is_none() => {
                        Err(err::axis("this function takes no axis", fspan))
                    }
                    _ => Err(err::unsupported(
                        "this function with an axis is not supported on the GPU path yet",
                        fspan,
                    )),
                }
            }
            _ => Err(err::unsupported(
                "this derived function is not supported dyadically on the GPU path yet",
                fspan,
            )),
        }
    }

    /// `n f/[axis] x`: `f/` of each window of `|n|` items along `axis` (reversed when
    /// `n` is negative), as the reduction along a new axis of a gather of the windows.
    /// `n` must be known before the program runs (it gives the result's shape).
    fn nwise(
        &mut self,
        operand: &Func,
        n: Value,
        x: Value,
        axis: usize,
        span: Span,
    ) -> Result<Value> {
        let Some(known) = self.known_value(n) else {
            return Err(err::needs_known(
                "n-wise reduction: the window size must be known before the program runs on the GPU path",
                span,
            ));
        };
        let n = known.window_size(&span)?;
        let x = if self.f.ty(x).rank() == 0 {
            self.reshape(x, vec![Dim::Known(1)], span.clone())
        } else {
            x
        };
        let ty = self.f.ty(x).clone();
        let Dim::Known(len) = ty.shape[axis] else {
            return Err(err::needs_known(
                "n-wise reduction along a length known only at run time is not supported yet",
                span,
            ));
        };
        let w = n.unsigned_abs();
        if w > len + 1 {
            return Err(err::length(
                format!("a window of {w} is longer than the axis ({len}) plus one"),
                span,
            ));
        }
        let mut shape = ty.shape.clone();
        shape[axis] = Dim::Known(len + 1 - w);
        shape.insert(axis + 1, Dim::Known(w));
        let map = Gather::Windows {
            axis,
            reverse: n < 0,
        };
        let windows = self.gather(x, map, shape, span.clone());
        self.fold(operand, Op1::Reduce, windows, axis + 1, span)
    }

    /// A dfn has no identity element: reducing an empty axis of `arg` is a DOMAIN
    /// ERROR, unless the result has no cells to give.
    fn check_empty_fold(&self, arg: Value, axis: usize, span: &Span) -> Result<()> {
        let shape = &self.f.ty(arg).shape;
        let empty = shape.get(axis) == Some(&Dim::Known(0));
        let no_cells = (0..shape.len()).any(|k| k != axis && shape[k] == Dim::Known(0));
        if empty && !no_cells {
            return Err(err::domain(
                "this function has no identity element for an empty reduction",
                span.clone(),
            ));
        }
        Ok(())
    }

    /// `f/` or `f\` with `f` a dfn of scalar functions (such as `{⍺+⍵×2}`): an exact
    /// right fold whose step is the dfn, lowered once on scalar stand-ins for ⍺ and ⍵.
    fn fold_dfn(
        &mut self,
        operand: &Func,
        op: Op1,
        arg: Value,
        axis: usize,
        fspan: Span,
    ) -> Result<Value> {
        let scan = match op {
            Op1::Reduce | Op1::ReduceFirst => false,
            Op1::Scan | Op1::ScanFirst => true,
            other => {
                return Err(err::unsupported(
                    format!(
                        "the operator {} is not supported on the GPU path yet",
                        other.glyph()
                    ),
                    fspan,
                ))
            }
        };
        if !scan {
            self.check_empty_fold(arg, axis, &fspan)?;
        }
        let at = self.f.ty(arg).clone();
        if at.rank() == 0 {
            // f/ and f\ of a scalar are the scalar.
            return Ok(arg);
        }
        if at.shape.get(axis) == Some(&Dim::Known(1)) {
            // A fold of one item is that item, as it is (the dfn never runs).
            if scan {
                return Ok(arg);
            }
            let mut shape = at.shape.clone();
            shape.remove(axis);
            return Ok(self.reshape(arg, shape, fspan));
        }
        // The fold's type: items and partial results alike, widened until the dfn of
        // two of them gives that type again.
        let mut r = at.elem;
        let mut comb = None;
        // The operand certainly runs: at least one pair on every line, and a line.
        let runs = known_dims(&at.shape)
            .is_some_and(|d| d[axis] >= 2 && crate::array::saturating_count(&d) > 0);
        for round in 0..4 {
            let f = self.comb(operand, r, &fspan)?;
            let t = f.elem;
            // A guard choosing an integer on one side and a float on the other: the
            // reference's steps keep integers exact until a float appears, but one
            // fold type would compute every step in floats (`{⍵>0:⍺+⍵ ⋄ ⍺⍟⍵}/` of
            // 476 (2*63)-1 overflows in APL's integers, not in f32).
            if round == 0 && at.elem.is_int() && self.mixed_guard(&f.comb, r) {
                return Err(err::unsupported(
                    "a dfn operand whose guard chooses an integer or a float is not supported on the GPU path yet",
                    fspan,
                ));
            }
            if t == r {
                comb = Some(self.settle(f, runs, &fspan)?);
                break;
            }
            if r.join(t) == r {
                // A narrower result (booleans from integers) is exact in r.
                comb = Some(Comb::Cast {
                    to: r,
                    arg: Box::new(self.settle(f, runs, &fspan)?),
                });
                break;
            }
            if r.join(t) != t {
                break;
            }
            r = t;
        }
        let Some(comb) = comb else {
            return Err(err::unsupported(
                "a dfn operand whose result type keeps changing is not supported on the GPU path",
                fspan,
            ));
        };
        let arg = self.cast(arg, r);
        let mut shape = at.shape.clone();
        if !scan {
            shape.remove(axis);
        }
        Ok(self.f.push(
            Inst::FoldDfn {
                comb,
                arg,
                axis,
                scan,
            },
            Type { elem: r, shape },
            fspan,
        ))
    }

    /// Whether a guard in `c` (with ⍺ and ⍵ of type `r`) chooses between an integer and
    /// a float.
    fn mixed_guard(&self, c: &Comb, r: ElemType) -> bool {
        match c {
            Comb::Select { cond, then, els } => {
                // Each side's own type, under the cast to their join.
                let own = |c: &Comb| match c {
                    Comb::Cast { arg, .. } => self.comb_elem(arg, r),
                    c => self.comb_elem(c, r),
                };
                own(then).is_float() != own(els).is_float()
                    || self.mixed_guard(cond, r)
                    || self.mixed_guard(then, r)
                    || self.mixed_guard(els, r)
            }
            Comb::Cast { arg, .. } | Comb::Unary { arg, .. } => self.mixed_guard(arg, r),
            Comb::Binary { lhs, rhs, .. } => self.mixed_guard(lhs, r) || self.mixed_guard(rhs, r),
            Comb::Alpha | Comb::Omega | Comb::Outer(_) | Comb::Const(_) => false,
        }
    }

    /// The element type a `Comb` gives, with ⍺ and ⍵ of type `r`.
    fn comb_elem(&self, c: &Comb, r: ElemType) -> ElemType {
        match c {
            Comb::Alpha | Comb::Omega => r,
            Comb::Outer(v) => self.f.ty(*v).elem,
            Comb::Const(s) => s.elem_type(),
            Comb::Cast { to, .. } => *to,
            Comb::Unary { elem, .. } | Comb::Binary { elem, .. } => *elem,
            Comb::Select { then, els, .. } => self.comb_elem(then, r).join(self.comb_elem(els, r)),
        }
    }

    /// Runs `f` as a trial on the IR and undoes every instruction and length check it
    /// added (the IR only grows at its end).
    fn undone<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let (start, checks) = (self.f.insts.len(), self.f.checks.len());
        let r = f(self);
        self.f.insts.truncate(start);
        self.f.types.truncate(start);
        self.f.spans.truncate(start);
        self.f.checks.truncate(checks);
        r
    }

    /// The dfn `g` applied to scalar ⍺ and ⍵ of type `t`, as a [`Formula`]; NOT YET
    /// SUPPORTED unless it is made of scalar functions.
    fn comb(&mut self, g: &Func, t: ElemType, span: &Span) -> Result<Formula> {
        let result = self.trial(span, |l| {
            let a =
                l.f.push(Inst::Param { index: 1 }, Type::scalar(t), span.clone());
            let w =
                l.f.push(Inst::Param { index: 0 }, Type::scalar(t), span.clone());
            let r = l.dyadic(g, a, w, span)?;
            Ok((r, a, w))
        });
        result.map_err(|e| {
            if e.class == crate::ErrorClass::Unsupported {
                err::unsupported(
                    format!(
                        "a dfn operand made of more than scalar functions is not supported on the GPU path yet ({})",
                        e.message
                    ),
                    span.clone(),
                )
            } else {
                e
            }
        })
    }

    /// Runs `build` as a trial on scalar stand-ins for ⍺ and ⍵ (it gives the result
    /// and the two stand-ins, which may be one) and undoes it. The result must be a
    /// scalar computed from the stand-ins by scalar functions: a [`Comb`]. Scalars it
    /// reads that do not depend on the stand-ins (`+/v` in `{⍺+⍵×+/v}`) are kept, with
    /// what computes them, for [`Self::settle`].
    fn trial(
        &mut self,
        span: &Span,
        build: impl FnOnce(&mut Self) -> Result<(Value, Value, Value)>,
    ) -> Result<Formula> {
        let start = self.f.insts.len();
        self.trials += 1;
        let formula = self.undone(|l| {
            let checks = l.f.checks.len();
            let (r, a, w) = build(l)?;
            if l.f.ty(r).rank() != 0 {
                return Err(err::unsupported(
                    "the operand must give a scalar",
                    span.clone(),
                ));
            }
            let end = l.f.insts.len();
            let mut varies = vec![false; end - start];
            for i in start..end {
                let v = Value(i as u32);
                varies[i - start] = v == a
                    || v == w
                    || l.f
                        .inst(v)
                        .operands()
                        .iter()
                        .any(|o| o.index() >= start && varies[o.index() - start]);
            }
            let trial = Trial {
                a,
                w,
                start,
                varies,
            };
            let mut reads = Vec::new();
            let comb = l.comb_of(r, &trial, &mut reads, span)?;
            // What computes the scalars read, in order.
            let mut need = vec![false; end - start];
            while let Some(v) = reads.pop() {
                if v.index() >= start && !need[v.index() - start] {
                    need[v.index() - start] = true;
                    reads.extend(l.f.inst(v).operands());
                }
            }
            let hoisted = (start..end)
                .filter(|&i| need[i - start])
                .map(|i| {
                    let v = Value(i as u32);
                    (
                        v,
                        l.f.inst(v).clone(),
                        l.f.ty(v).clone(),
                        l.f.spans[i].clone(),
                    )
                })
                .collect();
            Ok(Formula {
                comb,
                elem: l.f.ty(r).elem,
                hoisted,
                checks: l.f.checks.len() > checks,
            })
        });
        self.trials -= 1;
        formula
    }

    /// The formula's [`Comb`], after the scalars it reads from outside names are
    /// computed again, once, outside the trial. They are computed whether or not
    /// the operand ever runs, so `runs` must say that it certainly does (an error
    /// they raise is then the operand's own).
    fn settle(&mut self, f: Formula, runs: bool, span: &Span) -> Result<Comb> {
        if f.hoisted.is_empty() {
            return Ok(f.comb);
        }
        if f.checks || !runs {
            return Err(err::unsupported(
                "an operand that computes a value from outside names runs on the GPU path only where its arguments' lengths are known and not 0",
                span.clone(),
            ));
        }
        let mut map = HashMap::new();
        for (old, mut inst, ty, at) in f.hoisted {
            inst.map_operands(&mut |v| *map.get(&v).unwrap_or(&v));
            map.insert(old, self.f.push(inst, ty, at));
        }
        let mut comb = f.comb;
        comb.map_outer(&mut |v| *map.get(&v).unwrap_or(&v));
        Ok(comb)
    }

    fn comb_of(&self, v: Value, t: &Trial, reads: &mut Vec<Value>, span: &Span) -> Result<Comb> {
        let mut sub = |x: &Value| self.comb_of(*x, t, reads, span).map(Box::new);
        let elem = self.f.ty(v).elem;
        let scalar = self.f.ty(v).rank() == 0;
        Ok(match self.f.inst(v) {
            _ if v == t.a => Comb::Alpha,
            _ if v == t.w => Comb::Omega,
            Inst::Const(c) if c.len() == 1 => Comb::Const(c.data.get(0)),
            // A scalar computed before the trial began: a name from outside the
            // operand.
            _ if v.index() < t.start && scalar => Comb::Outer(v),
            Inst::Cast(x) => Comb::Cast {
                to: elem,
                arg: sub(x)?,
            },
            Inst::Unary { op, arg } => Comb::Unary {
                op: *op,
                elem,
                arg: sub(arg)?,
            },
            Inst::Binary { op, lhs, rhs } => Comb::Binary {
                op: *op,
                elem,
                lhs: sub(lhs)?,
                rhs: sub(rhs)?,
            },
            Inst::Select { cond, then, els } => Comb::Select {
                cond: sub(cond)?,
                then: sub(then)?,
                els: sub(els)?,
            },
            // A scalar the trial computed without the stand-ins (`+/v`).
            _ if scalar && !t.varies[v.index() - t.start] => {
                reads.push(v);
                Comb::Outer(v)
            }
            _ => {
                return Err(err::unsupported(
                    "only scalar functions of ⍺, ⍵ and literals",
                    span.clone(),
                ))
            }
        })
    }

    /// The scalar function an operator's operand denotes: a primitive, or a dfn whose
    /// body is `⍺ f ⍵`.
    fn operand_op(&self, operand: &Func) -> Result<BinOp> {
        let span = operand.span.clone();
        match &operand.kind {
            FuncKind::Prim(p) => BinOp::from_prim(*p).ok_or_else(|| {
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
        // The innermost running dfn whose text holds this one, else the workspace.
        let parent = (0..self.frames.len())
            .rev()
            .find(|&k| self.frames[k].0.encloses(body))
            .map_or(0, |k| k + 1);
        self.scopes.push(scope);
        self.frames.push((body.clone(), parent));
        let r = self.stmts(&body.stmts, span);
        self.frames.pop();
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
        let elem = op.result_type(ty.elem, self.f.float);
        // Constants fold, unless the function fails on them: then the error is the
        // kernel's, raised only if the value is computed (`{⍵=0:0 ⋄ ~⍵}¨0` is 0).
        if let Some(a) = self.as_const(arg).filter(|a| a.len() <= 1) {
            let a = a.clone();
            let folded: Option<Vec<Scalar>> = (0..a.len())
                .map(|i| op.apply(a.data.get(i), self.f.float).ok())
                .collect();
            if let Some(vals) = folded {
                let mut d = Data::with_capacity(elem, a.len());
                vals.into_iter().for_each(|v| d.push(v));
                return Ok(self.konst(Array::new(a.shape.clone(), d), span));
            }
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
        let t = op.operand_type(lt.elem, rt.elem, self.f.float);
        let elem = op.result_type(lt.elem, rt.elem, self.f.float);
        let (l, r) = (self.cast(l, t), self.cast(r, t));
        if let (Some(a), Some(b)) = (self.as_const(l), self.as_const(r)) {
            // As in `unary`: a function that fails on constants is left to the kernel.
            let folded = (a.len() == 1 && b.len() == 1)
                .then(|| op.apply(a.data.get(0), b.data.get(0), self.f.float).ok())
                .flatten();
            if let Some(s) = folded {
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
                (Dim::Dyn(_), _) | (_, Dim::Dyn(_)) if a != b => {
                    return Err(err::needs_known(
                        "arrays whose lengths are computed on the device combine only with themselves on the GPU path yet",
                        span.clone(),
                    ))
                }
                (Dim::Dyn(_), _) | (_, Dim::Dyn(_)) => *a,
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
        let Some(a) = self.known_value(arg) else {
            return Err(err::needs_known(
                "⍳ of a value computed on the device is not supported yet: its length must be known before the program runs",
                span,
            ));
        };
        if a.rank() > 1 || a.len() != 1 {
            return Err(err::unsupported(
                "⍳ of a vector gives nested indices, which arrc does not support",
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
                origin: self.io as i32,
            },
            Type {
                elem: ElemType::I32,
                shape: vec![Dim::Known(n as u64)],
            },
            span,
        ))
    }

    /// `⍸b`: the indices of the 1s of a boolean vector, as a compress of `⍳≢b` (its
    /// length stays on the device); literal counts are expanded here.
    fn where_(&mut self, b: Value, span: Span) -> Result<Value> {
        let bt = self.f.ty(b).clone();
        if let Some(counts) = self.const_ints(b) {
            if counts.iter().any(|&c| c < 0) {
                return Err(err::domain("⍸ needs non-negative integers", span));
            }
            let total: i64 = counts.iter().fold(0i64, |a, &c| a.saturating_add(c));
            // Made here, on the host: `⍸2147483647` allocated 8 GB (fuzz seed 50 index
            // 8914; out of memory, the process aborted).
            if total as u64 > LITERAL_LIMIT {
                return Err(err::ws_full(format!("⍸ would give {total} elements"), span));
            }
            let idx: Vec<i32> = counts
                .iter()
                .enumerate()
                .flat_map(|(k, &c)| std::iter::repeat_n(k as i32 + self.io as i32, c as usize))
                .collect();
            return Ok(self.konst(Array::vector(Data::I32(idx)), span));
        }
        let n = match bt.shape.as_slice() {
            [n @ (Dim::Known(_) | Dim::Sym(_))] if bt.elem == ElemType::Bool => *n,
            _ => {
                return Err(err::needs_known(
                    "⍸ on the GPU path takes a boolean vector whose length is known before the program runs",
                    span,
                ))
            }
        };
        let iota = self.f.push(
            Inst::Iota {
                len: n,
                origin: self.io as i32,
            },
            Type {
                elem: ElemType::I32,
                shape: vec![n],
            },
            span.clone(),
        );
        self.compress(b, iota, false, None, span)
    }

    /// `⍋x` / `⍒x` of an array whose shape is known before the program runs.
    fn grade(&mut self, x: Value, down: bool, origin: i32, span: Span) -> Result<Value> {
        let xt = self.f.ty(x).clone();
        // Major cells (rows of a matrix) are compared in ravel order.
        let n =
            match xt.shape.as_slice() {
                [] => return Err(err::rank("⍋ and ⍒ need an array of rank 1 or more", span)),
                dims if known_dims(dims).is_some() => dims[0],
                _ => return Err(err::needs_known(
                    "grading an array whose shape is computed on the device is not supported yet",
                    span,
                )),
            };
        Ok(self.f.push(
            Inst::Grade {
                arg: x,
                down,
                origin,
            },
            Type {
                elem: ElemType::I32,
                shape: vec![n],
            },
            span,
        ))
    }

    /// `hay⍳needles` for `hay` of rank 2 or more: for each cell of `needles` shaped like
    /// a major cell of `hay`, the index of the first equal one. Every pair of cells is
    /// compared (`needles∧.=⍉hay`, tolerant in f64) and `⌊/` picks the first match:
    /// work proportional to the product of the two cell counts, like the reference.
    fn search_cells(
        &mut self,
        hay: Value,
        needles: Value,
        origin: i32,
        span: Span,
    ) -> Result<Value> {
        let (ht, nt) = (self.f.ty(hay).clone(), self.f.ty(needles).clone());
        let cell = &ht.shape[1..];
        let cr = cell.len();
        if known_dims(&nt.shape).is_none() || known_dims(&ht.shape).is_none() {
            return Err(err::needs_known(
                "⍳ of cells whose shapes are known only at run time is not supported yet",
                span,
            ));
        }
        if nt.rank() < cr {
            return Err(err::rank(
                "the right argument's rank is below the left argument's cells'",
                span,
            ));
        }
        if nt.shape[nt.rank() - cr..] != *cell {
            return Err(err::length(
                "the right argument's cells must have the shape of the left argument's major cells",
                span,
            ));
        }
        let lead = nt.shape[..nt.rank() - cr].to_vec();
        let (Some(r), Some(k), Some(s)) = (
            known_dims(&ht.shape[..1]),
            known_dims(cell),
            known_dims(&lead),
        ) else {
            return Err(err::needs_known(
                "⍳ of cells whose shapes are known only at run time is not supported yet",
                span,
            ));
        };
        let (r, k, s) = (
            r[0] as u64,
            crate::array::saturating_count(&k) as u64,
            crate::array::saturating_count(&s) as u64,
        );
        let miss = origin as i64 + r as i64;
        if r == 0 {
            let fill = Data::I32(vec![miss as i32; s as usize]);
            let dims = lead
                .iter()
                .map(|d| known_dims(&[*d]).map_or(0, |v| v[0]))
                .collect();
            return Ok(self.konst(Array::new(dims, fill), span));
        }
        let t = ht.elem.join(nt.elem);
        let h = self.cast(hay, t);
        let h = self.reshape(h, vec![Dim::Known(r), Dim::Known(k)], span.clone());
        let h = self.gather(
            h,
            Gather::Axes(vec![1, 0]),
            vec![Dim::Known(k), Dim::Known(r)],
            span.clone(),
        );
        let n = self.cast(needles, t);
        let n = self.reshape(n, vec![Dim::Known(s), Dim::Known(k)], span.clone());
        let and = Func::new(FuncKind::Prim(Prim::And), span.clone());
        let eq = Func::new(FuncKind::Prim(Prim::Equal), span.clone());
        let same = self.inner(&and, &eq, n, h, span.clone())?;
        // miss - same×(miss - j): j where the cells match, miss elsewhere.
        let j = self.f.push(
            Inst::Iota {
                len: Dim::Known(r),
                origin,
            },
            Type {
                elem: ElemType::I32,
                shape: vec![Dim::Known(r)],
            },
            span.clone(),
        );
        let j = self.gather(
            j,
            Gather::Axes(vec![1]),
            vec![Dim::Known(s), Dim::Known(r)],
            span.clone(),
        );
        let m = self.konst(Array::scalar(Scalar::I32(miss as i32)), span.clone());
        let d = self.binary(BinOp::Sub, m, j, span.clone())?;
        let p = self.binary(BinOp::Mul, same, d, span.clone())?;
        let v = self.binary(BinOp::Sub, m, p, span.clone())?;
        let first = self.reduce(BinOp::Min, v, 1, span.clone())?;
        let first = self.cast(first, ElemType::I32);
        Ok(self.reshape(first, lead, span))
    }

    /// `hay⍳needles` or `needles∊hay`: a binary search of each needle in `hay` sorted
    /// by its grade.
    fn search(
        &mut self,
        hay: Value,
        needles: Value,
        kind: SearchKind,
        span: Span,
    ) -> Result<Value> {
        let ht = self.f.ty(hay).clone();
        let hay = match ht.rank() {
            0 if kind == SearchKind::Member => self.reshape(hay, vec![Dim::Known(1)], span.clone()),
            0 => return Err(err::rank("the left argument of ⍳ must be a vector", span)),
            1 => hay,
            // Membership looks at every element of the right argument, in any order.
            _ if kind == SearchKind::Member => match known_dims(&ht.shape) {
                Some(d) => {
                    let n = crate::array::saturating_count(&d) as u64;
                    self.reshape(hay, vec![Dim::Known(n)], span.clone())
                }
                None => {
                    return Err(err::needs_known(
                        "∊ of a matrix right argument whose shape is known only at run time is not supported yet",
                        span,
                    ))
                }
            },
            _ => {
                let SearchKind::IndexOf { origin } = kind else {
                    unreachable!("membership is handled above")
                };
                return self.search_cells(hay, needles, origin, span);
            }
        };
        let nt = self.f.ty(needles).clone();
        let t = ht.elem.join(nt.elem);
        let hay = self.cast(hay, t);
        let needles = self.cast(needles, t);
        let order = self.grade(hay, false, 0, span.clone())?;
        let elem = match kind {
            SearchKind::IndexOf { .. } => ElemType::I32,
            SearchKind::Member => ElemType::Bool,
        };
        Ok(self.f.push(
            Inst::Search {
                hay,
                order,
                needles,
                kind,
            },
            Type {
                elem,
                shape: nt.shape,
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

    /// `x*k` for a small literal integer `k`, as multiplications (in `*`'s float type).
    fn power(&mut self, x: Value, k: i64, span: Span) -> Result<Value> {
        let ft = self.f.ty(x).elem.join(self.f.float);
        let xf = self.cast(x, ft);
        let one = self.konst(Array::scalar(Scalar::float(1.0, ft)), span.clone());
        Ok(match k {
            0 => {
                // x*0 is 1 with x's shape.
                let zero = self.konst(Array::scalar(Scalar::float(0.0, ft)), span.clone());
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

    fn reduce(&mut self, op: BinOp, arg: Value, axis: usize, span: Span) -> Result<Value> {
        let aty = self.f.ty(arg).clone();
        if aty.rank() == 0 {
            return Ok(arg);
        }
        let elem = op.reduce_type(aty.elem, self.f.float);
        let mut shape = aty.shape.clone();
        shape.remove(axis);
        if aty.shape[axis] == Dim::Known(0) {
            // The identity's type: `⌈/⍬` is the most negative float.
            if let (Some(id), Some(dims)) =
                (op.identity(aty.elem, self.f.float), known_dims(&shape))
            {
                // Made here as a literal: refused past the reference's own limit.
                let n = crate::array::element_count(&dims)
                    .filter(|&n| n as u64 <= LITERAL_LIMIT)
                    .ok_or_else(|| {
                        err::ws_full(
                            "the identities of this empty reduction are too many",
                            span.clone(),
                        )
                    })?;
                let mut d = Data::with_capacity(id.elem_type(), n);
                (0..n).for_each(|_| d.push(id));
                return Ok(self.konst(Array::new(dims, d), span));
            }
            // No item needs the identity when the result is empty too (`⍲⌿0 0⍴0`).
            if let Some(dims) = known_dims(&shape).filter(|d| d.contains(&0)) {
                return Ok(self.konst(Array::new(dims, Data::empty(elem)), span));
            }
            return Err(err::domain(
                "this function has no identity element for an empty reduction",
                span,
            ));
        }
        let items = aty.elem;
        let arg = self.cast(arg, elem);
        if op == BinOp::Mul && elem.is_float() && self.may_hold_zero(arg) {
            return self.float_product(arg, axis, false, span);
        }
        let r = self.f.push(
            Inst::Reduce { op, arg, axis },
            Type {
                elem,
                shape: shape.clone(),
            },
            span.clone(),
        );
        let len = dim_bound(aty.shape[axis]);
        let fits = self
            .magnitude(arg, 0)
            .is_some_and(|m| m.saturating_mul(len) < 1 << 63);
        if op == BinOp::Add && items == ElemType::I64 && !fits {
            // The device sums i64 items modulo 2^64; the exact sum of their high halves
            // (which cannot overflow) tells whether that is the sum. Narrower items
            // cannot overflow: fewer than 2^32 of them sum to less than 2^63.
            // (An integer `×/` is a right fold, checked at every step.)
            let high = self.unary(UnOp::HighHalf, arg, span.clone())?;
            let h = self.f.push(
                Inst::Reduce {
                    op,
                    arg: high,
                    axis,
                },
                Type { elem, shape },
                span.clone(),
            );
            return self.binary(BinOp::SumFits, r, h, span);
        }
        Ok(r)
    }

    /// Whether float value `v` may hold a 0 (not when it is a constant without one).
    fn may_hold_zero(&self, v: Value) -> bool {
        self.as_const(v)
            .is_none_or(|a| (0..a.len()).any(|i| a.data.get(i).as_f64() == 0.0))
    }

    /// A float `×/` (or `×\` when `scan`) along `axis` in which a 0 item makes every
    /// product it enters 0, in whatever order the device multiplies: without this, the
    /// partial product of large items elsewhere in the row overflows first
    /// (`×/1e30 1e30 0` in f32), and the row is a DOMAIN ERROR where its product is 0.
    /// The items from the first 0 on (every item of a row with a 0, for a reduction)
    /// are read as 1, and the products they enter are then multiplied by 0.
    fn float_product(&mut self, arg: Value, axis: usize, scan: bool, span: Span) -> Result<Value> {
        let ty = self.f.ty(arg).clone();
        let zero = self.konst(Array::scalar(Scalar::float(0.0, ty.elem)), span.clone());
        let is_zero = self.binary(BinOp::Equal, arg, zero, span.clone())?;
        let mut rshape = ty.shape.clone();
        if !scan {
            rshape.remove(axis);
        }
        let fold = |op, arg| match scan {
            true => Inst::Scan { op, arg, axis },
            false => Inst::Reduce { op, arg, axis },
        };
        let bool_ty = Type {
            elem: ElemType::Bool,
            shape: rshape.clone(),
        };
        // Whether a 0 was met: in the row, or at or before the item.
        let met = self.f.push(fold(BinOp::Or, is_zero), bool_ty, span.clone());
        let met_here = match scan {
            true => met,
            false => {
                let axes = (0..ty.rank()).filter(|&i| i != axis).collect();
                self.gather(met, Gather::Axes(axes), ty.shape.clone(), span.clone())
            }
        };
        // Exact: x×1+0 is x and x×0+1 is 1 for finite x, fused or not.
        let keep = self.unary(UnOp::Not, met_here, span.clone())?;
        let kept = self.binary(BinOp::Mul, arg, keep, span.clone())?;
        let items = self.binary(BinOp::Add, kept, met_here, span.clone())?;
        let items = self.cast(items, ty.elem);
        let p = self.f.push(
            fold(BinOp::Mul, items),
            Type {
                elem: ty.elem,
                shape: rshape,
            },
            span.clone(),
        );
        let none = match scan {
            true => keep,
            false => self.unary(UnOp::Not, met, span.clone())?,
        };
        self.binary(BinOp::Mul, p, none, span)
    }

    /// A bound on the magnitude of every element of integer value `v`, where lowering
    /// can tell (`None`: unknown, or a float): lets folds of values that cannot
    /// overflow skip the overflow check (`+/(⍳10)×⍳10`).
    fn magnitude(&self, v: Value, depth: u32) -> Option<u128> {
        magnitude(&self.f, v, depth)
    }

    fn scan(&mut self, op: BinOp, arg: Value, axis: usize, span: Span) -> Result<Value> {
        let aty = self.f.ty(arg).clone();
        if aty.rank() == 0 {
            return Ok(arg);
        }
        let elem = op.reduce_type(aty.elem, self.f.float);
        let arg = self.cast(arg, elem);
        if op == BinOp::Mul && elem.is_float() && self.may_hold_zero(arg) {
            return self.float_product(arg, axis, true, span);
        }
        let ty = Type {
            elem,
            shape: aty.shape,
        };
        let r = self
            .f
            .push(Inst::Scan { op, arg, axis }, ty.clone(), span.clone());
        // The device scans integers modulo 2^64 (see `reduce`); each item is checked
        // unless the items' bounds show that no running sum or product can overflow.
        let len = dim_bound(ty.shape[axis]);
        let m = self.magnitude(arg, 0);
        let sums_fit = m.is_some_and(|m| m.saturating_mul(len) < 1 << 63);
        let products_fit = m.is_some_and(|m| {
            let len = u32::try_from(len).unwrap_or(u32::MAX);
            m <= 1 || m.checked_pow(len).is_some_and(|p| p < 1 << 63)
        });
        match op {
            BinOp::Add if aty.elem == ElemType::I64 && !sums_fit => {
                self.binary(BinOp::ScanSumFits, r, arg, span)
            }
            BinOp::Mul if elem == ElemType::I64 && !products_fit => {
                // Against the same scan in floats: where the running product fits, the
                // float one is within 2^-17 of it (at most 62 factors are not ±1, so
                // at most 61 roundings) and the wrapped one is exact; where it does
                // not, the wrapped one is off by a multiple of 2^64 (or the float scan
                // overflows, a DOMAIN ERROR of its own).
                let ft = self.f.float;
                let fx = self.cast(arg, ft);
                let f = self.float_product(fx, axis, true, span.clone())?;
                let rf = self.cast(r, ft);
                let d = self.binary(BinOp::Sub, rf, f, span.clone())?;
                let d = self.unary(UnOp::Abs, d, span.clone())?;
                let lim = self.konst(
                    Array::scalar(Scalar::float(2f64.powi(61), ft)),
                    span.clone(),
                );
                let ok = self.binary(BinOp::LessEq, d, lim, span.clone())?;
                self.binary(BinOp::FitsOr, r, ok, span)
            }
            _ => Ok(r),
        }
    }

    /// The axis of `f[k]`: a literal integer from ⎕IO to `rank-1+⎕IO`, 0-based.
    fn axis(&mut self, k: &Expr, rank: usize) -> Result<usize> {
        let v = self.expr(k)?;
        let io = self.io;
        match self.const_ints(v).as_deref() {
            Some([a]) if *a >= io && ((*a - io) as usize) < rank.max(1) => Ok((*a - io) as usize),
            Some(_) => Err(err::axis(
                format!(
                    "the axis must be an integer from {io} to {}",
                    rank.max(1) as i64 - 1 + io
                ),
                k.span.clone(),
            )),
            None => Err(err::needs_known(
                "an axis computed on the device is not supported",
                k.span.clone(),
            )),
        }
    }

    /// The integers of a literal scalar or vector.
    /// A literal's value, or a parameter's that the host knows (for lengths and
    /// shapes).
    /// A literal's value, a parameter's that the host knows, or a scalar function of
    /// known scalars (`(-n)↓x`, `⍳n+1`), for lengths and shapes; the values themselves
    /// are still computed on the device.
    fn known_value(&self, v: Value) -> Option<Array> {
        if let Some(a) = self.as_const(v).or_else(|| self.known.get(&v)) {
            return Some(a.clone());
        }
        let elem = self.f.ty(v).elem;
        let scalar = |x: Value| {
            self.known_value(x)
                .filter(|a| a.rank() == 0)
                .and_then(|a| a.as_singleton())
        };
        // Vectors made of known scalars and vectors (`n,3`, `2 n`).
        let ty = self.f.ty(v);
        if let ([Dim::Known(len)], true) = (ty.shape.as_slice(), ty.rank() == 1) {
            let items: Option<Vec<Scalar>> = match self.f.inst(v) {
                Inst::Gather {
                    arg,
                    map: Gather::Cycle { .. },
                } => {
                    let a = self.known_value(*arg).filter(|a| !a.is_empty())?;
                    Some(
                        (0..*len as usize)
                            .map(|i| a.data.get(i % a.len()))
                            .collect(),
                    )
                }
                Inst::Catenate { lhs, rhs, axis: 0 } => {
                    let (a, b) = (self.known_value(*lhs)?, self.known_value(*rhs)?);
                    (a.rank() <= 1 && b.rank() <= 1).then(|| {
                        (0..a.len())
                            .map(|i| a.data.get(i))
                            .chain((0..b.len()).map(|i| b.data.get(i)))
                            .collect()
                    })
                }
                _ => None,
            };
            if let Some(items) = items.filter(|x| x.len() as u64 == *len) {
                let mut d = Data::with_capacity(elem, items.len());
                for x in items {
                    d.push(x.cast(elem));
                }
                return Some(Array::vector(d));
            }
        }
        let s = match self.f.inst(v) {
            Inst::Cast(x) => scalar(*x)?.cast(elem),
            Inst::Unary { op, arg } => op.apply(scalar(*arg)?, self.f.float).ok()?,
            Inst::Binary { op, lhs, rhs } => {
                op.apply(scalar(*lhs)?, scalar(*rhs)?, self.f.float).ok()?
            }
            _ => return None,
        };
        Some(Array::scalar(s.cast(elem)))
    }

    fn const_ints(&self, v: Value) -> Option<Vec<i64>> {
        let a = self.known_value(v)?;
        if a.rank() > 1 {
            return None;
        }
        (0..a.len()).map(|i| a.data.get(i).as_i64()).collect()
    }

    fn gather(&mut self, arg: Value, map: Gather, shape: Vec<Dim>, span: Span) -> Value {
        let elem = self.f.ty(arg).elem;
        self.f
            .push(Inst::Gather { arg, map }, Type { elem, shape }, span)
    }

    /// `arg` with the same elements in ravel order and another shape.
    fn reshape(&mut self, arg: Value, shape: Vec<Dim>, span: Span) -> Value {
        if self.f.ty(arg).shape == shape {
            return arg;
        }
        let fill = Scalar::I32(0).cast(self.f.ty(arg).elem);
        self.gather(arg, Gather::Cycle { fill }, shape, span)
    }

    /// A structural function applied monadically (with an axis when given).
    fn structural1(&mut self, p: Prim, x: Value, axis: Option<usize>, span: Span) -> Result<Value> {
        let ty = self.f.ty(x).clone();
        let r = ty.rank();
        let shape_const = |l: &mut Self, dims: &[Dim]| -> Option<Value> {
            let dims = known_dims(dims)?;
            let d = Data::I32(dims.iter().map(|&n| n as i32).collect());
            Some(l.konst(Array::vector(d), span.clone()))
        };
        // A length known only at run time (a compress's) is read on the device.
        let length = |l: &mut Self, axis: usize| match ty.shape[axis] {
            Dim::Known(n) => l.konst(Array::scalar(Scalar::I32(n as i32)), span.clone()),
            _ => l.f.push(
                Inst::Length { of: x, axis },
                Type::scalar(ElemType::I32),
                span.clone(),
            ),
        };
        match p {
            Prim::Rho => match shape_const(self, &ty.shape) {
                Some(v) => Ok(v),
                None if r == 1 => {
                    let n = length(self, 0);
                    Ok(self.reshape(n, vec![Dim::Known(1)], span))
                }
                None => Err(err::needs_known(
                    "⍴ of a run-time shape is not supported yet",
                    span.clone(),
                )),
            },
            Prim::Tally => match ty.shape.first() {
                None => Ok(self.konst(Array::scalar(Scalar::I32(1)), span)),
                Some(_) => Ok(length(self, 0)),
            },
            Prim::Comma => {
                let n = match known_dims(&ty.shape) {
                    Some(d) => Dim::Known(crate::array::saturating_count(&d) as u64),
                    None if r == 1 => ty.shape[0],
                    None => {
                        return Err(err::needs_known(
                            "ravel of a run-time shape is not supported yet",
                            span,
                        ))
                    }
                };
                Ok(self.reshape(x, vec![n], span))
            }
            Prim::CommaBar => {
                let shape = match (ty.shape.first(), known_dims(&ty.shape)) {
                    (None, _) => vec![Dim::Known(1), Dim::Known(1)],
                    (Some(d), _) if r == 1 => vec![*d, Dim::Known(1)],
                    (Some(d), Some(all)) => {
                        vec![
                            *d,
                            Dim::Known(crate::array::saturating_count(&all[1..]) as u64),
                        ]
                    }
                    _ if r == 2 => ty.shape.clone(),
                    _ => {
                        return Err(err::needs_known(
                            "table of a run-time shape is not supported yet",
                            span,
                        ))
                    }
                };
                Ok(self.reshape(x, shape, span))
            }
            Prim::Reverse | Prim::ReverseFirst if r == 0 => Ok(x),
            Prim::Reverse | Prim::ReverseFirst => {
                let a = axis.unwrap_or(if p == Prim::Reverse { r - 1 } else { 0 });
                Ok(self.gather(x, Gather::Reverse(a), ty.shape, span))
            }
            Prim::Transpose => {
                let axes: Vec<usize> = (0..r).rev().collect();
                let shape: Vec<Dim> = ty.shape.iter().rev().copied().collect();
                Ok(self.gather(x, Gather::Axes(axes), shape, span))
            }
            _ => Err(err::unsupported(
                format!("monadic {} is not supported on the GPU path yet", p.glyph()),
                span,
            )),
        }
    }

    /// A structural function applied dyadically (with an axis when given).
    fn structural2(
        &mut self,
        p: Prim,
        a: Value,
        x: Value,
        axis: Option<usize>,
        span: Span,
    ) -> Result<Value> {
        let ty = self.f.ty(x).clone();
        let r = ty.rank();
        // A known left argument that is not made of integers is the APL error;
        // an unknown one cannot give a shape here.
        let known_a = self.known_value(a).map(|k| k.rank());
        let need_const = |what: &str| {
            if known_a.is_some_and(|r| r > 1) {
                err::rank(
                    format!("{what}: the left argument must be a scalar or vector"),
                    span.clone(),
                )
            } else if known_a.is_some() {
                err::domain(
                    format!("{what}: the left argument must be integers"),
                    span.clone(),
                )
            } else {
                err::needs_known(
                    format!(
                        "{what}: the left argument must be known before the program runs on the GPU path"
                    ),
                    span.clone(),
                )
            }
        };
        match p {
            Prim::Comma | Prim::CommaBar => {
                let rank = self.f.ty(a).rank().max(r).max(1);
                let ax = axis.unwrap_or(if p == Prim::Comma { rank - 1 } else { 0 });
                self.catenate(a, x, ax, span)
            }
            Prim::Rho => {
                let dims = self.const_ints(a).ok_or_else(|| need_const("⍴"))?;
                if dims.iter().any(|&d| d < 0) {
                    return Err(err::domain("a shape must be non-negative integers", span));
                }
                let shape: Vec<Dim> = dims.iter().map(|&d| Dim::Known(d as u64)).collect();
                let n = if dims.contains(&0) {
                    0
                } else {
                    dims.iter()
                        .try_fold(1u64, |a, &d| a.checked_mul(d as u64))
                        .unwrap_or(u64::MAX)
                };
                if n > i32::MAX as u64 {
                    return Err(err::ws_full("the result has too many elements", span));
                }
                let fill = Scalar::I32(0).cast(ty.elem);
                Ok(self.gather(x, Gather::Cycle { fill }, shape, span))
            }
            Prim::Reverse | Prim::ReverseFirst => {
                if r == 0 {
                    return Ok(x);
                }
                let ax = axis.unwrap_or(if p == Prim::Reverse { r - 1 } else { 0 });
                let at = self.f.ty(a).clone();
                if let Some([b]) = self.const_ints(a).as_deref() {
                    if at.rank() == 0 || at.is_singleton() {
                        return Ok(self.gather(
                            x,
                            Gather::Rotate { axis: ax, by: *b },
                            ty.shape,
                            span,
                        ));
                    }
                }
                // Known amounts held as floats: integers, or a DOMAIN ERROR.
                let (a, at) = match self.known_value(a) {
                    Some(k) if at.elem.is_float() => {
                        let Some(ints) = self.const_ints(a) else {
                            return Err(err::domain("rotation amounts must be integers", span));
                        };
                        let ints = Data::I32(ints.iter().map(|&v| v as i32).collect());
                        let v = self.konst(Array::new(k.shape.clone(), ints), span.clone());
                        (v, self.f.ty(v).clone())
                    }
                    _ => (a, at),
                };
                // A computed amount, or one per line of the axis; one element of any
                // rank extends to every line.
                let (a, at) = if at.rank() > 0 && at.is_singleton() {
                    let s = self.reshape(a, vec![], span.clone());
                    (s, self.f.ty(s).clone())
                } else {
                    (a, at)
                };
                if at.elem.is_float() {
                    return Err(err::needs_known(
                        "⌽ by float amounts is not supported on the GPU path",
                        span,
                    ));
                }
                let mut lines = ty.shape.clone();
                lines.remove(ax);
                if at.rank() != 0 && at.rank() != lines.len() {
                    return Err(err::rank(
                        format!(
                            "⌽ amounts of rank {} for lines of rank {}",
                            at.rank(),
                            lines.len()
                        ),
                        span,
                    ));
                }
                if at.rank() != 0 && at.shape != lines {
                    return Err(err::length("⌽ amounts do not match the lines", span));
                }
                if !matches!(ty.shape[ax], Dim::Known(_)) {
                    return Err(err::needs_known(
                        "⌽ by computed amounts along a run-time length is not supported yet",
                        span,
                    ));
                }
                Ok(self.f.push(
                    Inst::Rotate {
                        arg: x,
                        by: a,
                        axis: ax,
                    },
                    ty,
                    span,
                ))
            }
            Prim::Transpose => {
                let perm = self.const_ints(a).ok_or_else(|| need_const("⍉"))?;
                if perm.len() != r {
                    return Err(err::length(
                        format!("⍉ needs {r} axes on the left, got {}", perm.len()),
                        span,
                    ));
                }
                let io = self.io;
                let axes: Vec<usize> = perm.iter().map(|&k| (k - io).max(0) as usize).collect();
                let out_rank = axes.iter().max().map_or(0, |m| m + 1);
                if perm.iter().any(|&k| k < io || (k - io) as usize >= r)
                    || (0..out_rank).any(|j| !axes.contains(&j))
                {
                    return Err(err::axis(
                        "the axes must be a permutation, perhaps with repeats",
                        span,
                    ));
                }
                let mut shape = Vec::with_capacity(out_rank);
                for j in 0..out_rank {
                    let mut d: Option<Dim> = None;
                    for (i, &t) in axes.iter().enumerate() {
                        if t == j {
                            d = Some(match (d, ty.shape[i]) {
                                (None, x) => x,
                                (Some(Dim::Known(m)), Dim::Known(n)) => Dim::Known(m.min(n)),
                                (Some(p), x) if p == x => x,
                                _ => {
                                    return Err(err::needs_known(
                                        "a diagonal of run-time lengths is not supported yet",
                                        span,
                                    ))
                                }
                            });
                        }
                    }
                    shape.push(d.unwrap_or(Dim::Known(0)));
                }
                Ok(self.gather(x, Gather::Axes(axes), shape, span))
            }
            Prim::Take | Prim::Drop => {
                let counts = self
                    .const_ints(a)
                    .ok_or_else(|| need_const(&p.glyph().to_string()))?;
                let (x, ty) = if r == 0 {
                    let shape = vec![Dim::Known(1); counts.len().max(1)];
                    let x = self.reshape(x, shape, span.clone());
                    (x, self.f.ty(x).clone())
                } else {
                    (x, ty)
                };
                let r = ty.rank();
                let axes: Vec<usize> = match axis {
                    Some(k) if counts.len() == 1 => vec![k],
                    None if counts.len() <= r => (0..counts.len()).collect(),
                    _ => {
                        return Err(err::length(
                            format!("{} of rank {r} takes at most {r} counts", p.glyph()),
                            span,
                        ))
                    }
                };
                let mut start = vec![0i64; r];
                let mut shape = ty.shape.clone();
                for (&c, &ax) in counts.iter().zip(&axes) {
                    if p == Prim::Take && c >= 0 {
                        // Overtake fills: the argument's length is checked per element.
                        shape[ax] = Dim::Known(c as u64);
                        continue;
                    }
                    let Dim::Known(n) = ty.shape[ax] else {
                        return Err(err::needs_known(
                            "take from the end and drop on run-time lengths are not supported yet",
                            span,
                        ));
                    };
                    let n = n as i64;
                    let (st, len) = match (p, c >= 0) {
                        (Prim::Take, true) => (0, c),
                        (Prim::Take, false) => (n + c, -c),
                        (_, true) => (c.min(n), (n - c).max(0)),
                        (_, false) => (0, (n + c).max(0)),
                    };
                    start[ax] = st;
                    shape[ax] = Dim::Known(len as u64);
                }
                let fill = Scalar::I32(0).cast(ty.elem);
                Ok(self.gather(x, Gather::Window { start, fill }, shape, span))
            }
            _ => Err(err::unsupported(
                format!("dyadic {} is not supported on the GPU path yet", p.glyph()),
                span,
            )),
        }
    }

    /// `a,[axis] b`: scalars are extended, and an array one rank below the other gets a
    /// unit axis at `axis`.
    fn catenate(&mut self, a: Value, b: Value, axis: usize, span: Span) -> Result<Value> {
        let (at, bt) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let elem = at.elem.join(bt.elem);
        let (a, b) = (self.cast(a, elem), self.cast(b, elem));
        let rank = at.rank().max(bt.rank()).max(1);
        let fit = |l: &mut Self, v: Value, t: &Type, other: &Type| -> Result<Value> {
            if t.rank() == rank {
                return Ok(v);
            }
            let mut shape = if other.rank() == rank {
                other.shape.clone()
            } else {
                vec![Dim::Known(1); rank]
            };
            if t.rank() == 0 {
                shape[axis] = Dim::Known(1);
                return Ok(l.reshape(v, shape, span.clone()));
            }
            if t.rank() + 1 == rank {
                let mut s = t.shape.clone();
                s.insert(axis, Dim::Known(1));
                return Ok(l.reshape(v, s, span.clone()));
            }
            Err(err::rank(
                format!(
                    "arguments of rank {} and {} do not conform",
                    at.rank(),
                    bt.rank()
                ),
                span.clone(),
            ))
        };
        let a = fit(self, a, &at, &bt)?;
        let b = fit(self, b, &bt, &at)?;
        let (at, bt) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let mut shape = at.shape.clone();
        for (k, dim) in shape.iter_mut().enumerate() {
            if k == axis {
                *dim = match (at.shape[k], bt.shape[k]) {
                    (Dim::Known(x), Dim::Known(y)) => Dim::Known(x + y),
                    _ => {
                        return Err(err::needs_known(
                            "catenating along a run-time length is not supported yet",
                            span,
                        ))
                    }
                };
            } else if at.shape[k] != bt.shape[k] {
                return Err(err::length(
                    format!("lengths {} and {} do not match", at.shape[k], bt.shape[k]),
                    span,
                ));
            }
        }
        Ok(self.f.push(
            Inst::Catenate {
                lhs: a,
                rhs: b,
                axis,
            },
            Type { elem, shape },
            span,
        ))
    }

    /// `a/x` (`a⌿x` with `first`): literal counts become a gather; a computed boolean
    /// mask of a vector compresses on the device, its result's length staying there.
    fn compress(
        &mut self,
        a: Value,
        x: Value,
        first: bool,
        axis: Option<usize>,
        span: Span,
    ) -> Result<Value> {
        let x = if self.f.ty(x).rank() == 0 {
            let n = match self.f.ty(a).shape.first() {
                Some(d) => *d,
                None => Dim::Known(1),
            };
            self.reshape(x, vec![n], span.clone())
        } else {
            x
        };
        let xt = self.f.ty(x).clone();
        let ax = axis.unwrap_or(if first { 0 } else { xt.rank() - 1 });
        let len = xt.shape[ax];
        let at = self.f.ty(a).clone();
        if let Some(known) = self.known_value(a) {
            if known.rank() > 1 {
                return Err(err::rank(
                    "replicate counts must be a scalar or vector",
                    span,
                ));
            }
            if self.const_ints(a).is_none() {
                return Err(err::domain("replicate counts must be integers", span));
            }
        }
        if let Some(counts) = self.const_ints(a) {
            let Dim::Known(n) = len else {
                return Err(err::needs_known(
                    "replicate along a run-time length is not supported yet",
                    span,
                ));
            };
            let counts = if counts.len() == 1 {
                vec![counts[0]; n as usize]
            } else {
                counts
            };
            if counts.len() as u64 != n {
                return Err(err::length(
                    format!("{} counts for an axis of length {n}", counts.len()),
                    span,
                ));
            }
            // A negative count inserts that many fill items (zeros): they are gathered
            // from a fill item put after the last one.
            let x = if counts.iter().any(|&c| c < 0) {
                let zero = Array::scalar(Scalar::I32(0).cast(xt.elem));
                let z = self.konst(zero, span.clone());
                self.catenate(x, z, ax, span.clone())?
            } else {
                x
            };
            let total = counts
                .iter()
                .fold(0u64, |t, &c| t.saturating_add(c.unsigned_abs()));
            // The gather's indices are made here, one per item: at most the reference's
            // own limit of items (2^28; the fuzzer's `2147483647⌿t` allocated 8 GB
            // of indices and the process was killed), and a result within the
            // device's.
            let rest =
                xt.shape
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| *k != ax)
                    .fold(1u64, |acc, (_, d)| match d {
                        Dim::Known(n) => acc.saturating_mul(*n),
                        _ => acc,
                    });
            if total > LITERAL_LIMIT || total.saturating_mul(rest) > crate::plan::MAX_DEVICE_COUNT {
                return Err(err::ws_full(
                    format!("replicate would give {total} items along its axis"),
                    span,
                ));
            }
            let fill = n as i32 + 1;
            let idx: Vec<i32> = counts
                .iter()
                .enumerate()
                .flat_map(|(k, &c)| {
                    let at = if c < 0 { fill } else { k as i32 + 1 };
                    std::iter::repeat_n(at, c.unsigned_abs() as usize)
                })
                .collect();
            let iv = self.konst(Array::vector(Data::I32(idx)), span.clone());
            let axes = (0..xt.rank()).map(|k| (k == ax).then_some(iv)).collect();
            return self.index(x, axes, span);
        }
        if at.elem != ElemType::Bool || at.rank() != 1 || xt.rank() != 1 {
            return Err(err::needs_known(
                "on the GPU path, computed replicate counts must be a boolean vector compressing a vector",
                span,
            ));
        }
        match (at.shape[0], len) {
            (Dim::Dyn(_), _) | (_, Dim::Dyn(_)) if at.shape[0] != len => {
                return Err(err::needs_known(
                    "a mask and an array whose lengths are computed on the device in different ways are not supported on the GPU path yet",
                    span,
                ))
            }
            (Dim::Known(p), Dim::Known(q)) if p != q => {
                return Err(err::length(
                    format!("lengths {p} and {q} do not match"),
                    span,
                ))
            }
            (p, q) if p != q => self.f.checks.push(LengthCheck {
                a: p,
                b: q,
                span: span.clone(),
            }),
            _ => {}
        }
        let id = self.f.dyn_bounds.len() as u32;
        // Bounds are lengths known on the host (a compress of a compress is bounded
        // by the first one's bound).
        let bound = match len {
            Dim::Dyn(i) => self.f.dyn_bounds[i as usize],
            d => d,
        };
        self.f.dyn_bounds.push(bound);
        Ok(self.f.push(
            Inst::Compress { mask: a, arg: x },
            Type {
                elem: xt.elem,
                shape: vec![Dim::Dyn(id)],
            },
            span,
        ))
    }

    /// `a≡b` of simple arrays: same shape and equal elements (numbers by value).
    fn matches(&mut self, a: Value, b: Value, span: Span) -> Result<Value> {
        let (at, bt) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let (Some(sa), Some(sb)) = (known_dims(&at.shape), known_dims(&bt.shape)) else {
            return Err(err::needs_known(
                "≡ of arrays whose shapes are known only at run time is not supported yet",
                span,
            ));
        };
        if sa != sb {
            return Ok(self.konst(Array::scalar(Scalar::Bool(false)), span));
        }
        let eq = self.binary(BinOp::Equal, a, b, span.clone())?;
        let n = crate::array::saturating_count(&sa) as u64;
        let flat = self.reshape(eq, vec![Dim::Known(n)], span.clone());
        self.reduce(BinOp::And, flat, 0, span)
    }

    /// Indices the program wrote (in ⎕IO) as the IR's 1-based ones.
    fn one_based(&mut self, i: Value, span: Span) -> Result<Value> {
        if self.io == 1 || self.f.ty(i).elem.is_float() {
            return Ok(i);
        }
        let d = self.konst(
            Array::scalar(Scalar::I32((1 - self.io) as i32)),
            span.clone(),
        );
        self.binary(BinOp::Add, i, d, span)
    }

    /// `x[i;j;…]`, with one entry per axis of `x` (1-based indices).
    fn index(&mut self, x: Value, axes: Vec<Option<Value>>, span: Span) -> Result<Value> {
        let xt = self.f.ty(x).clone();
        if axes.len() != xt.rank() {
            return Err(err::rank(
                format!("{} indices for an array of rank {}", axes.len(), xt.rank()),
                span,
            ));
        }
        let mut shape = vec![];
        for (a, ix) in axes.iter().enumerate() {
            match ix {
                Some(i) => {
                    let it = self.f.ty(*i);
                    if it.elem.is_float() {
                        return Err(err::unsupported(
                            "float indices are not supported on the GPU path",
                            span,
                        ));
                    }
                    // Known indices into a known length are checked here: an empty
                    // result would never read them (`4⌷2 2 0⍴0` is an INDEX ERROR).
                    if let (Some(k), Dim::Known(len)) = (self.const_ints(*i), xt.shape[a]) {
                        if let Some(&bad) = k.iter().find(|&&v| v < 1 || v > len as i64) {
                            return Err(err::index(
                                format!(
                                    "index {} is outside {}…{} on axis {}",
                                    bad - 1 + self.io,
                                    self.io,
                                    len as i64 - 1 + self.io,
                                    a + 1
                                ),
                                span,
                            ));
                        }
                    }
                    let it = self.f.ty(*i);
                    shape.extend(it.shape.iter().copied());
                }
                None => shape.push(xt.shape[a]),
            }
        }
        Ok(self.f.push(
            Inst::Index { arg: x, axes },
            Type {
                elem: xt.elem,
                shape,
            },
            span,
        ))
    }

    /// `f¨`: a function made of scalar functions applies to whole arrays as it would
    /// to each element.
    fn each(&mut self, g: &Func, a: Option<Value>, x: Value, span: &Span) -> Result<Value> {
        let g = self.resolve(g)?;
        let shape = match a {
            Some(a) => {
                let (at, xt) = (self.f.ty(a).clone(), self.f.ty(x).clone());
                self.extend(&at, &xt, span)?
            }
            None => self.f.ty(x).shape.clone(),
        };
        // Try f on scalar stand-ins: it must give a scalar through scalar functions
        // only, as a formula of the stand-ins (`+/¨x` is x itself: a fold of one
        // item). The trial is then undone (the IR only grows at its end) and the
        // formula applied to the arrays.
        let trial = self.trial(span, |l| {
            let stand_in = |l: &mut Self, v: Value| {
                let t = Type::scalar(l.f.ty(v).elem);
                l.f.push(Inst::Param { index: 0 }, t, span.clone())
            };
            let tx = stand_in(l, x);
            let ta = a.map(|a| stand_in(l, a));
            let r = match ta {
                Some(ta) => l.dyadic(&g, ta, tx, span)?,
                None => l.monadic(&g, tx, span)?,
            };
            Ok((r, ta.unwrap_or(tx), tx))
        });
        let dims = known_dims(&shape);
        if let Some(d) = dims.as_ref().filter(|d| d.contains(&0)) {
            // f never runs: an empty result of its type, and no error its text would
            // raise if it ran (`{⍵+1[0]}¨⍬` is empty, as in the reference).
            let elem = trial.as_ref().map_or(self.f.ty(x).elem, |f| f.elem);
            return Ok(self.konst(Array::new(d.clone(), Data::empty(elem)), span.clone()));
        }
        let comb =
            match trial.and_then(|f| self.settle(f, dims.is_some(), span)) {
                Ok(c) => c,
                Err(e) if e.class != crate::ErrorClass::Unsupported => return Err(e),
                Err(_) => return Err(err::unsupported(
                    "f¨ where f is more than scalar functions is not supported on the GPU path yet",
                    g.span.clone(),
                )),
            };
        let r = self.apply_comb(&comb, a.unwrap_or(x), x, span)?;
        let rt = self.f.ty(r).clone();
        if rt.shape == shape {
            Ok(r)
        } else if rt.is_singleton() {
            Ok(self.reshape(r, shape, span.clone()))
        } else {
            Err(err::unsupported(
                "f¨ whose results are not scalars is not supported",
                g.span.clone(),
            ))
        }
    }

    /// A scalar formula of ⍺ and ⍵ applied to arrays `a` and `x` (scalar extension
    /// as for any scalar function).
    fn apply_comb(&mut self, c: &Comb, a: Value, x: Value, span: &Span) -> Result<Value> {
        Ok(match c {
            Comb::Alpha => a,
            Comb::Omega => x,
            Comb::Outer(v) => *v,
            Comb::Const(s) => self.konst(Array::scalar(*s), span.clone()),
            Comb::Cast { to, arg } => {
                let v = self.apply_comb(arg, a, x, span)?;
                self.cast(v, *to)
            }
            Comb::Unary { op, arg, .. } => {
                let v = self.apply_comb(arg, a, x, span)?;
                self.unary(*op, v, span.clone())?
            }
            Comb::Binary { op, lhs, rhs, .. } => {
                let l = self.apply_comb(lhs, a, x, span)?;
                let r = self.apply_comb(rhs, a, x, span)?;
                self.apply_binary(*op, l, r, span.clone())?
            }
            Comb::Select { cond, then, els } => {
                let c = self.apply_comb(cond, a, x, span)?;
                let t = self.apply_comb(then, a, x, span)?;
                let e = self.apply_comb(els, a, x, span)?;
                self.select(c, t, e, span)?
            }
        })
    }

    /// `a ∘.g b`: both arguments spread over the result's axes, then `g`.
    fn outer(&mut self, g: &Func, a: Value, b: Value, span: Span) -> Result<Value> {
        let op = self.scalar_operand(g, a, b);
        let (at, bt) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let mut shape = at.shape.clone();
        shape.extend(bt.shape.iter().copied());
        let ra = at.rank();
        let a2 = self.gather(
            a,
            Gather::Axes((0..ra).collect()),
            shape.clone(),
            span.clone(),
        );
        let b2 = self.gather(
            b,
            Gather::Axes((ra..ra + bt.rank()).collect()),
            shape,
            span.clone(),
        );
        match op {
            Ok(op) => self.apply_binary(op, a2, b2, span),
            // A dfn of scalar functions applies to the spread arguments as a whole.
            Err(e) if e.class == crate::ErrorClass::Unsupported => {
                let g = self.resolve(g)?;
                if !matches!(g.kind, FuncKind::Dfn(_)) {
                    return Err(e);
                }
                self.each(&g, Some(a2), b2, &span)
            }
            Err(e) => Err(e),
        }
    }

    /// A strand with computed items (`x 1`): each a scalar, catenated.
    fn strand(&mut self, values: &[Value], items: &[Expr], span: Span) -> Result<Value> {
        let mut out: Option<Value> = None;
        let elem = values
            .iter()
            .map(|v| self.f.ty(*v).elem)
            .max()
            .unwrap_or(ElemType::I32);
        for (v, it) in values.iter().zip(items) {
            if self.f.ty(*v).rank() != 0 {
                return Err(err::domain(
                    "nested arrays are not supported: each item of a strand must be a scalar",
                    it.span.clone(),
                ));
            }
            let c = self.cast(*v, elem);
            let one = self.reshape(c, vec![Dim::Known(1)], it.span.clone());
            out = Some(match out {
                None => one,
                Some(acc) => self.catenate(acc, one, 0, span.clone())?,
            });
        }
        out.ok_or_else(|| err::unsupported("an empty strand", span))
    }

    /// `a f.g b`: `g` over a virtual array `(¯1↓⍴a),(1↓⍴b),k` of both arguments
    /// spread, then `f/` along its last axis (fused: nothing of size m×n×k is stored).
    fn inner(&mut self, f: &Func, g: &Func, a: Value, b: Value, span: Span) -> Result<Value> {
        let gop = self.scalar_operand(g, a, b)?;
        // A scalar argument extends along the inner axis (`2+.×1 2 3` is `+/2×1 2 3`).
        let (at0, bt0) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let a = if at0.rank() == 0 {
            let k = bt0.shape.first().copied().unwrap_or(Dim::Known(1));
            self.reshape(a, vec![k], span.clone())
        } else {
            a
        };
        let b = if bt0.rank() == 0 {
            let k = self.f.ty(a).shape.last().copied().unwrap_or(Dim::Known(1));
            self.reshape(b, vec![k], span.clone())
        } else {
            b
        };
        // An inner axis of length 1 extends to the other's (`(,3)+.×1 2 3` is 18).
        let (at, bt) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let (ka, kb) = (at.shape[at.rank() - 1], bt.shape[0]);
        let one = Dim::Known(1);
        let (a, b) = if ka == one && kb != one {
            let r = at.rank() - 1;
            let inner = self.reshape(a, at.shape[..r].to_vec(), span.clone());
            let mut shape = at.shape[..r].to_vec();
            shape.push(kb);
            (
                self.gather(inner, Gather::Axes((0..r).collect()), shape, span.clone()),
                b,
            )
        } else if kb == one && ka != one {
            let r = bt.rank() - 1;
            let inner = self.reshape(b, bt.shape[1..].to_vec(), span.clone());
            let mut shape = vec![ka];
            shape.extend_from_slice(&bt.shape[1..]);
            (
                a,
                self.gather(inner, Gather::Axes((1..=r).collect()), shape, span.clone()),
            )
        } else {
            (a, b)
        };
        let (at, bt) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let (ra, rb) = (at.rank(), bt.rank());
        let k = at.shape[ra - 1];
        match (k, bt.shape[0]) {
            (Dim::Known(x), Dim::Known(y)) if x != y => {
                return Err(err::length(
                    format!("inner lengths {x} and {y} do not match"),
                    span,
                ))
            }
            // Lengths computed on the device are not checked on the host.
            (Dim::Dyn(_), _) | (_, Dim::Dyn(_)) if k != bt.shape[0] => {
                return Err(err::needs_known(
                    "an inner product of an array whose length is computed on the device is not supported on the GPU path yet",
                    span,
                ))
            }
            (x, y) if x != y => self.f.checks.push(LengthCheck {
                a: x,
                b: y,
                span: span.clone(),
            }),
            _ => {}
        }
        let plus = matches!(f.kind, FuncKind::Prim(Prim::Plus));
        let t = BinOp::Mul.result_type(at.elem, bt.elem, self.f.float);
        // Floats only: integer products and sums are checked for overflow, which the
        // tiled kernel does not do (`(1 2⍴⌊2*62)+.×2 1⍴2 2` is a DOMAIN ERROR).
        if plus && gop == BinOp::Mul && ra == 2 && rb == 2 && k != Dim::Known(0) && t.is_float() {
            // A tiled matrix multiply.
            let (a, b) = (self.cast(a, t), self.cast(b, t));
            let ty = Type {
                elem: t,
                shape: vec![at.shape[0], bt.shape[1]],
            };
            return Ok(self.f.push(Inst::MatMul { lhs: a, rhs: b }, ty, span));
        }
        let mut shape: Vec<Dim> = at.shape[..ra - 1].to_vec();
        shape.extend(bt.shape[1..].iter().copied());
        shape.push(k);
        let last = shape.len() - 1;
        let mut a_axes: Vec<usize> = (0..ra - 1).collect();
        a_axes.push(last);
        let mut b_axes = vec![last];
        b_axes.extend((ra - 1..ra - 1 + rb - 1).collect::<Vec<_>>());
        let a2 = self.gather(a, Gather::Axes(a_axes), shape.clone(), span.clone());
        let b2 = self.gather(b, Gather::Axes(b_axes), shape, span.clone());
        let prod = self.apply_binary(gop, a2, b2, span.clone())?;
        self.fold(f, Op1::Reduce, prod, last, span)
    }

    /// The scalar function a product's operand denotes, checked for these arguments.
    fn scalar_operand(&self, g: &Func, a: Value, b: Value) -> Result<BinOp> {
        let op = self.operand_op(g)?;
        let (ae, be) = (self.f.ty(a).elem, self.f.ty(b).elem);
        if !op.on_gpu_for(ae, be, self.f.float) {
            return Err(err::unsupported(
                format!("{} is not supported on the GPU path yet here", op.glyph()),
                g.span.clone(),
            ));
        }
        Ok(op)
    }

    /// `l op r` with the same rules as a dyadic primitive (`*` only for small literal
    /// powers).
    fn apply_binary(&mut self, op: BinOp, l: Value, r: Value, span: Span) -> Result<Value> {
        match self.small_power(r) {
            Some(k) if op == BinOp::Power => self.power(l, k, span),
            _ if op.on_gpu_for(self.f.ty(l).elem, self.f.ty(r).elem, self.f.float) => {
                self.binary(op, l, r, span)
            }
            _ => Err(err::unsupported(
                format!("{} is not supported on the GPU path yet", op.glyph()),
                span,
            )),
        }
    }
}

/// The stand-ins of a trial ([`Lower::trial`]), where it began, and which of its
/// values depend on the stand-ins.
struct Trial {
    a: Value,
    w: Value,
    start: usize,
    varies: Vec<bool>,
}

/// A scalar formula of ⍺ and ⍵ found by a trial, and its result type. `hoisted`: the
/// instructions (by their trial values) that compute the scalars it reads from outside
/// names; `checks`: the trial added length checks.
struct Formula {
    comb: Comb,
    elem: ElemType,
    hoisted: Vec<(Value, Inst, Type, Span)>,
    checks: bool,
}

fn known_dims(shape: &[Dim]) -> Option<Vec<usize>> {
    shape
        .iter()
        .map(|d| match d {
            Dim::Known(n) => Some(*n as usize),
            Dim::Sym(_) | Dim::Dyn(_) => None,
        })
        .collect()
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

/// The most a length can be: itself where known, else the device's largest count.
fn dim_bound(d: Dim) -> u128 {
    match d {
        Dim::Known(n) => n as u128,
        Dim::Sym(_) | Dim::Dyn(_) => crate::plan::MAX_DEVICE_COUNT as u128,
    }
}

/// A bound on the magnitude of every element of integer value `v` of `f`, where the
/// IR shows one (`None`: unknown, or a float): lets folds skip overflow checks
/// (`+/(⍳10)×⍳10`) and kernels skip them on `+ - ×` whose operands cannot overflow.
pub(crate) fn magnitude(f: &Function, v: Value, depth: u32) -> Option<u128> {
    let ty = f.ty(v);
    let by_type = match ty.elem {
        ElemType::Bool => return Some(1),
        ElemType::I32 => Some(1u128 << 31),
        ElemType::I64 => None,
        ElemType::F32 | ElemType::F64 => return None,
    };
    if depth > 16 {
        return by_type;
    }
    let m = |x: Value| magnitude(f, x, depth + 1);
    let found = match f.inst(v) {
        Inst::Const(a) => (0..a.len())
            .map(|i| a.data.get(i).as_i64().map(|x| x.unsigned_abs() as u128))
            .try_fold(0u128, |acc, x| Some(acc.max(x?))),
        Inst::Iota {
            len: Dim::Known(n),
            origin,
        } => Some(*n as u128 + origin.unsigned_abs() as u128),
        Inst::Cast(a) => m(*a),
        Inst::Unary {
            op: UnOp::Neg | UnOp::Abs | UnOp::Conjugate,
            arg,
        } => m(*arg),
        Inst::Binary {
            op: BinOp::Add | BinOp::Sub,
            lhs,
            rhs,
        } => Some(m(*lhs)?.saturating_add(m(*rhs)?)),
        Inst::Binary {
            op: BinOp::Mul,
            lhs,
            rhs,
        } => Some(m(*lhs)?.saturating_mul(m(*rhs)?)),
        Inst::Binary {
            op: BinOp::Max | BinOp::Min,
            lhs,
            rhs,
        } => Some(m(*lhs)?.max(m(*rhs)?)),
        Inst::Gather { arg, map } => {
            let fill = match map {
                Gather::Window { fill, .. } | Gather::Cycle { fill } => fill.as_i64()?,
                _ => 0,
            };
            Some(m(*arg)?.max(fill.unsigned_abs() as u128))
        }
        Inst::Reduce {
            op: BinOp::Add,
            arg,
            axis,
        } => Some(m(*arg)?.saturating_mul(dim_bound(f.ty(*arg).shape[*axis]))),
        Inst::Reduce {
            op: BinOp::Max | BinOp::Min,
            arg,
            ..
        } => m(*arg),
        _ => None,
    };
    match (found, by_type) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
