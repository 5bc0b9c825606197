//! Triple-A's micro-benchmark (§5.2, Fig. 12–16): random 4 KB reads, or random 4 KB writes,
//! a fixed share of which goes to each of N **hot clusters**.
//!
//! The paper defines a hot region as "a group of SSDs having at least 10 % of the total data"
//! (Fig. 1) and does not say more about the micro-benchmark's skew, so each hot cluster
//! receives [`HotClusterSpec::share_per_hot`] of the requests (10 % by default) and the rest
//! spread uniformly over every page. Hot clusters are chosen by [`HotPlacement`]: spread over
//! the switches, or all under one (the case the paper blames for websql's small gain, §6.1).
//! Pages are aimed through the array's static layout, so "hot" means hot in the
//! non-autonomic array; once Triple-A moves pages the heat follows them.
//!
//! A hot cluster's requests fall on its first [`HotClusterSpec::hot_pages`] pages, its hot
//! data, which is read again and again; the rest fall anywhere. The paper gives no
//! footprint, but a hot region is by nature data that is accessed again: a migration moves
//! the data a request just touched, which pays only if that data is touched again.

use crate::rng::SimRng;
use crate::source::Next;
use crate::source::{ArrivalSource, Pacing, SourceError};
use swan_core::scheme::{ReqOp, Request};
use swan_core::triple_a::StaticLayout;
use swan_models::Nanos;

/// Where the hot clusters sit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HotPlacement {
    /// Hot cluster k under switch k mod S: the heat shared by every switch.
    Spread,
    /// The first N clusters of switch 0.
    OneSwitch,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HotClusterSpec {
    /// The share of requests that are writes: 0 for random reads (the paper's Fig. 12–16),
    /// 1 for random writes, between for a mix (runs with GC-active FIMMs).
    pub write_share: f64,
    pub hot_clusters: u32,
    /// The share of all requests each hot cluster receives.
    pub share_per_hot: f64,
    /// The pages of each hot cluster its share falls on (its hot data).
    pub hot_pages: u64,
    pub placement: HotPlacement,
    /// Requests kept outstanding (closed loop).
    pub iodepth: u32,
    /// Open loop instead: requests arrive at this mean rate (Poisson), whatever the array does.
    pub rate_iops: Option<f64>,
}

impl HotClusterSpec {
    /// Random 4 KB reads over `hot_clusters` hot clusters of 10 % each, spread over the
    /// switches, each with 32 MiB of hot data (8,192 pages: read about ten times each in a
    /// second at a hot cluster's bus-bound rate, ~190 k reads/s).
    pub fn reads(hot_clusters: u32, iodepth: u32) -> Self {
        Self {
            write_share: 0.0,
            hot_clusters,
            share_per_hot: 0.10,
            hot_pages: 8192,
            placement: HotPlacement::Spread,
            iodepth,
            rate_iops: None,
        }
    }
}

/// Why a [`HotClusterSpec`] cannot run on an array ([`HotClusterSource::new`]).
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum HotClusterError {
    #[error("{hot} hot clusters, but the array has room for {room}")]
    TooMany { hot: u32, room: u32 },
    #[error("{hot} hot clusters at {share} of the requests each is more than every request")]
    Shares { hot: u32, share: f64 },
    #[error("hot data of {pages} pages does not fit a cluster of {cluster_pages} pages")]
    HotPages { pages: u64, cluster_pages: u64 },
    #[error("a write share must be in [0, 1], not {share}")]
    WriteShare { share: f64 },
    #[error("an I/O depth of 0 issues nothing")]
    NoDepth,
    #[error("an arrival rate must be a positive number of IOPS, not {rate:?}")]
    Rate { rate: Option<f64> },
}

/// The micro-benchmark as an endless closed-loop source.
pub struct HotClusterSource {
    layout: StaticLayout,
    spec: HotClusterSpec,
    hot: Vec<u32>,
    rng: SimRng,
}

impl HotClusterSource {
    /// Refuses a spec the array cannot carry: more hot clusters than it has (or than one
    /// switch has, for [`HotPlacement::OneSwitch`]), or shares summing past all requests.
    pub fn new(layout: StaticLayout, spec: HotClusterSpec, seed: u64) -> Result<Self, HotClusterError> {
        let shape = layout.shape();
        let room = match spec.placement {
            HotPlacement::Spread => shape.clusters(),
            HotPlacement::OneSwitch => shape.clusters_per_switch,
        };
        if spec.hot_clusters > room {
            return Err(HotClusterError::TooMany { hot: spec.hot_clusters, room });
        }
        let total = spec.share_per_hot * f64::from(spec.hot_clusters);
        if !(spec.share_per_hot >= 0.0 && total <= 1.0) {
            return Err(HotClusterError::Shares { hot: spec.hot_clusters, share: spec.share_per_hot });
        }
        if spec.hot_pages == 0 || spec.hot_pages > layout.pages_per_cluster() {
            return Err(HotClusterError::HotPages { pages: spec.hot_pages, cluster_pages: layout.pages_per_cluster() });
        }
        if !(0.0..=1.0).contains(&spec.write_share) {
            return Err(HotClusterError::WriteShare { share: spec.write_share });
        }
        if spec.iodepth == 0 {
            return Err(HotClusterError::NoDepth);
        }
        if spec.rate_iops.is_some_and(|r| !(r > 0.0 && r.is_finite())) {
            return Err(HotClusterError::Rate { rate: spec.rate_iops });
        }
        let (s, cps) = (shape.switches, shape.clusters_per_switch);
        let hot = (0..spec.hot_clusters)
            .map(|k| match spec.placement {
                HotPlacement::Spread => (k % s) * cps + k / s,
                HotPlacement::OneSwitch => k,
            })
            .collect();
        Ok(Self { layout, spec, hot, rng: SimRng::fork(seed, 0x4A07_C1A5) })
    }

    /// The hot clusters, in the order they were chosen.
    pub fn hot(&self) -> &[u32] {
        &self.hot
    }

    fn next_page(&mut self) -> u64 {
        let pick = self.rng.unit();
        let k = (pick / self.spec.share_per_hot) as usize;
        if self.spec.share_per_hot > 0.0 && k < self.hot.len() {
            let index = self.rng.below(self.spec.hot_pages);
            self.layout.page_on(self.hot[k], index)
        } else {
            self.rng.below(self.layout.pages())
        }
    }
}

impl ArrivalSource for HotClusterSource {
    fn pacing(&self) -> Pacing {
        match self.spec.rate_iops {
            Some(_) => Pacing::Timed,
            None => Pacing::Closed { depth: self.spec.iodepth },
        }
    }

    fn next(&mut self, now: Nanos) -> Result<Option<Next>, SourceError> {
        // A draw only for a mix, so that pure reads or writes keep the sequence they had.
        let write = match self.spec.write_share {
            s if s <= 0.0 => false,
            s if s >= 1.0 => true,
            s => self.rng.unit() < s,
        };
        let op = if write { ReqOp::Write } else { ReqOp::Read };
        let lba = self.next_page();
        // Exponential gaps: a Poisson stream at the mean rate.
        let gap = self.spec.rate_iops.map_or(0.0, |r| -(1.0 - self.rng.unit()).ln() / r * 1e9);
        Ok(Some(Next { at: now + gap as Nanos, req: Request::new(op, lba, 1), window: None }))
    }

    fn finite(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swan_core::triple_a::{FabricShape, LayoutConfig};

    fn layout() -> StaticLayout {
        let cfg = LayoutConfig { chunk_pages: 64, user_slots: 4096, spare_slots: 0 };
        StaticLayout::new(FabricShape::PAPER_4X16, cfg).unwrap()
    }

    fn cluster_counts(src: &mut HotClusterSource, n: usize) -> Vec<u64> {
        let mut counts = vec![0u64; 64];
        for _ in 0..n {
            let req = src.next(0).unwrap().unwrap().req;
            counts[layout().home(req.lba).cluster as usize] += 1;
        }
        counts
    }

    #[test]
    fn each_hot_cluster_takes_its_share_and_the_rest_is_uniform() {
        let mut src = HotClusterSource::new(layout(), HotClusterSpec::reads(3, 32), 1).unwrap();
        assert_eq!(src.hot(), [0, 16, 32], "one per switch first");
        let n = 200_000;
        let counts = cluster_counts(&mut src, n);
        // A hot cluster: 10 % + 70 % / 64 ≈ 11.1 %; a cold one 70 % / 64 ≈ 1.1 %.
        for (c, &count) in counts.iter().enumerate() {
            let share = count as f64 / n as f64;
            let want = if [0, 16, 32].contains(&c) { 0.1 + 0.7 / 64.0 } else { 0.7 / 64.0 };
            assert!((share - want).abs() < 0.004, "cluster {c}: {share} against {want}");
        }
    }

    #[test]
    fn a_hot_clusters_share_falls_on_its_hot_data() {
        let spec = HotClusterSpec { share_per_hot: 1.0, hot_pages: 100, ..HotClusterSpec::reads(1, 8) };
        let mut src = HotClusterSource::new(layout(), spec, 3).unwrap();
        let pages: std::collections::HashSet<u64> =
            (0..10_000).map(|_| src.next(0).unwrap().unwrap().req.lba).collect();
        assert_eq!(pages.len(), 100);
        assert!(pages.iter().all(|&p| layout().home(p).cluster == 0));
    }

    #[test]
    fn one_switch_placement_and_writes() {
        let spec =
            HotClusterSpec { write_share: 1.0, placement: HotPlacement::OneSwitch, ..HotClusterSpec::reads(4, 8) };
        let mut src = HotClusterSource::new(layout(), spec, 1).unwrap();
        assert_eq!(src.hot(), [0, 1, 2, 3]);
        assert_eq!(src.next(0).unwrap().unwrap().req.op, ReqOp::Write);
        assert_eq!(src.pacing(), Pacing::Closed { depth: 8 });
    }

    #[test]
    fn an_open_loop_arrives_at_its_mean_rate() {
        let spec = HotClusterSpec { rate_iops: Some(1e6), ..HotClusterSpec::reads(2, 8) };
        let mut src = HotClusterSource::new(layout(), spec, 5).unwrap();
        assert_eq!(src.pacing(), Pacing::Timed);
        let mut now = 0;
        for _ in 0..100_000 {
            now = src.next(now).unwrap().unwrap().at;
        }
        assert!((now as f64 / 1e8 - 1.0).abs() < 0.02, "100,000 arrivals at 1 M/s took {now} ns");
        let bad = HotClusterSpec { rate_iops: Some(0.0), ..spec };
        assert!(HotClusterSource::new(layout(), bad, 5).is_err());
    }

    #[test]
    fn impossible_specs_are_refused_by_what_is_wrong() {
        let e = HotClusterSource::new(layout(), HotClusterSpec::reads(65, 8), 1).err().unwrap();
        assert_eq!(e, HotClusterError::TooMany { hot: 65, room: 64 });
        assert!(e.to_string().contains("room for 64"), "{e}");
        let e = HotClusterSource::new(layout(), HotClusterSpec::reads(11, 8), 1).err().unwrap();
        assert!(matches!(e, HotClusterError::Shares { hot: 11, .. }), "{e:?}");
        assert!(e.to_string().contains("more than every request"), "{e}");
        let spec = HotClusterSpec { placement: HotPlacement::OneSwitch, ..HotClusterSpec::reads(17, 8) };
        assert!(matches!(HotClusterSource::new(layout(), spec, 1), Err(HotClusterError::TooMany { hot: 17, .. })));
        assert!(matches!(
            HotClusterSource::new(layout(), HotClusterSpec::reads(1, 0), 1),
            Err(HotClusterError::NoDepth)
        ));
        let spec = HotClusterSpec { hot_pages: 16_385, ..HotClusterSpec::reads(1, 8) };
        let e = HotClusterSource::new(layout(), spec, 1).err().unwrap();
        assert!(matches!(e, HotClusterError::HotPages { pages: 16_385, .. }), "{e:?}");
        assert!(e.to_string().contains("does not fit"), "{e}");
    }

    #[test]
    fn a_seed_fixes_the_stream() {
        let a: Vec<u64> = {
            let mut s = HotClusterSource::new(layout(), HotClusterSpec::reads(2, 8), 9).unwrap();
            (0..100).map(|_| s.next(0).unwrap().unwrap().req.lba).collect()
        };
        let mut s = HotClusterSource::new(layout(), HotClusterSpec::reads(2, 8), 9).unwrap();
        assert!(a.iter().all(|&l| l == s.next(0).unwrap().unwrap().req.lba));
    }
}
