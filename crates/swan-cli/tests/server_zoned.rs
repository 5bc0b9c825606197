//! Arrays over zoned members (`swan create --zone-size`, emulated zoned devices): what is
//! refused and why, a member that is not the zoned device the array needs, GC's resets
//! under fio, and the zone report after a clean stop. The crash test
//! (`server_crash.rs`, `kill9_during_fio_writes_swan0_zoned`) and the file-system test
//! (`server_fs.rs`) run the same members through kill -9 and ext4 with RocksDB.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn zones(member: &Path, dir: &Path) -> Value {
    let out = swan(&["zones", "--json", member.to_str().expect("utf-8 path")], dir);
    assert!(out.status.success(), "{}", describe("swan zones --json", &out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("swan zones --json: {e}"))
}

fn refused(dir: &Path, scheme: &str, extra: &[&str], members: &[PathBuf], says: &str) {
    let out = create(dir, scheme, 1, members.len() as u32, "64M", members, extra);
    assert!(!out.status.success(), "swan create {scheme} {extra:?} was not refused");
    let err = text(&out.stderr);
    assert!(err.contains(says), "swan create {scheme} {extra:?}: the error does not say {says:?}:\n{err}");
    for m in members {
        assert!(
            !m.exists() || m.to_str().is_some_and(|p| p.ends_with("plain")),
            "a refused create left {}",
            m.display()
        );
    }
}

#[test]
fn what_zones_cannot_take_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let two = [d.join("a0"), d.join("a1")];
    refused(d, "raid5", &["--zone-size", "2M"], &[d.join("a0"), d.join("a1"), d.join("a2")], "takes no overwrite");
    refused(d, "swan0", &["--zone-size", "2M", "--segment", "1M"], &two, "a segment is one zone");
    refused(d, "swan0", &["--zone-size", "3000"], &two, "multiple of 4 KiB");
    // A file that exists is used as it is: a plain one is not a zoned device.
    let plain = d.join("plain");
    std::fs::write(&plain, vec![0u8; 64 << 20]).expect("a plain member");
    refused(d, "swan0", &["--zone-size", "2M"], &[plain, d.join("a1")], "not a zoned device");
}

#[test]
fn a_member_that_is_not_the_zoned_device_the_array_needs_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let members = create_array(d, "swan0", 1, 2, "64M", &["--zone-size", "2M"]);
    let layout = zones(&members[1], d);
    // The same superblock on a plain file of the member's size: the bytes say swan, the
    // device is not zoned.
    let base = 4096 * (1 + (layout["zones"].as_u64().unwrap() * 16).div_ceil(4096));
    let whole = std::fs::read(&members[1]).expect("read the member");
    std::fs::write(&members[1], &whole[base as usize..]).expect("write a plain copy");
    let args: Vec<&str> =
        ["serve", "--listen", "127.0.0.1:0"].into_iter().chain(members.iter().map(|m| m.to_str().unwrap())).collect();
    let out = run(swan_in(d).args(&args), "swan serve", std::time::Duration::from_secs(60));
    assert!(!out.status.success(), "a plain member was served in a zoned array");
    assert!(text(&out.stderr).contains("is not a zoned device"), "{}", describe("swan serve", &out));
}

#[test]
fn gc_resets_zones_under_fio_and_the_report_holds_after_a_clean_stop() {
    require("fio", "fio");
    for (scheme, rgroups, ssds) in [("swan0", 3, 2), ("lograid0", 1, 4)] {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        // Three active zones a member, the least the array needs: a write past it is refused.
        let members = create_array(d, scheme, rgroups, ssds, "128M", &["--zone-size", "2M", "--max-active-zones", "3"]);
        let server = Server::start(d, &members);
        let volume = u64_of(&status(&members[0], d), "volume_bytes");
        let raw = u64::from(rgroups * ssds) * (128 << 20);
        // Twice the raw capacity of 8 KiB writes at random over half the volume: GC collects,
        // and every victim's zones are reset before they are written again.
        let written = fio_randwrite(d, &server.uri(), 8192, volume / 2 / 8192 * 8192, 2 * raw, 7);
        assert_eq!(written, 2 * raw);
        let st = status(&members[0], d);
        assert_eq!(st["zone_bytes"], 2 << 20, "{scheme}: swan status says the members are zoned");
        let victims = u64_of(&st, "victims");
        assert!(victims > 0, "{scheme}: GC never collected: nothing was reset\n{st:#}");
        for m in st["members"].as_array().expect("members in the status") {
            assert!(u64_of(m, "trims") > 0, "{scheme}: no zone of member {} was reset\n{st:#}", m["path"]);
        }
        server.stop();
        check_clean(&members, d, &format!("{scheme} over zones after fio"));
        for m in &members {
            let z = zones(m, d);
            assert_eq!(z["max_active"], 3, "{scheme}: the limit asked for at create");
            let capacity = z["capacity_blocks"].as_u64().unwrap();
            let report = z["report"].as_array().unwrap();
            let full = report.iter().filter(|z| z["condition"] == "Full").count();
            assert!(full > 0, "{scheme}, {}: no full zone after twice the raw capacity", m.display());
            for z in report {
                let wp = z["write_pointer"].as_u64().unwrap();
                assert!(wp <= capacity && (wp == 0) == (z["condition"] == "Empty"), "{scheme}: zone {z}");
            }
        }
        println!("{scheme} {rgroups}x{ssds} over 2 MiB zones: {} MiB written, {victims} victims reset", written >> 20);
    }
}

/// `swan serve --emulate zn540` over zoned members: the zoned SSD model times every member
/// operation, hears each zone's writes in the member's order (its contract refuses none), and
/// sees GC's victims as resets. A conventional preset, aging, or a zoned preset over
/// conventional members is refused with the reason.
#[test]
fn zoned_members_serve_under_the_zoned_ssd_model_and_wrong_presets_are_refused() {
    require("fio", "fio");
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let members = create_array(d, "swan0", 3, 2, "128M", &["--zone-size", "2M", "--max-active-zones", "3"]);
    let paths: Vec<&str> = members.iter().map(|m| m.to_str().unwrap()).collect();
    let serve_refused = |flags: &[&str], members: &[&str], says: &str| {
        let args: Vec<&str> =
            ["serve", "--listen", "127.0.0.1:0"].iter().chain(flags).chain(members).copied().collect();
        let out = run(swan_in(d).args(&args), "swan serve", std::time::Duration::from_secs(60));
        assert!(!out.status.success(), "swan serve {flags:?} was not refused");
        assert!(text(&out.stderr).contains(says), "{flags:?}: {}", describe("swan serve", &out));
    };
    serve_refused(&["--emulate", "sata850pro"], &paths, "emulate them as a zoned one (zn540, pm1731a)");
    serve_refused(&["--emulate", "zn540", "--emulate-age", "0.5"], &paths, "a zoned SSD has none");
    std::fs::create_dir(d.join("plain")).expect("a folder for the plain array");
    let plain = create_array(&d.join("plain"), "swan0", 1, 2, "256M", &[]);
    let plain: Vec<&str> = plain.iter().map(|m| m.to_str().unwrap()).collect();
    serve_refused(&["--emulate", "zn540"], &plain, "this array's members are not zoned");

    let server = Server::start_with(d, &members, &["--emulate", "zn540"]);
    let volume = u64_of(&status(&members[0], d), "volume_bytes");
    let raw = 6 * (128u64 << 20);
    let written = fio_randwrite(d, &server.uri(), 8192, volume / 2 / 8192 * 8192, raw, 3);
    assert_eq!(written, raw);
    let st = status(&members[0], d);
    server.stop();
    assert!(u64_of(&st, "victims") > 0, "GC never collected, so no zone was reset:\n{st:#}");
    let (mut host_pages, mut resets) = (0, 0);
    for m in st["members"].as_array().expect("members in the status") {
        let model = &m["model"];
        assert_eq!(model["zone_refused"], 0, "the model heard a zone's writes out of order: {m:#}");
        assert_eq!(model["out_of_range_ops"], 0, "{m:#}");
        host_pages += u64_of(model, "host_pages_written");
        resets += u64_of(model, "zone_resets");
    }
    let moved = u64_of(&st, "user_bytes_written") + u64_of(&st, "gc_blocks_moved") * 4096;
    assert!(host_pages * 4096 >= moved, "the models heard {host_pages} pages written, the array moved {moved} B");
    assert!(resets > 0, "GC's victims were not resets on the models:\n{st:#}");
    check_clean(&members, d, "swan0 over zones under --emulate zn540");
    println!("--emulate zn540: {} MiB written, {resets} zone resets on the models", written >> 20);
}
