"""Handlers the Lambda tests (tests/lambda.rs) run under AWS's runtime
interface emulator through awslambdaric.

Each batch handler parses every record with AWS Lambda Powertools'
SqsRecordModel, so a record Retsu builds that Powertools would refuse
fails the batch. When LAMBDA_LOG names a file, each invocation appends
one line: the message bodies it was given, in order.
"""

import json
import os

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.parser.models import SqsRecordModel
from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import SqsModel


def _log(event):
    path = os.environ.get("LAMBDA_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps([r["body"] for r in event["Records"]]) + "\n")


def _fail_marked(record: SqsRecordModel):
    if record.body.startswith("fail"):
        raise ValueError(f"refused {record.body}")


processor = BatchProcessor(event_type=EventType.SQS, model=SqsRecordModel)


def partial(event, context):
    """Powertools' BatchProcessor: bodies starting with "fail" fail."""
    _log(event)
    return process_partial_response(
        event=event, record_handler=_fail_marked, processor=processor, context=context
    )


def ok(event, context):
    """Validates the whole event with Powertools' SqsModel and succeeds."""
    _log(event)
    parse(event=event, model=SqsModel)
    return {"batchItemFailures": []}


def always_fail(event, context):
    _log(event)
    raise RuntimeError("this handler always fails")


def stranger(event, context):
    """Reports a message that was not in the batch."""
    _log(event)
    return {"batchItemFailures": [{"itemIdentifier": "not-a-message-of-the-batch"}]}




def hang(event, context):
    """Outlives any timeout a test gives its function."""
    import time

    _log(event)
    time.sleep(5)
    return {}
