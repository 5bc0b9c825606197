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
