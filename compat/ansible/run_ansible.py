#!/usr/bin/env python3
"""Ansible's AWS modules against Retsu: infrastructure as code that
converges (the *Infrastructure as code* table of COMPATIBILITY.md).

The `ansible` package from PyPI (it carries the amazon.aws and
community.aws collections) runs the playbooks of this folder with
`endpoint_url` set to the server; boto3 (the modules' own) reads back what
they made.

Scenarios (keys of compat/report.py's ANSIBLE_SCENARIOS):
  ansible_caller_identity  amazon.aws.aws_caller_info (STS GetCallerIdentity)
                           answers the server's account
  ansible_apply            apply.yml creates every queue, topic and
                           subscription, each attribute the modules set read
                           back as declared
  ansible_converged        apply.yml again reports changed=0 (after a
                           FilterPolicy is set on the raw SQS subscription,
                           which the module leaves alone and must keep), and
                           the filtered raw subscription delivers
  ansible_remove           remove.yml leaves no queue, topic or subscription
                           (list calls), and again reports changed=0

Usage: run_ansible.py --endpoint URL --out results/ansible.json
Runs in compat/.venv-ansible (compat/python/requirements-ansible.txt).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from importlib import metadata

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from checks import Fail, check, eq  # noqa: E402  (compat/python/checks.py)

import boto3  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.dirname(sys.executable)
ACCOUNT = "000000000000"
REGION = "us-east-1"
SCENARIOS = ["ansible_caller_identity", "ansible_apply", "ansible_converged", "ansible_remove"]
RECAP = re.compile(r"^localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


class Run:
    def __init__(self, endpoint, log):
        self.endpoint, self.log = endpoint, log
        self.prefix = "ans-" + uuid.uuid4().hex[:8]
        tmp = tempfile.mkdtemp(prefix="retsu-ansible-")
        self.env = dict(os.environ, ANSIBLE_LOCAL_TEMP=os.path.join(tmp, "tmp"), ANSIBLE_HOME=os.path.join(tmp, "home"),
                        ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOWS="1", PYTHONWARNINGS="ignore",
                        ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
        kw = dict(endpoint_url=endpoint, region_name=REGION, aws_access_key_id="test", aws_secret_access_key="test")
        self.sqs, self.sns = boto3.client("sqs", **kw), boto3.client("sns", **kw)

    def ansible(self, args):
        p = subprocess.run(args, capture_output=True, text=True, env=self.env, cwd=HERE, timeout=600)
        self.log.write(f"$ {' '.join(args)}\n{p.stdout}\n{p.stderr}\n")
        self.log.flush()
        return p

    def playbook(self, name):
        """(changed, failed) of the play recap, or Fail with the error lines."""
        p = self.ansible([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", name,
                          "-e", f"endpoint={self.endpoint}", "-e", f"prefix={self.prefix}"])
        m = RECAP.search(p.stdout)
        if not m:
            raise Fail(f"{name}: no play recap (exit {p.returncode}): {(p.stdout + p.stderr).strip()[-400:]}")
        changed, failed = int(m.group(2)), int(m.group(4))
        if failed:
            errors = [line for line in p.stdout.splitlines() if "fatal:" in line or "[ERROR]" in line]
            raise Fail(f"{name}: failed={failed}: {' '.join(errors)[:600]}")
        return changed

    def url(self, name):
        return f"{self.endpoint}/{ACCOUNT}/{name}"

    def topic(self, name):
        return f"arn:aws:sns:{REGION}:{ACCOUNT}:{name}"


def s_caller_identity(r):
    p = r.ansible([os.path.join(BIN, "ansible"), "localhost", "-i", "localhost,", "-c", "local",
                   "-m", "amazon.aws.aws_caller_info", "-a",
                   f"endpoint_url={r.endpoint} region={REGION} access_key=test secret_key=test"])
    check(p.returncode == 0 and "SUCCESS" in p.stdout, f"aws_caller_info: {(p.stdout + p.stderr).strip()[-400:]}")
    out = json.loads(p.stdout.split("=>", 1)[1])
    eq((out["account"], out["arn"]), (ACCOUNT, f"arn:aws:iam::{ACCOUNT}:root"), "account and arn")
    return f"account {out['account']}, arn {out['arn']}, user_id {out['user_id']}"


def queue_attrs(r, name):
    url = r.sqs.get_queue_url(QueueName=name)["QueueUrl"]
    return url, r.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]


def s_apply(r):
    changed = r.playbook("apply.yml")
    eq(changed, 5, "first run changed (its five resource tasks)")
    p = r.prefix
    dlq_arn = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{p}-orders-dlq"
    url, a = queue_attrs(r, f"{p}-orders")
    want = {"VisibilityTimeout": "45", "MessageRetentionPeriod": "86400", "MaximumMessageSize": "2048",
            "DelaySeconds": "5", "ReceiveMessageWaitTimeSeconds": "10", "KmsMasterKeyId": "alias/aws/sqs",
            "KmsDataKeyReusePeriodSeconds": "600"}
    eq({k: a.get(k) for k in want}, want, f"{p}-orders attributes")
    eq(json.loads(a["RedrivePolicy"]), {"maxReceiveCount": 4, "deadLetterTargetArn": dlq_arn}, "RedrivePolicy")
    policy = json.loads(a["Policy"])
    eq(policy["Statement"][0]["Sid"], "TopicSends", "queue Policy")
    eq(r.sqs.list_queue_tags(QueueUrl=url).get("Tags"), {"team": "billing", "env": "test"}, "queue tags")
    furl, f = queue_attrs(r, f"{p}-ledger.fifo")
    want = {"FifoQueue": "true", "ContentBasedDeduplication": "true", "DeduplicationScope": "messageGroup",
            "FifoThroughputLimit": "perMessageGroupId", "VisibilityTimeout": "60"}
    eq({k: f.get(k) for k in want}, want, "FIFO queue attributes")
    eq(r.sqs.list_queue_tags(QueueUrl=furl).get("Tags"), {"team": "ledger"}, "FIFO queue tags")

    arn = r.topic(f"{p}-events")
    t = r.sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    eq(t.get("DisplayName"), "Events", "DisplayName")
    eq(json.loads(t["Policy"])["Statement"][0]["Sid"], "OwnerPublishes", "topic Policy")
    eq(json.loads(t["DeliveryPolicy"])["http"]["defaultHealthyRetryPolicy"]["numRetries"], 3, "DeliveryPolicy")
    eq(r.sns.list_tags_for_resource(ResourceArn=arn)["Tags"], [{"Key": "team", "Value": "billing"}], "topic tags")
    subs = {s["Protocol"]: s for s in r.sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]}
    eq(sorted(subs), ["email", "https", "sqs"], "subscription protocols")
    eq(subs["email"]["SubscriptionArn"], "PendingConfirmation", "email subscription (unconfirmed)")
    sa = r.sns.get_subscription_attributes(SubscriptionArn=subs["sqs"]["SubscriptionArn"])["Attributes"]
    eq(sa.get("RawMessageDelivery"), "true", "RawMessageDelivery")
    fifo = r.topic(f"{p}-ledger.fifo")
    ft = r.sns.get_topic_attributes(TopicArn=fifo)["Attributes"]
    eq((ft.get("FifoTopic"), ft.get("ContentBasedDeduplication")), ("true", "true"), "FIFO topic attributes")
    return f"changed={changed}; every attribute read back as declared"


def s_converged(r):
    p = r.prefix
    arn = r.topic(f"{p}-events")
    sqs_sub = next(s for s in r.sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]
                   if s["Protocol"] == "sqs")["SubscriptionArn"]
    r.sns.set_subscription_attributes(SubscriptionArn=sqs_sub, AttributeName="FilterPolicy",
                                      AttributeValue=json.dumps({"colour": ["blue"]}))
    changed = r.playbook("apply.yml")
    eq(changed, 0, "second run's changed")
    sa = r.sns.get_subscription_attributes(SubscriptionArn=sqs_sub)["Attributes"]
    eq((sa.get("RawMessageDelivery"), json.loads(sa.get("FilterPolicy", "null"))), ("true", {"colour": ["blue"]}),
       "the raw subscription's attributes after the second run")
    url = r.sqs.get_queue_url(QueueName=f"{p}-orders")["QueueUrl"]
    r.sqs.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "0"})
    for colour in ("red", "blue"):
        r.sns.publish(TopicArn=arn, Message=f"a {colour} one",
                      MessageAttributes={"colour": {"DataType": "String", "StringValue": colour}})
    got, deadline = [], time.monotonic() + 5
    while time.monotonic() < deadline and not got:
        got = r.sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, MaxNumberOfMessages=10).get("Messages", [])
    eq([m["Body"] for m in got], ["a blue one"], "delivered through the filtered raw subscription")
    # Put back what apply.yml declares, so the removal starts from its state.
    r.sqs.set_queue_attributes(QueueUrl=url, Attributes={"DelaySeconds": "5"})
    return "changed=0; FilterPolicy kept; only the matching publish arrived, raw"


def s_remove(r):
    p = r.prefix
    topics = [r.topic(f"{p}-events"), r.topic(f"{p}-ledger.fifo")]
    changed = r.playbook("remove.yml")
    eq(changed, 3, "removal changed (its three tasks)")
    eq(r.sqs.list_queues(QueueNamePrefix=p).get("QueueUrls", []), [], "ListQueues after removal")
    arns = [t["TopicArn"] for page in r.sns.get_paginator("list_topics").paginate() for t in page.get("Topics", [])]
    eq([a for a in arns if a in topics], [], "ListTopics after removal")
    subs = [s["SubscriptionArn"] for page in r.sns.get_paginator("list_subscriptions").paginate()
            for s in page.get("Subscriptions", []) if s["TopicArn"] in topics]
    eq(subs, [], "ListSubscriptions after removal")
    again = r.playbook("remove.yml")
    eq(again, 0, "a second removal's changed")
    return f"changed={changed}, then 0; no queue, topic or subscription left"


FUNCS = {"ansible_caller_identity": s_caller_identity, "ansible_apply": s_apply,
         "ansible_converged": s_converged, "ansible_remove": s_remove}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--log", default=os.devnull, help="where ansible's own output goes")
    args = ap.parse_args(argv)
    results = {}
    with open(args.log, "w") as log:
        r = Run(args.endpoint, log)
        failed_before = False
        for name in SCENARIOS:
            t0 = time.monotonic()
            if failed_before and name != "ansible_caller_identity":
                # Each step starts from the state the one before left.
                status, detail = "fail", "not run: an earlier step failed"
            else:
                try:
                    status, detail = "pass", FUNCS[name](r) or ""
                except Fail as e:
                    status, detail = "fail", str(e)
                except Exception as e:
                    tb = traceback.extract_tb(e.__traceback__)
                    where = next((f"line {f.lineno}" for f in reversed(tb) if f.filename == __file__), "")
                    status, detail = "fail", f"{type(e).__name__} {where}: {e}"
                failed_before |= status == "fail" and name != "ansible_caller_identity"
            print(f"  {name:26s} {status.upper():5s} {time.monotonic() - t0:5.1f}s  "
                  f"{'' if status == 'pass' else detail}", flush=True)
            results[name] = {"status": status, "detail": detail}
    extra = {"ansible-core": metadata.version("ansible-core"), "boto3": metadata.version("boto3"),
             "collections": "amazon.aws " + collection_version("amazon", "aws")
             + ", community.aws " + collection_version("community", "aws")}
    out = {"client": "ansible", "version": metadata.version("ansible"), "protocol": "sqs json, sns query, sts query",
           "service": "ansible", "results": results, "extra": extra}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)
        f.write("\n")
    failed = [n for n, v in results.items() if v["status"] == "fail"]
    print(f"ansible {out['version']}: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def collection_version(namespace, name):
    import ansible_collections

    path = os.path.join(list(ansible_collections.__path__)[0], namespace, name, "MANIFEST.json")
    with open(path) as f:
        return json.load(f)["collection_info"]["version"]


if __name__ == "__main__":
    sys.exit(main())
