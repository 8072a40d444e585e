//! Assignment forms the session runs as plain assignments
//! (`arrc_syntax::assign::plain_assignment`): the scatter of `@` with computed indices
//! may then write x's device buffer in place (`Gpu::consumable`).

use crate::{workspace, Session};
use arrc_syntax::{Expr, Func, Stmt, Target};

impl Session {
    /// The plain statement an assignment `e` of another form runs as, with the name
    /// whose array a scatter may write in place; `None` where it runs on the
    /// reference.
    pub(crate) fn plain_assignment(
        &self,
        e: &Expr,
        target: &Target,
        func: Option<&Func>,
        value: &Expr,
    ) -> Option<(Stmt, Option<String>)> {
        let rank = |name: &str| {
            workspace::workspace_names(&self.env.arrays, self.gpu.as_ref())
                .get(name)
                .map(|a| a.shape().len())
        };
        arrc_syntax::assign::plain_assignment(e, target, func, value, &rank)
            .map(|(e, name)| (Stmt::Expr(e), name))
    }
}
