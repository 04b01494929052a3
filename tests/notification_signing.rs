//! SNS message signing (src/notification_signing.rs) checked from outside:
//! the strings to sign byte for byte, and signatures verified by `ring` with
//! the public key that `x509-parser` reads from the served PEM certificate,
//! so no code that signed takes part in verifying.

use std::sync::OnceLock;
use std::time::SystemTime;

use base64::Engine as _;
use retsu::notification_signing::{
    string_to_sign, EnvelopeKind, SignatureVersion, SigningIdentity, KEY_FILE_NAME,
};
use ring::signature::{
    UnparsedPublicKey, VerificationAlgorithm, RSA_PKCS1_1024_8192_SHA1_FOR_LEGACY_USE_ONLY,
    RSA_PKCS1_2048_8192_SHA256,
};
use serde_json::Value;
use x509_parser::prelude::*;

/// Key generation is the slow part; one identity serves the tests that
/// only sign.
fn identity() -> &'static SigningIdentity {
    static IDENTITY: OnceLock<SigningIdentity> = OnceLock::new();
    IDENTITY.get_or_init(SigningIdentity::generate)
}

/// The string to sign of an envelope given as JSON, as a receiver builds it:
/// from the decoded values.
fn string_of(envelope: &str) -> String {
    let envelope: Value = serde_json::from_str(envelope).unwrap();
    let kind = EnvelopeKind::from_type(envelope["Type"].as_str().unwrap()).unwrap();
    string_to_sign(kind, &|name| envelope.get(name).and_then(Value::as_str))
}

const NOTIFICATION: &str = r#"{
  "Type" : "Notification",
  "MessageId" : "4d4dc071-…",
  "TopicArn" : "arn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P",
  "Subject" : "My subject",
  "Message" : "My Test Message",
  "Timestamp" : "2019-01-31T04:37:04.321Z",
  "SignatureVersion" : "1",
  "UnsubscribeURL" : "https://sns.us-east-2.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=x"
}"#;

#[test]
fn notification_string_is_the_specs_example() {
    // Spec §6.7's example, byte for byte; the envelope's other fields
    // (SignatureVersion, UnsubscribeURL) are not signed.
    assert_eq!(
        string_of(NOTIFICATION),
        "Message\nMy Test Message\nMessageId\n4d4dc071-…\nSubject\nMy subject\n\
         Timestamp\n2019-01-31T04:37:04.321Z\n\
         TopicArn\narn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P\n\
         Type\nNotification\n"
    );
}

#[test]
fn notification_string_without_subject_leaves_it_out() {
    let without: Value = {
        let mut v: Value = serde_json::from_str(NOTIFICATION).unwrap();
        v.as_object_mut().unwrap().remove("Subject");
        v
    };
    assert_eq!(
        string_of(&without.to_string()),
        "Message\nMy Test Message\nMessageId\n4d4dc071-…\n\
         Timestamp\n2019-01-31T04:37:04.321Z\n\
         TopicArn\narn:aws:sns:us-east-2:123456789012:s4-MySNSTopic-1G1WEFCOXTC0P\n\
         Type\nNotification\n"
    );
}

#[test]
fn subscription_confirmation_string_has_its_fields_in_order() {
    // The message's escaped newline is signed as a real newline.
    let envelope = r#"{
  "Type" : "SubscriptionConfirmation",
  "MessageId" : "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
  "Token" : "2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736",
  "TopicArn" : "arn:aws:sns:us-west-2:123456789012:MyTopic",
  "Message" : "You have chosen to subscribe to the topic arn:aws:sns:us-west-2:123456789012:MyTopic.\nTo confirm the subscription, visit the SubscribeURL included in this message.",
  "SubscribeURL" : "https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=2336412f37",
  "Timestamp" : "2012-04-26T20:45:04.751Z",
  "SignatureVersion" : "1"
}"#;
    assert_eq!(
        string_of(envelope),
        "Message\nYou have chosen to subscribe to the topic arn:aws:sns:us-west-2:123456789012:MyTopic.\n\
         To confirm the subscription, visit the SubscribeURL included in this message.\n\
         MessageId\n165545c9-2a5c-472c-8df2-7ff2be2b3b1b\n\
         SubscribeURL\nhttps://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=2336412f37\n\
         Timestamp\n2012-04-26T20:45:04.751Z\n\
         Token\n2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736\n\
         TopicArn\narn:aws:sns:us-west-2:123456789012:MyTopic\n\
         Type\nSubscriptionConfirmation\n"
    );
    // An UnsubscribeConfirmation signs the same fields.
    assert_eq!(
        EnvelopeKind::UnsubscribeConfirmation.signed_fields(),
        EnvelopeKind::SubscriptionConfirmation.signed_fields()
    );
}

/// The DER RSAPublicKey of the PEM certificate, as x509-parser reads it.
fn public_key_of(certificate_pem: &str) -> Vec<u8> {
    let (rest, pem) = parse_x509_pem(certificate_pem.as_bytes()).unwrap();
    assert!(rest.is_empty(), "one PEM block");
    assert_eq!(pem.label, "CERTIFICATE");
    let certificate = pem.parse_x509().unwrap();
    certificate.public_key().subject_public_key.data.to_vec()
}

fn verifies(
    algorithm: &'static dyn VerificationAlgorithm,
    certificate_pem: &str,
    message: &str,
    signature_base64: &str,
) -> bool {
    let signature = base64::engine::general_purpose::STANDARD
        .decode(signature_base64)
        .unwrap();
    UnparsedPublicKey::new(algorithm, public_key_of(certificate_pem))
        .verify(message.as_bytes(), &signature)
        .is_ok()
}

#[test]
fn signatures_verify_with_ring_and_tampering_fails() {
    let identity = identity();
    let message = string_of(NOTIFICATION);
    let tampered = message.replace("My Test Message", "My Test Messagf");
    let cases: [(SignatureVersion, &'static dyn VerificationAlgorithm); 2] = [
        (
            SignatureVersion::V1,
            &RSA_PKCS1_1024_8192_SHA1_FOR_LEGACY_USE_ONLY,
        ),
        (SignatureVersion::V2, &RSA_PKCS1_2048_8192_SHA256),
    ];
    for (version, algorithm) in cases {
        let signature = identity.sign(version, &message);
        assert_eq!(signature.len(), 344, "256 bytes in standard base64");
        let pem = identity.certificate_pem();
        assert!(
            verifies(algorithm, pem, &message, &signature),
            "{version:?}"
        );
        assert!(
            !verifies(algorithm, pem, &tampered, &signature),
            "{version:?} tampered"
        );
        // A flipped bit in the signature fails too.
        let mut bad = base64::engine::general_purpose::STANDARD
            .decode(&signature)
            .unwrap();
        bad[100] ^= 1;
        let bad = base64::engine::general_purpose::STANDARD.encode(bad);
        assert!(
            !verifies(algorithm, pem, &message, &bad),
            "{version:?} bit flip"
        );
    }
    // The two versions' signatures differ (other hash, other DigestInfo),
    // and one version's does not pass for the other's.
    let v1 = identity.sign(SignatureVersion::V1, &message);
    let v2 = identity.sign(SignatureVersion::V2, &message);
    assert_ne!(v1, v2);
    assert!(!verifies(
        &RSA_PKCS1_2048_8192_SHA256,
        identity.certificate_pem(),
        &message,
        &v1
    ));
}

#[test]
fn certificate_is_self_signed_for_sns_and_valid_ten_years() {
    let identity = identity();
    let pem = identity.certificate_pem();
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----\n"));
    assert!(pem.ends_with("-----END CERTIFICATE-----\n"));
    let (_, pem_block) = parse_x509_pem(pem.as_bytes()).unwrap();
    let certificate = pem_block.parse_x509().unwrap();

    let cn: Vec<_> = certificate
        .subject()
        .iter_common_name()
        .map(|cn| cn.as_str().unwrap())
        .collect();
    assert_eq!(cn, ["sns.amazonaws.com"]);
    assert_eq!(certificate.issuer(), certificate.subject());
    assert_eq!(
        certificate.signature_algorithm.algorithm,
        x509_parser::oid_registry::OID_PKCS1_SHA256WITHRSA
    );
    assert_eq!(certificate.version(), X509Version::V3);
    assert!(!certificate.is_ca());
    let san = certificate.subject_alternative_name().unwrap().unwrap();
    assert!(san
        .value
        .general_names
        .contains(&GeneralName::DNSName("sns.amazonaws.com")));

    // Serial: random, positive, at least 64 bits.
    assert!(certificate.raw_serial().len() >= 8);

    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let day = 24 * 60 * 60;
    let not_before = certificate.validity().not_before.timestamp();
    let not_after = certificate.validity().not_after.timestamp();
    assert!((now - day - 60..=now - day + 60).contains(&not_before));
    let ten_years = not_after - not_before;
    assert!(
        (3652 * day..=3653 * day).contains(&ten_years),
        "{ten_years}"
    );

    // Its self-signature verifies with ring too: a well-formed certificate.
    let tbs = certificate.tbs_certificate.as_ref();
    UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, public_key_of(pem))
        .verify(tbs, &certificate.signature_value.data)
        .unwrap();

    // The file name is "SimpleNotificationService-<32 hex>.pem".
    let name = identity.certificate_file_name();
    let hex = name
        .strip_prefix("SimpleNotificationService-")
        .and_then(|rest| rest.strip_suffix(".pem"))
        .unwrap();
    assert_eq!(hex.len(), 32);
    assert!(hex
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
}

/// A fresh directory under the target's temporary directory.
fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "notification-signing-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn load_or_create_persists_the_identity() {
    let dir = scratch_dir("persist");
    let first = SigningIdentity::load_or_create(&dir).unwrap();
    let path = dir.join(KEY_FILE_NAME);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("-----BEGIN PRIVATE KEY-----\n"));
    assert!(text.contains("-----BEGIN CERTIFICATE-----\n"));
    // Only the file itself: the temporary one was renamed.
    let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(entries.len(), 1);

    let second = SigningIdentity::load_or_create(&dir).unwrap();
    assert_eq!(first.certificate_pem(), second.certificate_pem());
    assert_eq!(
        first.certificate_file_name(),
        second.certificate_file_name()
    );
    // The loaded key signs what the first one's certificate verifies.
    let message = string_of(NOTIFICATION);
    let signature = second.sign(SignatureVersion::V2, &message);
    assert!(verifies(
        &RSA_PKCS1_2048_8192_SHA256,
        first.certificate_pem(),
        &message,
        &signature
    ));
    // PKCS#1 v1.5 is deterministic: same key, same signature.
    assert_eq!(
        first.sign(SignatureVersion::V1, &message),
        second.sign(SignatureVersion::V1, &message)
    );

    // A file with only the key (say, a user's) gets a certificate of that key
    // added, and keeps it from then on.
    let key_only = &text[..text.find("-----BEGIN CERTIFICATE-----").unwrap()];
    std::fs::write(&path, key_only).unwrap();
    let third = SigningIdentity::load_or_create(&dir).unwrap();
    assert_ne!(third.certificate_pem(), first.certificate_pem());
    assert!(verifies(
        &RSA_PKCS1_2048_8192_SHA256,
        third.certificate_pem(),
        &message,
        &signature
    ));
    let fourth = SigningIdentity::load_or_create(&dir).unwrap();
    assert_eq!(third.certificate_pem(), fourth.certificate_pem());

    // Not a key: an error, and the file is left alone.
    std::fs::write(&path, "not a key").unwrap();
    let error = SigningIdentity::load_or_create(&dir).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "not a key");
    std::fs::remove_dir_all(&dir).unwrap();
}
