"""Making untrusted text safe to show: see :mod:`petstore_api.sanitize` (one rule for every layer)."""

from __future__ import annotations

from petstore_api.sanitize import ELLIPSIS, clip, visible

__all__ = ["ELLIPSIS", "clip", "visible"]
