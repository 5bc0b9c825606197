//! TCP and unix-domain sockets behind one type each, so the connection code does not care
//! which kind the server listens on.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use rustix::event::{poll, PollFd, PollFlags, Timespec};

use super::Listen;

/// One accepted connection.
#[derive(Debug)]
pub(super) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    /// `None` blocks forever. A zero duration (which std refuses) is raised to 1 ms.
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        let t = t.map(|d| d.max(Duration::from_millis(1)));
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
        }
    }

    /// As [`Stream::set_read_timeout`], for sends.
    pub fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        let t = t.map(|d| d.max(Duration::from_millis(1)));
        match self {
            Stream::Tcp(s) => s.set_write_timeout(t),
            Stream::Unix(s) => s.set_write_timeout(t),
        }
    }

    /// Applies to every clone of this socket: that is how one thread wakes another
    /// blocked in a read or write on it.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.shutdown(how),
            Stream::Unix(s) => s.shutdown(how),
        }
    }

    /// Makes an accepted socket what the connection code expects: blocking (reads and
    /// writes carry timeouts instead), and for TCP without Nagle's delay, which would hold
    /// back small replies.
    pub fn configure(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => {
                s.set_nonblocking(false)?;
                s.set_nodelay(true)
            }
            Stream::Unix(s) => s.set_nonblocking(false),
        }
    }

    /// Non-blocking mode, for a thread that polls (it applies to every clone).
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
        }
    }

    /// The peer, for logs.
    pub fn peer(&self) -> String {
        match self {
            Stream::Tcp(s) => s.peer_addr().map_or_else(|_| "tcp peer".into(), |a| a.to_string()),
            Stream::Unix(_) => "unix peer".into(),
        }
    }
}

impl AsFd for Stream {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Stream::Tcp(s) => s.as_fd(),
            Stream::Unix(s) => s.as_fd(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

/// The listening socket. A unix socket's file is removed when this is dropped, if it is
/// still the one this listener created.
#[derive(Debug)]
pub(super) enum Listener {
    Tcp(TcpListener),
    Unix { listener: UnixListener, path: PathBuf, identity: (u64, u64) },
}

impl Listener {
    pub fn bind(listen: &Listen) -> anyhow::Result<Listener> {
        let listener = match listen {
            Listen::Tcp(addr) => Listener::Tcp(TcpListener::bind(addr).with_context(|| format!("binding {addr}"))?),
            Listen::Unix(path) => {
                remove_stale_socket(path)?;
                let listener = UnixListener::bind(path).with_context(|| format!("binding {}", path.display()))?;
                let meta = std::fs::metadata(path).with_context(|| format!("stat {}", path.display()))?;
                Listener::Unix { listener, path: path.clone(), identity: (meta.dev(), meta.ino()) }
            }
        };
        // Non-blocking so that an accept after a readiness poll never hangs when the
        // peer has already gone (the accept loop must keep noticing `stop`).
        match &listener {
            Listener::Tcp(l) => l.set_nonblocking(true)?,
            Listener::Unix { listener, .. } => listener.set_nonblocking(true)?,
        }
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
fn remove_stale_socket(path: &Path) -> anyhow::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("stat {}", path.display())),
    };
    if !meta.file_type().is_socket() {
        bail!("{} exists and is not a socket; not removing it", path.display());
    }
    if UnixStream::connect(path).is_ok() {
        bail!("{} is in use by a running server", path.display());
    }
    std::fs::remove_file(path).with_context(|| format!("removing stale socket {}", path.display()))
}
