//! Defaults an operator meets first: the segment `swan create` picks, and the warning
//! `swan serve --emulate` gives when the array's segment does not line up with the modelled
//! SSD's erase stripe (a victim's TRIM would then free no whole erase block); and what
//! `swan status` shows of the model SSDs behind an emulated array and of its replies' timing.

mod common;

use common::{describe, fio_randwrite, status, swan, text, u64_of, Server};
use std::path::{Path, PathBuf};

/// `swan create` of swan0 3×2 over members of `size` in `dir`, with `extra` flags; returns
/// the members and what create printed.
fn create(dir: &Path, size: &str, extra: &[&str]) -> (Vec<PathBuf>, String) {
    let members: Vec<PathBuf> = (0..6).map(|i| dir.join(format!("m{i}"))).collect();
    let mut args =
        vec!["create", "--scheme", "swan0", "--rgroups", "3", "--ssds-per-rgroup", "2", "--member-size", size];
    args.extend(extra);
    args.extend(members.iter().map(|m| m.to_str().expect("utf-8 path")));
    let out = swan(&args, dir);
    assert!(out.status.success(), "{}", describe("swan create", &out));
    (members, text(&out.stdout))
}

#[test]
fn create_picks_8_mib_segments_for_ssd_sized_members_and_fewer_for_small_files() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (_, said) = create(dir.path(), "512M", &[]);
    assert!(said.contains("segments of 8192 KiB per SSD"), "512 MiB members:\n{said}");
    let (_, said) = create(dir.path(), "64M", &["--force"]);
    assert!(said.contains("segments of 1024 KiB per SSD"), "64 MiB members:\n{said}");
    let (_, said) = create(dir.path(), "64M", &["--force", "--segment", "256K"]);
    assert!(said.contains("segments of 256 KiB per SSD"), "--segment 256K:\n{said}");
}

#[test]
fn serve_emulate_warns_about_a_segment_off_the_erase_stripe() {
    let dir = tempfile::tempdir().expect("temporary directory");
    for (segment, warned) in [("1M", true), ("8M", false)] {
        let (members, _) = create(dir.path(), "512M", &["--force", "--segment", segment]);
        let server = Server::start_with(dir.path(), &members, &["--emulate", "sata850pro"]);
        let log = server.log();
        assert_eq!(
            log.contains("not a multiple of the sata850pro model's erase stripe (8192 KiB"),
            warned,
            "--segment {segment}: the warning should {}appear:\n{log}",
            if warned { "" } else { "not " }
        );
        server.stop();
    }
}

#[test]
fn status_shows_each_model_ssd_only_when_emulating() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (members, _) = create(dir.path(), "512M", &["--segment", "8M"]);
    let server = Server::start_with(dir.path(), &members, &["--emulate", "sata850pro"]);
    let written = fio_randwrite(dir.path(), &server.uri(), 65536, 64 << 20, 64 << 20, 1);
    let st = status(&members[0], dir.path());
    let models: Vec<_> = st["members"].as_array().expect("members").iter().map(|m| m["model"].clone()).collect();
    assert_eq!(models.len(), 6);
    // SWAN0 writes the front-end R-group only: its two model SSDs took every page the array wrote.
    let pages: u64 = models.iter().map(|m| u64_of(m, "host_pages_written")).sum();
    let array: u64 = st["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| u64_of(m, "user_bytes_written") + u64_of(m, "gc_bytes_written"))
        .sum();
    assert_eq!(pages * 4096, array, "model pages against the array's member writes: {st}");
    assert!(array >= written, "{st}");
    assert!(models.iter().all(|m| m["waf"].as_f64().is_some()), "{st}");
    // Every write was answered at its model completion, which a 64 KiB write on the 850 PRO
    // model is never at once.
    let timing = &st["emulation"];
    assert!(u64_of(timing, "replies") * 65536 >= written, "{st}");
    assert!(timing["mean_model_us"].as_f64().expect("mean_model_us") > 10.0, "{st}");
    assert!(timing["mean_late_us"].as_f64().expect("mean_late_us") >= 0.0, "{st}");
    let text_status = text(&swan(&["status", members[0].to_str().expect("utf-8")], dir.path()).stdout);
    assert!(text_status.contains("model SSD (--emulate)"), "{text_status}");
    assert!(text_status.contains("emulated replies:"), "{text_status}");
    server.stop();

    let plain = Server::start(dir.path(), &members);
    let st = status(&members[0], dir.path());
    assert!(st["members"].as_array().expect("members").iter().all(|m| m.get("model").is_none()), "{st}");
    assert!(st.get("emulation").is_none(), "{st}");
    plain.stop();
}
