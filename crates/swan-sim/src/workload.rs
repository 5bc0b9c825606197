//! A fio-like workload generator: what requests arrive, and when.
//!
//! Patterns as fio names them (`read`, `write`, `randread`, `randwrite`, `randrw` with a read
//! mix), a block size, a region of the volume, uniform or Zipf-distributed addresses,
//! and either a closed loop of `iodepth` outstanding requests, an open loop at a fixed
//! rate, or bursty open-loop arrivals (ON/OFF). Request sizes are fixed, or uniform over a
//! range ([`WorkloadSpec::block_blocks_max`]). Stop after a simulated duration or once
//! enough bytes have been written.
//!
//! [`hpc`] builds Harmonia's HPC(W) and HPC(R) workloads (Table X).

use crate::rng::SimRng;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use swan_core::scheme::{ReqOp, Request};
use swan_models::Nanos;
use thiserror::Error;

/// A pattern name fio does not have.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown pattern '{0}': expected read, write, randread, randwrite or randrw")]
pub struct UnknownPattern(pub String);

/// Why a `--distribution` does not parse.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum DistributionError {
    #[error("bad zipf exponent '{0}'")]
    BadExponent(String),
    #[error("zipf exponent must be positive, got {0}")]
    NonPositiveExponent(f64),
    #[error("unknown distribution '{0}': expected uniform, zipf or zipf:THETA")]
    Unknown(String),
}

/// Arrival rates or burst lengths that are not positive finite numbers.
#[derive(Clone, Copy, Debug, PartialEq, Error)]
pub enum ArrivalError {
    #[error("open-loop rate must be positive, got {iops}")]
    OpenRate { iops: f64 },
    #[error("bursty mean rate must be positive, got {iops}")]
    BurstyRate { iops: f64 },
    #[error("bursty ON period must be positive and OFF period ≥ 0 (ms), got {on_ms} and {off_ms}")]
    BurstyPeriods { on_ms: f64, off_ms: f64 },
}

/// Why a workload cannot be generated over a volume ([`Generator::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Error)]
pub enum WorkloadError {
    #[error("block size must be at least one 4 KiB block")]
    NoBlockSize,
    #[error("region starts at block {start} beyond the {volume}-block volume")]
    RegionStart { start: u64, volume: u64 },
    #[error("region of {region} blocks from block {start} exceeds the {volume}-block volume")]
    RegionBeyondVolume { region: u64, start: u64, volume: u64 },
    #[error("region of {region} blocks is smaller than one {block}-block request")]
    RegionBelowRequest { region: u64, block: u32 },
    #[error("read fraction must be within 0..1, got {fraction}")]
    ReadFraction { fraction: f64 },
    #[error("region of {region} blocks is smaller than the largest {largest}-block request")]
    RegionBelowLargest { region: u64, largest: u32 },
    #[error("variable request sizes need a random pattern with uniform addresses")]
    VariableSizes,
    #[error(transparent)]
    Arrival(#[from] ArrivalError),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pattern {
    Read,
    Write,
    RandRead,
    RandWrite,
    RandRw,
    /// fio's `rw`: reads and writes mixed by the read fraction, both at one sequential cursor.
    Rw,
}

impl FromStr for Pattern {
    type Err = UnknownPattern;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "read" => Pattern::Read,
            "write" => Pattern::Write,
            "randread" => Pattern::RandRead,
            "randwrite" => Pattern::RandWrite,
            "randrw" => Pattern::RandRw,
            "rw" => Pattern::Rw,
            _ => return Err(UnknownPattern(s.to_string())),
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
            Pattern::Rw => "rw",
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
    type Err = DistributionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "uniform" {
            return Ok(Distribution::Uniform);
        }
        if let Some(t) = s.strip_prefix("zipf:").or_else(|| s.strip_prefix("zipf=")) {
            let theta: f64 = t.parse().map_err(|_| DistributionError::BadExponent(t.to_string()))?;
            if !(theta > 0.0 && theta.is_finite()) {
                return Err(DistributionError::NonPositiveExponent(theta));
            }
            return Ok(Distribution::Zipf { theta });
        }
        if s == "zipf" {
            return Ok(Distribution::Zipf { theta: 0.99 });
        }
        Err(DistributionError::Unknown(s.to_string()))
    }
}

/// When requests arrive.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Arrival {
    /// Keep `iodepth` requests outstanding: a new one is issued when one completes.
    Closed { iodepth: u32 },
    /// One request every `1/iops` seconds, regardless of completions.
    Open { iops: f64 },
    /// Bursts: ON periods (exponential, mean `on_ms`) of Poisson arrivals alternate with
    /// silent OFF periods (exponential, mean `off_ms`); the ON rate is set so that the
    /// long-run mean is `iops` requests per second (a two-state Markov-modulated Poisson
    /// process, the textbook model of bursty arrivals).
    Bursty { iops: f64, on_ms: f64, off_ms: f64 },
}

impl Arrival {
    /// Checks the rates, naming what is wrong.
    pub fn validate(&self) -> Result<(), ArrivalError> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        match *self {
            Arrival::Closed { .. } => Ok(()),
            Arrival::Open { iops } if !positive(iops) => Err(ArrivalError::OpenRate { iops }),
            Arrival::Open { .. } => Ok(()),
            Arrival::Bursty { iops, on_ms, off_ms } => {
                if !positive(iops) {
                    return Err(ArrivalError::BurstyRate { iops });
                }
                if !(positive(on_ms) && off_ms.is_finite() && off_ms >= 0.0) {
                    return Err(ArrivalError::BurstyPeriods { on_ms, off_ms });
                }
                Ok(())
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    pub pattern: Pattern,
    /// Fraction of reads for `randrw`.
    pub read_fraction: f64,
    pub block_blocks: u32,
    /// If above `block_blocks`, request sizes are uniform over `block_blocks..=block_blocks_max`
    /// blocks and requests start at any block (not size-aligned). 0: every request is
    /// `block_blocks`.
    #[serde(default)]
    pub block_blocks_max: u32,
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
            block_blocks_max: 0,
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
    /// Variable sizes: the largest request, and the region in blocks.
    size_max: u32,
    region: u64,
    arrival: ArrivalClock,
}

/// Draws inter-arrival gaps from its own random stream, so the request stream (addresses,
/// sizes, read/write) is the same whatever the arrival process.
#[derive(Clone, Debug)]
struct ArrivalClock {
    arrival: Arrival,
    rng: SimRng,
    /// Bursty: time left in the current ON period.
    on_left_ns: f64,
}

impl ArrivalClock {
    fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.rng.unit()).ln()
    }

    fn next_gap_ns(&mut self) -> Option<Nanos> {
        match self.arrival {
            Arrival::Closed { .. } => None,
            Arrival::Open { iops } => Some((1e9 / iops).max(1.0) as Nanos),
            Arrival::Bursty { iops, on_ms, off_ms } => {
                let (on_ns, off_ns) = (on_ms * 1e6, off_ms * 1e6);
                let mean_gap_on = 1e9 / iops * on_ns / (on_ns + off_ns);
                let mut gap = 0.0;
                loop {
                    let g = self.exp(mean_gap_on);
                    if g < self.on_left_ns {
                        self.on_left_ns -= g;
                        gap += g;
                        break;
                    }
                    // The burst ends before the next arrival: an OFF period, then a new
                    // burst in which (being memoryless) the wait starts afresh.
                    gap += self.on_left_ns + self.exp(off_ns);
                    self.on_left_ns = self.exp(on_ns);
                }
                Some((gap as Nanos).max(1))
            }
        }
    }
}

impl Generator {
    /// `volume_blocks` is what the scheme exposes; the region is clipped to it.
    pub fn new(spec: &WorkloadSpec, volume_blocks: u64, rng: SimRng) -> Result<Self, WorkloadError> {
        if spec.block_blocks == 0 {
            return Err(WorkloadError::NoBlockSize);
        }
        if spec.region_start >= volume_blocks {
            return Err(WorkloadError::RegionStart { start: spec.region_start, volume: volume_blocks });
        }
        let avail = volume_blocks - spec.region_start;
        let region = if spec.region_blocks == 0 { avail } else { spec.region_blocks };
        if region > avail {
            return Err(WorkloadError::RegionBeyondVolume { region, start: spec.region_start, volume: volume_blocks });
        }
        let positions = region / u64::from(spec.block_blocks);
        if positions == 0 {
            return Err(WorkloadError::RegionBelowRequest { region, block: spec.block_blocks });
        }
        if !(0.0..=1.0).contains(&spec.read_fraction) {
            return Err(WorkloadError::ReadFraction { fraction: spec.read_fraction });
        }
        if spec.block_blocks_max > spec.block_blocks {
            if u64::from(spec.block_blocks_max) > region {
                return Err(WorkloadError::RegionBelowLargest { region, largest: spec.block_blocks_max });
            }
            if spec.distribution != Distribution::Uniform
                || !matches!(spec.pattern, Pattern::RandRw | Pattern::RandRead | Pattern::RandWrite)
            {
                return Err(WorkloadError::VariableSizes);
            }
        }
        spec.arrival.validate()?;
        let arrival_rng = SimRng::fork(rng.clone().next_u64(), 0xA331);
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
            size_max: spec.block_blocks_max,
            region,
            arrival: ArrivalClock { arrival: spec.arrival, rng: arrival_rng, on_left_ns: 0.0 },
        })
    }

    /// The gap before the next open-loop arrival (`None` for a closed loop, where requests
    /// are issued on completions).
    pub fn next_gap_ns(&mut self) -> Option<Nanos> {
        self.arrival.next_gap_ns()
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
        if self.size_max > self.block_blocks {
            return self.next_sized_request();
        }
        let (op, pos) = match self.pattern {
            Pattern::Read | Pattern::Write => {
                let pos = self.seq_cursor;
                self.seq_cursor = (self.seq_cursor + 1) % self.positions;
                (if self.pattern == Pattern::Read { ReqOp::Read } else { ReqOp::Write }, pos)
            }
            Pattern::Rw => {
                let op = if self.rng.unit() < self.read_fraction { ReqOp::Read } else { ReqOp::Write };
                let pos = self.seq_cursor;
                self.seq_cursor = (self.seq_cursor + 1) % self.positions;
                (op, pos)
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

impl Generator {
    /// A request of random size, uniform over the sizes, anywhere in the region.
    fn next_sized_request(&mut self) -> Request {
        let op = match self.pattern {
            Pattern::RandRead => ReqOp::Read,
            Pattern::RandWrite => ReqOp::Write,
            _ if self.rng.unit() < self.read_fraction => ReqOp::Read,
            _ => ReqOp::Write,
        };
        let blocks = self.block_blocks + self.rng.below(u64::from(self.size_max - self.block_blocks) + 1) as u32;
        let lba = self.start + self.rng.below(self.region - u64::from(blocks) + 1);
        Request::new(op, lba, blocks)
    }
}

/// Harmonia's HPC-like synthetic workloads (Table X): 510.53 KB average request, 20.12 %
/// (HPC(W)) or 80.08 % (HPC(R)) reads, 476.50 requests per second, bursty.
///
/// The paper gives only these averages. swan's choices for the rest: sizes uniform over
/// 4 KiB … 1016 KiB (1 … 254 blocks, mean 127.5 blocks = 510 KiB; the paper's "KB" read as
/// KiB); addresses uniform over the whole volume; bursts as [`Arrival::Bursty`] with ON and
/// OFF periods of 100 ms mean each (so requests arrive at twice the mean rate within a burst).
pub mod hpc {
    use super::*;

    /// Table X: requests per second.
    pub const IOPS: f64 = 476.50;
    /// Table X: reads as a fraction, HPC(W).
    pub const READ_FRACTION_W: f64 = 0.2012;
    /// Table X: reads as a fraction, HPC(R).
    pub const READ_FRACTION_R: f64 = 0.8008;
    /// Table X: average request size in KB.
    pub const MEAN_REQUEST_KB: f64 = 510.53;
    /// Mean burst (ON) and gap (OFF) lengths: swan's choice.
    pub const ON_MS: f64 = 100.0;
    pub const OFF_MS: f64 = 100.0;
    /// Request sizes in 4 KiB blocks.
    pub const MIN_BLOCKS: u32 = 1;
    pub const MAX_BLOCKS: u32 = 254;

    /// The names [`by_name`] knows.
    pub const NAMES: &[&str] = &["hpc-w", "hpc-r"];

    /// HPC(W) or HPC(R) at `iops` requests per second over the volume's first `region_blocks`.
    pub fn workload(read_fraction: f64, iops: f64, region_blocks: u64) -> WorkloadSpec {
        WorkloadSpec {
            pattern: Pattern::RandRw,
            read_fraction,
            block_blocks: MIN_BLOCKS,
            block_blocks_max: MAX_BLOCKS,
            region_start: 0,
            region_blocks,
            distribution: Distribution::Uniform,
            arrival: Arrival::Bursty { iops, on_ms: ON_MS, off_ms: OFF_MS },
        }
    }

    /// `hpc-w` or `hpc-r` at Table X's rate, or `None`.
    pub fn by_name(name: &str, region_blocks: u64) -> Option<WorkloadSpec> {
        match name {
            "hpc-w" => Some(workload(READ_FRACTION_W, IOPS, region_blocks)),
            "hpc-r" => Some(workload(READ_FRACTION_R, IOPS, region_blocks)),
            _ => None,
        }
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
        let e = Generator::new(&bad, 2000, SimRng::new(3)).expect_err("refused");
        assert!(matches!(e, WorkloadError::RegionBeyondVolume { volume: 2000, .. }), "{e:?}");
        assert!(e.to_string().contains("exceeds"), "{e}");
    }

    #[test]
    fn hpc_workloads_have_table_x_size_mix_and_rate() {
        for (name, reads) in [("hpc-w", hpc::READ_FRACTION_W), ("hpc-r", hpc::READ_FRACTION_R)] {
            let spec = hpc::by_name(name, 1 << 22).unwrap();
            let mut g = Generator::new(&spec, 1 << 22, SimRng::new(5)).unwrap();
            let n = 200_000;
            let (mut blocks, mut read, mut ns) = (0u64, 0u64, 0u64);
            for _ in 0..n {
                let r = g.next_request();
                assert!((1..=254).contains(&r.blocks) && r.lba + u64::from(r.blocks) <= 1 << 22);
                blocks += u64::from(r.blocks);
                read += u64::from(r.op == ReqOp::Read);
                ns += g.next_gap_ns().unwrap();
            }
            let kib = blocks as f64 * 4.0 / n as f64;
            assert!((kib - hpc::MEAN_REQUEST_KB).abs() / hpc::MEAN_REQUEST_KB < 0.01, "{name}: mean {kib} KiB");
            let rf = read as f64 / n as f64;
            assert!((rf - reads).abs() < 0.005, "{name}: read fraction {rf}");
            let iops = n as f64 / (ns as f64 / 1e9);
            assert!((iops - hpc::IOPS).abs() / hpc::IOPS < 0.03, "{name}: {iops} IOPS");
        }
        assert!(hpc::by_name("hpc-x", 100).is_none());
    }

    #[test]
    fn bursty_arrivals_come_in_bursts() {
        let spec = hpc::workload(0.2, 500.0, 1 << 20);
        let mut g = Generator::new(&spec, 1 << 20, SimRng::new(9)).unwrap();
        let gaps: Vec<u64> = (0..100_000).map(|_| g.next_gap_ns().unwrap()).collect();
        // Poisson at the mean rate would have CV 1 and almost no gap over 20 ms (e^-10);
        // ON/OFF arrivals have mostly short gaps within bursts and a long one between.
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        let var = gaps.iter().map(|&g| (g as f64 - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        assert!(var.sqrt() / mean > 2.0, "CV {}", var.sqrt() / mean);
        let long = gaps.iter().filter(|&&g| g > 20_000_000).count();
        // About one OFF period per 100 requests (100 ms bursts at 1000 IOPS), most over 20 ms.
        assert!(long > 500, "{long} gaps over 20 ms");
        let open = WorkloadSpec { arrival: Arrival::Open { iops: 1000.0 }, ..Default::default() };
        assert_eq!(Generator::new(&open, 100, SimRng::new(1)).unwrap().next_gap_ns(), Some(1_000_000));
        let bad =
            WorkloadSpec { arrival: Arrival::Bursty { iops: 1.0, on_ms: 0.0, off_ms: 1.0 }, ..Default::default() };
        let e = Generator::new(&bad, 100, SimRng::new(1)).expect_err("refused");
        assert!(matches!(e, WorkloadError::Arrival(ArrivalError::BurstyPeriods { .. })), "{e:?}");
        assert!(e.to_string().contains("ON period"), "{e}");
    }

    #[test]
    fn sequential_pattern_walks_and_wraps() {
        let spec = WorkloadSpec { pattern: Pattern::Write, region_blocks: 8, block_blocks: 4, ..Default::default() };
        let mut g = Generator::new(&spec, 100, SimRng::new(0)).unwrap();
        let lbas: Vec<u64> = (0..3).map(|_| g.next_request().lba).collect();
        assert_eq!(lbas, vec![0, 4, 0]);
    }

    #[test]
    fn the_sequential_mix_shares_one_cursor_between_reads_and_writes() {
        let spec = WorkloadSpec {
            pattern: Pattern::Rw,
            read_fraction: 0.4,
            region_blocks: 4000,
            block_blocks: 4,
            ..Default::default()
        };
        let mut g = Generator::new(&spec, 4000, SimRng::new(3)).unwrap();
        let reqs: Vec<Request> = (0..1500).map(|_| g.next_request()).collect();
        // Every request takes the next position, whatever its kind, and wraps at the region.
        for (i, r) in reqs.iter().enumerate() {
            assert_eq!(r.lba, (i as u64 % 1000) * 4, "request {i}");
        }
        let reads = reqs.iter().filter(|r| r.op == ReqOp::Read).count() as f64 / reqs.len() as f64;
        assert!((reads - 0.4).abs() < 0.04, "{reads} of the requests read");
        assert_eq!("rw".parse::<Pattern>().unwrap(), Pattern::Rw);
        assert_eq!(Pattern::Rw.to_string(), "rw");
    }
}
