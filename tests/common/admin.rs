//! The admin API (`/_retsu/…`) through HTTP, for the tests of the admin
//! endpoints and of what they report (history, faults, extensions).

use reqwest::Method;
use serde_json::Value;

use super::{TestServer, ACCOUNT, REGION};

impl TestServer {
    /// An admin call: (status, JSON body). Every admin answer is JSON.
    pub async fn admin(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        self.admin_with_token(method, path, body, None).await
    }

    /// [`TestServer::admin`] with `Authorization: Bearer <token>` when
    /// `token` is given.
    pub async fn admin_with_token(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        token: Option<&str>,
    ) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.endpoint));
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let raw = self.raw(req).await;
        assert_eq!(
            raw.header("content-type"),
            Some("application/json"),
            "{raw:?}"
        );
        (raw.status, raw.json())
    }

    /// An admin GET that must answer 200; its JSON body.
    pub async fn admin_get(&self, path: &str) -> Value {
        let (status, body) = self.admin(Method::GET, path, None).await;
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// An admin POST that must answer 200; its JSON body.
    pub async fn admin_post(&self, path: &str, body: Value) -> Value {
        let (status, answer) = self.admin(Method::POST, path, Some(body)).await;
        assert_eq!(status, 200, "POST {path}: {answer}");
        answer
    }

    /// The admin peek of queue `name` (default region and account), with
    /// `query` (`""` or `?state=…&limit=…`).
    pub async fn peek(&self, name: &str, query: &str) -> Value {
        self.admin_get(&format!(
            "/_retsu/queues/{REGION}/{ACCOUNT}/{name}/messages{query}"
        ))
        .await
    }

    /// A message's history (`GET /_retsu/messages/{id}`).
    pub async fn message_history(&self, id: &str) -> Value {
        self.admin_get(&format!("/_retsu/messages/{id}")).await
    }
}
