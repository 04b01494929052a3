//! The certificate Retsu makes for itself: a local certificate authority
//! and a server certificate it issues, both kept in one directory.
//!
//! Why a CA rather than one self-signed certificate: a client is told to
//! trust the CA once (`--ca-bundle`, `AWS_CA_BUNDLE`, a trust store), and
//! the server certificate can then be issued again (when it nears its end,
//! or is deleted) without the client noticing. The CA's key stays beside
//! it for that; both keys are readable by their owner only.
//!
//! The directory holds `ca.pem` (the certificate to trust), `ca-key.pem`,
//! `cert.pem` and `key.pem`. A first start builds it under another name
//! and renames it into place, so two processes starting together keep the
//! same CA (the one that loses the race reads the winner's).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

pub const CA_FILE: &str = "ca.pem";
const CA_KEY_FILE: &str = "ca-key.pem";
const CERT_FILE: &str = "cert.pem";
const KEY_FILE: &str = "key.pem";

/// The names the server certificate is valid for: loopback by name and
/// address, and LocalStack's domain (which resolves to 127.0.0.1), so
/// endpoints written for LocalStack keep working.
pub const NAMES: [&str; 5] = [
    "localhost",
    "127.0.0.1",
    "::1",
    "localhost.localstack.cloud",
    "*.localhost.localstack.cloud",
];

const DAY: u64 = 24 * 60 * 60;
/// The CA outlives many server certificates: trusting it is the step a
/// user takes by hand.
const CA_LIFETIME: Duration = Duration::from_secs(10 * 365 * DAY);
/// Under the 825 days Apple's platforms accept for a server certificate
/// from a user-trusted CA.
const LEAF_LIFETIME: Duration = Duration::from_secs(800 * DAY);
/// A server certificate with less than this left is issued again.
const RENEW_BEFORE: Duration = Duration::from_secs(30 * DAY);
/// Validity starts this long before now, for clocks slightly behind ours.
const BACKDATE: Duration = Duration::from_secs(DAY);

/// The per-user directory for the generated certificate when there is
/// no data directory: `$XDG_DATA_HOME/retsu/tls`, else
/// `~/.local/share/retsu/tls` (`~/Library/Application Support/retsu/tls`
/// on macOS, `%LOCALAPPDATA%\retsu\tls` on Windows).
pub fn default_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        var("LOCALAPPDATA")
    } else if let Some(xdg) = var("XDG_DATA_HOME") {
        Some(xdg)
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library").join("Application Support"))
    } else {
        var("HOME").map(|h| h.join(".local").join("share"))
    };
    base.map(|b| b.join("retsu").join("tls"))
}

/// The server certificate and key to serve, and where their CA is.
pub struct LocalCa {
    pub ca_path: PathBuf,
    /// The server certificate and its key, as files.
    pub cert_path: PathBuf,
    pub key_path: PathBuf,
    pub leaf_chain: Vec<CertificateDer<'static>>,
    pub leaf_key: PrivateKeyDer<'static>,
}

impl LocalCa {
    /// Reads the directory, making the CA if it has none and issuing the
    /// server certificate if it is missing, from another CA, or near its
    /// end.
    pub fn open(dir: &Path) -> Result<LocalCa, String> {
        let shown = dir.display();
        let ca_path = dir.join(CA_FILE);
        if !ca_path.exists() {
            create(dir).map_err(|e| format!("TLS: cannot make the local CA in {shown}: {e}"))?;
        }
        let ca_key_pem = read_text(&dir.join(CA_KEY_FILE))?;
        let ca_key = KeyPair::from_pem(&ca_key_pem).map_err(|e| {
            format!(
                "TLS: {} holds no usable key: {e}",
                dir.join(CA_KEY_FILE).display()
            )
        })?;
        let (chain, key) = match current_leaf(dir, &ca_key) {
            Some(leaf) => leaf,
            None => {
                let (cert, key) = issue_leaf(&ca_key, SystemTime::now())?;
                write_file(&dir.join(KEY_FILE), &key, true)
                    .and_then(|()| write_file(&dir.join(CERT_FILE), &cert, false))
                    .map_err(|e| format!("TLS: cannot write the certificate in {shown}: {e}"))?;
                parse_leaf(cert.as_bytes(), key.as_bytes())
                    .ok_or("TLS: the certificate just issued does not parse")?
            }
        };
        Ok(LocalCa {
            ca_path,
            cert_path: dir.join(CERT_FILE),
            key_path: dir.join(KEY_FILE),
            leaf_chain: chain,
            leaf_key: key,
        })
    }
}

/// The CA's name, unique per CA (from its key) so that two Retsu CAs
/// trusted on one machine are never confused by a client building a chain.
fn ca_name(ca_key: &KeyPair) -> (DistinguishedName, String) {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(ca_key.public_key_der());
    let tag: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    let mut name = DistinguishedName::new();
    name.push(DnType::OrganizationName, "Retsu local development");
    name.push(DnType::CommonName, format!("Retsu local CA {tag}"));
    (name, tag)
}

/// The CA's parameters: the same for a key whenever they are made, so the
/// CA can sign again after a restart with only its key.
fn ca_params(ca_key: &KeyPair, now: SystemTime) -> Result<CertificateParams, String> {
    let mut params = CertificateParams::default();
    params.distinguished_name = ca_name(ca_key).0;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    (params.not_before, params.not_after) = validity(now, CA_LIFETIME)?;
    Ok(params)
}

fn validity(
    now: SystemTime,
    lifetime: Duration,
) -> Result<(time::OffsetDateTime, time::OffsetDateTime), String> {
    let at = |t: SystemTime| {
        let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
        time::OffsetDateTime::from_unix_timestamp(secs).map_err(|e| format!("TLS: the time: {e}"))
    };
    Ok((at(now - BACKDATE)?, at(now + lifetime)?))
}

/// A new CA and server certificate in `dir`, built beside it and renamed
/// into place when `dir` does not exist yet.
fn create(dir: &Path) -> std::io::Result<()> {
    let ca_key = KeyPair::generate().map_err(std::io::Error::other)?;
    let now = SystemTime::now();
    let ca = ca_params(&ca_key, now)
        .and_then(|p| p.self_signed(&ca_key).map_err(|e| e.to_string()))
        .map_err(std::io::Error::other)?;
    let (leaf, leaf_key) = issue_leaf(&ca_key, now).map_err(std::io::Error::other)?;
    let write_all = |into: &Path| -> std::io::Result<()> {
        write_file(&into.join(CA_KEY_FILE), &ca_key.serialize_pem(), true)?;
        write_file(&into.join(KEY_FILE), &leaf_key, true)?;
        write_file(&into.join(CERT_FILE), &leaf, false)?;
        // Last: its presence says the directory is complete.
        write_file(&into.join(CA_FILE), &ca.pem(), false)
    };
    if dir.exists() {
        return write_all(dir);
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let staging = parent.join(format!(
        ".{}.{}.tmp",
        dir.file_name().and_then(|n| n.to_str()).unwrap_or("tls"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir(&staging)?;
    let made = write_all(&staging).and_then(|()| std::fs::rename(&staging, dir));
    if made.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
        // Another process made it first: theirs is as good.
        if dir.join(CA_FILE).exists() {
            return Ok(());
        }
    }
    made
}

/// A server certificate for [`NAMES`] signed by the CA, as PEM (the
/// certificate, its key).
fn issue_leaf(ca_key: &KeyPair, now: SystemTime) -> Result<(String, String), String> {
    let fail = |e: rcgen::Error| format!("TLS: cannot issue the server certificate: {e}");
    let ca = ca_params(ca_key, now)?.self_signed(ca_key).map_err(fail)?;
    let key = KeyPair::generate().map_err(fail)?;
    let names: Vec<String> = NAMES.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names).map_err(fail)?;
    params.distinguished_name = DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, "Retsu (localhost)");
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    (params.not_before, params.not_after) = validity(now, LEAF_LIFETIME)?;
    let cert = params.signed_by(&key, &ca, ca_key).map_err(fail)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// The stored server certificate, if it is there, from this CA, and not
/// near its end.
fn current_leaf(
    dir: &Path,
    ca_key: &KeyPair,
) -> Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let cert = std::fs::read(dir.join(CERT_FILE)).ok()?;
    let key = std::fs::read(dir.join(KEY_FILE)).ok()?;
    let (chain, key) = parse_leaf(&cert, &key)?;
    use x509_cert::der::Decode;
    let parsed = x509_cert::Certificate::from_der(chain.first()?).ok()?;
    let tbs = parsed.tbs_certificate();
    let (_, tag) = ca_name(ca_key);
    let ends = tbs.validity().not_after.to_system_time();
    let fresh = ends
        .duration_since(SystemTime::now())
        .is_ok_and(|left| left > RENEW_BEFORE);
    (fresh && tbs.issuer().to_string().contains(&tag)).then_some((chain, key))
}

fn parse_leaf(
    cert: &[u8],
    key: &[u8],
) -> Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .ok()
        .filter(|c| !c.is_empty())?;
    let key = PrivateKeyDer::from_pem_slice(key).ok()?;
    Some((chain, key))
}

fn read_text(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("TLS: cannot read {}: {e}", path.display()))
}

/// Written whole under a temporary name, then renamed over `path`; a
/// private key readable by its owner only.
fn write_file(path: &Path, text: &str, private: bool) -> std::io::Result<()> {
    use std::io::Write;
    let staging = path.with_extension(format!("{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options.open(&staging)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&staging, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "retsu-tls-{name}-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn made_once_then_kept() {
        let dir = scratch("kept");
        let first = LocalCa::open(&dir).unwrap();
        let ca = std::fs::read(dir.join(CA_FILE)).unwrap();
        let second = LocalCa::open(&dir).unwrap();
        assert_eq!(std::fs::read(dir.join(CA_FILE)).unwrap(), ca);
        assert_eq!(
            first.leaf_chain, second.leaf_chain,
            "the server certificate is kept too"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for key in [CA_KEY_FILE, KEY_FILE] {
                let mode = std::fs::metadata(dir.join(key))
                    .unwrap()
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o077, 0, "{key} is private");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_lost_server_certificate_is_issued_again_from_the_same_ca() {
        let dir = scratch("reissue");
        let first = LocalCa::open(&dir).unwrap();
        let ca = std::fs::read(dir.join(CA_FILE)).unwrap();
        std::fs::remove_file(dir.join(CERT_FILE)).unwrap();
        let second = LocalCa::open(&dir).unwrap();
        assert_ne!(first.leaf_chain, second.leaf_chain);
        assert_eq!(std::fs::read(dir.join(CA_FILE)).unwrap(), ca);
        // The new one still chains to the CA clients already trust.
        use x509_cert::der::Decode;
        let ca_der = CertificateDer::from_pem_slice(&ca).unwrap();
        let ca = x509_cert::Certificate::from_der(&ca_der).unwrap();
        let leaf = x509_cert::Certificate::from_der(&second.leaf_chain[0]).unwrap();
        assert_eq!(
            leaf.tbs_certificate().issuer(),
            ca.tbs_certificate().subject()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_expiring_server_certificate_is_replaced() {
        let dir = scratch("expiring");
        LocalCa::open(&dir).unwrap();
        let ca_key = KeyPair::from_pem(&read_text(&dir.join(CA_KEY_FILE)).unwrap()).unwrap();
        // Issued long ago: 20 days left.
        let long_ago = SystemTime::now() - LEAF_LIFETIME + Duration::from_secs(20 * DAY);
        let (cert, key) = issue_leaf(&ca_key, long_ago).unwrap();
        write_file(&dir.join(CERT_FILE), &cert, false).unwrap();
        write_file(&dir.join(KEY_FILE), &key, true).unwrap();
        assert!(current_leaf(&dir, &ca_key).is_none());
        let renewed = LocalCa::open(&dir).unwrap();
        assert!(current_leaf(&dir, &ca_key).is_some());
        assert_ne!(
            renewed.leaf_chain[0].as_ref(),
            CertificateDer::from_pem_slice(cert.as_bytes())
                .unwrap()
                .as_ref()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
