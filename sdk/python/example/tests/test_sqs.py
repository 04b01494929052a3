"""The retsu fixtures with boto3: real SQS semantics, the clock moved by hand."""

import json

import pytest


def make_queue(sqs, name, **attributes):
    attrs = {k: str(v) for k, v in attributes.items()}
    return sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]


def receive(sqs, url, **kw):
    answer = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"], WaitTimeSeconds=0, **kw
    )
    return answer.get("Messages", [])


def test_send_and_receive(retsu_reset, sqs_client):
    url = make_queue(sqs_client, "orders")
    assert url == retsu_reset.queue_url("orders")
    sent = sqs_client.send_message(QueueUrl=url, MessageBody="hello", MessageAttributes={
        "kind": {"DataType": "String", "StringValue": "greeting"}})
    got = receive(sqs_client, url, MessageAttributeNames=["All"])
    assert [m["MessageId"] for m in got] == [sent["MessageId"]]
    assert got[0]["Body"] == "hello"
    assert got[0]["MessageAttributes"]["kind"]["StringValue"] == "greeting"
    sqs_client.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
    assert retsu_reset.peek("orders") == []


@pytest.mark.retsu_frozen_clock
def test_visibility_timeout_by_the_clock(retsu_reset, sqs_client):
    url = make_queue(sqs_client, "jobs", VisibilityTimeout=30)
    sqs_client.send_message(QueueUrl=url, MessageBody="work")
    first = receive(sqs_client, url)
    assert first[0]["Attributes"]["ApproximateReceiveCount"] == "1"

    retsu_reset.clock.advance(29)
    assert receive(sqs_client, url) == [], "still in flight one second before its deadline"

    retsu_reset.clock.advance(2)
    again = receive(sqs_client, url)
    assert [m["MessageId"] for m in again] == [first[0]["MessageId"]]
    assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2"


@pytest.mark.retsu_frozen_clock
def test_dead_letter_queue_by_receives_alone(retsu_reset, sqs_client):
    dlq = make_queue(sqs_client, "jobs-dlq")
    dlq_arn = sqs_client.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    url = make_queue(
        sqs_client, "jobs", VisibilityTimeout=10,
        RedrivePolicy=json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 2}),
    )
    message_id = sqs_client.send_message(QueueUrl=url, MessageBody="poison")["MessageId"]

    for count in (1, 2):
        got = receive(sqs_client, url)
        assert got[0]["Attributes"]["ApproximateReceiveCount"] == str(count)
        retsu_reset.clock.advance(11)
    # The receive after the last allowed one moves it to the DLQ.
    assert receive(sqs_client, url) == []
    moved = receive(sqs_client, dlq)
    assert [m["MessageId"] for m in moved] == [message_id]
    assert moved[0]["Body"] == "poison"

    kinds = [e["kind"] for e in retsu_reset.history(message_id)["events"]]
    assert kinds.count("received") == 3  # twice in jobs, once in jobs-dlq
    assert "dead_lettered" in kinds and "arrived_from_source" in kinds


@pytest.mark.retsu_frozen_clock
def test_peek_changes_nothing(retsu_reset, sqs_client):
    url = make_queue(sqs_client, "inbox", VisibilityTimeout=60)
    a = sqs_client.send_message(QueueUrl=url, MessageBody="a")["MessageId"]
    sqs_client.send_message(QueueUrl=url, MessageBody="b", DelaySeconds=30)
    held = sqs_client.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"][0]
    assert held["MessageId"] == a
    c = sqs_client.send_message(QueueUrl=url, MessageBody="c")["MessageId"]

    peeked = retsu_reset.peek("inbox")
    by_body = {m["body"]: m for m in peeked}
    assert set(by_body) == {"a", "b", "c"}
    assert by_body["a"]["state"] == "inflight" and by_body["a"]["receive_count"] == 1
    assert by_body["b"]["state"] == "delayed" and by_body["b"]["receive_count"] == 0
    assert by_body["c"]["state"] == "available" and by_body["c"]["receive_count"] == 0
    assert by_body["c"]["message_id"] == c
    assert retsu_reset.peek(url) == peeked, "peek by queue URL, and twice the same"
    assert [m["body"] for m in retsu_reset.peek("inbox", state="available")] == ["c"]

    # Through SQS: peeking moved nothing and counted no receive.
    attrs = sqs_client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "1"
    assert attrs["ApproximateNumberOfMessagesNotVisible"] == "1"
    assert attrs["ApproximateNumberOfMessagesDelayed"] == "1"
    got = receive(sqs_client, url)
    assert [(m["MessageId"], m["Attributes"]["ApproximateReceiveCount"]) for m in got] == [(c, "1")]


@pytest.mark.retsu_frozen_clock
def test_frozen_clock_stands_still(retsu_reset):
    before = retsu_reset.clock.now()
    assert retsu_reset.clock.status()["frozen"] is True
    retsu_reset.clock.advance(90)
    assert (retsu_reset.clock.now() - before).total_seconds() == 90
    retsu_reset.clock.resume()
    assert retsu_reset.clock.status()["frozen"] is False


def test_reset_leaves_nothing_behind_part_1(retsu_reset, sqs_client):
    url = make_queue(sqs_client, "leftover")
    sqs_client.send_message(QueueUrl=url, MessageBody="x")
    retsu_reset.clock.freeze()


def test_reset_leaves_nothing_behind_part_2(retsu_reset, sqs_client):
    # Runs after part 1 (file order): its queue, message and frozen clock are gone.
    assert sqs_client.list_queues().get("QueueUrls", []) == []
    assert retsu_reset.clock.status()["frozen"] is False


def test_reset_within_a_test(retsu_reset, sqs_client):
    url = make_queue(sqs_client, "a")
    sqs_client.send_message(QueueUrl=url, MessageBody="x")
    assert retsu_reset.reset("a")["messages_removed"] == 1
    assert retsu_reset.peek("a") == []
    answer = retsu_reset.reset()
    assert answer["queues_deleted"] == 1
    assert sqs_client.list_queues().get("QueueUrls", []) == []


def test_one_server_for_the_session(retsu, retsu_reset):
    assert retsu is retsu_reset and retsu.running
    assert retsu.endpoint_url.startswith("http://127.0.0.1:")
    assert retsu.region == "us-east-1" and retsu.account_id == "000000000000"
    assert retsu.health()["status"] == "ok"


def test_a_frozen_server_stays_frozen_across_reset():
    from retsu_sqs import Server

    with Server(frozen_clock=True, args=["--clock-start", "2026-01-01T00:00:00Z"]) as server:
        assert server.clock.now().isoformat() == "2026-01-01T00:00:00+00:00"
        server.clock.advance(3600)
        assert server.clock.now().isoformat() == "2026-01-01T01:00:00+00:00"
        server.reset()  # Retsu's reset sets the clock running; the wrapper freezes it again
        status = server.clock.status()
        assert status["frozen"] is True
        assert server.clock.now() == server.clock.now()
    assert not server.running
