"""Behind a real nginx under /petstore/v1: the real client pages through next links; foreign origins stay refused."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import urlsplit

import httpx
import pytest
from nginx_support import running_nginx

from petstore_api import PetStoreClient
from petstore_api.errors import ProtocolError

from .support import KEY, REPO, running_server

pytestmark = pytest.mark.slow


@pytest.fixture
def proxied(db_target: str, tmp_path):
    """(proxy base URL, service base URL): the service with its 12 sample pets, behind nginx."""
    with running_server(db_target, "--seed", keys=[KEY]) as (_, url, _):
        (tmp_path / "nginx").mkdir()
        with running_nginx(urlsplit(url).port, tmp_path / "nginx") as port:
            yield f"http://127.0.0.1:{port}/petstore/v1", url


async def test_client_pages_through_the_proxy(proxied) -> None:
    base, _ = proxied
    async with PetStoreClient(base_url=base, api_key=KEY) as client:
        pages = [page async for page in client.iter_pages(limit=5)]
        first = await client.list_pets(limit=5)
        second = await client.next_page(first)
    assert [len(page.pets) for page in pages] == [5, 5, 2]
    assert [pet.id for page in pages for pet in page.pets] == list(range(1, 13))
    assert first.next_url.startswith(f"{base}/pets?limit=5&cursor=")
    assert [pet.id for pet in second.pets] == [6, 7, 8, 9, 10]
    async with httpx.AsyncClient() as http:
        health = await http.get(f"{base}/healthz")
    assert health.status_code == 200


def test_list_and_more_through_the_proxy(proxied, tmp_path) -> None:
    base, _ = proxied
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "c"),
        "XDG_DATA_HOME": str(tmp_path / "d"),
        "PETSTORE_API_KEY": KEY,
        "COLUMNS": "120",
    }
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "petstore_cli",
            "run",
            "--base-url",
            base,
            "--json",
            "-c",
            "/list --limit 5",
            "-c",
            "/more",
            "-c",
            "/list --all",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert ran.returncode == 0, ran.stderr
    assert "Rex" in ran.stdout and "Bubbles" in ran.stdout and "origin" not in ran.stdout + ran.stderr


async def test_a_truly_foreign_next_link_is_still_refused() -> None:
    async def foreign(scope, receive, send) -> None:
        headers = [
            (b"content-type", b"application/json"),
            (b"link", b'<http://evil.example/v1/pets?cursor=x>; rel="next"'),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"[]"})

    async with PetStoreClient(
        base_url="http://127.0.0.1:9/petstore/v1", api_key=KEY, transport=httpx.ASGITransport(app=foreign)
    ) as client:
        page = await client.list_pets(limit=5)
        with pytest.raises(ProtocolError, match="another origin"):
            await client.next_page(page)
