#!/usr/bin/env python3
"""boto3 compatibility scenarios, shared by both Python wires.

The same file runs in compat/.venv-boto3-current (botocore speaking AWS JSON
1.0) and compat/.venv-boto3-query (botocore 1.31.80 speaking AWS Query), so
every scenario is exercised on both protocols.

Usage:
  scenarios.py --endpoint http://127.0.0.1:PORT --out results/boto3-json.json
               [--expect-protocol json|query] [--only NAME[,NAME...]]

Every scenario runs in isolation (its own queues, its own try/except); a
failure is recorded with a detail message and the suite carries on. Every
request is inspected on the wire (botocore's before-send event): a JSON
request carries `X-Amz-Target: AmazonSQS.<Op>`, a query request a form body
starting `Action=<Op>`. A scenario whose requests were not all on the
expected wire fails. The results JSON is the format shared with the Node
suites:
  {"client", "version", "protocol", "results": {name: {"status", "detail"}}}
plus an informational "extra" object.
"""

import argparse
import base64
import json
import os
import sys
import threading
import time
import traceback
import uuid
from urllib.parse import urlparse

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

from checks import TRACE_HEADER, Fail, check, eq, md5_hex, md5_of_attributes

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



# ---------------------------------------------------------------- wire spy


class WireSpy:
    """Classifies every outgoing request as json or query."""

    def __init__(self):
        self.seen = []  # (operation, protocol) of each request sent
        self.answers = []  # protocol of each response received (by Content-Type)

    def __call__(self, request, **kwargs):
        headers = {k.lower(): v for k, v in request.headers.items()}
        target = headers.get("x-amz-target")
        if isinstance(target, bytes):
            target = target.decode()
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        if target and target.startswith("AmazonSQS."):
            self.seen.append((target.split(".", 1)[1], "json"))
        elif body.startswith(b"Action=") or b"&Action=" in body or "Action=" in (request.url or ""):
            op = body.split(b"&", 1)[0].split(b"=", 1)[-1].decode() if body else "?"
            self.seen.append((op, "query"))
        else:
            self.seen.append(("?", "unknown"))
        return None  # let the request go

    def on_response(self, response_dict=None, **kwargs):
        """Classifies the server's answer by its Content-Type."""
        if not response_dict:
            return
        headers = {k.lower(): v for k, v in (response_dict.get("headers") or {}).items()}
        ctype = headers.get("content-type", "")
        if ctype.startswith("application/x-amz-json"):
            self.answers.append("json")
        elif ctype.startswith("text/xml") or ctype.startswith("application/xml"):
            self.answers.append("query")
        else:
            self.answers.append(f"content-type {ctype!r}")

    def mark(self):
        return len(self.seen), len(self.answers)

    def since(self, mark):
        return self.seen[mark[0]:], self.answers[mark[1]:]


# ---------------------------------------------------------------- context


class Ctx:
    def __init__(self, endpoint, client, spy, run_id):
        self.endpoint = endpoint.rstrip("/")
        self.sqs = client
        self.spy = spy
        self.run_id = run_id
        self._n = 0
        self.cleanup = []
        self.has_msg_sys_attr_names = "MessageSystemAttributeNames" in (
            client.meta.service_model.operation_model("ReceiveMessage").input_shape.members
        )

    def name(self, stem, fifo=False):
        self._n += 1
        n = f"{stem}-{self.run_id}-{self._n}"
        return n + ".fifo" if fifo else n

    def create(self, stem, fifo=False, attributes=None, tags=None):
        attrs = dict(attributes or {})
        if fifo:
            attrs["FifoQueue"] = "true"
        kw = {"QueueName": self.name(stem, fifo)}
        if attrs:
            kw["Attributes"] = attrs
        if tags:
            kw["tags"] = tags
        url = self.sqs.create_queue(**kw)["QueueUrl"]
        self.cleanup.append(url)
        return url

    def arn(self, url):
        return self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    def attr(self, url, name):
        return self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[name])["Attributes"].get(name)

    def receive(self, url, system=("All",), **kw):
        """ReceiveMessage asking for system attributes the way this botocore can."""
        if system:
            if self.has_msg_sys_attr_names:
                kw["MessageSystemAttributeNames"] = list(system)
            else:
                kw["AttributeNames"] = list(system)
        return self.sqs.receive_message(QueueUrl=url, **kw).get("Messages", [])

    def expect_error(self, fn, exc_name, code, what):
        """Runs fn, which must raise client.exceptions.<exc_name> with Error.Code == code."""
        exc_cls = getattr(self.sqs.exceptions, exc_name)
        try:
            fn()
        except exc_cls as e:
            got = e.response.get("Error", {}).get("Code")
            if code is not None and got != code:
                raise Fail(f"{what}: raised {exc_name} but Error.Code is {got!r}, expected {code!r}")
            return e
        except ClientError as e:
            err = e.response.get("Error", {})
            raise Fail(
                f"{what}: expected client.exceptions.{exc_name}, got {type(e).__name__} "
                f"(Error={err}, HTTP {e.response.get('ResponseMetadata', {}).get('HTTPStatusCode')})"
            )
        raise Fail(f"{what}: expected client.exceptions.{exc_name}, call succeeded")


# ---------------------------------------------------------------- scenarios


def s_queue_lifecycle(c):
    sqs = c.sqs
    name = c.name("life")
    url = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "5", "DelaySeconds": "0"})["QueueUrl"]
    c.cleanup.append(url)
    ep, qu = urlparse(c.endpoint), urlparse(url)
    eq(f"{qu.scheme}://{qu.netloc}", f"{ep.scheme}://{ep.netloc}", "QueueUrl origin (must lead back to the server)")
    check(qu.path.endswith("/" + name), f"QueueUrl path {qu.path!r} does not end with the queue name")
    eq(sqs.get_queue_url(QueueName=name)["QueueUrl"], url, "GetQueueUrl")
    # Idempotent create: same attributes -> same URL; no attributes -> same URL.
    eq(sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "5"})["QueueUrl"], url, "CreateQueue again, same attributes")
    eq(sqs.create_queue(QueueName=name)["QueueUrl"], url, "CreateQueue again, no attributes")
    c.expect_error(
        lambda: sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "6"}),
        "QueueNameExists", "QueueAlreadyExists", "CreateQueue with a different attribute value",
    )
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    eq(attrs.get("VisibilityTimeout"), "5", "VisibilityTimeout")
    eq(attrs.get("MaximumMessageSize"), "1048576", "default MaximumMessageSize")
    eq(attrs.get("MessageRetentionPeriod"), "345600", "default MessageRetentionPeriod")
    check(attrs.get("QueueArn", "").startswith("arn:aws:sqs:") and attrs["QueueArn"].endswith(":" + name), f"QueueArn {attrs.get('QueueArn')!r}")
    for k in ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed", "CreatedTimestamp", "LastModifiedTimestamp", "ReceiveMessageWaitTimeSeconds"):
        check(k in attrs, f"GetQueueAttributes(All) lacks {k}: {sorted(attrs)}")
    check("FifoQueue" not in attrs, "a standard queue lists FifoQueue")
    # Only the requested names come back.
    only = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["DelaySeconds"])["Attributes"]
    eq(only, {"DelaySeconds": "0"}, "GetQueueAttributes([DelaySeconds])")
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "10", "ReceiveMessageWaitTimeSeconds": "1"})
    eq(c.attr(url, "VisibilityTimeout"), "10", "VisibilityTimeout after SetQueueAttributes")
    eq(c.attr(url, "ReceiveMessageWaitTimeSeconds"), "1", "ReceiveMessageWaitTimeSeconds after SetQueueAttributes")
    sqs.send_message(QueueUrl=url, MessageBody="to be purged")
    eq(c.attr(url, "ApproximateNumberOfMessages"), "1", "ApproximateNumberOfMessages after one send")
    sqs.purge_queue(QueueUrl=url)
    eq(c.attr(url, "ApproximateNumberOfMessages"), "0", "ApproximateNumberOfMessages after PurgeQueue")
    sqs.delete_queue(QueueUrl=url)
    c.cleanup.remove(url)
    c.expect_error(lambda: sqs.get_queue_url(QueueName=name), "QueueDoesNotExist",
                   "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl after DeleteQueue")
    urls = sqs.list_queues(QueueNamePrefix=name).get("QueueUrls", [])
    check(url not in urls, "deleted queue still listed")
    # FIFO queue attributes.
    furl = c.create("life", fifo=True, attributes={"ContentBasedDeduplication": "true"})
    fattrs = sqs.get_queue_attributes(QueueUrl=furl, AttributeNames=["All"])["Attributes"]
    eq(fattrs.get("FifoQueue"), "true", "FIFO queue FifoQueue")
    eq(fattrs.get("ContentBasedDeduplication"), "true", "FIFO queue ContentBasedDeduplication")


def s_list_queues_pagination(c):
    sqs = c.sqs
    prefix = f"lqp-{c.run_id}-"
    made = set()
    for i in range(5):
        url = sqs.create_queue(QueueName=f"{prefix}{i}")["QueueUrl"]
        c.cleanup.append(url)
        made.add(url)
    other = sqs.create_queue(QueueName=f"other-{c.run_id}-lqp")["QueueUrl"]
    c.cleanup.append(other)

    resp = sqs.list_queues(QueueNamePrefix=prefix)
    eq(set(resp.get("QueueUrls", [])), made, "ListQueues(prefix)")
    check("NextToken" not in resp, "ListQueues without MaxResults returned a NextToken")
    resp = sqs.list_queues(QueueNamePrefix=f"nomatch-{c.run_id}")
    check("QueueUrls" not in resp or resp["QueueUrls"] == [], f"ListQueues(no match) returned {resp.get('QueueUrls')}")

    # Manual pagination, MaxResults=2 -> pages of 2, 2, 1.
    seen, pages, token = [], [], None
    for _ in range(10):
        kw = {"QueueNamePrefix": prefix, "MaxResults": 2}
        if token:
            kw["NextToken"] = token
        resp = sqs.list_queues(**kw)
        page = resp.get("QueueUrls", [])
        check(len(page) <= 2, f"page of {len(page)} with MaxResults=2")
        pages.append(len(page))
        seen += page
        token = resp.get("NextToken")
        if not token:
            break
    eq(sorted(seen), sorted(made), f"union of pages {pages}")
    eq(len(seen), len(set(seen)), "duplicates across pages")
    check(len(pages) >= 3, f"expected 3 pages of MaxResults=2 for 5 queues, got {pages}")

    # boto3's paginator drives the same NextToken loop.
    pag = sqs.get_paginator("list_queues")
    got = []
    for page in pag.paginate(QueueNamePrefix=prefix, PaginationConfig={"PageSize": 2}):
        got += page.get("QueueUrls", [])
    eq(sorted(got), sorted(made), "boto3 paginator result")


def s_send_receive_delete_attributes(c):
    sqs = c.sqs
    url = c.create("srd")
    body = "héllo wörld ✓ \U0001F600 <xml> & \"quotes\""
    attrs = {
        "s": {"DataType": "String", "StringValue": "hello"},
        "n": {"DataType": "Number", "StringValue": "12345.678"},
        "b": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe\xff binary"},
        "custom": {"DataType": "String.json", "StringValue": '{"k":1}'},
    }
    sys_attrs = {"AWSTraceHeader": {"DataType": "String", "StringValue": TRACE_HEADER}}
    resp = sqs.send_message(QueueUrl=url, MessageBody=body, MessageAttributes=attrs, MessageSystemAttributes=sys_attrs)
    check(resp.get("MessageId"), "SendMessage returned no MessageId")
    eq(resp.get("MD5OfMessageBody"), md5_hex(body.encode()), "MD5OfMessageBody")
    eq(resp.get("MD5OfMessageAttributes"), md5_of_attributes(attrs), "MD5OfMessageAttributes")
    eq(resp.get("MD5OfMessageSystemAttributes"), md5_of_attributes(sys_attrs), "MD5OfMessageSystemAttributes")
    check("SequenceNumber" not in resp, "standard queue SendMessage returned a SequenceNumber")
    # Without attributes: no attribute MD5s.
    plain = sqs.send_message(QueueUrl=url, MessageBody="plain")
    check("MD5OfMessageAttributes" not in plain, "MD5OfMessageAttributes present without attributes")
    check("MD5OfMessageSystemAttributes" not in plain, "MD5OfMessageSystemAttributes present without system attributes")

    msgs = c.receive(url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], VisibilityTimeout=30)
    by_id = {m["MessageId"]: m for m in msgs}
    check(resp["MessageId"] in by_id and plain["MessageId"] in by_id, f"sent messages not received (got {len(msgs)} messages)")
    p = by_id[plain["MessageId"]]
    check("MessageAttributes" not in p and "MD5OfMessageAttributes" not in p, f"message without attributes came back with {p.get('MessageAttributes')}")
    m = by_id[resp["MessageId"]]
    eq(m["Body"], body, "Body round trip")
    eq(m.get("MD5OfBody"), md5_hex(body.encode()), "MD5OfBody")
    got_attrs = m.get("MessageAttributes", {})
    eq(sorted(got_attrs), sorted(attrs), "received MessageAttributes names")
    for k, v in attrs.items():
        g = got_attrs[k]
        eq(g.get("DataType"), v["DataType"], f"attribute {k} DataType")
        if "StringValue" in v:
            eq(g.get("StringValue"), v["StringValue"], f"attribute {k} StringValue")
        else:
            eq(g.get("BinaryValue"), v["BinaryValue"], f"attribute {k} BinaryValue")
    eq(m.get("MD5OfMessageAttributes"), md5_of_attributes(attrs), "received MD5OfMessageAttributes")
    sa = m.get("Attributes", {})
    eq(sa.get("AWSTraceHeader"), TRACE_HEADER, "AWSTraceHeader system attribute")
    eq(sa.get("ApproximateReceiveCount"), "1", "ApproximateReceiveCount")
    for k in ("SenderId", "SentTimestamp", "ApproximateFirstReceiveTimestamp"):
        check(k in sa, f"system attribute {k} missing: {sorted(sa)}")
    check(sa["SentTimestamp"].isdigit() and len(sa["SentTimestamp"]) == 13, f"SentTimestamp not epoch ms: {sa['SentTimestamp']}")

    # Attribute name filtering: an exact name and a prefix pattern.
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    again = [x for x in c.receive(url, system=("SentTimestamp",), MaxNumberOfMessages=10, MessageAttributeNames=["s", "cu.*"], VisibilityTimeout=30) if x["MessageId"] == resp["MessageId"]]
    check(again, "message not received again after ChangeMessageVisibility 0")
    m2 = again[0]
    eq(sorted(m2.get("MessageAttributes", {})), ["custom", "s"], "MessageAttributeNames=[s, cu.*] selection")
    sub = {k: attrs[k] for k in ("s", "custom")}
    eq(m2.get("MD5OfMessageAttributes"), md5_of_attributes(sub), "MD5OfMessageAttributes over the returned subset")
    eq(sorted(m2.get("Attributes", {})), ["SentTimestamp"], "system attribute selection [SentTimestamp]")
    if c.has_msg_sys_attr_names:
        # The deprecated AttributeNames still works next to MessageSystemAttributeNames (spec: union).
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m2["ReceiptHandle"], VisibilityTimeout=0)
        r = sqs.receive_message(QueueUrl=url, AttributeNames=["ApproximateReceiveCount"],
                                MessageSystemAttributeNames=["AWSTraceHeader"], VisibilityTimeout=30).get("Messages", [])
        check(r, "message not received with AttributeNames + MessageSystemAttributeNames")
        eq(sorted(r[0].get("Attributes", {})), ["AWSTraceHeader", "ApproximateReceiveCount"], "union of AttributeNames and MessageSystemAttributeNames")
        m2 = r[0]

    sqs.delete_message(QueueUrl=url, ReceiptHandle=m2["ReceiptHandle"])
    # Deleting twice with a valid handle is fine (spec: succeeds repeatedly).
    sqs.delete_message(QueueUrl=url, ReceiptHandle=m2["ReceiptHandle"])
    sqs.delete_message(QueueUrl=url, ReceiptHandle=p["ReceiptHandle"])
    eq(c.receive(url, MaxNumberOfMessages=10), [], "queue empty after deletes")
    eq(c.attr(url, "ApproximateNumberOfMessagesNotVisible"), "0", "nothing in flight after deletes")


def s_batches_partial_failure(c):
    sqs = c.sqs
    url = c.create("batch", attributes={"MaximumMessageSize": "1024"})
    eattrs = {"a": {"DataType": "String", "StringValue": "x"}}
    entries = [
        {"Id": "ok1", "MessageBody": "one", "MessageAttributes": eattrs},
        {"Id": "bad_chars", "MessageBody": "bad \x00 char"},
        {"Id": "ok2", "MessageBody": "two", "DelaySeconds": 0},
        {"Id": "too_big", "MessageBody": "x" * 1100},
    ]
    resp = sqs.send_message_batch(QueueUrl=url, Entries=entries)
    ok = {e["Id"]: e for e in resp.get("Successful", [])}
    failed = {e["Id"]: e for e in resp.get("Failed", [])}
    eq(sorted(ok), ["ok1", "ok2"], "SendMessageBatch Successful ids")
    eq(sorted(failed), ["bad_chars", "too_big"], "SendMessageBatch Failed ids")
    eq(failed["bad_chars"].get("Code"), "InvalidMessageContents", "Failed code for invalid characters")
    eq(failed["too_big"].get("Code"), "InvalidParameterValue", "Failed code for an entry over MaximumMessageSize")
    for f in failed.values():
        eq(f.get("SenderFault"), True, f"SenderFault of {f['Id']}")
    eq(ok["ok1"].get("MD5OfMessageBody"), md5_hex(b"one"), "batch MD5OfMessageBody")
    eq(ok["ok1"].get("MD5OfMessageAttributes"), md5_of_attributes(eattrs), "batch MD5OfMessageAttributes")
    check("MD5OfMessageAttributes" not in ok["ok2"], "batch entry without attributes has MD5OfMessageAttributes")

    # All-good batch: no Failed entries.
    resp = sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": f"e{i}", "MessageBody": f"m{i}"} for i in range(3)])
    eq(len(resp.get("Successful", [])), 3, "all-good batch Successful")
    eq(resp.get("Failed", []), [], "all-good batch Failed")

    msgs = c.receive(url, system=(), MaxNumberOfMessages=10, VisibilityTimeout=30)
    eq(sorted(m["Body"] for m in msgs), ["m0", "m1", "m2", "one", "two"], "received batch bodies")
    handles = {m["Body"]: m["ReceiptHandle"] for m in msgs}

    cv = sqs.change_message_visibility_batch(QueueUrl=url, Entries=[
        {"Id": "v1", "ReceiptHandle": handles["one"], "VisibilityTimeout": 0},
        {"Id": "vbad", "ReceiptHandle": "garbage", "VisibilityTimeout": 0},
    ])
    eq([e["Id"] for e in cv.get("Successful", [])], ["v1"], "ChangeMessageVisibilityBatch Successful")
    eq([e["Id"] for e in cv.get("Failed", [])], ["vbad"], "ChangeMessageVisibilityBatch Failed")
    eq(cv["Failed"][0].get("Code"), "ReceiptHandleIsInvalid", "ChangeMessageVisibilityBatch Failed code")

    again = c.receive(url, system=(), MaxNumberOfMessages=10, VisibilityTimeout=30)
    eq([m["Body"] for m in again], ["one"], "only the released message is visible again")
    handles["one"] = again[0]["ReceiptHandle"]

    dl = sqs.delete_message_batch(QueueUrl=url, Entries=[
        *({"Id": f"d{i}", "ReceiptHandle": h} for i, h in enumerate(handles.values())),
        {"Id": "dbad", "ReceiptHandle": "garbage"},
    ])
    eq(len(dl.get("Successful", [])), 5, "DeleteMessageBatch Successful count")
    eq([e["Id"] for e in dl.get("Failed", [])], ["dbad"], "DeleteMessageBatch Failed")
    eq(dl["Failed"][0].get("Code"), "ReceiptHandleIsInvalid", "DeleteMessageBatch Failed code")
    eq(dl["Failed"][0].get("SenderFault"), True, "DeleteMessageBatch SenderFault")

    # Whole-request errors.
    c.expect_error(lambda: sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "x", "MessageBody": "a"}, {"Id": "x", "MessageBody": "b"}]),
                   "BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "duplicate batch ids")
    c.expect_error(lambda: sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": f"i{i}", "MessageBody": "a"} for i in range(11)]),
                   "TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "11 batch entries")
    c.expect_error(lambda: sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "bad id!", "MessageBody": "a"}]),
                   "InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId", "invalid batch entry id")
    eq(c.receive(url, MaxNumberOfMessages=10), [], "queue empty at the end")


def s_visibility_change_release(c):
    sqs = c.sqs
    url = c.create("vis", attributes={"VisibilityTimeout": "30"})
    sqs.send_message(QueueUrl=url, MessageBody="v")
    m = c.receive(url)
    eq(len(m), 1, "first receive")
    eq(c.receive(url), [], "receive while in flight")
    eq(c.attr(url, "ApproximateNumberOfMessagesNotVisible"), "1", "in flight count")
    eq(c.attr(url, "ApproximateNumberOfMessages"), "0", "visible count while in flight")
    # Release it.
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m[0]["ReceiptHandle"], VisibilityTimeout=0)
    m2 = c.receive(url)
    eq(len(m2), 1, "receive after ChangeMessageVisibility 0")
    eq(m2[0]["MessageId"], m[0]["MessageId"], "same message")
    eq(m2[0]["Attributes"].get("ApproximateReceiveCount"), "2", "ApproximateReceiveCount after release")
    check(m2[0]["ReceiptHandle"] != m[0]["ReceiptHandle"], "a new receive must issue a new receipt handle")
    # Shorten to 1 s: hidden now, visible after ~1 s.
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m2[0]["ReceiptHandle"], VisibilityTimeout=1)
    eq(c.receive(url), [], "receive right after ChangeMessageVisibility 1")
    time.sleep(1.3)
    m3 = c.receive(url, VisibilityTimeout=1)
    eq(len(m3), 1, "receive after the 1 s visibility expired")
    eq(m3[0]["Attributes"].get("ApproximateReceiveCount"), "3", "ApproximateReceiveCount")
    # Receive-level VisibilityTimeout=1 expires by itself.
    time.sleep(1.3)
    m4 = c.receive(url)
    eq(len(m4), 1, "receive after the receive-level 1 s visibility expired")
    # Extending an in-flight message keeps it hidden.
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m4[0]["ReceiptHandle"], VisibilityTimeout=60)
    eq(c.receive(url), [], "receive after extending visibility")
    sqs.delete_message(QueueUrl=url, ReceiptHandle=m4[0]["ReceiptHandle"])
    eq(c.attr(url, "ApproximateNumberOfMessagesNotVisible"), "0", "in flight count after delete")


def s_delay(c):
    sqs = c.sqs
    qdelay = c.create("delayq", attributes={"DelaySeconds": "1"})
    mdelay = c.create("delaym")
    sqs.send_message(QueueUrl=qdelay, MessageBody="queue-level delay")
    sqs.send_message(QueueUrl=mdelay, MessageBody="message-level delay", DelaySeconds=1)
    sqs.send_message(QueueUrl=mdelay, MessageBody="no delay")
    eq(c.receive(qdelay, MaxNumberOfMessages=10), [], "queue with DelaySeconds=1, immediate receive")
    eq([m["Body"] for m in c.receive(mdelay, MaxNumberOfMessages=10)], ["no delay"], "only the undelayed message")
    eq(c.attr(qdelay, "ApproximateNumberOfMessagesDelayed"), "1", "ApproximateNumberOfMessagesDelayed")
    eq(c.attr(mdelay, "ApproximateNumberOfMessagesDelayed"), "1", "ApproximateNumberOfMessagesDelayed (per-message)")
    time.sleep(1.3)
    eq([m["Body"] for m in c.receive(qdelay, MaxNumberOfMessages=10)], ["queue-level delay"], "after the queue delay")
    eq([m["Body"] for m in c.receive(mdelay, MaxNumberOfMessages=10)], ["message-level delay"], "after the message delay")
    eq(c.attr(qdelay, "ApproximateNumberOfMessagesDelayed"), "0", "ApproximateNumberOfMessagesDelayed after the delay")
    # Batch entries carry their own DelaySeconds too.
    sqs.send_message_batch(QueueUrl=mdelay, Entries=[{"Id": "d", "MessageBody": "batch delayed", "DelaySeconds": 1},
                                                    {"Id": "n", "MessageBody": "batch now"}])
    eq([m["Body"] for m in c.receive(mdelay, MaxNumberOfMessages=10)], ["batch now"], "batch: only the undelayed entry")
    time.sleep(1.3)
    eq([m["Body"] for m in c.receive(mdelay, MaxNumberOfMessages=10)], ["batch delayed"], "batch: delayed entry after 1 s")
    # FIFO rejects a per-message delay (spec §5.2).
    furl = c.create("delayf", fifo=True, attributes={"ContentBasedDeduplication": "true"})
    _expect_code(lambda: sqs.send_message(QueueUrl=furl, MessageBody="x", MessageGroupId="g", DelaySeconds=2),
                 "InvalidParameterValue", "FIFO per-message DelaySeconds=2")


def _expect_code(fn, code, what):
    """For errors without a modelled exception class: checks Error.Code."""
    try:
        fn()
    except ClientError as e:
        got = e.response.get("Error", {}).get("Code")
        eq(got, code, f"{what}: Error.Code")
        return e
    raise Fail(f"{what}: expected error {code}, call succeeded")


def s_long_polling(c):
    sqs = c.sqs
    url = c.create("lp")
    # Empty queue: waits the full WaitTimeSeconds, returns no messages.
    t0 = time.monotonic()
    got = c.receive(url, WaitTimeSeconds=1)
    dt = time.monotonic() - t0
    eq(got, [], "long poll on an empty queue")
    check(0.9 <= dt < 3.0, f"empty long poll of 1 s took {dt:.2f}s")
    # A send from another thread after ~0.5 s wakes the poll early.
    sender = boto3.client("sqs", endpoint_url=c.endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")

    def later():
        time.sleep(0.5)
        sender.send_message(QueueUrl=url, MessageBody="wake up")

    th = threading.Thread(target=later)
    t0 = time.monotonic()
    th.start()
    got = c.receive(url, WaitTimeSeconds=5)
    dt = time.monotonic() - t0
    th.join()
    eq([m["Body"] for m in got], ["wake up"], "long poll result")
    check(0.3 <= dt < 2.5, f"long poll should return soon after the send at 0.5 s, took {dt:.2f}s")
    sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
    # Queue-level ReceiveMessageWaitTimeSeconds applies when the request has none.
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"ReceiveMessageWaitTimeSeconds": "1"})
    t0 = time.monotonic()
    eq(c.receive(url), [], "receive on an empty queue with ReceiveMessageWaitTimeSeconds=1")
    dt = time.monotonic() - t0
    check(0.9 <= dt < 3.0, f"queue-default long poll of 1 s took {dt:.2f}s")
    # WaitTimeSeconds=0 overrides the queue default: returns at once.
    t0 = time.monotonic()
    eq(c.receive(url, WaitTimeSeconds=0), [], "short poll")
    dt = time.monotonic() - t0
    check(dt < 0.8, f"WaitTimeSeconds=0 took {dt:.2f}s")


def s_fifo_order_group_lock_dedup(c):
    sqs = c.sqs
    url = c.create("fifo", fifo=True)
    seqs = []
    ids = {}
    for body in ("m1", "m2", "m3"):
        r = sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="g1", MessageDeduplicationId=f"d-{body}")
        check(r.get("SequenceNumber"), f"no SequenceNumber for {body}")
        seqs.append(int(r["SequenceNumber"]))
        ids[body] = r["MessageId"]
    eq(seqs, sorted(seqs), "SequenceNumbers increase within a group")
    eq(len(set(seqs)), 3, "SequenceNumbers distinct")
    # Duplicate dedup id: accepted, not enqueued.
    dup = sqs.send_message(QueueUrl=url, MessageBody="m1 again", MessageGroupId="g1", MessageDeduplicationId="d-m1")
    check(dup.get("MessageId"), "duplicate send returned no MessageId")
    eq(c.attr(url, "ApproximateNumberOfMessages"), "3", "message count after a duplicate send")

    first = c.receive(url, MaxNumberOfMessages=1, VisibilityTimeout=30)
    eq([m["Body"] for m in first], ["m1"], "first message of group g1")
    a = first[0]["Attributes"]
    eq(a.get("MessageGroupId"), "g1", "MessageGroupId system attribute")
    eq(a.get("MessageDeduplicationId"), "d-m1", "MessageDeduplicationId system attribute")
    eq(a.get("SequenceNumber"), str(seqs[0]), "SequenceNumber system attribute")
    # Group lock: nothing else from g1 while m1 is in flight.
    eq(c.receive(url, MaxNumberOfMessages=10, VisibilityTimeout=30), [], "receive while g1 is locked")
    sqs.send_message(QueueUrl=url, MessageBody="n1", MessageGroupId="g2", MessageDeduplicationId="d-n1")
    eq([m["Body"] for m in c.receive(url, MaxNumberOfMessages=10, VisibilityTimeout=30)], ["n1"], "only g2 while g1 is locked")
    # Delete m1 -> the rest of g1 in order (possibly over several receives).
    sqs.delete_message(QueueUrl=url, ReceiptHandle=first[0]["ReceiptHandle"])
    order = []
    for _ in range(5):
        got = c.receive(url, MaxNumberOfMessages=10, VisibilityTimeout=30)
        if not got:
            break
        order += [m["Body"] for m in got]
        for m in got:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    eq(order, ["m2", "m3"], "rest of g1 in send order")
    # Dedup ids are remembered after delete.
    sqs.send_message(QueueUrl=url, MessageBody="m2 again", MessageGroupId="g1", MessageDeduplicationId="d-m2")
    eq(c.receive(url, MaxNumberOfMessages=10), [], "duplicate of an already deleted message is dropped")
    # A visibility release puts the head back first.
    for body in ("r1", "r2"):
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="g3", MessageDeduplicationId=f"d-{body}")
    got = c.receive(url, MaxNumberOfMessages=1, VisibilityTimeout=30)
    eq([m["Body"] for m in got], ["r1"], "head of g3")
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"], VisibilityTimeout=0)
    got = c.receive(url, MaxNumberOfMessages=10, VisibilityTimeout=30)
    check(got and got[0]["Body"] == "r1", f"after release the head comes back first, got {[m['Body'] for m in got]}")

    # Content-based deduplication.
    cbd = c.create("fifocbd", fifo=True, attributes={"ContentBasedDeduplication": "true"})
    r1 = sqs.send_message(QueueUrl=cbd, MessageBody="same body", MessageGroupId="g")
    sqs.send_message(QueueUrl=cbd, MessageBody="same body", MessageGroupId="g")
    sqs.send_message(QueueUrl=cbd, MessageBody="other body", MessageGroupId="g")
    got = c.receive(cbd, MaxNumberOfMessages=10, VisibilityTimeout=30)
    eq([m["Body"] for m in got], ["same body", "other body"], "content-based dedup")
    eq(got[0]["MessageId"], r1["MessageId"], "deduplicated message id")
    # FIFO without a group id is refused.
    _expect_code(lambda: sqs.send_message(QueueUrl=cbd, MessageBody="x"), "MissingParameter", "FIFO SendMessage without MessageGroupId")


def s_dead_letter_and_move_task(c):
    sqs = c.sqs
    dlq = c.create("dlq")
    dlq_arn = c.arn(dlq)
    src = c.create("src", attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})})
    src_arn = c.arn(src)
    policy = json.loads(c.attr(src, "RedrivePolicy"))
    eq(policy.get("deadLetterTargetArn"), dlq_arn, "RedrivePolicy.deadLetterTargetArn")
    eq(int(policy.get("maxReceiveCount")), 1, "RedrivePolicy.maxReceiveCount")
    sent = sqs.send_message(QueueUrl=src, MessageBody="poison", MessageAttributes={"k": {"DataType": "String", "StringValue": "v"}})
    first = c.receive(src, VisibilityTimeout=0)
    eq([m["MessageId"] for m in first], [sent["MessageId"]], "first receive from the source")
    eq(c.receive(src, VisibilityTimeout=0), [], "second receive: the message has moved to the DLQ")
    dead = c.receive(dlq, MessageAttributeNames=["All"], VisibilityTimeout=0)
    eq(len(dead), 1, "messages in the DLQ")
    d = dead[0]
    eq(d["MessageId"], sent["MessageId"], "DLQ message keeps its MessageId")
    eq(d["Body"], "poison", "DLQ message body")
    eq(d.get("MessageAttributes", {}).get("k", {}).get("StringValue"), "v", "DLQ message keeps its attributes")
    eq(d["Attributes"].get("DeadLetterQueueSourceArn"), src_arn, "DeadLetterQueueSourceArn")
    eq(d["Attributes"].get("ApproximateReceiveCount"), "2", "ApproximateReceiveCount carried over")
    srcs = sqs.list_dead_letter_source_queues(QueueUrl=dlq).get("queueUrls", [])
    eq(srcs, [src], "ListDeadLetterSourceQueues")

    # Move it back with a message move task (no DestinationArn -> original source).
    handle = sqs.start_message_move_task(SourceArn=dlq_arn)["TaskHandle"]
    check(handle, "StartMessageMoveTask returned no TaskHandle")
    deadline = time.monotonic() + 5
    task = None
    while time.monotonic() < deadline:
        tasks = sqs.list_message_move_tasks(SourceArn=dlq_arn).get("Results", [])
        task = tasks[0] if tasks else None
        if task and task.get("Status") == "COMPLETED":
            break
        time.sleep(0.2)
    check(task is not None, "ListMessageMoveTasks returned no task")
    eq(task.get("Status"), "COMPLETED", f"move task status after 5 s ({task})")
    eq(task.get("SourceArn"), dlq_arn, "task SourceArn")
    eq(task.get("ApproximateNumberOfMessagesMoved"), 1, "ApproximateNumberOfMessagesMoved")
    eq(task.get("ApproximateNumberOfMessagesToMove"), 1, "ApproximateNumberOfMessagesToMove")
    check(isinstance(task.get("StartedTimestamp"), int), f"StartedTimestamp {task.get('StartedTimestamp')!r}")
    check("TaskHandle" not in task, "a COMPLETED task still lists its TaskHandle")
    eq(c.receive(dlq), [], "DLQ empty after the move")
    back = c.receive(src, MessageAttributeNames=["All"], VisibilityTimeout=30)
    eq([m["Body"] for m in back], ["poison"], "message back in the source queue")
    eq(back[0].get("MessageAttributes", {}).get("k", {}).get("StringValue"), "v", "moved message keeps its attributes")
    # A non-DLQ source is refused.
    _expect_code(lambda: sqs.start_message_move_task(SourceArn=src_arn), "InvalidParameterValue", "StartMessageMoveTask on a non-DLQ")


def s_tags(c):
    sqs = c.sqs
    url = c.create("tags", tags={"team": "core", "env": "test"})
    eq(sqs.list_queue_tags(QueueUrl=url).get("Tags"), {"team": "core", "env": "test"}, "tags from CreateQueue")
    sqs.tag_queue(QueueUrl=url, Tags={"env": "prod", "Owner": "me"})
    eq(sqs.list_queue_tags(QueueUrl=url).get("Tags"), {"team": "core", "env": "prod", "Owner": "me"}, "after TagQueue (overwrite + add)")
    sqs.untag_queue(QueueUrl=url, TagKeys=["team", "absent-key"])
    eq(sqs.list_queue_tags(QueueUrl=url).get("Tags"), {"env": "prod", "Owner": "me"}, "after UntagQueue")
    sqs.untag_queue(QueueUrl=url, TagKeys=["env", "Owner"])
    eq(sqs.list_queue_tags(QueueUrl=url).get("Tags") or {}, {}, "after removing every tag")
    bare = c.create("tags-none")
    eq(sqs.list_queue_tags(QueueUrl=bare).get("Tags") or {}, {}, "queue created without tags")


def s_errors_typed(c):
    sqs = c.sqs
    missing = c.endpoint + "/000000000000/" + c.name("does-not-exist")
    url = c.create("errs")
    problems = []

    def expect(exc_name, code, what, fn):
        try:
            return c.expect_error(fn, exc_name, code, what)
        except Fail as e:
            problems.append(str(e))

    e = expect("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "GetQueueUrl on a missing queue",
               lambda: sqs.get_queue_url(QueueName=c.name("does-not-exist")))
    if e is not None and e.response["ResponseMetadata"]["HTTPStatusCode"] != 400:
        problems.append(f"QueueDoesNotExist: HTTP {e.response['ResponseMetadata']['HTTPStatusCode']}, expected 400")
    expect("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "SendMessage to a missing queue",
           lambda: sqs.send_message(QueueUrl=missing, MessageBody="x"))
    expect("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", "DeleteMessage with a bad receipt handle",
           lambda: sqs.delete_message(QueueUrl=url, ReceiptHandle="garbage"))
    expect("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", "ChangeMessageVisibility with a bad receipt handle",
           lambda: sqs.change_message_visibility(QueueUrl=url, ReceiptHandle="garbage", VisibilityTimeout=1))
    expect("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", "SendMessageBatch with no entries",
           lambda: sqs.send_message_batch(QueueUrl=url, Entries=[]))
    expect("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", "DeleteMessageBatch with no entries",
           lambda: sqs.delete_message_batch(QueueUrl=url, Entries=[]))
    expect("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", "ChangeMessageVisibilityBatch with no entries",
           lambda: sqs.change_message_visibility_batch(QueueUrl=url, Entries=[]))
    e = expect("InvalidAttributeName", "InvalidAttributeName", "GetQueueAttributes with an unknown attribute",
               lambda: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Foobar"]))
    if e is not None and e.response["Error"].get("Message") != "Unknown Attribute Foobar.":
        problems.append(f"InvalidAttributeName message: {e.response['Error'].get('Message')!r}")
    expect("InvalidAttributeName", "InvalidAttributeName", "SetQueueAttributes with an unknown attribute",
           lambda: sqs.set_queue_attributes(QueueUrl=url, Attributes={"Foobar": "1"}))
    expect("InvalidAttributeName", "InvalidAttributeName", "CreateQueue with an unknown attribute",
           lambda: sqs.create_queue(QueueName=c.name("errs"), Attributes={"Foobar": "1"}))
    # Generic validation errors (no modelled class): the code a boto3 user compares against.
    try:
        _expect_code(lambda: sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=11), "InvalidParameterValue", "MaxNumberOfMessages=11")
    except Fail as e:
        problems.append(str(e))
    if problems:
        raise Fail("; ".join(problems))


FUNCS = {name: globals()["s_" + name] for name in SCENARIOS}


# ---------------------------------------------------------------- runner


def make_client(endpoint, spy):
    cfg = Config(
        region_name="us-east-1",
        connect_timeout=5,
        read_timeout=40,
        retries={"total_max_attempts": 1, "mode": "standard"},
    )
    client = boto3.client("sqs", endpoint_url=endpoint, config=cfg,
                          aws_access_key_id="test", aws_secret_access_key="test")
    client.meta.events.register("before-send.sqs", spy)
    client.meta.events.register("response-received.sqs", spy.on_response)
    return client


def model_protocol(client):
    return client.meta.service_model.metadata.get("protocol")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--expect-protocol", choices=["json", "query"])
    ap.add_argument("--client-name", default="boto3")
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)

    spy = WireSpy()
    client = make_client(args.endpoint, spy)
    expected = args.expect_protocol or model_protocol(client)
    only = [s for s in args.only.split(",") if s]
    results = {}
    for name in SCENARIOS:
        if only and name not in only:
            continue
        ctx = Ctx(args.endpoint, client, spy, uuid.uuid4().hex[:8])
        mark = spy.mark()
        t0 = time.monotonic()
        try:
            FUNCS[name](ctx)
            status, detail = "pass", ""
        except Fail as e:
            status, detail = "fail", str(e)
        except ClientError as e:
            err = e.response.get("Error", {})
            status = "fail"
            detail = (f"unexpected {err.get('Code')} from {e.operation_name} "
                      f"(HTTP {e.response.get('ResponseMetadata', {}).get('HTTPStatusCode')}): {err.get('Message')}")
        except Exception as e:  # transport errors, parse errors, bugs
            tb = traceback.extract_tb(e.__traceback__)
            where = next((f"line {f.lineno}" for f in reversed(tb) if f.filename == __file__), "")
            status, detail = "fail", f"{type(e).__name__} {where}: {e}"
        wire, answers = ctx.spy.since(mark)
        wrong = sorted({f"{op}={p}" for op, p in wire if p != expected})
        if status == "pass" and wrong:
            status, detail = "fail", f"requests not on the {expected} wire: {', '.join(wrong)}"
        wrong = sorted({a for a in answers if a != expected})
        if status == "pass" and wrong:
            status, detail = "fail", f"responses not on the {expected} wire: {', '.join(wrong)}"
        if status == "pass" and not wire:
            status, detail = "fail", "no request observed"
        ops = sorted({op for op, _ in wire})
        if status == "pass":
            detail = f"{len(wire)} {expected} requests ({', '.join(ops)})"
        # Best-effort cleanup; a failure here does not change the verdict.
        for url in ctx.cleanup:
            try:
                client.delete_queue(QueueUrl=url)
            except Exception:
                pass
        dt = time.monotonic() - t0
        print(f"  {name:34s} {status.upper():5s} {dt:5.1f}s  {'' if status == 'pass' else detail}", flush=True)
        results[name] = {"status": status, "detail": detail}

    observed = sorted({p for _, p in spy.seen})
    out = {
        "client": args.client_name,
        "version": boto3.__version__,
        "protocol": observed[0] if len(observed) == 1 else expected,
        "results": results,
        "extra": {
            "botocore": botocore.__version__,
            "model_protocol": model_protocol(client),
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
    print(f"{args.client_name} {boto3.__version__} (botocore {botocore.__version__}, {out['protocol']}): "
          f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
