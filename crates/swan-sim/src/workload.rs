//! A fio-like workload generator: what requests arrive, and when.
//!
//! Patterns as fio names them (`read`, `write`, `randread`, `randwrite`, `randrw` with a read
//! mix), a block size, a region of the volume, uniform or Zipf-distributed addresses,
//! and either a closed loop of `iodepth` outstanding requests or an open loop at a fixed
//! rate. Stop after a simulated duration or once enough bytes have been written.

use crate::rng::SimRng;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use swan_core::scheme::{ReqOp, Request};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pattern {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
}

impl FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "read" => Pattern::Read,
            "write" => Pattern::Write,
            "randread" => Pattern::RandRead,
            "randwrite" => Pattern::RandWrite,
            "randrw" => Pattern::RandRw,
            _ => return Err(format!("unknown pattern '{s}': expected read, write, randread, randwrite or randrw")),
        })
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Pattern::Read => "read",
            Pattern::Write => "write",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::RandRw => "randrw",
        })
    }
}

/// How addresses are drawn for random patterns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Distribution {
    Uniform,
    /// Zipf with exponent `theta` (YCSB uses 0.99) over the region, ranks scattered over it.
    Zipf {
        theta: f64,
    },
}

impl FromStr for Distribution {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "uniform" {
            return Ok(Distribution::Uniform);
        }
        if let Some(t) = s.strip_prefix("zipf:").or_else(|| s.strip_prefix("zipf=")) {
            let theta: f64 = t.parse().map_err(|_| format!("bad zipf exponent '{t}'"))?;
            if !(theta > 0.0 && theta.is_finite()) {
                return Err(format!("zipf exponent must be positive, got {theta}"));
            }
            return Ok(Distribution::Zipf { theta });
        }
        if s == "zipf" {
            return Ok(Distribution::Zipf { theta: 0.99 });
        }
        Err(format!("unknown distribution '{s}': expected uniform, zipf or zipf:THETA"))
    }
}

/// When requests arrive.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Arrival {
    /// Keep `iodepth` requests outstanding: a new one is issued when one completes.
    Closed { iodepth: u32 },
    /// One request every `1/iops` seconds, regardless of completions.
    Open { iops: f64 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    pub pattern: Pattern,
    /// Fraction of reads for `randrw`.
    pub read_fraction: f64,
    pub block_blocks: u32,
    /// First block of the region the workload touches.
    pub region_start: u64,
    /// Blocks in the region (0 = to the end of the volume).
    pub region_blocks: u64,
    pub distribution: Distribution,
    pub arrival: Arrival,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        Self {
            pattern: Pattern::RandWrite,
            read_fraction: 0.5,
            block_blocks: 2,
            region_start: 0,
            region_blocks: 0,
            distribution: Distribution::Uniform,
            arrival: Arrival::Closed { iodepth: 32 },
        }
    }
}

/// Draws the requests of a [`WorkloadSpec`].
#[derive(Clone, Debug)]
pub struct Generator {
    pattern: Pattern,
    read_fraction: f64,
    block_blocks: u32,
    start: u64,
    /// Number of request-aligned positions in the region.
    positions: u64,
    zipf: Option<Zipf>,
    seq_cursor: u64,
    rng: SimRng,
}

impl Generator {
    /// `volume_blocks` is what the scheme exposes; the region is clipped to it.
    pub fn new(spec: &WorkloadSpec, volume_blocks: u64, rng: SimRng) -> Result<Self, String> {
        if spec.block_blocks == 0 {
            return Err("block size must be at least one 4 KiB block".into());
        }
        if spec.region_start >= volume_blocks {
            return Err(format!(
                "region starts at block {} beyond the {volume_blocks}-block volume",
                spec.region_start
            ));
        }
        let avail = volume_blocks - spec.region_start;
        let region = if spec.region_blocks == 0 { avail } else { spec.region_blocks };
        if region > avail {
            return Err(format!(
                "region of {region} blocks from block {} exceeds the {volume_blocks}-block volume",
                spec.region_start
            ));
        }
        let positions = region / u64::from(spec.block_blocks);
        if positions == 0 {
            return Err(format!("region of {region} blocks is smaller than one {}-block request", spec.block_blocks));
        }
        if !(0.0..=1.0).contains(&spec.read_fraction) {
            return Err(format!("read fraction must be within 0..1, got {}", spec.read_fraction));
        }
        let zipf = match spec.distribution {
            Distribution::Uniform => None,
            Distribution::Zipf { theta } => Some(Zipf::new(positions, theta)),
        };
        Ok(Self {
            pattern: spec.pattern,
            read_fraction: spec.read_fraction,
            block_blocks: spec.block_blocks,
            start: spec.region_start,
            positions,
            zipf,
            seq_cursor: 0,
            rng,
        })
    }

    pub fn region_blocks(&self) -> u64 {
        self.positions * u64::from(self.block_blocks)
    }

    fn random_position(&mut self) -> u64 {
        match &self.zipf {
            None => self.rng.below(self.positions),
            Some(z) => {
                let rank = z.sample(&mut self.rng);
                scatter(rank, self.positions)
            }
        }
    }

    pub fn next_request(&mut self) -> Request {
        let (op, pos) = match self.pattern {
            Pattern::Read | Pattern::Write => {
                let pos = self.seq_cursor;
                self.seq_cursor = (self.seq_cursor + 1) % self.positions;
                (if self.pattern == Pattern::Read { ReqOp::Read } else { ReqOp::Write }, pos)
            }
            Pattern::RandRead => (ReqOp::Read, self.random_position()),
            Pattern::RandWrite => (ReqOp::Write, self.random_position()),
            Pattern::RandRw => {
                let op = if self.rng.unit() < self.read_fraction { ReqOp::Read } else { ReqOp::Write };
                (op, self.random_position())
            }
        };
        Request::new(op, self.start + pos * u64::from(self.block_blocks), self.block_blocks)
    }
}

/// Spread Zipf ranks over the region so hot blocks are not all at its start (as YCSB's
/// scrambled Zipfian does): a bijection of `0..n` built from an odd multiplier modulo a
/// power of two, cycle-walked back into range.
fn scatter(rank: u64, n: u64) -> u64 {
    let bits = 64 - (n.max(2) - 1).leading_zeros();
    let mask = (1u64 << bits) - 1;
    let mut x = rank;
    loop {
        x = (x.wrapping_mul(0x9E37_79B9_7F4A_7C15 | 1).wrapping_add(0x632B_E59B_D9B4_E019)) & mask;
        x ^= x >> (bits / 2).max(1);
        if x < n {
            return x;
        }
    }
}

/// Zipf sampler over ranks `0..n` by rejection-inversion (Hörmann & Derflinger, 1996):
/// O(1) per sample and no table, so it works for billions of ranks.
#[derive(Clone, Debug)]
struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    c: f64,
}

impl Zipf {
    fn new(n: u64, s: f64) -> Self {
        let n = n as f64;
        let mut z = Self { n, s, h_x1: 0.0, h_n: 0.0, c: 0.0 };
        z.h_x1 = z.h(1.5) - 1.0;
        z.h_n = z.h(n + 0.5);
        z.c = 2.0 - z.h_inv(z.h(2.5) - 2f64.powf(-s));
        z
    }

    /// H(x) = ((x)^(1-s) - 1) / (1 - s), the integral of x^-s (log x when s = 1).
    fn h(&self, x: f64) -> f64 {
        let e = 1.0 - self.s;
        if e.abs() < 1e-9 {
            x.ln()
        } else {
            (x.powf(e) - 1.0) / e
        }
    }

    fn h_inv(&self, y: f64) -> f64 {
        let e = 1.0 - self.s;
        if e.abs() < 1e-9 {
            y.exp()
        } else {
            (y * e + 1.0).powf(1.0 / e)
        }
    }

    fn sample(&self, rng: &mut SimRng) -> u64 {
        loop {
            let u = self.h_n + rng.unit() * (self.h_x1 - self.h_n);
            let x = self.h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.c || u >= self.h(k + 0.5) - k.powf(-self.s) {
                return k as u64 - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_is_a_permutation() {
        for n in [1u64, 2, 3, 10, 1000, 4097] {
            let mut seen: Vec<u64> = (0..n).map(|r| scatter(r, n)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn zipf_is_skewed_like_zipf() {
        let z = Zipf::new(1000, 0.99);
        let mut rng = SimRng::new(1);
        let mut counts = vec![0u32; 1000];
        for _ in 0..200_000 {
            counts[z.sample(&mut rng) as usize] += 1;
        }
        // P(rank 0) / P(rank 9) = 10^0.99 ≈ 9.8 for Zipf(0.99).
        let ratio = f64::from(counts[0]) / f64::from(counts[9]);
        assert!((7.0..13.0).contains(&ratio), "ratio {ratio}");
        assert!(counts[0] > counts[100] * 50);
    }

    #[test]
    fn requests_stay_in_the_region_and_are_aligned() {
        let spec = WorkloadSpec { region_start: 100, region_blocks: 1000, block_blocks: 4, ..Default::default() };
        let mut g = Generator::new(&spec, 2000, SimRng::new(3)).unwrap();
        for _ in 0..10_000 {
            let r = g.next_request();
            assert!(r.lba >= 100 && r.lba + 4 <= 1100 && (r.lba - 100).is_multiple_of(4));
        }
        let bad = WorkloadSpec { region_blocks: 5000, ..Default::default() };
        assert!(Generator::new(&bad, 2000, SimRng::new(3)).unwrap_err().contains("exceeds"));
    }

    #[test]
    fn sequential_pattern_walks_and_wraps() {
        let spec = WorkloadSpec { pattern: Pattern::Write, region_blocks: 8, block_blocks: 4, ..Default::default() };
        let mut g = Generator::new(&spec, 100, SimRng::new(0)).unwrap();
        let lbas: Vec<u64> = (0..3).map(|_| g.next_request().lba).collect();
        assert_eq!(lbas, vec![0, 4, 0]);
    }
}
