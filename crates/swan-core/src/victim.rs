//! GC victim policies: which sealed segment of an R-group to clean next.
//!
//! - **Greedy** (the paper's choice, §3.4): the segment with the fewest valid blocks; ties go
//!   to the lowest-numbered segment (the table keeps this minimum per R-group, O(1)).
//! - **Cost-benefit** (Rosenblum & Ousterhout, LFS): maximise `(1 − u) · age / (1 + u)`,
//!   which prefers old, cold segments. Scanning every segment per victim would cost
//!   O(segments); swan examines the `COST_BENEFIT_CANDIDATES` least-valid segments instead
//!   (in ascending valid count, then segment number), which contains the cost-benefit
//!   choice whenever age differences do not outweigh a large utilization gap — an
//!   approximation we state rather than hide.

use crate::segment::SegmentTable;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum VictimPolicy {
    Greedy,
    CostBenefit,
}

pub const COST_BENEFIT_CANDIDATES: usize = 64;

impl VictimPolicy {
    /// Pick a victim in `group`. `now_seq` is the current seal sequence (the age clock).
    pub fn select(
        self,
        table: &SegmentTable,
        group: u32,
        payload_slots: u32,
        now_seq: u64,
        scratch: &mut Vec<u64>,
    ) -> Option<u64> {
        match self {
            VictimPolicy::Greedy => table.min_valid(group),
            VictimPolicy::CostBenefit => {
                table.lowest_valid(group, COST_BENEFIT_CANDIDATES, scratch);
                let score = |seg: u64| {
                    let u = f64::from(table.valid(seg)) / f64::from(payload_slots);
                    let age = (now_seq.saturating_sub(table.seq(seg)) + 1) as f64;
                    (1.0 - u) * age / (1.0 + u)
                };
                // Ties go to the earlier candidate (fewer valid blocks, then the lower segment
                // number): deterministic.
                let mut best: Option<(u64, f64)> = None;
                for &seg in scratch.iter() {
                    let s = score(seg);
                    if best.is_none_or(|(_, b)| s > b) {
                        best = Some((seg, s));
                    }
                }
                best.map(|(seg, _)| seg)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_benefit_prefers_old_segments_at_similar_utilization() {
        let mut t = SegmentTable::new(1, 4, 10);
        let young = t.open(0).unwrap();
        let old = t.open(0).unwrap();
        for _ in 0..4 {
            t.add_valid(young);
        }
        for _ in 0..5 {
            t.add_valid(old);
        }
        t.seal(old, 1);
        t.seal(young, 100);
        let mut scratch = Vec::new();
        assert_eq!(VictimPolicy::Greedy.select(&t, 0, 10, 101, &mut scratch), Some(young));
        assert_eq!(VictimPolicy::CostBenefit.select(&t, 0, 10, 101, &mut scratch), Some(old));
    }
}
