"""A Python handler tests/lambda_node.rs runs beside the Node.js one, so the
two runtimes' views of the same record can be compared.

When LAMBDA_LOG names a file, each invocation appends one line: the event
written back as JSON.stringify would write it (no spaces, non-ASCII
characters as they are), so the two logs compare byte for byte.
"""

import json
import os


def record(event, context):
    path = os.environ.get("LAMBDA_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n")
    return {"batchItemFailures": []}
