//! The certificate Retsu makes for itself: a local certificate authority
//! and a server certificate it issues, both kept in one directory.
//!
//! Why a CA rather than one self-signed certificate: a client is told to
//! trust the CA once (`--ca-bundle`, `AWS_CA_BUNDLE`, a trust store), and
//! the server certificate can then be issued again (when it nears its end,
//! or is deleted) without the client noticing. The CA's key stays beside
//! it for that; both keys are readable by their owner only.
//!
//! Keys are ECDSA P-256, made and used by ring (already rustls's crypto
//! here); the certificates are built by x509-cert (already SNS's signing
//! certificate's builder), so the feature adds no crate to the binary.
//!
//! The directory holds `ca.pem` (the certificate to trust), `ca-key.pem`,
//! `cert.pem` and `key.pem`. A first start builds it under another name
//! and renames it into place, so two processes starting together keep the
//! same CA (the one that loses the race reads the winner's).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair as _, ECDSA_P256_SHA256_ASN1_SIGNING};
use rsa::rand_core::UnwrapErr;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use x509_cert::builder::{Builder, CertificateBuilder};
use x509_cert::der::asn1::{BitString, Ia5String, OctetString};
use x509_cert::der::oid::db::rfc5280::ID_KP_SERVER_AUTH;
use x509_cert::der::oid::ObjectIdentifier;
use x509_cert::der::pem::LineEnding;
use x509_cert::der::{Any, DateTime, Decode, Document, EncodePem};
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{KeyUsage, KeyUsages};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::{
    AlgorithmIdentifierOwned, DynSignatureAlgorithmIdentifier, EncodePublicKey,
    SignatureBitStringEncoding, SubjectPublicKeyInfoOwned,
};
use x509_cert::time::Validity;
use x509_cert::Certificate;

use crate::cert_profile::CertProfile;

pub const CA_FILE: &str = "ca.pem";
const CA_KEY_FILE: &str = "ca-key.pem";
const CERT_FILE: &str = "cert.pem";
const KEY_FILE: &str = "key.pem";

/// The names the server certificate is valid for: loopback by name and
/// address, and LocalStack's domain (which resolves to 127.0.0.1), so
/// endpoints written for LocalStack keep working.
const DNS_NAMES: [&str; 3] = [
    "localhost",
    "localhost.localstack.cloud",
    "*.localhost.localstack.cloud",
];
const IP_ADDRESSES: [std::net::IpAddr; 2] = [
    std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
    std::net::IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
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
        let ca_name = read_certificate(&ca_path)?
            .tbs_certificate()
            .subject()
            .clone();
        let ca_key_path = dir.join(CA_KEY_FILE);
        let ca_key = EcKey::read(&ca_key_path)?;
        let (chain, key) = match current_leaf(dir, &ca_name) {
            Some(leaf) => leaf,
            None => {
                let (cert, key) = issue_leaf(&ca_key, &ca_name, SystemTime::now())?;
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

/// An ECDSA P-256 key, with ring (rustls's crypto here) signing for
/// x509-cert's certificate builder (as SNS's signing certificate is built).
struct EcKey {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
}

const ID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const PRIME256V1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const ECDSA_WITH_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");

impl EcKey {
    fn generate() -> Result<EcKey, String> {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &SystemRandom::new())
                .map_err(|_| "TLS: cannot make a key".to_string())?;
        EcKey::from_pkcs8(pkcs8.as_ref()).ok_or_else(|| "TLS: cannot use the key made".into())
    }

    fn from_pkcs8(der: &[u8]) -> Option<EcKey> {
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, der, &SystemRandom::new())
                .ok()?;
        Some(EcKey {
            pair,
            pkcs8: der.to_vec(),
        })
    }

    fn read(path: &Path) -> Result<EcKey, String> {
        let pem =
            std::fs::read(path).map_err(|e| format!("TLS: cannot read {}: {e}", path.display()))?;
        PrivateKeyDer::from_pem_slice(&pem)
            .ok()
            .and_then(|key| EcKey::from_pkcs8(key.secret_der()))
            .ok_or_else(|| format!("TLS: {} holds no usable P-256 key", path.display()))
    }

    fn pem(&self) -> Result<String, String> {
        x509_cert::der::pem::encode_string("PRIVATE KEY", LineEnding::LF, &self.pkcs8)
            .map_err(|e| format!("TLS: {e}"))
    }

    fn spki(&self) -> Result<SubjectPublicKeyInfoOwned, String> {
        let fail = |e: x509_cert::der::Error| format!("TLS: {e}");
        Ok(SubjectPublicKeyInfoOwned {
            algorithm: AlgorithmIdentifierOwned {
                oid: ID_EC_PUBLIC_KEY,
                parameters: Some(Any::encode_from(&PRIME256V1).map_err(fail)?),
            },
            subject_public_key: BitString::from_bytes(self.pair.public_key().as_ref())
                .map_err(fail)?,
        })
    }
}

#[derive(Clone)]
struct EcPublicKey(SubjectPublicKeyInfoOwned);

impl EncodePublicKey for EcPublicKey {
    fn to_public_key_der(&self) -> x509_cert::spki::Result<Document> {
        Ok(Document::encode_msg(&self.0)?)
    }
}

impl signature::Keypair for EcKey {
    type VerifyingKey = EcPublicKey;

    fn verifying_key(&self) -> EcPublicKey {
        // Made when the key was read or generated; cannot fail for a
        // P-256 point.
        EcPublicKey(self.spki().expect("a P-256 public key encodes"))
    }
}

impl DynSignatureAlgorithmIdentifier for EcKey {
    fn signature_algorithm_identifier(&self) -> x509_cert::spki::Result<AlgorithmIdentifierOwned> {
        Ok(AlgorithmIdentifierOwned {
            oid: ECDSA_WITH_SHA256,
            parameters: None,
        })
    }
}

/// An ECDSA signature, DER-encoded (as X.509 carries it).
struct EcSignature(Vec<u8>);

impl SignatureBitStringEncoding for EcSignature {
    fn to_bitstring(&self) -> x509_cert::der::Result<BitString> {
        BitString::from_bytes(&self.0)
    }
}

impl signature::Signer<EcSignature> for EcKey {
    fn try_sign(&self, msg: &[u8]) -> Result<EcSignature, signature::Error> {
        self.pair
            .sign(&SystemRandom::new(), msg)
            .map(|s| EcSignature(s.as_ref().to_vec()))
            .map_err(|_| signature::Error::new())
    }
}

/// A CA name unique per CA (a random tag), so that two Retsu CAs trusted
/// on one machine are never confused by a client building a chain.
fn ca_name() -> Result<Name, String> {
    let mut tag = [0u8; 4];
    getrandom::fill(&mut tag).map_err(|e| format!("TLS: {e}"))?;
    let tag: String = tag.iter().map(|b| format!("{b:02x}")).collect();
    Name::from_str(&format!(
        "CN=Retsu local CA {tag},O=Retsu local development"
    ))
    .map_err(|e| format!("TLS: {e}"))
}

fn validity(now: SystemTime, lifetime: Duration) -> Result<Validity, String> {
    let at = |t: SystemTime| {
        DateTime::from_system_time(t)
            .map(Into::into)
            .map_err(|e| format!("TLS: the time: {e}"))
    };
    Ok(Validity::new(at(now - BACKDATE)?, at(now + lifetime)?))
}

fn serial() -> SerialNumber {
    SerialNumber::generate(&mut UnwrapErr(getrandom::SysRng))
}

/// A new CA and server certificate in `dir`, built beside it and renamed
/// into place when `dir` does not exist yet.
fn create(dir: &Path) -> std::io::Result<()> {
    let ca_key = EcKey::generate().map_err(std::io::Error::other)?;
    let now = SystemTime::now();
    let name = ca_name().map_err(std::io::Error::other)?;
    let ca = validity(now, CA_LIFETIME)
        .and_then(|validity| {
            let spki = ca_key.spki()?;
            let profile = CertProfile {
                subject: name.clone(),
                issuer: None,
                // Signs server certificates only.
                ca_path_len: Some(0),
                usage: KeyUsage(KeyUsages::KeyCertSign | KeyUsages::CRLSign),
                extended_usage: Vec::new(),
                names: Vec::new(),
            };
            CertificateBuilder::new(profile, serial(), validity, spki)
                .and_then(|b| b.build::<_, EcSignature>(&ca_key))
                .and_then(|c| Ok(c.to_pem(LineEnding::LF)?))
                .map_err(|e| format!("TLS: cannot make the CA certificate: {e}"))
        })
        .map_err(std::io::Error::other)?;
    let ca_key_pem = ca_key.pem().map_err(std::io::Error::other)?;
    let (leaf, leaf_key) = issue_leaf(&ca_key, &name, now).map_err(std::io::Error::other)?;
    let write_all = |into: &Path| -> std::io::Result<()> {
        write_file(&into.join(CA_KEY_FILE), &ca_key_pem, true)?;
        write_file(&into.join(KEY_FILE), &leaf_key, true)?;
        write_file(&into.join(CERT_FILE), &leaf, false)?;
        // Last: its presence says the directory is complete.
        write_file(&into.join(CA_FILE), &ca, false)
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

/// A server certificate for the loopback names signed by the CA, as PEM
/// (the certificate, its key).
fn issue_leaf(ca_key: &EcKey, ca_name: &Name, now: SystemTime) -> Result<(String, String), String> {
    let key = EcKey::generate()?;
    let mut profile = CertProfile::end_entity(
        Name::from_str("CN=Retsu (localhost)").map_err(|e| format!("TLS: {e}"))?,
        Some(ca_name.clone()),
        leaf_names()?,
    );
    profile.extended_usage = vec![ID_KP_SERVER_AUTH];
    let cert = CertificateBuilder::new(
        profile,
        serial(),
        validity(now, LEAF_LIFETIME)?,
        key.spki()?,
    )
    .and_then(|b| b.build::<_, EcSignature>(ca_key))
    .and_then(|c| Ok(c.to_pem(LineEnding::LF)?))
    .map_err(|e| format!("TLS: cannot issue the server certificate: {e}"))?;
    Ok((cert, key.pem()?))
}

/// The names the server certificate is valid for, as its SubjectAltName
/// lists them.
fn leaf_names() -> Result<Vec<GeneralName>, String> {
    let mut names = Vec::new();
    for dns in DNS_NAMES {
        names.push(GeneralName::DnsName(
            Ia5String::new(dns).map_err(|e| format!("TLS: {e}"))?,
        ));
    }
    for ip in IP_ADDRESSES {
        let octets = match ip {
            std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
            std::net::IpAddr::V6(v6) => v6.octets().to_vec(),
        };
        names.push(GeneralName::IpAddress(
            OctetString::new(octets).map_err(|e| format!("TLS: {e}"))?,
        ));
    }
    Ok(names)
}

fn read_certificate(path: &Path) -> Result<Certificate, String> {
    let pem =
        std::fs::read(path).map_err(|e| format!("TLS: cannot read {}: {e}", path.display()))?;
    CertificateDer::from_pem_slice(&pem)
        .ok()
        .and_then(|der| Certificate::from_der(&der).ok())
        .ok_or_else(|| format!("TLS: {} holds no certificate", path.display()))
}

/// The stored server certificate, if it is there, from this CA, and not
/// near its end.
fn current_leaf(
    dir: &Path,
    ca_name: &Name,
) -> Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let cert = std::fs::read(dir.join(CERT_FILE)).ok()?;
    let key = std::fs::read(dir.join(KEY_FILE)).ok()?;
    let (chain, key) = parse_leaf(&cert, &key)?;
    let parsed = Certificate::from_der(chain.first()?).ok()?;
    let tbs = parsed.tbs_certificate();
    let ends = tbs.validity().not_after.to_system_time();
    let fresh = ends
        .duration_since(SystemTime::now())
        .is_ok_and(|left| left > RENEW_BEFORE);
    (fresh && tbs.issuer() == ca_name).then_some((chain, key))
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
        let ca_key = EcKey::read(&dir.join(CA_KEY_FILE)).unwrap();
        let ca_name = read_certificate(&dir.join(CA_FILE))
            .unwrap()
            .tbs_certificate()
            .subject()
            .clone();
        // Issued long ago: 20 days left.
        let long_ago = SystemTime::now() - LEAF_LIFETIME + Duration::from_secs(20 * DAY);
        let (cert, key) = issue_leaf(&ca_key, &ca_name, long_ago).unwrap();
        write_file(&dir.join(CERT_FILE), &cert, false).unwrap();
        write_file(&dir.join(KEY_FILE), &key, true).unwrap();
        assert!(current_leaf(&dir, &ca_name).is_none());
        let renewed = LocalCa::open(&dir).unwrap();
        assert!(current_leaf(&dir, &ca_name).is_some());
        assert_ne!(
            renewed.leaf_chain[0].as_ref(),
            CertificateDer::from_pem_slice(cert.as_bytes())
                .unwrap()
                .as_ref()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
