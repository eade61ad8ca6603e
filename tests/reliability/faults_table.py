"""What each fault of tests/faultserver.py must turn into, in every face.

``error``: the client exception ``list_pets`` raises (None: the list works);
``cause``: a regex the one-line message must match, naming the cause;
``code``: the ``error.code`` of ``petstore run --json``.
"""

from __future__ import annotations

from dataclasses import dataclass

from petstore_api import errors


@dataclass(frozen=True)
class Expect:
    error: type[errors.PetStoreError] | None
    cause: str = ""
    code: str = ""
    status: int = 0


EXPECT: dict[str, Expect] = {
    "ok": Expect(None),
    "unknown_status_and_extra": Expect(None),  # not a fault: shown as it came
    "refuse": Expect(errors.ConnectError, r"cannot connect to 127\.0\.0\.1:\d+: connection refused", "connect"),
    "hang": Expect(errors.TimeoutError, r"no complete answer from 127\.0\.0\.1:\d+ within \d+ s", "timeout"),
    "trickle": Expect(errors.TimeoutError, r"no complete answer from 127\.0\.0\.1:\d+ within \d+ s", "timeout"),
    "close_mid_body": Expect(errors.TransportError, r"broke off before the response was complete", "transport"),
    "status_500": Expect(errors.ServerError, r"fault server says 500", "fault_500", 500),
    "status_502": Expect(errors.ServerError, r"fault server says 502", "fault_502", 502),
    "status_503": Expect(errors.ServerError, r"fault server says 503", "fault_503", 503),
    "status_503_retry_after": Expect(errors.ServerError, r"Service Unavailable", "http_503", 503),
    "retry_after_too_long": Expect(errors.ServerError, r"Service Unavailable", "http_503", 503),
    "status_429": Expect(errors.RateLimitedError, r"slow down", "rate_limited", 429),
    "html": Expect(errors.ProtocolError, r"got an HTML page", "protocol"),
    "html_error": Expect(errors.ServerError, r"Bad Gateway", "http_502", 502),
    "truncated_json": Expect(errors.ProtocolError, r"invalid or truncated JSON", "protocol"),
    "pet_without_id": Expect(errors.ProtocolError, r"item 0: id is missing", "protocol"),
    "id_as_string": Expect(errors.ProtocolError, r"item 0: id is a string", "protocol"),
    "not_a_list": Expect(errors.ProtocolError, r"expected a JSON array of pets, got a JSON object", "protocol"),
    "error_missing_fields": Expect(errors.BadRequestError, r"something was wrong", "http_400", 400),
    "huge": Expect(errors.ProtocolError, r"larger than 10 MiB", "protocol"),
    "commit_then_drop": Expect(errors.ProtocolError, r"got a JSON object", "protocol"),
}

#: Faults under which ``/add`` succeeds (the create is retried under its key).
ADD_SUCCEEDS = {"commit_then_drop"}
#: Faults that cost the whole time budget per request.
SLOW = {"hang", "trickle"}
