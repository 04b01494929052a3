"""--auth with boto3 (the venv decides the protocol): the right key works,
a wrong secret gets SignatureDoesNotMatch, an unknown key
and InvalidClientTokenId. Prints "all ok" or why not.

    python auth_check.py http://127.0.0.1:9324
"""
import sys
import urllib.error
import urllib.request

import boto3
import botocore
from botocore.exceptions import ClientError

endpoint = sys.argv[1]
KEY, SECRET, ACCOUNT = "AKIDCOMPAT", "compat/secret+1", "123456789012"


def client(key, secret):
    return boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret,
                        config=botocore.config.Config(retries={"max_attempts": 1}))


def code_of(call):
    try:
        call()
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
    return None, 200


good = client(KEY, SECRET)
name = "auth-boto3-" + botocore.__version__.replace(".", "-")
url = good.create_queue(QueueName=name)["QueueUrl"]
assert f"/{ACCOUNT}/{name}" in url, url
good.send_message(QueueUrl=url, MessageBody="a+b c/d=é")
got = good.receive_message(QueueUrl=url, MaxNumberOfMessages=1)["Messages"]
assert got[0]["Body"] == "a+b c/d=é", got
good.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])

wrong = code_of(lambda: client(KEY, "wrong").list_queues())
assert wrong == ("SignatureDoesNotMatch", 403), wrong
unknown = code_of(lambda: client("AKIDNOBODY", SECRET).list_queues())
assert unknown == ("InvalidClientTokenId", 403), unknown
unsigned = code_of(lambda: boto3.client(
    "sqs", endpoint_url=endpoint, region_name="us-east-1",
    config=botocore.config.Config(signature_version=botocore.UNSIGNED)).list_queues())
assert unsigned == ("MissingAuthenticationToken", 403), unsigned

protocol = good.meta.service_model.protocol
if protocol == "query":
    # A presigned URL signs the HTTP method too. botocore signs for the
    # operation's own method (POST for the query protocol) unless told
    # otherwise, so its default URL works POSTed and is refused as a GET,
    # as AWS refuses it; one signed for GET works as a GET.
    def fetch(url, method):
        req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
        try:
            with urllib.request.urlopen(req) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    posted = good.generate_presigned_url("list_queues", Params={"QueueNamePrefix": name})
    status, body = fetch(posted, "POST")
    assert status == 200 and url in body, (status, body)
    status, body = fetch(posted, "GET")
    assert status == 403 and "SignatureDoesNotMatch" in body, (status, body)
    for params in ({}, {"QueueNamePrefix": name}):
        got = good.generate_presigned_url("list_queues", Params=params, HttpMethod="GET")
        status, body = fetch(got, "GET")
        assert status == 200 and url in body, (params, status, body)
    forged = got.replace("X-Amz-Signature=", "X-Amz-Signature=0")[:len(got)]
    status, body = fetch(forged, "GET")
    assert status == 403 and "SignatureDoesNotMatch" in body, (status, body)
# The JSON protocol cannot be presigned for a browser or curl: its signature
# covers the Content-Type and X-Amz-Target headers, which a plain GET lacks.
good.delete_queue(QueueUrl=url)
print("all ok", protocol, botocore.__version__)
