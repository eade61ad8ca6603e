"""An outcome as a chat reply: a plain body and an HTML body, both from the one view, service text escaped."""

from __future__ import annotations

import html

from bot_commands.outcome import Outcome
from bot_commands.render_text import to_html, to_plain
from bot_commands.sanitize import visible
from bot_commands.views import BlankView, present, present_failure

from .chat import Reply

__all__ = ["reply_for"]


def reply_for(outcome: Outcome, *, prefix: str) -> Reply:
    """What the bot answers to ``outcome``; commands in it are shown with the bot's ``prefix``."""
    if outcome.failure is not None:
        shown = present_failure(outcome.failure, prefix=prefix)
    else:
        assert outcome.result is not None
        shown = present(outcome.result, prefix=prefix)
    notes = [visible(note) for note in shown.notes]
    if isinstance(shown.view, BlankView):
        body, markup = visible(shown.summary), html.escape(visible(shown.summary))
    else:
        body, markup = to_plain(shown.view), to_html(shown.view)
    text = "\n".join([*notes, body])
    html_notes = "".join(f"<p><em>{html.escape(note)}</em></p>" for note in notes)
    return Reply(text=text, html=html_notes + markup)
