//! `⌹⍵` and `⍺⌹⍵` on the device: `Inst::Solve` (Householder QR in f64, as the
//! reference computes it) of ⍵ as a matrix with ⍺ (or the identity) as the
//! right-hand sides, the solution converted to the session's float.

use super::*;

impl Lower {
    pub(super) fn domino(&mut self, a: Option<Value>, x: Value, span: Span) -> Result<Value> {
        let (xm, m, n) = self.as_matrix(x, &span)?;
        let xt = self.f.ty(x).clone();
        let (bm, shape) = match a {
            None => {
                // The identity of m rows: (⍳m)∘.=⍳m.
                let i = self.iota_of(m, 0, &span);
                let sq = vec![m, m];
                let rows = self.gather(i, Gather::Axes(vec![0]), sq.clone(), span.clone());
                let cols = self.gather(i, Gather::Axes(vec![1]), sq, span.clone());
                let id = self.binary(BinOp::Equal, rows, cols, span.clone())?;
                let shape: Vec<Dim> = xt.shape.iter().rev().copied().collect();
                (self.cast(id, ElemType::F64), shape)
            }
            Some(a) => {
                let at = self.f.ty(a).clone();
                let (am, rows, _) = self.as_matrix(a, &span)?;
                match (rows, m) {
                    (Dim::Known(p), Dim::Known(q)) if p != q => {
                        return Err(err::length(
                            format!("⌹ of {p} rows by {q} rows"),
                            span.clone(),
                        ))
                    }
                    _ if rows == m => {}
                    // (`arrc build` of `⍺⌹M` for a ⍺ whose length is known only at run
                    // time: the solve's operands would differ in type; the fuzzer's
                    // mutations found the verifier refusing it as an internal error.)
                    _ => {
                        return Err(err::unsupported(
                            "⍺⌹⍵ where the rows of ⍺ and ⍵ are known to agree only at run time",
                            span.clone(),
                        ))
                    }
                }
                let mut shape: Vec<Dim> = xt.shape.iter().skip(1).copied().collect();
                shape.extend(at.shape.iter().skip(1).copied());
                (am, shape)
            }
        };
        let k = self.f.ty(bm).shape[1];
        // ⌈/|,⍵ for the test of a singular column.
        let abs = self.unary(UnOp::Abs, xm, span.clone())?;
        let rows_max = self.reduce(BinOp::Max, abs, 1, span.clone())?;
        let scale = self.reduce(BinOp::Max, rows_max, 0, span.clone())?;
        let scale = self.cast(scale, ElemType::F64);
        let limit = if self.f.float == ElemType::F64 {
            f64::MAX
        } else {
            f32::MAX as f64
        };
        // Columns contiguous on the device: the steps read and write them whole.
        let transpose = |me: &mut Self, v: Value| {
            let t = me.f.ty(v).shape.clone();
            me.gather(v, Gather::Axes(vec![1, 0]), vec![t[1], t[0]], span.clone())
        };
        let (xt_, bt_) = (transpose(self, xm), transpose(self, bm));
        let r = self.f.push(
            Inst::Solve {
                a: xt_,
                b: bt_,
                scale,
                limit,
            },
            Type {
                elem: ElemType::F64,
                shape: vec![n, k],
            },
            span.clone(),
        );
        let r = self.cast(r, self.f.float);
        if self.f.ty(r).shape == shape {
            return Ok(r);
        }
        Ok(self.reshape(r, shape, span))
    }

    /// An argument of `⌹` as an f64 matrix with its rows and columns: a scalar is
    /// 1×1, a vector one column.
    fn as_matrix(&mut self, v: Value, span: &Span) -> Result<(Value, Dim, Dim)> {
        let t = self.f.ty(v).clone();
        let shape = match t.shape.as_slice() {
            [] => vec![Dim::Known(1), Dim::Known(1)],
            [r] => vec![*r, Dim::Known(1)],
            [r, c] => vec![*r, *c],
            _ => return Err(err::rank("⌹ takes arrays of rank 2 at most", span.clone())),
        };
        if shape.iter().any(|d| matches!(d, Dim::Dyn(_))) {
            return Err(err::unsupported(
                "⌹ of an array whose length is computed on the device is not supported on the GPU path yet",
                span.clone(),
            ));
        }
        let v = self.cast(v, ElemType::F64);
        let v = if t.rank() == 2 {
            v
        } else {
            self.reshape(v, shape.clone(), span.clone())
        };
        Ok((v, shape[0], shape[1]))
    }
}
