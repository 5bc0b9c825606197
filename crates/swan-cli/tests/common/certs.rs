//! TLS material made at test time with the openssl CLI (no key is ever committed): a CA, a
//! server certificate it signed, client certificates, and the options libnbd and qemu take.

use super::{ok, require};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A throw-away CA and a server certificate it signed (for 127.0.0.1 and localhost), made
/// with the openssl CLI in `dir` at test time: no key is ever committed. `client_dir` is laid
/// out as libnbd's `tls-certificates` directory wants it (`ca-cert.pem`).
pub struct Certs {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub client_dir: PathBuf,
}

impl Certs {
    pub fn make(dir: &Path, name: &str) -> Certs {
        Certs::make_with_ca(dir, name, "swan test CA")
    }

    /// As [`Certs::make`], with a CA whose subject is `CN=ca_name`.
    pub fn make_with_ca(dir: &Path, name: &str, ca_name: &str) -> Certs {
        require("openssl", "openssl");
        let d = dir.join(name);
        let client_dir = d.join("client");
        std::fs::create_dir_all(&client_dir).expect("certificate directory");
        let p = |f: &str| d.join(f).to_str().expect("utf-8 path").to_string();
        let openssl = |args: &[&str], what: &str| {
            ok(Command::new("openssl").args(args), what, Duration::from_secs(60));
        };
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        openssl(
            &[&["req", "-x509"], &ec[..], &["-keyout", &p("ca-key.pem"), "-out", &p("ca-cert.pem")]]
                .concat()
                .iter()
                .chain(&[
                    "-days",
                    "2",
                    "-subj",
                    &format!("/CN={ca_name}"),
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                ])
                .chain(&["-addext", "keyUsage=critical,keyCertSign,cRLSign"])
                .copied()
                .collect::<Vec<_>>(),
            "openssl: the test CA",
        );
        openssl(
            &[
                &["req"],
                &ec[..],
                &["-keyout", &p("server-key.pem"), "-out", &p("server.csr"), "-subj", "/CN=localhost"],
            ]
            .concat(),
            "openssl: the server key",
        );
        std::fs::write(
            d.join("ext.cnf"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
             keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
        )
        .expect("extensions file");
        openssl(
            &["x509", "-req", "-in", &p("server.csr"), "-CA", &p("ca-cert.pem"), "-CAkey", &p("ca-key.pem")]
                .iter()
                .chain(&["-CAcreateserial", "-out", &p("server-cert.pem"), "-days", "2", "-extfile", &p("ext.cnf")])
                .copied()
                .collect::<Vec<_>>(),
            "openssl: the server certificate",
        );
        std::fs::copy(d.join("ca-cert.pem"), client_dir.join("ca-cert.pem")).expect("client CA");
        Certs { ca: d.join("ca-cert.pem"), cert: d.join("server-cert.pem"), key: d.join("server-key.pem"), client_dir }
    }

    /// `swan serve` flags for `--tls MODE` with this certificate.
    pub fn flags(&self, mode: &str) -> Vec<String> {
        let s = |p: &Path| p.to_str().expect("utf-8 path").to_string();
        vec!["--tls".into(), mode.into(), "--tls-cert".into(), s(&self.cert), "--tls-key".into(), s(&self.key)]
    }

    /// An `nbds://` URI for libnbd tools trusting this CA.
    pub fn uri(&self, addr: &str) -> String {
        format!("nbds://{addr}/?tls-certificates={}", self.client_dir.display())
    }

    /// A client's certificate directory `dir`, laid out as libnbd's `tls-certificates` and
    /// qemu's `tls-creds-x509` read it: `ca-cert.pem` (the CA of `server`, to trust the
    /// server, and this one), and `client-cert.pem` with subject `CN=cn`, signed by this CA, and its
    /// `client-key.pem`.
    pub fn client(&self, dir: &Path, cn: &str, server: &Certs) -> PathBuf {
        self.client_valid(dir, cn, server, None)
    }

    /// As [`Certs::client`], valid only from `start` to `end` (openssl's `YYYYMMDDHHMMSSZ`):
    /// an expired certificate, or one not valid yet. Signed with `openssl ca`, whose
    /// `-startdate` can lie in the past (openssl 3.0's `x509 -req` cannot backdate).
    pub fn client_dated(&self, dir: &Path, cn: &str, server: &Certs, start: &str, end: &str) -> PathBuf {
        self.client_valid(dir, cn, server, Some((start, end)))
    }

    fn client_valid(&self, dir: &Path, cn: &str, server: &Certs, dates: Option<(&str, &str)>) -> PathBuf {
        std::fs::create_dir_all(dir).expect("client certificate directory");
        let p = |f: &str| dir.join(f).to_str().expect("utf-8 path").to_string();
        let ca_key = self.ca.with_file_name("ca-key.pem");
        let ca_key = ca_key.to_str().expect("utf-8 path");
        let ca = self.ca.to_str().expect("utf-8 path");
        let subject = format!("/CN={cn}");
        let req = ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", &subject];
        let (key, csr) = (p("client-key.pem"), p("client.csr"));
        ok(
            Command::new("openssl").args(req).args(["-keyout", &key, "-out", &csr]),
            "openssl: a client key",
            Duration::from_secs(60),
        );
        std::fs::write(
            dir.join("ext.cnf"),
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n",
        )
        .expect("extensions file");
        let (cert, ext) = (p("client-cert.pem"), p("ext.cnf"));
        let mut sign = Command::new("openssl");
        match dates {
            None => sign
                .args(["x509", "-req", "-in", &csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial"])
                .args(["-out", &cert, "-days", "2", "-extfile", &ext]),
            Some((start, end)) => {
                // The smallest `openssl ca` setup: its database and serial in the client's
                // directory, any subject, the same extensions as above.
                std::fs::write(dir.join("index.txt"), "").expect("openssl ca database");
                std::fs::write(dir.join("serial"), "01\n").expect("openssl ca serial");
                std::fs::write(
                    dir.join("ca.cnf"),
                    format!(
                        "[ca]\ndefault_ca = test\n[test]\ndatabase = {}\nnew_certs_dir = {}\nserial = {}\n\
                         default_md = sha256\npolicy = any\nunique_subject = no\n[any]\ncommonName = supplied\n\
                         [ext]\nbasicConstraints = CA:FALSE\nkeyUsage = digitalSignature\n\
                         extendedKeyUsage = clientAuth\n",
                        p("index.txt"),
                        p(""),
                        p("serial")
                    ),
                )
                .expect("openssl ca configuration");
                sign.args(["ca", "-batch", "-notext", "-config", &p("ca.cnf"), "-cert", ca, "-keyfile", ca_key])
                    .args(["-in", &csr, "-out", &cert, "-extensions", "ext"])
                    .args(["-startdate", start, "-enddate", end])
            }
        };
        ok(&mut sign, "openssl: a client certificate", Duration::from_secs(60));
        // qemu checks its own certificate against ca-cert.pem before connecting: the bundle
        // holds the signer's CA besides the server's.
        let bundle = [std::fs::read(&server.ca).expect("the server's CA"), std::fs::read(&self.ca).expect("the CA")];
        std::fs::write(dir.join("ca-cert.pem"), bundle.concat()).expect("the client's CA bundle");
        dir.to_path_buf()
    }
}

/// qemu's options for the NBD export `export` at `addr` over TLS with the x509 credentials in
/// `client_dir` (the file names libnbd reads too): the `--object` of the credentials and the
/// image options naming them.
pub fn qemu_nbd_tls(addr: &str, client_dir: &Path, export: &str) -> (String, String) {
    let port = addr.rsplit(':').next().expect("port");
    let creds = format!("tls-creds-x509,id=tls0,endpoint=client,dir={}", client_dir.display());
    let mut opts = format!("driver=nbd,host=127.0.0.1,port={port},tls-creds=tls0");
    if !export.is_empty() {
        opts += &format!(",export={export}");
    }
    (creds, opts)
}
