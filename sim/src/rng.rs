//! Seeded random streams.
//!
//! One seed drives a run. Each concern draws from its own ChaCha8 stream (same key, different
//! stream number), so that changing, say, the workload does not shift the network's delays.
//! We map raw `u64`s to ranges and distributions ourselves (see `dist`), because the helper
//! methods of the `rand` crates may change their output between versions.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng as _, SeedableRng as _};

/// The independent streams of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StreamId {
    /// Link delays and message loss.
    Network = 1,
    /// Function placement, migration, dispatch delays.
    Scheduler = 2,
    /// Arrivals, keys, operation mixes.
    Workload = 3,
    /// Random fault injection.
    Faults = 4,
    /// Per-message service times on nodes.
    Service = 5,
    /// Random delays nodes ask for (`Outbox::set_timer_sampled`).
    Protocol = 6,
}

/// A deterministic random stream.
#[derive(Clone, Debug)]
pub struct RngStream {
    rng: ChaCha8Rng,
}

impl RngStream {
    /// The stream `id` of the run seeded with `seed`.
    pub fn new(seed: u64, id: StreamId) -> RngStream {
        let mut key = [0u8; 32];
        let mut state = seed;
        for chunk in key.chunks_exact_mut(8) {
            chunk.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
        }
        let mut rng = ChaCha8Rng::from_seed(key);
        rng.set_stream(id as u64);
        RngStream { rng }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform in `0..n` without modulo bias (Lemire's multiply-and-reject). `n` must be > 0.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        let threshold = n.wrapping_neg() % n;
        loop {
            let product = (self.next_u64() as u128) * (n as u128);
            if (product as u64) >= threshold {
                return (product >> 64) as u64;
            }
        }
    }

    /// Uniform in `lo..=hi`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        assert!(lo <= hi, "between({lo}, {hi})");
        if hi - lo == u64::MAX {
            return self.next_u64();
        }
        lo + self.below(hi - lo + 1)
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `(0, 1]`: safe to take a logarithm of.
    pub fn unit_open_zero(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (clamped to [0, 1]).
    pub fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        if p >= 1.0 {
            return true;
        }
        self.unit() < p
    }
}

/// SplitMix64: expands one seed into key material, and hashes small integers elsewhere.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_gives_same_numbers() {
        let mut a = RngStream::new(7, StreamId::Network);
        let mut b = RngStream::new(7, StreamId::Network);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_and_seeds_are_independent() {
        let first = |seed, id| RngStream::new(seed, id).next_u64();
        assert_ne!(first(7, StreamId::Network), first(7, StreamId::Workload));
        assert_ne!(first(7, StreamId::Network), first(8, StreamId::Network));
    }

    #[test]
    fn known_answer_pins_the_generator() {
        // Guards against a silent change of ChaCha8 or of our seeding: every scenario's history
        // depends on these numbers.
        let mut rng = RngStream::new(42, StreamId::Network);
        let got: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        let again: Vec<u64> = {
            let mut r = RngStream::new(42, StreamId::Network);
            (0..3).map(|_| r.next_u64()).collect()
        };
        assert_eq!(got, again);
        assert_eq!(got, KNOWN_42_NETWORK.to_vec(), "ChaCha8 stream for seed 42 changed");
    }

    const KNOWN_42_NETWORK: [u64; 3] = [14589515635352196654, 2877973030336034368, 15230479811515263985];

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = RngStream::new(1, StreamId::Workload);
        let mut seen = [0u32; 6];
        for _ in 0..6000 {
            let v = rng.below(6);
            seen[v as usize] += 1;
        }
        for count in seen {
            assert!((800..1200).contains(&count), "{seen:?}");
        }
        assert_eq!(rng.between(5, 5), 5);
    }

    #[test]
    fn unit_is_in_half_open_interval() {
        let mut rng = RngStream::new(3, StreamId::Faults);
        for _ in 0..10_000 {
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
            let v = rng.unit_open_zero();
            assert!(v > 0.0 && v <= 1.0);
        }
    }
}
