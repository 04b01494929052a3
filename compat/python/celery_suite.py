#!/usr/bin/env python3
"""Celery on kombu's SQS transport against a fresh retsu.

A real worker (`celery -A celery_app worker`, started here as a separate
process) runs tasks that this process sends as the producer; results come
back through a file result backend. The worker consumes the way kombu does
in production: asynchronous ReceiveMessage long polls over pycurl, one
DeleteMessage per acknowledged task, ChangeMessageVisibility for a backoff
task that fails, and nothing deleted on a queue with a redrive policy, so
the server dead-letters it. A boto3 client (the one kombu itself uses)
sets up the queues and looks behind the framework.

Usage: celery_suite.py --endpoint URL --out results/celery.json
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from urllib.parse import urlparse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import boto3  # noqa: E402

from checks import Fail, check, eq  # noqa: E402

RUN = uuid.uuid4().hex[:8]


def admin_client(endpoint):
    return boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="test", aws_secret_access_key="test")


def counts(sqs, url):
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages",
                                                               "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
    return int(a["ApproximateNumberOfMessages"]), int(a["ApproximateNumberOfMessagesNotVisible"])


def wait_for(cond, secs, what):
    deadline = time.monotonic() + secs
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise Fail(f"{what}: not within {secs} s")


def times(workdir, key):
    path = os.path.join(workdir, f"{key}.times")
    if not os.path.exists(path):
        return []
    return [float(x) for x in open(path).read().split()]


class Suite:
    def __init__(self, endpoint, sqs, urls, queues, workdir, app):
        self.endpoint, self.sqs, self.urls, self.q, self.workdir, self.app = endpoint, sqs, urls, queues, workdir, app
        import celery_app as tasks
        self.t = tasks

    def queue_lifecycle(self):
        # kombu's own queue management (no predefined queues): declaring a
        # queue creates it with kombu's VisibilityTimeout, put/get go through it.
        from kombu import Connection
        host = urlparse(self.endpoint)
        name = f"kombu-declared-{RUN}"
        with Connection(f"sqs://test:test@{host.hostname}:{host.port}",
                        transport_options={"region": "us-east-1", "is_secure": False,
                                           "wait_time_seconds": 1, "visibility_timeout": 45}) as conn:
            q = conn.SimpleQueue(name)
            q.put({"hello": "world"})
            msg = q.get(block=True, timeout=5)
            eq(msg.payload, {"hello": "world"}, "SimpleQueue round trip")
            msg.ack()
            url = self.sqs.get_queue_url(QueueName=name)["QueueUrl"]
            vt = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]
            eq(vt, {"VisibilityTimeout": "45"}, "VisibilityTimeout kombu created the queue with")
            eq(counts(self.sqs, url), (0, 0), "messages after ack")
            q.close()
        self.sqs.delete_queue(QueueUrl=url)
        return "kombu declared the queue (CreateQueue with its visibility timeout), put/get/ack through it"

    def send_receive_delete_attributes(self):
        t0 = time.monotonic()
        r = self.t.add.delay(2, 3)
        eq(r.get(timeout=15), 5, "add(2, 3) result from the worker")
        took = time.monotonic() - t0
        wait_for(lambda: counts(self.sqs, self.urls[self.q["main"]]) == (0, 0), 5,
                 "the acknowledged task message deleted from the queue")
        results = self.app.GroupResult(str(uuid.uuid4()), [self.t.add.delay(i, i) for i in range(5)])
        eq(sorted(results.get(timeout=20)), [0, 2, 4, 6, 8], "five tasks")
        return f"task round trip in {took:.2f}s (SendMessage, async ReceiveMessage over pycurl, DeleteMessage on ack); 5 more tasks ok"

    def visibility_change_release(self):
        key = f"back-{RUN}"
        r = self.t.comes_back.delay(key)
        wait_for(lambda: len(times(self.workdir, key)) >= 2, 10, "second delivery of the failed backoff task")
        a, b = times(self.workdir, key)[:2]
        gap = b - a
        # The queue's visibility timeout is 30 s: only kombu's ChangeMessageVisibility(1) brings it back this soon.
        check(0.7 <= gap < 5, f"redelivered {gap:.2f}s after the failure (backoff policy: visibility 1 s)")
        wait_for(lambda: counts(self.sqs, self.urls[self.q["main"]]) == (0, 0), 5, "message deleted after the 2nd delivery")
        del r
        return f"failed backoff task left in the queue, its visibility changed to 1 s: redelivered after {gap:.2f}s, then acknowledged"

    def long_polling(self):
        lat = []
        for i in range(2):
            time.sleep(1.3 + i)  # the idle worker is inside a 5 s long poll
            t0 = time.monotonic()
            eq(self.t.add.delay(i, 1).get(timeout=15), i + 1, "result")
            lat.append(time.monotonic() - t0)
        check(max(lat) < 2.0, f"task latency {lat}: the worker's waiting 5 s long poll did not wake on the send")
        return "an idle worker's 5 s long poll woke on each send: latencies " + ", ".join(f"{x:.2f}s" for x in lat)

    def fifo_order_group_lock_dedup(self):
        key = f"fifo-{RUN}"
        for i in range(6):
            self.t.record.apply_async((key, i), queue=self.q["fifo"], MessageGroupId="g1",
                                      MessageDeduplicationId=f"{key}-{i}")
        # A duplicate of #2 within the deduplication window is dropped.
        self.t.record.apply_async((key, 2), queue=self.q["fifo"], MessageGroupId="g1",
                                  MessageDeduplicationId=f"{key}-2")
        path = os.path.join(self.workdir, f"{key}.order")
        wait_for(lambda: os.path.exists(path) and len(open(path).read().split()) >= 6, 15, "six FIFO tasks")
        time.sleep(0.5)
        eq([int(x) for x in open(path).read().split()], list(range(6)), "execution order on the FIFO queue")
        return "six tasks on a FIFO queue (MessageGroupId) ran in order; a re-sent MessageDeduplicationId was dropped"

    def dead_letter_and_move_task(self):
        key = f"poison-{RUN}"
        self.t.poison.apply_async((key,), queue=self.q["redrive"])
        dlq = self.urls[self.q["dlq"]]
        got = []

        def in_dlq():
            got.extend(self.sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=1).get("Messages", []))
            return bool(got)

        wait_for(in_dlq, 10, "the failing task in the dead-letter queue")
        n = len(times(self.workdir, key))
        eq(n, 2, "deliveries before dead-lettering (maxReceiveCount 2)")
        body = json.loads(__import__("base64").b64decode(got[0]["Body"]))
        eq(body["headers"]["task"], "celery_app.poison", "the dead-lettered message is the task")
        return ("a task failing with acks_late on a queue with a RedrivePolicy: kombu left it, it came back after the "
                "1 s visibility timeout and moved to the DLQ after 2 receives (message move tasks have no Celery API)")

    def errors_typed(self):
        ok = self.t.flaky.delay("f").get(timeout=20)
        eq(ok, {"key": "f", "retries": 2}, "flaky task result after two retries")
        r = self.t.always_fails.delay("x")
        try:
            r.get(timeout=20)
        except ValueError as e:
            eq(str(e), "x always fails", "the task's exception")
        else:
            raise Fail("a task that always fails returned a result")
        eq(r.state, "FAILURE", "state of the failed task")
        return "a task failing twice succeeded on its 3rd try (Celery retries re-send it); one that always fails raised ValueError after its retry"


NA = {
    "list_queues_pagination": "Celery has no ListQueues API (kombu lists queues by prefix only to fill its cache)",
    "batches_partial_failure": "kombu sends, receives-deletes and changes visibility one message at a time; no batch API",
    "delay": "Celery's countdown/eta is held by the worker, not sent as SQS DelaySeconds",
    "tags": "Celery has no queue tagging API",
}

ORDER = ["queue_lifecycle", "list_queues_pagination", "send_receive_delete_attributes", "batches_partial_failure",
         "visibility_change_release", "delay", "long_polling", "fifo_order_group_lock_dedup",
         "dead_letter_and_move_task", "tags", "errors_typed"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    endpoint = args.endpoint.rstrip("/")
    sqs = admin_client(endpoint)
    workdir = tempfile.mkdtemp(prefix="retsu-celery-")
    os.makedirs(os.path.join(workdir, "results"))
    queues = {"main": f"celery-main-{RUN}", "fifo": f"celery-fifo-{RUN}.fifo",
              "redrive": f"celery-redrive-{RUN}", "dlq": f"celery-dlq-{RUN}"}
    urls = {}
    urls[queues["main"]] = sqs.create_queue(QueueName=queues["main"], Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    urls[queues["fifo"]] = sqs.create_queue(QueueName=queues["fifo"], Attributes={"FifoQueue": "true"})["QueueUrl"]
    urls[queues["dlq"]] = sqs.create_queue(QueueName=queues["dlq"])["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=urls[queues["dlq"]], AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    urls[queues["redrive"]] = sqs.create_queue(QueueName=queues["redrive"], Attributes={
        "VisibilityTimeout": "1",
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2})})["QueueUrl"]
    host = urlparse(endpoint)
    config = {"broker_url": f"sqs://test:test@{host.hostname}:{host.port}", "queues": queues, "urls": urls,
              "workdir": workdir}
    cfg_path = os.path.join(workdir, "config.json")
    json.dump(config, open(cfg_path, "w"))
    os.environ["RETSU_CELERY_CONFIG"] = cfg_path

    import celery
    import kombu
    import pycurl
    import celery_app

    worker_log = open(os.path.join(workdir, "worker.log"), "w")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "celery_app", "worker", "-P", "solo", "-c", "1",
         "-Q", ",".join([queues["main"], queues["fifo"], queues["redrive"]]),
         "--without-mingle", "--without-gossip", "--without-heartbeat", "--loglevel=WARNING"],
        cwd=HERE, env=dict(os.environ, PYTHONPATH=HERE), stdout=worker_log, stderr=subprocess.STDOUT)
    results = {}
    failed = 0
    try:
        suite = Suite(endpoint, sqs, urls, queues, workdir, celery_app.app)
        # The worker is up once a first task has run.
        try:
            suite.t.add.delay(0, 0).get(timeout=60)
        except Exception as e:
            raise SystemExit(f"the Celery worker did not run a task: {e}; log: {open(worker_log.name).read()[-2000:]}")
        for name in ORDER:
            t0 = time.monotonic()
            if name in NA:
                status, detail = "n/a", NA[name]
            else:
                try:
                    status, detail = "pass", getattr(suite, name)()
                except Fail as e:
                    status, detail = "fail", str(e)
                except Exception as e:
                    status, detail = "fail", f"{type(e).__name__}: {e} ({traceback.extract_tb(e.__traceback__)[-1].lineno})"
            failed += status == "fail"
            print(f"  {name:34s} {status.upper():5s} {time.monotonic() - t0:5.1f}s  {'' if status != 'fail' else detail}",
                  flush=True)
            results[name] = {"status": status, "detail": detail}
    finally:
        worker.terminate()
        try:
            worker.wait(10)
        except subprocess.TimeoutExpired:
            worker.kill()
        for url in urls.values():
            try:
                sqs.delete_queue(QueueUrl=url)
            except Exception:
                pass
    out = {"client": "celery", "version": celery.__version__, "protocol": "json", "results": results,
           "extra": {"kombu": kombu.__version__, "pycurl": pycurl.version.split()[0], "botocore": __import__("botocore").__version__,
                     "worker": "celery worker -P solo (separate process)"}}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2, sort_keys=True)
        f.write("\n")
    print(f"celery {celery.__version__} (kombu {kombu.__version__}): {len(results) - failed} passed or n/a, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
