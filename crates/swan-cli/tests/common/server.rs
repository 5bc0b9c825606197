//! A guarded `swan serve` on an ephemeral loopback port: its log, its address, and the two
//! ways it ends (a clean SIGTERM stop that must say so, or SIGKILL).

use super::{describe, run, wait_deadline, Guard, SWAN};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running `swan serve` on 127.0.0.1 (an ephemeral port: its stderr says which).
pub struct Server {
    proc: Guard,
    addr: String,
    log: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
    /// The process id, kept for what reads `/proc` through `&self`.
    id: u32,
}

impl Server {
    pub fn start(run_dir: &Path, members: &[PathBuf]) -> Server {
        Server::start_with(run_dir, members, &[])
    }

    /// `swan serve` with more flags (`--tls ...`, `--read-only`, ...).
    pub fn start_with(run_dir: &Path, members: &[PathBuf], flags: &[&str]) -> Server {
        let mut cmd = Command::new(SWAN);
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .args(flags)
            .args(members)
            .env("SWAN_RUN_DIR", run_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut proc = Guard::new(cmd.spawn().expect("start swan serve"));
        let stderr = proc.child().stderr.take().expect("server stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let sink = Arc::clone(&log);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                // Logged before the address is handed over: a test that reads the log as soon
                // as the server is up must find the "serving on" line in it.
                {
                    let mut l = sink.lock().expect("server log");
                    l.push_str(&line);
                    l.push('\n');
                }
                if let Some(rest) = line.split("serving on ").nth(1) {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or_default().to_string());
                }
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(a) => a,
            Err(e) => {
                let status = proc.child().try_wait().ok().flatten();
                panic!("swan serve did not start serving ({e}; exit {status:?}):\n{}", log.lock().expect("log"));
            }
        };
        assert!(addr.parse::<SocketAddr>().is_ok(), "bad listen address {addr:?}:\n{}", log.lock().expect("log"));
        let id = proc.child().id();
        Server { proc, addr, log, reader: Some(reader), id }
    }

    pub fn uri(&self) -> String {
        format!("nbd://{}", self.addr)
    }

    /// `IP:PORT`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.parse::<SocketAddr>().unwrap_or_else(|e| panic!("listen address {:?}: {e}", self.addr)).port()
    }

    /// `IP:PORT` of `/metrics`, for a server started with `--metrics` (its stderr says it
    /// before the "serving on" line).
    pub fn metrics_addr(&self) -> String {
        let log = self.log();
        log.split("metrics on http://")
            .nth(1)
            .and_then(|rest| rest.split("/metrics").next())
            .unwrap_or_else(|| panic!("no 'metrics on http://' in the server's log:\n{log}"))
            .to_string()
    }

    pub fn pid(&mut self) -> u32 {
        self.proc.child().id()
    }

    /// Fails the test if the server has exited.
    pub fn assert_alive(&mut self, after: &str) {
        if let Some(status) = self.proc.child().try_wait().expect("wait for swan serve") {
            std::thread::sleep(Duration::from_millis(100));
            panic!("swan serve exited ({status}) after {after}:\n{}", self.log());
        }
    }

    pub fn log(&self) -> String {
        self.log.lock().expect("server log").clone()
    }

    /// Each of the server's threads: its name, state, where in the kernel it waits and (as
    /// root) its kernel stack. For a test that finds the server not answering: a thread
    /// stuck in a member's I/O shows as `D` with the file system's wait in its stack.
    pub fn threads(&self) -> String {
        let pid = self.id;
        let mut out = String::new();
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return format!("(no /proc/{pid}/task: the server has exited)\n");
        };
        for t in tasks.flatten() {
            let dir = t.path();
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
            let stat = read("stat");
            // The state is the field after the parenthesised name.
            let state = stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()).unwrap_or("?").to_string();
            out.push_str(&format!(
                "thread {} {:?} state {state} wchan {}\n",
                t.file_name().to_string_lossy(),
                read("comm").trim(),
                read("wchan").trim()
            ));
            if state == "D" {
                for line in read("stack").lines() {
                    out.push_str(&format!("    {line}\n"));
                }
            }
        }
        out
    }

    /// Journal records the server said it rolled forward at startup.
    pub fn replayed(&self) -> u64 {
        let log = self.log();
        log.split(" journal record(s) rolled forward")
            .next()
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no 'journal record(s) rolled forward' in the server's log:\n{log}"))
    }

    /// SIGKILL: the process dies wherever it is.
    pub fn kill9(mut self) {
        let child = self.proc.child();
        child.kill().expect("kill -9 the server");
        let status = wait_deadline(child, Duration::from_secs(30)).expect("the killed server is reaped");
        assert!(status.code().is_none(), "the server exited by itself ({status}) before the kill:\n{}", self.log());
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }

    /// SIGTERM, then the clean stop must finish (checkpoint written) and exit 0. Returns the
    /// server's whole log.
    pub fn stop(mut self) -> String {
        let pid = self.proc.child().id().to_string();
        let out = run(Command::new("kill").args(["-TERM", &pid]), "kill -TERM the server", Duration::from_secs(10));
        assert!(out.status.success(), "{}", describe("kill -TERM", &out));
        let status = wait_deadline(self.proc.child(), Duration::from_secs(120))
            .unwrap_or_else(|| panic!("swan serve still running 120 s after SIGTERM:\n{}", self.log()));
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        let log = self.log();
        assert!(status.success(), "swan serve exited {status} after SIGTERM:\n{log}");
        assert!(log.contains("stopped cleanly"), "no clean stop in the server's log:\n{log}");
        assert!(!log.contains("panicked"), "swan serve panicked:\n{log}");
        log
    }
}

/// A test failing while the server runs shows the server's log: what the client saw (an
/// ENOSPC, say) has its cause there (a full file system under the members, say).
impl Drop for Server {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = self.log();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("--- the server's log (last {} lines) ---", tail.len());
            for line in tail.iter().rev() {
                eprintln!("{line}");
            }
        }
    }
}
