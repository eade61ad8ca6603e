"""The floor of bench_commands.py: a raw ``httpx.AsyncClient`` loop, sequential requests.

    python bench/raw_loop.py BASE_URL API_KEY N_ADD N_LIST

The same requests ``petstore run --json`` makes for ``/add NAME --category C --status available``
(POST /pets with a JSON body and an Idempotency-Key) and ``/list`` (GET /pets); checks each
status and decodes each body. Prints one JSON line: first/last request completion times.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid

import httpx


async def main(base: str, key: str, n_add: int, n_list: int) -> None:
    done: list[float] = []
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}) as client:
        for i in range(n_add):
            body = {"name": f"Pet {i}", "categoryId": i % 5 + 1, "status": "available"}
            r = await client.post(f"{base}/pets", json=body, headers={"Idempotency-Key": str(uuid.uuid4())})
            if r.status_code != 201:
                raise SystemExit(f"POST /pets: {r.status_code} {r.text[:200]}")
            r.json()
            done.append(time.perf_counter())
        for _ in range(n_list):
            r = await client.get(f"{base}/pets")
            if r.status_code != 200:
                raise SystemExit(f"GET /pets: {r.status_code} {r.text[:200]}")
            r.json()
            done.append(time.perf_counter())
    print(json.dumps({"first": done[0], "last": done[-1], "n": len(done)}))


if __name__ == "__main__":
    url, api_key, adds, lists = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    asyncio.run(main(url, api_key, adds, lists))
