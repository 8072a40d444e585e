//! Lowering: AST → IR. Names are resolved, dfns are inlined at their call sites, scalar
//! functions get explicit casts and scalar extension, and every shape is inferred.
//! Shape and length errors that can be seen before running are reported here, with the
//! span of the function that raised them.

use crate::array::{Array, Data, ElemType, Scalar};
use crate::error::{err, Result};
use crate::ir::{
    Comb, Dim, Function, Gather, Inst, LengthCheck, NestedResult, Param, SearchKind, Type, Value,
};
use crate::scalar::{BinOp, ScalarError, UnOp};
use arrc_syntax::{Expr, ExprKind, Func, FuncKind, Op1, Prim, Program, Span, Stmt, Tine};

/// The most applications of `f⍣n` inlined into one statement on the GPU path.
pub const POWER_UNROLL: i64 = 64;
use std::collections::HashMap;

pub(crate) use crate::bounds::{dim_bound, magnitude};

mod batched;
mod comb;
mod folds;
mod key;
mod nested;
mod random;
mod scatter;
mod search;
mod sets;
mod solve;
mod stencil;
mod structural;
mod tacit;

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
    /// The nested arrays [`Inst::Nested`] values stand for (`lower/nested.rs`).
    nests: HashMap<Value, nested::Nest>,
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
    // Characters and nested arrays stay on the reference for now (issue 17).
    if let Some(p) = params.iter().find(|p| !p.ty.elem.is_number()) {
        let what = if p.ty.elem.is_char() {
            "characters"
        } else {
            "mixed and nested arrays"
        };
        return Err(err::unsupported(
            format!(
                "{what} (`{}`) on the GPU path are not supported yet",
                p.name
            ),
            0..0,
        ));
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
    l.f.nested = l.nest(result).map(nested::Nest::result);
    Ok(l.f)
}

/// Lowers a program that denotes a function (such as `{+/⍵×⍵}`, or statements defining
/// `f←{…}`) applied to `⍵` of type `omega` and, if given, `⍺` of type `alpha`; its floats
/// are `float`. The function is `entry` where given; else the program's only one (a
/// program that defines several must say which). `library` holds functions it may call
/// besides its own. Returns the IR and the name of the function built (`None` for
/// an unnamed one, `{+/⍵×⍵}`).
pub fn lower_function(
    prog: &Program,
    omega: Type,
    alpha: Option<Type>,
    float: ElemType,
    entry: Option<&str>,
    library: &[(String, Func)],
) -> Result<(Function, Option<String>)> {
    let mut l = Lower::new(library, float);
    let mut func = None;
    let mut named: Vec<(String, Func)> = vec![];
    for s in &prog.stmts {
        match s {
            Stmt::FnDef {
                name, func: fun, ..
            } => {
                l.bind(name, Binding::Func(fun.clone()));
                named.retain(|(n, _)| n != name);
                named.push((name.clone(), fun.clone()));
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
    let names = || {
        named
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (func, entry) = match entry {
        Some(e) => match named.iter().find(|(n, _)| n == e) {
            Some((n, f)) => (f.clone(), Some(n.clone())),
            None => {
                return Err(err::value(
                    format!("no function {e} in the program (it defines: {})", names()),
                    0..0,
                ))
            }
        },
        None => {
            let Some(func) = func else {
                return Err(err::domain(
                    "the program defines no function; write one such as f←{+/⍵×⍵}",
                    0..0,
                ));
            };
            if named.len() > 1 {
                return Err(err::domain(
                    format!(
                        "the program defines {}: say which to build (--entry NAME)",
                        names()
                    ),
                    0..0,
                ));
            }
            let name = named
                .iter()
                .find(|(_, f)| f.span == func.span)
                .map(|(n, _)| n.clone());
            (func, name)
        }
    };
    let w = l.param(
        0,
        &Param {
            name: "⍵".into(),
            ty: omega,
            value: None,
            magnitude: None,
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
                    magnitude: None,
                },
            );
            l.dyadic(&func, a, w, &func.span.clone())?
        }
        None => l.monadic(&func, w, &func.span.clone())?,
    };
    l.f.result = Some(result);
    Ok((l.f, entry))
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
                ct: crate::scalar::comparison_tolerance(),
                ..Function::default()
            },
            io: 1,
            scopes: vec![global],
            known: HashMap::new(),
            frames: vec![],
            depth: 0,
            trials: 0,
            nests: HashMap::new(),
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
                Stmt::Expr(e) if self.depth > 0 && !e.is_assignment() => return self.expr(e),
                // An indexed, selective or modified assignment of a dfn's own local
                // array (not its last statement, whose value would be the result):
                // the plain assignment it is (`arrc_syntax::assign`).
                Stmt::Expr(e) if self.depth > 0 && i + 1 < stmts.len() => {
                    match self.local_assignment(e) {
                        Some(plain) => last = Some(self.expr(&plain)?),
                        None => last = Some(self.expr(e)?),
                    }
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

    /// `e`, an assignment of another form to a name local to the running dfn, as the
    /// plain assignment it is; `None` otherwise.
    fn local_assignment(&self, e: &Expr) -> Option<Expr> {
        let ExprKind::AssignTo {
            target,
            func,
            value,
        } = &e.kind
        else {
            return None;
        };
        let top = self.scopes.last()?;
        let rank = |name: &str| match top.get(name) {
            Some(Binding::Array(v)) if name != "⍺" && name != "⍵" => Some(self.f.ty(*v).rank()),
            _ => None,
        };
        if target.names().iter().any(|n| rank(n).is_none()) {
            return None;
        }
        arrc_syntax::assign::plain_assignment(e, target, func.as_ref(), value, &rank)
            .map(|(plain, _)| plain)
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
            ExprKind::Str(_) => Err(err::unsupported(
                "characters on the GPU path are not supported yet",
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
                    return self.strand(&values, span);
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
            ExprKind::AssignTo { .. } => Err(err::unsupported(
                "indexed, strand and modified assignment are not supported on the GPU path yet",
                span,
            )),
            ExprKind::SysName(n) if n == "⎕CT" => {
                let ct = Scalar::F64(self.f.ct);
                Ok(self.konst(Array::scalar(ct), span))
            }
            ExprKind::SysName(n) => {
                let v = match n.as_str() {
                    "⎕IO" => self.io as i32,
                    "⎕FR" => self.f.float.fr(),
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
                if arrc_syntax::is_system_name(name) {
                    // `⎕←x` shows x, `⎕IO←0` changes what follows: the reference does
                    // both in APL's order (bound as a local name here, the output was
                    // lost and ⍳ kept the session's origin).
                    return Err(err::unsupported(
                        format!("{name}← inside a function is not supported on the GPU path yet"),
                        span,
                    ));
                }
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
        self.resolve_within(func, 64)
    }

    /// `func` with names looked up, through `g←f` aliases (`hops` of them at most).
    fn resolve_within(&self, func: &Func, hops: u32) -> Result<Func> {
        match &func.kind {
            FuncKind::Name(n) => match self.lookup(n) {
                Some(Binding::Func(f)) if matches!(f.kind, FuncKind::Name(_)) && hops > 0 => {
                    let f = f.clone();
                    self.resolve_within(&f, hops - 1)
                }
                Some(Binding::Func(f)) => Ok(f.clone()),
                Some(Binding::Array(_)) if matches!(n.as_str(), "⍺⍺" | "⍵⍵") => Err(
                    err::unsupported(crate::error::ARRAY_OPERAND, func.span.clone()),
                ),
                Some(Binding::Array(_)) => Err(err::domain(
                    format!("{n} is an array, not a function"),
                    func.span.clone(),
                )),
                None if n.starts_with('⎕') => Err(err::unsupported(
                    format!("{n} on the GPU path is not supported yet"),
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
        if self.nest(arg).is_some() {
            return self.nested_monadic(func, arg, span);
        }
        let fspan = func.span.clone();
        let f = self.resolve(func)?;
        match &f.kind {
            FuncKind::Prim(Prim::Enclose) => Ok(self.enclose(arg, &fspan)),
            FuncKind::Prim(Prim::Iota) => self.iota(arg, fspan),
            FuncKind::Prim(Prim::Where) => self.where_(arg, fspan),
            FuncKind::Prim(p @ (Prim::GradeUp | Prim::GradeDown)) => {
                let origin = self.io as i32;
                let keys = self.narrow_keys(arg);
                self.grade(keys, *p == Prim::GradeDown, origin, fspan)
            }
            FuncKind::Prim(Prim::Plus | Prim::Right | Prim::Left) => Ok(arg),
            // ≡ of a simple array: its depth, 0 for a scalar and 1 otherwise.
            FuncKind::Prim(Prim::Match) => {
                let depth = (self.f.ty(arg).rank() > 0) as i32;
                Ok(self.konst(Array::scalar(Scalar::I32(depth)), fspan))
            }
            // ↑ (mix) of a simple array is the array; ∊ (enlist) its ravel; ↓ (split)
            // its rows as items.
            FuncKind::Prim(Prim::Take) => Ok(arg),
            FuncKind::Prim(Prim::Drop) => {
                let r = self.f.ty(arg).rank();
                self.enclose_axes(
                    arg,
                    &r.checked_sub(1).into_iter().collect::<Vec<_>>(),
                    &fspan,
                )
            }
            FuncKind::Prim(Prim::Epsilon) => self.structural1(Prim::Comma, arg, None, fspan),
            FuncKind::Prim(Prim::Union) => self.unique(arg, fspan),
            FuncKind::Prim(Prim::Roll) => self.roll(arg, fspan),
            FuncKind::Prim(Prim::Domino) => self.domino(None, arg, fspan),
            FuncKind::Prim(Prim::NotEqual) => self.unique_mask(arg, fspan),
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
                // `⊂[k]` and `↓[k]`: the sub-arrays along the axes `k` as items.
                if let FuncKind::Prim(p @ (Prim::Enclose | Prim::Drop)) = g.kind {
                    let rank = self.f.ty(arg).rank();
                    // Axes of the argument itself (a scalar has none: `↓[1]5` is an
                    // AXIS ERROR, as `⊂[1]5`); `↓` takes one.
                    let axes = self.axes(k, rank)?;
                    if p == Prim::Drop && axes.len() != 1 {
                        return Err(err::axis("↓[k] takes one axis", k.span.clone()));
                    }
                    return self.enclose_axes(arg, &axes, &fspan);
                }
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
            _ => self.tacit(&f, None, arg, span),
        }
    }

    fn call_dfn(
        &mut self,
        body: &Program,
        alpha: Option<Value>,
        omega: Value,
        span: &Span,
    ) -> Result<Value> {
        let mut scope = HashMap::new();
        scope.insert("⍵".to_string(), Binding::Array(omega));
        if let Some(a) = alpha {
            scope.insert("⍺".to_string(), Binding::Array(a));
        }
        self.call_body(body, scope, span)
    }

    /// A dfn's (or an operator's) body run in a new scope holding `scope`.
    fn call_body(
        &mut self,
        body: &Program,
        scope: HashMap<String, Binding>,
        span: &Span,
    ) -> Result<Value> {
        if self.depth >= MAX_INLINE_DEPTH {
            return Err(err::domain("dfns nest too deeply", span.clone()));
        }
        self.depth += 1;
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

    /// `⍳len` from `origin` (i32).
    fn iota_of(&mut self, len: Dim, origin: i32, span: &Span) -> Value {
        self.f.push(
            Inst::Iota { len, origin },
            Type {
                elem: ElemType::I32,
                shape: vec![len],
            },
            span.clone(),
        )
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
            // Lengths known only at run time may make either a single item, which
            // extends (`(,5)+m`): the host decides once it knows them.
            let maybe_one = |t: &Type| {
                t.shape
                    .iter()
                    .all(|d| !matches!(d, Dim::Known(n) if *n != 1))
                    && t.shape.iter().any(|d| !matches!(d, Dim::Known(_)))
            };
            if (maybe_one(lt) && lt.rank() < rt.rank()) || (maybe_one(rt) && rt.rank() < lt.rank())
            {
                return Err(err::needs_known(
                    "an array whose lengths are known only at run time (perhaps one item) with one of another rank is not supported on the GPU path yet",
                    span.clone(),
                ));
            }
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

    /// Distinct axes of an array of `rank` (`⊂[1 3]`), in the order given; 0-based.
    fn axes(&mut self, k: &Expr, rank: usize) -> Result<Vec<usize>> {
        let v = self.expr(k)?;
        let io = self.io;
        let Some(ks) = self.const_ints(v) else {
            return Err(err::unsupported(
                "axes computed at run time are not supported on the GPU path yet",
                k.span.clone(),
            ));
        };
        let mut out: Vec<usize> = Vec::with_capacity(ks.len());
        for a in ks {
            let ok = a >= io && ((a - io) as usize) < rank;
            if !ok || out.contains(&((a - io) as usize)) {
                return Err(err::axis(
                    format!("the axes must be distinct axes of an array of rank {rank}"),
                    k.span.clone(),
                ));
            }
            out.push((a - io) as usize);
        }
        Ok(out)
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
        // A known array reshaped (`2 2⍴1 2 4 5`), at most 64 items.
        let ty = self.f.ty(v);
        if let (
            Inst::Gather {
                arg,
                map: Gather::Cycle { .. },
            },
            Some(dims),
        ) = (self.f.inst(v), known_dims(&ty.shape))
        {
            let n = crate::array::saturating_count(&dims);
            if ty.rank() != 1 && n <= 64 {
                let a = self.known_value(*arg).filter(|a| !a.is_empty())?;
                let mut d = Data::with_capacity(elem, n);
                (0..n).for_each(|i| d.push(a.data.get(i % a.len()).cast(elem)));
                return Some(Array::new(dims, d));
            }
        }
        // Vectors made of known scalars and vectors (`n,3`, `2 n`).
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
    fn strand(&mut self, values: &[Value], span: Span) -> Result<Value> {
        if values
            .iter()
            .any(|v| self.f.ty(*v).rank() != 0 || self.nest(*v).is_some())
        {
            return self.list(values, &span);
        }
        self.stack(values, &span)
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
