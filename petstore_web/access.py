"""The access token: generated or read from a file, checked in constant time, carried in a cookie."""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from pathlib import Path

#: Shortest token accepted from ``--token-file`` (a generated one is 32 URL-safe characters).
MIN_TOKEN = 16


class TokenError(ValueError):
    """A token file that cannot be used (the message is one line for the user)."""


def new_token() -> str:
    return secrets.token_urlsafe(24)


def read_token(path: Path) -> str:
    """The token in ``path``: its first line, stripped; at least MIN_TOKEN printable ASCII characters."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenError(f"cannot read token file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    token = text.strip().splitlines()[0].strip() if text.strip() else ""
    if len(token) < MIN_TOKEN or not token.isascii() or not token.isprintable() or " " in token:
        raise TokenError(
            f"token file {path}: the first line must be a token of at least {MIN_TOKEN} "
            "printable ASCII characters without spaces"
        )
    return token


def same_token(given: str | None, token: str) -> bool:
    """``given`` equals ``token``, compared in constant time."""
    if not given:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


def cookie_name(port: int) -> str:
    """Cookies do not tell ports apart: one name per port keeps two servers on one host apart."""
    return f"petstore_web_{port}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
