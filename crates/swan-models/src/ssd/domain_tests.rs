//! GC domains per unit (DiskSim's per-element cleaning): one victim at a time, copy-back
//! costing a read and a program inside the unit and nothing on the channel, only the busy
//! unit blocked, forced GC bounded per domain, and no page lost through own or forced GC.

use super::*;
use crate::{DevOp, DevOpKind, Device, IoClass, Nanos};
use swan_testkit::rng::xorshift64;

fn op(kind: DevOpKind, block: u64, count: u32) -> DevOp {
    DevOp { kind, block, count, class: IoClass::User }
}

/// Four units on two channels (units 0 and 2 share channel 0), 32-page blocks, 128 blocks a
/// unit, a domain per unit with static placement and copy-back.
fn per_unit(copy_back: bool) -> SsdConfig {
    SsdConfig {
        name: "per-unit".into(),
        user_pages: 4 * 100 * 32,
        pages_per_block: 32,
        channels: 2,
        dies_per_channel: 2,
        planes_per_die: 1,
        over_provisioning: 0.28,
        gc_threshold: 0.05,
        gc_reclaim_blocks: 1,
        gc_soft_limit: 0.1,
        cmd_latency_ns: 0,
        gc_domain: GcDomain::Unit,
        placement: Placement::Static,
        copy_back,
        // Writes complete when programmed, so a write's completion shows the clean it waited for.
        write_buffer_pages: 0,
        ..presets::sata850pro()
    }
}

/// Logical pages of unit `u` under static placement over 4 units.
fn pages_of(u: u64, cap: u64) -> impl Iterator<Item = u64> {
    (u..cap).step_by(4)
}

/// Fills unit 0's pages, then overwrites half of them at random until unit 0 sits at its
/// low watermark; the other units stay empty. Returns the SSD and when it went idle.
fn unit_0_at_its_watermark(copy_back: bool) -> (Ssd, Nanos) {
    let mut ssd = Ssd::new(per_unit(copy_back)).unwrap();
    let cap = ssd.user_pages();
    let mut now = 0;
    for p in pages_of(0, cap) {
        now = ssd.submit(now, op(DevOpKind::Write, p, 1));
    }
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    while ssd.gc_state().free_blocks > ssd.gc_state().hard_limit_blocks + 1 {
        let x = xorshift64(&mut x);
        now = ssd.submit(now, op(DevOpKind::Write, x % (cap / 4) * 4, 1));
    }
    ssd.reset_stats();
    let idle = ssd.busy_until().max(now);
    (ssd, idle)
}

#[test]
fn a_unit_at_its_watermark_collects_one_victim_by_copy_back() {
    let (mut ssd, idle) = unit_0_at_its_watermark(true);
    let c = ssd.config().clone();
    // Overwrite unit 0's pages at random until its GC runs once.
    let mut t = idle;
    let mut first = None;
    let (cap, mut x) = (ssd.user_pages(), 0x2545_F491_4F6C_DD1Du64);
    for _ in 0..cap {
        let x = xorshift64(&mut x);
        let done = ssd.submit(t, op(DevOpKind::Write, x % (cap / 4) * 4, 1));
        if ssd.stats().gc_invocations > 0 {
            first = Some((t, done));
            break;
        }
        t = done;
    }
    let (at, done) = first.expect("unit 0 reaches its watermark");
    let s = ssd.stats();
    assert_eq!((s.gc_invocations, s.erases), (1, 1), "one victim per call: {s:?}");
    let copied = s.gc_pages_copied;
    assert!(copied > 0 && copied < 32, "a victim with some garbage: {copied} copied");
    // Copy-back: each page a read and a program on the unit; then the erase; then the
    // write's own transfer and program. Nothing else.
    let xfer = PAGE_BYTES * 1_000 / c.channel_mbps;
    let host = PAGE_BYTES * 1_000 / c.host_mbps;
    let want = copied * (c.t_read_ns + c.t_prog_ns) + c.t_erase_ns + xfer + c.t_prog_ns;
    let took = done - at;
    assert!(took >= want && took <= want + host, "clean of {copied} pages took {took} ns, want {want}");
    ssd.check_invariants().unwrap();
}

#[test]
fn without_copy_back_the_pages_cross_the_channel() {
    let (mut ssd, idle) = unit_0_at_its_watermark(false);
    let c = ssd.config().clone();
    let mut t = idle;
    for p in pages_of(0, ssd.user_pages()) {
        let done = ssd.submit(t, op(DevOpKind::Write, p, 1));
        if ssd.stats().gc_invocations > 0 {
            let copied = ssd.stats().gc_pages_copied;
            let xfer = PAGE_BYTES * 1_000 / c.channel_mbps;
            let back = copied * (c.t_read_ns + c.t_prog_ns) + c.t_erase_ns + xfer + c.t_prog_ns;
            assert!(done - t >= back + 2 * copied * xfer, "no channel time charged: {} ns", done - t);
            return;
        }
        t = done;
    }
    panic!("unit 0 never collected");
}

#[test]
fn only_the_collecting_unit_delays_requests() {
    let (mut ssd, idle) = unit_0_at_its_watermark(true);
    let c = ssd.config().clone();
    let cap = ssd.user_pages();
    // Run unit 0 into GC, then, at the same instant, write to unit 2 (same channel) and
    // read from unit 1 (the other channel).
    let mut t = idle;
    let mut gc_done = None;
    for p in pages_of(0, cap) {
        let done = ssd.submit(t, op(DevOpKind::Write, p, 1));
        if ssd.stats().gc_invocations > 0 {
            gc_done = Some(done);
            break;
        }
        t = done;
    }
    let gc_done = gc_done.expect("unit 0 collected");
    assert!(gc_done - t > c.t_erase_ns, "the clean takes time");
    let w2 = ssd.submit(t, op(DevOpKind::Write, 2, 1));
    let xfer = PAGE_BYTES * 1_000 / c.channel_mbps;
    let host = PAGE_BYTES * 1_000 / c.host_mbps;
    assert!(w2 - t <= host + xfer + c.t_prog_ns + xfer, "unit 2 waited for unit 0's GC: {} ns", w2 - t);
    // A write to unit 0 itself waits for the clean.
    let w0 = ssd.submit(t, op(DevOpKind::Write, 4, 1));
    assert!(w0 >= gc_done, "unit 0's next write overtook its GC");
}

#[test]
fn forced_gc_cleans_every_domain_with_garbage_within_its_bound() {
    let mut ssd = Ssd::new(per_unit(true)).unwrap();
    ssd.fill_sequential(1.0);
    ssd.age_random(0.5, 7);
    ssd.reset_stats();
    let done = ssd.force_gc(1_000, ForceTarget::PastSoftLimit, Some(1));
    let s = ssd.stats();
    assert_eq!((s.forced_gc_invocations, s.forced_gc_victims, s.erases), (1, 4, 4), "one victim in each of 4 units");
    assert!(done > 1_000);
    // Unbounded: every domain ends past its soft limit, and the notice is armed again.
    ssd.force_gc(done, ForceTarget::PastSoftLimit, None);
    assert!(!ssd.gc_state().at_soft_limit(), "{:?}", ssd.gc_state());
    ssd.check_invariants().unwrap();
}

#[test]
fn no_page_is_lost_through_own_and_forced_gc() {
    for (placement, copy_back) in [(Placement::Static, true), (Placement::Static, false), (Placement::Striped, true)] {
        let cfg = SsdConfig { placement, ..per_unit(copy_back) };
        let mut ssd = Ssd::new(cfg).unwrap().with_payload();
        let cap = ssd.user_pages();
        let mut reference = vec![0u64; cap as usize];
        let (mut token, mut now, mut x) = (1u64, 0, 0x5eed_u64);
        for i in 0..120_000u32 {
            let x = xorshift64(&mut x);
            let block = x % cap;
            let count = (1 + (x >> 32) % 8).min(cap - block) as u32;
            let range = block as usize..(block + u64::from(count)) as usize;
            match (x >> 48) % 20 {
                0 => {
                    ssd.submit(now, op(DevOpKind::Trim, block, count));
                    reference[range].fill(0);
                }
                1 => {
                    let bound = [Some(1), Some(3), None][(x >> 56) as usize % 3];
                    ssd.force_gc(now, ForceTarget::PastSoftLimit, bound);
                }
                _ => {
                    let tokens: Vec<u64> = (token..token + u64::from(count)).collect();
                    token += u64::from(count);
                    ssd.write_tokens(now, block, &tokens, IoClass::User);
                    reference[range].copy_from_slice(&tokens);
                }
            }
            now += 2_000;
            if i % 20_000 == 0 {
                ssd.check_invariants().unwrap_or_else(|e| panic!("{placement:?} op {i}: {e}"));
            }
        }
        ssd.check_invariants().unwrap();
        for (page, &want) in reference.iter().enumerate() {
            assert_eq!(ssd.token(page as u64), want, "{placement:?} copy-back {copy_back}: page {page}");
        }
        let s = ssd.stats();
        assert!(s.gc_pages_copied > cap && s.forced_gc_victims > 0 && s.gc_invocations > 0, "{s:?}");
    }
}
