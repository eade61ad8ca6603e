"""The client's events, as the TUI sees them: the last exchange (for the last-call view) and the
"waiting for the service…" line while a call is retried.

:class:`CallWatch` is one of the client's event hooks (the command layer's
:class:`~bot_commands.ports.PetStoreAPI` port); the main screen adds it when it gets the session. It
keeps the last :class:`~bot_commands.ports.Exchange` and posts :class:`ClientActivity` to the screen
(messages up): it never reads the client's state. Decisions are plain functions, testable alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message
from textual.message_pump import MessagePump

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.ports import ClientEvent, Exchange

#: Longest body shown in the last-call view (the rest is cut, and its size said).
BODY_SHOWN = 64 * 1024


class ClientActivity(Message):
    """The client told an event (an attempt started, a retry is coming, a response came)."""

    def __init__(self, event: ClientEvent) -> None:
        super().__init__()
        self.event = event


class CallWatch:
    """An event hook for the session's client: remembers the last exchange, tells ``target``."""

    def __init__(self, target: MessagePump) -> None:
        self.target = target
        self.last: Exchange | None = None

    def __call__(self, event: ClientEvent) -> None:
        from bot_commands.ports import Exchange

        if isinstance(event, Exchange):
            self.last = event
        self.target.post_message(ClientActivity(event))


def waiting_text(event: ClientEvent) -> str | None:
    """The line shown while a call is retried ("waiting for the service… (retry 2 of 3)"), else None."""
    from bot_commands.ports import Retrying

    if isinstance(event, Retrying):
        return f"waiting for the service… (retry {event.attempt} of {event.attempts})"
    return None


def shown_url(url: str, *, sandbox: str | None) -> str:
    """The URL as the last-call view shows it: on the in-process sandbox (``sandbox``: its label) the
    made-up host never shows, only the path and the label, as everywhere else the sandbox is named."""
    if sandbox is None:
        return url
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.path}{'?' + parts.query if parts.query else ''}  {sandbox}"


def shown_headers(headers: tuple[tuple[str, str], ...], *, sandbox: str | None) -> tuple[tuple[str, str], ...]:
    """Headers as the view shows them: on the sandbox, ``Host`` is its label."""
    if sandbox is None:
        return headers
    return tuple((name, sandbox if name.lower() == "host" else value) for name, value in headers)


def body_text(body: bytes) -> str:
    """A body as it may be read: JSON indented, other text as it came (cut past :data:`BODY_SHOWN`)."""
    import json  # the last-call view only: the first frame imports this module

    if not body:
        return "(empty)"
    shown = body[:BODY_SHOWN].decode("utf-8", "replace")
    try:
        text = json.dumps(json.loads(shown), indent=2, ensure_ascii=False)
    except ValueError:
        text = shown
    if len(body) > BODY_SHOWN:
        text += f"\n… ({len(body)} bytes in all)"
    return text
