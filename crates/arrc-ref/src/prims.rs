//! Structural primitive functions with Dyalog semantics, on arrays of any rank.
//! Every function takes the index origin `io` where indices matter, and the span of its
//! glyph for errors.

use arrc_ir::array::Item;
use arrc_ir::error::{err, Error, ErrorClass, Result};
use arrc_ir::{Array, Data, ElemType, Scalar};
use arrc_syntax::Span;

/// The most elements one array may hold on the CPU reference by default (2^28).
pub const MAX_ELEMENTS: usize = 1 << 28;

/// The most dfn calls one evaluation may make by default.
pub const MAX_CALLS: u64 = 100_000_000;

thread_local! {
    static LIMIT: std::cell::Cell<usize> = const { std::cell::Cell::new(MAX_ELEMENTS) };
    pub(crate) static CALL_LIMIT: std::cell::Cell<u64> = const { std::cell::Cell::new(MAX_CALLS) };
    static LAST_REFUSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Sets this thread's limits: elements per array (WS FULL beyond it) and dfn calls per
/// evaluation (so that runaway recursion such as `{(∇⍵)+∇⍵}` ends in an error).
/// Fuzzing uses small ones.
pub fn set_limits(elements: usize, calls: u64) {
    LIMIT.with(|l| l.set(elements.min(MAX_ELEMENTS)));
    CALL_LIMIT.with(|l| l.set(calls));
}

/// WS FULL when a result of `n` elements would exceed the limit.
/// The element count of the last result this thread's reference refused as WS FULL:
/// a caller with a larger limit (the device) can tell its own limit from the
/// reference's.
pub fn last_refused_size() -> usize {
    LAST_REFUSED.with(|l| l.get())
}

/// Forgets the last refusal (each evaluation starts with none).
pub(crate) fn clear_refused() {
    LAST_REFUSED.with(|l| l.set(0));
}

pub(crate) fn check_size(n: usize, span: &Span) -> Result<()> {
    let limit = LIMIT.with(|l| l.get());
    if n > limit {
        LAST_REFUSED.with(|l| l.set(n));
        return Err(err::ws_full(
            format!("a result of {n} elements exceeds the limit of {limit}"),
            span.clone(),
        ));
    }
    Ok(())
}

pub(crate) fn index_error(m: impl Into<String>, s: Span) -> Error {
    Error::new(ErrorClass::Index, m, s)
}

pub(crate) fn axis_error(m: impl Into<String>, s: Span) -> Error {
    Error::new(ErrorClass::Axis, m, s)
}

/// Builds an array from scalars, typed by the widest of them (or `ty` when empty).
pub(crate) fn from_scalars(shape: Vec<usize>, items: Vec<Scalar>, ty: ElemType) -> Array {
    let t = items.iter().map(|s| s.elem_type()).max().unwrap_or(ty);
    let t = if items.is_empty() { ty } else { t };
    let mut d = Data::with_capacity(t, items.len());
    items.into_iter().for_each(|s| d.push(s));
    Array::new(shape, d)
}

/// The fill item of `x`: its prototype (see [`crate::nested::prototype`]).
pub(crate) fn fill(x: &Array, span: &Span) -> Result<Item> {
    x.fill_item()
        .ok_or_else(|| crate::nested::no_prototype(span))
}

fn items(a: &Array) -> Vec<Scalar> {
    (0..a.len()).map(|i| a.data.get(i)).collect()
}

fn int_of(s: Scalar, span: &Span, what: &str) -> Result<i64> {
    s.as_i64()
        .ok_or_else(|| err::domain(format!("{what} must be integers"), span.clone()))
}

/// The integers of a scalar or vector (left arguments such as `2 3⍴`).
pub(crate) fn int_vector(a: &Array, span: &Span, what: &str) -> Result<Vec<i64>> {
    if a.rank() > 1 {
        return Err(err::rank(
            format!("{what} must be a scalar or vector"),
            span.clone(),
        ));
    }
    (0..a.len())
        .map(|i| int_of(a.data.get(i), span, what))
        .collect()
}

fn shape_array(shape: &[usize]) -> Array {
    Array::vector(Data::I32(shape.iter().map(|&d| d as i32).collect()))
}

/// `⍴⍵`
pub(crate) fn shape_of(x: &Array) -> Array {
    shape_array(&x.shape)
}

/// `⍺⍴⍵`: data cycled to fill the new shape; an empty ⍵ fills with zeros.
pub(crate) fn reshape(a: &Array, x: &Array, span: &Span) -> Result<Array> {
    let dims = int_vector(a, span, "the shape")?;
    if dims.iter().any(|&d| d < 0) {
        return Err(err::domain("a shape cannot be negative", span.clone()));
    }
    let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let n = arrc_ir::array::element_count(&shape).unwrap_or(usize::MAX);
    check_size(n, span)?;
    let mut d = Data::with_capacity(x.elem, n);
    if x.is_empty() {
        let f = fill(x, span)?;
        (0..n).for_each(|_| d.push_item(f.clone()));
    } else {
        (0..n).for_each(|i| d.push_from(&x.data, i % x.len()));
    }
    Ok(Array::new(shape, d))
}

/// `,⍵`
pub(crate) fn ravel(x: &Array) -> Array {
    Array::new(vec![x.len()], x.data.clone())
}

/// `⍪⍵`: a matrix of the first axis by the rest.
pub(crate) fn table(x: &Array) -> Array {
    let rows = x.shape.first().copied().unwrap_or(1);
    let cols = if x.rank() == 0 {
        1
    } else {
        arrc_ir::array::saturating_count(&x.shape[1..])
    };
    Array::new(vec![rows, cols], x.data.clone())
}

/// Splits a shape around `axis`: (outer, length, inner).
fn around(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = arrc_ir::array::saturating_count(&shape[..axis]);
    let inner = arrc_ir::array::saturating_count(&shape[axis + 1..]);
    (outer, shape[axis], inner)
}

/// `⍺,⍵` (last axis) and `⍺⍪⍵` (first axis).
pub(crate) fn catenate(a: &Array, b: &Array, first: bool, span: &Span) -> Result<Array> {
    let r = a.rank().max(b.rank()).max(1);
    catenate_axis(a, b, if first { 0 } else { r - 1 }, span)
}

/// `⍺,[k]⍵`.
pub(crate) fn catenate_axis(a: &Array, b: &Array, axis: usize, span: &Span) -> Result<Array> {
    let ty = a.elem.join(b.elem);
    // Scalars and lower-rank arguments are extended to the other's shape.
    let (a, b) = if a.rank() == 0 && b.rank() == 0 {
        (ravel(a), ravel(b))
    } else {
        (a.clone(), b.clone())
    };
    let r = a.rank().max(b.rank());
    if axis >= r {
        return Err(axis_error(
            format!("axis {} does not exist for rank {r}", axis + 1),
            span.clone(),
        ));
    }
    let lift = |x: &Array, other: &Array| -> Result<Array> {
        if x.rank() == r {
            return Ok(x.clone());
        }
        if x.rank() == 0 {
            let mut shape = other.shape.clone();
            shape[axis] = 1;
            let n: usize = arrc_ir::array::saturating_count(&shape);
            let mut d = Data::with_capacity(x.elem, n);
            (0..n).for_each(|_| d.push_from(&x.data, 0));
            return Ok(Array::new(shape, d));
        }
        if x.rank() + 1 == r {
            let mut shape = x.shape.clone();
            shape.insert(axis, 1);
            return Ok(Array::new(shape, x.data.clone()));
        }
        Err(err::rank(
            "the arguments' ranks differ by more than one",
            span.clone(),
        ))
    };
    let a2 = lift(&a, &b)?;
    let b2 = lift(&b, &a)?;
    for k in 0..r {
        if k != axis && a2.shape[k] != b2.shape[k] {
            return Err(err::length(
                format!("lengths {} and {} do not match", a2.shape[k], b2.shape[k]),
                span.clone(),
            ));
        }
    }
    let (outer, na, inner) = around(&a2.shape, axis);
    let nb = b2.shape[axis];
    let mut shape = a2.shape.clone();
    shape[axis] = na + nb;
    let mut d = Data::with_capacity(ty, a2.len() + b2.len());
    for o in 0..outer {
        for i in 0..na * inner {
            d.push_from(&a2.data, o * na * inner + i);
        }
        for i in 0..nb * inner {
            d.push_from(&b2.data, o * nb * inner + i);
        }
    }
    Ok(Array::new(shape, d))
}

/// `⌽⍵` / `⊖⍵` and `⍺⌽⍵` / `⍺⊖⍵`.
pub(crate) fn rotate(a: Option<&Array>, x: &Array, first: bool, span: &Span) -> Result<Array> {
    if x.rank() == 0 {
        return Ok(x.clone());
    }
    let axis = if first { 0 } else { x.rank() - 1 };
    rotate_axis(a, x, axis, span)
}

/// `⌽[k]⍵` and `⍺⌽[k]⍵`.
pub(crate) fn rotate_axis(a: Option<&Array>, x: &Array, axis: usize, span: &Span) -> Result<Array> {
    if x.rank() == 0 {
        return Ok(x.clone());
    }
    let (outer, n, inner) = around(&x.shape, axis);
    let amounts: Vec<i64> = match a {
        None => vec![],
        Some(a) if a.len() == 1 => {
            vec![int_of(a.data.get(0), span, "rotation amounts")?; outer * inner]
        }
        Some(a) => {
            let mut want = x.shape.clone();
            want.remove(axis);
            if a.shape.len() != want.len() {
                return Err(err::rank(
                    format!(
                        "⌽ amounts of rank {} for lines of rank {}",
                        a.shape.len(),
                        want.len()
                    ),
                    span.clone(),
                ));
            }
            if a.shape != want {
                return Err(err::length(
                    "the rotation amounts do not match the other axes",
                    span.clone(),
                ));
            }
            (0..a.len())
                .map(|i| int_of(a.data.get(i), span, "rotation amounts"))
                .collect::<Result<_>>()?
        }
    };
    let mut d = Data::with_capacity(x.elem, x.len());
    for o in 0..outer {
        for k in 0..n {
            for i in 0..inner {
                let src = match a {
                    None => n - 1 - k,
                    Some(_) if n == 0 => 0,
                    Some(_) => (k as i64 + amounts[o * inner + i]).rem_euclid(n as i64) as usize,
                };
                d.push_from(&x.data, (o * n + src) * inner + i);
            }
        }
    }
    Ok(Array::new(x.shape.clone(), d))
}

/// Row-major strides of a shape.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * shape[k + 1];
    }
    s
}

/// Visits every multi-index of `shape` in ravel order.
fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize]) -> Result<()>) -> Result<()> {
    let n: usize = arrc_ir::array::saturating_count(shape);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        f(&idx)?;
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(())
}

/// `⍉⍵` (axes reversed) and `⍺⍉⍵` (axis k of ⍵ becomes axis ⍺[k]; repeats take diagonals).
pub(crate) fn transpose(a: Option<&Array>, x: &Array, io: i64, span: &Span) -> Result<Array> {
    let r = x.rank();
    let perm: Vec<usize> = match a {
        None => (0..r).rev().collect(),
        Some(a) => {
            let p = int_vector(a, span, "a transpose's axes")?;
            if p.len() != r {
                return Err(err::length(
                    format!("⍉ needs {r} axes, got {}", p.len()),
                    span.clone(),
                ));
            }
            let p: Vec<i64> = p.iter().map(|v| v - io).collect();
            let max = p.iter().copied().max().unwrap_or(-1);
            if p.iter().any(|&v| v < 0) || (0..=max).any(|k| !p.contains(&k)) {
                return Err(axis_error(
                    "the axes must be a permutation, perhaps with repeats",
                    span.clone(),
                ));
            }
            p.iter().map(|&v| v as usize).collect()
        }
    };
    let rr = perm.iter().map(|&p| p + 1).max().unwrap_or(0);
    let mut shape = vec![usize::MAX; rr];
    for (k, &p) in perm.iter().enumerate() {
        shape[p] = shape[p].min(x.shape[k]);
    }
    let st = strides(&x.shape);
    let mut out = Data::with_capacity(x.elem, arrc_ir::array::saturating_count(&shape));
    for_each_index(&shape, |idx| {
        let off: usize = perm.iter().enumerate().map(|(k, &p)| idx[p] * st[k]).sum();
        out.push_from(&x.data, off);
        Ok(())
    })?;
    Ok(Array::new(shape, out))
}

/// `⍺↑[k]⍵` and `⍺↓[k]⍵`: one count, along axis `k` (0-based); the other axes
/// whole.
pub(crate) fn take_drop_axis(
    a: &Array,
    x: &Array,
    drop: bool,
    axis: usize,
    span: &Span,
) -> Result<Array> {
    let counts = int_vector(a, span, "take and drop counts")?;
    let [c] = counts.as_slice() else {
        return Err(err::length(
            format!("{} counts for one axis", counts.len()),
            span.clone(),
        ));
    };
    let x = if x.rank() == 0 {
        Array::new(vec![1], x.data.clone())
    } else {
        x.clone()
    };
    let full: Vec<i32> = (0..x.rank())
        .map(|k| match k {
            _ if k == axis => *c as i32,
            _ if drop => 0,
            _ => x.shape[k] as i32,
        })
        .collect();
    take_drop(&Array::vector(Data::I32(full)), &x, drop, span)
}

/// `⍺↑⍵` and `⍺↓⍵`.
pub(crate) fn take_drop(a: &Array, x: &Array, drop: bool, span: &Span) -> Result<Array> {
    let counts = int_vector(a, span, "take and drop counts")?;
    let x = if x.rank() == 0 {
        Array::new(vec![1; counts.len().max(1)], x.data.clone())
    } else {
        x.clone()
    };
    if counts.len() > x.rank() {
        return Err(err::length(
            format!("{} counts for a rank-{} array", counts.len(), x.rank()),
            span.clone(),
        ));
    }
    // For each axis: result length and the source offset of result index 0.
    let mut shape = x.shape.clone();
    let mut offset = vec![0i64; x.rank()];
    for (k, &c) in counts.iter().enumerate() {
        let n = x.shape[k] as i64;
        if drop {
            let len = (n - c.abs()).max(0);
            shape[k] = len as usize;
            offset[k] = if c > 0 { c } else { 0 };
        } else {
            shape[k] = c.unsigned_abs() as usize;
            offset[k] = if c >= 0 { 0 } else { n + c };
        }
    }
    let count = arrc_ir::array::element_count(&shape).unwrap_or(usize::MAX);
    check_size(count, span)?;
    let st = strides(&x.shape);
    let mut out = Data::with_capacity(x.elem, count);
    let fill = fill(&x, span);
    for_each_index(&shape, |idx| {
        let mut off = 0usize;
        let mut inside = true;
        for k in 0..idx.len() {
            let s = idx[k] as i64 + offset[k];
            if s < 0 || s >= x.shape[k] as i64 {
                inside = false;
                break;
            }
            off += s as usize * st[k];
        }
        if inside {
            out.push_from(&x.data, off);
        } else {
            out.push_item(fill.clone()?);
        }
        Ok(())
    })?;
    Ok(Array::new(shape, out))
}

pub(crate) fn same(a: Scalar, b: Scalar) -> bool {
    if a.elem_type().is_char() || b.elem_type().is_char() {
        return a == b;
    }
    match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) if a.elem_type().is_int() && b.elem_type().is_int() => x == y,
        _ if a.elem_type() == ElemType::F64 || b.elem_type() == ElemType::F64 => {
            arrc_ir::scalar::tolerant_eq(a.as_f64(), b.as_f64())
        }
        _ => (a.as_f64() as f32) == (b.as_f64() as f32),
    }
}

/// `⍺⍳⍵`: the index of the first occurrence in ⍺ of each item of ⍵ (1+≢⍺ if absent).
pub(crate) fn index_of(a: &Array, x: &Array, io: i64, span: &Span) -> Result<Array> {
    if a.rank() == 0 {
        return Err(err::rank(
            "⍺⍳⍵ needs a vector ⍺, or an array of major cells",
            span.clone(),
        ));
    }
    if a.rank() > 1 {
        // The first major cell of ⍺ equal to each cell of ⍵ of that shape.
        let cr = a.rank() - 1;
        if x.rank() < cr {
            return Err(err::rank(
                "the right argument's rank is below the left argument's cells'",
                span.clone(),
            ));
        }
        if x.shape[x.rank() - cr..] != a.shape[1..] {
            return Err(err::length(
                "the right argument's cells must have the shape of the left argument's major cells",
                span.clone(),
            ));
        }
        let k: usize = arrc_ir::array::saturating_count(&a.shape[1..]);
        let r = a.shape[0];
        let lead = x.shape[..x.rank() - cr].to_vec();
        let s: usize = arrc_ir::array::saturating_count(&lead);
        // Item by item: simple scalars as `=` compares them, enclosed arrays matching.
        let out = (0..s)
            .map(|i| {
                let hit = (0..r).find(|&j| {
                    (0..k).all(|t| {
                        crate::nested::same_item(&a.data.item(j * k + t), &x.data.item(i * k + t))
                    })
                });
                (hit.unwrap_or(r) as i64 + io) as i32
            })
            .collect();
        return Ok(Array::new(lead, Data::I32(out)));
    }
    let hay = FirstIndex::new(a, x.elem);
    let out: Vec<i32> = (0..x.len())
        .map(|i| {
            let k = hay.find(x.data.get(i)).unwrap_or(a.len());
            (k as i64 + io) as i32
        })
        .collect();
    Ok(Array::new(x.shape.clone(), Data::I32(out)))
}

/// `⍺∊⍵`: whether each item of ⍺ occurs in ⍵.
pub(crate) fn member(a: &Array, x: &Array) -> Array {
    let hay = FirstIndex::new(x, a.elem);
    let out = (0..a.len())
        .map(|i| hay.find(a.data.get(i)).is_some())
        .collect();
    Array::new(a.shape.clone(), Data::Bool(out))
}

/// The first index of each value of a vector, for `⍳` and `∊` in O(n log n): by hash
/// where equality is exact (integers; f32, which compares as f32), by a sorted copy
/// where it is tolerant (f64 within ⎕CT). Agrees with [`same`].
enum FirstIndex {
    Exact {
        first: std::collections::HashMap<u64, usize>,
        as_int: bool,
    },
    Tolerant {
        /// (value, index) sorted by value, then index.
        sorted: Vec<(f64, usize)>,
        /// For each position, the first position after its run of equal values.
        run_end: Vec<usize>,
    },
}

impl FirstIndex {
    /// `hay`'s values, to be searched for needles of type `needles`.
    fn new(hay: &Array, needles: ElemType) -> FirstIndex {
        let vals = items(hay);
        if vals.iter().any(|v| v.elem_type() == ElemType::F64) || needles == ElemType::F64 {
            let mut sorted: Vec<(f64, usize)> = vals
                .iter()
                .enumerate()
                // -0 as 0: the order must make equal values one run, in index order
                // (`total_cmp` put -0 first, and a 0 before a -0 was not found).
                .map(|(i, v)| (v.as_f64() + 0.0, i))
                .collect();
            sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let mut run_end = vec![sorted.len(); sorted.len()];
            for p in (0..sorted.len().saturating_sub(1)).rev() {
                run_end[p] = if sorted[p + 1].0 == sorted[p].0 {
                    run_end[p + 1]
                } else {
                    p + 1
                };
            }
            return FirstIndex::Tolerant { sorted, run_end };
        }
        let as_int = hay.elem.is_int() && needles.is_int();
        let mut first = std::collections::HashMap::with_capacity(vals.len());
        for (i, v) in vals.iter().enumerate() {
            first.entry(Self::key(*v, as_int)).or_insert(i);
        }
        FirstIndex::Exact { first, as_int }
    }

    fn key(v: Scalar, as_int: bool) -> u64 {
        // A character's key is its code point above every number's (2^32 and up: no
        // f32 bit pattern or i64 reaches it in the tag bit 63).
        if let Scalar::Char(c) = v {
            return (1 << 63) | c as u64;
        }
        if as_int {
            v.as_i64().unwrap_or(0) as u64
        } else {
            // f32 comparison: -0 is 0.
            let f = v.as_f64() as f32;
            (if f == 0.0 { 0.0f32 } else { f }).to_bits() as u64
        }
    }

    /// The first index of a value equal to `v`.
    fn find(&self, v: Scalar) -> Option<usize> {
        match self {
            FirstIndex::Exact { first, as_int } => {
                if *as_int && v.elem_type().is_float() {
                    return None;
                }
                first.get(&Self::key(v, *as_int)).copied()
            }
            FirstIndex::Tolerant { sorted, run_end } => {
                // Every value within ⎕CT of y lies within 2⎕CT|y| of it; each distinct
                // value there once, its run's first index the smallest.
                let y = v.as_f64();
                let d = 2.0 * arrc_ir::scalar::comparison_tolerance() * y.abs();
                let mut p = sorted.partition_point(|e| e.0 < y - d);
                let mut best: Option<usize> = None;
                while p < sorted.len() && sorted[p].0 <= y + d {
                    if same(Scalar::F64(sorted[p].0), v) {
                        best = Some(best.map_or(sorted[p].1, |b| b.min(sorted[p].1)));
                    }
                    p = run_end[p];
                }
                best
            }
        }
    }
}

/// `⍸⍵` of a boolean or non-negative integer vector.
pub(crate) fn where_(x: &Array, io: i64, span: &Span) -> Result<Array> {
    if x.rank() > 1 {
        let flat = where_(&ravel(x), 0, span)?;
        return Ok(crate::nested::index_vectors(&flat, &x.shape, io));
    }
    // Every count is checked before the result's size (as the device does).
    let counts = (0..x.len())
        .map(|i| match int_of(x.data.get(i), span, "⍸'s argument")? {
            c if c < 0 => Err(err::domain("⍸ needs non-negative counts", span.clone())),
            c => Ok(c),
        })
        .collect::<Result<Vec<i64>>>()?;
    let mut out = Vec::new();
    for (i, &c) in counts.iter().enumerate() {
        check_size(out.len().saturating_add(c as usize), span)?;
        (0..c).for_each(|_| out.push((i as i64 + io) as i32));
    }
    Ok(Array::vector(Data::I32(out)))
}

/// `⍺/⍵` (last axis) and `⍺⌿⍵` (first axis): compress and replicate; negative counts
/// insert fill elements.
pub(crate) fn replicate(a: &Array, x: &Array, first: bool, span: &Span) -> Result<Array> {
    replicate_axis(a, x, if first { Some(0) } else { None }, span)
}

/// `⍺/[k]⍵`: compress and replicate along axis `k` (the last when `None`).
pub(crate) fn replicate_axis(
    a: &Array,
    x: &Array,
    axis: Option<usize>,
    span: &Span,
) -> Result<Array> {
    let counts = int_vector(a, span, "replicate counts")?;
    // A scalar extends to the counts' length (`⍬/5` is empty).
    let x = if x.rank() == 0 {
        Array::new(vec![counts.len()], {
            let mut d = Data::with_capacity(x.elem, counts.len());
            (0..counts.len()).for_each(|_| d.push_from(&x.data, 0));
            d
        })
    } else {
        x.clone()
    };
    let axis = axis.unwrap_or(x.rank() - 1).min(x.rank() - 1);
    let (outer, n, inner) = around(&x.shape, axis);
    let counts = if counts.len() == 1 {
        vec![counts[0]; n]
    } else {
        counts
    };
    if counts.len() != n {
        return Err(err::length(
            format!("{} counts for an axis of length {n}", counts.len()),
            span.clone(),
        ));
    }
    let total: usize = counts
        .iter()
        .map(|c| c.unsigned_abs() as usize)
        .fold(0usize, |a, c| a.saturating_add(c));
    // The axis alone too, even when the result is empty (`(2*62)⌿3 0⍴0` is WS FULL,
    // as on the device, and its loop would not end).
    check_size(total, span)?;
    check_size(total.saturating_mul(outer * inner), span)?;
    let mut shape = x.shape.clone();
    shape[axis] = total;
    let fill = fill(&x, span);
    let mut d = Data::with_capacity(x.elem, outer * total * inner);
    for o in 0..outer {
        for (k, &c) in counts.iter().enumerate() {
            for _ in 0..c.unsigned_abs() {
                for i in 0..inner {
                    if c > 0 {
                        d.push_from(&x.data, (o * n + k) * inner + i);
                    } else {
                        d.push_item(fill.clone()?);
                    }
                }
            }
        }
    }
    Ok(Array::new(shape, d))
}

/// `⍋⍵` / `⍒⍵`: a stable grade of the major cells, compared in ravel order.
pub(crate) fn grade(x: &Array, down: bool, io: i64, span: &Span) -> Result<Array> {
    if x.rank() == 0 {
        return Err(err::rank(
            "⍋ and ⍒ need an array of rank 1 or more",
            span.clone(),
        ));
    }
    let n = x.shape[0];
    if x.elem.is_mixed() {
        // Nested and mixed cells: Dyalog's total array ordering.
        return Ok(graded(n, down, io, crate::nested::cell_order(x)));
    }
    let cell = x.len().checked_div(n).unwrap_or(0);
    // Integers compare exactly (as f64, 2^62-1 and 2^62 tie), floats as floats,
    // characters by code point.
    let int = x.elem.is_int();
    let cmp = |p: usize, q: usize| -> std::cmp::Ordering {
        (0..cell)
            .map(|k| {
                let (a, b) = (x.data.get(p * cell + k), x.data.get(q * cell + k));
                if let (Scalar::Char(a), Scalar::Char(b)) = (a, b) {
                    a.cmp(&b)
                } else if int {
                    a.as_i64().cmp(&b.as_i64())
                } else {
                    a.as_f64()
                        .partial_cmp(&b.as_f64())
                        .unwrap_or(std::cmp::Ordering::Equal)
                }
            })
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    Ok(graded(n, down, io, cmp))
}

/// The stable grade (origin `io`) of `n` major cells that `cmp` orders.
fn graded(
    n: usize,
    down: bool,
    io: i64,
    cmp: impl Fn(usize, usize) -> std::cmp::Ordering,
) -> Array {
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&p, &q| {
        let o = cmp(p, q);
        if down {
            o.reverse()
        } else {
            o
        }
    });
    Array::vector(Data::I32(
        idx.into_iter().map(|i| (i as i64 + io) as i32).collect(),
    ))
}

/// Where each item `select` would take lies in `x`'s ravel, in the selection's order.
pub(crate) fn select_places(
    x: &Array,
    axes: &[Option<Array>],
    io: i64,
    span: &Span,
) -> Result<Vec<usize>> {
    let n = x.len();
    let positions = Array::new(x.shape.clone(), Data::I64((0..n as i64).collect()));
    let sel = select(&positions, axes, io, span)?;
    Ok((0..sel.len())
        .map(|i| sel.data.get(i).as_i64().unwrap_or(0) as usize)
        .collect())
}

/// Selects with one index array (or all, for `None`) per axis: `x[i;j]`, `i⌷x`.
pub(crate) fn select(x: &Array, axes: &[Option<Array>], io: i64, span: &Span) -> Result<Array> {
    if axes.len() != x.rank() {
        return Err(err::rank(
            format!("{} indices for a rank-{} array", axes.len(), x.rank()),
            span.clone(),
        ));
    }
    let mut lists: Vec<Vec<usize>> = Vec::new();
    let mut shape = Vec::new();
    for (k, ax) in axes.iter().enumerate() {
        match ax {
            None => {
                lists.push((0..x.shape[k]).collect());
                shape.push(x.shape[k]);
            }
            Some(ix) => {
                let mut l = Vec::with_capacity(ix.len());
                for i in 0..ix.len() {
                    let v = int_of(ix.data.get(i), span, "indices")? - io;
                    if v < 0 || v >= x.shape[k] as i64 {
                        return Err(index_error(
                            format!(
                                "index {} is outside 1…{} on axis {}",
                                v + io,
                                x.shape[k],
                                k + 1
                            ),
                            span.clone(),
                        ));
                    }
                    l.push(v as usize);
                }
                lists.push(l);
                shape.extend(ix.shape.iter().copied());
            }
        }
    }
    let st = strides(&x.shape);
    let counts: Vec<usize> = lists.iter().map(|l| l.len()).collect();
    let count = arrc_ir::array::saturating_count(&counts);
    // `x[⍳1e5;⍳1e5]` would allocate 10^10 items.
    check_size(count, span)?;
    let mut out = Data::with_capacity(x.elem, count);
    for_each_index(&counts, |idx| {
        let off: usize = idx
            .iter()
            .enumerate()
            .map(|(k, &i)| lists[k][i] * st[k])
            .sum();
        out.push_from(&x.data, off);
        Ok(())
    })?;
    Ok(Array::new(shape, out))
}

/// `⍺⌷⍵`: ⍺ indexes the leading axes.
pub(crate) fn squad(a: &Array, x: &Array, io: i64, span: &Span) -> Result<Array> {
    if a.rank() > 1 {
        return Err(err::rank("⍺⌷⍵ needs a scalar or vector ⍺", span.clone()));
    }
    if a.len() > x.rank() {
        return Err(err::rank(
            format!("{} indices for a rank-{} array", a.len(), x.rank()),
            span.clone(),
        ));
    }
    let mut axes: Vec<Option<Array>> = (0..a.len()).map(|i| Some(a.data.item(i).open())).collect();
    axes.extend((a.len()..x.rank()).map(|_| None));
    select(x, &axes, io, span)
}

/// `⍺≡⍵`
pub(crate) fn matches(a: &Array, b: &Array) -> bool {
    if a.shape != b.shape {
        return false;
    }
    if a.is_empty() {
        // Empty arrays match when their prototypes do: `⍬≡''` is 0, and
        // `(0⍴⊂1 2)≡0⍴⊂3 4` is 1 (callers check that prototypes are known).
        return match (a.fill_item(), b.fill_item()) {
            (Some(x), Some(y)) => crate::nested::same_item(&x, &y),
            _ => false,
        };
    }
    (0..a.len()).all(|i| crate::nested::same_item(&a.data.item(i), &b.data.item(i)))
}

/// `≢⍵`
pub(crate) fn tally(x: &Array) -> Array {
    Array::scalar(Scalar::I32(x.shape.first().copied().unwrap_or(1) as i32))
}

/// `⍳⍵` for a non-negative integer scalar.
pub(crate) fn iota(x: &Array, io: i64, span: &Span) -> Result<Array> {
    if x.rank() > 1 {
        return Err(err::rank("⍳ needs a scalar or a vector", span.clone()));
    }
    match x.data.get(0).as_i64() {
        Some(n) if n > LIMIT.with(|l| l.get()) as i64 && n <= i32::MAX as i64 => {
            check_size(n as usize, span)?;
            unreachable_size()
        }
        Some(n) if (0..=i32::MAX as i64).contains(&n) => Ok(Array::vector(Data::I32(
            (0..n).map(|i| (i + io) as i32).collect(),
        ))),
        Some(n) if n > i32::MAX as i64 => Err(err::domain(
            format!("⍳{n} is too long: at most {} items", i32::MAX),
            span.clone(),
        )),
        _ => Err(err::domain("⍳ needs a non-negative integer", span.clone())),
    }
}

fn unreachable_size() -> Result<Array> {
    Err(Error::new(ErrorClass::WsFull, "array too large", 0..0))
}

/// `⍺\[k]⍵` (expand): the j-th positive count of ⍺ repeats the j-th cell of ⍵ along
/// `axis` (the last when `None`); a negative count inserts that many cells of fill, a
/// 0 one. A length of 1 along the axis extends to the number of positive counts.
pub(crate) fn expand(a: &Array, x: &Array, axis: Option<usize>, span: &Span) -> Result<Array> {
    let counts = int_vector(a, span, "expand counts")?;
    let x = if x.rank() == 0 { ravel(x) } else { x.clone() };
    let axis = axis.unwrap_or(x.rank() - 1).min(x.rank() - 1);
    let (outer, n, inner) = around(&x.shape, axis);
    let positive = counts.iter().filter(|&&c| c > 0).count();
    if n != positive && n != 1 {
        return Err(err::length(
            format!("{positive} positive counts for an axis of length {n}"),
            span.clone(),
        ));
    }
    let total = counts
        .iter()
        .map(|c| c.unsigned_abs().max(1) as usize)
        .fold(0usize, |a, c| a.saturating_add(c));
    check_size(total, span)?;
    check_size(total.saturating_mul(outer * inner), span)?;
    let mut shape = x.shape.clone();
    shape[axis] = total;
    let fill = fill(&x, span);
    let mut d = Data::with_capacity(x.elem, outer * total * inner);
    for o in 0..outer {
        let mut j = 0;
        for &c in &counts {
            for _ in 0..c.unsigned_abs().max(1) {
                for i in 0..inner {
                    if c > 0 {
                        d.push_from(&x.data, (o * n + j.min(n - 1)) * inner + i);
                    } else {
                        d.push_item(fill.clone()?);
                    }
                }
            }
            if c > 0 {
                j += 1;
            }
        }
    }
    Ok(Array::new(shape, d))
}

/// `⍺,[k]⍵` with a fractional `k` (laminate): the arguments, of one shape (a scalar
/// extends), side by side along a new axis of length 2 inserted at position `at`
/// (0 to their rank).
pub(crate) fn laminate(a: &Array, b: &Array, at: usize, span: &Span) -> Result<Array> {
    let shape = match (a.rank(), b.rank()) {
        (0, _) => b.shape.clone(),
        (_, 0) => a.shape.clone(),
        _ if a.shape == b.shape => a.shape.clone(),
        (ra, rb) if ra != rb => {
            return Err(err::rank(
                "laminate needs arguments of one rank",
                span.clone(),
            ))
        }
        _ => {
            return Err(err::length(
                "laminate needs arguments of one shape",
                span.clone(),
            ))
        }
    };
    if at > shape.len() {
        return Err(axis_error(
            format!("no axis {at}.5 for rank {}", shape.len()),
            span.clone(),
        ));
    }
    let lift = |x: &Array| -> Result<Array> {
        let mut s = shape.clone();
        s.insert(at, 1);
        if x.rank() == 0 {
            reshape(&shape_array(&s), x, span)
        } else {
            Ok(Array::new(s, x.data.clone()))
        }
    };
    catenate_axis(&lift(a)?, &lift(b)?, at, span)
}

/// `x` with item `places[k]` of its ravel replaced by item `k` of `new` (its only item
/// when a scalar), in order (a place named twice takes the later), in the type that
/// holds both: indexed assignment and `@` (characters into numbers, or numbers into
/// characters, make a mixed array).
pub(crate) fn scatter(x: &Array, places: &[usize], new: &Array) -> Array {
    // The type that holds both (as the device types it), but no mixed array where no
    // item moves.
    let elem = if places.is_empty() && x.elem.mixes(new.elem) {
        x.elem
    } else {
        x.elem.join(new.elem)
    };
    let mut out: Vec<Item> = (0..x.len()).map(|i| x.data.item(i)).collect();
    for (k, &p) in places.iter().enumerate() {
        out[p] = new.data.item(if new.rank() == 0 { 0 } else { k });
    }
    let mut d = Data::with_capacity(elem, out.len());
    out.into_iter().for_each(|it| match it {
        Item::Simple(s) => d.push(s.cast(elem)),
        it => d.push_item(it),
    });
    Array::new(x.shape.clone(), d)
}
