"""Every demo script in examples/ runs green through `petstore run` on a fresh sandbox."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_support import petstore_main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.pets"))

pytestmark = pytest.mark.slow


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env["PETSTORE_SANDBOX__DATA_DIR"] = str(tmp_path / "sandbox")
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    return petstore_main("--sandbox-reset", "run", *args, env=env)


def test_there_are_examples() -> None:
    assert {p.stem for p in EXAMPLES} >= {"tour", "adoption", "errors"}


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs_green_as_json(tmp_path: Path, script: Path) -> None:
    out = run(tmp_path, "--json", str(script))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    expects = [line for line in lines if line["command"].startswith("/expect")]
    assert expects and all(line["ok"] for line in expects)
    assert "Traceback" not in out.stderr


def test_a_failing_expectation_exits_1_naming_its_line(tmp_path: Path) -> None:
    script = tmp_path / "bad.pets"
    script.write_text("# a check that cannot hold\n/list sold\n\n/expect count 99\n/list\n", encoding="utf-8")
    out = run(tmp_path, str(script))
    assert out.returncode == 1
    assert "line 4" in out.stderr and "99" in out.stderr
    assert "Traceback" not in out.stderr
