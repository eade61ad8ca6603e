"""An in-memory chat backend for the bot core's own tests and demos (like errbot's test backend).

``room = ChatRoom(core.handle)`` then ``await room.say("@alice:test", "!list")`` returns the bot's reply (or None);
every message gets a fresh event id, as a real platform would give it. No network, no SDK.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from .chat import Handler, Incoming, Reply

__all__ = ["ChatRoom", "Said"]


@dataclass(frozen=True, slots=True)
class Said:
    user: str
    text: str
    reply: Reply | None


@dataclass
class ChatRoom:
    """One room of a fake platform; ``transcript`` keeps every message and its reply."""

    handler: Handler
    room: str = "!room:test"
    platform: str = "test"
    transcript: list[Said] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def say(self, user: str, text: str, *, event_id: str | None = None) -> Reply | None:
        """Send ``text`` as ``user``; ``event_id`` repeats an earlier delivery when given."""
        incoming = Incoming(
            platform=self.platform,
            room=self.room,
            user=user,
            event_id=event_id or f"$event{next(self._ids)}",
            text=text,
        )
        reply = await self.handler(incoming)
        self.transcript.append(Said(user=user, text=text, reply=reply))
        return reply

    async def text(self, user: str, text: str) -> str:
        """The plain body of the reply to ``text`` ("" when the bot stays silent)."""
        reply = await self.say(user, text)
        return reply.text if reply else ""
