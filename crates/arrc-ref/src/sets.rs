//! Set functions and searches over major cells: `∪ ∩ ~ ≠⍵ ⍷` and interval index
//! `⍺⍸⍵`, with Dyalog's semantics (equality tolerant in f64, exact otherwise, as
//! `⍳` and `∊`).

use crate::prims::{check_size, from_scalars};
use arrc_ir::error::{err, Result};
use arrc_ir::{Array, Data, ElemType, Scalar};
use arrc_syntax::Span;

/// `⍺⍳⍵` from 0, of simple or nested arrays (nested items compared whole).
fn index_of(a: &Array, x: &Array, io: i64, span: &Span) -> Result<Array> {
    if a.elem.is_mixed() || x.elem.is_mixed() {
        crate::nested::index_of(a, x, io, span)
    } else {
        crate::prims::index_of(a, x, io, span)
    }
}

/// `⍺∊⍵` of simple or nested arrays.
fn member(a: &Array, x: &Array, span: &Span) -> Result<Array> {
    if a.elem.is_mixed() || x.elem.is_mixed() {
        crate::nested::member(a, x, span)
    } else {
        Ok(crate::prims::member(a, x))
    }
}

/// A scalar as a one-item vector; other arrays as they are.
fn at_least_vector(x: &Array) -> Array {
    if x.rank() == 0 {
        Array::new(vec![1], x.data.clone())
    } else {
        x.clone()
    }
}

/// For each major cell of `x`, whether it is the first of the cells equal to it
/// (`≠⍵`, the unique mask).
fn first_cells(x: &Array, span: &Span) -> Result<Vec<bool>> {
    let x = at_least_vector(x);
    // The index of each cell among the cells: `⍵⍳⍵` (major cells when rank > 1).
    let idx = index_of(&x, &x, 0, span)?;
    Ok((0..idx.len())
        .map(|i| idx.data.get(i).as_i64() == Some(i as i64))
        .collect())
}

/// `≠⍵`: 1 for the first occurrence of each major cell.
pub(crate) fn unique_mask(x: &Array, span: &Span) -> Result<Array> {
    Ok(Array::vector(Data::Bool(first_cells(x, span)?)))
}

/// The major cells of `x` (a vector for a scalar) where `keep` is true.
fn keep_cells(x: &Array, keep: &[bool]) -> Array {
    let x = at_least_vector(x);
    let cell: usize = arrc_ir::array::saturating_count(&x.shape[1..]);
    let mut d = Data::with_capacity(x.elem, cell * keep.iter().filter(|k| **k).count());
    for (i, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
        (0..cell).for_each(|t| d.push_from(&x.data, i * cell + t));
    }
    let mut shape = x.shape.clone();
    shape[0] = keep.iter().filter(|k| **k).count();
    Array::new(shape, d)
}

/// `∪⍵`: the unique major cells, in order of first occurrence.
pub(crate) fn unique(x: &Array, span: &Span) -> Result<Array> {
    Ok(keep_cells(x, &first_cells(x, span)?))
}

/// Union, intersection and without take vectors (a scalar is a one-item vector).
fn set_argument(x: &Array, glyph: char, span: &Span) -> Result<Array> {
    match x.rank() {
        0 | 1 => Ok(at_least_vector(x)),
        // Dyalog's ⍺~⍵ too needs a scalar or vector ⍺ (Language Reference, "Without").
        _ => Err(err::rank(
            format!("{glyph} takes scalars and vectors"),
            span.clone(),
        )),
    }
}

/// `⍺∪⍵`: ⍺, then the items of ⍵ not in ⍺ (duplicates within ⍵ kept).
pub(crate) fn union(a: &Array, x: &Array, span: &Span) -> Result<Array> {
    let (a, x) = (set_argument(a, '∪', span)?, set_argument(x, '∪', span)?);
    let found = member(&x, &a, span)?;
    let keep: Vec<bool> = (0..x.len())
        .map(|i| found.data.get(i).as_i64() == Some(0))
        .collect();
    let tail = keep_cells(&x, &keep);
    check_size(a.len().saturating_add(tail.len()), span)?;
    let t = a.elem.join(x.elem);
    let mut d = Data::with_capacity(t, a.len() + tail.len());
    (0..a.len()).for_each(|i| d.push_from(&a.data, i));
    (0..tail.len()).for_each(|i| d.push_from(&tail.data, i));
    Ok(Array::vector(d))
}

/// `⍺∩⍵` (`keep` true) or `⍺~⍵` (false): the items of ⍺ that are (are not) in ⍵.
pub(crate) fn intersect(a: &Array, x: &Array, keep: bool, span: &Span) -> Result<Array> {
    let glyph = if keep { '∩' } else { '~' };
    let a = set_argument(a, glyph, span)?;
    if !keep && x.rank() > 1 {
        // Dyalog removes the items found anywhere in ⍵.
        let flat = Array::new(vec![x.len()], x.data.clone());
        return intersect(&a, &flat, keep, span);
    }
    let x = if keep {
        set_argument(x, glyph, span)?
    } else {
        x.clone()
    };
    let found = member(&a, &x, span)?;
    let mask: Vec<bool> = (0..a.len())
        .map(|i| (found.data.get(i).as_i64() == Some(1)) == keep)
        .collect();
    Ok(keep_cells(&a, &mask))
}

/// `⍺⍷⍵`: 1 where a copy of ⍺ begins in ⍵ (⍺ of lower rank is taken as having
/// leading axes of length 1; of higher rank, it is found nowhere).
pub(crate) fn find(a: &Array, x: &Array) -> Array {
    let r = x.rank();
    let n = x.len();
    if a.rank() > r {
        return Array::new(x.shape.clone(), Data::Bool(vec![false; n]));
    }
    let mut ashape = vec![1usize; r - a.rank()];
    ashape.extend(a.shape.iter().copied());
    let strides = |s: &[usize]| {
        let mut st = vec![1usize; s.len()];
        for k in (0..s.len().saturating_sub(1)).rev() {
            st[k] = st[k + 1] * s[k + 1];
        }
        st
    };
    let (xs, as_) = (strides(&x.shape), strides(&ashape));
    let alen = a.len();
    let mut out = vec![false; n];
    let mut pos = vec![0usize; r];
    for (i, o) in out.iter_mut().enumerate() {
        let mut rem = i;
        for k in 0..r {
            pos[k] = rem / xs[k];
            rem %= xs[k];
        }
        if (0..r).any(|k| pos[k] + ashape[k] > x.shape[k]) {
            continue;
        }
        *o = (0..alen).all(|j| {
            let mut rem = j;
            let mut off = 0;
            for k in 0..r {
                let c = rem / as_[k];
                rem %= as_[k];
                off += (pos[k] + c) * xs[k];
            }
            crate::nested::same_item(&a.data.item(j), &x.data.item(off))
        });
    }
    Array::new(x.shape.clone(), Data::Bool(out))
}

/// `⍺⍸⍵` (interval index): for each cell of ⍵ shaped like a major cell of ⍺, how
/// many major cells of the ascending ⍺ are at most it (cells compare as `⍋` orders
/// them: item by item in ravel order), less 1 plus ⎕IO. Comparisons are exact.
pub(crate) fn interval_index(a: &Array, x: &Array, io: i64, span: &Span) -> Result<Array> {
    if a.rank() == 0 {
        return Err(err::rank("⍺⍸⍵ needs a vector ⍺", span.clone()));
    }
    let cell_shape = &a.shape[1..];
    let cr = cell_shape.len();
    if x.rank() < cr {
        return Err(err::rank(
            "⍺⍸⍵ needs ⍵ of at least the rank of ⍺'s major cells",
            span.clone(),
        ));
    }
    if x.shape[x.rank() - cr..] != *cell_shape {
        return Err(err::length(
            "⍺⍸⍵ needs ⍵'s cells shaped like ⍺'s major cells",
            span.clone(),
        ));
    }
    let k: usize = cell_shape.iter().product();
    let ints = a.elem.is_int() && x.elem.is_int();
    let wide = a.elem == ElemType::F64 || x.elem == ElemType::F64;
    let cmp = |p: Scalar, q: Scalar| -> std::cmp::Ordering {
        if ints {
            p.as_i64().cmp(&q.as_i64())
        } else if wide {
            // -0 is 0 (`total_cmp` put it first: `0 1⍸0×¯1.5` gave 0).
            (p.as_f64() + 0.0).total_cmp(&(q.as_f64() + 0.0))
        } else {
            ((p.as_f64() as f32) + 0.0).total_cmp(&((q.as_f64() as f32) + 0.0))
        }
    };
    // Cell `i` of `p` against cell `j` of `q`, item by item.
    let cells = |p: &Array, i: usize, q: &Array, j: usize| -> std::cmp::Ordering {
        (0..k)
            .map(|t| cmp(p.data.get(i * k + t), q.data.get(j * k + t)))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    let n = a.shape[0];
    if (1..n).any(|i| cells(a, i - 1, a, i).is_gt()) {
        return Err(err::domain("⍺⍸⍵ needs ⍺ in ascending order", span.clone()));
    }
    let lead = x.shape[..x.rank() - cr].to_vec();
    let count: usize = lead.iter().product();
    let out: Vec<Scalar> = (0..count)
        .map(|j| {
            let mut lo = 0;
            let mut hi = n;
            // The first cell of ⍺ above cell j of ⍵.
            while lo < hi {
                let mid = (lo + hi) / 2;
                if cells(a, mid, x, j).is_gt() {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            Scalar::I32((lo as i64 - 1 + io) as i32)
        })
        .collect();
    Ok(from_scalars(lead, out, ElemType::I32))
}
