"""run_server and its helpers, in-process."""

from __future__ import annotations

import argparse
import json
import re
import socket
from pathlib import Path

import httpx
import pytest

from petstore_server.options import METRICS_TOKEN_ENV, OptionError, add_serve_options, keys_from_env, serve_options
from petstore_server.serve import generate_key, run_server

from .support import running_server


def test_keys_from_env_splits_and_drops_blanks() -> None:
    assert keys_from_env({"PETSTORE_SERVER_API_KEYS": " a, b ,,c "}) == ["a", "b", "c"]
    assert keys_from_env({"PETSTORE_SERVER_API_KEYS": ""}) == []
    assert keys_from_env({}) == []


def test_generated_keys_are_random() -> None:
    first, second = generate_key(), generate_key()
    assert first.startswith("sk-") and len(first) > 40 and first != second


def test_busy_port_is_exit_1_with_a_message(tmp_path, capsys) -> None:
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        assert run_server(port=port, db_path=tmp_path / "p.db", api_keys=["k"]) == 1
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port}" in err and "Traceback" not in err


def test_listening_socket_says_tcp_so_asyncio_disables_nagle() -> None:
    """Accepted sockets inherit the proto; asyncio sets TCP_NODELAY only when it is IPPROTO_TCP."""
    from petstore_server.serve import _listen

    with _listen("127.0.0.1", 0) as sock:
        assert sock.proto == socket.IPPROTO_TCP


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--head-timeout", "0"], "--head-timeout 0: more than 0"),
        (["--body-timeout", "3601"], "--body-timeout 3601: more than 0 and at most 3600 seconds"),
        (["--keep-alive-timeout", "61"], "--keep-alive-timeout 61: 1 to 60 seconds"),
        (["--max-connections", "0"], "--max-connections 0: at least 1"),
        (["--access-log", "x.log", "--no-access-log"], "give one"),
    ],
)
def test_limits_out_of_range_are_one_line(args: list[str], says: str) -> None:
    parser = argparse.ArgumentParser()
    add_serve_options(parser)
    with pytest.raises(OptionError, match=re.escape(says)):
        serve_options(parser.parse_args(args), environ={})


def test_the_metrics_token_comes_from_the_environment_or_a_file(tmp_path) -> None:
    parser = argparse.ArgumentParser()
    add_serve_options(parser)
    assert serve_options(parser.parse_args([]), environ={METRICS_TOKEN_ENV: "tok-1"}).metrics_token == "tok-1"
    assert serve_options(parser.parse_args([]), environ={}).metrics_token is None
    token = tmp_path / "token"
    token.write_text("tok-2\n")
    token.chmod(0o644)
    options = serve_options(parser.parse_args(["--metrics-token-file", str(token)]), environ={})
    assert options.metrics_token == "tok-2" and token.stat().st_mode & 0o777 == 0o600
    with pytest.raises(OptionError, match="one word"):
        serve_options(parser.parse_args([]), environ={METRICS_TOKEN_ENV: "two words"})


@pytest.mark.parametrize("workers", ["1", "2"])
def test_every_line_on_stderr_is_json_while_serving(tmp_path: Path, workers: str) -> None:
    """uvicorn's own warning (a request it cannot parse) comes out as JSON among the access lines, in one format."""
    with running_server(tmp_path / "pets.db", "--workers", workers) as (proc, url, _):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as garbage:
            garbage.sendall(b"GARBAGE\x01 / HTTP/1.1\r\n\r\n")
            assert garbage.recv(200).startswith(b"HTTP/1.1 400")  # uvicorn logs before it answers
        assert httpx.get(f"{url}/livez", timeout=10).status_code == 200
        proc.terminate()
        assert proc.wait(timeout=20) == 0
        proc.stderr.seek(0)
        lines = proc.stderr.read().splitlines()
    records = [json.loads(line) for line in lines]  # every line: a plain one fails here
    warning = [r for r in records if r.get("logger") == "uvicorn.error"]
    assert [(r["level"], r["message"]) for r in warning] == [("warning", "Invalid HTTP request received.")]
    assert warning[0]["time"].endswith("Z") and isinstance(warning[0]["pid"], int)
    assert any(r.get("path") == "/v1/livez" and r.get("status") == 200 for r in records)
