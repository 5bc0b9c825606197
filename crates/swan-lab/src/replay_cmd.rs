//! `swan replay TRACE --nbd URI`: a block trace replayed against a real NBD server, in
//! wall-clock time (as recorded, accelerated) or as a closed loop, with the simulator's
//! trace readers (`swan_sim::replay`) and swan's NBD client.
//!
//! One thread sends, one receives (`Client::split`), so big writes never wait behind
//! unread replies. Latency is measured from just before a request is sent to the arrival of
//! its reply; in the timed modes the summary also says how far behind schedule requests
//! were sent (the client or the server could not keep up), instead of hiding it.

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use swan_nbd::client::{Client, ClientError, Completion, NbdUri, Op};
use swan_sim::metrics::Latencies;
use swan_sim::output::{latency_summary, LatencySummary};
use swan_sim::replay::{self, human_bytes, ReplayError, ReplayMode, ReplayReport, ReplayRequest, ReplaySpec};
use swan_sim::trace::{AddressPolicy, TraceFormat, TraceOp, BLOCK_BYTES};

#[derive(clap::Args, Debug)]
#[command(after_help = "Example:\n  swan serve --socket /tmp/swan.sock m0 m1 m2 m3 m4 m5 &\n  \
swan replay trace.csv --nbd 'nbd+unix:///?socket=/tmp/swan.sock' --replay accel=10\n\n\
Writes carry a deterministic pattern (a function of the block address). Requests are expanded \
to the 4 KiB blocks they cover and placed in the export by --address-policy; the output states \
the policy, the trace's span and the export's size.")]
pub struct ReplayArgs {
    /// The block trace.
    pub trace: PathBuf,
    /// The server: nbd://HOST[:PORT][/EXPORT] or nbd+unix:///[EXPORT]?socket=PATH.
    #[arg(long, value_name = "URI")]
    pub nbd: String,
    /// msr, spc, mqsim, disksim, blkparse, heimdall, cloudphysics, etw (Microsoft's xperf dumps
    /// of Exchange, production servers, TPC-E; alias ms-etw); default: guessed, and said so.
    #[arg(long, value_name = "FORMAT")]
    pub trace_format: Option<TraceFormat>,
    /// recorded (the trace's times, in wall-clock time), accel=N (times divided by N) or
    /// closed=DEPTH (as fast as the server allows, DEPTH requests in flight).
    #[arg(long, default_value = "recorded", value_name = "MODE")]
    pub replay: ReplayMode,
    /// wrap (block address modulo the export size) or scale (by export size / trace span).
    #[arg(long, default_value = "wrap", value_name = "POLICY")]
    pub address_policy: AddressPolicy,
    /// Skip malformed trace lines and count them (default: the first is an error naming its
    /// file and line).
    #[arg(long)]
    pub skip_bad: bool,
    /// Replay only the trace's first N requests.
    #[arg(long, value_name = "N")]
    pub max_requests: Option<u64>,
    /// At most N requests in flight in the timed modes (a request due while N are in flight
    /// waits, and is counted behind schedule). In closed=DEPTH mode the depth is DEPTH.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub depth: u32,
    /// Seconds without a reply (while requests are in flight) before giving up.
    #[arg(long, default_value_t = 60)]
    pub timeout_s: u64,
    /// Also write the summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// No progress bar (there is none either when stdout is not a terminal).
    #[arg(long)]
    pub quiet: bool,
}

/// What a replay measured (printed, and written with --json).
#[derive(Debug, Serialize)]
pub struct ReplaySummary {
    pub server: String,
    pub export_bytes: u64,
    pub replay: ReplayReport,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub wall_s: f64,
    pub iops: f64,
    pub read_mbps: f64,
    pub write_mbps: f64,
    pub read_latency_us: Option<LatencySummary>,
    pub write_latency_us: Option<LatencySummary>,
    /// Timed modes: how late requests were sent against the trace's schedule.
    pub behind_schedule_mean_us: Option<f64>,
    pub behind_schedule_max_us: Option<f64>,
    pub max_in_flight: u32,
}

/// The bytes written to `block`: 512 words of a splitmix64 sequence seeded by the block
/// address, so any later reader can tell which block's data it holds.
pub fn block_pattern(block: u64, out: &mut [u8]) {
    let mut x = block.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5357_414E_5245_504C; // "SWANREPL"
    for word in out.chunks_exact_mut(8) {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        word.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
}

/// A request sent and not yet answered.
struct Sent {
    at: Instant,
    req: ReplayRequest,
    index: u64,
}

pub fn run(a: &ReplayArgs) -> Result<()> {
    let uri: NbdUri = a.nbd.parse()?;
    if a.depth == 0 {
        bail!("--depth must be at least 1");
    }
    if a.max_requests == Some(0) {
        bail!("--max-requests must be at least 1");
    }
    let spec = ReplaySpec {
        path: a.trace.clone(),
        format: a.trace_format,
        mode: a.replay,
        policy: a.address_policy,
        skip_bad: a.skip_bad,
        max_requests: a.max_requests,
        windows: Vec::new(),
    };
    // The whole trace is checked before anything is sent.
    let trace = replay::open(&spec)?;
    let timeout = Duration::from_secs(a.timeout_s.max(1));
    let client = Client::connect_timeout(&uri, timeout).with_context(|| format!("connecting to {uri}"))?;
    let export_bytes = client.export().size;
    let volume_blocks = export_bytes / BLOCK_BYTES;
    if volume_blocks == 0 {
        bail!("the export at {uri} holds {export_bytes} bytes: less than one 4 KiB block to replay into");
    }
    if client.export().read_only() && trace.scan.writes > 0 {
        bail!("the export at {uri} is read-only and the trace writes ({} write requests)", trace.scan.writes);
    }
    let report = trace.report(&spec, volume_blocks);
    println!("swan replay: {uri}, export of {} ({export_bytes} bytes)", human_bytes(export_bytes));
    println!("{}", report.statement());
    let requests = trace.replayer(&spec, volume_blocks)?;
    let bar = progress_bar(a.quiet, report.requests);
    let what = format!("replaying {} against {uri}", a.trace.display());
    let (tally, wall_s) = send_all(a, client, requests, &bar, &what)?;
    bar.finish_and_clear();
    let summary = tally.summary(uri.to_string(), export_bytes, report, wall_s);
    print_summary(&summary);
    if let Some(p) = &a.json {
        std::fs::write(p, serde_json::to_string_pretty(&summary)? + "\n")
            .with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

fn progress_bar(quiet: bool, requests: u64) -> ProgressBar {
    if quiet || !std::io::stdout().is_terminal() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(requests);
    b.set_style(
        ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} requests {elapsed_precise} eta {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    b.set_prefix("replay");
    b
}

/// Send every request (at its time, or as the queue depth allows) and gather the replies;
/// what they measured, and the wall time the replay took.
fn send_all(
    a: &ReplayArgs,
    client: Client,
    requests: impl Iterator<Item = Result<ReplayRequest, ReplayError>>,
    bar: &ProgressBar,
    what: &str,
) -> Result<(Tally, f64)> {
    let depth = match a.replay {
        ReplayMode::Closed(d) => d,
        _ => a.depth,
    };
    let (mut sub, mut done) = client.split()?;
    let (tx, rx) = mpsc::channel::<Result<(Completion, Instant), ClientError>>();
    let receiver = std::thread::spawn(move || loop {
        let r = done.wait().map(|c| (c, Instant::now()));
        let failed = r.is_err();
        if tx.send(r).is_err() || failed {
            break;
        }
    });
    let mut inflight = InFlight { rx, sent: HashMap::new(), what, bar };
    let mut tally = Tally::default();
    let mut buf = Vec::new();
    let timed = !matches!(a.replay, ReplayMode::Closed(_));
    let start = Instant::now();
    for (index, req) in requests.enumerate() {
        let req = req?;
        if timed {
            let due = start + Duration::from_nanos(req.at_ns);
            // Collect replies while waiting for the request's time.
            loop {
                let now = Instant::now();
                if now >= due {
                    break;
                }
                inflight.settle(&mut tally, Some(due - now))?;
            }
        }
        while inflight.sent.len() >= depth as usize {
            inflight.settle(&mut tally, None)?;
        }
        let now = Instant::now();
        if timed {
            tally.behind(now.duration_since(start + Duration::from_nanos(req.at_ns)));
        }
        let len = u32::try_from(req.len_bytes()).expect("replay requests are at most 32 MiB");
        let cookie = match req.op {
            TraceOp::Read => sub.read(req.offset_bytes(), len),
            TraceOp::Write => {
                buf.resize(len as usize, 0);
                for (i, block) in buf.chunks_exact_mut(BLOCK_BYTES as usize).enumerate() {
                    block_pattern(req.block + i as u64, block);
                }
                sub.write(req.offset_bytes(), &buf, false)
            }
        }
        .with_context(|| format!("{what}: request {}", index + 1))?;
        inflight.sent.insert(cookie, Sent { at: now, req, index: index as u64 });
        tally.max_in_flight = tally.max_in_flight.max(inflight.sent.len() as u32);
    }
    while !inflight.sent.is_empty() {
        inflight.settle(&mut tally, None)?;
    }
    let wall_s = start.elapsed().as_secs_f64();
    sub.disconnect()?;
    let _ = receiver.join();
    tally.lat.close();
    Ok((tally, wall_s))
}

/// Requests sent and not yet answered, and where their replies come in.
struct InFlight<'a> {
    rx: mpsc::Receiver<Result<(Completion, Instant), ClientError>>,
    sent: HashMap<u64, Sent>,
    what: &'a str,
    bar: &'a ProgressBar,
}

impl InFlight<'_> {
    /// Take one reply off the channel (waiting at most `wait`) into `tally`; false if none came.
    fn settle(&mut self, tally: &mut Tally, wait: Option<Duration>) -> Result<bool> {
        let got = match wait {
            None => self.rx.recv().map_err(|_| anyhow!("the reply reader stopped"))?,
            Some(d) => match self.rx.recv_timeout(d) {
                Ok(r) => r,
                Err(mpsc::RecvTimeoutError::Timeout) => return Ok(false),
                Err(mpsc::RecvTimeoutError::Disconnected) => bail!("the reply reader stopped"),
            },
        };
        let (c, when) = got.with_context(|| self.what.to_string())?;
        let s = self.sent.remove(&c.cookie).ok_or_else(|| anyhow!("a reply to request {} twice", c.cookie))?;
        c.result.with_context(|| {
            format!("{}: request {} ({} blocks at block {})", self.what, s.index + 1, s.req.blocks, s.req.block)
        })?;
        tally.answered(c.op, c.len, when.duration_since(s.at).as_nanos() as u64);
        self.bar.inc(1);
        Ok(true)
    }
}

/// What the replies measured.
#[derive(Default)]
struct Tally {
    lat: Latencies,
    reads: u64,
    writes: u64,
    read_bytes: u64,
    write_bytes: u64,
    max_in_flight: u32,
    /// How far behind its time each timed request went out (µs): sum, largest, count.
    lag_sum_us: f64,
    lag_max_us: f64,
    lagged: u64,
}

impl Tally {
    fn answered(&mut self, op: Op, len: u32, ns: u64) {
        match op {
            Op::Read => {
                self.lat.record(true, ns);
                self.reads += 1;
                self.read_bytes += u64::from(len);
            }
            Op::Write => {
                self.lat.record(false, ns);
                self.writes += 1;
                self.write_bytes += u64::from(len);
            }
            Op::Flush => {}
        }
    }

    fn behind(&mut self, lag: Duration) {
        let us = lag.as_secs_f64() * 1e6;
        self.lag_sum_us += us;
        self.lag_max_us = self.lag_max_us.max(us);
        self.lagged += 1;
    }

    fn summary(&self, server: String, export_bytes: u64, replay: ReplayReport, wall_s: f64) -> ReplaySummary {
        let n = self.reads + self.writes;
        ReplaySummary {
            server,
            export_bytes,
            replay,
            requests: n,
            reads: self.reads,
            writes: self.writes,
            read_bytes: self.read_bytes,
            write_bytes: self.write_bytes,
            wall_s,
            iops: n as f64 / wall_s.max(1e-9),
            read_mbps: self.read_bytes as f64 / wall_s.max(1e-9) / 1e6,
            write_mbps: self.write_bytes as f64 / wall_s.max(1e-9) / 1e6,
            read_latency_us: (!self.lat.read.is_empty()).then(|| latency_summary(&self.lat.read)),
            write_latency_us: (!self.lat.write.is_empty()).then(|| latency_summary(&self.lat.write)),
            behind_schedule_mean_us: (self.lagged > 0).then(|| self.lag_sum_us / self.lagged as f64),
            behind_schedule_max_us: (self.lagged > 0).then_some(self.lag_max_us),
            max_in_flight: self.max_in_flight,
        }
    }
}

fn print_summary(s: &ReplaySummary) {
    println!(
        "\nreplayed {} requests ({} reads, {} writes; {} read, {} written) in {:.3} s: {:.0} IOPS, read {:.1} MB/s, write {:.1} MB/s, at most {} in flight",
        s.requests,
        s.reads,
        s.writes,
        human_bytes(s.read_bytes),
        human_bytes(s.write_bytes),
        s.wall_s,
        s.iops,
        s.read_mbps,
        s.write_mbps,
        s.max_in_flight
    );
    for (what, l) in [("read", &s.read_latency_us), ("write", &s.write_latency_us)] {
        if let Some(l) = l {
            println!("  {what:<5} latency µs: mean {:.1}  p50 {}  p99 {}  max {}", l.mean, l.p50, l.p99, l.max);
        }
    }
    if let (Some(mean), Some(max)) = (s.behind_schedule_mean_us, s.behind_schedule_max_us) {
        println!("  sent behind the trace's schedule: mean {mean:.0} µs, max {max:.0} µs");
    }
    println!(
        "  {} malformed lines skipped; address policy {}: {}",
        s.replay.skipped_lines, s.replay.address_policy, s.replay.address_mapping
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_patterns_differ_by_block_and_repeat() {
        let (mut a, mut b, mut c) = (vec![0u8; 4096], vec![0u8; 4096], vec![0u8; 4096]);
        block_pattern(7, &mut a);
        block_pattern(8, &mut b);
        block_pattern(7, &mut c);
        assert_eq!(a, c);
        assert_ne!(a, b);
        assert!(a.chunks(8).collect::<std::collections::HashSet<_>>().len() > 500, "words vary inside a block");
    }
}
