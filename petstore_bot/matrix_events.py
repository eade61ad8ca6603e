"""Matrix event contents, in and out: who a message names, how a reply relates to it, reactions, typing.

Pure functions over the JSON of events (no client, no I/O), so the transport only moves them.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Mapping
from typing import Literal

from petstore_bot.chat import Reply

JSON = dict[str, object]
ReplyStyle = Literal["reply", "thread", "plain"]

MAX_EVENT_BYTES = 60_000  # Matrix caps an event at 65536 bytes, envelope included
#: The id of the asking event, in every reply of the bot whatever its ``reply_style``: a ``plain`` reply relates to
#: nothing, and another replica of the bot reading the timeline must still know what it answers (:func:`answered`).
ANSWERS = "petstore.answers"
_MX_REPLY = re.compile(r"^\s*<mx-reply>.*?</mx-reply>", re.DOTALL)
_LEADING_LINK = re.compile(r'^\s*<a\s+href="https://matrix\.to/#/([^"?]+)[^"]*"\s*>(.*?)</a>', re.DOTALL)


def content_of(event: Mapping[str, object]) -> Mapping[str, object]:
    """An event's ``content`` (empty when it has none or it is not an object)."""
    content = event.get("content")
    return content if isinstance(content, dict) else {}


def pill_names(content: Mapping[str, object], *, user_id: str) -> tuple[str, ...]:
    """The text of a mention pill of ``user_id`` that starts the message (Element inserts the display name as a
    link to ``https://matrix.to/#/@user``), when the HTML body has one; the reply fallback is skipped."""
    formatted = content.get("formatted_body")
    if content.get("format") != "org.matrix.custom.html" or not isinstance(formatted, str):
        return ()
    found = _LEADING_LINK.match(_MX_REPLY.sub("", formatted, count=1))
    if found is None or html.unescape(found[1]).replace("%40", "@").replace("%3A", ":") != user_id:
        return ()
    text = html.unescape(re.sub(r"<[^>]*>", "", found[2])).strip()
    return (text,) if text else ()


def mentions(content: Mapping[str, object], *, user_id: str) -> bool:
    """Whether the message names ``user_id`` in its ``m.mentions`` (clients set it with a pill)."""
    found = content.get("m.mentions")
    users = found.get("user_ids") if isinstance(found, dict) else None
    return isinstance(users, list) and user_id in users


def _thread_root(event: Mapping[str, object]) -> str | None:
    relates = content_of(event).get("m.relates_to")
    if isinstance(relates, dict) and relates.get("rel_type") == "m.thread" and isinstance(relates.get("event_id"), str):
        return str(relates["event_id"])
    return None


def relation(*, event: Mapping[str, object], event_id: str, style: ReplyStyle) -> JSON | None:
    """How an answer relates to the asking event: ``reply`` (a rich reply), ``thread`` (in the asker's thread,
    or a new one on it) or ``plain`` (none). An ask inside a thread is answered in that thread whatever the style."""
    root = _thread_root(event)
    in_reply_to = {"event_id": event_id}
    if root is not None or style == "thread":
        falling_back = style != "reply"
        return {
            "rel_type": "m.thread",
            "event_id": root or event_id,
            "is_falling_back": falling_back,
            "m.in_reply_to": in_reply_to,
        }
    if style == "reply":
        return {"m.in_reply_to": in_reply_to}
    return None


def answered(event: Mapping[str, object]) -> str | None:
    """The event a reply answers (its ``ANSWERS``, else its ``m.in_reply_to``), None for other events."""
    content = content_of(event)
    if isinstance(asks := content.get(ANSWERS), str):
        return asks
    relates = content.get("m.relates_to")
    in_reply_to = relates.get("m.in_reply_to") if isinstance(relates, dict) else None
    asked = in_reply_to.get("event_id") if isinstance(in_reply_to, dict) else None
    return asked if isinstance(asked, str) else None


def reply_content(*, event: Mapping[str, object], event_id: str, reply: Reply, style: ReplyStyle = "reply") -> JSON:
    """The m.notice answering ``event``: related as ``style`` says, naming ``event_id`` (``ANSWERS``), an empty
    ``m.mentions``, HTML when the reply has it. An empty ``event_id``: a post that answers nobody."""
    content: JSON = {"msgtype": "m.notice", "body": reply.text, "m.mentions": {}}
    if event_id:
        content[ANSWERS] = event_id
    relates = relation(event=event, event_id=event_id, style=style)
    if relates is not None:
        content["m.relates_to"] = relates
    if reply.html is not None:
        content["format"] = "org.matrix.custom.html"
        content["formatted_body"] = reply.html
    if len(json.dumps(content).encode("utf-8")) > MAX_EVENT_BYTES:
        content.pop("format", None)
        content.pop("formatted_body", None)
        body = reply.text.encode("utf-8")[: MAX_EVENT_BYTES // 2].decode("utf-8", errors="ignore")
        content["body"] = body + "\n… (reply truncated)"
    return content


def notice(text: str) -> JSON:
    """A notice to a whole room (not an answer to anyone), pinging nobody."""
    return {"msgtype": "m.notice", "body": text, "m.mentions": {}}


def edit(event_id: str, content: JSON) -> JSON:
    """An edit (``m.replace``) of the bot's own message ``event_id`` to ``content``."""
    return {
        **content,
        "body": f"* {content.get('body')}",
        "m.new_content": content,
        "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
    }


def reaction(*, event_id: str, key: str) -> JSON:
    """An ``m.reaction`` annotating ``event_id`` with ``key`` (an emoji)."""
    return {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}


def transaction_id(event_id: str) -> str:
    """The same asking event always gives the same transaction id, so a retried send is deduplicated."""
    return "petstore-" + hashlib.sha256(event_id.encode("utf-8")).hexdigest()[:32]
