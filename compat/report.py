#!/usr/bin/env python3
"""Writes COMPATIBILITY.md from compat/results/*.json.

Each results file (written by a suite: compat/python, compat/cli, compat/node)
has the shared format
  {"client": "boto3", "version": "1.35.0", "protocol": "json"|"query",
   "results": {"<scenario>": {"status": "pass"|"fail"|"n/a", "detail": "..."}}}
(an optional "extra" object is shown as notes). A file with "service": "sns"
is an SNS client (its scenarios are SNS_SCENARIOS); any other is an SQS one.
The report is a table of SQS scenarios (rows) x clients (columns), a legend,
a second table of SNS scenarios x SNS clients, the failures with their
details, and the not-applicable reasons.

Usage: report.py [--results DIR] [--out FILE] [--date YYYY-MM-DD]
Exit status: 0 if every scenario of every client is pass or n/a, 1 if any
failed or is missing (a scenario a client neither ran nor marked n/a).
Standard library only.
"""

import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys

SCENARIOS = [
    ("queue_lifecycle", "Queue lifecycle: create (idempotent), get URL, attributes, purge, delete"),
    ("list_queues_pagination", "ListQueues with prefix and MaxResults/NextToken pagination"),
    ("send_receive_delete_attributes", "Send/receive/delete with String, Number, Binary attributes + AWSTraceHeader; MD5s"),
    ("batches_partial_failure", "Send/delete/change-visibility batches incl. partial failure"),
    ("visibility_change_release", "Visibility timeout, change and release"),
    ("delay", "Delay (queue and per message)"),
    ("long_polling", "Long polling (empty wait, wake on send)"),
    ("fifo_order_group_lock_dedup", "FIFO order, group lock, deduplication"),
    ("dead_letter_and_move_task", "Dead-letter move on receive; message move task back"),
    ("tags", "Tags"),
    ("errors_typed", "Typed errors: missing queue, bad receipt handle, empty batch, bad attribute"),
]

SNS_SCENARIOS = [
    ("sns_topic_lifecycle", "Topic lifecycle: create (again: same ARN), set/get DisplayName, ListTopics, "
                            "tag/list tags, delete, then GetTopicAttributes fails NotFound (typed where modelled)"),
    ("sns_fanout_envelope", "Fan-out: two queues subscribed to one topic both get AWS's JSON envelope (Type, MessageId "
                            "= Publish's, TopicArn, Subject, Message, MessageAttributes, SignatureVersion 1, Signature, "
                            "SigningCertURL, UnsubscribeURL)"),
    ("sns_raw_and_filter", "Raw delivery (bare body, attribute as an SQS message attribute) and a FilterPolicy "
                           "{\"colour\":[\"blue\"]} that lets only the blue one of two publishes through"),
    ("sns_fifo", "FIFO topic (ContentBasedDeduplication) to a FIFO queue, raw: 3 in one group then the first again: "
                 "exactly 3 arrive, in order, and the duplicate publish returns the first SequenceNumber"),
    ("sns_errors", "Errors: Publish to a missing topic is NotFound, CreateTopic \"bad name\" is InvalidParameter "
                   "(typed where modelled, and the message text)"),
]

LS_SCENARIOS = [
    ("ls_queues", "Queues: create (LocalStack's standard queue URL http://sqs.<region>.localhost.localstack.cloud:<port>/"
                  "<account>/<name>), get URL, list, set/get attributes, send/receive/delete, NonExistentQueue, delete"),
    ("ls_topics", "Topics: create (again: same ARN), DisplayName, tags, ListTopics, delete, then NotFound"),
    ("ls_subscriptions", "Subscriptions: an SQS queue subscribed raw with a FilterPolicy, listed; of two publishes "
                         "only the matching one arrives; unsubscribe"),
    ("ls_developer_endpoints", "Developer endpoints: /_localstack/health (sqs and sns running), /_localstack/info, "
                               "/_localstack/init and /init/ready, /_aws/sqs/messages shows a message that stays "
                               "receivable"),
]

ANSIBLE_SCENARIOS = [
    ("ansible_caller_identity", "amazon.aws.aws_caller_info (STS GetCallerIdentity) answers the server's account "
                                "and its root ARN"),
    ("ansible_apply", "apply.yml: community.aws.sqs_queue (standard with every attribute the module sets, a redrive "
                      "policy, a queue policy, tags; FIFO with its attributes) and community.aws.sns_topic (display "
                      "name, policy, delivery policy, tags; raw SQS, https and email subscriptions; a FIFO topic) "
                      "create, and every value reads back as declared"),
    ("ansible_converged", "apply.yml again reports changed=0, keeps a FilterPolicy set on the raw SQS subscription, "
                          "and only the matching publish arrives"),
    ("ansible_remove", "remove.yml leaves no queue, topic or subscription (ListQueues, ListTopics, "
                       "ListSubscriptions), and again reports changed=0"),
]

TF_SCENARIOS = [
    ("tf_caller_identity", "STS GetCallerIdentity (the provider's first call) through boto3, and "
                           "`aws sts get-caller-identity --endpoint-url`"),
    ("tf_sqs_queue", "aws_sqs_queue: CreateQueue with attributes and tags, then GetQueueAttributes polled until every "
                     "attribute equals what was set (6 in a row, 5 s apart), ListQueueTags"),
    ("tf_sqs_queue_policy", "aws_sqs_queue_policy: SetQueueAttributes Policy, polled until equivalent (policy "
                            "equivalence), then removed (Policy \"\") and polled until gone"),
    ("tf_sns_topic", "aws_sns_topic: CreateTopic with tags, each attribute by SetTopicAttributes, GetTopicAttributes "
                     "echoes every value, ListTagsForResource"),
    ("tf_sns_topic_subscription", "aws_sns_topic_subscription: Subscribe (ReturnSubscriptionArn) with attributes, "
                                  "GetSubscriptionAttributes echoes them, SetSubscriptionAttributes on update"),
    ("tf_destroy", "destroy: Unsubscribe and DeleteTopic until NotFound; DeleteQueue, then GetQueueAttributes over "
                   "JSON until QueueDoesNotExist (typed by X-Amzn-Query-Error) 15 times in a row"),
]

SCENARIOS_OF = {"sqs": SCENARIOS, "sns": SNS_SCENARIOS, "localstack": LS_SCENARIOS,
                "ansible": ANSIBLE_SCENARIOS, "terraform": TF_SCENARIOS}

# Columns in this order first; any other client follows alphabetically.
PREFERRED = ["aws-cli", "boto3"]

MARK = {"pass": "pass", "fail": "**FAIL**", "n/a": "n/a"}
# A suite whose toolchain is missing on the machine writes "skipped" cells
# (detail "skipped: no Java"): shown as such, listed, and not a failure.


def load(results_dir):
    cols = []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        try:
            with open(path) as f:
                data = json.load(f)
            for key in ("client", "version", "protocol", "results"):
                if key not in data:
                    raise ValueError(f"missing key {key!r}")
        except Exception as e:  # a broken file is itself a failure
            data = {"client": os.path.basename(path), "version": "?", "protocol": "?",
                    "results": {}, "error": f"unreadable results file: {e}"}
        data["_file"] = os.path.basename(path)
        data["_service"] = data.get("service") if data.get("service") in SCENARIOS_OF else "sqs"
        cols.append(data)

    def order(d):
        name = d["client"]
        rank = PREFERRED.index(name) if name in PREFERRED else len(PREFERRED)
        # json before query for the same client, then by version
        return (rank, name, d.get("protocol") != "json", d.get("version", ""))

    return sorted(cols, key=order)


def rust_sdk_version(repo, crate="aws-sdk-sqs"):
    try:
        with open(os.path.join(repo, "Cargo.lock")) as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r'name = "' + re.escape(crate) + r'"\nversion = "([^"]+)"', text)
    return m.group(1) if m else None


def git_rev(repo):
    try:
        out = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except Exception:
        return None


def esc(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(lines, cols, scenarios, rust_head, rust_cell, bad, na, skipped, service):
    """One scenarios (rows) x clients (columns) table; records failures, n/a and skips."""
    names = [s for s, _ in scenarios]
    extra_rows = sorted({s for c in cols for s in c["results"] if s not in names})
    rows = names + extra_rows
    tag = {"sns": " [SNS]", "localstack": " [LocalStack tools]", "ansible": " [IaC]",
           "terraform": " [IaC]"}.get(service, "")
    header = ["Scenario"]
    for c in cols:
        head = f"{esc(c['client'])} {esc(c['version'])}"
        bv = str((c.get("extra") or {}).get("botocore", "")).split(" ")[0]
        if bv and bv != c["version"]:
            head += f"<br>botocore {esc(bv)}"
        header.append(f"{head}<br>({esc(c['protocol'])})")
    header.append(rust_head)
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for s in rows:
        cells = [f"`{s}`"]
        for c in cols:
            label = f"{c['client']} {c['version']} ({c['protocol']}){tag}"
            r = c["results"].get(s)
            if r is None:
                if s in names:
                    cells.append("**MISSING**")
                    bad.append((label, s, "missing", c.get("error") or "the suite did not report this scenario"))
                else:
                    cells.append("")
                continue
            st = r.get("status")
            if st == "skipped":
                cells.append(esc(r.get("detail") or "skipped"))
                skipped[f"{c['client']}{tag}"] = r.get("detail") or "skipped"
                continue
            cells.append(MARK.get(st, f"**{esc(st)}?**"))
            if st == "n/a":
                na.append((label, s, r.get("detail", "")))
            elif st != "pass":
                bad.append((label, s, st, r.get("detail", "")))
        cells.append(rust_cell if s in names else "")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return rows


def render(cols, repo, date):
    sqs_cols = [c for c in cols if c["_service"] == "sqs"]
    sns_cols = [c for c in cols if c["_service"] == "sns"]
    ls_cols = [c for c in cols if c["_service"] == "localstack"]
    desc = dict(SCENARIOS)
    rust = rust_sdk_version(repo)
    rust_sns = rust_sdk_version(repo, "aws-sdk-sns")
    rev = git_rev(repo)

    bad = []  # (client label, scenario, status, detail)
    na = []
    skipped = {}  # client label -> reason
    lines = []
    lines.append("# Compatibility matrix")
    lines.append("")
    lines.append("<!-- Generated by compat/report.py from compat/results/*.json; do not edit by hand. "
                 "Regenerate with: bash compat/run.sh -->")
    lines.append("")
    when = f"Generated on {date}"
    if rev:
        when += f" against retsu commit `{rev}`"
    lines.append(when + " by `bash compat/run.sh`: every client below is the real, pinned SDK or tool, "
                 "driving a freshly started `retsu` binary over HTTP on a random loopback port.")
    lines.append("")

    rows = table(lines, sqs_cols, SCENARIOS, f"aws-sdk-sqs (Rust){' ' + rust if rust else ''}<br>(json)",
                 "[cargo test](tests/)", bad, na, skipped, "sqs")

    lines.append("## Legend")
    lines.append("")
    lines.append("- **pass**: the scenario ran against the server and every check held.")
    lines.append("- **FAIL**: a check failed or the client raised something unexpected; see *Failures* below.")
    lines.append("- **n/a**: the client's API cannot express the scenario (reason listed below); it is not silently skipped.")
    lines.append("- **MISSING**: the suite neither ran the scenario nor marked it n/a (counts as a failure).")
    lines.append("- **skipped: no Java** / **skipped: no Go**: the machine that generated this file lacked that "
                 "toolchain, so the column did not run (listed under *Skipped*; not a pass).")
    lines.append("- The protocol under each client is the one observed on the wire during the run "
                 "(`json`: AWS JSON 1.0 with `X-Amz-Target`; `query`: AWS Query form body with `Action=`).")
    lines.append("- **aws-sdk-sqs (Rust)** is not driven by this matrix: it is exercised by the integration tests in "
                 "[`tests/`](tests/), run by `cargo test` (part of `scripts/test.sh`).")
    lines.append("")
    lines.append("Scenarios:")
    lines.append("")
    for s in rows:
        lines.append(f"- `{s}`: {desc.get(s, 'reported by a suite')}")
    lines.append("")

    lines.append("## SNS scenarios")
    lines.append("")
    lines.append("The same server speaks Amazon SNS (AWS Query protocol, same port). Each SNS client below "
                 "creates topics and publishes with its SNS API, subscribes SQS queues by ARN, and reads what "
                 "was delivered back with the same SDK's SQS client (Spring: `SnsTemplate` publishes, "
                 "`SqsTemplate` reads). Same legend as above; the protocol under each client is the one its "
                 "SNS requests were observed on.")
    lines.append("")
    sns_rows = table(lines, sns_cols, SNS_SCENARIOS,
                     f"aws-sdk-sns (Rust){' ' + rust_sns if rust_sns else ''}<br>(query)",
                     "[cargo test](tests/sns.rs)", bad, na, skipped, "sns")
    lines.append("- **aws-sdk-sns (Rust)** is not driven by this matrix: [`tests/sns.rs`](tests/sns.rs) "
                 "exercises the same behaviour through it, run by `cargo test`.")
    lines.append("")
    lines.append("SNS scenarios:")
    lines.append("")
    sns_desc = dict(SNS_SCENARIOS)
    for s in sns_rows:
        lines.append(f"- `{s}`: {sns_desc.get(s, 'reported by a suite')}")
    lines.append("")

    if ls_cols:
        lines.append("## LocalStack tools")
        lines.append("")
        lines.append("LocalStack's own client tools, unchanged, against `retsu --localstack`: each finds the server "
                     "as it finds LocalStack, from `LOCALSTACK_HOST` (`compat/localstack/scenarios.py`; README, "
                     "*Coming from LocalStack*). Same legend as above.")
        lines.append("")
        ls_rows = table(lines, ls_cols, LS_SCENARIOS, "retsu's own tests", "[cargo test](tests/localstack.rs)",
                        bad, na, skipped, "localstack")
        lines.append("LocalStack tools scenarios:")
        lines.append("")
        ls_desc = dict(LS_SCENARIOS)
        for s in ls_rows:
            lines.append(f"- `{s}`: {ls_desc.get(s, 'reported by a suite')}")
        lines.append("")

    iac = [(svc, [c for c in cols if c["_service"] == svc]) for svc in ("ansible", "terraform")]
    if any(group for _, group in iac):
        lines.append("## Infrastructure as code")
        lines.append("")
        lines.append("Infrastructure tools read back everything they set and retry until what they read equals "
                     "what they wrote. Ansible's AWS collections run for real (`compat/ansible/`); the Terraform "
                     "AWS provider cannot be built here, so `compat/terraform/readback.py` makes the calls it makes, "
                     "in its order, with its waits and equality checks (each step cites the provider file it "
                     "follows). Same legend as above; STS itself is also tested by "
                     "[`tests/sts.rs`](tests/sts.rs) with `aws-sdk-sts`.")
        lines.append("")
        # Retsu's own tests cover STS (tests/sts.rs), not these tools' runs.
        titles = {"ansible": ("Ansible", "-"), "terraform": ("Terraform AWS provider read-back", "-")}
        for svc, group in iac:
            if not group:
                continue
            title, rust_cell = titles[svc]
            lines.append(f"### {title}")
            lines.append("")
            rows_ = table(lines, group, SCENARIOS_OF[svc], "retsu's own tests", rust_cell, bad, na, skipped, svc)
            desc_ = dict(SCENARIOS_OF[svc])
            for s_ in rows_:
                lines.append(f"- `{s_}`: {desc_.get(s_, 'reported by a suite')}")
            lines.append("")

    lines.append("## Clients")
    lines.append("")
    for c in cols:
        notes = []
        extra = c.get("extra") or {}
        for k in sorted(extra):
            v = extra[k]
            if isinstance(v, (list, tuple)):
                v = ", ".join(map(str, v))
            notes.append(f"{k}: {v}")
        note = f" ({'; '.join(notes)})" if notes else ""
        svc = {"sns": ", SNS", "localstack": ", LocalStack tools", "ansible": ", infrastructure as code",
               "terraform": ", infrastructure as code"}.get(c["_service"], "")
        lines.append(f"- {c['client']} {c['version']}, {c['protocol']} protocol{svc}, `compat/results/{c['_file']}`{esc(note)}")
    lines.append(f"- aws-sdk-sqs (Rust) {rust or ''}: `cargo test`, see `tests/`")
    if sns_cols:
        lines.append(f"- aws-sdk-sns (Rust) {rust_sns or ''}: `cargo test`, see `tests/sns.rs`")
    lines.append("")

    lines.append("## Failures")
    lines.append("")
    if bad:
        for label, s, st, detail in bad:
            lines.append(f"- {label}, `{s}` ({st}): {esc(detail)}")
    else:
        lines.append("None.")
    lines.append("")
    if skipped:
        lines.append("## Skipped")
        lines.append("")
        for label, why in skipped.items():
            lines.append(f"- {label}: {esc(why)}")
        lines.append("")
    if na:
        lines.append("## Not applicable")
        lines.append("")
        for label, s, detail in na:
            lines.append(f"- {label}, `{s}`: {esc(detail)}")
        lines.append("")
    return "\n".join(lines), bad, skipped


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", default=os.path.join(here, "results"))
    ap.add_argument("--out", default=os.path.join(repo, "COMPATIBILITY.md"))
    ap.add_argument("--date", default=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"))
    args = ap.parse_args(argv)
    cols = load(args.results)
    if not cols:
        print(f"no results in {args.results}", file=sys.stderr)
        return 1
    text, bad, skipped = render(cols, repo, args.date)
    with open(args.out, "w") as f:
        f.write(text)
    cells = [(c, s) for c in cols for s, _ in SCENARIOS_OF[c["_service"]]]
    total = len(cells)
    n_skipped = sum(1 for c, s in cells if (c["results"].get(s) or {}).get("status") == "skipped")
    print(f"wrote {args.out}: {len(cols)} clients, {total - len(bad) - n_skipped} of {total} cells pass or n/a, "
          f"{len(bad)} failed or missing, {n_skipped} skipped")
    for label, why in skipped.items():
        print(f"SKIPPED: {label}: {why}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
