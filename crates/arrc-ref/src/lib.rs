//! The CPU reference evaluator: a direct interpreter of the AST with exact APL
//! semantics (Dyalog, ⎕IO=1 unless set). It is the oracle of every GPU test and the
//! fallback when no Vulkan device exists.
//!
//! Invariants:
//! - Type rules come from `arrc_ir::scalar`, the same rules the GPU path lowers with, so
//!   both backends give the same element type for the same expression.
//! - Sums and products of floats accumulate in f64 and round once, so the oracle is at
//!   least as accurate as any device order of summation.
//! - Evaluation never panics; every failure is an [`Error`] with a span.

mod assign;
mod chars;
mod files;
mod folds;
mod nested;
mod numeric;
mod operators;
mod prims;
mod random;
mod sets;

pub use files::csv_number;
pub use folds::set_left_float_folds;
pub use operators::{apply_key, apply_rank};
pub use prims::{last_refused_size, set_limits, MAX_CALLS, MAX_ELEMENTS};

use arrc_ir::error::{err, Error, Result};
use arrc_ir::lower::scalar_error;
use arrc_ir::scalar::{BinOp, UnOp};
use arrc_ir::{Array, Data, ElemType, Scalar};
use arrc_syntax::{Expr, ExprKind, Func, FuncKind, Op1, Prim, Program, Span, Stmt, Tine};
use prims::from_scalars;
use std::collections::HashMap;

/// How deeply dfns may call each other.
const MAX_DEPTH: usize = 10_000;

/// Names defined in a session: arrays and functions, and the index origin.
#[derive(Clone, Debug)]
pub struct Env {
    pub arrays: HashMap<String, Array>,
    pub functions: HashMap<String, Func>,
    /// ⎕IO: 1 (default) or 0.
    pub io: i64,
    /// The float type: f32 (default, `⎕FR←32`) or f64 (`⎕FR←645`).
    pub float: ElemType,
    /// The random generator of `?`: ⎕RL's seed and the draws made since.
    pub rng: arrc_ir::random::Rng,
    /// ⎕PP: significant digits of displayed floats.
    pub pp: usize,
    /// ⎕PW: the characters of a displayed line before it folds.
    pub pw: usize,
    /// ⎕CT: the comparison tolerance of f64 comparisons, floors and ceilings.
    pub ct: f64,
    /// What `⎕←x` showed, in order, each as the session displays it (for the
    /// caller to print).
    pub output: Vec<String>,
    /// Nested arrays are shown in frames (`]box on`).
    pub boxing: bool,
    /// What `⍞←x` showed since the last full line (no newline yet): the next `⎕←`
    /// output ends it, and `⍞` input takes it as its prompt and the start of its
    /// result.
    pub pending: String,
    /// Where `⍞` and `⎕` input come from; `None`: nowhere (input is NOT YET
    /// SUPPORTED there).
    pub input: Option<Input>,
    /// The workspace names (arrays and functions) assigned since the caller last
    /// emptied it: also those no text shows, such as `⍎'x←5'`'s (a session drops its
    /// device copies of them).
    pub assigned: std::collections::HashSet<String>,
}

/// A source of `⍞` and `⎕` input: called with the output lines not yet shown (to show
/// first) and the prompt (to show without a newline), it gives the line typed, or
/// `None` at the end of the input.
#[derive(Clone)]
pub struct Input(pub std::sync::Arc<std::sync::Mutex<InputFn>>);

/// The function behind an [`Input`].
pub type InputFn = dyn FnMut(&[String], &str) -> Option<String> + Send;

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Input")
    }
}

impl Env {
    /// `⎕←` output: a line of its own (after any `⍞` output, which it ends).
    fn show_lines(&mut self, shown: String) {
        if !self.pending.is_empty() {
            let p = std::mem::take(&mut self.pending);
            self.output.push(p);
        }
        self.output.push(shown);
    }

    /// What was shown and not yet taken: `⎕←` lines, then unfinished `⍞` output as a
    /// line of its own.
    pub fn take_output(&mut self) -> Vec<String> {
        let mut out = std::mem::take(&mut self.output);
        if !self.pending.is_empty() {
            out.push(std::mem::take(&mut self.pending));
        }
        out
    }

    /// A line of input after showing what is pending and `prompt`; `None` at the
    /// end of the input, an error where the session has no input.
    fn read_line(&mut self, prompt: &str, span: &Span) -> Result<Option<String>> {
        let Some(Input(f)) = self.input.clone() else {
            return Err(err::unsupported(
                "input (⍞, ⎕) needs an input source here (Session::set_input)",
                span.clone(),
            ));
        };
        let lines = std::mem::take(&mut self.output);
        let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
        Ok(f(&lines, prompt))
    }
}

impl Env {
    /// The system variables alone (no names, no output): what a dfn puts back.
    fn system_vars(&self) -> Env {
        Env {
            io: self.io,
            float: self.float,
            rng: self.rng,
            pp: self.pp,
            pw: self.pw,
            ct: self.ct,
            boxing: self.boxing,
            ..Env::default()
        }
    }

    /// Puts back system variable `name` from `from`.
    fn restore(&mut self, name: &str, from: &Env) {
        match name {
            "⎕IO" => self.io = from.io,
            "⎕FR" => self.float = from.float,
            "⎕RL" => self.rng = from.rng,
            "⎕PP" => self.pp = from.pp,
            "⎕PW" => self.pw = from.pw,
            "⎕CT" => {
                self.ct = from.ct;
                arrc_ir::scalar::set_comparison_tolerance(from.ct);
            }
            _ => {}
        }
    }
}

impl Default for Env {
    fn default() -> Self {
        Env {
            arrays: HashMap::new(),
            functions: HashMap::new(),
            io: 1,
            float: ElemType::F32,
            rng: arrc_ir::random::Rng::default(),
            pp: arrc_ir::display::PRINT_PRECISION,
            pw: arrc_ir::display::PRINT_WIDTH,
            ct: arrc_ir::scalar::COMPARISON_TOLERANCE,
            output: Vec::new(),
            boxing: false,
            pending: String::new(),
            input: None,
            assigned: Default::default(),
        }
    }
}

struct Frame {
    arrays: HashMap<String, Array>,
    functions: HashMap<String, Func>,
    dfn: Option<Func>,
    /// In an operator's body: the derived function (the operator with its operands),
    /// which `∇` calls.
    derived: Option<Func>,
    /// The frame of the dfn whose text encloses this one's (its names are visible
    /// here); `None`: only the workspace's.
    parent: Option<usize>,
    /// System variables this dfn assigned, with their values when it was called:
    /// put back when it returns (Dyalog localises them in dfns).
    system: Vec<(String, Env)>,
}

struct Interp<'e> {
    env: &'e mut Env,
    frames: Vec<Frame>,
    /// dfn calls so far in this evaluation.
    calls: u64,
}

/// Runs a program; top-level assignments and definitions update `env`. Returns the
/// value of the last statement, or `None` when it only defines a function.
pub fn eval_program(prog: &Program, env: &mut Env) -> Result<Option<Array>> {
    prims::clear_refused();
    arrc_ir::scalar::set_comparison_tolerance(env.ct);
    let mut it = Interp {
        env,
        frames: vec![],
        calls: 0,
    };
    let mut last = None;
    for s in &prog.stmts {
        match s {
            Stmt::Expr(e) => last = Some(it.expr(e)?),
            Stmt::FnDef { name, func, .. } => {
                it.env.functions.insert(name.clone(), func.clone());
                it.env.arrays.remove(name);
                it.env.assigned.insert(name.clone());
                last = None;
            }
            Stmt::Func(f) => {
                // `∇` alone is no function here; any other is shown by the caller.
                it.resolve(f)?;
                last = None
            }
            Stmt::Guard { cond, .. } => {
                return Err(err::domain("a guard outside a dfn", cond.span.clone()))
            }
        }
    }
    Ok(last)
}

/// `⊂[axes]x` for `x`'s last `inner` axes: its cells of rank `inner` as the items of
/// an array of the other axes (an empty one made of a cell of `x`'s fill).
pub fn enclose_trailing(x: &Array, inner: usize) -> Result<Array> {
    let axes = (x.rank().saturating_sub(inner)..x.rank())
        .map(|a| a as i32)
        .collect();
    nested::enclose_axes(&Array::vector(Data::I32(axes)), x, 0, &(0..0), &(0..0))
}

/// Parses and evaluates `src` in a fresh environment.
pub fn eval_str(src: &str) -> Result<Option<Array>> {
    let prog = arrc_syntax::parse_str(src).map_err(Error::from)?;
    eval_program(&prog, &mut Env::default())
}

enum Flow {
    Value(Array),
    Return(Array),
}

/// A scalar's boolean value, for guards.
/// The end of the input where `⍞` or `⎕` waited for a line (Dyalog's INPUT
/// INTERRUPT).
fn input_interrupt(span: &Span) -> Error {
    Error::new(
        arrc_ir::error::ErrorClass::Interrupt,
        "INPUT INTERRUPT: the input ended while ⍞ or ⎕ waited for a line",
        span.clone(),
    )
}

fn truth(a: &Array, span: &Span) -> Result<bool> {
    match a.as_singleton().and_then(|s| s.as_i64()) {
        Some(1) => Ok(true),
        Some(0) => Ok(false),
        _ => Err(err::domain(
            "a guard's condition must be a single 0 or 1",
            span.clone(),
        )),
    }
}

impl Interp<'_> {
    fn io(&self) -> i64 {
        self.env.io
    }

    /// The running frame, then the frames whose dfns enclose its text.
    fn scope_chain(&self) -> impl Iterator<Item = &Frame> {
        let mut next = self.frames.len().checked_sub(1);
        std::iter::from_fn(move || {
            let f = &self.frames[next?];
            next = f.parent;
            Some(f)
        })
    }

    fn lookup_array(&self, name: &str) -> Option<&Array> {
        // ⍺ and ⍵ belong to the running dfn alone.
        if name == "⍺" || name == "⍵" {
            return match self.frames.last() {
                Some(f) => f.arrays.get(name),
                None => self.env.arrays.get(name),
            };
        }
        for f in self.scope_chain() {
            if let Some(a) = f.arrays.get(name) {
                return Some(a);
            }
        }
        self.env.arrays.get(name)
    }

    fn lookup_fn(&self, name: &str) -> Option<Func> {
        for f in self.scope_chain() {
            if let Some(g) = f.functions.get(name) {
                return Some(g.clone());
            }
        }
        self.env.functions.get(name).cloned()
    }

    fn assign(&mut self, name: &str, v: Array, span: &Span) -> Result<()> {
        if name.starts_with('⎕') && name != "⎕" {
            let before = self.env.system_vars();
            if let Some(fr) = self.frames.last_mut() {
                if !fr.system.iter().any(|(n, _)| n == name) {
                    fr.system.push((name.to_string(), before));
                }
            }
        }
        if name == "⍞" {
            // Shown without ending the line (⎕PW aside); each row of a higher-rank
            // array ends one.
            let shown = arrc_ir::display::display_as(&v, self.env.pp, usize::MAX, self.env.boxing);
            if v.rank() <= 1 {
                self.env.pending.push_str(&shown);
            } else {
                let mut lines = shown.lines();
                let first = lines.next().unwrap_or_default();
                self.env.pending.push_str(first);
                let p = std::mem::take(&mut self.env.pending);
                self.env.output.push(p);
                self.env.output.extend(lines.map(str::to_string));
            }
            return Ok(());
        }
        if name.starts_with('⎕') {
            return match name {
                "⎕" => {
                    let shown =
                        arrc_ir::display::display_as(&v, self.env.pp, self.env.pw, self.env.boxing);
                    self.env.show_lines(shown);
                    Ok(())
                }
                "⎕IO" => match v.as_singleton().and_then(|s| s.as_i64()) {
                    Some(io @ (0 | 1)) => {
                        self.env.io = io;
                        Ok(())
                    }
                    _ => Err(err::domain("⎕IO must be 0 or 1", span.clone())),
                },
                "⎕FR" => match v.as_singleton().and_then(|s| s.as_i64()) {
                    Some(fr) => {
                        self.env.float = ElemType::from_fr(fr).ok_or_else(|| {
                            err::domain(
                                "⎕FR must be 645 (f64) or 32 (f32); decimal floats (1287) are not supported",
                                span.clone(),
                            )
                        })?;
                        Ok(())
                    }
                    None => Err(err::domain(
                        "⎕FR must be 645 (f64) or 32 (f32)",
                        span.clone(),
                    )),
                },
                "⎕CT" => match v.as_singleton().map(|s| s.as_f64()) {
                    Some(ct)
                        if v.rank() <= 1
                            && (0.0..=arrc_ir::scalar::MAX_COMPARISON_TOLERANCE * (1.0 + 1e-6))
                                .contains(&ct) =>
                    {
                        // An f32 session's literal 1E¯14 is 1E¯14 within f32 rounding.
                        let ct = if (ct / arrc_ir::scalar::COMPARISON_TOLERANCE - 1.0).abs() < 1e-6
                        {
                            arrc_ir::scalar::COMPARISON_TOLERANCE
                        } else {
                            ct.min(arrc_ir::scalar::MAX_COMPARISON_TOLERANCE)
                        };
                        self.env.ct = ct;
                        arrc_ir::scalar::set_comparison_tolerance(ct);
                        Ok(())
                    }
                    _ => Err(err::domain(
                        "⎕CT must be a number from 0 to 2*¯32",
                        span.clone(),
                    )),
                },
                "⎕PP" => match v.as_singleton().and_then(|s| s.as_i64()) {
                    Some(pp) if pp >= 1 && v.rank() <= 1 => {
                        self.env.pp = pp.min(34) as usize;
                        Ok(())
                    }
                    _ => Err(err::domain("⎕PP must be a positive integer", span.clone())),
                },
                "⎕PW" => match v.as_singleton().and_then(|s| s.as_i64()) {
                    Some(pw) if (42..=32767).contains(&pw) && v.rank() <= 1 => {
                        self.env.pw = pw as usize;
                        Ok(())
                    }
                    _ => Err(err::domain(
                        "⎕PW must be an integer from 42 to 32767",
                        span.clone(),
                    )),
                },
                "⎕RL" => match v.as_singleton().and_then(|s| s.as_i64()) {
                    Some(seed) if seed >= 0 && v.rank() <= 1 => {
                        self.env.rng = arrc_ir::random::Rng {
                            seed: seed as u64,
                            next: 0,
                        };
                        Ok(())
                    }
                    _ => Err(err::domain(
                        "⎕RL must be a non-negative integer seed",
                        span.clone(),
                    )),
                },
                _ => Err(err::unsupported(
                    format!("assigning {name} is not supported"),
                    span.clone(),
                )),
            };
        }
        match self.frames.last_mut() {
            Some(f) => {
                f.arrays.insert(name.to_string(), v);
            }
            None => {
                self.env.functions.remove(name);
                self.env.arrays.insert(name.to_string(), v);
                self.env.assigned.insert(name.to_string());
            }
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr) -> Result<Array> {
        // Deeply nested expressions and recursive dfns grow the stack on the heap
        // instead of overflowing it.
        stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || self.expr_inner(e))
    }

    fn expr_inner(&mut self, e: &Expr) -> Result<Array> {
        let span = e.span.clone();
        match &e.kind {
            ExprKind::Number(n) => Ok(Array::scalar(Scalar::from_literal(*n, self.env.float))),
            ExprKind::Zilde => Ok(Array::vector(Data::I32(vec![]))),
            ExprKind::Str(t) => Ok(chars::literal(t)),
            ExprKind::Strand(items) => {
                // APL evaluates right to left.
                // Every item first (`x 1 2` with `x` undefined is a VALUE ERROR),
                // then whether they are scalars.
                let mut arrays = Vec::with_capacity(items.len());
                for it in items.iter().rev() {
                    arrays.push(self.expr(it)?);
                }
                arrays.reverse();
                if arrays.iter().any(|a| a.rank() != 0 || !a.is_simple()) {
                    return Ok(nested::strand(arrays));
                }
                let vals: Vec<Scalar> = arrays.iter().map(|a| a.data.get(0)).collect();
                if vals
                    .windows(2)
                    .any(|w| w[0].elem_type().mixes(w[1].elem_type()))
                {
                    return Ok(nested::strand(arrays));
                }
                let n = vals.len();
                Ok(from_scalars(vec![n], vals, ElemType::I32))
            }
            ExprKind::Name(n) => self
                .lookup_array(n)
                .cloned()
                .ok_or_else(|| err::value(format!("undefined name: {n}"), span)),
            ExprKind::SysName(n) => match n.as_str() {
                "⎕IO" => Ok(Array::scalar(Scalar::I32(self.io() as i32))),
                "⎕FR" => Ok(Array::scalar(Scalar::I32(self.env.float.fr()))),
                "⎕CT" => Ok(Array::scalar(Scalar::F64(self.env.ct))),
                "⎕PP" => Ok(Array::scalar(Scalar::I32(self.env.pp as i32))),
                "⎕PW" => Ok(Array::scalar(Scalar::I32(self.env.pw as i32))),
                "⎕RL" => Ok(Array::scalar(Scalar::I64(self.env.rng.seed as i64))),
                "⎕" => {
                    // Evaluated input: the line typed after a `⎕:` prompt, executed. As
                    // Dyalog, an empty line or one whose evaluation fails (the error is
                    // shown) prompts again; the end of the input is INPUT INTERRUPT.
                    loop {
                        let line = self.env.read_line("⎕:\n      ", &span)?;
                        let line = line.ok_or_else(|| input_interrupt(&span))?;
                        if line.trim().is_empty() {
                            continue;
                        }
                        let text = Array::vector(Data::Char(line.chars().collect()));
                        match self.execute(&text, &span) {
                            Ok(v) => return Ok(v),
                            Err(e) if e.class == arrc_ir::error::ErrorClass::Interrupt => {
                                return Err(e)
                            }
                            Err(e) => {
                                self.env
                                    .output
                                    .push(format!("{}: {}", e.class.name(), e.message))
                            }
                        }
                    }
                }
                "⍞" => {
                    // Character input: the line typed, after (and with) the `⍞` output
                    // that prompted it.
                    let prompt = std::mem::take(&mut self.env.pending);
                    let line = self.env.read_line(&prompt, &span)?;
                    let line = line.ok_or_else(|| input_interrupt(&span))?;
                    Ok(Array::vector(Data::Char(
                        prompt.chars().chain(line.chars()).collect(),
                    )))
                }
                _ => Err(err::value(format!("unknown system name {n}"), span)),
            },
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
            ExprKind::Assign {
                name,
                name_span,
                value,
            } => {
                if name == "⍺" {
                    if let Some(a) = self.lookup_array("⍺") {
                        return Ok(a.clone());
                    }
                }
                let v = self.expr(value)?;
                self.assign(name, v.clone(), name_span)?;
                Ok(v)
            }
            ExprKind::AssignTo {
                target,
                func,
                value,
            } => self.assign_to(target, func.as_ref(), value),
            ExprKind::Index { array, axes } => {
                let ix = self.index_values(axes)?;
                let x = self.expr(array)?;
                if x.rank() == 0 {
                    return Err(err::rank("a scalar cannot be indexed", span));
                }
                if let [Some(y)] = ix.as_slice() {
                    if y.elem.is_mixed() {
                        return nested::choose(&x, y, self.io(), &span);
                    }
                }
                let r = prims::select(&x, &ix, self.io(), &span)?;
                Ok(nested::keep_prototype(r, nested::fill_source(&x)))
            }
        }
    }

    /// The indices of `x[i;j]`, evaluated right to left (`None` for an elided axis).
    fn index_values(&mut self, axes: &[Option<Expr>]) -> Result<Vec<Option<Array>>> {
        let mut ix = Vec::with_capacity(axes.len());
        for a in axes.iter().rev() {
            ix.push(match a {
                Some(e) => Some(self.expr(e)?),
                None => None,
            });
        }
        ix.reverse();
        Ok(ix)
    }

    /// `⍎⍵`: the statements of the character vector ⍵ run here (in the scope of the
    /// dfn running, if any); the value of the last. Errors point at the `⍎`.
    fn execute(&mut self, x: &Array, span: &Span) -> Result<Array> {
        if !x.elem.is_char() && !x.is_empty() {
            return Err(err::domain("⍎ needs characters", span.clone()));
        }
        if x.rank() > 1 {
            return Err(err::rank("⍎ needs a character vector", span.clone()));
        }
        let text: String = (0..x.len())
            .filter_map(|i| match x.data.get(i) {
                Scalar::Char(c) => Some(c),
                _ => None,
            })
            .collect();
        let at = |mut e: Error| {
            e.span = span.clone();
            e
        };
        let prog = arrc_syntax::parse(&text, &|n| self.lookup_fn(n).is_some())
            .map_err(|e| err::syntax_like(format!("in ⍎: {}", e.message), span.clone()))?;
        let mut last = None;
        for st in &prog.stmts {
            last = match st {
                Stmt::Expr(e) => Some(self.expr(e).map_err(at)?),
                _ => {
                    return Err(err::unsupported(
                        "⍎ of a function definition is not supported yet",
                        span.clone(),
                    ))
                }
            };
        }
        last.ok_or_else(|| err::value("⍎ of no statement has no value", span.clone()))
    }

    fn resolve(&self, func: &Func) -> Result<Func> {
        let mut f = self.resolve_once(func)?;
        // Through `g←f` aliases, to a system function at most.
        for _ in 0..64 {
            if !matches!(&f.kind, FuncKind::Name(n) if !n.starts_with('⎕')) {
                break;
            }
            f = self.resolve_once(&f)?;
        }
        Ok(f)
    }

    fn resolve_once(&self, func: &Func) -> Result<Func> {
        match &func.kind {
            FuncKind::Name(n) if arrc_syntax::SYSTEM_FUNCTIONS.contains(&n.as_str()) => {
                Ok(func.clone())
            }
            FuncKind::Name(n) => self.lookup_fn(n).ok_or_else(|| {
                if matches!(n.as_str(), "⍺⍺" | "⍵⍵") && self.lookup_array(n).is_some() {
                    err::unsupported(arrc_ir::error::ARRAY_OPERAND, func.span.clone())
                } else {
                    err::value(format!("undefined function: {n}"), func.span.clone())
                }
            }),
            FuncKind::SelfRef => self
                .frames
                .iter()
                .rev()
                .find_map(|f| f.derived.clone().or_else(|| f.dfn.clone()))
                .ok_or_else(|| err::syntax_like("∇ outside a dfn", func.span.clone())),
            _ => Ok(func.clone()),
        }
    }

    fn monadic(&mut self, func: &Func, x: Array, span: &Span) -> Result<Array> {
        match &func.kind {
            // An error in a named function is said to be there (`f[2]`).
            FuncKind::Name(n) if !arrc_syntax::is_system_name(n) => {
                let n = n.clone();
                self.monadic_of(func, x, span).map_err(|e| e.within(&n))
            }
            _ => self.monadic_of(func, x, span),
        }
    }

    fn monadic_of(&mut self, func: &Func, x: Array, span: &Span) -> Result<Array> {
        let f = self.resolve(func)?;
        let s = f.span.clone();
        let io = self.io();
        // Reductions of text or nested arrays that apply no function (`+/''`).
        if !x.elem.is_number() {
            if let Some(r) = self.reduce_unapplied(&f, &x, &s)? {
                return Ok(r);
            }
        }
        if x.elem.is_mixed() {
            nested::allowed(&f, false, &s)?;
        } else if x.elem.is_char() {
            chars::monadic_allowed(&f, &s)?;
        }
        // What an empty nested result that selects from ⍵ is made of.
        let fill = x.elem.is_mixed().then(|| nested::fill_source(&x)).flatten();
        match &f.kind {
            FuncKind::Prim(p) => match p {
                Prim::Iota if x.rank() == 1 => nested::iota_vector(&x, io, &s),
                Prim::Iota => prims::iota(&x, io, &s),
                Prim::Rho => Ok(prims::shape_of(&x)),
                Prim::Comma => Ok(prims::ravel(&x)),
                Prim::Epsilon => Ok(nested::enlist(&x)),
                Prim::CommaBar => Ok(prims::table(&x)),
                Prim::Reverse => prims::rotate(None, &x, false, &s),
                Prim::ReverseFirst => prims::rotate(None, &x, true, &s),
                Prim::Transpose => prims::transpose(None, &x, io, &s),
                Prim::Tally => Ok(prims::tally(&x)),
                Prim::Where => prims::where_(&x, io, &s),
                Prim::GradeUp => prims::grade(&x, false, io, &s),
                Prim::GradeDown => prims::grade(&x, true, io, &s),
                Prim::Match => nested::depth(&x, &s),
                Prim::Take => nested::mix(&x, &s),
                Prim::Drop => Ok(nested::split(&x)),
                Prim::Enclose => Ok(Array::enclose(x)),
                Prim::Disclose => nested::first(&x, &s),
                Prim::Nest => Ok(nested::nest(x)),
                // ⌷ leaves an array as it is.
                Prim::Squad | Prim::Right | Prim::Left => Ok(x),
                Prim::Union => sets::unique(&x, &s),
                Prim::NotEqual => sets::unique_mask(&x, &s),
                Prim::Roll => random::roll(&x, &mut self.env.rng, io, self.env.float, &s),
                Prim::Domino => numeric::domino(None, &x, self.env.float, &s),
                Prim::Format => Ok(arrc_ir::display::format_array(&x, self.env.pp)),
                Prim::Execute => self.execute(&x, &s),
                p => match UnOp::from_prim(*p) {
                    Some(op) => unary(op, &x, self.env.float, s),
                    None => Err(err::syntax_like(
                        format!("{} needs a left argument", p.glyph()),
                        s,
                    )),
                },
            }
            .map(|r| nested::keep_prototype(r, fill)),
            FuncKind::Dfn(body) => self.call_dfn(&f, body, None, x, span),
            FuncKind::Name(n) if n == "⎕UCS" => chars::ucs(&x, &s),
            FuncKind::Name(n) if n == "⎕NGET" => files::nget(&x, &s),
            FuncKind::Name(n) if n == "⎕CSV" => files::csv_read(&x, self.env.float, &s),
            FuncKind::Name(n) if n == "⎕NPUT" => Err(err::syntax_like(
                "⎕NPUT needs a left argument (the text)",
                s,
            )),
            FuncKind::Derived { op, operand } => match op {
                Op1::Reduce => self.fold(operand, &x, s, false, false),
                Op1::ReduceFirst => self.fold(operand, &x, s, false, true),
                Op1::Scan => self.fold(operand, &x, s, true, false),
                Op1::ScanFirst => self.fold(operand, &x, s, true, true),
                Op1::Each => self.each(operand, None, &x, &s),
                Op1::Commute => self.dyadic(operand, x.clone(), x, span),
            },
            FuncKind::Outer(_) | FuncKind::Inner(..) => {
                Err(err::syntax_like("a product needs a left argument", s))
            }
            FuncKind::Axis(g, k) => self.with_axis(g, k, None, x, &s),
            FuncKind::Name(_) | FuncKind::SelfRef => Err(err::value("unresolved function", s)),
            _ => self.tacit(&f, None, x, span),
        }
    }

    /// `f⍣n ⍵` (f applied n times; with `⍺`, `⍺∘f`) or `f⍣g ⍵` (f applied until
    /// `(f y) g y` is 1).
    fn power(
        &mut self,
        f: &Func,
        until: &Tine,
        a: Option<Array>,
        mut x: Array,
        span: &Span,
    ) -> Result<Array> {
        let step = |me: &mut Self, x: Array| me.apply(f, a.clone(), x, span);
        let array_operand = self.array_operand(until);
        let until = array_operand.as_ref().unwrap_or(until);
        match until {
            Tine::Array(e) => {
                let n = self.expr(e)?;
                let count = match n.as_singleton() {
                    Some(s) if n.rank() <= 1 => s.as_i64(),
                    _ => None,
                };
                let Some(count) = count else {
                    return Err(err::domain("⍣ needs an integer count", e.span.clone()));
                };
                if count < 0 {
                    if let Some(a) = a {
                        // `a f⍣¯n ⍵`: the inverse of `a∘f`, n times.
                        let f = self.resolve(f)?;
                        let Some((g, a_left)) = arrc_syntax::dyadic_inverse(&f) else {
                            return Err(err::unsupported(
                                "⍣ with a negative count and a left argument is supported for + × - ÷ * ⍟ only",
                                e.span.clone(),
                            ));
                        };
                        let g = Func::new(FuncKind::Prim(g), f.span.clone());
                        for _ in 0..count.unsigned_abs() {
                            arrc_ir::interrupt::check(span)?;
                            x = if a_left {
                                self.dyadic(&g, a.clone(), x, span)?
                            } else {
                                self.dyadic(&g, x, a.clone(), span)?
                            };
                        }
                        return Ok(x);
                    }
                    let inv = arrc_syntax::inverse(f, &|n| self.lookup_fn(n))
                        .map_err(|m| err::domain(m, f.span.clone()))?;
                    for _ in 0..count.unsigned_abs() {
                        arrc_ir::interrupt::check(span)?;
                        x = self.apply(&inv, None, x, span)?;
                    }
                    return Ok(x);
                }
                for _ in 0..count {
                    arrc_ir::interrupt::check(span)?;
                    x = step(self, x)?;
                }
                Ok(x)
            }
            Tine::Func(g) => loop {
                arrc_ir::interrupt::check(span)?;
                let y = step(self, x.clone())?;
                let stop = self.dyadic(g, y.clone(), x, span)?;
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
            },
        }
    }

    /// `f` applied to `x`, with `a` as its left argument when there is one.
    fn apply(&mut self, f: &Func, a: Option<Array>, x: Array, span: &Span) -> Result<Array> {
        match a {
            None => self.monadic(f, x, span),
            Some(a) => self.dyadic(f, a, x, span),
        }
    }

    /// An operand written as a function that is an operator's array operand
    /// (`⍵⍵` in `{⍺⍺⍣⍵⍵⊢⍵}` called with a number), as the array it is.
    fn array_operand(&self, t: &Tine) -> Option<Tine> {
        t.as_array_operand(|n| self.lookup_array(n).is_some())
    }

    /// A fork's left tine applied, or its array.
    fn tine(&mut self, t: &Tine, a: Option<Array>, x: Array, span: &Span) -> Result<Array> {
        match t {
            Tine::Array(e) => self.expr(e),
            Tine::Func(f) => self.apply(f, a, x, span),
        }
    }

    /// Trains, `∘` and `⍣` (monadic when `a` is `None`).
    fn tacit(&mut self, f: &Func, a: Option<Array>, x: Array, span: &Span) -> Result<Array> {
        match (&f.kind, a) {
            (FuncKind::Atop(g, h), a) => {
                let y = self.apply(h, a, x, span)?;
                self.monadic(g, y, span)
            }
            (FuncKind::Fork(t, g, h), a) => {
                let r = self.apply(h, a.clone(), x.clone(), span)?;
                let l = self.tine(t, a, x, span)?;
                self.dyadic(g, l, r, span)
            }
            (FuncKind::Jot(l, r), a) => match (&**l, &**r, a) {
                (Tine::Func(g), Tine::Func(h), a) => {
                    let y = self.monadic(h, x, span)?;
                    self.apply(g, a, y, span)
                }
                (Tine::Array(b), Tine::Func(g), None) => {
                    let b = self.expr(b)?;
                    self.dyadic(g, b, x, span)
                }
                (Tine::Func(g), Tine::Array(b), None) => {
                    let b = self.expr(b)?;
                    self.dyadic(g, x, b, span)
                }
                (Tine::Array(_), Tine::Array(_), _) => Err(err::syntax_like(
                    "∘ needs a function operand",
                    f.span.clone(),
                )),
                _ => Err(err::unsupported(
                    "a function with a bound array (A∘f, f∘A) takes one argument here",
                    f.span.clone(),
                )),
            },
            (FuncKind::Power(g, h), a) => self.power(g, h, a, x, span),
            (FuncKind::Rank(g, k), a) => self.rank_op(g, k, a, x, span),
            (FuncKind::Over(g, h), a) => self.over(g, h, a, x, span),
            (FuncKind::At(l, r), a) => {
                let (l2, r2) = (self.array_operand(l), self.array_operand(r));
                let l = l2.as_ref().unwrap_or(l);
                let r = r2.as_ref().unwrap_or(r);
                self.at(l, r, a, x, span)
            }
            (FuncKind::Key(g), a) => self.key(g, a, x, span),
            (FuncKind::Stencil(g, k), None) => self.stencil(g, k, x, span),
            // Dyalog's stencil derives a monadic function (VALENCE ERROR there).
            (FuncKind::Stencil(..), Some(_)) => Err(err::syntax_like(
                "f⌺s takes no left argument",
                f.span.clone(),
            )),
            (FuncKind::UserOp { op, left, right }, a) => {
                self.user_op(f, op, left, right.as_deref(), a, x, span)
            }
            _ => Err(err::value("not a tacit function", f.span.clone())),
        }
    }

    /// `f[k]`: the functions that take an axis, applied along axis `k`.
    fn with_axis(
        &mut self,
        g: &Func,
        k: &Expr,
        a: Option<Array>,
        x: Array,
        span: &Span,
    ) -> Result<Array> {
        let kv = self.expr(k)?;
        let g = self.resolve(g)?;
        let io = self.io();
        // `⊂[k]⍵`, `↓[k]⍵`, `↑[k]⍵`: enclose along axes, split along one, mix with the
        // items' axes placed.
        if let (FuncKind::Prim(p @ (Prim::Enclose | Prim::Drop | Prim::Take)), None) = (&g.kind, &a)
        {
            if *p == Prim::Drop && kv.len() != 1 {
                return Err(prims::axis_error("↓[k] takes one axis", k.span.clone()));
            }
            return match p {
                Prim::Take => nested::mix_axes(&kv, &x, io, &k.span, span),
                _ => nested::enclose_axes(&kv, &x, io, &k.span, span),
            };
        }
        let rank = match (&g.kind, &a) {
            (FuncKind::Prim(Prim::Comma | Prim::CommaBar), Some(a)) => a.rank().max(x.rank()),
            _ => x.rank(),
        };
        // `1 ¯1↑[2 3]a`: take or drop along several axes, one count each.
        if let (FuncKind::Prim(p @ (Prim::Take | Prim::Drop)), Some(a)) = (&g.kind, &a) {
            if kv.rank() == 1 && kv.len() != 1 {
                let axes = prims::int_vector(&kv, &k.span, "axes")?;
                let counts = prims::int_vector(a, span, "counts")?;
                let steps = arrc_ir::axes::axis_counts(&axes, &counts, rank, io, &k.span, span)?;
                let mut y = x;
                for (axis, c) in steps {
                    let c = Array::scalar(Scalar::I64(c));
                    y = prims::take_drop_axis(&c, &y, *p == Prim::Drop, axis, span)?;
                }
                return Ok(y);
            }
        }
        // `⍺,[k.5]⍵`: laminate along a new axis.
        if let (FuncKind::Prim(Prim::Comma | Prim::CommaBar), Some(a), Some(v)) =
            (&g.kind, &a, kv.as_singleton())
        {
            let kf = v.as_f64();
            if kv.rank() <= 1 && kf.fract() != 0.0 {
                let at = (kf - io as f64).ceil();
                if at < 0.0 || at > rank as f64 {
                    return Err(prims::axis_error(
                        format!("no axis {kf} to laminate along for rank {rank}"),
                        k.span.clone(),
                    ));
                }
                return prims::laminate(a, &x, at as usize, span);
            }
        }
        let axis = match kv.as_singleton().and_then(|s| s.as_i64()) {
            Some(v) if kv.rank() <= 1 && v >= io && ((v - io) as usize) < rank.max(1) => {
                (v - io) as usize
            }
            _ => {
                return Err(prims::axis_error(
                    format!(
                        "the axis must be an integer from {io} to {}",
                        rank as i64 - 1 + io
                    ),
                    k.span.clone(),
                ))
            }
        };
        let fill = match &a {
            Some(a) if x.elem.is_mixed() || a.elem.is_mixed() => nested::selected_fill(&g, a, &x),
            _ => nested::fill_source(&x),
        };
        self.along_axis(&g, a, x, axis, span)
            .map(|r| nested::keep_prototype(r, fill))
    }

    /// `f[axis]` once the axis is known.
    fn along_axis(
        &mut self,
        g: &Func,
        a: Option<Array>,
        x: Array,
        axis: usize,
        span: &Span,
    ) -> Result<Array> {
        match (&g.kind, a) {
            (FuncKind::Derived { op, operand }, None)
                if matches!(
                    op,
                    Op1::Reduce | Op1::ReduceFirst | Op1::Scan | Op1::ScanFirst
                ) =>
            {
                let scan = matches!(op, Op1::Scan | Op1::ScanFirst);
                self.fold_along(operand, &x, span.clone(), scan, axis)
            }
            (
                FuncKind::Derived {
                    op: Op1::Reduce | Op1::ReduceFirst,
                    operand,
                },
                Some(n),
            ) => self.nwise(operand, &n, &x, axis, span.clone()),
            (FuncKind::Prim(Prim::Reverse | Prim::ReverseFirst), a) => {
                prims::rotate_axis(a.as_ref(), &x, axis, span)
            }
            (FuncKind::Prim(Prim::Comma | Prim::CommaBar), Some(a)) => {
                prims::catenate_axis(&a, &x, axis, span)
            }
            (FuncKind::Prim(p @ (Prim::Take | Prim::Drop)), Some(a)) => {
                prims::take_drop_axis(&a, &x, *p == Prim::Drop, axis, span)
            }
            (FuncKind::Prim(Prim::Slash | Prim::SlashBar), Some(a)) => {
                prims::replicate_axis(&a, &x, Some(axis), span)
            }
            (FuncKind::Prim(Prim::Backslash | Prim::BackslashBar), Some(a)) => {
                prims::expand(&a, &x, Some(axis), span)
            }
            _ => Err(prims::axis_error(
                "this function takes no axis",
                span.clone(),
            )),
        }
    }

    fn dyadic(&mut self, func: &Func, a: Array, b: Array, span: &Span) -> Result<Array> {
        match &func.kind {
            FuncKind::Name(n) if !arrc_syntax::is_system_name(n) => {
                let n = n.clone();
                self.dyadic_of(func, a, b, span).map_err(|e| e.within(&n))
            }
            _ => self.dyadic_of(func, a, b, span),
        }
    }

    fn dyadic_of(&mut self, func: &Func, a: Array, b: Array, span: &Span) -> Result<Array> {
        let f = self.resolve(func)?;
        let s = f.span.clone();
        let io = self.io();
        let mixed = a.elem.is_mixed() || b.elem.is_mixed();
        if mixed {
            nested::allowed(&f, true, &s)?;
        } else if a.elem.is_char() || b.elem.is_char() {
            chars::dyadic_allowed(&f, &a, &b, &s)?;
        }
        let fill = if mixed {
            nested::selected_fill(&f, &a, &b)
        } else {
            None
        };
        match &f.kind {
            FuncKind::Prim(p) => match p {
                Prim::Rho => prims::reshape(&a, &b, &s),
                Prim::Comma => prims::catenate(&a, &b, false, &s),
                Prim::CommaBar => prims::catenate(&a, &b, true, &s),
                Prim::Reverse => prims::rotate(Some(&a), &b, false, &s),
                Prim::ReverseFirst => prims::rotate(Some(&a), &b, true, &s),
                Prim::Transpose => prims::transpose(Some(&a), &b, io, &s),
                Prim::Take => prims::take_drop(&a, &b, false, &s),
                Prim::Drop => prims::take_drop(&a, &b, true, &s),
                Prim::Iota if mixed => nested::index_of(&a, &b, io, &s),
                Prim::Iota => prims::index_of(&a, &b, io, &s),
                Prim::Epsilon if mixed => nested::member(&a, &b, &s),
                Prim::Epsilon => Ok(prims::member(&a, &b)),
                Prim::Enclose => nested::partitioned_enclose(&a, &b, &s),
                Prim::Disclose => nested::pick(&a, &b, io, &s),
                Prim::Nest => nested::partition(&a, &b, &s),
                Prim::Slash => prims::replicate(&a, &b, false, &s),
                Prim::SlashBar => prims::replicate(&a, &b, true, &s),
                Prim::Squad => prims::squad(&a, &b, io, &s),
                Prim::Select => prims::squad(&Array::enclose(a), &b, io, &s),
                Prim::Match | Prim::Tally => {
                    nested::knows_prototypes(&[&a, &b], &s)?;
                    let same = prims::matches(&a, &b);
                    Ok(Array::scalar(Scalar::Bool(same == (*p == Prim::Match))))
                }
                Prim::Right => Ok(b),
                Prim::Left => Ok(a),
                Prim::Union => sets::union(&a, &b, &s),
                Prim::Intersection => sets::intersect(&a, &b, true, &s),
                Prim::Tilde => sets::intersect(&a, &b, false, &s),
                Prim::Find => Ok(sets::find(&a, &b)),
                Prim::Where => sets::interval_index(&a, &b, io, &s),
                Prim::Encode => numeric::encode(&a, &b, self.env.float, &s),
                Prim::Decode => numeric::decode(&a, &b, self.env.float, &s),
                Prim::Roll => random::deal(&a, &b, &mut self.env.rng, io, &s),
                Prim::Domino => numeric::domino(Some(&a), &b, self.env.float, &s),
                Prim::Backslash => prims::expand(&a, &b, None, &s),
                Prim::BackslashBar => prims::expand(&a, &b, Some(0), &s),
                Prim::Format => {
                    if b.elem.is_char() {
                        return Err(err::domain("⍺⍕⍵ needs numbers on the right", s));
                    }
                    let spec = prims::int_vector(&a, &s, "⍺⍕⍵'s widths and precisions")?;
                    arrc_ir::display::format_spec(&spec, &b).map_err(|m| err::length(m, s))
                }
                p => match BinOp::from_prim(*p) {
                    Some(op) => binary(op, &a, &b, self.env.float, s),
                    None => Err(err::unsupported(
                        format!("dyadic {} is not implemented yet", p.glyph()),
                        s,
                    )),
                },
            }
            .map(|r| nested::keep_prototype(r, fill)),
            FuncKind::Dfn(body) => self.call_dfn(&f, body, Some(a), b, span),
            FuncKind::Derived { op, operand } => match op {
                Op1::Commute => self.dyadic(operand, b, a, span),
                Op1::Each => self.each(operand, Some(&a), &b, &s),
                Op1::Reduce | Op1::ReduceFirst => {
                    let axis = if *op == Op1::ReduceFirst {
                        0
                    } else {
                        b.rank().max(1) - 1
                    };
                    self.nwise(operand, &a, &b, axis, s)
                }
                _ => Err(err::unsupported(
                    format!(
                        "{}{} with a left argument (n-wise) is not implemented yet",
                        "f",
                        op.glyph()
                    ),
                    s,
                )),
            },
            FuncKind::Outer(g) => self.outer(g, &a, &b, &s),
            FuncKind::Axis(g, k) => self.with_axis(g, k, Some(a), b, &s),
            FuncKind::Inner(fr, g) if mixed => self.inner_items(fr, g, &a, &b, &s),
            FuncKind::Inner(fr, g) => self.inner(fr, g, &a, &b, &s),
            FuncKind::Name(n) if n == "⎕NPUT" => files::nput(&a, &b, &s),
            FuncKind::Name(n) if n == "⎕CSV" => files::csv_write(&a, &b, &s),
            FuncKind::Name(n) if n.starts_with('⎕') => Err(err::unsupported(
                format!("{n} with a left argument is not supported yet"),
                s,
            )),
            FuncKind::Name(_) | FuncKind::SelfRef => Err(err::value("unresolved function", s)),
            _ => self.tacit(&f, Some(a), b, span),
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
            return Err(err::domain(
                "dfns nest too deeply (recursion limit)",
                span.clone(),
            ));
        }
        arrc_ir::interrupt::check(span)?;
        self.calls += 1;
        let limit = prims::CALL_LIMIT.with(|l| l.get());
        if self.calls > limit {
            return Err(err::ws_full(
                format!("more than {limit} dfn calls in one evaluation"),
                span.clone(),
            ));
        }
        let mut arrays = HashMap::new();
        arrays.insert("⍵".to_string(), omega);
        if let Some(a) = alpha {
            arrays.insert("⍺".to_string(), a);
        }
        let running: Vec<_> = self
            .frames
            .iter()
            .map(|fr| (fr.dfn.as_ref(), fr.parent))
            .collect();
        let parent = arrc_syntax::ast::lexical_parent(&running, f, body);
        self.frames.push(Frame {
            arrays,
            functions: HashMap::new(),
            dfn: Some(f.clone()),
            derived: None,
            parent,
            system: Vec::new(),
        });
        let r = self.body(&body.stmts, span);
        self.pop_frame();
        r
    }

    /// Leaves the running dfn: the system variables it assigned are put back.
    pub(crate) fn pop_frame(&mut self) {
        if let Some(fr) = self.frames.pop() {
            for (name, before) in fr.system.iter().rev() {
                self.env.restore(name, before);
            }
        }
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
                Ok(Some(if e.is_assignment() {
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
                if truth(&c, &cond.span)? {
                    Ok(Some(Flow::Return(self.expr(value)?)))
                } else {
                    Ok(None)
                }
            }
        }
    }
}

fn unary(op: UnOp, x: &Array, float: ElemType, span: Span) -> Result<Array> {
    if x.elem.is_mixed() {
        return nested::pervade1(op, x, float, &span);
    }
    let elem = op.result_type(x.elem, float);
    let mut d = Data::with_capacity(elem, x.len());
    for i in 0..x.len() {
        d.push(
            op.apply(x.data.get(i), float)
                .map_err(|e| scalar_error(e, span.clone()))?,
        );
    }
    Ok(Array::new(x.shape.clone(), d))
}

/// The shape of a scalar function's result and whether each side is extended.
fn extension(a: &Array, b: &Array, span: &Span) -> Result<(Vec<usize>, bool, bool)> {
    let a_ext = a.rank() == 0 || (a.len() == 1 && a.rank() <= b.rank());
    let b_ext = b.rank() == 0 || (b.len() == 1 && b.rank() <= a.rank());
    if a_ext && b_ext {
        let shape = if a.rank() >= b.rank() {
            a.shape.clone()
        } else {
            b.shape.clone()
        };
        return Ok((shape, true, true));
    }
    if a_ext {
        return Ok((b.shape.clone(), true, false));
    }
    if b_ext {
        return Ok((a.shape.clone(), false, true));
    }
    if a.rank() != b.rank() {
        return Err(err::rank(
            format!(
                "arguments of rank {} and {} do not conform",
                a.rank(),
                b.rank()
            ),
            span.clone(),
        ));
    }
    if a.shape != b.shape {
        let (x, y) = a
            .shape
            .iter()
            .zip(&b.shape)
            .find(|(x, y)| x != y)
            .map_or((0, 0), |(x, y)| (*x, *y));
        return Err(err::length(
            format!("lengths {x} and {y} do not match"),
            span.clone(),
        ));
    }
    Ok((a.shape.clone(), false, false))
}

/// A dyadic scalar function with scalar and singleton extension.
/// `float` is the program's float type.
pub fn binary(op: BinOp, a: &Array, b: &Array, float: ElemType, span: Span) -> Result<Array> {
    if a.elem.is_mixed() || b.elem.is_mixed() {
        return nested::pervade2(op, a, b, float, &span);
    }
    let (shape, a_ext, b_ext) = extension(a, b, &span)?;
    let elem = op.result_type(a.elem, b.elem, float);
    let n: usize = arrc_ir::array::saturating_count(&shape);
    let mut d = Data::with_capacity(elem, n);
    for i in 0..n {
        let x = a.data.get(if a_ext { 0 } else { i });
        let y = b.data.get(if b_ext { 0 } else { i });
        d.push(
            op.apply(x, y, float)
                .map_err(|e| scalar_error(e, span.clone()))?,
        );
    }
    Ok(Array::new(shape, d))
}
