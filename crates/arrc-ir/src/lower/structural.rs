//! Lowering structural functions: index remappings (reverse, rotate, transpose,
//! take, drop, reshape), catenation, compress and replicate, and indexing.

use super::*;

/// The largest count magnitude a replicate by computed counts runs on the device with
/// (`Lower::device_replicate`): its result's buffer holds that many items for each
/// of its argument's, until it is copied to one of its size.
const REPLICATE_LIMIT: u128 = 64;

impl Lower {
    pub(super) fn gather(&mut self, arg: Value, map: Gather, shape: Vec<Dim>, span: Span) -> Value {
        let elem = self.f.ty(arg).elem;
        self.f
            .push(Inst::Gather { arg, map }, Type { elem, shape }, span)
    }

    /// `arg` with the same elements in ravel order and another shape.
    pub(super) fn reshape(&mut self, arg: Value, shape: Vec<Dim>, span: Span) -> Value {
        if self.f.ty(arg).shape == shape {
            return arg;
        }
        let fill = Scalar::I32(0).cast(self.f.ty(arg).elem);
        self.gather(arg, Gather::Cycle { fill }, shape, span)
    }

    /// The cells of `x` along axis `ax` in the order `picks` names them (from 0), a
    /// cell of fill items for `None`: the gathered cells of replicate and expand.
    fn pick_cells(
        &mut self,
        x: Value,
        ax: usize,
        picks: &[Option<u32>],
        span: Span,
    ) -> Result<Value> {
        let xt = self.f.ty(x).clone();
        let Dim::Known(n) = xt.shape[ax] else {
            return Err(err::needs_known(
                "replicate along a run-time length is not supported yet",
                span,
            ));
        };
        // Fill items are gathered from a fill cell put after the last one.
        let x = if picks.iter().any(|p| p.is_none()) {
            let zero = Array::scalar(Scalar::I32(0).cast(xt.elem));
            let z = self.konst(zero, span.clone());
            self.catenate(x, z, ax, span.clone())?
        } else {
            x
        };
        let idx: Vec<i32> = picks
            .iter()
            .map(|p| p.map_or(n as i32 + 1, |k| k as i32 + 1))
            .collect();
        let iv = self.konst(Array::vector(Data::I32(idx)), span.clone());
        let axes = (0..xt.rank()).map(|k| (k == ax).then_some(iv)).collect();
        self.index(x, axes, span)
    }

    /// `⍺\[k]⍵` (expand) with counts known when compiling: the j-th positive count
    /// repeats the j-th cell, a negative one inserts that many fill cells, a 0 one.
    pub(super) fn expand(
        &mut self,
        a: Value,
        x: Value,
        axis: Option<usize>,
        span: Span,
    ) -> Result<Value> {
        let Some(counts) = self.const_ints(a) else {
            return Err(err::unsupported(
                "expand with counts computed on the device is not supported on the GPU path yet",
                span,
            ));
        };
        if self.f.ty(a).rank() > 1 {
            return Err(err::rank("expand counts must be a scalar or vector", span));
        }
        let x = if self.f.ty(x).rank() == 0 {
            self.reshape(x, vec![Dim::Known(1)], span.clone())
        } else {
            x
        };
        let xt = self.f.ty(x).clone();
        let ax = axis.unwrap_or(xt.rank() - 1);
        let Dim::Known(n) = xt.shape[ax] else {
            return Err(err::needs_known(
                "expand along a run-time length is not supported yet",
                span,
            ));
        };
        let positive = counts.iter().filter(|&&c| c > 0).count() as u64;
        if n != positive && n != 1 {
            return Err(err::length(
                format!("{positive} positive counts for an axis of length {n}"),
                span,
            ));
        }
        let total = counts
            .iter()
            .fold(0u64, |t, &c| t.saturating_add(c.unsigned_abs().max(1)));
        if total > LITERAL_LIMIT {
            return Err(err::ws_full(
                format!("expand would give {total} items along its axis"),
                span,
            ));
        }
        let mut j = 0u32;
        let mut picks = Vec::with_capacity(total as usize);
        for &c in &counts {
            let pick = (c > 0).then_some(if n == 1 { 0 } else { j });
            picks.extend(std::iter::repeat_n(pick, c.unsigned_abs().max(1) as usize));
            if c > 0 {
                j += 1;
            }
        }
        self.pick_cells(x, ax, &picks, span)
    }

    /// `l,[k.5]r` (laminate): both, of one shape (a scalar extends), joined along a
    /// new axis of length 2 at position `at`.
    pub(super) fn laminate(&mut self, l: Value, r: Value, at: usize, span: Span) -> Result<Value> {
        let (lt, rt) = (self.f.ty(l).clone(), self.f.ty(r).clone());
        let shape = match (lt.rank(), rt.rank()) {
            (0, _) => rt.shape.clone(),
            (_, 0) => lt.shape.clone(),
            _ if lt.shape == rt.shape => lt.shape.clone(),
            (a, b) if a != b => {
                return Err(err::rank("laminate needs arguments of one rank", span))
            }
            _ if known_dims(&lt.shape).is_some() && known_dims(&rt.shape).is_some() => {
                return Err(err::length("laminate needs arguments of one shape", span))
            }
            _ => {
                return Err(err::unsupported(
                    "laminate of arrays whose lengths are known only at run time is not supported on the GPU path yet",
                    span,
                ))
            }
        };
        let mut lifted = shape;
        lifted.insert(at, Dim::Known(1));
        let l = self.reshape(l, lifted.clone(), span.clone());
        let r = self.reshape(r, lifted, span.clone());
        self.structural2(Prim::Comma, l, r, Some(at), span)
    }

    /// A structural function applied monadically (with an axis when given).
    pub(super) fn structural1(
        &mut self,
        p: Prim,
        x: Value,
        axis: Option<usize>,
        span: Span,
    ) -> Result<Value> {
        let ty = self.f.ty(x).clone();
        let r = ty.rank();
        let shape_const = |l: &mut Self, dims: &[Dim]| -> Option<Value> {
            let dims = known_dims(dims)?;
            let d = Data::I32(dims.iter().map(|&n| n as i32).collect());
            Some(l.konst(Array::vector(d), span.clone()))
        };
        // A length known only at run time (a compress's) is read on the device.
        let length = |l: &mut Self, axis: usize| match ty.shape[axis] {
            Dim::Known(n) => l.konst(Array::scalar(Scalar::I32(n as i32)), span.clone()),
            _ => l.f.push(
                Inst::Length { of: x, axis },
                Type::scalar(ElemType::I32),
                span.clone(),
            ),
        };
        match p {
            Prim::Rho => match shape_const(self, &ty.shape) {
                Some(v) => Ok(v),
                None if r == 1 => {
                    let n = length(self, 0);
                    Ok(self.reshape(n, vec![Dim::Known(1)], span))
                }
                None => Err(err::needs_known(
                    "⍴ of a run-time shape is not supported yet",
                    span.clone(),
                )),
            },
            Prim::Tally => match ty.shape.first() {
                None => Ok(self.konst(Array::scalar(Scalar::I32(1)), span)),
                Some(_) => Ok(length(self, 0)),
            },
            Prim::Comma => {
                let n = match known_dims(&ty.shape) {
                    Some(d) => Dim::Known(crate::array::saturating_count(&d) as u64),
                    None if r == 1 => ty.shape[0],
                    None => {
                        return Err(err::needs_known(
                            "ravel of a run-time shape is not supported yet",
                            span,
                        ))
                    }
                };
                Ok(self.reshape(x, vec![n], span))
            }
            Prim::CommaBar => {
                let shape = match (ty.shape.first(), known_dims(&ty.shape)) {
                    (None, _) => vec![Dim::Known(1), Dim::Known(1)],
                    (Some(d), _) if r == 1 => vec![*d, Dim::Known(1)],
                    (Some(d), Some(all)) => {
                        vec![
                            *d,
                            Dim::Known(crate::array::saturating_count(&all[1..]) as u64),
                        ]
                    }
                    _ if r == 2 => ty.shape.clone(),
                    _ => {
                        return Err(err::needs_known(
                            "table of a run-time shape is not supported yet",
                            span,
                        ))
                    }
                };
                Ok(self.reshape(x, shape, span))
            }
            Prim::Reverse | Prim::ReverseFirst if r == 0 => Ok(x),
            Prim::Reverse | Prim::ReverseFirst => {
                let a = axis.unwrap_or(if p == Prim::Reverse { r - 1 } else { 0 });
                Ok(self.gather(x, Gather::Reverse(a), ty.shape, span))
            }
            Prim::Transpose => {
                let axes: Vec<usize> = (0..r).rev().collect();
                let shape: Vec<Dim> = ty.shape.iter().rev().copied().collect();
                Ok(self.gather(x, Gather::Axes(axes), shape, span))
            }
            _ => Err(err::unsupported(
                format!("monadic {} is not supported on the GPU path yet", p.glyph()),
                span,
            )),
        }
    }

    /// A structural function applied dyadically (with an axis when given).
    pub(super) fn structural2(
        &mut self,
        p: Prim,
        a: Value,
        x: Value,
        axis: Option<usize>,
        span: Span,
    ) -> Result<Value> {
        let ty = self.f.ty(x).clone();
        let r = ty.rank();
        // A known left argument that is not made of integers is the APL error;
        // an unknown one cannot give a shape here.
        let known_a = self.known_value(a).map(|k| k.rank());
        let need_const = |what: &str| {
            if known_a.is_some_and(|r| r > 1) {
                err::rank(
                    format!("{what}: the left argument must be a scalar or vector"),
                    span.clone(),
                )
            } else if known_a.is_some() {
                err::domain(
                    format!("{what}: the left argument must be integers"),
                    span.clone(),
                )
            } else {
                err::needs_known(
                    format!(
                        "{what}: the left argument must be known before the program runs on the GPU path"
                    ),
                    span.clone(),
                )
            }
        };
        match p {
            Prim::Comma | Prim::CommaBar => {
                let rank = self.f.ty(a).rank().max(r).max(1);
                let ax = axis.unwrap_or(if p == Prim::Comma { rank - 1 } else { 0 });
                self.catenate(a, x, ax, span)
            }
            Prim::Rho => {
                let dims = self.const_ints(a).ok_or_else(|| need_const("⍴"))?;
                if dims.iter().any(|&d| d < 0) {
                    return Err(err::domain("a shape must be non-negative integers", span));
                }
                let shape: Vec<Dim> = dims.iter().map(|&d| Dim::Known(d as u64)).collect();
                let n = if dims.contains(&0) {
                    0
                } else {
                    dims.iter()
                        .try_fold(1u64, |a, &d| a.checked_mul(d as u64))
                        .unwrap_or(u64::MAX)
                };
                if n > i32::MAX as u64 {
                    return Err(err::ws_full("the result has too many elements", span));
                }
                let fill = Scalar::I32(0).cast(ty.elem);
                Ok(self.gather(x, Gather::Cycle { fill }, shape, span))
            }
            Prim::Reverse | Prim::ReverseFirst => {
                if r == 0 {
                    return Ok(x);
                }
                let ax = axis.unwrap_or(if p == Prim::Reverse { r - 1 } else { 0 });
                let at = self.f.ty(a).clone();
                if let Some([b]) = self.const_ints(a).as_deref() {
                    if at.rank() == 0 || at.is_singleton() {
                        return Ok(self.gather(
                            x,
                            Gather::Rotate { axis: ax, by: *b },
                            ty.shape,
                            span,
                        ));
                    }
                }
                // Known amounts held as floats: integers, or a DOMAIN ERROR.
                let (a, at) = match self.known_value(a) {
                    Some(k) if at.elem.is_float() => {
                        let Some(ints) = self.const_ints(a) else {
                            return Err(err::domain("rotation amounts must be integers", span));
                        };
                        let ints = Data::I32(ints.iter().map(|&v| v as i32).collect());
                        let v = self.konst(Array::new(k.shape.clone(), ints), span.clone());
                        (v, self.f.ty(v).clone())
                    }
                    _ => (a, at),
                };
                // A computed amount, or one per line of the axis; one element of any
                // rank extends to every line.
                let (a, at) = if at.rank() > 0 && at.is_singleton() {
                    let s = self.reshape(a, vec![], span.clone());
                    (s, self.f.ty(s).clone())
                } else {
                    (a, at)
                };
                if at.elem.is_float() {
                    return Err(err::needs_known(
                        "⌽ by float amounts is not supported on the GPU path",
                        span,
                    ));
                }
                let mut lines = ty.shape.clone();
                lines.remove(ax);
                if at.rank() != 0 && at.rank() != lines.len() {
                    return Err(err::rank(
                        format!(
                            "⌽ amounts of rank {} for lines of rank {}",
                            at.rank(),
                            lines.len()
                        ),
                        span,
                    ));
                }
                if at.rank() != 0 && at.shape != lines {
                    return Err(err::length("⌽ amounts do not match the lines", span));
                }
                if !matches!(ty.shape[ax], Dim::Known(_)) {
                    return Err(err::needs_known(
                        "⌽ by computed amounts along a run-time length is not supported yet",
                        span,
                    ));
                }
                Ok(self.f.push(
                    Inst::Rotate {
                        arg: x,
                        by: a,
                        axis: ax,
                    },
                    ty,
                    span,
                ))
            }
            Prim::Transpose => {
                let perm = self.const_ints(a).ok_or_else(|| need_const("⍉"))?;
                if perm.len() != r {
                    return Err(err::length(
                        format!("⍉ needs {r} axes on the left, got {}", perm.len()),
                        span,
                    ));
                }
                let io = self.io;
                let axes: Vec<usize> = perm.iter().map(|&k| (k - io).max(0) as usize).collect();
                let out_rank = axes.iter().max().map_or(0, |m| m + 1);
                if perm.iter().any(|&k| k < io || (k - io) as usize >= r)
                    || (0..out_rank).any(|j| !axes.contains(&j))
                {
                    return Err(err::axis(
                        "the axes must be a permutation, perhaps with repeats",
                        span,
                    ));
                }
                let mut shape = Vec::with_capacity(out_rank);
                for j in 0..out_rank {
                    let mut d: Option<Dim> = None;
                    for (i, &t) in axes.iter().enumerate() {
                        if t == j {
                            d = Some(match (d, ty.shape[i]) {
                                (None, x) => x,
                                (Some(Dim::Known(m)), Dim::Known(n)) => Dim::Known(m.min(n)),
                                (Some(p), x) if p == x => x,
                                _ => {
                                    return Err(err::needs_known(
                                        "a diagonal of run-time lengths is not supported yet",
                                        span,
                                    ))
                                }
                            });
                        }
                    }
                    shape.push(d.unwrap_or(Dim::Known(0)));
                }
                Ok(self.gather(x, Gather::Axes(axes), shape, span))
            }
            Prim::Take | Prim::Drop => {
                let counts = self
                    .const_ints(a)
                    .ok_or_else(|| need_const(&p.glyph().to_string()))?;
                let (x, ty) = if r == 0 {
                    let shape = vec![Dim::Known(1); counts.len().max(1)];
                    let x = self.reshape(x, shape, span.clone());
                    (x, self.f.ty(x).clone())
                } else {
                    (x, ty)
                };
                let r = ty.rank();
                let axes: Vec<usize> = match axis {
                    Some(k) if counts.len() == 1 => vec![k],
                    None if counts.len() <= r => (0..counts.len()).collect(),
                    _ => {
                        return Err(err::length(
                            format!("{} of rank {r} takes at most {r} counts", p.glyph()),
                            span,
                        ))
                    }
                };
                let mut start = vec![0i64; r];
                let mut shape = ty.shape.clone();
                for (&c, &ax) in counts.iter().zip(&axes) {
                    if p == Prim::Take && c >= 0 {
                        // Overtake fills: the argument's length is checked per element.
                        shape[ax] = Dim::Known(c as u64);
                        continue;
                    }
                    let Dim::Known(n) = ty.shape[ax] else {
                        return Err(err::needs_known(
                            "take from the end and drop on run-time lengths are not supported yet",
                            span,
                        ));
                    };
                    let n = n as i64;
                    let (st, len) = match (p, c >= 0) {
                        (Prim::Take, true) => (0, c),
                        (Prim::Take, false) => (n + c, -c),
                        (_, true) => (c.min(n), (n - c).max(0)),
                        (_, false) => (0, (n + c).max(0)),
                    };
                    start[ax] = st;
                    shape[ax] = Dim::Known(len as u64);
                }
                let fill = Scalar::I32(0).cast(ty.elem);
                Ok(self.gather(x, Gather::Window { start, fill }, shape, span))
            }
            _ => Err(err::unsupported(
                format!("dyadic {} is not supported on the GPU path yet", p.glyph()),
                span,
            )),
        }
    }

    /// `a,[axis] b`: scalars are extended, and an array one rank below the other gets a
    /// unit axis at `axis`.
    pub(super) fn catenate(
        &mut self,
        a: Value,
        b: Value,
        axis: usize,
        span: Span,
    ) -> Result<Value> {
        let (at, bt) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let elem = at.elem.join(bt.elem);
        let (a, b) = (self.cast(a, elem), self.cast(b, elem));
        let rank = at.rank().max(bt.rank()).max(1);
        let fit = |l: &mut Self, v: Value, t: &Type, other: &Type| -> Result<Value> {
            if t.rank() == rank {
                return Ok(v);
            }
            let mut shape = if other.rank() == rank {
                other.shape.clone()
            } else {
                vec![Dim::Known(1); rank]
            };
            if t.rank() == 0 {
                shape[axis] = Dim::Known(1);
                return Ok(l.reshape(v, shape, span.clone()));
            }
            if t.rank() + 1 == rank {
                let mut s = t.shape.clone();
                s.insert(axis, Dim::Known(1));
                return Ok(l.reshape(v, s, span.clone()));
            }
            Err(err::rank(
                format!(
                    "arguments of rank {} and {} do not conform",
                    at.rank(),
                    bt.rank()
                ),
                span.clone(),
            ))
        };
        let a = fit(self, a, &at, &bt)?;
        let b = fit(self, b, &bt, &at)?;
        let (at, bt) = (self.f.ty(a).clone(), self.f.ty(b).clone());
        let mut shape = at.shape.clone();
        for (k, dim) in shape.iter_mut().enumerate() {
            if k == axis {
                *dim = match (at.shape[k], bt.shape[k]) {
                    (Dim::Known(x), Dim::Known(y)) => Dim::Known(x + y),
                    _ => {
                        return Err(err::needs_known(
                            "catenating along a run-time length is not supported yet",
                            span,
                        ))
                    }
                };
            } else if at.shape[k] != bt.shape[k] {
                return Err(err::length(
                    format!("lengths {} and {} do not match", at.shape[k], bt.shape[k]),
                    span,
                ));
            }
        }
        Ok(self.f.push(
            Inst::Catenate {
                lhs: a,
                rhs: b,
                axis,
            },
            Type { elem, shape },
            span,
        ))
    }

    /// `a/x` (`a⌿x` with `first`): literal counts become a gather; a computed boolean
    /// mask of a vector compresses on the device, its result's length staying there.
    pub(super) fn compress(
        &mut self,
        a: Value,
        x: Value,
        first: bool,
        axis: Option<usize>,
        span: Span,
    ) -> Result<Value> {
        let x = if self.f.ty(x).rank() == 0 {
            let n = match self.f.ty(a).shape.first() {
                Some(d) => *d,
                None => Dim::Known(1),
            };
            self.reshape(x, vec![n], span.clone())
        } else {
            x
        };
        let xt = self.f.ty(x).clone();
        let ax = axis.unwrap_or(if first { 0 } else { xt.rank() - 1 });
        let len = xt.shape[ax];
        let at = self.f.ty(a).clone();
        if let Some(known) = self.known_value(a) {
            if known.rank() > 1 {
                return Err(err::rank(
                    "replicate counts must be a scalar or vector",
                    span,
                ));
            }
            if self.const_ints(a).is_none() {
                return Err(err::domain("replicate counts must be integers", span));
            }
        }
        if let Some(counts) = self.const_ints(a) {
            let Dim::Known(n) = len else {
                return Err(err::needs_known(
                    "replicate along a run-time length is not supported yet",
                    span,
                ));
            };
            if counts.len() != 1 && counts.len() as u64 != n {
                return Err(err::length(
                    format!("{} counts for an axis of length {n}", counts.len()),
                    span,
                ));
            }
            // The items of a cell along the axis (those known).
            let rest = (xt.shape.iter().enumerate())
                .filter(|(a, _)| *a != ax)
                .fold(1u64, |acc, (_, d)| match d {
                    Dim::Known(m) => acc.saturating_mul(*m),
                    _ => acc,
                });
            // One count k ≥ 1 for every item (`2/x`): item c reads ⌊c÷k (a gather;
            // nothing is made here, whatever the length).
            if let Some(&k) = counts
                .first()
                .filter(|&&k| k >= 1 && counts.iter().all(|&c| c == k))
            {
                let total = n.saturating_mul(k as u64);
                match u32::try_from(k) {
                    Ok(1) => return Ok(x),
                    Ok(times) if total.saturating_mul(rest) <= crate::plan::MAX_DEVICE_COUNT => {
                        let mut shape = xt.shape.clone();
                        shape[ax] = Dim::Known(total);
                        return Ok(self.gather(x, Gather::Repeat { axis: ax, times }, shape, span));
                    }
                    _ => {
                        return Err(err::ws_full(
                            format!("replicate would give {total} items along its axis"),
                            span,
                        ))
                    }
                }
            }
            let counts = if counts.len() == 1 {
                vec![counts[0]; n as usize]
            } else {
                counts
            };
            let total = counts
                .iter()
                .fold(0u64, |t, &c| t.saturating_add(c.unsigned_abs()));
            // The gather's indices are made here, one per item: at most the reference's
            // own limit of items (2^28; the fuzzer's `2147483647⌿t` allocated 8 GB
            // of indices and the process was killed), and a result within the
            // device's.
            if total > LITERAL_LIMIT || total.saturating_mul(rest) > crate::plan::MAX_DEVICE_COUNT {
                return Err(err::ws_full(
                    format!("replicate would give {total} items along its axis"),
                    span,
                ));
            }
            // A negative count inserts that many fill items.
            let picks: Vec<Option<u32>> = counts
                .iter()
                .enumerate()
                .flat_map(|(k, &c)| {
                    std::iter::repeat_n((c > 0).then_some(k as u32), c.unsigned_abs() as usize)
                })
                .collect();
            return self.pick_cells(x, ax, &picks, span);
        }
        if let Some(r) = self.device_replicate(a, x, span.clone())? {
            return Ok(r);
        }
        if at.elem != ElemType::Bool || at.rank() != 1 || xt.rank() != 1 {
            return Err(err::needs_known(
                "on the GPU path, computed replicate counts must be a boolean vector compressing a vector",
                span,
            ));
        }
        match (at.shape[0], len) {
            (Dim::Dyn(_), _) | (_, Dim::Dyn(_)) if at.shape[0] != len => {
                return Err(err::needs_known(
                    "a mask and an array whose lengths are computed on the device in different ways are not supported on the GPU path yet",
                    span,
                ))
            }
            (Dim::Known(p), Dim::Known(q)) if p != q => {
                return Err(err::length(
                    format!("lengths {p} and {q} do not match"),
                    span,
                ))
            }
            (p, q) if p != q => self.f.checks.push(LengthCheck {
                a: p,
                b: q,
                span: span.clone(),
            }),
            _ => {}
        }
        Ok(self.device_compress(a, x, len, span))
    }

    /// `mask/x` of a vector by a boolean vector of its length (checked), its result's
    /// length left on the device, at most `len` (`x`'s).
    fn device_compress(&mut self, mask: Value, x: Value, len: Dim, span: Span) -> Value {
        let elem = self.f.ty(x).elem;
        let id = self.f.dyn_bounds.len() as u32;
        // Bounds are lengths known on the host (a compress of a compress is bounded
        // by the first one's bound).
        let bound = match len {
            Dim::Dyn(i) => self.f.dyn_bounds[i as usize],
            d => d,
        };
        self.f.dyn_bounds.push(bound);
        self.f.push(
            Inst::Compress { mask, arg: x },
            Type {
                elem,
                shape: vec![Dim::Dyn(id)],
            },
            span,
        )
    }

    /// `c/x` of a vector `x` of known length by computed integer counts `c` whose
    /// magnitude the IR bounds by some `m` (at most [`REPLICATE_LIMIT`]): the counts
    /// never leave the device. A compress by the counts `|c|` (i32) of the values
    /// `x` where `c` is positive and fill items where it is negative, whose result
    /// (its length left on the device) is bounded by `m` items for each of `x`'s.
    /// `None` where that does not apply (the counts are then known first, on the
    /// host).
    fn device_replicate(&mut self, a: Value, x: Value, span: Span) -> Result<Option<Value>> {
        let (at, xt) = (self.f.ty(a).clone(), self.f.ty(x).clone());
        if !matches!(at.elem, ElemType::I32 | ElemType::I64) || at.rank() > 1 || xt.rank() != 1 {
            return Ok(None);
        }
        let Some(m) = crate::bounds::magnitude(&self.f, a) else {
            return Ok(None);
        };
        let counts = at.shape.first().copied().unwrap_or(Dim::Known(1));
        let (Dim::Known(k), Dim::Known(n)) = (counts, xt.shape[0]) else {
            return Ok(None);
        };
        // A single count applies to every item, a single item to every count.
        let (x, n) = match (k, n) {
            (k, n) if k == n || k == 1 => (x, n),
            (k, 1) => (self.reshape(x, vec![Dim::Known(k)], span.clone()), k),
            (k, n) => {
                return Err(err::length(
                    format!("{k} counts for an axis of length {n}"),
                    span,
                ))
            }
        };
        let Some(bound) = replicate_bound(m, n) else {
            return Ok(None);
        };
        // Counts within 64 in magnitude: read as i32 (an array of them, where they
        // are computed and read twice, is half the size).
        let c = self.cast(a, ElemType::I32);
        let c = self.reshape(c, vec![Dim::Known(n)], span.clone());
        // Counts the IR shows are never negative are read once a use, where each is
        // computed (`(1+x>0.5)/x`); others also choose fill items.
        if crate::bounds::nonnegative(&self.f, a) {
            return Ok(Some(self.device_compress(
                c,
                x,
                Dim::Known(bound as u64),
                span,
            )));
        }
        let size = self.unary(UnOp::Abs, c, span.clone())?;
        let size = self.cast(size, ElemType::I32);
        let zero = self.konst(Array::scalar(Scalar::I32(0)), span.clone());
        let positive = self.binary(BinOp::Greater, c, zero, span.clone())?;
        let fill = self.konst(Array::scalar(Scalar::I32(0).cast(xt.elem)), span.clone());
        let vals = self.select(positive, x, fill, &span)?;
        Ok(Some(self.device_compress(
            size,
            vals,
            Dim::Known(bound as u64),
            span,
        )))
    }

    /// `⍸c` of integer counts `c` (a vector of known length) whose magnitude the IR
    /// bounds as [`Self::device_replicate`] needs: a replicate of `⍳≢c` by them on
    /// the device, a negative count a DOMAIN ERROR there (`BinOp::Counts`) unless
    /// the IR shows there is none.
    pub(super) fn device_where(&mut self, c: Value, span: Span) -> Result<Option<Value>> {
        let ct = self.f.ty(c).clone();
        let n = match ct.shape.as_slice() {
            [Dim::Known(n)] if matches!(ct.elem, ElemType::I32 | ElemType::I64) => *n,
            _ => return Ok(None),
        };
        let Some(bound) = crate::bounds::magnitude(&self.f, c).and_then(|m| replicate_bound(m, n))
        else {
            return Ok(None);
        };
        let c = if crate::bounds::nonnegative(&self.f, c) {
            c
        } else {
            let zero = self.konst(Array::scalar(Scalar::I32(0)), span.clone());
            let ok = self.binary(BinOp::GreaterEq, c, zero, span.clone())?;
            self.binary(BinOp::Counts, c, ok, span.clone())?
        };
        let c = self.cast(c, ElemType::I32);
        let iota = self.iota_of(Dim::Known(n), self.io as i32, &span);
        Ok(Some(self.device_compress(
            c,
            iota,
            Dim::Known(bound as u64),
            span,
        )))
    }

    /// Float indices (as written, from ⎕IO) as 1-based integers: a DOMAIN ERROR for
    /// one that is not an integer (`1∧i` raises it on the device), and one beyond
    /// every axis kept beyond it (clamped before it becomes an integer).
    fn float_index(&mut self, i: Value, span: Span) -> Result<Value> {
        let one = self.konst(Array::scalar(Scalar::I32(1)), span.clone());
        let whole = self.binary(BinOp::And, one, i, span.clone())?;
        let t = self.f.ty(whole).elem;
        let hi = self.konst(Array::scalar(Scalar::float(4.0e18, t)), span.clone());
        let lo = self.konst(Array::scalar(Scalar::float(-1.0, t)), span.clone());
        let c = self.binary(BinOp::Min, whole, hi, span.clone())?;
        let c = self.binary(BinOp::Max, c, lo, span.clone())?;
        let c = self.cast(c, ElemType::I64);
        if self.io == 1 {
            return Ok(c);
        }
        let d = self.konst(Array::scalar(Scalar::I64(1 - self.io)), span.clone());
        self.binary(BinOp::Add, c, d, span)
    }

    /// `x[i;j;…]`, with one entry per axis of `x` (1-based indices).
    pub(super) fn index(
        &mut self,
        x: Value,
        axes: Vec<Option<Value>>,
        span: Span,
    ) -> Result<Value> {
        let xt = self.f.ty(x).clone();
        if axes.len() != xt.rank() {
            return Err(err::rank(
                format!("{} indices for an array of rank {}", axes.len(), xt.rank()),
                span,
            ));
        }
        let mut shape = vec![];
        let mut axes = axes;
        for ix in axes.iter_mut().flatten() {
            if self.f.ty(*ix).elem.is_float() {
                *ix = self.float_index(*ix, span.clone())?;
            }
        }
        for (a, ix) in axes.iter().enumerate() {
            match ix {
                Some(i) => {
                    // Known indices into a known length are checked here: an empty
                    // result would never read them (`4⌷2 2 0⍴0` is an INDEX ERROR).
                    if let (Some(k), Dim::Known(len)) = (self.const_ints(*i), xt.shape[a]) {
                        if let Some(&bad) = k.iter().find(|&&v| v < 1 || v > len as i64) {
                            return Err(err::index(
                                format!(
                                    "index {} is outside {}…{} on axis {}",
                                    bad - 1 + self.io,
                                    self.io,
                                    len as i64 - 1 + self.io,
                                    a + 1
                                ),
                                span,
                            ));
                        }
                    }
                    let it = self.f.ty(*i);
                    shape.extend(it.shape.iter().copied());
                }
                None => shape.push(xt.shape[a]),
            }
        }
        Ok(self.f.push(
            Inst::Index { arg: x, axes },
            Type {
                elem: xt.elem,
                shape,
            },
            span,
        ))
    }
}

/// The bound of a replicate's result by `n` counts of magnitude at most `m`, where
/// the device may make it: `m` at most [`REPLICATE_LIMIT`] and the result within
/// `MAX_DEVICE_COUNT`.
fn replicate_bound(m: u128, n: u64) -> Option<u128> {
    let bound = u128::from(n) * m;
    (m <= REPLICATE_LIMIT && bound <= u128::from(crate::plan::MAX_DEVICE_COUNT)).then_some(bound)
}
