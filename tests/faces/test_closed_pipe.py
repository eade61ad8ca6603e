"""Output to a closed pipe ends quietly in every command (``petstore run examples/tour.pets | head -1``).

The reader's end of the pipe is closed before petstore starts, so every write meets a closed pipe: the same as
``head -1`` once it has its line, without depending on how fast either side runs. Through the real entry point.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import ROOT, clean_env

pytestmark = pytest.mark.slow


def into_closed_pipe(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = clean_env(home)
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
