//! The paper's detectors as functions of what the management module observes: Eq. 1 (hot
//! cluster), Eq. 2 (cold cluster), Eq. 3 (laggard by latency) and the queue examination
//! (laggard by stalled-request counts, Fig. 8).

use super::Nanos;

/// The per-page costs the detectors weigh: `t_dma` moves one flash page over a cluster's
/// shared local bus, `t_exe` loads it from (read) or stores it into (write) the array of a
/// flash package. The hardware model supplies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageTiming {
    pub t_dma: Nanos,
    pub t_exe_read: Nanos,
    pub t_exe_write: Nanos,
}

impl PageTiming {
    pub fn t_exe(&self, write: bool) -> Nanos {
        if write {
            self.t_exe_write
        } else {
            self.t_exe_read
        }
    }
}

/// Eq. 1: a request whose FIMM was ready to serve it shows its cluster **hot** when its
/// device-level latency reaches what it would take if every other FIMM of the cluster had
/// one page ahead of it on the shared bus: `t_latency ≥ t_DMA·(n_page + n_FIMM − 1) +
/// t_exe·n_page`.
pub fn is_hot(latency: Nanos, pages: u32, fimms_per_cluster: u32, t_dma: Nanos, t_exe: Nanos) -> bool {
    let pages = u64::from(pages);
    let others = u64::from(fimms_per_cluster.saturating_sub(1));
    latency >= t_dma * (pages + others) + t_exe * pages
}

/// Eq. 2, by its stated meaning. As printed, `u_bus < (n_size/t_DMA) / (n_pins·1/f_inf)`
/// divides a page's transfer rate by a pin count over a clock period, which is not a
/// utilisation; the text says what it means: the bus is "lower than the case where on
/// average only a single FIMM in the cluster uses the local shared bus". `share` is that
/// single FIMM's share of the bus ([`super::AutonomicConfig::cold_bus_share`]).
pub fn is_cold(bus_utilisation: f64, share: f64) -> bool {
    bus_utilisation < share
}

/// Eq. 3: a FIMM is a **laggard** when the requests stalled for it (queued at the switch, not
/// yet issued) need longer than the SLA: `t_SLA < Σ (t_DMA + t_exe)·n_page` over them.
/// `stalled` yields each stalled request's (is it a write, its pages).
pub fn is_laggard(stalled: impl IntoIterator<Item = (bool, u32)>, timing: PageTiming, t_sla: Nanos) -> bool {
    let need: Nanos =
        stalled.into_iter().map(|(write, pages)| (timing.t_dma + timing.t_exe(write)) * u64::from(pages)).sum();
    t_sla < need
}

/// What the queue examination finds in one cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Laggards {
    /// No FIMM has a stalled request.
    None,
    /// This FIMM (index within its cluster) holds the most stalled requests.
    One(u32),
    /// Every FIMM holds about as many as the most: the whole cluster lags, and its pages go
    /// to another cluster.
    All,
}

/// The queue examination (§4.2, Fig. 8): given how many stalled requests the full queue holds
/// for each FIMM of a cluster, the FIMM with the most is the laggard — unless every FIMM
/// holds at least `similar` × that many, in which case all are. Ties go to the lowest index.
pub fn laggards_by_queue(stalled_per_fimm: &[u32], similar: f64) -> Laggards {
    let Some((worst, &most)) = stalled_per_fimm.iter().enumerate().max_by_key(|&(i, n)| (*n, usize::MAX - i)) else {
        return Laggards::None;
    };
    if most == 0 {
        return Laggards::None;
    }
    let floor = similar * f64::from(most);
    if stalled_per_fimm.len() > 1 && stalled_per_fimm.iter().all(|&n| f64::from(n) >= floor) {
        Laggards::All
    } else {
        Laggards::One(worst as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: PageTiming = PageTiming { t_dma: 10_000, t_exe_read: 50_000, t_exe_write: 600_000 };

    #[test]
    fn eq1_hot_exactly_at_the_bound() {
        // One page, four FIMMs: 10 µs × (1 + 3) + 50 µs = 90 µs.
        assert!(!is_hot(89_999, 1, 4, T.t_dma, T.t_exe_read));
        assert!(is_hot(90_000, 1, 4, T.t_dma, T.t_exe_read));
        // Two pages: 10 × 5 + 50 × 2 = 150 µs.
        assert!(!is_hot(149_999, 2, 4, T.t_dma, T.t_exe_read));
        assert!(is_hot(150_000, 2, 4, T.t_dma, T.t_exe_read));
    }

    #[test]
    fn eq2_cold_below_one_fimms_share() {
        assert!(is_cold(0.24, 0.25));
        assert!(!is_cold(0.25, 0.25));
    }

    #[test]
    fn eq3_weighs_reads_and_writes_by_their_own_cost() {
        // One stalled 1-page read needs 60 µs: over an SLA of 3.3 µs, under one of 60 µs.
        assert!(is_laggard([(false, 1)], T, 3_300));
        assert!(!is_laggard([(false, 1)], T, 60_000));
        // A write costs 610 µs a page.
        assert!(is_laggard([(false, 1), (true, 1)], T, 669_999));
        assert!(!is_laggard([(false, 1), (true, 1)], T, 670_000));
        assert!(!is_laggard([], T, 0), "nothing stalled is never a laggard");
    }

    #[test]
    fn queue_examination_names_the_fimm_with_most_stalls_or_all() {
        assert_eq!(laggards_by_queue(&[0, 0, 0, 0], 0.8), Laggards::None);
        // Fig. 8: FIMM 'b' holds most of the stalled requests.
        assert_eq!(laggards_by_queue(&[2, 7, 3, 1], 0.8), Laggards::One(1));
        assert_eq!(laggards_by_queue(&[5, 5, 4, 5], 0.8), Laggards::All);
        assert_eq!(laggards_by_queue(&[5, 5, 3, 5], 0.8), Laggards::One(0), "ties go to the lowest index");
        assert_eq!(laggards_by_queue(&[3], 0.8), Laggards::One(0), "a one-FIMM cluster has one laggard");
    }
}
