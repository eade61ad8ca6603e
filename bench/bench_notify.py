"""!watch: how long from a pet's creation to its message in the room, and what watching rooms cost the service.

    .venv/bin/python bench/bench_notify.py [--creates 100] [--interval 2] [--rooms 50] [--window 20]

The real ``petstore serve`` (access log to a file) and the real ``petstore bot slack`` (``[bot] watch_interval``
= ``--interval``, its state in SQLite); Slack's Web API is a stand-in on loopback written to its protocol
(``auth.test``, ``chat.postMessage``; Slack cannot be reached from here) that notes when each message arrives.

1. Delay: one channel watches ``available``; ``--creates`` pets are POSTed by another client at random moments
   (0 to 0.6 s apart, so creations fall anywhere in the poll cycle); delay = the ``chat.postMessage`` carrying the
   pet minus the moment before its POST was sent. Target: p99 <= interval + 1 s. The floor is the interval itself:
   a poller cannot see a pet before it looks.
2. Cost: over ``--window`` seconds with 1 channel watching, then with ``--rooms`` channels watching the same
   filter: the service's GET /v1/pets requests (its access log) per poll (the bot's log) and per second.
   Target: the same with 50 rooms as with one (ratio 1.00).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import API_KEY, AUTH, PETSTORE, SERVER_PETSTORE, clean_env, deadline, free_port, report, scratch, server

SECRET = "bench-signing-secret-0123456789"
BOT_TOKEN = "xoxb-bench-bot-token-0123456789"


class WebApi(BaseHTTPRequestHandler):
    """Slack's Web API as the bot uses it; each chat.postMessage noted with its arrival time."""

    posts: list[tuple[float, dict[str, object]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Authorization") != f"Bearer {BOT_TOKEN}":
            answer: dict[str, object] = {"ok": False, "error": "invalid_auth"}
        elif self.path.endswith("/auth.test"):
            answer = {"ok": True, "user_id": "UPETBOT", "team_id": "T1"}
        elif self.path.endswith("/chat.postMessage"):
            WebApi.posts.append((time.time(), json.loads(body)))
            answer = {"ok": True, "ts": f"{len(WebApi.posts)}.0001"}
        else:
            answer = {"ok": False, "error": "unknown_method"}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def signed(text: str, *, channel: str) -> tuple[bytes, dict[str, str]]:
    form = {"command": "/pets", "text": text, "user_id": "U1", "team_id": "T1", "channel_id": channel}
    body = urlencode({**form, "response_url": "https://hooks.slack.com/commands/T1/1/x", "trigger_id": channel})
    ts = str(int(time.time()))
    sig = "v0=" + hmac.new(SECRET.encode(), f"v0:{ts}:".encode() + body.encode(), hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/x-www-form-urlencoded", "X-Slack-Request-Timestamp": ts}
    return body.encode(), {**headers, "X-Slack-Signature": sig}


def watch(bot: str, channel: str) -> None:
    body, headers = signed("watch available", channel=channel)
    reply = httpx.post(f"{bot}/slack/commands", content=body, headers=headers, timeout=30)
    if "Watching new pets" not in reply.text:
        raise RuntimeError(f"!watch in {channel} failed: {reply.text[:300]}")


def delays(service: str, *, creates: int) -> list[float]:
    """Seconds from each create to its message."""
    sent: dict[int, float] = {}
    with httpx.Client(headers=AUTH, timeout=30) as http:
        for i in range(creates):
            time.sleep(random.uniform(0, 0.6))
            before = time.time()
            made = http.post(f"{service}/pets", json={"name": f"bench-{i}", "categoryId": 1, "status": "available"})
            made.raise_for_status()
            sent[int(made.json()["id"])] = before
    end = time.monotonic() + 60
    found: dict[int, float] = {}
    while len(found) < creates and time.monotonic() < end:
        for at, post in list(WebApi.posts):
            hit = re.match(r"New pet (\d+):", str(post.get("text", "")))
            if hit and int(hit[1]) in sent:
                found.setdefault(int(hit[1]), at)
        time.sleep(0.1)
    if len(found) < creates:
        raise RuntimeError(f"only {len(found)} of {creates} pets were posted")
    return [found[pet] - sent[pet] for pet in sent]


def cost(access: Path, bot_log: Path, *, window: float) -> tuple[int, int]:
    """(requests to GET /v1/pets?status=available, polls) over ``window`` seconds from now."""

    def counts() -> tuple[int, int]:
        lines = access.read_text().splitlines()
        gets = sum(1 for line in lines if '"GET"' in line and '"/v1/pets"' in line and "status=available" in line)
        return gets, bot_log.read_text().count("watch available: polled")

    start = counts()
    time.sleep(window)
    end = counts()
    return end[0] - start[0], end[1] - start[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--creates", type=int, default=100)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--rooms", type=int, default=50)
    parser.add_argument("--window", type=float, default=20.0)
    args = parser.parse_args()
    api = ThreadingHTTPServer(("127.0.0.1", 0), WebApi)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    with deadline(900), scratch() as tmp:
        access, bot_log = tmp / "access.log", tmp / "bot.log"
        argv = [SERVER_PETSTORE, "serve", "--host", "127.0.0.1", "--port", "0", "--db", str(tmp / "pets.db")]
        env = clean_env(tmp / "serve", PETSTORE_SERVER_API_KEYS=API_KEY)
        with server([*argv, "--access-log", str(access)], env=env) as origin:
            service = origin + "/v1"
            port = free_port()
            bot_env = clean_env(
                tmp / "bot",
                PETSTORE_BASE_URL=service,
                PETSTORE_API_KEY=API_KEY,
                PETSTORE_BOT__SLACK__SIGNING_SECRET=SECRET,
                PETSTORE_BOT__SLACK__BOT_TOKEN=BOT_TOKEN,
                PETSTORE_BOT__SLACK__API_URL=f"http://127.0.0.1:{api.server_port}/api/",
                PETSTORE_BOT__WATCH_INTERVAL=str(args.interval),
                PETSTORE_BOT__RATE_LIMIT="off",
            )
            command = [PETSTORE, "-v", "bot", "slack", "--port", str(port)]
            with bot_log.open("wb") as err:
                bot = subprocess.Popen(command, env=bot_env, stdout=subprocess.DEVNULL, stderr=err)
            try:
                origin_bot = f"http://127.0.0.1:{port}"
                end = time.monotonic() + 60
                while True:
                    try:
                        if httpx.get(f"{origin_bot}/healthz").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    if bot.poll() is not None or time.monotonic() > end:
                        raise RuntimeError(f"petstore bot slack did not start:\n{bot_log.read_text()[-2000:]}")
                    time.sleep(0.05)
                watch(origin_bot, "C0")
                measured = sorted(delays(service, creates=args.creates))
                one = cost(access, bot_log, window=args.window)
                for i in range(1, args.rooms):
                    watch(origin_bot, f"C{i}")
                many = cost(access, bot_log, window=args.window)
            finally:
                bot.terminate()
                bot.wait(timeout=30)
    p50 = statistics.median(measured)
    p99 = measured[min(len(measured) - 1, round(0.99 * len(measured)) - 1)]
    target = args.interval + 1.0
    per_s_one, per_s_many = one[0] / args.window, many[0] / args.window
    report(
        "notify",
        [
            {
                "figure": f"create -> room message, {args.creates} creates, interval {args.interval:g} s",
                "p50_s": round(p50, 2),
                "p99_s": round(p99, 2),
                "max_s": round(measured[-1], 2),
                "target_s": target,
                "verdict": "MEETS" if p99 <= target else "MISSES",
            },
            {
                "figure": f"service requests with 1 and {args.rooms} rooms watching, {args.window:g} s each",
                "requests_1": one[0],
                "polls_1": one[1],
                f"requests_{args.rooms}": many[0],
                f"polls_{args.rooms}": many[1],
                "per_poll_1": round(one[0] / max(one[1], 1), 2),
                f"per_poll_{args.rooms}": round(many[0] / max(many[1], 1), 2),
                "ratio_per_s": round(per_s_many / per_s_one, 2) if per_s_one else None,
                "verdict": "MEETS" if many[0] <= one[0] + 1 and many[0] == many[1] else "MISSES",
            },
        ],
    )


if __name__ == "__main__":
    main()
