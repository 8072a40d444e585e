//! Number systems and linear algebra: encode `⍺⊤⍵`, decode `⍺⊥⍵`, and matrix
//! inverse and divide `⌹`, with Dyalog's semantics.

use crate::prims::{check_size, from_scalars};
use arrc_ir::error::{err, Result};
use arrc_ir::lower::scalar_error;
use arrc_ir::scalar::BinOp;
use arrc_ir::{Array, Data, ElemType, Scalar};
use arrc_syntax::Span;

/// `⍺⊤⍵`: each item of ⍵ in the number system of each column of ⍺ (its first axis
/// from most to least significant). A radix of 0 takes what is left; the result has
/// shape `(⍴⍺),⍴⍵`.
pub(crate) fn encode(a: &Array, x: &Array, float: ElemType, span: &Span) -> Result<Array> {
    let n = a.shape.first().copied().unwrap_or(1);
    let cols = if a.rank() == 0 {
        1
    } else {
        arrc_ir::array::saturating_count(&a.shape[1..])
    };
    let m = x.len();
    let total = a.len().saturating_mul(m);
    check_size(total, span)?;
    let mut out = vec![Scalar::I32(0); total];
    let e = |e| scalar_error(e, span.clone());
    for c in 0..cols {
        for j in 0..m {
            let mut y = x.data.get(j);
            for i in (0..n).rev() {
                let r = a.data.get(i * cols + c);
                let z = BinOp::Residue.apply(r, y, float).map_err(e)?;
                out[(i * cols + c) * m + j] = z;
                y = if r.as_f64() == 0.0 {
                    Scalar::I32(0)
                } else {
                    let d = BinOp::Sub.apply(y, z, float).map_err(e)?;
                    match (
                        d.elem_type().is_int() && r.elem_type().is_int(),
                        d.as_i64(),
                        r.as_i64(),
                    ) {
                        // Exact: y-z is a multiple of r.
                        (true, Some(d), Some(r)) => Scalar::I64(d / r),
                        _ => BinOp::Div.apply(d, r, float).map_err(e)?,
                    }
                };
            }
        }
    }
    let mut shape = a.shape.clone();
    shape.extend(x.shape.iter().copied());
    let ty = BinOp::Residue.result_type(a.elem, x.elem, float);
    Ok(narrow(from_scalars(shape, out, ty), ty))
}

/// Integers that came out as i64 go back to `ty` where they all fit (the reference's
/// types follow the device's: i32 arguments give i32 digits).
fn narrow(x: Array, ty: ElemType) -> Array {
    if x.elem == ElemType::I64 && ty == ElemType::I32 {
        let fits = (0..x.len()).all(|i| {
            x.data
                .get(i)
                .as_i64()
                .is_some_and(|v| i32::try_from(v).is_ok())
        });
        if fits {
            return x.cast(ElemType::I32);
        }
    }
    x
}

/// `⍺⊥⍵`: the value of the digits along ⍵'s first axis in the number system of ⍺'s
/// last axis (Horner's rule); like an inner product, a length of 1 on either side
/// extends. The result has shape `(¯1↓⍴⍺),1↓⍴⍵`.
pub(crate) fn decode(a: &Array, x: &Array, float: ElemType, span: &Span) -> Result<Array> {
    let na = a.shape.last().copied().unwrap_or(1);
    let nx = x.shape.first().copied().unwrap_or(1);
    let n = if na == nx || na == 1 {
        nx
    } else if nx == 1 {
        na
    } else {
        return Err(err::length(
            format!("⊥ of {na} radices and {nx} digits"),
            span.clone(),
        ));
    };
    let rows = if a.rank() == 0 {
        1
    } else {
        arrc_ir::array::saturating_count(&a.shape[..a.rank() - 1])
    };
    let cols = if x.rank() == 0 {
        1
    } else {
        arrc_ir::array::saturating_count(&x.shape[1..])
    };
    check_size(rows.saturating_mul(cols), span)?;
    let e = |e| scalar_error(e, span.clone());
    let ty = BinOp::Mul.result_type(a.elem, x.elem, float);
    let mut out = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        for c in 0..cols {
            let mut acc = Scalar::I32(0).cast(ty);
            for k in 0..n {
                let rk = a.data.get(r * na + if na == 1 { 0 } else { k });
                let xk = x.data.get((if nx == 1 { 0 } else { k }) * cols + c);
                acc = BinOp::Mul.apply(acc, rk, float).map_err(e)?;
                acc = BinOp::Add.apply(acc, xk, float).map_err(e)?;
            }
            out.push(acc.cast(ty.max(acc.elem_type())));
        }
    }
    let mut shape: Vec<usize> = a.shape[..a.rank().saturating_sub(1)].to_vec();
    if x.rank() > 0 {
        shape.extend(x.shape[1..].iter().copied());
    }
    Ok(from_scalars(shape, out, ty))
}

/// A matrix of f64 in row order.
struct Matrix {
    rows: usize,
    cols: usize,
    v: Vec<f64>,
}

impl Matrix {
    /// A scalar is 1×1, a vector one column.
    fn of(x: &Array, span: &Span) -> Result<Matrix> {
        let (rows, cols) = match x.shape.as_slice() {
            [] => (1, 1),
            [n] => (*n, 1),
            [r, c] => (*r, *c),
            _ => return Err(err::rank("⌹ takes arrays of rank 2 at most", span.clone())),
        };
        Ok(Matrix {
            rows,
            cols,
            v: (0..x.len()).map(|i| x.data.get(i).as_f64()).collect(),
        })
    }
}

/// Solves `a x = b` in the least-squares sense by Householder QR (`a` has at least
/// as many rows as columns and full column rank, else DOMAIN ERROR). Returns `x`,
/// `a.cols` by `b.cols`.
fn least_squares(mut a: Matrix, mut b: Matrix, span: &Span) -> Result<Matrix> {
    let (m, n, k) = (a.rows, a.cols, b.cols);
    if m < n {
        return Err(err::domain(
            "⌹ needs at least as many rows as columns",
            span.clone(),
        ));
    }
    let scale = a.v.iter().fold(0.0f64, |s, x| s.max(x.abs()));
    let mut diag = Vec::with_capacity(n);
    for j in 0..n {
        let norm = (j..m).map(|i| a.v[i * n + j].powi(2)).sum::<f64>().sqrt();
        // A column with nothing left beyond rounding noise: the matrix is singular.
        if norm <= scale * 1e-13 * (m as f64) || norm == 0.0 {
            return Err(err::domain("⌹ of a singular matrix", span.clone()));
        }
        let alpha = if a.v[j * n + j] > 0.0 { -norm } else { norm };
        // v = column - alpha e_j, stored in place below the diagonal.
        a.v[j * n + j] -= alpha;
        let vnorm2: f64 = (j..m).map(|i| a.v[i * n + j].powi(2)).sum();
        for c in j + 1..n {
            let dot: f64 = (j..m).map(|i| a.v[i * n + j] * a.v[i * n + c]).sum();
            let f = 2.0 * dot / vnorm2;
            for i in j..m {
                a.v[i * n + c] -= f * a.v[i * n + j];
            }
        }
        for c in 0..k {
            let dot: f64 = (j..m).map(|i| a.v[i * n + j] * b.v[i * k + c]).sum();
            let f = 2.0 * dot / vnorm2;
            for i in j..m {
                b.v[i * k + c] -= f * a.v[i * n + j];
            }
        }
        diag.push(alpha);
    }
    // Back substitution with R (diag on the diagonal, a above it).
    let mut x = vec![0.0; n * k];
    for c in 0..k {
        for j in (0..n).rev() {
            let s: f64 = (j + 1..n).map(|t| a.v[j * n + t] * x[t * k + c]).sum();
            x[j * k + c] = (b.v[j * k + c] - s) / diag[j];
        }
    }
    Ok(Matrix {
        rows: n,
        cols: k,
        v: x,
    })
}

fn float_array(shape: Vec<usize>, v: &[f64], float: ElemType, span: &Span) -> Result<Array> {
    if v.iter().any(|x| !x.is_finite()) {
        return Err(err::domain(
            arrc_ir::scalar::not_finite(float),
            span.clone(),
        ));
    }
    let d = if float == ElemType::F64 {
        Data::F64(v.to_vec())
    } else {
        Data::F32(v.iter().map(|&x| x as f32).collect())
    };
    Ok(Array::new(shape, d))
}

/// `⌹⍵` (the inverse, or the left inverse of a matrix with more rows than columns)
/// and `⍺⌹⍵` (the least-squares solution of `⍵ +.× r = ⍺`).
pub(crate) fn domino(a: Option<&Array>, x: &Array, float: ElemType, span: &Span) -> Result<Array> {
    let xm = Matrix::of(x, span)?;
    match a {
        None => {
            let m = xm.rows;
            let id = Matrix {
                rows: m,
                cols: m,
                v: (0..m * m)
                    .map(|i| if i / m == i % m { 1.0 } else { 0.0 })
                    .collect(),
            };
            let r = least_squares(xm, id, span)?;
            // The result has the shape of ⍉⍵.
            let shape: Vec<usize> = x.shape.iter().rev().copied().collect();
            float_array(shape, &r.v, float, span)
        }
        Some(a) => {
            let am = Matrix::of(a, span)?;
            if am.rows != xm.rows {
                return Err(err::length(
                    format!("⌹ of {} rows by {} rows", am.rows, xm.rows),
                    span.clone(),
                ));
            }
            let r = least_squares(xm, am, span)?;
            let mut shape: Vec<usize> = x.shape.iter().skip(1).copied().collect();
            shape.extend(a.shape.iter().skip(1).copied());
            float_array(shape, &r.v, float, span)
        }
    }
}
