"""RFC 8288 Link parsing, deprecation headers (RFC 9745 / RFC 8594)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import httpx
from api_support import PET, Script, jresp
from hypothesis import given, settings
from hypothesis import strategies as st

from petstore_api.deprecation import notice_from_headers, parse_deprecation, parse_sunset
from petstore_api.links import Link, find_link, parse_link_header


def test_single_next_link() -> None:
    assert parse_link_header('<https://a.example/v1/pets?cursor=2>; rel="next"') == [
        Link(target="https://a.example/v1/pets?cursor=2", params={"rel": "next"})
    ]


def test_several_links_with_quoted_commas_and_semicolons() -> None:
    value = (
        '<https://a/x?a=1,2>; title="one, two; three"; rel=prev, '
        '</v1/pets?cursor=9>; REL="Next Last"; type="application/json", '
        '<https://a/z>; rel="next"'
    )
    links = parse_link_header(value)
    assert [link.target for link in links] == ["https://a/x?a=1,2", "/v1/pets?cursor=9", "https://a/z"]
    assert links[0].params == {"title": "one, two; three", "rel": "prev"}
    assert links[1].rels == ("next", "last")
    assert find_link(value, "next") == "/v1/pets?cursor=9"
    assert find_link(value, "LAST") == "/v1/pets?cursor=9"
    assert find_link(value, "first") is None


def test_escapes_first_param_wins_and_valueless_params() -> None:
    (link,) = parse_link_header(r'<a>; title="say \"hi\""; rel=next; rel=prev; crossorigin')
    assert link.params == {"title": 'say "hi"', "rel": "next", "crossorigin": ""}


def test_several_header_lines_and_malformed_pieces_are_skipped() -> None:
    values = ["garbage, <b>; rel=next", 'no-brackets; rel="next"', "<unterminated; rel=next"]
    assert [link.target for link in parse_link_header(values)] == ["b"]
    assert parse_link_header(None) == [] and parse_link_header("") == [] and parse_link_header(" , ,") == []


def test_rel_substring_does_not_match() -> None:
    assert find_link('<a>; rel="nextpage"', "next") is None
    assert find_link('<a>; rel="successor-version"', "successor-version") == "a"


def test_find_link_same_answer_for_remembered_and_huge_headers() -> None:
    small = '<https://a/p?cursor=2>; rel="next"'
    huge = ", ".join(f'<https://a/{i}>; rel="item"' for i in range(200)) + ', <https://a/last>; rel="next"'
    assert len(huge) > 2048
    for _ in range(2):  # the second time a short header's answer comes from memory
        assert find_link(small, "next") == "https://a/p?cursor=2"
        assert find_link([small], "NEXT") == "https://a/p?cursor=2"
        assert find_link(small, "prev") is None
        assert find_link(huge, "next") == "https://a/last"
    assert find_link([small, 7, huge], "next") == "https://a/p?cursor=2"  # type: ignore[list-item]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(st.text(alphabet='<>;,="\\ relnxt\t', max_size=40), max_size=3)))
def test_parser_never_raises(value) -> None:
    for link in parse_link_header(value):
        assert isinstance(link.target, str)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in link.params.items())
    find_link(value, "next")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters='<>"\\'), max_size=20), min_size=1, max_size=5))
def test_well_formed_headers_round_trip(targets) -> None:
    value = ", ".join(f'<{t}>; rel="r{i}"' for i, t in enumerate(targets))
    links = parse_link_header(value)
    assert [(link.target, link.rels) for link in links] == [(t.strip(), (f"r{i}",)) for i, t in enumerate(targets)]


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
