//! The papers' claims as data, and their verdicts computed.
//!
//! A [`Claim`] says what a paper states (a number, a band, an order), which of swan's
//! measures it is checked on, by what rule and tolerance, and why that tolerance. A
//! reproduction writes its measures ([`Measures`], `measures.json` in its run directory; the
//! references are checked in under `repro/measures/`), and [`judge`] gives each claim's
//! verdict from them. No verdict word is typed by hand: the paper tables of the README and
//! repro/README.md are [`table`]'s output (`swan claims --write README.md repro/README.md`),
//! and a test fails when they differ.

pub mod apas;
pub mod harmonia;
mod measures;
pub mod swan;
pub mod triple_a;
pub mod zapraid;

pub use measures::{Measure, Measures, MeasuresError};

use std::fmt::Write as _;
use std::path::Path;

/// Which paper a claim is from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paper {
    Swan,
    Harmonia,
    TripleA,
    Apas,
    ZapRaid,
}

/// Every declared claim, by the README table it is shown in (the table's name marks its
/// place: `<!-- claims: NAME ... -->`). A paper's claims live in a module of their own.
pub const TABLES: &[(&str, &[Claim])] = &[
    ("swan", swan::CLAIMS),
    ("harmonia", harmonia::CLAIMS),
    ("triple-a", triple_a::CLAIMS),
    ("apas", apas::CLAIMS),
    ("zoned", zapraid::CLAIMS),
];

/// The command that writes `experiment`'s measures: `swan repro NAME`, but for the
/// reproductions run by a script of their own.
pub fn command(experiment: &str) -> String {
    match experiment {
        "traces" => "repro/traces.sh".into(),
        "eq1" => "swan plan --verify".into(),
        e => format!("swan repro {e}"),
    }
}

/// The claims checked on `experiment`'s measures, whichever table they are shown in.
pub fn of_experiment(experiment: &str) -> Vec<&'static Claim> {
    TABLES.iter().flat_map(|(_, claims)| claims.iter()).filter(|c| c.experiment == experiment).collect()
}

/// What a reproduction does with its measures once its runs are done: write them beside the
/// runs (`OUT/measures.json`, which `repro/run.sh` keeps as the reference) and print each of
/// its claims' verdicts.
pub fn publish(out: &Path, measures: &Measures) -> Result<(), MeasuresError> {
    measures.write(&out.join("measures.json"))?;
    let claims = of_experiment(&measures.experiment);
    if !claims.is_empty() {
        println!();
    }
    for line in report(&claims, &measures.experiment, measures) {
        println!("{line}");
    }
    Ok(())
}

/// One rule a claim is checked by, on measures named as the reproduction writes them.
#[derive(Clone, Copy, Debug)]
pub enum Check {
    /// The measure lies in `lo..=hi`.
    Within { measure: &'static str, lo: f64, hi: f64 },
    /// The measure is at least `min`.
    AtLeast { measure: &'static str, min: f64 },
    /// The measure is at most `max`.
    AtMost { measure: &'static str, max: f64 },
    /// The measure is more than `min` ("most": more than half).
    Above { measure: &'static str, min: f64 },
    /// The measure is less than `max` ("lower": not equal).
    Below { measure: &'static str, max: f64 },
    /// Some seed's value lies in `lo..=hi`: the range of a measure over seeds (its one value
    /// when there is one seed) meets the band. For a paper's figure from one run with no
    /// spread printed, swan's run-to-run spread stands in for the paper's.
    Overlaps { measure: &'static str, lo: f64, hi: f64 },
    /// The mean of several measures lies in `lo..=hi`: a figure the paper averages over
    /// workloads, checked over those swan has.
    MeanWithin { measures: &'static [&'static str], lo: f64, hi: f64 },
    /// Each measure is larger than the one before it.
    Rises(&'static [&'static str]),
    /// Each measure is smaller than the one before it.
    Falls(&'static [&'static str]),
    /// Nothing here can measure it, and why (a trace or a setup no reproduction has): the
    /// claim is declared so the table shows it, and its verdict is "not measured".
    NotMeasurable(&'static str),
}

impl Check {
    fn measures(&self) -> Vec<&'static str> {
        match *self {
            Check::Within { measure, .. }
            | Check::AtLeast { measure, .. }
            | Check::AtMost { measure, .. }
            | Check::Above { measure, .. }
            | Check::Below { measure, .. }
            | Check::Overlaps { measure, .. } => vec![measure],
            Check::Rises(m) | Check::Falls(m) | Check::MeanWithin { measures: m, .. } => m.to_vec(),
            Check::NotMeasurable(_) => Vec::new(),
        }
    }

    /// Whether the measures pass, or the first one missing.
    fn holds(&self, m: &Measures) -> Result<bool, String> {
        let get = |name: &str| m.value(name).ok_or_else(|| name.to_string());
        Ok(match *self {
            Check::Within { measure, lo, hi } => (lo..=hi).contains(&get(measure)?),
            Check::AtLeast { measure, min } => get(measure)? >= min,
            Check::AtMost { measure, max } => get(measure)? <= max,
            Check::Above { measure, min } => get(measure)? > min,
            Check::Below { measure, max } => get(measure)? < max,
            Check::Overlaps { measure, lo, hi } => {
                let v = get(measure)?;
                let (min, max) = m.measures[measure].spread.map_or((v, v), |(a, b, _)| (a, b));
                min <= hi && max >= lo
            }
            Check::MeanWithin { measures, lo, hi } => {
                let v = measures.iter().map(|n| get(n)).collect::<Result<Vec<f64>, String>>()?;
                (lo..=hi).contains(&(v.iter().sum::<f64>() / v.len().max(1) as f64))
            }
            Check::Rises(names) | Check::Falls(names) => {
                let v = names.iter().map(|n| get(n)).collect::<Result<Vec<f64>, String>>()?;
                let rises = matches!(self, Check::Rises(_));
                v.windows(2).all(|p| if rises { p[1] > p[0] } else { p[1] < p[0] })
            }
            Check::NotMeasurable(why) => return Err(why.to_string()),
        })
    }

    /// The rule as a reader sees it, with the measures' labels.
    fn describe(&self, m: &Measures) -> String {
        let label = |n: &str| m.label(n).unwrap_or(n).to_string();
        // A bound in its measure's unit, as the measure is shown.
        let n = |measure: &str, x: f64| {
            let unit = m.measures.get(measure).map_or("", |x| x.unit.as_str());
            match unit {
                "" | "%" => measures::format_value(x, unit),
                u => format!("{} {u}", measures::format_value(x, u)),
            }
        };
        match *self {
            Check::Within { measure, lo, hi } => format!("{} in {}–{}", label(measure), n(measure, lo), n(measure, hi)),
            Check::AtLeast { measure, min } => format!("{} ≥ {}", label(measure), n(measure, min)),
            Check::AtMost { measure, max } => format!("{} ≤ {}", label(measure), n(measure, max)),
            Check::Above { measure, min } => format!("{} > {}", label(measure), n(measure, min)),
            Check::Below { measure, max } => format!("{} < {}", label(measure), n(measure, max)),
            Check::Overlaps { measure, lo, hi } => {
                format!("{} meets {}–{}", label(measure), n(measure, lo), n(measure, hi))
            }
            Check::MeanWithin { measures, lo, hi } => {
                let names: Vec<String> = measures.iter().map(|x| label(x)).collect();
                format!("the mean of {} in {}–{}", names.join(", "), n(measures[0], lo), n(measures[0], hi))
            }
            Check::Rises(n) => n.iter().map(|x| label(x)).collect::<Vec<_>>().join(" < "),
            Check::Falls(n) => n.iter().map(|x| label(x)).collect::<Vec<_>>().join(" > "),
            Check::NotMeasurable(why) => why.to_string(),
        }
    }
}

/// What a claim is to the laboratory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A result the paper reports, checked.
    Result,
    /// A figure a model parameter was chosen on: its agreement is by construction, shown so
    /// the reader knows it is no evidence.
    Calibration,
}

/// One checkable statement of a paper.
#[derive(Clone, Copy, Debug)]
pub struct Claim {
    /// Stable name: the reproduction's measures file and the README row are keyed by it.
    pub id: &'static str,
    pub paper: Paper,
    /// The reproduction (`swan repro NAME`) whose measures it is checked on.
    pub experiment: &'static str,
    /// Where in the paper: "Fig. 5(b)", "Table 4", "§3.5".
    pub source: &'static str,
    /// What the paper says, in a line.
    pub says: &'static str,
    /// The paper's figure, as the table shows it.
    pub paper_value: &'static str,
    /// Every rule must hold for the claim to agree; some holding is a partial agreement.
    pub checks: &'static [Check],
    /// Measures shown beside the rules' own, for the reader (they decide nothing).
    pub shows: &'static [&'static str],
    /// Why the rules' bounds are what they are.
    pub tolerance: &'static str,
    pub role: Role,
    /// Where the cause of a disagreement is shown (a docs anchor), if it is.
    pub finding: Option<&'static str>,
}

/// A claim of `paper` with nothing but where it is from: no rules, nothing shown, a result
/// with no finding. Each paper's module builds its claims from it (`..claim(id, ...)`) and
/// sets the rest; a test holds every claim to having said what it checks and how.
pub(crate) const fn base(paper: Paper, id: &'static str, experiment: &'static str, source: &'static str) -> Claim {
    Claim {
        id,
        paper,
        experiment,
        source,
        says: "",
        paper_value: "",
        checks: &[],
        shows: &[],
        tolerance: "",
        role: Role::Result,
        finding: None,
    }
}

/// A claim's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Agrees,
    /// Some rules hold, not all: which do not.
    Partly(Vec<String>),
    Disagrees,
    /// By construction: a parameter was chosen on it.
    Calibrated,
    /// The reproduction wrote no such measure (its name), or nothing here can measure it (why).
    NotMeasured(String),
}

impl Verdict {
    pub fn word(&self) -> String {
        match self {
            Verdict::Agrees => "agrees".into(),
            Verdict::Partly(failed) => format!("**partly**: not {}", failed.join("; not ")),
            Verdict::Disagrees => "**disagrees**".into(),
            Verdict::Calibrated => "calibrated on it (no evidence)".into(),
            Verdict::NotMeasured(m) => format!("**not measured** ({m})"),
        }
    }
}

/// A claim's verdict from `measures`.
pub fn judge(claim: &Claim, measures: &Measures) -> Verdict {
    let mut failed = Vec::new();
    for check in claim.checks {
        match check.holds(measures) {
            Ok(true) => {}
            Ok(false) => failed.push(check.describe(measures)),
            Err(missing) => return Verdict::NotMeasured(missing),
        }
    }
    match (claim.role, failed.len()) {
        (Role::Calibration, 0) => Verdict::Calibrated,
        (_, 0) => Verdict::Agrees,
        (_, n) if n == claim.checks.len() => Verdict::Disagrees,
        _ => Verdict::Partly(failed),
    }
}

/// What swan measured for `claim`: each measure it shows and its rules use, once, with its
/// label.
pub fn measured(claim: &Claim, measures: &Measures) -> String {
    let mut names: Vec<&str> = claim.shows.to_vec();
    for c in claim.checks {
        for n in c.measures() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    names.iter().map(|n| measures.show(n)).collect::<Vec<_>>().join("; ")
}

/// One line per claim of `experiment`: what a reproduction prints after its runs.
pub fn report(claims: &[&Claim], experiment: &str, measures: &Measures) -> Vec<String> {
    claims
        .iter()
        .filter(|c| c.experiment == experiment)
        .map(|c| {
            let swan = measured(c, measures);
            let swan = if swan.is_empty() { String::new() } else { format!("swan: {swan}: ") };
            format!(
                "{} ({}): {} — {swan}{} (tolerance: {})",
                c.source,
                c.id,
                c.says,
                judge(c, measures).word(),
                c.tolerance
            )
        })
        .collect()
}

/// How many of `claims` each verdict has: agrees, partly, disagrees, calibrated, not measured.
pub fn tally(claims: &[Claim], measures_of: &dyn Fn(&str) -> Option<Measures>) -> [usize; 5] {
    let mut t = [0; 5];
    for c in claims {
        let i = match measures_of(c.experiment).map(|m| judge(c, &m)) {
            Some(Verdict::Agrees) => 0,
            Some(Verdict::Partly(_)) => 1,
            Some(Verdict::Disagrees) => 2,
            Some(Verdict::Calibrated) => 3,
            Some(Verdict::NotMeasured(_)) | None => 4,
        };
        t[i] += 1;
    }
    t
}

/// The paper-against-swan summary: one row per paper, its verdicts counted, and where its
/// table is (`places`: a link for each table's name).
pub fn summary(measures_of: &dyn Fn(&str) -> Option<Measures>, places: &dyn Fn(&str) -> String) -> String {
    let mut t = String::from(
        "| paper | claims | agree | partly | disagree | calibrated | not measured | table |\n|---|---|---|---|---|---|---|---|\n",
    );
    for (name, claims) in TABLES {
        let [a, p, d, c, n] = tally(claims, measures_of);
        let paper = match claims.first().map(|c| c.paper) {
            Some(Paper::Swan) => "SWAN (ATC '19)",
            Some(Paper::Harmonia) => "Harmonia (MSST '11)",
            Some(Paper::TripleA) => "Triple-A (ASPLOS '14)",
            Some(Paper::Apas) => "Apas",
            Some(Paper::ZapRaid) => "ZapRAID (APSys '23)",
            None => name,
        };
        let _ = writeln!(t, "| {paper} | {} | {a} | {p} | {d} | {c} | {n} | {} |", claims.len(), places(name));
    }
    t
}

/// The markdown table of `claims`, each judged on the measures of its experiment
/// (`measures_of`), as the README shows it; `root` is the way from the file the table is in
/// to the repository's top, where findings are named from ("" or "../").
pub fn table(claims: &[Claim], measures_of: &dyn Fn(&str) -> Option<Measures>, root: &str) -> String {
    let mut t = String::from("| claim (paper) | paper | swan | verdict | command |\n|---|---|---|---|---|\n");
    for c in claims {
        let (swan, verdict) = match measures_of(c.experiment) {
            Some(m) => (measured(c, &m), judge(c, &m)),
            None => (String::new(), Verdict::NotMeasured(format!("no measures of {}", c.experiment))),
        };
        // A finding explains a measured result; nothing measured, nothing to explain.
        let explained = c.finding.filter(|_| !matches!(verdict, Verdict::NotMeasured(_)));
        let mut verdict = verdict.word();
        if let Some(f) = explained {
            let _ = write!(verdict, " ([why]({root}{f}))");
        }
        let _ = writeln!(
            t,
            "| {}: {} | {} | {} | {} | `{}` |",
            c.source,
            c.says,
            c.paper_value,
            swan,
            verdict,
            command(c.experiment)
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measures(pairs: &[(&str, f64)]) -> Measures {
        let mut m = Measures::default();
        for (n, v) in pairs {
            m.set(n, n, "MB/s", *v);
        }
        m
    }

    const CLAIM: Claim = Claim {
        id: "t",
        paper: Paper::Swan,
        experiment: "x",
        source: "Fig. 0",
        says: "a rises and c is small",
        paper_value: "—",
        checks: &[Check::Rises(&["a", "b"]), Check::AtMost { measure: "c", max: 1.0 }],
        shows: &[],
        tolerance: "none",
        role: Role::Result,
        finding: None,
    };

    #[test]
    fn every_rule_holding_agrees_some_is_partly_none_disagrees() {
        assert_eq!(judge(&CLAIM, &measures(&[("a", 1.0), ("b", 2.0), ("c", 0.5)])), Verdict::Agrees);
        assert!(
            matches!(judge(&CLAIM, &measures(&[("a", 1.0), ("b", 2.0), ("c", 5.0)])), Verdict::Partly(f) if f == ["c ≤ 1 MB/s"])
        );
        assert_eq!(judge(&CLAIM, &measures(&[("a", 3.0), ("b", 2.0), ("c", 5.0)])), Verdict::Disagrees);
        assert_eq!(judge(&CLAIM, &measures(&[("a", 3.0)])), Verdict::NotMeasured("b".into()));
        let calibration = Claim { role: Role::Calibration, ..CLAIM };
        assert_eq!(judge(&calibration, &measures(&[("a", 1.0), ("b", 2.0), ("c", 0.5)])), Verdict::Calibrated);
    }

    #[test]
    fn strict_rules_fail_on_equality_and_overlaps_reads_the_seeds_range() {
        let m = measures(&[("a", 1.0)]);
        let holds = |c: Check| c.holds(&m).unwrap();
        assert!(!holds(Check::Below { measure: "a", max: 1.0 }) && holds(Check::AtMost { measure: "a", max: 1.0 }));
        assert!(!holds(Check::Above { measure: "a", min: 1.0 }) && holds(Check::AtLeast { measure: "a", min: 1.0 }));
        assert!(holds(Check::Below { measure: "a", max: 1.5 }) && holds(Check::Above { measure: "a", min: 0.5 }));
        // One value: in the band or not.
        assert!(holds(Check::Overlaps { measure: "a", lo: 0.9, hi: 1.1 }));
        assert!(!holds(Check::Overlaps { measure: "a", lo: 1.1, hi: 1.2 }));
        // Seeds 0.8, 1.0, 1.3 (mean 1.033): the band 1.2–1.4 holds one seed, 1.4–1.5 none.
        let mut s = Measures::default();
        s.set_seeds("r", "ratio", "", &[0.8, 1.0, 1.3]);
        assert!(Check::Overlaps { measure: "r", lo: 1.2, hi: 1.4 }.holds(&s).unwrap());
        assert!(!Check::Overlaps { measure: "r", lo: 1.4, hi: 1.5 }.holds(&s).unwrap());
        assert!(!Check::Within { measure: "r", lo: 1.2, hi: 1.4 }.holds(&s).unwrap());
        assert_eq!(Check::Overlaps { measure: "r", lo: 1.0 / 3.0, hi: 1.5 }.describe(&s), "ratio meets 0.333–1.5");
        assert_eq!(Check::Below { measure: "x", max: 1.0 }.holds(&s), Err("x".to_string()));
        // A mean over workloads: (1 + 2) / 2 = 1.5.
        let two = measures(&[("a", 1.0), ("b", 2.0)]);
        assert!(Check::MeanWithin { measures: &["a", "b"], lo: 1.4, hi: 1.6 }.holds(&two).unwrap());
        assert!(!Check::MeanWithin { measures: &["a", "b"], lo: 1.6, hi: 2.0 }.holds(&two).unwrap());
        assert_eq!(Check::MeanWithin { measures: &["a", "z"], lo: 0.0, hi: 1.0 }.holds(&two), Err("z".to_string()));
        // A bound is shown in its measure's unit.
        let mut p = Measures::default();
        p.set("s", "share", "%", 0.4);
        p.set("t", "time", "ms", 2.0);
        assert_eq!(Check::Above { measure: "s", min: 0.5 }.describe(&p), "share > 50.0 %");
        assert_eq!(Check::AtMost { measure: "t", max: 1.5 }.describe(&p), "time ≤ 1.5 ms");
    }

    #[test]
    fn a_script_s_reproduction_names_its_script() {
        assert_eq!(command("fig5"), "swan repro fig5");
        assert_eq!(command("traces"), "repro/traces.sh");
    }

    #[test]
    fn every_claim_is_of_its_table_s_paper_and_has_a_unique_id() {
        let mut ids = std::collections::BTreeSet::new();
        for (name, claims) in TABLES {
            for c in *claims {
                assert!(ids.insert(c.id), "claim id {} twice", c.id);
                let paper = match *name {
                    "swan" => Paper::Swan,
                    "harmonia" => Paper::Harmonia,
                    "apas" => Paper::Apas,
                    "zoned" => Paper::ZapRaid,
                    _ => Paper::TripleA,
                };
                assert_eq!(c.paper, paper, "{} in the {name} table", c.id);
                assert!(!c.checks.is_empty() && !c.tolerance.is_empty(), "{} has rules and says why", c.id);
                assert!(!c.says.is_empty() && !c.paper_value.is_empty(), "{} says what the paper says", c.id);
            }
        }
    }

    #[test]
    fn a_claim_nothing_here_can_measure_says_why_whatever_was_measured() {
        let why = "the trace is not on this machine";
        let claim = Claim { checks: &[Check::NotMeasurable("the trace is not on this machine")], ..CLAIM };
        let m = measures(&[("a", 1.0), ("b", 2.0), ("c", 0.5)]);
        assert_eq!(judge(&claim, &m), Verdict::NotMeasured(why.into()));
        assert_eq!(measured(&claim, &m), "", "it shows no measure");
        let t = table(&[claim], &|_| Some(m.clone()), "");
        assert!(t.contains(&format!("| **not measured** ({why}) |")), "{t}");
    }

    #[test]
    fn the_table_shows_each_measure_once_with_its_label() {
        let m = measures(&[("a", 1.0), ("b", 2.0), ("c", 0.5)]);
        let t = table(&[CLAIM], &|_| Some(m.clone()), "");
        assert!(t.contains("| a 1 MB/s; b 2 MB/s; c 0.5 MB/s | agrees | `swan repro x` |"), "{t}");
    }

    #[test]
    fn a_finding_is_linked_from_a_measured_verdict_not_from_a_missing_one() {
        let m = measures(&[("a", 1.0), ("b", 2.0), ("c", 0.5)]);
        let explained = Claim { finding: Some("docs/x.md#y"), ..CLAIM };
        assert!(table(&[explained], &|_| Some(m.clone()), "").contains("| agrees ([why](docs/x.md#y)) |"));
        assert!(table(&[explained], &|_| Some(m.clone()), "../").contains("| agrees ([why](../docs/x.md#y)) |"));
        let t = table(&[explained], &|_| None, "");
        assert!(t.contains("| **not measured** (no measures of x) | `swan repro x` |"), "{t}");
    }
}
