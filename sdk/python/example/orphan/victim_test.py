"""Run by tests/test_orphan.py in a pytest subprocess, which it SIGKILLs
mid-test: the server the `retsu` fixture started must not outlive it."""

import sys
import time


def test_blocks_with_a_server(retsu, sqs_client):
    sqs_client.create_queue(QueueName="orphan-check")
    print(f"VICTIM READY {retsu.pid} {retsu.endpoint_url}", flush=True)
    sys.stdout.flush()
    time.sleep(600)  # blocks until killed; never a timing sleep
