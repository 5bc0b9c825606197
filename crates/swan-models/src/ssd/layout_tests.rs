//! Write layouts and the GC frontier on a whole device: every layout keeps the data (payload
//! tokens survive the device's own GC, the mapping's invariants hold through a soak of
//! overwrites and TRIMs), and the GC reserve validation asks of a GC frontier is enough.

use super::*;

/// 4 units on 2 channels, 32-page blocks, 4096 user pages, 15 % over-provisioning.
fn tiny(layout: WriteLayout, gc_frontier: bool) -> SsdConfig {
    SsdConfig { name: "tiny-layout".into(), layout, gc_frontier, ..super::tests::tiny(FtlKind::Page) }
}

/// Every layout worth telling apart: striped, chunks of a block, of two, of half a block and
/// of an odd size that never lines up with a block.
const LAYOUTS: [WriteLayout; 5] = [
    WriteLayout::PageStriped,
    WriteLayout::Chunked { pages: 32 },
    WriteLayout::Chunked { pages: 64 },
    WriteLayout::Chunked { pages: 16 },
    WriteLayout::Chunked { pages: 13 },
];

#[test]
fn payload_tokens_survive_gc_under_every_layout_with_and_without_a_gc_frontier() {
    for layout in LAYOUTS {
        for gc_frontier in [false, true] {
            let copied = super::tests::tokens_survive(tiny(layout, gc_frontier), 60_000);
            assert!(copied > 4 * 4096, "{layout:?}/{gc_frontier}: only {copied} copies: GC was not heavy");
        }
    }
}

/// The over-provisioning validation suggests for `config` when given too little.
fn suggested_op(mut config: SsdConfig) -> f64 {
    config.over_provisioning = 0.01;
    let e = config.validate().unwrap_err();
    assert_eq!(e.field, "over_provisioning", "{e}");
    e.problem.split("≥ ").nth(1).unwrap().split(',').next().unwrap().parse().unwrap()
}

#[test]
fn a_gc_frontier_needs_a_larger_reserve_and_the_least_one_accepted_never_runs_dry() {
    let chunk = WriteLayout::Chunked { pages: 32 };
    let (one, two) = (suggested_op(tiny(chunk, false)), suggested_op(tiny(chunk, true)));
    // A second open block on each of 4 units holds 4 blocks of 32 pages back: 128 / 4096.
    assert!(two - one >= 0.03, "without {one}, with {two}");
    for layout in LAYOUTS {
        let config = SsdConfig { over_provisioning: suggested_op(tiny(layout, true)), ..tiny(layout, true) };
        config.validate().unwrap();
        // Taking a block from an empty pool panics: the soak finishing is the check.
        super::tests::tokens_survive(config, 40_000);
    }
}

#[test]
fn the_erase_stripe_follows_the_layout() {
    let ssd = |layout| SsdConfig { layout, ..presets::sata850pro() };
    let stripe = |layout| ssd(layout).erase_stripe_pages();
    assert_eq!(stripe(WriteLayout::PageStriped), 16 * 128, "a block on every unit");
    assert_eq!(stripe(WriteLayout::Chunked { pages: 128 }), 128, "one block");
    assert_eq!(stripe(WriteLayout::Chunked { pages: 256 }), 128, "one block of a two-block chunk");
    assert_eq!(stripe(WriteLayout::Chunked { pages: 32 }), 16 * 128, "four chunks per block");
    assert_eq!(stripe(WriteLayout::Chunked { pages: 48 }), 16 * 384, "chunks end with blocks every 384 pages");
    let chunked = ssd(WriteLayout::Chunked { pages: 128 });
    assert_eq!(chunked.segment_misalignment(256), None, "1 MiB is two blocks");
    let why = chunked.segment_misalignment(64).expect("256 KiB is half a block");
    assert!(why.contains("512 KiB") && why.contains("one 512 KiB block"), "{why}");
    let why = ssd(WriteLayout::PageStriped).segment_misalignment(256).expect("1 MiB is an eighth of 8 MiB");
    assert!(why.contains("8192 KiB = 16 units × 512 KiB blocks"), "{why}");
}

#[test]
fn a_layout_is_refused_where_nothing_would_follow_it() {
    let chunk = WriteLayout::Chunked { pages: 128 };
    let e = SsdConfig { layout: chunk, ..presets::sata850pro_blockftl() }.validate().unwrap_err();
    assert_eq!(e.field, "layout", "{e}");
    let e = SsdConfig { gc_frontier: true, ..presets::sata850pro_blockftl() }.validate().unwrap_err();
    assert_eq!(e.field, "gc_frontier", "{e}");
    let e = SsdConfig { layout: chunk, ..presets::harmonia() }.validate().unwrap_err();
    assert_eq!(e.field, "layout", "{e}");
    let e = SsdConfig { layout: WriteLayout::Chunked { pages: 0 }, ..presets::sata850pro() }.validate().unwrap_err();
    assert_eq!(e.field, "layout", "{e}");
    // A GC domain per unit can still keep its copies apart.
    SsdConfig { gc_frontier: true, ..presets::harmonia() }.validate().unwrap();
}
