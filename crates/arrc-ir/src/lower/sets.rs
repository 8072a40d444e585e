//! Lowering the set functions `∪ ∩ ~ ≠⍵`, find `⍷`, interval index `⍺⍸⍵`, decode
//! `⍺⊥⍵` and encode `⍺⊤⍵` into searches, compresses, shifted comparisons, inner
//! products and scalar functions.

use super::*;

/// The most items of a left argument that `⍷` and `⍸` unroll into one comparison
/// each.
pub const UNROLL_ITEMS: usize = 64;

impl Lower {
    pub(super) fn unsupported<T>(&self, what: &str, span: &Span) -> Result<T> {
        Err(err::unsupported(
            format!("{what} is not supported on the GPU path yet"),
            span.clone(),
        ))
    }

    /// A scalar as a one-item vector.
    fn as_vector(&mut self, x: Value, span: &Span) -> Value {
        if self.f.ty(x).rank() == 0 {
            self.reshape(x, vec![Dim::Known(1)], span.clone())
        } else {
            x
        }
    }

    /// `≠⍵`: 1 where a major cell first occurs, `(⍵⍳⍵)=⍳≢⍵`.
    pub(super) fn unique_mask(&mut self, x: Value, span: Span) -> Result<Value> {
        let x = self.as_vector(x, &span);
        let n = self.f.ty(x).shape[0];
        if !matches!(n, Dim::Known(_) | Dim::Sym(_)) {
            return self.unsupported(
                "≠ of an array whose length is computed on the device",
                &span,
            );
        }
        let xt = self.f.ty(x).clone();
        // A vector of integers or f32 of known length: by a sort and runs of equal
        // items (see `⌸`), not a binary search of every item.
        if let (1, Dim::Known(len), false) = (xt.rank(), n, xt.elem == ElemType::F64) {
            if len > 0 && len < super::key::RUNS_BELOW {
                return Ok(self.runs(x, len, &span)?.mask);
            }
        }
        let first = self.search(x, x, SearchKind::IndexOf { origin: 0 }, span.clone())?;
        let iota = self.iota_of(n, 0, &span);
        self.binary(BinOp::Equal, first, iota, span)
    }

    /// `∪⍵` of a vector: its first occurrences, compressed.
    pub(super) fn unique(&mut self, x: Value, span: Span) -> Result<Value> {
        let x = self.as_vector(x, &span);
        if self.f.ty(x).rank() != 1 {
            return self.unsupported("∪ of a matrix", &span);
        }
        let mask = self.unique_mask(x, span.clone())?;
        self.compress(mask, x, false, None, span)
    }

    /// `⍺∪⍵` of vectors: `⍺,⍵` compressed by ones for ⍺ and `~⍵∊⍺` for ⍵ (one
    /// compress of a catenation, so no length the device computes is catenated).
    pub(super) fn union(&mut self, a: Value, x: Value, span: Span) -> Result<Value> {
        let (a, x) = (self.as_vector(a, &span), self.as_vector(x, &span));
        if self.f.ty(a).rank() != 1 || self.f.ty(x).rank() != 1 {
            return Err(err::rank("∪ takes scalars and vectors", span));
        }
        let found = self.search(a, x, SearchKind::Member, span.clone())?;
        let new = self.unary(UnOp::Not, found, span.clone())?;
        let n = self.f.ty(a).shape[0];
        let one = self.konst(Array::scalar(Scalar::Bool(true)), span.clone());
        let ones = self.reshape(one, vec![n], span.clone());
        let mask = self.catenate(ones, new, 0, span.clone())?;
        let both = self.catenate(a, x, 0, span.clone())?;
        self.compress(mask, both, false, None, span)
    }

    /// `⍺∩⍵` (`keep`) and `⍺~⍵`: the items of the vector ⍺ found (not found) in ⍵.
    pub(super) fn intersect(
        &mut self,
        a: Value,
        x: Value,
        keep: bool,
        span: Span,
    ) -> Result<Value> {
        let a = self.as_vector(a, &span);
        if self.f.ty(a).rank() != 1 {
            return if keep {
                Err(err::rank("∩ takes scalars and vectors", span))
            } else {
                self.unsupported("~ with a matrix left argument", &span)
            };
        }
        if keep && self.f.ty(x).rank() > 1 {
            return Err(err::rank("∩ takes scalars and vectors", span));
        }
        let found = self.search(x, a, SearchKind::Member, span.clone())?;
        let mask = if keep {
            found
        } else {
            self.unary(UnOp::Not, found, span.clone())?
        };
        self.compress(mask, a, false, None, span)
    }

    /// `⍺⍷⍵` of a pattern ⍺ known when compiling (at most [`UNROLL_ITEMS`] items, of
    /// rank at most ⍵'s; a lower rank has leading axes of length 1): the and of ⍺'s
    /// items compared with ⍵ shifted by their positions, a shift past an end giving 0.
    /// A pattern of higher rank than ⍵ is found nowhere.
    pub(super) fn find(&mut self, a: Value, x: Value, span: Span) -> Result<Value> {
        let (Some(pat), xt) = (self.known_value(a), self.f.ty(x).clone()) else {
            return self.unsupported("⍷ with a pattern computed on the device", &span);
        };
        if pat.len() > UNROLL_ITEMS {
            return self.unsupported("⍷ of a pattern of more than 64 items", &span);
        }
        if xt.shape.iter().any(|d| matches!(d, Dim::Dyn(_))) {
            return self.unsupported(
                "⍷ in an array whose length is computed on the device",
                &span,
            );
        }
        let r = xt.rank();
        if pat.rank() > r {
            let zero = self.konst(Array::scalar(Scalar::Bool(false)), span.clone());
            return Ok(self.reshape(zero, xt.shape, span));
        }
        let mut pshape = vec![1usize; r - pat.rank()];
        pshape.extend(pat.shape.iter().copied());
        let mut acc: Option<Value> = None;
        for j in 0..pat.len() {
            // Item j's position in the pattern, one coordinate per axis of ⍵.
            let mut rem = j;
            let mut start = vec![0i64; r];
            for k in (0..r).rev() {
                start[k] = (rem % pshape[k]) as i64;
                rem /= pshape[k];
            }
            let item = self.konst(Array::scalar(pat.data.get(j)), span.clone());
            let eq = self.binary(BinOp::Equal, x, item, span.clone())?;
            let eq = if self.f.ty(eq).shape != xt.shape {
                self.reshape(eq, xt.shape.clone(), span.clone())
            } else {
                eq
            };
            let shifted = self.gather(
                eq,
                Gather::Window {
                    start,
                    fill: Scalar::Bool(false),
                },
                xt.shape.clone(),
                span.clone(),
            );
            acc = Some(match acc {
                None => shifted,
                Some(p) => self.binary(BinOp::And, p, shifted, span.clone())?,
            });
        }
        // A pattern that does not fit past a position is not found there, also when
        // it has no items (`(0 2⍴0)⍷m`): it must fit inside ⍵.
        let fits: Vec<i64> = pshape.iter().map(|&p| p as i64).collect();
        let one = self.konst(Array::scalar(Scalar::Bool(true)), span.clone());
        let whole = self.reshape(one, xt.shape.clone(), span.clone());
        let last: Vec<i64> = fits.iter().map(|&p| (p - 1).max(0)).collect();
        let room = self.gather(
            whole,
            Gather::Window {
                start: last,
                fill: Scalar::Bool(false),
            },
            xt.shape.clone(),
            span.clone(),
        );
        Ok(match acc {
            Some(v) => v,
            None => room,
        })
    }

    /// `⍺⍸⍵` with an ascending ⍺ known when compiling (at most [`UNROLL_ITEMS`]
    /// items, integers or f32): how many items of ⍺ are at most each item of ⍵; a
    /// search otherwise.
    pub(super) fn interval_index(&mut self, a: Value, x: Value, span: Span) -> Result<Value> {
        let Some(cuts) = self.known_value(a) else {
            return self.interval_search(a, x, span);
        };
        let xt = self.f.ty(x).clone();
        if cuts.rank() == 0 {
            return Err(err::rank("⍺⍸⍵ needs a vector ⍺", span));
        }
        if cuts.rank() > 1 {
            return self.interval_index_cells(&cuts, x, span);
        }
        // Comparisons here are exact, as the reference's: f64 ones would be tolerant.
        let t = cuts.elem.join(xt.elem);
        if cuts.len() > UNROLL_ITEMS || t == ElemType::F64 {
            return self.interval_search(a, x, span);
        }
        let vals: Vec<f64> = (0..cuts.len())
            .map(|i| cuts.data.get(i).cast(t).as_f64())
            .collect();
        let ints: Vec<Option<i64>> = (0..cuts.len()).map(|i| cuts.data.get(i).as_i64()).collect();
        let ascending = if t.is_int() {
            ints.windows(2).all(|w| w[0] <= w[1])
        } else {
            vals.windows(2).all(|w| w[0] <= w[1])
        };
        if !ascending {
            return Err(err::domain("⍺⍸⍵ needs ⍺ in ascending order", span));
        }
        let base = self.io as i32 - 1;
        let mut acc = self.konst(Array::scalar(Scalar::I32(base)), span.clone());
        for i in 0..cuts.len() {
            let c = self.konst(Array::scalar(cuts.data.get(i)), span.clone());
            let le = self.binary(BinOp::LessEq, c, x, span.clone())?;
            acc = self.binary(BinOp::Add, acc, le, span.clone())?;
        }
        let acc = self.cast(acc, ElemType::I32);
        if self.f.ty(acc).shape != xt.shape {
            return Ok(self.reshape(acc, xt.shape, span));
        }
        Ok(acc)
    }

    /// `⍺⍸⍵` with a vector ⍺ computed on the device: a binary search of each item of
    /// ⍵ in ⍺ as it is (`Inst::Search` in the order `⍳≢⍺`: ⍺ must be ascending, so
    /// it is not sorted first), and a DOMAIN ERROR from the device where
    /// `∧/(¯1↓⍺)≤1↓⍺` is 0.
    fn interval_search(&mut self, a: Value, x: Value, span: Span) -> Result<Value> {
        let at = self.f.ty(a).clone();
        match at.rank() {
            0 => return Err(err::rank("⍺⍸⍵ needs a vector ⍺", span)),
            1 => {}
            _ => return self.unsupported("⍸ with a matrix ⍺ computed on the device", &span),
        }
        let n = at.shape[0];
        let xt = self.f.ty(x).clone();
        let t = at.elem.join(xt.elem);
        // ⍺ a `+\` of floats: the device adds in another order than the reference,
        // and its sums of items that are all at least 0 may fall back an ulp where
        // the reference's never fall (`(+\w)⍸x` with `w←(10*?5000⍴18)÷7` in f64 was
        // a DOMAIN ERROR on lavapipe). Such an ⍺ counts as ascending.
        let addends = match self.f.inst(a) {
            Inst::Scan {
                op: BinOp::Add,
                arg,
                ..
            } if at.elem.is_float() => Some(*arg),
            _ => None,
        };
        let a = self.cast(a, t);
        let x = self.cast(x, t);
        // Each item against the next; the last against the largest value.
        let top = match t {
            ElemType::Bool => Scalar::Bool(true),
            ElemType::I32 => Scalar::I32(i32::MAX),
            ElemType::I64 => Scalar::I64(i64::MAX),
            ElemType::F32 => Scalar::F32(f32::MAX),
            ElemType::F64 => Scalar::F64(f64::MAX),
            ElemType::Char | ElemType::Mixed => Scalar::Char(char::MAX),
        };
        // f64 `≤` is tolerant (within ⎕CT); the order check must be exact, as the
        // reference's: f64 items are compared as their `OrderedBits` (i64), the
        // negative ones raised by 1 so that -0 (¯1) meets +0 (0) and nothing else
        // changes place.
        let (keys, top) = if t == ElemType::F64 {
            let bits = self.unary(UnOp::OrderedBits, a, span.clone())?;
            let zero = self.konst(Array::scalar(Scalar::I64(0)), span.clone());
            let neg = self.binary(BinOp::Less, bits, zero, span.clone())?;
            let neg = self.cast(neg, ElemType::I64);
            let keys = self.binary(BinOp::Add, bits, neg, span.clone())?;
            (self.cast(keys, ElemType::I64), Scalar::I64(i64::MAX))
        } else {
            (a, top)
        };
        let before = keys;
        let after = self.gather(
            keys,
            Gather::Window {
                start: vec![1],
                fill: top,
            },
            vec![n],
            span.clone(),
        );
        let le = self.binary(BinOp::LessEq, before, after, span.clone())?;
        let ok = self.reduce(BinOp::And, le, 0, span.clone())?;
        let ok = match addends {
            Some(w) => {
                let zero = self.konst(Array::scalar(Scalar::I32(0)), span.clone());
                let ge = self.binary(BinOp::GreaterEq, w, zero, span.clone())?;
                let all = self.reduce(BinOp::And, ge, 0, span.clone())?;
                self.binary(BinOp::Or, all, ok, span.clone())?
            }
            None => ok,
        };
        // ⍺ must be in order already (checked above, exactly): the search reads it
        // as it is, not sorted first. Not where ⍺'s length is computed on the device
        // (the search takes its length from the plan, the bound, not the count).
        let order = if matches!(n, Dim::Dyn(_)) {
            self.grade(a, false, 0, span.clone())?
        } else {
            self.f.push(
                Inst::Iota { len: n, origin: 0 },
                Type {
                    elem: ElemType::I32,
                    shape: vec![n],
                },
                span.clone(),
            )
        };
        let found = self.f.push(
            Inst::Search {
                hay: a,
                order,
                needles: x,
                kind: SearchKind::Interval {
                    origin: self.io as i32,
                },
            },
            Type {
                elem: ElemType::I32,
                shape: xt.shape.clone(),
            },
            span.clone(),
        );
        let checked = self.binary(BinOp::Ordered, found, ok, span.clone())?;
        Ok(self.cast(checked, ElemType::I32))
    }

    /// `⍺⍸⍵` with a known ⍺ of rank 2 or more (at most [`UNROLL_ITEMS`] items,
    /// integers or f32): for each cell `y` of ⍵, how many major cells `c` of ⍺ are at
    /// most it in `⍋`'s order, `c ≤ y` built from the last item back as
    /// `(c₀<y₀)∨(c₀=y₀)∧(c₁<y₁)∨…`, exact as the reference's.
    fn interval_index_cells(&mut self, cuts: &Array, x: Value, span: Span) -> Result<Value> {
        let xt = self.f.ty(x).clone();
        let cell: Vec<Dim> = cuts.shape[1..]
            .iter()
            .map(|&d| Dim::Known(d as u64))
            .collect();
        let cr = cell.len();
        if xt.rank() < cr {
            return Err(err::rank(
                "⍺⍸⍵ needs ⍵ of at least the rank of ⍺'s major cells",
                span,
            ));
        }
        if xt.shape[xt.rank() - cr..] != cell[..] {
            return Err(err::length(
                "⍺⍸⍵ needs ⍵'s cells shaped like ⍺'s major cells",
                span,
            ));
        }
        let t = cuts.elem.join(xt.elem);
        if cuts.len() > UNROLL_ITEMS || t == ElemType::F64 {
            return self.unsupported("⍸ with many or f64 intervals", &span);
        }
        let n = cuts.shape[0];
        let k = cuts.len().checked_div(n).unwrap_or(0);
        let item = |i: usize| cuts.data.get(i).cast(t);
        let order = |p: Scalar, q: Scalar| {
            if t.is_int() {
                p.as_i64().cmp(&q.as_i64())
            } else {
                ((p.as_f64() as f32) + 0.0).total_cmp(&((q.as_f64() as f32) + 0.0))
            }
        };
        let ascending = (1..n).all(|i| {
            (0..k)
                .map(|j| order(item((i - 1) * k + j), item(i * k + j)))
                .find(|o| o.is_ne())
                .is_none_or(|o| o.is_lt())
        });
        if !ascending {
            return Err(err::domain("⍺⍸⍵ needs ⍺ in ascending order", span));
        }
        let lead = xt.shape[..xt.rank() - cr].to_vec();
        // Item j of every cell of ⍵: a one-item window, then the cell's axes dropped.
        let mut columns = Vec::with_capacity(k);
        for j in 0..k {
            let mut start = vec![0i64; lead.len()];
            let mut rem = j;
            let mut coords = vec![0i64; cr];
            for (a, &d) in cuts.shape[1..].iter().enumerate().rev() {
                coords[a] = (rem % d) as i64;
                rem /= d;
            }
            start.extend(coords);
            let mut shape = lead.clone();
            shape.extend(std::iter::repeat_n(Dim::Known(1), cr));
            let fill = Scalar::I32(0).cast(xt.elem);
            let w = self.gather(x, Gather::Window { start, fill }, shape, span.clone());
            columns.push(self.reshape(w, lead.clone(), span.clone()));
        }
        let base = self.io as i32 - 1;
        let mut acc = self.konst(Array::scalar(Scalar::I32(base)), span.clone());
        for i in 0..n {
            let mut le: Option<Value> = None;
            for j in (0..k).rev() {
                let c = self.konst(Array::scalar(cuts.data.get(i * k + j)), span.clone());
                let y = columns[j];
                le = Some(match le {
                    // The last item: c ≤ y.
                    None => self.binary(BinOp::LessEq, c, y, span.clone())?,
                    Some(rest) => {
                        let lt = self.binary(BinOp::Less, c, y, span.clone())?;
                        let eq = self.binary(BinOp::Equal, c, y, span.clone())?;
                        let tie = self.binary(BinOp::And, eq, rest, span.clone())?;
                        self.binary(BinOp::Or, lt, tie, span.clone())?
                    }
                });
            }
            let le = match le {
                Some(le) => le,
                // Empty cells are all equal: every cell of ⍺ is at most y.
                None => self.konst(Array::scalar(Scalar::Bool(true)), span.clone()),
            };
            acc = self.binary(BinOp::Add, acc, le, span.clone())?;
        }
        let acc = self.cast(acc, ElemType::I32);
        if self.f.ty(acc).shape != lead {
            return Ok(self.reshape(acc, lead, span));
        }
        Ok(acc)
    }

    /// `⍺⊥⍵` with a radix scalar or vector known when compiling: the place values
    /// (`×/` of the radices to the right of each) made here, then `w+.×⍵`.
    pub(super) fn decode(&mut self, a: Value, x: Value, span: Span) -> Result<Value> {
        let Some(r) = self.known_value(a) else {
            return self.unsupported("⊥ with radices computed on the device", &span);
        };
        let xt = self.f.ty(x).clone();
        if r.rank() > 2 {
            return self.unsupported("⊥ with radices of rank above 2", &span);
        }
        let n = match xt.shape.first() {
            None => 1,
            Some(Dim::Known(n)) => *n as usize,
            Some(_) => {
                return self.unsupported("⊥ of digits whose count is known only at run time", &span)
            }
        };
        // Each row of the radices (one for a vector) against the digits.
        let na = r.shape.last().copied().unwrap_or(1);
        let rows = if r.rank() == 2 { r.shape[0] } else { 1 };
        let m = if na == 1 { n } else { na };
        if m != n && n != 1 {
            return Err(err::length(
                format!("⊥ of {na} radices and {n} digits"),
                span,
            ));
        }
        // The place values are a literal, refused past the reference's own limit
        // (`10⊥(-2*62)↑x` has digits beyond any memory).
        if (rows as u64).saturating_mul(m as u64) > super::LITERAL_LIMIT {
            return Err(err::ws_full(
                format!("⊥ of {m} digits needs {m} place values"),
                span,
            ));
        }
        let float = self.f.float;
        // Place values from the right, exact (an overflow leaves it to the reference).
        let mut w = Vec::with_capacity(rows * m);
        for row in 0..rows {
            let radix = |i: usize| r.data.get(row * na + if na == 1 { 0 } else { i });
            let mut wr = vec![Scalar::I32(1).cast(r.elem.join(ElemType::I32)); m];
            for i in (0..m.saturating_sub(1)).rev() {
                match BinOp::Mul.apply(wr[i + 1], radix(i + 1), float) {
                    Ok(v) => wr[i] = v,
                    Err(_) => return self.unsupported("⊥ whose place values leave 64 bits", &span),
                }
            }
            w.extend(wr);
        }
        let ty = w
            .iter()
            .map(|s| s.elem_type())
            .max()
            .unwrap_or(ElemType::I32);
        let mut d = Data::with_capacity(ty, w.len());
        w.iter().for_each(|s| d.push(s.cast(ty)));
        let wshape = if r.rank() == 2 {
            vec![rows, m]
        } else {
            vec![m]
        };
        let wv = self.konst(Array::new(wshape, d), span.clone());
        let x = if xt.rank() == 0 || n != m {
            // A single digit (or row of digits) repeats for every radix.
            let mut shape = vec![Dim::Known(m as u64)];
            shape.extend(xt.shape.iter().skip(1).copied());
            self.reshape(x, shape, span.clone())
        } else {
            x
        };
        let plus = Func::new(FuncKind::Prim(Prim::Plus), span.clone());
        let times = Func::new(FuncKind::Prim(Prim::Times), span.clone());
        let v = self.inner(&plus, &times, wv, x, span.clone())?;
        // The reference's type: integers give i64.
        let want = BinOp::Mul.result_type(r.elem, xt.elem, float);
        Ok(if self.f.ty(v).elem != want && want.is_int() {
            self.cast(v, want)
        } else {
            v
        })
    }

    /// `⍺⊤⍵` with a radix scalar or vector known when compiling (at most
    /// [`UNROLL_ITEMS`]): the reference's steps from the last radix to the first
    /// (`z←r|q`, then `q←(q-z)÷r`, or `q←0` for a radix of 0), the exact division of
    /// i32 done in f64 (exact below 2^53) and of i64 in 64 bits, the digits stacked
    /// along a new first axis.
    pub(super) fn encode(&mut self, a: Value, x: Value, span: Span) -> Result<Value> {
        let Some(r) = self.known_value(a) else {
            return self.unsupported("⊤ with radices computed on the device", &span);
        };
        let xt = self.f.ty(x).clone();
        if r.rank() > 1 || r.len() > UNROLL_ITEMS || r.is_empty() {
            return self.unsupported("⊤ with these radices", &span);
        }
        if !r.elem.is_int() && xt.elem.is_int() {
            return self.unsupported("⊤ of integers with float radices", &span);
        }
        let float = self.f.float;
        let want = BinOp::Residue.result_type(r.elem, xt.elem, float);
        let n = r.len();
        let mut digits = vec![None; n];
        let mut q = x;
        for i in (0..n).rev() {
            let ri = r.data.get(i);
            let rv = self.konst(Array::scalar(ri), span.clone());
            let z = self.binary(BinOp::Residue, rv, q, span.clone())?;
            digits[i] = Some(self.cast(z, want));
            if i == 0 {
                break;
            }
            q = if ri.as_f64() == 0.0 {
                let zero = self.konst(Array::scalar(Scalar::I32(0).cast(want)), span.clone());
                self.reshape(zero, xt.shape.clone(), span.clone())
            } else {
                let d = self.binary(BinOp::Sub, q, z, span.clone())?;
                if xt.elem == ElemType::I64 {
                    // 64-bit integers divide exactly in 64 bits.
                    let rv = self.konst(
                        Array::scalar(Scalar::I64(ri.as_i64().unwrap_or(1))),
                        span.clone(),
                    );
                    self.binary(BinOp::Quot, d, rv, span.clone())?
                } else if xt.elem.is_int() {
                    let d = self.cast(d, ElemType::F64);
                    let rf = self.konst(Array::scalar(Scalar::F64(ri.as_f64())), span.clone());
                    let d = self.binary(BinOp::Div, d, rf, span.clone())?;
                    self.unary(UnOp::Floor, d, span.clone())?
                } else {
                    self.binary(BinOp::Div, d, rv, span.clone())?
                }
            };
        }
        let digits: Vec<Value> = digits.into_iter().flatten().collect();
        if r.rank() == 0 {
            return Ok(digits[0]);
        }
        let mut lifted = vec![Dim::Known(1)];
        lifted.extend(xt.shape.iter().copied());
        let mut acc: Option<Value> = None;
        for d in digits {
            let d = self.reshape(d, lifted.clone(), span.clone());
            acc = Some(match acc {
                None => d,
                Some(p) => self.catenate(p, d, 0, span.clone())?,
            });
        }
        Ok(acc.expect("at least one radix"))
    }
}
