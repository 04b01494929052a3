"""Retsu, the Amazon SQS emulator, for Python test suites.

    from retsu_sqs import Server

    with Server(frozen_clock=True) as retsu:
        sqs = boto3.client("sqs", **retsu.client_kwargs)
        ...
        retsu.clock.advance(31)

The wheel carries the ``retsu`` binary; the pytest plugin (fixtures ``retsu``,
``retsu_reset``, ``sqs_client``) is registered through the ``pytest11`` entry
point.
"""

from ._errors import AdminError, BinaryNotFoundError, RetsuError, ServerStoppedError, StartError
from ._locate import find_retsu_bin
from ._server import Clock, Server
from ._version import __version__

__all__ = [
    "AdminError",
    "BinaryNotFoundError",
    "Clock",
    "RetsuError",
    "Server",
    "ServerStoppedError",
    "StartError",
    "find_retsu_bin",
    "__version__",
]
