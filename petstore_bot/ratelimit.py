"""A sliding-window rate limit per user, and the one rule for what a person over it is told.

In a room, the first message over the limit gets one short reply and the rest silence until it calms down: a reply
to each would flood the room for everyone (the very thing the limit is for). A reply only the sender sees (a Slack
or Mattermost slash command's ephemeral response) floods nobody, so every message over the limit gets one: otherwise
the person sees nothing at all and cannot tell why.
"""

from __future__ import annotations

import enum
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from petstore_state import StateError
from petstore_state.conversations import Admission, ConversationStore, slide

from .settings import RateLimit

__all__ = ["Limiter", "RateLimiter", "StoredRateLimiter", "Verdict", "verdict"]

log = logging.getLogger("petstore_bot")

#: Users remembered at most (the least recently seen are forgotten first).
_MAX_USERS = 10_000


class Verdict(enum.Enum):
    RUN = "run"
    WARN = "warn"  # over the limit: say so (in a room, the first message over it only)
    DROP = "drop"  # in a room, later ones: ignore silently until the window has room again


class Limiter(Protocol):
    """A rate limit per user: the bot core asks it about each message addressed to the bot."""

    @property
    def rate(self) -> RateLimit: ...

    async def admit(self, user: str, *, private: bool = False) -> Verdict:
        """RUN, or what to do with a message over the limit; ``private``: the reply is seen by the sender alone."""
        ...


class RateLimiter:
    """At most ``rate.count`` accepted commands per ``rate.seconds`` per user, in this process's memory (a core
    without a state store); refused ones do not count. The window's rule is the store's own
    (:func:`petstore_state.conversations.slide`)."""

    def __init__(self, rate: RateLimit, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self._clock = clock
        #: Per user: the accepted commands' times, and whether they were told of the limit since.
        self._windows: OrderedDict[str, tuple[list[float], bool]] = OrderedDict()

    async def admit(self, user: str, *, private: bool = False) -> Verdict:
        """:meth:`check`, as every :class:`Limiter` answers."""
        return self.check(user, private=private)

    def check(self, user: str, *, private: bool = False) -> Verdict:
        """RUN, or what to do with a message over the limit; ``private``: the reply is seen by the sender alone."""
        if self.rate.count == 0:
            return Verdict.RUN
        stamps, warned = self._windows.pop(user, ([], False))
        kept, admission = slide(
            stamps, warned=warned, now=self._clock(), count=self.rate.count, seconds=self.rate.seconds
        )
        self._windows[user] = (kept, not admission.admitted)
        if len(self._windows) > _MAX_USERS:
            self._windows.popitem(last=False)
        return verdict(admission, private=private)


class StoredRateLimiter:
    """The same limit, its windows in the state store: they survive a restart and replicas count one person once.
    When the store fails the command runs (a limit is no reason to stop answering; the failure is logged)."""

    def __init__(self, rate: RateLimit, *, store: ConversationStore) -> None:
        self.rate = rate
        self._store = store

    async def admit(self, user: str, *, private: bool = False) -> Verdict:
        if self.rate.count == 0:
            return Verdict.RUN
        try:
            admission = await self._store.admit(user, count=self.rate.count, seconds=self.rate.seconds)
        except StateError as exc:
            log.warning("rate limit not checked: %s", exc)
            return Verdict.RUN
        return verdict(admission, private=private)


def verdict(admission: Admission, *, private: bool) -> Verdict:
    """What a message gets (see the module docstring): run it, say the limit, or drop it silently."""
    if admission.admitted:
        return Verdict.RUN
    return Verdict.WARN if admission.first_refusal or private else Verdict.DROP
