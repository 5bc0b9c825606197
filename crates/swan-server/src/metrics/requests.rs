//! What the NBD front counts of the requests it hands to the service: per operation, how
//! many, how many failed, the bytes they named, and how long the service took to complete
//! them (a latency histogram).
//!
//! Every figure is a relaxed atomic, added to on the thread that completes a request: no
//! lock on the request path. A scrape may see a request counted in one figure and not yet
//! in another; each figure on its own only ever grows.

use crate::service::BlockOp;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The upper bounds (seconds) of the latency buckets: 10 µs to 10 s, about three per
/// decade, from a write the engine takes into memory at once to a FLUSH that waits on slow
/// members.
pub const LATENCY_BOUNDS_S: [f64; 19] = [
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

/// The request kinds a service sees (the NBD commands that reach it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Flush,
    Trim,
    WriteZeroes,
}

impl Op {
    pub const ALL: [Op; 5] = [Op::Read, Op::Write, Op::Flush, Op::Trim, Op::WriteZeroes];

    pub fn of(op: &BlockOp) -> Op {
        match op {
            BlockOp::Read => Op::Read,
            BlockOp::Write(_) => Op::Write,
            BlockOp::Flush => Op::Flush,
            BlockOp::Trim => Op::Trim,
            BlockOp::WriteZeroes { .. } => Op::WriteZeroes,
        }
    }

    /// The `op` label.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Flush => "flush",
            Op::Trim => "trim",
            Op::WriteZeroes => "write_zeroes",
        }
    }
}

/// A latency histogram over [`LATENCY_BOUNDS_S`], lock-free. Buckets hold what fell in
/// them alone (not cumulative) and the count is their sum, so a scrape always sees a
/// count that agrees with its buckets.
#[derive(Debug)]
pub struct Latency {
    /// One per bound, then the overflow (+Inf) bucket.
    buckets: [AtomicU64; LATENCY_BOUNDS_S.len() + 1],
    sum_ns: AtomicU64,
}

/// [`LATENCY_BOUNDS_S`] in nanoseconds, for comparing without floating point.
const BOUNDS_NS: [u64; LATENCY_BOUNDS_S.len()] = {
    let mut ns = [0u64; LATENCY_BOUNDS_S.len()];
    let mut i = 0;
    while i < ns.len() {
        ns[i] = (LATENCY_BOUNDS_S[i] * 1e9 + 0.5) as u64;
        i += 1;
    }
    ns
};

impl Default for Latency {
    fn default() -> Self {
        Latency { buckets: std::array::from_fn(|_| AtomicU64::new(0)), sum_ns: AtomicU64::new(0) }
    }
}

impl Latency {
    pub fn observe(&self, took: Duration) {
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        // Bounds are inclusive upper limits ("le"), as Prometheus defines them.
        let i = BOUNDS_NS.partition_point(|&b| b < ns);
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// (sum in seconds, count, buckets as (upper bound, requests in that bucket alone),
    /// +Inf last): what the Prometheus encoder takes, cumulating them itself.
    pub fn snapshot(&self) -> (f64, u64, Vec<(f64, u64)>) {
        let buckets: Vec<(f64, u64)> = self
            .buckets
            .iter()
            .enumerate()
            .map(|(i, b)| (LATENCY_BOUNDS_S.get(i).copied().unwrap_or(f64::INFINITY), b.load(Ordering::Relaxed)))
            .collect();
        let count = buckets.iter().map(|b| b.1).sum();
        (self.sum_ns.load(Ordering::Relaxed) as f64 / 1e9, count, buckets)
    }
}

/// What is counted of one kind of request.
#[derive(Debug, Default)]
pub struct OpCounts {
    pub latency: Latency,
    /// Bytes the requests named (their length: data moved for reads and writes, the range
    /// for TRIM and WRITE_ZEROES), counted when they complete, successful or not.
    pub bytes: AtomicU64,
    /// Requests the service completed with an error.
    pub errors: AtomicU64,
}

/// Per-operation counts of the requests a server handed to its service.
#[derive(Debug, Default)]
pub struct Requests {
    ops: [OpCounts; Op::ALL.len()],
}

impl Requests {
    pub fn op(&self, op: Op) -> &OpCounts {
        &self.ops[op as usize]
    }

    /// One request of `op` over `len` bytes completed after `took`, `ok` or not.
    pub fn completed(&self, op: Op, len: u32, took: Duration, ok: bool) {
        let c = self.op(op);
        c.latency.observe(took);
        c.bytes.fetch_add(u64::from(len), Ordering::Relaxed);
        if !ok {
            c.errors.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_inclusive_upper_bounds() {
        let h = Latency::default();
        h.observe(Duration::from_micros(50)); // exactly the first bound: in it
        h.observe(Duration::from_micros(51)); // just past it: the second
        h.observe(Duration::from_millis(3)); // le 0.005
        h.observe(Duration::from_secs(11)); // +Inf only
        let (sum, count, b) = h.snapshot();
        assert_eq!(count, 4);
        assert!((sum - (11.003101)).abs() < 1e-9, "{sum}");
        assert_eq!(b.len(), LATENCY_BOUNDS_S.len() + 1);
        assert_eq!(b[2], (0.00005, 1));
        assert_eq!(b[3], (0.0001, 1));
        assert_eq!(b[7], (0.0025, 0));
        assert_eq!(b[8], (0.005, 1));
        assert_eq!(b[18], (10.0, 0));
        assert_eq!(b[19].1, 1);
        assert!(b[19].0.is_infinite());
    }

    #[test]
    fn requests_count_bytes_and_errors_per_op() {
        let r = Requests::default();
        r.completed(Op::Write, 4096, Duration::from_micros(10), true);
        r.completed(Op::Write, 8192, Duration::from_micros(10), false);
        r.completed(Op::Flush, 0, Duration::from_micros(10), true);
        assert_eq!(r.op(Op::Write).bytes.load(Ordering::Relaxed), 12288);
        assert_eq!(r.op(Op::Write).errors.load(Ordering::Relaxed), 1);
        assert_eq!(r.op(Op::Write).latency.snapshot().1, 2);
        assert_eq!(r.op(Op::Flush).latency.snapshot().1, 1);
        assert_eq!(r.op(Op::Read).latency.snapshot().1, 0);
    }
}
