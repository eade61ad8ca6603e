"""docs/production.md's table of errors holds every code the service sends, with its status, and no other."""

from __future__ import annotations

import re

from petstore_server.wire import ERROR_CODES

from .support import REPO


def test_the_production_page_explains_every_error_code() -> None:
    text = (REPO / "docs" / "production.md").read_text()
    rows = re.findall(r"^\| `([a-z_]+)` \| (\d{3}) \|", text, flags=re.MULTILINE)
    assert len(rows) == len({code for code, _ in rows})
    assert {code: int(status) for code, status in rows} == {code: status for status, code in ERROR_CODES.items()}
