//! What the kill -9 soak and the fault soak share about fio's verify runs: reading its JSON
//! report, and telling whether a `--verify_only` run found anything wrong.
//!
//! Both soaks know what the server acknowledged the way fio does: the writer runs with
//! `--verify_state_save=1`, which records how many writes each job issued and which of its
//! last `iodepth` had completed (been acknowledged); a later run of the same job with
//! `--verify_only --verify_state_load=1` replays the write sequence and reads back every
//! acknowledged write, checking its header (offset, per-write seed) and CRC32C.

use super::Guard;
use serde_json::Value;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The JSON report in fio's stdout (the nbd engine, and warnings, print lines before it).
pub fn fio_report(stdout: &str) -> Value {
    let start = stdout.find("\n{").map(|i| i + 1).or_else(|| stdout.starts_with('{').then_some(0));
    let start = start.unwrap_or_else(|| panic!("no JSON report in fio's output:\n{stdout}"));
    serde_json::from_str(&stdout[start..]).unwrap_or_else(|e| panic!("fio's JSON report: {e}:\n{stdout}"))
}

/// `jobs[i][dir][key]` summed over every job of the report (`dir`: "read" or "write").
pub fn sum_jobs(report: &Value, dir: &str, key: &str) -> u64 {
    let jobs = report["jobs"].as_array().unwrap_or_else(|| panic!("no jobs in fio's report: {report}"));
    jobs.iter().map(|j| j[dir][key].as_u64().unwrap_or_else(|| panic!("no {dir}.{key} in {j}"))).sum()
}

/// The first job error fio reports (0: none).
pub fn job_error(report: &Value) -> u64 {
    report["jobs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|j| j["error"].as_u64().unwrap_or(1))
        .find(|&e| e != 0)
        .unwrap_or(0)
}

/// Lines of fio's output that report a failed verification or an I/O error. fio 3.33 does
/// not always turn these into a job error: a `--rw=randrw` job run `--verify_only` prints
/// "verify failed" and still exits 0 with `error: 0`, so the text is what counts.
pub fn verify_failures(output: &str) -> Vec<String> {
    const SIGNS: [&str; 6] =
        ["verify failed", "verify:", "bad header", "bad magic", "io_u error", "Input/output error"];
    output.lines().filter(|l| SIGNS.iter().any(|s| l.contains(s))).map(str::to_string).collect()
}

/// A writer run of fio in the background, its stdout and stderr going to files so that a
/// failure can show whatever fio had printed, even after a kill cut it short.
pub struct FioRun {
    pub proc: Guard,
    out: PathBuf,
    err: PathBuf,
}

impl FioRun {
    /// Starts `fio ARGS` with its output in `dir/NAME.out` and `dir/NAME.err`.
    pub fn spawn(fio: &Path, args: &[String], dir: &Path, name: &str) -> FioRun {
        let (out, err) = (dir.join(format!("{name}.out")), dir.join(format!("{name}.err")));
        let proc = Guard::new(
            Command::new(fio)
                .args(args)
                .stdin(Stdio::null())
                .stdout(File::create(&out).expect("fio stdout file"))
                .stderr(File::create(&err).expect("fio stderr file"))
                .spawn()
                .expect("start fio"),
        );
        FioRun { proc, out, err }
    }

    pub fn child(&mut self) -> &mut Child {
        self.proc.child()
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// `what`, then everything fio printed: for a panic message.
    pub fn output(&self, what: &str) -> String {
        format!("{what}\n--- fio stdout ---\n{}\n--- fio stderr ---\n{}", self.stdout(), self.stderr())
    }

    /// Waits until `written()` (the server's count of bytes written) passes `before`: the
    /// faults are timed from the first write the server performs. Fails the test if fio
    /// exits first or nothing is written in 60 s.
    pub fn wait_for_writes(&mut self, what: &str, before: u64, mut written: impl FnMut() -> u64) {
        let start = Instant::now();
        while written() <= before {
            if let Some(st) = self.child().try_wait().expect("poll fio") {
                panic!("{}", self.output(&format!("{what}: fio exited ({st}) before writing anything")));
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{}",
                self.output(&format!("{what}: fio wrote nothing in 60 s"))
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
