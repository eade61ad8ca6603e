"""The entry point for tests: ``petstore ARGS`` with a clean environment of its own, in this process
(:func:`petstore_main`, for tests of what a command does) or as a process (:func:`run_petstore`, for tests of the
process itself: signals, pipes, start-up), and ``petstore serve`` on an ephemeral loopback port (seeded), stopped by
PID at the end."""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This environment without petstore's settings or forced colours, config and data under ``home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "NO_COLOR", "FORCE_COLOR"))}
    env |= {"XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}
    return env | extra


@contextmanager
def serving(db: Path, env: dict[str, str]) -> Iterator[str]:
    """``petstore serve --db DB --seed`` on 127.0.0.1 (port 0) with ``env``; yields its base URL."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "petstore_cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--db",
            str(db),
            "--seed",
            "--no-access-log",  # stderr is a pipe read only at the end: access lines would fill it
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert "Serving the Pet Store API at " in line, proc.stderr.read() if proc.stderr else line
        yield line.split(" at ", 1)[1].split()[0]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


@contextmanager
def keyed_service(home: Path, key: str) -> Iterator[str]:
    """``petstore serve`` (seeded) in ``home`` (made if need be), accepting the API key ``key``: its base URL."""
    home.mkdir(parents=True, exist_ok=True)
    with serving(home / "pets.db", clean_env(home, PETSTORE_SERVER_API_KEYS=key)) as url:
        yield url


def run_petstore(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``petstore ARGS`` run to its end (60 s at most), its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "petstore_cli", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def petstore_main(
    *args: str, env: dict[str, str], stdin: str = "", cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """``petstore ARGS`` through :func:`petstore_cli.main.main` in this process, as :func:`run_petstore` runs it as
    one: ``env`` is the whole environment, stdin a pipe holding ``stdin``, stdout and stderr pipes read back as text
    (universal newlines, as ``text=True``), the exit code from the return or ``SystemExit``. Everything the run may
    change in the process is put back afterwards: the environment, the working directory, the standard streams,
    logging's handlers, warnings' filters and hook, the signal handlers."""
    from petstore_cli.main import main

    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    with _process_state(env=env, cwd=cwd):
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        sys.stdout, sys.stderr = stdout, stderr
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's --help, --version and usage errors
            code = _exit_code(exc)
    return subprocess.CompletedProcess(["petstore", *args], code, _text(stdout), _text(stderr))


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)  # as the interpreter does with a message
    return 1


def _text(stream: io.TextIOWrapper) -> str:
    """What ``subprocess.run(..., text=True)`` would have read from the pipe: newlines translated."""
    stream.flush()
    raw = stream.detach()
    assert isinstance(raw, io.BytesIO)
    return raw.getvalue().decode().replace("\r\n", "\n").replace("\r", "\n")


_LOGGERS = ("", "petstore_api")
_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGHUP)


@contextmanager
def _process_state(*, env: dict[str, str], cwd: Path) -> Iterator[None]:
    """The process-wide state a command may change, restored when the block ends."""
    environ, here, streams = dict(os.environ), os.getcwd(), (sys.stdin, sys.stdout, sys.stderr)
    loggers = [(logging.getLogger(n), logging.getLogger(n).handlers[:]) for n in _LOGGERS]
    settings = [(lg, lg.level, lg.propagate) for lg, _ in loggers]
    handlers = {number: signal.getsignal(number) for number in _SIGNALS}
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        with warnings.catch_warnings():
            yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        os.chdir(here)
        os.environ.clear()
        os.environ.update(environ)
        for logger, kept in loggers:
            logger.handlers[:] = kept
        for logger, level, propagate in settings:
            logger.setLevel(level)
            logger.propagate = propagate
        for number, handler in handlers.items():
            if handler is not None:  # None: set outside Python, never by a command
                signal.signal(number, handler)
