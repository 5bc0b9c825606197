//! Triple-A's claims (Jung et al., "Triple-A: A Non-SSD Based Autonomic All-Flash Array for
//! High Performance Storage Systems", ASPLOS '14) checked by `swan repro triple-a-fig12`,
//! `-fig13`, `-fig16` (the read micro-benchmark), `-table2`, `-fig9`, `-fig10`, `-fig11` (the
//! traces) and `-gc` (t_SLA). Measures are means over three seeds; ratios are Triple-A's over
//! the non-autonomic array's of the same seed.

use super::{Check, Claim, Paper, Role};

const WHY_HEADLINE: &str = "docs/findings/triple-a.md#the-abstracts-headline-gains";
const WHY_MICRO: &str = "docs/findings/triple-a.md#the-micro-benchmark-fig-1216";
const WHY_TRACES: &str = "docs/findings/triple-a.md#the-traces-table-2-fig-911";
const WHY_HM: &str = "docs/findings/triple-a.md#why-hm-is-storage-bound";
const WHY_TABLE2: &str = "docs/findings/triple-a.md#table-2-at-the-papers-depth";
const WHY_SERVICE: &str = "docs/triple-a.md#calibration-against-table-2";
const WHY_T_SLA: &str = "docs/findings/triple-a.md#t_sla-eq-3";

/// A claim of the paper's, with the fields every one of them shares.
const fn claim(id: &'static str, experiment: &'static str, source: &'static str) -> Claim {
    super::base(Paper::TripleA, id, experiment, source)
}

pub const CLAIMS: &[Claim] = &[
    Claim {
        says: "Triple-A's sustained IOPS +53 %, latency −80 % (real workloads)",
        paper_value: "1.53× IOPS, 0.2× latency",
        checks: &[
            Check::AtLeast { measure: "mean.iops_ratio", min: 1.53 },
            Check::AtMost { measure: "mean.latency_ratio", max: 0.2 },
        ],
        tolerance: "gains read as floors, any margin beyond; swan's mean is over 3 traces (hm, web, msr-win), the paper's over 13 workloads",
        finding: Some(WHY_HEADLINE),
        ..claim("triple-a-abstract-traces", "triple-a-fig9", "Abstract, §8")
    },
    Claim {
        says: "the same on the read micro-benchmark (1 … 8 hot clusters)",
        paper_value: "the same",
        checks: &[
            Check::AtLeast { measure: "iops_ratio.mean", min: 1.53 },
            Check::AtMost { measure: "latency_ratio.mean", max: 0.2 },
        ],
        tolerance: "gains read as floors, any margin beyond",
        finding: Some(WHY_HEADLINE),
        ..claim("triple-a-abstract-micro", "triple-a-fig12", "Abstract, §8")
    },
    Claim {
        says: "more hot regions on 80 SSDs: link and storage contention degrade performance",
        paper_value: "2.4× and 6.5×",
        checks: &[Check::NotMeasurable(
            "no reproduction varies hot regions on 80 clusters (4x20), and the text does not define the degradation",
        )],
        tolerance: "—",
        ..claim("triple-a-fig1", "triple-a-fig12", "Fig. 1")
    },
    Claim {
        says: "latency − queue stall, each row's unloaded service time: hm and web",
        paper_value: "75 µs, 140 µs",
        checks: &[
            Check::Within { measure: "hm.service_us", lo: 60.0, hi: 90.0 },
            Check::Within { measure: "web.service_us", lo: 112.0, hi: 168.0 },
        ],
        tolerance: "±20 %: the write's acknowledgement was fitted to all eleven rows' service times (the read is the datasheet's), so hm's mix is no evidence",
        role: Role::Calibration,
        finding: Some(WHY_SERVICE),
        ..claim("triple-a-table2-service", "triple-a-table2", "Table 2")
    },
    Claim {
        says: "hm, 4x16 non-autonomic array, 202 requests in flight (the row's latency × IOPS): mean latency",
        paper_value: "1,806 µs",
        checks: &[Check::Within { measure: "hm.latency_us", lo: 1444.8, hi: 2257.5 }],
        tolerance: "a factor 1.25 either way, as hm's IOPS",
        finding: Some(WHY_TABLE2),
        ..claim("triple-a-table2-hm-latency", "triple-a-table2", "Table 2")
    },
    Claim {
        says: "hm: IOPS, and link contention most of the stall",
        paper_value: "112 k; link 73 %",
        checks: &[
            Check::Within { measure: "hm.kiops", lo: 89.6, hi: 140.0 },
            Check::Within { measure: "hm.link_share", lo: 0.63, hi: 0.83 },
        ],
        tolerance: "a printed figure from another simulator of the same hardware, whose request sizes and write path the paper does not give: a factor 1.25 either way; a share of the stall: ±10 points",
        finding: Some(WHY_HM),
        ..claim("triple-a-table2-hm", "triple-a-table2", "Table 2")
    },
    Claim {
        says: "web: mean latency",
        paper_value: "1,148 µs",
        checks: &[Check::Within { measure: "web.latency_us", lo: 918.4, hi: 1435.0 }],
        tolerance: "a factor 1.25 either way, as hm's IOPS",
        finding: Some(WHY_TABLE2),
        ..claim("triple-a-table2-web-latency", "triple-a-table2", "Table 2")
    },
    Claim {
        says: "web: IOPS, and storage most of the stall",
        paper_value: "181 k; link 24 %",
        checks: &[
            Check::Within { measure: "web.kiops", lo: 144.8, hi: 226.25 },
            Check::Within { measure: "web.link_share", lo: 0.14, hi: 0.34 },
        ],
        tolerance: "a factor 1.25 either way, as hm's; a share of the stall: ±10 points",
        finding: Some(WHY_TABLE2),
        ..claim("triple-a-table2-web", "triple-a-table2", "Table 2")
    },
    Claim {
        says: "the other nine rows (cfs, fin, mds, msnfs, prn, proj, prxy, usr, websql)",
        paper_value: "Table 2",
        checks: &[Check::NotMeasurable("their traces are not on this machine")],
        tolerance: "—",
        ..claim("triple-a-table2-others", "triple-a-table2", "Table 2")
    },
    Claim {
        says: "on average Triple-A's IOPS about 2×, its latency 5× shorter",
        paper_value: "≈ 2× IOPS, 0.2× latency",
        checks: &[
            Check::Within { measure: "mean.iops_ratio", lo: 1.5, hi: 2.5 },
            Check::Within { measure: "mean.latency_ratio", lo: 0.15, hi: 0.25 },
        ],
        tolerance: "±25 %: \"about\", and an average over the paper's 11 workloads where swan has 3 traces",
        finding: Some(WHY_HEADLINE),
        ..claim("triple-a-fig9-mean", "triple-a-fig9", "Fig. 9, §6.1")
    },
    Claim {
        says: "hm (5 hot clusters, Table 1): Triple-A shortens latency and raises IOPS",
        paper_value: "a gain",
        checks: &[
            Check::AtMost { measure: "hm.triple_a.latency_ratio", max: 1.0 },
            Check::AtLeast { measure: "hm.triple_a.iops_ratio", min: 1.0 },
        ],
        tolerance: "a direction, any margin: the figure's bars are not printed",
        ..claim("triple-a-fig9-hm", "triple-a-fig9", "Fig. 9")
    },
    Claim {
        says: "no gain on web, which has no significant contention",
        paper_value: "no gain",
        checks: &[
            Check::Within { measure: "web.triple_a.latency_ratio", lo: 0.9, hi: 1.1 },
            Check::Within { measure: "web.triple_a.iops_ratio", lo: 0.9, hi: 1.1 },
        ],
        tolerance: "\"no gain\" as bars at 1, read off a plot: ±10 % either way",
        finding: Some(WHY_TRACES),
        ..claim("triple-a-fig9-web", "triple-a-fig9", "Fig. 9, §6.1")
    },
    Claim {
        says: "no gain on web, with §5.1's t_SLA read as 3.3 ms (3.3 µs is below any request's service time)",
        paper_value: "no gain",
        checks: &[
            Check::Within { measure: "web.triple_a_3ms.latency_ratio", lo: 0.9, hi: 1.1 },
            Check::Within { measure: "web.triple_a_3ms.iops_ratio", lo: 0.9, hi: 1.1 },
        ],
        tolerance: "as the claim above",
        finding: Some(WHY_T_SLA),
        ..claim("triple-a-fig9-web-3ms", "triple-a-fig9", "Fig. 9, §6.1, §5.1")
    },
    Claim {
        says: "hm: Triple-A shortens latency and raises IOPS, with t_SLA read as 3.3 ms",
        paper_value: "a gain",
        checks: &[
            Check::AtMost { measure: "hm.triple_a_3ms.latency_ratio", max: 1.0 },
            Check::AtLeast { measure: "hm.triple_a_3ms.iops_ratio", min: 1.0 },
        ],
        tolerance: "a direction, any margin",
        finding: Some(WHY_T_SLA),
        ..claim("triple-a-fig9-hm-3ms", "triple-a-fig9", "Fig. 9, §5.1")
    },
    Claim {
        says: "g-eigen, the largest gain",
        paper_value: "−98 % latency, 7.8× IOPS",
        checks: &[Check::NotMeasurable("the Eigensolver traces are not on this machine")],
        tolerance: "—",
        ..claim("triple-a-fig9-g-eigen", "triple-a-fig9", "Fig. 9, §6.1")
    },
    Claim {
        says: "websql: the IOPS gain limited to about 2×, its four hot clusters under one switch",
        paper_value: "≈ 2× IOPS",
        checks: &[Check::NotMeasurable("the websql trace is not on this machine")],
        tolerance: "—",
        ..claim("triple-a-fig9-websql", "triple-a-fig9", "Fig. 9")
    },
    Claim {
        says: "msnfs (less-hot clusters) gains relatively little; proj (hotter clusters) gains greatly",
        paper_value: "msnfs low, proj high",
        checks: &[Check::NotMeasurable("the msnfs and proj traces are not on this machine")],
        tolerance: "—",
        ..claim("triple-a-fig9-msnfs-proj", "triple-a-fig9", "Fig. 9")
    },
    Claim {
        says: "data migration adds at most 34 % writes",
        paper_value: "≤ 34 % (worst case)",
        checks: &[Check::AtMost { measure: "worst.triple_a.extra_writes", max: 0.34 }],
        shows: &["worst.migration_only.extra_writes"],
        tolerance: "a worst case: any margin below it; swan counts every page copied to a new place, migrated or reshaped, against the workload's page writes, on the traces that write (≥ 1 % writes)",
        finding: Some(WHY_T_SLA),
        ..claim("triple-a-s65-extra-writes", "triple-a-fig9", "§6.5")
    },
    Claim {
        says: "those extra writes shorten the flash's lifetime by 23 %",
        paper_value: "−23 %",
        checks: &[Check::NotMeasurable(
            "swan models no wear-out, and the paper does not say how 23 % follows from 34 % (1 − 1/1.34 is 25 %)",
        )],
        tolerance: "—",
        ..claim("triple-a-s65-lifetime", "triple-a-fig9", "§6.5")
    },
    Claim {
        says: "on average link contention cut dramatically, storage 15 %, stall 85 %",
        paper_value: "≪ 1, 0.85×, 0.15×",
        checks: &[
            Check::AtMost { measure: "mean.link_ratio", max: 0.5 },
            Check::Within { measure: "mean.storage_ratio", lo: 0.64, hi: 1.06 },
            Check::Within { measure: "mean.stall_ratio", lo: 0.11, hi: 0.19 },
        ],
        tolerance: "\"dramatically\" as at least halved; 0.85× and 0.15× ±25 %, averages over the paper's 11 workloads where swan has 3 traces",
        finding: Some(WHY_TRACES),
        ..claim("triple-a-fig10", "triple-a-fig10", "Fig. 10, §6.2")
    },
    Claim {
        says: "hm: Triple-A shortens a large portion of the latencies",
        paper_value: "most",
        checks: &[Check::AtLeast { measure: "hm.shorter_share", min: 0.5 }],
        tolerance: "\"a large portion\" as at least half the CDF's 8 points (p10 … p99.9)",
        finding: Some(WHY_TRACES),
        ..claim("triple-a-fig11-hm", "triple-a-fig11", "Fig. 11, §6.3")
    },
    Claim {
        says: "hm: the long tail much shorter",
        paper_value: "significantly improved",
        checks: &[
            Check::AtMost { measure: "hm.p99_ratio", max: 0.8 },
            Check::AtMost { measure: "hm.p999_ratio", max: 0.8 },
        ],
        tolerance: "\"significantly\" as at least 20 % shorter at p99 and p99.9",
        finding: Some(WHY_TRACES),
        ..claim("triple-a-fig11-hm-tail", "triple-a-fig11", "Fig. 11, §6.3")
    },
    Claim {
        says: "Triple-A's IOPS above the non-autonomic array's at 1 … 8 hot clusters",
        paper_value: "improved",
        checks: &[Check::AtLeast { measure: "iops_ratio.lowest", min: 1.0 }],
        tolerance: "a direction: any margin",
        ..claim("triple-a-fig12-iops", "triple-a-fig12", "Fig. 12")
    },
    Claim {
        says: "the non-autonomic array's latency worsens from 1 to 8 hot clusters (closed loop)",
        paper_value: "worsens",
        checks: &[Check::Rises(&["non_autonomic.1hot.latency_us", "non_autonomic.8hot.latency_us"])],
        tolerance: "an order: any margin",
        finding: Some(WHY_MICRO),
        ..claim("triple-a-fig12a-closed", "triple-a-fig12", "Fig. 12(a)")
    },
    Claim {
        says: "the same in an open loop at 1.5 M IOPS, not the reference cell (the paper does not say which loop)",
        paper_value: "worsens",
        checks: &[Check::Rises(&["non_autonomic.1hot.open.latency_us", "non_autonomic.8hot.open.latency_us"])],
        tolerance: "an order: any margin",
        ..claim("triple-a-fig12a-open", "triple-a-fig12", "Fig. 12(a)")
    },
    Claim {
        says: "Triple-A's latency stable from 1 to 8 hot clusters",
        paper_value: "stable",
        checks: &[Check::AtMost { measure: "triple_a.latency_8hot_over_1hot", max: 1.1 }],
        tolerance: "\"stable\", against the baseline's \"worsens\", as rising at most 10 % (a level read off a plot); falling is allowed",
        ..claim("triple-a-fig12b", "triple-a-fig12", "Fig. 12(b)")
    },
    Claim {
        says: "Triple-A's IOPS gain grows with the network (4 hot clusters)",
        paper_value: "rises",
        checks: &[Check::Rises(&["iops_ratio.4x8", "iops_ratio.4x12", "iops_ratio.4x16", "iops_ratio.4x20"])],
        tolerance: "an order: any margin",
        ..claim("triple-a-fig13-iops", "triple-a-fig13", "Fig. 13")
    },
    Claim {
        says: "Triple-A's latency, normalised, falls as the network grows",
        paper_value: "falls",
        checks: &[Check::Falls(&["latency_ratio.4x8", "latency_ratio.4x12", "latency_ratio.4x16", "latency_ratio.4x20"])],
        tolerance: "an order: any margin",
        ..claim("triple-a-fig13-latency", "triple-a-fig13", "Fig. 13")
    },
    Claim {
        says: "link contention almost eliminated as the network grows",
        paper_value: "almost eliminated",
        checks: &[
            Check::Falls(&["link_ratio.4x8", "link_ratio.4x12", "link_ratio.4x16", "link_ratio.4x20"]),
            Check::AtMost { measure: "link_ratio.4x20", max: 0.1 },
        ],
        tolerance: "falling, any margin; \"almost eliminated\" as at most a tenth of the non-autonomic array's at 4x20",
        ..claim("triple-a-fig14-link", "triple-a-fig13", "Fig. 14")
    },
    Claim {
        says: "storage contention steadily reduced as the network grows",
        paper_value: "steadily reduced",
        checks: &[
            Check::AtMost { measure: "storage_ratio.4x8", max: 1.0 },
            Check::Falls(&["storage_ratio.4x8", "storage_ratio.4x12", "storage_ratio.4x16", "storage_ratio.4x20"]),
        ],
        tolerance: "below the non-autonomic array's from 4x8 and falling: any margin",
        ..claim("triple-a-fig14-storage", "triple-a-fig13", "Fig. 14")
    },
    Claim {
        says: "Triple-A's switch and RC stalls eliminated at 20 clusters per switch",
        paper_value: "eliminated",
        checks: &[Check::AtMost { measure: "rc_switch_stall_ratio.4x20", max: 0.01 }],
        shows: &["triple_a.4x20.rc_switch_stall_us"],
        tolerance: "\"completely eliminated\" as at most 1 % of the non-autonomic array's",
        ..claim("triple-a-fig15", "triple-a-fig13", "Fig. 15")
    },
    Claim {
        says: "shadow cloning: lower latency than reading again, in the reference cell (32 MiB hot per cluster)",
        paper_value: "lower",
        checks: &[Check::Falls(&["read_again.latency_us", "shadow_clone.latency_us"])],
        tolerance: "an order: any margin",
        finding: Some(WHY_MICRO),
        ..claim("triple-a-fig16", "triple-a-fig16", "Fig. 16(b)–(c)")
    },
    Claim {
        says: "the same in a cell that is not the reference: 4 MiB hot per cluster (`--hot-pages 1024`), where migrations are many",
        paper_value: "lower",
        checks: &[Check::Falls(&["hot4mib.read_again.latency_us", "hot4mib.shadow_clone.latency_us"])],
        tolerance: "an order: any margin",
        ..claim("triple-a-fig16-4mib", "triple-a-fig16", "Fig. 16(b)–(c)")
    },
    Claim {
        says: "t_SLA = 3.3 µs, the model's default",
        paper_value: "3.3 µs",
        checks: &[Check::Within { measure: "t_sla_us", lo: 3.3, hi: 3.3 }],
        shows: &["laggards.default", "laggards.t_sla_3300000ns"],
        tolerance: "none: the paper's figure is the model's parameter",
        role: Role::Calibration,
        finding: Some(WHY_T_SLA),
        ..claim("triple-a-t-sla", "triple-a-gc", "§5.1, Eq. 3")
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::Measures;
    use std::path::PathBuf;

    #[test]
    fn every_claim_is_whole_and_named_once() {
        let mut ids: Vec<&str> = CLAIMS.iter().map(|c| c.id).collect();
        for c in CLAIMS {
            assert!(c.paper == Paper::TripleA && c.id.starts_with("triple-a"), "{}", c.id);
            assert!(!c.says.is_empty() && !c.paper_value.is_empty() && !c.tolerance.is_empty(), "{}", c.id);
            assert!(!c.checks.is_empty(), "{}: no rule", c.id);
        }
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "an id is used twice");
    }

    /// A verdict resting on a cell other than the figure's reference cell says so in its row
    /// (the README once called Fig. 16 agreed on the strength of a 4 MiB cell).
    #[test]
    fn a_claim_judged_off_the_reference_cell_says_so() {
        for c in CLAIMS {
            let off =
                c.checks.iter().flat_map(|k| k.measures()).any(|n| n.starts_with("hot4mib.") || n.contains(".open."));
            assert_eq!(off, c.says.contains("not the reference"), "{}: {}", c.id, c.says);
        }
    }

    /// A misspelt measure would show as "not measured" in the README: every measure a claim
    /// names is in its reproduction's reference measures.
    #[test]
    fn the_reference_measures_have_every_measure_a_claim_names() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../repro/measures");
        for c in CLAIMS {
            let m = Measures::read(&dir.join(format!("{}.json", c.experiment))).expect("the reference measures");
            let named = c.checks.iter().flat_map(|k| k.measures()).chain(c.shows.iter().copied());
            for name in named {
                assert!(m.value(name).is_some(), "{}: {} has no {name}", c.id, c.experiment);
            }
        }
    }
}
