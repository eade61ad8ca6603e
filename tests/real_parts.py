"""The one rule for a test whose real part (a server, a browser, a shell, a kernel feature) cannot be had, and the one
way such a part started by a test is stopped.

Under ``CI=true`` a missing part is a failure that says why (CI installs every part: a skip there would hide a
broken set-up); elsewhere the test is skipped, saying why and how to get the part.
"""

from __future__ import annotations

import os
import signal
import subprocess
from typing import NoReturn

import pytest

__all__ = ["stop_by_pid", "unavailable"]


def unavailable(message: str) -> NoReturn:
    """Fail (``CI=true``) or skip the test, with ``message`` as its one line."""
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def stop_by_pid(process: subprocess.Popen[bytes] | None, *, grace: float) -> None:
    """End a server the test started: SIGTERM by its PID, SIGKILL when it has not ended within ``grace`` seconds."""
    if process is None or process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
