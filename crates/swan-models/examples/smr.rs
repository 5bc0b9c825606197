//! The Apas disk models' own numbers: the conventional Atlas 10K IV (unloaded 4 KiB random
//! read and its parts, sequential rate at the outer and inner edge) and the drive-managed
//! SMR disk over it (sequential and random 4 KiB writes through the STL, a mid-band write
//! against an append, and band cleaning at several valid fractions).
//!
//! `cargo run --release -p swan-models --example smr`

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use swan_models::hdd::{atlas_10k_iv_146gb, Hdd};
use swan_models::smr::{atlas_10k_iv_smr, Smr};
use swan_models::{Device, Nanos};

fn ms(ns: Nanos) -> f64 {
    ns as f64 / 1e6
}

fn mb_per_s(blocks: u64, ns: Nanos) -> f64 {
    (blocks * 4096) as f64 / (ns as f64 / 1e9) / 1e6
}

fn hdd() {
    let config = atlas_10k_iv_146gb();
    let mut d = Hdd::new(config.clone()).unwrap();
    println!("== {} ({:.1} GB, {} rpm) ==", config.name, config.capacity_bytes() as f64 / 1e9, config.rpm);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let n = 10_000u64;
    let (mut t, mut seek, mut rot, mut xfer) = (0, 0, 0, 0);
    for _ in 0..n {
        // Issued when the previous one ends: each read finds the actuator idle.
        let a = d.access_blocks(t, rng.next_u64() % d.blocks(), 1).unwrap();
        (seek, rot, xfer, t) = (seek + a.seek_ns, rot + a.rotate_ns, xfer + a.transfer_ns, a.done);
    }
    let mean = |x: Nanos| ms(x / n);
    println!(
        "unloaded 4 KiB random read: {:.2} ms (seek {:.2} + rotation {:.2} + transfer {:.3}) = {:.0} IOPS",
        mean(t),
        mean(seek),
        mean(rot),
        mean(xfer),
        n as f64 / (t as f64 / 1e9)
    );
    for (edge, first) in [("outer", 0), ("inner", d.blocks() - 65_536)] {
        let start = d.busy_until();
        let mut t = start;
        for i in 0..256 {
            t = d.access_blocks(t, first + i * 256, 256).unwrap().done;
        }
        println!("sequential 1 MiB reads, {edge} edge: {:.1} MB/s", mb_per_s(65_536, t - start));
    }
}

fn smr() {
    let config = atlas_10k_iv_smr();
    let mut d = Smr::new(config.clone()).unwrap();
    let bb = d.media().band_blocks();
    println!(
        "\n== SMR over it: {} MiB bands, {} bands ({} unshingled, {} spare), {:.1} GB for the host ==",
        config.band_bytes >> 20,
        config.bands(),
        config.unshingled_bands,
        config.spare_bands,
        (d.logical_blocks() * 4096) as f64 / 1e9
    );
    // Sequential writes: 64 MiB in 1 MiB requests, appended in band order.
    let mut t = 0;
    for i in 0..64 {
        t = d.write(t, i * 256, 256).unwrap().done;
    }
    println!("sequential 1 MiB writes: {:.1} MB/s", mb_per_s(64 * 256, t));
    // Random 4 KiB writes over the first 4 GiB: the STL appends them, so they stream.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let start = t;
    let n = 20_000;
    let written: Vec<u64> = (0..n).map(|_| rng.next_u64() % (1 << 20)).collect();
    for &lba in &written {
        t = d.write(t, lba, 1).unwrap().done;
    }
    println!("random 4 KiB writes through the STL: {:.0} IOPS (appended)", n as f64 / ((t - start) as f64 / 1e9));
    // Reading them back in another order is random again.
    let start = t;
    for _ in 0..2_000 {
        t = d.read(t, written[(rng.next_u64() % n as u64) as usize], 1).unwrap();
    }
    println!("random 4 KiB reads of those blocks: {:.2} ms each", ms((t - start) / 2_000));

    // The in-order rule: 4 KiB in the first track of a full band, against an append.
    let band = d.used_bands().next().unwrap();
    let w = d.media_mut().write_at(t, band, 0, 1, None).unwrap();
    println!(
        "4 KiB write into the first track of a full band: {:.1} ms ({} blocks read out and rewritten)",
        ms(w.done - w.start),
        w.rewritten_blocks
    );
    let free = (0..d.media().bands()).rev().find(|&b| d.media().write_pointer(b) == 0).unwrap();
    let a = d.media_mut().write_at(w.done, free, 0, 1, None).unwrap();
    println!("4 KiB append to an empty band: {:.1} ms", ms(a.done - a.start));

    // Band cleaning at 100 %, 50 % (every other block) and 10 % valid.
    for (label, keep_every) in [("100 %", 1), ("50 %", 2), ("10 %", 10)] {
        let mut d = Smr::new(config.clone()).unwrap();
        let t = d.write(0, 0, bb).unwrap().done;
        for lba in 0..bb {
            if lba % keep_every != 0 {
                d.trim(lba, 1).unwrap();
            }
        }
        let victim = d.lookup(0).unwrap().band;
        let c = d.clean(t, victim).unwrap();
        println!(
            "cleaning a {label} valid band: {} blocks moved in {:.0} ms ({:.1} MB/s of valid data)",
            c.moved_blocks,
            ms(c.done - c.start),
            mb_per_s(c.moved_blocks, c.done - c.start)
        );
    }
}

fn main() {
    hdd();
    smr();
}
