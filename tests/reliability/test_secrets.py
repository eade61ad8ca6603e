"""The canary key never shows: not in the service's logs, not in any face's output, config errors or warnings.

The fault matrix (test_fault_matrix_*.py) already checks every output of
run (human with -v, --json) and chat, and every client exception, under every
fault; this module covers the service side and the paths around the key.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from server.support import running_server

from .support import CANARY, LOG_LINE, MASKED, ROOT, assert_no_secret, assert_no_traceback, clean_env, petstore

pytestmark = pytest.mark.slow

OTHER = "sk-OTHER-0123456789abcdef"


async def _traffic(url: str) -> None:
    """Every kind of request: good key, wrong key, no key, bad body, 404, 405, a reused Idempotency-Key."""
    good = {"Authorization": f"Bearer {CANARY}"}
    async with httpx.AsyncClient(base_url=url, timeout=10) as http:
        assert (await http.get("/pets", headers=good)).status_code == 200
        assert (await http.get("/pets", headers={"Authorization": f"Bearer {CANARY}x"})).status_code == 401
        assert (await http.get("/pets")).status_code == 401
        assert (await http.post("/pets", headers=good, json={"name": CANARY})).status_code == 400
        assert (await http.get("/pets/424242", headers=good)).status_code == 404
        assert (await http.delete("/pets", headers=good)).status_code == 405
        key = {**good, "Idempotency-Key": "k1"}
        assert (await http.post("/pets", headers=key, json={"name": "A", "categoryId": 1})).status_code == 201
        assert (await http.post("/pets", headers=key, json={"name": "B", "categoryId": 1})).status_code == 422


def _stop(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    return out, err


async def test_petstore_serve_never_logs_its_key(tmp_path: Path) -> None:
    """The key comes from --api-key-file, as the README says to give it."""
    keys = tmp_path / "keys"
    keys.write_text(f"# the canary\n{CANARY}\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "petstore_cli",
            "serve",
            "--port",
            "0",
            "--db",
            str(tmp_path / "p.db"),
            "--api-key-file",
            str(keys),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(tmp_path),
    )
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        url = re.search(r"http://\S+/v1", first)
        assert url, first
        await _traffic(url.group(0))
    finally:
        out, err = _stop(proc)
    assert proc.returncode == 0
    assert_no_secret(first, out, err)
    assert_no_traceback(out, err)


async def test_the_service_at_trace_level_never_logs_the_key(tmp_path: Path) -> None:
    """uvicorn's most verbose level logs each ASGI message; the headers must stay out."""
    with running_server(tmp_path / "p.db", "--log-level", "trace", keys=[CANARY]) as (proc, url, before):
        await _traffic(url)
        out, err = _stop(proc)
    assert "ASGI [1] Started" in err  # it really logged at trace level
    assert_no_secret("\n".join(before), out, err)


def test_chat_and_verbose_run_against_a_real_service(service, tmp_path: Path) -> None:
    url = service[0]
    chat = petstore(tmp_path, "-v", "chat", "--base-url", url, stdin="/add Sec --category 1\n/get $last\n/list\n/env\n")
    assert chat.code == 0 and MASKED in chat.out and "Sec" in chat.out
    run = petstore(tmp_path, "-v", "run", "--base-url", url, "--json", "-c", "/add Sec --category 1", "-c", "/env")
    assert run.code == 0 and json.loads(run.out.splitlines()[1])["result"]["api_key"] == MASKED
    for ran in (chat, run):
        assert_no_secret(ran.out, ran.err)
        logs = ran.err.splitlines()
        assert logs and all(LOG_LINE.match(line) or line.startswith("note: ") for line in logs), logs
        assert "authorization" not in ran.err.lower()


def test_a_rejected_key_is_not_echoed(service, tmp_path: Path) -> None:
    """The service has the canary; the client sends another key: 401, one line, neither key shown."""
    env = clean_env(tmp_path, PETSTORE_API_KEY=OTHER)
    ran = petstore(tmp_path, "run", "--base-url", service[0], "-c", "/list", env=env)
    assert ran.code == 1 and len(ran.err.splitlines()) == 1
    assert "invalid API key" in ran.err and "PETSTORE_API_KEY" in ran.err  # says what to do
    assert OTHER not in ran.everything and "0123456789ab" not in ran.everything
    assert_no_secret(ran.out, ran.err)


@pytest.mark.parametrize("case", ["world-readable", "syntax-error", "bad-value", "bad-key-chars", "insecure"])
def test_config_paths_never_show_the_key(tmp_path: Path, case: str) -> None:
    cfg = tmp_path / "config.toml"
    env = clean_env(tmp_path)
    env.pop("PETSTORE_API_KEY")
    args = ["--config", str(cfg), "run", "--json", "-c", "/env"]
    if case == "world-readable":
        cfg.write_text(f'env = "production"\n[production]\nbase_url = "http://127.0.0.1:9/v1"\napi_key = "{CANARY}"\n')
        cfg.chmod(0o644)
    elif case == "syntax-error":
        cfg.write_text(f'base_url = "http://127.0.0.1:9/v1"\napi_key = "{CANARY}\n')
    elif case == "bad-value":
        cfg.write_text(f'base_url = "http://127.0.0.1:9/v1"\napi_key = "{CANARY}"\n[http]\nretries = "{CANARY}"\n')
    elif case == "bad-key-chars":
        cfg.write_text(f'base_url = "http://127.0.0.1:9/v1"\napi_key = "{CANARY} \\u0007"\n')
    else:
        cfg.write_text(f'base_url = "http://pets.example/v1"\napi_key = "{CANARY}"\n')
    if case != "world-readable":
        cfg.chmod(0o600)
    ran = petstore(tmp_path, *args, env=env)
    assert_no_secret(ran.out, ran.err)
    assert_no_traceback(ran.out, ran.err)
    if case == "world-readable":
        assert (
            ran.code == 0
            and f"tightened {cfg} to 0600 (it was 0644)" in ran.err
            and json.loads(ran.out)["result"]["api_key"] == MASKED
        )
    else:
        assert ran.code == 2 and ran.out == "" and len(ran.err.splitlines()) == 1, ran.err


# -- the client's key from a file (PETSTORE_API_KEY_FILE, api_key_file) -----------------------------------------


def env_without_key(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = clean_env(tmp_path)
    env.pop("PETSTORE_API_KEY")
    return {**env, **extra}


def test_the_key_from_a_file_reaches_the_service_and_the_file_is_tightened(service, tmp_path: Path) -> None:
    key_file = tmp_path / "api-key"
    key_file.write_text(f"# the service's key\n{CANARY}\n")
    key_file.chmod(0o644)
    env = env_without_key(tmp_path, PETSTORE_API_KEY_FILE=str(key_file))
    ran = petstore(tmp_path, "run", "--base-url", service[0], "--json", "-c", "/add Filed --category 1", env=env)
    assert ran.code == 0 and json.loads(ran.out)["result"]["name"] == "Filed"
    assert ran.err == f"petstore: warning: tightened {key_file} to 0600 (it was 0644)\n"
    assert key_file.stat().st_mode & 0o777 == 0o600
    chat = petstore(tmp_path, "chat", "--base-url", service[0], stdin="/env\n", env=env)
    assert chat.code == 0 and MASKED in chat.out and chat.err == ""
    assert_no_secret(ran.out, ran.err, chat.out, chat.err)


def test_each_environment_can_have_its_key_file(service, tmp_path: Path) -> None:
    key_file = tmp_path / "production-key"
    key_file.write_text(CANARY + "\n")
    key_file.chmod(0o600)
    config = tmp_path / "config.toml"
    config.write_text(f'[production]\nbase_url = "{service[0]}"\napi_key_file = "{key_file}"\n')
    env = env_without_key(tmp_path)
    ran = petstore(tmp_path, "--config", str(config), "--env", "production", "list", env=env)
    # The service took the key. How many pets it lists depends on which tests of this module ran before in the
    # same worker (the service is the module's): "no pets", "1 pet" and "3 pets" all say the list was read.
    assert ran.code == 0 and re.search(r"(no pets|\b1 pet|\b\d+ pets)\n$", ran.out) and ran.err == ""
    shown = petstore(tmp_path, "--config", str(config), "config", "show", env=env)
    assert re.search(r"production\.api_key +sk-\.\.\.6f70 +api_key_file", shown.out)
    assert_no_secret(ran.out, ran.err, shown.out, shown.err)


@pytest.mark.parametrize(
    ("content", "extra", "says"),
    [
        (None, {}, "invalid setting PETSTORE_API_KEY_FILE: cannot read"),
        (f"{CANARY}\n{OTHER}\n", {}, "holds 2 lines that are not comments; it should hold the key alone"),
        ("# nothing\n", {}, "holds no key"),
        (CANARY, {"PETSTORE_API_KEY": OTHER}, "both PETSTORE_API_KEY and PETSTORE_API_KEY_FILE are set: keep one"),
    ],
    ids=["missing", "two-keys", "empty", "both"],
)
def test_a_bad_key_file_is_one_line_without_the_key(
    tmp_path: Path, content: str | None, extra: dict, says: str
) -> None:
    key_file = tmp_path / "api-key"
    if content is not None:
        key_file.write_text(content)
        key_file.chmod(0o600)
    env = env_without_key(tmp_path, PETSTORE_API_KEY_FILE=str(key_file), **extra)
    ran = petstore(tmp_path, "run", "--base-url", "http://127.0.0.1:9/v1", "-c", "/list", env=env)
    assert ran.code == 2 and ran.out == "" and ran.err.count("\n") == 1 and says in ran.err, ran.err
    assert_no_secret(ran.err) and OTHER not in ran.err
