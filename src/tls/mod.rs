//! HTTPS on the listening port, beside plain HTTP.
//!
//! Why on the same port: SDK set-ups, proxies and corporate policies that
//! insist on `https://` endpoints reach the same server as everything
//! else, with no second port to publish (LocalStack answers both on 4566).
//! `server/connections.rs` peeks at each connection's first byte: a TLS
//! handshake record (0x16) goes through the acceptor made here, anything
//! else is plain HTTP; both then meet the same HTTP/1.1 server.
//!
//! The certificate is the user's (`--tls-cert`, `--tls-key`) or, with
//! just `--tls`, one Retsu issues from a local certificate authority of
//! its own (`generated.rs`), kept where it survives restarts so the CA
//! needs trusting once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::builder::BoolishValueParser;
use clap::ArgAction;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, pki_types::pem::PemObject};
use tokio_rustls::TlsAcceptor;

mod generated;

pub use generated::{default_dir, LocalCa};

/// The TLS flags, each with its environment variable and its key in the
/// configuration file's `[tls]` table (`enabled`, `cert`, `key`).
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct TlsArgs {
    /// Also answer TLS (https://) on the listening port, beside plain HTTP; without --tls-cert, with a certificate for localhost, 127.0.0.1 and *.localhost.localstack.cloud issued by a local CA Retsu makes and keeps (in --data-dir, else a per-user directory; `retsu tls ca` prints where).
    #[arg(id = "tls", long = "tls", env = "RETSU_TLS", action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    pub enabled: bool,

    /// Serve TLS with this certificate chain (PEM, the server's certificate first); turns TLS on, needs --tls-key.
    #[arg(
        id = "tls_cert",
        long = "tls-cert",
        env = "RETSU_TLS_CERT",
        value_name = "PATH"
    )]
    pub cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(
        id = "tls_key",
        long = "tls-key",
        env = "RETSU_TLS_KEY",
        value_name = "PATH"
    )]
    pub key: Option<PathBuf>,
}

/// The configuration file's `[tls]` table.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsDecl {
    pub enabled: Option<bool>,
    pub cert: Option<String>,
    pub key: Option<String>,
}

impl TlsDecl {
    /// The file's values where no flag or variable gave one (`unset` says
    /// which ids took their default).
    pub fn apply(&self, args: &mut TlsArgs, unset: impl Fn(&str) -> bool) {
        if let Some(v) = self.enabled.filter(|_| unset("tls")) {
            args.enabled = v;
        }
        if let Some(v) = self.cert.as_ref().filter(|_| unset("tls_cert")) {
            args.cert = Some(v.into());
        }
        if let Some(v) = self.key.as_ref().filter(|_| unset("tls_key")) {
            args.key = Some(v.into());
        }
    }
}

impl TlsArgs {
    /// Whether TLS is asked for, by `--tls` or by a certificate.
    pub fn wanted(&self) -> bool {
        self.enabled || self.cert.is_some() || self.key.is_some()
    }
}

/// What the listener needs to answer TLS.
#[derive(Clone)]
pub struct Tls {
    pub acceptor: TlsAcceptor,
    /// The certificate authority to trust, when Retsu issued the
    /// certificate (`None` for the user's own).
    pub ca: Option<PathBuf>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("ca", &self.ca).finish()
    }
}

impl Tls {
    /// The acceptor the flags ask for, or `None` without TLS. Every error
    /// names the file and what is wrong with it, for start-up to print.
    /// The generated certificate lives in `<data_dir>/tls`, else in
    /// [`default_dir`].
    pub fn load(args: &TlsArgs, data_dir: Option<&Path>) -> Result<Option<Tls>, String> {
        if !args.wanted() {
            return Ok(None);
        }
        match (&args.cert, &args.key) {
            (Some(cert), Some(key)) => {
                let chain = read_chain(cert)?;
                let key_der = read_key(key)?;
                let config = server_config(chain, key_der).map_err(|e| {
                    let why = match e {
                        rustls::Error::InconsistentKeys(_) => {
                            "it is the private key of another certificate".to_string()
                        }
                        other => other.to_string(),
                    };
                    format!(
                        "TLS: the key in {} does not fit the certificate in {}: {why}",
                        key.display(),
                        cert.display()
                    )
                })?;
                Ok(Some(Tls {
                    acceptor: TlsAcceptor::from(Arc::new(config)),
                    ca: None,
                }))
            }
            (Some(_), None) => {
                Err("TLS: --tls-cert needs --tls-key (the certificate's private key)".into())
            }
            (None, Some(_)) => {
                Err("TLS: --tls-key needs --tls-cert (the certificate it belongs to)".into())
            }
            (None, None) => {
                let dir = tls_dir(data_dir)?;
                let ca = LocalCa::open(&dir)?;
                let config = server_config(ca.leaf_chain.clone(), ca.leaf_key.clone_key())
                    .map_err(|e| format!("TLS: the certificate in {}: {e}", dir.display()))?;
                Ok(Some(Tls {
                    acceptor: TlsAcceptor::from(Arc::new(config)),
                    ca: Some(ca.ca_path),
                }))
            }
        }
    }
}

/// Where the generated certificate and its CA are kept: the data
/// directory's `tls/`, else the per-user directory.
pub fn tls_dir(data_dir: Option<&Path>) -> Result<PathBuf, String> {
    match data_dir {
        Some(dir) => Ok(dir.join("tls")),
        None => default_dir().ok_or_else(|| {
            "TLS: no directory to keep the generated certificate in (no --data-dir, and neither XDG_DATA_HOME nor HOME is set); give --data-dir, or --tls-cert and --tls-key".to_string()
        }),
    }
}

/// rustls with ring (as for https:// subscribers), HTTP/1.1 offered by
/// ALPN: the server speaks no HTTP/2.
fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<rustls::ServerConfig, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

fn read_file(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("TLS: cannot read the {what} {}: {e}", path.display()))
}

/// Every certificate of a PEM file, in order.
fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = read_file(path, "certificate file")?;
    let chain = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("TLS: {} is not a PEM certificate file: {e}", path.display()))?;
    if chain.is_empty() {
        return Err(format!(
            "TLS: {} holds no certificate (no -----BEGIN CERTIFICATE----- block)",
            path.display()
        ));
    }
    Ok(chain)
}

/// The first private key of a PEM file.
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    let pem = read_file(path, "key file")?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        format!(
            "TLS: {} holds no usable private key (PEM: PKCS#8, PKCS#1 or SEC1): {e}",
            path.display()
        )
    })
}
