//! Lowering `f⌺s` where `f` reduces a scalar formula of its window: `{+/,⍵}`,
//! `{+/,A×⍵}`, `{C<+/,A×⍵}` (a size for every axis, steps too where the lengths are
//! known, `A` known when compiling). Each window position becomes one shifted read of ⍵ (a `Window`
//! gather whose fill is the padding), the formula is applied to it, and the terms
//! are folded from the right as the reduction does: one fused elementwise kernel.

use super::*;

/// The most window positions unrolled into one kernel.
pub const STENCIL_POSITIONS: usize = 64;

struct Windows {
    sizes: Vec<u64>,
    /// Steps between windows along each axis (1 unless `⌺` was given them).
    steps: Vec<u64>,
    /// The result's shape: one item per window.
    grid: Vec<Dim>,
    /// The argument each term reads.
    x: Value,
    /// Per window position (in ravel order), ⍵ read at that offset.
    shifted: HashMap<usize, Value>,
}

impl Lower {
    fn stencil_unsupported<T>(&self, what: &str, span: &Span) -> Result<T> {
        Err(err::unsupported(
            format!("⌺ {what} is not supported on the GPU path yet"),
            span.clone(),
        ))
    }

    pub(super) fn stencil(&mut self, f: &Func, s: &Expr, x: Value, span: &Span) -> Result<Value> {
        let sv = self.expr(s)?;
        let srank = self.f.ty(sv).rank();
        let ints = |a: Array| -> Option<Vec<i64>> {
            (0..a.len()).map(|i| a.data.get(i).as_i64()).collect()
        };
        let Some(all) = self.known_value(sv).filter(|_| srank <= 2).and_then(ints) else {
            return self.stencil_unsupported("with computed sizes", span);
        };
        // Sizes, or a matrix of sizes and steps.
        let (sizes, steps) = if srank == 2 {
            if self.f.ty(sv).shape.first() != Some(&Dim::Known(2)) {
                return Err(err::rank(
                    "⌺'s right operand is sizes, or a matrix of sizes and steps",
                    s.span.clone(),
                ));
            }
            let (a, b) = all.split_at(all.len() / 2);
            (a.to_vec(), b.to_vec())
        } else {
            (all.clone(), vec![1; all.len()])
        };
        if steps.iter().any(|&m| m < 1) {
            return Err(err::domain(
                "⌺ needs non-negative sizes and positive steps",
                s.span.clone(),
            ));
        }
        let xt = self.f.ty(x).clone();
        if sizes.len() > xt.rank() {
            return Err(err::length(
                "⌺ has more window sizes than ⍵ has axes",
                s.span.clone(),
            ));
        }
        if sizes.iter().any(|&z| z < 0) {
            return Err(err::domain("⌺ needs non-negative sizes", s.span.clone()));
        }
        let count: u64 = sizes.iter().map(|&z| z as u64).product();
        if sizes.len() != xt.rank() || count == 0 || count as usize > STENCIL_POSITIONS {
            return self.stencil_unsupported("with these window sizes", span);
        }
        let f = self.resolve(f)?;
        let body = match &f.kind {
            FuncKind::Dfn(body) => match body.stmts.as_slice() {
                [Stmt::Expr(e)] => e.clone(),
                _ => return self.stencil_unsupported("with this operand", span),
            },
            _ => return self.stencil_unsupported("with this operand", span),
        };
        // One window per item for an odd size, per gap between items for an even one;
        // with a step, every step-th of those.
        let mut grid = Vec::with_capacity(sizes.len());
        for ((d, &z), &m) in xt.shape.iter().zip(&sizes).zip(&steps) {
            grid.push(match (d, z % 2, m) {
                (Dim::Known(_) | Dim::Sym(_), 1, 1) => *d,
                (Dim::Known(n), odd, m) => {
                    let centres = if odd == 1 { *n } else { n.saturating_sub(1) };
                    Dim::Known(centres.div_ceil(m as u64))
                }
                _ => {
                    return self.stencil_unsupported(
                        "of an array whose lengths are not known when compiling",
                        span,
                    )
                }
            });
        }
        let mut w = Windows {
            sizes: sizes.iter().map(|&z| z as u64).collect(),
            steps: steps.iter().map(|&m| m as u64).collect(),
            grid,
            x,
            shifted: HashMap::new(),
        };
        self.stencil_cell(&body, &mut w, span)
    }

    /// The operand's result for every window: scalar functions of scalars and of
    /// reductions `R/,E` of the window.
    fn stencil_cell(&mut self, e: &Expr, w: &mut Windows, span: &Span) -> Result<Value> {
        let espan = e.span.clone();
        match &e.kind {
            ExprKind::Monadic { func, arg } => {
                let g = self.resolve(func)?;
                if let (
                    FuncKind::Derived {
                        op: Op1::Reduce | Op1::ReduceFirst,
                        operand,
                    },
                    ExprKind::Monadic {
                        func: rav,
                        arg: inner,
                    },
                ) = (&g.kind, &arg.kind)
                {
                    if matches!(self.resolve(rav)?.kind, FuncKind::Prim(Prim::Comma)) {
                        let op = self.operand_op(&self.resolve(operand)?)?;
                        return self.window_fold(op, inner, w, span);
                    }
                }
                // A vector's window needs no ravel: `{+/⍵}⌺3`.
                if let FuncKind::Derived {
                    op: Op1::Reduce | Op1::ReduceFirst,
                    operand,
                } = &g.kind
                {
                    if w.sizes.len() == 1 {
                        let op = self.operand_op(&self.resolve(operand)?)?;
                        return self.window_fold(op, arg, w, span);
                    }
                }
                let v = self.stencil_cell(arg, w, span)?;
                match &g.kind {
                    FuncKind::Prim(p) => match UnOp::from_prim(*p) {
                        Some(op) => self.unary(op, v, espan),
                        None => self.stencil_unsupported("with this operand", span),
                    },
                    _ => self.stencil_unsupported("with this operand", span),
                }
            }
            ExprKind::Dyadic { func, left, right } => {
                let Some(op) = self.scalar_prim(func, span)?.1 else {
                    return self.stencil_unsupported("with this operand", span);
                };
                let r = self.stencil_cell(right, w, span)?;
                let l = self.stencil_cell(left, w, span)?;
                self.apply_binary(op, l, r, espan)
            }
            ExprKind::Omega | ExprKind::Alpha => {
                self.stencil_unsupported("with an operand that uses its window whole or ⍺", span)
            }
            _ => {
                let v = self.expr(e)?;
                if self.f.ty(v).rank() != 0 {
                    return self.stencil_unsupported("with an operand that uses arrays", span);
                }
                Ok(v)
            }
        }
    }

    /// `R/,E` of every window: `E` at each window position, folded from the right.
    fn window_fold(&mut self, op: BinOp, e: &Expr, w: &mut Windows, span: &Span) -> Result<Value> {
        let count: u64 = w.sizes.iter().product();
        let mut terms = Vec::with_capacity(count as usize);
        for o in 0..count as usize {
            terms.push(self.window_term(e, o, w, span)?);
        }
        let elem = terms
            .iter()
            .map(|t| self.f.ty(*t).elem)
            .max()
            .unwrap_or(ElemType::I32);
        // f32 sums accumulate in f64 and round once, as the reference's `+/` does.
        let wide = op == BinOp::Add && elem == ElemType::F32;
        let mut acc: Option<Value> = None;
        for t in terms.into_iter().rev() {
            let t = if wide { self.cast(t, ElemType::F64) } else { t };
            acc = Some(match acc {
                None => t,
                Some(a) => self.apply_binary(op, t, a, span.clone())?,
            });
        }
        let acc = acc.expect("a window has at least one position");
        let want = op.reduce_type(elem, self.f.float);
        let acc = if self.f.ty(acc).elem != want {
            self.cast(acc, want)
        } else {
            acc
        };
        // A sum of f32 items that leaves f32 is a DOMAIN ERROR, as the reference's:
        // adding 0 in f32 checks what the rounding back gave.
        let acc = if wide {
            let zero = self.konst(Array::scalar(Scalar::F32(0.0)), span.clone());
            self.binary(BinOp::Add, acc, zero, span.clone())?
        } else {
            acc
        };
        // A single position over a scalar formula: spread to every window.
        if self.f.ty(acc).shape != w.grid {
            return Ok(self.reshape(acc, w.grid.clone(), span.clone()));
        }
        Ok(acc)
    }

    /// The scalar primitive a function of an operand is, as either valence (NOT YET
    /// SUPPORTED otherwise).
    fn scalar_prim(&self, func: &Func, span: &Span) -> Result<(Option<UnOp>, Option<BinOp>)> {
        match &self.resolve(func)?.kind {
            FuncKind::Prim(p) => Ok((UnOp::from_prim(*p), BinOp::from_prim(*p))),
            _ => self.stencil_unsupported("with this operand", span),
        }
    }

    /// `E` at window position `o` (ravel order) of every window.
    fn window_term(&mut self, e: &Expr, o: usize, w: &mut Windows, span: &Span) -> Result<Value> {
        let espan = e.span.clone();
        match &e.kind {
            ExprKind::Omega => {
                if let Some(v) = w.shifted.get(&o) {
                    return Ok(*v);
                }
                // The offset of position `o` on each axis, from the window's centre.
                let mut rem = o as u64;
                let mut start = vec![0i64; w.sizes.len()];
                for a in (0..w.sizes.len()).rev() {
                    let c = rem % w.sizes[a];
                    rem /= w.sizes[a];
                    start[a] = c as i64 - (w.sizes[a] as i64 - 1) / 2;
                }
                let fill = Scalar::I32(0).cast(self.f.ty(w.x).elem);
                let map = if w.steps.iter().all(|&m| m == 1) {
                    Gather::Window { start, fill }
                } else {
                    Gather::Sample {
                        start,
                        step: w.steps.iter().map(|&m| m as u32).collect(),
                        fill,
                    }
                };
                let v = self.gather(w.x, map, w.grid.clone(), span.clone());
                w.shifted.insert(o, v);
                Ok(v)
            }
            ExprKind::Alpha => self.stencil_unsupported("with an operand that uses ⍺", span),
            ExprKind::Monadic { func, arg } => {
                let Some(op) = self.scalar_prim(func, span)?.0 else {
                    return self.stencil_unsupported("with this operand", span);
                };
                let v = self.window_term(arg, o, w, span)?;
                self.unary(op, v, espan)
            }
            ExprKind::Dyadic { func, left, right } => {
                let Some(op) = self.scalar_prim(func, span)?.1 else {
                    return self.stencil_unsupported("with this operand", span);
                };
                let r = self.window_term(right, o, w, span)?;
                let l = self.window_term(left, o, w, span)?;
                self.apply_binary(op, l, r, espan)
            }
            _ => {
                // An array of the window's shape known here gives its item at `o`; a
                // scalar is itself.
                let v = self.expr(e)?;
                let t = self.f.ty(v).clone();
                if t.rank() == 0 {
                    return Ok(v);
                }
                let window: Vec<Dim> = w.sizes.iter().map(|&z| Dim::Known(z)).collect();
                match self.known_value(v) {
                    Some(a) if t.shape == window => {
                        Ok(self.konst(Array::scalar(a.data.get(o)), espan))
                    }
                    _ => self.stencil_unsupported(
                        "with an array in its operand that is not of the window's shape and known when compiling",
                        span,
                    ),
                }
            }
        }
    }
}
