"""Malformed and hostile requests to the real ``petstore bot slack`` process: a 401, 400 or 413 with one line, never a
500 and never a traceback in its log.

Slack and Mattermost cannot be reached from here: the tests speak their published protocols (Slack's v0 request
signature, Mattermost's command token and button context) to the real process over loopback, then read what the
process wrote on stderr. The process runs on the sandbox service with the rate limit off; every test reads only the
log lines its own requests caused.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .slack_support import TOKEN, BotProcess, bot_process, sign

pytestmark = pytest.mark.slow

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
#: 3,000 fields in 12 KB (under the 16 KiB limit of a body).
MANY_FIELDS = b"&".join([b"a=1"] * 3000)


@pytest.fixture(scope="module")
def slack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    with bot_process(tmp_path_factory.mktemp("slack")) as process:
        yield process


@pytest.fixture(scope="module")
def mattermost(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    with bot_process(tmp_path_factory.mktemp("mattermost"), mattermost=True) as process:
        yield process


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    """One client for the module, fuzzed examples included: a new one builds a TLS context (~40 ms of CPU)."""
    with httpx.Client(timeout=30) as client:
        yield client


def command_body(text: str = "whoami", **extra: str) -> bytes:
    form = {
        "command": "/pets",
        "text": text,
        "user_id": "U1",
        "team_id": "T1",
        "channel_id": "C1",
        "response_url": "https://hooks.slack.com/commands/T1/1/x",
        "trigger_id": f"t-{time.monotonic_ns()}",
        **extra,
    }
    return urlencode(form).encode()


def assert_clean(log: str) -> None:
    """No traceback, no error line: a refusal is one WARNING line with its reason."""
    assert "Traceback" not in log and " ERROR " not in log and "Exception in ASGI" not in log, log


def refusal_reason(log: str) -> str:
    lines = [line for line in log.splitlines() if " refused " in line]
    assert len(lines) == 1, log
    return lines[0].split(": ", 1)[1]


NOW = str(int(time.time()))
#: name -> (the headers of a signed command, changed; the reason the log gives)
BAD_HEADERS: dict[str, tuple[dict[str, bytes | str], str]] = {
    "a timestamp of 5,000 digits": (
        {"X-Slack-Request-Timestamp": "9" * 5000},
        "X-Slack-Request-Timestamp is not a Unix time: 5000 digits",
    ),
    "a negative timestamp": ({"X-Slack-Request-Timestamp": "-" + NOW}, "X-Slack-Request-Timestamp is not a number"),
    "Latin-1 digits": ({"X-Slack-Request-Timestamp": b"\xb2\xb3"}, "X-Slack-Request-Timestamp is not a number"),
    "an empty timestamp": (
        {"X-Slack-Request-Timestamp": ""},
        "missing X-Slack-Request-Timestamp or X-Slack-Signature",
    ),
    "no signature": ({"X-Slack-Signature": ""}, "missing X-Slack-Request-Timestamp or X-Slack-Signature"),
    "a garbled signature": ({"X-Slack-Signature": "v0=xyz"}, "X-Slack-Signature is not v0= and 64 hex digits"),
    "a non-ASCII signature": (
        {"X-Slack-Signature": b"v0=" + b"\xe9" * 64},
        "X-Slack-Signature is not v0= and 64 hex digits",
    ),
    "a signature of 8,000 characters": (
        {"X-Slack-Signature": "v0=" + "ab" * 4000},
        "X-Slack-Signature is not v0= and 64 hex digits",
    ),
    "another version": ({"X-Slack-Signature": "v1=" + "0" * 64}, "X-Slack-Signature is not v0= and 64 hex digits"),
}


@pytest.mark.parametrize("case", list(BAD_HEADERS))
@pytest.mark.parametrize("path", ["/slack/commands", "/slack/interactions"])
def test_a_hostile_header_is_a_401_with_its_reason_in_one_log_line(
    slack: BotProcess, http: httpx.Client, case: str, path: str
) -> None:
    changed, reason = BAD_HEADERS[case]
    body = command_body("add Forged --category 1")
    headers: dict[str, str | bytes] = {**sign(body), **changed}
    slack.new_log()
    answer = http.post(f"{slack.base}{path}", content=body, headers={k: v for k, v in headers.items() if v != ""})
    assert (answer.status_code, answer.json()) == (401, {"error": "unauthorized"})
    log = slack.new_log()
    assert_clean(log)
    assert refusal_reason(log) == reason


@pytest.mark.parametrize(
    ("name", "body", "status", "reply"),
    [
        ("a huge body", b"x=" + b"y" * 20_000, 413, "request body too large: at most 16384 bytes"),
        ("thousands of fields", MANY_FIELDS, 400, "too many form fields: at most 64"),
        ("a field without =", b"command=%2Fpets&oops", 400, "body is not a URL-encoded form"),
        (
            "no command fields",
            b"text=list&user_id=U1",
            400,
            "missing form fields: command, channel_id, response_url, team_id",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 30 else "",
)
def test_a_signed_body_the_app_cannot_use_is_a_400_or_413_with_one_line(
    slack: BotProcess, http: httpx.Client, name: str, body: bytes, status: int, reply: str
) -> None:
    slack.new_log()
    answer = http.post(f"{slack.base}/slack/commands", content=body, headers=sign(body))
    assert (answer.status_code, answer.json()) == (status, {"error": reply}), name
    assert_clean(slack.new_log())


def test_a_huge_body_sent_in_chunks_without_a_length_is_refused_before_it_is_all_read(
    slack: BotProcess, http: httpx.Client
) -> None:
    sent = []

    def chunks() -> Iterator[bytes]:
        for _ in range(1000):  # 1 MB in all, if the app read it all
            sent.append(1)
            yield b"y" * 1000

    slack.new_log()
    answer = http.post(f"{slack.base}/slack/commands", content=chunks(), headers=FORM)
    assert (answer.status_code, answer.json()) == (413, {"error": "request body too large: at most 16384 bytes"})
    assert_clean(slack.new_log())


@pytest.mark.parametrize(
    ("name", "body", "reason"),
    [
        ("non-UTF-8", b"command=%2Fpets&text=\xff\xfe", "body is not UTF-8"),
        ("thousands of fields", MANY_FIELDS, "signature does not match"),
    ],
    ids=["non-UTF-8", "thousands of fields"],
)
def test_an_unsigned_odd_body_is_a_401(
    slack: BotProcess, http: httpx.Client, name: str, body: bytes, reason: str
) -> None:
    headers = {**sign(b"something else"), **FORM}
    slack.new_log()
    answer = http.post(f"{slack.base}/slack/commands", content=body, headers=headers)
    assert (answer.status_code, answer.json()) == (401, {"error": "unauthorized"})
    log = slack.new_log()
    assert_clean(log)
    assert refusal_reason(log) == reason


def test_a_signed_non_utf8_body_is_refused_with_its_reason(slack: BotProcess, http: httpx.Client) -> None:
    body = b"command=%2Fpets&text=\xff\xfe"
    slack.new_log()
    answer = http.post(f"{slack.base}/slack/commands", content=body, headers=sign(body))
    assert answer.status_code == 401
    log = slack.new_log()
    assert_clean(log)
    assert refusal_reason(log) == "body is not UTF-8"


def test_a_signed_press_nested_five_thousand_deep_is_a_400(slack: BotProcess, http: httpx.Client) -> None:
    body = urlencode({"payload": "[" * 5_000}).encode()  # 15 KB
    slack.new_log()
    answer = http.post(f"{slack.base}/slack/interactions", content=body, headers=sign(body))
    assert (answer.status_code, answer.json()) == (400, {"error": "payload is not a block_actions interaction"})
    assert_clean(slack.new_log())


@pytest.mark.parametrize(
    ("name", "body", "status", "reply"),
    [
        ("nested ten thousand deep", b"[" * 10_000, 400, {"error": "body is not JSON"}),
        ("not UTF-8", b'{"context": "\xff"}', 400, {"error": "body is not JSON"}),
        ("a list", b"[1, 2]", 401, {"error": "unauthorized"}),
        (
            "a context of the wrong types",
            json.dumps({"context": {"action": 1, "sig": []}}).encode(),
            401,
            {"error": "unauthorized"},
        ),
        (
            "a forged signature",
            json.dumps({"context": dict.fromkeys(("action", "code", "user", "sig"), "x")}).encode(),
            401,
            {"error": "unauthorized"},
        ),
    ],
    ids=["deep", "not UTF-8", "a list", "wrong types", "forged"],
)
def test_a_hostile_mattermost_press_is_a_400_or_401(
    mattermost: BotProcess, http: httpx.Client, name: str, body: bytes, status: int, reply: dict[str, str]
) -> None:
    mattermost.new_log()
    answer = http.post(
        f"{mattermost.base}/slack/interactions", content=body, headers={"Content-Type": "application/json"}
    )
    assert (answer.status_code, answer.json()) == (status, reply), name
    assert_clean(mattermost.new_log())


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("thousands of fields", b"token=" + TOKEN.encode() + b"&" + MANY_FIELDS),
        ("non-UTF-8", b"token=" + TOKEN.encode() + b"&text=\xff"),
        ("no token", urlencode({"text": "whoami", "user_id": "u", "channel_id": "c"}).encode()),
    ],
    ids=["thousands of fields", "non-UTF-8", "no token"],
)
def test_a_mattermost_command_without_a_readable_token_is_a_401(
    mattermost: BotProcess, http: httpx.Client, name: str, body: bytes
) -> None:
    mattermost.new_log()
    answer = http.post(f"{mattermost.base}/slack/commands", content=body, headers=FORM)
    assert (answer.status_code, answer.json()) == (401, {"error": "unauthorized"}), name
    log = mattermost.new_log()
    assert_clean(log)
    assert refusal_reason(log)


def test_a_client_gone_mid_body_leaves_no_traceback_and_the_app_answers_the_next(
    slack: BotProcess, http: httpx.Client
) -> None:
    port = int(slack.base.rsplit(":", 1)[1])
    slack.new_log()
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", port)) as raw:
            raw.sendall(
                b"POST /slack/commands HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n"
                b"Content-Type: application/x-www-form-urlencoded\r\n\r\ncommand=%2F"
            )
    body = command_body()
    answer = http.post(f"{slack.base}/slack/commands", content=body, headers=sign(body))
    assert answer.status_code == 200 and "slack:T1/U1" in answer.text
    assert_clean(slack.new_log())


def test_a_signed_ssl_check_is_answered_200_and_an_unsigned_one_401(slack: BotProcess, http: httpx.Client) -> None:
    """Slack checks the certificate of a slash command's URL with ``ssl_check=1`` (and a token); nothing runs."""
    body = b"ssl_check=1&token=legacy-verification-token"
    signed = http.post(f"{slack.base}/slack/commands", content=body, headers=sign(body))
    assert (signed.status_code, signed.content) == (200, b"")
    unsigned = http.post(f"{slack.base}/slack/commands", content=body, headers=FORM)
    assert unsigned.status_code == 401


# -- a little fuzzing ----------------------------------------------------------------------------------------------

_HEADER_BYTES = st.binary(max_size=80).map(lambda b: bytes(c for c in b if c >= 0x21 and c != 0x7F))
_TIMESTAMPS = st.one_of(
    st.none(),
    st.just("now"),
    st.text(alphabet="0123456789", min_size=1, max_size=6000),
    st.text(alphabet="0123456789-+. eE_", min_size=1, max_size=30).map(str.strip).filter(bool),
    _HEADER_BYTES,
)
_SIGNATURES = st.one_of(
    st.none(), st.just("valid"), st.text(alphabet="v0=abcdef0123456789", max_size=80), _HEADER_BYTES
)
_VALUES = st.text(max_size=60) | st.sampled_from(
    ["whoami", "add Rex --category 1", "list --limit 0", "get 999999999999"]
)
_BODIES = st.one_of(
    st.binary(max_size=2000),
    st.dictionaries(
        st.sampled_from(
            [
                "command",
                "text",
                "user_id",
                "team_id",
                "channel_id",
                "response_url",
                "trigger_id",
                "payload",
                "ssl_check",
                "token",
            ]
        )
        | st.text(max_size=10),
        _VALUES,
        max_size=12,
    ).map(lambda form: urlencode(form).encode()),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=20,
    ).map(lambda value: urlencode({"payload": json.dumps(value)}).encode()),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.sampled_from(["/slack/commands", "/slack/interactions"]),
    timestamp=_TIMESTAMPS,
    signature=_SIGNATURES,
    body=_BODIES,
    content_type=st.sampled_from(["application/x-www-form-urlencoded", "application/json", "text/plain", None]),
)
def test_fuzzed_requests_get_a_4xx_or_200_never_a_500_or_a_traceback(
    slack: BotProcess,
    mattermost: BotProcess,
    http: httpx.Client,
    path: str,
    timestamp: str | bytes | None,
    signature: str | bytes | None,
    body: bytes,
    content_type: str | None,
) -> None:
    ts: str | bytes | None = str(int(time.time())) if timestamp == "now" else timestamp
    headers: dict[str, str | bytes] = {}
    if ts is not None:
        headers["X-Slack-Request-Timestamp"] = ts
    if signature == "valid":
        headers["X-Slack-Signature"] = sign(body, timestamp=ts.decode("latin-1") if isinstance(ts, bytes) else ts)[
            "X-Slack-Signature"
        ]
    elif signature is not None:
        headers["X-Slack-Signature"] = signature
    if content_type:
        headers["Content-Type"] = content_type
    for process in (slack, mattermost):
        answer = http.post(f"{process.base}{path}", content=body, headers=headers)
        assert answer.status_code in (200, 400, 401, 413), (process.base, answer.status_code, answer.text)
        assert_clean(process.new_log())


def test_nothing_the_hostile_requests_sent_was_written(slack: BotProcess, mattermost: BotProcess) -> None:
    for process in (slack, mattermost):
        audit: Path = process.audit
        lines = audit.read_text(encoding="utf-8").splitlines() if audit.exists() else []
        assert not any('"applied": "yes"' in line for line in lines), lines


_COMMAND_TEXT = st.text(max_size=80) | st.builds(
    "{} {}".format,
    st.sampled_from(["add", "list", "get", "more", "confirm", "cancel", "help", "expect", "sleep", "whoami", "orders"]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40),
)
_SIGNED_FORMS = st.fixed_dictionaries(
    {"command": st.just("/pets"), "text": _COMMAND_TEXT},
    optional={
        "user_id": st.text(max_size=20),
        "team_id": st.text(max_size=20),
        "channel_id": st.text(max_size=20),
        "response_url": st.sampled_from(["https://hooks.slack.com/commands/T1/1/x", "http://127.0.0.1:9/x", "", "x"]),
        "trigger_id": st.text(max_size=20),
        "ssl_check": st.sampled_from(["1", "0", ""]),
    },
)
_PRESS_PAYLOADS = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["block_actions", "view_submission", ""]),
        "user": st.fixed_dictionaries({}, optional={"id": st.text(max_size=8) | st.integers()}),
        "team": st.fixed_dictionaries({}, optional={"id": st.text(max_size=8) | st.none()}),
        "channel": st.fixed_dictionaries({}, optional={"id": st.text(max_size=8)}),
        "response_url": st.text(max_size=30),
        "actions": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "action_id": st.sampled_from(["petstore_confirm", "petstore_cancel", "other"]),
                    "value": st.text(max_size=6) | st.integers(),
                },
            ),
            max_size=2,
        ),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(form=_SIGNED_FORMS, press=_PRESS_PAYLOADS)
def test_fuzzed_signed_commands_and_presses_get_an_answer_never_a_500_or_a_traceback(
    slack: BotProcess, mattermost: BotProcess, http: httpx.Client, form: dict[str, str], press: dict[str, object]
) -> None:
    """Past verification: any form a verified sender could send (Slack signed, Mattermost with its token)."""
    body = urlencode(form).encode()
    answer = http.post(f"{slack.base}/slack/commands", content=body, headers=sign(body))
    assert answer.status_code in (200, 400), (answer.status_code, answer.text)
    pressed = urlencode({"payload": json.dumps(press)}).encode()
    answer = http.post(f"{slack.base}/slack/interactions", content=pressed, headers=sign(pressed))
    assert answer.status_code in (200, 400), (answer.status_code, answer.text)
    assert_clean(slack.new_log())
    body = urlencode({**form, "token": TOKEN}).encode()
    answer = http.post(f"{mattermost.base}/slack/commands", content=body, headers=FORM)
    assert answer.status_code in (200, 400), (answer.status_code, answer.text)
    assert_clean(mattermost.new_log())
