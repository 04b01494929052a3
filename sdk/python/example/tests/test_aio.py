"""The retsu fixture with aiobotocore (asyncio.run inside the test)."""

import asyncio

import pytest
from aiobotocore.session import get_session


@pytest.mark.retsu_frozen_clock
def test_aiobotocore_send_receive_and_clock(retsu_reset):
    async def scenario():
        session = get_session()
        async with session.create_client("sqs", **retsu_reset.client_kwargs) as sqs:
            url = (await sqs.create_queue(QueueName="async-jobs", Attributes={"VisibilityTimeout": "20"}))["QueueUrl"]
            assert url == retsu_reset.queue_url("async-jobs")
            sent = await sqs.send_message(QueueUrl=url, MessageBody="from asyncio")
            got = await sqs.receive_message(QueueUrl=url, MessageSystemAttributeNames=["All"])
            assert got["Messages"][0]["MessageId"] == sent["MessageId"]
            assert got["Messages"][0]["Body"] == "from asyncio"

            # The clock is frozen: nothing comes back until it is moved.
            assert "Messages" not in await sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)
            retsu_reset.clock.advance(21)
            again = await sqs.receive_message(QueueUrl=url, MessageSystemAttributeNames=["All"])
            assert again["Messages"][0]["Attributes"]["ApproximateReceiveCount"] == "2"
            await sqs.delete_message(QueueUrl=url, ReceiptHandle=again["Messages"][0]["ReceiptHandle"])
            assert retsu_reset.peek("async-jobs") == []

    asyncio.run(scenario())
