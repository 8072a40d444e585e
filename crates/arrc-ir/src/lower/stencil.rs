//! Lowering `f⌺s` where `f` computes one number per window from reductions of scalar
//! formulas of its window and from its items: `{+/,⍵}`, `{+/,A×⍵}`, `{C<+/,A×⍵}`,
//! `{⍵[2;2]}`, `{c←⍵[2;2] ⋄ s←(+/,⍵)-c ⋄ (s=3)∨c∧s=2}` (a size for every axis,
//! steps too where the lengths are known, `A` known when compiling; local names
//! hold a number per window, a formula of the window, or a value from outside).
//! Each window position becomes one shifted read of ⍵ (a `Window` gather whose fill
//! is the padding), the formula is applied to it, and the terms are folded from the
//! right as the reduction does: one fused elementwise kernel.

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
    /// The operand's local names.
    locals: HashMap<String, Local>,
}

/// What a local name of the operand holds.
#[derive(Clone)]
enum Local {
    /// One number per window (the grid's shape).
    Cell(Value),
    /// An array of the window's shape: this formula of ⍵, read position by position.
    Window(Expr),
    /// A value computed outside the windows (a constant, `3 3⍴k`).
    Outer(Value),
}

/// Whether `e` reads ⍺ or ⍵ (outside function operands, which have their own).
fn reads_args(e: &Expr) -> bool {
    match e.kind {
        ExprKind::Omega | ExprKind::Alpha => true,
        _ => e
            .map_children(&mut |c| {
                if reads_args(c) {
                    Err(())
                } else {
                    Ok(c.clone())
                }
            })
            .is_err(),
    }
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
        let FuncKind::Dfn(body) = &f.kind else {
            return self.stencil_unsupported("with this operand", span);
        };
        let body = body.stmts.clone();
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
            locals: HashMap::new(),
        };
        self.stencil_body(&body, &mut w, span)
    }

    /// The operand's statements: assignments bind local names, the first other
    /// expression is the result.
    fn stencil_body(&mut self, stmts: &[Stmt], w: &mut Windows, span: &Span) -> Result<Value> {
        for st in stmts {
            match st {
                Stmt::Expr(Expr {
                    kind: ExprKind::Assign { name, value, .. },
                    ..
                }) => {
                    self.stencil_bind(name, value, w, span)?;
                }
                Stmt::Expr(e) if !e.is_assignment() => return self.stencil_cell(e, w, span),
                _ => break,
            }
        }
        self.stencil_unsupported("with this operand", span)
    }

    /// Binds a local name: to a formula of the window where the value is one (it is
    /// read position by position where it is used), else to its value, which it gives
    /// (one number per window, or one value from outside).
    fn stencil_bind(
        &mut self,
        name: &str,
        value: &Expr,
        w: &mut Windows,
        span: &Span,
    ) -> Result<Option<Value>> {
        if arrc_syntax::is_system_name(name) {
            // A system variable set in the operand (`⎕IO←0`) is not a local name.
            return self.stencil_unsupported("with an operand that sets a system variable", span);
        }
        // A name bound twice would make a formula that reads it read itself.
        if w.locals.contains_key(name) || name == "⍺" {
            return self.stencil_unsupported("with an operand that assigns a name twice", span);
        }
        let local = if self.window_shaped(value, w) {
            Local::Window(value.clone())
        } else if !reads_args(value) && !self.reads_locals(value, w) {
            Local::Outer(self.expr(value)?)
        } else {
            Local::Cell(self.stencil_cell(value, w, span)?)
        };
        let v = match &local {
            Local::Cell(v) | Local::Outer(v) => Some(*v),
            Local::Window(_) => None,
        };
        w.locals.insert(name.to_string(), local);
        Ok(v)
    }

    /// `E` where `e` is `,E` (a ravel).
    fn ravel_of<'e>(&self, e: &'e Expr) -> Result<Option<&'e Expr>> {
        match &e.kind {
            ExprKind::Monadic { func, arg }
                if matches!(self.resolve(func)?.kind, FuncKind::Prim(Prim::Comma)) =>
            {
                Ok(Some(arg))
            }
            _ => Ok(None),
        }
    }

    /// Whether `e` names one of the operand's local names.
    fn reads_locals(&self, e: &Expr, w: &Windows) -> bool {
        let mut names = std::collections::HashSet::new();
        e.names(&mut names);
        names.iter().any(|n| w.locals.contains_key(n))
    }

    /// Whether `e` is an array of the window's shape made by scalar functions from ⍵
    /// (and from local names that are).
    fn window_shaped(&self, e: &Expr, w: &Windows) -> bool {
        let scalar = |f: &Func| {
            matches!(self.resolve(f).map(|f| f.kind), Ok(FuncKind::Prim(p))
                if UnOp::from_prim(p).is_some() || BinOp::from_prim(p).is_some())
        };
        match &e.kind {
            ExprKind::Omega => true,
            ExprKind::Name(n) => matches!(w.locals.get(n), Some(Local::Window(_))),
            ExprKind::Monadic { func, arg } => scalar(func) && self.window_shaped(arg, w),
            ExprKind::Dyadic { func, left, right } => {
                scalar(func) && (self.window_shaped(left, w) || self.window_shaped(right, w))
            }
            _ => false,
        }
    }

    /// The ravel position in the window that `⍵[i;j]` (known scalar indices, one per
    /// axis) reads.
    fn window_position(
        &mut self,
        axes: &[Option<Expr>],
        w: &Windows,
        span: &Span,
    ) -> Result<usize> {
        if axes.len() != w.sizes.len() {
            return Err(err::rank("the window has another rank", span.clone()));
        }
        let mut o = 0u64;
        for (a, ix) in axes.iter().enumerate() {
            let Some(ix) = ix
                .as_ref()
                .filter(|ix| !reads_args(ix) && !self.reads_locals(ix, w))
            else {
                return self.stencil_unsupported(
                    "with an index of its window that is not a known number",
                    span,
                );
            };
            let v = self.expr(ix)?;
            let i = match self
                .known_value(v)
                .filter(|a| a.rank() == 0)
                .map(|a| a.data.get(0))
            {
                Some(s) => match s.as_i64() {
                    Some(i) => i - self.io,
                    None => {
                        return Err(err::domain("an index must be an integer", ix.span.clone()))
                    }
                },
                None => {
                    return self.stencil_unsupported(
                        "with an index of its window that is not a known number",
                        span,
                    )
                }
            };
            if i < 0 || i as u64 >= w.sizes[a] {
                return Err(err::index("index out of range", ix.span.clone()));
            }
            o = o * w.sizes[a] + i as u64;
        }
        Ok(o as usize)
    }

    /// The operand's result for every window: scalar functions of scalars and of
    /// reductions `R/,E` of the window.
    fn stencil_cell(&mut self, e: &Expr, w: &mut Windows, span: &Span) -> Result<Value> {
        let espan = e.span.clone();
        match &e.kind {
            ExprKind::Monadic { func, arg } => {
                let g = self.resolve(func)?;
                if let FuncKind::Derived {
                    op: Op1::Reduce | Op1::ReduceFirst,
                    operand,
                } = &g.kind
                {
                    if let Some(inner) = self.ravel_of(arg)? {
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
                // `≢⍵` and `≢,⍵`: known from the window's sizes.
                if matches!(g.kind, FuncKind::Prim(Prim::Tally)) {
                    let (inner, whole) = match self.ravel_of(arg)? {
                        Some(inner) => (inner, true),
                        None => (arg.as_ref(), false),
                    };
                    if self.window_shaped(inner, w) {
                        let n = if whole || w.sizes.len() == 1 {
                            w.sizes.iter().product()
                        } else {
                            w.sizes[0]
                        };
                        return Ok(self.konst(Array::scalar(Scalar::I32(n as i32)), espan));
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
            ExprKind::Name(n) if w.locals.contains_key(n) => match w.locals[n].clone() {
                Local::Cell(v) => Ok(v),
                Local::Outer(v) if self.f.ty(v).rank() == 0 => Ok(v),
                _ => self.stencil_unsupported("with an operand that uses an array whole", span),
            },
            ExprKind::Assign { name, value, .. } => {
                match self.stencil_bind(name, value, w, span)? {
                    Some(v) if self.f.ty(v).rank() == 0 || self.f.ty(v).shape == w.grid => Ok(v),
                    _ => self.stencil_unsupported("with an operand that uses an array whole", span),
                }
            }
            // `⍵[i;j]`: one position of every window.
            ExprKind::Index { array, axes } if self.window_shaped(array, w) => {
                let o = self.window_position(axes, w, span)?;
                self.window_term(array, o, w, span)
            }
            _ if reads_args(e) || self.reads_locals(e, w) => {
                self.stencil_unsupported("with this operand", span)
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
        // At most STENCIL_POSITIONS booleans: their sum fits in 32 bits.
        let want = if op == BinOp::Add && elem == ElemType::Bool {
            ElemType::I32
        } else {
            op.reduce_type(elem, self.f.float)
        };
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
                // The centre of an odd window without steps is ⍵ itself.
                if start.iter().all(|&s| s == 0)
                    && w.steps.iter().all(|&m| m == 1)
                    && self.f.ty(w.x).shape == w.grid
                {
                    w.shifted.insert(o, w.x);
                    return Ok(w.x);
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
            ExprKind::Name(n) if w.locals.contains_key(n) => match w.locals[n].clone() {
                Local::Cell(v) => Ok(v),
                Local::Window(f) => self.window_term(&f, o, w, span),
                Local::Outer(v) => self.window_item(v, o, w, &espan, span),
            },
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
            _ if reads_args(e) || self.reads_locals(e, w) => {
                self.stencil_unsupported("with this operand", span)
            }
            _ => {
                let v = self.expr(e)?;
                self.window_item(v, o, w, &espan, span)
            }
        }
    }

    /// Item `o` of `v`: an array of the window's shape known here gives its item at
    /// `o`; a scalar is itself.
    fn window_item(
        &mut self,
        v: Value,
        o: usize,
        w: &Windows,
        espan: &Span,
        span: &Span,
    ) -> Result<Value> {
        let t = self.f.ty(v).clone();
        if t.rank() == 0 {
            return Ok(v);
        }
        let window: Vec<Dim> = w.sizes.iter().map(|&z| Dim::Known(z)).collect();
        match self.known_value(v) {
            Some(a) if t.shape == window => {
                Ok(self.konst(Array::scalar(a.data.get(o)), espan.clone()))
            }
            _ => self.stencil_unsupported(
                "with an array in its operand that is not of the window's shape and known when compiling",
                span,
            ),
        }
    }
}
