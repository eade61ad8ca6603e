"""A tolerant parser for the HTTP ``Link`` header (RFC 8288).

Handles several links in one header or over several header lines, quoted
parameter values with escapes, commas and semicolons inside quotes or inside
``<...>``, relation lists (``rel="next last"``) and case-insensitive names.
Malformed pieces are skipped; :func:`parse_link_header` never raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["Link", "parse_link_header", "find_link"]

_WS = " \t"


@dataclass(frozen=True, slots=True)
class Link:
    """One link: its target as written (unresolved) and its parameters.

    Parameter names are lower-cased; the first occurrence of a name wins
    (RFC 8288 section 3).
    """

    target: str
    params: Mapping[str, str] = field(default_factory=dict)

    @property
    def rels(self) -> tuple[str, ...]:
        """Relation types, lower-cased (``rel`` is a space-separated list)."""
        return tuple(r.lower() for r in self.params.get("rel", "").split())


class _Scanner:
    """Character cursor over one header value."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def done(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip(self, chars: str) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1

    def until(self, stops: str) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in stops:
            self.pos += 1
        return self.text[start : self.pos]

    def quoted(self) -> str:
        """Read a quoted-string (cursor on the opening quote); unterminated reads to the end."""
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char == "\\" and self.pos < len(self.text):
                out.append(self.text[self.pos])
                self.pos += 1
            elif char == '"':
                break
            else:
                out.append(char)
        return "".join(out)


def _parse_params(scan: _Scanner) -> dict[str, str]:
    params: dict[str, str] = {}
    while True:
        scan.skip(_WS)
        if scan.peek() != ";":
            return params
        scan.pos += 1
        scan.skip(_WS)
        name = scan.until("=;," + _WS).lower()
        scan.skip(_WS)
        value = ""
        if scan.peek() == "=":
            scan.pos += 1
            scan.skip(_WS)
            value = scan.quoted() if scan.peek() == '"' else scan.until(";," + _WS)
        if name and name not in params:
            params[name] = value


def _parse_one(scan: _Scanner) -> Link | None:
    """Parse ``<target>; params`` at the cursor; None (and skip to the next comma) if malformed."""
    scan.skip(_WS + ",")
    if scan.done():
        return None
    if scan.peek() != "<":
        _skip_to_next_link(scan)
        return None
    scan.pos += 1
    target = scan.until(">")
    if scan.done():
        return None
    scan.pos += 1
    params = _parse_params(scan)
    _skip_to_next_link(scan)
    return Link(target=target.strip(), params=params)


def _skip_to_next_link(scan: _Scanner) -> None:
    """Move past the rest of a link (respecting quotes) up to its closing comma."""
    while not scan.done():
        char = scan.peek()
        if char == ",":
            scan.pos += 1
            return
        if char == '"':
            scan.quoted()
        else:
            scan.pos += 1


def parse_link_header(value: str | Iterable[str] | None) -> list[Link]:
    """All links of one or more ``Link`` header values, in order. Never raises."""
    if value is None:
        return []
    values = [value] if isinstance(value, str) else list(value)
    links: list[Link] = []
    for text in values:
        if not isinstance(text, str):
            continue
        scan = _Scanner(text)
        while not scan.done():
            link = _parse_one(scan)
            if link is not None:
                links.append(link)
    return links


def find_link(value: str | Iterable[str] | None, rel: str) -> str | None:
    """Target of the first link whose relation list contains ``rel`` (case-insensitive)."""
    if value is None:
        return None
    values = (value,) if isinstance(value, str) else tuple(v for v in value if isinstance(v, str))
    if sum(map(len, values)) <= _MEMO_MAX_CHARS:
        return _find_link_memo(values, rel.lower())
    return _find_link(values, rel.lower())


#: Header texts up to this size are remembered (64 of them): a client paging the same
#: listing sees the same text again and again; a huge one is parsed and forgotten.
_MEMO_MAX_CHARS = 2048


def _find_link(values: tuple[str, ...], wanted: str) -> str | None:
    for link in parse_link_header(values):
        if wanted in link.rels:
            return link.target
    return None


_find_link_memo = lru_cache(maxsize=64)(_find_link)
