//! Nested arrays on the GPU path (issue 17, item 3), within a statement. Two
//! representations:
//! - [`Nest::Items`]: a nested array of a known shape and at most [`UNROLLED`] items,
//!   each item its own flat value (`⊂⍵`, the strand `1 ⍵`, `1 0 ¯1⌽¨⊂⍵`, `3 4=…`).
//!   Functions applied through pervasion, `¨`, `∘.`, `/` and `.` apply to the items
//!   one by one, so the statement becomes the flat program one would write by hand
//!   (Life's nested formulation becomes its eight rotations and sums), and items may
//!   differ in shape.
//! - [`Nest::Dense`]: more items (or a run-time count), all of one shape and type: one
//!   dense array of higher rank whose trailing axes are an item's; functions become
//!   spreads, rotations along an item's axes (by amounts per line) and reductions
//!   along the outer axes.
//!
//! A nested array stands in the IR as an [`Inst::Nested`], which computes nothing:
//! the functions here read its items from [`Lower::nests`]. Any other use of it (a
//! function that does not take nested arrays here, a nested result of the statement)
//! fails the verifier as NOT YET SUPPORTED, and the statement goes to the reference:
//! a nested array is never read as a flat one.

use super::*;

/// A nested array while a statement is lowered.
#[derive(Clone, Debug)]
pub(super) enum Nest {
    /// Items of one shape and type: `v`'s trailing `inner` axes are an item's.
    Dense { v: Value, inner: usize },
    /// An array of `shape` whose items (in ravel order) are flat values.
    Items {
        shape: Vec<usize>,
        items: Vec<Value>,
    },
}

impl Nest {
    /// As a statement's nested result ([`Function::nested`]).
    pub(super) fn result(&self) -> NestedResult {
        match self {
            Nest::Items { shape, items } => NestedResult::Items {
                shape: shape.clone(),
                items: items.clone(),
            },
            Nest::Dense { v, inner } => NestedResult::Dense {
                v: *v,
                inner: *inner,
            },
        }
    }
}

/// The most items a nested array is held as one value each ([`Nest::Items`]).
const UNROLLED: usize = 64;

/// An array seen as outer axes and items (of a flat array, its scalars).
#[derive(Clone, Debug)]
struct View {
    v: Value,
    outer: Vec<Dim>,
    item: Vec<Dim>,
}

fn not_yet(what: &str, span: &Span) -> crate::error::Error {
    err::unsupported(
        format!("{what} of nested arrays is not supported on the GPU path yet"),
        span.clone(),
    )
}

impl Lower {
    /// The nested array `v` stands for, if it is one.
    pub(super) fn nest(&self, v: Value) -> Option<&Nest> {
        // An entry outlives an undone trial; the instruction tells whether it holds.
        match self.f.insts.get(v.index()) {
            Some(Inst::Nested { .. }) => self.nests.get(&v),
            _ => None,
        }
    }

    fn stand_in(&mut self, n: Nest, outer: Vec<Dim>, span: &Span) -> Value {
        let ty = Type {
            elem: ElemType::Mixed,
            shape: outer,
        };
        let held = n.result().held(&self.f);
        let v = self.f.push(Inst::Nested { held }, ty, span.clone());
        self.nests.insert(v, n);
        v
    }

    /// The nested array of `v`'s trailing `inner` axes as items (`v` itself for 0).
    fn dense(&mut self, v: Value, inner: usize, span: &Span) -> Value {
        if inner == 0 {
            return v;
        }
        let shape = self.f.ty(v).shape.clone();
        let outer = shape[..shape.len() - inner].to_vec();
        self.stand_in(Nest::Dense { v, inner }, outer, span)
    }

    /// `⊂x`: a scalar holding `x` (a scalar stays itself).
    pub(super) fn enclose(&mut self, x: Value, span: &Span) -> Value {
        if self.f.ty(x).rank() == 0 {
            return x;
        }
        self.stand_in(
            Nest::Items {
                shape: vec![],
                items: vec![x],
            },
            vec![],
            span,
        )
    }

    /// `⊂[axes]x` (`↓x` and `↓[k]x` with one axis): the sub-arrays along `axes`, in
    /// the order given, as the items of an array of the other axes: `x` transposed
    /// so that those axes come last, held dense.
    pub(super) fn enclose_axes(&mut self, x: Value, axes: &[usize], span: &Span) -> Result<Value> {
        let r = self.f.ty(x).rank();
        let order: Vec<usize> = (0..r)
            .filter(|a| !axes.contains(a))
            .chain(axes.iter().copied())
            .collect();
        let moved = if order.iter().enumerate().all(|(i, &a)| i == a) {
            x
        } else {
            let mut perm = vec![0i32; r];
            for (m, &a) in order.iter().enumerate() {
                perm[a] = m as i32 + self.io as i32;
            }
            let p = self.konst(Array::vector(Data::I32(perm)), span.clone());
            self.structural2(Prim::Transpose, p, x, None, span.clone())?
        };
        Ok(self.dense(moved, axes.len(), span))
    }

    /// A strand whose items are not all scalars.
    pub(super) fn list(&mut self, values: &[Value], span: &Span) -> Result<Value> {
        if values.iter().any(|v| self.nest(*v).is_some()) {
            return Err(not_yet("a strand", span));
        }
        self.with_items(vec![values.len()], values.to_vec(), span)
    }

    /// The array of `shape` whose items are `items` (flat values): a simple array
    /// where they are all scalars, else a nested one.
    fn with_items(&mut self, shape: Vec<usize>, items: Vec<Value>, span: &Span) -> Result<Value> {
        if items.iter().any(|v| self.nest(*v).is_some()) {
            return Err(not_yet("an array of nested items", span));
        }
        if !items.iter().all(|v| self.f.ty(*v).rank() == 0) {
            let outer = shape.iter().map(|&d| Dim::Known(d as u64)).collect();
            return Ok(self.stand_in(Nest::Items { shape, items }, outer, span));
        }
        if shape.is_empty() {
            return Ok(items[0]);
        }
        let v = self.stack(&items, span)?;
        let dims = shape.iter().map(|&d| Dim::Known(d as u64)).collect();
        Ok(self.reshape(v, dims, span.clone()))
    }

    /// Values of one shape side by side along a new first axis, in the type that
    /// holds them all: a vector of scalars, the dense array of items.
    pub(super) fn stack(&mut self, values: &[Value], span: &Span) -> Result<Value> {
        let elem = values
            .iter()
            .map(|v| self.f.ty(*v).elem)
            .reduce(ElemType::join)
            .unwrap_or(ElemType::I32);
        let mut out: Option<Value> = None;
        for &v in values {
            let c = self.cast(v, elem);
            let mut one = vec![Dim::Known(1)];
            one.extend(self.f.ty(c).shape.iter().cloned());
            let one = self.reshape(c, one, span.clone());
            out = Some(match out {
                None => one,
                Some(acc) => self.catenate(acc, one, 0, span.clone())?,
            });
        }
        out.ok_or_else(|| not_yet("an empty array", span))
    }

    /// The shape and the items (flat values) of `x` when it has at most [`UNROLLED`]
    /// of them and a known shape: a nested array's, or a simple array's scalars.
    fn items_of(&mut self, x: Value, span: &Span) -> Result<Option<(Vec<usize>, Vec<Value>)>> {
        if let Some(Nest::Items { shape, items }) = self.nest(x) {
            return Ok(Some((shape.clone(), items.clone())));
        }
        let (v, outer, inner) = match self.nest(x) {
            Some(Nest::Dense { v, inner }) => {
                let shape = self.f.ty(*v).shape.clone();
                let k = shape.len() - inner;
                (*v, shape[..k].to_vec(), *inner)
            }
            _ => (x, self.f.ty(x).shape.clone(), 0),
        };
        let Some(dims) = known_dims(&outer) else {
            return Ok(None);
        };
        let n = crate::array::saturating_count(&dims);
        if n > UNROLLED || n == 0 {
            return Ok(None);
        }
        if inner == 0 {
            if let Some(a) = self.known_value(v) {
                let items = (0..n)
                    .map(|i| self.konst(Array::scalar(a.data.get(i)), span.clone()))
                    .collect();
                return Ok(Some((dims, items)));
            }
        }
        if outer.is_empty() {
            return Ok(Some((dims, vec![v])));
        }
        let mut items = Vec::with_capacity(n);
        for i in 0..n {
            // Item i's index along each outer axis (1-based, as `Index` takes).
            let mut rest = i;
            let mut at = vec![0usize; dims.len()];
            for k in (0..dims.len()).rev() {
                at[k] = rest % dims[k];
                rest /= dims[k];
            }
            let axes: Vec<Option<Value>> = at
                .iter()
                .map(|&j| Some(self.konst(Array::scalar(Scalar::I32(j as i32 + 1)), span.clone())))
                .chain((0..inner).map(|_| None))
                .collect();
            items.push(self.index(v, axes, span.clone())?);
        }
        Ok(Some((dims, items)))
    }

    /// `v` as outer axes and items: a nested array held item by item is laminated
    /// into one dense array (its items must share a shape and a type).
    fn view(&mut self, v: Value, span: &Span) -> Result<Option<View>> {
        let shape = self.f.ty(v).shape.clone();
        match self.nest(v).cloned() {
            None => Ok(Some(View {
                v,
                outer: shape,
                item: vec![],
            })),
            Some(Nest::Dense { v, inner }) => {
                let shape = self.f.ty(v).shape.clone();
                let k = shape.len() - inner;
                Ok(Some(View {
                    v,
                    outer: shape[..k].to_vec(),
                    item: shape[k..].to_vec(),
                }))
            }
            Some(Nest::Items { shape, items }) => {
                let ty = self.f.ty(items[0]).clone();
                if items.iter().any(|x| *self.f.ty(*x) != ty) {
                    return Ok(None);
                }
                let outer: Vec<Dim> = shape.iter().map(|&d| Dim::Known(d as u64)).collect();
                let dense: Vec<Dim> = outer.iter().chain(&ty.shape).cloned().collect();
                let v = self.stack(&items, span)?;
                let v = self.reshape(v, dense, span.clone());
                Ok(Some(View {
                    v,
                    outer,
                    item: ty.shape,
                }))
            }
        }
    }

    /// `x` spread to the dense shape `outer ++ item`: its outer axes read result axes
    /// `oaxes`, its item axes the trailing ones (its items are scalars or of `item`'s
    /// shape).
    fn spread(
        &mut self,
        x: &View,
        oaxes: &[usize],
        outer: &[Dim],
        item: &[Dim],
        span: &Span,
    ) -> Value {
        let shape: Vec<Dim> = outer.iter().chain(item).cloned().collect();
        if x.outer.is_empty() && x.item.is_empty() {
            return x.v;
        }
        let mut axes = oaxes.to_vec();
        axes.extend((0..x.item.len()).map(|j| outer.len() + j));
        if axes.iter().copied().eq(0..shape.len()) && self.f.ty(x.v).shape == shape {
            return x.v;
        }
        self.gather(x.v, Gather::Axes(axes), shape, span.clone())
    }

    /// The item shape of a function of two arrays' items: equal, or one side's items
    /// scalars.
    fn item_shape(a: &View, b: &View, span: &Span) -> Result<Vec<Dim>> {
        if a.item == b.item || b.item.is_empty() {
            Ok(a.item.clone())
        } else if a.item.is_empty() {
            Ok(b.item.clone())
        } else {
            Err(not_yet("items of different shapes", span))
        }
    }

    /// The outer shape of `a f¨ b` (and of pervasion), with each side's axis map.
    fn paired(a: &View, b: &View, span: &Span) -> Result<(Vec<Dim>, Vec<usize>, Vec<usize>)> {
        let outer = if a.outer == b.outer || b.outer.is_empty() {
            a.outer.clone()
        } else if a.outer.is_empty() {
            b.outer.clone()
        } else {
            return Err(not_yet("pairing nested arrays of different shapes", span));
        };
        let map = |x: &View| {
            if x.outer.is_empty() {
                vec![]
            } else {
                (0..outer.len()).collect()
            }
        };
        let (ma, mb) = (map(a), map(b));
        Ok((outer, ma, mb))
    }

    /// The outer shape of `a ∘.f b`, with each side's axis map.
    fn crossed(a: &View, b: &View) -> (Vec<Dim>, Vec<usize>, Vec<usize>) {
        let outer: Vec<Dim> = a.outer.iter().chain(&b.outer).cloned().collect();
        let ra = a.outer.len();
        (outer, (0..ra).collect(), (ra..ra + b.outer.len()).collect())
    }

    /// A scalar function of items placed by `(outer, ma, mb)`.
    fn items_binary(
        &mut self,
        op: BinOp,
        a: &View,
        b: &View,
        (outer, ma, mb): (Vec<Dim>, Vec<usize>, Vec<usize>),
        span: &Span,
    ) -> Result<Value> {
        let item = Self::item_shape(a, b, span)?;
        let l = self.spread(a, &ma, &outer, &item, span);
        let r = self.spread(b, &mb, &outer, &item, span);
        let v = self.apply_binary(op, l, r, span.clone())?;
        Ok(self.dense(v, item.len(), span))
    }

    /// `⌽` (or `⊖` when `first`) of items placed by `(outer, ma, mb)`: `a`'s items
    /// the amounts (scalars), `b`'s the arrays rotated.
    fn items_rotate(
        &mut self,
        first: bool,
        a: &View,
        b: &View,
        (outer, ma, mb): (Vec<Dim>, Vec<usize>, Vec<usize>),
        span: &Span,
    ) -> Result<Value> {
        if !a.item.is_empty() || b.item.is_empty() || !self.f.ty(a.v).elem.is_int() {
            return Err(not_yet("this rotation", span));
        }
        let item = b.item.clone();
        let x = self.spread(b, &mb, &outer, &item, span);
        let axis = outer.len() + if first { 0 } else { item.len() - 1 };
        let mut shape: Vec<Dim> = outer.iter().chain(&item).cloned().collect();
        if !matches!(shape[axis], Dim::Known(_)) {
            return Err(not_yet("a rotation along a run-time length", span));
        }
        let elem = self.f.ty(x).elem;
        let by = if a.outer.is_empty() {
            a.v
        } else {
            let mut lines = shape.clone();
            lines.remove(axis);
            self.gather(a.v, Gather::Axes(ma), lines, span.clone())
        };
        let ty = Type {
            elem,
            shape: std::mem::take(&mut shape),
        };
        let v = self
            .f
            .push(Inst::Rotate { arg: x, by, axis }, ty, span.clone());
        Ok(self.dense(v, item.len(), span))
    }

    /// Item `k` (from 0) of the vector `x` (nested, a list, or flat), as a value.
    fn item_of(&mut self, x: Value, k: u64, span: &Span) -> Result<Value> {
        if let Some(Nest::Items { items, .. }) = self.nest(x) {
            return Ok(items[k as usize]);
        }
        let v = self
            .view(x, span)?
            .ok_or_else(|| not_yet("this item", span))?;
        if v.outer.len() != 1 {
            return Err(not_yet("this item", span));
        }
        let at = self.konst(Array::scalar(Scalar::I32(k as i32 + 1)), span.clone());
        let mut axes = vec![Some(at)];
        axes.extend(v.item.iter().map(|_| None));
        self.index(v.v, axes, span.clone())
    }

    /// The number of items of the vector `x` (nested, a list, or flat), if known.
    fn vector_len(&self, x: Value) -> Option<u64> {
        match self.f.ty(x).shape.as_slice() {
            [Dim::Known(n)] => Some(*n),
            _ => None,
        }
    }

    /// `f x` where `x` is nested.
    pub(super) fn nested_monadic(&mut self, f: &Func, x: Value, span: &Span) -> Result<Value> {
        let fspan = f.span.clone();
        let f = self.resolve(f)?;
        // `≡`: 2, or ¯2 where some items are simple scalars (Dyalog's uneven depth).
        if let FuncKind::Prim(Prim::Match) = f.kind {
            let uneven = match self.nest(x) {
                Some(Nest::Items { items, .. }) => items.iter().any(|v| self.f.ty(*v).rank() == 0),
                _ => false,
            };
            let depth = if uneven { -2 } else { 2 };
            return Ok(self.konst(Array::scalar(Scalar::I32(depth)), fspan));
        }
        // `↑` of items of one shape and type: the dense array they make.
        if let FuncKind::Prim(Prim::Take) = f.kind {
            let v = self
                .view(x, &fspan)?
                .ok_or_else(|| not_yet("↑ of items of several shapes or types", &fspan))?;
            return Ok(v.v);
        }
        if let Some(Nest::Items { shape, items }) = self.nest(x).cloned() {
            return self.items_monadic(&f, shape, items, &fspan, span);
        }
        match &f.kind {
            FuncKind::Prim(Prim::Disclose) => {
                let v = self.view(x, &fspan)?.ok_or_else(|| not_yet("⊃", &fspan))?;
                if v.outer
                    .iter()
                    .any(|d| *d == Dim::Known(0) || !matches!(d, Dim::Known(_)))
                {
                    return Err(not_yet("⊃ of an empty or run-time length", &fspan));
                }
                if v.outer.is_empty() {
                    return Ok(v.v);
                }
                let one = self.konst(Array::scalar(Scalar::I32(1)), fspan.clone());
                let axes: Vec<Option<Value>> = v
                    .outer
                    .iter()
                    .map(|_| Some(one))
                    .chain(v.item.iter().map(|_| None))
                    .collect();
                self.index(v.v, axes, fspan)
            }
            FuncKind::Prim(Prim::Comma) => {
                let v = self.view(x, &fspan)?.ok_or_else(|| not_yet(",", &fspan))?;
                let n = known_dims(&v.outer)
                    .ok_or_else(|| not_yet(", of a run-time length", &fspan))?;
                let mut shape = vec![Dim::Known(crate::array::saturating_count(&n) as u64)];
                shape.extend(v.item.iter().cloned());
                let r = self.reshape(v.v, shape, fspan);
                Ok(self.dense(r, v.item.len(), span))
            }
            FuncKind::Prim(p) if UnOp::from_prim(*p).is_some() => {
                let op = UnOp::from_prim(*p).expect("checked");
                self.items_unary(op, x, &fspan)
            }
            FuncKind::Derived {
                op: Op1::Each,
                operand,
            } => match &self.resolve(operand)?.kind {
                FuncKind::Prim(p) if UnOp::from_prim(*p).is_some() => {
                    let op = UnOp::from_prim(*p).expect("checked");
                    self.items_unary(op, x, &fspan)
                }
                // `g/¨` and `g⌿¨`: a reduction of every item, along its own axis.
                FuncKind::Derived {
                    op: op @ (Op1::Reduce | Op1::ReduceFirst),
                    operand: g,
                } => {
                    let (op, g) = (*op, self.resolve(g)?);
                    let Some((v, axis)) = self.item_axis(x, op == Op1::ReduceFirst, &fspan)? else {
                        return Ok(x);
                    };
                    let r = self.fold(&g, op, v.v, axis, fspan)?;
                    Ok(self.dense(r, v.item.len() - 1, span))
                }
                // `⌽¨ ⊖¨`: each item reversed along its last or first axis.
                FuncKind::Prim(p @ (Prim::Reverse | Prim::ReverseFirst)) => {
                    let first = *p == Prim::ReverseFirst;
                    let Some((v, axis)) = self.item_axis(x, first, &fspan)? else {
                        return Ok(x);
                    };
                    let shape = self.f.ty(v.v).shape.clone();
                    let r = self.gather(v.v, Gather::Reverse(axis), shape, fspan);
                    Ok(self.dense(r, v.item.len(), span))
                }
                // A function of a vector made of scalar functions and reductions
                // (`{⍵÷+/⍵}¨`, `(+/÷≢)¨`): applied to every item at once, as `f⍤1`.
                _ => {
                    let operand = operand.clone();
                    let v = self
                        .view(x, &fspan)?
                        .ok_or_else(|| not_yet("this f¨", &fspan))?;
                    if v.item.len() != 1 {
                        return Err(not_yet("this f¨", &fspan));
                    }
                    let rank = self.f.ty(v.v).rank();
                    let r = self
                        .by_rows(&operand, v.v, &fspan)?
                        .ok_or_else(|| not_yet("this f¨", &fspan))?;
                    let inner = (self.f.ty(r).rank() == rank) as usize;
                    Ok(self.dense(r, inner, span))
                }
            },
            // The shape and count of the outer array.
            FuncKind::Prim(p @ (Prim::Rho | Prim::Tally)) => {
                let v = self.view(x, &fspan)?.ok_or_else(|| not_yet("⍴", &fspan))?;
                let dims = known_dims(&v.outer)
                    .ok_or_else(|| not_yet("⍴ of a run-time length", &fspan))?;
                Ok(if *p == Prim::Rho {
                    let d = Data::I32(dims.iter().map(|&d| d as i32).collect());
                    self.konst(Array::vector(d), fspan)
                } else {
                    let n = dims.first().copied().unwrap_or(1) as i32;
                    self.konst(Array::scalar(Scalar::I32(n)), fspan)
                })
            }
            FuncKind::Derived {
                op: op @ (Op1::Reduce | Op1::ReduceFirst),
                operand,
            } => {
                let operand = self.resolve(operand)?;
                let v = self
                    .view(x, &fspan)?
                    .ok_or_else(|| not_yet("this reduction", &fspan))?;
                if v.outer.is_empty() {
                    return Ok(x);
                }
                let axis = if *op == Op1::ReduceFirst {
                    0
                } else {
                    v.outer.len() - 1
                };
                let r = self.fold(&operand, *op, v.v, axis, fspan)?;
                Ok(self.dense(r, v.item.len(), span))
            }
            _ => Err(not_yet("this function", &fspan)),
        }
    }

    /// `x` seen dense, with the axis of its dense array that is an item's first (or,
    /// unless `first`, last) axis; `None` where the items are scalars.
    fn item_axis(&mut self, x: Value, first: bool, span: &Span) -> Result<Option<(View, usize)>> {
        let v = self
            .view(x, span)?
            .ok_or_else(|| not_yet("this f¨", span))?;
        if v.item.is_empty() {
            return Ok(None);
        }
        let axis = match first {
            true => v.outer.len(),
            false => v.outer.len() + v.item.len() - 1,
        };
        Ok(Some((v, axis)))
    }

    fn items_unary(&mut self, op: UnOp, x: Value, span: &Span) -> Result<Value> {
        let v = self
            .view(x, span)?
            .ok_or_else(|| not_yet("this function", span))?;
        if !op.on_gpu_for(self.f.ty(v.v).elem, self.f.float) {
            return Err(not_yet("this function", span));
        }
        let r = self.unary(op, v.v, span.clone())?;
        Ok(self.dense(r, v.item.len(), span))
    }

    /// `a f b` where `a` or `b` is nested.
    pub(super) fn nested_dyadic(
        &mut self,
        f: &Func,
        a: Value,
        b: Value,
        span: &Span,
    ) -> Result<Value> {
        let fspan = f.span.clone();
        let f = self.resolve(f)?;
        // The function applied to pairs of items (pervasion, `¨`), or to each item of
        // one with each of the other (`∘.`).
        let (g, crossed) = match &f.kind {
            // A primitive applies to nested arguments item by item only if it is a
            // scalar function (pervasion); `⌽ ↑ ⍳ ≡ ,` … of nested arrays are not
            // applied to their items.
            FuncKind::Prim(p) if BinOp::from_prim(*p).is_some() => (f.clone(), false),
            FuncKind::Prim(_) => return Err(not_yet("this function", &fspan)),
            FuncKind::Derived {
                op: Op1::Each,
                operand,
            } => (self.resolve(operand)?, false),
            FuncKind::Outer(g) => (self.resolve(g)?, true),
            FuncKind::Inner(fr, g) => {
                let (fr, g) = (self.resolve(fr)?, self.resolve(g)?);
                return self.items_inner(&fr, &g, a, b, &fspan, span);
            }
            _ => return Err(not_yet("this function", &fspan)),
        };
        if let Some(r) = self.items_dyadic(&g, crossed, a, b, &fspan)? {
            return Ok(r);
        }
        let (va, vb) = match (self.view(a, &fspan)?, self.view(b, &fspan)?) {
            (Some(va), Some(vb)) => (va, vb),
            _ => return Err(not_yet("this function of a strand", &fspan)),
        };
        let placed = if crossed {
            Self::crossed(&va, &vb)
        } else {
            Self::paired(&va, &vb, &fspan)?
        };
        match &g.kind {
            FuncKind::Prim(p @ (Prim::Reverse | Prim::ReverseFirst)) => {
                self.items_rotate(*p == Prim::ReverseFirst, &va, &vb, placed, &fspan)
            }
            FuncKind::Prim(p) => match BinOp::from_prim(*p) {
                Some(op) => self.items_binary(op, &va, &vb, placed, &fspan),
                None => Err(not_yet("this function", &fspan)),
            },
            _ => Err(not_yet("this operand", &fspan)),
        }
    }

    /// `a f.g b` of nested vectors (or a nested and a simple one) of a known length:
    /// `g` of each pair of items folded from the right by `f`, the result enclosed.
    fn items_inner(
        &mut self,
        f: &Func,
        g: &Func,
        a: Value,
        b: Value,
        fspan: &Span,
        span: &Span,
    ) -> Result<Value> {
        let (fop, gop) = (self.operand_op(f)?, self.operand_op(g)?);
        let (na, nb) = match (self.vector_len(a), self.vector_len(b)) {
            (Some(na), Some(nb)) => (na, nb),
            _ => return Err(not_yet("an inner product", fspan)),
        };
        if na != nb || na == 0 || na > 16 {
            return Err(not_yet("this inner product", fspan));
        }
        let mut acc: Option<Value> = None;
        for k in (0..na).rev() {
            let (x, y) = (self.item_of(a, k, fspan)?, self.item_of(b, k, fspan)?);
            let v = self.apply_binary(gop, x, y, fspan.clone())?;
            acc = Some(match acc {
                None => v,
                Some(acc) => self.apply_binary(fop, v, acc, fspan.clone())?,
            });
        }
        let acc = acc.expect("at least one item");
        Ok(self.enclose(acc, span))
    }

    /// `f x` of a nested array held item by item: `f` applied to each item (through
    /// `¨` or pervasion), to the items together (`/ ⌿`), or to the structure (`⊃ , ⍴ ≢`).
    fn items_monadic(
        &mut self,
        f: &Func,
        shape: Vec<usize>,
        items: Vec<Value>,
        fspan: &Span,
        span: &Span,
    ) -> Result<Value> {
        match &f.kind {
            FuncKind::Prim(Prim::Disclose) => Ok(items[0]),
            FuncKind::Prim(Prim::Comma) => self.with_items(vec![items.len()], items, span),
            FuncKind::Prim(Prim::Rho) => {
                let d = Data::I32(shape.iter().map(|&d| d as i32).collect());
                Ok(self.konst(Array::vector(d), fspan.clone()))
            }
            FuncKind::Prim(Prim::Tally) => {
                let n = shape.first().copied().unwrap_or(1) as i32;
                Ok(self.konst(Array::scalar(Scalar::I32(n)), fspan.clone()))
            }
            // Pervasion (a scalar function) or `g¨`: the function of each item.
            FuncKind::Prim(p) if UnOp::from_prim(*p).is_some() => {
                self.map_items(f, shape, &items, span)
            }
            FuncKind::Derived {
                op: Op1::Each,
                operand,
            } => {
                let g = self.resolve(operand)?;
                self.map_items(&g, shape, &items, span)
            }
            FuncKind::Derived {
                op: op @ (Op1::Reduce | Op1::ReduceFirst),
                operand,
            } => {
                if shape.is_empty() {
                    return self.with_items(shape, items, span);
                }
                let g = self.resolve(operand)?;
                let axis = if *op == Op1::ReduceFirst {
                    0
                } else {
                    shape.len() - 1
                };
                let n = shape[axis];
                let inner: usize = shape[axis + 1..].iter().product();
                let outer: usize = shape[..axis].iter().product();
                let mut out = Vec::with_capacity(outer * inner);
                for o in 0..outer {
                    for i in 0..inner {
                        let at = |k: usize| items[(o * n + k) * inner + i];
                        let mut acc = at(n - 1);
                        for k in (0..n - 1).rev() {
                            acc = self.dyadic(&g, at(k), acc, span)?;
                        }
                        out.push(acc);
                    }
                }
                let mut shape = shape;
                shape.remove(axis);
                // Each result is an item: the reduction of a vector is a scalar holding it.
                self.with_items(shape, out, span)
            }
            _ => Err(not_yet("this function", fspan)),
        }
    }

    /// `a f b` where `a` or `b` is nested and both are held item by item (or can be):
    /// `f` applied to pairs of items (pervasion and `¨`, with a single item
    /// extended) or to each item of `a` with each of `b` (`∘.`). `None` when they
    /// are too large to hold item by item.
    fn items_dyadic(
        &mut self,
        g: &Func,
        crossed: bool,
        a: Value,
        b: Value,
        span: &Span,
    ) -> Result<Option<Value>> {
        let (Some((sa, ia)), Some((sb, ib))) = (self.items_of(a, span)?, self.items_of(b, span)?)
        else {
            return Ok(None);
        };
        let (shape, pairs): (Vec<usize>, Vec<(Value, Value)>) = if crossed {
            let shape = sa.iter().chain(&sb).copied().collect();
            let pairs = ia
                .iter()
                .flat_map(|&x| ib.iter().map(move |&y| (x, y)))
                .collect();
            (shape, pairs)
        } else if sa == sb {
            (sa, ia.into_iter().zip(ib).collect())
        } else if ia.len() == 1 && sa.len() <= sb.len() {
            (sb, ib.iter().map(|&y| (ia[0], y)).collect())
        } else if ib.len() == 1 && sb.len() <= sa.len() {
            (sa, ia.iter().map(|&x| (x, ib[0])).collect())
        } else {
            return Err(if sa.len() == sb.len() {
                err::length("the arguments' lengths do not match", span.clone())
            } else {
                err::rank("the arguments' ranks do not match", span.clone())
            });
        };
        if pairs.len() > UNROLLED {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(pairs.len());
        for (x, y) in pairs {
            out.push(self.dyadic(g, x, y, span)?);
        }
        self.with_items(shape, out, span).map(Some)
    }

    /// `g` of each item, an array of `shape` again.
    fn map_items(
        &mut self,
        g: &Func,
        shape: Vec<usize>,
        items: &[Value],
        span: &Span,
    ) -> Result<Value> {
        let out = items
            .iter()
            .map(|&x| self.monadic(g, x, span))
            .collect::<Result<Vec<_>>>()?;
        self.with_items(shape, out, span)
    }
}
