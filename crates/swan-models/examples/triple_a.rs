//! Triple-A's fabric model, unloaded and loaded: prints the unloaded service time of
//! 4 KB operations on each preset, sets them against the paper's Table 2 (latency less
//! queue stall, row by row, mixed by Table 1's read ratio), and runs a small hot-cluster
//! read load on 4x16 to show the per-request breakdown (Table 2's columns).
//!
//! `cargo run --release -p swan-models --example triple_a`

use swan_models::fabric::{preset, Completion, Fabric, FabricConfig, FimmAddr, PRESET_NAMES};
use swan_models::fimm::{FimmOp, PageAddr};
use swan_models::Nanos;

fn us(ns: Nanos) -> f64 {
    ns as f64 / 1_000.0
}

/// One operation on an idle fabric.
fn unloaded(config: &FabricConfig, op: FimmOp) -> Completion {
    Fabric::new(config.clone()).unwrap().submit(0, FimmAddr::default(), op).unwrap()
}

/// Table 1 (read ratio) and Table 2 (latency, queue stall), µs, of the 4x16 array.
const TABLE2: &[(&str, f64, f64, f64)] = &[
    ("cfs", 0.765, 940.0, 811.0),
    ("fin", 0.502, 5_457.0, 5_365.0),
    ("hm", 0.551, 1_806.0, 1_731.0),
    ("mds", 0.259, 4_064.0, 3_992.0),
    ("msnfs", 0.528, 1_172.0, 1_084.0),
    ("prn", 0.971, 6_733.0, 6_648.0),
    ("proj", 0.291, 2_860.0, 2_796.0),
    ("prxy", 0.611, 2_521.0, 2_444.0),
    ("usr", 0.289, 1_772.0, 1_702.0),
    ("web", 1.0, 1_148.0, 1_008.0),
    ("websql", 0.543, 4_737.0, 4_674.0),
];

fn unloaded_table() -> (f64, f64) {
    println!("Unloaded service time (µs), target FIMM 0 of cluster 0 under switch 0");
    println!("{:<6} {:>10} {:>12} {:>14} {:>10}", "preset", "read 4K", "write 4K", "write-thru 4K", "read 16K");
    let page = PageAddr::default();
    let mut baseline = (0.0, 0.0);
    for name in PRESET_NAMES {
        let c = preset(name).unwrap();
        let mut thru = c.clone();
        thru.endpoint.write_buffer_entries = 0;
        let r = unloaded(&c, FimmOp::read(page, 4096)).service_ns();
        let w = unloaded(&c, FimmOp::program(page, 4096)).service_ns();
        let t = unloaded(&thru, FimmOp::program(page, 4096)).service_ns();
        let r16 = unloaded(&c, FimmOp::read(page, 16_384)).service_ns();
        println!("{name:<6} {:>10.1} {:>12.1} {:>14.1} {:>10.1}", us(r), us(w), us(t), us(r16));
        if *name == "4x16" {
            baseline = (us(r), us(w));
        }
    }
    baseline
}

fn table2(read_us: f64, write_us: f64) {
    println!("\nTable 2 (4x16): latency − queue stall against the model's unloaded 4 KB mix");
    println!("{:<7} {:>6} {:>14} {:>12} {:>8}", "row", "read%", "paper (µs)", "model (µs)", "ratio");
    for &(row, reads, latency, stall) in TABLE2 {
        let paper = latency - stall;
        let model = reads * read_us + (1.0 - reads) * write_us;
        println!("{row:<7} {:>6.1} {paper:>14.0} {model:>12.1} {:>8.2}", reads * 100.0, model / paper);
    }
}

/// Random 4 KB reads at `iops`, `hot_share` of them on `hot` clusters of switch 0.
fn hot_cluster_load(iops: u64, hot: u32, hot_share: f64) {
    let config = preset("4x16").unwrap();
    let mut fabric = Fabric::new(config.clone()).unwrap();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let gap = 1_000_000_000 / iops;
    let n = 200_000u64;
    let mut sum = Completion::default();
    let (mut latency, mut stall) = (0u64, [0u64; 3]);
    for i in 0..n {
        let r = swan_testkit::rng::xorshift64(&mut x);
        let is_hot = (r % 1000) as f64 / 1000.0 < hot_share;
        let (switch, cluster) =
            if is_hot { (0, (r >> 10) as u32 % hot) } else { ((r >> 10) as u32 % 4, (r >> 12) as u32 % 16) };
        let fimm = (r >> 20) as u32 % 4;
        let page = PageAddr {
            package: (r >> 22) as u32 % 8,
            die: (r >> 25) as u32 % 2,
            page: (r >> 26) as u32 % 512,
            ..PageAddr::default()
        };
        let c = fabric.submit(i * gap, FimmAddr { switch, cluster, fimm }, FimmOp::read(page, 4096)).unwrap();
        latency += c.latency_ns();
        sum.link_contention_ns += c.link_contention_ns;
        sum.storage_contention_ns += c.storage_contention_ns;
        stall[0] += c.queue_stall.root_complex_ns;
        stall[1] += c.queue_stall.switch_ns;
        stall[2] += c.queue_stall.endpoint_ns;
    }
    let avg = |v: u64| v as f64 / n as f64 / 1_000.0;
    println!(
        "{:>7} {hot:>4} {:>5.0}% {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>7.1} {:>7.1} {:>7.1}",
        iops / 1_000,
        hot_share * 100.0,
        avg(latency),
        avg(sum.link_contention_ns),
        avg(sum.storage_contention_ns),
        avg(stall.iter().sum()),
        avg(stall[0]),
        avg(stall[1]),
        avg(stall[2]),
    );
}

fn main() {
    let (read_us, write_us) = unloaded_table();
    table2(read_us, write_us);
    println!("\nRandom 4 KB reads on 4x16, part of them on hot clusters of switch 0 (averages, µs)");
    println!(
        "{:>7} {:>4} {:>6} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7} {:>7}",
        "kIOPS", "hot", "share", "latency", "link", "storage", "stall", "RC", "switch", "EP"
    );
    for (iops, hot, share) in [(100_000, 0, 0.0), (400_000, 4, 0.5), (400_000, 4, 0.7), (800_000, 2, 0.5)] {
        hot_cluster_load(iops, hot.max(1), share);
    }
}
