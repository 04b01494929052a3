//! The web console's HTTP side: its files come out of the binary at
//! `/_retsu/ui/`, a browser opening `/` is sent there, and every other
//! request to `/` is still SQS. (What the page does is tested in a real
//! browser by console/test/e2e.mjs, run from scripts/console-test.sh.)

mod common;

use common::*;
use retsu::config::Config;

/// A client that shows redirects instead of following them.
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

const BROWSER_ACCEPT: &str =
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8";

/// GET `path` without following redirects, with a browser's Accept header
/// or (`browser` false) none, as SDKs and curl send.
async fn fetch(t: &TestServer, path: &str, browser: bool) -> reqwest::Response {
    let mut req = no_redirects().get(format!("{}{path}", t.endpoint));
    if browser {
        req = req.header("accept", BROWSER_ACCEPT);
    }
    req.send().await.unwrap()
}

#[tokio::test]
async fn a_browser_at_the_root_is_sent_to_the_console() {
    let t = TestServer::start().await;
    let resp = fetch(&t, "/", true).await;
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()["location"], "/_retsu/ui/");

    // Without the trailing slash the page's relative paths would break.
    let resp = fetch(&t, "/_retsu/ui", false).await;
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()["location"], "/_retsu/ui/");
}

#[tokio::test]
async fn every_other_root_request_stays_sqs() {
    let t = TestServer::start().await;
    let http = no_redirects();

    // No Accept: text/html — what SDKs and curl send.
    let resp = fetch(&t, "/", false).await;
    assert_eq!(resp.status(), 404);
    assert_eq!(resp.text().await.unwrap(), "<UnknownOperationException/>");

    // A query-protocol GET names its Action, even from a browser.
    let resp = fetch(&t, "/?Action=ListQueues", true).await;
    assert_eq!(resp.status(), 200);
    assert!(resp.text().await.unwrap().contains("<ListQueuesResponse"));

    // POSTs are never redirected.
    let resp = http
        .post(format!("{}/", t.endpoint))
        .header("accept", BROWSER_ACCEPT)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("Action=ListQueues&Version=2012-11-05")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);

    // A JSON-protocol request that happens to accept HTML.
    let resp = http
        .get(format!("{}/", t.endpoint))
        .header("accept", BROWSER_ACCEPT)
        .header("x-amz-target", "AmazonSQS.ListQueues")
        .send()
        .await
        .unwrap();
    assert_ne!(resp.status(), 303);

    // And the SDK still works.
    t.create_queue("still-sqs").await;
    let listed = t.client.list_queues().send().await.unwrap();
    assert_eq!(listed.queue_urls().len(), 1);
}

#[tokio::test]
async fn the_console_files_are_embedded_and_typed() {
    let t = TestServer::start().await;
    let get = |path: &str| {
        t.http
            .get(format!("{}/_retsu/ui/{path}", t.endpoint))
            .send()
    };

    let resp = get("").await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/html; charset=utf-8");
    let page = resp.text().await.unwrap();
    assert!(
        page.contains(r#"<script type="module" src="app.js">"#),
        "{page}"
    );
    // No CDN: every script and style the page names is one of ours.
    assert!(!page.contains("http://") && !page.contains("https://"));

    for (path, kind) in [
        ("app.js", "text/javascript; charset=utf-8"),
        ("views/queue.js", "text/javascript; charset=utf-8"),
        ("vendor/preact.module.js", "text/javascript; charset=utf-8"),
        ("vendor/uPlot.esm.js", "text/javascript; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
    ] {
        let resp = get(path).await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert_eq!(resp.headers()["content-type"], kind, "{path}");
        assert!(!resp.bytes().await.unwrap().is_empty(), "{path}");
    }

    // The page never receives: only the SQS call in api.js could, and it
    // refuses to; no other script names the action.
    let api = get("api.js").await.unwrap().text().await.unwrap();
    assert!(api.contains("if (action === 'ReceiveMessage') throw"));
    for path in [
        "app.js",
        "util.js",
        "views/queues.js",
        "views/queue.js",
        "views/message.js",
        "views/dlq.js",
        "views/time.js",
        "views/parts.js",
    ] {
        let text = get(path).await.unwrap().text().await.unwrap();
        assert!(
            !text.contains("'ReceiveMessage'") && !text.contains("AmazonSQS.Receive"),
            "{path}"
        );
    }

    let resp = get("no-such-file.js").await.unwrap();
    assert_eq!(resp.status(), 404);
    let body: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "NotFound");

    let resp = t
        .http
        .post(format!("{}/_retsu/ui/app.js", t.endpoint))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 405);
    let body: serde_json::Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "BadRequest");
}

#[tokio::test]
async fn the_files_need_no_token_but_the_data_does() {
    let t = TestServer::start_with(Config {
        admin_token: Some("s3cret".into()),
        ..Config::ephemeral()
    })
    .await;
    // The files hold no state; the page asks for the token when the admin
    // API answers 401.
    let resp = fetch(&t, "/_retsu/ui/", false).await;
    assert_eq!(resp.status(), 200);
    let resp = fetch(&t, "/_retsu/queues", false).await;
    assert_eq!(resp.status(), 401);
}

#[tokio::test]
async fn no_admin_means_no_console() {
    let t = TestServer::start_with(Config {
        no_admin: true,
        ..Config::ephemeral()
    })
    .await;
    let resp = fetch(&t, "/", true).await;
    assert_eq!(resp.status(), 404);
    assert_eq!(resp.text().await.unwrap(), "<UnknownOperationException/>");
    let resp = fetch(&t, "/_retsu/ui/", false).await;
    assert_ne!(resp.status(), 200);
    assert!(!resp.text().await.unwrap().contains("<html"));
}
