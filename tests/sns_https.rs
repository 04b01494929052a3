//! SNS delivering to `https://` endpoints: a local TLS endpoint whose
//! certificate a test authority signed, trusted through `SSL_CERT_FILE`
//! as a user would trust their own; and one whose authority is not
//! trusted, which Retsu must refuse to talk to (AWS requires a trusted
//! chain). Own test binary: the trust store is read once per process.

mod common;

use std::sync::{Arc, Once};
use std::time::Duration;

use bytes::Bytes;
use common::*;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
use tokio::sync::mpsc;
use tokio_rustls::rustls::{self, pki_types::PrivateKeyDer};

/// A certificate authority (its name told apart by `name`) and an
/// endpoint certificate for `localhost` it signed; the authority's PEM is what a client trusts.
struct Authority {
    pem: String,
    server: Arc<rustls::ServerConfig>,
}

fn authority(name: &str) -> Authority {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, format!("Retsu test CA {name}"));
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca.self_signed(&ca_key).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
        )
        .unwrap();
    Authority {
        pem: ca.pem(),
        server: Arc::new(server),
    }
}

/// The authority every test here trusts, written where `SSL_CERT_FILE`
/// points before Retsu reads its trust store.
fn trusted() -> &'static Authority {
    static AUTHORITY: std::sync::OnceLock<Authority> = std::sync::OnceLock::new();
    static SET: Once = Once::new();
    let authority = AUTHORITY.get_or_init(|| authority("trusted"));
    SET.call_once(|| {
        let path = std::env::temp_dir().join(format!("retsu-test-ca-{}.pem", std::process::id()));
        std::fs::write(&path, &authority.pem).unwrap();
        std::env::set_var("SSL_CERT_FILE", &path);
    });
    authority
}

/// What the endpoint saw: a request's body, or a TLS handshake that failed.
#[derive(Debug)]
enum Seen {
    Post(String),
    HandshakeFailed(String),
}

/// An https endpoint on a loopback port answering 200 to every request.
async fn endpoint(tls: Arc<rustls::ServerConfig>) -> (String, mpsc::UnboundedReceiver<Seen>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "https://localhost:{}/hook",
        listener.local_addr().unwrap().port()
    );
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let (tx, seen) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let (acceptor, tx) = (acceptor.clone(), tx.clone());
            tokio::spawn(async move {
                let stream = match acceptor.accept(tcp).await {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = tx.send(Seen::HandshakeFailed(e.to_string()));
                        return;
                    }
                };
                let service =
                    hyper::service::service_fn(move |r: hyper::Request<hyper::body::Incoming>| {
                        let tx = tx.clone();
                        async move {
                            let body = r.into_body().collect().await?.to_bytes();
                            let _ = tx.send(Seen::Post(String::from_utf8_lossy(&body).into()));
                            Ok::<_, hyper::Error>(hyper::Response::new(Full::new(Bytes::new())))
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (url, seen)
}

async fn next(seen: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    tokio::time::timeout(Duration::from_secs(5), seen.recv())
        .await
        .expect("nothing reached the endpoint within 5 s")
        .unwrap()
}

/// A new topic `name` with `url` subscribed over https; its ARN.
async fn subscribe_https(sns: &aws_sdk_sns::Client, name: &str, url: &str) -> String {
    let topic = sns
        .create_topic()
        .name(name)
        .send()
        .await
        .unwrap()
        .topic_arn
        .unwrap();
    sns.subscribe()
        .topic_arn(&topic)
        .protocol("https")
        .endpoint(url)
        .send()
        .await
        .unwrap();
    topic
}

#[tokio::test]
async fn a_trusted_https_endpoint_is_confirmed_and_notified() {
    let authority = trusted();
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let (url, mut seen) = endpoint(authority.server.clone()).await;
    let topic = subscribe_https(&sns, "secure", &url).await;
    let Seen::Post(body) = next(&mut seen).await else {
        panic!("the confirmation's handshake failed")
    };
    let confirmation: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(confirmation["Type"], "SubscriptionConfirmation");
    let got = t
        .http
        .get(confirmation["SubscribeURL"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), 200);

    sns.publish()
        .topic_arn(&topic)
        .message("over TLS")
        .send()
        .await
        .unwrap();
    let Seen::Post(body) = next(&mut seen).await else {
        panic!("the notification's handshake failed")
    };
    let notification: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(notification["Type"], "Notification");
    assert_eq!(notification["Message"], "over TLS");
}

#[tokio::test]
async fn an_endpoint_whose_certificate_is_not_trusted_gets_nothing() {
    trusted();
    let stranger = authority("stranger");
    let t = TestServer::start().await;
    let sns = sns_client(&t.endpoint);
    let (url, mut seen) = endpoint(stranger.server).await;
    let topic = subscribe_https(&sns, "insecure", &url).await;
    // Retsu refused the certificate during the handshake (a TLS alert),
    // so no request was made.
    match next(&mut seen).await {
        Seen::HandshakeFailed(why) => assert!(why.contains("UnknownCA"), "{why}"),
        Seen::Post(body) => panic!("an untrusted endpoint got a request: {body}"),
    }
    let subs = sns
        .list_subscriptions_by_topic()
        .topic_arn(&topic)
        .send()
        .await
        .unwrap();
    assert_eq!(
        subs.subscriptions()[0].subscription_arn(),
        Some("PendingConfirmation")
    );
}
