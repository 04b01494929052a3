//! Signing of SNS messages: the server's signing identity (an
//! RSA-2048 key and the self-signed X.509 certificate that `SigningCertURL`
//! points at), the canonical string to sign of each envelope kind, and the
//! base64 PKCS#1 v1.5 signature of it for `SignatureVersion` 1 (SHA-1) or 2
//! (SHA-256).
//!
//! Everything here is pure Rust (RustCrypto's `rsa` and `x509-cert`), so the
//! static musl build needs neither OpenSSL nor a C compiler.
//!
//! With a store the identity is kept as one text, the PKCS#8 `PRIVATE KEY`
//! block then the `CERTIFICATE` block ([`KeyStore`]): with a data directory
//! the file `sns-signing-key.pem`, with PostgreSQL a row of the journal's
//! `meta` table. The certificate is kept and not remade on each start
//! because its serial and validity differ each time it is made, and so would
//! its file name, the one in the `SigningCertURL` of messages stored before a
//! restart.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use rsa::pkcs1v15::SigningKey;
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use rsa::rand_core::UnwrapErr;
use rsa::sha2::{Digest, Sha256};
use rsa::signature::{SignatureEncoding, Signer};
use rsa::PrivateKey;
use sha1::Sha1;
use x509_cert::builder::{Builder, CertificateBuilder};
use x509_cert::der::asn1::Ia5String;
use x509_cert::der::pem::LineEnding;
use x509_cert::der::{DateTime, DecodePem, Encode, EncodePem};
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::SubjectPublicKeyInfoOwned;
use x509_cert::time::Validity;
use x509_cert::Certificate;

use crate::cert_profile::CertProfile;

pub use retsu_core::sns::envelope::{string_to_sign, EnvelopeKind, SignatureVersion};

/// The file of a data directory that holds the identity.
pub const KEY_FILE_NAME: &str = "sns-signing-key.pem";

/// AWS's signing certificates name this host; SDK validators look for it.
const CERTIFICATE_HOST: &str = "sns.amazonaws.com";
const KEY_BITS: usize = 2048;
const DAY: Duration = Duration::from_secs(24 * 60 * 60);
/// Backdated a day so that a verifier whose clock is behind ours still
/// accepts the certificate.
const BACKDATE: Duration = DAY;
const LIFETIME_YEARS: u16 = 10;

/// The server's SNS signing identity: an RSA key and a self-signed X.509
/// certificate of its public key.
#[derive(Clone)]
pub struct SigningIdentity {
    // One signer per hash: SigningKey fixes its digest in the type.
    sha1: SigningKey<Sha1>,
    sha256: SigningKey<Sha256>,
    certificate_pem: String,
    certificate_file_name: String,
}

impl fmt::Debug for SigningIdentity {
    // Names the certificate, never the key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningIdentity")
            .field("certificate_file_name", &self.certificate_file_name)
            .finish_non_exhaustive()
    }
}

impl SigningIdentity {
    /// A fresh RSA-2048 key and certificate, for a server without a data
    /// directory.
    ///
    /// # Panics
    /// If the operating system's random number generator fails.
    pub fn generate() -> SigningIdentity {
        let key = generate_key().expect("generating the SNS signing key");
        let certificate = make_certificate(&key).expect("making the SNS signing certificate");
        SigningIdentity::new(key, &certificate).expect("encoding the SNS signing certificate")
    }

    /// The identity of a data directory: loaded from `dir/sns-signing-key.pem`,
    /// or made and written there (mode 0600, through a temporary file renamed
    /// into place, so a crash never leaves half a key). A file holding only
    /// the key (say, one a user supplied) gets a certificate added; so does one
    /// whose certificate has expired or is of another key.
    pub fn load_or_create(dir: &Path) -> io::Result<SigningIdentity> {
        SigningIdentity::load_or_create_in(&DirKeyStore(dir.to_path_buf()))
    }

    /// The identity `store` keeps, or one made and kept there; as
    /// [`SigningIdentity::load_or_create`] for any store.
    pub fn load_or_create_in(store: &dyn KeyStore) -> io::Result<SigningIdentity> {
        let Some(text) = store.read()? else {
            let key = generate_key().map_err(io::Error::other)?;
            let certificate = make_certificate(&key).map_err(io::Error::other)?;
            let made = identity_text(&key, &certificate)?;
            store.write(&made)?;
            // A store shared by several servers keeps the first identity
            // written (a cluster's): use whichever it kept.
            return match store.read()? {
                Some(kept) if kept != made => SigningIdentity::load_or_create_in(store),
                _ => SigningIdentity::new(key, &certificate),
            };
        };

        let invalid = |what: &str, e: &dyn fmt::Display| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {what}: {e}", store.describe()),
            )
        };
        let key_pem = pem_block(&text, "PRIVATE KEY").ok_or_else(|| {
            invalid(
                "no PKCS#8 key",
                &"expected a -----BEGIN PRIVATE KEY----- block",
            )
        })?;
        let key = PrivateKey::from_pkcs8_pem(key_pem).map_err(|e| invalid("the key", &e))?;
        let stored = match pem_block(&text, "CERTIFICATE") {
            Some(pem) => {
                Some(Certificate::from_pem(pem).map_err(|e| invalid("the certificate", &e))?)
            }
            None => None,
        };
        let usable = match &stored {
            Some(certificate) => certificate_fits(certificate, &key).map_err(io::Error::other)?,
            None => false,
        };
        let certificate = match stored {
            Some(certificate) if usable => certificate,
            _ => {
                let certificate = make_certificate(&key).map_err(io::Error::other)?;
                store.write(&identity_text(&key, &certificate)?)?;
                certificate
            }
        };
        SigningIdentity::new(key, &certificate)
    }

    fn new(key: PrivateKey, certificate: &Certificate) -> io::Result<SigningIdentity> {
        let der = certificate.to_der().map_err(io::Error::other)?;
        let certificate_pem = certificate
            .to_pem(LineEnding::LF)
            .map_err(io::Error::other)?;
        let digest = Sha256::digest(&der);
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        Ok(SigningIdentity {
            sha1: SigningKey::new(key.clone()),
            sha256: SigningKey::new(key),
            certificate_pem,
            certificate_file_name: format!("SimpleNotificationService-{hex}.pem"),
        })
    }

    /// The certificate, PEM `CERTIFICATE`, as served at `SigningCertURL`.
    pub fn certificate_pem(&self) -> &str {
        &self.certificate_pem
    }

    /// The name under which to serve the certificate, as AWS names its own:
    /// `SimpleNotificationService-<32 hex>.pem`, the hex the first 16 bytes
    /// of the SHA-256 of the certificate's DER, so it changes with the
    /// certificate and a cached copy is never stale.
    pub fn certificate_file_name(&self) -> &str {
        &self.certificate_file_name
    }

    /// The envelope's `Signature`: the standard base64 of the PKCS#1 v1.5
    /// signature of `string_to_sign` with the hash of `version`.
    pub fn sign(&self, version: SignatureVersion, string_to_sign: &str) -> String {
        let message = string_to_sign.as_bytes();
        let signature = match version {
            SignatureVersion::V1 => self.sha1.sign(message).to_bytes(),
            SignatureVersion::V2 => self.sha256.sign(message).to_bytes(),
        };
        base64::engine::general_purpose::STANDARD.encode(signature)
    }
}

fn generate_key() -> rsa::Result<PrivateKey> {
    PrivateKey::new(&mut getrandom::SysRng, KEY_BITS)
}

/// A self-signed end-entity certificate (not a CA: it signs messages, never
/// other certificates), signed sha256WithRSAEncryption, with a random serial.
fn make_certificate(key: &PrivateKey) -> x509_cert::builder::Result<Certificate> {
    let not_before = DateTime::from_system_time(SystemTime::now() - BACKDATE)?;
    let validity = Validity::new(not_before.into(), years_later(not_before)?.into());
    let serial = SerialNumber::generate(&mut UnwrapErr(getrandom::SysRng));
    let public_key = SubjectPublicKeyInfoOwned::from_key(key.as_public_key())?;
    let subject = Name::from_str(&format!("CN={CERTIFICATE_HOST},O=Retsu"))?;
    let signer = SigningKey::<Sha256>::new(key.clone());
    // Validators that match the certificate to a host look at its names.
    let host = GeneralName::DnsName(Ia5String::new(CERTIFICATE_HOST)?);
    let profile = CertProfile::end_entity(subject, None, vec![host]);
    CertificateBuilder::new(profile, serial, validity, public_key)?
        .build::<_, rsa::pkcs1v15::Signature>(&signer)
}

/// The same moment `LIFETIME_YEARS` calendar years on (29 February becomes
/// the 28th in a common year).
fn years_later(start: DateTime) -> x509_cert::der::Result<DateTime> {
    let year = start.year() + LIFETIME_YEARS;
    let at_day = |day| {
        DateTime::new(
            year,
            start.month(),
            day,
            start.hour(),
            start.minutes(),
            start.seconds(),
        )
    };
    at_day(start.day()).or_else(|_| at_day(start.day() - 1))
}

/// Whether a stored certificate still serves `key`: of its public key and
/// not yet expired (a new one keeps the key, so old signatures still verify).
fn certificate_fits(
    certificate: &Certificate,
    key: &PrivateKey,
) -> Result<bool, x509_cert::spki::Error> {
    let tbs = certificate.tbs_certificate();
    let ours = SubjectPublicKeyInfoOwned::from_key(key.as_public_key())?;
    let not_after = tbs.validity().not_after.to_system_time();
    Ok(*tbs.subject_public_key_info() == ours && not_after > SystemTime::now() + DAY)
}

/// The text of the first `label` PEM block of `text`, BEGIN to END line.
fn pem_block<'t>(text: &'t str, label: &str) -> Option<&'t str> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text.find(&begin)?;
    let stop = start + text[start..].find(&end)? + end.len();
    Some(&text[start..stop])
}

/// Key and certificate as one text: the PKCS#8 key block, then the
/// certificate block.
fn identity_text(key: &PrivateKey, certificate: &Certificate) -> io::Result<String> {
    let key_pem = key.to_pkcs8_pem(LineEnding::LF).map_err(io::Error::other)?;
    let certificate_pem = certificate
        .to_pem(LineEnding::LF)
        .map_err(io::Error::other)?;
    Ok(format!("{}{certificate_pem}", key_pem.as_str()))
}

/// Where an identity is kept between runs.
pub trait KeyStore: Send + Sync {
    /// The kept text, if any.
    fn read(&self) -> io::Result<Option<String>>;
    /// Keeps `text` (the key, then the certificate), replacing what was kept.
    fn write(&self, text: &str) -> io::Result<()>;
    /// For messages: where it is kept.
    fn describe(&self) -> String;
}

/// A data directory's `sns-signing-key.pem`.
pub struct DirKeyStore(pub std::path::PathBuf);

impl KeyStore for DirKeyStore {
    fn read(&self) -> io::Result<Option<String>> {
        match std::fs::read_to_string(self.0.join(KEY_FILE_NAME)) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Atomically: a temporary file beside it, created 0600 so the key is
    /// never readable by others, synced, renamed over the file, then the
    /// directory synced so the rename survives a crash.
    fn write(&self, text: &str) -> io::Result<()> {
        let dir = &self.0;
        let path = dir.join(KEY_FILE_NAME);
        let temporary = dir.join(format!(".{KEY_FILE_NAME}.{}.tmp", std::process::id()));
        // A stale one (a crash, a reused pid) would keep its own mode: start anew.
        let _ = std::fs::remove_file(&temporary);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let written = (|| {
            let mut file = options.open(&temporary)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&temporary, &path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written?;
        #[cfg(unix)]
        std::fs::File::open(dir)?.sync_all()?;
        Ok(())
    }

    fn describe(&self) -> String {
        self.0.join(KEY_FILE_NAME).display().to_string()
    }
}

impl retsu_core::sns::envelope::Signer for SigningIdentity {
    fn sign(&self, version: SignatureVersion, string_to_sign: &str) -> String {
        SigningIdentity::sign(self, version, string_to_sign)
    }

    fn certificate_file_name(&self) -> &str {
        SigningIdentity::certificate_file_name(self)
    }
}

/// A journal's kept value (`--store`): read as loaded at start, written
/// with the journal's next commit, which is no later than that of any
/// message signed with it.
pub struct JournalKeyStore(pub std::sync::Arc<crate::journal::Journal>);

impl KeyStore for JournalKeyStore {
    fn read(&self) -> io::Result<Option<String>> {
        Ok(self.0.kept(crate::journal::SNS_SIGNING_KEY))
    }

    fn write(&self, text: &str) -> io::Result<()> {
        self.0
            .keep(crate::journal::SNS_SIGNING_KEY, text.to_string());
        Ok(())
    }

    fn describe(&self) -> String {
        format!("the store {}", self.0.store)
    }
}

/// The server's signer: the identity is made (or loaded from its store)
/// on the first signature or certificate asked for, so a server that never
/// publishes never pays for an RSA key.
pub struct LazySigner {
    store: Option<std::sync::Arc<dyn KeyStore>>,
    identity: std::sync::OnceLock<SigningIdentity>,
}

impl LazySigner {
    /// Keeps the identity in `store`; without one, it lasts for this run.
    pub fn new(store: Option<std::sync::Arc<dyn KeyStore>>) -> LazySigner {
        LazySigner {
            store,
            identity: std::sync::OnceLock::new(),
        }
    }

    pub fn identity(&self) -> &SigningIdentity {
        self.identity.get_or_init(|| match &self.store {
            Some(store) => SigningIdentity::load_or_create_in(&**store).unwrap_or_else(|e| {
                tracing::warn!(
                    "cannot keep the SNS signing key in {}: {e}; using one for this run only",
                    store.describe()
                );
                SigningIdentity::generate()
            }),
            None => SigningIdentity::generate(),
        })
    }
}

impl retsu_core::sns::envelope::Signer for LazySigner {
    fn sign(&self, version: SignatureVersion, string_to_sign: &str) -> String {
        self.identity().sign(version, string_to_sign)
    }

    fn certificate_file_name(&self) -> &str {
        self.identity().certificate_file_name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_block_finds_each_block() {
        let text = "-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----\n\
                    -----BEGIN CERTIFICATE-----\nBB==\n-----END CERTIFICATE-----\n";
        assert_eq!(
            pem_block(text, "PRIVATE KEY"),
            Some("-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----")
        );
        assert_eq!(
            pem_block(text, "CERTIFICATE"),
            Some("-----BEGIN CERTIFICATE-----\nBB==\n-----END CERTIFICATE-----")
        );
        assert_eq!(pem_block(text, "RSA PRIVATE KEY"), None);
    }

    #[test]
    fn versions_and_kinds_round_trip() {
        for v in [SignatureVersion::V1, SignatureVersion::V2] {
            assert_eq!(SignatureVersion::from_attribute(v.as_str()), Some(v));
        }
        assert_eq!(SignatureVersion::from_attribute("3"), None);
        assert_eq!(SignatureVersion::default(), SignatureVersion::V1);
        for k in [
            EnvelopeKind::Notification,
            EnvelopeKind::SubscriptionConfirmation,
            EnvelopeKind::UnsubscribeConfirmation,
        ] {
            assert_eq!(EnvelopeKind::from_type(k.as_str()), Some(k));
        }
        assert_eq!(EnvelopeKind::from_type("notification"), None);
    }
}
