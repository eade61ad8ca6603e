"""run_server and its helpers, in-process."""

from __future__ import annotations

import socket

from petstore_server.options import keys_from_env
from petstore_server.serve import generate_key, run_server


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
