"""Server(tls=True): boto3 over https:// trusting the CA Retsu made, plain
HTTP still answering on the same port, and the admin API as before."""

import boto3
import botocore.exceptions
import pytest

from retsu_sqs import Server


@pytest.fixture
def tls_server(tmp_path):
    # The CA is kept in the data directory, so the test leaves no files in
    # the user's own directory.
    with Server(tls=True, data_dir=tmp_path) as server:
        yield server


def test_boto3_over_https_trusting_the_ca(tls_server, tmp_path):
    assert tls_server.endpoint_url.startswith("https://127.0.0.1:")
    assert tls_server.ca_bundle == str(tmp_path / "tls" / "ca.pem")
    kwargs = tls_server.client_kwargs
    assert kwargs["verify"] == tls_server.ca_bundle
    sqs = boto3.client("sqs", **kwargs)
    url = sqs.create_queue(QueueName="sealed")["QueueUrl"]
    assert url == tls_server.queue_url("sealed")
    assert url.startswith("https://")
    sqs.send_message(QueueUrl=url, MessageBody="over tls")
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)["Messages"]
    assert got[0]["Body"] == "over tls"
    # The admin API answers as before.
    assert tls_server.peek("sealed")[0]["body"] == "over tls"

    # SNS too, with the same CA.
    sns = boto3.client("sns", **kwargs)
    topic = sns.create_topic(Name="news")["TopicArn"]
    assert sns.list_topics()["Topics"] == [{"TopicArn": topic}]


def test_plain_http_still_answers_on_the_same_port(tls_server):
    plain = tls_server.endpoint_url.replace("https://", "http://", 1)
    sqs = boto3.client("sqs", **{**tls_server.client_kwargs, "endpoint_url": plain, "verify": None})
    url = sqs.create_queue(QueueName="clear")["QueueUrl"]
    assert url == f"{plain}/{tls_server.account_id}/clear"


def test_a_client_that_does_not_trust_the_ca_is_refused(tls_server):
    kwargs = {k: v for k, v in tls_server.client_kwargs.items() if k != "verify"}
    sqs = boto3.client("sqs", **kwargs)
    with pytest.raises(botocore.exceptions.SSLError):
        sqs.list_queues()
