//! The client tools the server's tests drive it with (nbdcopy, nbdinfo, fio, a plain HTTP
//! GET), and comparing what came back with what was written.

use super::{describe, require, run, text, u64_of, COMMAND_DEADLINE};
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// `nbdcopy --flush FROM TO` (files or NBD URIs), which must succeed.
pub fn nbdcopy(from: &str, to: &str) {
    let out = run(Command::new("nbdcopy").arg("--flush").arg(from).arg(to), "nbdcopy", Duration::from_secs(180));
    assert!(out.status.success(), "{}", describe(&format!("nbdcopy {from} {to}"), &out));
}

/// A plain HTTP/1.0 GET: (status code, headers, body).
pub fn http_get(addr: &str, target: &str) -> (u16, String, String) {
    use std::io::Write;
    use std::net::TcpStream;
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(20))).expect("read timeout");
    write!(s, "GET {target} HTTP/1.0\r\nHost: {addr}\r\n\r\n").expect("send the request");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap_or_else(|e| panic!("GET http://{addr}{target}: {e}"));
    let raw = String::from_utf8(raw).expect("a UTF-8 answer");
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no end of headers in {raw:?}"));
    let code =
        head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("status line {head:?}"));
    (code, head.to_string(), body.to_string())
}

/// One fio job over NBD at `uri` with `args` (the engine and output format are added);
/// fails the test on any error fio reports. Returns the job's JSON report.
pub fn fio_job(dir: &Path, uri: &str, args: &[String]) -> Value {
    require("fio", "fio");
    let mut all = vec!["--ioengine=nbd".to_string(), format!("--uri={uri}"), "--output-format=json".into()];
    all.extend_from_slice(args);
    let out = run(Command::new("fio").args(&all).current_dir(dir), "fio", Duration::from_secs(300));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", describe(&format!("fio {}", all.join(" ")), &out));
    let json = stdout.find("\n{").map_or(stdout.as_str(), |i| &stdout[i + 1..]);
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("fio printed no JSON ({e}):\n{stdout}"));
    let job = v["jobs"][0].clone();
    assert_eq!(job["error"].as_u64(), Some(0), "fio reports an error:\n{}", describe("fio", &out));
    job
}

/// One fio job over NBD: `bs` random writes over the first `size` bytes until `io_size`
/// are written (past `size`, blocks keep being chosen at random). Returns bytes written.
pub fn fio_randwrite(dir: &Path, uri: &str, bs: u64, size: u64, io_size: u64, seed: u64) -> u64 {
    let args = [
        "--name=randwrite".to_string(),
        "--rw=randwrite".into(),
        format!("--bs={bs}"),
        "--iodepth=32".into(),
        format!("--size={size}"),
        format!("--io_size={io_size}"),
        // Keep choosing blocks at random past --size, so the log fills with garbage.
        "--norandommap".into(),
        "--randrepeat=0".into(),
        format!("--randseed={seed}"),
    ];
    u64_of(&fio_job(dir, uri, &args)["write"], "io_bytes")
}

/// `nbdinfo --size URI`.
pub fn export_size(uri: &str) -> u64 {
    let out = run(Command::new("nbdinfo").args(["--size", uri]), "nbdinfo --size", COMMAND_DEADLINE);
    assert!(out.status.success(), "{}", describe("nbdinfo --size", &out));
    let stdout = text(&out.stdout);
    stdout.trim().parse().unwrap_or_else(|e| panic!("nbdinfo --size printed no number ({e}):\n{stdout}"))
}

/// The first offset at which `a` and `b` differ, if any.
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y).or_else(|| (a.len() != b.len()).then_some(a.len().min(b.len())))
}

/// Compares the file at `path`, from `offset`, with `expected`, in chunks.
pub fn assert_file_region(path: &Path, offset: u64, expected: &[u8], what: &str) {
    use std::io::{Seek, SeekFrom};
    let mut f = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.seek(SeekFrom::Start(offset)).expect("seek");
    let mut buf = vec![0u8; 4 << 20];
    let mut at = 0;
    while at < expected.len() {
        let n = (expected.len() - at).min(buf.len());
        f.read_exact(&mut buf[..n])
            .unwrap_or_else(|e| panic!("{what}: {} is short at {}: {e}", path.display(), offset + at as u64));
        if let Some(d) = first_difference(&buf[..n], &expected[at..at + n]) {
            panic!("{what}: {} differs at byte {}", path.display(), offset + (at + d) as u64);
        }
        at += n;
    }
}

/// Every byte of the file at `path` from `offset` on is zero.
pub fn assert_file_zero_from(path: &Path, offset: u64, what: &str) {
    use std::io::{Seek, SeekFrom};
    let mut f = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.seek(SeekFrom::Start(offset)).expect("seek");
    let mut buf = vec![0u8; 4 << 20];
    let mut at = offset;
    loop {
        let n = f.read(&mut buf).expect("read");
        if n == 0 {
            return;
        }
        if let Some(i) = buf[..n].iter().position(|&b| b != 0) {
            panic!("{what}: {} has a non-zero byte at {} (never written)", path.display(), at + i as u64);
        }
        at += n as u64;
    }
}
