"""Matrix reply latency: MatrixTransport with a handler vs a minimal plain-nio echo bot, on one real Synapse.

    .venv/bin/python bench/bench_matrix.py [--messages 50] [--burst-users 5] [--burst-each 100]
                                           [--handler module:function]

Latency is "message sent to reply seen": a user PUTs a message, then long-polls /sync until the bot's reply to it
arrives; median and p90 over ``--messages`` per side, the sides alternating in rounds of 10 so drift hits both.
The floor bot is plain matrix-nio (no petstore code): login, sync loop, an m.notice threaded to the message.
Then the burst: ``--burst-users`` users send ``--burst-each`` messages each, all at once; every message must get
exactly one reply (none lost, none answered twice). ``--handler`` plugs another ``petstore_bot.chat.Handler``
(e.g. the bot core's command handler) in place of the echo; its messages are ``!echo N``-style lines.
Then two figures with a person on matrix-nio's e2e extra (``tests/matrix/e2e_person.py``), ``--e2e-messages``
each: the same transport's reply latency in an encrypted room against an unencrypted one (target <= 1.5x), and
room B's reply latency while a command in room A waits 2 s (a handler awaiting ``asyncio.sleep(2)``, standing in
for a service slowed to 2 s) against the echo floor bot's (target <= 1.3x).
Everything runs on 127.0.0.1; Synapse is started and stopped by this script (by PID), within a time budget.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
from nio import AsyncClient, AsyncClientConfig, SyncResponse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from matrix.e2e_person import E2EPerson  # noqa: E402
from matrix.synapse_server import SynapseServer  # noqa: E402

from petstore_bot.chat import Handler, Incoming, Reply  # noqa: E402
from petstore_bot.matrix import MatrixTransport  # noqa: E402

SLOW = 2.0  # seconds the "slow service" command takes in room A

BUDGET = 900.0
SYNC_FILTER = json.dumps({"room": {"timeline": {"limit": 5000}}, "presence": {"not_types": ["*"]}})


async def echo(message: Incoming) -> Reply | None:
    return Reply(text=message.text, html=None)


async def floor_bot(*, url: str, user_id: str, password: str, stop: asyncio.Event, ready: asyncio.Event) -> None:
    """The floor: the least a nio bot does to answer in a thread without pings."""
    client = AsyncClient(url, user_id, config=AsyncClientConfig(encryption_enabled=False))
    await client.login(password=password)
    first = await client.sync(timeout=0, full_state=True)
    for room_id in first.rooms.invite:
        await client.join(room_id)
    since = first.next_batch
    ready.set()
    while not stop.is_set():
        sync = asyncio.ensure_future(client.sync(timeout=30000, since=since))
        waiter = asyncio.ensure_future(stop.wait())
        await asyncio.wait({sync, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if not sync.done():
            sync.cancel()
            break
        response = sync.result()
        if not isinstance(response, SyncResponse):
            continue
        for room_id in response.rooms.invite:
            await client.join(room_id)
        for room_id, info in response.rooms.join.items():
            for event in info.timeline.events:
                src = event.source
                content = src.get("content", {})
                if src.get("sender") == user_id or content.get("msgtype") != "m.text":
                    continue
                relates = {
                    "rel_type": "m.thread",
                    "event_id": src["event_id"],
                    "is_falling_back": True,
                    "m.in_reply_to": {"event_id": src["event_id"]},
                }
                reply = {
                    "msgtype": "m.notice",
                    "body": content.get("body", ""),
                    "m.mentions": {},
                    "m.relates_to": relates,
                }
                await client.room_send(room_id, "m.room.message", reply, tx_id=src["event_id"])
        since = response.next_batch
    await client.close()


class Watcher:
    """A user who sends messages and sees replies through its own /sync long-poll."""

    def __init__(self, *, url: str, token: str) -> None:
        self.http = httpx.AsyncClient(
            base_url=f"{url}/_matrix/client/v3", timeout=60, headers={"Authorization": f"Bearer {token}"}
        )
        self.since: str | None = None
        self.replies: dict[str, list[str]] = {}  # asked event id -> reply event ids

    async def start(self) -> None:
        body = (await self.http.get("/sync", params={"timeout": 0})).json()
        self.since = body["next_batch"]

    async def send(self, room: str, text: str) -> str:
        response = await self.http.put(
            f"/rooms/{room}/send/m.room.message/{uuid.uuid4().hex}", json={"msgtype": "m.text", "body": text}
        )
        response.raise_for_status()
        return str(response.json()["event_id"])

    async def sync_once(self) -> None:
        params = {"since": self.since, "timeout": 30000, "filter": SYNC_FILTER}
        body = (await self.http.get("/sync", params=params)).json()
        self.since = body["next_batch"]
        for info in body.get("rooms", {}).get("join", {}).values():
            if info.get("timeline", {}).get("limited"):
                raise RuntimeError("the observer's sync was limited: raise SYNC_FILTER's timeline limit")
            for event in info.get("timeline", {}).get("events", []):
                asked = event.get("content", {}).get("m.relates_to", {}).get("m.in_reply_to", {}).get("event_id")
                if asked:
                    self.replies.setdefault(asked, []).append(event["event_id"])

    async def read_room(self, room: str) -> None:
        """All replies in ``room`` so far, read through /messages (replaces what sync collected)."""
        replies: dict[str, list[str]] = {}
        params: dict[str, str | int] = {"dir": "b", "limit": 1000}
        while True:
            page = (await self.http.get(f"/rooms/{room}/messages", params=params)).json()
            for event in page.get("chunk", []):
                asked = event.get("content", {}).get("m.relates_to", {}).get("m.in_reply_to", {}).get("event_id")
                if asked:
                    replies.setdefault(asked, []).append(event["event_id"])
            if not page.get("chunk") or "end" not in page:
                break
            params["from"] = page["end"]
        self.replies = replies

    async def until(self, done: Callable[[], bool], *, deadline: float) -> None:
        end = time.monotonic() + deadline
        while not done():
            if time.monotonic() > end:
                raise RuntimeError("replies did not arrive in time")
            await self.sync_once()

    async def aclose(self) -> None:
        await self.http.aclose()


async def login(url: str, user_id: str, password: str) -> str:
    body = {"type": "m.login.password", "identifier": {"type": "m.id.user", "user": user_id}, "password": password}
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(f"{url}/_matrix/client/v3/login", json=body)
    return str(response.json()["access_token"])


async def room_with(watcher: Watcher, bot_id: str) -> str:
    response = await watcher.http.post("/createRoom", json={"preset": "private_chat", "invite": [bot_id]})
    return str(response.json()["room_id"])


async def latency(watcher: Watcher, room: str, text: str) -> float:
    began = time.perf_counter()
    asked = await watcher.send(room, text)
    await watcher.until(lambda: asked in watcher.replies, deadline=60)
    return time.perf_counter() - began


def summary(name: str, samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    result = {"median_ms": statistics.median(ordered) * 1000, "p90_ms": p90 * 1000}
    print(f"{name:>10}: median {result['median_ms']:.1f} ms, p90 {result['p90_ms']:.1f} ms over {len(samples)}")
    return result


async def burst(server: SynapseServer, bot_id: str, *, users: int, each: int, line: str) -> None:
    watchers = []
    for n in range(users):
        password = f"pw-burst-{uuid.uuid4().hex}"
        uid = server.register(localpart=f"burst{n}-{uuid.uuid4().hex[:6]}", password=password)
        watchers.append(Watcher(url=server.url, token=await login(server.url, uid, password)))
    room = await room_with(watchers[0], bot_id)
    for w in watchers[1:]:
        who = (await w.http.get("/account/whoami")).json()["user_id"]
        await watchers[0].http.post(f"/rooms/{room}/invite", json={"user_id": who})
        await w.http.post(f"/join/{room}", json={})
    observer = watchers[0]
    began = time.perf_counter()

    async def sender(w: Watcher, n: int) -> list[str]:
        return [await w.send(room, line.format(n=f"{n}-{i}")) for i in range(each)]

    asked = [eid for ids in await asyncio.gather(*(sender(w, n) for n, w in enumerate(watchers))) for eid in ids]
    end = time.monotonic() + 300
    while not all(a in observer.replies for a in asked) and time.monotonic() < end:
        await observer.read_room(room)  # /messages: a sync this busy would be a limited timeline
        await asyncio.sleep(0.2)
    took = time.perf_counter() - began
    lost = [a for a in asked if a not in observer.replies]
    twice = [a for a in asked if len(observer.replies.get(a, [])) > 1]
    print(
        f"     burst: {len(asked)} messages from {users} users, all answered in {took:.1f} s "
        f"({len(asked) / took:.0f}/s); lost {len(lost)}, answered twice {len(twice)}"
    )
    for w in watchers:
        await w.aclose()
    if lost or twice:
        raise SystemExit("burst: messages lost or answered twice")


async def main(args: argparse.Namespace) -> None:
    handler: Handler = echo
    if args.handler:
        module, _, name = args.handler.partition(":")
        handler = getattr(importlib.import_module(module), name)
    with tempfile.TemporaryDirectory(prefix="petstore-bench-matrix-") as tmp:
        server = SynapseServer.create(Path(tmp) / "synapse")
        print(f"synapse started in {server.start():.1f} s")
        try:
            await asyncio.wait_for(run(server, handler, args, Path(tmp)), timeout=BUDGET)
        finally:
            server.stop()


async def run(server: SynapseServer, handler: Handler, args: argparse.Namespace, tmp: Path) -> None:
    accounts: dict[str, tuple[str, str]] = {}
    for name in ("floor", "petbot", "asker"):
        password = f"pw-{name}-{uuid.uuid4().hex}"
        accounts[name] = (server.register(localpart=f"{name}-{uuid.uuid4().hex[:6]}", password=password), password)
    stop, floor_ready, bot_ready = asyncio.Event(), asyncio.Event(), asyncio.Event()
    asker = Watcher(url=server.url, token=await login(server.url, *accounts["asker"]))
    floor_room = await room_with(asker, accounts["floor"][0])
    bot_room = await room_with(asker, accounts["petbot"][0])
    transport = MatrixTransport(
        homeserver=server.url,
        user_id=accounts["petbot"][0],
        password=accounts["petbot"][1],
        rooms=[],
        state_dir=tmp / "bot",
        accept_invite=lambda _u, _direct: True,
    )
    tasks = [
        asyncio.create_task(
            floor_bot(
                url=server.url,
                user_id=accounts["floor"][0],
                password=accounts["floor"][1],
                stop=stop,
                ready=floor_ready,
            )
        ),
        asyncio.create_task(transport.run(handler, stop=stop, ready=bot_ready)),
    ]
    await floor_ready.wait()
    await bot_ready.wait()
    await asker.start()
    for room in (floor_room, bot_room):  # warm-up: the join, first replies
        await latency(asker, room, args.line.format(n="warmup"))
    samples: dict[str, list[float]] = {"floor": [], "transport": []}
    for start in range(0, args.messages, 10):
        for name, room in (("floor", floor_room), ("transport", bot_room)):
            for i in range(start, min(args.messages, start + 10)):
                samples[name].append(await latency(asker, room, args.line.format(n=i)))
    floor = summary("floor", samples["floor"])
    ours = summary("transport", samples["transport"])
    print(
        f"     ratio: {ours['median_ms'] / floor['median_ms']:.2f}x the floor (median), "
        f"{ours['p90_ms'] / floor['p90_ms']:.2f}x (p90)"
    )
    await burst(server, accounts["petbot"][0], users=args.burst_users, each=args.burst_each, line=args.line)
    await asker.aclose()
    await encrypted_and_side_by_side(
        server, floor_id=accounts["floor"][0], bot_id=accounts["petbot"][0], args=args, tmp=tmp
    )
    stop.set()
    await asyncio.gather(*tasks)


async def slow_or_echo(message: Incoming) -> Reply | None:
    """Echo, but ``!slow`` first waits SLOW seconds (a command waiting on a slow service)."""
    if message.text.startswith("!slow"):
        await asyncio.sleep(SLOW)
    return Reply(text=message.text, html=None)


async def person_latency(person: E2EPerson, room: str, text: str, *, bot_id: str) -> float:
    began = time.perf_counter()
    asked = await person.send(room, text)
    await person.answer(asked, sender=bot_id)
    return time.perf_counter() - began


async def encrypted_and_side_by_side(
    server: SynapseServer, *, floor_id: str, bot_id: str, args: argparse.Namespace, tmp: Path
) -> None:
    """The e2e person's figures (see the module docstring); the bot under test is a second transport."""
    password = f"pw-person-{uuid.uuid4().hex}"
    person_id = server.register(localpart=f"person-{uuid.uuid4().hex[:6]}", password=password)
    bot_password = f"pw-e2ebot-{uuid.uuid4().hex}"
    e2e_bot = server.register(localpart=f"e2ebot-{uuid.uuid4().hex[:6]}", password=bot_password)
    stop, ready = asyncio.Event(), asyncio.Event()
    transport = MatrixTransport(
        homeserver=server.url,
        user_id=e2e_bot,
        password=bot_password,
        rooms=[],
        state_dir=tmp / "e2ebot",
        accept_invite=lambda _u, _direct: True,
    )
    task = asyncio.create_task(transport.run(slow_or_echo, stop=stop, ready=ready))
    await ready.wait()
    person = await E2EPerson.login(base_url=server.url, user_id=person_id, password=password, store=tmp / "person")
    try:
        secret = await person.create_room(invite=[e2e_bot])
        plain = await person.create_plain_room(invite=[e2e_bot])
        other = await person.create_plain_room(invite=[e2e_bot])
        floor = await person.create_plain_room(invite=[floor_id])
        for room, who in ((secret, e2e_bot), (plain, e2e_bot), (other, e2e_bot), (floor, floor_id)):
            if room == secret:
                await person.knows_device_of(who, room)
            else:
                await person.until(lambda room=room, who=who: person.joined(who, room), what=f"{who} joined")
            await person_latency(person, room, "!echo warmup", bot_id=who)
        samples: dict[str, list[float]] = {"plain": [], "encrypted": []}
        for start in range(0, args.e2e_messages, 10):
            for name, room in (("plain", plain), ("encrypted", secret)):
                for i in range(start, min(args.e2e_messages, start + 10)):
                    samples[name].append(await person_latency(person, room, f"!echo {i}", bot_id=e2e_bot))
        base, enc = summary("unencrypted", samples["plain"]), summary("encrypted", samples["encrypted"])
        print(f"     ratio: encrypted {enc['median_ms'] / base['median_ms']:.2f}x unencrypted (median; target <= 1.5x)")
        floor_samples, waiting = [], []
        for i in range(args.side_messages):
            floor_samples.append(await person_latency(person, floor, f"!echo floor {i}", bot_id=floor_id))
            slow = await person.send(other, f"!slow {i}")  # room A waits SLOW s; room B asks meanwhile
            waiting.append(await person_latency(person, plain, f"!echo while {i}", bot_id=e2e_bot))
            await person.answer(slow, sender=e2e_bot)
        low, side = summary("echo floor", floor_samples), summary("room B", waiting)
        print(
            f"     ratio: room B while room A waits {SLOW:g} s: {side['median_ms'] / low['median_ms']:.2f}x "
            f"the echo floor (median; target <= 1.3x)"
        )
    finally:
        await person.aclose()
        stop.set()
        await task


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--burst-users", type=int, default=5)
    parser.add_argument("--burst-each", type=int, default=100)
    parser.add_argument("--handler", help="module:function, a petstore_bot.chat.Handler (default: echo)")
    parser.add_argument("--line", default="!echo {n}", help="the message text; {n} is numbered")
    parser.add_argument("--e2e-messages", type=int, default=30, help="per side: encrypted vs unencrypted room")
    parser.add_argument("--side-messages", type=int, default=10, help="room B asked while room A waits 2 s")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
