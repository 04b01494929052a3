//! `retsu peek|history|events|clock|faults|reset|topics|mappings`: thin clients of a
//! running server's admin API (`/_retsu/*`), readable tables by default,
//! the API's JSON with `--json`.
//!
//! Plain HTTP/1.1 over a std socket, like `retsu health`: the binary needs
//! no HTTP client library for a handful of local JSON calls.

use std::io::{BufRead, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::clock::format_rfc3339;

/// Where the admin API is and how to print its answers.
#[derive(Debug, Clone, Args)]
pub struct AdminArgs {
    /// Base URL of the running server.
    #[arg(
        long,
        env = "RETSU_ENDPOINT",
        default_value = "http://localhost:9324",
        global = true
    )]
    pub endpoint: String,
    /// The server's --admin-token, if it has one.
    #[arg(
        long = "admin-token",
        env = "RETSU_ADMIN_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Print the API's JSON instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Clone, Subcommand)]
pub enum ClockAction {
    /// Show the clock (the default).
    Show,
    /// Stop time.
    Freeze,
    /// Let time run again.
    Resume,
    /// Move time forward: 30s, 15m, 1h30m, 4d, 250ms, or milliseconds.
    Advance { duration: String },
    /// Set the time (never backwards): 2026-01-01T00:00:00Z.
    Set { time: String },
}

#[derive(Debug, Clone, Subcommand)]
pub enum ClusterAction {
    /// Show the nodes and the lease (the default).
    Show,
    /// Drain a node: it gives the lease up (another node takes over at
    /// once) and takes it no more until undrained or restarted.
    Drain { node: String },
    /// Let a drained node hold the lease again.
    Undrain { node: String },
    /// Move a queue (by URL, ARN or name) to a node, alone: it goes into a
    /// shard of its own, handed over at once, which stays on that node
    /// while it is live and not drained. With --topic, the shard holding
    /// the topic moves, with everything in it.
    Move {
        queue: String,
        node: String,
        /// QUEUE names a topic (by ARN or name) instead.
        #[arg(long)]
        topic: bool,
    },
}

#[derive(Debug, Clone, Subcommand)]
pub enum FaultsAction {
    /// Show the fault settings (the default).
    Show,
    /// Set faults from key=value pairs: seed=1 profile=aws-like, or
    /// duplicate=0.05 reorder=0.1 queue=us-east-1/000000000000/jobs …
    Set {
        #[arg(value_name = "KEY=VALUE", required = true)]
        settings: Vec<String>,
    },
    /// Turn every fault off.
    Clear,
}

/// One answer of the admin API.
struct Answer {
    status: u16,
    body: Value,
}

/// A tiny HTTP/1.1 client for the admin API.
struct Client {
    authority: String,
    base_path: String,
    token: Option<String>,
}

impl Client {
    fn new(args: &AdminArgs) -> Result<Client, String> {
        let rest = args
            .endpoint
            .trim()
            .strip_prefix("http://")
            .ok_or_else(|| format!("{}: the endpoint must start with http://", args.endpoint))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        let has_port = authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        Ok(Client {
            authority: if has_port {
                authority.to_string()
            } else {
                format!("{authority}:80")
            },
            base_path: path.to_string(),
            token: args.token.clone().filter(|t| !t.is_empty()),
        })
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Answer, String> {
        let (mut stream, addr) = self.send(method, path, body, "application/json")?;
        let mut raw = Vec::new();
        stream
            .read_to_end(&mut raw)
            .map_err(|e| format!("{addr}: no answer: {e}"))?;
        parse_response(&raw)
    }

    /// Connects and sends one request; the connection, to read the answer.
    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        accept: &str,
    ) -> Result<(TcpStream, std::net::SocketAddr), String> {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut request = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAccept: {accept}\r\nContent-Length: {}\r\n",
            self.base_path,
            self.authority,
            body.len()
        );
        if !body.is_empty() {
            request.push_str("Content-Type: application/json\r\n");
        }
        if let Some(t) = &self.token {
            request.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        let timeout = Duration::from_secs(30);
        let addrs: Vec<_> = self
            .authority
            .to_socket_addrs()
            .map_err(|e| format!("{}: cannot resolve: {e}", self.authority))?
            .collect();
        let mut last = format!("{}: no address", self.authority);
        for addr in addrs {
            let mut stream = match TcpStream::connect_timeout(&addr, timeout) {
                Ok(s) => s,
                Err(e) => {
                    last = format!("{addr}: cannot connect: {e}");
                    continue;
                }
            };
            let _ = stream.set_read_timeout(Some(timeout));
            stream
                .write_all(request.as_bytes())
                .map_err(|e| format!("{addr}: {e}"))?;
            return Ok((stream, addr));
        }
        Err(last)
    }

    /// `GET path` as a server-sent event stream: calls `each(kind, data)`
    /// for every event as it arrives, until the server ends the stream.
    fn follow(&self, path: &str, mut each: impl FnMut(&str, &str)) -> Result<(), String> {
        let (stream, addr) = self.send("GET", path, None, "text/event-stream")?;
        // Keep-alive comments arrive every few seconds; a minute of
        // silence means the server is gone.
        let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
        let mut reader = std::io::BufReader::new(stream);
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            let n = reader
                .read_line(&mut line)
                .map_err(|e| format!("{addr}: {e}"))?;
            if n == 0 || line == "\r\n" {
                break;
            }
            head.push(line);
        }
        let status = head
            .first()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| format!("not an HTTP answer: {head:?}"))?;
        if status != 200 {
            let mut raw = head.concat().into_bytes();
            raw.extend_from_slice(b"\r\n");
            let _ = reader.read_to_end(&mut raw);
            let answer = parse_response(&raw)?;
            let message = answer.body["error"]["message"]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| answer.body.to_string());
            return Err(format!("GET {path}: {status} {message}"));
        }
        // The body is chunked; events are separated by a blank line.
        let mut pending = String::new();
        loop {
            let mut size_line = String::new();
            if reader
                .read_line(&mut size_line)
                .map_err(|e| format!("{addr}: {e}"))?
                == 0
            {
                return Ok(());
            }
            let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| format!("bad chunk size {size_line:?}"))?;
            if size == 0 {
                return Ok(());
            }
            let mut chunk = vec![0u8; size + 2];
            reader
                .read_exact(&mut chunk)
                .map_err(|e| format!("{addr}: {e}"))?;
            pending.push_str(&String::from_utf8_lossy(&chunk[..size]));
            while let Some(end) = pending.find("\n\n") {
                let message: String = pending.drain(..end + 2).collect();
                let (mut kind, mut data) = ("message", String::new());
                for line in message.lines() {
                    if let Some(k) = line.strip_prefix("event: ") {
                        kind = k;
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data.push_str(d);
                    }
                }
                if !data.is_empty() {
                    each(kind, &data);
                }
            }
        }
    }

    /// Calls and insists on success; an API error becomes its message.
    fn ok(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
        let answer = self.call(method, path, body)?;
        if (200..300).contains(&answer.status) {
            return Ok(answer.body);
        }
        let message = answer.body["error"]["message"]
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| answer.body.to_string());
        Err(format!("{} {path}: {} {message}", method, answer.status))
    }
}

fn parse_response(raw: &[u8]) -> Result<Answer, String> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the server's answer has no header end")?;
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut body = raw[split + 4..].to_vec();
    let status = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| format!("not an HTTP answer: {head:?}"))?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    if chunked {
        body = dechunk(&body)?;
    }
    let text = String::from_utf8_lossy(&body);
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text.to_string()));
    Ok(Answer { status, body })
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("truncated chunked body")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if data.len() < size {
            return Err("truncated chunk".into());
        }
        out.extend_from_slice(&data[..size]);
        data = data.get(size + 2..).unwrap_or(&[]);
    }
}

/// Resolves QUEUE (a name, `region/account/name`, or a queue URL) to its
/// admin path segment `region/account/name`, asking the server which
/// queues exist when the argument leaves region or account open.
fn queue_path(client: &Client, queue: &str) -> Result<String, String> {
    let (region, account, name): (Option<String>, Option<String>, String) =
        if let Some((_, rest)) = queue.split_once("://") {
            let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
            let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
            match segments.as_slice() {
                ["queue", r, a, n] => (Some(r.to_string()), Some(a.to_string()), n.to_string()),
                [a, n] => {
                    let host = host.split(':').next().unwrap_or(host);
                    let region = host
                        .strip_prefix("sqs.")
                        .and_then(|r| r.split('.').next())
                        .filter(|r| r.contains('-'))
                        .map(String::from);
                    (region, Some(a.to_string()), n.to_string())
                }
                _ => return Err(format!("{queue}: not a queue URL")),
            }
        } else {
            match queue.split('/').collect::<Vec<_>>().as_slice() {
                [r, a, n] => return Ok(format!("{r}/{a}/{n}")),
                [n] if !n.is_empty() => (None, None, n.to_string()),
                _ => {
                    return Err(format!(
                        "{queue}: give a name, region/account/name or a queue URL"
                    ))
                }
            }
        };
    if let (Some(r), Some(a)) = (&region, &account) {
        return Ok(format!("{r}/{a}/{name}"));
    }
    let listed = client.ok("GET", "/_retsu/queues", None)?;
    let matches: Vec<String> = listed["queues"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|q| q["name"] == name.as_str())
        .filter(|q| region.as_deref().is_none_or(|r| q["region"] == r))
        .filter(|q| account.as_deref().is_none_or(|a| q["account"] == a))
        .map(|q| {
            format!(
                "{}/{}/{}",
                q["region"].as_str().unwrap_or(""),
                q["account"].as_str().unwrap_or(""),
                name
            )
        })
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("no queue named {name}")),
        many => Err(format!(
            "{name} names several queues ({}); give region/account/name",
            many.join(", ")
        )),
    }
}

fn query(pairs: &[(&str, Option<String>)]) -> String {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        if let Some(v) = v {
            s.append_pair(k, v);
        }
    }
    let q = s.finish();
    if q.is_empty() {
        q
    } else {
        format!("?{q}")
    }
}

fn time(v: &Value) -> String {
    v.as_u64().map(format_rfc3339).unwrap_or_else(|| "-".into())
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A body shortened to one line of at most `width` characters.
fn short(s: &str, width: usize) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= width {
        one_line
    } else {
        let cut: String = one_line.chars().take(width.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// The lease's holder, then one row per node.
fn render_cluster(v: &Value) -> String {
    let lease = &v["lease"];
    let holder = match (lease["holder"].as_str(), lease["live"].as_bool()) {
        (Some(h), Some(true)) => format!(
            "{h} (epoch {}, lease runs {} ms more)",
            text(&lease["epoch"]),
            text(&lease["expires_in_ms"])
        ),
        (Some(h), _) => format!("none live (last: {h}, epoch {})", text(&lease["epoch"])),
        _ => "none yet".into(),
    };
    let rows: Vec<Vec<String>> = v["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| {
            vec![
                text(&n["id"]),
                text(&n["url"]),
                format!("{} ms ago", text(&n["heartbeat_age_ms"])),
                if n["draining"].as_bool() == Some(true) {
                    "draining".into()
                } else {
                    "candidate".into()
                },
                n["shards"]
                    .as_array()
                    .map(|s| s.iter().map(text).collect::<Vec<_>>().join(","))
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "-".into()),
                text(&n["owns"]),
            ]
        })
        .collect();
    // Shards an operator moved, and whether the move is done.
    let moved: String = v["shards"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["moved_to"].is_string())
        .map(|s| {
            let to = text(&s["moved_to"]);
            let state = match s["holder"].as_str() {
                Some(h) if h == to && s["live"].as_bool() == Some(true) => "held there".into(),
                Some(h) => format!("held by {h} until it hands over"),
                // Given up by its last holder, not yet taken.
                None => format!("{to} takes it next"),
            };
            format!("shard {} moved to {to}: {state}\n", text(&s["shard"]))
        })
        .collect();
    // A queue moved alone (`retsu cluster move`).
    let queue = match &v["moved"] {
        m if m["how"] == "stayed" => format!(
            "queue {} is on {} already, in shard {}\n",
            text(&m["queue"]),
            text(&m["node"]),
            text(&m["shard"])
        ),
        m if m["how"] == "with its shard" && m["done"].as_bool() != Some(true) => format!(
            "queue {} asked to move to {} with its shard {}: not there yet (its holder hands the shard over)\n",
            text(&m["queue"]),
            text(&m["node"]),
            text(&m["shard"])
        ),
        m if m.is_object() && m["done"].as_bool() == Some(true) => format!(
            "queue {} moved to {} in shard {}\n",
            text(&m["queue"]),
            text(&m["node"]),
            text(&m["shard"])
        ),
        m if m.is_object() => format!(
            "queue {} asked to move to {}: not moved yet (its shard's holder moves it once no message move task runs out of it)\n",
            text(&m["queue"]),
            text(&m["node"])
        ),
        _ => String::new(),
    };
    // A drain's answer comes once the node holds no shard, or after a
    // lease with `done: false`.
    let drained = match &v["drained"] {
        d if d["done"].as_bool() == Some(true) => {
            format!("node {} drained: it holds no shard\n", text(&d["node"]))
        }
        d if d.is_object() => format!(
            "node {} draining: it still holds shards, and hands them over as its answers end\n",
            text(&d["node"])
        ),
        _ => String::new(),
    };
    // The table, then one line per change (the caller ends the last line).
    let shown = format!(
        "asked: {}\nshard 1 (the cluster's clock) held by: {holder}\n{}\n{drained}{queue}{moved}",
        text(&v["node"]),
        table(
            &["NODE", "URL", "HEARTBEAT", "STATE", "SHARDS", "OWNS"],
            &rows
        )
    );
    shown.trim_end_matches('\n').to_string()
}

/// One row per subscription (a topic without any gets one row of its own).
fn render_topics(v: &Value) -> String {
    let mut rows = Vec::new();
    for t in v["topics"].as_array().into_iter().flatten() {
        let name = text(&t["name"]);
        let subs = t["subscriptions"].as_array().cloned().unwrap_or_default();
        if subs.is_empty() {
            rows.push(vec![
                name.clone(),
                "-".into(),
                "-".into(),
                "".into(),
                "".into(),
            ]);
        }
        for s in subs {
            let mut flags = Vec::new();
            if s["pending"].as_bool() == Some(true) {
                flags.push("pending");
            }
            if s["raw"].as_bool() == Some(true) {
                flags.push("raw");
            }
            rows.push(vec![
                name.clone(),
                text(&s["protocol"]),
                text(&s["endpoint"]),
                flags.join(","),
                s["filter_policy"].as_str().unwrap_or("").to_string(),
            ]);
        }
    }
    if rows.is_empty() {
        return "no topics".into();
    }
    table(
        &["TOPIC", "PROTOCOL", "ENDPOINT", "FLAGS", "FILTER POLICY"],
        &rows,
    )
}

/// One row per event source mapping: the source queue by name (its ARN
/// with `--json`), the function by name.
fn render_mappings(v: &Value) -> String {
    let last = |arn: &Value| text(arn).rsplit(':').next().unwrap_or("").to_string();
    let rows: Vec<Vec<String>> = v["mappings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            vec![
                text(&m["UUID"]),
                last(&m["FunctionArn"]),
                last(&m["EventSourceArn"]),
                text(&m["State"]),
                text(&m["BatchSize"]),
                text(&m["LastProcessingResult"]),
            ]
        })
        .collect();
    if rows.is_empty() {
        return "no event source mappings".into();
    }
    table(
        &["UUID", "FUNCTION", "QUEUE", "STATE", "BATCH", "LAST RESULT"],
        &rows,
    )
}

/// Left-aligned columns, two spaces apart.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        let last = cells.len() - 1;
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == last {
                    c.clone()
                } else {
                    format!("{c:<w$}", w = widths[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    for row in rows {
        out.push('\n');
        out.push_str(&line(row.clone()));
    }
    out
}

fn render_clock(c: &Value) -> String {
    let offset = c["offset_ms"].as_i64().unwrap_or(0);
    format!(
        "now     {}\nnow_ms  {}\nfrozen  {}\noffset  {offset:+}ms",
        text(&c["now"]),
        text(&c["now_ms"]),
        text(&c["frozen"]),
    )
}

fn render_peek(queue: &str, v: &Value) -> String {
    let rows: Vec<Vec<String>> = v["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            vec![
                text(&m["message_id"]),
                text(&m["state"]),
                text(&m["receive_count"]),
                time(&m["visible_at_ms"]),
                text(&m["group_id"]),
                short(m["body"].as_str().unwrap_or(""), 48),
            ]
        })
        .collect();
    let mut out = format!("{queue}: {} message(s)\n", rows.len());
    out.push_str(&table(
        &[
            "MESSAGE ID",
            "STATE",
            "RECEIVES",
            "VISIBLE AT",
            "GROUP",
            "BODY",
        ],
        &rows,
    ));
    if v["truncated"] == true {
        out.push_str("\n(more messages than --limit)");
    }
    out
}

fn event_rows(events: &Value, with_queue: bool) -> Vec<Vec<String>> {
    events
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let mut row = vec![text(&e["seq"]), time(&e["at_ms"]), text(&e["kind"])];
            if with_queue {
                row.push(format!(
                    "{}/{}/{}",
                    text(&e["queue"]["region"]),
                    text(&e["queue"]["account"]),
                    text(&e["queue"]["name"])
                ));
                row.push(text(&e["message_id"]));
            }
            row.push(text(&e["receive_count"]));
            row.push(time(&e["visible_at_ms"]));
            row.push(text(&e["detail"]));
            row
        })
        .collect()
}

fn render_history(v: &Value) -> String {
    let mut out = format!("message {}\n", text(&v["message_id"]));
    out.push_str(&table(
        &["SEQ", "AT", "EVENT", "RECEIVES", "VISIBLE AT", "DETAIL"],
        &event_rows(&v["events"], false),
    ));
    if v["truncated"] == true {
        out.push_str("\n(older events were dropped)");
    }
    match &v["current"] {
        Value::Null => out.push_str("\nnow: gone"),
        m => out.push_str(&format!(
            "\nnow: {} (receives {})",
            text(&m["state"]),
            text(&m["receive_count"])
        )),
    }
    out
}

fn render_events(v: &Value) -> String {
    let mut out = table(
        &[
            "SEQ",
            "AT",
            "EVENT",
            "QUEUE",
            "MESSAGE ID",
            "RECEIVES",
            "VISIBLE AT",
            "DETAIL",
        ],
        &event_rows(&v["events"], true),
    );
    out.push_str(&format!("\nnext: {}", text(&v["next"])));
    out
}

/// `retsu events --follow`: one line per event as it happens (one JSON
/// object per line with `--json`); returns what to print when the stream
/// ends, which it does at shutdown or when this reader fell behind.
fn follow_events(
    client: &Client,
    json_lines: bool,
    queue: Option<String>,
    kind: Option<String>,
    since: Option<String>,
) -> Result<String, String> {
    let path = format!(
        "/_retsu/events/stream{}",
        query(&[("queue", queue), ("kind", kind), ("since", since),])
    );
    let mut out = std::io::stdout();
    let mut ending = String::from("(the server ended the stream)");
    client.follow(&path, |kind, data| {
        let Ok(e) = serde_json::from_str::<Value>(data) else {
            return;
        };
        let line = match kind {
            "missed" => {
                ending = format!(
                    "(fell behind and was cut off; resume with --since {})",
                    text(&e["next"])
                );
                return;
            }
            _ if json_lines => e.to_string(),
            "gap" => "(history no longer holds every event asked for)".to_string(),
            "invocation" => invocation_line(&e),
            _ => event_rows(&Value::Array(vec![e]), true)
                .remove(0)
                .join("  "),
        };
        // A closed pipe (`retsu events --follow | head`) ends quietly.
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            std::process::exit(0);
        }
    })?;
    Ok(ending)
}

/// A Lambda invocation on the live stream, as one line.
fn invocation_line(r: &Value) -> String {
    let mut line = format!(
        "invocation  {}  {} from {}  batch {}  {} ms  {}",
        text(&r["function"]),
        text(&r["source"]),
        text(&r["from"]),
        text(&r["batch"]),
        text(&r["duration_ms"]),
        text(&r["result"]),
    );
    if let Some(error) = r["error"].as_str() {
        line.push_str(&format!("  {error}"));
    }
    line
}

fn render_object(v: &Value) -> String {
    match v.as_object() {
        Some(map) => map
            .iter()
            .map(|(k, v)| format!("{k}: {}", text(v)))
            .collect::<Vec<_>>()
            .join("\n"),
        None => text(v),
    }
}

/// `key=value` pairs as a JSON object; values that read as JSON (numbers,
/// booleans, arrays) keep their type, others are strings.
fn settings_object(pairs: &[String]) -> Result<Value, String> {
    let mut map = serde_json::Map::new();
    for pair in pairs {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("{pair}: expected KEY=VALUE"))?;
        let value = serde_json::from_str::<Value>(v).unwrap_or_else(|_| json!(v));
        map.insert(k.to_string(), value);
    }
    Ok(Value::Object(map))
}

/// The admin subcommands.
#[derive(Debug, Clone)]
pub enum AdminCommand {
    Peek {
        queue: String,
        state: String,
        limit: usize,
    },
    History {
        message_id: String,
    },
    Events {
        queue: Option<String>,
        kind: Option<String>,
        since: Option<String>,
        limit: Option<usize>,
        /// Keep printing events as they happen (the live stream).
        follow: bool,
    },
    Clock(Option<ClockAction>),
    Faults(Option<FaultsAction>),
    Topics,
    Mappings,
    Cluster(Option<ClusterAction>),
    Reset {
        queue: Option<String>,
    },
}

/// Runs one admin subcommand; returns what to print, or the error.
pub fn run(command: &AdminCommand, args: &AdminArgs) -> Result<String, String> {
    let client = Client::new(args)?;
    let (value, table) = match command {
        AdminCommand::Peek {
            queue,
            state,
            limit,
        } => {
            let path = queue_path(&client, queue)?;
            let v = client.ok(
                "GET",
                &format!(
                    "/_retsu/queues/{path}/messages{}",
                    query(&[
                        ("state", Some(state.clone())),
                        ("limit", Some(limit.to_string()))
                    ])
                ),
                None,
            )?;
            let t = render_peek(&path, &v);
            (v, t)
        }
        AdminCommand::History { message_id } => {
            let v = client.ok("GET", &format!("/_retsu/messages/{message_id}"), None)?;
            let t = render_history(&v);
            (v, t)
        }
        AdminCommand::Events {
            queue,
            kind,
            since,
            limit,
            follow,
        } => {
            let queue = match queue {
                Some(q) => Some(queue_path(&client, q)?),
                None => None,
            };
            if *follow {
                return follow_events(&client, args.json, queue, kind.clone(), since.clone());
            }
            let v = client.ok(
                "GET",
                &format!(
                    "/_retsu/events{}",
                    query(&[
                        ("queue", queue),
                        ("kind", kind.clone()),
                        ("since", since.clone()),
                        ("limit", limit.map(|l| l.to_string())),
                    ])
                ),
                None,
            )?;
            let t = render_events(&v);
            (v, t)
        }
        AdminCommand::Clock(action) => {
            let change = match action.clone().unwrap_or(ClockAction::Show) {
                ClockAction::Show => None,
                ClockAction::Freeze => Some(json!({"freeze": true})),
                ClockAction::Resume => Some(json!({"resume": true})),
                ClockAction::Advance { duration } => Some(match duration.parse::<u64>() {
                    Ok(ms) => json!({ "advance": ms }),
                    Err(_) => json!({ "advance": duration }),
                }),
                ClockAction::Set { time } => Some(json!({ "set": time })),
            };
            let v = match change {
                None => client.ok("GET", "/_retsu/clock", None)?,
                Some(c) => client.ok("POST", "/_retsu/clock", Some(&c))?,
            };
            let t = render_clock(&v);
            (v, t)
        }
        AdminCommand::Topics => {
            let v = client.ok("GET", "/_retsu/topics", None)?;
            let t = render_topics(&v);
            (v, t)
        }
        AdminCommand::Mappings => {
            let v = client.ok("GET", "/_retsu/lambda/mappings", None)?;
            let t = render_mappings(&v);
            (v, t)
        }
        AdminCommand::Cluster(action) => {
            let v = match action.clone().unwrap_or(ClusterAction::Show) {
                ClusterAction::Show => client.ok("GET", "/_retsu/cluster", None)?,
                ClusterAction::Drain { node } => client.ok(
                    "POST",
                    "/_retsu/cluster/drain",
                    Some(&json!({ "node": node })),
                )?,
                ClusterAction::Undrain { node } => client.ok(
                    "POST",
                    "/_retsu/cluster/undrain",
                    Some(&json!({ "node": node })),
                )?,
                ClusterAction::Move { queue, node, topic } => {
                    let what = if topic { "topic" } else { "queue" };
                    let mut body = json!({ "node": node });
                    body[what] = json!(queue);
                    client.ok("POST", "/_retsu/cluster/move", Some(&body))?
                }
            };
            let t = render_cluster(&v);
            (v, t)
        }
        AdminCommand::Faults(action) => {
            let v = match action.clone().unwrap_or(FaultsAction::Show) {
                FaultsAction::Show => client.ok("GET", "/_retsu/faults", None)?,
                FaultsAction::Set { settings } => {
                    client.ok("POST", "/_retsu/faults", Some(&settings_object(&settings)?))?
                }
                FaultsAction::Clear => client.ok("DELETE", "/_retsu/faults", None)?,
            };
            let t = render_object(&v);
            (v, t)
        }
        AdminCommand::Reset { queue } => match queue {
            None => {
                let v = client.ok("POST", "/_retsu/reset", Some(&json!({})))?;
                let t = format!("reset: {} queue(s) deleted", text(&v["queues_deleted"]));
                (v, t)
            }
            Some(q) => {
                let path = queue_path(&client, q)?;
                let v = client.ok(
                    "POST",
                    &format!("/_retsu/queues/{path}/reset"),
                    Some(&json!({})),
                )?;
                let t = format!(
                    "reset {path}: {} message(s) removed",
                    text(&v["messages_removed"])
                );
                (v, t)
            }
        },
    };
    Ok(if args.json {
        serde_json::to_string_pretty(&value).unwrap_or_default()
    } else {
        table
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cluster_table_then_one_line_per_move() {
        let v = json!({
            "node": "node-a",
            "lease": {"holder": "node-c", "live": true, "epoch": 2, "expires_in_ms": 4000},
            "nodes": [
                {"id": "node-a", "url": "http://10.0.0.11:9324", "heartbeat_age_ms": 3,
                 "draining": false, "shards": [7, 9], "owns": "1 queue, 0 topics"},
            ],
            "shards": [
                {"shard": 9, "moved_to": "node-a", "holder": "node-a", "live": true},
                {"shard": 4, "moved_to": "node-c", "holder": "node-b", "live": true},
                {"shard": 5, "moved_to": "node-c", "holder": null, "live": false},
            ],
            "moved": {"queue": "orders", "node": "node-a", "shard": 9, "how": "alone", "done": true},
        });
        let shown = render_cluster(&v);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(
            lines[2],
            "NODE    URL                    HEARTBEAT  STATE      SHARDS  OWNS"
        );
        assert_eq!(
            lines[3..],
            [
                "node-a  http://10.0.0.11:9324  3 ms ago   candidate  7,9     1 queue, 0 topics",
                "queue orders moved to node-a in shard 9",
                "shard 9 moved to node-a: held there",
                "shard 4 moved to node-c: held by node-b until it hands over",
                "shard 5 moved to node-c: node-c takes it next",
            ],
            "{shown}"
        );
        // Nothing moved: the table's last row ends the text.
        let mut idle = v.clone();
        idle["shards"] = json!([]);
        idle["moved"] = Value::Null;
        assert!(render_cluster(&idle).ends_with("1 queue, 0 topics"));
        // A drain, done or not yet.
        idle["drained"] = json!({"node": "node-b", "done": true});
        assert!(render_cluster(&idle).ends_with("\nnode node-b drained: it holds no shard"));
        idle["drained"]["done"] = json!(false);
        assert!(render_cluster(&idle).ends_with(
            "\nnode node-b draining: it still holds shards, and hands them over as its answers end"
        ));
    }

    #[test]
    fn answers_plain_and_chunked() {
        let a =
            parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\n{\"a\":true}\n").unwrap();
        assert_eq!((a.status, a.body), (200, json!({"a": true})));
        let a = parse_response(
            b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"b\":\r\n2\r\n1}\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!((a.status, a.body), (404, json!({"b": 1})));
        assert!(parse_response(b"garbage").is_err());
    }

    #[test]
    fn tables_and_settings() {
        let t = table(&["A", "BB"], &[vec!["long".into(), "x".into()]]);
        assert_eq!(t, "A     BB\nlong  x");
        assert_eq!(short("a\nb", 10), "a b");
        assert_eq!(short("abcdef", 4), "abc…");
        assert_eq!(
            settings_object(&[
                "seed=1".into(),
                "profile=aws-like".into(),
                "latency_ms=[0,50]".into()
            ])
            .unwrap(),
            json!({"seed": 1, "profile": "aws-like", "latency_ms": [0, 50]})
        );
        assert!(settings_object(&["nope".into()]).is_err());
        let mappings = json!({"mappings": [{
            "UUID": "u1",
            "FunctionArn": "arn:aws:lambda:us-east-1:000000000000:function:orders",
            "EventSourceArn": "arn:aws:sqs:us-east-1:000000000000:jobs",
            "State": "Enabled",
            "BatchSize": 10,
            "LastProcessingResult": "OK",
        }]});
        assert_eq!(
            render_mappings(&mappings),
            "UUID  FUNCTION  QUEUE  STATE    BATCH  LAST RESULT\nu1    orders    jobs   Enabled  10     OK"
        );
        assert_eq!(
            render_mappings(&json!({"mappings": []})),
            "no event source mappings"
        );
        assert_eq!(query(&[("a", Some("x y".into())), ("b", None)]), "?a=x+y");
    }
}
