"""``--db``: which backend and where (a file path or ``sqlite:///path`` for SQLite, ``postgresql://user@host:port/db``
for PostgreSQL), and the password such an address may hold, kept out of every message.

Standard library only: the service's options check ``--db`` before any backend is imported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Backend", "StoreTarget", "parse_db", "redact", "url_password"]

Backend = Literal["sqlite", "postgresql"]
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,30}")


@dataclass(frozen=True, slots=True)
class StoreTarget:
    """A parsed ``--db``: which backend, and its file path or connection URI."""

    backend: Backend
    location: str


def parse_db(value: str) -> StoreTarget:
    """``--db`` as a target; a URI with any other scheme is a ValueError, whose message never holds the URI (it
    may hold a password)."""
    if value.startswith(("postgresql://", "postgres://")):
        return StoreTarget("postgresql", value)
    if value.startswith("sqlite:///"):
        return StoreTarget("sqlite", value.removeprefix("sqlite:///"))
    if value.startswith("sqlite://") or ("://" in value and not value.startswith("file:")):
        scheme = value.split("://", 1)[0]
        named = f"scheme {scheme}://" if _SCHEME.fullmatch(scheme) and scheme != "sqlite" else "address"
        raise ValueError(f"unknown database {named}: use a file path, sqlite:///PATH or postgresql://user@host:port/db")
    return StoreTarget("sqlite", value)


def url_password(location: str) -> str | None:
    """The password a database URL holds (in its user part or a ``password`` parameter), as written; else None."""
    return next(iter(_passwords(location)), None)


def redact(text: str, location: str) -> str:
    """``text`` (an error message about ``location``) with every form of the URL's password replaced by ``***``."""
    for secret in sorted(_passwords(location), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _passwords(location: str) -> list[str]:
    """Every form of the password in ``location``: as written (percent-encoded) and decoded."""
    from urllib.parse import unquote

    if "://" not in location:
        return []
    rest = location.split("://", 1)[1]
    userinfo = rest.partition("/")[0].rpartition("@")[0]  # libpq ends the user part at the first "/" or last "@"
    written = [userinfo.partition(":")[2]] if ":" in userinfo else []
    for item in rest.partition("?")[2].split("&"):
        name, _, value = item.partition("=")
        if unquote(name) == "password":
            written.append(value)
    return sorted({form for raw in written for form in (raw, unquote(raw)) if form}, key=len, reverse=True)
