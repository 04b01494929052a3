#!/usr/bin/env python3
"""The summary of scripts/bench-peers.sh: medians over rounds of each
server's retsu-bench reports (the worst for a maximum), as a Markdown
table, then every failure.

Usage: peers_summary.py DIR   (DIR holds SERVER-rN.json and startup.tsv)
"""

import glob
import json
import os
import re
import statistics
import sys
from collections import defaultdict

ORDER = ["null", "floor-retsu", "retsu", "moto", "goaws", "elasticmq"]
TITLES = {
    "null": "HTTP floor",
    "floor-retsu": "Retsu (bench-started)",
    "retsu": "Retsu",
    "moto": "moto",
    "goaws": "goaws",
    "elasticmq": "ElasticMQ",
}
MIN_SAMPLES = 300


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def rate(v):
    return "" if v is None else f"{v:,.0f}"


def ms(v):
    return "" if v is None else (f"{v:.2f}" if v < 10 else f"{v:.0f}" if v >= 100 else f"{v:.1f}")


def short(error):
    if re.search(r"HTTP [45]\d\d", error):
        return "refused"
    if re.search(r"twice|never received|expected|not empty|distinct|never sent", error):
        return "check failed"
    return "failed"


def main(out):
    rates = defaultdict(lambda: defaultdict(list))  # row -> server -> [v]
    lat = defaultdict(lambda: defaultdict(list))  # row -> server -> [(p50,p99,max)]
    mem = defaultdict(lambda: defaultdict(list))
    fails = defaultdict(dict)  # row -> server -> short
    details = []
    for path in sorted(glob.glob(os.path.join(out, "*-r*.json"))):
        base = os.path.basename(path)
        name = base.rsplit("-r", 1)[0]
        with open(path) as f:
            doc = json.load(f)
        for m in doc["measurements"]:
            server = m["server"]
            if name == "floor":
                server = "null" if server == "null" else "floor-retsu"
            elif server == "endpoint":
                server = name
            row = f'{m["scenario"]} {m["variant"]}'.strip()
            if m["scenario"] == "memory":
                mt = m["metrics"]
                mem["bytes per stored 1 KiB message"][server].append(mt.get("bytes_per_message"))
                mem["RSS with an empty queue (MiB)"][server].append(mt.get("rss_empty_kib", 0) / 1024)
                continue
            if m["msgs_per_s"] and m["scenario"] != "longpoll-wake":
                rates[row][server].append(m["msgs_per_s"])
            l = m.get("latency")
            if l and l["samples"] >= MIN_SAMPLES:
                lat[row][server].append((l["p50_ms"], l["p99_ms"], l["max_ms"]))
        for fl in doc["failures"]:
            server = name if name != "floor" else ("null" if fl["server"] == "null" else "floor-retsu")
            row = f'{fl["scenario"]} {fl["variant"]}'.strip()
            fails[row][server] = short(fl["error"])
            details.append(f'- {TITLES.get(server, server)}, {row}, {base}: {fl["error"][:400]}')
    startup = defaultdict(list)
    idle = defaultdict(list)
    tsv = os.path.join(out, "startup.tsv")
    if os.path.exists(tsv):
        for line in open(tsv):
            name, _, us, rss = line.rstrip("\n").split("\t")
            startup[name].append(int(us) / 1000)
            if rss:
                idle[name].append(int(rss) / 1024)

    present = set()
    for table in (rates, lat, mem, fails):
        for row in table.values():
            present.update(row)
    present.update(startup)
    cols = [s for s in ORDER if s in present]
    lines = ["| | " + " | ".join(TITLES[c] for c in cols) + " |", "|---" + "|---:" * len(cols) + "|"]

    def cell(row, server, text):
        if text:
            return text
        return fails.get(row, {}).get(server, "")

    rows = sorted(set(rates) | set(lat) | set(fails), key=row_key)
    for row in rows:
        if row in rates or not row.startswith("longpoll"):
            if row in rates or row in fails:
                vals = [cell(row, c, rate(med(rates[row].get(c, [])))) for c in cols]
                lines.append(f"| {row}, msgs/s | " + " | ".join(vals) + " |")
        if row in lat:
            vals = []
            for c in cols:
                samples = lat[row].get(c, [])
                text = ""
                if samples:
                    # Medians over rounds, the worst for the maximum (as retsu-bench).
                    p50 = med([s[0] for s in samples])
                    p99 = med([s[1] for s in samples])
                    worst = max(s[2] for s in samples)
                    text = " / ".join(ms(v) for v in (p50, p99, worst))
                vals.append(cell(row, c, text) if row.startswith("longpoll") else text)
            lines.append(f"| {row}, p50 / p99 / max ms | " + " | ".join(vals) + " |")
    for row in sorted(mem):
        vals = [rate(med(mem[row].get(c, []))) if "bytes" in row else ms(med(mem[row].get(c, []))) for c in cols]
        lines.append(f"| memory: {row} | " + " | ".join(vals) + " |")
    lines.append("| exec to first answered ListQueues, ms (median) | "
                 + " | ".join(ms(med(startup.get(c, []))) for c in cols) + " |")
    lines.append("| RSS 200 ms after the first answer, MiB | "
                 + " | ".join(ms(med(idle.get(c, []))) for c in cols) + " |")
    print("\n".join(lines))
    if details:
        print("\nFailures (each a cell above):\n")
        print("\n".join(details))


def row_key(row):
    order = ["send c", "send-batch", "drain", "longpoll"]
    for i, p in enumerate(order):
        if row.startswith(p):
            n = re.search(r"c=(\d+)", row)
            return (i, int(n.group(1)) if n else 0)
    return (len(order), 0)


if __name__ == "__main__":
    main(sys.argv[1])
