//! `X@I⊢⍵` and `f@I⊢⍵` with indices computed on the device (and so indexed
//! assignment `x[I]←V`, which the session writes as `x←V@I⊢x`): a scatter of the new
//! items into a copy of ⍵, or into ⍵'s own buffer where the session lets the statement
//! consume it (`Plan::in_place`). The indices are checked by indexing `⍳≢⍵` with them (an
//! INDEX ERROR, or a DOMAIN ERROR for a fraction, from the device); a repeated index
//! takes the last of its items, found by a `⌈` scatter of the items' numbers.

use super::*;

impl Lower {
    pub(super) fn at_computed(
        &mut self,
        l: &Tine,
        iv: Value,
        a: Option<Value>,
        x: Value,
        span: &Span,
    ) -> Result<Value> {
        let unsupported = |what: &str| {
            Err(err::unsupported(
                format!("{what} is not supported on the GPU path yet"),
                span.clone(),
            ))
        };
        let xt = self.f.ty(x).clone();
        let it = self.f.ty(iv).clone();
        if xt.rank() == 0 {
            return Err(err::rank("@ with indices needs an array ⍵", span.clone()));
        }
        let dynamic = |s: &[Dim]| s.iter().any(|d| matches!(d, Dim::Dyn(_)));
        // Indices of a length computed on the device (`x[(m)/⍳n]←v`) are a vector:
        // the scatters read that length.
        if dynamic(&xt.shape) || (dynamic(&it.shape) && it.rank() != 1) {
            return unsupported("@ with an array whose length is computed on the device");
        }
        let cell = xt.shape[1..].to_vec();
        let Some(cell_dims) = known_dims(&cell) else {
            return unsupported("@ on major cells whose shape is known only at run time");
        };
        let cells = crate::array::saturating_count(&cell_dims);
        if cells > i32::MAX as usize {
            return Err(err::ws_full(
                "an array of more than 2147483647 elements",
                span.clone(),
            ));
        }
        // Each index as the 0-based position of its major cell, checked.
        let n = xt.shape[0];
        let iota = self.iota_of(n, 0, span);
        let one = self.one_based(iv, span.clone())?;
        let major = self.index(iota, vec![Some(one)], span.clone())?;
        let mut sel_shape = it.shape.clone();
        sel_shape.extend(cell.iter().copied());
        // The ravel position of every item of the selection.
        let index = if cell.is_empty() {
            major
        } else {
            let ir = it.rank();
            let c = self.konst(Array::scalar(Scalar::I32(cells as i32)), span.clone());
            let base = self.binary(BinOp::Mul, major, c, span.clone())?;
            let base = self.gather(
                base,
                Gather::Axes((0..ir).collect()),
                sel_shape.clone(),
                span.clone(),
            );
            let within = self.iota_of(Dim::Known(cells as u64), 0, span);
            let within = self.reshape(within, cell.clone(), span.clone());
            let within = self.gather(
                within,
                Gather::Axes((ir..ir + cell.len()).collect()),
                sel_shape.clone(),
                span.clone(),
            );
            let p = self.binary(BinOp::Add, base, within, span.clone())?;
            self.cast(p, ElemType::I32)
        };
        let new = self.at_new_items(l, a, span, &mut |me| {
            let mut axes = vec![Some(one)];
            axes.resize(xt.rank(), None);
            me.index(x, axes, span.clone())
        })?;
        let nt = self.f.ty(new).clone();
        if nt.rank() != 0 {
            if nt.rank() != sel_shape.len() {
                return Err(err::rank(
                    "the new items must have the rank of the items they replace",
                    span.clone(),
                ));
            }
            for (s, d) in sel_shape.iter().zip(&nt.shape) {
                match (s, d) {
                    (Dim::Known(p), Dim::Known(q)) if p != q => {
                        return Err(err::length(
                            "the new items must have the shape of the items they replace",
                            span.clone(),
                        ))
                    }
                    _ if s == d => {}
                    // Only the device knows a computed length: nothing checks it
                    // against another before the statement runs.
                    (Dim::Dyn(_), _) | (_, Dim::Dyn(_)) => {
                        return unsupported(
                            "@ with new items for indices whose count is computed on the device",
                        )
                    }
                    _ => self.f.checks.push(LengthCheck {
                        a: *s,
                        b: *d,
                        span: span.clone(),
                    }),
                }
            }
        }
        let elem = xt.elem.join(nt.elem);
        let (x, new) = (self.cast(x, elem), self.cast(new, elem));
        // The new items are computed whole, as APL evaluates them, even where a
        // repeated index keeps only the last (the planner sees the partial read).
        let count = self.f.ty(index).shape.clone();
        let iota = |me: &mut Self, len: Dim| me.iota_of(len, 0, span);
        let numbers = match (count.as_slice(), known_dims(&count)) {
            ([], _) => self.konst(Array::scalar(Scalar::I32(0)), span.clone()),
            ([len], _) => iota(self, *len),
            (_, Some(d)) => {
                let flat = iota(self, Dim::Known(crate::array::saturating_count(&d) as u64));
                self.reshape(flat, count.clone(), span.clone())
            }
            (_, None) => return unsupported("@ with indices of rank 2 or more of unknown lengths"),
        };
        let owner = self.f.push(
            Inst::ScatterAdd {
                op: BinOp::Max,
                index,
                values: numbers,
            },
            Type {
                elem: ElemType::I32,
                shape: xt.shape.clone(),
            },
            span.clone(),
        );
        Ok(self.f.push(
            Inst::Scatter {
                arg: x,
                index,
                values: new,
                owner,
            },
            Type {
                elem,
                shape: xt.shape,
            },
            span.clone(),
        ))
    }
}
