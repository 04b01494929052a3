#!/usr/bin/env python3
"""LocalStack's own client tools against a `retsu --localstack`: what a
project leaving LocalStack keeps using unchanged.

Two tools, one column each of the *LocalStack tools* table:
  awslocal           (PyPI awscli-local) `awslocal sqs|sns <command>`, each
                     call given its input with --cli-input-json, output JSON
  localstack-client  (PyPI localstack-client) boto3 clients from
                     localstack_client.session.Session()
Neither is told the endpoint: both find it as they find LocalStack's, from
LOCALSTACK_HOST (host:port), which run.sh sets to the server's address. The
developer endpoints are plain HTTP on that same endpoint (as resolved by
localstack_client.config).

Scenarios (keys of compat/report.py's LS_SCENARIOS):
  ls_queues               create (LocalStack's standard queue URL), list,
                          attributes, send/receive/delete, a typed error, delete
  ls_topics               create (same ARN again), attributes, tags, list, delete
  ls_subscriptions        an SQS queue subscribed raw to a topic (with a filter
                          policy): only the matching publish arrives; list,
                          unsubscribe
  ls_developer_endpoints  /_localstack/health, /info, /init, and /_aws/sqs/messages
                          showing a message without consuming it

Usage: scenarios.py --tool awslocal|localstack-client --out results/<tool>.json
Runs in compat/.venv-localstack (compat/python/requirements-localstack.txt).
"""

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
import urllib.parse
import urllib.request
import uuid
from importlib import metadata

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from checks import Fail, check, eq  # noqa: E402  (compat/python/checks.py)

from localstack_client import config as ls_config  # noqa: E402

SCENARIOS = ["ls_queues", "ls_topics", "ls_subscriptions", "ls_developer_endpoints"]
ACCOUNT = "000000000000"
REGION = "us-east-1"


class ClientError(Exception):
    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code


def kebab(op):
    out = ""
    for i, ch in enumerate(op):
        if ch.isupper() and i:
            out += "-"
        out += ch.lower()
    return out


class Awslocal:
    """`awslocal <service> <command> --cli-input-json …`; the same shape of
    answer as boto3's (the CLI prints the operation's output as JSON)."""

    def __init__(self, exe):
        self.exe = exe
        self.calls = 0

    def __call__(self, service, op, **params):
        self.calls += 1
        cmd = [self.exe, service, kebab(op), "--output", "json"]
        if params:
            cmd += ["--cli-input-json", json.dumps(params)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            err = p.stderr
            if "An error occurred (" in err:
                code = err.split("An error occurred (", 1)[1].split(")", 1)[0]
                raise ClientError(code, err.strip().splitlines()[-1])
            raise Fail(f"`awslocal {service} {kebab(op)}` exited {p.returncode}: {err.strip()[-400:]}")
        return json.loads(p.stdout) if p.stdout.strip() else {}


class LocalstackClient:
    """boto3 clients from localstack_client.session.Session()."""

    def __init__(self):
        from localstack_client.session import Session

        session = Session(region_name=REGION)
        self.clients = {s: session.client(s) for s in ("sqs", "sns")}
        self.calls = 0

    def __call__(self, service, op, **params):
        import botocore.exceptions

        self.calls += 1
        method = getattr(self.clients[service], kebab(op).replace("-", "_"))
        try:
            out = method(**params)
        except botocore.exceptions.ClientError as e:
            raise ClientError(e.response["Error"]["Code"], e.response["Error"].get("Message", ""))
        out.pop("ResponseMetadata", None)
        return out


def http(endpoint, path, accept_json=True):
    req = urllib.request.Request(endpoint + path, headers={"Accept": "application/json"} if accept_json else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, json.loads(r.read() or b"null")


class Ctx:
    def __init__(self, call, endpoint, port, run_id):
        self.call, self.endpoint, self.port, self.run_id = call, endpoint, port, run_id
        self.n = 0
        self.queues, self.topics = [], []

    def name(self, stem):
        self.n += 1
        return f"ls-{stem}-{self.run_id}-{self.n}"

    def queue(self, stem):
        name = self.name(stem)
        url = self.call("sqs", "CreateQueue", QueueName=name)["QueueUrl"]
        self.queues.append(url)
        return name, url

    def topic(self, stem):
        arn = self.call("sns", "CreateTopic", Name=self.name(stem))["TopicArn"]
        self.topics.append(arn)
        return arn

    def drain(self, url, want, seconds=5.0):
        got = []
        deadline = time.monotonic() + seconds
        while len(got) < want and time.monotonic() < deadline:
            for m in self.call("sqs", "ReceiveMessage", QueueUrl=url, MaxNumberOfMessages=10,
                               WaitTimeSeconds=1).get("Messages", []):
                got.append(m)
                self.call("sqs", "DeleteMessage", QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return got


def s_queues(c):
    name, url = c.queue("q")
    eq(url, f"http://sqs.{REGION}.localhost.localstack.cloud:{c.port}/{ACCOUNT}/{name}",
       "QueueUrl (LocalStack's standard endpoint strategy)")
    eq(c.call("sqs", "GetQueueUrl", QueueName=name)["QueueUrl"], url, "GetQueueUrl")
    check(url in c.call("sqs", "ListQueues", QueueNamePrefix=name).get("QueueUrls", []), "ListQueues lists it")
    c.call("sqs", "SetQueueAttributes", QueueUrl=url, Attributes={"VisibilityTimeout": "45"})
    attrs = c.call("sqs", "GetQueueAttributes", QueueUrl=url, AttributeNames=["All"])["Attributes"]
    eq(attrs["VisibilityTimeout"], "45", "VisibilityTimeout")
    eq(attrs["QueueArn"], f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}", "QueueArn")
    c.call("sqs", "SendMessage", QueueUrl=url, MessageBody="hello",
           MessageAttributes={"kind": {"DataType": "String", "StringValue": "greeting"}})
    got = c.drain(url, 1)
    eq([m["Body"] for m in got], ["hello"], "received bodies")
    try:
        c.call("sqs", "GetQueueUrl", QueueName=name + "-missing")
        raise Fail("GetQueueUrl of a missing queue succeeded")
    except ClientError as e:
        check(e.code in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"),
              f"missing queue: error {e.code}")
    c.call("sqs", "DeleteQueue", QueueUrl=url)
    c.queues.remove(url)
    check(url not in c.call("sqs", "ListQueues", QueueNamePrefix=name).get("QueueUrls", []), "deleted queue listed")
    return "create, URL, list, attributes, send/receive/delete, NonExistentQueue, delete"


def s_topics(c):
    name = c.name("t")
    arn = c.call("sns", "CreateTopic", Name=name)["TopicArn"]
    c.topics.append(arn)
    eq(arn, f"arn:aws:sns:{REGION}:{ACCOUNT}:{name}", "TopicArn")
    eq(c.call("sns", "CreateTopic", Name=name)["TopicArn"], arn, "CreateTopic again")
    c.call("sns", "SetTopicAttributes", TopicArn=arn, AttributeName="DisplayName", AttributeValue="Orders")
    attrs = c.call("sns", "GetTopicAttributes", TopicArn=arn)["Attributes"]
    eq(attrs.get("DisplayName"), "Orders", "DisplayName")
    c.call("sns", "TagResource", ResourceArn=arn, Tags=[{"Key": "team", "Value": "billing"}])
    eq(c.call("sns", "ListTagsForResource", ResourceArn=arn)["Tags"], [{"Key": "team", "Value": "billing"}], "tags")
    arns = [t["TopicArn"] for t in c.call("sns", "ListTopics").get("Topics", [])]
    check(arn in arns, "ListTopics lists it")
    c.call("sns", "DeleteTopic", TopicArn=arn)
    c.topics.remove(arn)
    try:
        c.call("sns", "GetTopicAttributes", TopicArn=arn)
        raise Fail("GetTopicAttributes of a deleted topic succeeded")
    except ClientError as e:
        eq(e.code, "NotFound", "deleted topic's error")
    return "create (idempotent), attributes, tags, list, delete, NotFound"


def s_subscriptions(c):
    topic = c.topic("fan")
    qname, url = c.queue("sub")
    qarn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{qname}"
    sub = c.call("sns", "Subscribe", TopicArn=topic, Protocol="sqs", Endpoint=qarn, ReturnSubscriptionArn=True,
                 Attributes={"RawMessageDelivery": "true",
                             "FilterPolicy": json.dumps({"colour": ["blue"]})})["SubscriptionArn"]
    check(sub.startswith(topic + ":"), f"SubscriptionArn {sub!r}")
    listed = c.call("sns", "ListSubscriptionsByTopic", TopicArn=topic)["Subscriptions"]
    eq([(s["SubscriptionArn"], s["Protocol"], s["Endpoint"]) for s in listed], [(sub, "sqs", qarn)],
       "ListSubscriptionsByTopic")
    for colour in ("red", "blue"):
        c.call("sns", "Publish", TopicArn=topic, Message=f"a {colour} one",
               MessageAttributes={"colour": {"DataType": "String", "StringValue": colour}})
    got = c.drain(url, 1)
    eq([m["Body"] for m in got], ["a blue one"], "delivered (raw, filtered)")
    check(not c.drain(url, 1, seconds=1.5), "the red publish was delivered")
    c.call("sns", "Unsubscribe", SubscriptionArn=sub)
    eq(c.call("sns", "ListSubscriptionsByTopic", TopicArn=topic).get("Subscriptions", []), [], "after Unsubscribe")
    return "subscribe raw with a filter policy, list, publish twice (one delivered), unsubscribe"


def s_developer_endpoints(c):
    status, health = http(c.endpoint, "/_localstack/health")
    eq(status, 200, "/_localstack/health status")
    eq((health["services"].get("sqs"), health["services"].get("sns")), ("running", "running"), "services")
    _, info = http(c.endpoint, "/_localstack/info")
    check(isinstance(info.get("version"), str), f"/_localstack/info: {info}")
    _, init = http(c.endpoint, "/_localstack/init")
    eq(init["completed"].get("READY"), True, "/_localstack/init READY completed")
    _, ready = http(c.endpoint, "/_localstack/init/ready")
    eq(ready["completed"], True, "/_localstack/init/ready")
    _, url = c.queue("peek")
    c.call("sqs", "SendMessage", QueueUrl=url, MessageBody="peek at me")
    _, peek = http(c.endpoint, "/_aws/sqs/messages?" + urllib.parse.urlencode({"QueueUrl": url}))
    bodies = [m["Body"] for m in peek.get("Messages", [])]
    eq(bodies, ["peek at me"], "/_aws/sqs/messages")
    eq([m["Body"] for m in c.drain(url, 1)], ["peek at me"], "still receivable after the peek")
    return "health, info, init, init/ready, /_aws/sqs/messages"


FUNCS = {"ls_queues": s_queues, "ls_topics": s_topics, "ls_subscriptions": s_subscriptions,
         "ls_developer_endpoints": s_developer_endpoints}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True, choices=["awslocal", "localstack-client"])
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    # The endpoint exactly as LocalStack's tools resolve it (LOCALSTACK_HOST).
    endpoint = ls_config.get_service_endpoint("sqs")
    port = urllib.parse.urlparse(endpoint).port
    if args.tool == "awslocal":
        exe = os.path.join(os.path.dirname(sys.executable), "awslocal")
        os.environ.setdefault("DISABLE_DEPRECATION_NOTICE", "1")
        call = Awslocal(exe)
        client, version = "awslocal (awscli-local)", metadata.version("awscli-local")
        extra = {"awscli": metadata.version("awscli")}
    else:
        call = LocalstackClient()
        client, version = "localstack-client", metadata.version("localstack-client")
        extra = {"boto3": metadata.version("boto3")}
    extra["endpoint_resolved"] = endpoint
    results = {}
    for name in SCENARIOS:
        c = Ctx(call, endpoint, port, uuid.uuid4().hex[:8])
        t0 = time.monotonic()
        try:
            detail = FUNCS[name](c) or ""
            status = "pass"
        except Fail as e:
            status, detail = "fail", str(e)
        except ClientError as e:
            status, detail = "fail", f"unexpected error {e}"
        except Exception as e:
            tb = traceback.extract_tb(e.__traceback__)
            where = next((f"line {f.lineno}" for f in reversed(tb) if f.filename == __file__), "")
            status, detail = "fail", f"{type(e).__name__} {where}: {e}"
        for url in c.queues:
            try:
                call("sqs", "DeleteQueue", QueueUrl=url)
            except Exception:
                pass
        for arn in c.topics:
            try:
                call("sns", "DeleteTopic", TopicArn=arn)
            except Exception:
                pass
        print(f"  {name:26s} {status.upper():5s} {time.monotonic() - t0:5.1f}s  {'' if status == 'pass' else detail}",
              flush=True)
        results[name] = {"status": status, "detail": detail}
    extra["calls"] = call.calls
    out = {"client": client, "version": version, "protocol": "sqs json, sns query", "service": "localstack",
           "results": results, "extra": extra}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)
        f.write("\n")
    failed = [n for n, r in results.items() if r["status"] == "fail"]
    print(f"{client} {version}: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
