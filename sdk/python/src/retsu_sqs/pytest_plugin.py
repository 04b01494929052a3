"""pytest plugin (entry point ``pytest11``): fixtures ``retsu``, ``retsu_reset``
and ``sqs_client``.

ini options (pytest.ini / pyproject ``[tool.pytest.ini_options]``):
  retsu_frozen_clock  start the session's server with its clock frozen
  retsu_args          extra command-line arguments for retsu
  retsu_config        a configuration file (--config)
  retsu_start_timeout seconds to wait for the server (default 10)
  retsu_tls           start the session's server with --tls (https:// endpoint,
                      sqs_client trusting Retsu's CA)
marker:
  @pytest.mark.retsu_frozen_clock  retsu_reset freezes the clock after its reset
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from ._server import Server


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("retsu_frozen_clock", "start the retsu fixture's server with its clock frozen", type="bool", default=False)
    parser.addini("retsu_args", "extra command-line arguments for the retsu fixture's server", type="args", default=[])
    parser.addini("retsu_config", "configuration file (TOML) for the retsu fixture's server", default="")
    parser.addini("retsu_start_timeout", "seconds the retsu fixture waits for its server", default="10")
    parser.addini("retsu_tls", "start the retsu fixture's server with --tls (an https:// endpoint)", type="bool", default=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "retsu_frozen_clock: the retsu_reset fixture freezes the server's clock after resetting it"
    )


@pytest.fixture(scope="session")
def retsu(pytestconfig: pytest.Config) -> Iterator[Server]:
    """One Retsu server for the test session (one per pytest-xdist worker)."""
    config = pytestconfig.getini("retsu_config") or None
    with Server(
        frozen_clock=pytestconfig.getini("retsu_frozen_clock"),
        args=pytestconfig.getini("retsu_args"),
        config=config,
        start_timeout=float(pytestconfig.getini("retsu_start_timeout")),
        tls=pytestconfig.getini("retsu_tls"),
    ) as server:
        yield server


@pytest.fixture
def retsu_reset(retsu: Server, request: pytest.FixtureRequest) -> Server:
    """The session's server, reset (no queues, no messages, fresh clock) before the test."""
    retsu.reset()
    if request.node.get_closest_marker("retsu_frozen_clock") is not None:
        retsu.clock.freeze()
    return retsu


@pytest.fixture(scope="session")
def _retsu_boto3_session() -> Any:
    try:
        import boto3
    except ImportError:
        pytest.skip("the sqs_client fixture needs boto3: pip install boto3 (or 'retsu-sqs[boto3]')")
    return boto3.session.Session()


@pytest.fixture
def sqs_client(_retsu_boto3_session: Any, retsu: Server) -> Any:
    """A boto3 SQS client pointed at the session's server (not reset: ask for
    retsu_reset too for a clean server)."""
    return _retsu_boto3_session.client("sqs", **retsu.client_kwargs)
