//! Roll `?⍵` and deal `⍺?⍵` from a counter-based generator: Philox4x32-10
//! (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), keyed by
//! ⎕RL's seed. Draw `i` of a session is a function of the seed and `i` alone, so any
//! device can compute the same numbers in parallel.

use crate::prims::{check_size, int_vector};
use arrc_ir::error::{err, Result};
use arrc_ir::{Array, Data, ElemType, Scalar};
use arrc_syntax::Span;

/// ⎕RL in a clear workspace (Dyalog's).
pub const DEFAULT_SEED: u64 = 16807;

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox4x32 with 10 rounds: four 32-bit words from a 128-bit counter and a 64-bit
/// key.
pub fn philox4x32(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (ctr, key);
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let p0 = (M0 as u64) * (c[0] as u64);
        let p1 = (M1 as u64) * (c[2] as u64);
        c = [
            ((p1 >> 32) as u32) ^ c[1] ^ k[0],
            p1 as u32,
            ((p0 >> 32) as u32) ^ c[3] ^ k[1],
            p0 as u32,
        ];
    }
    c
}

/// The 64 random bits of draw `i` under `seed`.
pub fn draw(seed: u64, i: u64) -> u64 {
    let r = philox4x32(
        [i as u32, (i >> 32) as u32, 0, 0],
        [seed as u32, (seed >> 32) as u32],
    );
    (r[0] as u64) | ((r[1] as u64) << 32)
}

/// An integer from 0 to n-1 from 64 random bits (the high half of their product with
/// n: no division, bias below 2^-64·n).
pub fn below(bits: u64, n: u64) -> u64 {
    ((bits as u128 * n as u128) >> 64) as u64
}

/// A float strictly between 0 and 1 from 64 random bits (53 of them).
pub fn unit(bits: u64) -> f64 {
    ((bits >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// The generator's state in a session: ⎕RL's seed and the draws made since it was set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rng {
    pub seed: u64,
    pub next: u64,
}

impl Default for Rng {
    fn default() -> Self {
        Rng {
            seed: DEFAULT_SEED,
            next: 0,
        }
    }
}

impl Rng {
    fn take(&mut self) -> u64 {
        let b = draw(self.seed, self.next);
        self.next = self.next.wrapping_add(1);
        b
    }
}

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
            Scalar::float(unit(b), float)
        } else {
            Scalar::I64(below(b, n as u64) as i64 + io).cast(ty)
        });
    }
    Ok(Array::new(x.shape.clone(), d))
}

/// `⍺?⍵`: ⍺ distinct integers chosen from ⍳⍵ in random order (a partial
/// Fisher–Yates shuffle, one draw per item).
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
    let wide = n - 1 + io > i32::MAX as i64;
    Ok(Array::vector(if wide {
        Data::I64(out)
    } else {
        Data::I32(out.into_iter().map(|v| v as i32).collect())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_known_answers() {
        // The known-answer vectors of Random123 for Philox4x32-10.
        assert_eq!(
            philox4x32([0; 4], [0; 2]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox4x32([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox4x32(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn draws_stay_in_range() {
        for i in 0..10_000 {
            let b = draw(3, i);
            assert!(below(b, 6) < 6);
            let u = unit(b);
            assert!(u > 0.0 && u < 1.0);
        }
        assert_eq!(below(u64::MAX, 6), 5);
        assert_eq!(below(0, 6), 0);
    }
}
