"""Which chat messages are commands for the bot, as people type them, and the help line that says so.

One :class:`Addressing` holds the rules, so what the bot accepts and what its help says cannot drift:

- the prefix, then a command: ``!list sold`` (``!/list`` too);
- the bot named first, then a command, with or without the prefix: ``petbot: list``, ``petbot list``,
  ``@petbot:example.org: !list``, or a mention pill (the client's link text, passed as ``also``);
- in a direct message (only the bot and one person), the command alone: ``list sold``.

Before any rule, a reply's fallback (the ``> <@x> quoted`` lines a client puts before the answer) and leading
spaces are stripped. A bare word that is not a command name is never a command, so ``petbot is great`` or a
DM saying ``thanks`` gets no answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Address", "Addressing", "strip_reply_fallback"]


class Address(Protocol):
    """:meth:`Addressing.line`'s shape: a transport asks it whether a message is a command, and which."""

    def __call__(self, text: str, *, direct: bool = False, also: Iterable[str] = ()) -> str | None: ...


_SEPARATOR = re.compile(r"[:,]\s*|\s+")


def strip_reply_fallback(body: str) -> str:
    """``body`` without a reply's quoted fallback (its leading ``> `` lines and the blank line after them)."""
    if not body.startswith(">"):
        return body
    lines = body.split("\n")
    index = 0
    while index < len(lines) and lines[index].startswith(">"):
        index += 1
    if index < len(lines) and not lines[index].strip():
        index += 1
    return "\n".join(lines[index:])


@dataclass(frozen=True, slots=True)
class Addressing:
    """The rules of one bot: its ``prefix``, its ``commands`` (names and aliases), the ``names`` it answers to."""

    prefix: str
    commands: frozenset[str] = frozenset()
    names: tuple[str, ...] = ()
    #: Whether a direct message's bare command (``list sold``) is a command (chats without a prefix of their own).
    bare_in_direct: bool = True

    def line(self, text: str, *, direct: bool = False, also: Iterable[str] = ()) -> str | None:
        """The command in ``text`` written with the prefix (``!list sold``), or None when it is not for the bot.

        ``direct``: the message is in a direct chat with the bot; ``also``: more names it was mentioned by in
        this message (a mention pill's text, the bot's display name).
        """
        text = strip_reply_fallback(text).lstrip()
        if self.prefixed(text):
            return text
        rest = self._unnamed(text, names=(*also, *self.names))
        if rest is None and not (direct and self.bare_in_direct):
            return None
        rest = (text if rest is None else rest).lstrip()
        if self.prefixed(rest):
            return rest
        word = rest.split(maxsplit=1)[0].removeprefix("/").lower() if rest.strip() else ""
        if word in self.commands:
            return self.prefix + rest.removeprefix("/")
        return None

    def rules(self, *, example: str = "list sold") -> str:
        """How to address the bot, in one line, each rule shown with ``example`` (a command line without the
        prefix, one the asker may run: :func:`~petstore_bot.replies.help_example` picks it)."""
        parts = [f"Start a command with {self.prefix.strip()} ({self.prefix}{example})"]
        if self.names:
            parts.append(f"or name me first ({self.names[0]}: {example})")
        text = ", ".join(parts)
        if self.bare_in_direct:
            text += f"; in a direct message the command alone works ({example})"
        return f"{text}. {self.prefix}help COMMAND explains one."

    def prefixed(self, text: str) -> bool:
        """Whether ``text`` starts with the prefix and a command name (``!list``, ``!/list``)."""
        return text.startswith(self.prefix) and text[len(self.prefix) :].removeprefix("/")[:1].isalpha()

    @staticmethod
    def _unnamed(text: str, *, names: Iterable[str]) -> str | None:
        """``text`` after a leading name of the bot and its separator (``petbot:``, ``petbot,``, ``petbot``)."""
        folded = text.casefold()
        for name in sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True):
            for written in (name, "@" + name):
                if folded.startswith(written.casefold()):
                    after = _SEPARATOR.match(text, len(written))
                    if after is not None:
                        return text[after.end() :]
        return None
