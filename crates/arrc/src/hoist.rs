//! Assignments inside a statement (`x+y←…`) taken out of it and run first, in
//! APL's right-to-left order ([`Hoist`]).

use arrc_syntax::{Expr, ExprKind};
use std::collections::{HashMap, HashSet};

/// One assignment taken out of a statement: `name←value`, bound first to `temp` when
/// the statement still reads the name's old value after it (see [`Hoist`]).
pub(crate) struct Hoisted {
    pub(crate) name: String,
    pub(crate) temp: Option<String>,
    pub(crate) value: Expr,
    /// The assignment's own span in the statement.
    pub(crate) span: arrc_syntax::Span,
}

impl Hoisted {
    /// The name it is bound to while the statement runs.
    pub(crate) fn bind(&self) -> &str {
        self.temp.as_deref().unwrap_or(&self.name)
    }
}

/// Takes the inner assignments out of a statement (`Hoist::expr`), in the order
/// APL evaluates them (right to left), to run before the rest. The rest then reads
/// each name as APL would at that point: an assignment whose name the rest reads
/// before it, or that a function call before it could read (a name written in the
/// function or in the workspace functions it names), is bound to a new name
/// (`name′k`) that the later reads use, and takes its name when the statement is
/// done. A call after such an assignment that could read its name could need either
/// value: the statement is then refused (`None`).
pub(crate) struct Hoist<'a> {
    pub(crate) first: Vec<Hoisted>,
    /// Names read so far (in APL's order).
    pub(crate) read: HashSet<String>,
    /// Names that the functions called so far may read.
    pub(crate) called: HashSet<String>,
    pub(crate) renamed: HashMap<String, String>,
    /// The workspace's functions (those a call names may read more).
    pub(crate) functions: &'a HashMap<String, arrc_syntax::Func>,
}

impl Hoist<'_> {
    /// The names a call of `f` may read: those written in it and, through the
    /// workspace functions it names, in theirs.
    fn reads(&self, f: &arrc_syntax::Func) -> HashSet<String> {
        let mut out = HashSet::new();
        f.names(&mut out);
        let called = called_reads(self.functions, &out);
        out.extend(called);
        out
    }

    /// `e` without its assignments. A read or call inside an assignment's value
    /// counts as much as one in the rest: assignments inside that value run before
    /// it.
    pub(crate) fn expr(&mut self, e: &Expr) -> Option<Expr> {
        // A call may read the names written in the function, and in the workspace
        // functions it names: refused when one of them is renamed (the call would
        // need its new value), else remembered (an assignment after it renames).
        let call = |h: &mut Self, f: &arrc_syntax::Func| {
            let names = h.reads(f);
            if names.iter().any(|n| h.renamed.contains_key(n)) {
                return None;
            }
            h.called.extend(names);
            Some(())
        };
        let kind = match &e.kind {
            ExprKind::Assign { name, value, .. } => {
                let value = self.expr(value)?;
                let temp = (self.read.contains(name) || self.called.contains(name)).then(|| {
                    let t = format!("{name}′{}", self.first.len());
                    self.renamed.insert(name.clone(), t.clone());
                    t
                });
                self.first.push(Hoisted {
                    name: name.clone(),
                    temp,
                    value,
                    span: e.span.clone(),
                });
                let bound = self.first.last().map(|h| h.bind().to_string())?;
                self.read.insert(name.clone());
                return Some(Expr::new(ExprKind::Name(bound), e.span.clone()));
            }
            ExprKind::Name(n) => {
                self.read.insert(n.clone());
                let n = self.renamed.get(n).unwrap_or(n);
                return Some(Expr::new(ExprKind::Name(n.clone()), e.span.clone()));
            }
            ExprKind::Monadic { func, arg } => {
                let arg = self.expr(arg)?;
                call(self, func)?;
                ExprKind::Monadic {
                    func: func.clone(),
                    arg: Box::new(arg),
                }
            }
            ExprKind::Dyadic { func, left, right } => {
                let right = self.expr(right)?;
                let left = self.expr(left)?;
                call(self, func)?;
                ExprKind::Dyadic {
                    func: func.clone(),
                    left: Box::new(left),
                    right: Box::new(right),
                }
            }
            _ => return e.map_children(&mut |c| self.expr(c).ok_or(())).ok(),
        };
        Some(Expr::new(kind, e.span.clone()))
    }
}

/// Which of the assignments taken out of statement `e` APL completes before it meets
/// the error at `at`: those before it in evaluation order (right to left, arguments
/// before the function applied to them). None where the error's place is not found.
pub(crate) fn completed_before(e: &Expr, first: &[Hoisted], at: &arrc_syntax::Span) -> Vec<bool> {
    // Nodes in evaluation order: their span and, for applications, the function's.
    fn order<'a>(e: &'a Expr, out: &mut Vec<(&'a Expr, Option<&'a arrc_syntax::Span>)>) {
        match &e.kind {
            ExprKind::Monadic { func, arg } => {
                order(arg, out);
                out.push((e, Some(&func.span)));
                return;
            }
            ExprKind::Dyadic { func, left, right } => {
                order(right, out);
                order(left, out);
                out.push((e, Some(&func.span)));
                return;
            }
            ExprKind::Assign { value, .. } => order(value, out),
            ExprKind::Strand(items) => items.iter().rev().for_each(|x| order(x, out)),
            ExprKind::Index { array, axes } => {
                axes.iter().rev().flatten().for_each(|x| order(x, out));
                order(array, out);
            }
            _ => {}
        }
        out.push((e, None));
    }
    let mut nodes = vec![];
    order(e, &mut nodes);
    let within = |s: &arrc_syntax::Span| s.start <= at.start && at.end <= s.end;
    let Some(err) = nodes
        .iter()
        .position(|(n, f)| f.is_some_and(within) || within(&n.span))
    else {
        return vec![false; first.len()];
    };
    first
        .iter()
        .map(|h| {
            nodes
                .iter()
                .position(|(n, _)| matches!(n.kind, ExprKind::Assign { .. }) && n.span == h.span)
                .is_some_and(|p| p < err)
        })
        .collect()
}

/// The names in the bodies of the functions among `names` (by `functions`), and of the
/// functions those name, at any depth.
pub(crate) fn called_reads(
    functions: &HashMap<String, arrc_syntax::Func>,
    names: &HashSet<String>,
) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut todo: Vec<String> = names.iter().cloned().collect();
    let mut seen = HashSet::new();
    while let Some(n) = todo.pop() {
        if let Some(f) = functions.get(&n).filter(|_| seen.insert(n.clone())) {
            let mut body = HashSet::new();
            f.names(&mut body);
            todo.extend(body.iter().cloned());
            out.extend(body);
        }
    }
    out
}

/// Whether `e` sets a system variable or calls a system function anywhere
/// (`x←(⎕IO←0)+1`; reading `⎕IO` is no name here).
pub(crate) fn names_system_variable(e: &Expr) -> bool {
    let mut names = HashSet::new();
    e.names(&mut names);
    names.iter().any(|n| arrc_syntax::is_system_name(n))
}

/// The first assignment in `e` (at any depth; dfns aside).
pub(crate) fn inner_assignment(e: &Expr) -> Option<arrc_syntax::Span> {
    match &e.kind {
        ExprKind::Assign { .. } => Some(e.span.clone()),
        ExprKind::Strand(items) => items.iter().find_map(inner_assignment),
        ExprKind::Monadic { arg, .. } => inner_assignment(arg),
        ExprKind::Dyadic { left, right, .. } => {
            inner_assignment(left).or_else(|| inner_assignment(right))
        }
        ExprKind::Index { array, axes } => {
            inner_assignment(array).or_else(|| axes.iter().flatten().find_map(inner_assignment))
        }
        _ => None,
    }
}
