"""Transport security, the /v1 check, headers, and masking: the canary key never shows."""

from __future__ import annotations

import asyncio
import logging
import traceback
import warnings

import httpx
import pytest
from api_support import BASE, CANARY, PET, Script, jresp
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

import petstore_api
from petstore_api import PetStoreClient, RetryPolicy, Timeouts
from petstore_api.client import PetStoreWarning
from petstore_api.errors import ConfigError, InsecureTransportError, PetStoreError
from petstore_api.urls import check_key_transport, is_loopback


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/v1",
        "http://127.8.9.10:8080/v1",
        "http://localhost:1/v1",
        "http://[::1]:80/v1",
        "HTTP://LOCALHOST/v1/",
        "https://pets.example/v1",
    ],
)
async def test_key_allowed_over_https_and_loopback(url: str) -> None:
    async with PetStoreClient(base_url=url, api_key=CANARY) as client:
        assert client.has_api_key


@pytest.mark.parametrize("url", ["http://pets.example/v1", "http://10.0.0.1/v1", "http://localhost.evil.example/v1"])
def test_key_refused_over_plain_http_to_remote_hosts(url: str) -> None:
    with pytest.raises(InsecureTransportError) as info:
        PetStoreClient(base_url=url, api_key=CANARY)
    assert "refusing to send the API key over plain http" in str(info.value) and CANARY not in str(info.value)


async def test_insecure_http_when_explicitly_allowed_or_keyless() -> None:
    async with PetStoreClient(base_url="http://pets.example/v1", api_key=CANARY, allow_insecure_http=True):
        pass
    async with PetStoreClient(base_url="http://pets.example/v1"):
        pass


@pytest.mark.parametrize(
    "url", ["ftp://pets.example/v1", "pets.example/v1", "https:///v1", "https://x/v1?a=1", "http://[::1"]
)
def test_unusable_base_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError):
        PetStoreClient(base_url=url)


def test_keys_that_cannot_be_a_header_are_refused() -> None:
    with pytest.raises(ConfigError, match="cannot go in an HTTP header") as info:
        PetStoreClient(base_url=BASE, api_key="sk-with space-1234567890")
    assert "sk-with" not in str(info.value)
    with pytest.raises(ConfigError):
        PetStoreClient(base_url=BASE, api_key="sk-ünicode-1234567890")


async def test_missing_v1_warns_but_works(caplog: pytest.LogCaptureFixture, mock_client) -> None:
    script = Script(jresp(200, [PET]))
    with pytest.warns(PetStoreWarning, match="does not end with /v1"), caplog.at_level(logging.WARNING, "petstore_api"):
        client = mock_client(script, base_url="http://127.0.0.1/api")
    assert any("does not end with /v1" in r.getMessage() for r in caplog.records)
    await client.list_pets()
    assert str(script.requests[0].url) == "http://127.0.0.1/api/pets"


def test_v1_base_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PetStoreClient(base_url="https://pets.example/v1/", api_key=CANARY)


async def test_request_headers(mock_client) -> None:
    script = Script(jresp(200, [PET]))
    await mock_client(script).list_pets()
    headers = script.requests[0].headers
    assert headers["Authorization"] == f"Bearer {CANARY}"
    assert headers["User-Agent"] == f"petstore/{petstore_api.__version__}"
    assert headers["Accept"] == "application/json"


async def test_cookies_are_kept_and_sent_back(mock_client) -> None:
    """A cookie the service sets (a load balancer's, say) is kept and sent back; none is made up."""
    script = Script(jresp(200, [PET]), jresp(200, [], **{"SET-COOKIE": "lb=node-2; Path=/"}), jresp(200, []))
    client = mock_client(script)
    await client.list_pets()
    assert len(client._http.cookies) == 0
    await client.list_orders()
    await client.list_orders()
    assert [r.headers.get("Cookie") for r in script.requests] == [None, None, "lb=node-2"]
    assert dict(client._http.cookies) == {"lb": "node-2"}


async def test_secretstr_key_and_blank_key(mock_client) -> None:
    script = Script(jresp(200, []))
    await mock_client(script, api_key=SecretStr(f"  {CANARY}\n")).list_orders()
    assert script.requests[0].headers["Authorization"] == f"Bearer {CANARY}"
    blank = mock_client(script, api_key="  ")
    await blank.list_orders()
    assert not blank.has_api_key and "Authorization" not in script.requests[1].headers


async def test_key_only_goes_to_the_base_origin(mock_client) -> None:
    """Even a same-client request to another origin (or scheme/port) carries no key."""
    script = Script(jresp(200, []))
    client = mock_client(script)
    urls = ("http://127.0.0.1/v1/x", "https://127.0.0.1/v1/x", "http://127.0.0.1:81/v1/x", "http://evil.example/v1/x")
    for url in urls:
        await client._http.get(url)
    sent = [r.headers.get("Authorization") for r in script.requests]
    assert sent == [f"Bearer {CANARY}", None, None, None]


async def test_next_link_to_another_origin_is_refused_without_sending(mock_client) -> None:
    script = Script(jresp(200, [PET], Link='<http://evil.example/v1/pets?cursor=2>; rel="next"'))
    client = mock_client(script)
    page = await client.list_pets()
    assert page.next_url == "http://evil.example/v1/pets?cursor=2"
    with pytest.raises(petstore_api.errors.ProtocolError, match=r"another origin \(evil\.example\)"):
        await client.next_page(page)
    with pytest.raises(petstore_api.errors.ProtocolError, match="another origin"):
        [p async for p in client.iter_pages()]
    assert all(r.url.host == "127.0.0.1" for r in script.requests)


async def test_link_loop_stops_iteration(mock_client) -> None:
    script = Script(jresp(200, [PET], Link='<?cursor=a>; rel="next"'))
    pages = []
    with pytest.raises(petstore_api.errors.ProtocolError, match="repeats an earlier page after 2 pages"):
        async for page in mock_client(script).iter_pages(limit=1):
            pages.append(page)
    assert len(pages) == 2 and len(script.requests) == 2


# -- the canary never shows ------------------------------------------------------


def _texts(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + str(exc) + repr(exc) + repr(exc.args)


FAULTS = [
    jresp(200, [PET]),
    jresp(401, {"code": "unauthorized", "message": f"invalid API key {CANARY}", "status": 401}),
    jresp(503, {"code": f"c-{CANARY}", "message": "busy", "status": 503, "echo": {CANARY: [CANARY]}}),
    httpx.Response(302, headers={"Location": f"https://x/?k={CANARY}"}),
    httpx.Response(200, text="<html>"),
    httpx.ConnectError(f"refused (Authorization: Bearer {CANARY})"),
    httpx.ReadTimeout("slow"),
    httpx.RemoteProtocolError("closed"),
    httpx.UnsupportedProtocol(f"weird {CANARY}"),
]


def _fault_id(fault: object) -> str:
    return type(fault).__name__ if isinstance(fault, Exception) else str(getattr(fault, "status_code", fault))


@pytest.mark.parametrize("fault", FAULTS, ids=_fault_id)
async def test_canary_never_in_repr_logs_or_exceptions(mock_client, caplog: pytest.LogCaptureFixture, fault) -> None:
    caplog.set_level(logging.DEBUG)
    client = mock_client(Script(fault), retry=RetryPolicy(attempts=2, jitter=False, sleep=_no_sleep))
    seen = [repr(client), str(client), repr(client._http), repr(client._http.auth), repr(client.retry)]
    for call in (client.list_pets(), client.create_pet(name="Rex", category_id=1), client.get_pet(1)):
        try:
            await call
        except PetStoreError as exc:
            seen.append(_texts(exc))
            assert CANARY not in str(exc.__dict__)
    seen += [r.getMessage() + repr(r.args) for r in caplog.records]
    assert caplog.records, "DEBUG logging should have produced request lines"
    joined = "\n".join(seen)
    assert CANARY not in joined and "CANARY" not in joined
    assert "sk-...cdef" in repr(client)


async def test_canary_not_in_input_or_config_errors() -> None:
    for bad in ("ftp://x/v1", "http://remote.example/v1"):
        with pytest.raises(ConfigError) as info:
            PetStoreClient(base_url=bad, api_key=CANARY)
        assert CANARY not in _texts(info.value)


async def test_total_timeout_error_has_no_canary(mock_client) -> None:
    class Never(httpx.AsyncByteStream):
        async def __aiter__(self):
            import asyncio

            await asyncio.sleep(60)
            yield b""

    client = mock_client(Script(httpx.Response(200, stream=Never())), timeouts=Timeouts(total=0.05))
    with pytest.raises(petstore_api.errors.TimeoutError) as info:
        await client.list_pets()
    text = _texts(info.value)
    assert CANARY not in text and "During handling" not in text and "direct cause" not in text


async def _no_sleep(_: float) -> None:
    return None


async def test_debug_log_has_one_line_per_attempt(mock_client, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="petstore_api")
    script = Script(jresp(503, {"code": "x", "message": "busy", "status": 503}), jresp(200, [PET]))
    await mock_client(script).list_pets(limit=5)
    lines = [r.getMessage() for r in caplog.records if r.name == "petstore_api" and "->" in r.getMessage()]
    assert len(lines) == 2
    assert lines[0].startswith("GET 127.0.0.1/v1/pets?limit=5 -> 503 (") and lines[0].endswith("(attempt 1/3)")
    assert " ms " in lines[0] and lines[1].startswith("GET 127.0.0.1/v1/pets?limit=5 -> 200 (")
    assert any("retrying in 0.25 s (attempt 2/3)" in r.getMessage() for r in caplog.records)
    assert not any("authorization" in r.getMessage().lower() for r in caplog.records)


#: Pieces of base URLs that parsers have been known to read apart (userinfo, backslashes, whitespace, look-alike
#: dots and letters, NUL, brackets): a URL made of them may be read as one host by urllib and another by httpx.
_URL_PIECES = st.sampled_from(
    ["127.0.0.1", "localhost", "pets.example", "[::1]", "@", "\\", "\t", "\n", " ", "%40", "%00", "\x00", ":80",
     "\u3002", "\u2100", "\u24db", ".", "#", "?", ";", "/", "[", "]", "evil.example"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(middle=st.lists(_URL_PIECES, min_size=1, max_size=6).map("".join))
def test_the_key_goes_over_plain_http_only_to_a_loopback_host_as_httpx_reads_the_url(middle: str) -> None:
    """The base URL is checked as text when the client is made and as httpx reads it when it connects: whatever the
    two parsers make of a hostile URL, a request carrying the key over plain http reaches only a loopback host."""
    sent: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.url)
        return httpx.Response(200, json=[])

    async def call(client: PetStoreClient) -> None:
        async with client:
            await client.list_pets()

    try:
        client = PetStoreClient(base_url=f"http://{middle}/v1", api_key=CANARY, transport=httpx.MockTransport(answer))
        asyncio.run(call(client))
    except PetStoreError:
        pass  # refused, when made or when it connected (or the stand-in's answer was no pet list)
    assert all(url.scheme == "https" or is_loopback(url.host) for url in sent), sent


def test_the_key_check_reads_the_url_as_httpx_does() -> None:
    with pytest.raises(InsecureTransportError):
        check_key_transport(httpx.URL("http://pets.example/v1"), allow_insecure_http=False)
    check_key_transport(httpx.URL("http://[::1]:8080/v1"), allow_insecure_http=False)
