"""Error mapping: every error class, tolerant Error bodies, protocol errors, real-socket faults."""

from __future__ import annotations

import httpx
import pytest
from api_support import CANARY, PET, Script, jresp
from faultserver import FaultServer, refused_url

from petstore_api import PetStoreClient, RetryPolicy, Timeouts
from petstore_api.errors import (
    APIError,
    AuthenticationError,
    BadRequestError,
    ConnectError,
    NotFoundError,
    PetStoreError,
    ProtocolError,
    RateLimitedError,
    ServerError,
    TimeoutError,
    TransportError,
)


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (404, NotFoundError),
        (429, RateLimitedError),
        (500, ServerError),
        (501, ServerError),
        (418, APIError),
        (422, APIError),
    ],
)
async def test_status_maps_to_its_error_class(mock_client, status: int, cls: type[APIError]) -> None:
    body = {"code": "some_code", "message": "what went wrong", "status": status, "detail": "kept"}
    with pytest.raises(cls) as info:
        await mock_client(Script(jresp(status, body)), retry=RetryPolicy.never()).get_pet(5)
    error = info.value
    assert type(error) is cls
    assert (error.status, error.code, error.error.message) == (status, "some_code", "what went wrong")
    assert error.error.model_extra == {"detail": "kept"}
    assert str(error) == f"what went wrong (HTTP {status}, some_code)"
    assert (error.method, error.url) == ("GET", "/pets/5")


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (
            httpx.Response(502, text="<html><body>Bad Gateway</body></html>", headers={"Content-Type": "text/html"}),
            "Bad Gateway: the service failed, try again later",
        ),
        (httpx.Response(401), "Unauthorized: the API key is missing or invalid"),
        (jresp(404, {"message": "no such pet"}), "no such pet"),
        (jresp(400, {"code": 7, "message": ["x"]}), "Bad Request: the request was refused as invalid"),
        (jresp(418, ["not", "an", "error"]), "I'm a Teapot: the service sent no error details"),
        (httpx.Response(499, text="?"), "HTTP 499: the service sent no error details"),
        (httpx.Response(500, content=b'{"code": "trunc'), "Internal Server Error: the service failed, try again later"),
    ],
)
async def test_unusable_error_bodies_are_synthesised(mock_client, reply: httpx.Response, message: str) -> None:
    with pytest.raises(APIError) as info:
        await mock_client(Script(reply), retry=RetryPolicy.never()).list_pets()
    error = info.value.error
    assert error.status == reply.status_code and error.message == message
    assert error.code == f"http_{reply.status_code}"


async def test_error_body_status_field_follows_the_http_status(mock_client) -> None:
    with pytest.raises(NotFoundError) as info:
        await mock_client(Script(jresp(404, {"code": "gone", "message": "gone", "status": 200}))).get_pet(1)
    assert info.value.error.status == 404


LIST = "GET /pets: expected a JSON array of pets, "
ONE = "GET /pets/1: expected a pet object, "
HTML = httpx.Response(200, text="<!doctype html><h1>Welcome to nginx!</h1>", headers={"Content-Type": "text/html"})


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (HTML, LIST + "got an HTML page"),
        (httpx.Response(200, content=b'[{"id": 1, "name": "Re'), LIST + "got invalid or truncated JSON"),
        (httpx.Response(200), LIST + "got an empty body"),
        (httpx.Response(200, content=b" \r\n "), LIST + "got an empty body"),
        (
            httpx.Response(
                200,
                text="<html><body>Sign in to the network</body></html>",
                headers={"Content-Type": "application/json"},
            ),
            LIST + "got an HTML page",
        ),
        (jresp(200, {"pets": [PET]}), LIST + "got a JSON object"),
        (jresp(200, [{"name": "Rex", "categoryId": 3}]), LIST + "but item 0: id is missing"),
        (jresp(200, [PET, {**PET, "id": "1"}]), LIST + "but item 1: id is a string, expected a 64-bit integer"),
        (jresp(200, [PET, 5]), LIST + "but item 1: the pet is a number, expected an object"),
        (jresp(200, [{**PET, "id": 2**63}]), LIST + "but item 0: id is out of range, expected a 64-bit integer"),
        (jresp(200, [{**PET, "name": None}]), LIST + "but item 0: name is null, expected a string"),
        (httpx.Response(200, content=b"[" * 100_000), LIST + "got JSON nested too deeply"),
    ],
)
async def test_list_protocol_errors(mock_client, reply: httpx.Response, expected: str) -> None:
    with pytest.raises(ProtocolError) as info:
        await mock_client(Script(reply)).list_pets()
    assert str(info.value) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (jresp(200, [PET]), ONE + "got a JSON array"),
        (jresp(200, {"name": "Rex", "categoryId": 3}), ONE + "but id is missing"),
        (jresp(200, {**PET, "categoryId": 1.5}), ONE + "but categoryId is a number, expected a 64-bit integer"),
        (HTML, ONE + "got an HTML page"),
    ],
)
async def test_get_protocol_errors(mock_client, reply: httpx.Response, expected: str) -> None:
    with pytest.raises(ProtocolError) as info:
        await mock_client(Script(reply)).get_pet(1)
    assert str(info.value) == expected


async def test_create_and_orders_protocol_errors(mock_client) -> None:
    with pytest.raises(ProtocolError, match="POST /pets: expected a pet object, got an HTML page"):
        await mock_client(Script(HTML)).create_pet(name="Rex", category_id=1)
    with pytest.raises(ProtocolError, match="GET /store/orders: expected a JSON value, got an HTML page"):
        await mock_client(Script(HTML)).list_orders()
    assert await mock_client(Script(jresp(200, {"any": ["json"]}))).list_orders() == {"any": ["json"]}


async def test_redirect_is_a_protocol_error_and_not_followed(mock_client) -> None:
    script = Script(httpx.Response(301, headers={"Location": "https://elsewhere.example/v1/pets"}))
    with pytest.raises(ProtocolError, match="unexpected HTTP 301 to https://elsewhere.example/v1/pets"):
        await mock_client(script).list_pets()
    assert len(script.requests) == 1


async def test_huge_body_is_capped(mock_client) -> None:
    class Endless(httpx.AsyncByteStream):
        async def __aiter__(self):
            yield b"["
            while True:
                yield b'{"id": 1, "name": "Rex", "categoryId": 3},' * 1000

    with pytest.raises(ProtocolError, match=r"GET /pets: the response body is larger than 10 MiB"):
        await mock_client(Script(httpx.Response(200, stream=Endless()))).list_pets()
    declared = httpx.Response(200, headers={"Content-Length": str(2**40)}, stream=Endless())
    with pytest.raises(ProtocolError, match="larger than 1 MiB"):
        await mock_client(Script(declared), max_response_bytes=2**20).list_pets()


@pytest.mark.parametrize(
    ("exc", "cls", "message"),
    [
        (
            httpx.ConnectError("[Errno -2] Name or service not known"),
            ConnectError,
            "cannot connect to 127.0.0.1: host name not found",
        ),
        (httpx.ConnectTimeout("t"), TimeoutError, "cannot connect to 127.0.0.1 within 5 s (connect timeout)"),
        (httpx.PoolTimeout("t"), TimeoutError, "no free connection to 127.0.0.1 within 5 s (pool timeout)"),
        (httpx.WriteTimeout("t"), TimeoutError, "sending to 127.0.0.1 stalled for 10 s (write timeout)"),
        (
            httpx.RemoteProtocolError("peer closed connection"),
            TransportError,
            "the connection to 127.0.0.1 broke off before the response was complete (peer closed connection)",
        ),
        (
            httpx.DecodingError("bad gzip"),
            ProtocolError,
            "GET /pets: the response body could not be decoded (bad gzip)",
        ),
        (
            httpx.UnsupportedProtocol("nope"),
            TransportError,
            "GET /pets: the request to 127.0.0.1 failed (UnsupportedProtocol: nope)",
        ),
        (httpx.StreamConsumed(), TransportError, "GET /pets: the request to 127.0.0.1 failed"),
    ],
)
async def test_httpx_exceptions_never_escape(mock_client, exc: Exception, cls: type, message: str) -> None:
    with pytest.raises(PetStoreError) as info:
        await mock_client(Script(exc)).list_pets()
    assert type(info.value) is cls and str(info.value).startswith(message)
    assert (info.value.__cause__ is None and info.value.__suppress_context__) or info.value.__context__ is None


async def test_closed_client_refuses_use(mock_client) -> None:
    client = mock_client(Script(jresp(200, [])))
    async with client:
        await client.list_pets()
    with pytest.raises(RuntimeError, match="closed"):
        await client.list_pets()
    await client.aclose()  # idempotent


# -- over a real loopback socket ----------------------------------------------


def _socket_client(url: str, **kwargs) -> PetStoreClient:
    kwargs.setdefault("retry", RetryPolicy(attempts=2, backoff=0.0))
    kwargs.setdefault("timeouts", Timeouts(connect=1.0, read=0.3, write=1.0, pool=1.0, total=3.0))
    return PetStoreClient(base_url=url, api_key=CANARY, **kwargs)


async def test_socket_connection_refused() -> None:
    async with _socket_client(refused_url()) as client:
        with pytest.raises(ConnectError, match=r"^cannot connect to 127\.0\.0\.1:\d+: connection refused$"):
            await client.list_pets()


async def test_socket_no_answer_is_a_read_timeout(faults: FaultServer) -> None:
    async with _socket_client(faults.url("hang")) as client:
        with pytest.raises(TimeoutError, match=r"sent nothing for 0\.3 s \(read timeout\)"):
            await client.list_pets()


async def test_socket_trickle_hits_the_total_deadline(faults: FaultServer) -> None:
    timeouts = Timeouts(read=5.0, total=0.5)
    async with _socket_client(faults.url("trickle"), timeouts=timeouts) as client:
        with pytest.raises(TimeoutError, match=r"within 0\.5 s \(total time limit\)"):
            await client.list_pets()


async def test_socket_close_mid_body(faults: FaultServer) -> None:
    async with _socket_client(faults.url("close_mid_body")) as client:
        with pytest.raises(TransportError, match="broke off before the response was complete"):
            await client.list_pets()


async def test_socket_huge_body(faults: FaultServer) -> None:
    async with _socket_client(faults.url("huge")) as client:
        with pytest.raises(ProtocolError, match="larger than 10 MiB"):
            await client.list_pets()


async def test_socket_commit_then_drop_is_retried_with_its_key(faults: FaultServer) -> None:
    async with _socket_client(faults.url("commit_then_drop")) as client:
        pet = (await client.create_pet(name="Rex", category_id=3)).pet
    assert pet.id == 42
    posts = [r for r in faults.requests if r.path.startswith("/commit_then_drop/")]
    assert len(posts) == 2 and posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"]
    assert posts[0].headers["authorization"] == f"Bearer {CANARY}"


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        ('<https://other.example/v1/pets?cursor=2>; rel="next"', "https://other.example/v1/pets?cursor=2"),
        ('</v1/pets?cursor=2>; rel="next"', "http://127.0.0.1/v1/pets?cursor=2"),
        ('<pets?cursor=3>; rel="next"', "http://127.0.0.1/v1/pets?cursor=3"),
        ('< https://a.example/p >; rel="next"', "https://a.example/p"),
    ],
)
async def test_next_links_absolute_kept_relative_resolved(mock_client, link: str, expected: str) -> None:
    reply = httpx.Response(200, json=[PET], headers={"Link": link})
    page = await mock_client(Script(reply)).list_pets()
    assert page.next_url == expected


async def test_relative_next_link_joined_against_each_page_url(mock_client) -> None:
    """The same relative target (remembered once joined) still resolves against the URL of the page it came on."""
    link = '<?cursor=2>; rel="next"'
    reply = httpx.Response(200, json=[PET], headers={"Link": link})
    for _ in range(2):
        assert (await mock_client(Script(reply)).list_pets()).next_url == "http://127.0.0.1/v1/pets?cursor=2"
        other = mock_client(Script(reply), base_url="http://localhost:8080/v1")
        assert (await other.list_pets(limit=5)).next_url == "http://localhost:8080/v1/pets?cursor=2"
