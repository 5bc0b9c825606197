//! The control socket: a unix socket next to a running server. A client sends one line and
//! gets one line of JSON back:
//!
//! - `status` (or nothing): the engine's [`crate::engine::StatusReport`] (`swan status`),
//!   with `export` (this array's export: name, read-only flag, allow-list) and `exports`
//!   (every export its server serves, each with its own control socket);
//! - `fail N`: mark member N failed (`swan fail`);
//! - `replace N PATH`: rebuild failed member N onto PATH while serving (`swan replace`).
//!
//! The last two answer `{"ok": "..."}` or `{"error": "..."}`. The socket is the owner's
//! only (mode 0600): whoever may fail a member may as well own the members.
//!
//! The socket lives at `$SWAN_RUN_DIR/swan-<uuid>.sock` (default `/tmp`), so `swan status`
//! finds a server from any member's superblock.

use crate::engine::Engine;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// One export of a server, as `swan status` shows it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct ExportEntry {
    pub name: String,
    /// The array's UUID; its control socket is [`socket_path`] of it.
    pub uuid: String,
    pub read_only: bool,
    /// Client-certificate common names that may open it; empty: every client served.
    pub allow_subjects: Vec<String>,
    pub control: PathBuf,
}

pub fn socket_path(uuid: &str) -> PathBuf {
    let dir = std::env::var_os("SWAN_RUN_DIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    dir.join(format!("swan-{uuid}.sock"))
}

/// Serve status on `path` until `stop` is set. Runs on its own thread. `exports` are every
/// export of the server, `this` the index of `engine`'s among them.
pub fn serve(
    path: PathBuf,
    engine: Arc<Engine>,
    exports: Arc<Vec<ExportEntry>>,
    this: usize,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    listener.set_nonblocking(true)?;
    std::thread::Builder::new().name("swan-control".into()).spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((mut s, _)) => {
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
                    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                    let mut request = String::new();
                    // One short line; a client that sends nothing (an older `swan status`) asks for status.
                    let _ = BufReader::new((&s).take(4096)).read_line(&mut request);
                    if let Some(answer) = answer(&engine, &exports, this, request.trim()) {
                        let mut line = serde_json::to_vec(&answer).unwrap_or_default();
                        line.push(b'\n');
                        let _ = s.write_all(&line);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        let _ = std::fs::remove_file(&path);
    })
}

/// The answer to one request line.
fn answer(engine: &Engine, exports: &[ExportEntry], this: usize, request: &str) -> Option<serde_json::Value> {
    let mut words = request.splitn(3, ' ');
    let verb = words.next().unwrap_or("");
    let member = |w: Option<&str>| w.and_then(|w| w.parse::<u32>().ok()).ok_or("expected a member index");
    let result: Result<String, String> = match verb {
        "" | "status" => {
            let mut v = serde_json::to_value(engine.status()?).ok()?;
            if let Some(o) = v.as_object_mut() {
                o.insert("export".into(), serde_json::to_value(exports.get(this)).ok()?);
                o.insert("exports".into(), serde_json::to_value(exports).ok()?);
            }
            return Some(v);
        }
        "fail" => member(words.next()).map_err(String::from).and_then(|m| engine.fail(m)),
        "replace" => match (member(words.next()), words.next()) {
            (Ok(m), Some(p)) if !p.is_empty() => engine.replace(m, p.into()),
            _ => Err("usage: replace INDEX PATH".into()),
        },
        other => Err(format!("unknown request {other:?} (status, fail N, replace N PATH)")),
    };
    Some(match result {
        Ok(msg) => serde_json::json!({ "ok": msg }),
        Err(msg) => serde_json::json!({ "error": msg }),
    })
}

/// Ask the server listening on `path` for its status (as JSON).
pub fn query(path: &Path) -> std::io::Result<serde_json::Value> {
    request(path, "status")
}

/// Send one request line to the server listening on `path`; its answer (as JSON).
pub fn request(path: &Path, line: &str) -> std::io::Result<serde_json::Value> {
    let mut s = UnixStream::connect(path)?;
    s.write_all(format!("{line}\n").as_bytes())?;
    s.set_read_timeout(Some(Duration::from_secs(90)))?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line)?;
    serde_json::from_str(&line).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}
