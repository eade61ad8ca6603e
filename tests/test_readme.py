"""The README opens with the two commands that do everything; CI runs the second one verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first_block = re.search(r"```(?:sh|bash|console)?\n(.*?)```", text, re.S)
    assert first_block, "README has no command block"
    return [line for line in first_block.group(1).splitlines() if line.strip() and not line.startswith("#")]


def test_readme_starts_with_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.index("```") < 600, "the commands come first"
    commands = readme_commands()
    assert len(commands) == 2
    assert all(command.startswith("python3 -m venv ") for command in commands)  # any Python 3.11+, not one version
    assert "pip install . " in commands[0] and commands[0].endswith("petstore")  # the base install: no extra
    assert "'.[all,test]'" in commands[1] and "pytest" in commands[1]  # every face, the test tools


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert readme_commands()[1] in ci
