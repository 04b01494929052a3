//! HTTPS on the listening port (`--tls`): the official SDKs over TLS with
//! Retsu's CA trusted, plain HTTP still answering on the same port, queue
//! URLs in the scheme each request came in on, the given certificate
//! served, the generated one kept, and a bad certificate stopping
//! start-up with its cause.
//!
//! The in-process servers serve a certificate from a local CA made in a
//! scratch directory (`retsu::tls::LocalCa`), given as `--tls-cert` and
//! `--tls-key`, so no test writes to the user's own directory; the
//! binary's tests give `--data-dir` for the generated one. Under
//! `RETSU_TEST_CLUSTER=1` the in-process tests run on a cluster, whose
//! forwarding carries the scheme.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode, TlsContext, TrustStore};
use common::process::retsu;
use common::*;
use retsu::config::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::{self, pki_types::pem::PemObject, pki_types::CertificateDer};

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "retsu-https-{name}-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A server with TLS on, serving a certificate from a local CA made in
/// `dir`; with the CA's PEM.
async fn tls_server(dir: &Path) -> (TestServer, Vec<u8>) {
    let tls = dir.join("tls");
    let ca = retsu::tls::LocalCa::open(&tls).expect("the local CA is made");
    let mut config = Config::ephemeral();
    config.tls.cert = Some(ca.cert_path.clone());
    config.tls.key = Some(ca.key_path.clone());
    let server = TestServer::start_with(config).await;
    (server, std::fs::read(&ca.ca_path).unwrap())
}

fn https_endpoint(server: &TestServer) -> String {
    server.endpoint.replacen("http://", "https://", 1)
}

/// The SDKs' HTTP client (rustls on ring) trusting only `ca_pem`.
fn trusting(ca_pem: &[u8]) -> aws_sdk_sqs::config::SharedHttpClient {
    aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(CryptoMode::Ring))
        .tls_context(
            TlsContext::builder()
                .with_trust_store(TrustStore::empty().with_pem_certificate(ca_pem.to_vec()))
                .build()
                .unwrap(),
        )
        .build_https()
}

fn sqs_over_tls(endpoint: &str, ca_pem: &[u8]) -> aws_sdk_sqs::Client {
    aws_sdk_sqs::Client::from_conf(
        aws_sdk_sqs::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(REGION))
            .credentials_provider(Credentials::new("test", "test", None, None, "static"))
            .endpoint_url(endpoint)
            .http_client(trusting(ca_pem))
            .retry_config(aws_sdk_sqs::config::retry::RetryConfig::disabled())
            .build(),
    )
}

fn sns_over_tls(endpoint: &str, ca_pem: &[u8]) -> aws_sdk_sns::Client {
    aws_sdk_sns::Client::from_conf(
        aws_sdk_sns::Config::builder()
            .behavior_version(aws_sdk_sns::config::BehaviorVersion::latest())
            .region(aws_sdk_sns::config::Region::new(REGION))
            .credentials_provider(aws_sdk_sns::config::Credentials::new(
                "test", "test", None, None, "static",
            ))
            .endpoint_url(endpoint)
            .http_client(trusting(ca_pem))
            .retry_config(aws_sdk_sns::config::retry::RetryConfig::disabled())
            .build(),
    )
}

/// One GET over TLS with a client trusting `roots`: the status line and
/// the certificate the server presented.
async fn get_over_tls(
    addr: std::net::SocketAddr,
    server_name: &str,
    roots: &[CertificateDer<'static>],
    path: &str,
) -> Result<(String, CertificateDer<'static>), String> {
    let mut store = rustls::RootCertStore::empty();
    for root in roots {
        store.add(root.clone()).map_err(|e| e.to_string())?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(store)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let name = rustls::pki_types::ServerName::try_from(server_name.to_string()).unwrap();
    let mut tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let presented = tls.get_ref().1.peer_certificates().unwrap()[0].clone();
    tls.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {server_name}\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    )
    .await
    .map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer).to_string();
    Ok((answer, presented))
}

fn pem_certs(pem: &[u8]) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem)
        .map(Result::unwrap)
        .collect()
}

#[tokio::test]
async fn sqs_over_tls_and_plain_http_share_the_port() {
    let dir = Scratch::new("sqs");
    let (server, ca) = tls_server(&dir.0).await;
    let https = https_endpoint(&server);
    let secure = sqs_over_tls(&https, &ca);

    let url = secure
        .create_queue()
        .queue_name("over-tls")
        .send()
        .await
        .expect("CreateQueue over TLS")
        .queue_url
        .unwrap();
    assert_eq!(url, format!("{https}/{ACCOUNT}/over-tls"));
    // The SDK sends to the https queue URL it was given.
    secure
        .send_message()
        .queue_url(&url)
        .message_body("sealed")
        .send()
        .await
        .expect("SendMessage over TLS");
    let received = secure
        .receive_message()
        .queue_url(&url)
        .send()
        .await
        .expect("ReceiveMessage over TLS");
    assert_eq!(received.messages()[0].body(), Some("sealed"));
    let listed = secure.list_queues().send().await.unwrap();
    assert_eq!(listed.queue_urls(), std::slice::from_ref(&url));

    // Plain HTTP on the same port: the same queue, http URLs.
    let plain = server
        .client
        .get_queue_url()
        .queue_name("over-tls")
        .send()
        .await
        .expect("GetQueueUrl over plain HTTP")
        .queue_url
        .unwrap();
    assert_eq!(plain, format!("{}/{ACCOUNT}/over-tls", server.endpoint));
    assert!(plain.starts_with("http://"), "{plain}");
    server
        .client
        .send_message()
        .queue_url(&plain)
        .message_body("clear")
        .send()
        .await
        .expect("SendMessage over plain HTTP");
    let attrs = secure
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
        .send()
        .await
        .unwrap();
    let attrs = attrs.attributes().unwrap();
    let count = |name| attrs[&name].parse::<u32>().unwrap();
    assert_eq!(
        count(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages)
            + count(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessagesNotVisible),
        2
    );
    // The query protocol's URL over TLS, by a raw request.
    let addr = server.server.local_addr();
    let (answer, _) = get_over_tls(
        addr,
        "localhost",
        &pem_certs(&ca),
        "/?Action=GetQueueUrl&QueueName=over-tls",
    )
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // The Host it sent ("localhost", no port), with the scheme it used.
    assert!(
        answer.contains(&format!(
            "<QueueUrl>https://localhost/{ACCOUNT}/over-tls</QueueUrl>"
        )),
        "{answer}"
    );
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn sns_over_tls_delivers_to_a_queue() {
    let dir = Scratch::new("sns");
    let (server, ca) = tls_server(&dir.0).await;
    let https = https_endpoint(&server);
    let sqs = sqs_over_tls(&https, &ca);
    let sns = sns_over_tls(&https, &ca);
    let queue = sqs
        .create_queue()
        .queue_name("inbox")
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    let topic = sns
        .create_topic()
        .name("news")
        .send()
        .await
        .expect("CreateTopic over TLS")
        .topic_arn
        .unwrap();
    sns.subscribe()
        .topic_arn(&topic)
        .protocol("sqs")
        .endpoint(format!("arn:aws:sqs:{REGION}:{ACCOUNT}:inbox"))
        .attributes("RawMessageDelivery", "true")
        .send()
        .await
        .expect("Subscribe over TLS");
    sns.publish()
        .topic_arn(&topic)
        .message("over tls")
        .send()
        .await
        .expect("Publish over TLS");
    let received = sqs
        .receive_message()
        .queue_url(&queue)
        .send()
        .await
        .unwrap();
    assert_eq!(received.messages()[0].body(), Some("over tls"));
    server.server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_given_certificate_is_served_and_an_untrusted_client_is_refused() {
    // A certificate of the user's own, for a name of theirs.
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "A user's own CA");
    let ca = ca.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["sqs.retsu.test".to_string()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    let dir = Scratch::new("given");
    let (cert_path, key_path) = (dir.0.join("server.crt"), dir.0.join("server.key"));
    // The chain: the server's certificate, then its CA.
    std::fs::write(&cert_path, format!("{}{}", cert.pem(), ca.pem())).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    let mut config = Config::ephemeral();
    config.tls.cert = Some(cert_path);
    config.tls.key = Some(key_path);
    let server = TestServer::start_with(config).await;
    let addr = server.server.local_addr();

    let (answer, presented) = get_over_tls(addr, "sqs.retsu.test", &[ca.der().clone()], "/health")
        .await
        .unwrap();
    assert_eq!(
        presented.as_ref(),
        cert.der().as_ref(),
        "the given certificate"
    );
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.ends_with("ok"),
        "{answer}"
    );

    // A client that trusts another CA gets no answer.
    let other = retsu::tls::LocalCa::open(&dir.0.join("other")).unwrap();
    let other_ca = pem_certs(&std::fs::read(&other.ca_path).unwrap());
    let refused = get_over_tls(addr, "sqs.retsu.test", &other_ca, "/health").await;
    assert!(refused.is_err(), "{refused:?}");
    // The server still answers after a failed handshake, both ways.
    get_over_tls(addr, "sqs.retsu.test", &[ca.der().clone()], "/health")
        .await
        .unwrap();
    let plain = reqwest::get(format!("{}/health", server.endpoint))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(plain, "ok");
    server.server.shutdown().await.unwrap();
}

/// `retsu` with `args`; its exit status and standard error, when it ends
/// within a few seconds.
fn run_to_exit(args: &[&str]) -> (Option<i32>, String) {
    let out = retsu()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("retsu runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn a_bad_certificate_or_key_stops_start_up_naming_the_cause() {
    let dir = Scratch::new("bad");
    let missing = dir.0.join("missing.pem");
    let missing = missing.to_str().unwrap();
    let port = common::process::free_port().to_string();

    let (code, stderr) =
        run_to_exit(&["--port", &port, "--tls-cert", missing, "--tls-key", missing]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read the certificate file") && stderr.contains(missing),
        "{stderr}"
    );

    // A key that is not the certificate's.
    let ca = retsu::tls::LocalCa::open(&dir.0.join("tls")).unwrap();
    let tls = ca.ca_path.parent().unwrap();
    let cert = tls.join("cert.pem");
    let wrong_key = tls.join("ca-key.pem");
    let (code, stderr) = run_to_exit(&[
        "--port",
        &port,
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        wrong_key.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("does not fit the certificate") && stderr.contains("ca-key.pem"),
        "{stderr}"
    );

    // Not PEM at all, and a certificate without its key.
    let junk = dir.0.join("junk.pem");
    std::fs::write(&junk, "not a certificate\n").unwrap();
    let (code, stderr) = run_to_exit(&[
        "--port",
        &port,
        "--tls-cert",
        junk.to_str().unwrap(),
        "--tls-key",
        wrong_key.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("holds no certificate"), "{stderr}");
    let (code, stderr) = run_to_exit(&["--port", &port, "--tls-cert", cert.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--tls-cert needs --tls-key"), "{stderr}");
}

/// The binary with `--tls --data-dir dir`, until its ready line: the
/// process, and the https endpoint and CA path of its `retsu tls` line.
fn start_tls_binary(dir: &Path) -> (std::process::Child, String, PathBuf) {
    let mut child = retsu()
        .args(["--tls", "--port", "0", "--data-dir"])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("retsu starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = Instant::now();
    let mut tls_line = None;
    while let Some(Ok(line)) = lines.next() {
        if let Some(rest) = line.strip_prefix("retsu tls ") {
            tls_line = Some(rest.to_string());
        }
        if line.starts_with("retsu ready ") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "not ready");
    }
    let tls_line = tls_line.expect("a `retsu tls` line before the ready line");
    let (https, ca) = tls_line.split_once(' ').expect("endpoint and CA path");
    (child, https.to_string(), PathBuf::from(ca))
}

#[tokio::test]
async fn the_generated_ca_is_kept_in_the_data_dir_and_printed_by_tls_ca() {
    let dir = Scratch::new("generated");
    let (mut child, https, ca_path) = start_tls_binary(&dir.0);
    assert_eq!(ca_path, dir.0.join("tls").join("ca.pem"));
    assert!(https.starts_with("https://127.0.0.1:"), "{https}");
    let ca = std::fs::read(&ca_path).unwrap();

    // The official SDK over TLS, trusting the CA file it names.
    let sqs = sqs_over_tls(&https, &ca);
    let url = sqs
        .create_queue()
        .queue_name("kept")
        .send()
        .await
        .expect("CreateQueue over TLS")
        .queue_url
        .unwrap();
    assert_eq!(url, format!("{https}/{ACCOUNT}/kept"));
    // The certificate names localhost and LocalStack's domain as well.
    let addr: std::net::SocketAddr = https.trim_start_matches("https://").parse().unwrap();
    for name in ["localhost", "sqs.localhost.localstack.cloud"] {
        get_over_tls(addr, name, &pem_certs(&ca), "/health")
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    // `retsu tls ca` names the same file, and a restart keeps the CA.
    let out = retsu()
        .args(["--data-dir"])
        .arg(&dir.0)
        .args(["tls", "ca"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        ca_path.to_str().unwrap()
    );
    let (mut child, https, again) = start_tls_binary(&dir.0);
    assert_eq!(again, ca_path);
    assert_eq!(
        std::fs::read(&ca_path).unwrap(),
        ca,
        "the same CA after a restart"
    );
    let url = sqs_over_tls(&https, &ca)
        .get_queue_url()
        .queue_name("kept")
        .send()
        .await
        .expect("the CA trusted before the restart still works")
        .queue_url
        .unwrap();
    assert_eq!(url, format!("{https}/{ACCOUNT}/kept"));
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn tls_ca_without_a_data_dir_uses_the_per_user_directory() {
    let home = Scratch::new("home");
    let out = retsu()
        .args(["tls", "ca"])
        .env("HOME", &home.0)
        .env("XDG_DATA_HOME", home.0.join("data"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert_eq!(path, home.0.join("data/retsu/tls/ca.pem"));
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .starts_with("-----BEGIN CERTIFICATE-----"));
}

#[tokio::test]
async fn the_embedded_server_answers_https_when_asked() {
    let dir = Scratch::new("embed");
    let server = retsu::embed::EmbeddedServer::builder()
        .tls(dir.0.join("tls"))
        .start()
        .await
        .unwrap();
    assert!(server.endpoint_url().starts_with("https://127.0.0.1:"));
    let ca = std::fs::read(server.ca_certificate().expect("the CA to trust")).unwrap();
    let sqs = sqs_over_tls(server.endpoint_url(), &ca);
    let url = sqs
        .create_queue()
        .queue_name("embedded")
        .send()
        .await
        .expect("CreateQueue over TLS")
        .queue_url
        .unwrap();
    assert_eq!(url, server.queue_url("embedded"));
    // Plain HTTP still answers on the same port.
    let plain = format!("http://{}", server.local_addr());
    let listed = sdk_client(&plain, REGION)
        .list_queues()
        .send()
        .await
        .unwrap();
    assert_eq!(listed.queue_urls(), [format!("{plain}/{ACCOUNT}/embedded")]);
    server.shutdown().await.unwrap();
}
