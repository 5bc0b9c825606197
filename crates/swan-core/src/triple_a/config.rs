//! The autonomic management's tunables. The paper fixes only t_SLA (3.3 µs, §5.1); every
//! other threshold and window is swan's, chosen as documented on each field.

use super::{Nanos, TripleAError};
use serde::{Deserialize, Serialize};

/// Which laggard detector runs (§4.2 offers both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LaggardDetection {
    /// Eq. 3 on every stall: the requests stalled for a FIMM need longer than t_SLA.
    Latency,
    /// When the switch-level queue is full: the FIMM with the most stalled requests.
    Queue,
    Both,
}

impl LaggardDetection {
    pub const NAMES: [&'static str; 3] = ["latency", "queue", "both"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "latency" => Some(LaggardDetection::Latency),
            "queue" => Some(LaggardDetection::Queue),
            "both" => Some(LaggardDetection::Both),
            _ => None,
        }
    }
}

/// What laggard detection makes of a FIMM that is collecting garbage (runs with GC-active
/// FIMMs; the paper's FIMMs do no GC of their own, §6.7, and it does not say).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GcLaggard {
    /// The detector does not know: a collecting FIMM's stalls are judged by Eq. 3 like any.
    Blind,
    /// A stall on a collecting FIMM makes it a laggard at once, whatever Eq. 3 says: its
    /// stalled pages are reshaped away from the collection.
    Laggard,
    /// A collecting FIMM's stalls are not examined: a collection ends by itself, and
    /// reshaping its pages adds programs to FIMMs that may be collecting too.
    Exempt,
}

impl GcLaggard {
    pub const NAMES: [&'static str; 3] = ["blind", "laggard", "exempt"];

    pub fn name(self) -> &'static str {
        match self {
            GcLaggard::Blind => "blind",
            GcLaggard::Laggard => "laggard",
            GcLaggard::Exempt => "exempt",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "blind" => Some(GcLaggard::Blind),
            "laggard" => Some(GcLaggard::Laggard),
            "exempt" => Some(GcLaggard::Exempt),
            _ => None,
        }
    }
}

/// What the management module does, and its thresholds. [`AutonomicConfig::non_autonomic`]
/// is the paper's baseline: the same fabric, a static layout, nothing moved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AutonomicConfig {
    /// Link-contention management: hot-cluster detection and autonomic data migration.
    pub migration: bool,
    /// Storage-contention management: laggard detection and data-layout reshaping.
    pub reshaping: bool,
    /// Migrated pages come from the endpoint that has just served them (§4.1) instead of
    /// being read again from the hot cluster's FIMM (Fig. 16(b) against 16(c)).
    pub shadow_cloning: bool,
    pub laggard_detection: LaggardDetection,
    /// Eq. 3's t_SLA; the paper uses 3.3 µs.
    pub t_sla: Nanos,
    /// Eq. 2's threshold as a share of the bus. `None`: one FIMM's share, 1 / FIMMs per
    /// cluster — a bus carrying no more than one of its FIMMs would on its own if the
    /// cluster's work were spread evenly (see [`super::detect::is_cold`]).
    pub cold_bus_share: Option<f64>,
    /// Hysteresis: a page moved is not moved again for this long, so a page does not bounce
    /// between two clusters that take turns being hot. 100 ms: many times a request's
    /// latency under contention (Table 2: 0.9–6.7 ms), short against a trace's phases.
    pub settle: Nanos,
    /// At most this many moved pages in flight (copied but not yet written at their new
    /// place) for each of the two managements; further detections wait. 64: the migrations
    /// of one hot burst, not so many that their traffic becomes the contention (§6.5).
    pub max_in_flight: u32,
    /// Queue examination: every FIMM of a cluster within this fraction of the laggard's
    /// stalled count makes the whole cluster lag ("similar number", §4.2).
    pub similar_stalls: f64,
    /// A collecting FIMM under laggard detection (only runs with GC-active FIMMs have one).
    /// Blind by default: the paper's detector, unchanged.
    pub gc_laggard: GcLaggard,
}

impl AutonomicConfig {
    /// Triple-A as the paper evaluates it: both managements, shadow cloning, both laggard
    /// detectors, t_SLA = 3.3 µs.
    pub fn triple_a() -> Self {
        Self {
            migration: true,
            reshaping: true,
            shadow_cloning: true,
            laggard_detection: LaggardDetection::Both,
            t_sla: 3_300,
            cold_bus_share: None,
            settle: 100_000_000,
            max_in_flight: 64,
            similar_stalls: 0.8,
            gc_laggard: GcLaggard::Blind,
        }
    }

    /// The non-autonomic baseline: the same thresholds, nothing acted on.
    pub fn non_autonomic() -> Self {
        Self { migration: false, reshaping: false, ..Self::triple_a() }
    }

    /// Checks the tunables, naming the one that is wrong.
    pub fn validate(&self) -> Result<(), TripleAError> {
        let bad = |m: String| Err(TripleAError::Config(m));
        if let Some(s) = self.cold_bus_share {
            if !(s > 0.0 && s <= 1.0) {
                return bad(format!("the cold-cluster bus share must be in (0, 1], got {s}"));
            }
        }
        if !(self.similar_stalls > 0.0 && self.similar_stalls <= 1.0) {
            return bad(format!("the similar-stalls fraction must be in (0, 1], got {}", self.similar_stalls));
        }
        if self.max_in_flight == 0 && (self.migration || self.reshaping) {
            return bad("at most 0 pages in flight would never move one; use the non-autonomic baseline".into());
        }
        Ok(())
    }

    pub(super) fn cold_share(&self, fimms_per_cluster: u32) -> f64 {
        self.cold_bus_share.unwrap_or(1.0 / f64::from(fimms_per_cluster.max(1)))
    }

    pub(super) fn by_latency(&self) -> bool {
        self.reshaping && matches!(self.laggard_detection, LaggardDetection::Latency | LaggardDetection::Both)
    }

    pub(super) fn by_queue(&self) -> bool {
        self.reshaping && matches!(self.laggard_detection, LaggardDetection::Queue | LaggardDetection::Both)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_are_named() {
        AutonomicConfig::triple_a().validate().unwrap();
        AutonomicConfig::non_autonomic().validate().unwrap();
        let e = AutonomicConfig { cold_bus_share: Some(1.5), ..AutonomicConfig::triple_a() }.validate().unwrap_err();
        assert!(e.to_string().contains("bus share"), "{e}");
        let e = AutonomicConfig { similar_stalls: 0.0, ..AutonomicConfig::triple_a() }.validate().unwrap_err();
        assert!(e.to_string().contains("similar-stalls"), "{e}");
        let e = AutonomicConfig { max_in_flight: 0, ..AutonomicConfig::triple_a() }.validate().unwrap_err();
        assert!(e.to_string().contains("in flight"), "{e}");
    }
}
