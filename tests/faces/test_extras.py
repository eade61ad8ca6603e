"""The base install and the extras: each face that is an extra says which to install when it is missing.

The programs run in venvs made as after ``pip install .`` or ``pip install '.[server]'`` (tests/lean_support.py:
the test venv's own packages, only those that install would bring).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from lean_support import ROOT, distributions, lean_venv

from petstore_cli.extras import EXTRAS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a venv as after ``pip install .``."""
    return lean_venv(tmp_path_factory.mktemp("base") / "venv")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a venv as after ``pip install '.[server]'``."""
    return lean_venv(tmp_path_factory.mktemp("server") / "venv", ["server"])


def petstore(python: Path, tmp_path: Path, *words: str, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"), **environ}
    return subprocess.run(
        [str(python), "-m", "petstore_cli", *words],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def modules_of(extras: list[str]) -> set[str]:
    """The top-level modules of the distributions ``petstore[extras]`` brings."""
    return {
        str(file.parts[0]).split(".")[0]  # a package, a module, or an extension module (jq.cpython-311-....so)
        for dist in distributions(extras).values()
        for file in dist.files or []
        if len(file.parts) > 1 or str(file).endswith((".py", ".so", ".pyd"))
    }


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_each_extra_brings_the_modules_its_face_looks_for_and_the_base_install_none(extra: str) -> None:
    assert set(EXTRAS[extra]) <= modules_of([extra])
    assert set(EXTRAS[extra]) & modules_of([]) == set()


def test_the_base_install_brings_no_chat_sdk_database_driver_or_web_server() -> None:
    names = set(distributions())
    unwanted = {
        "matrix-nio",
        "slack-sdk",
        "slixmpp",
        "psycopg",
        "psycopg-binary",
        "psycopg-pool",
        "aiohttp",
        "textual-serve",
    }
    assert names & (unwanted | {"pycryptodome", "uvicorn", "h2", "attrs", "click"}) == set()
    assert {"textual", "httpx", "pydantic", "starlette", "prompt-toolkit"} <= names


@pytest.mark.parametrize(
    ("words", "extra"),
    [
        (["bot", "matrix"], "matrix"),
        (["bot", "slack"], "slack"),
        (["bot", "xmpp"], "xmpp"),
        (["web"], "web"),
        (["serve"], "server"),
    ],
)
def test_a_face_whose_extra_is_missing_says_which_to_install(
    base: Path, tmp_path: Path, words: list[str], extra: str
) -> None:
    out = petstore(base, tmp_path, *words)
    face = " ".join(words)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == f"petstore: petstore {face} needs the {extra} extra: pip install 'petstore[{extra}]'\n"


def test_the_service_module_says_which_extra_it_needs(base: Path, tmp_path: Path) -> None:
    out = subprocess.run([str(base), "-m", "petstore_server"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "error: python -m petstore_server needs the server extra: pip install 'petstore[server]'\n"


def test_the_base_install_runs_commands_on_the_sandbox(base: Path, tmp_path: Path) -> None:
    out = petstore(base, tmp_path, "run", "-c", "/list --limit 3", "-c", "/env")
    assert out.returncode == 0, out.stderr
    assert "Rex" in out.stdout and "sandbox" in out.stdout


def test_the_base_install_plays_a_script_in_the_tui_on_the_sandbox(base: Path, tmp_path: Path) -> None:
    """The TUI (headless: Textual's own driver for runs without a terminal), its preview helper and its session."""
    script = tmp_path / "check.pets"
    script.write_text("/list --limit 100\n/expect count 12\n/list sold\n/expect status sold\n")
    headless = "textual.drivers.headless_driver:HeadlessDriver"
    out = petstore(base, tmp_path, "tui", "--play", str(script), "--delay", "0", "--exit", TEXTUAL_DRIVER=headless)
    assert out.returncode == 0, out.stderr


def test_serve_on_sqlite_needs_the_server_extra_only(server: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    command = [str(server), "-m", "petstore_cli", "serve", "--port", "0", "--db", str(tmp_path / "pets.db")]
    with subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            lines = [proc.stdout.readline(), proc.stdout.readline()]  # the generated key, then the address
            assert any("Serving the Pet Store API at http://127.0.0.1:" in line for line in lines), lines
        finally:
            proc.terminate()
            proc.communicate(timeout=30)


def test_serve_on_postgresql_says_the_postgres_extra_is_needed_and_never_the_password(
    server: Path, tmp_path: Path
) -> None:
    out = petstore(
        server, tmp_path, "serve", "--port", "0", PETSTORE_SERVER_DB="postgresql://alice:s3cret@127.0.0.1:1/pets"
    )
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == "error: a PostgreSQL database needs the postgres extra: pip install 'petstore[postgres]'\n"
