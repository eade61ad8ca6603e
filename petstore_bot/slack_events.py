"""Slack's Events API: a mention of the bot in a channel (``app_mention``) or a message in a DM with it
(``message.im``) as a command, answered with ``chat.postMessage``. The same events come over HTTP
(``POST /slack/events``) and over Socket Mode; this module is what both share.

What the bot ignores: its own messages, every message with a ``subtype`` (``bot_message``, edits, joins...) or a
``bot_id`` (other bots), and any other event type. Slack sends an event again when it was not acknowledged in time
(``X-Slack-Retry-Num`` over HTTP, ``retry_attempt`` over Socket Mode): the event's ``event_id`` is remembered, so a
repeat is acknowledged and not run twice; after a restart the write's Idempotency-Key, derived from the same id,
makes the service replay rather than write again.

Text from chat is Slack's mrkdwn: mentions, channels and links come as ``<@U123>``, ``<#C1|ops>``,
``<http://x|x>``, and ``&``, ``<``, ``>`` as entities. :func:`typed_text` turns it back into what the person typed,
so a command's arguments are their words; replies escape it again (slack_render), so nothing pings anyone.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from .chat import Incoming
from .slack_render import slack_person

__all__ = ["ChatEvent", "EventGate", "chat_event", "typed_text"]

log = logging.getLogger("petstore_bot.slack")

#: Event ids remembered for spotting repeats (Slack retries within minutes: 3 tries, the last after 5 minutes).
MAX_SEEN = 10_000
_ENTITY = re.compile(r"<([^<>]*)>")


def typed_text(mrkdwn: str) -> str:
    """What the person typed, from Slack's text: ``<@U1|ann>`` -> ``@ann``, ``<!here>`` -> ``@here``, ``<#C1|ops>``
    -> ``#ops``, a link -> its label (or its URL), then ``&lt;`` ``&gt;`` ``&amp;`` -> ``<`` ``>`` ``&``."""

    def entity(match: re.Match[str]) -> str:
        target, _, label = match[1].partition("|")
        if target[:1] in ("@", "#"):
            return target[0] + (label or target[1:])
        if target[:1] == "!":  # <!channel>, <!subteam^S1|@team>, <!date^...|fallback>
            return label or "@" + target[1:].split("^", 1)[0]
        return label or target

    return _ENTITY.sub(entity, mrkdwn).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


@dataclass(frozen=True, slots=True)
class ChatEvent:
    """A command in a mention or a DM, and where its reply goes (``thread_ts``: the thread it was in, if any)."""

    incoming: Incoming
    asker: str  # the Slack person: team and user (slack_render.slack_person)
    channel: str
    thread_ts: str | None


def chat_event(payload: Mapping[str, object], *, bot_user: str, prefix: str, command: str) -> ChatEvent | None:
    """The command in an ``event_callback`` payload; None for an event the bot does not answer (see the module).

    ``bot_user``: the bot's own Slack user id; ``prefix``: the bot core's; ``command``: the slash command
    (``/pets``), which a person may also type in a message out of habit.
    """
    event, team = payload.get("event"), payload.get("team_id")
    if not isinstance(event, dict) or not isinstance(team, str):
        return None
    kind, user, channel, text = (event.get(k) for k in ("type", "user", "channel", "text"))
    if not all(isinstance(v, str) and v for v in (user, channel)) or not isinstance(text, str):
        return None
    assert isinstance(user, str) and isinstance(channel, str)
    if user == bot_user or "subtype" in event or event.get("bot_id"):
        return None
    if kind == "message" and event.get("channel_type") != "im":
        return None
    if kind not in ("app_mention", "message"):
        return None
    words = _after_mention(text, bot_user)
    if kind == "app_mention" and words is None:  # a mention of the bot is what made this event
        return None
    line = typed_text(text if words is None else words).strip()
    if line == command or line.startswith(command + " "):
        line = line[len(command) :].strip()
    event_id = payload.get("event_id")
    ts = event.get("ts")
    thread = event.get("thread_ts")
    asker = slack_person(team, user)
    incoming = Incoming(
        platform="slack",
        room=f"{team}/{channel}",
        user=f"slack:{asker}",
        event_id=event_id if isinstance(event_id, str) and event_id else f"{channel}:{ts}",
        text=f"{prefix}{line.removeprefix('/')}",
        private=event.get("channel_type") == "im",
    )
    return ChatEvent(
        incoming=incoming, asker=asker, channel=channel, thread_ts=thread if isinstance(thread, str) else None
    )


def _after_mention(text: str, bot_user: str) -> str | None:
    """The text after the first mention of the bot (and a ``:`` or ``,`` after it); None when it is not mentioned."""
    found = re.search(rf"<@{re.escape(bot_user)}(?:\|[^<>]*)?>[\s:,]*", text)
    return None if found is None else text[found.end() :]


class EventGate:
    """Lets each event through once: a repeat (Slack's retry of an event it already sent) is logged and dropped."""

    def __init__(self, *, max_seen: int = MAX_SEEN) -> None:
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._max = max_seen

    def first(self, payload: Mapping[str, object], *, retry: int | None, reason: str | None = None) -> bool:
        """Whether this event is new; a repeat says so in the log (with Slack's retry number and reason)."""
        event_id = payload.get("event_id")
        if not isinstance(event_id, str) or not event_id:
            return True
        if event_id in self._seen:
            log.info("Slack sent event %s again (retry %s, %s): already taken, not run twice", event_id, retry, reason)
            return False
        if retry:
            log.info("Slack retried event %s (retry %d, %s): not seen before, running it", event_id, retry, reason)
        self._seen[event_id] = None
        while len(self._seen) > self._max:
            self._seen.popitem(last=False)
        return True
