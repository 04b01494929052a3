#!/usr/bin/env python3
"""boto3 SNS compatibility scenarios (the `sns` client, AWS Query protocol).

Topics are created and published to with boto3's `sns` client; what they
deliver is read back from SQS queues with boto3's `sqs` client, both against
the same fresh retsu. Every SNS request is inspected on the wire (botocore's
before-send event: a form body starting `Action=<Op>`), and every SNS answer
by its Content-Type (text/xml); a scenario whose SNS traffic was not all on
the query wire fails.

Usage:
  sns_scenarios.py --endpoint http://127.0.0.1:PORT --out results/boto3-json.sns.json
                   [--only NAME[,NAME...]]

The results JSON is the shared format of compat/run.sh with "service": "sns":
  {"client", "version", "protocol": "query", "service": "sns",
   "results": {name: {"status", "detail"}}, "extra": {...}}
"""

import argparse
import json
import os
import sys
import time
import traceback
import uuid

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

from checks import Fail, check, eq

SNS_SCENARIOS = [
    "sns_topic_lifecycle",
    "sns_fanout_envelope",
    "sns_raw_and_filter",
    "sns_fifo",
    "sns_errors",
]

ACCOUNT = "000000000000"
REGION = "us-east-1"


class SnsSpy:
    """Classifies every SNS request (query: `Action=`) and answer (text/xml)."""

    def __init__(self):
        self.seen = []
        self.answers = []

    def __call__(self, request, **kwargs):
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        headers = {k.lower(): v for k, v in request.headers.items()}
        if headers.get("x-amz-target"):
            self.seen.append(("?", "json"))
        elif body.startswith(b"Action=") or b"&Action=" in body:
            form = dict(p.split(b"=", 1) for p in body.split(b"&") if b"=" in p)
            self.seen.append((form.get(b"Action", b"?").decode(), "query"))
        else:
            self.seen.append(("?", "unknown"))
        return None

    def on_response(self, response_dict=None, **kwargs):
        if not response_dict:
            return
        headers = {k.lower(): v for k, v in (response_dict.get("headers") or {}).items()}
        ctype = headers.get("content-type", "")
        self.answers.append("query" if ctype.startswith(("text/xml", "application/xml")) else f"content-type {ctype!r}")


class Ctx:
    def __init__(self, sns, sqs, run_id):
        self.sns = sns
        self.sqs = sqs
        self.run_id = run_id
        self._n = 0
        self.queues = []
        self.topics = []

    def name(self, stem, fifo=False):
        self._n += 1
        n = f"py-{stem}-{self.run_id}-{self._n}"
        return n + ".fifo" if fifo else n

    def queue(self, stem, fifo=False):
        """A queue and its ARN (as SNS's Subscribe wants it)."""
        name = self.name(stem, fifo)
        attrs = {"FifoQueue": "true"} if fifo else {}
        url = self.sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
        self.queues.append(url)
        return url, f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"

    def topic(self, stem, fifo=False, attributes=None):
        attrs = dict(attributes or {})
        if fifo:
            attrs["FifoTopic"] = "true"
        arn = self.sns.create_topic(Name=self.name(stem, fifo), Attributes=attrs)["TopicArn"]
        self.topics.append(arn)
        return arn

    def subscribe(self, topic_arn, queue_arn, **attributes):
        out = self.sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=queue_arn,
                                 Attributes={k: v for k, v in attributes.items()}, ReturnSubscriptionArn=True)
        arn = out["SubscriptionArn"]
        check(arn.startswith(topic_arn + ":"), f"SubscriptionArn {arn!r} is not under {topic_arn}")
        return arn

    def drain(self, url, want, seconds=5.0, **kw):
        """Receives (and deletes) until `want` messages arrived or `seconds` passed."""
        got = []
        deadline = time.monotonic() + seconds
        while len(got) < want and time.monotonic() < deadline:
            r = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1, **kw)
            for m in r.get("Messages", []):
                got.append(m)
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return got

    def quiet(self, url, seconds=1):
        """Nothing more arrives in `seconds`."""
        r = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=seconds)
        return r.get("Messages", [])


def expect_error(c, fn, exc_name, code, what):
    """fn must raise the modelled exception exc_name with error code `code`; returns its message."""
    try:
        fn()
    except ClientError as e:
        err = e.response.get("Error", {})
        eq(err.get("Code"), code, f"{what}: error code")
        modelled = getattr(c.sns.exceptions, exc_name)
        check(isinstance(e, modelled), f"{what}: expected {exc_name}, got {type(e).__name__}")
        return err.get("Message", "")
    raise Fail(f"{what}: expected {code}, the call succeeded")


# ---------------------------------------------------------------- scenarios


def s_topic_lifecycle(c):
    name = c.name("life")
    arn = c.sns.create_topic(Name=name)["TopicArn"]
    c.topics.append(arn)
    eq(arn, f"arn:aws:sns:{REGION}:{ACCOUNT}:{name}", "TopicArn")
    eq(c.sns.create_topic(Name=name)["TopicArn"], arn, "CreateTopic again")
    c.sns.set_topic_attributes(TopicArn=arn, AttributeName="DisplayName", AttributeValue="Life cycle")
    attrs = c.sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    eq(attrs.get("DisplayName"), "Life cycle", "DisplayName")
    eq(attrs.get("TopicArn"), arn, "TopicArn attribute")
    listed = []
    for page in c.sns.get_paginator("list_topics").paginate():
        listed += [t["TopicArn"] for t in page.get("Topics", [])]
    check(arn in listed, f"ListTopics does not list {arn}")
    c.sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "team", "Value": "a"}, {"Key": "env", "Value": "test"}])
    tags = c.sns.list_tags_for_resource(ResourceArn=arn)["Tags"]
    eq(sorted((t["Key"], t["Value"]) for t in tags), [("env", "test"), ("team", "a")], "ListTagsForResource")
    c.sns.untag_resource(ResourceArn=arn, TagKeys=["env"])
    eq(c.sns.list_tags_for_resource(ResourceArn=arn)["Tags"], [{"Key": "team", "Value": "a"}], "tags after UntagResource")
    c.sns.delete_topic(TopicArn=arn)
    msg = expect_error(c, lambda: c.sns.get_topic_attributes(TopicArn=arn), "NotFoundException", "NotFound",
                       "GetTopicAttributes after DeleteTopic")
    check("Topic does not exist" in msg, f"NotFound message {msg!r}")
    return f"NotFoundException: {msg}"


def envelope_of(m, what):
    try:
        return json.loads(m["Body"])
    except ValueError:
        raise Fail(f"{what}: the body is not a JSON envelope: {m['Body'][:200]!r}")


def s_fanout_envelope(c):
    arn = c.topic("fan")
    queues = [c.queue("fan-a"), c.queue("fan-b")]
    for _, qarn in queues:
        c.subscribe(arn, qarn)
    text = 'hello "fan-out"\nsecond line'
    mid = c.sns.publish(TopicArn=arn, Message=text, Subject="Greeting",
                        MessageAttributes={"colour": {"DataType": "String", "StringValue": "blue"}})["MessageId"]
    for i, (url, _) in enumerate(queues):
        got = c.drain(url, 1)
        eq(len(got), 1, f"messages in queue {i + 1}")
        env = envelope_of(got[0], f"queue {i + 1}")
        eq(env.get("Type"), "Notification", "Type")
        eq(env.get("MessageId"), mid, "MessageId (Publish's)")
        eq(env.get("TopicArn"), arn, "TopicArn")
        eq(env.get("Subject"), "Greeting", "Subject")
        eq(env.get("Message"), text, "Message")
        eq(env.get("MessageAttributes"), {"colour": {"Type": "String", "Value": "blue"}}, "MessageAttributes")
        eq(env.get("SignatureVersion"), "1", "SignatureVersion")
        for k in ("Timestamp", "Signature", "SigningCertURL", "UnsubscribeURL"):
            check(isinstance(env.get(k), str) and env[k], f"envelope has no {k}")
        check("Action=Unsubscribe" in env["UnsubscribeURL"], f"UnsubscribeURL {env['UnsubscribeURL']!r}")
    return f"both queues got envelope {mid}"


def s_raw_and_filter(c):
    arn = c.topic("raw")
    raw_url, raw_arn = c.queue("raw")
    blue_url, blue_arn = c.queue("blue")
    c.subscribe(arn, raw_arn, RawMessageDelivery="true")
    c.subscribe(arn, blue_arn, FilterPolicy=json.dumps({"colour": ["blue"]}))
    for colour in ("red", "blue"):
        c.sns.publish(TopicArn=arn, Message=f"a {colour} one",
                      MessageAttributes={"colour": {"DataType": "String", "StringValue": colour}})
    raw = c.drain(raw_url, 2, MessageAttributeNames=["All"])
    eq(sorted(m["Body"] for m in raw), ["a blue one", "a red one"], "raw bodies")
    for m in raw:
        colour = m["Body"].split(" ")[1]
        eq(m.get("MessageAttributes"), {"colour": {"DataType": "String", "StringValue": colour}},
           f"SQS message attributes of {m['Body']!r}")
    blue = c.drain(blue_url, 1)
    eq(len(blue), 1, "messages through the filter")
    eq(envelope_of(blue[0], "filtered")["Message"], "a blue one", "filtered message")
    eq(c.quiet(blue_url), [], "a second message through the filter")
    return "raw body + SQS attribute; filter let only blue through"


def s_fifo(c):
    arn = c.topic("fifo", fifo=True, attributes={"ContentBasedDeduplication": "true"})
    url, qarn = c.queue("fifo", fifo=True)
    c.subscribe(arn, qarn, RawMessageDelivery="true")
    seqs = []
    for i in range(3):
        r = c.sns.publish(TopicArn=arn, Message=f"m{i}", MessageGroupId="g")
        check(r.get("SequenceNumber"), f"Publish m{i} returned no SequenceNumber")
        seqs.append(r["SequenceNumber"])
    check(int(seqs[0]) < int(seqs[1]) < int(seqs[2]), f"SequenceNumbers not increasing: {seqs}")
    again = c.sns.publish(TopicArn=arn, Message="m0", MessageGroupId="g")
    eq(again.get("SequenceNumber"), seqs[0], "SequenceNumber of the duplicate publish")
    got = c.drain(url, 4, seconds=4)
    eq([m["Body"] for m in got], ["m0", "m1", "m2"], "FIFO queue contents, in order")
    return f"3 delivered in order; duplicate answered sequence {seqs[0]}"


def s_errors(c):
    missing = f"arn:aws:sns:{REGION}:{ACCOUNT}:{c.name('missing')}"
    m1 = expect_error(c, lambda: c.sns.publish(TopicArn=missing, Message="x"), "NotFoundException", "NotFound",
                      "Publish to a missing topic")
    check("Topic does not exist" in m1, f"NotFound message {m1!r}")
    m2 = expect_error(c, lambda: c.sns.create_topic(Name="bad name"), "InvalidParameterException",
                      "InvalidParameter", "CreateTopic 'bad name'")
    check(m2.startswith("Invalid parameter:"), f"InvalidParameter message {m2!r}")
    return f"NotFoundException: {m1}; InvalidParameterException: {m2}"


FUNCS = {
    "sns_topic_lifecycle": s_topic_lifecycle,
    "sns_fanout_envelope": s_fanout_envelope,
    "sns_raw_and_filter": s_raw_and_filter,
    "sns_fifo": s_fifo,
    "sns_errors": s_errors,
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)

    cfg = Config(region_name=REGION, connect_timeout=5, read_timeout=30,
                 retries={"total_max_attempts": 1, "mode": "standard"})
    creds = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}
    sns = boto3.client("sns", endpoint_url=args.endpoint, config=cfg, **creds)
    sqs = boto3.client("sqs", endpoint_url=args.endpoint, config=cfg, **creds)
    spy = SnsSpy()
    sns.meta.events.register("before-send.sns", spy)
    sns.meta.events.register("response-received.sns", spy.on_response)

    only = [s for s in args.only.split(",") if s]
    results = {}
    for name in SNS_SCENARIOS:
        if only and name not in only:
            continue
        c = Ctx(sns, sqs, uuid.uuid4().hex[:8])
        mark = len(spy.seen), len(spy.answers)
        t0 = time.monotonic()
        try:
            detail = FUNCS[name](c) or ""
            status = "pass"
        except Fail as e:
            status, detail = "fail", str(e)
        except ClientError as e:
            err = e.response.get("Error", {})
            status = "fail"
            detail = (f"unexpected {err.get('Code')} from {e.operation_name} "
                      f"(HTTP {e.response.get('ResponseMetadata', {}).get('HTTPStatusCode')}): {err.get('Message')}")
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)
            where = next((f"line {f.lineno}" for f in reversed(tb) if f.filename == __file__), "")
            status, detail = "fail", f"{type(e).__name__} {where}: {e}"
        wire, answers = spy.seen[mark[0]:], spy.answers[mark[1]:]
        wrong = sorted({f"{op}={p}" for op, p in wire if p != "query"} | {a for a in answers if a != "query"})
        if status == "pass" and wrong:
            status, detail = "fail", f"SNS traffic not on the query wire: {', '.join(wrong)}"
        if status == "pass" and not wire:
            status, detail = "fail", "no SNS request observed"
        if status == "pass":
            detail = f"{detail} ({len(wire)} query requests: {', '.join(sorted({op for op, _ in wire}))})"
        for url in c.queues:
            try:
                sqs.delete_queue(QueueUrl=url)
            except Exception:
                pass
        for arn in c.topics:
            try:
                sns.delete_topic(TopicArn=arn)
            except Exception:
                pass
        print(f"  {name:34s} {status.upper():5s} {time.monotonic() - t0:5.1f}s  {'' if status == 'pass' else detail}",
              flush=True)
        results[name] = {"status": status, "detail": detail}

    observed = sorted({p for _, p in spy.seen})
    out = {
        "client": "boto3",
        "version": boto3.__version__,
        "protocol": observed[0] if len(observed) == 1 else "query",
        "service": "sns",
        "results": results,
        "extra": {
            "botocore": botocore.__version__,
            "model_protocol": sns.meta.service_model.metadata.get("protocol"),
            "wire_protocols_observed": observed,
            "response_protocols_observed": sorted(set(spy.answers)),
            "requests": len(spy.seen),
        },
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)
        f.write("\n")
    failed = [n for n, r in results.items() if r["status"] == "fail"]
    print(f"boto3 {boto3.__version__} sns ({out['protocol']}): {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
