//! Assignments that run without waiting: a statement `x←…` whose result stays on
//! the device is submitted, its name bound to the array the device is writing, and
//! the program goes on to its next statement at once, which the queue runs after it.
//! The statuses are read when the host next needs something the device computed (a
//! value to show, a statement the simple path does not take, an error, the end of
//! the program): all submissions are waited for together, and their status words
//! checked in order.
//!
//! An error found then is APL's error only if nothing after it could be seen: every
//! statement run while a submission was unchecked is journalled (what each name it
//! bound held before, and the generator), so the workspace goes back to the state
//! before the first statement that failed, and the program runs again from that
//! statement, waiting for it, so that it raises its error as it would have (or the
//! reference confirms it).
//!
//! Invariants:
//! - Only statements of the simple path (one assignment, no call the host drives,
//!   one device) run while the journal is open; any other statement settles it first.
//! - A launched statement's buffers (its arguments too) are held until it is settled,
//!   so nothing it reads or writes is freed or reused while it runs.
//! - Nothing read on the host while the journal is open is shown or kept past a
//!   failed settle: the journal puts back every name bound since.

use crate::deferred::Deferred;
use crate::gpu::Launched;
use crate::workspace::DeviceArray;
use crate::{Array, Error, Session};
use arrc_ir::ErrorClass;
use arrc_syntax::Stmt;
use std::rc::Rc;

/// What a name held before a journalled statement bound it.
struct Before {
    name: String,
    host: Option<Array>,
    device: Option<Rc<DeviceArray>>,
    recipe: Option<Rc<Deferred>>,
    nest: Option<Rc<crate::nests::Nested>>,
}

/// One statement run while the journal was open.
struct Entry {
    /// Its index in the program.
    stmt: usize,
    /// The generator before it.
    rng: arrc_ir::random::Rng,
    before: Vec<Before>,
    launched: Option<Launched>,
}

/// Statements run while some submission is unchecked.
#[derive(Default)]
pub(crate) struct Journal {
    entries: Vec<Entry>,
    /// The program statement running now, where one may launch.
    pub(crate) stmt: Option<usize>,
    /// A statement to run waiting for it: it raised an error when launched.
    pub(crate) no_launch_at: Option<usize>,
    /// Set by a settle that found an error: the statement to run again from.
    pub(crate) restart_at: Option<usize>,
}

impl Journal {
    /// Whether a submission is unchecked.
    pub(crate) fn is_open(&self) -> bool {
        !self.entries.is_empty()
    }
}

/// The error that unwinds a statement after a settle found an earlier one failed
/// (`Journal::restart_at` says where to run again; never shown).
fn restart() -> Error {
    Error::new(
        ErrorClass::Device,
        "internal: a statement launched earlier raised an error",
        0..0,
    )
}

impl Session {
    /// Whether the statement running now may be launched without waiting, binding
    /// `names`.
    pub(crate) fn may_launch(&self, names: &[String]) -> bool {
        self.journal.stmt.is_some()
            && self.journal.stmt != self.journal.no_launch_at
            && self.multi.is_none()
            && !names.is_empty()
            && names.iter().all(|n| self.journals(n))
    }

    /// Whether a name can be put back by the journal (not a function).
    fn journals(&self, name: &str) -> bool {
        !self.env.functions.contains_key(name) && !arrc_syntax::is_system_name(name)
    }

    /// Whether `stmt` may run while the journal is open: one plain assignment the
    /// simple path takes.
    pub(crate) fn journalable(&self, stmt: &Stmt) -> bool {
        let Stmt::Expr(e) = stmt else {
            return false;
        };
        let (names, value) = arrc_syntax::assign::assignment_chain(e);
        !names.is_empty()
            && self.multi.is_none()
            && names.iter().all(|n| self.journals(n))
            && !crate::names_system_variable(e)
            && crate::inner_assignment(value).is_none()
            && !self.has_host_calls(value)
    }

    /// Records what `names` hold before the running statement binds them, while the
    /// journal is open or when it `launched`.
    pub(crate) fn journal_names(&mut self, names: &[String], launched: Option<Launched>) {
        let Some(stmt) = self.journal.stmt else {
            debug_assert!(launched.is_none(), "a launch outside a program");
            return;
        };
        if launched.is_none() && !self.journal.is_open() {
            return;
        }
        let before = names
            .iter()
            .map(|n| Before {
                name: n.clone(),
                host: self.env.arrays.remove(n),
                device: self.gpu.as_mut().and_then(|g| g.resident.remove(n)),
                recipe: self.deferred.remove(n),
                nest: self.nests.remove(n),
            })
            .collect();
        self.journal.entries.push(Entry {
            stmt,
            rng: self.env.rng,
            before,
            launched,
        });
    }

    /// Waits for every launched statement and checks them in order. After an error,
    /// puts the workspace back as it was before the statement that raised it and
    /// returns the restart error (`Journal::restart_at` names the statement).
    pub(crate) fn settle(&mut self) -> Result<(), Error> {
        if !self.journal.is_open() {
            return Ok(());
        }
        let mut entries = std::mem::take(&mut self.journal.entries);
        let mut failed: Option<usize> = None;
        let mut fault: Option<Error> = None;
        for (k, e) in entries.iter_mut().enumerate() {
            let Some(l) = e.launched.take() else {
                continue;
            };
            let Some(g) = self.gpu.as_mut() else {
                continue;
            };
            match g.settle(l) {
                Ok(()) => {}
                Err(err)
                    if err.class == ErrorClass::Device || err.class == ErrorClass::Interrupt =>
                {
                    fault.get_or_insert(err);
                }
                Err(_) => {
                    failed.get_or_insert(k);
                }
            }
        }
        // A device fault leaves nothing to trust after the first launch.
        let from = match (fault.is_some(), failed) {
            (true, _) => Some(0),
            (false, f) => f,
        };
        let Some(from) = from else {
            return Ok(());
        };
        let stmt = entries[from].stmt;
        self.env.rng = entries[from].rng;
        arrc_ir::random::set_device_rng(Some(self.env.rng));
        for e in entries.drain(from..).rev() {
            for b in e.before.into_iter().rev() {
                self.put_back(b);
            }
        }
        if let Some(err) = fault {
            return Err(err);
        }
        if let Some(g) = self.gpu.as_mut() {
            g.stats.relaunched += 1;
        }
        self.journal.restart_at = Some(stmt);
        Err(restart())
    }

    /// Gives a name back what it held.
    fn put_back(&mut self, b: Before) {
        self.forget_split(&b.name);
        self.deferred.remove(&b.name);
        self.env.arrays.remove(&b.name);
        if let Some(g) = self.gpu.as_mut() {
            g.resident.remove(&b.name);
            if let Some(d) = b.device {
                g.resident.insert(b.name.clone(), d);
            }
        }
        if let Some(a) = b.host {
            self.env.arrays.insert(b.name.clone(), a);
        }
        self.nests.remove(&b.name);
        if let Some(n) = b.nest {
            self.nests.insert(b.name.clone(), n);
        }
        if let Some(r) = b.recipe {
            self.deferred.insert(b.name, r);
        }
    }
}
