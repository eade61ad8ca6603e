"""WHOIS questions on one IRC connection, each matched to its own answer.

A server answers one connection's commands in the order they came, and ends each WHOIS answer with ``318``
(RPL_ENDOFWHOIS), after a ``401`` (no such nick) too; the ``330`` line (logged in as ACCOUNT) comes before its
end. So the answers to WHOIS questions about one nick are matched to the questions in order. A question its asker
stopped waiting for keeps its place until its answer comes: a late answer closes that question and is never taken
for a later one's (the person behind a nick may have changed in between). An answer is shared only by askers whose
message had come before the question was sent, so no answer predates the message it names the sender of.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

__all__ = ["Whois"]


class _Question:
    """One WHOIS sent: when, the account its answer gave so far, and the future its askers wait on."""

    __slots__ = ("account", "answer", "sent")

    def __init__(self, *, sent: float, answer: asyncio.Future[str | None]) -> None:
        self.sent, self.answer = sent, answer
        self.account: str | None = None


class Whois:
    """The questions in flight on one connection (a new connection starts a new :class:`Whois`)."""

    def __init__(self, *, send: Callable[[str], None], clock: Callable[[], float], wait: float = 10.0) -> None:
        self._send, self._clock, self._wait = send, clock, wait
        self._asked: dict[str, deque[_Question]] = {}

    async def account(self, key: str, *, nick: str, since: float) -> str | None:
        """The account the server says ``nick`` (folded: ``key``) is logged in to; None when none, or no answer
        within ``wait`` seconds. ``since``: when the message whose sender this names was received."""
        asked = self._asked.setdefault(key, deque())
        last = asked[-1] if asked else None
        if last is None or last.sent < since:
            last = _Question(sent=self._clock(), answer=asyncio.get_running_loop().create_future())
            asked.append(last)
            self._send(nick)
        try:
            return await asyncio.wait_for(asyncio.shield(last.answer), self._wait)
        except TimeoutError:
            return None

    def logged_in(self, key: str, account: str) -> None:
        """A ``330`` line: the question answered now is about a nick logged in to ``account``."""
        if asked := self._asked.get(key):
            asked[0].account = account

    def ended(self, key: str) -> None:
        """A ``318`` line: the oldest question about ``key`` has its whole answer."""
        asked = self._asked.get(key)
        if not asked:
            return  # a WHOIS this connection did not ask (or asked before it was cleared)
        question = asked.popleft()
        if not asked:
            del self._asked[key]
        if not question.answer.done():
            question.answer.set_result(question.account)

    def __len__(self) -> int:
        """How many questions are waiting for their answer."""
        return sum(len(asked) for asked in self._asked.values())
