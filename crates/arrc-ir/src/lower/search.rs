//! Lowering `⍳` (monadic and dyadic), `⍸`, `⍋ ⍒` and `∊`.

use super::*;

impl Lower {
    pub(super) fn iota(&mut self, arg: Value, span: Span) -> Result<Value> {
        let Some(a) = self.known_value(arg) else {
            return Err(err::needs_known(
                "⍳ of a value computed on the device is not supported yet: its length must be known before the program runs",
                span,
            ));
        };
        if a.rank() > 1 {
            return Err(err::rank("⍳ needs a scalar or a vector", span));
        }
        if a.rank() > 0 {
            return Err(err::unsupported(
                "⍳ of a vector (an array of index vectors) is not supported on the GPU path yet",
                span,
            ));
        }
        let n = match a.data.get(0).as_i64() {
            Some(n) if n >= 0 => n,
            _ => return Err(err::domain("⍳ needs a non-negative integer", span)),
        };
        if n > i32::MAX as i64 {
            return Err(err::domain(
                format!("⍳{n} is too long: at most {} items", i32::MAX),
                span,
            ));
        }
        Ok(self.iota_of(Dim::Known(n as u64), self.io as i32, &span))
    }

    /// `⍸b`: the indices of the 1s of a boolean vector, as a compress of `⍳≢b` (its
    /// length stays on the device); literal counts are expanded here.
    pub(super) fn where_(&mut self, b: Value, span: Span) -> Result<Value> {
        let bt = self.f.ty(b).clone();
        if let Some(counts) = self.const_ints(b) {
            if counts.iter().any(|&c| c < 0) {
                return Err(err::domain(crate::scalar::NEGATIVE_COUNT, span));
            }
            let total: i64 = counts.iter().fold(0i64, |a, &c| a.saturating_add(c));
            // Made here, on the host: `⍸2147483647` allocated 8 GB (fuzz seed 50 index
            // 8914; out of memory, the process aborted).
            if total as u64 > LITERAL_LIMIT {
                return Err(err::ws_full(format!("⍸ would give {total} elements"), span));
            }
            let idx: Vec<i32> = counts
                .iter()
                .enumerate()
                .flat_map(|(k, &c)| std::iter::repeat_n(k as i32 + self.io as i32, c as usize))
                .collect();
            return Ok(self.konst(Array::vector(Data::I32(idx)), span));
        }
        if let Some(r) = self.device_where(b, span.clone())? {
            return Ok(r);
        }
        let n = match bt.shape.as_slice() {
            [n @ (Dim::Known(_) | Dim::Sym(_))] if bt.elem == ElemType::Bool => *n,
            _ => {
                return Err(err::needs_known(
                    "⍸ on the GPU path takes a boolean vector whose length is known before the program runs",
                    span,
                ))
            }
        };
        let iota = self.iota_of(n, self.io as i32, &span);
        self.compress(b, iota, false, None, span)
    }

    /// `x`, or where it holds 64-bit integers known to fit 32 bits (`1048576|k`:
    /// |a|b| < |a|), `x` as 32-bit ones: keys that sort in the same order, in 4 radix
    /// passes, not 8. (Not for a `Search`'s grade, which must be its hay's.)
    pub(super) fn narrow_keys(&mut self, x: Value) -> Value {
        if self.f.ty(x).elem == ElemType::I64 && crate::bounds::fits_i32(&self.f, x) {
            self.cast(x, ElemType::I32)
        } else {
            x
        }
    }

    /// `⍋x` / `⍒x` of an array whose shape is known before the program runs.
    pub(super) fn grade(&mut self, x: Value, down: bool, origin: i32, span: Span) -> Result<Value> {
        let xt = self.f.ty(x).clone();
        // Major cells (rows of a matrix) are compared in ravel order.
        let n =
            match xt.shape.as_slice() {
                [] => return Err(err::rank("⍋ and ⍒ need an array of rank 1 or more", span)),
                dims if known_dims(dims).is_some() => dims[0],
                _ => return Err(err::needs_known(
                    "grading an array whose shape is computed on the device is not supported yet",
                    span,
                )),
            };
        Ok(self.f.push(
            Inst::Grade {
                arg: x,
                down,
                origin,
            },
            Type {
                elem: ElemType::I32,
                shape: vec![n],
            },
            span,
        ))
    }

    /// `hay⍳needles` for `hay` of rank 2 or more: for each cell of `needles` shaped like
    /// a major cell of `hay`, the index of the first equal one. Every pair of cells is
    /// compared (`needles∧.=⍉hay`, tolerant in f64) and `⌊/` picks the first match:
    /// work proportional to the product of the two cell counts, like the reference.
    fn search_cells(
        &mut self,
        hay: Value,
        needles: Value,
        origin: i32,
        span: Span,
    ) -> Result<Value> {
        let (ht, nt) = (self.f.ty(hay).clone(), self.f.ty(needles).clone());
        let cell = &ht.shape[1..];
        let cr = cell.len();
        if known_dims(&nt.shape).is_none() || known_dims(&ht.shape).is_none() {
            return Err(err::needs_known(
                "⍳ of cells whose shapes are known only at run time is not supported yet",
                span,
            ));
        }
        if nt.rank() < cr {
            return Err(err::rank(
                "the right argument's rank is below the left argument's cells'",
                span,
            ));
        }
        if nt.shape[nt.rank() - cr..] != *cell {
            return Err(err::length(
                "the right argument's cells must have the shape of the left argument's major cells",
                span,
            ));
        }
        let lead = nt.shape[..nt.rank() - cr].to_vec();
        let (Some(r), Some(k), Some(s)) = (
            known_dims(&ht.shape[..1]),
            known_dims(cell),
            known_dims(&lead),
        ) else {
            return Err(err::needs_known(
                "⍳ of cells whose shapes are known only at run time is not supported yet",
                span,
            ));
        };
        let (r, k, s) = (
            r[0] as u64,
            crate::array::saturating_count(&k) as u64,
            crate::array::saturating_count(&s) as u64,
        );
        let miss = origin as i64 + r as i64;
        if r == 0 {
            let fill = Data::I32(vec![miss as i32; s as usize]);
            let dims = lead
                .iter()
                .map(|d| known_dims(&[*d]).map_or(0, |v| v[0]))
                .collect();
            return Ok(self.konst(Array::new(dims, fill), span));
        }
        let t = ht.elem.join(nt.elem);
        let h = self.cast(hay, t);
        let h = self.reshape(h, vec![Dim::Known(r), Dim::Known(k)], span.clone());
        let h = self.gather(
            h,
            Gather::Axes(vec![1, 0]),
            vec![Dim::Known(k), Dim::Known(r)],
            span.clone(),
        );
        let n = self.cast(needles, t);
        let n = self.reshape(n, vec![Dim::Known(s), Dim::Known(k)], span.clone());
        let and = Func::new(FuncKind::Prim(Prim::And), span.clone());
        let eq = Func::new(FuncKind::Prim(Prim::Equal), span.clone());
        let same = self.inner(&and, &eq, n, h, span.clone())?;
        // miss - same×(miss - j): j where the cells match, miss elsewhere.
        let j = self.f.push(
            Inst::Iota {
                len: Dim::Known(r),
                origin,
            },
            Type {
                elem: ElemType::I32,
                shape: vec![Dim::Known(r)],
            },
            span.clone(),
        );
        let j = self.gather(
            j,
            Gather::Axes(vec![1]),
            vec![Dim::Known(s), Dim::Known(r)],
            span.clone(),
        );
        let m = self.konst(Array::scalar(Scalar::I32(miss as i32)), span.clone());
        let d = self.binary(BinOp::Sub, m, j, span.clone())?;
        let p = self.binary(BinOp::Mul, same, d, span.clone())?;
        let v = self.binary(BinOp::Sub, m, p, span.clone())?;
        let first = self.reduce(BinOp::Min, v, 1, span.clone())?;
        let first = self.cast(first, ElemType::I32);
        Ok(self.reshape(first, lead, span))
    }

    /// `hay⍳needles` or `needles∊hay`: a binary search of each needle in `hay` sorted
    /// by its grade.
    pub(super) fn search(
        &mut self,
        hay: Value,
        needles: Value,
        kind: SearchKind,
        span: Span,
    ) -> Result<Value> {
        let ht = self.f.ty(hay).clone();
        let hay = match ht.rank() {
            0 if kind == SearchKind::Member => self.reshape(hay, vec![Dim::Known(1)], span.clone()),
            0 => return Err(err::rank("the left argument of ⍳ must be a vector", span)),
            1 => hay,
            // Membership looks at every element of the right argument, in any order.
            _ if kind == SearchKind::Member => match known_dims(&ht.shape) {
                Some(d) => {
                    let n = crate::array::saturating_count(&d) as u64;
                    self.reshape(hay, vec![Dim::Known(n)], span.clone())
                }
                None => {
                    return Err(err::needs_known(
                        "∊ of a matrix right argument whose shape is known only at run time is not supported yet",
                        span,
                    ))
                }
            },
            _ => {
                let SearchKind::IndexOf { origin } = kind else {
                    unreachable!("membership is handled above")
                };
                return self.search_cells(hay, needles, origin, span);
            }
        };
        let nt = self.f.ty(needles).clone();
        let t = ht.elem.join(nt.elem);
        let hay = self.cast(hay, t);
        let needles = self.cast(needles, t);
        let order = self.grade(hay, false, 0, span.clone())?;
        let elem = match kind {
            SearchKind::IndexOf { .. } | SearchKind::Interval { .. } => ElemType::I32,
            SearchKind::Member => ElemType::Bool,
        };
        Ok(self.f.push(
            Inst::Search {
                hay,
                order,
                needles,
                kind,
            },
            Type {
                elem,
                shape: nt.shape,
            },
            span,
        ))
    }
}
