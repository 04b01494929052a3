//! The web console's static files, embedded in the binary and served at
//! `/_retsu/ui/`.
//!
//! The console is plain ES modules in `console/static/` (the page and its
//! vendored libraries, committed so that `cargo build` needs no npm). It
//! talks only to the admin API and the SQS JSON API from the browser; the
//! server renders no state into it. Every file is compiled in with
//! `include_bytes!`, so the console works offline and from a scratch
//! container. The `embedded_files_match_the_directory` test keeps the list
//! below in step with the directory.
//!
//! A browser opening the bare endpoint (`GET /` asking for HTML, no SQS
//! `Action`) is sent to the console; every other request to `/` stays SQS.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::Router;

/// Where the console lives.
pub const UI_PATH: &str = "/_retsu/ui/";

macro_rules! embed {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/console/static/", $path)) as &[u8])),*]
    };
}

/// Every served file, by its path under `/_retsu/ui/`.
static FILES: &[(&str, &[u8])] = embed!(
    "index.html",
    "app.js",
    "api.js",
    "util.js",
    "style.css",
    "views/queues.js",
    "views/topics.js",
    "views/queue.js",
    "views/message.js",
    "views/dlq.js",
    "views/time.js",
    "views/cluster.js",
    "views/lambda.js",
    "views/parts.js",
    "vendor/preact.module.js",
    "vendor/hooks.module.js",
    "vendor/htm.module.js",
    "vendor/uPlot.esm.js",
    "vendor/uPlot.min.css",
    "vendor/LICENSES.txt",
);

/// The console's routes, to merge into the server's router.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/_retsu/ui", axum::routing::any(serve))
        .route("/_retsu/ui/", axum::routing::any(serve))
        .route("/_retsu/ui/{*path}", axum::routing::any(serve))
}

async fn serve(req: Request) -> Response {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return error(
            StatusCode::METHOD_NOT_ALLOWED,
            "BadRequest",
            "The console's files are read with GET.",
        );
    }
    let path = req.uri().path();
    let Some(rest) = path.strip_prefix(UI_PATH) else {
        // `/_retsu/ui` without the slash: relative asset paths need it.
        return redirect(UI_PATH);
    };
    let name = if rest.is_empty() { "index.html" } else { rest };
    match FILES.iter().find(|(file, _)| *file == name) {
        Some((file, embedded)) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, content_type(file))
            // Small files, and a new binary may bring new ones: always
            // revalidate rather than serve a stale console.
            .header(header::CACHE_CONTROL, "no-cache")
            .header("x-content-type-options", "nosniff")
            .body(if req.method() == Method::HEAD {
                Body::empty()
            } else {
                from_dev_dir(file).map_or(Body::from(*embedded), Body::from)
            })
            .unwrap_or_else(|_| Response::new(Body::empty())),
        None => error(
            StatusCode::NOT_FOUND,
            "NotFound",
            &format!("The console has no file {name}."),
        ),
    }
}

/// Working on the console: with `RETSU_CONSOLE_DIR=console/static` the
/// files (the same names as embedded) are read from disk on every request,
/// so an edit shows on reload without rebuilding the binary.
fn from_dev_dir(file: &str) -> Option<Vec<u8>> {
    let dir = std::env::var_os("RETSU_CONSOLE_DIR")?;
    std::fs::read(std::path::Path::new(&dir).join(file)).ok()
}

/// A browser's first visit to the endpoint: `GET /` that accepts HTML and
/// names no SQS action (an SDK never asks for HTML; a query-protocol GET
/// carries `Action`). Returns the redirect to the console, or `None` for a
/// request the SQS handler must answer.
pub fn browser_redirect(
    method: &Method,
    path: &str,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Option<Response> {
    if method != Method::GET || path != "/" {
        return None;
    }
    let wants_html = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/html"));
    let names_action = query.is_some_and(|q| {
        form_urlencoded::parse(q.as_bytes()).any(|(k, _)| k.eq_ignore_ascii_case("Action"))
    });
    let is_sqs = headers.contains_key("x-amz-target");
    (wants_html && !names_action && !is_sqs).then(|| redirect(UI_PATH))
}

fn redirect(to: &'static str) -> Response {
    let mut response = Response::new(Body::from(format!("See {to}\n")));
    *response.status_mut() = StatusCode::SEE_OTHER;
    response
        .headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static(to));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The admin API's error shape (its contract: never an empty body).
fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = serde_json::json!({"error": {"code": code, "message": message}});
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn content_type(file: &str) -> &'static str {
    match file.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "text/plain; charset=utf-8",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
            } else {
                let rel = path.strip_prefix(base).unwrap();
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }

    #[test]
    fn embedded_files_match_the_directory() {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("console/static");
        let mut on_disk = Vec::new();
        walk(&base, &base, &mut on_disk);
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(f, _)| f.to_string()).collect();
        embedded.sort();
        assert_eq!(embedded, on_disk, "update FILES in src/console.rs");
    }

    #[test]
    fn only_a_browser_asking_for_the_root_is_redirected() {
        let mut html = HeaderMap::new();
        html.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/html,application/xhtml+xml,*/*;q=0.8"),
        );
        let get = Method::GET;
        assert!(browser_redirect(&get, "/", None, &html).is_some());
        assert!(browser_redirect(&get, "/", Some("Action=ListQueues"), &html).is_none());
        assert!(browser_redirect(&Method::POST, "/", None, &html).is_none());
        assert!(browser_redirect(&get, "/000000000000/q", None, &html).is_none());
        assert!(browser_redirect(&get, "/", None, &HeaderMap::new()).is_none());
        let mut sdk = html.clone();
        sdk.insert(
            "x-amz-target",
            HeaderValue::from_static("AmazonSQS.ListQueues"),
        );
        assert!(browser_redirect(&get, "/", None, &sdk).is_none());
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(
            content_type("vendor/htm.module.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("style.css"), "text/css; charset=utf-8");
    }
}
