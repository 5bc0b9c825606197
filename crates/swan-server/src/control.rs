//! The control socket: a unix socket next to a running server that answers every
//! connection with one line of JSON, the engine's [`crate::engine::StatusReport`]. `swan status` reads it.
//!
//! The socket lives at `$SWAN_RUN_DIR/swan-<uuid>.sock` (default `/tmp`), so `swan status`
//! finds a server from any member's superblock.

use crate::engine::Engine;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub fn socket_path(uuid: &str) -> PathBuf {
    let dir = std::env::var_os("SWAN_RUN_DIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    dir.join(format!("swan-{uuid}.sock"))
}

/// Serve status on `path` until `stop` is set. Runs on its own thread.
pub fn serve(
    path: PathBuf,
    engine: Arc<Engine>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)?;
    listener.set_nonblocking(true)?;
    std::thread::Builder::new().name("swan-control".into()).spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((mut s, _)) => {
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
                    if let Some(report) = engine.status() {
                        let mut line = serde_json::to_vec(&report).unwrap_or_default();
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

/// Ask the server listening on `path` for its status (as JSON).
pub fn query(path: &Path) -> std::io::Result<serde_json::Value> {
    let s = UnixStream::connect(path)?;
    s.set_read_timeout(Some(Duration::from_secs(15)))?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line)?;
    serde_json::from_str(&line).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}
