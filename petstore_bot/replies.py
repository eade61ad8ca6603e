"""An outcome as a chat reply: a plain body and an HTML body, both from the one view, service text escaped.

The views and their renderers load with the first reply, not with the bot.
"""

from __future__ import annotations

import html
from collections.abc import Collection
from typing import TYPE_CHECKING

from bot_commands.outcome import Outcome
from bot_commands.results import Help, Notice
from bot_commands.sanitize import visible

from .addressing import Addressing
from .chat import Reply

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.views import Presentation

__all__ = ["headed", "help_example", "notice_reply", "plain_text", "presentation", "reply_for"]

#: The example of help's rules line: the first of these whose command the asker may run.
_EXAMPLES = ("list sold", "whoami")


def help_example(result: Help) -> str:
    """A command line (no prefix) for help's rules line that the asker may run: help lists only those."""
    allowed = [entry.name.removeprefix("/") for entry in result.entries]
    return next((line for line in _EXAMPLES if line.split()[0] in allowed), allowed[0] if allowed else "help")


def presentation(
    outcome: Outcome, *, prefix: str, commands: Collection[str] = (), addressing: Addressing | None = None
) -> Presentation:
    """The view of ``outcome`` (its result's, or its failure's), commands in it (``commands``: their names)
    shown with ``prefix``; ``addressing``: the bot's rules, the last line of its help (with an example the
    asker may run)."""
    from bot_commands.views import present, present_failure

    if outcome.failure is not None:
        typed = outcome.line.removeprefix("/").split(maxsplit=1)[:1]  # an unknown name, as the user typed it
        return present_failure(outcome.failure, prefix=prefix, commands={*commands, *typed} if commands else ())
    result = outcome.result
    assert result is not None
    rules = addressing.rules(example=help_example(result)) if addressing and isinstance(result, Help) else None
    return present(result, prefix=prefix, rules=rules)


def plain_text(shown: Presentation) -> str:
    """Notes, then the view as plain text (its summary when it has nothing to show); control characters visible."""
    from bot_commands.render_text import to_plain
    from bot_commands.views import BlankView

    body = visible(shown.summary) if isinstance(shown.view, BlankView) else to_plain(shown.view)
    if not shown.notes:
        return body
    return "\n".join([*(visible(note) for note in shown.notes), body])


def reply_for(
    outcome: Outcome, *, prefix: str, commands: Collection[str] = (), addressing: Addressing | None = None
) -> Reply:
    """What the bot answers to ``outcome``: a plain body and an HTML one (``addressing``: see :func:`presentation`)."""
    from bot_commands.render_text import to_html
    from bot_commands.views import BlankView

    shown = presentation(outcome, prefix=prefix, commands=commands, addressing=addressing)
    markup = html.escape(visible(shown.summary)) if isinstance(shown.view, BlankView) else to_html(shown.view)
    html_notes = "".join(_note_html(note) for note in shown.notes)
    return Reply(text=plain_text(shown), html=html_notes + markup, outcome=outcome)


def notice_reply(text: str, *, level: str = "info") -> Reply:
    """``text`` said unasked (a watched new pet, a schedule that did not run), through the notice's view: shown
    literally, escaped as every reply is."""
    return reply_for(Outcome(line="", result=Notice(text=text, level=level)), prefix="")


def headed(head: str, reply: Reply) -> Reply:
    """``reply`` under ``head`` (which schedule it is), the head shown as a view's notes are."""
    markup = _note_html(head) + (reply.html if reply.html is not None else html.escape(visible(reply.text)))
    return Reply(text=f"{visible(head)}\n{reply.text}", html=markup, mark=reply.mark, outcome=reply.outcome)


def _note_html(note: str) -> str:
    """A note above a view (said once), in HTML."""
    return f"<p><em>{html.escape(visible(note))}</em></p>"
