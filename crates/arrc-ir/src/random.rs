//! The generator of `?`: Philox4x32-10 (Salmon et al., "Parallel random numbers: as
//! easy as 1, 2, 3", SC 2011), keyed by ⎕RL's seed. Draw `i` of a session is a
//! function of the seed and `i` alone, so the reference and every device compute the
//! same numbers, the device in parallel.

/// ⎕RL in a clear workspace (Dyalog's).
pub const DEFAULT_SEED: u64 = 16807;

/// Philox4x32's multipliers and Weyl key increments.
pub const PHILOX_M0: u32 = 0xD251_1F53;
pub const PHILOX_M1: u32 = 0xCD9E_8D57;
pub const PHILOX_W0: u32 = 0x9E37_79B9;
pub const PHILOX_W1: u32 = 0xBB67_AE85;
use {PHILOX_M0 as M0, PHILOX_M1 as M1, PHILOX_W0 as W0, PHILOX_W1 as W1};

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

/// `⍺?⍵` with ⍺ at least a 64th of ⍵ (`n?n`, a permutation), or ⍵ at most
/// [`DEAL_SORTS_BELOW`], is the first ⍺ items of the grade of `?⍵⍴DEAL_KEYS` (ties in
/// index order), one draw per item of ⍵; so the device computes it as a roll and a
/// radix grade, the same numbers as the reference. Fewer items from more are a
/// partial Fisher–Yates shuffle, one draw per item dealt (cheap on the host).
pub const DEAL_KEYS: u64 = 2147483647;

/// A deal from at most this many items sorts keys, whatever its count.
pub const DEAL_SORTS_BELOW: u64 = 4096;

/// Whether `k?n` deals by sorting keys (see [`DEAL_KEYS`]).
pub fn deal_sorts(k: u64, n: u64) -> bool {
    n > 0 && n <= DEAL_KEYS && (k.saturating_mul(64) >= n || n <= DEAL_SORTS_BELOW)
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

/// `?0` in floats of type `float`: [`unit`] in f64; in f32, the top 23 bits as
/// `(2k+1)×2^-24` (exact, strictly between 0 and 1, computed alike on a device
/// without f64).
pub fn unit_in(bits: u64, float: crate::ElemType) -> crate::Scalar {
    if float == crate::ElemType::F64 {
        crate::Scalar::F64(unit(bits))
    } else {
        let k = (bits >> 41) as u32;
        crate::Scalar::F32((2 * k + 1) as f32 * (1.0 / (1u32 << 24) as f32))
    }
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
    /// The next draw's bits.
    pub fn take(&mut self) -> u64 {
        let b = draw(self.seed, self.next);
        self.next = self.next.wrapping_add(1);
        b
    }
}

thread_local! {
    static DEVICE_RNG: std::cell::Cell<Option<Rng>> = const { std::cell::Cell::new(None) };
}

/// The generator state the compiler gives `?` on the device: a session's, set before
/// it compiles; `None` (the default, as for `arrc build`) leaves `?` to the reference.
pub fn device_rng() -> Option<Rng> {
    DEVICE_RNG.with(|c| c.get())
}

/// Sets this thread's [`device_rng`].
pub fn set_device_rng(r: Option<Rng>) {
    DEVICE_RNG.with(|c| c.set(r));
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
