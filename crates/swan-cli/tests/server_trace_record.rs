//! `swan serve --record-trace`: the trace of what fio sent over NBD, read back with swan's
//! own blkparse reader and replayed by `swan sim`; a killed server's trace; bad paths.

mod common;

use common::{create_array, describe, require, run, swan, text, Server};
use serde_json::Value;
use std::io::Cursor;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use swan_sim::trace::{TraceFormat, TraceOp, TraceReader};

/// What one fio job over NBD did, as fio itself reports it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Sent {
    reads: u64,
    read_bytes: u64,
    writes: u64,
    write_bytes: u64,
    trims: u64,
    trim_bytes: u64,
    flushes: u64,
}

impl Sent {
    fn add(&mut self, o: &Sent) {
        self.reads += o.reads;
        self.read_bytes += o.read_bytes;
        self.writes += o.writes;
        self.write_bytes += o.write_bytes;
        self.trims += o.trims;
        self.trim_bytes += o.trim_bytes;
        self.flushes += o.flushes;
    }
}

fn fio(dir: &Path, uri: &str, job: &[&str]) -> Sent {
    require("fio", "fio");
    let mut args = vec!["--name=job".to_string(), "--ioengine=nbd".into(), format!("--uri={uri}")];
    args.extend(job.iter().map(|s| s.to_string()));
    args.push("--output-format=json".into());
    let out = run(Command::new("fio").args(&args).current_dir(dir), "fio", Duration::from_secs(300));
    assert!(out.status.success(), "{}", describe(&format!("fio {}", args.join(" ")), &out));
    let stdout = text(&out.stdout);
    let json = stdout.find("\n{").map_or(stdout.as_str(), |i| &stdout[i + 1..]);
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("fio printed no JSON ({e}):\n{stdout}"));
    let j = &v["jobs"][0];
    assert_eq!(j["error"].as_u64(), Some(0), "fio reports an error:\n{stdout}");
    let n = |dir: &str, k: &str| j[dir][k].as_u64().unwrap_or_else(|| panic!("fio JSON has no {dir}.{k}"));
    Sent {
        reads: n("read", "total_ios"),
        read_bytes: n("read", "io_bytes"),
        writes: n("write", "total_ios"),
        write_bytes: n("write", "io_bytes"),
        trims: n("trim", "total_ios"),
        trim_bytes: n("trim", "io_bytes"),
        flushes: n("sync", "total_ios"),
    }
}

/// The trace as swan's reader sees it (strictly: a line it cannot parse fails the test),
/// plus the flush and trim lines it passes over, counted from their RWBS.
fn read_trace(path: &Path) -> Sent {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut got = Sent::default();
    for r in TraceReader::new(TraceFormat::Blkparse, Cursor::new(&bytes), false) {
        let r = r.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        match r.op {
            TraceOp::Read => (got.reads, got.read_bytes) = (got.reads + 1, got.read_bytes + r.size_bytes),
            TraceOp::Write => (got.writes, got.write_bytes) = (got.writes + 1, got.write_bytes + r.size_bytes),
        }
    }
    for line in String::from_utf8(bytes).expect("a trace is text").lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 11 && f[5] == "D" {
            let sectors: u64 = f[9].parse().expect("nsectors");
            match f[6] {
                "F" => got.flushes += 1,
                "D" => (got.trims, got.trim_bytes) = (got.trims + 1, got.trim_bytes + sectors * 512),
                _ => {}
            }
        }
    }
    got
}

#[test]
fn the_recorded_trace_holds_what_fio_sent_and_swan_sim_replays_it() {
    let dir = tempfile::tempdir().expect("temporary directory");
    // 256 MiB members: the smallest the sata850pro model the replay runs on accepts.
    let members = create_array(dir.path(), "swan0", 2, 2, "256M", &[]);
    let trace = dir.path().join("live.blkparse");
    let server = Server::start_with(dir.path(), &members, &["--record-trace", trace.to_str().expect("utf-8")]);
    let uri = server.uri();
    let mut sent = Sent::default();
    // Sequential 16 KiB writes with a flush every 32, random 4 KiB reads, 64 KiB trims.
    sent.add(&fio(dir.path(), &uri, &["--rw=write", "--bs=16k", "--size=4M", "--fsync=32"]));
    sent.add(&fio(dir.path(), &uri, &["--rw=randread", "--bs=4k", "--size=4M", "--io_size=2M", "--randseed=7"]));
    sent.add(&fio(dir.path(), &uri, &["--rw=trim", "--bs=64k", "--size=1M"]));
    assert_eq!((sent.writes, sent.reads, sent.trims), (256, 512, 16), "fio did what was asked: {sent:?}");
    assert!(sent.flushes > 0, "fio flushed: {sent:?}");
    server_stops_and_says(server, "0 dropped");

    assert_eq!(read_trace(&trace), sent, "the trace against what fio reports it sent");
    let text = std::fs::read_to_string(&trace).expect("the trace");
    assert!(text.starts_with("# swan serve --record-trace"), "a header first:\n{}", &text[..400.min(text.len())]);
    assert!(text.lines().last().is_some_and(|l| l.starts_with("# end: ") && l.ends_with("; 0 dropped")));

    let said = replay_as_the_header_says(&text, dir.path(), "sim");
    let data = sent.reads + sent.writes;
    let statement = format!("blkparse format (given), {data} requests ({} reads, {} writes;", sent.reads, sent.writes);
    assert!(said.contains(&statement), "swan sim reads every read and write of the trace:\n{said}");
    assert!(said.contains(&format!("replayed {data} requests of ")), "and replays them all:\n{said}");

    // Round trip: `swan replay` sends the trace to the same array served again, which
    // records what it receives: the same reads and writes, request for request. This time
    // behind emulated SSDs whose reads wait for their GC, which the replay line must carry.
    let again = dir.path().join("again.blkparse");
    let server = Server::start_with(
        dir.path(),
        &members,
        &[
            "--record-trace",
            again.to_str().expect("utf-8"),
            "--emulate",
            "sata850pro",
            "--emulate-gc-preemptible",
            "off",
        ],
    );
    let t = trace.to_str().expect("utf-8");
    let out = swan(&["replay", t, "--nbd", &server.uri(), "--replay", "closed=8", "--quiet"], dir.path());
    assert!(out.status.success(), "{}", describe("swan replay", &out));
    server_stops_and_says(server, "0 dropped");
    let (first, second) = (read_trace(&trace), read_trace(&again));
    assert_eq!(
        (second.reads, second.read_bytes, second.writes, second.write_bytes),
        (first.reads, first.read_bytes, first.writes, first.write_bytes),
        "the trace of the replay against the trace replayed"
    );
    let text = std::fs::read_to_string(&again).expect("the second trace");
    assert!(
        text.contains("reads overtake the SSDs' GC: off"),
        "the header names the model:\n{}",
        &text[..1000.min(text.len())]
    );
    let said = replay_as_the_header_says(&text, dir.path(), "sim-again");
    assert!(said.contains(&format!("replayed {} requests of ", first.reads + first.writes)), "{said}");
}

/// Runs the `# replay: swan …` command a trace's header suggests, as written there; what it said.
fn replay_as_the_header_says(text: &str, dir: &Path, out: &str) -> String {
    let replay = text.lines().find_map(|l| l.strip_prefix("# replay: swan ")).expect("a '# replay:' header line");
    let out_dir = dir.join(out);
    let mut args: Vec<&str> = replay.split_whitespace().collect();
    args.extend(["--quiet", "--out", out_dir.to_str().expect("utf-8")]);
    if let Some(on) = text.lines().find(|l| l.starts_with("# emulate: ")).and_then(|l| l.rsplit(": ").next()) {
        if on == "off" || on == "on" {
            assert!(
                replay.contains(&format!("--ssd-gc-preemptible {on}")),
                "the replay runs the served model: {replay}"
            );
        }
    }
    let out = swan(&args, dir);
    assert!(out.status.success(), "{}", describe(&format!("swan {}", args.join(" ")), &out));
    text_of(&out)
}

fn text_of(out: &std::process::Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// SIGTERM; the clean stop must report the trace with `expect` ending its summary line.
fn server_stops_and_says(server: Server, expect: &str) {
    let log = server.stop();
    let line = log.lines().find(|l| l.starts_with("swan: trace ")).unwrap_or_else(|| panic!("no trace line:\n{log}"));
    assert!(line.ends_with(expect), "{line}");
}

#[test]
fn a_killed_server_leaves_a_trace_of_whole_lines() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let members = create_array(dir.path(), "swan0", 2, 2, "64M", &[]);
    let trace = dir.path().join("killed.blkparse");
    let server = Server::start_with(dir.path(), &members, &["--record-trace", trace.to_str().expect("utf-8")]);
    let sent = fio(dir.path(), &server.uri(), &["--rw=randwrite", "--bs=8k", "--size=8M", "--io_size=4M"]);
    // Longer than the writer's flush interval: every record has been handed to the kernel.
    std::thread::sleep(Duration::from_millis(500));
    server.kill9();
    let got = read_trace(&trace);
    assert_eq!((got.writes, got.write_bytes), (sent.writes, sent.write_bytes), "every write recorded before the kill");
    let text = std::fs::read_to_string(&trace).expect("the trace");
    assert!(text.ends_with('\n') && !text.contains("# end:"), "whole lines, no trailer");
}

#[test]
fn record_trace_refuses_a_path_it_cannot_write_or_a_member_before_serving() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let members = create_array(dir.path(), "raid0", 1, 2, "64M", &[]);
    let m: Vec<&str> = members.iter().map(|p| p.to_str().expect("utf-8")).collect();
    let bad = dir.path().join("no/such/dir/t.blkparse");
    let bad = bad.to_str().expect("utf-8");
    let out = swan(&[&["serve", "--listen", "127.0.0.1:0", "--record-trace", bad][..], &m].concat(), dir.path());
    let said = text_of(&out);
    assert!(!out.status.success() && !said.contains("serving on"), "{}", describe("swan serve", &out));
    assert!(said.contains(&format!("--record-trace {bad}: No such file or directory")), "{said}");

    let before = std::fs::metadata(&members[1]).expect("member").len();
    let out = swan(&[&["serve", "--listen", "127.0.0.1:0", "--record-trace", m[1]][..], &m].concat(), dir.path());
    let said = text_of(&out);
    assert!(!out.status.success() && !said.contains("serving on"), "{}", describe("swan serve", &out));
    assert!(said.contains(&format!("--record-trace {}: that is the member {}", m[1], m[1])), "{said}");
    assert_eq!(std::fs::metadata(&members[1]).expect("member").len(), before, "the member is untouched");
    common::check_clean(&members, dir.path(), "after the refused --record-trace");
}
