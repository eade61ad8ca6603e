"""Output to a closed pipe ends quietly in every command (``petstore run examples/tour.pets | head -1``).

The reader's end of the pipe is closed before petstore starts, so every write meets a closed pipe: the same as
``head -1`` once it has its line, without depending on how fast either side runs. Through the real entry point, with
stdout buffered as a person's shell has it (``PYTHONUNBUFFERED`` would let argparse's own write meet the closed pipe and
swallow the error, hiding what a buffered stdout does at exit).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import ROOT, clean_env

pytestmark = pytest.mark.slow


def buffered_env(home: Path) -> dict[str, str]:
    """The environment of a person's shell: stdout block-buffered into a pipe."""
    return {k: v for k, v in clean_env(home).items() if k != "PYTHONUNBUFFERED"}


def into_closed_pipe(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = buffered_env(home)
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "petstore_cli", *args],
            cwd=ROOT,
            input=stdin,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env=env,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "output", [[], ["--format", "plain"], ["--format", "csv"], ["--format", "json"], ["--json"], ["--echo"]]
)
def test_a_script_into_a_closed_pipe_exits_0_without_a_traceback(tmp_path: Path, output: list[str]) -> None:
    done = into_closed_pipe(tmp_path, "--sandbox-reset", "run", "examples/tour.pets", *output)
    assert (done.returncode, "Traceback" not in done.stderr, "Broken pipe" not in done.stderr) == (0, True, True), (
        done.stderr
    )


@pytest.mark.parametrize(
    "words", [["config", "show"], ["list", "--format", "tsv"], ["help"], ["chat"], ["completion", "bash"], ["--help"]]
)
def test_every_command_into_a_closed_pipe_exits_0_without_a_traceback(tmp_path: Path, words: list[str]) -> None:
    done = into_closed_pipe(tmp_path, *words, stdin="/list\n")
    assert (done.returncode, "Traceback" not in done.stderr, "Broken pipe" not in done.stderr) == (0, True, True), (
        done.stderr
    )


@pytest.mark.parametrize("words", [["--help"], ["--version"], ["list", "--help"], ["--env", "nope"]])
def test_argparse_exits_into_a_closed_pipe_are_quiet_every_time(tmp_path: Path, words: list[str]) -> None:
    """argparse prints and raises SystemExit; the entry point flushes before the interpreter would (exit 120)."""
    for _ in range(25):
        done = into_closed_pipe(tmp_path, *words)
        assert done.returncode in (0, 2), done.stderr
        assert "Exception ignored" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


def test_help_into_a_reader_that_closes_after_one_byte_is_quiet_every_time(tmp_path: Path) -> None:
    """``petstore --help | head -c 1``: the reader may close before or after the help is written; both end quietly."""
    for _ in range(25):
        reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        assert reader.stdin is not None
        done = subprocess.run(
            [sys.executable, "-m", "petstore_cli", "--help"],
            cwd=ROOT,
            stdout=reader.stdin,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env=buffered_env(tmp_path),
        )
        reader.stdin.close()
        reader.wait(timeout=60)
        assert (done.returncode, done.stderr) == (0, "")
