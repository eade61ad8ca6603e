"""``petstore run`` (human with ``-v``, and ``--json``) and piped ``petstore chat`` under every fault.

One process per fault and face, all started in parallel by a module fixture
(each costs ~0.3 s of interpreter start), then judged per fault: the
documented exit code 1, one line per failure naming the cause, exactly one
JSON line per command, the session going on after an error, no traceback,
the canary key nowhere (``-v`` request logs included, which never log
Authorization), ``/env`` showing it masked. ``HANG_GUARD`` bounds each process.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from faultserver import FAULTS, FaultServer, refused_url

from .faults_table import ADD_SUCCEEDS, EXPECT, SLOW
from .support import (
    LOG_LINE,
    MASKED,
    Ran,
    assert_no_secret,
    assert_no_traceback,
    assert_terminal_safe,
    clean_env,
    petstore,
)

# One test process runs this module's tests (pyproject's ``--dist loadgroup``): the matrix fixture starts 63
# processes, once per test process that runs any of them.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("fault_matrix")]

COMMANDS = ["/list", "/add Rex --category 3", "/env"]
JSON_COMMANDS = ["/list", "/add Rex --category 3", "/get 1", "/env"]
FACES = ("run-json", "run-verbose", "chat")


def _args(face: str, url: str) -> tuple[list[str], str]:
    if face == "chat":
        return ["chat", "--base-url", url], "".join(f"{c}\n" for c in COMMANDS)
    commands = JSON_COMMANDS if face == "run-json" else COMMANDS
    flags = ["--json"] if face == "run-json" else []
    verbose = ["-v"] if face == "run-verbose" else []
    cs = [a for c in commands for a in ("-c", c)]
    return [*verbose, "run", "--base-url", url, *flags, "--keep-going", *cs], ""


@pytest.fixture(scope="module")
def matrix(faults: FaultServer, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Ran | Exception]:
    home = tmp_path_factory.mktemp("matrix")
    refused = refused_url()

    def one(job: tuple[str, str]) -> Ran | Exception:
        face, fault = job
        url = refused if fault == "refuse" else faults.url(fault)
        args, stdin = _args(face, url)
        # A hang or a trickle waits out every attempt's timeout: 1 s instead of 2 halves the module's longest wait.
        env = clean_env(home, PETSTORE_HTTP__TIMEOUT="1") if fault in SLOW else None
        try:
            return petstore(home, *args, stdin=stdin, env=env)
        except Exception as exc:  # a hang (TimeoutExpired) is judged by its own test
            return exc

    # slow faults first, so their waiting overlaps the rest
    jobs = sorted(((face, fault) for fault in FAULTS for face in FACES), key=lambda j: j[1] not in SLOW)
    with ThreadPoolExecutor(max_workers=6) as pool:
        return dict(zip(jobs, pool.map(one, jobs), strict=True))


def _ran(matrix: dict, face: str, fault: str) -> Ran:
    ran = matrix[(face, fault)]
    if isinstance(ran, Exception):
        raise ran
    assert_no_traceback(ran.out, ran.err)
    assert_no_secret(ran.out, ran.err)
    assert_terminal_safe(ran.everything)
    return ran


def _cause_ok(fault: str, message: str) -> bool:
    return bool(re.search(EXPECT[fault].cause, message))


@pytest.mark.parametrize("fault", FAULTS)
def test_run_json(matrix: dict, fault: str) -> None:
    ran = _ran(matrix, "run-json", fault)
    expect = EXPECT[fault]
    assert ran.code == 1, ran.err  # every fault fails at least one command: exit 1, never 2
    objs = [json.loads(line) for line in ran.out.splitlines()]
    assert [o["command"] for o in objs] == JSON_COMMANDS  # exactly one line per command, nothing else
    listed, added, _, env = objs
    if expect.error is None:
        assert listed["ok"] is True and listed["result"][0]["name"] == "Rex"
        if fault == "unknown_status_and_extra":
            assert listed["result"][0]["status"] == "adopted" and listed["result"][0]["colour"] == "brown"
    else:
        assert listed["ok"] is False and set(listed["error"]) == {"code", "message", "status"}
        assert listed["error"]["code"] == expect.code and listed["error"]["status"] == expect.status
        assert _cause_ok(fault, listed["error"]["message"]), listed["error"]["message"]
    assert added["ok"] is (fault in ADD_SUCCEEDS)
    assert env["ok"] is True and env["result"]["api_key"] == MASKED
    for line in ran.err.splitlines():  # only the deprecation note may go to stderr
        assert line.startswith("note: getPet is deprecated"), line


@pytest.mark.parametrize("fault", FAULTS)
def test_run_human_verbose(matrix: dict, fault: str) -> None:
    ran = _ran(matrix, "run-verbose", fault)
    expect = EXPECT[fault]
    assert ran.code == 1
    logs = [line for line in ran.err.splitlines() if LOG_LINE.match(line)]
    errors = [line for line in ran.err.splitlines() if not LOG_LINE.match(line)]
    assert logs, "-v logs each request"
    assert not [line for line in logs if "authorization" in line.lower()]
    assert all(re.match(r"^-c \d: error: \S", line) for line in errors), errors  # one line per failure
    failed = [int(line[3]) for line in errors]
    assert failed == ([1] if expect.error else []) + ([] if fault in ADD_SUCCEEDS else [2])
    if expect.error is not None:
        assert _cause_ok(fault, errors[0]), errors[0]
    assert MASKED in ran.out and "environment" in ran.out  # /env ran after the failures
    if fault == "unknown_status_and_extra":
        assert "adopted" in ran.out  # an unknown status is shown as it came
    assert all(len(line) <= 100 for line in ran.out.splitlines())


@pytest.mark.parametrize("fault", FAULTS)
def test_chat_piped(matrix: dict, fault: str) -> None:
    ran = _ran(matrix, "chat", fault)
    expect = EXPECT[fault]
    assert ran.code == 0 and ran.err == ""
    lines = ran.out.splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == (1 if expect.error else 0) + (0 if fault in ADD_SUCCEEDS else 1)
    if expect.error is not None:
        assert _cause_ok(fault, errors[0]), errors[0]
    else:
        assert "Rex" in lines[2] and "1 pet" in ran.out
        assert ("adopted" in lines[2]) is (fault == "unknown_status_and_extra")
    assert lines[-4].startswith("environment") and MASKED in lines[-2]  # the session went on to /env
