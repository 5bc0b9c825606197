//! The seeded generators test workloads draw from: cheap, reproducible, and one copy of each.

/// SplitMix64: well mixed from any seed (0 included), so a seed fixes a whole run.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True `num` times in `den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// `n` bytes of the stream, eight at a time (big-endian).
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&self.next_u64().to_be_bytes());
        }
        out.truncate(n);
        out
    }
}

/// One step of xorshift64 (13, 7, 17) on a non-zero state: the model tests' workloads, where
/// only cheapness and reproducibility matter.
pub fn xorshift64(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_its_reference_values() {
        // The first outputs for seed 0 of the reference implementation (Vigna, splitmix64.c).
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(SplitMix64(7).below(0), 0);
        let b = SplitMix64(0).bytes(12);
        assert_eq!(b[..8], 0xe220_a839_7b1d_cdafu64.to_be_bytes());
    }

    #[test]
    fn xorshift64_never_reaches_zero_from_a_nonzero_seed() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let first = xorshift64(&mut x);
        assert_ne!(first, 0);
        assert!((0..100_000).all(|_| xorshift64(&mut x) != 0));
    }
}
