//! Nested arrays in the workspace, kept on the device (issue 17, item 3): a nested
//! value the device path computed (`x←(⍳1e6)(⍳2e6)`, `rows←↓m`) is held as the flat
//! device arrays that make it (its items one by one, or one dense array whose
//! trailing axes are an item's) under hidden names (`#n…`), and a statement that
//! reads the name reads those arrays: the name is put in place as an expression over
//! them (a strand of the items, or `⊂[axes]` of the dense array), which the lowering
//! holds as the same nested array (`lower/nested.rs`), so `+/¨x` runs on the device
//! and nothing comes back to the host. The host copy is made only when the host
//! needs it (display, [`Session::get`], the reference, a dfn that reads the name).
//!
//! Invariants:
//! - A nested name is in `Session::nests`, perhaps with a host copy in `Env::arrays`
//!   (the same value); never in `Gpu::resident` nor among the recipes. Binding or
//!   removing the name (`bind_val`, `set_host`, `forget_device`) drops it.
//! - Its arrays are never written (as every device array); names may share one
//!   `Nested` (`y←x`).
//! - Only what the lowering reads back as the same array is kept so: items of a
//!   vector or scalar (at most 64, the lowering's limit), or a dense array.

use crate::deferred::{canonical, with_inputs, Substituted};
use crate::gpu::CompiledStatement;
use crate::workspace::{workspace_names, Val};
use crate::{Error, Session};
use arrc_ir::array::{Item, Items};
use arrc_ir::ir::{Function, NestedResult};
use arrc_ir::{Array, Data};
use arrc_syntax::lexer::Num;
use arrc_syntax::{Expr, ExprKind, Func, FuncKind, Prim};
use std::rc::Rc;

/// A nested workspace value held by flat arrays.
pub(crate) struct Nested {
    layout: Layout,
    /// The arrays, by their hidden names: the items in ravel order, or the dense one.
    pub(crate) arrays: Vec<(String, Val)>,
}

#[derive(Clone, Debug, PartialEq)]
enum Layout {
    /// A vector (or a scalar) of these items.
    Items { shape: Vec<usize> },
    /// The dense array's trailing `inner` axes (of `rank`) are an item's.
    Dense { inner: usize, rank: usize },
}

impl Nested {
    /// How the nested value of `f` (a function with [`Function::parts`]) is kept;
    /// `None` where the lowering could not read it back (an array of rank 2 or more
    /// held item by item).
    fn layout(f: &Function) -> Option<Layout> {
        match f.nested.as_ref()? {
            NestedResult::Items { shape, items } if shape.len() <= 1 && !items.is_empty() => {
                Some(Layout::Items {
                    shape: shape.clone(),
                })
            }
            NestedResult::Items { .. } => None,
            NestedResult::Dense { v, inner } => Some(Layout::Dense {
                inner: *inner,
                rank: f.ty(*v).rank(),
            }),
        }
    }

    /// The nested value of `f` kept as the arrays its parts computed, under new
    /// hidden names (from `counter`).
    pub(crate) fn of(f: &Function, vals: Vec<Val>, counter: &mut u64) -> Option<Nested> {
        let layout = Nested::layout(f)?;
        let arrays = vals
            .into_iter()
            .map(|v| {
                *counter += 1;
                (format!("#n{counter}"), v)
            })
            .collect();
        Some(Nested { layout, arrays })
    }

    /// Whether the nested value of `f` can be kept on the device ([`Self::of`]).
    pub(crate) fn keeps(f: &Function) -> bool {
        Nested::layout(f).is_some()
    }

    /// The expression that reads it back (over its hidden names), with `span`.
    pub(crate) fn expr(&self, io: i64, span: &arrc_syntax::Span) -> Expr {
        let e = |k| Expr::new(k, span.clone());
        let f = |k| Func::new(k, span.clone());
        let name = |n: &String| e(ExprKind::Name(n.clone()));
        let monadic = |p: Prim, arg: Expr| {
            e(ExprKind::Monadic {
                func: f(FuncKind::Prim(p)),
                arg: Box::new(arg),
            })
        };
        match &self.layout {
            Layout::Items { shape } if shape.is_empty() => {
                monadic(Prim::Enclose, name(&self.arrays[0].0))
            }
            Layout::Items { .. } if self.arrays.len() == 1 => {
                monadic(Prim::Comma, monadic(Prim::Enclose, name(&self.arrays[0].0)))
            }
            Layout::Items { .. } => e(ExprKind::Strand(
                self.arrays.iter().map(|(n, _)| name(n)).collect(),
            )),
            Layout::Dense { inner, rank } => {
                let axes: Vec<Expr> = (rank - inner..*rank)
                    .map(|a| e(ExprKind::Number(Num::Int(a as i64 + io))))
                    .collect();
                let axes = match axes.len() {
                    1 => axes.into_iter().next().expect("one axis"),
                    _ => e(ExprKind::Strand(axes)),
                };
                e(ExprKind::Monadic {
                    func: f(FuncKind::Axis(
                        Box::new(f(FuncKind::Prim(Prim::Enclose))),
                        Box::new(axes),
                    )),
                    arg: Box::new(name(&self.arrays[0].0)),
                })
            }
        }
    }

    /// The items of a vector of `n` items held one by one.
    pub(crate) fn vector_items(&self, n: usize) -> Option<Vec<Val>> {
        match &self.layout {
            Layout::Items { shape } if shape == &[n] => {
                Some(self.arrays.iter().map(|(_, v)| v.clone()).collect())
            }
            _ => None,
        }
    }

    /// The value from its arrays' host values (in `arrays`' order).
    fn assemble(&self, mut hosts: Vec<Array>) -> Result<Array, Error> {
        match &self.layout {
            Layout::Items { shape } => {
                let items: Items = hosts.into_iter().map(Item::enclose).collect();
                Ok(Array::new(shape.clone(), Data::Mixed(items)))
            }
            Layout::Dense { inner, .. } => {
                arrc_ref::enclose_trailing(&hosts.swap_remove(0), *inner)
            }
        }
    }
}

impl Session {
    /// Binds `name` to a nested value held on the device.
    pub(crate) fn bind_nested(&mut self, name: &str, n: Rc<Nested>) {
        self.bind_val(name, Val::default());
        self.nests.insert(name.to_string(), n);
    }

    /// Runs `names←value` (`names` may be empty), whose value compiled (from `sub`)
    /// as a nested one (`c.nested`), by its parts, last first (APL evaluates a strand
    /// from the right, so that part's error is the one raised), and binds the names
    /// to the value held on the device. `Ok(None)`: the normal path must run the
    /// statement (the value cannot be kept so, or a part failed: the normal path
    /// raises the error, confirmed on the reference under `Auto`).
    pub(crate) fn nested_assignment(
        &mut self,
        value: &Expr,
        sub: &Substituted,
        c: &CompiledStatement,
        names: &[String],
        want: bool,
    ) -> Result<Option<Option<Array>>, Error> {
        // Nothing launched stays unchecked while the parts run and bind.
        self.settle()?;
        let parts = c.nested.as_ref().filter(|_| Nested::keeps(&c.ir));
        let (Some(parts), Some(gpu)) = (parts, self.gpu.as_mut()) else {
            self.force_read(value)?;
            return Ok(None);
        };
        let arrays = with_inputs(workspace_names(&self.env.arrays, Some(gpu)), &sub.inputs);
        let canon = canonical(&sub.expr, &arrays);
        let args = canon.as_ref().map_or(&arrays, |(_, n)| n);
        gpu.rng = self.env.rng;
        let mut vals = vec![Val::default(); parts.len()];
        let mut uploads = vec![];
        let mut failed = None;
        for (k, part) in parts.iter().enumerate().rev() {
            match gpu.run_val(part, args, true) {
                Ok((v, u)) => {
                    vals[k] = v;
                    uploads.extend(u);
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        drop((arrays, canon));
        if let Some(e) = failed {
            // With the device alone, its error is the statement's (the normal path
            // cannot compile a nested value); else the reference confirms it.
            if self.backend == crate::Backend::Vulkan && e.class.is_apl() {
                return Err(e);
            }
            self.force_read(value)?;
            return Ok(None);
        }
        self.advance_rng(c.ir.draws);
        self.keep_uploads(uploads, |n| !n.starts_with('#'));
        let Some(n) = Nested::of(&c.ir, vals, &mut self.snapshots) else {
            self.force_read(value)?;
            return Ok(None);
        };
        let n = Rc::new(n);
        self.journal_names(names, None);
        for name in names {
            self.bind_nested(name, n.clone());
        }
        if !names.is_empty() || !want {
            return Ok(Some(None));
        }
        self.nested_host(&n).map(|a| Some(Some(a)))
    }

    /// The host value of a nested value held on the device (its arrays read back).
    pub(crate) fn nested_host(&mut self, n: &Nested) -> Result<Array, Error> {
        let mut hosts = Vec::with_capacity(n.arrays.len());
        for (_, v) in &n.arrays {
            hosts.push(self.host_of(v.clone())?);
        }
        n.assemble(hosts)
    }

    /// Gives nested `name` a host copy, if it has none; it stays held on the device.
    pub(crate) fn assemble(&mut self, name: &str) -> Result<(), Error> {
        if self.env.arrays.contains_key(name) {
            return Ok(());
        }
        let Some(n) = self.nests.get(name).cloned() else {
            return Ok(());
        };
        let a = self.nested_host(&n)?;
        for (k, m) in &self.nests {
            if Rc::ptr_eq(m, &n) {
                self.env.arrays.insert(k.clone(), a.clone());
            }
        }
        Ok(())
    }
}
