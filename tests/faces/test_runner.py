"""``petstore run`` semantics, in-process: JSON lines, exit codes, $last, /expect, echo, refusals."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot_commands.commands import default_registry
from bot_commands.results import EnvInfo
from bot_commands.script import parse_script
from bot_commands.session import CommandSession
from petstore_api.client import PetStoreClient, RetryPolicy
from petstore_cli.runner import collect_lines, run_script

REGISTRY = default_registry()


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


async def run(
    session: CommandSession, script: str, *, out: io.StringIO | None = None, **options: Any
) -> tuple[int, str, str]:
    out = out if out is not None else io.StringIO()
    err = io.StringIO()
    code = await run_script(session, parse_script(script), out=out, err=err, **options)
    return code, out.getvalue(), err.getvalue()


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


TOUR = """
# a tour
/list sold
/expect count 4
/add "Rex the Dog" --category 3 --status available
/get $last
/expect name "Rex the Dog"
/orders
/env
"""


async def test_json_mode_prints_exactly_one_object_per_command(session: CommandSession, sandbox: Any) -> None:
    code, out, err = await run(session, TOUR, json_mode=True)
    assert code == 0
    objs = lines(out)
    assert [o["command"] for o in objs] == [
        "/list sold",
        "/expect count 4",
        '/add "Rex the Dog" --category 3 --status available',
        "/get 13",
        '/expect name "Rex the Dog"',
        "/orders",
        "/env",
    ]
    assert all(o["ok"] is True and set(o) == {"command", "ok", "result"} for o in objs)
    assert [p["id"] for p in objs[0]["result"]] == [4, 6, 9, 11]
    assert objs[2]["result"] == {"id": 13, "name": "Rex the Dog", "categoryId": 3, "status": "available"}
    assert objs[3]["result"] == objs[2]["result"] and objs[5]["result"] == []
    assert objs[6]["result"]["api_key"].startswith("sk-...") and sandbox.api_key not in out + err
    assert err.strip() == (
        "note: getPet is deprecated and will be removed on 5 December 2030; "
        "use listPets (GET /pets) with a status filter instead."
    )


async def test_human_mode_renders_like_the_chat(session: CommandSession) -> None:
    code, out, err = await run(session, TOUR)
    assert code == 0
    assert "Goldie" in out and "4 pets" in out and "✓ expect count 4" in out and "Added pet 13" in out
    assert "\x1b" not in out  # not a terminal: no colour
    assert "deprecated" in err and "deprecated" not in out


async def test_service_failure_stops_with_exit_1(session: CommandSession) -> None:
    code, out, err = await run(session, "/list\n\n/get 999\n/list sold\n/env\n", json_mode=True)
    assert code == 1
    objs = lines(out)
    assert len(objs) == 2
    assert objs[1] == {
        "command": "/get 999",
        "ok": False,
        "error": {"code": "not_found", "message": "no pet with id '999'", "status": 404},
    }
    assert "stopped: 2 commands not run (--keep-going runs them)" in err


async def test_parse_error_exits_2_with_status_0(session: CommandSession, transport: Any) -> None:
    code, out, err = await run(session, "/list --limit 0\n/list\n", json_mode=True)
    assert code == 2 and transport.requests == []
    (obj,) = lines(out)
    assert obj["ok"] is False and obj["error"]["code"] == "usage" and obj["error"]["status"] == 0
    assert obj["error"]["message"].endswith("Usage: /list [STATUS] [--status S] [--limit N] [--all]")


async def test_human_mode_errors_are_one_line_on_stderr_with_the_line_number(session: CommandSession) -> None:
    code, out, err = await run(session, "/list sold\n/lst\n")
    assert code == 2
    assert err.splitlines()[0] == "line 2: unknown command /lst; did you mean /list? /help lists the commands"
    assert "Traceback" not in err and "Goldie" in out


@pytest.mark.parametrize(
    ("script", "code", "runs"),
    [
        ("/get 999\n/lst\n/list\n", 2, 3),
        ("/get 999\n/get 998\n/list\n", 1, 3),
        ("/list\n/env\n", 0, 2),
    ],
)
async def test_keep_going_runs_everything_and_reports_the_worst(
    session: CommandSession, script: str, code: int, runs: int
) -> None:
    got, out, err = await run(session, script, json_mode=True, keep_going=True)
    assert got == code and len(lines(out)) == runs and "stopped" not in err


async def test_failed_expectation_names_the_line_and_what_differed(session: CommandSession) -> None:
    script = "# check\n/list sold\n/expect count 3\n/list\n"
    code, out, err = await run(session, script)
    assert code == 1
    assert err.splitlines()[0] == "line 3: expectation failed: expected count 3, got count 4"
    code, out, err = await run(session, script, json_mode=True)
    objs = lines(out)
    assert code == 1 and len(objs) == 2
    assert objs[1]["error"] == {
        "code": "expectation_failed",
        "status": 0,
        "message": "line 3: expected count 3, got count 4",
    }
    assert "line 3: expectation failed" in err


async def test_an_expected_error_does_not_fail_the_run(session: CommandSession) -> None:
    script = "/get 999\n/expect error 404\n/expect error not_found\n/list --limit 0\n/expect error usage\n/env\n"
    code, out, err = await run(session, script, json_mode=True)
    assert code == 0
    assert [o["ok"] for o in lines(out)] == [False, True, True, False, True, True]


async def test_an_unexpected_error_after_a_failure_counts_both(session: CommandSession) -> None:
    code, out, _ = await run(session, "/list --limit 0\n/expect error 404\n/env\n", json_mode=True)
    assert code == 2 and len(lines(out)) == 2


async def test_last_expands_in_the_command_field(session: CommandSession) -> None:
    code, out, _ = await run(session, "/add Rex --category 1\n/get $last\n/get $LAST\n", json_mode=True)
    assert code == 0 and [o["command"] for o in lines(out)][1:] == ["/get 13", "/get 13"]


async def test_last_without_a_pet_is_exit_2(session: CommandSession) -> None:
    code, out, _ = await run(session, "/get $last\n", json_mode=True)
    assert code == 2 and lines(out)[0]["command"] == "/get $last"


async def test_quit_ends_the_script(session: CommandSession) -> None:
    code, out, _ = await run(session, "/env\n/quit\n/get 999\n", json_mode=True)
    assert code == 0 and [o["command"] for o in lines(out)] == ["/env", "/quit"]


async def test_sleep_pauses_through_the_session(session: CommandSession, sleeps: Any) -> None:
    code, out, _ = await run(session, "/sleep 2\n/sleep 0.5\n")
    assert code == 0 and out == "" and sleeps.calls == [2.0, 0.5]


async def test_echo_prints_each_command_before_its_result(session: CommandSession, sleeps: Any) -> None:
    code, out, _ = await run(session, "/list sold\n/env\n", echo=True, delay=0.05)
    assert code == 0 and sleeps.calls == []  # not a terminal: no typing, no timing
    assert out.index("› /list sold") < out.index("Goldie") < out.index("› /env") < out.index("environment")
    code, out, err = await run(session, "/env\n", echo=True, json_mode=True)
    assert "› /env" in err and len(lines(out)) == 1


async def test_echo_with_delay_types_on_a_terminal(session: CommandSession, sleeps: Any) -> None:
    code, out, _ = await run(session, "/env\n", out=FakeTTY(), echo=True, delay=0.01)
    assert code == 0 and sleeps.calls == [0.01] * len("/env")


async def test_read_only_and_production_refusals_exit_2(
    make_session: Callable[..., CommandSession], transport: Any
) -> None:
    code, out, _ = await run(make_session(read_only=True), "/add Rex --category 1\n", json_mode=True)
    assert code == 2 and lines(out)[0]["error"]["code"] == "read_only"
    code, out, _ = await run(make_session(env="production"), "/add Rex --category 1\n", json_mode=True)
    assert code == 2 and lines(out)[0]["error"]["code"] == "confirmation_required"
    assert transport.requests == []

    async def yes(_prompt: str) -> bool:
        return True

    code, out, _ = await run(make_session(env="production", confirm=yes), "/add Rex --category 1\n", json_mode=True)
    assert code == 0 and lines(out)[0]["result"]["id"] == 13


async def test_hostile_names_never_reach_stdout_raw(session: CommandSession) -> None:
    name = "[b]x[/b]\x1b]0;pwned\x07\u202e\x9b"
    script = f"/add name='{name}' category=1\n/list\n"
    code, out, _ = await run(session, script, json_mode=True)
    assert code == 0 and out.isascii() and lines(out)[0]["result"]["name"] == name
    code, out, _ = await run(session, "/list\n", out=FakeTTY())
    assert "[b]x[/b]" in out and "\x07" not in out and "\x1b]" not in out and "\u202e" not in out


async def test_unreachable_service_is_exit_1_with_code_connect(sleeps: Any) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = PetStoreClient(
        base_url="http://127.0.0.1:9/v1",
        transport=httpx.MockTransport(refuse),
        retry=RetryPolicy(attempts=1, sleep=sleeps),
    )
    session = CommandSession(
        client, registry=REGISTRY, env=EnvInfo(env="custom", base_url="http://127.0.0.1:9/v1", masked_key="(none)")
    )
    async with client:
        code, out, _ = await run(session, "/list\n/env\n", json_mode=True)
    (obj,) = lines(out)
    assert code == 1 and obj["error"]["code"] == "connect" and obj["error"]["status"] == 0


async def test_an_internal_error_is_one_line_not_a_traceback() -> None:
    class Broken:
        async def list_orders(self) -> Any:
            raise RuntimeError("boom\nsecond line")

    session = CommandSession(Broken(), registry=REGISTRY, env=EnvInfo(env="custom", base_url="x", masked_key="(none)"))
    code, out, err = await run(session, "/orders\n")
    assert code == 1 and err == "line 1: internal error: RuntimeError: boom second line\n"


def test_collect_lines_from_a_file_stdin_and_c(tmp_path: Path) -> None:
    script = tmp_path / "demo.txt"
    script.write_text("# demo\n/list\n\n/env\n")
    assert collect_lines(str(script), ["/get 1", "# skip"]) == [(2, "/list"), (4, "/env"), ("-c 1", "/get 1")]
    assert collect_lines("-", [], stdin=io.StringIO("/orders\n")) == [(1, "/orders")]
    with pytest.raises(OSError):
        collect_lines(str(tmp_path / "missing.txt"), [])
