"""Outcomes as Slack Block Kit messages and Mattermost messages; service text is data in both.

Blocks are built as plain dicts (slack_sdk's models validate on every ``to_dict``, which cost more than the rest
of a command); the tests parse every payload back with slack_sdk's Block Kit models to keep them valid.

Every text that can hold service or chat data goes into a monospaced block: in Slack's mrkdwn ``&``, ``<`` and
``>`` are escaped there (so ``<!channel>``, ``<@U123>`` and ``<http://x|click>`` ping nobody and link nowhere) and
``*bold*`` or ``_x_`` take no effect; in Mattermost's Markdown, a code block shows text literally and mentions in it
notify nobody. A run of three backticks in the data is broken with a zero-width space so it cannot end the block.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from bot_commands.outcome import Outcome
from bot_commands.render_text import fence
from bot_commands.results import ApprovalNeeded, ConfirmationNeeded, PetCreated

from .addressing import Addressing
from .replies import plain_text, presentation

__all__ = [
    "APPROVE_ACTION",
    "CONFIRM_ACTION",
    "CANCEL_ACTION",
    "DENY_ACTION",
    "Message",
    "message_for",
    "mrkdwn_escape",
    "prompt_asker",
    "prompt_kind",
    "prompt_verbs",
    "prompt_block_id",
    "slack_person",
    "slack_payload",
    "mattermost_payload",
]

CONFIRM_ACTION, CANCEL_ACTION = "petstore_confirm", "petstore_cancel"
APPROVE_ACTION, DENY_ACTION = "petstore_approve", "petstore_deny"
#: Failures of a press that leave its prompt as it was: the code still waits (or never was the presser's to use).
_UNSETTLING = frozenset({"not_confirmable", "not_approvable", "forbidden", "read_only", "usage"})
#: The buttons of each kind of prompt: (verb, label, action id, Block Kit style).
_BUTTONS = {
    "confirm": (("confirm", "Confirm", CONFIRM_ACTION, "primary"), ("cancel", "Cancel", CANCEL_ACTION, None)),
    "approve": (("approve", "Approve", APPROVE_ACTION, "primary"), ("deny", "Deny", DENY_ACTION, "danger")),
}
#: Slack caps a section's text at 3000 characters and a message at 50 blocks.
_SECTION_MAX, _BLOCKS_MAX = 2900, 45


@dataclass(frozen=True, slots=True)
class Message:
    """What to say, before it is shaped for a platform."""

    text: str  # plain, visible (control characters shown), not yet escaped
    in_channel: bool  # a completed write: the team sees it
    confirm: ConfirmationNeeded | ApprovalNeeded | None = None
    #: It settles a Confirm/Cancel (or Approve/Deny) prompt (a press that was not refused: not "nothing to confirm",
    #: nor "not allowed"): the prompt is replaced by it, its buttons gone.
    settles: bool = True


def message_for(
    outcome: Outcome, *, prefix: str, commands: Collection[str] = (), addressing: Addressing | None = None
) -> Message:
    """What to say for ``outcome`` (``addressing``: the bot's rules, the last line of its help)."""
    text = plain_text(presentation(outcome, prefix=prefix, commands=commands, addressing=addressing))
    result = outcome.result
    return Message(
        text=text,
        # A write done is the team's news (a replay: the team saw it the first time); a request for approval is
        # for the team to answer.
        in_channel=(isinstance(result, PetCreated) and not result.replayed) or isinstance(result, ApprovalNeeded),
        confirm=result if isinstance(result, ConfirmationNeeded | ApprovalNeeded) else None,
        settles=outcome.failure is None or outcome.failure.kind not in _UNSETTLING,
    )


def prompt_kind(message: Message) -> str:
    """``approve`` for a request for approval's prompt, ``confirm`` for a confirmation's."""
    return "approve" if isinstance(message.confirm, ApprovalNeeded) else "confirm"


def slack_person(team: str, user: str) -> str:
    """Who a Slack user is to the bot: the team and the user id together (``T0123/U0456``). The same user id in
    another team is another person: never the asker of a prompt, never the one who may confirm it."""
    return f"{team}/{user}"


def prompt_block_id(code: str, asker: str) -> str:
    """The id of a prompt's actions block: its code and the person who asked (:func:`slack_person`: team and user),
    whose press settles it."""
    return f"petstore:{code}:{asker}"


def prompt_asker(block_id: str) -> str | None:
    """The asker a prompt's block id names (None for a block id of another shape)."""
    kind, _, rest = block_id.partition(":")
    return rest.partition(":")[2] or None if kind == "petstore" else None


def mrkdwn_escape(text: str) -> str:
    """Slack's three control characters as entities: nothing in ``text`` becomes a mention or a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _chunks(text: str) -> list[str]:
    """Lines of ``text`` in pieces that fit a section (a line longer than one piece is cut)."""
    if len(text) < _SECTION_MAX:  # the usual reply: one piece (the loop below would make the same)
        return ["\n".join(text.splitlines())]
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines() or [""]:
        line = line[:_SECTION_MAX]
        if current and size + len(line) + 1 > _SECTION_MAX:
            pieces.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    pieces.append("\n".join(current))
    return pieces


def _section(text: str) -> dict[str, object]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _button(label: str, action_id: str, code: str, style: str | None = None) -> dict[str, object]:
    button: dict[str, object] = {
        "type": "button",
        "action_id": action_id,
        "value": code,
        "text": {"type": "plain_text", "text": label, "emoji": True},
    }
    if style:
        button["style"] = style
    return button


def slack_payload(message: Message, *, asker: str = "") -> dict[str, object]:
    """A slash-command response (or response_url or chat.postMessage body) in Block Kit; ``asker``: the Slack user
    whose command a confirmation prompt is for."""
    escaped = mrkdwn_escape(message.text)
    pieces = _chunks(escaped)
    blocks = [_section(fence(p)) for p in pieces[:_BLOCKS_MAX]]
    if len(pieces) > _BLOCKS_MAX:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "… (reply truncated)"}]})
    if message.confirm is not None:
        code = message.confirm.code
        blocks.append(
            {
                "type": "actions",
                "block_id": prompt_block_id(code, asker),
                "elements": [
                    _button(label, action_id, code, style)
                    for _, label, action_id, style in _BUTTONS[prompt_kind(message)]
                ],
            }
        )
    return {
        "response_type": "in_channel" if message.in_channel else "ephemeral",
        "text": escaped[:_SECTION_MAX],
        "blocks": blocks,
    }


def mattermost_payload(
    message: Message, *, action_url: str, context: dict[str, dict[str, str]] | None = None
) -> dict[str, object]:
    """A Mattermost slash-command response; a waiting write carries Confirm/Cancel (or Approve/Deny) buttons
    posting to ``action_url``.

    ``context`` maps each action (``confirm``, ``cancel``, ``approve``, ``deny``) to the context Mattermost sends
    back when pressed.
    """
    payload: dict[str, object] = {
        "response_type": "in_channel" if message.in_channel else "ephemeral",
        "text": fence(message.text),
    }
    if message.confirm is not None and context is not None:
        actions = [
            {"id": action, "name": label, "integration": {"url": action_url, "context": context[action]}}
            for action, label, _, _ in _BUTTONS[prompt_kind(message)]
        ]
        payload["attachments"] = [{"actions": actions}]
    return payload


def prompt_verbs(message: Message) -> tuple[str, str]:
    """The commands a prompt's two buttons run: ``("confirm", "cancel")`` or ``("approve", "deny")``."""
    first, second = _BUTTONS[prompt_kind(message)]
    return first[0], second[0]
