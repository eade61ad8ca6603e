"""The docs hold: every relative link in docs/ and the README leads to a file of the repository, every repository
path they cite exists (``shared/spec/...`` once named a file outside it), and the README's shell commands run as
written on a fresh HOME (the completion command once failed: its directory did not exist)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
#: A path in backticks: words joined by slashes, ending in a file's extension (``petstore_api/sanitize.py``), or a
#: folder of the repository (``tests/tui/``).
PATH = re.compile(r"[\w.-]+(?:/[\w.*-]+)+/?")
FILE_TYPES = (".py", ".md", ".txt", ".toml", ".pets", ".conf", ".json", ".svg", ".png", ".yml", ".cfg")


def _relative_links(doc: Path) -> list[str]:
    links = [m.group(1) for m in LINK.finditer(doc.read_text(encoding="utf-8"))]
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link) and not link.startswith("#")]


def _cited_paths(doc: Path) -> list[str]:
    """Repository paths in backticks (``file: name`` too): those under a top-level entry of the repository, and any
    relative path to a file of a kind the repository holds."""
    top = {entry.name for entry in ROOT.iterdir()}
    cited = []
    for span in CODE.findall(doc.read_text(encoding="utf-8")):
        path = span.split(": ")[0].strip()
        if not PATH.fullmatch(path) or path.startswith((".", "~")):
            continue
        if path.split("/")[0] in top or path.rstrip("/").endswith(FILE_TYPES):
            cited.append(path)
    return cited


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: str(doc.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_of_the_repository(doc: Path) -> None:
    missing = [link for link in _relative_links(doc) if not (doc.parent / link.split("#")[0]).exists()]
    assert missing == [], f"{doc.relative_to(ROOT)} links to what is not there: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: str(doc.relative_to(ROOT)))
def test_every_repository_path_cited_exists(doc: Path) -> None:
    """From the repository's root, or from tests/ (docs/testing.md names test files as the suite does)."""
    missing = [path for path in _cited_paths(doc) if not any((base / path).exists() for base in (ROOT, ROOT / "tests"))]
    assert missing == [], f"{doc.relative_to(ROOT)} cites what is not in the repository: {missing}"


def test_the_check_of_cited_paths_finds_a_path_outside_the_repository(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("the spec (`shared/spec/000_40dcc7cf68aecb26.txt`), `petstore_api/sanitize.py: visible`\n")
    assert _cited_paths(doc) == ["shared/spec/000_40dcc7cf68aecb26.txt", "petstore_api/sanitize.py"]


def _completion_block(doc: Path) -> str:
    """The one ```sh block of ``doc`` that installs the shell completion."""
    blocks = re.findall(r"```sh\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    [block] = [block for block in blocks if "petstore completion" in block]
    return block


@pytest.mark.parametrize("doc", ["README.md", "docs/getting-started.md", "docs/run.md"])
def test_the_completion_commands_run_on_a_fresh_home(doc: str, tmp_path: Path) -> None:
    block = _completion_block(ROOT / doc)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "XDG_"))}
    env |= {"HOME": str(home), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"}
    assert shutil.which("petstore", path=env["PATH"]), "the petstore script is installed beside this Python"
    done = subprocess.run(["bash", "-e", "-c", block], env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    written = [
        home / ".local/share/bash-completion/completions/petstore",
        home / ".zfunc/_petstore",
        home / ".config/fish/completions/petstore.fish",
    ]
    assert all(path.stat().st_size > 0 for path in written)
    assert "complete" in written[0].read_text() and "#compdef petstore" in written[1].read_text()
