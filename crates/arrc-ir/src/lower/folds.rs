//! Lowering folds: reductions, scans, n-wise reductions and inner products, with
//! the checks their integer overflow and float products need, and dfn operands of
//! folds (exact right folds on the device).

use super::*;

impl Lower {
    /// `f/`, `f⌿`, `f\`, `f⍀` (or with an axis) of `arg` along `axis`.
    pub(super) fn fold(
        &mut self,
        operand: &Func,
        op: Op1,
        arg: Value,
        axis: usize,
        fspan: Span,
    ) -> Result<Value> {
        let bin = match self.operand_op(operand) {
            Ok(b) => b,
            Err(e)
                if e.class == crate::ErrorClass::Unsupported
                    && matches!(operand.kind, FuncKind::Dfn(_)) =>
            {
                return self.fold_dfn(operand, op, arg, axis, fspan)
            }
            Err(e) => return Err(e),
        };
        let elem = self.f.ty(arg).elem;
        // Items are converted to the fold's type r, and `r f r` must be an r again:
        // comparisons fold only booleans, `⍲ ⍱` only booleans.
        let r = bin.reduce_type(elem, self.f.float);
        let keeps_type = elem.join(r) == r && bin.operand_type(r, r, self.f.float) == r;
        let empty_axis = self.f.ty(arg).shape.get(axis) == Some(&Dim::Known(0));
        let reduce = matches!(op, Op1::Reduce | Op1::ReduceFirst);
        if bin.on_gpu_for(elem, elem, self.f.float) && !keeps_type && !(empty_axis && reduce) {
            // `=/` of integers: a comparison's booleans are integers again, so the fold
            // runs in the items' type as a right fold whose step is the function
            // followed by a conversion (as a dfn operand would).
            return self.fold_dfn(operand, op, arg, axis, fspan);
        }
        // (A dfn has no identity, though it computes a primitive: `{⍺<⍵}/⍬` is a
        // DOMAIN ERROR, below.)
        let dfn = matches!(self.resolve(operand)?.kind, FuncKind::Dfn(_));
        if empty_axis && reduce && !keeps_type && !dfn {
            // `=/⍬`, `</0 3⍴0`: the function's identity (a boolean) in each cell.
            let shape = self.f.ty(arg).shape.clone();
            let cells: Option<Vec<u64>> = shape
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != axis)
                .map(|(_, d)| match d {
                    Dim::Known(n) => Some(*n),
                    _ => None,
                })
                .collect();
            if let (Some(id), Some(cells)) = (bin.identity(elem, self.f.float), cells) {
                let c = self.konst(Array::scalar(id), fspan.clone());
                if cells.is_empty() {
                    return Ok(c);
                }
                let dims = Array::vector(Data::I64(cells.iter().map(|&n| n as i64).collect()));
                let dims = self.konst(dims, fspan.clone());
                return self.structural2(Prim::Rho, dims, c, None, fspan);
            }
        }
        if !bin.on_gpu_for(elem, elem, self.f.float) || !keeps_type {
            return Err(err::unsupported(
                format!(
                    "{}{} is not supported on the GPU path yet for {elem}",
                    bin.glyph(),
                    op.glyph()
                ),
                fspan,
            ));
        }
        if dfn && reduce {
            self.check_empty_fold(arg, axis, &fspan)?;
        }
        match op {
            Op1::Reduce | Op1::ReduceFirst => self.reduce(bin, arg, axis, fspan),
            Op1::Scan | Op1::ScanFirst => self.scan(bin, arg, axis, fspan),
            other => Err(err::unsupported(
                format!(
                    "the operator {} is not supported on the GPU path yet",
                    other.glyph()
                ),
                fspan,
            )),
        }
    }

    pub(super) fn dyadic(&mut self, func: &Func, l: Value, r: Value, span: &Span) -> Result<Value> {
        if self.nest(l).is_some() || self.nest(r).is_some() {
            return self.nested_dyadic(func, l, r, span);
        }
        let fspan = func.span.clone();
        let f = self.resolve(func)?;
        match &f.kind {
            FuncKind::Prim(Prim::Squad) => {
                // `i⌷x`: scalar indices for the leading axes.
                let Some(ix) = self.const_ints(l) else {
                    return Err(err::unsupported(
                        "⌷ with a computed left argument is not supported on the GPU path yet",
                        fspan,
                    ));
                };
                let rank = self.f.ty(r).rank();
                if ix.len() > rank {
                    return Err(err::rank(
                        format!("{} indices for an array of rank {rank}", ix.len()),
                        fspan,
                    ));
                }
                let mut axes = vec![];
                for &i in &ix {
                    let one_based = Scalar::from_literal(
                        arrc_syntax::lexer::Num::Int(i + 1 - self.io),
                        self.f.float,
                    );
                    let c = self.konst(Array::scalar(one_based), fspan.clone());
                    axes.push(Some(c));
                }
                axes.resize(rank, None);
                self.index(r, axes, fspan)
            }
            FuncKind::Prim(Prim::Select) => {
                // `⍺⊇⍵` is `⍵[⍺;…]`: ⍺ indexes the first axis, the others whole.
                let rank = self.f.ty(r).rank();
                if rank == 0 {
                    return Err(err::rank("a scalar cannot be indexed", fspan));
                }
                let mut axes = vec![Some(l)];
                axes.resize(rank, None);
                self.index(r, axes, fspan)
            }
            FuncKind::Prim(p @ (Prim::Match | Prim::Tally)) => {
                let m = self.matches(l, r, fspan.clone())?;
                if *p == Prim::Match {
                    Ok(m)
                } else {
                    self.unary(UnOp::Not, m, fspan)
                }
            }
            FuncKind::Prim(p @ (Prim::Slash | Prim::SlashBar)) => {
                self.compress(l, r, *p == Prim::SlashBar, None, fspan)
            }
            FuncKind::Prim(Prim::Iota) => {
                let kind = SearchKind::IndexOf {
                    origin: self.io as i32,
                };
                self.search(l, r, kind, fspan)
            }
            FuncKind::Prim(Prim::Epsilon) => self.search(r, l, SearchKind::Member, fspan),
            FuncKind::Prim(Prim::Right) => Ok(r),
            FuncKind::Prim(Prim::Left) => Ok(l),
            FuncKind::Prim(Prim::Union) => self.union(l, r, fspan),
            FuncKind::Prim(p @ (Prim::Intersection | Prim::Tilde)) => {
                self.intersect(l, r, *p == Prim::Intersection, fspan)
            }
            FuncKind::Prim(Prim::Find) => self.find(l, r, fspan),
            FuncKind::Prim(Prim::Roll) => self.deal(l, r, fspan),
            FuncKind::Prim(Prim::Domino) => self.domino(Some(l), r, fspan),
            FuncKind::Prim(Prim::Where) => self.interval_index(l, r, fspan),
            FuncKind::Prim(Prim::Decode) => self.decode(l, r, fspan),
            FuncKind::Prim(Prim::Encode) => self.encode(l, r, fspan),
            FuncKind::Prim(p @ (Prim::Backslash | Prim::BackslashBar)) => {
                let axis = (*p == Prim::BackslashBar).then_some(0);
                self.expand(l, r, axis, fspan)
            }
            FuncKind::Prim(p) if p.is_structural() => self.structural2(*p, l, r, None, fspan),
            FuncKind::Prim(p) => match BinOp::from_prim(*p) {
                Some(BinOp::Power) if self.small_power(r).is_some() => {
                    let k = self.small_power(r).unwrap_or(1);
                    self.power(l, k, fspan)
                }
                Some(op) if op.on_gpu_for(self.f.ty(l).elem, self.f.ty(r).elem, self.f.float) => {
                    self.binary(op, l, r, fspan)
                }
                _ => Err(err::unsupported(
                    format!("dyadic {} is not supported on the GPU path yet", p.glyph()),
                    fspan,
                )),
            },
            FuncKind::Dfn(body) => self.call_dfn(body, Some(l), r, span),
            k if k.is_tacit() => self.tacit(&f, Some(l), r, span),
            FuncKind::Name(_) => unreachable_name(fspan),
            FuncKind::Derived {
                op: Op1::Commute,
                operand,
            } => self.dyadic(operand, r, l, span),
            FuncKind::Derived {
                op: Op1::Each,
                operand,
            } => self.each(operand, Some(l), r, span),
            FuncKind::Outer(g) => {
                let g = self.resolve(g)?;
                self.outer(&g, l, r, fspan)
            }
            FuncKind::Inner(f, g) => {
                let (f, g) = (self.resolve(f)?, self.resolve(g)?);
                self.inner(&f, &g, l, r, fspan)
            }
            FuncKind::Derived {
                op: op @ (Op1::Reduce | Op1::ReduceFirst),
                operand,
            } => {
                let operand = self.resolve(operand)?;
                let rank = self.f.ty(r).rank().max(1);
                let axis = if *op == Op1::ReduceFirst { 0 } else { rank - 1 };
                self.nwise(&operand, l, r, axis, fspan)
            }
            FuncKind::Axis(g, k) => {
                let g = self.resolve(g)?;
                if let FuncKind::Derived {
                    op: Op1::Reduce | Op1::ReduceFirst,
                    operand,
                } = &g.kind
                {
                    let axis = self.axis(k, self.f.ty(r).rank())?;
                    let operand = self.resolve(operand)?;
                    return self.nwise(&operand, l, r, axis, fspan);
                }
                if let FuncKind::Prim(p @ (Prim::Take | Prim::Drop)) = g.kind {
                    if let Some(v) = self.take_drop_axes(p, l, r, k, &fspan)? {
                        return Ok(v);
                    }
                }
                let rank = self.f.ty(l).rank().max(self.f.ty(r).rank());
                if let FuncKind::Prim(Prim::Comma | Prim::CommaBar) = g.kind {
                    let kv = self.expr(k)?;
                    let frac = self
                        .known_value(kv)
                        .filter(|v| v.rank() <= 1)
                        .and_then(|v| v.as_singleton())
                        .map(|s| s.as_f64())
                        .filter(|f| f.fract() != 0.0);
                    if let Some(kf) = frac {
                        let at = (kf - self.io as f64).ceil();
                        if at < 0.0 || at > rank as f64 {
                            return Err(err::axis(
                                format!("no axis {kf} to laminate along for rank {rank}"),
                                k.span.clone(),
                            ));
                        }
                        return self.laminate(l, r, at as usize, fspan);
                    }
                }
                let axis = self.axis(k, rank)?;
                match &g.kind {
                    FuncKind::Prim(
                        p @ (Prim::Comma
                        | Prim::CommaBar
                        | Prim::Reverse
                        | Prim::ReverseFirst
                        | Prim::Take
                        | Prim::Drop),
                    ) => self.structural2(*p, l, r, Some(axis), fspan),
                    FuncKind::Prim(Prim::Slash | Prim::SlashBar) => {
                        let axis = self.axis(k, self.f.ty(r).rank())?;
                        self.compress(l, r, false, Some(axis), fspan)
                    }
                    FuncKind::Prim(Prim::Backslash | Prim::BackslashBar) => {
                        let axis = self.axis(k, self.f.ty(r).rank())?;
                        self.expand(l, r, Some(axis), fspan)
                    }
                    // As the reference: `2 2⍴[1]⍳4` is an AXIS ERROR, never a reshape.
                    FuncKind::Prim(p) if p.is_structural() || BinOp::from_prim(*p).is_none() => {
                        Err(err::axis("this function takes no axis", fspan))
                    }
                    _ => Err(err::unsupported(
                        "this function with an axis is not supported on the GPU path yet",
                        fspan,
                    )),
                }
            }
            _ => Err(err::unsupported(
                "this derived function is not supported dyadically on the GPU path yet",
                fspan,
            )),
        }
    }

    /// `1 ¯1↑[2 3]a`: take or drop along several axes (known axes and counts), one
    /// axis after another; `None` where the axis is one number (the usual path).
    fn take_drop_axes(
        &mut self,
        p: Prim,
        l: Value,
        r: Value,
        k: &Expr,
        span: &Span,
    ) -> Result<Option<Value>> {
        let kv = self.expr(k)?;
        let Some(axes) = self.const_ints(kv) else {
            return Ok(None);
        };
        if axes.len() == 1 {
            return Ok(None);
        }
        let Some(counts) = self.const_ints(l) else {
            return Err(err::unsupported(
                "take and drop along several axes need counts known when the statement compiles",
                span.clone(),
            ));
        };
        let rank = self.f.ty(r).rank();
        let steps = crate::axes::axis_counts(&axes, &counts, rank, self.io, &k.span, span)?;
        let mut y = r;
        for (axis, c) in steps {
            let c = self.konst(Array::scalar(Scalar::I64(c)), span.clone());
            y = self.structural2(p, c, y, Some(axis), span.clone())?;
        }
        Ok(Some(y))
    }

    /// `n f/[axis] x`: `f/` of each window of `|n|` items along `axis` (reversed when
    /// `n` is negative), as the reduction along a new axis of a gather of the windows.
    /// `n` must be known before the program runs (it gives the result's shape).
    fn nwise(
        &mut self,
        operand: &Func,
        n: Value,
        x: Value,
        axis: usize,
        span: Span,
    ) -> Result<Value> {
        let Some(known) = self.known_value(n) else {
            return Err(err::needs_known(
                "n-wise reduction: the window size must be known before the program runs on the GPU path",
                span,
            ));
        };
        let n = known.window_size(&span)?;
        let x = if self.f.ty(x).rank() == 0 {
            self.reshape(x, vec![Dim::Known(1)], span.clone())
        } else {
            x
        };
        let ty = self.f.ty(x).clone();
        let Dim::Known(len) = ty.shape[axis] else {
            return Err(err::needs_known(
                "n-wise reduction along a length known only at run time is not supported yet",
                span,
            ));
        };
        let w = n.unsigned_abs();
        if w > len + 1 {
            return Err(err::length(
                format!("a window of {w} is longer than the axis ({len}) plus one"),
                span,
            ));
        }
        let mut shape = ty.shape.clone();
        shape[axis] = Dim::Known(len + 1 - w);
        shape.insert(axis + 1, Dim::Known(w));
        let map = Gather::Windows {
            axis,
            reverse: n < 0,
        };
        let windows = self.gather(x, map, shape, span.clone());
        self.fold(operand, Op1::Reduce, windows, axis + 1, span)
    }

    /// A dfn has no identity element: reducing an empty axis of `arg` is a DOMAIN
    /// ERROR, unless the result has no cells to give.
    fn check_empty_fold(&self, arg: Value, axis: usize, span: &Span) -> Result<()> {
        let shape = &self.f.ty(arg).shape;
        let empty = shape.get(axis) == Some(&Dim::Known(0));
        let no_cells = (0..shape.len()).any(|k| k != axis && shape[k] == Dim::Known(0));
        if empty && !no_cells {
            return Err(err::domain(
                "this function has no identity element for an empty reduction",
                span.clone(),
            ));
        }
        Ok(())
    }

    /// `f/` or `f\` with `f` a dfn of scalar functions (such as `{⍺+⍵×2}`): an exact
    /// right fold whose step is the dfn, lowered once on scalar stand-ins for ⍺ and ⍵.
    fn fold_dfn(
        &mut self,
        operand: &Func,
        op: Op1,
        arg: Value,
        axis: usize,
        fspan: Span,
    ) -> Result<Value> {
        let scan = match op {
            Op1::Reduce | Op1::ReduceFirst => false,
            Op1::Scan | Op1::ScanFirst => true,
            other => {
                return Err(err::unsupported(
                    format!(
                        "the operator {} is not supported on the GPU path yet",
                        other.glyph()
                    ),
                    fspan,
                ))
            }
        };
        if !scan {
            self.check_empty_fold(arg, axis, &fspan)?;
        }
        let at = self.f.ty(arg).clone();
        if at.rank() == 0 {
            // f/ and f\ of a scalar are the scalar.
            return Ok(arg);
        }
        if at.shape.get(axis) == Some(&Dim::Known(1)) {
            // A fold of one item is that item, as it is (the dfn never runs).
            if scan {
                return Ok(arg);
            }
            let mut shape = at.shape.clone();
            shape.remove(axis);
            return Ok(self.reshape(arg, shape, fspan));
        }
        // The fold's type: items and partial results alike, widened until the dfn of
        // two of them gives that type again.
        let mut r = at.elem;
        let mut comb = None;
        // Whether the first step, on two integer items, computes on them as integers
        // (`⍺×⍵` in `{(⍺×⍵)!2}/`): the reference's first step does, while a fold
        // whose type widens to floats would compute it in floats.
        let mut int_first = false;
        // The operand certainly runs: at least one pair on every line, and a line.
        let runs = known_dims(&at.shape)
            .is_some_and(|d| d[axis] >= 2 && crate::array::saturating_count(&d) > 0);
        for round in 0..4 {
            let f = self.comb(operand, r, &fspan)?;
            let t = f.elem;
            // A guard choosing an integer on one side and a float on the other: the
            // reference's steps keep integers exact until a float appears, but one
            // fold type would compute every step in floats (`{⍵>0:⍺+⍵ ⋄ ⍺⍟⍵}/` of
            // 476 (2*63)-1 overflows in APL's integers, not in f32).
            if round == 0 && at.elem.is_int() {
                int_first = self.int_operands(&f.comb, r);
            }
            if round == 0 && at.elem.is_int() && self.mixed_guard(&f.comb, r) {
                return Err(err::unsupported(
                    "a dfn operand whose guard chooses an integer or a float is not supported on the GPU path yet",
                    fspan,
                ));
            }
            if t == r {
                comb = Some(self.settle(f, runs, &fspan)?);
                break;
            }
            if r.join(t) == r {
                // A narrower result (booleans from integers) is exact in r.
                comb = Some(Comb::Cast {
                    to: r,
                    arg: Box::new(self.settle(f, runs, &fspan)?),
                });
                break;
            }
            if r.join(t) != t {
                break;
            }
            r = t;
        }
        let Some(comb) = comb else {
            return Err(err::unsupported(
                "a dfn operand whose result type keeps changing is not supported on the GPU path",
                fspan,
            ));
        };
        // Integer items folded in floats: their first step differs from APL's
        // (integers that overflow, or that floats cannot hold), unless the items are
        // small enough for floats to compute it exactly (seed 52 index 14121:
        // `{(⍺×⍵)!2}⌿` of 4611686018427387904 ¯726 gave 0, not DOMAIN ERROR).
        let small = self.magnitude(arg).is_some_and(|m| m <= 1 << 11);
        if int_first && r.is_float() && !small {
            return Err(err::unsupported(
                "a dfn fold of integers whose steps give floats, and whose first step computes in integers, is not supported on the GPU path yet",
                fspan,
            ));
        }
        let arg = self.cast(arg, r);
        let mut shape = at.shape.clone();
        if !scan {
            shape.remove(axis);
        }
        Ok(self.f.push(
            Inst::FoldDfn {
                comb,
                arg,
                axis,
                scan,
            },
            Type { elem: r, shape },
            fspan,
        ))
    }

    pub(super) fn reduce(
        &mut self,
        op: BinOp,
        arg: Value,
        axis: usize,
        span: Span,
    ) -> Result<Value> {
        let aty = self.f.ty(arg).clone();
        if aty.rank() == 0 {
            return Ok(arg);
        }
        let elem = op.reduce_type(aty.elem, self.f.float);
        let mut shape = aty.shape.clone();
        shape.remove(axis);
        if aty.shape[axis] == Dim::Known(0) {
            // The identity's type: `⌈/⍬` is the most negative float.
            if let (Some(id), Some(dims)) =
                (op.identity(aty.elem, self.f.float), known_dims(&shape))
            {
                // Made here as a literal: refused past the reference's own limit.
                let n = crate::array::element_count(&dims)
                    .filter(|&n| n as u64 <= LITERAL_LIMIT)
                    .ok_or_else(|| {
                        err::ws_full(
                            "the identities of this empty reduction are too many",
                            span.clone(),
                        )
                    })?;
                let mut d = Data::with_capacity(id.elem_type(), n);
                (0..n).for_each(|_| d.push(id));
                return Ok(self.konst(Array::new(dims, d), span));
            }
            // The same of a shape with a length computed on the device (`0 ≠/` of a
            // compress's rows): the identity spread over it.
            if let Some(id) = op.identity(aty.elem, self.f.float) {
                let one = self.konst(Array::scalar(id), span.clone());
                return Ok(self.gather(one, Gather::Cycle { fill: id }, shape, span));
            }
            // No item needs the identity when the result is empty too (`⍲⌿0 0⍴0`).
            if let Some(dims) = known_dims(&shape).filter(|d| d.contains(&0)) {
                return Ok(self.konst(Array::new(dims, Data::empty(elem)), span));
            }
            return Err(err::domain(
                "this function has no identity element for an empty reduction",
                span,
            ));
        }
        let items = aty.elem;
        let arg = self.cast(arg, elem);
        if op == BinOp::Mul && elem.is_float() && self.may_hold_zero(arg) {
            return self.float_product(arg, axis, false, span);
        }
        let r = self.f.push(
            Inst::Reduce { op, arg, axis },
            Type {
                elem,
                shape: shape.clone(),
            },
            span.clone(),
        );
        let len = dim_bound(aty.shape[axis]);
        let fits = self
            .magnitude(arg)
            .is_some_and(|m| m.saturating_mul(len) < 1 << 63);
        if op == BinOp::Add && items == ElemType::I64 && !fits {
            // The device sums i64 items modulo 2^64; the exact sum of their high halves
            // (which cannot overflow) tells whether that is the sum. Narrower items
            // cannot overflow: fewer than 2^32 of them sum to less than 2^63.
            // (An integer `×/` is a right fold, checked at every step.)
            let high = self.unary(UnOp::HighHalf, arg, span.clone())?;
            let h = self.f.push(
                Inst::Reduce {
                    op,
                    arg: high,
                    axis,
                },
                Type { elem, shape },
                span.clone(),
            );
            return self.binary(BinOp::SumFits, r, h, span);
        }
        Ok(r)
    }

    /// Whether float value `v` may hold a 0 (not when it is a constant without one).
    fn may_hold_zero(&self, v: Value) -> bool {
        self.as_const(v)
            .is_none_or(|a| (0..a.len()).any(|i| a.data.get(i).as_f64() == 0.0))
    }

    /// A float `×/` (or `×\` when `scan`) along `axis` in which a 0 item makes every
    /// product it enters 0, in whatever order the device multiplies: without this, the
    /// partial product of large items elsewhere in the row overflows first
    /// (`×/1e30 1e30 0` in f32), and the row is a DOMAIN ERROR where its product is 0.
    /// The items from the first 0 on (every item of a row with a 0, for a reduction)
    /// are read as 1, and the products they enter are then multiplied by 0.
    fn float_product(&mut self, arg: Value, axis: usize, scan: bool, span: Span) -> Result<Value> {
        let ty = self.f.ty(arg).clone();
        let zero = self.konst(Array::scalar(Scalar::float(0.0, ty.elem)), span.clone());
        let is_zero = self.binary(BinOp::Equal, arg, zero, span.clone())?;
        let mut rshape = ty.shape.clone();
        if !scan {
            rshape.remove(axis);
        }
        let fold = |op, arg| match scan {
            true => Inst::Scan { op, arg, axis },
            false => Inst::Reduce { op, arg, axis },
        };
        let bool_ty = Type {
            elem: ElemType::Bool,
            shape: rshape.clone(),
        };
        // Whether a 0 was met: in the row, or at or before the item.
        let met = self.f.push(fold(BinOp::Or, is_zero), bool_ty, span.clone());
        let met_here = match scan {
            true => met,
            false => {
                let axes = (0..ty.rank()).filter(|&i| i != axis).collect();
                self.gather(met, Gather::Axes(axes), ty.shape.clone(), span.clone())
            }
        };
        // Exact: x×1+0 is x and x×0+1 is 1 for finite x, fused or not.
        let keep = self.unary(UnOp::Not, met_here, span.clone())?;
        let kept = self.binary(BinOp::Mul, arg, keep, span.clone())?;
        let items = self.binary(BinOp::Add, kept, met_here, span.clone())?;
        let items = self.cast(items, ty.elem);
        let p = self.f.push(
            fold(BinOp::Mul, items),
            Type {
                elem: ty.elem,
                shape: rshape,
            },
            span.clone(),
        );
        let none = match scan {
            true => keep,
            false => self.unary(UnOp::Not, met, span.clone())?,
        };
        self.binary(BinOp::Mul, p, none, span)
    }

    /// A bound on the magnitude of every element of integer value `v`, where lowering
    /// can tell (`None`: unknown, or a float): lets folds of values that cannot
    /// overflow skip the overflow check (`+/(⍳10)×⍳10`).
    fn magnitude(&self, v: Value) -> Option<u128> {
        magnitude(&self.f, v)
    }

    pub(super) fn scan(&mut self, op: BinOp, arg: Value, axis: usize, span: Span) -> Result<Value> {
        let aty = self.f.ty(arg).clone();
        if aty.rank() == 0 {
            return Ok(arg);
        }
        let elem = op.reduce_type(aty.elem, self.f.float);
        let arg = self.cast(arg, elem);
        if op == BinOp::Mul && elem.is_float() && self.may_hold_zero(arg) {
            return self.float_product(arg, axis, true, span);
        }
        let ty = Type {
            elem,
            shape: aty.shape,
        };
        let r = self
            .f
            .push(Inst::Scan { op, arg, axis }, ty.clone(), span.clone());
        // The device scans integers modulo 2^64 (see `reduce`); each item is checked
        // unless the items' bounds show that no running sum or product can overflow.
        let len = dim_bound(ty.shape[axis]);
        let m = self.magnitude(arg);
        let sums_fit = m.is_some_and(|m| m.saturating_mul(len) < 1 << 63);
        let products_fit = m.is_some_and(|m| {
            let len = u32::try_from(len).unwrap_or(u32::MAX);
            m <= 1 || m.checked_pow(len).is_some_and(|p| p < 1 << 63)
        });
        match op {
            BinOp::Add if aty.elem == ElemType::I64 && !sums_fit => {
                self.binary(BinOp::ScanSumFits, r, arg, span)
            }
            BinOp::Mul if elem == ElemType::I64 && !products_fit => {
                // Against the same scan in floats: where the running product fits, the
                // float one is within 2^-17 of it (at most 62 factors are not ±1, so
                // at most 61 roundings) and the wrapped one is exact; where it does
                // not, the wrapped one is off by a multiple of 2^64 (or the float scan
                // overflows, a DOMAIN ERROR of its own).
                let ft = self.f.float;
                let fx = self.cast(arg, ft);
                let f = self.float_product(fx, axis, true, span.clone())?;
                let rf = self.cast(r, ft);
                let d = self.binary(BinOp::Sub, rf, f, span.clone())?;
                let d = self.unary(UnOp::Abs, d, span.clone())?;
                let lim = self.konst(
                    Array::scalar(Scalar::float(2f64.powi(61), ft)),
                    span.clone(),
                );
                let ok = self.binary(BinOp::LessEq, d, lim, span.clone())?;
                self.binary(BinOp::FitsOr, r, ok, span)
            }
            _ => Ok(r),
        }
    }

    /// `a f.g b`: `g` over a virtual array `(¯1↓⍴a),(1↓⍴b),k` of both arguments
    /// spread, then `f/` along its last axis (fused: nothing of size m×n×k is stored).
    pub(super) fn inner(
        &mut self,
        f: &Func,
        g: &Func,
        a: Value,
        b: Value,
        span: Span,
    ) -> Result<Value> {
        let gop = self.scalar_operand(g, a, b)?;
        // A scalar argument extends along the inner axis (`2+.×1 2 3` is `+/2×1 2 3`).
        let (at0, bt0) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let a = if at0.rank() == 0 {
            let k = bt0.shape.first().copied().unwrap_or(Dim::Known(1));
            self.reshape(a, vec![k], span.clone())
        } else {
            a
        };
        let b = if bt0.rank() == 0 {
            let k = self.f.ty(a).shape.last().copied().unwrap_or(Dim::Known(1));
            self.reshape(b, vec![k], span.clone())
        } else {
            b
        };
        // An inner axis of length 1 extends to the other's (`(,3)+.×1 2 3` is 18).
        let (at, bt) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let (ka, kb) = (at.shape[at.rank() - 1], bt.shape[0]);
        let one = Dim::Known(1);
        let (a, b) = if ka == one && kb != one {
            let r = at.rank() - 1;
            let inner = self.reshape(a, at.shape[..r].to_vec(), span.clone());
            let mut shape = at.shape[..r].to_vec();
            shape.push(kb);
            (
                self.gather(inner, Gather::Axes((0..r).collect()), shape, span.clone()),
                b,
            )
        } else if kb == one && ka != one {
            let r = bt.rank() - 1;
            let inner = self.reshape(b, bt.shape[1..].to_vec(), span.clone());
            let mut shape = vec![ka];
            shape.extend_from_slice(&bt.shape[1..]);
            (
                a,
                self.gather(inner, Gather::Axes((1..=r).collect()), shape, span.clone()),
            )
        } else {
            (a, b)
        };
        let (at, bt) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let (ra, rb) = (at.rank(), bt.rank());
        let k = at.shape[ra - 1];
        match (k, bt.shape[0]) {
            (Dim::Known(x), Dim::Known(y)) if x != y => {
                return Err(err::length(
                    format!("inner lengths {x} and {y} do not match"),
                    span,
                ))
            }
            // Lengths computed on the device are not checked on the host.
            (Dim::Dyn(_), _) | (_, Dim::Dyn(_)) if k != bt.shape[0] => {
                return Err(err::needs_known(
                    "an inner product of an array whose length is computed on the device is not supported on the GPU path yet",
                    span,
                ))
            }
            (x, y) if x != y => self.f.checks.push(LengthCheck {
                a: x,
                b: y,
                span: span.clone(),
            }),
            _ => {}
        }
        // The inner length not 0; for `⌈ ⌊`, known not to be (over none they give the
        // most negative or positive float, as `⌈/⍬`, not the tile's identity in the
        // items' type; `+ ∨ ∧` give theirs, 0 or 1, either way).
        let fop = self.operand_op(f).ok();
        let k_fits = |op: BinOp| match op {
            BinOp::Max | BinOp::Min => matches!(k, Dim::Known(x) if x > 0),
            _ => k != Dim::Known(0),
        };
        if let Some(fop) = fop.filter(|&op| ra == 2 && rb == 2 && k_fits(op)) {
            if tiled_inner(fop, gop, at.elem.join(bt.elem)) {
                // A tiled kernel: operands of the pair's operand type.
                let ot = gop.operand_type(at.elem, bt.elem, self.f.float);
                let (a, b) = (self.cast(a, ot), self.cast(b, ot));
                let pair_t = gop.result_type(ot, ot, self.f.float);
                let ty = Type {
                    elem: fop.reduce_type(pair_t, self.f.float),
                    shape: vec![at.shape[0], bt.shape[1]],
                };
                let inst = Inst::MatMul {
                    lhs: a,
                    rhs: b,
                    fold: fop,
                    pair: gop,
                };
                return Ok(self.f.push(inst, ty, span));
            }
        }
        let mut shape: Vec<Dim> = at.shape[..ra - 1].to_vec();
        shape.extend(bt.shape[1..].iter().copied());
        shape.push(k);
        let last = shape.len() - 1;
        let mut a_axes: Vec<usize> = (0..ra - 1).collect();
        a_axes.push(last);
        let mut b_axes = vec![last];
        b_axes.extend((ra - 1..ra - 1 + rb - 1).collect::<Vec<_>>());
        let a2 = self.gather(a, Gather::Axes(a_axes), shape.clone(), span.clone());
        let b2 = self.gather(b, Gather::Axes(b_axes), shape, span.clone());
        let prod = self.apply_binary(gop, a2, b2, span.clone())?;
        self.fold(f, Op1::Reduce, prod, last, span)
    }
}

/// Whether an inner product `fold.pair` of matrices of type `j` (both arguments'
/// join) is computed by the tiled kernel, as the fold over the pairs would be: the
/// fold associative, each pair computed (and its errors raised) as `pair` computes
/// it. `+.×` of numbers (an integer product's pairs and sums checked for overflow
/// where the operands' bounds do not rule it out: `(1 2⍴⌊2*62)+.×2 1⍴2 2` is a
/// DOMAIN ERROR); `⌈ ⌊` of `+ - × ⌈ ⌊` (integer pairs in i64, their overflow
/// raised); `∨ ∧ +` of comparisons, and of `∧ ∨` of booleans.
fn tiled_inner(fold: BinOp, pair: BinOp, j: ElemType) -> bool {
    use BinOp::*;
    let numbers = j.is_number();
    match (fold, pair) {
        (Add, Mul) => numbers,
        (Max | Min, Add | Sub | Mul | Max | Min) => numbers,
        (Or | And | Add, _) if pair.is_comparison() => numbers,
        (Or | And | Add, And | Or) => j == ElemType::Bool,
        _ => false,
    }
}
