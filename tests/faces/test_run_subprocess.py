"""``petstore run`` and ``petstore chat`` as a user runs them: subprocesses against ``petstore serve`` on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import petstore_main, serving

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-0123456789abcdef"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (ROOT / "petstore_cli" / "main.py").exists(), reason="the petstore CLI is not there yet"),
]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """``petstore serve`` on an ephemeral loopback port, seeded; yields its base URL."""
    with serving(tmp_path / "pets.db", _env(tmp_path, PETSTORE_SERVER_API_KEYS=KEY)) as url:
        yield url


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "NO_COLOR", "FORCE_COLOR"))}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"), COLUMNS="100")
    env.update(extra)
    return env


def petstore(tmp_path: Path, *args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return petstore_main(*args, env=_env(tmp_path, PETSTORE_API_KEY=KEY, **env), stdin=stdin)


def run_json(tmp_path: Path, url: str, *args: str, **kw: Any) -> tuple[int, list[dict[str, Any]], str]:
    out = petstore(tmp_path, "run", "--base-url", url, "--json", *args, **kw)
    return out.returncode, [json.loads(line) for line in out.stdout.splitlines()], out.stderr


TOUR = """\
# every command
/list sold
/expect count 4
/list --limit 5 --all
/expect count 12
/add "Rex the Dog" --category 3 --status available
/get $last
/expect name "Rex the Dog"
/get 424242
/expect error 404
/orders
/env
/help
/sleep 0
"""


def test_every_command_as_json_lines(tmp_path: Path, server: str) -> None:
    script = tmp_path / "tour.txt"
    script.write_text(TOUR)
    code, objs, err = run_json(tmp_path, server, str(script))
    assert code == 0, err
    assert len(objs) == 13
    assert [o["ok"] for o in objs] == [True] * 7 + [False] + [True] * 5
    created = objs[4]["result"]
    assert objs[5]["command"] == f"/get {created['id']}" and objs[5]["result"] == created
    assert objs[7]["error"]["status"] == 404 and objs[7]["error"]["code"] == "not_found"
    assert objs[10]["result"]["env"] == "custom" and KEY not in json.dumps(objs) + err
    assert "getPet is deprecated" in err and "5 December 2030" in err


def test_bad_input_exits_2_with_one_line_each_and_nothing_sent(tmp_path: Path, server: str) -> None:
    bad = [
        "/lst",
        '/add "Rex --category 3',
        "/list --limit 0",
        "/list --limit 101",
        "/list --limit abc",
        "/list adopted",
        "/add --category 3",
        "/add Rex",
        "/get 9223372036854775808",
    ]
    args = [a for line in bad for a in ("-c", line)]
    code, objs, _ = run_json(tmp_path, server, "--keep-going", *args, "-c", "/list")
    assert code == 2
    assert [o["error"]["code"] for o in objs[:-1]] == ["usage"] * len(bad)
    assert all(o["error"]["status"] == 0 and "Usage: /" in o["error"]["message"] for o in objs[1:-1])
    assert len(objs[-1]["result"]) == 12  # nothing was added by the bad lines


def test_service_failure_exits_1_and_stops(tmp_path: Path, server: str) -> None:
    code, objs, err = run_json(tmp_path, server, "-c", "/get 424242", "-c", "/list")
    assert code == 1 and len(objs) == 1 and "stopped: 1 command not run" in err


def test_unreachable_service_exits_1(tmp_path: Path) -> None:
    code, objs, err = run_json(tmp_path, "http://127.0.0.1:9/v1", "-c", "/list", PETSTORE_HTTP__RETRIES="1")
    assert code == 1 and objs[0]["error"]["code"] == "connect" and "Traceback" not in err


def test_failed_expectation_names_its_line(tmp_path: Path, server: str) -> None:
    script = tmp_path / "check.txt"
    script.write_text("# check\n/list sold\n/expect count 3\n")
    out = petstore(tmp_path, "run", "--base-url", server, str(script))
    assert out.returncode == 1
    assert out.stderr.strip() == "line 3: expectation failed: expected count 3, got count 4"
    assert "Goldie" in out.stdout and "\x1b" not in out.stdout


def test_stdin_script_echo_and_no_colour(tmp_path: Path, server: str) -> None:
    out = petstore(tmp_path, "run", "--base-url", server, "--echo", "--delay", "0.5", "-", stdin="/list pending\n")
    assert out.returncode == 0 and out.stdout.startswith("› /list pending") and "Tweety" in out.stdout
    assert "\x1b" not in out.stdout + out.stderr


def test_read_only_and_production_need_consent(tmp_path: Path, server: str) -> None:
    code, objs, _ = run_json(tmp_path, server, "--read-only", "-c", "/add Rex --category 1")
    assert code == 2 and objs[0]["error"]["code"] == "read_only"
    prod = {"PETSTORE_PRODUCTION__BASE_URL": server}
    out = petstore(tmp_path, "run", "--env", "production", "--json", "-c", "/add Rex --category 1", **prod)
    assert out.returncode == 2 and json.loads(out.stdout)["error"]["code"] == "confirmation_required"
    out = petstore(tmp_path, "run", "--env", "production", "--json", "--yes", "-c", "/add Rex --category 1", **prod)
    assert out.returncode == 0 and json.loads(out.stdout)["result"]["name"] == "Rex"


def test_chat_reads_piped_stdin(tmp_path: Path, server: str) -> None:
    out = petstore(tmp_path, "chat", "--base-url", server, stdin="/list sold\n/lst\n/env\n")
    assert out.returncode == 0, out.stderr
    assert "Goldie" in out.stdout and "did you mean /list?" in out.stdout and "custom" in out.stdout
    assert ">" not in out.stdout.splitlines()[0] and "Traceback" not in out.stdout + out.stderr


@pytest.mark.parametrize(("extra", "rich_loaded"), [({}, False), ({"FORCE_COLOR": "1"}, True)])
def test_piped_plain_output_never_loads_the_rich_renderer(
    tmp_path: Path, extra: dict[str, str], rich_loaded: bool
) -> None:
    """A one-shot list into a pipe writes plain text without the command layer's Rich renderer (nor Rich's
    console, unless a library loads it: httpx's command line does where click is installed); when Rich may
    still call the pipe a terminal (FORCE_COLOR), Rich decides."""
    code = (
        "import sys\nfrom petstore_cli.main import main\ncode = main(['run', '-c', '/list --limit 3'])\n"
        "print(code, 'bot_commands.render' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, env=_env(tmp_path, **extra)
    )
    assert done.stderr.strip().splitlines()[-1] == f"0 {rich_loaded}"
    assert "Rex" in done.stdout
    if not rich_loaded:  # plain text: the header row as the plain format writes it
        assert done.stdout.splitlines()[0].split() == ["id", "name", "category", "status"]
