//! What NBD clients see of a running server. Real tools first: qemu-img and nbdcopy copy
//! images in and out byte for byte, and nbdinfo reports what the export advertises. Then a
//! hand-rolled client (`nbd_wire`) that misbehaves on purpose: refused requests get the right
//! errno while another connection keeps writing and reading; broken handshakes and clients
//! that vanish mid-request or mid-reply end only their own connection; and everything
//! acknowledged survives a restart.

use crate::common::{
    assert_file_region, assert_file_zero_from, export_size, first_difference, nbdcopy, ok, require, run_ok, Array,
    COMMAND_DEADLINE,
};
use crate::nbd_wire::{self, *};
use crate::MIB;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;
use swan_testkit::rng::SplitMix64;

#[test]
fn qemu_img_and_nbdcopy_round_trip() {
    require("qemu-img", "qemu-utils");
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    require("kill", "procps");
    let array = Array::create("swan0", 3, 2);
    let server = array.serve();
    let uri = server.uri();
    let dir = array.path();

    // What the export advertises.
    let json = ok(Command::new("nbdinfo").args(["--json", &uri]), "nbdinfo --json", COMMAND_DEADLINE);
    let info: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("nbdinfo --json: {e}\n{json}"));
    let e = &info["exports"][0];
    let size = export_size(&uri);
    assert_eq!(e["export-size"].as_u64(), Some(size), "nbdinfo --json vs --size:\n{info:#}");
    assert_eq!(array.status()["volume_bytes"].as_u64(), Some(size), "nbdinfo vs swan status");
    assert!(size > 64 * MIB, "export of {size} bytes is too small for this test");
    for (key, want) in
        [("block_size_minimum", 4096u64), ("block_size_preferred", 4096), ("block_size_maximum", 33_554_432)]
    {
        assert_eq!(e[key].as_u64(), Some(want), "{key}:\n{info:#}");
    }
    for key in ["can_flush", "can_fua", "can_trim", "can_zero", "can_multi_conn"] {
        assert_eq!(e[key].as_bool(), Some(true), "{key}:\n{info:#}");
    }
    assert_eq!(e["is_read_only"].as_bool(), Some(false), "is_read_only:\n{info:#}");

    // qemu-img: a 64 MiB random image into the export, and the same 64 MiB back out.
    let image = SplitMix64(0x5157_414e).bytes((64 * MIB) as usize);
    let image_path = dir.join("image.raw");
    std::fs::write(&image_path, &image).expect("write the image");
    run_ok(
        Command::new("qemu-img").args(["convert", "-n", "-f", "raw", "-O", "raw"]).arg(&image_path).arg(&uri),
        "qemu-img convert into the export",
        COMMAND_DEADLINE,
    );
    let back_path = dir.join("image.back.raw");
    let source = format!(
        "driver=raw,size={},file.driver=nbd,file.server.type=inet,file.server.host=127.0.0.1,file.server.port={}",
        64 * MIB,
        server.port()
    );
    run_ok(
        Command::new("qemu-img").args(["convert", "-O", "raw", "--image-opts", &source]).arg(&back_path),
        "qemu-img convert out of the export",
        COMMAND_DEADLINE,
    );
    let compare = ok(
        Command::new("qemu-img").args(["compare", "-f", "raw", "-F", "raw"]).arg(&image_path).arg(&back_path),
        "qemu-img compare",
        COMMAND_DEADLINE,
    );
    assert!(compare.contains("identical"), "qemu-img compare:\n{compare}");
    assert_eq!(std::fs::metadata(&back_path).expect("image copied back").len(), 64 * MIB);
    assert_file_region(&back_path, 0, &image, "qemu-img round trip");

    // nbdcopy: a 40 MiB random file in (flushed), the whole export out. The first 40 MiB are
    // the file, the rest of the 64 MiB the qemu image, and everything after it zeros.
    let file = SplitMix64(0x6e62_6463).bytes((40 * MIB) as usize);
    let file_path = dir.join("file.bin");
    std::fs::write(&file_path, &file).expect("write the file");
    nbdcopy(file_path.to_str().expect("utf-8 path"), &uri);
    let out_path = dir.join("export.bin");
    run_ok(Command::new("nbdcopy").arg(&uri).arg(&out_path), "nbdcopy out of the export", COMMAND_DEADLINE);
    assert_eq!(std::fs::metadata(&out_path).expect("export copied out").len(), size, "nbdcopy copied out another size");
    assert_file_region(&out_path, 0, &file, "nbdcopy round trip");
    assert_file_region(&out_path, 40 * MIB, &image[(40 * MIB) as usize..], "the qemu image after nbdcopy");
    assert_file_zero_from(&out_path, 64 * MIB, "the export beyond what was written");
    drop(image);
    let _ = std::fs::remove_file(&out_path);

    server.stop();
    array.check_clean();
}

/// What the good client writes in iteration `i`: 64 KiB, to slot `i % GOOD_SLOTS`.
const GOOD_SLOTS: u64 = 64;
const GOOD_LEN: usize = 64 << 10;

fn good_pattern(i: u64) -> Vec<u8> {
    SplitMix64(0x600d_0000 + i).bytes(GOOD_LEN)
}

/// Writes, reads back and compares until `stop` (and at least `min` iterations); flushes
/// every 8. Returns the iterations done.
fn good_client(addr: String, stop: Arc<AtomicBool>, started: mpsc::Sender<()>, min: u64) -> u64 {
    let mut c = nbd_wire::open(&addr);
    let mut i = 0u64;
    loop {
        let offset = (i % GOOD_SLOTS) * GOOD_LEN as u64;
        let data = good_pattern(i);
        c.write(offset, &data);
        let back = c.read(offset, GOOD_LEN as u32);
        if let Some(d) = first_difference(&back, &data) {
            panic!("good client: iteration {i} read back other data at byte {d} of offset {offset}");
        }
        if i % 8 == 7 {
            c.flush();
        }
        i += 1;
        if i == 1 {
            let _ = started.send(());
        }
        if i >= min && stop.load(Ordering::Acquire) {
            break;
        }
    }
    c.flush();
    c.disconnect_and_wait();
    i
}

/// The good client's region after `iterations`: each slot holds its last pattern.
fn assert_good_region(c: &mut Conn<TcpStream>, iterations: u64) {
    for slot in 0..GOOD_SLOTS.min(iterations) {
        let last = (iterations - 1 - slot) / GOOD_SLOTS * GOOD_SLOTS + slot;
        let offset = slot * GOOD_LEN as u64;
        let back = c.read(offset, GOOD_LEN as u32);
        if let Some(d) = first_difference(&back, &good_pattern(last)) {
            panic!("slot {slot} (offset {offset}) does not hold iteration {last}'s data: differs at byte {d}");
        }
    }
}

#[test]
fn hostile_clients_do_not_disturb_a_good_one() {
    require("nbdinfo", "libnbd-bin");
    require("kill", "procps");
    let array = Array::create("swan5", 2, 3);
    let mut server = array.serve();
    let addr = server.addr().to_string();

    // Another connection writes and reads back throughout.
    let stop = Arc::new(AtomicBool::new(false));
    let (started_tx, started_rx) = mpsc::channel();
    let good = {
        let (addr, stop) = (addr.clone(), Arc::clone(&stop));
        thread::spawn(move || good_client(addr, stop, started_tx, 16))
    };
    started_rx.recv_timeout(Duration::from_secs(30)).expect("the good client never completed a write and read");

    let mut s = greeted(&addr);
    let info = go_info(&mut s, "").expect("NBD_OPT_GO on the default export");
    let mut h = Conn::new(s, info.export);
    let size = h.size;
    assert_eq!(info.block_sizes, Some((4096, 4096, MAX_PAYLOAD)), "advertised block sizes");
    assert_eq!(h.tflags & (1 << 1), 0, "export is read-only");
    // Canaries the refused writes aim at: they must be unchanged at the end.
    let canary_at = 32 * MIB;
    let canary = SplitMix64(0xca4a).bytes(MIB as usize);
    h.write(canary_at, &canary);
    let last_block = SplitMix64(0x1a57).bytes(4096);
    h.write(size - 4096, &last_block);

    let block = vec![0xeeu8; 4096];
    let two_blocks = vec![0xeeu8; 8192];
    let oversized = vec![0xeeu8; MAX_PAYLOAD as usize + 4096];
    let big = [EINVAL, EOVERFLOW];
    h.refused("read at the end of the export", rq(0, CMD_READ, size, 4096), &[], &[EINVAL]);
    h.refused("read across the end of the export", rq(0, CMD_READ, size - 4096, 8192), &[], &[EINVAL]);
    h.refused("read far beyond the export", rq(0, CMD_READ, 1 << 50, 4096), &[], &[EINVAL]);
    h.refused("read whose end overflows u64", rq(0, CMD_READ, u64::MAX - 4095, 4096), &[], &[EINVAL]);
    h.refused("write at the end of the export", rq(0, CMD_WRITE, size, 4096), &block, &[ENOSPC]);
    h.refused("write across the end of the export", rq(0, CMD_WRITE, size - 4096, 8192), &two_blocks, &[ENOSPC]);
    h.refused("write-zeroes across the end", rq(0, CMD_WRITE_ZEROES, size - 4096, 8192), &[], &[ENOSPC]);
    h.refused("trim across the end", rq(0, CMD_TRIM, size - 4096, 8192), &[], &[EINVAL]);
    h.refused("read at offset 512", rq(0, CMD_READ, canary_at + 512, 4096), &[], &[EINVAL]);
    h.refused("write at offset 512", rq(0, CMD_WRITE, canary_at + 512, 4096), &block, &[EINVAL]);
    h.refused("read of 512 bytes", rq(0, CMD_READ, canary_at, 512), &[], &[EINVAL]);
    h.refused("write of 4096 + 512 bytes", rq(0, CMD_WRITE, canary_at, 4608), &vec![0xee; 4608], &[EINVAL]);
    h.refused("trim at offset 512", rq(0, CMD_TRIM, canary_at + 512, 4096), &[], &[EINVAL]);
    h.refused("read of zero bytes", rq(0, CMD_READ, canary_at, 0), &[], &[EINVAL]);
    h.refused("read of 32 MiB + 4 KiB", rq(0, CMD_READ, 0, MAX_PAYLOAD + 4096), &[], &big);
    h.refused("write of 32 MiB + 4 KiB", rq(0, CMD_WRITE, canary_at, MAX_PAYLOAD + 4096), &oversized, &big);
    h.refused("write-zeroes of 32 MiB + 4 KiB", rq(0, CMD_WRITE_ZEROES, canary_at, MAX_PAYLOAD + 4096), &[], &big);
    h.refused("unknown command 99", rq(0, 99, canary_at, 4096), &[], &[EINVAL]);
    h.refused("NBD_CMD_CACHE (not advertised)", rq(0, CMD_CACHE, canary_at, 4096), &[], &[EINVAL]);
    h.refused("NBD_CMD_BLOCK_STATUS (no context)", rq(0, CMD_BLOCK_STATUS, canary_at, 4096), &[], &[EINVAL]);
    h.refused("read with unknown flag 0x8000", rq(0x8000, CMD_READ, canary_at, 4096), &[], &[EINVAL]);
    h.refused("write with unknown flag 0x0400", rq(0x0400, CMD_WRITE, canary_at, 4096), &block, &[EINVAL]);
    h.refused(
        "write with NO_HOLE (write-zeroes only)",
        rq(FLAG_NO_HOLE, CMD_WRITE, canary_at, 4096),
        &block,
        &[EINVAL],
    );
    h.refused("read with DF (not advertised)", rq(FLAG_DF, CMD_READ, canary_at, 4096), &[], &[EINVAL]);
    h.refused("flush with an offset", rq(0, CMD_FLUSH, 4096, 0), &[], &[EINVAL]);
    h.refused("flush with a length", rq(0, CMD_FLUSH, 0, 4096), &[], &[EINVAL]);

    // The same, pipelined: every reply comes back, matched by cookie.
    let mut expect = std::collections::HashMap::new();
    for k in 0..64u64 {
        let cookie = match k % 4 {
            0 => h.send(0, CMD_READ, canary_at + 512, 4096, &[]),
            1 => h.send(0, CMD_WRITE, size, 4096, &block),
            2 => h.send(0, 99, 0, 0, &[]),
            _ => h.send(0x8000, CMD_WRITE, canary_at, 4096, &block),
        };
        expect.insert(cookie, if k % 4 == 1 { ENOSPC } else { EINVAL });
    }
    while !expect.is_empty() {
        let (error, cookie) = h.reply();
        let want = expect.remove(&cookie).unwrap_or_else(|| panic!("reply to unknown or repeated cookie {cookie:#x}"));
        assert_eq!(error, want, "pipelined refused request {cookie:#x}");
    }
    server.assert_alive("refused requests");

    // The hostile connection is still in step and its valid requests work.
    let probe = SplitMix64(0x9b0b).bytes(8192);
    assert!(h.request(rq(FLAG_FUA, CMD_WRITE, 40 * MIB, 8192), &probe).is_ok(), "FUA write after the refusals");
    assert_eq!(h.read(40 * MIB, 8192), probe, "read after the refusals");
    assert_eq!(h.read(canary_at, MIB as u32), canary, "a refused write changed the canary");
    assert_eq!(h.read(size - 4096, 4096), last_block, "a refused write changed the last block");
    h.disconnect_and_wait();

    // Broken handshakes.
    {
        let mut s = connect(&addr);
        s.write_all(&[0, 0, 0]).expect("send 3 bytes");
        drop(s);
        let s = connect(&addr);
        drop(s);
        let mut s = connect(&addr);
        greeting(&mut s);
        s.write_all(&[0, 0, 0]).expect("send 3 bytes");
        drop(s);
    }
    server.assert_alive("truncated handshakes");
    {
        // An option claiming 4 GiB of data: the server must hang up, not wait or allocate.
        let mut s = connect(&addr);
        let hflags = greeting(&mut s);
        let mut opt = Vec::new();
        opt.extend(u32::from(hflags & 3).to_be_bytes());
        opt.extend(IHAVEOPT.to_be_bytes());
        opt.extend(OPT_GO.to_be_bytes());
        opt.extend(u32::MAX.to_be_bytes());
        opt.extend([0u8; 64]);
        s.write_all(&opt).expect("send the option");
        assert!(
            closed_by_server(&mut s, Duration::from_secs(10)).is_some(),
            "an option of length 0xffffffff did not end the connection"
        );
        // Unknown client flags: "the server MUST drop the TCP connection".
        let mut s = connect(&addr);
        greeting(&mut s);
        s.write_all(&0x8000_0003u32.to_be_bytes()).expect("send client flags");
        assert!(
            closed_by_server(&mut s, Duration::from_secs(10)).is_some(),
            "unknown client flags did not end the connection"
        );
    }
    server.assert_alive("hostile options");

    // Broken transmissions.
    {
        // A request header with a bad magic: nothing after it can be trusted.
        let mut c = nbd_wire::open(&addr);
        c.s.write_all(&[0x13u8; 28]).expect("send garbage");
        assert!(
            closed_by_server(&mut c.s, Duration::from_secs(10)).is_some(),
            "a bad request magic did not end the connection"
        );
        // A write whose payload never comes.
        let mut c = nbd_wire::open(&addr);
        c.send(0, CMD_WRITE, 48 * MIB, MIB as u32, &[]);
        c.s.write_all(&[0xab; 1000]).expect("send part of a payload");
        drop(c);
        // A write too large even to skip: refused, then the server may hang up.
        let mut c = nbd_wire::open(&addr);
        let cookie = c.send(0, CMD_WRITE, 0, 0xffff_f000, &[]);
        let (error, got) = c.reply();
        assert_eq!(got, cookie, "reply to the 4 GiB write");
        assert!(big.contains(&error), "4 GiB write: errno {error}");
        assert!(
            closed_by_server(&mut c.s, Duration::from_secs(10)).is_some(),
            "server kept a connection owing it 4 GiB"
        );
        // Clients that vanish in the middle of a 32 MiB reply, or before reading any.
        for _ in 0..3 {
            let mut c = nbd_wire::open(&addr);
            let cookie = c.send(0, CMD_READ, 0, MAX_PAYLOAD, &[]);
            let (error, got) = c.reply();
            assert_eq!((error, got), (0, cookie), "32 MiB read");
            let mut part = vec![0u8; 100_000];
            c.s.read_exact(&mut part).expect("part of the reply");
            drop(c);
        }
        let mut c = nbd_wire::open(&addr);
        for _ in 0..8 {
            c.send(0, CMD_READ, 0, MAX_PAYLOAD, &[]);
        }
        drop(c);
    }
    server.assert_alive("broken transmissions");

    stop.store(true, Ordering::Release);
    let iterations = good.join().unwrap_or_else(|_| panic!("the good client failed while the hostile ones ran"));
    server.assert_alive("the good client's end");

    // A fresh client still gets served, and so does a real tool.
    let mut c = nbd_wire::open(&addr);
    assert_eq!(c.size, size);
    assert_good_region(&mut c, iterations);
    let fresh = SplitMix64(0xf4e5).bytes(65536);
    c.write(56 * MIB, &fresh);
    c.flush();
    assert_eq!(c.read(56 * MIB, 65536), fresh);
    c.disconnect_and_wait();
    assert_eq!(export_size(&server.uri()), size, "nbdinfo after the hostile clients");
    server.stop();
    array.check_clean();

    // And everything acknowledged survived the stop.
    let server = array.serve();
    let mut c = nbd_wire::open(server.addr());
    assert_good_region(&mut c, iterations);
    assert_eq!(c.read(canary_at, MIB as u32), canary, "canary after restart");
    assert_eq!(c.read(size - 4096, 4096), last_block, "last block after restart");
    assert_eq!(c.read(40 * MIB, 8192), probe, "FUA write after restart");
    assert_eq!(c.read(56 * MIB, 65536), fresh, "fresh client's write after restart");
    c.disconnect_and_wait();
    server.stop();
}
