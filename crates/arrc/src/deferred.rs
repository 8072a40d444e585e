//! Fusion across statements: an assignment whose value is made by elementwise kernels
//! that cannot fail (no error bit, no length computed on the device) is not run. The
//! name is bound to its recipe: the statement's expression, with the arrays it read
//! kept as they were then (snapshots under hidden names). A later statement that
//! reads the name compiles the recipe into its own kernels (`x←⍳n ⋄ y←x×2 ⋄ +/y` runs
//! as `+/(⍳n)×2`, one kernel); the name is computed on its own only when something
//! else needs it (display, `Session::get`, a dfn or function body that reads it, the
//! CPU reference, a statement the simple path does not take).
//!
//! Invariants:
//! - A recipe reads only its snapshots, never a workspace name: assigning the names it
//!   read later does not change it.
//! - A deferred name is in neither `Env::arrays` nor `Gpu::resident`; binding or
//!   removing the name drops the recipe.
//! - Only values that cannot raise an error are deferred, so an error is still raised
//!   by the statement that makes it; shapes and lengths are checked when the recipe is
//!   made (it compiled).

use crate::workspace::{sharing, workspace_names, Arg, Names, Val, HOST_COPY_LIMIT};
use crate::{Error, Session};
use arrc_ir::plan::{KernelKind, MAX_DEVICE_COUNT};
use arrc_ir::Dim;
use arrc_syntax::assign::replace_names as replace;
use arrc_syntax::{Expr, ExprKind};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Recipes larger than this many expression nodes are computed instead (a long chain
/// of statements would otherwise compile an ever larger expression).
const MAX_RECIPE_NODES: usize = 160;
/// Recipes of elementwise kernels only, at most this many (a value read twice inside
/// one is computed by a kernel of its own: a dfn's local `k` in `k×k+1`).
const MAX_RECIPE_KERNELS: usize = 8;

/// A deferred value: an expression over snapshots.
pub(crate) struct Deferred {
    expr: Expr,
    inputs: Vec<(String, Val)>,
}

/// A statement's expression with the recipes of the deferred names it reads put in
/// place, and the snapshots they read.
pub(crate) struct Substituted {
    pub expr: Expr,
    pub inputs: Vec<(String, Val)>,
    nodes: usize,
}

impl Session {
    /// Runs `name₁←…←value` (`names` may be empty) by the simple path: no inner
    /// assignment, no call the host drives. Defers it when it can; else compiles and
    /// runs it once. `Ok(None)`: the normal path must run the statement (every
    /// deferred name it reads is computed by then).
    pub(crate) fn simple_statement(
        &mut self,
        value: &Expr,
        names: &[String],
        want: bool,
    ) -> Result<Option<Option<crate::Array>>, Error> {
        let sub = self.substitute_reads(value)?;
        let keep = !names.is_empty() || !want;
        let arrays = with_inputs(
            workspace_names(&self.env.arrays, self.gpu.as_ref()),
            &sub.inputs,
        );
        let canon = canonical(&sub.expr, &arrays);
        let (expr, args) = canon.as_ref().map_or((&sub.expr, &arrays), |(e, n)| (e, n));
        let compiled = self.compile_nested(expr, args);
        let Ok(compiled) = compiled else {
            // Staging, or an error: the normal path finds it again, in APL's order,
            // after every launched statement is checked.
            drop((arrays, canon));
            self.settle()?;
            self.force_read(value)?;
            return Ok(None);
        };
        if compiled.nested.is_some() {
            drop((arrays, canon));
            return self.nested_assignment(value, &sub, &compiled, names, want);
        }
        if deferrable(names, &sub, &compiled) {
            let recipe = snapshot(&sub, &arrays, &mut self.snapshots);
            drop((arrays, canon));
            self.journal_names(names, None);
            self.bind_recipe(recipe, names);
            return Ok(Some(None));
        }
        let launch = self.may_launch(names);
        let Some(gpu) = self.gpu.as_mut() else {
            return Ok(None);
        };
        gpu.rng = self.env.rng;
        let args = canon.as_ref().map_or(&arrays, |(_, n)| n);
        let run = if launch {
            gpu.launch_val(&compiled, args)
        } else {
            gpu.run_val(&compiled, args, keep)
                .map(|(v, u)| (v, u, None))
        };
        drop((arrays, canon));
        let Ok((v, uploaded, launched)) = run else {
            // Errors are raised by the normal path, which confirms them under `Auto`.
            self.settle()?;
            self.force_read(value)?;
            return Ok(None);
        };
        self.journal_names(names, launched);
        self.advance_rng(compiled.ir.draws);
        // Snapshots (hidden names, `#d…`) are not workspace arrays.
        self.keep_uploads(uploaded, |n| !n.starts_with('#'));
        for n in names {
            self.bind_val(n, v.clone());
        }
        if !names.is_empty() || !want {
            return Ok(Some(None));
        }
        self.host_of(v).map(|a| Some(Some(a)))
    }

    /// Defers `names←value` when it can (compiled for the first device, not run):
    /// whether it did.
    pub(crate) fn try_defer(&mut self, value: &Expr, names: &[String]) -> Result<bool, Error> {
        let sub = self.substitute_reads(value)?;
        let arrays = with_inputs(
            workspace_names(&self.env.arrays, self.gpu.as_ref()),
            &sub.inputs,
        );
        let canon = canonical(&sub.expr, &arrays);
        let (expr, args) = canon.as_ref().map_or((&sub.expr, &arrays), |(e, n)| (e, n));
        let compiled = self.compile_with(expr, args, &[], true);
        drop(canon);
        let Ok(compiled) = compiled else {
            return Ok(false);
        };
        if !deferrable(names, &sub, &compiled) {
            return Ok(false);
        }
        let recipe = snapshot(&sub, &arrays, &mut self.snapshots);
        drop(arrays);
        self.bind_recipe(recipe, names);
        Ok(true)
    }

    /// `value` with the recipes of the deferred names it reads put in place, after
    /// computing those it reads other than directly (inside a dfn, an axis, a
    /// function it calls) or more than once (then computed once and stored: put in
    /// place at each reading, recipes read by recipes multiplied, Life's `N` read
    /// twice, its board eight times: 3.98 → 13.3 ms on the H100).
    pub(crate) fn substitute_reads(&mut self, value: &Expr) -> Result<Substituted, Error> {
        let indirect = self.read_indirectly(value);
        for n in indirect {
            self.force(&n)?;
            self.assemble(&n)?;
        }
        let mut reads: HashMap<String, usize> = HashMap::new();
        replace(value, &mut |n| {
            *reads.entry(n.to_string()).or_default() += 1;
            None
        });
        // (A nested name's arrays are stored: read as often as it likes.)
        for (n, k) in reads {
            if k > 1 {
                self.force(&n)?;
            }
        }
        Ok(self.substitute(value))
    }

    fn bind_recipe(&mut self, recipe: Deferred, names: &[String]) {
        let recipe = Rc::new(recipe);
        for n in names {
            self.bind_val(n, Val::default());
            self.deferred.insert(n.clone(), recipe.clone());
        }
        if let Some(g) = self.gpu.as_mut() {
            g.stats.deferred += 1;
        }
    }

    /// Computes deferred `name` (and every name sharing its recipe) on the device.
    pub(crate) fn force(&mut self, name: &str) -> Result<(), Error> {
        let Some(d) = self.deferred.get(name).cloned() else {
            return Ok(());
        };
        let arrays = with_inputs(HashMap::new(), &d.inputs);
        // By the snapshots' places, not their names (new ones each time the program
        // runs), so that a program run again finds the recipe compiled (Life's forced
        // recipes were compiled again on every run: 0.75 ms of its 3.4 on the H100).
        let canon = canonical(&d.expr, &arrays);
        let (expr, args) = canon.as_ref().map_or((&d.expr, &arrays), |(e, n)| (e, n));
        let v = self.run_on_device(expr, args, &[], true)?;
        drop((canon, arrays));
        for n in sharing(&self.deferred, &d) {
            self.bind_val(&n, v.clone());
        }
        Ok(())
    }

    /// Computes every deferred name.
    pub(crate) fn force_all(&mut self) -> Result<(), Error> {
        let names: Vec<String> = self.deferred.keys().cloned().collect();
        for n in names {
            self.force(&n)?;
        }
        let names: Vec<String> = self.nests.keys().cloned().collect();
        for n in names {
            self.assemble(&n)?;
        }
        Ok(())
    }

    /// Computes the deferred names `e` reads, directly or not.
    pub(crate) fn force_read(&mut self, e: &Expr) -> Result<(), Error> {
        if self.deferred.is_empty() && self.nests.is_empty() {
            return Ok(());
        }
        let mut all = self.read_indirectly(e);
        let mut direct = HashSet::new();
        direct_names(e, &mut direct);
        all.extend(direct.into_iter().filter(|n| self.held(n)));
        for n in all {
            // A nested name gets its host copy: the statement's path reads it there.
            self.force(&n)?;
            self.assemble(&n)?;
        }
        Ok(())
    }

    /// Whether `n` is a recipe or a nested value held on the device: the host has
    /// no copy of it until it is computed or assembled.
    fn held(&self, n: &str) -> bool {
        self.deferred.contains_key(n) || self.nests.contains_key(n)
    }

    /// The deferred names `e` reads other than as a name among its expressions: in
    /// dfns and axes, and in the bodies of the functions it calls (by name, through
    /// any depth of calls).
    fn read_indirectly(&self, e: &Expr) -> HashSet<String> {
        if self.deferred.is_empty() && self.nests.is_empty() {
            return HashSet::new();
        }
        // Names in the text that are not among its expressions (in dfns and axes),
        // and every name in the bodies of the functions it calls.
        let mut text = HashSet::new();
        e.names(&mut text);
        let mut direct = HashSet::new();
        direct_names(e, &mut direct);
        let mut out: HashSet<String> = text.difference(&direct).cloned().collect();
        out.extend(crate::called_reads(&self.env.functions, &text));
        out.retain(|n| self.held(n));
        out
    }

    /// `e` with each deferred name it reads directly replaced by its recipe.
    pub(crate) fn substitute(&self, e: &Expr) -> Substituted {
        let mut inputs: Vec<(String, Val)> = vec![];
        let mut seen: HashSet<String> = HashSet::new();
        let expr = replace(e, &mut |n| {
            let (expr, reads) = match (self.deferred.get(n), self.nests.get(n)) {
                (Some(d), _) => (d.expr.clone(), &d.inputs),
                (None, Some(x)) => (x.expr(self.env.io, &(0..0)), &x.arrays),
                (None, None) => return None,
            };
            for (k, v) in reads {
                if seen.insert(k.clone()) {
                    inputs.push((k.clone(), v.clone()));
                }
            }
            Some(expr)
        });
        let nodes = count_nodes(&expr);
        Substituted {
            expr,
            inputs,
            nodes,
        }
    }
}

/// Whether `names←value`, compiled from `sub` as `compiled`, may be deferred: only
/// values that cannot raise an error (checking one first, a pass that computes it
/// without storing it, cost more than storing it on the H100: Black–Scholes 2.75 →
/// 10.4 ms, Life 3.98 → 19.4 ms, as each check recomputed the recipes before it, and
/// values read twice were computed twice); not one lowered with large values
/// (replicate counts: its snapshots keep only their device copies, which lowering
/// cannot read); not one that draws random numbers (drawn in statement order).
fn deferrable(names: &[String], sub: &Substituted, compiled: &crate::CompiledStatement) -> bool {
    !names.is_empty()
        && compiled.ir.draws == 0
        && !compiled.uses_large_values
        && sub.nodes <= MAX_RECIPE_NODES
        && one_map(compiled)
        && infallible(compiled)
}

/// `e` and its free names with the snapshots renamed by their first reading (`#c0`,
/// `#c1`, …), so that a statement run again over new snapshots (`x←⍳n ⋄ y←x×2` run
/// once more) compiles to the same cache key; the recipes keep their own names.
/// `None` when `e` reads no snapshot (then `e` and `arrays` serve as they are).
pub(crate) fn canonical<'a>(e: &Expr, arrays: &Names<'a>) -> Option<(Expr, Names<'a>)> {
    fn rename(e: &Expr, to: &mut HashMap<String, String>) -> Expr {
        if let ExprKind::Name(n) = &e.kind {
            if n.starts_with("#d") || n.starts_with("#n") {
                let k = to.len();
                let c = to.entry(n.clone()).or_insert_with(|| format!("#c{k}"));
                return Expr::new(ExprKind::Name(c.clone()), e.span.clone());
            }
            return e.clone();
        }
        e.map_children::<()>(&mut |c| Ok(rename(c, to)))
            .unwrap_or_else(|()| e.clone())
    }
    let mut to = HashMap::new();
    let e = rename(e, &mut to);
    if to.is_empty() {
        return None;
    }
    let mut names: Names<'a> = arrays
        .iter()
        .filter(|(n, _)| !n.starts_with("#d") && !n.starts_with("#n"))
        .map(|(n, a)| (n.clone(), a.clone()))
        .collect();
    for (from, c) in to {
        if let Some(a) = arrays.get(&from) {
            names.insert(c, a.clone());
        }
    }
    Some((e, names))
}

/// A recipe of `sub`: the workspace arrays it reads (`arrays`) become snapshots,
/// named from `counter`.
fn snapshot(sub: &Substituted, arrays: &Names, counter: &mut u64) -> Deferred {
    let mut inputs = sub.inputs.clone();
    let mut renamed: HashMap<String, String> = HashMap::new();
    let mut fresh = vec![];
    let expr = replace(&sub.expr, &mut |n| {
        if sub.inputs.iter().any(|(k, _)| k == n) {
            return None;
        }
        let a = arrays.get(n)?;
        let hidden = renamed.entry(n.to_string()).or_insert_with(|| {
            *counter += 1;
            let h = format!("#d{counter}");
            // A device copy is shared, not copied; a large host copy is cloned only
            // where there is no device copy (small ones are kept: lowering reads them).
            let small = a.len() <= HOST_COPY_LIMIT;
            fresh.push((
                h.clone(),
                Val {
                    host: a.host.filter(|_| small || a.device.is_none()).cloned(),
                    device: a.device.clone(),
                },
            ));
            h
        });
        Some(Expr::new(ExprKind::Name(hidden.clone()), 0..0))
    });
    inputs.extend(fresh);
    Deferred { expr, inputs }
}

/// `names` with a recipe's snapshots (`inputs`) added.
pub(crate) fn with_inputs<'a>(mut names: Names<'a>, inputs: &'a [(String, Val)]) -> Names<'a> {
    for (n, v) in inputs {
        names.insert(n.clone(), arg(v));
    }
    names
}

/// A snapshot as a statement's free name.
pub(crate) fn arg(v: &Val) -> Arg<'_> {
    Arg {
        host: v.host.as_ref(),
        device: v.device.clone(),
    }
}

/// Whether a compiled statement's value is made by elementwise kernels whose lengths are
/// all known and within the device's limit, of more elements than a host copy is made
/// for: a value that may be deferred (if it raises no error).
fn one_map(c: &crate::CompiledStatement) -> bool {
    let p = &c.plan;
    let counts_ok = c.ir.types.iter().all(|t| {
        t.shape
            .iter()
            .try_fold(1u64, |acc, d| match d {
                Dim::Known(n) => acc.checked_mul(*n),
                _ => None,
            })
            .is_some_and(|n| n <= MAX_DEVICE_COUNT)
    });
    let result_len = p.result_shape.iter().fold(1u64, |acc, d| match d {
        Dim::Known(n) => acc.saturating_mul(*n),
        _ => 0,
    });
    (1..=MAX_RECIPE_KERNELS).contains(&p.kernels.len())
        && p.kernels
            .iter()
            .all(|k| matches!(k.kind, KernelKind::Map { .. } | KernelKind::Stencil { .. }))
        && p.dyn_lengths.is_empty()
        && p.empty_identity.is_none()
        && p.finite_result.is_none()
        && c.ir.checks.is_empty()
        && counts_ok
        && result_len > HOST_COPY_LIMIT as u64
}

/// Whether a compiled statement can raise no error at all.
fn infallible(c: &crate::CompiledStatement) -> bool {
    c.plan.status.is_none() && c.plan.errors.is_empty()
}

/// The names `e` reads as expressions of its own (not inside functions).
fn direct_names(e: &Expr, out: &mut HashSet<String>) {
    replace(e, &mut |n| {
        out.insert(n.to_string());
        None
    });
}

/// Expression nodes of `e`, functions counted as one.
fn count_nodes(e: &Expr) -> usize {
    let mut n = 1;
    let _ = e.map_children::<()>(&mut |c| {
        n += count_nodes(c);
        Ok(c.clone())
    });
    n
}
