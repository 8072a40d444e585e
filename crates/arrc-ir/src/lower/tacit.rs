//! Lowering tacit functions: trains, `∘`, `⍣` with a count, `⍤`, `⍥` and `@`,
//! inlined into the statement so that they fuse with what surrounds them.

use super::*;

impl Lower {
    /// `f⍣n` with a count known here (at most [`POWER_UNROLL`]): f inlined n times,
    /// so the applications fuse. A computed count or a function right operand runs
    /// on the reference.
    pub(super) fn power_op(
        &mut self,
        f: &Func,
        until: &Tine,
        a: Option<Value>,
        mut x: Value,
        span: &Span,
    ) -> Result<Value> {
        let array_operand = self.array_operand(until);
        let until = array_operand.as_ref().unwrap_or(until);
        let Tine::Array(e) = until else {
            return Err(err::unsupported(
                "⍣ with a function right operand is not supported on the GPU path yet",
                span.clone(),
            ));
        };
        let n = self.expr(e)?;
        let count = match self.const_ints(n).as_deref() {
            Some(&[k]) if (-POWER_UNROLL..=POWER_UNROLL).contains(&k) => k,
            _ => {
                return Err(err::unsupported(
                    format!(
                        "⍣ runs on the GPU path with a count from ¯{POWER_UNROLL} to {POWER_UNROLL} known when it compiles"
                    ),
                    e.span.clone(),
                ))
            }
        };
        if count < 0 {
            if let Some(a) = a {
                let f = self.resolve(f)?;
                let Some((g, a_left)) = arrc_syntax::dyadic_inverse(&f) else {
                    return Err(err::unsupported(
                        "⍣ with a negative count and a left argument is supported for + × - ÷ * ⍟ only",
                        e.span.clone(),
                    ));
                };
                let g = Func::new(FuncKind::Prim(g), f.span.clone());
                for _ in 0..count.unsigned_abs() {
                    x = if a_left {
                        self.dyadic(&g, a, x, span)?
                    } else {
                        self.dyadic(&g, x, a, span)?
                    };
                }
                return Ok(x);
            }
            let inv = arrc_syntax::inverse(f, &|n| match self.lookup(n) {
                Some(Binding::Func(g)) => Some(g.clone()),
                _ => None,
            })
            .map_err(|m| err::domain(m, f.span.clone()))?;
            for _ in 0..count.unsigned_abs() {
                x = self.monadic(&inv, x, span)?;
            }
            return Ok(x);
        }
        for _ in 0..count {
            x = self.apply(f, a, x, span)?;
        }
        Ok(x)
    }

    /// `f` applied to `x`, with `a` as its left argument when there is one.
    pub(super) fn apply(
        &mut self,
        f: &Func,
        a: Option<Value>,
        x: Value,
        span: &Span,
    ) -> Result<Value> {
        match a {
            None => self.monadic(f, x, span),
            Some(a) => self.dyadic(f, a, x, span),
        }
    }

    /// Trains, `∘` and `⍣` (monadic when `a` is `None`), inlined into the statement.
    pub(super) fn tacit(
        &mut self,
        f: &Func,
        a: Option<Value>,
        x: Value,
        span: &Span,
    ) -> Result<Value> {
        let fspan = f.span.clone();
        match &f.kind {
            FuncKind::Atop(g, h) => {
                let y = self.apply(h, a, x, span)?;
                self.monadic(g, y, span)
            }
            FuncKind::Fork(t, g, h) => {
                let r = self.apply(h, a, x, span)?;
                let l = match &**t {
                    Tine::Array(e) => self.expr(e)?,
                    Tine::Func(t) => self.apply(t, a, x, span)?,
                };
                self.dyadic(g, l, r, span)
            }
            FuncKind::Jot(l, r) => match (&**l, &**r, a) {
                (Tine::Func(g), Tine::Func(h), a) => {
                    let y = self.monadic(h, x, span)?;
                    self.apply(g, a, y, span)
                }
                (Tine::Array(b), Tine::Func(g), None) => {
                    let b = self.expr(b)?;
                    self.dyadic(g, b, x, span)
                }
                (Tine::Func(g), Tine::Array(b), None) => {
                    let b = self.expr(b)?;
                    self.dyadic(g, x, b, span)
                }
                (Tine::Array(_), Tine::Array(_), _) => {
                    Err(err::syntax_like("∘ needs a function operand", fspan))
                }
                _ => Err(err::unsupported(
                    "a function with a bound array (A∘f, f∘A) takes one argument here",
                    fspan,
                )),
            },
            FuncKind::Power(g, h) => self.power_op(g, h, a, x, span),
            FuncKind::Over(g, h) => {
                let x = self.monadic(h, x, span)?;
                let a = match a {
                    Some(a) => Some(self.monadic(h, a, span)?),
                    None => None,
                };
                self.apply(g, a, x, span)
            }
            FuncKind::Rank(g, k) => self.rank_op(g, k, a, x, span),
            FuncKind::At(l, r) => {
                let (l2, r2) = (self.array_operand(l), self.array_operand(r));
                let l = l2.as_ref().unwrap_or(l);
                let r = r2.as_ref().unwrap_or(r);
                self.at(l, r, a, x, span)
            }
            FuncKind::UserOp { op, left, right } => {
                self.user_op(op, left, right.as_deref(), a, x, span)
            }
            FuncKind::Key(g) => self.key(g, a, x, span),
            FuncKind::Stencil(g, k) => match a {
                None => self.stencil(g, k, x, span),
                Some(_) => Err(err::syntax_like("f⌺s takes no left argument", fspan)),
            },
            _ => Err(err::value("not a tacit function", fspan)),
        }
    }

    /// `f⍤k`, where it is `f` itself or a scalar function spread over frames: a
    /// single cell (`f⍤k` with `k` at least the arguments' ranks), a function of the
    /// last axis on its rows (`+/⍤1`, `⌽⍤1`), a monadic scalar primitive, or a dyadic
    /// scalar primitive on cells (`m +⍤1 0 ⊢v`). Other forms run on the reference.
    fn rank_op(
        &mut self,
        f: &Func,
        k: &Expr,
        a: Option<Value>,
        x: Value,
        span: &Span,
    ) -> Result<Value> {
        let kv = self.expr(k)?;
        let unsupported = |what: &str| {
            Err(err::unsupported(
                format!("{what} is not supported on the GPU path yet"),
                span.clone(),
            ))
        };
        let Some(ks) = self.const_ints(kv) else {
            return unsupported("⍤ with computed ranks");
        };
        if self.f.ty(kv).rank() > 1 || !(1..=3).contains(&ks.len()) {
            return unsupported("⍤ with this right operand");
        }
        let (m, l, r) = match ks.as_slice() {
            [c] => (*c, *c, *c),
            [l, r] => (*r, *l, *r),
            [m, l, r] => (*m, *l, *r),
            _ => unreachable!("one to three ranks"),
        };
        let cell_rank = |k: i64, rank: usize| -> usize {
            if k >= 0 {
                (k as usize).min(rank)
            } else {
                rank.saturating_sub(k.unsigned_abs() as usize)
            }
        };
        let g = self.resolve(f)?;
        let xr = self.f.ty(x).rank();
        let Some(a) = a else {
            let c = cell_rank(m, xr);
            let last_axis = matches!(
                &g.kind,
                FuncKind::Derived {
                    op: Op1::Reduce | Op1::Scan,
                    ..
                } | FuncKind::Prim(Prim::Reverse)
            );
            let scalar = matches!(&g.kind, FuncKind::Prim(p) if UnOp::from_prim(*p).is_some());
            if c == xr || scalar || (last_axis && c == 1) {
                return self.monadic(&g, x, span);
            }
            if c == 1 {
                if let Some(v) = self.by_rows(&g, x, span)? {
                    return Ok(v);
                }
            }
            return unsupported("this function with ⍤ on cells");
        };
        let ar = self.f.ty(a).rank();
        let (cl, cr) = (cell_rank(l, ar), cell_rank(r, xr));
        if cl == ar && cr == xr {
            return self.dyadic(&g, a, x, span);
        }
        let op = match &g.kind {
            FuncKind::Prim(p) => BinOp::from_prim(*p),
            _ => None,
        };
        let Some(op) = op else {
            return unsupported("this function with ⍤ on cells");
        };
        let (at, xt) = (self.f.ty(a).clone(), self.f.ty(x).clone());
        let (fa, ca) = at.shape.split_at(ar - cl);
        let (fx, cx) = xt.shape.split_at(xr - cr);
        // Frames agree, or one is empty; the cells meet as the scalar function's
        // arguments: equal, or one a scalar.
        let frame = agree(fa, fx, "frames", span)?;
        let cell = agree(ca, cx, "cells", span)?;
        let mut shape = frame.clone();
        shape.extend(cell.iter().copied());
        // Each argument spread to the result's shape: its frame axes (if any) are the
        // result's first, its cell axes (if any) the result's last.
        let spread = |me: &mut Self, v: Value, frame_axes: usize, cell_axes: usize| {
            let mut axes: Vec<usize> = (0..frame_axes).collect();
            axes.extend((0..cell_axes).map(|j| frame.len() + j));
            if frame_axes + cell_axes == shape.len() {
                return v;
            }
            me.gather(v, Gather::Axes(axes), shape.clone(), span.clone())
        };
        let a2 = spread(self, a, fa.len(), ca.len());
        let x2 = spread(self, x, fx.len(), cx.len());
        if !op.on_gpu_for(self.f.ty(a2).elem, self.f.ty(x2).elem, self.f.float) {
            return unsupported("this scalar function");
        }
        self.binary(op, a2, x2, span.clone())
    }

    /// `X@I`, `f@I`, `X@g`, `f@g` where the device can: indices known when the
    /// program compiles into an array whose first axis is known (new items chosen
    /// per major cell), or a boolean function of ⍵ with a scalar `X` or a monadic
    /// scalar primitive `f`. Other forms run on the reference.
    fn at(&mut self, l: &Tine, r: &Tine, a: Option<Value>, x: Value, span: &Span) -> Result<Value> {
        let unsupported = |what: &str| {
            Err(err::unsupported(
                format!("{what} is not supported on the GPU path yet"),
                span.clone(),
            ))
        };
        let xt = self.f.ty(x).clone();
        match r {
            Tine::Func(g) => {
                if a.is_some() {
                    return unsupported("@ with a left argument");
                }
                let mask = self.monadic(g, x, span)?;
                let mt = self.f.ty(mask).clone();
                if mt.shape != xt.shape || mt.elem != ElemType::Bool {
                    return unsupported("@ with this selecting function");
                }
                let new = match l {
                    Tine::Array(e) => {
                        let v = self.expr(e)?;
                        if self.f.ty(v).rank() != 0 {
                            return unsupported(
                                "@ with a function right operand and an array of new items",
                            );
                        }
                        v
                    }
                    Tine::Func(f) => {
                        let f = self.resolve(f)?;
                        match &f.kind {
                            FuncKind::Prim(p) if UnOp::from_prim(*p).is_some() => {
                                self.monadic(&f, x, span)?
                            }
                            // A dfn of scalar functions of ⍵ and numbers (`{⍵×10}`)
                            // gives the selected items what it gives every item; only
                            // those are computed (`{+/⍵}` is not one: it sums them).
                            FuncKind::Dfn(body) if pervasive_body(body) => {
                                self.monadic(&f, x, span)?
                            }
                            _ => return unsupported("@ with this function"),
                        }
                    }
                };
                self.select(mask, new, x, span)
            }
            Tine::Array(e) => {
                let iv = self.expr(e)?;
                let Some(idx) = self.const_ints(iv) else {
                    return self.at_computed(l, iv, a, x, span);
                };
                let Some(&Dim::Known(n)) = xt.shape.first() else {
                    return if xt.rank() == 0 {
                        Err(err::rank("@ with indices needs an array ⍵", span.clone()))
                    } else {
                        unsupported("@ on an array whose length is known only at run time")
                    };
                };
                let io = self.io;
                // For each major cell of ⍵: the last position in I that names it.
                let mut from = vec![None; n as usize];
                for (p, &i) in idx.iter().enumerate() {
                    let v = i - io;
                    if v < 0 || v >= n as i64 {
                        return Err(err::index(
                            format!("index {i} is outside {io}…{}", n as i64 - 1 + io),
                            e.span.clone(),
                        ));
                    }
                    from[v as usize] = Some(p);
                }
                let it = self.f.ty(iv).clone();
                let mut sel_shape = it.shape.clone();
                sel_shape.extend(xt.shape[1..].iter().copied());
                let new = self.at_new_items(l, a, span, &mut |me| {
                    let flat = me.reshape(iv, vec![Dim::Known(idx.len() as u64)], span.clone());
                    let one = me.one_based(flat, span.clone())?;
                    let mut axes = vec![Some(one)];
                    axes.resize(xt.rank(), None);
                    let sel = me.index(x, axes, span.clone())?;
                    Ok(me.reshape(sel, sel_shape.clone(), span.clone()))
                })?;
                let nt = self.f.ty(new).clone();
                let cells = if nt.rank() == 0 {
                    new
                } else if nt.shape == sel_shape {
                    // Row j of the result's new items: row from[j] of the selection.
                    let k = idx.len() as u64;
                    let rows: Vec<i32> = from.iter().map(|p| p.unwrap_or(0) as i32 + 1).collect();
                    let mut flat_shape = vec![Dim::Known(k)];
                    flat_shape.extend(xt.shape[1..].iter().copied());
                    let flat = self.reshape(new, flat_shape, span.clone());
                    let rows = self.konst(Array::vector(Data::I32(rows)), span.clone());
                    let mut axes = vec![Some(rows)];
                    axes.resize(xt.rank(), None);
                    if k == 0 {
                        return Ok(x);
                    }
                    self.index(flat, axes, span.clone())?
                } else if nt.rank() != sel_shape.len() {
                    return Err(err::rank(
                        "the new items must have the rank of the items they replace",
                        span.clone(),
                    ));
                } else {
                    return Err(err::length(
                        "the new items must have the shape of the items they replace",
                        span.clone(),
                    ));
                };
                // ⍵ and the new items are computed whole, as APL evaluates them, even
                // where the select below reads only part of them: their errors stand
                // (`0@1⊢,×⍨¯9223372036854775807` is a DOMAIN ERROR, not 0).
                self.compute_whole(x, span);
                self.compute_whole(new, span);
                let mask: Vec<bool> = from.iter().map(|p| p.is_some()).collect();
                let mask = self.konst(Array::vector(Data::Bool(mask)), span.clone());
                let mask = if xt.rank() > 1 {
                    self.gather(mask, Gather::Axes(vec![0]), xt.shape.clone(), span.clone())
                } else {
                    mask
                };
                self.select(mask, cells, x, span)
            }
        }
    }

    /// `@`'s new items: its array left operand, or its function left operand applied
    /// to the selection (`select` makes it) with ⍺ where there is one.
    pub(super) fn at_new_items(
        &mut self,
        l: &Tine,
        a: Option<Value>,
        span: &Span,
        select: &mut dyn FnMut(&mut Self) -> Result<Value>,
    ) -> Result<Value> {
        match l {
            Tine::Array(e) => {
                if a.is_some() {
                    return Err(err::syntax_like(
                        "@ with an array left operand takes one argument",
                        span.clone(),
                    ));
                }
                self.expr(e)
            }
            Tine::Func(f) => {
                let sel = select(self)?;
                self.apply(f, a, sel, span)
            }
        }
    }

    /// A use of `v` that nothing reads: the planner computes it (all of `v`) only if
    /// that can raise an error, so an error in a part of `v` that a select or a
    /// gather skips is still raised.
    fn compute_whole(&mut self, v: Value, span: &Span) {
        let ty = self.f.ty(v).clone();
        self.f.push(Inst::Cast(v), ty, span.clone());
    }

    /// An operand written as a function that is an operator's array operand
    /// (`⍵⍵` in `{⍺⍺⍣⍵⍵⊢⍵}` called with a number), as the array it is.
    fn array_operand(&self, t: &Tine) -> Option<Tine> {
        t.as_array_operand(|n| matches!(self.lookup(n), Some(Binding::Array(_))))
    }

    /// An operator of the user's, inlined: its body with `⍺⍺` and `⍵⍵` bound to its
    /// operands, captured where they are written (function names resolved, arrays
    /// computed and bound to hidden names).
    fn user_op(
        &mut self,
        op: &Func,
        left: &Tine,
        right: Option<&Tine>,
        a: Option<Value>,
        x: Value,
        span: &Span,
    ) -> Result<Value> {
        let opf = self.resolve(op)?;
        let body = opf
            .operator_body_for(
                right.is_some(),
                matches!(left, Tine::Array(_)),
                matches!(right, Some(Tine::Array(_))),
            )
            .map_err(|m| err::syntax_like(m, op.span.clone()))?;
        let mut scope = HashMap::new();
        for (name, t) in [("⍺⍺", Some(left)), ("⍵⍵", right)] {
            let Some(t) = t else { continue };
            match t {
                Tine::Array(e) => {
                    let v = self.expr(e)?;
                    scope.insert(name.to_string(), Binding::Array(v));
                }
                Tine::Func(g) => {
                    let me = std::cell::RefCell::new(&mut *self);
                    let held = std::cell::RefCell::new(&mut scope);
                    let g =
                        g.capture(&mut |f: &Func| me.borrow().resolve(f), &mut |e: &Expr| {
                            let v = me.borrow_mut().expr(e)?;
                            let mut h = held.borrow_mut();
                            let hidden = format!("⍙operand{}", h.len());
                            h.insert(hidden.clone(), Binding::Array(v));
                            Ok(Expr::new(ExprKind::Name(hidden), e.span.clone()))
                        })?;
                    scope.insert(name.to_string(), Binding::Func(g));
                }
            }
        }
        scope.insert("⍵".to_string(), Binding::Array(x));
        if let Some(a) = a {
            scope.insert("⍺".to_string(), Binding::Array(a));
        }
        self.call_body(body, scope, span)
    }
}

/// Whether a dfn is one expression of scalar primitives applied to ⍵ and numbers: it
/// gives each item of an array what it gives that item alone.
fn pervasive_body(body: &Program) -> bool {
    fn scalar_expr(e: &Expr) -> bool {
        let prim = |f: &Func, dyadic: bool| match &f.kind {
            FuncKind::Prim(p) if dyadic => BinOp::from_prim(*p).is_some(),
            FuncKind::Prim(p) => UnOp::from_prim(*p).is_some(),
            _ => false,
        };
        match &e.kind {
            ExprKind::Omega | ExprKind::Number(_) => true,
            ExprKind::Monadic { func, arg } => prim(func, false) && scalar_expr(arg),
            ExprKind::Dyadic { func, left, right } => {
                prim(func, true) && scalar_expr(left) && scalar_expr(right)
            }
            _ => false,
        }
    }
    matches!(body.stmts.as_slice(), [Stmt::Expr(e)] if scalar_expr(e))
}

/// Two frames (or cells) of `⍤`'s arguments: equal, or one empty and the other
/// taken; RANK or LENGTH ERROR when they differ, NOT YET SUPPORTED when that is
/// known only at run time.
fn agree(a: &[Dim], b: &[Dim], what: &str, span: &Span) -> Result<Vec<Dim>> {
    if a == b || b.is_empty() {
        Ok(a.to_vec())
    } else if a.is_empty() {
        Ok(b.to_vec())
    } else if a.len() != b.len() {
        Err(err::rank(
            format!("the {what} of ⍤'s arguments differ in rank"),
            span.clone(),
        ))
    } else if known_dims(a).is_some() && known_dims(b).is_some() {
        Err(err::length(
            format!("the {what} of ⍤'s arguments differ in length"),
            span.clone(),
        ))
    } else {
        Err(err::unsupported(
            format!("⍤ with {what} of lengths known only at run time is not supported on the GPU path yet"),
            span.clone(),
        ))
    }
}
