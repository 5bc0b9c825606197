//! Write layouts and the GC frontier on a whole device: every layout keeps the data (payload
//! tokens survive the device's own GC, the mapping's invariants hold through a soak of
//! overwrites and TRIMs), and the GC reserve validation asks of a GC frontier is enough.

use super::*;
use crate::{DevOp, DevOpKind, Device, IoClass};
use swan_testkit::rng::xorshift64;

/// 4 units on 2 channels, 32-page blocks, 4096 user pages, 15 % over-provisioning.
fn tiny(layout: WriteLayout, gc_frontier: bool) -> SsdConfig {
    SsdConfig {
        name: "tiny-layout".into(),
        user_pages: 4096,
        pages_per_block: 32,
        channels: 2,
        dies_per_channel: 2,
        planes_per_die: 1,
        over_provisioning: 0.15,
        gc_threshold: 0.05,
        gc_soft_limit: 0.1,
        layout,
        gc_frontier,
        ..presets::sata850pro()
    }
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

/// Random overwrites of 1–8 pages and some TRIMs of a full device, each write carrying fresh
/// tokens; every page is read back against a reference now and then. Returns the pages GC
/// copied.
fn soak(config: SsdConfig, ops: u32) -> u64 {
    let what = format!("{:?}, gc frontier {}", config.layout, config.gc_frontier);
    let mut ssd = Ssd::new(config).unwrap().with_payload();
    let cap = ssd.user_pages();
    let mut reference = vec![0u64; cap as usize];
    let mut out = vec![0u64; cap as usize];
    let mut next_token = 1u64;
    let mut tokens = Vec::new();
    let mut now = 0;
    let mut verify = |ssd: &mut Ssd, reference: &[u64], now, when: &str| {
        ssd.check_invariants().unwrap_or_else(|e| panic!("{what} {when}: {e}"));
        ssd.read_tokens(now, 0, &mut out, IoClass::User);
        for (page, (&got, &want)) in out.iter().zip(reference).enumerate() {
            assert_eq!(got, want, "{what} {when}: page {page} read back wrong");
            assert_eq!(ssd.token(page as u64), want, "{what} {when}: token({page})");
        }
    };
    for block in (0..cap).step_by(16) {
        tokens.clear();
        tokens.extend(next_token..next_token + 16);
        next_token += 16;
        now = ssd.write_tokens(now, block, &tokens, IoClass::User);
        reference[block as usize..block as usize + 16].copy_from_slice(&tokens);
    }
    verify(&mut ssd, &reference, now, "after the fill");
    let mut x = 0x5eed_1a40_u64;
    for i in 0..ops {
        let r = xorshift64(&mut x);
        let block = r % cap;
        let count = (1 + (r >> 32) % 8).min(cap - block) as u32;
        let range = block as usize..block as usize + count as usize;
        if (r >> 48) % 10 == 9 {
            ssd.submit(now, DevOp { kind: DevOpKind::Trim, block, count, class: IoClass::User });
            reference[range].fill(0);
        } else {
            tokens.clear();
            tokens.extend(next_token..next_token + u64::from(count));
            next_token += u64::from(count);
            ssd.write_tokens(now, block, &tokens, IoClass::User);
            reference[range].copy_from_slice(&tokens);
        }
        now += 1_000;
        if i % (ops / 4) == ops / 4 - 1 {
            verify(&mut ssd, &reference, now, &format!("op {i}"));
        }
    }
    verify(&mut ssd, &reference, now, "at the end");
    ssd.stats().gc_pages_copied
}

#[test]
fn payload_tokens_survive_gc_under_every_layout_with_and_without_a_gc_frontier() {
    for layout in LAYOUTS {
        for gc_frontier in [false, true] {
            let copied = soak(tiny(layout, gc_frontier), 60_000);
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
        soak(config, 40_000);
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
