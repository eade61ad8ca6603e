"""petstore bot slack: signed slash commands per second against the same ASGI stack answering a static reply.

    .venv/bin/python bench/bench_slack.py [--duration 10] [--slow-requests 40]

1. Throughput: wrk (1 thread, 8 connections, loopback) POSTs one signed ``/pets`` command over and over to
   ``petstore bot slack`` (sandbox service in-process, rate limit off; 64 people in turn, since one person's
   commands run one at a time) and to the floor (bench/slack_floor_app.py:
   Starlette + uvicorn + slack_sdk's SignatureVerifier + a static Block Kit reply), alternating, same run.
   Commands: ``whoami`` (the bot's own path: verify, parse, session, policy, render) and ``get 1`` (plus a
   round trip to the service). Ratio = bot / floor requests per second.
2. Delayed path: the service slowed to 2 s (a stand-in answering GET /v1/pets/{id} after 2 s); ``--slow-requests``
   signed ``/pets get 1`` sent at once; reply times (the acknowledgement Slack sees) -> p50, p99 (target < 3 s).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import PETSTORE, PY, clean_env, deadline, machine, scratch, server

SECRET = "bench-signing-secret-0123456789"
BENCH = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def signed(text: str, *, user: str = "U1") -> tuple[bytes, dict[str, str]]:
    body = urlencode(
        {
            "command": "/pets",
            "text": text,
            "user_id": user,
            "team_id": "T1",
            "channel_id": "C1",
            "response_url": "https://hooks.slack.com/commands/T1/1/x",
            "trigger_id": "t",
        }
    ).encode()
    ts = str(int(time.time()))
    sig = "v0=" + hmac.new(SECRET.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return body, {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": sig,
    }


def wrk(origin: str, text: str, duration: int, tmp: Path, users: int = 64) -> float:
    """Requests/s of signed ``/pets TEXT`` from ``users`` people in turn (one person's commands run in order)."""
    lines = ["local requests = {}", "function init(args)"]  # wrk.format needs the thread's Host: build in init
    for i in range(users):
        body, headers = signed(text, user=f"U{i}")
        heads = ", ".join(f'["{k}"] = "{v}"' for k, v in headers.items())
        lines.append(f'  requests[{i + 1}] = wrk.format("POST", "/slack/commands", {{{heads}}}, "{body.decode()}")')
    lines += ["end", "local i = 0", f"function request() i = i % {users} + 1; return requests[i] end"]
    lua = tmp / f"slack-{abs(hash(text))}.lua"
    lua.write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = ["wrk", "-t1", "-c8", f"-d{duration}s", "--timeout", "5s", "-s", str(lua), f"{origin}/slack/commands"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 60).stdout
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if rate is None or re.search(r"Non-2xx|Socket errors", out):
        raise RuntimeError(f"wrk failed against {origin}:\n{out}")
    return float(rate.group(1))


def bot_env(tmp: Path, **extra: str) -> dict[str, str]:
    return clean_env(
        tmp,
        PETSTORE_BOT__SLACK__SIGNING_SECRET=SECRET,
        PETSTORE_BOT__RATE_LIMIT="off",
        PETSTORE_BOT__AUDIT_LOG=str(tmp / "audit.ndjson"),
        **extra,
    )


async def slow_round(origin: str, count: int) -> list[float]:
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=count)) as http:

        async def one(i: int) -> float:
            body, headers = signed("get 1", user=f"U{i}")
            start = time.perf_counter()
            answer = await http.post(f"{origin}/slack/commands", content=body, headers=headers)
            assert answer.status_code == 200, answer.text
            return time.perf_counter() - start

        return list(await asyncio.gather(*(one(i) for i in range(count))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--slow-requests", type=int, default=40)
    args = parser.parse_args()
    print(machine())
    with deadline(600), scratch() as tmp:
        bot_port, floor_port = free_port(), free_port()
        bot = server([PETSTORE, "bot", "slack", "--port", str(bot_port)], env=bot_env(tmp), port=bot_port)
        floor = server(
            [PY, str(BENCH / "slack_floor_app.py"), "--port", str(floor_port)],
            env=clean_env(tmp, SLACK_SECRET=SECRET),
            port=floor_port,
        )
        with bot as bot_origin, floor as floor_origin:
            for origin in (bot_origin, floor_origin):
                wrk(origin, "whoami", 2, tmp)  # warm up
            for text in ("whoami", "get 1"):
                rates: dict[str, list[float]] = {"bot": [], "floor": []}
                for _ in range(2):
                    rates["bot"].append(wrk(bot_origin, text, args.duration, tmp))
                    rates["floor"].append(wrk(floor_origin, text, args.duration, tmp))
                b, f = max(rates["bot"]), max(rates["floor"])
                print(
                    f"/pets {text:7}  bot {b:8.0f} req/s   floor {f:8.0f} req/s   ratio {b / f:.2f}x (target >= 0.7x)"
                )
        service_port, bot_port = free_port(), free_port()
        slow = server(
            [PY, str(BENCH / "slack_floor_app.py"), "--port", str(service_port), "--delay-service", "2"],
            env=clean_env(tmp),
            port=service_port,
        )
        env = bot_env(
            tmp, PETSTORE_API_KEY="sk-bench-0123456789abcdef", PETSTORE_BASE_URL=f"http://127.0.0.1:{service_port}/v1"
        )
        with slow, server([PETSTORE, "bot", "slack", "--port", str(bot_port)], env=env, port=bot_port) as origin:
            asyncio.run(slow_round(origin, 2))  # warm up
            times = sorted(asyncio.run(slow_round(origin, args.slow_requests)))
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            print(
                f"service slowed to 2 s, {args.slow_requests} commands at once: reply p50 "
                f"{statistics.median(times):.2f} s, p99 {p99:.2f} s, max {times[-1]:.2f} s (target p99 < 3 s)"
            )


if __name__ == "__main__":
    main()
