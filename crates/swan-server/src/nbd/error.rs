//! What can go wrong in the NBD front: setting the server up ([`ServerError`], for the
//! operator) and one connection ([`ConnError`], for the log). OS and TLS errors are the
//! source of the error that says what was being done; [`Causes`] prints the whole chain.

use std::error::Error;
use std::fmt;
use std::io;
use std::net::{AddrParseError, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use rustls::pki_types::pem;
use swan_nbd::consts::MAX_STRING_LEN;
use swan_nbd::DecodeError;

/// Why the server could not start (its address, socket, TLS certificate and key, or the
/// export it was given) or stopped accepting connections.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("empty unix socket path in {0:?}")]
    EmptyUnixPath(String),
    #[error("{text:?} is neither IP:PORT nor unix:PATH")]
    BadAddress {
        text: String,
        #[source]
        source: AddrParseError,
    },
    #[error("binding {addr}")]
    BindTcp {
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },
    #[error("binding {}", .path.display())]
    BindUnix {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("stat {}", .path.display())]
    Stat {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} exists and is not a socket; not removing it", .path.display())]
    NotASocket { path: PathBuf },
    #[error("{} is in use by a running server", .path.display())]
    SocketInUse { path: PathBuf },
    #[error("removing stale socket {}", .path.display())]
    RemoveStale {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("making the listening socket non-blocking")]
    NonBlocking(#[source] io::Error),
    #[error("polling the listener")]
    Poll(#[source] io::Error),
    #[error("export name must be at most {MAX_STRING_LEN} bytes without NUL")]
    ExportName,
    #[error("two exports are named {0:?}: a client could not say which it means")]
    DuplicateExport(String),
    #[error("no export to serve")]
    NoExport,
    /// The export's sizes break the protocol's rules (`why`, from [`swan_nbd::ExportLimits::check`]).
    #[error("export {name:?}: {why}")]
    ExportLimits { name: String, why: &'static str },
    #[error("reading the TLS certificate {}", .path.display())]
    ReadCertificate {
        path: PathBuf,
        #[source]
        source: pem::Error,
    },
    #[error("parsing the TLS certificate {}", .path.display())]
    ParseCertificate {
        path: PathBuf,
        #[source]
        source: pem::Error,
    },
    #[error("{}: no PEM certificate in it", .path.display())]
    NoCertificate { path: PathBuf },
    #[error("reading a PEM private key from {}", .path.display())]
    ReadKey {
        path: PathBuf,
        #[source]
        source: pem::Error,
    },
    #[error("TLS protocol versions")]
    TlsVersions(#[source] rustls::Error),
    #[error("the TLS certificate and key do not go together")]
    CertificateAndKey(#[source] rustls::Error),
    #[error("reading the client CA file {}", .path.display())]
    ReadClientCa {
        path: PathBuf,
        #[source]
        source: pem::Error,
    },
    #[error("parsing the client CA file {}", .path.display())]
    ParseClientCa {
        path: PathBuf,
        #[source]
        source: pem::Error,
    },
    #[error("{}: no PEM certificate in it (the client CA file must hold the CA's certificate)", .path.display())]
    NoClientCa { path: PathBuf },
    #[error("{}: a certificate in it cannot be a CA for client certificates", .path.display())]
    BadClientCa {
        path: PathBuf,
        #[source]
        source: rustls::Error,
    },
    #[error("{}: cannot verify client certificates with it", .path.display())]
    ClientVerifier {
        path: PathBuf,
        #[source]
        source: rustls::server::VerifierBuilderError,
    },
    #[error("--tls-allow-subject {0:?}: an empty name allows no one; give a common name")]
    BlankAllowedSubject(String),
}

/// Why one connection was dropped (its TLS pump included). It ends that connection only,
/// and is logged with its causes.
#[derive(Debug, thiserror::Error)]
pub(super) enum ConnError {
    /// Anything that ended the connection before transmission.
    #[error("handshake")]
    Handshake(#[source] Box<ConnError>),
    #[error("handshake timed out")]
    HandshakeTimeout,
    #[error("server stopping")]
    Stopping,
    #[error("client closed the connection")]
    ClientClosed,
    #[error("NBD_OPT_STARTTLS acknowledged without TLS configured")]
    StartTlsUnconfigured,
    #[error("client closed the connection inside a request header")]
    ClosedInHeader,
    /// A request header out of step with the protocol: nothing after it can be trusted.
    #[error("{0}; closing")]
    BadRequest(DecodeError),
    #[error("reply thread gone")]
    ReplyThreadGone,
    /// An OS error on the connection, and what was being done (`"receiving"`, …).
    #[error("{doing}")]
    Io {
        doing: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("starting a TLS session")]
    TlsStart(#[source] rustls::Error),
    #[error("TLS session failed")]
    Tls(#[source] rustls::Error),
    #[error("the client closed the connection during the TLS handshake")]
    ClosedInTlsHandshake,
    #[error("the client read nothing for {0:?}")]
    ClientStalled(Duration),
    #[error("the client's socket accepts nothing")]
    SocketAcceptsNothing,
}

impl ConnError {
    /// For `map_err`: an OS error met while `doing` something on the connection.
    pub(super) fn io(doing: &'static str) -> impl FnOnce(io::Error) -> ConnError {
        move |source| ConnError::Io { doing, source }
    }
}

/// An error and its causes, `: `-separated, as the CLI prints errors: the logs of the NBD
/// front print what a connection met this way, so that a failed read still says why.
pub(super) struct Causes<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for Causes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_connection_is_logged_with_every_cause_once() {
        let e = ConnError::Handshake(Box::new(ConnError::io("receiving")(io::Error::other("connection reset"))));
        assert_eq!(Causes(&e).to_string(), "handshake: receiving: connection reset");
        let e: ServerError = "localhost".parse::<crate::nbd::Listen>().unwrap_err();
        assert_eq!(e.to_string(), "\"localhost\" is neither IP:PORT nor unix:PATH");
        assert_eq!(
            Causes(&e).to_string(),
            "\"localhost\" is neither IP:PORT nor unix:PATH: invalid socket address syntax"
        );
    }
}
