//! Measurements, their medians, the floor ratios, the targets, and the
//! table and JSON they are reported as.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

/// Latency percentiles of one measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    /// What was timed.
    pub what: &'static str,
    pub samples: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Latency {
    /// Nearest-rank percentiles of nanosecond samples; None when empty.
    pub fn from_ns(what: &'static str, mut ns: Vec<u64>) -> Option<Latency> {
        if ns.is_empty() {
            return None;
        }
        ns.sort_unstable();
        let at = |p: f64| {
            let rank = ((p / 100.0) * ns.len() as f64).ceil() as usize;
            ns[rank.clamp(1, ns.len()) - 1] as f64 / 1e6
        };
        Some(Latency {
            what,
            samples: ns.len(),
            p50_ms: at(50.0),
            p99_ms: at(99.0),
            max_ms: *ns.last().unwrap() as f64 / 1e6,
        })
    }
}

/// One timed run of one scenario variant against one server.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    pub scenario: &'static str,
    pub variant: String,
    pub client: &'static str,
    pub server: &'static str,
    pub round: usize,
    /// Messages moved in the timed section (0 where not a throughput run).
    pub messages: u64,
    pub requests: u64,
    pub seconds: f64,
    pub msgs_per_s: f64,
    pub latency: Option<Latency>,
    /// CPU the server process used during the timed section.
    pub server_cpu_s: Option<f64>,
    /// CPU the benchmark process used during the timed section.
    pub client_cpu_s: Option<f64>,
    /// Scenario-specific figures (depth, RSS, bytes per message...).
    pub metrics: BTreeMap<&'static str, f64>,
    /// Whether the scenario's correctness check ran (and passed: a failed
    /// check is an error, not a measurement).
    pub verified: bool,
}

impl Measurement {
    pub fn new(scenario: &'static str, variant: impl Into<String>) -> Measurement {
        Measurement {
            scenario,
            variant: variant.into(),
            client: "",
            server: "",
            round: 0,
            messages: 0,
            requests: 0,
            seconds: 0.0,
            msgs_per_s: 0.0,
            latency: None,
            server_cpu_s: None,
            client_cpu_s: None,
            metrics: BTreeMap::new(),
            verified: false,
        }
    }
}

/// A failed scenario run.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub scenario: &'static str,
    pub variant: String,
    pub client: &'static str,
    pub server: &'static str,
    pub round: usize,
    pub error: String,
}

/// The medians over rounds of one (scenario, variant, client, server).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub scenario: &'static str,
    pub variant: String,
    pub client: &'static str,
    pub server: &'static str,
    pub rounds: usize,
    pub msgs_per_s: f64,
    /// HTTP requests per second (median).
    pub requests_per_s: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// The worst over all rounds.
    pub max_ms: Option<f64>,
    pub latency_of: Option<&'static str>,
    /// Median over rounds of (this server's rate / the null server's rate
    /// in the same round), in percent.
    pub floor_pct: Option<f64>,
    /// The same for requests per second (they differ where the two servers
    /// answer different numbers of messages per receive).
    pub floor_requests_pct: Option<f64>,
    /// Server CPU per message, microseconds.
    pub server_cpu_us_per_msg: Option<f64>,
    pub metrics: BTreeMap<&'static str, f64>,
}

/// A target and whether this run met it.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub name: String,
    pub goal: String,
    pub measured: String,
    /// None: not measured in this run.
    pub met: Option<bool>,
}

fn requests_per_s(m: &Measurement) -> f64 {
    if m.seconds > 0.0 {
        m.requests as f64 / m.seconds
    } else {
        0.0
    }
}

pub fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

pub fn summarize(measurements: &[Measurement]) -> Vec<Summary> {
    let mut keys: Vec<(&'static str, String, &'static str, &'static str)> = Vec::new();
    for m in measurements {
        let key = (m.scenario, m.variant.clone(), m.client, m.server);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .map(|(scenario, variant, client, server)| {
            let runs: Vec<&Measurement> = measurements
                .iter()
                .filter(|m| {
                    m.scenario == scenario
                        && m.variant == variant
                        && m.client == client
                        && m.server == server
                })
                .collect();
            let lat = |f: fn(&Latency) -> f64| {
                median(
                    runs.iter()
                        .filter_map(|m| m.latency.as_ref().map(f))
                        .collect(),
                )
            };
            let floor = |rate: fn(&Measurement) -> f64| {
                if server == "null" {
                    return None;
                }
                median(
                    runs.iter()
                        .filter_map(|m| {
                            let null = measurements.iter().find(|n| {
                                n.server == "null"
                                    && n.scenario == scenario
                                    && n.variant == variant
                                    && n.client == client
                                    && n.round == m.round
                            })?;
                            (rate(null) > 0.0).then(|| 100.0 * rate(m) / rate(null))
                        })
                        .collect(),
                )
            };
            let floor_pct = floor(|m| m.msgs_per_s);
            let floor_requests_pct = floor(requests_per_s);
            let mut metric_names: Vec<&'static str> = Vec::new();
            for m in &runs {
                for k in m.metrics.keys() {
                    if !metric_names.contains(k) {
                        metric_names.push(k);
                    }
                }
            }
            let metrics = metric_names
                .into_iter()
                .filter_map(|k| {
                    median(
                        runs.iter()
                            .filter_map(|m| m.metrics.get(k).copied())
                            .collect(),
                    )
                    .map(|v| (k, v))
                })
                .collect();
            Summary {
                scenario,
                variant,
                client,
                server,
                rounds: runs.len(),
                msgs_per_s: median(runs.iter().map(|m| m.msgs_per_s).collect()).unwrap_or(0.0),
                requests_per_s: median(runs.iter().map(|m| requests_per_s(m)).collect())
                    .unwrap_or(0.0),
                p50_ms: lat(|l| l.p50_ms),
                p99_ms: lat(|l| l.p99_ms),
                max_ms: runs
                    .iter()
                    .filter_map(|m| m.latency.as_ref().map(|l| l.max_ms))
                    .reduce(f64::max),
                latency_of: runs.iter().find_map(|m| m.latency.as_ref().map(|l| l.what)),
                floor_pct,
                floor_requests_pct,
                server_cpu_us_per_msg: median(
                    runs.iter()
                        .filter(|m| m.messages > 0)
                        .filter_map(|m| m.server_cpu_s.map(|s| s * 1e6 / m.messages as f64))
                        .collect(),
                ),
                metrics,
            }
        })
        .collect()
}

/// Evaluates the targets (BENCHMARKS.md, "What the report checks") on the
/// raw client's figures, so a regression shows as a missed target in the
/// next run.
pub fn targets(summaries: &[Summary], server: &str) -> Vec<Target> {
    let find = |scenario: &str, variant: &str| {
        summaries.iter().find(|s| {
            s.scenario == scenario
                && s.variant == variant
                && s.client == "raw"
                && s.server == server
        })
    };
    let mut out = Vec::new();
    for (scenario, variant) in [
        ("send", "c=1"),
        ("send", "c=16"),
        ("send-batch", "c=1"),
        ("send-batch", "c=16"),
        ("drain", "c=1"),
        ("drain", "c=16"),
        ("pipeline", crate::scenarios::PIPELINE_VARIANT),
    ] {
        let pct = find(scenario, variant).and_then(|s| s.floor_pct);
        let goal = match (scenario, variant) {
            ("send", "c=16") => 85.0,
            ("send-batch", "c=16") => 75.0,
            _ => 60.0,
        };
        out.push(Target {
            name: format!("{scenario} {variant}"),
            goal: format!(">= {goal:.0}% of null floor"),
            measured: pct.map_or("-".into(), |p| format!("{p:.0}%")),
            met: pct.map(|p| p >= goal),
        });
    }
    // Latency under load: the tail of a send stays near its median.
    for (scenario, variant) in [
        ("send", "c=64"),
        ("pipeline", crate::scenarios::PIPELINE_VARIANT),
    ] {
        let s = find(scenario, variant);
        let (p50, p99, max) = (
            s.and_then(|s| s.p50_ms),
            s.and_then(|s| s.p99_ms),
            s.and_then(|s| s.max_ms),
        );
        out.push(Target {
            name: format!("{scenario} {variant}: p99 vs p50"),
            goal: "p99 <= 5x p50".into(),
            measured: match (p50, p99, max) {
                (Some(a), Some(b), Some(c)) => {
                    format!("p50 {a:.2} / p99 {b:.2} / max {c:.2} ms")
                }
                _ => "-".into(),
            },
            met: p50.zip(p99).map(|(a, b)| b <= 5.0 * a),
        });
    }
    // Latency under load, by request kind: 16 producers and 16 long-polling
    // consumers. A receive's time includes its long poll's wait.
    let loaded = find("pipeline", crate::scenarios::PIPELINE_LOADED_VARIANT);
    let stat = |name: &str| loaded.and_then(|s| s.metrics.get(name).copied());
    for (kind, [p50, p99, max]) in crate::scenarios::FLOW_KINDS {
        let (p50, p99, max) = (stat(p50), stat(p99), stat(max));
        out.push(Target {
            name: format!("pipeline 16+16: {kind} p99 vs p50"),
            goal: if kind == "send" {
                "p99 <= 5x p50".into()
            } else {
                "reported".into()
            },
            measured: match (p50, p99, max) {
                (Some(a), Some(b), Some(c)) => {
                    format!("p50 {a:.2} / p99 {b:.2} / max {c:.2} ms")
                }
                _ => "-".into(),
            },
            met: if kind == "send" {
                p50.zip(p99).map(|(a, b)| b <= 5.0 * a)
            } else {
                None
            },
        });
    }
    // The pipeline's message-rate ratio also counts that Retsu's long polls
    // return as soon as one message lands (as SQS's do) while the null
    // server always answers ten: the request-rate ratio compares the
    // servers on the same request mix.
    let pipeline =
        find("pipeline", crate::scenarios::PIPELINE_VARIANT).and_then(|s| s.floor_requests_pct);
    out.push(Target {
        name: "pipeline, requests/s (same request mix)".into(),
        goal: ">= 60% of null floor (see note)".into(),
        measured: pipeline.map_or("-".into(), |p| format!("{p:.0}%")),
        met: pipeline.map(|p| p >= 60.0),
    });
    // With --durable: durable against in-memory in the same run.
    let durable = |scenario: &str, variant: &str| {
        summaries.iter().find(|s| {
            s.scenario == scenario
                && s.variant == variant
                && s.client == "raw"
                && s.server == "durable"
        })
    };
    for (scenario, variant, goal) in [
        ("send", "c=16", 50.0),
        ("send-batch", "c=16", 60.0),
        ("drain", "c=16", 50.0),
    ] {
        let (Some(d), Some(m)) = (durable(scenario, variant), find(scenario, variant)) else {
            continue;
        };
        let pct = (m.msgs_per_s > 0.0).then(|| 100.0 * d.msgs_per_s / m.msgs_per_s);
        out.push(Target {
            name: format!("durable {scenario} {variant}"),
            goal: format!(">= {goal:.0}% of in-memory"),
            measured: pct.map_or("-".into(), |p| {
                format!("{p:.0}% ({:.0} msgs/s)", d.msgs_per_s)
            }),
            met: pct.map(|p| p >= goal),
        });
        if let Some(bytes) = d.metrics.get("disk_bytes_per_msg") {
            out.push(Target {
                name: format!("durable {scenario} {variant}: disk per message"),
                goal: "reported".into(),
                measured: format!("{bytes:.0} bytes"),
                met: None,
            });
        }
    }
    // SNS: a publish's cost against a send's, per message: server CPU when
    // measured, else the time per message at the measured rate.
    let cost = |s: &Summary| {
        s.server_cpu_us_per_msg
            .or((s.msgs_per_s > 0.0).then(|| 1e6 / s.msgs_per_s))
    };
    let send16 = find("send", "c=16");
    let one = find("publish", "1 sub c=16");
    let three = find("publish", "3 subs c=16");
    let attrs = find("publish", "1 sub, 5 attributes c=16");
    let filtered = find("publish", "1 sub, 5 attributes, 5-key filter c=16");
    let rate = one
        .zip(send16)
        .map(|(p, s)| 100.0 * p.msgs_per_s / s.msgs_per_s);
    out.push(Target {
        name: "publish c=16, 1 raw subscription".into(),
        goal: ">= 80% of SendMessage's rate".into(),
        measured: rate.map_or("-".into(), |p| format!("{p:.0}%")),
        met: rate.map(|p| p >= 80.0),
    });
    let further = match (
        one.and_then(cost),
        three.and_then(cost),
        send16.and_then(cost),
    ) {
        (Some(a), Some(b), Some(s)) => Some(100.0 * (b - a) / 2.0 / s),
        _ => None,
    };
    out.push(Target {
        name: "publish: each further subscription".into(),
        goal: "<= 30% of one SendMessage".into(),
        measured: further.map_or("-".into(), |p| format!("{p:.0}%")),
        met: further.map(|p| p <= 30.0),
    });
    let filter = match (attrs.and_then(cost), filtered.and_then(cost)) {
        (Some(a), Some(f)) => Some(100.0 * (f - a) / a),
        _ => None,
    };
    out.push(Target {
        name: "publish: a 5-key filter policy".into(),
        goal: "<= 10% of a publish".into(),
        measured: filter.map_or("-".into(), |p| format!("{p:.0}%")),
        met: filter.map(|p| p <= 10.0),
    });
    let wake = find("longpoll-wake", crate::scenarios::WAKE_VARIANT);
    for (what, value, goal) in [
        ("p99", wake.and_then(|s| s.p99_ms), 1.0),
        ("max", wake.and_then(|s| s.max_ms), 2.5),
    ] {
        out.push(Target {
            name: format!("longpoll-wake {what} (400 wakes a round)"),
            goal: format!("<= {goal} ms"),
            measured: value.map_or("-".into(), |p| format!("{p:.2} ms")),
            met: value.map(|p| p <= goal),
        });
    }
    let backlog: Vec<&Summary> = summaries
        .iter()
        .filter(|s| s.scenario == "backlog" && s.server == server && s.client == "raw")
        .collect();
    let deepest = backlog
        .iter()
        .filter(|s| s.metrics.contains_key("vs_shallowest_pct"))
        .max_by(|a, b| {
            let da = a.metrics.get("depth").copied().unwrap_or(0.0);
            let db = b.metrics.get("depth").copied().unwrap_or(0.0);
            da.partial_cmp(&db).unwrap()
        });
    let shallow = backlog
        .iter()
        .filter_map(|s| s.metrics.get("depth").copied())
        .reduce(f64::min);
    let (measured, met, name) = match (deepest, shallow) {
        (Some(d), Some(shallow)) => {
            let pct = d.metrics["vs_shallowest_pct"];
            let depth = d.metrics["depth"];
            (
                format!("{pct:.0}%"),
                Some(pct >= 90.0),
                format!(
                    "backlog receive rate, {} vs {} queued",
                    count(depth),
                    count(shallow)
                ),
            )
        }
        _ => (
            "-".into(),
            None,
            "backlog receive rate, 1M vs 1k queued".into(),
        ),
    };
    out.push(Target {
        name,
        goal: ">= 90%".into(),
        measured,
        met,
    });
    let memory = summaries
        .iter()
        .find(|s| s.scenario == "memory" && s.server == server)
        .and_then(|s| s.metrics.get("bytes_per_message").copied());
    out.push(Target {
        name: "memory per stored 1 KiB message".into(),
        goal: "<= 1200 B".into(),
        measured: memory.map_or("-".into(), |b| format!("{b:.0} B")),
        met: memory.map(|b| b <= 1200.0),
    });
    let startup = summaries
        .iter()
        .find(|s| s.scenario == "startup" && s.server == server);
    let idle = startup.and_then(|s| s.metrics.get("idle_rss_kib").copied());
    out.push(Target {
        name: "idle RSS".into(),
        goal: "< 8 MiB".into(),
        measured: idle.map_or("-".into(), |k| format!("{:.1} MiB", k / 1024.0)),
        met: idle.map(|k| k < 8.0 * 1024.0),
    });
    let ready = startup.and_then(|s| s.p50_ms);
    out.push(Target {
        name: "exec to first ListQueues (median)".into(),
        goal: "< 20 ms".into(),
        measured: ready.map_or("-".into(), |ms| format!("{ms:.1} ms")),
        met: ready.map(|ms| ms < 20.0),
    });
    out
}

/// 1000 -> "1k", 1000000 -> "1M".
pub fn count(n: f64) -> String {
    if n >= 1e6 && (n / 1e6).fract() == 0.0 {
        format!("{}M", n / 1e6)
    } else if n >= 1e3 && (n / 1e3).fract() == 0.0 {
        format!("{}k", n / 1e3)
    } else {
        format!("{n}")
    }
}

fn thousands(x: f64) -> String {
    let s = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or("-".into(), |v| format!("{v:.digits$}"))
}

/// Renders rows as a Markdown table (readable in a terminal too).
fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.len());
        }
    }
    let line = |cells: Vec<String>| {
        let mut s = String::from("|");
        for (i, c) in cells.iter().enumerate() {
            if i == 0 || i == 1 || i == 2 || i == 3 {
                let _ = write!(s, " {:<w$} |", c, w = widths[i]);
            } else {
                let _ = write!(s, " {:>w$} |", c, w = widths[i]);
            }
        }
        s.push('\n');
        s
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    let mut sep = String::from("|");
    for (i, w) in widths.iter().enumerate() {
        if i < 4 {
            let _ = write!(sep, ":{}|", "-".repeat(w + 1));
        } else {
            let _ = write!(sep, "{}:|", "-".repeat(w + 1));
        }
    }
    out.push_str(&sep);
    out.push('\n');
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

/// Human-readable report: one table per scenario, then the targets.
pub fn render(summaries: &[Summary], targets: &[Target], quick: bool) -> String {
    let mut out = String::new();
    if quick {
        out.push_str(
            "--quick: a smoke run; its samples are too small for the figures below \
             to mean anything. Run the full benchmark to judge speed.\n",
        );
    }
    let mut scenarios: Vec<&'static str> = Vec::new();
    for s in summaries {
        if !scenarios.contains(&s.scenario) {
            scenarios.push(s.scenario);
        }
    }
    for scenario in scenarios {
        let rows: Vec<&Summary> = summaries
            .iter()
            .filter(|s| s.scenario == scenario)
            .collect();
        let latency_of = rows.iter().find_map(|s| s.latency_of).unwrap_or("");
        let _ = writeln!(out, "\n### {scenario}\n");
        match scenario {
            "memory" => {
                let body = rows
                    .iter()
                    .map(|s| {
                        let m = |k: &str| s.metrics.get(k).copied();
                        vec![
                            s.variant.clone(),
                            s.client.into(),
                            s.server.into(),
                            String::new(),
                            opt(m("rss_empty_kib").map(|k| k / 1024.0), 1),
                            opt(m("rss_full_kib").map(|k| k / 1024.0), 1),
                            opt(m("hwm_kib").map(|k| k / 1024.0), 1),
                            opt(m("bytes_per_message"), 0),
                            thousands(s.msgs_per_s),
                        ]
                    })
                    .collect();
                out.push_str(&table(
                    &[
                        "variant",
                        "client",
                        "server",
                        "",
                        "RSS empty MiB",
                        "RSS full MiB",
                        "peak MiB",
                        "bytes/msg",
                        "fill msgs/s",
                    ],
                    body,
                ));
            }
            "startup" => {
                let body = rows
                    .iter()
                    .map(|s| {
                        vec![
                            s.variant.clone(),
                            s.client.into(),
                            s.server.into(),
                            String::new(),
                            opt(s.p50_ms, 1),
                            opt(s.max_ms, 1),
                            opt(s.metrics.get("idle_rss_kib").map(|k| k / 1024.0), 1),
                        ]
                    })
                    .collect();
                out.push_str(&table(
                    &[
                        "variant",
                        "client",
                        "server",
                        "",
                        "ready p50 ms",
                        "ready max ms",
                        "idle RSS MiB",
                    ],
                    body,
                ));
            }
            _ => {
                let backlog = scenario == "backlog";
                let body = rows
                    .iter()
                    .map(|s| {
                        let ratio = if backlog {
                            s.metrics.get("vs_shallowest_pct").copied()
                        } else {
                            s.floor_pct
                        };
                        vec![
                            s.variant.clone(),
                            s.client.into(),
                            s.server.into(),
                            s.rounds.to_string(),
                            if s.msgs_per_s > 0.0 {
                                thousands(s.msgs_per_s)
                            } else {
                                "-".into()
                            },
                            opt(s.p50_ms, 2),
                            opt(s.p99_ms, 2),
                            opt(s.max_ms, 2),
                            ratio.map_or("-".into(), |p| format!("{p:.0}%")),
                            opt(s.server_cpu_us_per_msg, 1),
                        ]
                    })
                    .collect();
                let ratio_header = if backlog {
                    "vs shallowest"
                } else {
                    "% of floor"
                };
                out.push_str(&table(
                    &[
                        "variant",
                        "client",
                        "server",
                        "rounds",
                        "msgs/s",
                        "p50 ms",
                        "p99 ms",
                        "max ms",
                        ratio_header,
                        "server CPU µs/msg",
                    ],
                    body,
                ));
            }
        }
        if !latency_of.is_empty() {
            let _ = writeln!(out, "\nLatency: {latency_of}.");
        }
        if scenario == "pipeline" {
            for s in rows.iter().filter(|s| s.floor_requests_pct.is_some()) {
                let _ = writeln!(
                    out,
                    "Requests ({} client): {} {} req/s, {:.0}% of the null server's; \
                     {:.2} requests per message delivered.",
                    s.client,
                    s.server,
                    thousands(s.requests_per_s),
                    s.floor_requests_pct.unwrap_or(0.0),
                    s.requests_per_s / s.msgs_per_s.max(1e-9),
                );
            }
        }
    }
    let _ = writeln!(out, "\n### targets (raw client)\n");
    let body = targets
        .iter()
        .map(|t| {
            vec![
                t.name.clone(),
                t.goal.clone(),
                t.measured.clone(),
                match t.met {
                    Some(true) => "met".into(),
                    Some(false) => "MISSED".into(),
                    None if t.goal == "reported" && t.measured != "-" => "reported".into(),
                    None => "not measured".into(),
                },
            ]
        })
        .collect();
    out.push_str(&table(&["target", "goal", "measured", "result"], body));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![f64::NAN, 5.0]), Some(5.0));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let ns: Vec<u64> = (1..=100).map(|i| i * 1_000_000).collect();
        let l = Latency::from_ns("x", ns).unwrap();
        assert_eq!(l.p50_ms, 50.0);
        assert_eq!(l.p99_ms, 99.0);
        assert_eq!(l.max_ms, 100.0);
        let one = Latency::from_ns("x", vec![2_000_000]).unwrap();
        assert_eq!((one.p50_ms, one.p99_ms, one.max_ms), (2.0, 2.0, 2.0));
        assert!(Latency::from_ns("x", vec![]).is_none());
    }

    #[test]
    fn counts_and_thousands() {
        assert_eq!(count(1000.0), "1k");
        assert_eq!(count(1_000_000.0), "1M");
        assert_eq!(count(1500.0), "1500");
        assert_eq!(thousands(1234567.0), "1,234,567");
        assert_eq!(thousands(999.0), "999");
    }

    fn m(server: &'static str, round: usize, rate: f64) -> Measurement {
        let mut m = Measurement::new("send", "c=1");
        m.client = "raw";
        m.server = server;
        m.round = round;
        m.msgs_per_s = rate;
        m.seconds = 1.0;
        m.requests = rate as u64;
        m
    }

    #[test]
    fn floor_is_the_median_of_same_round_ratios() {
        let ms = vec![
            m("retsu", 0, 50.0),
            m("null", 0, 100.0),
            m("retsu", 1, 90.0),
            m("null", 1, 100.0),
            m("retsu", 2, 10.0),
            m("null", 2, 10.0),
        ];
        let s = summarize(&ms);
        let retsu = s.iter().find(|s| s.server == "retsu").unwrap();
        assert_eq!(retsu.rounds, 3);
        assert_eq!(retsu.msgs_per_s, 50.0);
        assert_eq!(retsu.floor_pct, Some(90.0));
        assert_eq!(retsu.floor_requests_pct, Some(90.0));
        let null = s.iter().find(|s| s.server == "null").unwrap();
        assert_eq!(null.floor_pct, None);
        let t = targets(&s, "retsu");
        let send = t.iter().find(|t| t.name == "send c=1").unwrap();
        assert_eq!(send.met, Some(true));
        assert!(t
            .iter()
            .filter(|t| t.name != "send c=1")
            .all(|t| t.met.is_none()));
    }
}
