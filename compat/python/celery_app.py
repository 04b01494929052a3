"""The Celery application of the Celery compat suite (compat/python/celery_suite.py).

Both the producer (the suite) and the worker it starts
(`celery -A celery_app worker`) import this module; the broker URL, queues
and result folder come from the JSON file named by RETSU_CELERY_CONFIG,
written by the suite before the worker starts.
"""

import json
import os
import time

from celery import Celery

CONFIG = json.load(open(os.environ["RETSU_CELERY_CONFIG"]))
Q = CONFIG["queues"]  # role -> queue name
WORK = CONFIG["workdir"]

app = Celery("retsu_compat")
app.conf.update(
    broker_url=CONFIG["broker_url"],
    broker_transport_options={
        "region": "us-east-1",
        "is_secure": False,
        "wait_time_seconds": 5,  # the worker long-polls (pycurl, async)
        "polling_interval": 0,
        "visibility_timeout": 30,
        # Queues made by the suite (with the attributes it needs): kombu only uses them.
        "predefined_queues": {
            name: {
                "url": CONFIG["urls"][name],
                "access_key_id": "test",
                "secret_access_key": "test",
                # A failing backoff task is not deleted: kombu changes its
                # visibility to this many seconds for its n-th receive.
                "backoff_policy": {1: 1, 2: 1, 3: 1},
                "backoff_tasks": ["celery_app.comes_back"],
            }
            for name in Q.values()
        },
    },
    result_backend="file://" + os.path.join(WORK, "results"),
    task_default_queue=Q["main"],
    worker_enable_remote_control=False,  # SQS has no fanout exchange for pidbox
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
)


def _mark(name):
    """True the first time name is marked."""
    path = os.path.join(WORK, name)
    if os.path.exists(path):
        return False
    open(path, "w").close()
    return True


@app.task
def add(x, y):
    return x + y


@app.task(bind=True, max_retries=3, default_retry_delay=0.2)
def flaky(self, key):
    """Fails twice, then succeeds: Celery re-sends it for each retry."""
    if self.request.retries < 2:
        raise self.retry(exc=RuntimeError(f"attempt {self.request.retries + 1} of {key} fails"))
    return {"key": key, "retries": self.request.retries}


@app.task(bind=True, max_retries=1, default_retry_delay=0.2)
def always_fails(self, key):
    """Retried once, then fails for good with its exception."""
    raise self.retry(exc=ValueError(f"{key} always fails"))


@app.task(bind=True, acks_late=True, acks_on_failure_or_timeout=False)
def comes_back(self, key):
    """The 1st delivery fails (rejected, not deleted: a backoff task), the 2nd succeeds."""
    with open(os.path.join(WORK, f"{key}.times"), "a") as f:
        f.write(f"{time.time()}\n")
    if _mark(key):
        raise RuntimeError("first delivery fails on purpose")
    return "second delivery"


@app.task(acks_late=True, acks_on_failure_or_timeout=False)
def poison(key):
    """Always fails; its queue's redrive policy sends it to the dead-letter queue."""
    with open(os.path.join(WORK, f"{key}.times"), "a") as f:
        f.write(f"{time.time()}\n")
    raise RuntimeError("poison")


@app.task
def record(key, i):
    with open(os.path.join(WORK, f"{key}.order"), "a") as f:
        f.write(f"{i}\n")
    return i
