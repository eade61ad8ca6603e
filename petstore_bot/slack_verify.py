"""Is this request really from the platform? Slack's v0 signature, Mattermost's command token, signed button context.

Each check returns None when the request is genuine, else the reason (for the log: never a secret). Every
comparison of secret-derived values is constant time (``hmac.compare_digest``).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Callable, Mapping

from slack_sdk.signature import Clock, SignatureVerifier

__all__ = ["MAX_AGE", "MattermostToken", "SlackSignature"]

#: Requests older (or newer) than this many seconds are refused as replays.
MAX_AGE = 300
#: Digits a timestamp may have (seconds since 1970: 10 until the year 2286).
_TIMESTAMP_DIGITS = 12
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


class _Clock(Clock):
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now

    def now(self) -> float:
        return self._now()


class SlackSignature:
    """``X-Slack-Signature`` = ``v0=`` HMAC-SHA256 of ``v0:{timestamp}:{body}`` with the signing secret."""

    def __init__(self, signing_secret: str, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._verifier = SignatureVerifier(signing_secret, clock=_Clock(clock))

    def __repr__(self) -> str:
        return "SlackSignature(signing_secret=***)"

    def check(self, *, headers: Mapping[str, str], body: bytes) -> str | None:
        """None when the request is Slack's; else the reason. Every header is checked for its shape before use, so
        nothing a sender puts in them (5,000 digits, Latin-1 bytes) can raise."""
        timestamp, signature = headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature")
        if not timestamp or not signature:
            return "missing X-Slack-Request-Timestamp or X-Slack-Signature"
        if not timestamp.isascii() or not timestamp.isdigit():
            return "X-Slack-Request-Timestamp is not a number"
        if len(timestamp) > _TIMESTAMP_DIGITS:  # int() refuses past 4,300 digits; no Unix time has more than 11
            return f"X-Slack-Request-Timestamp is not a Unix time: {len(timestamp)} digits"
        if not _SIGNATURE.fullmatch(signature):  # compare_digest raises on non-ASCII text
            return "X-Slack-Signature is not v0= and 64 hex digits"
        if abs(self._clock() - int(timestamp)) > MAX_AGE:
            return "X-Slack-Request-Timestamp is more than 5 minutes away (a replay?)"
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return "body is not UTF-8"
        if not self._verifier.is_valid(body=body, timestamp=timestamp, signature=signature):
            return "signature does not match"
        return None


class MattermostToken:
    """Mattermost sends the slash command's token in the form; buttons carry a context signed with it."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("the Mattermost token must not be empty")
        self._token = token.encode("utf-8")

    def __repr__(self) -> str:
        return "MattermostToken(token=***)"

    def check(self, *, token: str | None) -> str | None:
        if not token:
            return "no token in the request"
        if not hmac.compare_digest(token.encode("utf-8", "surrogatepass"), self._token):
            return "token does not match"
        return None

    def sign(self, *parts: str) -> str:
        """A signature of ``parts`` (a button's action, code, asker, channel and nonce), for its context."""
        message = "\x1f".join(parts).encode("utf-8", "surrogatepass")
        return hmac.new(self._token, message, hashlib.sha256).hexdigest()

    def check_signed(self, signature: str, *parts: str) -> str | None:
        if not hmac.compare_digest(signature.encode("ascii", "replace"), self.sign(*parts).encode("ascii")):
            return "button context signature does not match"
        return None
