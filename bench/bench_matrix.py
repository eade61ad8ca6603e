"""Matrix reply latency: MatrixTransport with a handler vs a minimal plain-nio echo bot, on one real Synapse.

    .venv/bin/python bench/bench_matrix.py [--messages 50] [--burst-users 5] [--burst-each 100]
                                           [--handler module:function] [--e2e-only] [--e2e-messages 30]
                                           [--e2e-block 10] [--tree LABEL=DIR] [--profile-bot FILE]

Latency is "message sent to reply seen": a user PUTs a message, then long-polls /sync until the bot's reply to it
arrives; median and p90 over ``--messages`` per side, the sides alternating in rounds of 10 so drift hits both.
The floor bot is plain matrix-nio (no petstore code): login, sync loop, an m.notice threaded to the message.
Then the burst: ``--burst-users`` users send ``--burst-each`` messages each, all at once; every message must get
exactly one reply (none lost, none answered twice). ``--handler`` plugs another ``petstore_bot.chat.Handler``
(e.g. the bot core's command handler) in place of the echo; its messages are ``!echo N``-style lines.
Then two figures with a person on matrix-nio's e2e extra (``tests/matrix/e2e_person.py``), ``--e2e-messages``
each, with the bots in processes of their own (see :func:`encrypted_and_side_by_side`): the transport's reply
latency in an encrypted room against an unencrypted one (target <= 1.5x; ``--e2e-block`` messages in a row per
room), and room B's reply latency while a command in room A waits 2 s (a handler awaiting ``asyncio.sleep(2)``,
standing in for a service slowed to 2 s) against the echo floor bot's (target <= 1.3x). ``--tree LABEL=DIR`` times
another source tree's bot in the same encrypted rounds (``git archive --prefix=x/ REV | tar -x -C /tmp``);
``--profile-bot FILE`` writes the cProfile stats of the bot under test.
Everything runs on 127.0.0.1; Synapse is started and stopped by this script (by PID), within a time budget.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib
import json
import os
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
        self.encrypted: set[str] = set()  # the replies that came encrypted (m.room.encrypted)

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
                self._keep(event, self.replies)

    async def read_room(self, room: str) -> None:
        """All replies in ``room`` so far, read through /messages (replaces what sync collected)."""
        replies: dict[str, list[str]] = {}
        params: dict[str, str | int] = {"dir": "b", "limit": 1000}
        while True:
            page = (await self.http.get(f"/rooms/{room}/messages", params=params)).json()
            for event in page.get("chunk", []):
                self._keep(event, replies)
            if not page.get("chunk") or "end" not in page:
                break
            params["from"] = page["end"]
        self.replies = replies

    def _keep(self, event: dict[str, Any], replies: dict[str, list[str]]) -> None:
        """A reply (in a room encrypted or not: a relation is always in the clear) filed under what it answers."""
        asked = event.get("content", {}).get("m.relates_to", {}).get("m.in_reply_to", {}).get("event_id")
        if asked:
            replies.setdefault(asked, []).append(event["event_id"])
            if event.get("type") == "m.room.encrypted":
                self.encrypted.add(event["event_id"])

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
    if not args.e2e_only:
        await transport_and_burst(server, handler, args, tmp)
    await encrypted_and_side_by_side(server, args=args, tmp=tmp)


async def transport_and_burst(server: SynapseServer, handler: Handler, args: argparse.Namespace, tmp: Path) -> None:
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
    stop.set()
    await asyncio.gather(*tasks)


async def slow_or_echo(message: Incoming) -> Reply | None:
    """Echo, but ``!slow`` first waits SLOW seconds (a command waiting on a slow service)."""
    if message.text.startswith("!slow"):
        await asyncio.sleep(SLOW)
    return Reply(text=message.text, html=None)


class Child:
    """A bot in a process of its own (``--serve KIND``), so the person's client never shares its CPU or loop."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(
        cls, kind: str, options: dict[str, str], *, profile: str | None = None, tree: str | None = None
    ) -> Child:
        """Starts ``--serve kind`` (the petstore of ``tree`` first on the path, when given); ``options`` (with the
        password) go through stdin, never the command line."""
        argv = [sys.executable, __file__, "--serve", kind, *(["--profile-bot", profile] if profile else [])]
        env = {**os.environ, "PYTHONPATH": tree} if tree else None
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(options).encode() + b"\n")
        await process.stdin.drain()
        line = await asyncio.wait_for(process.stdout.readline(), timeout=120)
        if line.strip() != b"ready":
            raise RuntimeError(f"the {kind} bot did not start: {line!r}")
        return cls(process)

    async def stop(self) -> None:
        """SIGTERM by PID; it finishes what it has in hand and exits."""
        if self.process.returncode is None:
            self.process.terminate()
        await asyncio.wait_for(self.process.wait(), timeout=60)


async def serve(kind: str, *, profile: str | None) -> None:
    """The child side of :class:`Child`: one bot until SIGTERM, "ready" on stdout once it answers."""
    options = json.loads(sys.stdin.readline())
    stop, ready = asyncio.Event(), asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    if kind == "floor":
        task = asyncio.create_task(floor_bot(**options, stop=stop, ready=ready))
    else:
        transport = MatrixTransport(
            homeserver=options["url"],
            user_id=options["user_id"],
            password=options["password"],
            rooms=[],
            state_dir=Path(options["state_dir"]),
            accept_invite=lambda _u, _direct: True,
        )
        task = asyncio.create_task(transport.run(slow_or_echo, stop=stop, ready=ready))
    await ready.wait()
    print("ready", flush=True)
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        profiler.enable()
    await task
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)


async def observed(person: E2EPerson, observer: Watcher, room: str, text: str) -> float:
    """Sent by the person's client (encrypted where the room is), the reply seen by the observer's /sync."""
    began = time.perf_counter()
    asked = await person.send(room, text)
    await observer.until(lambda: asked in observer.replies, deadline=60)
    return time.perf_counter() - began


async def encrypted_and_side_by_side(server: SynapseServer, *, args: argparse.Namespace, tmp: Path) -> None:
    """The e2e person's figures (see the module docstring).

    Each bot runs in a process of its own: the bot under test, the echo floor bot, and one more bot per ``--tree``
    (another source tree's petstore, timed in the same rounds). The person sends with matrix-nio's e2e client (it
    encrypts in an encrypted room); the replies are seen by an observer: the same person's second device, a plain
    /sync long-poll with no keys (no bot shares a room key with it, and the relation of an encrypted reply is in the
    clear), so a figure is the bot's round trip and not the test client's decryption or store writes. The person's
    client stops syncing while timing and, after it, must decrypt the bot's reply (every reply in an encrypted
    room is checked to be encrypted).
    """
    person_id, password = register_bench(server, "person")
    floor_id, floor_password = register_bench(server, "echo")
    bots: list[tuple[str, str, Child]] = []  # label, user id, process
    for label, tree in [("this tree", None), *(t.split("=", 1) for t in args.tree)]:
        bot_id, bot_password = register_bench(server, "e2ebot")
        options = {"url": server.url, "user_id": bot_id, "password": bot_password, "state_dir": str(tmp / bot_id)}
        bots.append((label, bot_id, await Child.start("transport", options, profile=args.profile_bot, tree=tree)))
    floor_child = await Child.start("floor", {"url": server.url, "user_id": floor_id, "password": floor_password})
    person = await E2EPerson.login(base_url=server.url, user_id=person_id, password=password, store=tmp / "person")
    observer = Watcher(url=server.url, token=await login(server.url, person_id, password))
    try:
        rooms: dict[str, tuple[str, str]] = {}  # label -> (unencrypted room, encrypted room)
        answering: dict[str, str] = {}  # room -> the bot in it
        for label, bot_id, _ in bots:
            rooms[label] = (await person.create_plain_room(invite=[bot_id]), await person.create_room(invite=[bot_id]))
            answering.update(dict.fromkeys(rooms[label], bot_id))
        bot_id = bots[0][1]
        other = await person.create_plain_room(invite=[bot_id])
        floor = await person.create_plain_room(invite=[floor_id])
        answering.update({other: bot_id, floor: floor_id})
        await observer.start()
        encrypted = {secret for _, secret in rooms.values()}
        for room, who in answering.items():
            if room in encrypted:
                await person.knows_device_of(who, room)
            else:
                await person.until(lambda room=room, who=who: person.joined(who, room), what=f"{who} joined")
            await observed(person, observer, room, "!echo warmup")
        await person.pause()
        samples: dict[tuple[str, str], list[float]] = {
            (label, kind): [] for label in rooms for kind in ("plain", "enc")
        }
        for start in range(0, args.e2e_messages, args.e2e_block):
            for label, (plain, secret) in rooms.items():
                for kind, room in (("plain", plain), ("enc", secret)):
                    for i in range(start, min(args.e2e_messages, start + args.e2e_block)):
                        samples[label, kind].append(await observed(person, observer, room, f"!echo {i}"))
        for label in rooms:
            print(f"  {label}:")
            base, enc = summary("unencrypted", samples[label, "plain"]), summary("encrypted", samples[label, "enc"])
            print(
                f"     ratio: encrypted {enc['median_ms'] / base['median_ms']:.2f}x unencrypted (median; target <= 1.5x)"
            )
        plain = rooms["this tree"][0]
        floor_samples, waiting = [], []
        for i in range(args.side_messages):
            floor_samples.append(await observed(person, observer, floor, f"!echo floor {i}"))
            slow = await person.send(other, f"!slow {i}")  # room A waits SLOW s; room B asks meanwhile
            waiting.append(await observed(person, observer, plain, f"!echo while {i}"))
            await observer.until(lambda slow=slow: slow in observer.replies, deadline=60)
        low, side = summary("echo floor", floor_samples), summary("room B", waiting)
        print(
            f"     ratio: room B while room A waits {SLOW:g} s: {side['median_ms'] / low['median_ms']:.2f}x "
            f"the echo floor (median; target <= 1.3x)"
        )
        for secret in encrypted:
            await encrypted_replies_read(person, observer, secret, bot_id=answering[secret])
    finally:
        await observer.aclose()
        await person.aclose()
        for _, _, child in bots:
            await child.stop()
        await floor_child.stop()


def register_bench(server: SynapseServer, name: str) -> tuple[str, str]:
    password = f"pw-{name}-{uuid.uuid4().hex}"
    return server.register(localpart=f"{name}-{uuid.uuid4().hex[:6]}", password=password), password


async def encrypted_replies_read(person: E2EPerson, observer: Watcher, room: str, *, bot_id: str) -> None:
    """Every reply in the encrypted room was encrypted, and the person's client decrypts the bot's reply."""
    await observer.read_room(room)
    clear = [reply for replies in observer.replies.values() for reply in replies if reply not in observer.encrypted]
    if clear:
        raise SystemExit(f"{len(clear)} replies in the encrypted room were not encrypted")
    person.resume()
    asked = await person.send(room, "!echo read")
    try:
        reply = await person.answer(asked, sender=bot_id)
    except TimeoutError:
        raise SystemExit(f"{bot_id}'s encrypted reply in {room} was not decrypted within 60 s") from None
    await person.pause()
    if not getattr(reply, "decrypted", False) or reply.body != "!echo read":
        raise SystemExit(f"the person could not read the bot's encrypted reply: {reply}")
    print("     check: every reply in the encrypted room encrypted; the person's client decrypts them")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--burst-users", type=int, default=5)
    parser.add_argument("--burst-each", type=int, default=100)
    parser.add_argument("--handler", help="module:function, a petstore_bot.chat.Handler (default: echo)")
    parser.add_argument("--line", default="!echo {n}", help="the message text; {n} is numbered")
    parser.add_argument("--e2e-messages", type=int, default=30, help="per side: encrypted vs unencrypted room")
    parser.add_argument("--side-messages", type=int, default=10, help="room B asked while room A waits 2 s")
    parser.add_argument("--e2e-block", type=int, default=10, help="e2e messages in a row in one room (default 10)")
    parser.add_argument(
        "--tree", action="append", default=[], metavar="LABEL=DIR", help="another tree's bot, e2e rounds (repeatable)"
    )
    parser.add_argument("--profile-bot", metavar="FILE", help="cProfile the e2e bot's process, stats to FILE")
    parser.add_argument("--e2e-only", action="store_true", help="only the figures with the e2e person")
    parser.add_argument("--serve", choices=("transport", "floor"), help=argparse.SUPPRESS)  # a Child's side
    return parser.parse_args(argv)


if __name__ == "__main__":
    parsed = parse()
    asyncio.run(serve(parsed.serve, profile=parsed.profile_bot) if parsed.serve else main(parsed))
