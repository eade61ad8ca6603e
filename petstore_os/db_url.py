"""Database URLs: the service's ``--db`` and the bots' ``[bot] state``. Which backend and where (a file path or
``sqlite:///path`` for SQLite, ``postgresql://user@host:port/db`` for PostgreSQL), and the password such a URL may
hold, kept out of every message, log line and display.

Standard library only: the service checks ``--db`` before any backend is imported, and the bots' state store, which
imports nothing else of ours, shares these rules with it. Nothing here parses a URL in a way that can raise on a bad
port or host (``urllib``'s ``port`` does): libpq says what is wrong with those, and :func:`redact` takes the password
out of what it says.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import unquote

from .records import record

__all__ = ["Backend", "StoreTarget", "parse_db", "redact", "shown", "url_password"]

Backend = Literal["sqlite", "postgresql"]
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,30}")
_URLS = "sqlite:///PATH or postgresql://user@host:port/db"
#: How a password is shown.
HIDDEN = "***"


@record
class StoreTarget:
    """A parsed database URL: which backend, and its file path or connection URI."""

    backend: Backend
    location: str


def parse_db(value: str, *, paths: bool = True) -> StoreTarget:
    """A database URL (``paths``: or a bare file path, for SQLite) as a target. Anything else is a ValueError whose
    message says what is allowed and never holds the URL (it may hold a password)."""
    allowed = f"use a file path, {_URLS}" if paths else f"use {_URLS}"
    if value.startswith(("postgresql://", "postgres://")):
        return StoreTarget("postgresql", value)
    if value.startswith("sqlite:///"):
        if not value.removeprefix("sqlite:///"):
            raise ValueError(
                "sqlite:/// needs a path: sqlite:///var/lib/petstore/state.sqlite3 (four slashes: absolute)"
            )
        return StoreTarget("sqlite", value.removeprefix("sqlite:///"))
    if value.startswith("sqlite://") or ("://" in value and not value.startswith("file:")):
        scheme = value.split("://", 1)[0]
        named = f"scheme {scheme}://" if _SCHEME.fullmatch(scheme) and scheme != "sqlite" else "address"
        raise ValueError(f"unknown database {named}: {allowed}")
    if not paths:
        raise ValueError(f"not a database URL: {allowed}")
    return StoreTarget("sqlite", value)


def url_password(location: str) -> str | None:
    """The password a database URL holds (in its user part or a ``password`` parameter), as written; else None."""
    return next(iter(_passwords(location)), None)


def redact(text: str, location: str) -> str:
    """``text`` (an error message about ``location``) with every form of the URL's password replaced by ``***``."""
    for secret in _passwords(location):
        text = text.replace(secret, HIDDEN)
    return text


def shown(location: str) -> str:
    """``location`` as it may be shown (a log line, ``config show``): each password in it replaced by ``***``,
    whatever else is wrong with it."""
    for start, end in reversed(_password_spans(location)):
        location = f"{location[:start]}{HIDDEN}{location[end:]}"
    return location


def _password_spans(location: str) -> list[tuple[int, int]]:
    """Where in ``location`` a password is written: after the user in the user part, and each ``password=`` value.

    The user part ends at the last ``@`` before the first ``/`` (libpq ends it at the first ``@``: a password with an
    ``@`` in it is hidden whole either way)."""
    if "://" not in location:
        return []
    start = location.index("://") + 3
    slash = location.find("/", start)
    authority = location[start : len(location) if slash < 0 else slash]
    spans = []
    userinfo = authority.rpartition("@")[0]
    if ":" in userinfo:
        spans.append((start + userinfo.index(":") + 1, start + len(userinfo)))
    query = location.find("?", start)
    offset = query + 1
    for item in location[offset:].split("&") if query >= 0 else []:
        name, equals, _ = item.partition("=")
        if equals and unquote(name) == "password":
            spans.append((offset + len(name) + 1, offset + len(item)))
        offset += len(item) + 1
    merged: list[tuple[int, int]] = []
    for begin, end in sorted(spans):
        if merged and begin <= merged[-1][1]:  # a query with an "@" in it: the user part's span reaches into it
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        elif end > begin:
            merged.append((begin, end))
    return merged


def _passwords(location: str) -> list[str]:
    """Every form of the password in ``location``, longest first: as written (percent-encoded) and decoded."""
    written = [location[start:end] for start, end in _password_spans(location)]
    return sorted({form for raw in written for form in (raw, unquote(raw)) if form}, key=len, reverse=True)
