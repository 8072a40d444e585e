//! Dfn calls whose control flow needs values on the host: guards (`⍵≤1:1`) and `∇`
//! recursion. The device computes every value; the host only decides which statement
//! runs next. A statement is split at such calls: their arguments are computed first
//! (right to left, as APL evaluates), each call runs its body statement by statement
//! (a guard's condition is read back to choose), and its result enters the rest of the
//! statement as a named array. A statement without such calls compiles as one piece.

use crate::workspace::{Arg, Val};
use crate::{Array, Data, Error, Session};
use arrc_ir::error::err;
use arrc_ir::lower::{scoped_name, LocalScope};
use arrc_syntax::ast::{Expr, ExprKind, Func, FuncKind, Op1, Program, Stmt};
use arrc_syntax::Prim;
use arrc_syntax::Span;
use std::collections::{HashMap, HashSet};

/// Nesting of host-driven calls beyond which the device path gives up (the CPU
/// reference allows deeper recursion).
const MAX_DEPTH: usize = 1000;
/// Host-driven calls in one statement (each costs device submissions).
const MAX_CALLS: u64 = 20_000;
/// Under `Backend::Auto`, a statement that has made this many host-driven calls, none
/// of them on an array larger than [`SMALL_CALL`] elements, goes to the CPU reference
/// at once: each call costs device submissions worth far more than its work (`fib 20`
/// spent 13 s on 20,000 calls before it gave up, the reference needs 0.1 s).
const EARLY_CALLS: u64 = 256;
const SMALL_CALL: usize = 4096;

/// One active dfn call: its arrays (`⍵`, `⍺`, locals), local functions, itself (for
/// `∇`), and the frame of the dfn whose text encloses it (names resolve lexically).
#[derive(Default)]
pub(crate) struct Frame {
    arrays: HashMap<String, Array>,
    functions: HashMap<String, Func>,
    this: Option<Func>,
    parent: Option<usize>,
}

/// The state of one statement's host-driven evaluation.
#[derive(Default)]
pub(crate) struct Calls {
    frames: Vec<Frame>,
    calls: u64,
    /// Calls with an argument of more than [`SMALL_CALL`] elements.
    large_calls: u64,
    temps: u64,
    /// Operators whose dfn operand the device path refused run from the host too
    /// (a retry: `{+/⍺,⍵}/x`).
    host_operators: bool,
}

impl Calls {
    /// The running frame and the frames whose dfns enclose its text, innermost first.
    fn chain(&self) -> Vec<usize> {
        let mut chain = vec![];
        let mut next = self.frames.len().checked_sub(1);
        while let Some(k) = next {
            chain.push(k);
            next = self.frames[k].parent;
        }
        chain
    }
}

impl Session {
    /// Evaluates `e` on the device, running calls of dfns with guards or `∇` from the
    /// host.
    pub(crate) fn device_eval(&mut self, e: &Expr, st: &mut Calls) -> Result<Array, Error> {
        let v = self.device_eval_val(e, st, false)?;
        self.host_of(v)
    }

    /// [`Self::device_eval`] of a whole statement: with `keep`, a large result stays
    /// on the device (parts computed first and dfn calls come back to the host).
    pub(crate) fn device_eval_val(
        &mut self,
        e: &Expr,
        st: &mut Calls,
        keep: bool,
    ) -> Result<Val, Error> {
        self.device_eval_in(e, st, &mut HashMap::new(), keep)
    }

    /// [`Self::device_eval`] where the names in `temps` (parts computed first) are
    /// visible too.
    fn device_eval_in(
        &mut self,
        e: &Expr,
        st: &mut Calls,
        temps: &mut HashMap<String, Array>,
        keep: bool,
    ) -> Result<Val, Error> {
        // Recursion through `∇` nests these calls: grow the stack as it deepens.
        stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || {
            self.device_eval_inner(e, st, temps, keep)
        })
    }

    /// A part of a statement, on the host.
    fn part_on_host(
        &mut self,
        e: &Expr,
        st: &mut Calls,
        temps: &mut HashMap<String, Array>,
    ) -> Result<Array, Error> {
        let v = self.device_eval_in(e, st, temps, false)?;
        self.host_of(v)
    }

    fn device_eval_inner(
        &mut self,
        e: &Expr,
        st: &mut Calls,
        temps: &mut HashMap<String, Array>,
        keep: bool,
    ) -> Result<Val, Error> {
        let mut seen = HashSet::new();
        // Most statements have no host-driven call: they compile as they are.
        let hoisted;
        let hosted = e.any_func(&mut |f| self.host_func(f, st, &mut seen));
        let e2 = if hosted {
            hoisted = self.hoist(e, st, temps)?;
            if let ExprKind::Name(n) = &hoisted.kind {
                if let Some(a) = temps.remove(n) {
                    return Ok(a.into());
                }
            }
            &hoisted
        } else {
            e
        };
        match self.run_staged(e2, st, temps, keep) {
            // An operator whose dfn operand the device cannot compile: again, with
            // such operators applied from the host (each item's call on the device).
            Err(why)
                if why.class == crate::ErrorClass::Unsupported
                    && !st.host_operators
                    && e.any_func(&mut |f| hosted_operator(f)) =>
            {
                st.host_operators = true;
                let r = self.device_eval_inner(e, st, temps, keep);
                st.host_operators = false;
                match r {
                    Err(e) if e.class == crate::ErrorClass::Unsupported => Err(why),
                    r => r,
                }
            }
            r => r,
        }
    }

    /// Compiles and runs `e`, which has no host-driven call left, with the visible
    /// locals of the running dfns; in stages where it needs computed values known.
    fn run_staged(
        &mut self,
        e: &Expr,
        st: &mut Calls,
        temps: &mut HashMap<String, Array>,
        keep: bool,
    ) -> Result<Val, Error> {
        // The running dfns whose text holds the statement's, outermost first: their
        // locals are scopes over the workspace's names (a workspace function the
        // statement calls does not see them); ⍺ and ⍵ only from the running frame.
        let chain: Vec<usize> = st.chain().into_iter().rev().collect();
        let locals: Vec<LocalScope> = chain
            .iter()
            .map(|&k| LocalScope {
                body: match st.frames[k].this.as_ref().map(|f| &f.kind) {
                    Some(FuncKind::Dfn(body)) => (**body).clone(),
                    _ => Program::default(),
                },
                functions: st.frames[k]
                    .functions
                    .iter()
                    .map(|(n, g)| (n.clone(), g.clone()))
                    .collect(),
            })
            .collect();
        // A statement the device cannot run until some array it computes is known on
        // the host (`(+/x)⍴y`, `⍋(x>0)/x`) runs in stages: those parts first, their
        // values read back and bound to names, then the rest.
        let mut staged: Option<Expr> = None;
        loop {
            let cur = staged.as_ref().unwrap_or(e);
            let mut arrays: crate::gpu::Names = HashMap::new();
            for (i, &k) in chain.iter().enumerate() {
                for (n, a) in &st.frames[k].arrays {
                    if i + 1 == chain.len() || (n != "⍺" && n != "⍵") {
                        arrays.insert(scoped_name(n, i + 1), Arg::host(a));
                    }
                }
            }
            arrays.extend(temps.iter().map(|(n, a)| (n.clone(), Arg::host(a))));
            let r = self.run_on_device(cur, &arrays, &locals, keep);
            drop(arrays);
            match r {
                Err(why) if why.needs_known => {
                    let cur = cur.clone();
                    match self.stage(&cur, st, temps)? {
                        Some(next) => staged = Some(next),
                        None => return Err(why),
                    }
                }
                r => return r,
            }
        }
    }

    /// `e` with the parts that the device path needs known on the host computed
    /// first and bound to names: arguments that give shapes (`n⍴`, `n↑`, `n↓`, `⍳n`,
    /// replicate counts, n-wise window sizes, axes) and arrays whose lengths the device
    /// computes (compresses by computed masks, `⍸`). `None` when there is none left.
    fn stage(
        &mut self,
        e: &Expr,
        st: &mut Calls,
        temps: &mut HashMap<String, Array>,
    ) -> Result<Option<Expr>, Error> {
        let mut any = false;
        let out = self.stage_expr(e, st, temps, &mut any, true)?;
        Ok(any.then_some(out))
    }

    /// `root`: `e` is the whole expression being staged, which is not computed first
    /// as a whole (only its parts).
    fn stage_expr(
        &mut self,
        e: &Expr,
        st: &mut Calls,
        temps: &mut HashMap<String, Array>,
        any: &mut bool,
        root: bool,
    ) -> Result<Expr, Error> {
        let span = e.span.clone();
        // Right to left, as APL evaluates.
        let kind = match &e.kind {
            ExprKind::Monadic { func, arg } => {
                let arg = self.stage_expr(arg, st, temps, any, false)?;
                let func = self.stage_func(func, st, temps, any)?;
                let prim = prim_of(&func);
                let arg = if matches!(prim, Some(Prim::Iota | Prim::Where)) {
                    self.stage_value(arg, st, temps, any)?
                } else {
                    arg
                };
                let node = Expr::new(
                    ExprKind::Monadic {
                        func,
                        arg: Box::new(arg),
                    },
                    span.clone(),
                );
                if matches!(prim, Some(Prim::Where)) && !root {
                    return self.stage_value(node, st, temps, any);
                }
                node.kind
            }
            ExprKind::Dyadic { func, left, right } => {
                let right = self.stage_expr(right, st, temps, any, false)?;
                let left = self.stage_expr(left, st, temps, any, false)?;
                let func = self.stage_func(func, st, temps, any)?;
                let prim = prim_of(&func);
                // A replicate's computed counts are computed first: known, they give
                // its length (and its gather). One inside the statement whose counts
                // are known already is then computed first as a whole.
                let compress = matches!(prim, Some(Prim::Slash | Prim::SlashBar));
                let counts_first = compress && (root || !settled(&left));
                let whole = compress && !root && !counts_first;
                let left = match prim {
                    Some(
                        Prim::Rho | Prim::Take | Prim::Drop | Prim::Reverse | Prim::ReverseFirst,
                    ) => self.stage_value(left, st, temps, any)?,
                    Some(Prim::Slash | Prim::SlashBar) if counts_first => {
                        self.stage_value(left, st, temps, any)?
                    }
                    _ if nwise(&func) => self.stage_value(left, st, temps, any)?,
                    _ => left,
                };
                let node = Expr::new(
                    ExprKind::Dyadic {
                        func,
                        left: Box::new(left),
                        right: Box::new(right),
                    },
                    span.clone(),
                );
                if whole {
                    return self.stage_value(node, st, temps, any);
                }
                node.kind
            }
            _ => return e.map_children(&mut |c| self.stage_expr(c, st, temps, any, false)),
        };
        Ok(Expr::new(kind, span))
    }

    /// `f` with a computed axis (`f[k]`) computed first.
    fn stage_func(
        &mut self,
        f: &Func,
        st: &mut Calls,
        temps: &mut HashMap<String, Array>,
        any: &mut bool,
    ) -> Result<Func, Error> {
        Ok(match &f.kind {
            FuncKind::Axis(g, k) => {
                let k = self.stage_value((**k).clone(), st, temps, any)?;
                Func {
                    kind: FuncKind::Axis(g.clone(), Box::new(k)),
                    span: f.span.clone(),
                }
            }
            _ => f.clone(),
        })
    }

    /// `x` computed on the device and bound to a name, unless it is a literal or a
    /// name already (or holds an assignment, which must stay in its statement).
    fn stage_value(
        &mut self,
        x: Expr,
        st: &mut Calls,
        temps: &mut HashMap<String, Array>,
        any: &mut bool,
    ) -> Result<Expr, Error> {
        if settled(&x) || crate::inner_assignment(&x).is_some() {
            return Ok(x);
        }
        let v = self.part_on_host(&x, st, temps)?;
        *any = true;
        Ok(temp(v, st, temps, x.span.clone()))
    }

    /// `e` with every host-driven call replaced by a name bound in `temps` to its
    /// computed value.
    fn hoist(
        &mut self,
        e: &Expr,
        st: &mut Calls,
        temps: &mut HashMap<String, Array>,
    ) -> Result<Expr, Error> {
        let span = e.span.clone();
        let kind = match &e.kind {
            ExprKind::Monadic { func, arg } => {
                let arg = self.hoist(arg, st, temps)?;
                if self.needs_host(func, st) {
                    let r = self.derived_on_device(func, None, &arg, st, temps, &span)?;
                    return Ok(temp(r, st, temps, span));
                }
                ExprKind::Monadic {
                    func: func.clone(),
                    arg: Box::new(arg),
                }
            }
            ExprKind::Dyadic { func, left, right } => {
                let right = self.hoist(right, st, temps)?;
                if self.needs_host(func, st) {
                    let left = self.hoist(left, st, temps)?;
                    let r = self.derived_on_device(func, Some(&left), &right, st, temps, &span)?;
                    return Ok(temp(r, st, temps, span));
                }
                let left = self.hoist(left, st, temps)?;
                ExprKind::Dyadic {
                    func: func.clone(),
                    left: Box::new(left),
                    right: Box::new(right),
                }
            }
            _ => return e.map_children(&mut |c| self.hoist(c, st, temps)),
        };
        Ok(Expr::new(kind, span))
    }

    /// Applies a host-driven function to arguments that have no host-driven call left.
    /// An operator's derived function (`{⍵>0:⍺+⍵ ⋄ ⍺-⍵}/x`, `{⍵=0:0 ⋄ ÷⍵}¨x`) is
    /// compiled for the device with its arguments first, where guards on scalars
    /// become selects; what the device path cannot run is called from the host.
    fn derived_on_device(
        &mut self,
        func: &Func,
        alpha: Option<&Expr>,
        omega: &Expr,
        st: &mut Calls,
        temps: &mut HashMap<String, Array>,
        span: &Span,
    ) -> Result<Array, Error> {
        if let FuncKind::Derived { .. } | FuncKind::Outer(_) | FuncKind::Inner(..) = func.kind {
            let kind = match alpha {
                Some(a) => ExprKind::Dyadic {
                    func: func.clone(),
                    left: Box::new(a.clone()),
                    right: Box::new(omega.clone()),
                },
                None => ExprKind::Monadic {
                    func: func.clone(),
                    arg: Box::new(omega.clone()),
                },
            };
            match self.run_staged(&Expr::new(kind, span.clone()), st, temps, false) {
                Err(e) if e.class == crate::ErrorClass::Unsupported => {}
                r => return self.host_of(r?),
            }
        }
        let w = self.part_on_host(omega, st, temps)?;
        let a = match alpha {
            Some(a) => Some(self.part_on_host(a, st, temps)?),
            None => None,
        };
        self.call(func, a, w, st, span)
    }

    /// Applies a host-driven function: a dfn (by value, by name, or `∇`), or `f¨` of
    /// one.
    fn call(
        &mut self,
        f: &Func,
        alpha: Option<Array>,
        omega: Array,
        st: &mut Calls,
        span: &Span,
    ) -> Result<Array, Error> {
        arrc_ir::interrupt::check(span)?;
        match &f.kind {
            FuncKind::Dfn(body) => self.call_dfn(f, body, alpha, omega, st, span),
            FuncKind::Name(_) | FuncKind::SelfRef => {
                let g = self.resolve(f, st).ok_or_else(|| match f.kind {
                    FuncKind::SelfRef => err::syntax_like("∇ outside a dfn", f.span.clone()),
                    _ => err::value("no such function", f.span.clone()),
                })?;
                self.call(&g, alpha, omega, st, span)
            }
            FuncKind::Derived {
                op: Op1::Each,
                operand,
            } => self.each(operand, alpha, omega, st, span),
            FuncKind::Power(g, until) if matches!(**until, arrc_syntax::Tine::Func(_)) => {
                let arrc_syntax::Tine::Func(u) = &**until else {
                    unreachable!("matched above")
                };
                self.power_until(g, u, alpha, omega, st, span)
            }
            _ if hosted_operator(f) => self.operator(f, alpha, omega, st, span),
            // Anything else (a primitive, a derived function the device compiles)
            // applies to its arguments on the device.
            _ => {
                let mut temps = HashMap::new();
                let w = Box::new(temp(omega, st, &mut temps, span.clone()));
                let kind = match alpha {
                    Some(a) => ExprKind::Dyadic {
                        func: f.clone(),
                        left: Box::new(temp(a, st, &mut temps, span.clone())),
                        right: w,
                    },
                    None => ExprKind::Monadic {
                        func: f.clone(),
                        arg: w,
                    },
                };
                let v = self.run_staged(&Expr::new(kind, span.clone()), st, &mut temps, false)?;
                self.host_of(v)
            }
        }
    }

    /// `f⍣g ⍵` (and `⍺ f⍣g ⍵`, which applies `⍺∘f`): `f` applied until `(f y) g y`
    /// is 1, each application and test on the device, the test's one boolean read
    /// back to decide.
    fn power_until(
        &mut self,
        f: &Func,
        g: &Func,
        alpha: Option<Array>,
        omega: Array,
        st: &mut Calls,
        span: &Span,
    ) -> Result<Array, Error> {
        let mut x = omega;
        loop {
            arrc_ir::interrupt::check(span)?;
            st.calls += 1;
            if x.len() > SMALL_CALL {
                st.large_calls += 1;
            }
            if self.backend == crate::Backend::Auto && st.calls > EARLY_CALLS && st.large_calls == 0
            {
                return Err(err::unsupported(
                    format!(
                        "more than {EARLY_CALLS} steps of ⍣ on small arrays: faster on the CPU than as device submissions"
                    ),
                    span.clone(),
                ));
            }
            if st.calls > MAX_CALLS {
                return Err(err::unsupported(
                    format!("more than {MAX_CALLS} steps of ⍣ on the GPU path"),
                    span.clone(),
                ));
            }
            let y = self.call(f, alpha.clone(), x.clone(), st, span)?;
            let stop = self.call(g, Some(y.clone()), x, st, span)?;
            match stop.as_boolean() {
                Some(true) => return Ok(y),
                Some(false) => x = y,
                None => {
                    return Err(err::domain(
                        "⍣'s right operand must give one boolean",
                        g.span.clone(),
                    ))
                }
            }
        }
    }

    fn call_dfn(
        &mut self,
        f: &Func,
        body: &Program,
        alpha: Option<Array>,
        omega: Array,
        st: &mut Calls,
        span: &Span,
    ) -> Result<Array, Error> {
        if st.frames.len() >= MAX_DEPTH {
            return Err(err::unsupported(
                format!("dfn calls nest deeper than {MAX_DEPTH} on the GPU path"),
                span.clone(),
            ));
        }
        st.calls += 1;
        if omega.len() > SMALL_CALL || alpha.as_ref().is_some_and(|a| a.len() > SMALL_CALL) {
            st.large_calls += 1;
        }
        if self.backend == crate::Backend::Auto && st.calls > EARLY_CALLS && st.large_calls == 0 {
            return Err(err::unsupported(
                format!(
                    "more than {EARLY_CALLS} dfn calls with guards or ∇ on small arrays: faster on the CPU than as device submissions"
                ),
                span.clone(),
            ));
        }
        if st.calls > MAX_CALLS {
            return Err(err::unsupported(
                format!("more than {MAX_CALLS} dfn calls with guards or ∇ on the GPU path"),
                span.clone(),
            ));
        }
        // `∇` runs in its caller's enclosing frame; a literal in the innermost running
        // dfn whose text holds it; a workspace function in none.
        let running: Vec<_> = st
            .frames
            .iter()
            .map(|fr| (fr.this.as_ref(), fr.parent))
            .collect();
        let parent = arrc_syntax::ast::lexical_parent(&running, f, body);
        let mut frame = Frame {
            this: Some(f.clone()),
            parent,
            ..Frame::default()
        };
        frame.arrays.insert("⍵".into(), omega);
        let has_alpha = alpha.is_some();
        if let Some(a) = alpha {
            frame.arrays.insert("⍺".into(), a);
        }
        st.frames.push(frame);
        let r = self.body(&body.stmts, has_alpha, st, span);
        st.frames.pop();
        r
    }

    fn body(
        &mut self,
        stmts: &[Stmt],
        has_alpha: bool,
        st: &mut Calls,
        span: &Span,
    ) -> Result<Array, Error> {
        let mut last = None;
        for s in stmts {
            match s {
                Stmt::Guard { cond, value } => {
                    let c = self.device_eval(cond, st)?;
                    match c.as_singleton().and_then(|s| s.as_i64()) {
                        Some(1) => return self.device_eval(value, st),
                        Some(0) => {}
                        _ => {
                            return Err(err::domain(
                                "a guard's condition must be a single 0 or 1",
                                cond.span.clone(),
                            ))
                        }
                    }
                }
                Stmt::Expr(Expr {
                    kind: ExprKind::Assign { name, value, .. },
                    ..
                }) => {
                    // `⍺←default` applies only when the call has no left argument.
                    if name == "⍺" && has_alpha {
                        continue;
                    }
                    let v = self.device_eval(value, st)?;
                    if let Some(f) = st.frames.last_mut() {
                        f.arrays.insert(name.clone(), v.clone());
                    }
                    last = Some(v);
                }
                // The first expression that is not an assignment is the result.
                Stmt::Expr(e) => return self.device_eval(e, st),
                Stmt::FnDef { name, func, .. } => {
                    if let Some(f) = st.frames.last_mut() {
                        f.functions.insert(name.clone(), func.clone());
                    }
                }
                Stmt::Func(f) => {
                    return Err(err::domain(
                        "a function on its own has no array value",
                        f.span.clone(),
                    ))
                }
            }
        }
        last.ok_or_else(|| err::value("the function body gives no result", span.clone()))
    }

    /// `f¨` (or `⍺ f¨ ⍵`) with a host-driven `f`: one call per item, each giving a
    /// scalar.
    fn each(
        &mut self,
        f: &Func,
        alpha: Option<Array>,
        omega: Array,
        st: &mut Calls,
        span: &Span,
    ) -> Result<Array, Error> {
        let shape = match &alpha {
            None => omega.shape.clone(),
            Some(a) if a.shape == omega.shape || a.len() == 1 => omega.shape.clone(),
            Some(a) if omega.len() == 1 => a.shape.clone(),
            Some(a) if a.shape.len() != omega.shape.len() => {
                return Err(err::rank("the arguments' ranks differ", span.clone()))
            }
            Some(_) => return Err(err::length("the arguments' shapes differ", span.clone())),
        };
        let n: usize = arrc_ir::array::saturating_count(&shape);
        let item =
            |x: &Array, i: usize| Array::scalar(x.data.get(if x.len() == 1 { 0 } else { i }));
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let a = alpha.as_ref().map(|a| item(a, i));
            out.push(self.call_scalar(f, a, item(&omega, i), st, span)?);
        }
        Ok(scalars_array(shape, out, omega.elem))
    }

    /// [`Self::call`] for an operator's operand on items: its result must be a scalar
    /// (arrc has no nested arrays).
    fn call_scalar(
        &mut self,
        f: &Func,
        alpha: Option<Array>,
        omega: Array,
        st: &mut Calls,
        span: &Span,
    ) -> Result<arrc_ir::Scalar, Error> {
        let r = self.call(f, alpha, omega, st, span)?;
        match (r.rank(), r.as_singleton()) {
            (0, Some(s)) => Ok(s),
            _ => Err(err::unsupported(
                "an operand that returns arrays is not supported here on the GPU path yet",
                span.clone(),
            )),
        }
    }

    /// An operator applied from the host to a function that is not a primitive
    /// ([`hosted_operator`]): folds (along an axis, n-wise) and products, the
    /// function called on items, `f⍤k` on cells and `f⌸` on groups, every call's
    /// statements on the device.
    fn operator(
        &mut self,
        f: &Func,
        alpha: Option<Array>,
        omega: Array,
        st: &mut Calls,
        span: &Span,
    ) -> Result<Array, Error> {
        if let FuncKind::Key(g) = &f.kind {
            let io = self.env.io;
            return arrc_ref::apply_key(alpha, omega, io, span, &mut |k, x| {
                self.call(g, Some(k), x, st, span)
            });
        }
        if let FuncKind::Rank(g, k) = &f.kind {
            let kv = self.device_eval(k, st)?;
            return arrc_ref::apply_rank(&kv, &k.span, alpha, omega, span, &mut |a, x| {
                self.call(g, a, x, st, span)
            });
        }
        let (g, axis) = match &f.kind {
            FuncKind::Axis(g, k) => {
                let k = self.device_eval(k, st)?;
                let rank = omega.rank().max(1) as i64;
                let io = self.env.io;
                match k.as_singleton().and_then(|s| s.as_i64()) {
                    Some(v) if k.rank() <= 1 && v >= io && v - io < rank => {
                        (&**g, Some((v - io) as usize))
                    }
                    _ => {
                        return Err(err::axis(
                            format!("the axis must be an integer from {io} to {}", rank - 1 + io),
                            span.clone(),
                        ))
                    }
                }
            }
            _ => (f, None),
        };
        match (&g.kind, alpha) {
            (FuncKind::Derived { op, operand }, alpha) => {
                let scan = matches!(op, Op1::Scan | Op1::ScanFirst);
                let first = matches!(op, Op1::ReduceFirst | Op1::ScanFirst);
                let last = omega.rank().max(1) - 1;
                let axis = axis.unwrap_or(if first { 0 } else { last });
                match alpha {
                    None => self.fold(operand, omega, scan, axis, st, span),
                    Some(n) if !scan => {
                        let windows = omega.windows(&n, axis, span)?;
                        self.fold(operand, windows, false, axis + 1, st, span)
                    }
                    Some(_) => Err(err::syntax_like(
                        "a scan takes no left argument",
                        span.clone(),
                    )),
                }
            }
            (FuncKind::Outer(h), Some(a)) => {
                // Every item of ⍺ with every item of ⍵.
                let (na, nw) = (a.len(), omega.len());
                let spread = |x: &Array, k: usize, other: usize| {
                    let mut d = Data::with_capacity(x.elem, na * nw);
                    for i in 0..na * nw {
                        d.push(x.data.get(if k == 0 { i / other } else { i % other }));
                    }
                    Array::vector(d)
                };
                let (sa, sw) = (spread(&a, 0, nw.max(1)), spread(&omega, 1, nw.max(1)));
                let r = self.each(h, Some(sa), sw, st, span)?;
                let shape = a.shape.iter().chain(&omega.shape).copied().collect();
                Ok(Array::new(shape, r.data))
            }
            (FuncKind::Inner(fo, go), Some(a)) => self.inner(fo, go, a, omega, st, span),
            _ => Err(err::unsupported(
                "this operator from the host takes other arguments",
                span.clone(),
            )),
        }
    }

    /// `a f.g w` from the host: for each row of `a` and column of `w`, `g` of their
    /// items pairwise, folded by `f` from the right (a length-1 inner axis extends).
    fn inner(
        &mut self,
        f: &Func,
        g: &Func,
        a: Array,
        w: Array,
        st: &mut Calls,
        span: &Span,
    ) -> Result<Array, Error> {
        let ka = a.shape.last().copied().unwrap_or(1);
        let kw = w.shape.first().copied().unwrap_or(1);
        let k = match (ka, kw) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(err::length(
                    format!("inner lengths {ka} and {kw}"),
                    span.clone(),
                ))
            }
        };
        let rows = a.len() / ka.max(1);
        let cols = w.len() / kw.max(1);
        let mut shape: Vec<usize> = a
            .shape
            .iter()
            .take(a.rank().saturating_sub(1))
            .copied()
            .collect();
        shape.extend(w.shape.iter().skip(1));
        if k == 0 && rows * cols > 0 {
            return Err(err::domain(
                "this function has no identity element for an empty reduction",
                span.clone(),
            ));
        }
        let mut out = Vec::with_capacity(rows * cols);
        for i in 0..rows {
            for j in 0..cols {
                let mut acc = None;
                for t in (0..k).rev() {
                    let x = Array::scalar(a.data.get(i * ka + if ka == 1 { 0 } else { t }));
                    let y = Array::scalar(w.data.get(if kw == 1 { 0 } else { t } * cols + j));
                    let z = Array::scalar(self.call_scalar(g, Some(x), y, st, span)?);
                    acc = Some(match acc {
                        None => z,
                        Some(r) => Array::scalar(self.call_scalar(f, Some(z), r, st, span)?),
                    });
                }
                // (k is not 0 here: an empty inner axis with cells failed above.)
                out.extend(acc.and_then(|r| r.as_singleton()));
            }
        }
        Ok(scalars_array(shape, out, a.elem))
    }

    /// `f/[axis] f\[axis]` of a dfn from the host: APL's right fold of each line, the
    /// dfn called on its items (a scan folds every prefix). A dfn reduction of an
    /// empty axis has no identity, unless there is no line.
    fn fold(
        &mut self,
        f: &Func,
        x: Array,
        scan: bool,
        axis: usize,
        st: &mut Calls,
        span: &Span,
    ) -> Result<Array, Error> {
        if x.rank() == 0 {
            return Ok(x);
        }
        let (outer, n, inner) = x.around(axis);
        let mut shape = x.shape.clone();
        if !scan {
            shape.remove(axis);
        }
        if !scan && n == 0 && outer * inner > 0 {
            return Err(err::domain(
                "this function has no identity element for an empty reduction",
                span.clone(),
            ));
        }
        let mut out = vec![];
        let item =
            |o: usize, k: usize, i: usize| Array::scalar(x.data.get((o * n + k) * inner + i));
        for o in 0..outer {
            let mut lines = vec![];
            for i in 0..inner {
                let ends: Vec<usize> = if scan { (0..n).collect() } else { vec![n - 1] };
                let mut line = vec![];
                for end in ends {
                    let mut acc = x.data.get((o * n + end) * inner + i);
                    for k in (0..end).rev() {
                        let w = Array::scalar(acc);
                        acc = self.call_scalar(f, Some(item(o, k, i)), w, st, span)?;
                    }
                    line.push(acc);
                }
                lines.push(line);
            }
            // Back in ravel order: the axis (a scan keeps it) before the inner ones.
            for k in 0..if scan { n } else { 1 } {
                for line in &lines {
                    out.push(line[k]);
                }
            }
        }
        Ok(scalars_array(shape, out, x.elem))
    }

    /// The function a name or `∇` stands for in the current call.
    fn resolve(&self, f: &Func, st: &Calls) -> Option<Func> {
        match &f.kind {
            FuncKind::SelfRef => st.frames.last().and_then(|fr| fr.this.clone()),
            FuncKind::Name(n) => st
                .chain()
                .into_iter()
                .find_map(|k| st.frames[k].functions.get(n))
                .or_else(|| self.env.functions.get(n))
                .cloned(),
            _ => Some(f.clone()),
        }
    }

    /// Whether applying `f` needs the host: `∇`, or a dfn (or `f¨` of one) whose
    /// body has a guard or `∇` or calls such a function.
    fn needs_host(&self, f: &Func, st: &Calls) -> bool {
        let mut seen = HashSet::new();
        if st.host_operators && hosted_operator(f) {
            return true;
        }
        match &f.kind {
            FuncKind::Derived {
                op: Op1::Each,
                operand,
            } => self.host_func(operand, st, &mut seen),
            _ => self.host_func(f, st, &mut seen),
        }
    }

    /// The text of the functions in `e` (from `src`) that the device path applies
    /// from the host, one device call per call: dfns with guards or `∇`, and
    /// operators whose operand no kernel holds (`{⍵[⍋⍵]}⍤1`, `{+/⍺,⍵}/`), for
    /// `--emit plan` to name where no single plan exists.
    pub fn host_driven_parts(&self, e: &Expr, src: &str) -> Vec<String> {
        let st = Calls::default();
        let mut seen = HashSet::new();
        let mut out = vec![];
        e.any_func(&mut |f| {
            if hosted_operator(f) || self.host_func(f, &st, &mut seen) {
                if let Some(t) = src.get(f.span.clone()) {
                    out.push(t.to_string());
                }
            }
            false
        });
        out
    }

    /// Whether evaluating `e` calls a function that the host drives (guards, `∇`).
    pub(crate) fn has_host_calls(&self, e: &Expr) -> bool {
        let st = Calls::default();
        let mut seen = HashSet::new();
        e.any_func(&mut |f| self.host_func(f, &st, &mut seen))
    }

    /// Whether `f` or a function inside it needs the host.
    fn host_func(&self, f: &Func, st: &Calls, seen: &mut HashSet<String>) -> bool {
        f.any_func(&mut |g| match &g.kind {
            FuncKind::SelfRef => true,
            // `f⍣g`: the host decides when to stop.
            FuncKind::Power(_, until) => matches!(**until, arrc_syntax::Tine::Func(_)),
            _ if st.host_operators && hosted_operator(g) => true,
            FuncKind::Dfn(body) => body.stmts.iter().any(|s| matches!(s, Stmt::Guard { .. })),
            FuncKind::Name(n) => {
                seen.insert(n.clone())
                    && self
                        .resolve(g, st)
                        .is_some_and(|h| self.host_func(&h, st, seen))
            }
            _ => false,
        })
    }
}

/// Whether `f` is an operator the host can apply item by item to a function that
/// is not a primitive (a dfn, by value or by name): `g¨ g/ g⌿ g\ g⍀` (with an axis
/// or n-wise too), `∘.g`, `g.h`.
fn hosted_operator(f: &Func) -> bool {
    let not_prim = |g: &Func| !matches!(g.kind, FuncKind::Prim(_));
    match &f.kind {
        FuncKind::Derived { op, operand } => {
            matches!(
                op,
                Op1::Each | Op1::Reduce | Op1::ReduceFirst | Op1::Scan | Op1::ScanFirst
            ) && not_prim(operand)
        }
        FuncKind::Axis(g, _) => {
            matches!(&g.kind, FuncKind::Derived { op, .. } if *op != Op1::Each)
                && hosted_operator(g)
        }
        FuncKind::Outer(g) => not_prim(g),
        FuncKind::Inner(a, b) => not_prim(a) || not_prim(b),
        // `f⍤k` the device cannot map over cells, `f⌸` it cannot fold into groups:
        // one call per cell or group.
        FuncKind::Rank(..) | FuncKind::Key(_) => true,
        _ => false,
    }
}

/// An array of `shape` from scalars, in the type that holds them all (`empty`'s
/// when there are none).
fn scalars_array(
    shape: Vec<usize>,
    items: Vec<arrc_ir::Scalar>,
    empty: arrc_ir::ElemType,
) -> Array {
    let elem = items
        .iter()
        .map(|s| s.elem_type())
        .reduce(|a, b| a.join(b))
        .unwrap_or(empty);
    let mut d = Data::with_capacity(elem, items.len());
    for s in items {
        d.push(s.cast(elem));
    }
    Array::new(shape, d)
}

/// A literal or a name: nothing to compute first.
fn settled(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Number(_) | ExprKind::Zilde | ExprKind::Str(_) | ExprKind::Name(_) => true,
        ExprKind::Strand(items) => items.iter().all(settled),
        _ => false,
    }
}

/// The primitive `f` is, seen through an axis (`⌽[1]`).
fn prim_of(f: &Func) -> Option<Prim> {
    match &f.kind {
        FuncKind::Prim(p) => Some(*p),
        FuncKind::Axis(g, _) => prim_of(g),
        _ => None,
    }
}

/// Whether `f` is a reduction (`f/`, `f⌿`, `f/[k]`), n-wise when given a left argument.
fn nwise(f: &Func) -> bool {
    match &f.kind {
        FuncKind::Derived {
            op: Op1::Reduce | Op1::ReduceFirst,
            ..
        } => true,
        FuncKind::Axis(g, _) => nwise(g),
        _ => false,
    }
}

/// Binds `a` to a fresh name in `temps` and returns that name as an expression.
fn temp(a: Array, st: &mut Calls, temps: &mut HashMap<String, Array>, span: Span) -> Expr {
    let name = format!("⍙{}", st.temps);
    st.temps += 1;
    temps.insert(name.clone(), a);
    Expr::new(ExprKind::Name(name), span)
}
