//! The listening socket, TCP or unix-domain, behind one type, so the connection code does not
//! care which kind the server listens on; accepted connections are [`swan_nbd::stream::Stream`]s.

use std::io;
use std::net::TcpListener;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags, Timespec};

use super::{Listen, ServerError};

/// One accepted connection (the socket type the NBD client uses too).
pub(super) use swan_nbd::stream::Stream;

/// The listening socket. A unix socket's file is removed when this is dropped, if it is
/// still the one this listener created.
#[derive(Debug)]
pub(super) enum Listener {
    Tcp(TcpListener),
    Unix { listener: UnixListener, path: PathBuf, identity: (u64, u64) },
}

impl Listener {
    pub fn bind(listen: &Listen) -> Result<Listener, ServerError> {
        let listener = match listen {
            Listen::Tcp(addr) => {
                let bound = TcpListener::bind(addr).map_err(|source| ServerError::BindTcp { addr: *addr, source })?;
                Listener::Tcp(bound)
            }
            Listen::Unix(path) => {
                remove_stale_socket(path)?;
                let bound = UnixListener::bind(path);
                let listener = bound.map_err(|source| ServerError::BindUnix { path: path.clone(), source })?;
                let meta =
                    std::fs::metadata(path).map_err(|source| ServerError::Stat { path: path.clone(), source })?;
                Listener::Unix { listener, path: path.clone(), identity: (meta.dev(), meta.ino()) }
            }
        };
        // Non-blocking so that an accept after a readiness poll never hangs when the
        // peer has already gone (the accept loop must keep noticing `stop`).
        let nonblocking = match &listener {
            Listener::Tcp(l) => l.set_nonblocking(true),
            Listener::Unix { listener, .. } => listener.set_nonblocking(true),
        };
        nonblocking.map_err(ServerError::NonBlocking)?;
        Ok(listener)
    }

    /// `IP:PORT` for TCP (the real port when bound to port 0), the path for a unix socket.
    pub fn local_addr(&self) -> String {
        match self {
            Listener::Tcp(l) => l.local_addr().map_or_else(|e| format!("<unknown: {e}>"), |a| a.to_string()),
            Listener::Unix { path, .. } => path.display().to_string(),
        }
    }

    /// Waits up to `timeout` for a pending connection; `Ok(false)` on timeout or signal.
    pub fn wait_readable(&self, timeout: Duration) -> io::Result<bool> {
        let fd = match self {
            Listener::Tcp(l) => l.as_fd(),
            Listener::Unix { listener, .. } => listener.as_fd(),
        };
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        let ts = Timespec { tv_sec: timeout.as_secs() as _, tv_nsec: timeout.subsec_nanos() as _ };
        match poll(&mut fds, Some(&ts)) {
            Ok(n) => Ok(n > 0),
            Err(rustix::io::Errno::INTR) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Accepts one connection, not yet configured (see [`Stream::configure`]).
    pub fn accept(&self) -> io::Result<Stream> {
        Ok(match self {
            Listener::Tcp(l) => Stream::Tcp(l.accept()?.0),
            Listener::Unix { listener, .. } => Stream::Unix(listener.accept()?.0),
        })
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix { path, identity, .. } = self {
            // Only our own socket: another server may have replaced it since.
            let ours = std::fs::symlink_metadata(&*path).is_ok_and(|m| (m.dev(), m.ino()) == *identity);
            if ours {
                let _ = std::fs::remove_file(&*path);
            }
        }
    }
}

/// Removes a socket file left behind by a server that is gone. Refuses to touch anything
/// that is not a socket, or a socket some process still accepts connections on.
fn remove_stale_socket(path: &Path) -> Result<(), ServerError> {
    let path_buf = || path.to_path_buf();
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(ServerError::Stat { path: path_buf(), source }),
    };
    if !meta.file_type().is_socket() {
        return Err(ServerError::NotASocket { path: path_buf() });
    }
    if UnixStream::connect(path).is_ok() {
        return Err(ServerError::SocketInUse { path: path_buf() });
    }
    std::fs::remove_file(path).map_err(|source| ServerError::RemoveStale { path: path_buf(), source })
}
