"""What Slack and Mattermost send, read into the bot's terms: a slash command's form, a button's press (Confirm,
Cancel, Approve, Deny).

The same payloads come over HTTP (a form; a press as a form field ``payload`` holding JSON) and over Socket Mode
(the envelope's ``payload``, already JSON): both end here. Anything unusable is :class:`BadRequest` with one line.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qsl

from .chat import Incoming
from .slack_render import APPROVE_ACTION, CANCEL_ACTION, CONFIRM_ACTION, DENY_ACTION, prompt_asker, slack_person

__all__ = ["MAX_FIELDS", "BadRequest", "Command", "Press", "command_of", "parse_form", "press_of"]

#: Fields a form may have (a slash command has about a dozen).
MAX_FIELDS = 64
#: The longest command text taken (Slack's own limit on a slash command's text is lower).
MAX_TEXT = 4000
_COMMAND_FIELDS = ("command", "text", "user_id", "channel_id", "response_url")
_VERBS = {CONFIRM_ACTION: "confirm", CANCEL_ACTION: "cancel", APPROVE_ACTION: "approve", DENY_ACTION: "deny"}


class BadRequest(Exception):
    """A request the app cannot use: ``status`` (400, or 413 for a body too large) with this one line."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Command:
    """A slash command: the message for the bot core, where a late answer goes, and who asked (on Slack the team and
    user, :func:`~petstore_bot.slack_render.slack_person`; a Mattermost user id)."""

    incoming: Incoming
    response_url: str
    asker: str


@dataclass(frozen=True, slots=True)
class Press:
    """A Confirm or Cancel press: the message for the bot core, where its answer goes, who pressed, whose prompt it
    was (None when the prompt does not say) and whether only that person could see the prompt. The presser and the
    asker are Slack persons (team and user): the same user id pressing from another team is not the asker."""

    incoming: Incoming
    response_url: str
    presser: str
    asker: str | None
    ephemeral: bool
    #: The command the button runs: confirm, cancel, approve or deny.
    verb: str = "confirm"

    @property
    def by_asker(self) -> bool:
        return self.asker is None or self.asker == self.presser

    @property
    def settles(self) -> bool:
        """Whether the press (when not refused) settles the prompt: the asker's Confirm or Cancel; anyone's
        Approve or Deny (the asker's own is refused)."""
        return self.verb in ("approve", "deny") or self.by_asker


def parse_form(body: bytes, *, max_fields: int = MAX_FIELDS) -> dict[str, str]:
    """A UTF-8 ``application/x-www-form-urlencoded`` body as a dict (the first value of a repeated key); BadRequest,
    saying what is wrong, when it is not one."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("body is not UTF-8") from None
    if text.count("&") >= max_fields:
        raise BadRequest(f"too many form fields: at most {max_fields}")
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=True, max_num_fields=max_fields)
    except ValueError:
        raise BadRequest("body is not a URL-encoded form") from None
    form: dict[str, str] = {}
    for key, value in pairs:
        form.setdefault(key, value)
    return form


def command_of(form: Mapping[str, object], *, flavour: Literal["slack", "mattermost"], prefix: str) -> Command:
    """The slash command in ``form`` (an HTTP form, or a Socket Mode envelope's payload)."""
    missing = [name for name in _COMMAND_FIELDS if not isinstance(form.get(name), str)]
    if flavour == "slack" and not isinstance(form.get("team_id"), str):
        missing.append("team_id")
    if missing:
        raise BadRequest(f"missing form fields: {', '.join(missing)}")
    fields = {name: str(value) for name, value in form.items() if isinstance(value, str)}
    if len(fields["text"]) > MAX_TEXT:
        raise BadRequest(f"command text too long: at most {MAX_TEXT} characters")
    if flavour == "slack":
        team = fields["team_id"]
        asker = slack_person(team, fields["user_id"])
        user, room = f"slack:{asker}", f"{team}/{fields['channel_id']}"
    else:
        asker = fields["user_id"]
        user, room = f"mattermost:{asker}", fields["channel_id"]
    # The platform's id of this command names its write (the Idempotency-Key derives from it). Without one
    # (Mattermost may send no trigger_id) two identical commands are two requests: a fresh nonce each, and a
    # write waits for its Confirm button, whose context carries the nonce that names it.
    trigger = fields.get("trigger_id", "")
    incoming = Incoming(
        platform=flavour,
        room=room,
        user=user,
        event_id=trigger or f"nonce:{secrets.token_urlsafe(16)}",
        text=f"{prefix}{fields['text'].strip()}",
        private=True,
        confirm_writes=not trigger,
    )
    return Command(incoming=incoming, response_url=fields["response_url"], asker=asker)


def press_of(payload: Mapping[str, object], *, prefix: str) -> Press:
    """The Confirm/Cancel press in a ``block_actions`` payload."""
    try:
        user, team = payload["user"]["id"], payload["team"]["id"]  # type: ignore[index]
        channel, action = payload["channel"]["id"], payload["actions"][0]  # type: ignore[index]
        kind, code, response_url = action["action_id"], action["value"], payload["response_url"]
    except (KeyError, IndexError, TypeError):
        raise BadRequest("payload is not a block_actions interaction") from None
    if payload.get("type") != "block_actions" or kind not in _VERBS:
        raise BadRequest("only the Confirm, Cancel, Approve and Deny buttons are handled")
    if not all(isinstance(v, str) for v in (user, team, channel, code)) or not isinstance(response_url, str):
        raise BadRequest("payload is not a block_actions interaction")
    verb = _VERBS[kind]
    event = f"press:{payload.get('trigger_id') or action.get('action_ts') or ''}"
    block_id, container = action.get("block_id"), payload.get("container")
    presser = slack_person(team, user)
    incoming = Incoming(
        platform="slack",
        room=f"{team}/{channel}",
        user=f"slack:{presser}",
        event_id=event,
        text=f"{prefix}{verb} {code}",
        private=True,
    )
    return Press(
        incoming=incoming,
        response_url=response_url,
        presser=presser,
        asker=prompt_asker(block_id) if isinstance(block_id, str) else None,
        # A slash command's prompt is ephemeral; a mention's is in the channel (Slack says which in ``container``).
        ephemeral=not isinstance(container, dict) or container.get("is_ephemeral", True) is not False,
        verb=verb,
    )
