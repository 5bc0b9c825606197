//! A FIMM alone: unloaded times are the sum of their parts, a die is a FIFO server, the
//! channel serialises transfers, cache mode overlaps what it should, bad input is named.

use super::*;

fn fimm() -> Fimm {
    Fimm::new(fimm_64gb()).unwrap()
}

fn at(package: u32, die: u32) -> PageAddr {
    PageAddr { package, die, ..PageAddr::default() }
}

#[test]
fn the_preset_is_the_papers_64_gb_module() {
    let c = fimm_64gb();
    assert_eq!(c.capacity_bytes(), 64 << 30);
    assert_eq!(c.channel.mbps(), 800, "16 pins × 400 MT/s");
    assert_eq!(c.channel.xfer_ns(4096), 5_120);
    assert_eq!(c.dies(), 16);
}

#[test]
fn an_unloaded_read_is_command_plus_sense_plus_transfer() {
    let mut f = fimm();
    let c = f.submit(1_000, FimmOp::read(at(3, 1), 4096)).unwrap();
    assert_eq!(c.done, 1_000 + 35 + 115_000 + 5_120);
    assert_eq!((c.storage_contention_ns, c.link_contention_ns), (0, 0));
    assert_eq!(c.issued, 1_035);
}

#[test]
fn an_unloaded_program_is_command_plus_transfer_plus_program() {
    let mut f = fimm();
    let c = f.submit(0, FimmOp::program(at(0, 0), 16_384)).unwrap();
    assert_eq!(c.data_done, 35 + 20_480);
    assert_eq!(c.done, 35 + 20_480 + 1_600_000);
    let e = f.submit(0, FimmOp::erase(at(1, 0))).unwrap();
    assert_eq!(e.done, 35 + 3_000_000);
}

#[test]
fn reads_on_two_packages_share_the_channel() {
    let mut f = fimm();
    let a = f.submit(0, FimmOp::read(at(0, 0), 4096)).unwrap();
    let b = f.submit(0, FimmOp::read(at(1, 0), 4096)).unwrap();
    assert_eq!(b.done, a.done + 5_120, "the second transfer waits for the first");
    assert_eq!(b.link_contention_ns, 5_120);
    assert_eq!(b.storage_contention_ns, 0, "its die was free");
}

#[test]
fn a_busy_die_is_storage_contention() {
    let mut f = fimm();
    let p = f.submit(0, FimmOp::program(at(2, 1), 4096)).unwrap();
    let r = f.submit(0, FimmOp::read(at(2, 1), 4096)).unwrap();
    assert_eq!(r.issued, p.done, "the read waits for the program");
    assert_eq!(r.storage_contention_ns, p.done - 35);
}

#[test]
fn cache_read_overlaps_sensing_with_the_previous_transfer() {
    let mut cached = fimm();
    let mut plain = Fimm::new(FimmConfig { cache_mode: false, ..fimm_64gb() }).unwrap();
    let run = |f: &mut Fimm| (0..4).map(|_| f.submit(0, FimmOp::read(at(0, 0), 16_384)).unwrap().done).max().unwrap();
    let c = run(&mut cached);
    let p = run(&mut plain);
    // Plain: four times (sense + transfer). Cached: four senses, then the last transfer.
    assert_eq!(p, 35 + 4 * (115_000 + 20_480));
    assert_eq!(c, 35 + 4 * 115_000 + 20_480);
}

#[test]
fn cache_program_loads_the_next_page_while_one_programs() {
    let mut f = fimm();
    let a = f.submit(0, FimmOp::program(at(0, 0), 16_384)).unwrap();
    let b = f.submit(0, FimmOp::program(at(0, 0), 16_384)).unwrap();
    assert_eq!(b.data_done, a.data_done + 20_480, "loaded during the first program");
    assert_eq!(b.done, a.done + 1_600_000);
}

#[test]
fn multi_plane_senses_once_and_moves_every_page() {
    let mut f = fimm();
    let c = f.submit(0, FimmOp::read(at(0, 0), 32_768).multi_plane(2)).unwrap();
    assert_eq!(c.done, 35 + 115_000 + 40_960);
}

#[test]
fn ppn_round_trips() {
    let c = fimm_64gb();
    let a = PageAddr { package: 7, die: 1, plane: 1, block: 255, page: 511 };
    assert_eq!(a.ppn(&c), c.pages() - 1);
    assert_eq!(PageAddr::from_ppn(a.ppn(&c), &c), a);
    let b = PageAddr { package: 3, die: 0, plane: 1, block: 17, page: 9 };
    assert_eq!(PageAddr::from_ppn(b.ppn(&c), &c), b);
}

#[test]
fn bad_ops_and_modules_are_named() {
    let mut f = fimm();
    let err = f.submit(0, FimmOp::read(at(8, 0), 4096)).unwrap_err();
    assert_eq!(err, FimmOpError::Address { field: "package", value: 8, limit: 8 });
    let err = f.submit(0, FimmOp::read(at(0, 0), 16_385)).unwrap_err();
    assert!(matches!(err, FimmOpError::Bytes { bytes: 16_385, .. }), "{err}");
    let err = f.submit(0, FimmOp::read(PageAddr { plane: 1, ..at(0, 0) }, 4096).multi_plane(2)).unwrap_err();
    assert!(matches!(err, FimmOpError::Planes { .. }), "{err}");
    let err = Fimm::new(FimmConfig { packages: 0, ..fimm_64gb() }).unwrap_err();
    assert_eq!(err, FimmConfigError::Zero { fimm: "fimm-64gb".into(), field: "packages" });
    assert!(err.to_string().contains("packages"));
}
