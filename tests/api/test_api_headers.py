"""Links by relation (httpx parses the Link header), deprecation headers (RFC 9745 / RFC 8594)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import httpx
from api_support import PET, Script, jresp
from hypothesis import given, settings
from hypothesis import strategies as st

from petstore_api.deprecation import notice_from_headers, parse_deprecation, parse_sunset
from petstore_api.links import Links, link_target


def links(*values: str) -> Links:
    """The ``Link`` header lines as httpx parses them (``Response.links``)."""
    return httpx.Response(200, headers=[("link", value) for value in values]).links


def test_the_next_link_by_its_relation() -> None:
    assert link_target(links('<https://a.example/v1/pets?cursor=2>; rel="next"'), "next") == (
        "https://a.example/v1/pets?cursor=2"
    )
    assert link_target(links("<a>; rel=prev", "<b>; rel=next"), "next") == "b"  # over several header lines
    assert link_target(links('</v1/pets?cursor=9>; rel="next last"'), "LAST") == "/v1/pets?cursor=9"
    assert link_target(links("< https://a.example/p >; rel=next"), "next") == "https://a.example/p"
    assert link_target(links(), "next") is None and link_target(links('<a>; rel="prev"'), "next") is None


def test_a_relation_is_a_whole_token() -> None:
    assert link_target(links('<a>; rel="nextpage"'), "next") is None
    assert link_target(links('<../pets>; rel="successor-version"'), "successor-version") == "../pets"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet='<>;,="\\ relnxt\t', max_size=40), max_size=3))
def test_no_header_makes_it_raise(values: list[str]) -> None:
    found = link_target(links(*values), "next")
    assert found is None or isinstance(found, str)


# -- deprecation ---------------------------------------------------------------


def test_parse_deprecation_and_sunset() -> None:
    assert parse_deprecation("@1735689600") == datetime(2025, 1, 1, tzinfo=UTC)
    for junk in (None, "", "true", "1735689600", "@", "@1e9", "@99999999999999999999"):
        assert parse_deprecation(junk) is None
    assert parse_sunset("Thu, 05 Dec 2030 00:00:00 GMT") == datetime(2030, 12, 5, tzinfo=UTC)
    assert parse_sunset("tomorrow") is None and parse_sunset(None) is None


def test_notice_without_headers_falls_back_on_the_spec() -> None:
    notice = notice_from_headers(httpx.Headers(), operation="getPet", resolve=lambda t: t)
    assert notice.sunset == date(2030, 12, 5) and notice.deprecated_since is None
    assert notice.successor is None and notice.from_headers is False
    assert notice.message.startswith("getPet is deprecated and will be removed on 5 December 2030")


def test_notice_with_unreadable_headers_still_has_the_spec_date() -> None:
    headers = httpx.Headers({"Deprecation": "true", "Sunset": "someday"})
    notice = notice_from_headers(headers, operation="getPet", resolve=lambda t: t)
    assert notice.from_headers is True and notice.sunset == date(2030, 12, 5) and notice.deprecated_since is None


async def test_get_pet_resolves_a_relative_successor(mock_client) -> None:
    headers = {"Link": '<https://x/v1/pets/1>; rel="self", </v1/pets?status=available>; rel="successor-version"'}
    got = await mock_client(Script(jresp(200, PET, **headers))).get_pet(1)
    assert got.notice.successor == "http://127.0.0.1/v1/pets?status=available"
    assert got.notice.from_headers is False and got.notice.sunset == date(2030, 12, 5)
