"""The target of a link by its relation, from the ``Link`` header as httpx parses it (``Response.links``).

httpx keys its links by the ``rel`` value as written (``"next"``, or ``"next last"`` for a relation list), so the
check that a link *has* a relation is ours: a token of its ``rel``, compared case-insensitively (``rel="nextpage"``
is no ``next``). What a target may be (absolute or joined to the page's URL, same origin, no loop) is the client's
(:mod:`petstore_api.client`, :mod:`petstore_api.urls`).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["Links", "link_target"]

#: httpx's ``Response.links``: each link's parameters (``url``, ``rel`` ...) by its ``rel`` (or its URL).
Links = Mapping[str | None, Mapping[str, str]]


def link_target(links: Links, rel: str) -> str | None:
    """The URL of the first link whose relation list holds ``rel`` (case-insensitive), as written."""
    wanted = rel.lower()
    for params in links.values():
        if wanted in params.get("rel", "").lower().split() and params.get("url"):
            return params["url"]
    return None
