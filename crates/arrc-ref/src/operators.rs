//! The dyadic operators `⍤` (rank), `⍥` (over) and `@` (at) on the reference.

use super::*;

/// The cells of rank `c` of `x`: the frame (the leading axes) and each cell, in
/// ravel order of the frame.
fn cells(x: &Array, c: usize) -> (Vec<usize>, Vec<Array>) {
    let r = x.rank();
    let frame = x.shape[..r - c].to_vec();
    let cell_shape = x.shape[r - c..].to_vec();
    let size = arrc_ir::array::saturating_count(&cell_shape);
    let count = arrc_ir::array::saturating_count(&frame);
    let out = (0..count)
        .map(|i| {
            let mut d = Data::with_capacity(x.elem, size);
            (0..size).for_each(|t| d.push_from(&x.data, i * size + t));
            Array::new(cell_shape.clone(), d)
        })
        .collect();
    (frame, out)
}

/// The rank of the cells `f⍤k` gives `f` from an array of rank `r`.
fn cell_rank(k: i64, r: usize) -> usize {
    if k >= 0 {
        (k as usize).min(r)
    } else {
        r.saturating_sub(k.unsigned_abs() as usize)
    }
}

/// Results of the cells put together under their frame: each raised to the highest
/// rank among them (leading axes of length 1) and padded with fill to the longest
/// length on each axis, as Dyalog's mix does.
fn assemble(frame: Vec<usize>, results: Vec<Array>, span: &Span) -> Result<Array> {
    let rank = results.iter().map(|r| r.rank()).max().unwrap_or(0);
    let raised: Vec<Vec<usize>> = results
        .iter()
        .map(|r| {
            let mut s = vec![1; rank - r.rank()];
            s.extend(r.shape.iter().copied());
            s
        })
        .collect();
    let mut cell = vec![0usize; rank];
    for s in &raised {
        for (c, &d) in cell.iter_mut().zip(s) {
            *c = (*c).max(d);
        }
    }
    let size = arrc_ir::array::saturating_count(&cell);
    prims::check_size(size.saturating_mul(results.len()), span)?;
    // The type that holds them all (numbers and characters, or nested results,
    // make a mixed array); each result is padded with its own fill.
    let elem = results
        .iter()
        .map(|r| r.elem)
        .reduce(ElemType::join)
        .unwrap_or(ElemType::Bool);
    let mut d = Data::with_capacity(elem, size * results.len());
    for (r, s) in results.iter().zip(&raised) {
        let fill = if r.len() < size {
            Some(prims::fill(r, span)?)
        } else {
            None
        };
        // Position by position in the padded cell: inside `s`, the result's item.
        for t in 0..size {
            let mut rem = t;
            let mut off = 0;
            let mut inside = true;
            let mut stride = size;
            for (k, &len) in cell.iter().enumerate() {
                stride /= len.max(1);
                let c = rem / stride.max(1);
                rem %= stride.max(1);
                if c >= s[k] {
                    inside = false;
                }
                off = off * s[k] + c.min(s[k].saturating_sub(1));
            }
            match (&fill, inside) {
                (Some(f), false) => d.push_item(f.clone()),
                _ => d.push_from(&r.data, off),
            }
        }
    }
    let mut shape = frame;
    shape.extend(cell);
    Ok(Array::new(shape, d))
}

/// `f⍤k ⍵` and `⍺ f⍤k ⍵` with `f` applied by `apply` (`⍺` of a cell, if any, and
/// `⍵`'s cell): the cells of the ranks `kv` gives (monadic, left, right), under the
/// frames they leave (equal, or one empty), the results put together as Dyalog's mix
/// does. An empty frame gives the shape of `f` of a cell of fill items. Shared by the
/// reference and the device path's host-driven `⍤` (each call on the device).
pub fn apply_rank(
    kv: &Array,
    k_span: &Span,
    a: Option<Array>,
    x: Array,
    span: &Span,
    apply: &mut dyn FnMut(Option<Array>, Array) -> Result<Array>,
) -> Result<Array> {
    let ks = prims::int_vector(kv, k_span, "the ranks of ⍤")?;
    let (m, l, r) = match ks.as_slice() {
        [c] => (*c, *c, *c),
        [l, r] => (*r, *l, *r),
        [m, l, r] => (*m, *l, *r),
        _ => return Err(err::length("⍤ takes one to three ranks", k_span.clone())),
    };
    let Some(a) = a else {
        let c = cell_rank(m, x.rank());
        let (frame, xs) = cells(&x, c);
        if xs.is_empty() {
            return empty_frame(None, &x, frame, c, apply);
        }
        let mut out = Vec::with_capacity(xs.len());
        for xc in xs {
            arrc_ir::interrupt::check(span)?;
            out.push(apply(None, xc)?);
        }
        return assemble(frame, out, span);
    };
    let (cl, cr) = (cell_rank(l, a.rank()), cell_rank(r, x.rank()));
    let (fa, a_cells) = cells(&a, cl);
    let (fx, x_cells) = cells(&x, cr);
    let frame = if fa == fx || fx.is_empty() {
        fa.clone()
    } else if fa.is_empty() {
        fx.clone()
    } else if fa.len() != fx.len() {
        return Err(err::rank(
            "the frames of ⍤'s arguments differ in rank",
            span.clone(),
        ));
    } else {
        return Err(err::length(
            "the frames of ⍤'s arguments differ in length",
            span.clone(),
        ));
    };
    let n = arrc_ir::array::saturating_count(&frame);
    if n == 0 {
        return empty_frame(Some((&a, cl)), &x, frame, cr, apply);
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        arrc_ir::interrupt::check(span)?;
        let ac = a_cells[if fa.is_empty() { 0 } else { i }].clone();
        let xc = x_cells[if fx.is_empty() { 0 } else { i }].clone();
        out.push(apply(Some(ac), xc)?);
    }
    assemble(frame, out, span)
}

/// An empty frame: the result's cell shape is that of `f` applied to a cell of fill
/// items (none if that fails).
fn empty_frame(
    a: Option<(&Array, usize)>,
    x: &Array,
    frame: Vec<usize>,
    cr: usize,
    apply: &mut dyn FnMut(Option<Array>, Array) -> Result<Array>,
) -> Result<Array> {
    // A cell of the argument's prototype (its fill item: zeros, blanks, or an empty
    // nested array's prototype).
    let cell_of = |v: &Array, c: usize| {
        let s = v.shape[v.rank() - c..].to_vec();
        let n = arrc_ir::array::saturating_count(&s);
        let fill = v
            .fill_item()
            .unwrap_or_else(|| arrc_ir::array::Item::Simple(Scalar::I32(0).cast(v.elem)));
        Array::new(s, {
            let mut d = Data::with_capacity(v.elem, n);
            (0..n).for_each(|_| d.push_item(fill.clone()));
            d
        })
    };
    let xc = cell_of(x, cr);
    let proto = apply(a.map(|(a, cl)| cell_of(a, cl)), xc);
    let (cell, fill) = match proto {
        Ok(p) => (p.shape.clone(), p.fill_item()),
        // A function the caller cannot apply here (the device path, a nested result):
        // no guess at the result's cells.
        Err(e) if e.class == arrc_ir::error::ErrorClass::Unsupported => return Err(e),
        Err(_) => (vec![], x.fill_item()),
    };
    let mut shape = frame;
    shape.extend(cell);
    let fill = fill.ok_or_else(|| crate::nested::no_prototype(&(0..0)))?;
    Ok(Array::empty_of(shape, &fill))
}

/// `f⌸⍵`: for each unique major cell of ⍵ (in order of first occurrence), `f` (by
/// `apply`) with it as ⍺ and the indices where it occurs (from `io`) as ⍵; `⍺ f⌸⍵`:
/// the keys are ⍺'s major cells and ⍵ is the major cells of ⍵ that go with each. The
/// results are mixed as `⍤`'s. Shared by the reference and the device path's
/// host-driven `⌸` (each group's call on the device).
pub fn apply_key(
    a: Option<Array>,
    x: Array,
    io: i64,
    span: &Span,
    apply: &mut dyn FnMut(Array, Array) -> Result<Array>,
) -> Result<Array> {
    let (keys, vals) = match a {
        Some(a) => {
            let (ka, kx) = (at_least_vector(&a), at_least_vector(&x));
            if ka.shape[0] != kx.shape[0] {
                return Err(err::length(
                    format!("{} keys for {} items", ka.shape[0], kx.shape[0]),
                    span.clone(),
                ));
            }
            (ka, kx)
        }
        None => {
            let k = at_least_vector(&x);
            let n = k.shape[0];
            let idx = Array::vector(Data::I32((0..n as i64).map(|i| (i + io) as i32).collect()));
            (k, idx)
        }
    };
    let first = match keys.elem.is_mixed() {
        true => crate::nested::index_of(&keys, &keys, 0, span)?,
        false => prims::index_of(&keys, &keys, 0, span)?,
    };
    let n = keys.shape[0];
    // Groups in order of first occurrence.
    let mut order: Vec<usize> = vec![];
    let mut members: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..n {
        let g = first.data.get(i).as_i64().unwrap_or(0) as usize;
        if g == i {
            order.push(g);
        }
        members.entry(g).or_default().push(i);
    }
    let (_, key_cells) = cells(&keys, keys.rank() - 1);
    let cell_shape = vals.shape[1..].to_vec();
    let size = arrc_ir::array::saturating_count(&cell_shape);
    let mut out = Vec::with_capacity(order.len());
    for g in &order {
        arrc_ir::interrupt::check(span)?;
        let m = &members[g];
        let mut d = Data::with_capacity(vals.elem, m.len() * size);
        for &i in m {
            (0..size).for_each(|t| d.push_from(&vals.data, i * size + t));
        }
        let mut shape = vec![m.len()];
        shape.extend(cell_shape.iter().copied());
        let group = Array::new(shape, d);
        out.push(apply(key_cells[*g].clone(), group)?);
    }
    if out.is_empty() {
        return Ok(Array::new(vec![0], Data::empty(vals.elem)));
    }
    assemble(vec![order.len()], out, span)
}

impl Interp<'_> {
    /// `f⍤k ⍵` and `⍺ f⍤k ⍵` (see [`apply_rank`]).
    pub(super) fn rank_op(
        &mut self,
        f: &Func,
        k: &Expr,
        a: Option<Array>,
        x: Array,
        span: &Span,
    ) -> Result<Array> {
        let kv = self.expr(k)?;
        apply_rank(&kv, &k.span, a, x, span, &mut |a, x| match a {
            None => self.monadic(f, x, span),
            Some(a) => self.dyadic(f, a, x, span),
        })
    }

    /// `f⍥g ⍵` is `f g ⍵`; `⍺ f⍥g ⍵` is `(g ⍺) f (g ⍵)`.
    pub(super) fn over(
        &mut self,
        f: &Func,
        g: &Func,
        a: Option<Array>,
        x: Array,
        span: &Span,
    ) -> Result<Array> {
        let x = self.monadic(g, x, span)?;
        let a = match a {
            Some(a) => Some(self.monadic(g, a, span)?),
            None => None,
        };
        self.apply(f, a, x, span)
    }

    /// `X@I ⍵`, `f@I ⍵`, `X@g ⍵`, `f@g ⍵` (and `⍺ f@… ⍵`): the major cells of ⍵ at
    /// indices `I`, or its items where `g ⍵` is 1, replaced by `X` or by `f` of them.
    pub(super) fn at(
        &mut self,
        l: &Tine,
        r: &Tine,
        a: Option<Array>,
        x: Array,
        span: &Span,
    ) -> Result<Array> {
        let io = self.io();
        // Where each selected item lies in ⍵'s ravel, and the selection's shape.
        let (places, shape): (Vec<usize>, Vec<usize>) = match r {
            Tine::Array(e) => {
                let idx = self.expr(e)?;
                if x.rank() == 0 {
                    return Err(err::rank("@ with indices needs an array ⍵", span.clone()));
                }
                let n = x.shape[0];
                let cell = arrc_ir::array::saturating_count(&x.shape[1..]);
                let mut places = Vec::with_capacity(idx.len() * cell);
                for i in 0..idx.len() {
                    let v =
                        idx.data.get(i).as_i64().ok_or_else(|| {
                            err::domain("@ needs integer indices", e.span.clone())
                        })? - io;
                    if v < 0 || v >= n as i64 {
                        return Err(prims::index_error(
                            format!("index {} is outside {}…{}", v + io, io, n as i64 - 1 + io),
                            e.span.clone(),
                        ));
                    }
                    places.extend((0..cell).map(|t| v as usize * cell + t));
                }
                let mut shape = idx.shape.clone();
                shape.extend(x.shape[1..].iter().copied());
                (places, shape)
            }
            Tine::Func(g) => {
                let mask = self.monadic(g, x.clone(), span)?;
                if mask.shape != x.shape {
                    return Err(err::length(
                        "@'s right operand must give a boolean array of ⍵'s shape",
                        g.span.clone(),
                    ));
                }
                let mut places = vec![];
                for i in 0..mask.len() {
                    match mask.data.get(i).as_i64() {
                        Some(1) => places.push(i),
                        Some(0) => {}
                        _ => {
                            return Err(err::domain(
                                "@'s right operand must give booleans",
                                g.span.clone(),
                            ))
                        }
                    }
                }
                let n = places.len();
                (places, vec![n])
            }
        };
        let selected = {
            let mut d = Data::with_capacity(x.elem, places.len());
            places.iter().for_each(|&p| d.push_from(&x.data, p));
            Array::new(shape.clone(), d)
        };
        let new = match l {
            Tine::Array(e) => {
                if a.is_some() {
                    return Err(err::syntax_like(
                        "@ with an array left operand takes one argument",
                        span.clone(),
                    ));
                }
                self.expr(e)?
            }
            Tine::Func(f) => self.apply(f, a, selected, span)?,
        };
        let fits = new.rank() == 0
            || new.shape == shape
            || (matches!(r, Tine::Func(_)) && new.len() == places.len());
        if !fits {
            return Err(if new.rank() != shape.len() {
                err::rank(
                    "the new items must have the rank of the items they replace",
                    span.clone(),
                )
            } else {
                err::length(
                    "the new items must have the shape of the items they replace",
                    span.clone(),
                )
            });
        }
        Ok(prims::scatter(&x, &places, &new))
    }

    /// An operator of the user's applied: its body runs as a dfn's, with `⍺⍺` and
    /// `⍵⍵` its operands. The operands are captured first, where they are written:
    /// their function names resolved and their arrays computed here.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn user_op(
        &mut self,
        derived: &Func,
        op: &Func,
        left: &Tine,
        right: Option<&Tine>,
        a: Option<Array>,
        x: Array,
        span: &Span,
    ) -> Result<Array> {
        let opf = self.resolve(op)?;
        let body = opf
            .operator_body_for(
                right.is_some(),
                matches!(left, Tine::Array(_)),
                matches!(right, Some(Tine::Array(_))),
            )
            .map_err(|m| err::syntax_like(m, op.span.clone()))?;
        let mut arrays = HashMap::new();
        let mut functions = HashMap::new();
        for (name, t) in [("⍺⍺", Some(left)), ("⍵⍵", right)] {
            let Some(t) = t else { continue };
            match t {
                Tine::Array(e) => {
                    let v = self.expr(e)?;
                    arrays.insert(name.to_string(), v);
                }
                Tine::Func(g) => {
                    let g = self.capture_operand(g, &mut arrays)?;
                    functions.insert(name.to_string(), g);
                }
            }
        }
        if self.frames.len() >= MAX_DEPTH {
            return Err(err::domain(
                "dfns nest too deeply (recursion limit)",
                span.clone(),
            ));
        }
        if let Some(a) = a {
            arrays.insert("⍺".to_string(), a);
        }
        arrays.insert("⍵".to_string(), x);
        let running: Vec<_> = self
            .frames
            .iter()
            .map(|fr| (fr.dfn.as_ref(), fr.parent))
            .collect();
        let parent = arrc_syntax::ast::lexical_parent(&running, &opf, body);
        self.frames.push(Frame {
            arrays,
            functions,
            dfn: Some(opf.clone()),
            derived: Some(derived.clone()),
            parent,
            system: Vec::new(),
        });
        let r = self.body(&body.stmts, span);
        self.pop_frame();
        r
    }

    /// An operand function as written here: names of functions resolved (through
    /// aliases), arrays computed and held in `arrays` under hidden names.
    fn capture_operand(&mut self, g: &Func, arrays: &mut HashMap<String, Array>) -> Result<Func> {
        let me = std::cell::RefCell::new(self);
        let held = std::cell::RefCell::new(arrays);
        g.capture(
            &mut |f: &Func| me.borrow_mut().resolve(f),
            &mut |e: &Expr| {
                let v = me.borrow_mut().expr(e)?;
                let mut h = held.borrow_mut();
                let name = format!("⍙operand{}", h.len());
                h.insert(name.clone(), v);
                Ok(Expr::new(ExprKind::Name(name), e.span.clone()))
            },
        )
    }

    /// `f⌸⍵` and `⍺ f⌸⍵` (see [`apply_key`]).
    pub(super) fn key(
        &mut self,
        f: &Func,
        a: Option<Array>,
        x: Array,
        span: &Span,
    ) -> Result<Array> {
        let io = self.io();
        apply_key(a, x, io, span, &mut |k, g| self.dyadic(f, k, g, span))
    }

    /// `f⌺s ⍵`: `f` applied to each window of ⍵ (sizes the first row of `s`, steps
    /// its second, 1 by default; its columns the leading axes), centred on the items
    /// (between them for an even size), padded with fill items at the edges; ⍺ is the
    /// padding on each axis (positive at the start, negative at the end).
    pub(super) fn stencil(&mut self, f: &Func, s: &Expr, x: Array, span: &Span) -> Result<Array> {
        let sv = self.expr(s)?;
        let ints = |v: &Array| -> Result<Vec<i64>> {
            (0..v.len())
                .map(|i| {
                    v.data.get(i).as_i64().ok_or_else(|| {
                        err::domain("⌺ needs integer sizes and steps", s.span.clone())
                    })
                })
                .collect()
        };
        let (sizes, steps) = match sv.rank() {
            0 | 1 => {
                let z = ints(&sv)?;
                let one = vec![1; z.len()];
                (z, one)
            }
            2 if sv.shape[0] == 2 => {
                let all = ints(&sv)?;
                let c = sv.shape[1];
                (all[..c].to_vec(), all[c..].to_vec())
            }
            _ => {
                return Err(err::rank(
                    "⌺'s right operand is sizes, or a matrix of sizes and steps",
                    s.span.clone(),
                ))
            }
        };
        let k = sizes.len();
        if k > x.rank() {
            return Err(err::length(
                "⌺ has more window sizes than ⍵ has axes",
                s.span.clone(),
            ));
        }
        if sizes.iter().any(|&z| z < 0) || steps.iter().any(|&m| m < 1) {
            return Err(err::domain(
                "⌺ needs non-negative sizes and positive steps",
                s.span.clone(),
            ));
        }
        // Per axis: the number of windows, and where the first begins.
        let mut counts = Vec::with_capacity(k);
        for a in 0..k {
            let (n, z, m) = (x.shape[a] as i64, sizes[a], steps[a]);
            let centres = if z % 2 == 1 { n } else { (n - 1).max(0) };
            counts.push(((centres + m - 1) / m).max(0) as usize);
        }
        let rest = x.shape[k..].to_vec();
        let mut wshape: Vec<usize> = sizes.iter().map(|&z| z as usize).collect();
        wshape.extend(rest.iter().copied());
        let wsize = arrc_ir::array::saturating_count(&wshape);
        let total = arrc_ir::array::saturating_count(&counts);
        prims::check_size(total.saturating_mul(wsize), span)?;
        let xst = {
            let mut st = vec![1usize; x.rank()];
            for a in (0..x.rank().saturating_sub(1)).rev() {
                st[a] = st[a + 1] * x.shape[a + 1];
            }
            st
        };
        let fill = Scalar::I32(0).cast(x.elem);
        let mut out = Vec::with_capacity(total);
        let mut pos = vec![0usize; k];
        for w in 0..total {
            arrc_ir::interrupt::check(span)?;
            let mut rem = w;
            for a in (0..k).rev() {
                pos[a] = rem % counts[a];
                rem /= counts[a];
            }
            // The window's first position on each axis, and its padding.
            let start: Vec<i64> = (0..k)
                .map(|a| pos[a] as i64 * steps[a] - (sizes[a] - 1) / 2)
                .collect();
            let pad: Vec<i64> = (0..k)
                .map(|a| {
                    let before = (-start[a]).max(0);
                    let after = (start[a] + sizes[a] - x.shape[a] as i64).max(0);
                    if before > 0 {
                        before
                    } else {
                        -after
                    }
                })
                .collect();
            let mut d = Data::with_capacity(x.elem, wsize);
            for t in 0..wsize {
                let mut rem = t;
                let mut off = 0usize;
                let mut inside = true;
                for a in (0..wshape.len()).rev() {
                    let c = rem % wshape[a];
                    rem /= wshape[a];
                    let p = if a < k { start[a] + c as i64 } else { c as i64 };
                    if p < 0 || p >= x.shape[a] as i64 {
                        inside = false;
                    } else {
                        off += p as usize * xst[a];
                    }
                }
                d.push(if inside { x.data.get(off) } else { fill });
            }
            let window = Array::new(wshape.clone(), d);
            let padding = Array::vector(Data::I64(pad));
            out.push(self.dyadic(f, padding, window, span)?);
        }
        if out.is_empty() {
            // No window: the cells have the shape of `f` of a window of fill items.
            let fill_window = Array::new(wshape.clone(), {
                let mut d = Data::with_capacity(x.elem, wsize);
                (0..wsize).for_each(|_| d.push(fill));
                d
            });
            let padding = Array::vector(Data::I64(vec![0; k]));
            let (cell, elem) = match self.dyadic(f, padding, fill_window, span) {
                Ok(p) => (p.shape, p.elem),
                Err(_) => (vec![], x.elem),
            };
            let mut shape = counts;
            shape.extend(cell);
            return Ok(Array::new(shape, Data::empty(elem)));
        }
        assemble(counts, out, span)
    }
}

/// A scalar as a one-item vector.
fn at_least_vector(x: &Array) -> Array {
    if x.rank() == 0 {
        Array::new(vec![1], x.data.clone())
    } else {
        x.clone()
    }
}
