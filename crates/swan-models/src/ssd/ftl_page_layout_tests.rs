//! Write layouts and the GC frontier on the page FTL's own state: a chunked layout lets a
//! TRIM free whole blocks where page striping cannot, and a GC frontier keeps GC copies out
//! of the blocks host writes fill (and host writes out of GC's).

use super::super::config::{SsdConfig, WriteLayout};
use super::super::nand::Untimed;
use super::super::stats::SsdStats;
use super::tests::tiny;
use super::*;

/// Fills `tiny` (4 units, 32-page blocks) sequentially under `layout`, TRIMs the first two
/// blocks' worth of pages and lets GC take two victims. Returns the change in free blocks
/// and the pages GC copied doing it.
fn trim_two_blocks_then_collect(layout: WriteLayout) -> (i64, u64) {
    let c = SsdConfig { layout, ..tiny() };
    let mut f = PageFtl::new(&c);
    let mut stats = SsdStats::default();
    f.write(0, c.user_pages as u32, &mut Untimed, &mut stats);
    assert_eq!(stats.gc_invocations, 0, "the fill alone must not collect");
    let (free, copied) = (f.free_blocks(), stats.gc_pages_copied);
    f.trim(0, 2 * c.pages_per_block);
    assert_eq!(f.force_collect(0, u64::MAX, Some(2), &mut Untimed, &mut stats), 2);
    f.check_invariants().unwrap();
    (f.free_blocks() as i64 - free as i64, stats.gc_pages_copied - copied)
}

#[test]
fn a_trim_of_two_block_sized_chunks_frees_two_blocks_without_copying() {
    let block = tiny().pages_per_block;
    assert_eq!(trim_two_blocks_then_collect(WriteLayout::Chunked { pages: block }), (2, 0));
    // Chunks of two blocks hold the same two blocks on one unit.
    assert_eq!(trim_two_blocks_then_collect(WriteLayout::Chunked { pages: 2 * block }), (2, 0));
}

#[test]
fn page_striping_spreads_the_same_trim_over_every_unit_so_gc_must_copy() {
    let (freed, copied) = trim_two_blocks_then_collect(WriteLayout::PageStriped);
    // 64 trimmed pages are 16 of each of 4 blocks' 32: each victim still holds 16.
    assert_eq!(copied, 32, "freed {freed}");
    assert!(freed < 2, "freed {freed}");
    // Half-block chunks interleave two chunks per block: the same.
    let (freed, copied) = trim_two_blocks_then_collect(WriteLayout::Chunked { pages: tiny().pages_per_block / 2 });
    assert!(copied > 0 && freed < 2, "freed {freed}, copied {copied}");
}

/// Overwrites single pages of a full `tiny` at random; whenever a write makes GC run,
/// compares the map before and after to find the pages GC moved. Returns (copies that
/// landed in a block open for host writes before or after the write, all copies).
fn copies_into_host_blocks(layout: WriteLayout, gc_frontier: bool) -> (u64, u64) {
    let c = SsdConfig { layout, gc_frontier, ..tiny() };
    let units = c.units() as usize;
    let mut f = PageFtl::new(&c);
    let mut stats = SsdStats::default();
    f.write(0, c.user_pages as u32, &mut Untimed, &mut stats);
    let (mut into_host, mut moved) = (0, 0);
    let mut x = 0x2545_F491_4F6C_DD1D_u64;
    for _ in 0..20_000 {
        let lpn = swan_testkit::rng::xorshift64(&mut x) % c.user_pages;
        let gc_runs = f.domains[0].free_blocks() <= f.domains[0].trigger;
        let before = gc_runs.then(|| (f.l2p.clone(), f.active[..units].to_vec()));
        f.write_page(lpn, &mut Untimed, &mut stats);
        let host_block = f.block_of(f.l2p[lpn as usize]);
        assert!(!f.active[f.gc_slot.max(units)..].contains(&host_block), "host page {lpn} went to a GC block");
        let Some((old_l2p, host_open_before)) = before else { continue };
        for (p, (&was, &now)) in old_l2p.iter().zip(&f.l2p).enumerate() {
            if p as u64 == lpn || was == now {
                continue;
            }
            moved += 1;
            let to = f.block_of(now);
            if host_open_before.contains(&to) || f.active[..units].contains(&to) {
                into_host += 1;
            }
        }
    }
    f.check_invariants().unwrap();
    assert_eq!(moved, stats.gc_pages_copied, "every copy seen");
    (into_host, moved)
}

#[test]
fn with_a_gc_frontier_gc_copies_never_land_in_a_host_block() {
    for layout in [WriteLayout::PageStriped, WriteLayout::Chunked { pages: tiny().pages_per_block }] {
        let (shared, moved) = copies_into_host_blocks(layout, false);
        assert!(moved > 1000 && shared == moved, "{layout:?} without: {shared} of {moved} copies in host blocks");
        let (own, moved) = copies_into_host_blocks(layout, true);
        assert!(moved > 1000, "{layout:?}: GC was not heavy ({moved} copies)");
        assert_eq!(own, 0, "{layout:?} with a GC frontier: {own} of {moved} copies in host blocks");
    }
}

#[test]
fn the_invariants_catch_a_block_open_on_both_frontiers() {
    let c = SsdConfig { gc_frontier: true, ..tiny() };
    let mut f = PageFtl::new(&c);
    let mut stats = SsdStats::default();
    f.write_page(0, &mut Untimed, &mut stats);
    f.check_invariants().unwrap();
    // Unit 0's host block also named as its GC block.
    f.active[f.gc_slot] = f.active[0];
    assert!(matches!(f.check_invariants(), Err(FtlInvariantError::OpenTwice { .. })), "{:?}", f.check_invariants());
}
