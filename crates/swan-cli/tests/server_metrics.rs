//! `swan serve --metrics`: the Prometheus endpoint driven by real clients.
//!
//! - `scrape_counts_what_fio_did`: fio writes and reads a known number of bytes over NBD;
//!   a plain HTTP GET of `/metrics` must parse as the Prometheus text format and count
//!   exactly those requests and bytes, with consistent histograms.
//! - `prometheus_scrapes_what_fio_wrote`: a real Prometheus (Debian's `prometheus`) scrapes
//!   the server every second while fio writes; its query API must report the bytes fio wrote,
//!   and answer every query of the Grafana dashboard (`docs/grafana-swan.json`).
//! - `docs/metrics.md` must list every family a scrape has and every metric the dashboard uses.
//! - `degraded_and_rebuilt_members_show_in_metrics`: `swan fail` and `swan replace` on RAID5.
//! - `several_exports_share_one_metrics_listener_labelled_by_export`: `--config` with two
//!   exports: every series but the connection counters carries `export`, each export counts
//!   its own requests, Prometheus scrapes it and the dashboard's queries answer.
//! - `bad_metrics_address_is_named` and `metrics_port_in_use_fails_at_start`: bad input.

mod common;

use common::*;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

// ---------------------------------------------------------------------------------------------
// HTTP and the exposition format

type Labels = Vec<(String, String)>;

#[derive(Debug)]
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

/// A scrape, checked line by line against the text format (version 0.0.4): every sample is
/// `name{labels} value`, and belongs to a family whose HELP and TYPE came before it.
struct Exposition {
    samples: Vec<Sample>,
    types: HashMap<String, String>,
}

fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_' || f == ':')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':')
}

fn parse_value(v: &str) -> Option<f64> {
    match v {
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => v.parse().ok(),
    }
}

/// `k="v",k2="v2"` (escapes `\\`, `\"`, `\n`); `None` if malformed.
fn parse_labels(s: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let (key, after) = rest.split_once("=\"")?;
        if !is_name(key) {
            return None;
        }
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    c @ ('\\' | '"') => value.push(c),
                    _ => return None,
                },
                (_, c) => value.push(c),
            }
        };
        out.push((key.to_string(), value));
        rest = &after[end + 1..];
        rest = match rest.strip_prefix(',') {
            Some(r) => r,
            None if rest.is_empty() => rest,
            None => return None,
        };
    }
    Some(out)
}

fn parse(text: &str) -> Exposition {
    let (mut helps, mut types, mut samples) = (HashSet::new(), HashMap::new(), Vec::new());
    for (n, line) in text.lines().enumerate() {
        let bad = |why: &str| -> ! { panic!("line {}: {why}: {line:?}\n--- scrape ---\n{text}", n + 1) };
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().unwrap_or_default();
            if !is_name(name) || !helps.insert(name.to_string()) {
                bad("a HELP line with a bad or repeated name");
            }
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut w = rest.split(' ');
            let (name, kind) = (w.next().unwrap_or_default(), w.next().unwrap_or_default());
            if !is_name(name) || !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind) {
                bad("a malformed TYPE line");
            }
            if !helps.contains(name) {
                bad("a TYPE without a HELP before it");
            }
            if types.insert(name.to_string(), kind.to_string()).is_some() {
                bad("a family typed twice");
            }
        } else if line.starts_with('#') || line.is_empty() {
            bad("a comment or blank line the encoder should not write");
        } else {
            let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| bad("no value"));
            let value = parse_value(value).unwrap_or_else(|| bad("a value that is not a number"));
            let (name, labels) = match series.split_once('{') {
                Some((name, l)) => {
                    let l = l.strip_suffix('}').unwrap_or_else(|| bad("unclosed labels"));
                    (name, parse_labels(l).unwrap_or_else(|| bad("malformed labels")))
                }
                None => (series, Vec::new()),
            };
            if !is_name(name) {
                bad("a bad metric name");
            }
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s).filter(|f| types.get(*f).is_some_and(|t| t == "histogram")))
                .unwrap_or(name);
            if !types.contains_key(family) {
                bad("a sample of a family with no TYPE before it");
            }
            samples.push(Sample { name: name.to_string(), labels, value });
        }
    }
    let e = Exposition { samples, types };
    e.check_histograms();
    e
}

impl Exposition {
    fn matching<'a>(&'a self, name: &'a str, labels: &'a [(&str, &str)]) -> impl Iterator<Item = &'a Sample> + 'a {
        self.samples.iter().filter(move |s| {
            s.name == name && labels.iter().all(|(k, v)| s.labels.iter().any(|(sk, sv)| sk == k && sv == v))
        })
    }

    /// The one sample of `name` with (at least) `labels`.
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let found: Vec<&Sample> = self.matching(name, labels).collect();
        assert_eq!(found.len(), 1, "{name}{labels:?}: expected one sample, found {found:?}");
        found[0].value
    }

    fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let found: Vec<&Sample> = self.matching(name, labels).collect();
        assert!(!found.is_empty(), "no sample of {name}{labels:?}");
        found.iter().map(|s| s.value).sum()
    }

    /// Buckets cumulative and ending at +Inf, which equals `_count`, per label set.
    fn check_histograms(&self) {
        for (family, _) in self.types.iter().filter(|(_, t)| *t == "histogram") {
            let bucket = format!("{family}_bucket");
            let mut series: HashMap<Labels, Vec<(f64, f64)>> = HashMap::new();
            for s in self.samples.iter().filter(|s| s.name == bucket) {
                let le = s.labels.iter().find(|(k, _)| k == "le").map(|(_, v)| parse_value(v).expect("le is a number"));
                let rest: Vec<_> = s.labels.iter().filter(|(k, _)| k != "le").cloned().collect();
                series.entry(rest).or_default().push((le.expect("a bucket without le"), s.value));
            }
            assert!(!series.is_empty(), "histogram {family} has no buckets");
            for (labels, buckets) in series {
                assert!(
                    buckets.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
                    "{family}{labels:?}: {buckets:?}"
                );
                let last = buckets.last().expect("buckets");
                assert!(last.0.is_infinite(), "{family}{labels:?} does not end at +Inf");
                let l: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                assert_eq!(
                    last.1,
                    self.get(&format!("{family}_count"), &l),
                    "{family}{labels:?}: +Inf bucket != count"
                );
            }
        }
    }
}

fn scrape(addr: &str) -> Exposition {
    let (code, head, body) = http_get(addr, "/metrics");
    assert_eq!(code, 200, "{head}\n{body}");
    assert!(head.to_lowercase().contains("content-type: text/plain; version=0.0.4"), "{head}");
    parse(&body)
}

// ---------------------------------------------------------------------------------------------
// clients

/// One fio job over NBD (`rw` = write, randwrite, read, ...): `io` bytes in blocks of `bs`
/// over the first `size` bytes. Returns the bytes fio says it moved in that direction.
fn fio(dir: &Path, uri: &str, rw: &str, bs: u64, size: u64, io: u64) -> u64 {
    let args = [
        "--name=metrics".to_string(),
        format!("--rw={rw}"),
        format!("--bs={bs}"),
        "--iodepth=16".into(),
        format!("--size={size}"),
        format!("--io_size={io}"),
        "--norandommap".into(),
        "--randseed=7".into(),
    ];
    let job = fio_job(dir, uri, &args);
    u64_of(&job[if rw.contains("read") { "read" } else { "write" }], "io_bytes")
}

/// A file of the repository's `docs/`.
fn doc(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `swan_...` name in `text`.
fn swan_names(text: &str) -> HashSet<String> {
    let mut names = HashSet::new();
    for (i, _) in text.match_indices("swan_") {
        let name: String =
            text[i..].chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_').collect();
        names.insert(name);
    }
    names
}

/// The PromQL queries of the Grafana dashboard, with its variables given values.
fn dashboard_queries() -> Vec<String> {
    let dash: Value = serde_json::from_str(&doc("grafana-swan.json")).expect("docs/grafana-swan.json is JSON");
    let panels = dash["panels"].as_array().expect("panels");
    let exprs: Vec<String> = panels
        .iter()
        .flat_map(|p| p["targets"].as_array().expect("targets").iter())
        .map(|t| t["expr"].as_str().expect("expr").replace("$__rate_interval", "5s").replace("$instance", ".*"))
        .collect();
    assert!(exprs.len() >= 10, "{exprs:?}");
    exprs
}

fn swan0(dir: &Path) -> Vec<std::path::PathBuf> {
    create_array(dir, "swan0", 3, 2, "64M", &[])
}

// ---------------------------------------------------------------------------------------------
// tests

#[test]
fn scrape_counts_what_fio_did() {
    let dir = tempfile::tempdir().expect("temp dir");
    let members = swan0(dir.path());
    let server = Server::start_with(dir.path(), &members, &["--metrics", "127.0.0.1:0"]);
    let addr = server.metrics_addr();

    let before = scrape(&addr);
    assert_eq!(before.get("swan_request_duration_seconds_count", &[("op", "write")]), 0.0);
    assert_eq!(before.get("swan_user_written_bytes_total", &[]), 0.0);
    assert!(before.matching("swan_array_waf", &[]).next().is_none(), "WAF is undefined before any write");

    // 64 writes of 64 KiB over the first 4 MiB, 1024 random writes of 8 KiB over 32 MiB,
    // then 64 reads of 64 KiB of the first 4 MiB (all written, so read from the members):
    // exact request and byte counts.
    let mut written = fio(dir.path(), &server.uri(), "write", 65536, 4 * MIB, 4 * MIB);
    written += fio(dir.path(), &server.uri(), "randwrite", 8192, 32 * MIB, 8 * MIB);
    assert_eq!(written, 12 * MIB);
    let read = fio(dir.path(), &server.uri(), "read", 65536, 4 * MIB, 4 * MIB);
    assert_eq!(read, 4 * MIB);

    let m = scrape(&addr);
    let w = [("op", "write")];
    let r = [("op", "read")];
    assert_eq!(m.get("swan_request_duration_seconds_count", &w), (64 + 1024) as f64);
    assert_eq!(m.get("swan_request_bytes_total", &w), written as f64);
    assert_eq!(m.get("swan_request_duration_seconds_count", &r), 64.0);
    assert_eq!(m.get("swan_request_bytes_total", &r), read as f64);
    assert!(m.get("swan_request_duration_seconds_sum", &w) > 0.0);
    assert_eq!(m.sum("swan_request_errors_total", &[]), 0.0);
    // The engine's own count of user bytes, the one `swan status` shows.
    assert_eq!(m.get("swan_user_written_bytes_total", &[]), written as f64);
    assert_eq!(m.get("swan_user_read_bytes_total", &[]), read as f64);
    let status = status(&members[0], dir.path());
    assert_eq!(u64_of(&status, "user_bytes_written"), written);
    // The log carries every user block onto the members (plus its segment summaries).
    assert!(m.sum("swan_member_written_bytes_total", &[("class", "user")]) >= written as f64);
    assert!(m.sum("swan_member_writes_total", &[]) > 0.0);
    assert!(m.sum("swan_member_read_bytes_total", &[("class", "user")]) >= read as f64);
    assert_eq!(m.sum("swan_member_errors_total", &[]), 0.0);
    assert!(m.get("swan_array_waf", &[]) >= 1.0);
    // SWAN: exactly one front-end R-group of three.
    assert_eq!(m.matching("swan_rgroup_front_end", &[]).count(), 3);
    assert_eq!(m.sum("swan_rgroup_front_end", &[]), 1.0);
    assert_eq!(m.sum("swan_member_state", &[("state", "healthy")]), 6.0);
    assert_eq!(m.get("swan_degraded", &[]), 0.0);
    assert_eq!(m.get("swan_rebuild_active", &[]), 0.0);
    assert!(m.get("swan_connections_accepted_total", &[]) >= 2.0);
    assert_eq!(m.get("swan_array_info", &[("scheme", "swan0")]), 1.0);

    // docs/metrics.md lists every family a scrape has, and every metric the dashboard uses.
    let documented = swan_names(&doc("metrics.md"));
    let missing: Vec<&String> = m.types.keys().filter(|f| !documented.contains(*f)).collect();
    assert!(missing.is_empty(), "families missing from docs/metrics.md: {missing:?}");
    let used = dashboard_queries().iter().flat_map(|q| swan_names(q)).collect::<HashSet<_>>();
    let unknown: Vec<&String> = used
        .iter()
        .filter(|n| !documented.contains(*n) && !documented.contains(n.trim_end_matches("_bucket")))
        .filter(|n| !n.strip_suffix("_count").is_some_and(|f| documented.contains(f)))
        .collect();
    assert!(unknown.is_empty(), "the dashboard uses metrics docs/metrics.md does not list: {unknown:?}");

    let (code, ..) = http_get(&addr, "/nothing-here");
    assert_eq!(code, 404);
    server.stop();
}

/// A Prometheus server on a free loopback port, killed when dropped.
struct Prometheus {
    proc: Guard,
    addr: String,
    log: std::path::PathBuf,
}

impl Prometheus {
    fn start(dir: &Path, target: &str) -> Prometheus {
        let bin = require("prometheus", "prometheus");
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: swan\n    \
                 static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .expect("prometheus config");
        // A port free a moment ago; if another process takes it first, Prometheus exits and
        // the test says so with its log.
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let addr = format!("127.0.0.1:{port}");
        let log = dir.join("prometheus.log");
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("tsdb").display()))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).expect("log"))
            .stderr(std::fs::File::create(dir.join("prometheus.err")).expect("log"))
            .spawn()
            .expect("start prometheus");
        let mut p = Prometheus { proc: Guard::new(child), addr, log };
        p.wait("ready", Duration::from_secs(60), |p| {
            TcpStream::connect(&p.addr).is_ok() && http_get(&p.addr, "/-/ready").0 == 200
        });
        p
    }

    fn logs(&self) -> String {
        let err = self.log.with_file_name("prometheus.err");
        format!(
            "{}{}",
            std::fs::read_to_string(&self.log).unwrap_or_default(),
            std::fs::read_to_string(err).unwrap_or_default()
        )
    }

    /// Waits (at most `limit`) until `done`; fails the test if Prometheus exits or time runs out.
    fn wait(&mut self, what: &str, limit: Duration, mut done: impl FnMut(&mut Prometheus) -> bool) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.proc.child().try_wait().expect("wait for prometheus") {
                panic!("prometheus exited ({status}) waiting for {what}:\n{}", self.logs());
            }
            if done(self) {
                return;
            }
            assert!(start.elapsed() < limit, "prometheus: not {what} after {limit:?}:\n{}", self.logs());
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// An instant query through the HTTP API: the values of the vector it returns.
    fn query(&self, promql: &str) -> Vec<f64> {
        let encoded: String = promql
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (code, _, body) = http_get(&self.addr, &format!("/api/v1/query?query={encoded}"));
        assert_eq!(code, 200, "query {promql}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("query {promql}: {e}: {body}"));
        assert_eq!(v["status"], "success", "query {promql}: {body}");
        v["data"]["result"]
            .as_array()
            .unwrap_or_else(|| panic!("query {promql}: no result vector: {body}"))
            .iter()
            .map(|r| r["value"][1].as_str().and_then(|s| s.parse().ok()).expect("a sample value"))
            .collect()
    }

    /// The one value `promql` gives, once it has one.
    fn one(&self, promql: &str) -> Option<f64> {
        match self.query(promql)[..] {
            [v] => Some(v),
            [] => None,
            ref more => panic!("query {promql}: expected one series, got {more:?}"),
        }
    }
}

#[test]
fn prometheus_scrapes_what_fio_wrote() {
    let dir = tempfile::tempdir().expect("temp dir");
    let members = swan0(dir.path());
    let server = Server::start_with(dir.path(), &members, &["--metrics", "127.0.0.1:0"]);
    let mut prom = Prometheus::start(dir.path(), &server.metrics_addr());
    let written_metric = "swan_user_written_bytes_total";

    // A first sample from before the writes, so the window below spans all of them.
    prom.wait("scraping swan", Duration::from_secs(60), |p| p.one(written_metric) == Some(0.0));
    assert_eq!(prom.one("up{job=\"swan\"}"), Some(1.0));

    let written = fio(dir.path(), &server.uri(), "randwrite", 65536, 32 * MIB, 16 * MIB);
    assert_eq!(written, 16 * MIB);

    let latest = |p: &Prometheus| p.one(written_metric);
    prom.wait("seeing fio's writes", Duration::from_secs(60), |p| latest(p) == Some(written as f64));
    // The counter's growth over the window, from Prometheus's own stored samples.
    let window = format!("max_over_time({written_metric}[10m]) - min_over_time({written_metric}[10m])");
    assert_eq!(prom.one(&window), Some(written as f64));
    let writes = prom.one("swan_request_duration_seconds_count{op=\"write\"}");
    assert_eq!(writes, Some((written / 65536) as f64));
    assert_eq!(prom.one("swan_request_bytes_total{op=\"write\"}"), Some(written as f64));
    // rate()/increase() extrapolate to the window's end by up to 1.1 scrape intervals: never
    // below what was written, and within 10 % of it once the window holds a dozen samples.
    let increase = format!("increase({written_metric}[10m])");
    let within = |v: Option<f64>| v.is_some_and(|v| v >= written as f64 && v <= 1.1 * written as f64);
    prom.wait("an increase() near fio's bytes", Duration::from_secs(60), |p| within(p.one(&increase)));
    // Every query of the Grafana dashboard is valid PromQL, and those over figures present
    // after a write find series.
    for q in dashboard_queries() {
        let found = prom.query(&q);
        let conditional = ["rebuild", "!=\"healthy\""].iter().any(|c| q.contains(c));
        assert!(conditional || !found.is_empty(), "the dashboard's query {q} finds nothing");
    }
    eprintln!(
        "prometheus at {}: {written_metric} = {:?}, max-min over 10m = {:?}, {increase} = {:?}, write requests = {writes:?}",
        prom.addr,
        latest(&prom),
        prom.one(&window),
        prom.one(&increase),
    );
    drop(prom);
    server.stop();
}

#[test]
fn bad_metrics_address_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let members = small_array(dir.path());
    let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--metrics", "not-an-address"];
    args.extend(members.iter().map(|m| m.to_str().expect("utf-8 path")));
    let out = swan(&args, dir.path());
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{}", describe("swan serve --metrics not-an-address", &out));
    assert!(err.contains("--metrics") && err.contains("not-an-address"), "{err}");
}

#[test]
fn metrics_port_in_use_fails_at_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    let members = small_array(dir.path());
    let taken = TcpListener::bind("127.0.0.1:0").expect("a port to hold");
    let addr = taken.local_addr().expect("its address").to_string();
    let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--metrics", &addr];
    args.extend(members.iter().map(|m| m.to_str().expect("utf-8 path")));
    let out = swan(&args, dir.path());
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{}", describe("swan serve --metrics on a port in use", &out));
    assert!(err.contains(&format!("--metrics {addr}")) && err.contains("in use"), "{err}");
    assert!(!err.contains("serving on"), "it failed before serving: {err}");
    drop(taken);
}

/// RAID5 over 4 members: a failed member shows as degraded, its state as failed; after the
/// rebuild onto a replacement, healthy again.
#[test]
fn degraded_and_rebuilt_members_show_in_metrics() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let members = create_array(d, "raid5", 1, 4, "24M", &[]);
    let server = Server::start_with(d, &members, &["--metrics", "127.0.0.1:0"]);
    let addr = server.metrics_addr();
    fio(d, &server.uri(), "write", 65536, 4 * MIB, 4 * MIB);
    let healthy = scrape(&addr);
    assert_eq!(healthy.get("swan_degraded", &[]), 0.0);
    assert_eq!(healthy.sum("swan_member_state", &[("state", "healthy")]), 4.0);

    let any = members[0].to_str().expect("utf-8 path");
    let out = swan(&["fail", "--member", "1", any], d);
    assert!(out.status.success(), "{}", describe("swan fail", &out));
    let failed = scrape(&addr);
    assert_eq!(failed.get("swan_degraded", &[]), 1.0);
    assert_eq!(failed.get("swan_member_state", &[("member", "1"), ("state", "failed")]), 1.0);
    assert_eq!(failed.get("swan_member_state", &[("member", "1"), ("state", "healthy")]), 0.0);
    assert_eq!(failed.sum("swan_member_state", &[("state", "healthy")]), 3.0);
    // Reads of the failed member's blocks are served from parity, and counted as reads.
    let read = fio(d, &server.uri(), "read", 65536, 4 * MIB, 4 * MIB);
    assert_eq!(scrape(&addr).get("swan_user_read_bytes_total", &[]), read as f64);

    let new = d.join("m1-new");
    let out = swan(&["replace", "--member", "1", "--new", new.to_str().expect("utf-8 path"), "--wait", any], d);
    assert!(out.status.success(), "{}", describe("swan replace", &out));
    let rebuilt = scrape(&addr);
    assert_eq!(rebuilt.get("swan_degraded", &[]), 0.0);
    assert_eq!(rebuilt.get("swan_rebuild_active", &[]), 0.0);
    assert_eq!(rebuilt.sum("swan_member_state", &[("state", "healthy")]), 4.0);
    assert_eq!(rebuilt.get("swan_member_info", &[("member", "1")]), 1.0);
    assert!(rebuilt.matching("swan_member_info", &[("path", new.to_str().expect("utf-8"))]).next().is_some());
    server.stop();
}

/// `swan serve --config` with `--metrics`: one listener for two exports, every series of an
/// export labelled with its name (the server's connection counters with none), each family
/// described once; fio's bytes counted on the export it wrote to; a real Prometheus scrapes
/// it and the Grafana dashboard's queries answer.
#[test]
fn several_exports_share_one_metrics_listener_labelled_by_export() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let sub = |name: &str| {
        let p = d.join(name);
        std::fs::create_dir_all(&p).expect("array directory");
        p
    };
    let a = create_array(&sub("a"), "swan0", 3, 2, "64M", &[]);
    let b = create_array(&sub("b"), "raid5", 1, 3, "32M", &[]);
    let list = |m: &[std::path::PathBuf]| {
        m.iter().map(|p| format!("{:?}", p.to_str().expect("utf-8 path"))).collect::<Vec<_>>().join(", ")
    };
    let config = d.join("exports.toml");
    std::fs::write(
        &config,
        format!(
            "[[export]]\nname = \"a\"\nmembers = [{}]\n\n[[export]]\nname = \"b\"\nmembers = [{}]\n",
            list(&a),
            list(&b)
        ),
    )
    .expect("write the config");
    let config = config.to_str().expect("utf-8 path").to_string();
    let server = Server::start_with(d, &[], &["--config", &config, "--metrics", "127.0.0.1:0"]);
    let addr = server.metrics_addr();
    let uri = |export: &str| format!("{}/{export}", server.uri());
    let wa = fio(d, &uri("a"), "randwrite", 65536, 16 * MIB, 8 * MIB);
    let wb = fio(d, &uri("b"), "write", 4096, 2 * MIB, 2 * MIB);
    let rb = fio(d, &uri("b"), "read", 65536, 2 * MIB, 2 * MIB);

    let e = scrape(&addr);
    for s in &e.samples {
        let export = s.labels.iter().find(|(k, _)| k == "export").map(|(_, v)| v.as_str());
        if s.name.starts_with("swan_connections_") {
            assert_eq!(export, None, "the server's connection counters carry no export: {s:?}");
        } else {
            assert!(matches!(export, Some("a" | "b")), "a series without its export's label: {s:?}");
        }
    }
    assert_eq!(e.get("swan_user_written_bytes_total", &[("export", "a")]), wa as f64);
    assert_eq!(e.get("swan_user_written_bytes_total", &[("export", "b")]), wb as f64);
    assert_eq!(e.get("swan_user_read_bytes_total", &[("export", "b")]), rb as f64);
    assert_eq!(e.get("swan_request_bytes_total", &[("export", "a"), ("op", "write")]), wa as f64);
    assert_eq!(e.get("swan_request_bytes_total", &[("export", "b"), ("op", "write")]), wb as f64);
    assert_eq!(e.get("swan_request_duration_seconds_count", &[("export", "b"), ("op", "write")]), (wb / 4096) as f64);
    assert_eq!(e.get("swan_request_duration_seconds_count", &[("export", "a"), ("op", "read")]), 0.0);
    assert_eq!(e.get("swan_array_info", &[("export", "a"), ("scheme", "swan0")]), 1.0);
    assert_eq!(e.get("swan_array_info", &[("export", "b"), ("scheme", "raid5")]), 1.0);
    assert_eq!(e.sum("swan_member_state", &[("export", "a"), ("state", "healthy")]), 6.0);
    assert_eq!(e.sum("swan_member_state", &[("export", "b"), ("state", "healthy")]), 3.0);
    assert!(e.get("swan_connections_accepted_total", &[]) >= 3.0, "fio's three runs each connected");

    let mut prom = Prometheus::start(d, &addr);
    let written = |p: &Prometheus, x: &str| p.one(&format!("swan_user_written_bytes_total{{export=\"{x}\"}}"));
    prom.wait("scraping both exports", Duration::from_secs(60), |p| {
        written(p, "a") == Some(wa as f64) && written(p, "b") == Some(wb as f64)
    });
    // rate() over 5 s needs two scrapes in its window: the queries get a few seconds.
    let unanswered = |p: &Prometheus| -> Vec<String> {
        let conditional = |q: &str| ["rebuild", "!=\"healthy\""].iter().any(|c| q.contains(c));
        dashboard_queries().into_iter().filter(|q| !conditional(q) && p.query(q).is_empty()).collect()
    };
    let start = Instant::now();
    while !unanswered(&prom).is_empty() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(500));
    }
    let left = unanswered(&prom);
    assert!(left.is_empty(), "the dashboard's queries {left:?} find nothing:\n{}", prom.logs());
    drop(prom);
    server.stop();
}
