"""The bot's reply latency with the real command handler vs a minimal echo bot, on one real Synapse; and a burst.

    .venv/bin/python bench/bench_bot.py [--messages 60] [--burst-users 5] [--burst-each 100]

Latency is "message sent to reply seen" (a user PUTs a message, then long-polls /sync until the reply arrives),
median and p90 per side. The sides alternate in rounds of 10 messages so drift on a shared machine hits all of them:
- ``floor``: the minimal echo bot of bench_matrix.py (plain matrix-nio, no petstore code);
- ``bot list``: ``!list --limit 5`` and ``bot get``: ``!get 1`` answered by the real bot: MatrixTransport ->
  BotCore (roles, rate limit, a session per (room, user), policy, audit) -> the command layer -> the client ->
  the in-process sandbox (SQLite), with the reply rendered as plain text and HTML; built by the same
  ``build_core`` as ``petstore bot matrix``.
Then the burst: ``--burst-users`` users send ``--burst-each`` ``!list --limit 5`` each, all at once, in one room;
every message must get exactly one reply (none lost, none answered twice). The bench turns the per-user rate limit
off (``rate_limit = "off"``): with the default 10/10s, 100 commands from one person are mostly dropped by design.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from bench_matrix import Watcher, burst, floor_bot, latency, login, room_with, summary  # noqa: E402
from matrix.synapse_server import SynapseServer  # noqa: E402

from petstore_bot.assembly import build_core  # noqa: E402
from petstore_bot.chat import Incoming, Reply  # noqa: E402
from petstore_bot.matrix import MatrixTransport  # noqa: E402
from petstore_cli.bot import compose_bot  # noqa: E402
from petstore_cli.settings.load import load_settings  # noqa: E402

BUDGET = 900.0
LINES = {"bot list": "!list --limit 5", "bot get": "!get 1"}


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="petstore-bench-bot-") as tmp:
        server = SynapseServer.create(Path(tmp) / "synapse")
        print(f"synapse started in {server.start():.1f} s")
        try:
            await asyncio.wait_for(run(server, args, Path(tmp)), timeout=BUDGET)
        finally:
            server.stop()


async def run(server: SynapseServer, args: argparse.Namespace, tmp: Path) -> None:
    accounts: dict[str, tuple[str, str]] = {}
    for name in ("floor", "petbot", "asker"):
        password = f"pw-{name}-{uuid.uuid4().hex}"
        accounts[name] = (server.register(localpart=f"{name}-{uuid.uuid4().hex[:6]}", password=password), password)
    config = tmp / "petstore.toml"
    config.write_text(
        f'[sandbox]\ndata_dir = "{tmp / "sandbox"}"\n[bot]\nrate_limit = "off"\n'
        f'default_role = "viewer"\naudit_log = "{tmp / "audit.ndjson"}"\n',
        encoding="utf-8",
    )
    settings = load_settings(config_path=config).settings
    composition = compose_bot(settings, sandbox_reset=True)
    core = build_core(composition, settings.bot, platform="matrix")
    handled: dict[str, list[float]] = {line: [] for line in LINES.values()}

    async def timed(message: Incoming) -> Reply | None:
        """The real handler, timed: what the bot itself adds to a reply (parse, policy, service call, render)."""
        began = time.perf_counter()
        try:
            return await core.handle(message)
        finally:
            handled.setdefault(message.text, []).append(time.perf_counter() - began)

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
        address=core.addressing.line,
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
        asyncio.create_task(transport.run(timed, stop=stop, ready=bot_ready)),
    ]
    await floor_ready.wait()
    await bot_ready.wait()
    await asker.start()
    for room, line in ((floor_room, "!warmup"), (bot_room, LINES["bot list"]), (bot_room, LINES["bot get"])):
        await latency(asker, room, line)  # the joins, the first session, the first page of the sandbox
    sides = {"floor": (floor_room, LINES["bot list"]), **{name: (bot_room, line) for name, line in LINES.items()}}
    samples: dict[str, list[float]] = {name: [] for name in sides}
    for start in range(0, args.messages, 10):
        for name, (room, line) in sides.items():
            for _ in range(start, min(args.messages, start + 10)):
                samples[name].append(await latency(asker, room, line))
    floor = summary("floor", samples["floor"])
    for name in LINES:
        ours = summary(name, samples[name])
        print(
            f"{'':>10}  {ours['median_ms'] / floor['median_ms']:.2f}x the floor (median), "
            f"{ours['p90_ms'] / floor['p90_ms']:.2f}x (p90)"
        )
    for name, line in LINES.items():  # inside the bot: BotCore.handle alone (the warm-up left out)
        summary(f"{name.removeprefix('bot ')} handler", handled[line][1:])
    await burst(server, accounts["petbot"][0], users=args.burst_users, each=args.burst_each, line=LINES["bot list"])
    stop.set()
    await asyncio.gather(*tasks)
    await asker.aclose()
    await composition.aclose()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--messages", type=int, default=60)
    parser.add_argument("--burst-users", type=int, default=5)
    parser.add_argument("--burst-each", type=int, default=100)
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
