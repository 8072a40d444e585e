//! Reductions, scans and products on the reference: `f/ f⌿ f\ f⍀` along any axis
//! (scalar functions in one pass, with APL's right-to-left order and exact or
//! f64-accumulated sums; other functions item by item, `nested::fold_items`), n-wise
//! reductions, and `∘.g` and `f.g`.

use crate::{err, prims, scalar_error, Interp, Result};
use arrc_ir::array::Item;
use arrc_ir::scalar::BinOp;
use arrc_ir::{Array, Data, ElemType, Scalar};
use arrc_syntax::{Expr, ExprKind, Func, FuncKind, Op1, Prim, Span, Stmt};

thread_local! {
    static LEFT_FLOAT_FOLDS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Folds f64 sums and products (`+/` and `×/` of f64 rows) left to right instead of
/// APL's right to left, on this thread: another order, as a device may take (in a
/// tree or in runs), with which the fuzzer tells a program whose outcome hangs on the
/// order of a float fold (`146.5` against `0` for `+/m1,m3,m2` of ±4.6e18 means and
/// ¯365.5; a DOMAIN ERROR against `¯0` for a product of 1e300s and 1e¯310s, whose
/// partial products overflow from the right and underflow from the left).
pub fn set_left_float_folds(on: bool) {
    LEFT_FLOAT_FOLDS.with(|l| l.set(on));
}

impl Interp<'_> {
    /// Applies `f` to two scalars and checks that it returns a scalar.
    pub(crate) fn scalar_call(
        &mut self,
        f: &Func,
        prim: Option<BinOp>,
        a: Scalar,
        b: Scalar,
        span: &Span,
    ) -> Result<Scalar> {
        if let Some(op) = prim {
            return op
                .apply(a, b, self.env.float)
                .map_err(|e| scalar_error(e, span.clone()));
        }
        let r = self.dyadic(f, Array::scalar(a), Array::scalar(b), span)?;
        match (r.rank(), r.as_singleton()) {
            (0, Some(s)) => Ok(s),
            _ => Err(err::domain(
                "the operand must return a scalar here (nested results are not supported)",
                span.clone(),
            )),
        }
    }

    /// The scalar function `f` is: a primitive, or a dfn `{⍺ g ⍵}` of one (folded as
    /// `g` itself, as the device does: `{⍺+⍵}/` is `+/`, an exact sum).
    pub(crate) fn prim_of(&self, f: &Func) -> Option<BinOp> {
        match &f.kind {
            FuncKind::Prim(p) => BinOp::from_prim(*p),
            FuncKind::Dfn(body) => match body.stmts.as_slice() {
                [Stmt::Expr(Expr {
                    kind: ExprKind::Dyadic { func, left, right },
                    ..
                })] if matches!(left.kind, ExprKind::Alpha)
                    && matches!(right.kind, ExprKind::Omega) =>
                {
                    match &func.kind {
                        FuncKind::Prim(p) => BinOp::from_prim(*p),
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// `f/x`, `f⌿x` (right to left), `f\x`, `f⍀x`.
    pub(crate) fn fold(
        &mut self,
        operand: &Func,
        x: &Array,
        span: Span,
        scan: bool,
        first: bool,
    ) -> Result<Array> {
        if x.rank() == 0 {
            return Ok(x.clone());
        }
        let axis = if first { 0 } else { x.rank() - 1 };
        self.fold_along(operand, x, span, scan, axis)
    }

    /// Reduce or scan along `axis`: scalars by a scalar function; items of a nested
    /// array, or by a function that is no scalar function (`,/1 2 3` is `⊂1 2 3`,
    /// `{⍺ ⍵}/1 2 3` is `⊂1(2 3)`), item by item, each result enclosed.
    pub(crate) fn fold_along(
        &mut self,
        operand: &Func,
        x: &Array,
        span: Span,
        scan: bool,
        axis: usize,
    ) -> Result<Array> {
        let of_arrays = self.prim_of(&self.resolve(operand)?).is_none();
        // (An empty simple array keeps its typed empty result or identity.)
        if x.rank() > 0 && (x.elem.is_mixed() || (of_arrays && !x.is_empty())) {
            return self.fold_items(operand, x, axis, scan, &span);
        }
        self.fold_axis(operand, x, span, scan, axis)
    }

    /// `f/x` and `f⌿x` of text or a nested array where Dyalog applies no function
    /// (its rule for Reduce): a scalar is itself; with one item along the axis, or an
    /// empty other axis, the result is `S⍴x` (`+/,'a'` is `'a'`); with none, it is
    /// `S⍴⊂I`, `I` the prototype `⊃x` with each simple scalar in it made `f`'s
    /// identity (`+/''` is 0, `×/0⍴⊂1 2` is `⊂1 1`), or `0/⊃x` for `,/` (`0⌿⊃x` for
    /// `⍪/`); a DOMAIN ERROR for a function with neither. `None`: `f` is applied.
    pub(crate) fn reduce_unapplied(
        &mut self,
        f: &Func,
        x: &Array,
        span: &Span,
    ) -> Result<Option<Array>> {
        let (first, operand) = match &f.kind {
            FuncKind::Derived {
                op: op @ (Op1::Reduce | Op1::ReduceFirst),
                operand,
            } => (*op == Op1::ReduceFirst, operand),
            _ => return Ok(None),
        };
        if x.rank() == 0 {
            return Ok(Some(x.clone()));
        }
        let axis = if first { 0 } else { x.rank() - 1 };
        let n = x.shape[axis];
        let mut shape = x.shape.clone();
        shape.remove(axis);
        let proto = x
            .fill_item()
            .ok_or_else(|| crate::nested::no_prototype(span))?;
        if shape.contains(&0) {
            return Ok(Some(Array::empty_of(shape, &proto)));
        }
        if n == 1 {
            return Ok(Some(Array::new(shape, x.data.clone())));
        }
        if n > 1 {
            return Ok(None);
        }
        let operand = self.resolve(operand)?;
        let proto = proto.open();
        let item = match &operand.kind {
            FuncKind::Prim(p @ (Prim::Comma | Prim::CommaBar)) => {
                let mut s = proto.shape.clone();
                match (s.is_empty(), *p == Prim::Comma) {
                    (true, _) => s.push(0),
                    (false, true) => *s.last_mut().expect("rank ≥ 1") = 0,
                    (false, false) => s[0] = 0,
                }
                let fill = proto
                    .fill_item()
                    .ok_or_else(|| crate::nested::no_prototype(span))?;
                Array::empty_of(s, &fill)
            }
            // `∪`'s identity is `⍬`; rotations' and `⊤`'s 0, replicate's and expand's 1
            // (Dyalog's table of identity elements).
            FuncKind::Prim(Prim::Union) if proto.rank() == 0 && proto.is_simple() => {
                Array::vector(Data::I32(vec![]))
            }
            FuncKind::Prim(Prim::Reverse | Prim::ReverseFirst | Prim::Encode) => {
                with_scalars(&proto, &Scalar::I32(0))
            }
            FuncKind::Prim(Prim::Slash | Prim::SlashBar | Prim::Backslash | Prim::BackslashBar) => {
                with_scalars(&proto, &Scalar::I32(1))
            }
            FuncKind::Prim(p) => {
                let id = BinOp::from_prim(*p)
                    .and_then(|op| op.identity(ElemType::Bool, self.env.float))
                    .ok_or_else(|| no_identity(span))?;
                with_scalars(&proto, &id)
            }
            _ => return Err(no_identity(span)),
        };
        let count = arrc_ir::array::saturating_count(&shape);
        prims::check_size(count, span)?;
        let one = Item::enclose(item);
        let mut data = Data::with_capacity(one.elem_type(), count);
        (0..count).for_each(|_| data.push_item(one.clone()));
        Ok(Some(Array::new(shape, data)))
    }

    /// `n f/[axis] x`: `f/` of each window of `|n|` consecutive items along the axis,
    /// each window reversed when `n` is negative. It is the reduction, along a new
    /// axis after `axis`, of the array of windows.
    pub(crate) fn nwise(
        &mut self,
        operand: &Func,
        n: &Array,
        x: &Array,
        axis: usize,
        span: Span,
    ) -> Result<Array> {
        let windows = x.windows(n, axis, &span)?;
        self.fold_along(operand, &windows, span, false, axis + 1)
    }

    /// Reduce or scan along `axis`.
    pub(crate) fn fold_axis(
        &mut self,
        operand: &Func,
        x: &Array,
        span: Span,
        scan: bool,
        axis: usize,
    ) -> Result<Array> {
        let operand = self.resolve(operand)?;
        if x.rank() == 0 {
            return Ok(x.clone());
        }
        let prim = self.prim_of(&operand);
        // Only a primitive has an identity: `{⍺+⍵}/⍬` is a DOMAIN ERROR.
        let identity_op = prim.filter(|_| matches!(operand.kind, FuncKind::Prim(_)));
        if let FuncKind::Prim(p) = &operand.kind {
            if prim.is_none() {
                return Err(err::domain(
                    format!(
                        "{} is not a scalar function: it cannot be an operand here",
                        p.glyph()
                    ),
                    span,
                ));
            }
        }
        let (outer, n, inner) = x.around(axis);
        let mut shape = x.shape.clone();
        if !scan {
            shape.remove(axis);
        }
        // A fold of one item is that item (`=/,5` is 5), so a function whose results
        // are narrower than its items (comparisons) folds in the items' type.
        let elem = match prim {
            Some(op) => op.reduce_type(x.elem, self.env.float).join(x.elem),
            None => x.elem,
        };
        let count = if scan {
            x.len()
        } else {
            outer.saturating_mul(inner)
        };
        // An empty axis among large ones: that many identities (`+/[2](1e5 0 1e5)⍴0`).
        prims::check_size(count, &span)?;
        let mut out: Vec<Scalar> = vec![Scalar::I32(0); count];
        for o in 0..outer {
            for i in 0..inner {
                arrc_ir::interrupt::check(&span)?;
                let row: Vec<Scalar> = (0..n)
                    .map(|k| x.data.get((o * n + k) * inner + i))
                    .collect();
                if scan {
                    let vals = match prim {
                        Some(op) if op.is_associative(x.elem) => {
                            scan_associative(op, &row, elem, self.env.float, &span)?
                        }
                        Some(BinOp::Sub) if elem == ElemType::I64 => {
                            subtract_scan(&row).map_err(|e| scalar_error(e, span.clone()))?
                        }
                        _ => {
                            // Each prefix folded on its own: O(n²) steps, so the loop
                            // stops when asked (the fuzzer's timeout, Ctrl-C): a `{⍺-⍵}\`
                            // of 65537 items ran for minutes without looking.
                            let mut v = Vec::with_capacity(n);
                            for k in 0..n {
                                arrc_ir::interrupt::check(&span)?;
                                v.push(self.fold_row(prim, &operand, &row[..=k], elem, &span)?);
                            }
                            v
                        }
                    };
                    for (k, v) in vals.into_iter().enumerate() {
                        out[(o * n + k) * inner + i] = v;
                    }
                } else if n == 0 {
                    out[o * inner + i] = identity_op
                        .and_then(|op| op.identity(x.elem, self.env.float))
                        .ok_or_else(|| {
                            err::domain(
                                "this function has no identity element for an empty reduction",
                                span.clone(),
                            )
                        })?;
                } else {
                    out[o * inner + i] = self.fold_row(prim, &operand, &row, elem, &span)?;
                }
            }
        }
        let ty = if n == 0 && !scan {
            identity_op
                .and_then(|op| op.identity(x.elem, self.env.float))
                .map_or(elem, |s| s.elem_type())
        } else {
            elem
        };
        // Finite items folded to something that is not: the float type overflowed
        // (APL has no infinities).
        if ty.is_float() && out.iter().any(|s| !s.cast(ty).as_f64().is_finite()) {
            return Err(err::domain(arrc_ir::scalar::not_finite(ty), span));
        }
        Ok(typed(shape, out, ty))
    }

    /// The right-to-left reduction of a non-empty row.
    pub(crate) fn fold_row(
        &mut self,
        prim: Option<BinOp>,
        operand: &Func,
        row: &[Scalar],
        elem: ElemType,
        span: &Span,
    ) -> Result<Scalar> {
        if prim == Some(BinOp::Mul) && elem.is_float() && row.iter().any(|s| s.as_f64() == 0.0) {
            // A 0 item makes the product 0 whatever the order, as on the device (a right
            // fold could overflow first: `×/0,1e200 1e200` would be a DOMAIN ERROR).
            return Ok(Scalar::float(0.0, elem));
        }
        if let Some(op @ (BinOp::Add | BinOp::Mul)) = prim {
            if elem == ElemType::F32 {
                // Exact-as-possible oracle: accumulate in f64, round once.
                return Ok(f64_running(op, row)
                    .last()
                    .copied()
                    .map_or(Scalar::F32(0.0), Scalar::F32));
            }
        }
        if prim == Some(BinOp::Add) && elem == ElemType::I64 {
            // An integer sum is exact or a DOMAIN ERROR, whatever the order: the device
            // sums in parallel (an intermediate beyond 64 bits is no error if the sum
            // comes back).
            let sum: i128 = row.iter().map(|s| s.as_i64().unwrap_or(0) as i128).sum();
            return i64::try_from(sum)
                .map(Scalar::I64)
                .map_err(|_| scalar_error(arrc_ir::scalar::ScalarError::Overflow, span.clone()));
        }
        if matches!(prim, Some(BinOp::Add | BinOp::Mul))
            && elem == ElemType::F64
            && LEFT_FLOAT_FOLDS.with(|l| l.get())
        {
            let mut acc = row[0].cast(elem);
            for s in &row[1..] {
                acc = self.scalar_call(operand, prim, acc, *s, span)?;
            }
            return Ok(acc.cast(elem));
        }
        let mut acc = row[row.len() - 1];
        if prim.is_some() {
            acc = acc.cast(elem);
        }
        for (k, s) in row[..row.len() - 1].iter().rev().enumerate() {
            if k % 65536 == 65535 {
                arrc_ir::interrupt::check(span)?;
            }
            acc = self.scalar_call(operand, prim, *s, acc, span)?;
        }
        Ok(match prim {
            Some(_) => acc.cast(elem),
            None => acc,
        })
    }

    pub(crate) fn outer(&mut self, g: &Func, a: &Array, b: &Array, span: &Span) -> Result<Array> {
        let g = self.resolve(g)?;
        let prim = self.prim_of(&g);
        if prim.is_none() || a.elem.is_mixed() || b.elem.is_mixed() {
            return self.outer_items(&g, a, b, span);
        }
        let mut shape = a.shape.clone();
        shape.extend(b.shape.iter().copied());
        prims::check_size(a.len().saturating_mul(b.len()), span)?;
        let mut out = Vec::with_capacity(a.len() * b.len());
        for i in 0..a.len() {
            for j in 0..b.len() {
                out.push(self.scalar_call(&g, prim, a.data.get(i), b.data.get(j), span)?);
            }
        }
        let ty = prim.map_or(a.elem.join(b.elem), |op| {
            op.result_type(a.elem, b.elem, self.env.float)
        });
        Ok(typed(shape, out, ty))
    }

    /// `⍺ f.g ⍵`: `f/` of `g` applied along ⍺'s last axis and ⍵'s first.
    pub(crate) fn inner(
        &mut self,
        f: &Func,
        g: &Func,
        a: &Array,
        b: &Array,
        span: &Span,
    ) -> Result<Array> {
        let (f, g) = (self.resolve(f)?, self.resolve(g)?);
        let (fp, gp) = (self.prim_of(&f), self.prim_of(&g));
        let pairs = InnerPairs::new(a, b, span)?;
        let (n, rows, cols) = (pairs.n, pairs.rows, pairs.cols);
        // Functions that are no scalar functions apply to whole items (their results
        // may be arrays: `1 2{⍺,⍵}.{⍺ ⍵}3 4` is `⊂1 3 2 4`).
        if (fp.is_none() || gp.is_none()) && n > 0 {
            return self.inner_items(&f, &g, a, b, span);
        }
        let float = self.env.float;
        let gty = gp.map_or(a.elem.join(b.elem), |op| {
            op.result_type(a.elem, b.elem, float)
        });
        let elem = fp.map_or(gty, |op| op.reduce_type(gty, float));
        let mut out = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                let mut prods = Vec::with_capacity(n);
                for k in 0..n {
                    let (ia, ib) = pairs.at(a, b, r, c, k);
                    prods.push(self.scalar_call(&g, gp, a.data.get(ia), b.data.get(ib), span)?);
                }
                out.push(if n == 0 {
                    fp.filter(|_| matches!(f.kind, FuncKind::Prim(_)))
                        .and_then(|op| op.identity(gty, float))
                        .ok_or_else(|| {
                            err::domain(
                                "this function has no identity element for an empty reduction",
                                span.clone(),
                            )
                        })?
                } else {
                    self.fold_row(fp, &f, &prods, elem, span)?
                });
            }
        }
        // As a fold: finite items that fold to something that is not overflowed.
        if elem.is_float() && out.iter().any(|s| !s.cast(elem).as_f64().is_finite()) {
            return Err(err::domain(arrc_ir::scalar::not_finite(elem), span.clone()));
        }
        Ok(typed(pairs.shape, out, elem))
    }
}

/// How `⍺ f.g ⍵` pairs items: ⍺'s last axis with ⍵'s first (a length of 1, or a
/// scalar, extends), `rows` of ⍺ by `cols` of ⍵ into a result of `shape`.
pub(crate) struct InnerPairs {
    na: usize,
    nb: usize,
    pub(crate) n: usize,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) shape: Vec<usize>,
}

impl InnerPairs {
    pub(crate) fn new(a: &Array, b: &Array, span: &Span) -> Result<InnerPairs> {
        let na = a.shape.last().copied().unwrap_or(1);
        let nb = b.shape.first().copied().unwrap_or(1);
        let n = if na == nb || nb == 1 {
            na
        } else if na == 1 {
            nb
        } else {
            return Err(err::length(
                format!("inner lengths {na} and {nb} do not match"),
                span.clone(),
            ));
        };
        let outer_a = &a.shape[..a.rank().saturating_sub(1)];
        let inner_b = if b.rank() == 0 {
            &[][..]
        } else {
            &b.shape[1..]
        };
        let mut shape = outer_a.to_vec();
        shape.extend(inner_b.iter().copied());
        Ok(InnerPairs {
            na,
            nb,
            n,
            rows: arrc_ir::array::saturating_count(outer_a),
            cols: arrc_ir::array::saturating_count(inner_b),
            shape,
        })
    }

    /// The ravel positions in ⍺ and ⍵ of the `k`-th pair of row `r` and column `c`.
    pub(crate) fn at(&self, a: &Array, b: &Array, r: usize, c: usize, k: usize) -> (usize, usize) {
        let ia = if a.rank() == 0 {
            0
        } else {
            r * self.na + if self.na == 1 { 0 } else { k }
        };
        let ib = if b.rank() == 0 {
            0
        } else {
            (if self.nb == 1 { 0 } else { k }) * self.cols + c
        };
        (ia, ib)
    }
}

/// An array of `ty` from scalars (converted), or typed by the scalars when they are wider.
pub(crate) fn typed(shape: Vec<usize>, items: Vec<Scalar>, ty: ElemType) -> Array {
    let widest = items.iter().map(|s| s.elem_type()).max().unwrap_or(ty);
    let t = if widest > ty { widest } else { ty };
    let mut d = Data::with_capacity(t, items.len());
    items.into_iter().for_each(|s| d.push(s));
    Array::new(shape, d)
}

/// Running sums or products of a row accumulated in f64, each rounded to f32.
fn f64_running(op: BinOp, row: &[Scalar]) -> Vec<f32> {
    let mut acc = if op == BinOp::Add { 0.0f64 } else { 1.0 };
    row.iter()
        .map(|s| {
            acc = if op == BinOp::Add {
                acc + s.as_f64()
            } else {
                acc * s.as_f64()
            };
            acc as f32
        })
        .collect()
}

/// A running scan of an associative function; float sums and products accumulate in f64.
fn scan_associative(
    op: BinOp,
    row: &[Scalar],
    elem: ElemType,
    float: ElemType,
    span: &Span,
) -> Result<Vec<Scalar>> {
    let mut out = Vec::with_capacity(row.len());
    if elem == ElemType::F32 && matches!(op, BinOp::Add | BinOp::Mul) {
        return Ok(f64_running(op, row).into_iter().map(Scalar::F32).collect());
    }
    let mut acc: Option<Scalar> = None;
    for s in row {
        let next = match acc {
            None => s.cast(elem),
            Some(a) => op
                .apply(a, *s, float)
                .map_err(|e| scalar_error(e, span.clone()))?
                .cast(elem),
        };
        out.push(next);
        acc = Some(next);
    }
    Ok(out)
}

/// `-\` of integers in O(n), each item the right fold of its prefix with every step
/// checked (as folding each prefix would, in O(n²): `-\⍳40000` took 16 s).
///
/// With `P[k]` the alternating sum `x0 - x1 + x2 - …` to item k (exact, in i128),
/// prefix k folds to `P[k]`, and its step at item j holds `±(P[k] - P[j-1])` (+ for
/// even j). A step overflows exactly when that value leaves i64, so prefix k fails
/// when `P[k]` is too far from the extremes of `P[j-1]` over even j or over odd j.
fn subtract_scan(row: &[Scalar]) -> std::result::Result<Vec<Scalar>, arrc_ir::scalar::ScalarError> {
    let (lo, hi) = (i64::MIN as i128, i64::MAX as i128);
    let mut out = Vec::with_capacity(row.len());
    let mut p: i128 = 0; // P[j-1]
                         // Extremes of P[j-1] over the even j and the odd j seen so far.
    let (mut even, mut odd) = ((i128::MAX, i128::MIN), (i128::MAX, i128::MIN));
    for (j, s) in row.iter().enumerate() {
        let v = s.as_i64().unwrap_or(0) as i128;
        let ext = if j % 2 == 0 { &mut even } else { &mut odd };
        *ext = (ext.0.min(p), ext.1.max(p));
        p += if j % 2 == 0 { v } else { -v };
        let even_ok = p - even.1 >= lo && p - even.0 <= hi;
        let odd_ok = odd.0 > odd.1 || (odd.0 - p >= lo && odd.1 - p <= hi);
        if !(even_ok && odd_ok) {
            return Err(arrc_ir::scalar::ScalarError::Overflow);
        }
        out.push(Scalar::I64(p as i64));
    }
    Ok(out)
}

fn no_identity(span: &Span) -> arrc_ir::error::Error {
    err::domain(
        "this function has no identity element for an empty reduction",
        span.clone(),
    )
}

/// `a` with each simple scalar in it (at any depth) made `s`.
fn with_scalars(a: &Array, s: &Scalar) -> Array {
    let data = match &a.data {
        Data::Mixed(items) => Data::Mixed(
            items
                .iter()
                .map(|i| match i {
                    Item::Simple(_) => Item::Simple(*s),
                    Item::Boxed(b) => Item::enclose(with_scalars(b, s)),
                })
                .collect(),
        ),
        _ => {
            let mut d = Data::with_capacity(s.elem_type(), a.len());
            (0..a.len()).for_each(|_| d.push(*s));
            d
        }
    };
    Array::new(a.shape.clone(), data)
}
