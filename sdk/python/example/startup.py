"""Start-up time of retsu_sqs.Server: from the call to the first answered SQS
request, 20 starts. Two figures: a raw SQS JSON-protocol ListQueues over
urllib (the fixture alone), and boto3 (client created after the start, as a
test would)."""

import statistics
import time
import urllib.request

import boto3

from retsu_sqs import Server

RUNS = 20
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
session = boto3.session.Session()
session.client("sqs", region_name="us-east-1")  # load botocore's models once, outside the timing


def raw_list_queues(endpoint):
    request = urllib.request.Request(endpoint + "/", data=b"{}", method="POST", headers={
        "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ListQueues"})
    with opener.open(request, timeout=10) as response:
        assert response.status == 200, response.status
        response.read()


def measure(first_request):
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        server = Server()
        try:
            first_request(server)
            times.append((time.perf_counter() - start) * 1000)
        finally:
            server.stop()
    return times


def report(label, times):
    print(f"{label}: median {statistics.median(times):.1f} ms, min {min(times):.1f} ms, max {max(times):.1f} ms ({len(times)} starts)")


report("startup retsu_sqs.Server() to first answered SQS request (raw ListQueues)",
       measure(lambda s: raw_list_queues(s.endpoint_url)))
report("startup retsu_sqs.Server() to first answered SQS request (boto3 client made after start)",
       measure(lambda s: session.client("sqs", **s.client_kwargs).list_queues()))
