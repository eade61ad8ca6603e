"""What a client tells its listeners while it works: attempts, retries and each exchange on the wire.

A face passes hooks to :class:`~petstore_api.client.PetStoreClient` (``event_hooks=``, or
:meth:`~petstore_api.client.PetStoreClient.add_event_hook` later) to show progress ("waiting for
the service… (retry 2 of 3)") or the last request and response. Hooks are called on the event loop
that runs the call, must return quickly and never raise into the call (an exception from a hook is
logged and dropped). Nothing in an event holds the API key: header values pass through the client's
scrubber, and the ``Authorization`` header is shown masked whatever its value.
"""

from __future__ import annotations

from collections.abc import Callable

from petstore_os.records import record

__all__ = ["AttemptStarted", "ClientEvent", "EventHook", "Exchange", "Retrying", "SECRET_HEADERS"]

#: Header names whose values are never shown in full (compared lower-case).
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key"})


@record(kw_only=True)
class AttemptStarted:
    """Attempt ``attempt`` of ``attempts`` of a call (``label`` like ``GET /pets``) is being sent."""

    label: str
    method: str
    url: str
    attempt: int
    attempts: int


@record(kw_only=True)
class Retrying:
    """The call will be sent again (attempt ``attempt`` of ``attempts``) in ``wait`` seconds, because of ``reason``."""

    label: str
    attempt: int
    attempts: int
    wait: float
    reason: str


@record(kw_only=True)
class Exchange:
    """One request and the response it got (any status), as sent and received; secrets masked."""

    label: str
    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...]
    request_body: bytes
    status: int
    response_headers: tuple[tuple[str, str], ...]
    response_body: bytes
    elapsed_ms: float
    attempt: int


ClientEvent = AttemptStarted | Retrying | Exchange

#: A listener: called with each event, on the loop running the call.
EventHook = Callable[[ClientEvent], None]
