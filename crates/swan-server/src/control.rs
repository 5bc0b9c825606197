//! The control socket: a unix socket next to a running server. A client sends one line and
//! gets one line of JSON back:
//!
//! - `status` (or nothing): the engine's [`crate::engine::StatusReport`] (`swan status`),
//!   with `export` (this array's export: name, read-only flag, allow-list) and `exports`
//!   (every export its server serves, each with its own control socket);
//! - `fail N [@DEV:INO]`: mark member N failed (`swan fail`);
//! - `replace N [@DEV:INO] PATH`: rebuild failed member N onto PATH while serving (`swan replace`).
//!
//! The last two answer `{"ok": "..."}` or `{"error": "..."}`. `@DEV:INO` names the member
//! file the client was given; a server that does not hold it refuses. The socket is the
//! owner's only (mode 0600): whoever may fail a member may as well own the members.
//!
//! The socket lives at `$SWAN_RUN_DIR/swan-<uuid>.sock` (default `/tmp`), so `swan status`
//! finds a server from any member's superblock. A copy of an array (`cp -r`) has the same
//! UUID: its server, finding that name answered by a live server, takes
//! `swan-<uuid>.<n>.sock`, and clients pick among them the server that holds the member file
//! they were given (its status names each member's device and inode).

use crate::engine::{CommandError, Engine};
use crate::member::{BadFileId, FileId};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::FileTypeExt;
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

/// Where control sockets live: `$SWAN_RUN_DIR`, default `/tmp`.
pub fn run_dir() -> PathBuf {
    std::env::var_os("SWAN_RUN_DIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
}

/// The first choice of socket for array `uuid`; [`candidates`] lists every one in use.
pub fn socket_path(uuid: &str) -> PathBuf {
    socket_name(uuid, 0)
}

/// `swan-<uuid>.sock`, then `swan-<uuid>.<n>.sock` for the servers of copies of one array.
fn socket_name(uuid: &str, n: u32) -> PathBuf {
    match n {
        0 => run_dir().join(format!("swan-{uuid}.sock")),
        n => run_dir().join(format!("swan-{uuid}.{n}.sock")),
    }
}

/// Sockets a server of array `uuid` may be listening on, the first choice first: a copy of
/// an array (`cp -r`) has its UUID, and each served copy has a socket of its own.
pub fn candidates(uuid: &str) -> Vec<PathBuf> {
    let prefix = format!("swan-{uuid}.");
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(run_dir())
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let rest = name.strip_prefix(&prefix)?.strip_suffix("sock")?;
            let n = match rest {
                "" => 0,
                r => r.strip_suffix('.')?.parse().ok().filter(|&n| n > 0)?,
            };
            Some((n, socket_name(uuid, n)))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

/// How many socket names a UUID may take: one per served copy of the array.
const MAX_SOCKETS: u32 = 64;

/// A control socket bound by this server: its path and which file it is, so that at stop
/// the server removes its own socket and never one another server has since bound there.
pub struct Bound {
    listener: UnixListener,
    pub path: PathBuf,
    id: FileId,
}

/// Bind the control socket of array `uuid`: the first name no live server answers on. A
/// socket file nobody answers on (left by a server that died) is taken over; one a live
/// server answers on (the server of a copy of this array) is left alone. The run directory
/// is locked meanwhile, so two servers starting at once do not both take one stale name.
pub fn bind(uuid: &str) -> std::io::Result<Bound> {
    let dir = run_dir();
    let lock = std::fs::File::open(&dir)?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)?;
    for n in 0..MAX_SOCKETS {
        let path = socket_name(uuid, n);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => continue,
            Ok(meta) if !meta.file_type().is_socket() => continue,
            Ok(_) => match UnixStream::connect(&path) {
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    std::fs::remove_file(&path)?;
                }
                Err(_) => continue,
            },
        }
        let listener = match UnixListener::bind(&path) {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(e) => return Err(e),
        };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        let id = FileId::of(&path)?;
        return Ok(Bound { listener, path, id });
    }
    Err(std::io::Error::other(format!("{MAX_SOCKETS} servers of array {uuid} already answer in {}", dir.display())))
}

/// Serve status on `bound` until `stop` is set. Runs on its own thread. `exports` are every
/// export of the server, `this` the index of `engine`'s among them.
pub fn serve(
    bound: Bound,
    engine: Arc<Engine>,
    exports: Arc<Vec<ExportEntry>>,
    this: usize,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let Bound { listener, path, id } = bound;
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
        // Only the socket this server bound: another server may have bound the name since
        // (had this one's been removed by hand), and its socket is not ours to remove.
        if FileId::of(&path).is_ok_and(|now| now == id) {
            let _ = std::fs::remove_file(&path);
        }
    })
}

/// The answer to one request line.
fn answer(engine: &Engine, exports: &[ExportEntry], this: usize, request: &str) -> Option<serde_json::Value> {
    let mut words = request.splitn(3, ' ');
    let verb = words.next().unwrap_or("");
    let member = |w: Option<&str>| w.and_then(|w| w.parse::<u32>().ok()).ok_or("expected a member index");
    let result: Result<String, ControlError> = match verb {
        "" | "status" => {
            let mut v = serde_json::to_value(engine.status()?).ok()?;
            if let Some(o) = v.as_object_mut() {
                o.insert("export".into(), serde_json::to_value(exports.get(this)).ok()?);
                o.insert("exports".into(), serde_json::to_value(exports).ok()?);
            }
            return Some(v);
        }
        "fail" => match (member(words.next()), addressed(words.next().unwrap_or(""))) {
            (Ok(m), Ok((via, ""))) => holds(engine, via).and_then(|()| Ok(engine.fail(m)?)),
            _ => Err(ControlError::FailUsage),
        },
        "replace" => match (member(words.next()), addressed(words.next().unwrap_or(""))) {
            (Ok(m), Ok((via, p))) if !p.is_empty() => {
                holds(engine, via).and_then(|()| Ok(engine.replace(m, p.into())?))
            }
            _ => Err(ControlError::ReplaceUsage),
        },
        other => Err(ControlError::Unknown(other.to_string())),
    };
    Some(match result {
        Ok(msg) => serde_json::json!({ "ok": msg }),
        Err(e) => serde_json::json!({ "error": e.to_string() }),
    })
}

/// Why a `fail` or `replace` request was refused: its `{"error": ...}` answer.
#[derive(Debug, thiserror::Error)]
enum ControlError {
    #[error("usage: fail INDEX [@DEV:INO]")]
    FailUsage,
    #[error("usage: replace INDEX [@DEV:INO] PATH")]
    ReplaceUsage,
    #[error("unknown request {0:?} (status, fail N, replace N PATH)")]
    Unknown(String),
    #[error("the engine did not answer")]
    NoAnswer,
    /// The request was made through member file `via`, which this server does not hold.
    #[error(
        "refused: this server of array {uuid} does not hold the member the request was made through (file {via}); \
         its members are {}: the request was meant for the server of another copy of the array",
        .members.join(", ")
    )]
    NotHeld { uuid: String, via: FileId, members: Vec<String> },
    #[error(transparent)]
    Command(#[from] CommandError),
}

/// The member a request says it is addressed through (`@DEV:INO`, first), and the rest.
fn addressed(rest: &str) -> Result<(Option<FileId>, &str), BadFileId> {
    match rest.strip_prefix('@') {
        Some(r) => {
            let (id, rest) = r.split_once(' ').unwrap_or((r, ""));
            Ok((Some(id.parse()?), rest))
        }
        None => Ok((None, rest)),
    }
}

/// Refuse a request addressed through a file this server does not hold as a member: it was
/// meant for the server of another copy of the array (copies share the UUID).
fn holds(engine: &Engine, via: Option<FileId>) -> Result<(), ControlError> {
    let Some(via) = via else { return Ok(()) };
    let status = engine.status().ok_or(ControlError::NoAnswer)?;
    if status.members.iter().any(|m| m.file == Some(via)) {
        return Ok(());
    }
    let members = status.members.iter().map(|m| m.path.clone()).collect();
    Err(ControlError::NotHeld { uuid: status.uuid, via, members })
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
