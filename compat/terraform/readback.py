#!/usr/bin/env python3
"""The Terraform AWS provider's read-back loops, against Retsu.

Terraform's hashicorp/aws provider cannot be built on these machines, so
this suite makes the calls it makes for `aws_sqs_queue`,
`aws_sqs_queue_policy`, `aws_sns_topic` and `aws_sns_topic_subscription`,
in its order, with its waits (the plugin SDK's StateChangeConf, below) and
its equality checks. Each step names the provider file it follows
(hashicorp/terraform-provider-aws, internal/service/...). An emulator that
drops an attribute at create, loses tags given to CreateQueue, does not
echo SetTopicAttributes, lacks GetSubscriptionAttributes or answers a
deleted queue without a typed QueueDoesNotExist over JSON makes one of
these loops time out (or, for the last, wait forever), as it makes
`terraform apply` / `destroy` do.

Scenarios (keys of compat/report.py's TF_SCENARIOS): tf_caller_identity,
tf_sqs_queue, tf_sqs_queue_policy, tf_sns_topic, tf_sns_topic_subscription,
tf_destroy.

Usage: readback.py --endpoint URL --aws PATH-TO-aws --out results/terraform-readback.json
       [--time-scale F]  (multiplies every wait and timeout; 1 = the provider's)
Runs in compat/.venv-boto3-current (boto3 speaks JSON to SQS, as the
provider's aws-sdk-go-v2 does).
"""

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
import uuid
from importlib import metadata

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from checks import Fail, check, eq  # noqa: E402  (compat/python/checks.py)

import boto3  # noqa: E402
import botocore.exceptions  # noqa: E402

ACCOUNT = "000000000000"
REGION = "us-east-1"
SCENARIOS = ["tf_caller_identity", "tf_sqs_queue", "tf_sqs_queue_policy", "tf_sns_topic",
             "tf_sns_topic_subscription", "tf_destroy"]
# internal/service/sqs/consts.go: errCodeQueueDoesNotExist (the query code,
# which aws-sdk-go-v2 reads from X-Amzn-Query-Error over JSON).
QUEUE_DOES_NOT_EXIST = "AWS.SimpleQueueService.NonExistentQueue"
SCALE = 1.0


class NotFound(Exception):
    """retry.NotFoundError: the refresh found nothing."""


class WaitTimeout(Fail):
    pass


def wait_for_state(refresh, pending, target, timeout, min_timeout=0.0, continuous=1, not_found_checks=20,
                   what="state"):
    """The plugin SDK's StateChangeConf.WaitForState (helper/retry/state.go):
    the first refresh at once; a refresh returning no resource counts
    towards an empty target without waiting, else against NotFoundChecks;
    the target must be seen `continuous` times in a row; the wait between
    refreshes starts at 100 ms, doubles while the target has not been seen,
    is at least MinTimeout and at most 10 s. Returns the number of refreshes."""
    deadline = time.monotonic() + timeout * SCALE
    wait, occurrences, not_found, refreshes = 0.1, 0, 0, 0
    last = None
    while time.monotonic() < deadline:
        res, state = refresh()
        refreshes += 1
        last = state
        if res is None and not target:
            occurrences += 1
            if occurrences == continuous:
                return refreshes
            continue
        if res is None:
            not_found += 1
            if not_found > not_found_checks:
                raise Fail(f"{what}: not found after {not_found} checks")
        else:
            not_found = 0
            if state in target:
                occurrences += 1
                if occurrences == continuous:
                    return refreshes
            elif state in pending:
                occurrences = 0
            else:
                raise Fail(f"{what}: unexpected state {state!r}")
        if occurrences == 0:
            wait *= 2
        wait = min(max(wait, min_timeout), 10.0)
        time.sleep(wait * SCALE)
    raise WaitTimeout(f"{what}: timeout after {timeout}s (last state {last!r})")


def retry_when_not_found(f, timeout, what):
    """tfresource.RetryWhenNotFound: f again while it raises NotFound."""
    deadline = time.monotonic() + timeout * SCALE
    while True:
        try:
            return f()
        except NotFound:
            if time.monotonic() >= deadline:
                raise Fail(f"{what}: still not found after {timeout}s")
            time.sleep(0.5 * SCALE)


def normalize_policy(doc):
    """A reduced awspolicyequivalence.PoliciesAreEquivalent: statements as a
    set, single strings and one-element lists alike, keys in any order."""
    def norm(v):
        if isinstance(v, list):
            items = sorted(json.dumps(norm(x), sort_keys=True) for x in v)
            return items[0] if len(items) == 1 else items
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return json.dumps(v)

    d = json.loads(doc) if isinstance(doc, str) else doc
    stmts = d.get("Statement", [])
    if isinstance(stmts, dict):
        stmts = [stmts]
    return (d.get("Version"), sorted(json.dumps(norm(s), sort_keys=True) for s in stmts))


def policies_equivalent(a, b):
    try:
        return normalize_policy(a) == normalize_policy(b)
    except (ValueError, AttributeError):
        return False


class Ctx:
    def __init__(self, endpoint, aws):
        self.endpoint, self.aws = endpoint, aws
        kw = dict(endpoint_url=endpoint, region_name=REGION, aws_access_key_id="test", aws_secret_access_key="test")
        self.sqs, self.sns, self.sts = boto3.client("sqs", **kw), boto3.client("sns", **kw), boto3.client("sts", **kw)
        run = uuid.uuid4().hex[:8]
        self.names = {k: f"tf-{run}-{k}" for k in ("dlq", "orders", "events")}
        self.names["ledger"] = f"tf-{run}-ledger.fifo"
        self.names["ledger_topic"] = f"tf-{run}-ledger-topic.fifo"
        self.urls, self.topics, self.subs = {}, {}, {}
        self.calls = []

    def arn(self, name):
        return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"

    # internal/service/sqs/queue.go: findQueueAttributesByURL / findQueueAttributes
    def find_queue_attributes(self, url, names=("All",)):
        try:
            out = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(names))
        except botocore.exceptions.ClientError as e:
            if e.response["Error"]["Code"] in (QUEUE_DOES_NOT_EXIST, "QueueDoesNotExist"):
                header = e.response["ResponseMetadata"]["HTTPHeaders"].get("x-amzn-query-error", "")
                # aws-sdk-go-v2 types the error from this header alone over JSON.
                check(header.startswith(QUEUE_DOES_NOT_EXIST + ";"),
                      f"QueueDoesNotExist without X-Amzn-Query-Error {QUEUE_DOES_NOT_EXIST};…: {header!r}")
                raise NotFound()
            raise
        if not out.get("Attributes"):
            raise Fail(f"GetQueueAttributes {url}: empty result")
        return out["Attributes"]

    # internal/service/sqs/queue.go: statusQueueAttributeState + waitQueueAttributesPropagated
    def wait_queue_attributes(self, url, expected, timeout=180):
        def matches(got):
            for k, e in expected.items():
                if k not in got:
                    if e == "":
                        continue
                    if k == "KmsDataKeyReusePeriodSeconds" and (e == "300" or (
                            got.get("SqsManagedSseEnabled", "false") == "false" and not got.get("KmsMasterKeyId"))):
                        continue
                    return False
                g = got[k]
                if k == "Policy":
                    if not policies_equivalent(g, e):
                        return False
                elif k in ("RedrivePolicy", "RedriveAllowPolicy"):
                    if json.loads(g) != json.loads(e):
                        return False
                elif g != e:
                    return False
            return True

        def refresh():
            try:
                got = self.find_queue_attributes(url)
            except NotFound:
                return None, ""
            return got, "equal" if matches(got) else "notequal"

        return wait_for_state(refresh, ["notequal"], ["equal"], timeout, min_timeout=5, continuous=6,
                              not_found_checks=10, what=f"attributes of {url}")

    # internal/service/sns/topic.go: findTopicAttributesByARN
    def find_topic_attributes(self, arn):
        try:
            out = self.sns.get_topic_attributes(TopicArn=arn)
        except self.sns.exceptions.NotFoundException:
            raise NotFound()
        if not out.get("Attributes"):
            raise Fail(f"GetTopicAttributes {arn}: empty result")
        return out["Attributes"]

    # internal/service/sns/topic_subscription.go: findSubscriptionAttributesByARN
    def find_subscription_attributes(self, arn):
        try:
            out = self.sns.get_subscription_attributes(SubscriptionArn=arn)
        except self.sns.exceptions.NotFoundException:
            raise NotFound()
        if not out.get("Attributes"):
            raise Fail(f"GetSubscriptionAttributes {arn}: empty result")
        return out["Attributes"]

    def subscription_pending(self, arn):
        """statusSubscriptionPendingConfirmation."""
        try:
            attrs = self.find_subscription_attributes(arn)
        except NotFound:
            return None, ""
        return attrs, attrs.get("PendingConfirmation")


def s_caller_identity(c):
    # The provider's configure step: sts:GetCallerIdentity before anything
    # else (internal/conns/config.go, through aws-sdk-go-base).
    out = c.sts.get_caller_identity()
    eq((out["Account"], out["Arn"]), (ACCOUNT, f"arn:aws:iam::{ACCOUNT}:root"), "GetCallerIdentity")
    env = dict(os.environ, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_DEFAULT_REGION=REGION)
    p = subprocess.run([c.aws, "sts", "get-caller-identity", "--endpoint-url", c.endpoint, "--output", "json"],
                       capture_output=True, text=True, env=env, timeout=60)
    check(p.returncode == 0, f"aws sts get-caller-identity exited {p.returncode}: {p.stderr.strip()[-300:]}")
    cli = json.loads(p.stdout)
    eq((cli["Account"], cli["Arn"], cli["UserId"]), (ACCOUNT, f"arn:aws:iam::{ACCOUNT}:root", ACCOUNT),
       "aws sts get-caller-identity")
    return "boto3 and `aws sts get-caller-identity`: account, root ARN, user id"


def create_queue(c, key, attributes, tags):
    # internal/service/sqs/queue.go resourceQueueCreate: CreateQueue with the
    # attributes and the tags (tag-on-create), then waitQueueAttributesPropagated,
    # then resourceQueueRead (RetryWhenNotFound, queueReadTimeout 20 s) and the
    # tags read back with ListQueueTags (tags_gen.go listTags).
    url = c.sqs.create_queue(QueueName=c.names[key], Attributes=attributes, tags=tags)["QueueUrl"]
    c.urls[key] = url
    refreshes = c.wait_queue_attributes(url, attributes)
    got = retry_when_not_found(lambda: c.find_queue_attributes(url), 20, f"read {url}")
    for k, v in attributes.items():
        # The schema compares these two as JSON (SuppressEquivalentJSONDiffs).
        if k in ("RedrivePolicy", "RedriveAllowPolicy"):
            eq(json.loads(got.get(k, "null")), json.loads(v), f"{key} {k}")
        else:
            eq(got.get(k), v, f"{key} {k}")
    eq(c.sqs.list_queue_tags(QueueUrl=url).get("Tags", {}), tags, f"{key} ListQueueTags")
    return refreshes


def s_sqs_queue(c):
    dlq = {"DelaySeconds": "0", "MaximumMessageSize": "262144", "MessageRetentionPeriod": "1209600",
           "ReceiveMessageWaitTimeSeconds": "0", "VisibilityTimeout": "30", "SqsManagedSseEnabled": "true"}
    n = create_queue(c, "dlq", dlq, {"team": "billing"})
    orders = {"DelaySeconds": "5", "MaximumMessageSize": "2048", "MessageRetentionPeriod": "86400",
              "ReceiveMessageWaitTimeSeconds": "10", "VisibilityTimeout": "45", "SqsManagedSseEnabled": "true",
              "RedrivePolicy": json.dumps({"deadLetterTargetArn": c.arn(c.names["dlq"]), "maxReceiveCount": 4}),
              "RedriveAllowPolicy": json.dumps({"redrivePermission": "allowAll"})}
    n += create_queue(c, "orders", orders, {"team": "billing", "env": "test"})
    ledger = {"FifoQueue": "true", "ContentBasedDeduplication": "true", "DeduplicationScope": "messageGroup",
              "FifoThroughputLimit": "perMessageGroupId", "VisibilityTimeout": "60",
              "KmsMasterKeyId": "alias/aws/sqs", "KmsDataKeyReusePeriodSeconds": "600"}
    n += create_queue(c, "ledger", ledger, {"team": "ledger"})
    # resourceQueueUpdate: SetQueueAttributes with the changed attributes,
    # then the same propagation wait.
    change = {"VisibilityTimeout": "90", "DelaySeconds": "0"}
    c.sqs.set_queue_attributes(QueueUrl=c.urls["orders"], Attributes=change)
    n += c.wait_queue_attributes(c.urls["orders"], change)
    return f"3 queues created and 1 updated; {n} GetQueueAttributes polls, each wait met 6 in a row"


def s_sqs_queue_policy(c):
    # internal/service/sqs/queue_policy.go resourceQueuePolicyUpsert:
    # SetQueueAttributes Policy, then waitQueueAttributesPropagated (the
    # policy compared by equivalence, not text), then the read.
    url, arn = c.urls["orders"], c.arn(c.names["orders"])
    policy = {"Version": "2012-10-17", "Id": "orders-policy",
              "Statement": [{"Sid": "TopicSends", "Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"},
                             "Action": ["sqs:SendMessage"], "Resource": arn,
                             "Condition": {"ArnEquals": {"aws:SourceArn": f"arn:aws:sns:{REGION}:{ACCOUNT}:*"}}}]}
    text = json.dumps(policy, indent=2)
    c.sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": text})
    n = c.wait_queue_attributes(url, {"Policy": text})
    # findQueuePolicyByURL: GetQueueAttributes Policy; an empty one is not found.
    got = c.find_queue_attributes(url, ["Policy"]).get("Policy", "")
    check(got and policies_equivalent(got, text), f"Policy read back: {got!r}")
    # resourceQueuePolicyDelete: Policy "" and the same wait (a missing
    # attribute equals an empty expected value).
    c.sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    n += c.wait_queue_attributes(url, {"Policy": ""})
    return f"set, equivalent on read-back, removed; {n} polls"


def s_sns_topic(c):
    # internal/service/sns/topic.go resourceTopicCreate: CreateTopic with
    # the tags (and FifoTopic), then putTopicAttributes: one
    # SetTopicAttributes per configured attribute, then resourceTopicRead,
    # whose values must equal the configuration (else the next plan differs).
    name = c.names["events"]
    arn = c.sns.create_topic(Name=name, Tags=[{"Key": "team", "Value": "billing"}])["TopicArn"]
    c.topics["events"] = arn
    policy = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "OwnerPublishes", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
         "Action": "sns:Publish", "Resource": arn}]})
    delivery = json.dumps({"http": {"defaultHealthyRetryPolicy": {
        "minDelayTarget": 20, "maxDelayTarget": 20, "numRetries": 3, "numMaxDelayRetries": 0,
        "numNoDelayRetries": 0, "numMinDelayRetries": 0, "backoffFunction": "linear"},
        "disableSubscriptionOverrides": False}})
    attributes = {"DisplayName": "Events", "Policy": policy, "DeliveryPolicy": delivery, "SignatureVersion": "2",
                  "TracingConfig": "Active", "KmsMasterKeyId": "alias/aws/sns",
                  "SQSSuccessFeedbackRoleArn": f"arn:aws:iam::{ACCOUNT}:role/sns-feedback",
                  "SQSFailureFeedbackRoleArn": f"arn:aws:iam::{ACCOUNT}:role/sns-feedback",
                  "SQSSuccessFeedbackSampleRate": "50"}
    for k, v in attributes.items():
        c.sns.set_topic_attributes(TopicArn=arn, AttributeName=k, AttributeValue=v)
    # findTopicAttributesWithValidAWSPrincipalsByARN: retried while the
    # policy names an invalid principal (propagationTimeout).
    got = c.find_topic_attributes(arn)
    for k, v in attributes.items():
        if k == "Policy":
            check(policies_equivalent(got.get(k, "{}"), v), f"topic Policy read back: {got.get(k)!r}")
        elif k == "DeliveryPolicy":
            eq(json.loads(got.get(k, "null")), json.loads(v), "topic DeliveryPolicy")
        else:
            eq(got.get(k), v, f"topic {k}")
    eq((got.get("TopicArn"), got.get("Owner")), (arn, ACCOUNT), "TopicArn, Owner")
    eq(c.sns.list_tags_for_resource(ResourceArn=arn)["Tags"], [{"Key": "team", "Value": "billing"}], "topic tags")
    # resourceTopicUpdate: the changed attribute only, then the read.
    c.sns.set_topic_attributes(TopicArn=arn, AttributeName="DisplayName", AttributeValue="Orders and events")
    eq(c.find_topic_attributes(arn).get("DisplayName"), "Orders and events", "DisplayName after update")
    # A FIFO topic: FifoTopic (and its throughput scope) go to CreateTopic;
    # ContentBasedDeduplication comes after, by SetTopicAttributes.
    fifo = c.sns.create_topic(Name=c.names["ledger_topic"], Attributes={"FifoTopic": "true"})["TopicArn"]
    c.topics["ledger_topic"] = fifo
    c.sns.set_topic_attributes(TopicArn=fifo, AttributeName="ContentBasedDeduplication", AttributeValue="true")
    got = c.find_topic_attributes(fifo)
    eq((got.get("FifoTopic"), got.get("ContentBasedDeduplication")), ("true", "true"), "FIFO topic attributes")
    return f"{len(attributes)} attributes set one by one and echoed; tags; update; FIFO topic"


def subscribe(c, key, topic, protocol, endpoint, attributes):
    # internal/service/sns/topic_subscription.go resourceTopicSubscriptionCreate:
    # Subscribe with the attributes and ReturnSubscriptionArn, then (unless
    # e-mail, or http(s) without endpoint_auto_confirms) waitSubscriptionConfirmed,
    # then the read (RetryWhenNewResourceNotFound, subscriptionCreateTimeout 2 min).
    arn = c.sns.subscribe(TopicArn=topic, Protocol=protocol, Endpoint=endpoint, Attributes=attributes,
                          ReturnSubscriptionArn=True)["SubscriptionArn"]
    c.subs[key] = arn
    if "email" not in protocol and "http" not in protocol:
        wait_for_state(lambda: c.subscription_pending(arn), ["true"], ["false"], 120,
                       what=f"confirmation of {arn}")
    got = retry_when_not_found(lambda: c.find_subscription_attributes(arn), 120, f"read {arn}")
    for k, v in attributes.items():
        if k in ("FilterPolicy", "RedrivePolicy", "DeliveryPolicy"):
            eq(json.loads(got.get(k, "null")), json.loads(v), f"{key} {k}")
        else:
            eq(got.get(k), v, f"{key} {k}")
    eq((got.get("TopicArn"), got.get("Protocol"), got.get("Endpoint")), (topic, protocol, endpoint),
       f"{key} TopicArn, Protocol, Endpoint")
    return got


def s_sns_topic_subscription(c):
    topic = c.topics["events"]
    raw = subscribe(c, "sqs", topic, "sqs", c.arn(c.names["orders"]), {
        "RawMessageDelivery": "true", "FilterPolicyScope": "MessageBody",
        "FilterPolicy": json.dumps({"colour": ["blue"]}),
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": c.arn(c.names["dlq"])})})
    eq(raw.get("PendingConfirmation"), "false", "sqs subscription confirmed")
    # putSubscriptionAttributes on update: FilterPolicyScope MessageAttributes
    # goes last, after the policy it applies to.
    c.sns.set_subscription_attributes(SubscriptionArn=c.subs["sqs"], AttributeName="FilterPolicy",
                                      AttributeValue=json.dumps({"colour": ["blue", "green"]}))
    c.sns.set_subscription_attributes(SubscriptionArn=c.subs["sqs"], AttributeName="FilterPolicyScope",
                                      AttributeValue="MessageAttributes")
    got = c.find_subscription_attributes(c.subs["sqs"])
    eq((json.loads(got["FilterPolicy"]), got.get("FilterPolicyScope")),
       ({"colour": ["blue", "green"]}, "MessageAttributes"), "after update")
    https = subscribe(c, "https", topic, "https", "https://127.0.0.1:9/tf-hook", {"RawMessageDelivery": "false"})
    eq(https.get("PendingConfirmation"), "true", "https subscription pending (not auto-confirmed)")
    email = subscribe(c, "email", topic, "email", "ops@example.com", {})
    eq(email.get("PendingConfirmation"), "true", "email subscription pending")
    fifo = subscribe(c, "fifo", c.topics["ledger_topic"], "sqs", c.arn(c.names["ledger"]),
                     {"RawMessageDelivery": "true"})
    eq(fifo.get("PendingConfirmation"), "false", "FIFO subscription confirmed")
    return "sqs (raw, filter, redrive; updated), https and email (pending), FIFO; every attribute echoed"


def s_destroy(c):
    # Subscriptions: resourceTopicSubscriptionDelete: Unsubscribe (a pending
    # one may answer "Cannot unsubscribe a subscription that is pending
    # confirmation"), then waitSubscriptionDeleted until NotFound.
    for key, arn in list(c.subs.items()):
        try:
            c.sns.unsubscribe(SubscriptionArn=arn)
        except c.sns.exceptions.InvalidParameterException as e:
            if "pending confirmation" not in str(e):
                raise
        else:
            wait_for_state(lambda: c.subscription_pending(arn), ["false", "true"], [], 120,
                           what=f"deletion of subscription {key}")
        del c.subs[key]
    # Topics: resourceTopicDelete: DeleteTopic; NotFound counts as done.
    for key, arn in list(c.topics.items()):
        c.sns.delete_topic(TopicArn=arn)
        try:
            c.find_topic_attributes(arn)
            raise Fail(f"topic {key} still readable after DeleteTopic")
        except NotFound:
            pass
        del c.topics[key]
    # Queues: resourceQueueDelete: DeleteQueue, then waitQueueDeleted:
    # GetQueueAttributes until QueueDoesNotExist (typed over JSON by the
    # X-Amzn-Query-Error header, checked in find_queue_attributes) 15 times
    # in a row, queueDeletedTimeout 3 min.
    polls = 0
    for key in ("orders", "ledger", "dlq"):
        url = c.urls[key]
        c.sqs.delete_queue(QueueUrl=url)

        def refresh(url=url):
            try:
                return c.find_queue_attributes(url), "exists"
            except NotFound:
                return None, ""

        polls += wait_for_state(refresh, ["exists"], [], 180, min_timeout=3, continuous=15, not_found_checks=5,
                                what=f"deletion of {key}")
        del c.urls[key]
    left = c.sqs.list_queues(QueueNamePrefix=c.names["dlq"].rsplit("-", 1)[0]).get("QueueUrls", [])
    eq(left, [], "queues left")
    return f"4 subscriptions, 2 topics, 3 queues destroyed; {polls} typed QueueDoesNotExist polls"


FUNCS = {"tf_caller_identity": s_caller_identity, "tf_sqs_queue": s_sqs_queue,
         "tf_sqs_queue_policy": s_sqs_queue_policy, "tf_sns_topic": s_sns_topic,
         "tf_sns_topic_subscription": s_sns_topic_subscription, "tf_destroy": s_destroy}


def main(argv=None):
    global SCALE
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--aws", required=True, help="the AWS CLI, for `aws sts get-caller-identity`")
    ap.add_argument("--out", required=True)
    ap.add_argument("--time-scale", type=float, default=1.0)
    args = ap.parse_args(argv)
    SCALE = args.time_scale
    c = Ctx(args.endpoint, args.aws)
    results, failed_before = {}, False
    for name in SCENARIOS:
        t0 = time.monotonic()
        if failed_before and name != "tf_caller_identity":
            status, detail = "fail", "not run: an earlier step failed"
        else:
            try:
                status, detail = "pass", FUNCS[name](c) or ""
            except Fail as e:
                status, detail = "fail", str(e)
            except Exception as e:
                tb = traceback.extract_tb(e.__traceback__)
                where = next((f"line {f.lineno}" for f in reversed(tb) if f.filename == __file__), "")
                status, detail = "fail", f"{type(e).__name__} {where}: {e}"
            failed_before |= status == "fail" and name != "tf_caller_identity"
        print(f"  {name:26s} {status.upper():5s} {time.monotonic() - t0:5.1f}s  "
              f"{'' if status == 'pass' else detail}", flush=True)
        results[name] = {"status": status, "detail": detail}
    out = {"client": "terraform-provider-aws read-back (boto3)", "version": metadata.version("boto3"),
           "protocol": "sqs json, sns query, sts query", "service": "terraform", "results": results,
           "extra": {"time_scale": SCALE}}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)
        f.write("\n")
    failed = [n for n, v in results.items() if v["status"] == "fail"]
    print(f"terraform read-back: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
