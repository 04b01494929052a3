"""The errors retsu_sqs raises. Every one is a :class:`RetsuError`, itself a
:class:`RuntimeError`; a missing binary is also a :class:`FileNotFoundError`."""

from __future__ import annotations

from typing import Optional, Sequence


class RetsuError(RuntimeError):
    """Base class of every error retsu_sqs raises."""


class BinaryNotFoundError(RetsuError, FileNotFoundError):
    """No usable ``retsu`` binary: ``looked`` lists every place tried, each
    with why it did not do."""

    def __init__(self, looked: Sequence[str]):
        self.looked = list(looked)
        lines = "\n".join(f"  - {place}" for place in self.looked)
        super().__init__(
            "cannot find a usable retsu binary; looked in:\n"
            f"{lines}\n"
            "Reinstall the retsu-sqs wheel, or set RETSU_BIN to the path of a retsu binary."
        )

    def __str__(self) -> str:  # OSError's __str__ would show errno fields
        return self.args[0]


class StartError(RetsuError):
    """The server did not come up: it exited before its ready line, or did not
    print it in time (it is then killed). Carries the exit code (``None`` on a
    timeout) and the last lines of its standard error."""

    def __init__(self, cause: str, exit_code: Optional[int], stderr_tail: Sequence[str], command: Sequence[str]):
        self.cause = cause
        self.exit_code = exit_code
        self.stderr_tail = list(stderr_tail)
        self.command = list(command)
        text = f"retsu did not start: {cause}"
        if exit_code is not None:
            text += f" (exit code {exit_code})"
        text += "\ncommand: " + " ".join(self.command)
        if self.stderr_tail:
            text += "\nlast lines of its stderr:\n" + "\n".join(f"  {line}" for line in self.stderr_tail)
        else:
            text += "\n(it wrote nothing to stderr)"
        super().__init__(text)


class ServerStoppedError(RetsuError):
    """An admin call was made on a server that was stopped or that exited."""


class AdminError(RetsuError):
    """The admin API answered with an error (non-2xx): ``status`` is the HTTP
    status, ``code`` and ``message`` come from its JSON error."""

    def __init__(self, method: str, path: str, status: int, code: str, message: str):
        self.method = method
        self.path = path
        self.status = status
        self.code = code
        self.message = message
        super().__init__(f"{method} {path} answered {status} {code}: {message}")
