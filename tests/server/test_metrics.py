"""``GET /metrics`` of ``petstore serve --workers 2`` on PostgreSQL: counts summed across the workers, the pool gauges,
creates and replays; a metrics token when set; the access log on stderr by default, never holding a key."""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat

import httpx
import pytest

from .support import AUTH, KEY, running_server

pytestmark = pytest.mark.slow

TOKEN = "metrics-token-0123456789"


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in the Prometheus text ``text`` (0 when absent)."""
    wanted = ",".join(f'{key}="{value}"' for key, value in sorted(labels.items()))
    for line in text.splitlines():
        match = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})? (\S+)", line)
        if match and match[1] == name and ",".join(sorted((match[2] or "").split(","))).strip(",") == wanted:
            return float(match[3])
    return 0.0


async def test_metrics_are_summed_across_two_workers(pg_url: str) -> None:
    env = {"PETSTORE_SERVER_METRICS_TOKEN": TOKEN}
    with running_server(pg_url, "--workers", "2", keys=[KEY], env=env) as (proc, url, _):
        root = url.removesuffix("/v1")
        limits = httpx.Limits(max_keepalive_connections=0)  # a connection a request: both workers answer
        async with httpx.AsyncClient(base_url=url, headers=AUTH, limits=limits, timeout=30) as http:
            sent = 0
            pids: set[int] = set()
            while len(pids) < 2:
                assert sent < 2000, "one worker answered everything"
                answers = await asyncio.gather(*(http.get("/pets?limit=1") for _ in range(20)))
                assert {r.status_code for r in answers} == {200}
                sent += 20
                proc.stderr.seek(0)
                pids = {json.loads(line)["pid"] for line in proc.stderr if line.startswith("{")}
            once = {"Idempotency-Key": "metrics-once"}
            for _ in range(2):
                assert (await http.post("/pets", json={"name": "M", "categoryId": 1}, headers=once)).is_success
            await http.get("/pets", headers={"Authorization": "Bearer sk-wrong-key-000"})
            # 405: a method outside HTTP's own is counted as "other" (one the HTTP parser knows: httptools answers a
            # method it does not know, such as BREW, with its own 400 before the app sees it)
            await http.request("PURGE", "/pets")

            assert (await http.get(f"{root}/metrics")).status_code == 401
            assert (await http.get(f"{root}/metrics", headers=AUTH)).status_code == 401  # an API key is not it
            scrapes = [await http.get(f"{root}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}) for _ in (1, 2)]
        for scrape in scrapes:  # whichever worker answers, the sums are the same
            assert scrape.status_code == 200 and scrape.headers["content-type"].startswith("text/plain")
            text = scrape.text
            ok = sample(text, "petstore_http_requests_total", route="/v1/pets", method="GET", status="200")
            assert ok == sent
            assert sample(text, "petstore_http_requests_total", route="/v1/pets", method="GET", status="401") == 1
            assert sample(text, "petstore_http_requests_total", route="/v1/pets", method="other", status="405") == 1
            assert sample(text, "petstore_http_request_duration_seconds_count", route="/v1/pets") == sent + 4
            assert sample(text, "petstore_pets_created_total") == 1
            assert sample(text, "petstore_idempotent_replays_total") == 1
            assert "petstore_db_pool_connections_in_use" in text and "petstore_db_pool_requests_waiting" in text
        proc.stderr.seek(0)
        log = proc.stderr.read()
    assert KEY not in log and "sk-wrong-key-000" not in log and TOKEN not in log and "metrics-once" not in log


def test_an_access_log_file_is_private(tmp_path) -> None:
    log = tmp_path / "access.log"
    with running_server(tmp_path / "p.db", "--access-log", str(log), keys=[KEY]) as (_, url, _):
        assert httpx.get(f"{url}/pets", headers=AUTH, timeout=10).status_code == 200
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
    assert json.loads(log.read_text().splitlines()[0])["status"] == 200
