"""The one table of errors: every error named once (kind, title, code, exit code), nowhere else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import petstore_api.errors as client_errors
from bot_commands import errors
from bot_commands.errors import ERRORS, EXIT_FAILED, EXIT_USAGE, classify
from petstore_api.models import ErrorBody

ROOT = Path(__file__).resolve().parents[2]


def _classes(module: object) -> list[type[BaseException]]:
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == module.__name__
    ]


CLASSES = _classes(errors) + _classes(client_errors)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_no_error_class_carries_a_second_copy_of_the_table(cls: type[BaseException]) -> None:
    assert not {"kind", "exit_code", "code", "title"} & set(vars(cls))


def test_no_row_is_hidden_behind_an_earlier_one() -> None:
    for index, row in enumerate(ERRORS):
        for earlier in ERRORS[:index]:
            broader = issubclass(row.error, earlier.error) and earlier.status in (None, row.status)
            assert not broader, f"{row.error.__name__} ({row.status}) is never reached: {earlier.error.__name__} first"


def _api(status: int) -> client_errors.APIError:
    body = ErrorBody(code=f"svc_{status}", message="said no", status=status)
    return client_errors.api_error_for(status)(body)


@pytest.mark.parametrize(
    ("exc", "kind", "code", "exit_code"),
    [
        (errors.UsageError("bad", usage="/get ID"), "usage", "usage", EXIT_USAGE),
        (errors.NoMorePages("none"), "no_more_pages", "no_more_pages", EXIT_USAGE),
        (errors.ExpectationFailed(expected="ok", actual="an error"), "expectation_failed", "expectation_failed", 1),
        (client_errors.ConnectError("refused"), "unreachable", "connect", EXIT_FAILED),
        (client_errors.TimeoutError("slow"), "unreachable", "timeout", EXIT_FAILED),
        (client_errors.ProtocolError("html"), "protocol", "protocol", EXIT_FAILED),
        (client_errors.InsecureTransportError("http"), "config", "insecure_transport", EXIT_USAGE),
        (client_errors.InputError("limit"), "invalid_input", "invalid_input", EXIT_USAGE),
        (_api(401), "auth", "svc_401", EXIT_FAILED),
        (_api(410), "gone", "svc_410", EXIT_FAILED),
        (_api(503), "api", "svc_503", EXIT_FAILED),
        (KeyError("x"), "internal", "internal", EXIT_FAILED),
    ],
)
def test_each_error_is_named_by_its_row(exc: BaseException, kind: str, code: str, exit_code: int) -> None:
    failure = classify(exc)
    assert (failure.kind, failure.code, failure.exit_code) == (kind, code, exit_code)


def test_the_codes_the_docs_document_are_the_tables() -> None:
    text = (ROOT / "docs" / "run.md").read_text(encoding="utf-8")
    listed = re.search(r"`code` naming the kind: (.*?)\. ", text, re.DOTALL)
    assert listed is not None
    documented = set(re.findall(r"`([a-z_]+)`", listed.group(1)))
    table = {row.code or row.kind for row in ERRORS if row.error is not client_errors.APIError}
    assert documented and documented <= table, documented - table
