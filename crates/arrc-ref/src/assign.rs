//! The forms of assignment beyond `name←value`: modified (`x f←v`), strand
//! (`(a b)←v`) and indexed (`x[i]←v`, `x[i] f←v`).

use super::*;
use arrc_syntax::Target;

impl Interp<'_> {
    /// Where `name` is found: the frame (innermost first along the lexical chain) or
    /// the workspace (`None`); VALUE ERROR if it is not an array anywhere.
    fn holder(&self, name: &str, span: &Span) -> Result<Option<usize>> {
        let mut next = self.frames.len().checked_sub(1);
        while let Some(k) = next {
            if self.frames[k].arrays.contains_key(name) {
                return Ok(Some(k));
            }
            next = self.frames[k].parent;
        }
        if self.env.arrays.contains_key(name) {
            return Ok(None);
        }
        Err(err::value(format!("undefined name: {name}"), span.clone()))
    }

    /// Replaces the value of `name` where it is found.
    fn modify(&mut self, name: &str, v: Array, span: &Span) -> Result<()> {
        match self.holder(name, span)? {
            Some(k) => self.frames[k].arrays.insert(name.to_string(), v),
            None => {
                self.env.assigned.insert(name.to_string());
                self.env.arrays.insert(name.to_string(), v)
            }
        };
        Ok(())
    }

    /// The items that replace `selected`: `v`, or `selected f v`, of its shape (or a
    /// scalar).
    fn new_items(
        &mut self,
        func: Option<&Func>,
        selected: Array,
        v: &Array,
        span: &Span,
    ) -> Result<Array> {
        let shape = selected.shape.clone();
        let new = match func {
            Some(f) => self.dyadic(f, selected, v.clone(), &f.span)?,
            None => v.clone(),
        };
        if new.rank() != 0 && new.shape != shape {
            let m = "the new items must have the shape of the selection";
            return Err(if new.rank() != shape.len() {
                err::rank(m, span.clone())
            } else {
                err::length(m, span.clone())
            });
        }
        Ok(new)
    }

    pub(super) fn assign_to(
        &mut self,
        target: &Target,
        func: Option<&Func>,
        value: &Expr,
    ) -> Result<Array> {
        let v = self.expr(value)?;
        match target {
            Target::Names(names) => match (names.as_slice(), func) {
                ([(name, span)], Some(f)) => {
                    let old = self.lookup_array(name).cloned().ok_or_else(|| {
                        err::value(format!("undefined name: {name}"), span.clone())
                    })?;
                    let new = self.dyadic(f, old, v.clone(), &f.span)?;
                    self.modify(name, new, span)?;
                }
                ([(name, span)], None) => self.assign(name, v.clone(), span)?,
                (_, Some(f)) => {
                    return Err(err::unsupported(
                        "modified assignment of several names is not supported yet",
                        f.span.clone(),
                    ))
                }
                (names, None) => {
                    let n = names.len();
                    if v.rank() > 1 {
                        return Err(err::rank(
                            "names are assigned the items of a scalar or vector",
                            value.span.clone(),
                        ));
                    }
                    if v.rank() == 1 && v.len() != n {
                        return Err(err::length(
                            format!("{n} names and {} items", v.len()),
                            value.span.clone(),
                        ));
                    }
                    for (k, (name, span)) in names.iter().enumerate() {
                        let item = v.data.item(if v.rank() == 0 { 0 } else { k });
                        self.assign(name, item.open(), span)?;
                    }
                }
            },
            Target::Indexed {
                name,
                name_span,
                axes,
            } => {
                let ix = self.index_values(axes)?;
                let x = self.lookup_array(name).cloned().ok_or_else(|| {
                    err::value(format!("undefined name: {name}"), name_span.clone())
                })?;
                if x.rank() == 0 {
                    return Err(err::rank("a scalar cannot be indexed", name_span.clone()));
                }
                let io = self.io();
                let places = prims::select_places(&x, &ix, io, name_span)?;
                let selected = prims::select(&x, &ix, io, name_span)?;
                let new = self.new_items(func, selected, &v, &value.span)?;
                self.modify(name, prims::scatter(&x, &places, &new), name_span)?;
            }
            Target::Selective {
                name,
                name_span,
                expr,
            } => {
                selection_only(expr, name)?;
                let x = self.lookup_array(name).cloned().ok_or_else(|| {
                    err::value(format!("undefined name: {name}"), name_span.clone())
                })?;
                // The selection applied to the items' places (1, 2, …: a 0 is a fill
                // item, which is no place of x), with x back before any error.
                let places = Array::new(x.shape.clone(), Data::I64((1..=x.len() as i64).collect()));
                self.modify(name, places, name_span)?;
                let picked = self.expr(expr);
                self.modify(name, x.clone(), name_span)?;
                let picked = picked?;
                let mut at = Vec::with_capacity(picked.len());
                for i in 0..picked.len() {
                    match picked.data.get(i).as_i64() {
                        Some(p) if p >= 1 => at.push(p as usize - 1),
                        _ => return Err(err::index(
                            "the selection reaches past the array (fill items are no place of it)",
                            expr.span.clone(),
                        )),
                    }
                }
                let selected = Array::new(picked.shape.clone(), {
                    let mut d = Data::with_capacity(x.elem, at.len());
                    at.iter().for_each(|&p| d.push_from(&x.data, p));
                    d
                });
                let new = self.new_items(func, selected, &v, &value.span)?;
                self.modify(name, prims::scatter(&x, &at, &new), name_span)?;
            }
        }
        Ok(v)
    }
}

/// Checks that only selection functions stand between `name` and the `←` of a
/// selective assignment (`arrc_syntax::assign::not_a_selection`).
fn selection_only(e: &Expr, name: &str) -> Result<()> {
    match arrc_syntax::assign::not_a_selection(e, name) {
        None => Ok(()),
        Some(span) => Err(err::syntax_like(
            format!("selective assignment: only selection functions (↑ ↓ ⌽ ⊖ ⍉ , ⍪ ⍴ / ⌿ ⌷ ⊢ and indexing) may stand between {name} and ←"),
            span,
        )),
    }
}
