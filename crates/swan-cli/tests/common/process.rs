//! Tools and child processes: finding a tool (loudly), running a command under a deadline,
//! judging how it ended, and a guard that kills a child whatever happens to the test.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// The full path of `tool`, or a loud failure naming the Debian package that provides it.
pub fn require(tool: &str, package: &str) -> PathBuf {
    find(tool).unwrap_or_else(|| panic!("`{tool}` not found: this test needs it; install the Debian package {package}"))
}

pub fn find(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from));
    dirs.map(|d| d.join(tool)).find(|p| p.is_file())
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn describe(what: &str, out: &Output) -> String {
    format!(
        "{what}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

pub fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Runs `cmd` to completion; kills it and fails if it is still running after `deadline`.
pub fn run(cmd: &mut Command, what: &str, deadline: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let stdout = drain(child.stdout.take().expect("stdout"));
    let stderr = drain(child.stderr.take().expect("stderr"));
    let status = wait_deadline(&mut child, deadline).unwrap_or_else(|| {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{what}: still running after {deadline:?}: killed");
    });
    Output { status, stdout: stdout.join().expect("stdout reader"), stderr: stderr.join().expect("stderr reader") }
}

/// Runs `cmd`, which must succeed; returns its stdout.
pub fn ok(cmd: &mut Command, what: &str, deadline: Duration) -> String {
    text(&run_ok(cmd, what, deadline).stdout)
}

/// Runs `cmd`, which must succeed; returns its output.
pub fn run_ok(cmd: &mut Command, what: &str, deadline: Duration) -> Output {
    let out = run(cmd, what, deadline);
    assert!(out.status.success(), "{}", describe(what, &out));
    out
}

/// Runs `cmd`, which must fail cleanly (see [`assert_failed`]); returns its output.
pub fn run_fails(cmd: &mut Command, what: &str, deadline: Duration) -> Output {
    let out = run(cmd, what, deadline);
    assert_failed(what, &out);
    out
}

/// A refusal is an exit status and a message: never a panic, an abort or a signal.
pub fn assert_no_panic(what: &str, out: &Output) {
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"), "panic: {}", describe(what, out));
    // 101 is a panic's exit status; 134 an abort (e.g. stack overflow); no code, a signal.
    assert!(!matches!(out.status.code(), Some(101 | 134) | None), "crashed: {}", describe(what, out));
}

/// The command failed, and cleanly ([`assert_no_panic`]).
pub fn assert_failed(what: &str, out: &Output) {
    assert!(!out.status.success(), "expected failure: {}", describe(what, out));
    assert_no_panic(what, out);
}

/// Waits for `child` to exit, for at most `deadline`.
pub fn wait_deadline(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for a child") {
            return Some(status);
        }
        if start.elapsed() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A child process killed (SIGKILL) and reaped when dropped, whatever happened.
pub struct Guard {
    pub child: Option<Child>,
}

impl Guard {
    pub fn new(child: Child) -> Self {
        Self { child: Some(child) }
    }

    pub fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("a live child")
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
