//! Assignment forms the session runs as plain assignments
//! (`arrc_syntax::assign::plain_assignment`): the scatter of `@` with computed indices
//! may then write x's device buffer in place (`Gpu::consumable`).

use crate::workspace::Val;
use crate::{Error, Session};
use arrc_ir::error::err;
use arrc_ir::Array;
use arrc_syntax::{Expr, ExprKind, Func, Span, Stmt, Target};

/// The name a strand assignment's value is held under while its items are given out
/// (no APL text can write it).
const STRAND: &str = "#strand";

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
        let rank = |name: &str| self.array_shape(name).map(|(s, _)| s.len());
        arrc_syntax::assign::plain_assignment(e, target, func, value, &rank)
            .map(|(e, name)| (Stmt::Expr(e), name))
    }

    /// `(a b c)←v`: `v` computed as a statement of its own (on the device where it
    /// can be), then each name given its item (a scalar to every name), as the
    /// reference does: RANK ERROR beyond a vector, LENGTH ERROR for another count.
    pub(crate) fn strand_assignment(
        &mut self,
        names: &[(String, Span)],
        value: &Expr,
        orig: &Stmt,
        notes: &mut Vec<String>,
    ) -> Result<Option<Array>, Error> {
        let span = value.span.clone();
        let temp = Stmt::Expr(Expr::new(
            ExprKind::Assign {
                name: STRAND.to_string(),
                name_span: span.clone(),
                value: Box::new(value.clone()),
            },
            span.clone(),
        ));
        // Where the reference took the statement over (it runs `orig`), it assigned
        // the names itself.
        self.stmt_as(&temp, orig, notes, false)?;
        // A value that can raise no error may have been kept as a recipe.
        self.force(STRAND)?;
        // A nested vector held on the device gives each name its item's array.
        if let Some(items) = self
            .nests
            .get(STRAND)
            .and_then(|x| x.vector_items(names.len()))
        {
            self.bind_val(STRAND, Val::default());
            for ((name, _), v) in names.iter().zip(items) {
                self.bind_val(name, v);
            }
            return Ok(None);
        }
        self.assemble(STRAND)?;
        let Some((shape, _)) = self.array_shape(STRAND) else {
            return Ok(None);
        };
        let n = names.len();
        let bad = if shape.len() > 1 {
            Some(err::rank(
                "names are assigned the items of a scalar or vector",
                span.clone(),
            ))
        } else if shape.len() == 1 && shape[0] != n {
            Some(err::length(
                format!("{n} names and {} items", shape[0]),
                span,
            ))
        } else {
            None
        };
        if let Some(e) = bad {
            self.bind_val(STRAND, Val::default());
            return Err(e);
        }
        let r = self.materialize(STRAND);
        let v = self.env.arrays.get(STRAND).cloned();
        self.bind_val(STRAND, Val::default());
        r?;
        let v = v.ok_or_else(|| err::value("the strand's value is gone", 0..0))?;
        for (k, (name, _)) in names.iter().enumerate() {
            let item = v.data.item(if v.rank() == 0 { 0 } else { k });
            self.bind_val(name, item.open().into());
        }
        Ok(None)
    }
}
