//! Who may connect over TLS: client certificates (`--tls-verify-peer`).
//!
//! A client must present a certificate that chains to the CA given to the server (rustls'
//! `WebPkiClientVerifier`: signature, validity dates, the clientAuth key usage); a client
//! without one is refused inside the TLS handshake, before the connection code has seen a
//! byte of NBD. An optional allow-list then names which certificates the CA signed may
//! connect, by the common name (CN) of their subject. It is checked in the same place,
//! during the handshake, so a client not on it is refused exactly like one without a
//! certificate, with the TLS alert `certificate_unknown`.

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

/// What an operator should read in the log when a client was refused for its certificate
/// (none for other TLS failures).
pub(super) fn refusal(e: &rustls::Error) -> Option<String> {
    match e {
        rustls::Error::NoCertificatesPresented => Some("the client presented no certificate".into()),
        rustls::Error::InvalidCertificate(CertificateError::Other(other)) => Some(other.to_string()),
        // No CA of that name, or one of that name whose key did not sign it.
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer | CertificateError::BadSignature) => {
            Some("the client's certificate is not signed by the --tls-client-ca CA".into())
        }
        rustls::Error::InvalidCertificate(c) => Some(format!("the client's certificate is not valid: {c:?}")),
        _ => None,
    }
}

/// The subject of a certificate as the log shows it: `"CN=alice, O=..."`.
pub(super) fn subject(cert: &CertificateDer<'_>) -> String {
    match x509_parser::parse_x509_certificate(cert.as_ref()) {
        Ok((_, parsed)) => format!("\"{}\"", parsed.subject()),
        Err(_) => "(unparsable)".into(),
    }
}

/// The one common name of a certificate's subject; `None` for a subject with none, or with
/// several (which of them an allow-list would be judging is ambiguous), or no certificate
/// that parses.
pub(super) fn common_name(cert: &CertificateDer<'_>) -> Option<String> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).ok()?;
    let names: Vec<&str> = parsed.subject().iter_common_name().map(|a| a.as_str().unwrap_or("")).collect();
    match names.as_slice() {
        [cn] => Some((*cn).to_string()),
        _ => None,
    }
}

/// A client certificate the CA signed whose subject is not on the allow-list.
#[derive(Debug, thiserror::Error)]
#[error("the client's certificate subject {subject} is not on --tls-allow-subject")]
struct NotAllowed {
    subject: String,
}

/// [`WebPkiClientVerifier`], then the subject's common name against the allow-list.
#[derive(Debug)]
struct AllowList {
    inner: Arc<dyn ClientCertVerifier>,
    names: Vec<String>,
}

impl AllowList {
    /// The certificate's one common name if it is on the list. A subject with no CN, or with
    /// several, is refused: which of several the list would be judging is ambiguous.
    fn check(&self, cert: &CertificateDer<'_>) -> Result<(), NotAllowed> {
        match common_name(cert) {
            Some(cn) if self.names.contains(&cn) => Ok(()),
            _ => Err(NotAllowed { subject: subject(cert) }),
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
