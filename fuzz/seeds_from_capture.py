#!/usr/bin/env python3
"""Turns requests real SDKs sent into seed inputs for the fuzz targets.

Capture first: run a compatibility suite through the recording proxy,
  python3 compat/wiretap.py serve --upstream http://127.0.0.1:PORT \\
      --log wire.jsonl --capture DIR/<suite>
then point the suite at the proxy. This script reads DIR/<suite>/*.json and
writes, in each target's input layout (see its fuzz_targets/*.rs):
  request_path   path \\n query \\n headers (name:value, \\r-separated) \\n body
  json_decoder   one byte (the action's index in Action::ALL) + JSON body
  query_decoder  path \\n query \\n form body
  receipt_handle every ReceiptHandle a client sent
  md5_attributes every SendMessage's message attributes
At most two inputs per (suite, protocol, action) are kept — the first and
the largest — since `cargo fuzz cmin` then keeps only what adds coverage.

  python3 fuzz/seeds_from_capture.py DIR fuzz/corpus
Standard library only.
"""

import base64
import json
import os
import sys
from urllib.parse import parse_qs

# Action::ALL's order (src/api.rs): the json_decoder's first byte indexes it.
ACTIONS = [
    "AddPermission", "CancelMessageMoveTask", "ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch", "CreateQueue", "DeleteMessage",
    "DeleteMessageBatch", "DeleteQueue", "GetQueueAttributes", "GetQueueUrl",
    "ListDeadLetterSourceQueues", "ListMessageMoveTasks", "ListQueueTags",
    "ListQueues", "PurgeQueue", "ReceiveMessage", "RemovePermission",
    "SendMessage", "SendMessageBatch", "SetQueueAttributes",
    "StartMessageMoveTask", "TagQueue", "UntagQueue",
]


def classify(req, body):
    headers = {k.lower(): v for k, v in req["headers"]}
    target = headers.get("x-amz-target", "")
    if target.startswith("AmazonSQS."):
        return "json", target.split(".", 1)[1]
    form = parse_qs(body.decode("utf-8", "replace")) if body else {}
    if "Action" not in form and req["query"]:
        form = parse_qs(req["query"])
    if "Action" in form:
        return "query", form["Action"][0]
    return None, None


def handles(protocol, body, query):
    if protocol == "json":
        doc = json.loads(body or b"{}")
        found = [doc.get("ReceiptHandle")]
        found += [e.get("ReceiptHandle") for e in doc.get("Entries", [])]
    else:
        form = parse_qs(body.decode("utf-8", "replace") + "&" + query)
        found = [v[0] for k, v in form.items() if k.endswith("ReceiptHandle")]
    return [h for h in found if h]


def short(b):
    return bytes([min(len(b), 255)]) + b[:255]


def md5_input(attributes):
    """The md5_attributes layout: name, kind, data type, value(s), each
    string or byte string prefixed by its one-byte length."""
    out = b""
    for name, v in attributes.items():
        kind = 0 if "StringValue" in v else 1
        out += short(name.encode()) + bytes([kind]) + short(v.get("DataType", "").encode())
        if kind == 0:
            out += short(v["StringValue"].encode())
        else:
            out += short(base64.b64decode(v.get("BinaryValue", "")))
    return out


def main(capture_dir, corpus_dir):
    kept = {}  # (suite, protocol, op) -> [first, largest]
    handles_seen, md5_seen = set(), set()
    for suite in sorted(os.listdir(capture_dir)):
        folder = os.path.join(capture_dir, suite)
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name)) as f:
                req = json.load(f)
            body = base64.b64decode(req["body"])
            protocol, op = classify(req, body)
            if protocol is None:
                continue
            key = (suite, protocol, op)
            slot = kept.setdefault(key, [None, None])
            if slot[0] is None:
                slot[0] = (req, body)
            elif slot[1] is None or len(body) > len(slot[1][1]):
                slot[1] = (req, body)
            handles_seen.update(handles(protocol, body, req["query"]))
            if protocol == "json" and op == "SendMessage":
                attrs = json.loads(body).get("MessageAttributes")
                if attrs:
                    md5_seen.add(md5_input(attrs))

    def write(target, name, data):
        os.makedirs(os.path.join(corpus_dir, target), exist_ok=True)
        with open(os.path.join(corpus_dir, target, name), "wb") as f:
            f.write(data)

    count = 0
    for (suite, protocol, op), slot in sorted(kept.items()):
        for i, item in enumerate(s for s in slot if s is not None):
            req, body = item
            name = f"{suite}-{op}-{i}"
            headers = "\r".join(f"{k}:{v}" for k, v in req["headers"]).encode()
            write("request_path", name,
                  b"\n".join([req["path"].encode(), req["query"].encode(), headers, body]))
            if protocol == "json" and op in ACTIONS:
                write("json_decoder", name, bytes([ACTIONS.index(op)]) + body)
            if protocol == "query":
                write("query_decoder", name,
                      b"\n".join([req["path"].encode(), req["query"].encode(), body]))
            count += 1
    for i, h in enumerate(sorted(handles_seen)[:8]):
        write("receipt_handle", f"captured-{i}", h.encode())
    for i, data in enumerate(sorted(md5_seen)[:8]):
        write("md5_attributes", f"captured-{i}", data)
    print(f"{count} requests, {min(len(handles_seen), 8)} handles, "
          f"{min(len(md5_seen), 8)} attribute maps written to {corpus_dir}")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
