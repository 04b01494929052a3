#!/usr/bin/env python3
"""aws-cli (v1) SNS compatibility scenarios: `aws sns ...` as a user types it.

Topics and publishes go through `aws --endpoint-url URL sns <command>`; what
they deliver is read back with `aws sqs receive-message` against the same
fresh retsu. Every SNS call runs with --debug, so the request actually sent
is classified (an `Action` form body is the query protocol SNS speaks); a
scenario whose SNS requests were not all on the query wire fails. Errors
are read from stderr ("An error occurred (Code) when calling the Op
operation: message", exit status 255).

Usage: sns_scenarios.py --aws PATH/TO/aws --endpoint URL --out results/aws-cli.sns.json
Standard library only; shares the Cli runner of compat/cli/scenarios.py.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scenarios import Cli, CliError, cli_version  # noqa: E402  (compat/cli/scenarios.py)
from checks import Fail, check, eq  # noqa: E402  (compat/python/checks.py, put on sys.path by scenarios)

SNS_SCENARIOS = ["sns_topic_lifecycle", "sns_fanout_envelope", "sns_raw_and_filter", "sns_fifo", "sns_errors"]
ACCOUNT = "000000000000"
REGION = "us-east-1"


class ServiceCli(Cli):
    """The Cli runner of the SQS suite, for any service: `aws <service> <command> ...`."""

    def __init__(self, aws, endpoint, service):
        super().__init__(aws, endpoint)
        self.service = service

    def popen(self, *args):
        cmd = [self.aws, "--debug", "--output", "json", "--endpoint-url", self.endpoint, self.service, *args]
        return subprocess.Popen(cmd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def fails(self, code, *args):
        """Runs a command that must fail with service error `code`; returns the message."""
        try:
            self(*args)
        except CliError as e:
            if e.code != code:
                raise Fail(f"`aws {self.service} {args[0]}`: expected error {code}, got {e.code} ({e.message})")
            check(e.rc == 255, f"`aws {self.service} {args[0]}`: exit status {e.rc}, expected 255")
            return e.message
        raise Fail(f"`aws {self.service} {args[0]}`: expected error {code}, the command succeeded")


class Ctx:
    def __init__(self, sns, sqs, run_id):
        self.sns, self.sqs, self.run_id = sns, sqs, run_id
        self.n = 0
        self.queues, self.topics = [], []

    def name(self, stem, fifo=False):
        self.n += 1
        return f"cli-{stem}-{self.run_id}-{self.n}" + (".fifo" if fifo else "")

    def queue(self, stem, fifo=False):
        name = self.name(stem, fifo)
        args = ["create-queue", "--queue-name", name]
        if fifo:
            args += ["--attributes", "FifoQueue=true"]
        url = self.sqs(*args)["QueueUrl"]
        self.queues.append(url)
        return url, f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"

    def topic(self, stem, fifo=False, attributes=None):
        attrs = dict(attributes or {})
        if fifo:
            attrs["FifoTopic"] = "true"
        args = ["create-topic", "--name", self.name(stem, fifo)]
        if attrs:
            args += ["--attributes", self.sns.file(attrs)]
        arn = self.sns(*args)["TopicArn"]
        self.topics.append(arn)
        return arn

    def subscribe(self, topic_arn, queue_arn, attributes=None):
        args = ["subscribe", "--topic-arn", topic_arn, "--protocol", "sqs", "--notification-endpoint", queue_arn,
                "--return-subscription-arn"]
        if attributes:
            args += ["--attributes", self.sns.file(attributes)]
        arn = self.sns(*args)["SubscriptionArn"]
        check(arn.startswith(topic_arn + ":"), f"SubscriptionArn {arn!r} is not under {topic_arn}")
        return arn

    def drain(self, url, want, seconds=5.0, *extra):
        got = []
        deadline = time.monotonic() + seconds
        while len(got) < want and time.monotonic() < deadline:
            for m in self.sqs("receive-message", "--queue-url", url, "--max-number-of-messages", "10",
                              "--wait-time-seconds", "1", *extra).get("Messages", []):
                got.append(m)
                self.sqs("delete-message", "--queue-url", url, "--receipt-handle", m["ReceiptHandle"])
        return got


def envelope_of(m, what):
    try:
        return json.loads(m["Body"])
    except ValueError:
        raise Fail(f"{what}: the body is not a JSON envelope: {m['Body'][:200]!r}")


def s_topic_lifecycle(c):
    name = c.name("life")
    arn = c.sns("create-topic", "--name", name)["TopicArn"]
    c.topics.append(arn)
    eq(arn, f"arn:aws:sns:{REGION}:{ACCOUNT}:{name}", "TopicArn")
    eq(c.sns("create-topic", "--name", name)["TopicArn"], arn, "create-topic again")
    c.sns("set-topic-attributes", "--topic-arn", arn, "--attribute-name", "DisplayName", "--attribute-value", "Life cycle")
    attrs = c.sns("get-topic-attributes", "--topic-arn", arn)["Attributes"]
    eq(attrs.get("DisplayName"), "Life cycle", "DisplayName")
    listed = [t["TopicArn"] for t in c.sns("list-topics").get("Topics", [])]
    check(arn in listed, f"list-topics does not list {arn}")
    c.sns("tag-resource", "--resource-arn", arn, "--tags", "Key=team,Value=a", "Key=env,Value=test")
    tags = c.sns("list-tags-for-resource", "--resource-arn", arn)["Tags"]
    eq(sorted((t["Key"], t["Value"]) for t in tags), [("env", "test"), ("team", "a")], "list-tags-for-resource")
    c.sns("delete-topic", "--topic-arn", arn)
    msg = c.sns.fails("NotFound", "get-topic-attributes", "--topic-arn", arn)
    check("Topic does not exist" in msg, f"NotFound message {msg!r}")
    return f"NotFound: {msg}"


def s_fanout_envelope(c):
    arn = c.topic("fan")
    queues = [c.queue("fan-a"), c.queue("fan-b")]
    for _, qarn in queues:
        c.subscribe(arn, qarn)
    text = 'hello "fan-out"\nsecond line'
    attrs = c.sns.file({"colour": {"DataType": "String", "StringValue": "blue"}})
    mid = c.sns("publish", "--topic-arn", arn, "--message", text, "--subject", "Greeting",
                "--message-attributes", attrs)["MessageId"]
    for i, (url, _) in enumerate(queues):
        got = c.drain(url, 1)
        eq(len(got), 1, f"messages in queue {i + 1}")
        env = envelope_of(got[0], f"queue {i + 1}")
        eq(env.get("Type"), "Notification", "Type")
        eq(env.get("MessageId"), mid, "MessageId (publish's)")
        eq(env.get("TopicArn"), arn, "TopicArn")
        eq(env.get("Subject"), "Greeting", "Subject")
        eq(env.get("Message"), text, "Message")
        eq(env.get("MessageAttributes"), {"colour": {"Type": "String", "Value": "blue"}}, "MessageAttributes")
        eq(env.get("SignatureVersion"), "1", "SignatureVersion")
        for k in ("Timestamp", "Signature", "SigningCertURL", "UnsubscribeURL"):
            check(isinstance(env.get(k), str) and env[k], f"envelope has no {k}")
    return f"both queues got envelope {mid}"


def s_raw_and_filter(c):
    arn = c.topic("raw")
    raw_url, raw_arn = c.queue("raw")
    blue_url, blue_arn = c.queue("blue")
    c.subscribe(arn, raw_arn, {"RawMessageDelivery": "true"})
    c.subscribe(arn, blue_arn, {"FilterPolicy": json.dumps({"colour": ["blue"]})})
    for colour in ("red", "blue"):
        c.sns("publish", "--topic-arn", arn, "--message", f"a {colour} one", "--message-attributes",
              c.sns.file({"colour": {"DataType": "String", "StringValue": colour}}))
    raw = c.drain(raw_url, 2, 5.0, "--message-attribute-names", "All")
    eq(sorted(m["Body"] for m in raw), ["a blue one", "a red one"], "raw bodies")
    for m in raw:
        colour = m["Body"].split(" ")[1]
        eq(m.get("MessageAttributes"), {"colour": {"DataType": "String", "StringValue": colour}},
           f"SQS message attributes of {m['Body']!r}")
    blue = c.drain(blue_url, 2, 3.0)
    eq([envelope_of(m, "filtered")["Message"] for m in blue], ["a blue one"], "messages through the filter")
    return "raw body + SQS attribute; filter let only blue through"


def s_fifo(c):
    arn = c.topic("fifo", fifo=True, attributes={"ContentBasedDeduplication": "true"})
    url, qarn = c.queue("fifo", fifo=True)
    c.subscribe(arn, qarn, {"RawMessageDelivery": "true"})
    seqs = []
    for i in range(3):
        r = c.sns("publish", "--topic-arn", arn, "--message", f"m{i}", "--message-group-id", "g")
        check(r.get("SequenceNumber"), f"publish m{i} returned no SequenceNumber")
        seqs.append(r["SequenceNumber"])
    check(int(seqs[0]) < int(seqs[1]) < int(seqs[2]), f"SequenceNumbers not increasing: {seqs}")
    again = c.sns("publish", "--topic-arn", arn, "--message", "m0", "--message-group-id", "g")
    eq(again.get("SequenceNumber"), seqs[0], "SequenceNumber of the duplicate publish")
    got = c.drain(url, 4, 4.0)
    eq([m["Body"] for m in got], ["m0", "m1", "m2"], "FIFO queue contents, in order")
    return f"3 delivered in order; duplicate answered sequence {seqs[0]}"


def s_errors(c):
    missing = f"arn:aws:sns:{REGION}:{ACCOUNT}:{c.name('missing')}"
    m1 = c.sns.fails("NotFound", "publish", "--topic-arn", missing, "--message", "x")
    check("Topic does not exist" in m1, f"NotFound message {m1!r}")
    m2 = c.sns.fails("InvalidParameter", "create-topic", "--name", "bad name")
    check(m2.startswith("Invalid parameter:"), f"InvalidParameter message {m2!r}")
    return f"NotFound: {m1}; InvalidParameter: {m2}"


FUNCS = {
    "sns_topic_lifecycle": s_topic_lifecycle,
    "sns_fanout_envelope": s_fanout_envelope,
    "sns_raw_and_filter": s_raw_and_filter,
    "sns_fifo": s_fifo,
    "sns_errors": s_errors,
}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--aws", required=True)
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    sns = ServiceCli(args.aws, args.endpoint, "sns")
    sqs = ServiceCli(args.aws, args.endpoint, "sqs")
    version, botocore_version = cli_version(args.aws, sns.env)
    only = [s for s in args.only.split(",") if s]
    results = {}
    for name in SNS_SCENARIOS:
        if only and name not in only:
            continue
        c = Ctx(sns, sqs, uuid.uuid4().hex[:8])
        mark = len(sns.wire)
        t0 = time.monotonic()
        try:
            detail = FUNCS[name](c) or ""
            status = "pass"
        except Fail as e:
            status, detail = "fail", str(e)
        except CliError as e:
            status, detail = "fail", f"unexpected error {e}"
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)
            where = next((f"line {f.lineno}" for f in reversed(tb) if f.filename == __file__), "")
            status, detail = "fail", f"{type(e).__name__} {where}: {e}"
        wire = sns.wire[mark:]
        wrong = sorted({f"{op}={p}" for op, p in wire if p != "query"})
        if status == "pass" and wrong:
            status, detail = "fail", f"SNS requests not on the query wire: {', '.join(wrong)}"
        if status == "pass" and not wire:
            status, detail = "fail", "no SNS request observed"
        if status == "pass":
            detail = f"{detail} ({len(wire)} query requests: {', '.join(sorted({op for op, _ in wire}))})"
        for url in c.queues:
            try:
                sqs("delete-queue", "--queue-url", url)
            except Exception:
                pass
        for arn in c.topics:
            try:
                sns("delete-topic", "--topic-arn", arn)
            except Exception:
                pass
        print(f"  {name:34s} {status.upper():5s} {time.monotonic() - t0:5.1f}s  {'' if status == 'pass' else detail}",
              flush=True)
        results[name] = {"status": status, "detail": detail}
    observed = sorted({p for _, p in sns.wire})
    out = {
        "client": "aws-cli",
        "version": version,
        "protocol": observed[0] if len(observed) == 1 else "query",
        "service": "sns",
        "results": results,
        "extra": {"botocore": botocore_version + " (vendored as awscli.botocore)",
                  "wire_protocols_observed": observed, "requests": len(sns.wire)},
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)
        f.write("\n")
    failed = [n for n, r in results.items() if r["status"] == "fail"]
    print(f"aws-cli {version} sns ({out['protocol']}): {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
