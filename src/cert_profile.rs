//! The one certificate profile behind every certificate Retsu makes: the
//! local CA and the server certificate it signs (`tls/generated.rs`), and
//! SNS's self-signed signing certificate (`notification_signing.rs`).
//!
//! Why one: each is x509-cert's `BuilderProfile` with the same few
//! extensions in the same order, differing only in what the fields below
//! say, so a change to how Retsu's certificates look is made once.

use x509_cert::builder::profile::BuilderProfile;
use x509_cert::certificate::TbsCertificate;
use x509_cert::der::oid::ObjectIdentifier;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectAltName, SubjectKeyIdentifier,
};
use x509_cert::ext::{Extension, ToExtension};
use x509_cert::name::Name;
use x509_cert::spki::SubjectPublicKeyInfoRef;

/// What a certificate is for, and who issues it.
pub(crate) struct CertProfile {
    pub subject: Name,
    /// The issuer's name, or `None` for a self-signed certificate.
    pub issuer: Option<Name>,
    /// A CA's path length (`Some(0)`: it signs end entities only), or
    /// `None` for an end entity.
    pub ca_path_len: Option<u8>,
    pub usage: KeyUsage,
    /// Extended key usages (e.g. TLS server authentication), if any.
    pub extended_usage: Vec<ObjectIdentifier>,
    /// The names a client matches the certificate to (empty: none).
    pub names: Vec<GeneralName>,
}

impl CertProfile {
    /// An end entity that only signs (`digitalSignature`), for `names`.
    pub fn end_entity(subject: Name, issuer: Option<Name>, names: Vec<GeneralName>) -> Self {
        CertProfile {
            subject,
            issuer,
            ca_path_len: None,
            usage: KeyUsage(KeyUsages::DigitalSignature.into()),
            extended_usage: Vec::new(),
            names,
        }
    }
}

impl BuilderProfile for CertProfile {
    fn get_issuer(&self, subject: &Name) -> Name {
        self.issuer.clone().unwrap_or_else(|| subject.clone())
    }

    fn get_subject(&self) -> Name {
        self.subject.clone()
    }

    fn build_extensions(
        &self,
        spk: SubjectPublicKeyInfoRef<'_>,
        issuer_spk: SubjectPublicKeyInfoRef<'_>,
        tbs: &TbsCertificate,
    ) -> x509_cert::builder::Result<Vec<Extension>> {
        let subject = tbs.subject();
        let mut extensions = Vec::new();
        let basic = BasicConstraints {
            ca: self.ca_path_len.is_some(),
            path_len_constraint: self.ca_path_len,
        };
        extensions.push(basic.to_extension(subject, &extensions)?);
        extensions.push(self.usage.to_extension(subject, &extensions)?);
        if !self.extended_usage.is_empty() {
            let extended = ExtendedKeyUsage(self.extended_usage.clone());
            extensions.push(extended.to_extension(subject, &extensions)?);
        }
        // Validators that match the certificate to a host look here, not at the CN.
        if !self.names.is_empty() {
            let names = SubjectAltName(self.names.clone());
            extensions.push(names.to_extension(subject, &extensions)?);
        }
        // Chains are built by key: a certificate another key signed names it.
        if self.issuer.is_some() {
            let authority = AuthorityKeyIdentifier::try_from(issuer_spk)?;
            extensions.push(authority.to_extension(subject, &extensions)?);
        }
        let key_id = SubjectKeyIdentifier::try_from(spk)?;
        extensions.push(key_id.to_extension(subject, &extensions)?);
        Ok(extensions)
    }
}
