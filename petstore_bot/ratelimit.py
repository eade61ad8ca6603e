"""A sliding-window rate limit per user, and the one rule for what a person over it is told.

In a room, the first message over the limit gets one short reply and the rest silence until it calms down: a reply
to each would flood the room for everyone (the very thing the limit is for). A reply only the sender sees (a Slack
or Mattermost slash command's ephemeral response) floods nobody, so every message over the limit gets one: otherwise
the person sees nothing at all and cannot tell why.
"""

from __future__ import annotations

import enum
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from .settings import RateLimit

__all__ = ["RateLimiter", "Verdict"]

#: Users remembered at most (the least recently seen are forgotten first).
_MAX_USERS = 10_000


class Verdict(enum.Enum):
    RUN = "run"
    WARN = "warn"  # over the limit: say so (in a room, the first message over it only)
    DROP = "drop"  # in a room, later ones: ignore silently until the window has room again


class RateLimiter:
    """At most ``rate.count`` accepted commands per ``rate.seconds`` per user; refused ones do not count."""

    def __init__(self, rate: RateLimit, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self._clock = clock
        self._accepted: OrderedDict[str, deque[float]] = OrderedDict()
        self._warned: set[str] = set()

    def check(self, user: str, *, private: bool = False) -> Verdict:
        """RUN, or what to do with a message over the limit; ``private``: the reply is seen by the sender alone."""
        if self.rate.count == 0:
            return Verdict.RUN
        now = self._clock()
        window = self._window(user)
        while window and now - window[0] >= self.rate.seconds:
            window.popleft()
        if len(window) < self.rate.count:
            window.append(now)
            self._warned.discard(user)
            return Verdict.RUN
        if user in self._warned and not private:
            return Verdict.DROP
        self._warned.add(user)
        return Verdict.WARN

    def _window(self, user: str) -> deque[float]:
        window = self._accepted.get(user)
        if window is None:
            window = self._accepted[user] = deque()
            if len(self._accepted) > _MAX_USERS:
                old, _ = self._accepted.popitem(last=False)
                self._warned.discard(old)
        else:
            self._accepted.move_to_end(user)
        return window
