//! `swan serve --metrics ADDR` also serves a live dashboard at `/`; here a real headless
//! Chromium (Debian's `chromium`) loads it against a swan0 array under fio load and reads
//! its DOM through the DevTools protocol.
//!
//! - `dashboard_draws_a_served_array_live`: the page's facts and charts change between two
//!   reads while fio writes; it draws one role strip per R-group and one timeline per member;
//!   its front-end R-group is the one `/metrics` names; once fio stops, the page's write rate
//!   falls to 0 and its byte count equals exactly what fio wrote.
//!
//! `SWAN_DASHBOARD_SECONDS=N` makes the load last N seconds (8 by default) and
//! `SWAN_DASHBOARD_SCREENSHOT=PATH` saves the page as PNG at the end of the load; that is how
//! `docs/figures/dashboard.png` is made (docs/metrics.md says the command).

mod common;

use base64::Engine as _;
use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

// ---------------------------------------------------------------------------------------------
// A headless Chromium driven over the DevTools protocol

struct Browser {
    _proc: Guard,
    _profile: tempfile::TempDir,
    page: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl Browser {
    /// Chromium showing `url`, with a throwaway profile; its DevTools port is the one it prints.
    fn open(url: &str) -> Browser {
        let chromium = require("chromium", "chromium");
        let profile = tempfile::tempdir().expect("profile dir");
        let mut child = Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
            .args(["--remote-debugging-port=0", "--window-size=1200,1150"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(url)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start chromium");
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().expect("chromium's stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(ws) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(ws.to_string());
                }
            }
        });
        let proc = Guard::new(child);
        let browser_ws = rx.recv_timeout(Duration::from_secs(60)).expect("chromium printed no DevTools address");
        let host = browser_ws.trim_start_matches("ws://").split('/').next().expect("host:port").to_string();

        // The page's own endpoint, once the browser lists it.
        let deadline = Instant::now() + Duration::from_secs(30);
        let page_ws = loop {
            let body = devtools_get(&host, "/json/list");
            let targets: Value = serde_json::from_str(&body).expect("/json/list is JSON");
            let page = targets.as_array().into_iter().flatten().find(|t| t["type"] == "page" && t["url"] == url);
            if let Some(ws) = page.and_then(|t| t["webSocketDebuggerUrl"].as_str()) {
                break ws.to_string();
            }
            assert!(Instant::now() < deadline, "chromium lists no page at {url}: {body}");
            std::thread::sleep(Duration::from_millis(200));
        };
        let (page, _) = tungstenite::connect(page_ws.as_str()).expect("connect to the page's DevTools socket");
        if let MaybeTlsStream::Plain(s) = page.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(60))).expect("read timeout");
        }
        Browser { _proc: proc, _profile: profile, page, next_id: 1 }
    }

    /// One DevTools command; events that arrive before its answer are skipped.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({ "id": id, "method": method, "params": params }).to_string();
        self.page.send(Message::text(msg)).expect("send to chromium");
        loop {
            let answer = self.page.read().unwrap_or_else(|e| panic!("{method}: no answer from chromium: {e}"));
            let Message::Text(text) = answer else { continue };
            let v: Value = serde_json::from_str(&text).expect("DevTools answers JSON");
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// The page's facts and drawing, as the script below reads them.
    fn read(&mut self) -> Page {
        let r = self.call("Runtime.evaluate", json!({ "expression": READ_PAGE, "returnByValue": true }));
        let text = r["result"]["value"].as_str().unwrap_or_else(|| panic!("the page gave no value: {r}"));
        serde_json::from_str(text).expect("the page's JSON")
    }

    fn screenshot(&mut self, path: &Path) {
        let r = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("screenshot data"))
            .expect("base64 PNG");
        std::fs::write(path, png).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!("screenshot: {}", path.display());
    }
}

/// A GET of the DevTools HTTP endpoint, which answers HTTP/1.1 only (and with a length).
fn devtools_get(host: &str, target: &str) -> String {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect(host).unwrap_or_else(|e| panic!("connect to chromium at {host}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(20))).expect("read timeout");
    write!(s, "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").expect("send");
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = s.read(&mut buf).unwrap_or_else(|e| panic!("GET {target} from chromium: {e}"));
        raw.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&raw);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            assert!(head.starts_with("HTTP/1.1 200"), "GET {target} from chromium: {head}");
            let len = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string()))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or_else(|| panic!("no Content-Length from chromium: {head}"));
            if body.len() >= len || n == 0 {
                return body.to_string();
            }
        }
        assert!(n > 0, "chromium closed before answering GET {target}");
    }
}

/// What the test reads from the DOM, in one evaluation so the values belong together.
const READ_PAGE: &str = r##"JSON.stringify((() => {
  const text = id => { const e = document.getElementById(id); return e ? e.textContent : null; };
  const raw = id => { const e = document.getElementById(id); return e && e.dataset.value ? Number(e.dataset.value) : null; };
  const points = sel => [...document.querySelectorAll(sel)].map(p => p.getAttribute("points").split(" ").length);
  return {
    samples: Number(text("samples")),
    error: text("error"),
    scheme: text("scheme"),
    written: raw("written"),
    write_rate: raw("write-mbps"),
    front_end: text("front-end"),
    throughput_points: points("#throughput polyline.write"),
    rgroup_rows: [...document.querySelectorAll("#rgroup-roles text")].filter(t => t.textContent.startsWith("R-group")).length,
    role_cells: document.querySelectorAll("#rgroup-roles rect").length,
    member_charts: document.querySelectorAll("svg[id^=member-svg-]").length,
    member_write_lines: points("svg[id^=member-svg-] polyline.user-write"),
    latency_ops: [...document.querySelectorAll("#latency tr.op td:first-child")].map(td => td.textContent),
    write_p99: text("latency-write") === null ? null : document.querySelector("#latency-write td:nth-child(4)").textContent,
  };
})())"##;

#[derive(Debug, serde::Deserialize)]
struct Page {
    samples: u64,
    error: Option<String>,
    scheme: Option<String>,
    written: Option<f64>,
    write_rate: Option<f64>,
    front_end: Option<String>,
    throughput_points: Vec<usize>,
    rgroup_rows: usize,
    role_cells: usize,
    member_charts: usize,
    member_write_lines: Vec<usize>,
    latency_ops: Vec<String>,
    write_p99: Option<String>,
}

fn wait_for(browser: &mut Browser, what: &str, secs: u64, ok: impl Fn(&Page) -> bool) -> Page {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let p = browser.read();
        if ok(&p) {
            return p;
        }
        assert!(Instant::now() < deadline, "the dashboard never showed {what}: {p:?}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The R-group whose `swan_rgroup_front_end` is 1 in a plain scrape of `/metrics`.
fn front_end_in_metrics(addr: &str) -> String {
    let (code, _, body) = http_get(addr, "/metrics");
    assert_eq!(code, 200);
    body.lines()
        .find(|l| l.starts_with("swan_rgroup_front_end{") && l.ends_with(" 1"))
        .and_then(|l| l.split('"').nth(1))
        .unwrap_or_else(|| panic!("no front-end R-group in /metrics:\n{body}"))
        .to_string()
}

#[test]
fn dashboard_draws_a_served_array_live() {
    let seconds: u64 =
        std::env::var("SWAN_DASHBOARD_SECONDS").map_or(8, |s| s.parse().expect("SWAN_DASHBOARD_SECONDS"));
    let dir = tempfile::tempdir().expect("temp dir");
    let members = create_array(dir.path(), "swan0", 3, 2, "64M", &[]);
    let server = Server::start_with(dir.path(), &members, &["--metrics", "127.0.0.1:0"]);
    let addr = server.metrics_addr();

    let (code, head, body) = http_get(&addr, "/");
    assert_eq!(code, 200, "GET /: {body}");
    assert!(head.to_lowercase().contains("content-type: text/html"), "{head}");
    assert!(body.contains("fetch(\"metrics\""), "the page reads /metrics");

    let url = format!("http://{addr}/");
    let mut browser = Browser::open(&url);
    let idle = wait_for(&mut browser, "two samples of an idle array", 60, |p| p.samples >= 2);
    assert_eq!(idle.error.as_deref(), Some(""), "{idle:?}");
    assert_eq!(idle.scheme.as_deref(), Some("swan0"));
    assert_eq!(idle.written, Some(0.0));
    assert_eq!(idle.rgroup_rows, 3, "one role strip per R-group: {idle:?}");
    assert_eq!(idle.member_charts, 6, "one timeline per member: {idle:?}");

    // 8 KiB random writes (30 % reads) for `seconds`, while the page is read each second.
    let uri = server.uri();
    let fio_dir = dir.path().to_path_buf();
    let load = std::thread::spawn(move || {
        let args = [
            "--name=dashboard".to_string(),
            "--rw=randrw".into(),
            "--rwmixread=30".into(),
            "--bs=8k".into(),
            "--iodepth=16".into(),
            "--size=96M".into(),
            "--norandommap".into(),
            "--time_based".into(),
            format!("--runtime={seconds}"),
        ];
        fio_job(&fio_dir, &uri, &args)
    });
    let mut during = Vec::new();
    while !load.is_finished() {
        std::thread::sleep(Duration::from_secs(1));
        during.push(browser.read());
    }
    if let Ok(path) = std::env::var("SWAN_DASHBOARD_SCREENSHOT") {
        browser.screenshot(Path::new(&path));
    }
    let job = load.join().expect("the fio thread");
    let fio_written = u64_of(&job["write"], "io_bytes") as f64;
    assert!(fio_written > 0.0);

    // The page moved while fio ran: more samples, more bytes, a positive write rate, lines drawn.
    let (first, last) = (during.first().expect("a read during the load"), during.last().expect("a last read"));
    assert!(last.samples > first.samples, "samples did not advance: {first:?} then {last:?}");
    assert!(during.iter().any(|p| p.written != first.written), "the byte count never changed: {during:?}");
    assert!(during.iter().any(|p| p.write_rate.is_some_and(|r| r > 0.0)), "no write rate while fio wrote: {during:?}");
    let busy = during.iter().rev().find(|p| p.write_rate.is_some_and(|r| r > 0.0)).expect("a busy read");
    assert!(busy.throughput_points.first().is_some_and(|&n| n >= 2), "no throughput line: {busy:?}");
    assert_eq!(busy.member_write_lines.len(), 6, "a write line per member: {busy:?}");
    assert!(busy.role_cells > 0, "no role cells drawn: {busy:?}");
    assert!(busy.latency_ops.iter().any(|op| op == "write"), "{busy:?}");

    // Idle again: the write rate falls to 0 and the count is exactly what fio wrote.
    let settled = wait_for(&mut browser, "an idle write rate after fio", 30, |p| p.write_rate == Some(0.0));
    assert_eq!(settled.written, Some(fio_written), "the page's bytes against fio's: {settled:?}");
    assert_eq!(settled.front_end.as_deref(), Some(front_end_in_metrics(&addr).as_str()));
    assert!(settled.write_p99.is_some(), "{settled:?}");
    eprintln!("dashboard: {} samples; during the load {:?}", settled.samples, busy);
    server.stop();
}
