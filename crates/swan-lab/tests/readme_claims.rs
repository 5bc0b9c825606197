//! The generated claims tables of the README and repro/README.md are exactly what the
//! declared claims give on the checked-in reference measures (`swan claims --check README.md
//! repro/README.md`), so no verdict is kept by hand; and a hand-edited verdict is caught.

use std::path::PathBuf;
use swan_lab::claims_cmd::{marked, replaced, tables, PLACES};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files the generated tables live in: the README (the summary and SWAN's table) and
/// repro/README.md (the other papers').
const FILES: [&str; 2] = ["README.md", "repro/README.md"];

fn read(file: &str) -> String {
    std::fs::read_to_string(repo().join(file)).unwrap()
}

#[test]
fn the_readmes_say_what_the_claims_and_measures_give() {
    let tables = tables(&repo().join("repro/measures")).expect("the reference measures");
    for file in FILES {
        let text = read(file);
        let want = replaced(&text, &tables).expect("the file marks where its tables go");
        assert!(want == text, "{file}'s claims tables are not as generated: run `swan claims --write {file}`");
    }
}

#[test]
fn every_table_is_in_the_file_it_is_placed_in_and_no_other() {
    let tables = tables(&repo().join("repro/measures")).unwrap();
    for (name, file) in PLACES {
        for f in FILES {
            let marks = marked(&read(f), &tables).contains(name);
            assert_eq!(marks, f == *file, "the {name} table belongs in {file}, not {f}");
        }
    }
    assert_eq!(PLACES.len(), tables.len(), "every generated table has a place");
}

#[test]
fn a_hand_edited_verdict_is_caught() {
    let tables = tables(&repo().join("repro/measures")).unwrap();
    let readme = read("README.md");
    let swan = &tables["swan"];
    assert!(swan.contains("| agrees |") && swan.contains("**disagrees**"), "both verdicts are in the SWAN table");
    // Turn the first disagreement into an agreement, as a hand edit would.
    let edited = readme.replacen("**disagrees**", "agrees", 1);
    assert_ne!(edited, readme);
    assert_ne!(replaced(&edited, &tables).unwrap(), edited, "the edit is undone by the generator");
    // And a count in the summary.
    let summary = &tables["summary"];
    let row = summary.lines().find(|l| l.starts_with("| SWAN")).expect("SWAN's summary row");
    let edited = readme.replacen(row, &row.replacen(" | ", " | 1", 2), 1);
    assert_ne!(edited, readme);
    assert_ne!(replaced(&edited, &tables).unwrap(), edited, "the edited count is undone");
}

#[test]
fn every_paper_s_claims_are_a_generated_table_one_row_each_counted_in_the_summary() {
    let tables = tables(&repo().join("repro/measures")).unwrap();
    let text: String = FILES.iter().map(|f| read(f)).collect();
    for (name, claims) in swan_lab::claims::TABLES {
        let table = &tables[name];
        assert!(text.contains(table.as_str()), "no file shows the {name} table as generated");
        assert_eq!(table.lines().count(), claims.len() + 2, "the {name} table: a header, a rule, a row per claim");
        for c in *claims {
            let row = format!("| {}: {} |", c.source, c.says);
            assert!(table.contains(&row), "{} has no row in the {name} table", c.id);
        }
        let counted = format!(" | {} | ", claims.len());
        assert!(tables["summary"].lines().any(|l| l.contains(&counted)), "the summary counts the {name} table");
    }
}

#[test]
fn the_readme_s_table_rows_are_short() {
    for line in read("README.md").lines().filter(|l| l.starts_with('|')) {
        assert!(line.chars().count() <= 300, "a README row over 300 characters: {line}");
    }
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn every_claim_s_finding_is_a_file_and_a_section_of_it() {
    assert_eq!(anchor("Fig. 8's slope: what GGC (still) pays – `x`"), "fig-8s-slope-what-ggc-still-pays--x");
    for (_, claims) in swan_lab::claims::TABLES {
        for c in *claims {
            let Some(f) = c.finding else { continue };
            let (path, section) = f.split_once('#').map_or((f, None), |(p, s)| (p, Some(s)));
            let text =
                std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{}'s finding {path}: {e}", c.id));
            if let Some(s) = section {
                let found =
                    text.lines().filter_map(|l| l.strip_prefix('#')).any(|h| anchor(h.trim_start_matches('#')) == s);
                assert!(found, "{}'s finding {f}: {path} has no heading with that anchor", c.id);
            }
        }
    }
}

#[test]
fn each_reference_output_ends_with_the_verdicts_its_measures_give() {
    // A reference output (repro/NAME.txt) prints its claims' verdicts as its run judged them;
    // a claim changed since, and not rerun, would leave the output saying something else.
    let dir = repo().join("repro/measures");
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let m = swan_lab::claims::Measures::read(&path).unwrap();
        let out = repo().join("repro").join(format!("{}.txt", m.experiment));
        let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
        let claims = swan_lab::claims::of_experiment(&m.experiment);
        for line in swan_lab::claims::report(&claims, &m.experiment, &m) {
            if !text.contains(&line) {
                stale.push(format!("repro/{}.txt does not say: {line}", m.experiment));
            }
        }
    }
    assert!(stale.is_empty(), "rerun `repro/run.sh NAME` for each:\n{}", stale.join("\n"));
}

#[test]
fn every_reproduction_has_its_reference_output_and_a_row_in_repro_readme() {
    use clap::ValueEnum;
    let list = read("repro/README.md");
    for e in swan_lab::repro::args::Experiment::value_variants() {
        let name = e.to_possible_value().expect("a named experiment").get_name().to_string();
        assert!(repo().join(format!("repro/{name}.txt")).is_file(), "`swan repro {name}` has no repro/{name}.txt");
        let row = format!("| `{name}.txt` | `swan repro {name}` |");
        assert!(list.contains(&row), "repro/README.md has no row {row}");
    }
}
