"""Handlers the SNS-to-Lambda tests (tests/lambda_sns.rs) run under AWS's
runtime interface emulator through awslambdaric.

Each parses the whole event with AWS Lambda Powertools' SnsModel, so an
event Retsu builds that Powertools would refuse fails the invocation.
When LAMBDA_LOG names a file, each invocation appends one line: the
event as it arrived.
"""

import json
import os

from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import SnsModel


def _log(event):
    path = os.environ.get("LAMBDA_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(event) + "\n")


def ok(event, context):
    _log(event)
    parse(event=event, model=SnsModel)
    return None


def always_fail(event, context):
    _log(event)
    parse(event=event, model=SnsModel)
    raise RuntimeError("this handler always fails")
