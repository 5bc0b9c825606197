//! Who may connect over TLS: client certificates (`--tls-verify-peer`).
//!
//! A client must present a certificate that chains to the CA given to the server (rustls'
//! `WebPkiClientVerifier`: signature, validity dates, the clientAuth key usage); a client
//! without one is refused inside the TLS handshake, before the connection code has seen a
//! byte of NBD. An optional allow-list then names which certificates the CA signed may
//! connect, by the common name (CN) of their subject. It is checked in the same place,
//! during the handshake, so a client not on it is refused exactly like one without a
//! certificate, with the TLS alert `certificate_unknown`. A subject with several CNs is an
//! ambiguous identity: it passes a list only if every one of its CNs is on it.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, OtherError, RootCertStore, SignatureScheme};

use super::ServerError;

/// Which clients the server accepts over TLS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientAuth {
    /// PEM bundle of the CA certificates a client certificate must chain to.
    pub ca: PathBuf,
    /// Subject common names allowed to connect; empty: every certificate the CA signed.
    pub allow_subjects: Vec<String>,
}

/// The verifier for `auth`: the CA file's certificates as trust anchors, and the allow-list
/// on top when there is one.
pub(super) fn verifier(
    auth: &ClientAuth,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<dyn ClientCertVerifier>, ServerError> {
    let path = || auth.ca.clone();
    let mut roots = RootCertStore::empty();
    let certs =
        CertificateDer::pem_file_iter(&auth.ca).map_err(|source| ServerError::ReadClientCa { path: path(), source })?;
    for cert in certs {
        let cert = cert.map_err(|source| ServerError::ParseClientCa { path: path(), source })?;
        roots.add(cert).map_err(|source| ServerError::BadClientCa { path: path(), source })?;
    }
    if roots.is_empty() {
        return Err(ServerError::NoClientCa { path: path() });
    }
    let webpki = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|source| ServerError::ClientVerifier { path: path(), source })?;
    if auth.allow_subjects.is_empty() {
        return Ok(webpki);
    }
    if let Some(blank) = auth.allow_subjects.iter().find(|n| n.trim().is_empty()) {
        return Err(ServerError::BlankAllowedSubject(blank.clone()));
    }
    Ok(Arc::new(AllowList { inner: webpki, names: auth.allow_subjects.clone() }))
}

/// What an operator should read in the log when a client was refused for its certificate,
/// in words (none for other TLS failures).
pub(super) fn refusal(e: &rustls::Error) -> Option<String> {
    let bad = |why: &str| Some(format!("the client's certificate {why}"));
    match e {
        rustls::Error::NoCertificatesPresented => Some("the client presented no certificate".into()),
        rustls::Error::InvalidCertificate(c) => match c {
            CertificateError::Other(other) => Some(other.to_string()),
            // No CA of that name, or one of that name whose key did not sign it.
            CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                bad("is not signed by the --tls-client-ca CA (an unknown or untrusted CA)")
            }
            CertificateError::ExpiredContext { time, not_after } => {
                bad(&format!("expired at {} (the server's clock says {})", when(not_after), when(time)))
            }
            CertificateError::Expired => bad("has expired"),
            CertificateError::NotValidYetContext { time, not_before } => {
                bad(&format!("is not valid until {} (the server's clock says {})", when(not_before), when(time)))
            }
            CertificateError::NotValidYet => bad("is not valid yet"),
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
                bad("is not for client authentication (its extended key usage lacks clientAuth)")
            }
            CertificateError::Revoked => bad("has been revoked"),
            CertificateError::BadEncoding => bad("does not parse"),
            CertificateError::UnhandledCriticalExtension => bad("has a critical extension the server does not know"),
            #[allow(deprecated)]
            CertificateError::UnsupportedSignatureAlgorithm
            | CertificateError::UnsupportedSignatureAlgorithmContext { .. }
            | CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
                bad("is signed with an algorithm the server does not support")
            }
            // rustls' own words for the rest (revocation lists, names) are sentences too.
            other => bad(&format!("is not valid: {other}")),
        },
        _ => None,
    }
}

/// A certificate time as a UTC date, `2020-01-02T00:00:00Z`.
fn when(t: &UnixTime) -> String {
    let secs = i64::try_from(t.as_secs()).unwrap_or(i64::MAX);
    time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|d| d.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| format!("{secs} s after 1970"))
}

/// The subject of a certificate as the log shows it: `"CN=alice, O=..."`.
pub(super) fn subject(cert: &CertificateDer<'_>) -> String {
    match x509_parser::parse_x509_certificate(cert.as_ref()) {
        Ok((_, parsed)) => format!("\"{}\"", parsed.subject()),
        Err(_) => "(unparsable)".into(),
    }
}

/// The common names of a certificate's subject, in order (none for a certificate that does
/// not parse).
pub(super) fn common_names(cert: &CertificateDer<'_>) -> Vec<String> {
    let Ok((_, parsed)) = x509_parser::parse_x509_certificate(cert.as_ref()) else { return Vec::new() };
    parsed.subject().iter_common_name().map(|a| a.as_str().unwrap_or("").to_string()).collect()
}

/// Whether a certificate with common names `cns` passes the allow-list `names`. With several
/// CNs the identity is ambiguous, so it passes only when every one of them is on the list
/// (whichever one it "is", it is allowed); with none it never passes.
pub(super) fn passes(cns: &[String], names: &[String]) -> bool {
    !cns.is_empty() && cns.iter().all(|cn| names.contains(cn))
}

/// Why a certificate with common names `cns` does not pass `--tls-allow-subject`, for the log.
fn why_not(cns: &[String]) -> &'static str {
    match cns {
        [] => "has no common name (CN) to check against --tls-allow-subject",
        [_] => "is not on --tls-allow-subject",
        _ => "has several common names, an ambiguous identity, not all of them on --tls-allow-subject",
    }
}

/// A client certificate the CA signed whose subject does not pass the allow-list.
#[derive(Debug, thiserror::Error)]
#[error("the client's certificate subject {subject} {why}")]
struct NotAllowed {
    subject: String,
    why: &'static str,
}

/// [`WebPkiClientVerifier`], then the subject's common names against the allow-list.
#[derive(Debug)]
struct AllowList {
    inner: Arc<dyn ClientCertVerifier>,
    names: Vec<String>,
}

impl AllowList {
    /// See [`passes`].
    fn check(&self, cert: &CertificateDer<'_>) -> Result<(), NotAllowed> {
        let cns = common_names(cert);
        match passes(&cns, &self.names) {
            true => Ok(()),
            false => Err(NotAllowed { subject: subject(cert), why: why_not(&cns) }),
        }
    }
}

impl ClientCertVerifier for AllowList {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        // The chain first: the subject of a certificate the CA did not sign means nothing.
        let verified = self.inner.verify_client_cert(end_entity, intermediates, now)?;
        self.check(end_entity)
            .map_err(|e| rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(e)))))?;
        Ok(verified)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
