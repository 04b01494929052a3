"""One Retsu server process, started on a free loopback port, and its admin API."""

from __future__ import annotations

import collections
import datetime as _dt
import json
import os
import re
import shlex
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Deque, Dict, List, Mapping, Optional, Sequence, Union

from ._errors import AdminError, RetsuError, ServerStoppedError, StartError
from ._locate import check_binary, find_retsu_bin

__all__ = ["Server", "Clock"]

DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT = "000000000000"
READY = re.compile(r"^retsu ready (https?://\S+)$")
# Printed before the ready line with --tls: the https:// endpoint and, when
# Retsu made the certificate, the CA file to trust.
TLS = re.compile(r"^retsu tls (https://\S+)(?: (.+))?$")
STDERR_LINES = 20
STOP_WAIT_SECONDS = 5.0

# Server settings read from the environment that would change how this
# wrapper talks to the child; they go through args= or config= instead.
_KEEP_ENV = {"RETSU_LOG_LEVEL", "RETSU_LOG_FORMAT"}

# Admin calls go straight to the loopback port, whatever HTTP(S)_PROXY says.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

PathLike = Union[str, "os.PathLike[str]"]


def _flag_value(args: Sequence[str], flag: str) -> Optional[str]:
    """The value of ``--flag V`` or ``--flag=V`` in args (the last one)."""
    value = None
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(flag + "="):
            value = a[len(flag) + 1 :]
    return value


def _has_flag(args: Sequence[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in args)


class Clock:
    """The server's clock (``/_retsu/clock``). Every change returns the clock's
    status: ``{"now_ms", "now", "frozen", "offset_ms"}``."""

    def __init__(self, server: "Server"):
        self._server = server

    def status(self) -> Dict[str, Any]:
        return self._server._admin("GET", "/_retsu/clock")

    def now(self) -> _dt.datetime:
        """The server's current time, as an aware UTC datetime."""
        ms = self.status()["now_ms"]
        return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc)

    def freeze(self) -> Dict[str, Any]:
        return self._server._admin("POST", "/_retsu/clock", {"freeze": True})

    def resume(self) -> Dict[str, Any]:
        return self._server._admin("POST", "/_retsu/clock", {"resume": True})

    def advance(self, seconds: Union[int, float, _dt.timedelta]) -> Dict[str, Any]:
        """Move the clock forward by ``seconds`` (a number or a timedelta),
        firing everything that falls due (visibility timeouts, delays, ...)."""
        if isinstance(seconds, _dt.timedelta):
            seconds = seconds.total_seconds()
        ms = round(float(seconds) * 1000)
        if ms < 0:
            raise ValueError(f"the clock never goes backwards: advance({seconds!r})")
        return self._server._admin("POST", "/_retsu/clock", {"advance": ms})

    def set(self, when: Union[_dt.datetime, str]) -> Dict[str, Any]:
        """Put the clock at ``when`` (a datetime, naive meaning UTC, or RFC 3339
        text); never backwards."""
        if isinstance(when, _dt.datetime):
            if when.tzinfo is None:
                when = when.replace(tzinfo=_dt.timezone.utc)
            when = when.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        return self._server._admin("POST", "/_retsu/clock", {"set": when})


class Server:
    """A Retsu server on a free loopback port, started at construction and
    stopped by :meth:`stop` or on leaving a ``with`` block.

    ``frozen_clock`` starts it with ``--clock frozen``; ``args`` are extra
    command-line arguments (a sequence, or one string split like a shell);
    ``data_dir`` and ``config`` become ``--data-dir`` and ``--config``.
    ``tls=True`` starts it with ``--tls``: :attr:`endpoint_url` is then
    ``https://…`` and :attr:`ca_bundle` the certificate authority to trust
    (in ``data_dir``, else Retsu's per-user directory; ``client_kwargs``
    passes it as ``verify``); plain HTTP keeps answering on the same port.
    Start-up waits at most ``start_timeout`` seconds for Retsu's ready line.
    ``binary`` overrides the lookup (the wheel's own binary, else
    ``RETSU_BIN``, else ``PATH``); ``env`` replaces the child's environment
    (by default this process's, less the ``RETSU_*`` server settings other
    than the log ones, so that the wrapper alone decides how it is reached).

    Raises :class:`StartError` when the server exits before it is ready or is
    not ready in time, :class:`BinaryNotFoundError` when there is no binary.
    """

    def __init__(
        self,
        frozen_clock: bool = False,
        args: Union[Sequence[Any], str] = (),
        data_dir: Optional[PathLike] = None,
        config: Optional[PathLike] = None,
        start_timeout: float = 10.0,
        *,
        tls: bool = False,
        binary: Optional[PathLike] = None,
        env: Optional[Mapping[str, str]] = None,
    ):
        extra = shlex.split(args) if isinstance(args, str) else [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args]
        self.frozen_clock = bool(frozen_clock)
        self.region: str = _flag_value(extra, "--region") or DEFAULT_REGION
        self.account_id: str = _flag_value(extra, "--account-id") or DEFAULT_ACCOUNT
        self._admin_token = _flag_value(extra, "--admin-token")
        self.clock = Clock(self)
        self.endpoint_url: str = ""
        # With tls=True: the CA file to trust for the https endpoint.
        self.ca_bundle: Optional[str] = None
        # Plain HTTP on the same port, for the admin calls.
        self._http_url: str = ""
        self._https: Optional[tuple] = None
        self.returncode: Optional[int] = None

        self.binary = check_binary(os.fspath(binary)) if binary is not None else find_retsu_bin()
        command = [self.binary]
        if not _has_flag(extra, "--host"):
            command += ["--host", "127.0.0.1"]
        if not _has_flag(extra, "--port"):
            command += ["--port", "0"]
        if not _has_flag(extra, "--exit-on-stdin-close"):
            command.append("--exit-on-stdin-close")
        if self.frozen_clock and not _has_flag(extra, "--clock"):
            command += ["--clock", "frozen"]
        if data_dir is not None:
            command += ["--data-dir", os.fspath(data_dir)]
        if config is not None:
            command += ["--config", os.fspath(config)]
        if tls and not _has_flag(extra, "--tls"):
            command.append("--tls")
        command += extra
        self.command: List[str] = command

        if env is None:
            env = {k: v for k, v in os.environ.items() if not k.startswith("RETSU_") or k in _KEEP_ENV}

        self._lock = threading.Lock()
        self._stopped = False
        self._ready = threading.Event()  # set on the ready line or on stdout's end
        self._stderr: Deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._stdout_before_ready: Deque[str] = collections.deque(maxlen=STDERR_LINES)
        try:
            # stdin is a pipe kept open and never written: when this process
            # dies, even by SIGKILL, it closes and retsu exits at once.
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env),
                close_fds=True,
            )
        except OSError as e:
            self._stopped = True
            raise StartError(f"cannot run {self.binary}: {e}", None, [], command) from e
        self._threads = [
            threading.Thread(target=self._read_stdout, name=f"retsu-stdout-{self._proc.pid}", daemon=True),
            threading.Thread(target=self._read_stderr, name=f"retsu-stderr-{self._proc.pid}", daemon=True),
        ]
        for t in self._threads:
            t.start()
        self._wait_ready(start_timeout)

    # --- process ---------------------------------------------------------

    def _read_stdout(self) -> None:
        assert self._proc.stdout is not None
        for raw in iter(self._proc.stdout.readline, b""):
            if self._ready.is_set():
                continue  # keep draining so the child never blocks
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            tls = TLS.match(line)
            if tls:
                self._https = (tls.group(1).rstrip("/"), tls.group(2))
                continue
            match = READY.match(line)
            if match:
                self._http_url = match.group(1).rstrip("/")
                if self._https is not None:
                    self.endpoint_url, self.ca_bundle = self._https
                else:
                    self.endpoint_url = self._http_url
                self._ready.set()
            else:
                self._stdout_before_ready.append(line)
        self._ready.set()

    def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        for raw in iter(self._proc.stderr.readline, b""):
            self._stderr.append(raw.decode("utf-8", "replace").rstrip("\r\n"))

    def _wait_ready(self, timeout: float) -> None:
        self._ready.wait(timeout)
        if self.endpoint_url:
            return
        if not self._ready.is_set():
            cause = f"no ready line within {timeout:g} s; killed it"
            self._proc.kill()
        else:
            cause = "it exited before printing its ready line"
        try:
            self._proc.wait(STOP_WAIT_SECONDS)
        except subprocess.TimeoutExpired:  # stdout closed, yet still running
            cause = "it closed its stdout before printing its ready line; killed it"
            self._proc.kill()
            self._proc.wait()
        self._finish()
        tail = list(self._stderr) or [f"(stdout) {line}" for line in self._stdout_before_ready]
        raise StartError(cause, self._proc.returncode, tail, self.command)

    def _finish(self) -> None:
        self._stopped = True
        for t in self._threads:
            t.join(2.0)
        for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        self.returncode = self._proc.returncode

    def stop(self) -> None:
        """Stop the server: close its stdin and send SIGTERM, wait up to 5 s,
        then SIGKILL. Idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        proc = self._proc
        if proc.poll() is None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
            try:
                proc.terminate()
            except OSError:
                pass
            try:
                proc.wait(STOP_WAIT_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._finish()

    close = stop

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def port(self) -> int:
        return urllib.parse.urlsplit(self.endpoint_url).port or 80

    @property
    def running(self) -> bool:
        return not self._stopped and self._proc.poll() is None

    @property
    def stderr_tail(self) -> List[str]:
        """The last lines Retsu wrote to its standard error."""
        return list(self._stderr)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<retsu_sqs.Server {self.endpoint_url or '-'} pid={self._proc.pid} {state}>"

    # --- SQS side --------------------------------------------------------

    def queue_url(self, name: str) -> str:
        return f"{self.endpoint_url}/{self.account_id}/{name}"

    @property
    def client_kwargs(self) -> Dict[str, str]:
        """Keyword arguments for ``boto3.client("sqs", **kw)`` or aiobotocore's
        ``session.create_client("sqs", **kw)`` (with ``tls=True``, ``verify``
        names the CA to trust)."""
        kwargs = {
            "endpoint_url": self.endpoint_url,
            "region_name": self.region,
            "aws_access_key_id": "test",
            "aws_secret_access_key": "test",
        }
        if self.ca_bundle:
            kwargs["verify"] = self.ca_bundle
        return kwargs

    # --- admin API -------------------------------------------------------

    def _check_running(self) -> None:
        if self._stopped:
            raise ServerStoppedError(
                f"the retsu server that was at {self.endpoint_url or '(never started)'} is stopped; "
                "start a new retsu_sqs.Server"
            )
        code = self._proc.poll()
        if code is not None:
            tail = "\n".join(f"  {line}" for line in self._stderr)
            raise ServerStoppedError(
                f"the retsu server at {self.endpoint_url} exited with code {code}"
                + (f"; last lines of its stderr:\n{tail}" if tail else "")
            )

    def _admin(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None) -> Any:
        self._check_running()
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self._admin_token:
            headers["Authorization"] = f"Bearer {self._admin_token}"
        request = urllib.request.Request(self._http_url + path, data=data, method=method, headers=headers)
        try:
            with _OPENER.open(request, timeout=30) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            code, message = "HTTPError", raw.decode("utf-8", "replace")
            try:
                err = json.loads(raw)["error"]
                code, message = err.get("code", code), err.get("message", message)
            except (ValueError, KeyError, TypeError):
                pass
            raise AdminError(method, path, e.code, code, message) from None
        except (urllib.error.URLError, OSError) as e:
            self._check_running()
            raise RetsuError(f"{method} {self._http_url}{path} failed: {getattr(e, 'reason', e)}") from e
        return json.loads(raw) if raw.strip() else None

    def _queue_path(self, queue: str) -> str:
        """A queue given by name or by URL, as region/account/name."""
        region, account, name = self.region, self.account_id, queue
        if "://" in queue:
            parts = [p for p in urllib.parse.urlsplit(queue).path.split("/") if p]
            if len(parts) == 4 and parts[0] == "queue":
                region, account, name = parts[1:]
            elif len(parts) >= 2:
                account, name = parts[-2:]
            else:
                raise ValueError(f"not a queue URL: {queue!r}")
        q = urllib.parse.quote
        return f"{q(region, safe='')}/{q(account, safe='')}/{q(name, safe='')}"

    def health(self) -> Dict[str, Any]:
        """``GET /_retsu/health``: version, uptime, queue count and clock."""
        return self._admin("GET", "/_retsu/health")

    def peek(self, queue_name: str, state: str = "all", limit: int = 10000) -> List[Dict[str, Any]]:
        """The queue's messages as they are (nothing changes: no receive count,
        no visibility): a list of dicts with the admin API's fields
        ``message_id``, ``state`` (available/inflight/delayed),
        ``receive_count``, ``body``, ``message_attributes``, ``visible_at_ms``,
        ``sent_ms``, ``group_id``, ``dead_letter_source_arn``, ..."""
        query = urllib.parse.urlencode({"state": state, "limit": limit})
        answer = self._admin("GET", f"/_retsu/queues/{self._queue_path(queue_name)}/messages?{query}")
        return answer["messages"]

    def history(self, message_id: str) -> Dict[str, Any]:
        """A message's whole life: ``{"message_id", "events": [...],
        "truncated", "current"}`` (``current`` is its peek, or None once gone)."""
        return self._admin("GET", f"/_retsu/messages/{urllib.parse.quote(message_id, safe='')}")

    def reset(self, queue_name: Optional[str] = None) -> Dict[str, Any]:
        """Delete every queue and message (or empty one queue). A server
        started with ``frozen_clock=True`` has its clock frozen again after
        it (Retsu's reset sets the clock running)."""
        if queue_name is None:
            answer = self._admin("POST", "/_retsu/reset")
        else:
            answer = self._admin("POST", f"/_retsu/queues/{self._queue_path(queue_name)}/reset")
        if self.frozen_clock:
            self.clock.freeze()
        return answer
