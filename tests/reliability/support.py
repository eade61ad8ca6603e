"""Shared helpers of the reliability suite: the canary key, subprocess faces, output checks.

Every subprocess gets a clean environment (no PETSTORE_* from the caller, its
own XDG dirs), the canary as its API key, and small time budgets, so no fault
can make it wait long: ``PETSTORE_HTTP__TIMEOUT=2``, ``RETRY_AFTER_CAP=1``.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CANARY = "sk-CANARY-7f3a9b2c4d5e6f70"
MASKED = "sk-...6f70"
#: A hang guard for every subprocess; no fault may come near it.
HANG_GUARD = 30

#: Characters that must never reach a terminal from service data: C0 (but newline), DEL, C1, bidi controls.
FORBIDDEN = frozenset(
    [chr(c) for c in range(0x20) if c != 0x0A]
    + ["\x7f"]
    + [chr(c) for c in range(0x80, 0xA0)]
    + [chr(c) for c in (0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0xFEFF)]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
)

#: A request log line of ``-v`` (logging's default asctime, then the logger name).
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} petstore_api (DEBUG|INFO|WARNING) ")


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without petstore settings, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "NO_COLOR", "FORCE_COLOR"))}
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        COLUMNS="100",
        PYTHONIOENCODING="utf-8",
        PETSTORE_API_KEY=CANARY,
        PETSTORE_HTTP__TIMEOUT="2",
        PETSTORE_HTTP__RETRY_AFTER_CAP="1",
    )
    env.update(extra)
    return env


@dataclass(frozen=True)
class Ran:
    """A finished subprocess, output decoded as strict UTF-8 (a stray raw byte fails the decode)."""

    args: tuple[str, ...]
    code: int
    out: str
    err: str

    @property
    def everything(self) -> str:
        return self.out + self.err


def petstore(tmp_path: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> Ran:
    """``python -m petstore_cli ARGS`` with ``stdin`` piped in; bounded by HANG_GUARD."""
    proc = subprocess.run(
        [sys.executable, "-m", "petstore_cli", *args],
        cwd=ROOT,
        input=stdin.encode(),
        capture_output=True,
        timeout=HANG_GUARD,
        env=env if env is not None else clean_env(tmp_path),
    )
    return Ran(args=tuple(args), code=proc.returncode, out=proc.stdout.decode("utf-8"), err=proc.stderr.decode("utf-8"))


def read_until(proc: subprocess.Popen, pattern: str, *, timeout: float = 30.0) -> str:
    """What ``proc`` wrote on stdout up to a match of the regex ``pattern`` (bounded by ``timeout``).

    Reads the pipe itself (``os.read``): a buffered ``readline`` may take in lines that ``select`` then
    never reports.
    """
    assert proc.stdout is not None
    fd, seen = proc.stdout.fileno(), b""
    deadline = time.monotonic() + timeout
    while not re.search(pattern, seen.decode("utf-8", "replace")):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 65536) if ready else b""
        assert chunk, f"no {pattern!r} on stdout within {timeout:g} s; it wrote {seen[-400:]!r}"
        seen += chunk
    return seen.decode("utf-8", "replace")


def assert_terminal_safe(text: str) -> None:
    """No raw control, C1 or bidi character (hence no escape sequence) in ``text``."""
    found = sorted({f"U+{ord(c):04X}" for c in text if c in FORBIDDEN})
    assert not found, f"raw control characters reached the output: {found}"


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        assert CANARY not in text, "the API key leaked"
        assert "7f3a9b2c4d5e" not in text, "part of the API key leaked"


def assert_no_traceback(*texts: str) -> None:
    for text in texts:
        assert "Traceback" not in text and 'File "' not in text, text[-2000:]


async def all_pets(base_url: str) -> list[dict]:
    """Every pet the service at ``base_url`` holds, as sent (pages of 100 followed via Link)."""
    from petstore_api import PetStoreClient

    async with PetStoreClient(base_url=base_url, api_key=CANARY) as client:
        return [raw async for page in client.iter_pages(limit=100) for raw in page.raw]


async def named(base_url: str, name: str) -> list[dict]:
    return [pet for pet in await all_pets(base_url) if pet["name"] == name]
