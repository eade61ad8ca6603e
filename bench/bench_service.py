"""Service throughput with wrk (2 threads, 16 connections) on loopback.

    .venv/bin/python bench/bench_service.py [--duration 8] [--rounds 3]

GET /v1/pets?limit=20 with the bearer key against
- ``petstore serve`` (plain uvicorn, as shipped),
- the floor: a bare Starlette + SQLite app on plain uvicorn (bench/baseline_app.py), target >= 1.0x,
- Stoplight Prism mocking the same interface (``prism mock`` on our /v1/openapi.json with a
  20-pet example), target >= 2.5x; skipped with the reason when Prism is not installed:
  ``npm install --prefix bench/.prism @stoplight/prism-cli``.
Then POST /v1/pets throughput (JSON body; distinct Idempotency-Keys, and without a key),
with the baseline's plain insert for reference. Each server holds 30 pets.
Rounds alternate the servers; each figure is the median over the rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    API_KEY,
    BENCH,
    PY,
    clean_env,
    deadline,
    free_port,
    petstore_server,
    report,
    scratch,
    server,
    verdict,
)

PRISM = BENCH / ".prism" / "node_modules" / ".bin" / "prism"
PETS = [(i, f"Pet {i}", i % 4 + 1, ("available", "pending", "sold")[i % 3]) for i in range(1, 31)]

GET_LUA = f"""wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer {API_KEY}"
"""

POST_LUA = """-- POST /v1/pets with a JSON body; KEYED=true sends a distinct Idempotency-Key each time.
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end
local counter = 0
function request()
  counter = counter + 1
  local body = '{"name":"Bench ' .. counter .. '","categoryId":' .. (counter % 5 + 1) .. ',"status":"available"}'
  local headers = {["Authorization"] = "Bearer @KEY@", ["Content-Type"] = "application/json"}
  if @KEYED@ then
    headers["Idempotency-Key"] = "@RUN@-" .. tid .. "-" .. counter
  end
  return wrk.format("POST", nil, headers, body)
end
"""


def wrk(url: str, script: Path, duration: int) -> dict[str, float]:
    argv = ["wrk", "-t2", "-c16", f"-d{duration}s", "--timeout", "5s", "-s", str(script), url]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60).stdout
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if rate is None:
        raise RuntimeError(f"wrk output not understood:\n{out}")
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)
    latency = re.search(r"Latency\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    lat_ms = float(latency.group(1)) * scale[latency.group(2)] if latency else float("nan")
    if bad or errors:
        raise RuntimeError(f"wrk saw failures against {url}:\n{out}")
    return {"rps": float(rate.group(1)), "latency_ms": lat_ms}


def seed_petstore(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS pets (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "category_id INTEGER NOT NULL, status TEXT NULL)"
    )
    conn.executemany("INSERT INTO pets VALUES (?, ?, ?, ?)", PETS)
    conn.commit()
    conn.close()


def prism_spec(url: str, path: Path) -> None:
    """Our service's OpenAPI document, paths under /v1, with a 20-pet example for listPets."""
    with urllib.request.urlopen(f"{url}/openapi.json", timeout=10) as response:
        doc = json.load(response)
    doc.pop("servers", None)
    doc["paths"] = {f"/v1{p}": item for p, item in doc["paths"].items()}
    example = [{"id": i, "name": n, "categoryId": c, "status": s} for i, n, c, s in PETS[:20]]
    doc["paths"]["/v1/pets"]["get"]["responses"]["200"]["content"]["application/json"]["example"] = example
    path.write_text(json.dumps(doc))


def check(url: str) -> None:
    """One authorised GET answers 200 with 20 pets (or the bench would measure errors)."""
    request = urllib.request.Request(f"{url}/pets?limit=20", headers={"Authorization": f"Bearer {API_KEY}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = json.load(response)
    if response.status != 200 or len(body) != 20:
        raise RuntimeError(f"{url}: expected 20 pets, got {response.status} {str(body)[:200]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=8, help="seconds per wrk run (default 8)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=900, help="hard time limit in seconds")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk not found: apt-get install -y wrk")
        return 2
    with deadline(args.budget), scratch() as tmp:
        get_lua = tmp / "get.lua"
        get_lua.write_text(GET_LUA)
        post_keyed, post_plain = tmp / "post_keyed.lua", tmp / "post_plain.lua"
        run = uuid.uuid4().hex[:8]
        post_lua = POST_LUA.replace("@KEY@", API_KEY).replace("@RUN@", run)
        post_keyed.write_text(post_lua.replace("@KEYED@", "true"))
        post_plain.write_text(post_lua.replace("@KEYED@", "false"))
        seed_petstore(tmp / "pets.db")
        baseline_argv = [PY, str(BENCH / "baseline_app.py"), "--db", str(tmp / "base.db")]
        seed_petstore(tmp / "base.db")
        with contextlib.ExitStack() as stack:
            ours = stack.enter_context(petstore_server(tmp / "pets.db", seed=False))
            base = (
                stack.enter_context(server(baseline_argv, env=clean_env(tmp, PETSTORE_SERVER_API_KEYS=API_KEY))) + "/v1"
            )
            servers = {"petstore serve": ours, "baseline": base}
            prism_note = _start_prisms(stack, servers, ours, tmp)
            for url in servers.values():
                check(url)
            results = _get_rounds(servers, get_lua, args)
            for name in [n for n in servers if n.startswith("prism")]:
                del servers[name]
            posts = _post_rounds(servers, post_keyed, post_plain, args)
    return _report(results, posts, prism_note, args)


PRISM_DEFAULT = "prism mock (defaults)"
PRISM_QUIET = "prism mock -v warn"


def _start_prisms(stack: contextlib.ExitStack, servers: dict[str, str], ours: str, tmp: Path) -> str:
    """Two Prism mocks when installed: as shipped (logs each request, at info) and quiet
    (``-v warn``, its fastest). Output goes to /dev/null; readiness by polling the port.
    Returns why Prism was skipped, or ""."""
    if not PRISM.exists():
        return "Prism not installed (npm install --prefix bench/.prism @stoplight/prism-cli)"
    spec = tmp / "openapi-prism.json"
    prism_spec(ours, spec)
    for name, extra in ((PRISM_DEFAULT, []), (PRISM_QUIET, ["-v", "warn"])):
        port = free_port()
        argv = [str(PRISM), "mock", "-h", "127.0.0.1", "-p", str(port), *extra, str(spec)]
        try:
            servers[name] = stack.enter_context(server(argv, port=port, timeout=90)) + "/v1"
        except RuntimeError as exc:
            return f"Prism did not start: {str(exc)[:300]}"
    return ""


def _get_rounds(servers: dict[str, str], script: Path, args: argparse.Namespace) -> dict[str, list[dict[str, float]]]:
    results: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
    for name, url in servers.items():  # warm-up
        wrk(f"{url}/pets?limit=20", script, 2)
    for i in range(args.rounds):
        names = list(servers) if i % 2 == 0 else list(reversed(servers))
        for name in names:
            r = wrk(f"{servers[name]}/pets?limit=20", script, args.duration)
            results[name].append(r)
            print(f"round {i + 1} GET {name}: {r['rps']:.0f} req/s, latency {r['latency_ms']:.2f} ms", flush=True)
    return results


def _post_rounds(servers: dict[str, str], keyed: Path, plain: Path, args: argparse.Namespace) -> dict[str, list[float]]:
    posts: dict[str, list[float]] = {}
    cases = [
        ("petstore serve, Idempotency-Key", servers["petstore serve"], keyed),
        ("petstore serve, no key", servers["petstore serve"], plain),
        ("baseline (plain insert)", servers["baseline"], plain),
    ]
    for i in range(args.rounds):
        for name, url, script in cases:
            rps = wrk(f"{url}/pets", script, args.duration)["rps"]
            posts.setdefault(name, []).append(rps)
            print(f"round {i + 1} POST {name}: {rps:.0f} req/s", flush=True)
    return posts


def _report(
    results: dict[str, list[dict[str, float]]], posts: dict[str, list[float]], prism_note: str, args: argparse.Namespace
) -> int:
    med = {name: statistics.median(r["rps"] for r in rs) for name, rs in results.items()}
    ours, base = med["petstore serve"], med["baseline"]
    rows: list[dict[str, object]] = [
        {
            "what": "GET /v1/pets?limit=20, petstore serve",
            "rps": round(ours),
            "floor": "bare Starlette+SQLite",
            "floor_rps": round(base),
            "ratio": round(ours / base, 2),
            "target": ">= 1.0x",
            "verdict": verdict(ours / base >= 1.0),
        },
    ]
    lines = [
        f"GET vs bare Starlette+SQLite: {ours:.0f} vs {base:.0f} req/s = {ours / base:.2f}x   "
        f"target >= 1.0x   {verdict(ours / base >= 1.0)}"
    ]
    if PRISM_DEFAULT in med:
        for name, target in ((PRISM_DEFAULT, 2.5), (PRISM_QUIET, None)):
            prism = med[name]
            ok = "(reported)" if target is None else verdict(ours / prism >= target)
            rows.append(
                {
                    "what": "GET /v1/pets?limit=20, petstore serve",
                    "rps": round(ours),
                    "floor": name,
                    "floor_rps": round(prism),
                    "ratio": round(ours / prism, 2),
                    "target": ">= 2.5x" if target else "(reported)",
                    "verdict": ok,
                }
            )
            lines.append(
                f"GET vs {name}: {ours:.0f} vs {prism:.0f} req/s = {ours / prism:.2f}x   "
                + (f"target >= 2.5x   {ok}" if target else "(for reference)")
            )
    else:
        rows.append({"what": "GET vs Prism mock", "skipped": prism_note})
        lines.append(f"GET vs Prism mock: skipped: {prism_note}")
    p_base = statistics.median(posts["baseline (plain insert)"])
    for name, values in posts.items():
        rps = statistics.median(values)
        rows.append(
            {
                "what": f"POST /v1/pets, {name}",
                "rps": round(rps),
                "floor": "baseline plain insert",
                "floor_rps": round(p_base),
                "ratio": round(rps / p_base, 2),
                "target": "(reported)",
            }
        )
        lines.append(f"POST {name}: {rps:.0f} req/s ({rps / p_base:.2f}x the baseline's plain insert)")
    report("service", rows)
    print("\n" + "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
