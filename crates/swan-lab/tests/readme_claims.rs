//! The README's generated claims tables are exactly what the declared claims give on the
//! checked-in reference measures (`swan claims --check README.md`), so no verdict is kept by
//! hand; and a hand-edited verdict is caught.

use std::path::PathBuf;
use swan_lab::claims_cmd::{replaced, tables};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_readme_says_what_the_claims_and_measures_give() {
    let tables = tables(&repo().join("repro/measures")).expect("the reference measures");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let want = replaced(&readme, &tables).expect("the README marks where the tables go");
    assert!(want == readme, "README.md's claims tables are not as generated: run `swan claims --write README.md`");
}

#[test]
fn a_hand_edited_verdict_is_caught() {
    let tables = tables(&repo().join("repro/measures")).unwrap();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let swan = &tables["swan"];
    assert!(swan.contains("| agrees |") && swan.contains("**disagrees**"), "both verdicts are in the SWAN table");
    // Turn the first disagreement into an agreement, as a hand edit would.
    let edited = readme.replacen("**disagrees**", "agrees", 1);
    assert_ne!(edited, readme);
    assert_ne!(replaced(&edited, &tables).unwrap(), edited, "the edit is undone by the generator");
}

#[test]
fn every_paper_s_claims_are_a_generated_table_in_the_readme_one_row_each() {
    let tables = tables(&repo().join("repro/measures")).unwrap();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    for (name, claims) in swan_lab::claims::TABLES {
        let table = &tables[name];
        assert!(readme.contains(table.as_str()), "README.md does not show the {name} table as generated");
        assert_eq!(table.lines().count(), claims.len() + 2, "the {name} table: a header, a rule, a row per claim");
        for c in *claims {
            let row = format!("| {}: {} |", c.source, c.says);
            assert!(table.contains(&row), "{} has no row in the {name} table", c.id);
        }
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
