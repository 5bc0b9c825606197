//! Harmonia's claims (Kim et al., "Harmonia: A Globally Coordinated Garbage Collector for
//! Arrays of Solid-state Drives", MSST '11) checked by `swan repro harmonia-hpc`,
//! `harmonia-fig7`, `harmonia-fig8`, `harmonia-fig9` and `repro/traces.sh`.
//!
//! The paper prints its figures from one run of its simulator (DiskSim with Microsoft
//! Research's SSD model) and no spread. A printed ratio is checked as ±10 % of it (the band
//! this project takes for a level read off a plot), met when any of swan's seeds falls in
//! it: swan's run-to-run spread stands in for the paper's, which is not given.

use super::{Check, Claim, Paper, Role};

const WHY_WARMUP: &str = "docs/findings/harmonia.md#the-warm-up-decides-the-standard-deviation";
const WHY_FIG7: &str = "docs/findings/harmonia.md#fig-7-where-ggc-is-not-below-the-baseline";
const WHY_FIG8: &str =
    "docs/findings/harmonia.md#fig-8s-slope-ggc-keeps-gaining-with-ssds-because-what-it-still-pays-is-its-forced-cycles";
const WHY_TRACES: &str = "docs/findings/harmonia.md#tpc-c-and-websearch-the-excerpts-not-ggc";
const PRINTED: &str = "±10 % of the printed ratio, met if a seed falls in it (one run of another simulator, no \
                       spread printed); \"cuts\", \"lower\": any margin";

pub const CLAIMS: &[Claim] = &[
    Claim {
        id: "harmonia-fig6-hpc-w",
        paper: Paper::Harmonia,
        experiment: "harmonia-hpc",
        source: "Fig. 6, 10",
        says: "HPC(W): reactive GGC cuts RAID0's mean response 70 % and its std dev 71 %",
        paper_value: "−70 % mean (0.30×), −71 % std dev (0.29×)",
        checks: &[
            Check::Below { measure: "hpc-w.ggc_over_raid0.mean", max: 1.0 },
            Check::Overlaps { measure: "hpc-w.ggc_over_raid0.mean", lo: 0.27, hi: 0.33 },
            Check::Below { measure: "hpc-w.ggc_over_raid0.sd", max: 1.0 },
            Check::Overlaps { measure: "hpc-w.ggc_over_raid0.sd", lo: 0.261, hi: 0.319 },
        ],
        shows: &[],
        tolerance: PRINTED,
        role: Role::Result,
        finding: Some(WHY_WARMUP),
    },
    Claim {
        id: "harmonia-fig6-hpc-r",
        paper: Paper::Harmonia,
        experiment: "harmonia-hpc",
        source: "Fig. 6, 10",
        says: "HPC(R): reactive GGC cuts RAID0's mean response 55 % and lowers its std dev",
        paper_value: "−55 % mean (0.45×); std dev lower",
        checks: &[
            Check::Below { measure: "hpc-r.ggc_over_raid0.mean", max: 1.0 },
            Check::Overlaps { measure: "hpc-r.ggc_over_raid0.mean", lo: 0.405, hi: 0.495 },
            Check::Below { measure: "hpc-r.ggc_over_raid0.sd", max: 1.0 },
        ],
        shows: &[],
        tolerance: PRINTED,
        role: Role::Result,
        finding: None,
    },
    Claim {
        id: "harmonia-proactive",
        paper: Paper::Harmonia,
        experiment: "harmonia-hpc",
        source: "§IV, §VI",
        says: "the proactive soft-limit and idle policies (described, not evaluated) are expected to beat reactive GGC",
        paper_value: "better (expected)",
        checks: &[
            Check::Below { measure: "hpc-w.proactive_over_reactive", max: 1.0 },
            Check::Below { measure: "hpc-r.proactive_over_reactive", max: 1.0 },
            Check::Below { measure: "hpc-w.idle_over_reactive", max: 1.0 },
            Check::Below { measure: "hpc-r.idle_over_reactive", max: 1.0 },
        ],
        shows: &[],
        tolerance: "\"better\" as a lower mean response than reactive GGC's, any margin",
        role: Role::Result,
        finding: None,
    },
    Claim {
        id: "harmonia-fig7a",
        paper: Paper::Harmonia,
        experiment: "harmonia-fig7",
        source: "Fig. 7(a)",
        says: "HPC(W) at 0.5–8× Table X's rate: GGC ÷ RAID0 mean response below 1 at every rate",
        paper_value: "lower",
        checks: &[
            Check::Below { measure: "hpc-w.0.5x.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "hpc-w.1x.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "hpc-w.2x.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "hpc-w.4x.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "hpc-w.8x.ggc_over_raid0", max: 1.0 },
        ],
        shows: &[],
        tolerance: "\"lower\": any margin, at every rate swan runs (the paper prints no rates)",
        role: Role::Result,
        finding: Some(WHY_FIG7),
    },
    Claim {
        id: "harmonia-fig7a-variability",
        paper: Paper::Harmonia,
        experiment: "harmonia-fig7",
        source: "Fig. 7(a)",
        says: "HPC(W): GGC's std dev rises more gradually with the arrival rate than RAID0's",
        paper_value: "more gradual",
        checks: &[Check::Falls(&["hpc-w.raid0.sd_rise_ms", "hpc-w.ggc.sd_rise_ms"])],
        shows: &[],
        tolerance: "an order: any margin, over the rates swan runs",
        role: Role::Result,
        finding: Some(WHY_FIG7),
    },
    Claim {
        id: "harmonia-fig7b",
        paper: Paper::Harmonia,
        experiment: "harmonia-fig7",
        source: "Fig. 7(b)",
        says: "HPC(R) at 0.5–8× Table X's rate: GGC ÷ RAID0 mean response below 1 at every rate",
        paper_value: "lower",
        checks: &[
            Check::Below { measure: "hpc-r.0.5x.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "hpc-r.1x.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "hpc-r.2x.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "hpc-r.4x.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "hpc-r.8x.ggc_over_raid0", max: 1.0 },
        ],
        shows: &[],
        tolerance: "\"lower\": any margin, at every rate swan runs (the paper prints no rates)",
        role: Role::Result,
        finding: Some(WHY_FIG7),
    },
    Claim {
        id: "harmonia-fig8-margin",
        paper: Paper::Harmonia,
        experiment: "harmonia-fig8",
        source: "Fig. 8",
        says: "HPC(W): RAID0's mean response is 2.7× GGC's on 2 SSDs, growing to 3.2× on 18",
        paper_value: "2.7× → 3.2×",
        checks: &[
            Check::Overlaps { measure: "2.raid0_over_ggc", lo: 2.43, hi: 2.97 },
            Check::Overlaps { measure: "18.raid0_over_ggc", lo: 2.88, hi: 3.52 },
            Check::Rises(&["2.raid0_over_ggc", "18.raid0_over_ggc"]),
        ],
        shows: &[],
        tolerance: "±10 % of each printed ratio, met if a seed falls in it (one run, no spread printed); \"growing\": any margin",
        role: Role::Result,
        finding: Some(WHY_FIG8),
    },
    Claim {
        id: "harmonia-fig8-sizes",
        paper: Paper::Harmonia,
        experiment: "harmonia-fig8",
        source: "Fig. 8",
        says: "HPC(W): RAID0 on 8 SSDs matches GGC on 2; RAID0 on 18 is 184 % worse than GGC on 4",
        paper_value: "1×; 2.84×",
        checks: &[
            Check::Overlaps { measure: "raid0_8_over_ggc_2", lo: 0.9, hi: 1.1 },
            Check::Overlaps { measure: "raid0_18_over_ggc_4", lo: 2.556, hi: 3.124 },
        ],
        shows: &[],
        tolerance: "±10 % of each ratio (\"matches\" as 1), met if a seed falls in it (one run, no spread printed)",
        role: Role::Result,
        finding: Some(WHY_FIG8),
    },
    Claim {
        id: "harmonia-fig8-scaling",
        paper: Paper::Harmonia,
        experiment: "harmonia-fig8",
        source: "Fig. 8",
        says: "HPC(W): RAID0 and GGC both improve as SSDs are added (2 → 18)",
        paper_value: "both fall",
        checks: &[
            Check::AtLeast { measure: "raid0.steps_falling", min: 1.0 },
            Check::AtLeast { measure: "ggc.steps_falling", min: 1.0 },
        ],
        shows: &[],
        tolerance: "a lower mean at every step from one size to the next, any margin",
        role: Role::Result,
        finding: None,
    },
    Claim {
        id: "harmonia-fig9",
        paper: Paper::Harmonia,
        experiment: "harmonia-fig9",
        source: "Fig. 9",
        says: "HPC(W), 300 ms of 8 SSDs: GGC has fewer GC spikes than RAID0, called on all SSDs at once",
        paper_value: "fewer, aligned spikes",
        checks: &[
            Check::Falls(&["raid0.spike_ms", "ggc.spike_ms"]),
            Check::Rises(&["raid0.together", "ggc.together"]),
        ],
        shows: &[],
        tolerance: "orders: any margin; a spike is an operation over 10× its SSD's median",
        role: Role::Result,
        finding: None,
    },
    Claim {
        id: "harmonia-traces",
        paper: Paper::Harmonia,
        experiment: "traces",
        source: "Fig. 10, §V-H, §VI",
        says: "GGC lowers RAID0's mean response on every enterprise trace (here the five public excerpts, SSDs aged to 90 %)",
        paper_value: "lower on all (−10 % on average)",
        checks: &[
            Check::Below { measure: "cloudphysics-vm.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "msr-hm_0-excerpt.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "msr-window-rw20.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "tpcc-small.ggc_over_raid0", max: 1.0 },
            Check::Below { measure: "websearch-small.ggc_over_raid0", max: 1.0 },
        ],
        shows: &[],
        tolerance: "\"lower\": any margin; the paper's −10 % averages its own traces, not these, so only the direction is checked",
        role: Role::Result,
        finding: Some(WHY_TRACES),
    },
];
