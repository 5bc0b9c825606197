//! The fabric as the management module sees it: how many switches, clusters and FIMMs, and
//! how they are numbered. Cluster `c` sits under switch `c / clusters_per_switch`; FIMM `f`
//! of cluster `c` has the array-wide index `c * fimms_per_cluster + f`. Link widths, queues
//! and timing belong to the hardware model, not here.

use super::TripleAError;
use std::ops::Range;

/// Switches × clusters per switch × FIMMs per cluster (the paper's default "4x16" has 4 × 16
/// clusters of 4 FIMMs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricShape {
    pub switches: u32,
    pub clusters_per_switch: u32,
    pub fimms_per_cluster: u32,
}

impl FabricShape {
    /// The paper's default array (§5.1): 4 switches, 16 clusters each, 4 FIMMs per cluster.
    pub const PAPER_4X16: FabricShape = FabricShape { switches: 4, clusters_per_switch: 16, fimms_per_cluster: 4 };

    /// A shape, or which of its counts cannot be.
    pub fn new(switches: u32, clusters_per_switch: u32, fimms_per_cluster: u32) -> Result<Self, TripleAError> {
        let shape = Self { switches, clusters_per_switch, fimms_per_cluster };
        shape.validate()?;
        Ok(shape)
    }

    pub fn validate(&self) -> Result<(), TripleAError> {
        let bad = |what: &str| Err(TripleAError::Shape(format!("{what} must be at least 1")));
        if self.switches == 0 {
            return bad("the number of switches");
        }
        if self.clusters_per_switch == 0 {
            return bad("the number of clusters per switch");
        }
        if self.fimms_per_cluster == 0 {
            return bad("the number of FIMMs per cluster");
        }
        if u64::from(self.switches) * u64::from(self.clusters_per_switch) * u64::from(self.fimms_per_cluster)
            > u64::from(u32::MAX)
        {
            return Err(TripleAError::Shape("more than 2^32 FIMMs".into()));
        }
        Ok(())
    }

    pub fn clusters(&self) -> u32 {
        self.switches * self.clusters_per_switch
    }

    pub fn fimms(&self) -> u32 {
        self.clusters() * self.fimms_per_cluster
    }

    pub fn switch_of(&self, cluster: u32) -> u32 {
        cluster / self.clusters_per_switch
    }

    /// The clusters under the switch that holds `cluster` (migration never leaves a switch,
    /// §6.1: "Triple-A does not migrate data across clusters located in different PCI-E
    /// switches in an attempt to avoid extra contentions").
    pub fn siblings(&self, cluster: u32) -> Range<u32> {
        let first = self.switch_of(cluster) * self.clusters_per_switch;
        first..first + self.clusters_per_switch
    }

    /// The array-wide index of FIMM `fimm` of `cluster`.
    pub fn fimm_index(&self, cluster: u32, fimm: u32) -> u32 {
        cluster * self.fimms_per_cluster + fimm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_shape_numbers_clusters_switch_by_switch() {
        let s = FabricShape::PAPER_4X16;
        assert_eq!((s.clusters(), s.fimms()), (64, 256));
        assert_eq!(s.switch_of(15), 0);
        assert_eq!(s.switch_of(16), 1);
        assert_eq!(s.siblings(17), 16..32);
        assert_eq!(s.fimm_index(2, 3), 11);
    }

    #[test]
    fn a_shape_with_a_zero_count_is_refused_by_name() {
        let e = FabricShape::new(4, 0, 4).unwrap_err();
        assert!(e.to_string().contains("clusters per switch"), "{e}");
        assert!(FabricShape::new(0, 16, 4).unwrap_err().to_string().contains("switches"));
        assert!(FabricShape::new(4, 16, 0).unwrap_err().to_string().contains("FIMMs"));
        assert!(FabricShape::new(4, 20, 4).is_ok());
    }
}
