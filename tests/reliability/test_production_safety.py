"""Production safety through the CLI, against a real service: --read-only, confirmation, --yes.

tests/faces/test_run_subprocess.py covers ``run --read-only --json`` and
``run --env production`` with and without ``--yes``; this adds the human
output, the environment variable, the combinations, and chat (piped, and on a
terminal where it asks y/N), each checking that nothing was created.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from .support import HANG_GUARD, ROOT, assert_no_secret, assert_no_traceback, clean_env, named, petstore

pytestmark = pytest.mark.slow


def _name() -> str:
    return f"Safe-{uuid.uuid4().hex[:8]}"


def _count(url: str, name: str) -> int:
    return len(asyncio.run(named(url, name)))


def _prod(tmp_path: Path, url: str, **extra: str) -> dict[str, str]:
    return clean_env(tmp_path, PETSTORE_PRODUCTION__BASE_URL=url, **extra)


def test_read_only_from_the_environment_refuses_with_one_line(service, tmp_path: Path) -> None:
    url, name = service[0], _name()
    env = clean_env(tmp_path, PETSTORE_READ_ONLY="1")
    ran = petstore(tmp_path, "run", "--base-url", url, "-c", "/list", "-c", f"/add {name} --category 1", env=env)
    assert ran.code == 2
    assert ran.err.splitlines() == [
        f"-c 2: error: refused to add pet '{name}' (category 1); "
        "nothing was sent (read-only from --read-only, PETSTORE_READ_ONLY or read_only in the config)"
    ]
    assert _count(url, name) == 0


def test_read_only_wins_over_yes_on_production(service, tmp_path: Path) -> None:
    url, name = service[0], _name()
    ran = petstore(
        tmp_path,
        "run",
        "--env",
        "production",
        "--read-only",
        "--yes",
        "--json",
        "--keep-going",
        "-c",
        f"/add {name} --category 1",
        "-c",
        "/env",
        env=_prod(tmp_path, url),
    )
    add, env = (json.loads(line) for line in ran.out.splitlines())
    assert ran.code == 2 and add["error"]["code"] == "read_only" and add["error"]["status"] == 0
    assert env["result"]["env"] == "production" and env["result"]["read_only"] is True
    assert _count(url, name) == 0


def test_production_reads_need_no_confirmation_and_writes_need_yes(service, tmp_path: Path) -> None:
    url, name = service[0], _name()
    ran = petstore(
        tmp_path,
        "run",
        "--env",
        "production",
        "--keep-going",
        "-c",
        "/list",
        "-c",
        f"/add {name} --category 1",
        env=_prod(tmp_path, url),
    )
    assert ran.code == 2 and ran.out.rstrip().endswith("pets")  # the /list ran
    assert ran.err.splitlines() == [
        f"-c 2: error: refused to add pet '{name}' (category 1) on production without "
        "confirmation (petstore run needs --yes)"
    ]
    assert _count(url, name) == 0
    ran = petstore(
        tmp_path, "run", "--env", "production", "--yes", "-c", f"/add {name} --category 1", env=_prod(tmp_path, url)
    )
    assert ran.code == 0 and _count(url, name) == 1


def test_piped_chat_on_production_refuses_writes_and_goes_on(service, tmp_path: Path) -> None:
    url, name = service[0], _name()
    ran = petstore(
        tmp_path, "--env", "production", "chat", stdin=f"/add {name} --category 1\n/env\n", env=_prod(tmp_path, url)
    )
    assert ran.code == 0 and ran.err == ""
    lines = ran.out.splitlines()
    assert lines[0] == (
        f"error: refused to add pet '{name}' (category 1) on production without confirmation (petstore run needs --yes)"
    )
    assert lines[1].split() == ["environment", "production"]
    assert _count(url, name) == 0


def test_chat_read_only_flag(service, tmp_path: Path) -> None:
    url, name = service[0], _name()
    ran = petstore(tmp_path, "chat", "--base-url", url, "--read-only", stdin=f"/add {name} --category 1\n/env\n")
    assert ran.code == 0 and ran.out.splitlines()[0].startswith("error: refused to add pet")
    assert "read-only    yes" in ran.out and _count(url, name) == 0


# -- the chat on a terminal asks y/N --------------------------------------------------------


class Terminal:
    """``petstore chat`` on a pseudo-terminal: write lines, wait for text (bounded by HANG_GUARD)."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "petstore_cli", *args],
            cwd=ROOT,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
        )
        os.close(slave)
        self.seen = ""

    def expect(self, text: str) -> str:
        deadline = time.monotonic() + HANG_GUARD
        while text not in self.seen:
            ready, _, _ = select.select([self.master], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no {text!r} on the terminal; it shows: {self.seen[-600:]!r}"
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            assert chunk, f"the chat ended before {text!r}: {self.seen[-600:]!r}"
            self.seen += chunk.decode("utf-8", "replace")
        start = self.seen.index(text)
        shown, self.seen = self.seen[: start + len(text)], self.seen[start + len(text) :]
        return shown

    def send(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")

    def close(self) -> int:
        try:
            os.write(self.master, b"\x04")  # Ctrl-D at the prompt ends the chat
            code = self.proc.wait(timeout=HANG_GUARD)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)
        return code


def test_terminal_chat_on_production_asks_and_respects_the_answer(service, tmp_path: Path) -> None:
    url, no, yes = service[0], _name(), _name()
    term = Terminal(["--env", "production", "chat"], _prod(tmp_path, url, TERM="dumb"))
    try:
        term.expect("production> ")
        term.send(f"/add {no} --category 1")
        asked = term.expect("[y/N] ")
        assert f"add pet '{no}' (category 1) on PRODUCTION" in asked
        term.send("n")
        assert "declined" in term.expect("production> ")
        term.send(f"/add {yes} --category 1")
        term.expect("[y/N] ")
        term.send("y")
        assert "Added pet" in term.expect("production> ")
    finally:
        code = term.close()
    assert code == 0
    assert_no_traceback(term.seen)
    assert_no_secret(term.seen)
    assert _count(url, no) == 0 and _count(url, yes) == 1
