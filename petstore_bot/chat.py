"""Transport-neutral chat types: what a transport hands the bot core and what it gets back. No SDK import."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.outcome import Outcome

#: What a person is told when the bot itself failed on their command (the details go to the log).
INTERNAL_ERROR = "Sorry: an internal error stopped that command (it has been logged)."


@dataclass(frozen=True, slots=True)
class Incoming:
    """One chat message addressed to the bot."""

    platform: str  # "matrix"
    room: str  # room id
    user: str  # sender id, e.g. "@alice:localhost"
    event_id: str
    text: str  # the plain body as sent
    #: The reply is seen by the sender alone (a slash command's ephemeral response), not by a whole room.
    private: bool = False
    #: A write in it waits for confirmation whatever the policy says: the platform gave the message no id of its own
    #: (``event_id`` is made up for it), so the confirmation, whose press the platform repeats as it was sent, names
    #: the write (Mattermost without ``trigger_id``).
    confirm_writes: bool = False


@dataclass(frozen=True, slots=True)
class Reply:
    """What the bot answers: a plain body always, HTML (already escaped by the caller) when it has one."""

    text: str
    html: str | None = None
    #: How a write went, as a reaction on the asking message: ``✅`` done, ``❌`` refused or failed (None: not a write).
    mark: str | None = None
    #: The outcome the bodies show (their view's), for a platform that adds what only it can show: Slack's buttons
    #: under a request for approval (None: a reply made of text alone).
    outcome: Outcome | None = None


Handler = Callable[[Incoming], Awaitable[Reply | None]]
