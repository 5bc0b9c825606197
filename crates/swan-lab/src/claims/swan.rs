//! SWAN's claims (Kim et al., "Alleviating Garbage Collection Interference through Spatial
//! Separation in All Flash Arrays", USENIX ATC '19) checked by `swan repro fig5`, `fig4b`,
//! `fig12`, `simple-ssd`, `ssd-spread`, `ycsb`, `read-rules` and `swan plan --verify` (Eq. 1).

use super::{Check, Claim, Paper, Role};

const WHY_FIG4A: &str = "docs/swan.md#findings-and-disagreements";
const WHY_FIG12: &str = "docs/findings/swan.md#fig-12-replayed";
const WHY_SMALL_OP: &str = "docs/findings/swan.md#smaller-over-provisioning-needs-segments-trimmed-ahead";
const WHY_EQ1: &str = "docs/findings/swan.md#eq-1-drops-its-erase-term";

/// Fig. 12 at one percentile: each SSD's trace replayed alone (`swan repro fig12`), SWAN0's
/// reads and writes below RAID0's. The figure plots the CDF's top, from 0.95 up (a y axis
/// 0.95 … 1, read off the paper), so p95, p99 and p99.9 are what it shows; the text adds
/// that SWAN0 "shows shorter latency and shorter tail … throughout", which p50 and p90 check.
/// `finding`: where the section on the replay is linked from the row.
const fn fig12_at(
    id: &'static str,
    says: &'static str,
    paper_value: &'static str,
    checks: &'static [Check],
    finding: Option<&'static str>,
) -> Claim {
    Claim {
        says,
        paper_value,
        checks,
        tolerance: "an order, any margin: the paper prints no number",
        finding,
        ..claim(id, "fig12", "Fig. 12")
    }
}

/// A Swan claim's fields that every one has; each claim sets the rest.
const fn claim(id: &'static str, experiment: &'static str, source: &'static str) -> Claim {
    super::base(Paper::Swan, id, experiment, source)
}

pub const CLAIMS: &[Claim] = &[
    Claim {
        says: "Log-RAID0 on 8 SSDs, 8 KB random writes, before GC",
        paper_value: "≈ 1.1 GB/s",
        checks: &[Check::Within { measure: "lograid0.before_gc_mbps", lo: 990.0, hi: 1210.0 }],
        tolerance: "±10 %: a level read off the paper's plot",
        role: Role::Calibration,
        finding: Some("docs/host-model.md"),
        ..claim("swan-fig1-before-gc", "fig5", "Fig. 1")
    },
    Claim {
        says: "Log-RAID0 on 8 SSDs after GC",
        paper_value: "300–750 MB/s",
        checks: &[Check::Within { measure: "lograid0.sustained_mbps", lo: 300.0, hi: 750.0 }],
        tolerance: "the band the paper prints, as printed",
        finding: Some(WHY_FIG4A),
        ..claim("swan-fig1-after-gc", "fig5", "Fig. 1")
    },
    Claim {
        says: "sustained writes on 8 SSDs, no network: RAID0 < Log-RAID0 < SWAN0",
        paper_value: "RAID0 lowest; Log-RAID0 300–750 MB/s; SWAN0 ≈ 800 MB/s",
        checks: &[Check::Rises(&["raid0.sustained_mbps", "lograid0.sustained_mbps", "swan0.sustained_mbps"])],
        tolerance: "an order: any margin",
        finding: Some(WHY_FIG4A),
        ..claim("swan-fig4a", "fig5", "Fig. 4(a)")
    },
    Claim {
        says: "behind a network as fast as one R-group, SWAN sustains the network's bandwidth: RAID0 < Log-RAID0 < SWAN0",
        paper_value: "SWAN0 at the network's bandwidth",
        checks: &[Check::Rises(&[
            "raid0.net.sustained_mbps",
            "lograid0.net.sustained_mbps",
            "swan0.net.sustained_mbps",
        ])],
        tolerance: "an order: any margin",
        ..claim("swan-fig4a-network", "fig5", "Fig. 4(a), §3.5")
    },
    Claim {
        says: "SWAN0 after GC onset writes at about two SSDs' bandwidth, flat",
        paper_value: "≈ 800 MB/s, flat",
        checks: &[
            Check::AtLeast { measure: "swan0.share_of_two_ssds", min: 0.95 },
            Check::AtMost { measure: "swan0.after_gc_cv", max: 0.05 },
        ],
        tolerance: "\"about\" as within 5 % of two SSDs' sustained write bandwidth; \"flat\" as a CV of at most 5 % over the intervals after onset",
        ..claim("swan-fig5b", "fig5", "Fig. 5(b)")
    },
    Claim {
        says: "Log-RAID0 drops and oscillates after GC onset",
        paper_value: "300–750 MB/s, oscillating",
        checks: &[
            Check::AtMost { measure: "lograid0.after_over_before", max: 0.9 },
            Check::AtLeast { measure: "lograid0.after_gc_cv", min: 0.1 },
        ],
        tolerance: "\"drops\" as at least 10 % below its rate before GC; \"oscillates\" as a CV of at least 10 % after onset",
        ..claim("swan-fig5a", "fig5", "Fig. 5(a)")
    },
    Claim {
        says: "under SWAN only back-end R-groups read for GC; under Log-RAID every SSD does",
        paper_value: "—",
        checks: &[
            Check::AtMost { measure: "swan0.gc_reads_on_front", max: 0.02 },
            Check::AtLeast { measure: "lograid0.gc_intervals_all_read", min: 0.9 },
        ],
        tolerance: "at most 2 % of SWAN0's GC reads on the front-end (the interval a role changes in); all SSDs reading in at least 90 % of Log-RAID0's GC intervals",
        ..claim("swan-fig6", "fig5", "Fig. 6")
    },
    Claim {
        says: "SWAN0's victim utilization and free segments converge",
        paper_value: "converge",
        checks: &[
            Check::AtMost { measure: "swan0.victim_util_drift", max: 0.05 },
            Check::AtMost { measure: "swan0.free_segments_cv", max: 0.25 },
        ],
        tolerance: "victim utilization moving less than 0.05 between the last two quarters; free segments' CV at most 25 % over the second half",
        ..claim("swan-fig7", "fig5", "Fig. 7")
    },
    Claim {
        says: "Log-RAID0's GC begins once the writes reach the array's capacity",
        paper_value: "\"closely coincides\"",
        checks: &[Check::Within { measure: "lograid0.onset_of_capacity", lo: 0.8, hi: 1.2 }],
        tolerance: "within 20 % of the SSDs' capacity: the paper reads it off a plot, and the log keeps spare segments",
        ..claim("swan-fig6a-onset", "fig5", "Fig. 6(a)")
    },
    Claim {
        says: "SWAN0's GC starts only once every R-group has been the front-end",
        paper_value: "when SSDs 7 and 8 become the front-end",
        checks: &[Check::AtLeast { measure: "swan0.fronts_before_gc", min: 1.0 }],
        shows: &["swan0.onset_of_capacity"],
        tolerance: "all R-groups, exactly: the figure names the last one",
        ..claim("swan-fig6b-onset", "fig5", "Fig. 6(b)")
    },
    Claim {
        says: "SWAN0's first victims are empty, then their utilization rises",
        paper_value: "0, then rising",
        checks: &[
            Check::AtMost { measure: "swan0.first_victim_util", max: 0.05 },
            Check::Rises(&["swan0.first_victim_util", "swan0.last_victim_util"]),
        ],
        tolerance: "\"0\" as at most 0.05 over the first tenth of GC's intervals; any rise after",
        ..claim("swan-fig7-start", "fig5", "Fig. 7")
    },
    Claim {
        says: "Eq. 1 at the paper's parameters (ud 0.6, Te 4 ms, tr 15.6 µs, tw 19.5 µs, B 256)",
        paper_value: "N ≈ 1.89",
        checks: &[Check::Within { measure: "eq1.n_with_erase", lo: 1.70, hi: 2.08 }],
        shows: &["eq1.n_without_erase"],
        tolerance: "±10 % of the printed figure, which rounds u to 0.33",
        finding: Some(WHY_EQ1),
        ..claim("swan-eq1", "eq1", "§3.5, Eq. 1")
    },
    Claim {
        says: "two R-groups sustain the full bandwidth, no GC effect",
        paper_value: "2 R-groups suffice",
        checks: &[Check::AtMost { measure: "sim.stall_2", max: 0.01 }],
        shows: &["sim.rgroups_needed"],
        tolerance: "the front-end waiting for free segments at most 1 % of the run, simulated on SSDs with the plan's own timings",
        finding: Some(WHY_EQ1),
        ..claim("swan-eq1-two-rgroups", "eq1", "§3.5")
    },
    Claim {
        says: "XtremIO's smallest (18 SSDs of 2.5 GB/s, 10 GB/s network) in R-groups of four suffices",
        paper_value: "3 back-end R-groups",
        checks: &[
            Check::AtMost { measure: "xtremio.data_ssds_for_network", max: 4.0 },
            Check::Rises(&["sim.rgroups_needed", "xtremio.rgroups_of_four"]),
        ],
        tolerance: "arithmetic, exact; four SSDs fill the network as data SSDs (RAID0), a RAID4 R-group needs a fifth for parity",
        ..claim("swan-s35-xtremio", "eq1", "§3.5")
    },
    Claim {
        says: "the L2P map takes 0.12 % of capacity (5 bytes per 4 KB), a 1 MB segment's summary 0.39 %",
        paper_value: "0.12 %; 0.39 %",
        checks: &[
            Check::Within { measure: "swan.l2p_share", lo: 0.00115, hi: 0.00125 },
            Check::Within { measure: "swan.summary_share_1mib", lo: 0.0038, hi: 0.0040 },
        ],
        tolerance: "to the paper's last digit; swan's own layout (crates/swan-core l2p, summary)",
        ..claim("swan-s41-metadata", "simple-ssd", "§4.1")
    },
    Claim {
        says: "with TRIM, SWAN0's 1 MB segments work regardless of the SSD",
        paper_value: "≈ 800 MB/s",
        checks: &[Check::AtLeast { measure: "swan0.1mib.share_of_two_ssds", min: 0.9 }],
        shows: &["swan0.1mib.waf_ssd"],
        tolerance: "at least 90 % of two SSDs' bandwidth, on the 850 PRO model",
        finding: Some("docs/findings/swan.md#one-mib-segments-need-gc-copies-kept-apart"),
        ..claim("swan-s42-1mib", "simple-ssd", "§4.2")
    },
    Claim {
        says: "SWAN0 keeps its rate on SSDs with 4.5 % over-provisioning, not 6.7 %",
        paper_value: "smaller OPS (vs 6.7–28 %)",
        checks: &[Check::AtLeast { measure: "swan0.small_op_over_preset", min: 0.9 }],
        shows: &["raid0.small_op_over_preset"],
        tolerance: "\"keeps\" as at least 90 % of its rate at the model's 6.7 %; 4.5 % is the least the 0.5 GiB model can collect with",
        finding: Some(WHY_SMALL_OP),
        ..claim("swan-s6-small-op", "simple-ssd", "§6")
    },
    Claim {
        says: "SWAN0 improves with 3 → 6 → 9 SSDs (3R-1SSD … 3R-3SSD)",
        paper_value: "rises",
        checks: &[Check::Rises(&["swan0.3.sustained_mbps", "swan0.6.sustained_mbps", "swan0.9.sustained_mbps"])],
        tolerance: "an order: any margin",
        ..claim("swan-fig4b-swan", "fig4b", "Fig. 4(b)")
    },
    Claim {
        says: "Log-RAID0 degrades with more SSDs (\"limited by the slowest SSD\")",
        paper_value: "falls",
        checks: &[Check::Falls(&[
            "lograid0.3.sustained_mbps",
            "lograid0.6.sustained_mbps",
            "lograid0.9.sustained_mbps",
        ])],
        tolerance: "an order: any margin",
        finding: Some("docs/swan.md#findings-and-disagreements"),
        ..claim("swan-fig4b-lograid", "fig4b", "Fig. 4(b)")
    },
    Claim {
        says: "on SSDs varying as in the field, Log-RAID0 degrades with more SSDs",
        paper_value: "falls",
        checks: &[Check::Falls(&["lograid0.3.varied_mbps", "lograid0.6.varied_mbps", "lograid0.9.varied_mbps"])],
        tolerance: "an order, on the mean of 3 seeds; SSDs vary as Hao et al. (FAST '16) measured them",
        finding: Some("docs/findings/swan.md#ssds-that-are-not-identical"),
        ..claim("swan-spread-fig4b-lograid", "ssd-spread", "Fig. 4(b)")
    },
    Claim {
        says: "on SSDs varying as in the field, SWAN0 still improves with 3 → 6 → 9 SSDs",
        paper_value: "rises",
        checks: &[Check::Rises(&["swan0.3.varied_mbps", "swan0.6.varied_mbps", "swan0.9.varied_mbps"])],
        tolerance: "an order, on the mean of 3 seeds",
        ..claim("swan-spread-fig4b-swan", "ssd-spread", "Fig. 4(b)")
    },
    Claim {
        says: "on SSDs varying as in the field, 8 SSDs, no network: RAID0 < Log-RAID0 < SWAN0",
        paper_value: "SWAN0 highest",
        checks: &[Check::Rises(&["raid0.8.varied_mbps", "lograid0.8.varied_mbps", "swan0.8.varied_mbps"])],
        tolerance: "an order, on the mean of 3 seeds",
        finding: Some(WHY_FIG4A),
        ..claim("swan-spread-fig4a", "ssd-spread", "Fig. 4(a)")
    },
    Claim {
        says: "on SSDs varying as in the field, SWAN0 stays flat after GC onset",
        paper_value: "flat",
        checks: &[Check::AtMost { measure: "swan0.8.varied_cv", max: 0.05 }],
        shows: &["swan0.8.identical_cv"],
        tolerance: "as Fig. 5(b)'s: a CV of at most 5 % after onset",
        finding: Some("docs/findings/swan.md#ssds-that-are-not-identical"),
        ..claim("swan-spread-fig5b", "ssd-spread", "Fig. 5(b)")
    },
    Claim {
        says: "YCSB Load on RocksDB (each scheme's recorded trace, closed loop, paper's host): SWAN4 over 4× RAID4 and RAID5",
        paper_value: "> 4×",
        checks: &[
            Check::AtLeast { measure: "load.over_raid4", min: 4.0 },
            Check::AtLeast { measure: "load.over_raid5", min: 4.0 },
        ],
        tolerance: "as printed: over 4×",
        ..claim("swan-fig8-load-raid", "ycsb", "Fig. 8")
    },
    Claim {
        says: "Load: SWAN4 17 % ahead of Log-RAID4",
        paper_value: "1.17×",
        checks: &[Check::Above { measure: "load.over_lograid4", min: 1.0 }],
        tolerance: "ahead, any margin: the +17 % is one run, and swan's live rounds ranged +2 … +106 %",
        finding: Some("docs/findings/swan.md#simulated-swan4s-load-trails-log-raid4s"),
        ..claim("swan-fig8-load-lograid", "ycsb", "Fig. 8")
    },
    Claim {
        says: "YCSB-A: SWAN4 significantly ahead of every other scheme; B–D: similar or slightly better",
        paper_value: "A well ahead; B–D ≈",
        checks: &[
            Check::AtLeast { measure: "a.over_best", min: 1.1 },
            Check::AtLeast { measure: "b.over_best", min: 0.97 },
            Check::AtLeast { measure: "c.over_best", min: 0.97 },
            Check::AtLeast { measure: "d.over_best", min: 0.97 },
        ],
        tolerance: "\"significantly\" as at least 10 % over the fastest other; \"similar\" as within 3 %",
        ..claim("swan-fig8-phases", "ycsb", "Fig. 8")
    },
    Claim {
        says: "SWAN4's mean read latency similar to or better than the others', every phase",
        paper_value: "≤, or ≈",
        checks: &[
            Check::AtMost { measure: "load.read_mean_over_best", max: 1.1 },
            Check::AtMost { measure: "a.read_mean_over_best", max: 1.1 },
            Check::AtMost { measure: "b.read_mean_over_best", max: 1.1 },
            Check::AtMost { measure: "c.read_mean_over_best", max: 1.1 },
            Check::AtMost { measure: "d.read_mean_over_best", max: 1.1 },
        ],
        tolerance: "\"similar\" as within 10 % of the shortest other's",
        finding: Some("docs/findings/swan.md#buffered-writes"),
        ..claim("swan-fig9", "ycsb", "Fig. 9")
    },
    Claim {
        says: "SWAN4's read tail (p99.9) the shortest in the phases that write (Load, A)",
        paper_value: "shortest",
        checks: &[
            Check::AtMost { measure: "load.read_p999_over_best", max: 1.0 },
            Check::AtMost { measure: "a.read_p999_over_best", max: 1.0 },
        ],
        tolerance: "shortest or tied, by the mean of 3 seeds",
        finding: Some("docs/findings/swan.md#buffered-writes"),
        ..claim("swan-fig10-writes", "ycsb", "Figs. 10–11")
    },
    Claim {
        says: "SWAN4's read tail (p99.9) the shortest in the read phases too (B–D)",
        paper_value: "shortest",
        checks: &[
            Check::AtMost { measure: "b.read_p999_over_best", max: 1.0 },
            Check::AtMost { measure: "c.read_p999_over_best", max: 1.0 },
            Check::AtMost { measure: "d.read_p999_over_best", max: 1.0 },
        ],
        tolerance: "shortest or tied, by the mean of 3 seeds",
        finding: Some("docs/findings/swan.md#ycsb-on-rocksdb-fig-811-table-4"),
        ..claim("swan-fig10-reads", "ycsb", "Figs. 10–11")
    },
    Claim {
        says: "YCSB-A's reads on the front-end, idle and collecting back-end",
        paper_value: "40 / 52 / 8 %",
        checks: &[
            Check::Within { measure: "table4.front_share", lo: 0.35, hi: 0.45 },
            Check::Within { measure: "table4.idle_share", lo: 0.47, hi: 0.57 },
            Check::Within { measure: "table4.collecting_share", lo: 0.03, hi: 0.13 },
        ],
        tolerance: "±5 points: one run of a Zipf workload in the paper; swan's seeds spread 5–8 points",
        ..claim("swan-table4-split", "ycsb", "Table 4")
    },
    Claim {
        says: "YCSB-A's reads' mean latency per role",
        paper_value: "98 / 88 / 103 µs",
        checks: &[
            Check::Within { measure: "table4.front_us", lo: 73.5, hi: 122.5 },
            Check::Within { measure: "table4.idle_us", lo: 66.0, hi: 110.0 },
            Check::Within { measure: "table4.collecting_us", lo: 77.25, hi: 128.75 },
        ],
        tolerance: "±25 % of each printed latency (a flash read and its queue)",
        finding: Some("docs/findings/swan.md#buffered-writes"),
        ..claim("swan-table4-latency", "ycsb", "Table 4")
    },
    Claim {
        says: "idle back-end's reads fastest, collecting back-end's slowest",
        paper_value: "88 < 98 < 103 µs",
        checks: &[Check::Rises(&["table4.idle_us", "table4.front_us", "table4.collecting_us"])],
        tolerance: "an order, any margin, on the means of 3 seeds",
        finding: Some("docs/findings/swan.md#buffered-writes"),
        ..claim("swan-table4-order", "ycsb", "Table 4")
    },
    Claim {
        says: "a read on the R-group doing GC preempts GC (SWAN4 3×3, 70/30 random 4 KiB)",
        paper_value: "preempts; Table 4: 103 µs",
        checks: &[
            Check::Within { measure: "prio_on.collecting_us", lo: 77.25, hi: 128.75 },
            Check::Rises(&["prio_on.collecting_us", "prio_off.collecting_us"]),
        ],
        tolerance: "reads there within ±25 % of Table 4's 103 µs, and faster than without the rule",
        ..claim("swan-slides-read-preempts-gc", "read-rules", "talk slides")
    },
    Claim {
        says: "SWAN's SSDs barely copy in their own GC; RAID0's copy a lot (the cause of SWAN0's shorter SSD-internal tail)",
        paper_value: "shorter SSD-internal latency tail for SWAN0",
        checks: &[Check::AtMost { measure: "swan0.ssd_copies_over_raid0", max: 0.05 }],
        shows: &["swan0.ssd_gc_copied_pages", "raid0.ssd_gc_copied_pages"],
        tolerance: "SWAN0's SSD-internal GC copies at most 5 % of RAID0's: \"barely\" against \"a lot\"",
        ..claim("swan-fig12-copies", "fig12", "Fig. 12")
    },
    fig12_at(
        "swan-fig12-p50",
        "p50, each SSD's trace replayed alone: SWAN0 below RAID0, reads and writes",
        "below the plot; text: shorter",
        &[
            Check::Falls(&["raid0.replay.read.p50_us", "swan0.replay.read.p50_us"]),
            Check::Falls(&["raid0.replay.write.p50_us", "swan0.replay.write.p50_us"]),
        ],
        Some(WHY_FIG12),
    ),
    fig12_at(
        "swan-fig12-p90",
        "p90, each SSD's trace replayed alone: SWAN0 below RAID0, reads and writes",
        "below the plot; text: shorter",
        &[
            Check::Falls(&["raid0.replay.read.p90_us", "swan0.replay.read.p90_us"]),
            Check::Falls(&["raid0.replay.write.p90_us", "swan0.replay.write.p90_us"]),
        ],
        Some(WHY_FIG12),
    ),
    fig12_at(
        "swan-fig12-p95",
        "p95, each SSD's trace replayed alone: SWAN0 below RAID0, reads and writes",
        "SWAN0 shorter",
        &[
            Check::Falls(&["raid0.replay.read.p95_us", "swan0.replay.read.p95_us"]),
            Check::Falls(&["raid0.replay.write.p95_us", "swan0.replay.write.p95_us"]),
        ],
        Some(WHY_FIG12),
    ),
    fig12_at(
        "swan-fig12-p99",
        "p99, each SSD's trace replayed alone: SWAN0 below RAID0, reads and writes",
        "SWAN0 shorter",
        &[
            Check::Falls(&["raid0.replay.read.p99_us", "swan0.replay.read.p99_us"]),
            Check::Falls(&["raid0.replay.write.p99_us", "swan0.replay.write.p99_us"]),
        ],
        None,
    ),
    fig12_at(
        "swan-fig12-p999",
        "p99.9, each SSD's trace replayed alone: SWAN0 below RAID0, reads and writes",
        "SWAN0 shorter",
        &[
            Check::Falls(&["raid0.replay.read.p999_us", "swan0.replay.read.p999_us"]),
            Check::Falls(&["raid0.replay.write.p999_us", "swan0.replay.write.p999_us"]),
        ],
        None,
    ),
    Claim {
        says: "the same with SWAN's GC target at a whole R-group, not the default cell",
        paper_value: "smaller OPS",
        checks: &[Check::AtLeast { measure: "swan0.small_op_ahead_over_preset", min: 0.9 }],
        shows: &["swan0.small_op_ahead_waf_ssd"],
        tolerance: "as the row above; the default target is a quarter of an R-group's segments",
        finding: Some(WHY_SMALL_OP),
        ..claim("swan-s6-small-op-ahead", "simple-ssd", "§6")
    },
    Claim {
        says: "SWAN0 keeps its throughput over block-level-FTL SSDs; RAID0 over them collapses",
        paper_value: "qualitative",
        checks: &[
            Check::AtLeast { measure: "swan0.block_over_page", min: 0.9 },
            Check::AtMost { measure: "raid0.block_over_page", max: 0.2 },
        ],
        tolerance: "\"keeps\" as at least 90 % of its rate over page-level-FTL SSDs; \"collapses\" as at most 20 %",
        ..claim("swan-s6-block-ftl", "simple-ssd", "§6")
    },
    Claim {
        says: "an SSD's FTL map needs ≈ 8 MB of DRAM per TB block-level, ≈ 1 GB page-level",
        paper_value: "≈ 8 MB vs ≈ 1 GB",
        checks: &[
            Check::Within { measure: "block_ftl.map_mb_per_tb", lo: 6.0, hi: 10.0 },
            Check::Within { measure: "page_ftl.map_mb_per_tb", lo: 750.0, hi: 1250.0 },
        ],
        tolerance: "±25 %: figures the paper gives to one digit",
        ..claim("swan-s6-map-dram", "simple-ssd", "§6")
    },
];
