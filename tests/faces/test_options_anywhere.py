"""petstore's options before or after the subcommand, and errors that name what was typed: through the
real entry point (subprocesses on the sandbox, nothing sent where a refusal is checked)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_support import clean_env, petstore_main

from petstore_cli.options import hoist_output_options

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def petstore(home: Path, *args: str, **environ: str) -> subprocess.CompletedProcess[str]:
    return petstore_main(*args, env=clean_env(home, **environ))


def test_output_options_before_the_subcommand_are_its_own(tmp_path: Path) -> None:
    before = petstore(tmp_path, "--format", "csv", "list", "sold")
    assert before.returncode == 0, before.stderr
    assert before.stdout == petstore(tmp_path, "list", "sold", "--format", "csv").stdout
    assert before.stdout.splitlines()[0] == "id,name,categoryId,status"
    lines = petstore(tmp_path, "--json", "list", "--limit", "1")
    assert lines.returncode == 0 and json.loads(lines.stdout)["command"] == "/list --limit 1"
    run = petstore(tmp_path, "--fields=id", "--format", "tsv", "run", "-c", "/list --limit 2")
    assert run.stdout == "id\n1\n2\n"


def test_a_bad_option_is_one_line_naming_the_command_typed(tmp_path: Path) -> None:
    out = petstore(tmp_path, "list", "--format", "xml")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("petstore list: argument --format: invalid choice: 'xml'"), out.stderr
    assert out.stderr.count("\n") == 1 and "petstore run" not in out.stderr
    assert out.stderr.rstrip().endswith("; petstore list --help shows the usage")


def test_a_refused_write_on_production_names_the_command_typed(tmp_path: Path) -> None:
    prod = {"PETSTORE_PRODUCTION__BASE_URL": "http://127.0.0.1:9/v1"}  # never reached: the refusal comes first
    out = petstore(tmp_path, "--env", "production", "add", "Rex", "--category", "2", **prod)
    assert out.returncode == 2 and out.stderr.rstrip().endswith("(petstore add needs --yes)"), out.stderr
    out = petstore(tmp_path, "--env", "production", "run", "-c", "/add Rex --category 2", **prod)
    assert out.returncode == 2 and out.stderr.rstrip().endswith("(petstore run needs --yes)"), out.stderr


def test_hoisting_moves_only_output_options_and_only_for_run_and_commands() -> None:
    words = ["--env", "sandbox", "--format", "csv", "-v", "--jq", ".[]", "list", "sold"]
    assert hoist_output_options(words, 7) == (
        ["--env", "sandbox", "-v", "list", "--format", "csv", "--jq", ".[]", "sold"],
        3,
    )
    assert hoist_output_options(["--yes", "run", "x"], 1) == (["run", "--yes", "x"], 0)
    assert hoist_output_options(["--format", "csv", "tui"], 2) == (["--format", "csv", "tui"], 2)
