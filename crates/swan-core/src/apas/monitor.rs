//! The monitor: what each application did in the current time period.
//!
//! §III-A: the monitor "is responsible for monitoring the I/O characteristics of each
//! application such as sizes of read and write requests and periodically collecting various
//! statistics … such as the actually allocated cache space and average latency of each
//! application". Algorithm 1 uses only the read and write volumes; the rest is kept because
//! the paper's feedback scheme collects it and a report per period needs it (Figs. 3–5 are
//! mean response times per period). The driver feeds numbers; the monitor reads no clock:
//! a period ends when the driver says so.

use super::AppId;
use serde::{Deserialize, Serialize};

/// A request's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    Read,
    Write,
}

/// One application's numbers over one period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppPeriod {
    /// Data_R of Algorithm 1: bytes of read requests that arrived in the period.
    pub read_bytes: u64,
    /// Data_W of Algorithm 1: bytes of write requests that arrived in the period.
    pub write_bytes: u64,
    pub reads: u64,
    pub writes: u64,
    /// Cache lookups (in blocks) that hit and missed, by direction.
    pub read_hits: u64,
    pub read_misses: u64,
    pub write_hits: u64,
    pub write_misses: u64,
    /// Requests completed in the period and the sum of their latencies.
    pub completed: u64,
    pub latency_sum_ns: u128,
    /// The cache space the application actually held at the end of the period (blocks), as
    /// the driver last reported it.
    pub read_cache_blocks: u64,
    pub write_cache_blocks: u64,
}

impl AppPeriod {
    /// Mean latency of the requests completed in the period; `None` if none completed.
    pub fn mean_latency_ns(&self) -> Option<f64> {
        (self.completed > 0).then(|| self.latency_sum_ns as f64 / self.completed as f64)
    }

    /// Read hit ratio over the period's read lookups; `None` if there were none.
    pub fn read_hit_ratio(&self) -> Option<f64> {
        let n = self.read_hits + self.read_misses;
        (n > 0).then(|| self.read_hits as f64 / n as f64)
    }

    /// Data_R + Data_W.
    pub fn volume_bytes(&self) -> u64 {
        self.read_bytes.saturating_add(self.write_bytes)
    }
}

/// What [`Monitor::end_period`] hands the adjustor: the period's number (0, 1, …) and every
/// application's numbers, indexed by [`AppId`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeriodStats {
    pub period: u64,
    pub apps: Vec<AppPeriod>,
}

/// Per-application counters for the current period.
#[derive(Clone, Debug)]
pub struct Monitor {
    period: u64,
    apps: Vec<AppPeriod>,
}

impl Monitor {
    /// A monitor for applications `0..apps`.
    pub fn new(apps: usize) -> Self {
        Monitor { period: 0, apps: vec![AppPeriod::default(); apps] }
    }

    fn app(&mut self, app: AppId) -> &mut AppPeriod {
        let n = self.apps.len();
        self.apps
            .get_mut(app as usize)
            .unwrap_or_else(|| panic!("application {app} out of range (the monitor has {n})"))
    }

    /// A request of `bytes` arrived.
    pub fn request(&mut self, app: AppId, op: Op, bytes: u64) {
        let a = self.app(app);
        match op {
            Op::Read => (a.reads, a.read_bytes) = (a.reads + 1, a.read_bytes.saturating_add(bytes)),
            Op::Write => (a.writes, a.write_bytes) = (a.writes + 1, a.write_bytes.saturating_add(bytes)),
        }
    }

    /// A cache lookup of one block hit (`true`) or missed.
    pub fn lookup(&mut self, app: AppId, op: Op, hit: bool) {
        let a = self.app(app);
        let counter = match (op, hit) {
            (Op::Read, true) => &mut a.read_hits,
            (Op::Read, false) => &mut a.read_misses,
            (Op::Write, true) => &mut a.write_hits,
            (Op::Write, false) => &mut a.write_misses,
        };
        *counter += 1;
    }

    /// A request completed after `latency_ns`.
    pub fn completion(&mut self, app: AppId, latency_ns: u64) {
        let a = self.app(app);
        a.completed += 1;
        a.latency_sum_ns += u128::from(latency_ns);
    }

    /// The cache space the application holds now (the latest report stands for the period).
    pub fn allocated(&mut self, app: AppId, read_blocks: u64, write_blocks: u64) {
        let a = self.app(app);
        (a.read_cache_blocks, a.write_cache_blocks) = (read_blocks, write_blocks);
    }

    /// The current period's numbers so far.
    pub fn current(&self) -> &[AppPeriod] {
        &self.apps
    }

    /// Closes the period: returns its numbers and starts the next from zero.
    pub fn end_period(&mut self) -> PeriodStats {
        let fresh = vec![AppPeriod::default(); self.apps.len()];
        let stats = PeriodStats { period: self.period, apps: std::mem::replace(&mut self.apps, fresh) };
        self.period += 1;
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_volumes_hits_and_latency_per_application() {
        let mut m = Monitor::new(2);
        m.request(0, Op::Read, 4096);
        m.request(0, Op::Read, 8192);
        m.request(0, Op::Write, 512);
        m.request(1, Op::Write, 4096);
        m.lookup(0, Op::Read, true);
        m.lookup(0, Op::Read, true);
        m.lookup(0, Op::Read, false);
        m.lookup(1, Op::Write, false);
        m.completion(0, 100);
        m.completion(0, 300);
        m.allocated(1, 3, 7);
        let a = m.current()[0];
        assert_eq!((a.reads, a.read_bytes, a.writes, a.write_bytes), (2, 12288, 1, 512));
        assert_eq!((a.read_hits, a.read_misses), (2, 1));
        assert_eq!(a.mean_latency_ns(), Some(200.0));
        assert_eq!(a.read_hit_ratio(), Some(2.0 / 3.0));
        assert_eq!(a.volume_bytes(), 12800);
        let b = m.current()[1];
        assert_eq!((b.write_bytes, b.write_misses, b.read_cache_blocks, b.write_cache_blocks), (4096, 1, 3, 7));
        assert_eq!(b.mean_latency_ns(), None, "nothing completed");
        assert_eq!(b.read_hit_ratio(), None);
    }

    #[test]
    fn a_period_ends_and_the_next_starts_from_zero() {
        let mut m = Monitor::new(1);
        m.request(0, Op::Write, 10);
        let s = m.end_period();
        assert_eq!((s.period, s.apps[0].write_bytes), (0, 10));
        assert_eq!(m.current()[0], AppPeriod::default());
        m.request(0, Op::Read, 5);
        let s = m.end_period();
        assert_eq!((s.period, s.apps[0].read_bytes, s.apps[0].write_bytes), (1, 5, 0));
    }

    #[test]
    #[should_panic(expected = "application 2 out of range (the monitor has 2)")]
    fn an_unknown_application_is_a_bug_of_the_driver() {
        Monitor::new(2).request(2, Op::Read, 1);
    }
}
