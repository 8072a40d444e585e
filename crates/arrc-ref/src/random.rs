//! Roll `?⍵` and deal `⍺?⍵` on the reference, from the session's generator
//! (`arrc_ir::random`).

use crate::prims::{check_size, int_vector};
use arrc_ir::error::{err, Result};
use arrc_ir::random::{below, unit_in, Rng};
use arrc_ir::{Array, Data, ElemType, Scalar};
use arrc_syntax::Span;

/// `?⍵`: for each item n, an integer from ⎕IO to n-1+⎕IO, or a float between 0 and 1
/// for n = 0.
pub(crate) fn roll(
    x: &Array,
    rng: &mut Rng,
    io: i64,
    float: ElemType,
    span: &Span,
) -> Result<Array> {
    let mut ints = Vec::with_capacity(x.len());
    for i in 0..x.len() {
        match x.data.get(i).as_i64() {
            Some(n) if n >= 0 => ints.push(n),
            _ => return Err(err::domain("? needs non-negative integers", span.clone())),
        }
    }
    let any_float = ints.contains(&0);
    let wide = ints.iter().any(|&n| n - 1 + io > i32::MAX as i64);
    let ty = if any_float {
        float
    } else if wide {
        ElemType::I64
    } else {
        ElemType::I32
    };
    let mut d = Data::with_capacity(ty, ints.len());
    for &n in &ints {
        let b = rng.take();
        d.push(if n == 0 {
            unit_in(b, float)
        } else {
            Scalar::I64(below(b, n as u64) as i64 + io).cast(ty)
        });
    }
    Ok(Array::new(x.shape.clone(), d))
}

/// `⍺?⍵`: ⍺ distinct integers chosen from ⍳⍵ in random order: by sorting random
/// keys (`arrc_ir::random::deal_sorts`: most deals), else by a partial Fisher–Yates
/// shuffle (`arrc_ir::random::DEAL_KEYS`).
pub(crate) fn deal(a: &Array, x: &Array, rng: &mut Rng, io: i64, span: &Span) -> Result<Array> {
    let one = |v: &Array, what: &str| -> Result<i64> {
        match int_vector(v, span, what)?.as_slice() {
            [k] if *k >= 0 => Ok(*k),
            [_] => Err(err::domain(
                format!("{what} cannot be negative"),
                span.clone(),
            )),
            _ => Err(err::length(
                format!("{what} must be a single number"),
                span.clone(),
            )),
        }
    };
    let (k, n) = (one(a, "⍺ of ⍺?⍵")?, one(x, "⍵ of ⍺?⍵")?);
    if k > n {
        return Err(err::domain(
            format!("cannot deal {k} distinct items from {n}"),
            span.clone(),
        ));
    }
    check_size(k as usize, span)?;
    let wide = n - 1 + io > i32::MAX as i64;
    let out_array = |out: Vec<i64>| {
        Array::vector(if wide {
            Data::I64(out)
        } else {
            Data::I32(out.into_iter().map(|v| v as i32).collect())
        })
    };
    if arrc_ir::random::deal_sorts(k as u64, n as u64) {
        check_size(n as usize, span)?;
        let keys: Vec<u64> = (0..n)
            .map(|_| below(rng.take(), arrc_ir::random::DEAL_KEYS))
            .collect();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&i| keys[i as usize]);
        return Ok(out_array(
            order[..k as usize].iter().map(|&i| i as i64 + io).collect(),
        ));
    }
    // Positions swapped so far (the rest hold themselves).
    let mut moved: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    let mut out = Vec::with_capacity(k as usize);
    for i in 0..k as u64 {
        let j = i + below(rng.take(), n as u64 - i);
        let vj = *moved.get(&j).unwrap_or(&j);
        let vi = *moved.get(&i).unwrap_or(&i);
        moved.insert(j, vi);
        out.push(vj as i64 + io);
    }
    Ok(out_array(out))
}
