#!/usr/bin/env python3
"""aiobotocore (asyncio over aiohttp) against a fresh retsu.

Runs the same scenarios as the boto3 suites (compat/python/scenarios.py),
each call awaited on aiobotocore's client: a thin adapter turns
`sqs.op(**kw)` into `loop.run_until_complete(client.op(**kw))` and
paginators into their collected pages. The long-polling scenario is native
asyncio instead: a waiting `receive_message(WaitTimeSeconds=5)` and a
`send_message` run concurrently on the one client (asyncio.gather), which is
how asyncio code long-polls.

Usage: aio_scenarios.py --endpoint URL --out results/aiobotocore.json
"""

import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import aiobotocore  # noqa: E402
from aiobotocore.config import AioConfig  # noqa: E402
from aiobotocore.session import get_session  # noqa: E402

import scenarios as S  # noqa: E402
from checks import check, eq  # noqa: E402

LOOP = asyncio.new_event_loop()
asyncio.set_event_loop(LOOP)


class SyncPaginator:
    def __init__(self, paginator):
        self._p = paginator

    def paginate(self, **kw):
        async def collect():
            return [page async for page in self._p.paginate(**kw)]

        return LOOP.run_until_complete(collect())


class SyncClient:
    """The boto3-shaped face of an aiobotocore client, for scenarios.py."""

    def __init__(self, aclient):
        self._c = aclient
        self.meta = aclient.meta
        self.exceptions = aclient.exceptions

    @property
    def aio(self):
        return self._c

    def get_paginator(self, name):
        return SyncPaginator(self._c.get_paginator(name))

    def __getattr__(self, name):
        attr = getattr(self._c, name)
        if not callable(attr):
            return attr

        def call(*args, **kw):
            return LOOP.run_until_complete(attr(*args, **kw))

        return call


CLIENT_CM = None


def make_client(endpoint, spy):
    global CLIENT_CM
    session = get_session()
    cfg = AioConfig(region_name="us-east-1", connect_timeout=5, read_timeout=40,
                    retries={"total_max_attempts": 1, "mode": "standard"})
    CLIENT_CM = session.create_client("sqs", endpoint_url=endpoint, config=cfg,
                                      aws_access_key_id="test", aws_secret_access_key="test")
    aclient = LOOP.run_until_complete(CLIENT_CM.__aenter__())
    aclient.meta.events.register("before-send.sqs", spy)
    aclient.meta.events.register("response-received.sqs", spy.on_response)
    return SyncClient(aclient)


def s_long_polling(c):
    sqs = c.sqs.aio
    url = c.create("lp")

    async def scenario():
        t0 = time.monotonic()
        got = (await sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)).get("Messages", [])
        empty = time.monotonic() - t0
        eq(got, [], "long poll on an empty queue")
        check(0.9 <= empty < 3.0, f"empty long poll of 1 s took {empty:.2f}s")

        async def later():
            await asyncio.sleep(0.5)
            await sqs.send_message(QueueUrl=url, MessageBody="wake up")

        t0 = time.monotonic()
        resp, _ = await asyncio.gather(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5), later())
        woke = time.monotonic() - t0
        got = resp.get("Messages", [])
        eq([m["Body"] for m in got], ["wake up"], "long poll result")
        check(0.3 <= woke < 2.5, f"long poll should return soon after the send at 0.5 s, took {woke:.2f}s")
        await sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
        # Several polls waiting at once on one client: each send wakes one.
        t0 = time.monotonic()

        async def sends():
            await asyncio.sleep(0.3)
            await sqs.send_message_batch(QueueUrl=url, Entries=[
                {"Id": str(i), "MessageBody": f"m{i}"} for i in range(3)])

        results = await asyncio.gather(*[sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5, MaxNumberOfMessages=1)
                                         for _ in range(3)], sends())
        many = time.monotonic() - t0
        bodies = sorted(m["Body"] for r in results[:3] for m in r.get("Messages", []))
        eq(bodies, ["m0", "m1", "m2"], "three concurrent long polls, woken by one batch of three")
        check(many < 2.5, f"three concurrent polls took {many:.2f}s")
        await sqs.set_queue_attributes(QueueUrl=url, Attributes={"ReceiveMessageWaitTimeSeconds": "1"})
        t0 = time.monotonic()
        resp = await sqs.receive_message(QueueUrl=url)
        qd = time.monotonic() - t0
        check(0.9 <= qd < 3.0, f"queue-default long poll of 1 s took {qd:.2f}s (got {len(resp.get('Messages', []))})")

    LOOP.run_until_complete(scenario())


class _Version:
    __version__ = aiobotocore.__version__


def main():
    S.make_client = make_client
    S.FUNCS["long_polling"] = s_long_polling
    S.boto3 = _Version  # main() reports boto3.__version__ as the client version
    argv = sys.argv[1:] + ["--client-name", "aiobotocore", "--expect-protocol", "json"]
    try:
        return S.main(argv)
    finally:
        if CLIENT_CM is not None:
            LOOP.run_until_complete(CLIENT_CM.__aexit__(None, None, None))


if __name__ == "__main__":
    sys.exit(main())
