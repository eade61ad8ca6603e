"""Completion as each shell runs it: the scripts ``petstore completion bash|zsh|fish`` prints, loaded in real bash,
zsh and fish. Files complete into folders (``run ex`` -> ``examples/``), ``--play`` takes a file, ``--theme`` a
theme, ``--status`` a status; the commands that cannot work one-shot (``more``, ``quit`` ...) are never offered.

bash and zsh run the generated function the way their completion systems call it: bash with ``COMP_WORDS`` set
(``compopt``, which only works inside a real completion, is recorded); zsh with ``compadd``, ``_files`` and
``_describe`` standing in for its completion system. fish asks its own completion engine (``complete -C``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import run_petstore
from real_parts import unavailable

ROOT = Path(__file__).resolve().parents[2]
SESSION_ONLY = {"more", "next", "quit", "exit", "history", "expect", "confirm", "cancel"}

BASH_DRIVER = """
exec 3>&2  # the script silences compopt's stderr: the record goes to fd 3
compopt() { printf 'compopt %s\\n' "$*" >&3; }
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_petstore
printf '%s\\n' "${COMPREPLY[@]}"
"""

ZSH_DRIVER = """
compdef() { : }
compadd() { while [[ $# -gt 0 && $1 != -- ]]; do shift; done; shift; print -l -- "$@" }
_files() { print -- "(files)" }
_describe() { local -a described; described=("${(@P)2}"); print -l -- "${described[@]%%:*}" }
source "$1" >/dev/null; shift
words=("$@"); CURRENT=$#
_petstore
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ``examples/tour.pets`` and the three scripts."""
    here = tmp_path_factory.mktemp("completion")
    (here / "examples").mkdir()
    (here / "examples" / "tour.pets").write_text("/list\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    for shell in ("bash", "zsh", "fish"):
        done = run_petstore("completion", shell, env=env)
        assert done.returncode == 0, done.stderr
        (here / f"petstore.{shell}").write_text(done.stdout)
    (here / "bash-driver.sh").write_text(BASH_DRIVER)
    (here / "zsh-driver.zsh").write_text(ZSH_DRIVER)
    return here


def _shell(name: str) -> str:
    if shutil.which(name) is None:
        unavailable(f"{name} is not installed: the completion script cannot be loaded")
    return name


def bash(folder: Path, *words: str) -> tuple[list[str], str]:
    done = subprocess.run(
        [_shell("bash"), "bash-driver.sh", "petstore.bash", "petstore", *words],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.stdout.split(), done.stderr


def zsh(folder: Path, *words: str) -> list[str]:
    done = subprocess.run(
        [_shell("zsh"), "-f", "zsh-driver.zsh", "petstore.zsh", "petstore", *words],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def fish(folder: Path, line: str) -> list[str]:
    done = subprocess.run(
        [_shell("fish"), "--no-config", "-c", f"source petstore.fish; complete -C {line!r}"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return [line.split("\t")[0] for line in done.stdout.splitlines()]


def test_bash_completes_files_into_folders_themes_and_statuses(folder: Path) -> None:
    for words in (["run", "ex"], ["tui", "--play", "ex"], ["--config", "ex"]):
        offered, told = bash(folder, *words)
        assert offered == ["examples"] and "compopt -o filenames" in told  # readline then adds the / and no space
    assert bash(folder, "run", "examples/")[0] == ["examples/tour.pets"]
    assert bash(folder, "--theme", "nor")[0] == ["nord"]
    assert bash(folder, "tui", "--theme", "gruv")[0] == ["gruvbox"]
    assert bash(folder, "add", "Rex", "--status", "")[0] == ["available", "pending", "sold"]
    assert bash(folder, "list", "")[0] == ["available", "pending", "sold"]


def test_zsh_completes_files_themes_and_statuses(folder: Path) -> None:
    assert zsh(folder, "run", "ex") == ["(files)"]
    assert zsh(folder, "tui", "--play", "ex") == ["(files)"]
    assert "nord" in zsh(folder, "--theme", "") and "textual-light" in zsh(folder, "tui", "--theme", "")
    assert zsh(folder, "add", "Rex", "--status", "") == ["available", "pending", "sold"]


def test_fish_completes_files_into_folders_themes_and_statuses(folder: Path) -> None:
    assert fish(folder, "petstore run ex") == ["examples/"]
    assert fish(folder, "petstore tui --play ex") == ["examples/"]
    assert fish(folder, "petstore --theme nor") == ["nord"]
    assert fish(folder, "petstore add Rex --status s") == ["sold"]


def test_no_shell_offers_a_command_that_cannot_work_one_shot(folder: Path) -> None:
    for offered in (bash(folder, "")[0], zsh(folder, ""), fish(folder, "petstore ")):
        assert {"list", "add", "get", "run", "chat"} <= set(offered)
        assert not SESSION_ONLY & set(offered), SESSION_ONLY & set(offered)


@pytest.mark.parametrize("word", ["more", "quit", "history", "expect", "confirm"])
def test_a_session_only_command_is_no_subcommand(word: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data")}
    done = subprocess.run(
        [sys.executable, "-m", "petstore_cli", word], cwd=ROOT, capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"petstore: /{word} works within a session, not as a subcommand")
