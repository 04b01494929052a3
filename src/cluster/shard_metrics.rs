//! A node's `/metrics` over the shards it holds: each shard's engine
//! renders its own exposition, and one scrape must show them all, every
//! series labelled with its shard, and each family's `# HELP`/`# TYPE`
//! once (a parser refuses a family declared twice, or split in two).
//!
//! The engines' text is OpenMetrics as `prometheus_client` writes it:
//! a family's header lines, then its samples, then the next family, and
//! `# EOF` at the end. A sample line starts with its metric name, then
//! either `{labels}` or a space; the shard label goes first in the set.

/// Merges `(shard, exposition)` pairs into one exposition without its
/// `# EOF` (the caller appends its own families, then the end).
pub fn merge(shards: &[(i32, String)]) -> String {
    // Families in the order first seen: their header lines and samples.
    let mut families: Vec<(String, Vec<&str>, Vec<String>)> = Vec::new();
    for (shard, text) in shards {
        let mut current: Option<usize> = None;
        for line in text.lines() {
            if line.is_empty() || line == "# EOF" {
                continue;
            }
            if let Some(rest) = line.strip_prefix("# ") {
                // `# HELP name …`, `# TYPE name …`, `# UNIT name …`.
                let mut words = rest.splitn(3, ' ');
                let (_, name) = (words.next(), words.next().unwrap_or(""));
                let at = match families.iter().position(|f| f.0 == name) {
                    Some(at) => at,
                    None => {
                        families.push((name.to_string(), Vec::new(), Vec::new()));
                        families.len() - 1
                    }
                };
                // Each kind of header line once: the first shard's.
                let header = &mut families[at].1;
                if !header.iter().any(|h| same_kind(h, line)) {
                    header.push(line);
                }
                current = Some(at);
                continue;
            }
            let labelled = labelled(line, *shard);
            match current {
                Some(at) => families[at].2.push(labelled),
                // A sample before any header: a family of its own.
                None => families.push((String::new(), Vec::new(), vec![labelled])),
            }
        }
    }
    let mut out = String::new();
    for (_, header, samples) in families {
        for line in header {
            out.push_str(line);
            out.push('\n');
        }
        for line in samples {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Whether two header lines are the same kind (`HELP`, `TYPE`, `UNIT`).
fn same_kind(a: &str, b: &str) -> bool {
    a.split(' ').nth(1) == b.split(' ').nth(1)
}

/// A sample line with `shard="…"` first in its label set.
fn labelled(line: &str, shard: i32) -> String {
    let end = line.find(['{', ' ']).unwrap_or(line.len());
    let (name, rest) = line.split_at(end);
    match rest.strip_prefix('{') {
        Some(labels) if labels.starts_with('}') => format!("{name}{{shard=\"{shard}\"{labels}"),
        Some(labels) => format!("{name}{{shard=\"{shard}\",{labels}"),
        None => format!("{name}{{shard=\"{shard}\"}}{rest}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_declared_once_and_samples_labelled_by_shard() {
        let one = "# HELP retsu_queue_messages Messages.\n# TYPE retsu_queue_messages gauge\nretsu_queue_messages{node=\"n\",queue=\"a\"} 1\n# HELP retsu_up Up.\n# TYPE retsu_up gauge\nretsu_up 1\n# EOF\n";
        let three = "# HELP retsu_queue_messages Messages.\n# TYPE retsu_queue_messages gauge\nretsu_queue_messages{node=\"n\",queue=\"b\"} 2\n# HELP retsu_up Up.\n# TYPE retsu_up gauge\nretsu_up 1\n# EOF\n";
        let merged = merge(&[(1, one.into()), (3, three.into())]);
        assert_eq!(
            merged,
            "# HELP retsu_queue_messages Messages.\n# TYPE retsu_queue_messages gauge\n\
             retsu_queue_messages{shard=\"1\",node=\"n\",queue=\"a\"} 1\n\
             retsu_queue_messages{shard=\"3\",node=\"n\",queue=\"b\"} 2\n\
             # HELP retsu_up Up.\n# TYPE retsu_up gauge\n\
             retsu_up{shard=\"1\"} 1\nretsu_up{shard=\"3\"} 1\n"
        );
    }

    #[test]
    fn an_empty_label_set_gets_the_shard_alone() {
        assert_eq!(labelled("x{} 1", 2), "x{shard=\"2\"} 1");
    }
}
