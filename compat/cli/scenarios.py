#!/usr/bin/env python3
"""aws-cli (v1) compatibility scenarios.

Drives the real `aws` executable of compat/.venv-cli as a user would:
`aws --endpoint-url URL sqs <command> ...`, dummy credentials from the
environment (AWS_ACCESS_KEY_ID=test, AWS_DEFAULT_REGION=us-east-1), JSON
output parsed from stdout, errors read from stderr ("An error occurred (Code)
when calling the Op operation: ..." with a non-zero exit status; that code is
the "typed error" of a shell user).

Every call runs with --debug so the request actually sent can be classified
(X-Amz-Target header -> json, Action= form body -> query); a scenario whose
requests were not all on the expected wire fails.

Usage: scenarios.py --aws PATH/TO/aws --endpoint URL --out results/aws-cli.json
Uses only the standard library (runs under any python3).
"""

import argparse
import base64
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
import uuid

SCENARIOS = [
    "queue_lifecycle",
    "list_queues_pagination",
    "send_receive_delete_attributes",
    "batches_partial_failure",
    "visibility_change_release",
    "delay",
    "long_polling",
    "fifo_order_group_lock_dedup",
    "dead_letter_and_move_task",
    "tags",
    "errors_typed",
]

ERROR_RE = re.compile(r"An error occurred \(([^)]*)\) when calling the (\w+) operation(?: \(reached max retries: \d+\))?: (.*)")
REQUEST_RE = re.compile(r"Making request for OperationModel\(name=(\w+)\) with params: (.*)")


# Shared with the boto3 suites: Fail, check, eq and the MD5 helpers.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checks import TRACE_HEADER, Fail, check, eq, md5_hex, md5_of_attributes  # noqa: E402


class CliError(Exception):
    def __init__(self, code, operation, message, rc):
        super().__init__(f"{code} from {operation} (exit {rc}): {message}")
        self.code, self.operation, self.message, self.rc = code, operation, message, rc


class Cli:
    def __init__(self, aws, endpoint):
        self.aws = aws
        self.endpoint = endpoint.rstrip("/")
        self.wire = []  # (operation, protocol)
        self.tmp = tempfile.mkdtemp(prefix="retsu-cli-")
        self.env = dict(os.environ)
        self.env.update({
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": os.path.join(self.tmp, "no-config"),
            "AWS_SHARED_CREDENTIALS_FILE": os.path.join(self.tmp, "no-credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_RETRY_MODE": "standard",
            "AWS_MAX_ATTEMPTS": "1",
            "AWS_PAGER": "",
        })
        self.env.pop("AWS_SESSION_TOKEN", None)
        self.env.pop("AWS_PROFILE", None)

    def _classify(self, stderr):
        for line in stderr.splitlines():
            m = REQUEST_RE.search(line)
            if not m:
                continue
            op, params = m.groups()
            if "'X-Amz-Target': 'AmazonSQS." in params:
                self.wire.append((op, "json"))
            elif "'Action': '" in params:
                self.wire.append((op, "query"))
            else:
                self.wire.append((op, "unknown"))

    def popen(self, *args):
        cmd = [self.aws, "--debug", "--output", "json", "--endpoint-url", self.endpoint, "sqs", *args]
        return subprocess.Popen(cmd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, proc, timeout=60):
        out, err = proc.communicate(timeout=timeout)
        self._classify(err)
        if proc.returncode != 0:
            m = None
            for line in err.splitlines():
                mm = ERROR_RE.search(line)
                if mm:
                    m = mm
            if m:
                raise CliError(m.group(1), m.group(2), m.group(3), proc.returncode)
            tail = " | ".join(l for l in err.splitlines()[-3:])
            raise Fail(f"aws exited {proc.returncode} without a service error: {tail[-400:]}")
        out = out.strip()
        return json.loads(out) if out else {}

    def __call__(self, *args, timeout=60):
        return self.finish(self.popen(*args), timeout)

    def error(self, code, *args):
        """Runs a command that must fail with service error `code`."""
        try:
            self(*args)
        except CliError as e:
            if e.code != code:
                raise Fail(f"`aws sqs {args[0]}`: expected error {code}, got {e.code} ({e.message})")
            # aws-cli v1 exits 255 on a service error (v2 uses 254).
            check(e.rc in (254, 255), f"`aws sqs {args[0]}`: service error exit status should be 255, got {e.rc}")
            return e
        raise Fail(f"`aws sqs {args[0]}`: expected error {code}, command succeeded")

    def file(self, obj):
        """Writes obj as JSON to a temp file and returns a file:// argument."""
        p = os.path.join(self.tmp, uuid.uuid4().hex + ".json")
        with open(p, "w") as f:
            json.dump(obj, f)
        return "file://" + p


class Ctx:
    def __init__(self, cli, run_id):
        self.cli = cli
        self.run_id = run_id
        self.n = 0
        self.cleanup = []

    def name(self, stem, fifo=False):
        self.n += 1
        return f"{stem}-{self.run_id}-{self.n}" + (".fifo" if fifo else "")

    def create(self, stem, fifo=False, attributes=None, tags=None):
        attrs = dict(attributes or {})
        if fifo:
            attrs["FifoQueue"] = "true"
        args = ["create-queue", "--queue-name", self.name(stem, fifo)]
        if attrs:
            args += ["--attributes", self.cli.file(attrs)]
        if tags:
            args += ["--tags", self.cli.file(tags)]
        url = self.cli(*args)["QueueUrl"]
        self.cleanup.append(url)
        return url

    def attrs(self, url, *names):
        return self.cli("get-queue-attributes", "--queue-url", url, "--attribute-names", *names).get("Attributes", {})

    def receive(self, url, *extra):
        return self.cli("receive-message", "--queue-url", url, *extra).get("Messages", [])


# ---------------------------------------------------------------- scenarios


def s_queue_lifecycle(c):
    cli = c.cli
    name = c.name("life")
    url = cli("create-queue", "--queue-name", name, "--attributes", "VisibilityTimeout=5")["QueueUrl"]
    c.cleanup.append(url)
    check(url.startswith(cli.endpoint + "/") and url.endswith("/" + name), f"QueueUrl {url!r} does not lead back to {cli.endpoint}")
    eq(cli("get-queue-url", "--queue-name", name)["QueueUrl"], url, "get-queue-url")
    a = c.attrs(url, "All")
    eq(a.get("VisibilityTimeout"), "5", "VisibilityTimeout")
    eq(a.get("MaximumMessageSize"), "1048576", "MaximumMessageSize")
    check(a.get("QueueArn", "").endswith(":" + name), f"QueueArn {a.get('QueueArn')!r}")
    cli("set-queue-attributes", "--queue-url", url, "--attributes", "VisibilityTimeout=10")
    eq(c.attrs(url, "VisibilityTimeout"), {"VisibilityTimeout": "10"}, "after set-queue-attributes")
    cli("send-message", "--queue-url", url, "--message-body", "to purge")
    eq(c.attrs(url, "ApproximateNumberOfMessages").get("ApproximateNumberOfMessages"), "1", "message count")
    cli("purge-queue", "--queue-url", url)
    eq(c.attrs(url, "ApproximateNumberOfMessages").get("ApproximateNumberOfMessages"), "0", "message count after purge")
    cli("delete-queue", "--queue-url", url)
    c.cleanup.remove(url)
    cli.error("AWS.SimpleQueueService.NonExistentQueue", "get-queue-url", "--queue-name", name)


def s_list_queues_pagination(c):
    cli = c.cli
    prefix = f"lqp-{c.run_id}-"
    made = set()
    for i in range(5):
        url = cli("create-queue", "--queue-name", f"{prefix}{i}")["QueueUrl"]
        c.cleanup.append(url)
        made.add(url)
    c.create("other-lqp")
    eq(set(cli("list-queues", "--queue-name-prefix", prefix).get("QueueUrls", [])), made, "list-queues --queue-name-prefix")
    # The CLI follows NextToken itself: --page-size 2 sends MaxResults=2.
    mark = len(cli.wire)
    eq(set(cli("list-queues", "--queue-name-prefix", prefix, "--page-size", "2").get("QueueUrls", [])), made, "list-queues --page-size 2")
    calls = len(cli.wire) - mark
    check(calls >= 3, f"--page-size 2 over 5 queues made {calls} ListQueues calls, expected 3")
    # --max-items hands a continuation token to the user.
    seen, token = [], None
    for _ in range(5):
        args = ["list-queues", "--queue-name-prefix", prefix, "--page-size", "2", "--max-items", "2"]
        if token:
            args += ["--starting-token", token]
        out = cli(*args)
        seen += out.get("QueueUrls", [])
        token = out.get("NextToken")
        if not token:
            break
    eq(sorted(seen), sorted(made), "list-queues --max-items 2 --starting-token loop")
    out = cli("list-queues", "--queue-name-prefix", f"nomatch-{c.run_id}")
    check(not out.get("QueueUrls"), f"list-queues with no match returned {out}")


def s_send_receive_delete_attributes(c):
    cli = c.cli
    url = c.create("srd")
    body = "héllo ✓ <xml> & \"q\""
    # CLI v1 passes blob strings through as raw bytes (no base64 decoding).
    attrs = {
        "s": {"DataType": "String", "StringValue": "hello"},
        "n": {"DataType": "Number", "StringValue": "42.5"},
        "b": {"DataType": "Binary", "BinaryValue": "binary-data"},
    }
    raw = {k: (dict(v, BinaryValue=v["BinaryValue"].encode()) if "BinaryValue" in v else v) for k, v in attrs.items()}
    sys_attrs = {"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}}
    sent = cli("send-message", "--queue-url", url, "--message-body", body,
               "--message-attributes", cli.file(attrs), "--message-system-attributes", cli.file(sys_attrs))
    eq(sent.get("MD5OfMessageBody"), md5_hex(body.encode()), "MD5OfMessageBody")
    eq(sent.get("MD5OfMessageAttributes"), md5_of_attributes(raw), "MD5OfMessageAttributes")
    eq(sent.get("MD5OfMessageSystemAttributes"), md5_of_attributes(sys_attrs), "MD5OfMessageSystemAttributes")
    msgs = c.receive(url, "--attribute-names", "All", "--message-attribute-names", "All", "--visibility-timeout", "30")
    eq(len(msgs), 1, "received messages")
    m = msgs[0]
    eq(m["MessageId"], sent["MessageId"], "MessageId")
    eq(m["Body"], body, "Body")
    eq(m.get("MD5OfBody"), md5_hex(body.encode()), "MD5OfBody")
    got = m.get("MessageAttributes", {})
    eq(got.get("s", {}).get("StringValue"), "hello", "String attribute")
    eq(got.get("n", {}).get("StringValue"), "42.5", "Number attribute")
    eq(got.get("n", {}).get("DataType"), "Number", "Number DataType")
    eq(got.get("b", {}).get("BinaryValue"), base64.b64encode(b"binary-data").decode(), "Binary attribute (base64 in CLI output)")
    eq(m.get("MD5OfMessageAttributes"), md5_of_attributes(raw), "received MD5OfMessageAttributes")
    eq(m.get("Attributes", {}).get("AWSTraceHeader"), TRACE_HEADER, "AWSTraceHeader")
    eq(m.get("Attributes", {}).get("ApproximateReceiveCount"), "1", "ApproximateReceiveCount")
    cli("delete-message", "--queue-url", url, "--receipt-handle", m["ReceiptHandle"])
    eq(c.receive(url), [], "queue empty after delete-message")
    eq(c.attrs(url, "ApproximateNumberOfMessagesNotVisible").get("ApproximateNumberOfMessagesNotVisible"), "0", "in flight after delete")


def s_batches_partial_failure(c):
    cli = c.cli
    url = c.create("batch", attributes={"MaximumMessageSize": "1024"})
    out = cli("send-message-batch", "--queue-url", url, "--entries", cli.file([
        {"Id": "ok1", "MessageBody": "one"},
        {"Id": "bad", "MessageBody": "bad \u0000 char"},
        {"Id": "ok2", "MessageBody": "two"},
        {"Id": "big", "MessageBody": "x" * 1100},
    ]))
    eq(sorted(e["Id"] for e in out.get("Successful", [])), ["ok1", "ok2"], "Successful")
    failed = {e["Id"]: e for e in out.get("Failed", [])}
    eq(sorted(failed), ["bad", "big"], "Failed")
    eq(failed["bad"].get("Code"), "InvalidMessageContents", "code for invalid characters")
    eq(failed["big"].get("Code"), "InvalidParameterValue", "code for an oversize entry")
    msgs = c.receive(url, "--max-number-of-messages", "10", "--visibility-timeout", "30")
    eq(sorted(m["Body"] for m in msgs), ["one", "two"], "received")
    entries = [{"Id": f"d{i}", "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs)]
    cv = cli("change-message-visibility-batch", "--queue-url", url, "--entries",
             cli.file([dict(entries[0], VisibilityTimeout=0), {"Id": "bad", "ReceiptHandle": "garbage", "VisibilityTimeout": 0}]))
    eq([e["Id"] for e in cv.get("Successful", [])], ["d0"], "change-message-visibility-batch Successful")
    eq([(e["Id"], e["Code"]) for e in cv.get("Failed", [])], [("bad", "ReceiptHandleIsInvalid")], "change-message-visibility-batch Failed")
    again = c.receive(url, "--max-number-of-messages", "10", "--visibility-timeout", "30")
    eq(len(again), 1, "released message visible again")
    entries[0]["ReceiptHandle"] = again[0]["ReceiptHandle"]
    dl = cli("delete-message-batch", "--queue-url", url, "--entries", cli.file(entries + [{"Id": "bad", "ReceiptHandle": "garbage"}]))
    eq(sorted(e["Id"] for e in dl.get("Successful", [])), ["d0", "d1"], "delete-message-batch Successful")
    eq([(e["Id"], e["Code"]) for e in dl.get("Failed", [])], [("bad", "ReceiptHandleIsInvalid")], "delete-message-batch Failed")
    eq(c.receive(url, "--max-number-of-messages", "10"), [], "queue empty")


def s_visibility_change_release(c):
    cli = c.cli
    url = c.create("vis", attributes={"VisibilityTimeout": "30"})
    cli("send-message", "--queue-url", url, "--message-body", "v")
    m = c.receive(url)
    eq(len(m), 1, "first receive")
    eq(c.receive(url), [], "receive while in flight")
    cli("change-message-visibility", "--queue-url", url, "--receipt-handle", m[0]["ReceiptHandle"], "--visibility-timeout", "0")
    m2 = c.receive(url, "--attribute-names", "ApproximateReceiveCount")
    eq(len(m2), 1, "receive after change-message-visibility 0")
    eq(m2[0]["Attributes"].get("ApproximateReceiveCount"), "2", "ApproximateReceiveCount")
    cli("change-message-visibility", "--queue-url", url, "--receipt-handle", m2[0]["ReceiptHandle"], "--visibility-timeout", "1")
    eq(c.receive(url), [], "receive right after a 1 s visibility change")
    time.sleep(1.2)
    m3 = c.receive(url)
    eq(len(m3), 1, "visible again after 1 s")
    cli("delete-message", "--queue-url", url, "--receipt-handle", m3[0]["ReceiptHandle"])


def s_delay(c):
    # Each aws invocation costs about a second of process start-up (more on a
    # loaded machine), so the delay is sized from a measured call and the
    # commands run two at a time. A receive that *finished* before
    # send-start + delay proves the message was still delayed.
    cli = c.cli
    t0 = time.monotonic()
    url = c.create("delay")
    per_call = time.monotonic() - t0
    delay = min(15, max(2, math.ceil(4 * per_call) + 1))
    qurl = c.create("delayq", attributes={"DelaySeconds": str(delay)})
    t0 = time.monotonic()
    a = cli.popen("send-message", "--queue-url", url, "--message-body", "later", "--delay-seconds", str(delay))
    b = cli.popen("send-message", "--queue-url", qurl, "--message-body", "queue later")
    cli.finish(a), cli.finish(b)
    sent = time.monotonic()
    a = cli.popen("receive-message", "--queue-url", url)
    b = cli.popen("receive-message", "--queue-url", qurl)
    ra, rb = cli.finish(a).get("Messages", []), cli.finish(b).get("Messages", [])
    elapsed = time.monotonic() - t0
    check(elapsed < delay, f"machine too slow to observe a {delay} s delay (receive finished {elapsed:.1f}s after the send started)")
    eq(ra, [], f"message with --delay-seconds {delay}, received {elapsed:.1f}s after sending")
    eq(rb, [], f"message on a DelaySeconds={delay} queue, received {elapsed:.1f}s after sending")
    time.sleep(max(0.0, delay + 0.3 - (time.monotonic() - sent)))
    a = cli.popen("receive-message", "--queue-url", url)
    b = cli.popen("receive-message", "--queue-url", qurl)
    eq([m["Body"] for m in cli.finish(a).get("Messages", [])], ["later"], f"delayed message after {delay} s")
    eq([m["Body"] for m in cli.finish(b).get("Messages", [])], ["queue later"], f"queue-delayed message after {delay} s")


def s_long_polling(c):
    cli = c.cli
    url = c.create("lp")
    # Baseline: process start-up of a short poll, to subtract from the timings.
    t0 = time.monotonic()
    c.receive(url, "--wait-time-seconds", "0")
    base = time.monotonic() - t0
    t0 = time.monotonic()
    eq(c.receive(url, "--wait-time-seconds", "2"), [], "long poll on an empty queue")
    waited = time.monotonic() - t0 - base
    check(waited >= 1.5, f"an empty 2 s long poll returned after {waited:.2f}s (+{base:.2f}s start-up)")
    # A send from another process while the poll waits.
    t0 = time.monotonic()
    poll = cli.popen("receive-message", "--queue-url", url, "--wait-time-seconds", "10")
    time.sleep(base + 0.5)
    cli("send-message", "--queue-url", url, "--message-body", "wake up")
    got = cli.finish(poll).get("Messages", [])
    dt = time.monotonic() - t0
    eq([m["Body"] for m in got], ["wake up"], "long poll result")
    check(dt < 3 * base + 3.0, f"long poll of 10 s did not return soon after the send: {dt:.2f}s")


def s_fifo_order_group_lock_dedup(c):
    cli = c.cli
    url = c.create("fifo", fifo=True)
    seqs = []
    for body in ("m1", "m2", "m3"):
        r = cli("send-message", "--queue-url", url, "--message-body", body, "--message-group-id", "g1", "--message-deduplication-id", f"d-{body}")
        seqs.append(int(r["SequenceNumber"]))
    eq(seqs, sorted(set(seqs)), "SequenceNumbers increase")
    cli("send-message", "--queue-url", url, "--message-body", "dup", "--message-group-id", "g1", "--message-deduplication-id", "d-m1")
    first = c.receive(url, "--visibility-timeout", "30", "--attribute-names", "All")
    eq([m["Body"] for m in first], ["m1"], "head of the group")
    eq(first[0]["Attributes"].get("MessageGroupId"), "g1", "MessageGroupId")
    eq(c.receive(url, "--max-number-of-messages", "10"), [], "group locked while m1 is in flight")
    cli("delete-message", "--queue-url", url, "--receipt-handle", first[0]["ReceiptHandle"])
    order = []
    for _ in range(4):
        got = c.receive(url, "--max-number-of-messages", "10", "--visibility-timeout", "30")
        if not got:
            break
        order += [m["Body"] for m in got]
        for m in got:
            cli("delete-message", "--queue-url", url, "--receipt-handle", m["ReceiptHandle"])
    eq(order, ["m2", "m3"], "rest of the group in order, duplicate dropped")


def s_dead_letter_and_move_task(c):
    cli = c.cli
    dlq = c.create("dlq")
    dlq_arn = c.attrs(dlq, "QueueArn")["QueueArn"]
    src = c.create("src", attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})})
    src_arn = c.attrs(src, "QueueArn")["QueueArn"]
    cli("send-message", "--queue-url", src, "--message-body", "poison")
    eq(len(c.receive(src, "--visibility-timeout", "0")), 1, "first receive")
    eq(c.receive(src, "--visibility-timeout", "0"), [], "second receive (moved to the DLQ)")
    dead = c.receive(dlq, "--visibility-timeout", "0", "--attribute-names", "All")
    eq([m["Body"] for m in dead], ["poison"], "DLQ content")
    eq(dead[0]["Attributes"].get("DeadLetterQueueSourceArn"), src_arn, "DeadLetterQueueSourceArn")
    eq(cli("list-dead-letter-source-queues", "--queue-url", dlq).get("queueUrls"), [src], "list-dead-letter-source-queues")
    check(cli("start-message-move-task", "--source-arn", dlq_arn).get("TaskHandle"), "no TaskHandle")
    deadline = time.monotonic() + 6
    task = None
    while time.monotonic() < deadline:
        res = cli("list-message-move-tasks", "--source-arn", dlq_arn).get("Results", [])
        task = res[0] if res else None
        if task and task.get("Status") == "COMPLETED":
            break
        time.sleep(0.2)
    check(task and task.get("Status") == "COMPLETED", f"move task not COMPLETED: {task}")
    eq(task.get("ApproximateNumberOfMessagesMoved"), 1, "ApproximateNumberOfMessagesMoved")
    eq([m["Body"] for m in c.receive(src)], ["poison"], "message back in the source")


def s_tags(c):
    cli = c.cli
    url = c.create("tags", tags={"team": "core"})
    eq(cli("list-queue-tags", "--queue-url", url).get("Tags"), {"team": "core"}, "tags from create-queue")
    cli("tag-queue", "--queue-url", url, "--tags", "env=prod,team=edge")
    eq(cli("list-queue-tags", "--queue-url", url).get("Tags"), {"team": "edge", "env": "prod"}, "after tag-queue")
    cli("untag-queue", "--queue-url", url, "--tag-keys", "team")
    eq(cli("list-queue-tags", "--queue-url", url).get("Tags"), {"env": "prod"}, "after untag-queue")


def s_errors_typed(c):
    cli = c.cli
    cli.error("AWS.SimpleQueueService.NonExistentQueue", "get-queue-url", "--queue-name", c.name("missing"))
    cli.error("AWS.SimpleQueueService.NonExistentQueue", "send-message", "--queue-url",
              cli.endpoint + "/000000000000/" + c.name("missing"), "--message-body", "x")
    url = c.create("errs")
    cli.error("ReceiptHandleIsInvalid", "delete-message", "--queue-url", url, "--receipt-handle", "garbage")
    cli.error("AWS.SimpleQueueService.EmptyBatchRequest", "send-message-batch", "--queue-url", url, "--entries", "[]")
    cli.error("InvalidAttributeName", "get-queue-attributes", "--queue-url", url, "--attribute-names", "Foobar")


FUNCS = {n: globals()["s_" + n] for n in SCENARIOS}


def cli_version(aws, env):
    out = subprocess.run([aws, "--version"], env=env, capture_output=True, text=True)
    text = (out.stdout + out.stderr).strip()
    m = re.search(r"aws-cli/(\S+)", text)
    b = re.search(r"botocore/(\S+)", text)
    return (m.group(1) if m else "?"), (b.group(1) if b else "?")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--aws", required=True)
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--expect-protocol", default="json", choices=["json", "query"])
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    cli = Cli(args.aws, args.endpoint)
    version, botocore_version = cli_version(args.aws, cli.env)
    only = [s for s in args.only.split(",") if s]
    results = {}
    for name in SCENARIOS:
        if only and name not in only:
            continue
        ctx = Ctx(cli, uuid.uuid4().hex[:8])
        mark = len(cli.wire)
        t0 = time.monotonic()
        try:
            FUNCS[name](ctx)
            status, detail = "pass", ""
        except Fail as e:
            status, detail = "fail", str(e)
        except CliError as e:
            status, detail = "fail", f"unexpected error {e}"
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)
            where = next((f"line {f.lineno}" for f in reversed(tb) if f.filename == __file__), "")
            status, detail = "fail", f"{type(e).__name__} {where}: {e}"
        wire = cli.wire[mark:]
        wrong = sorted({f"{op}={p}" for op, p in wire if p != args.expect_protocol})
        if status == "pass" and wrong:
            status, detail = "fail", f"requests not on the {args.expect_protocol} wire: {', '.join(wrong)}"
        if status == "pass" and not wire:
            status, detail = "fail", "no request observed"
        if status == "pass":
            detail = f"{len(wire)} {args.expect_protocol} requests ({', '.join(sorted({op for op, _ in wire}))})"
        for url in ctx.cleanup:
            try:
                cli("delete-queue", "--queue-url", url)
            except Exception:
                pass
        print(f"  {name:34s} {status.upper():5s} {time.monotonic() - t0:5.1f}s  {'' if status == 'pass' else detail}", flush=True)
        results[name] = {"status": status, "detail": detail}
    observed = sorted({p for _, p in cli.wire})
    out = {
        "client": "aws-cli",
        "version": version,
        "protocol": observed[0] if len(observed) == 1 else args.expect_protocol,
        "results": results,
        "extra": {"botocore": botocore_version + " (vendored as awscli.botocore)",
                  "wire_protocols_observed": observed, "requests": len(cli.wire)},
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)
        f.write("\n")
    failed = [n for n, r in results.items() if r["status"] == "fail"]
    print(f"aws-cli {version} (botocore {botocore_version}, {out['protocol']}): {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
