//! What the kill -9 soak and the fault soak share about fio's verify runs: reading its JSON
//! report, and telling whether a `--verify_only` run found anything wrong.
//!
//! Both soaks know what the server acknowledged the way fio does: the writer runs with
//! `--verify_state_save=1`, which records how many writes each job issued and which of its
//! last `iodepth` had completed (been acknowledged); a later run of the same job with
//! `--verify_only --verify_state_load=1` replays the write sequence and reads back every
//! acknowledged write, checking its header (offset, per-write seed) and CRC32C.

use serde_json::Value;

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
