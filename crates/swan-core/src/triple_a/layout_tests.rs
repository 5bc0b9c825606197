//! The data layout against a reference: the static layout is a bijection, and no sequence of
//! writes, reads and moves loses or duplicates a page.

use super::layout::{DataLayout, LayoutConfig, Location};
use super::FabricShape;
use std::collections::{HashMap, HashSet};
use swan_testkit::rng::SplitMix64;

fn small() -> DataLayout {
    let shape = FabricShape::new(2, 3, 4).unwrap();
    DataLayout::new(shape, LayoutConfig { chunk_pages: 8, user_slots: 16, spare_slots: 4 }).unwrap()
}

#[test]
fn the_static_layout_fills_every_static_slot_once() {
    let l = small();
    let shape = l.shape();
    assert_eq!(l.pages(), 6 * 4 * 16);
    let slots: HashSet<Location> = (0..l.pages()).map(|p| l.fixed().home(p)).collect();
    assert_eq!(slots.len() as u64, l.pages(), "two pages share a slot");
    assert!(slots.iter().all(|s| s.cluster < shape.clusters() && s.fimm < 4 && s.slot < 16));
}

#[test]
fn chunks_go_round_robin_over_clusters_and_pages_stripe_over_fimms() {
    let l = small();
    let at = |p| {
        let h = l.fixed().home(p);
        (h.cluster, h.fimm, h.slot)
    };
    assert_eq!(at(0), (0, 0, 0));
    assert_eq!(at(1), (0, 1, 0));
    assert_eq!(at(4), (0, 0, 1));
    assert_eq!(at(8), (1, 0, 0), "the second chunk goes to the next cluster");
    assert_eq!(at(6 * 8), (0, 0, 2), "the seventh chunk returns to cluster 0 after its first");
}

#[test]
fn page_on_inverts_the_static_layout() {
    let l = small();
    for c in 0..l.shape().clusters() {
        for i in 0..l.fixed().pages_per_cluster() {
            let lpn = l.fixed().page_on(c, i);
            assert!(lpn < l.pages());
            assert_eq!(l.fixed().home(lpn).cluster, c, "page {i} of cluster {c}");
        }
    }
    let all: HashSet<u64> = (0..6)
        .flat_map(|c| (0..l.fixed().pages_per_cluster()).map(move |i| (c, i)))
        .map(|(c, i)| l.fixed().page_on(c, i))
        .collect();
    assert_eq!(all.len() as u64, l.pages(), "page_on reaches every page once");
}

#[test]
fn bad_layouts_are_refused_by_name() {
    let shape = FabricShape::PAPER_4X16;
    let e = DataLayout::new(shape, LayoutConfig { chunk_pages: 3, user_slots: 16, spare_slots: 0 }).unwrap_err();
    assert!(e.to_string().contains("whole number"), "{e}");
    let e = DataLayout::new(shape, LayoutConfig { chunk_pages: 0, user_slots: 16, spare_slots: 0 }).unwrap_err();
    assert!(e.to_string().contains("at least one page"), "{e}");
}

#[test]
fn a_full_fimm_takes_no_more_pages_and_a_page_can_go_home() {
    let mut l = small();
    let home = l.fixed().home(0);
    let mut moved = Vec::new();
    for lpn in 1..=4 {
        let h = l.fixed().home(lpn * 8);
        assert_ne!((h.cluster, h.fimm), (1, 2));
        moved.push(l.relocate(lpn * 8, 1, 2).expect("a spare slot"));
    }
    assert_eq!(l.free_slots(1, 2), 0);
    assert_eq!(l.relocate(5 * 8, 1, 2), None, "the FIMM's spare slots are all taken");
    // Page 0 leaves home, and coming back to its FIMM takes the slot it freed.
    let away = l.relocate(0, 2, 1).unwrap();
    assert_eq!(away.from, home);
    let back = l.relocate(0, home.cluster, home.fimm).unwrap();
    assert_eq!(back.to, home);
    assert_eq!(l.moved_pages(), 4, "a page back at home is not a moved page");
}

/// Writes, reads and moves against a reference map of tokens and a store of physical slots:
/// every read returns the last token written, every move takes a page from where it was
/// to a free slot, and no slot ever holds two pages.
#[test]
fn a_million_operations_never_lose_or_duplicate_a_page() {
    let mut l = small();
    let shape = l.shape();
    let pages = l.pages();
    let mut rng = SplitMix64(0x7A1E);
    let mut reference: HashMap<u64, u64> = HashMap::new();
    let mut store: HashMap<Location, u64> = HashMap::new(); // slot -> token
    let mut owner: HashMap<Location, u64> = (0..pages).map(|p| (l.fixed().home(p), p)).collect();
    for op in 0..1_000_000u64 {
        let lpn = rng.below(pages);
        match rng.below(10) {
            0..=3 => {
                store.insert(l.resolve(lpn), op);
                reference.insert(lpn, op);
            }
            4..=6 => {
                let got = store.get(&l.resolve(lpn)).copied();
                assert_eq!(got, reference.get(&lpn).copied(), "op {op}: page {lpn} lost its data");
            }
            _ => {
                let (c, f) = (rng.below(u64::from(shape.clusters())) as u32, rng.below(4) as u32);
                let Some(mv) = l.relocate(lpn, c, f) else { continue };
                assert_eq!(owner.remove(&mv.from), Some(lpn), "op {op}: moved from a slot it did not own");
                assert!(owner.insert(mv.to, lpn).is_none(), "op {op}: moved onto an occupied slot");
                if let Some(t) = store.remove(&mv.from) {
                    store.insert(mv.to, t);
                }
                assert_eq!(l.resolve(lpn), mv.to);
            }
        }
        if op % 100_000 == 0 {
            for p in 0..pages {
                assert_eq!(owner.get(&l.resolve(p)), Some(&p), "op {op}: page {p} is not where the map says");
            }
        }
    }
    assert_eq!(owner.len() as u64, pages, "a page was lost or duplicated");
    assert!(l.moved_pages() > 0);
}
