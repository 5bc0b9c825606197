//! Division by a number fixed once, done by multiplication.
//!
//! The hot paths of both faces turn block numbers into (segment, slot), (row, column) and
//! (block, page) many times a request, dividing by numbers the geometry fixes when the array
//! is built. A hardware divide costs several multiplies, and a profile of the simulator put
//! 3–4 % of its time on those divides alone. [`Divisor`] computes the same quotient and
//! remainder with Lemire, Kaser and Kurz's direct method ("Faster remainder by direct
//! computation", Software: Practice and Experience, 2019): with `c = ⌈2⁶⁴ / d⌉`, for every
//! 32-bit `n`, `n / d = ⌊c·n / 2⁶⁴⌋` and `n % d = ⌊(c·n mod 2⁶⁴)·d / 2⁶⁴⌋`. A numerator past 32
//! bits (an array beyond 16 TiB of 4 KiB blocks) takes the hardware divide, as does a divisor
//! of 1 or past 32 bits: the answer is the same either way.

/// A divisor fixed at construction; `x / d` and `x % d` by multiplication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divisor {
    d: u64,
    /// `⌈2⁶⁴ / d⌉`, or 0 where the hardware divide is used for every numerator.
    c: u64,
}

impl Divisor {
    /// # Panics
    /// If `d` is 0.
    pub const fn new(d: u64) -> Self {
        assert!(d > 0, "division by zero");
        let c = if d == 1 || d > u32::MAX as u64 { 0 } else { u64::MAX / d + 1 };
        Divisor { d, c }
    }

    /// The divisor.
    #[inline(always)]
    pub const fn get(self) -> u64 {
        self.d
    }

    #[inline(always)]
    fn direct(self, n: u64) -> bool {
        self.c != 0 && n <= u32::MAX as u64
    }

    /// `n / d`.
    #[inline(always)]
    pub fn quotient(self, n: u64) -> u64 {
        if self.direct(n) {
            ((u128::from(self.c) * u128::from(n)) >> 64) as u64
        } else {
            n / self.d
        }
    }

    /// `n % d`.
    #[inline(always)]
    pub fn remainder(self, n: u64) -> u64 {
        if self.direct(n) {
            let low = self.c.wrapping_mul(n);
            ((u128::from(low) * u128::from(self.d)) >> 64) as u64
        } else {
            n % self.d
        }
    }

    /// `(n / d, n % d)`.
    #[inline(always)]
    pub fn div_rem(self, n: u64) -> (u64, u64) {
        let q = self.quotient(n);
        (q, n - q * self.d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(d: u64, n: u64) {
        let v = Divisor::new(d);
        assert_eq!(v.quotient(n), n / d, "{n} / {d}");
        assert_eq!(v.remainder(n), n % d, "{n} % {d}");
        assert_eq!(v.div_rem(n), (n / d, n % d), "{n} div_rem {d}");
    }

    #[test]
    fn quotient_and_remainder_are_the_hardware_ones() {
        let divisors = (1..=300u64)
            .chain([383, 384, 511, 512, 2047, 2048, 4095, 4096, 65_535, 65_536, 1 << 20, 3 << 20])
            .chain([u64::from(u32::MAX) - 1, u64::from(u32::MAX), u64::from(u32::MAX) + 1, u64::MAX]);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for d in divisors {
            for n in
                [0, 1, d - 1, d, d.saturating_add(1), d.saturating_mul(2), u64::from(u32::MAX) - 1, u64::from(u32::MAX)]
            {
                check(d, n);
            }
            // Past 32 bits the hardware divide answers.
            for n in [u64::from(u32::MAX) + 1, 1 << 40, u64::MAX - 1, u64::MAX] {
                check(d, n);
            }
            for _ in 0..2_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                check(d, x >> 32);
                check(d, x % (d.saturating_mul(1000)).max(1));
            }
        }
    }

    #[test]
    fn every_32_bit_numerator_for_some_awkward_divisors() {
        // Exhaustive over a sampled stride, so the test stays fast; the stride is odd so every
        // residue class is visited.
        for d in [3u64, 7, 12, 384, 1_000_003, u64::from(u32::MAX)] {
            let v = Divisor::new(d);
            let mut n = 0u64;
            while n <= u64::from(u32::MAX) {
                assert_eq!(v.div_rem(n), (n / d, n % d), "{n} / {d}");
                n += 9_973;
            }
        }
    }

    #[test]
    #[should_panic(expected = "division by zero")]
    fn zero_is_refused() {
        let _ = Divisor::new(0);
    }
}
