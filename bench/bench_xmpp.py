"""XMPP reply latency: XmppTransport with an echo handler vs a minimal plain-slixmpp echo bot, on one real Prosody.

    .venv/bin/python bench/bench_xmpp.py [--messages 100] [--round 10]

Latency is "message sent to reply seen": a person writes in a room and waits for the bot's groupchat reply; median
and p90 over ``--messages`` per side, the sides alternating in rounds of ``--round`` so drift hits all of them.
Each bot has a room of its own, the person is in all three; every client runs in this one process on one event
loop, as Matrix's bench does. The sides:
- ``floor``: plain slixmpp (no petstore code): join the room, answer every live ``!`` message with its body;
- ``transport``: XmppTransport with an echo handler (``!echo N``);
- ``bot``: ``!get 1`` answered by the real bot: XmppTransport -> BotCore (roles, rate limit off, a session per
  (room, person), policy, audit) -> the command layer -> the in-process sandbox (SQLite), built by the runtime's
  ``build_core``.
Target: the transport's and the bot's medians <= 1.3x the floor's. Prosody runs on 127.0.0.1 without Nagle's
algorithm, started and stopped by PID.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

from slixmpp import JID, ClientXMPP, Message

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from xmpp.conftest import addressed_by  # noqa: E402
from xmpp.person import Person  # noqa: E402
from xmpp.prosody_server import MUC, ProsodyServer  # noqa: E402

from petstore_bot.assembly import build_core, open_state  # noqa: E402
from petstore_bot.chat import Incoming, Reply  # noqa: E402
from petstore_bot.xmpp import Account, XmppTransport  # noqa: E402
from petstore_cli.bot import compose_bot  # noqa: E402
from petstore_cli.settings.load import load_settings  # noqa: E402

TARGET = 1.3


async def echo(message: Incoming) -> Reply | None:
    return Reply(text=message.text)


async def floor_bot(*, server: ProsodyServer, jid: str, password: str, room: str) -> ClientXMPP:
    """The floor: the least a slixmpp bot does to answer in a room."""
    client = ClientXMPP(jid, password, plugin_config={"feature_mechanisms": {"unencrypted_scram": True}})
    client.enable_starttls, client.enable_direct_tls, client.enable_plaintext = False, False, True
    client.register_plugin("xep_0045")

    def answer(msg: Message) -> None:
        sender = JID(msg["from"])
        if sender.resource != "floor" and msg["body"].startswith("!") and msg.xml.find("{urn:xmpp:delay}delay") is None:
            client.send_message(mto=JID(sender.bare), mbody=msg["body"], mtype="groupchat")

    client.add_event_handler("groupchat_message", answer)
    started = asyncio.ensure_future(client.wait_until("session_start", 30))
    client.connect("127.0.0.1", server.port)
    await started
    client.send_presence()
    await client.plugin["xep_0045"].join_muc_wait(JID(room), "floor", maxstanzas=0, timeout=30)
    return client


async def round_trip(person: Person, room: str, nick: str, text: str) -> float:
    seen = len(person.received)
    began = time.perf_counter()
    person.say(room, text)
    await person.expect(lambda m: str(m["from"]) == f"{room}/{nick}" and bool(m["body"]), after=seen)
    return time.perf_counter() - began


@contextlib.asynccontextmanager
async def real_bot(server: ProsodyServer, *, jid: str, password: str, room: str, person: str) -> AsyncIterator[None]:
    """The real bot core on the sandbox behind an XmppTransport, as the runtime builds it."""
    with tempfile.TemporaryDirectory(prefix="bench-xmpp-bot-") as name:
        tmp = Path(name)
        config = tmp / "config.toml"
        config.write_text(
            f'[sandbox]\ndata_dir = "{tmp / "sandbox"}"\n[bot]\naudit_log = "{tmp / "audit.ndjson"}"\n'
            f'rate_limit = "off"\n[bot.roles]\noperators = ["xmpp:{person}"]\n',
            encoding="utf-8",
        )
        settings = load_settings(config_path=config).settings
        composition = compose_bot(settings)
        state = open_state(settings.bot, state_dir=tmp / "state", audit=composition.audit)
        core = build_core(composition, settings.bot, platform="xmpp", names=["petbot"], state=state)
        transport = XmppTransport(
            account=Account(jid=jid, password=password, server="127.0.0.1", port=server.port, tls="off"),
            rooms=[room],
            nick="petbot",
            addressing=lambda names: replace(core.addressing, names=tuple(names)).line,
        )
        stop = asyncio.Event()
        running = asyncio.create_task(transport.run(core.handle, stop=stop))
        assert transport.reach is not None
        try:
            await asyncio.wait_for(transport.reach.wait_up(), timeout=60)
            yield
        finally:
            stop.set()
            await running
            await composition.aclose()
            state.close()


async def bench(server: ProsodyServer, *, messages: int, per_round: int) -> dict[str, list[float]]:
    def account(name: str) -> tuple[str, str]:
        password = secrets.token_hex(12)
        return server.register(f"{name}-{secrets.token_hex(3)}", password), password

    (bot_jid, bot_pw), (floor_jid, floor_pw), (real_jid, real_pw) = account("petbot"), account("floor"), account("real")
    person_jid, person_pw = account("p")
    room_a, room_b, room_c = (f"{side}-{secrets.token_hex(3)}@{MUC}" for side in "abc")
    person = await Person.online(server, person_jid, person_pw)
    for room in (room_a, room_b, room_c):
        await person.join(room, "person")
    stop = asyncio.Event()
    transport = XmppTransport(
        account=Account(jid=bot_jid, password=bot_pw, server="127.0.0.1", port=server.port, tls="off"),
        rooms=[room_a],
        nick="petbot",
        addressing=addressed_by,
    )
    assert transport.reach is not None
    running = asyncio.create_task(transport.run(echo, stop=stop))
    await asyncio.wait_for(transport.reach.wait_up(), timeout=60)
    floor = await floor_bot(server=server, jid=floor_jid, password=floor_pw, room=room_b)
    sides = {
        "floor": (room_b, "floor", "!echo {n}"),
        "transport": (room_a, "petbot", "!echo {n}"),
        "bot": (room_c, "petbot", "!get 1"),
    }
    times: dict[str, list[float]] = {side: [] for side in sides}
    try:
        async with real_bot(server, jid=real_jid, password=real_pw, room=room_c, person=person_jid):
            for warm in range(5):
                for room, nick, text in sides.values():
                    await round_trip(person, room, nick, text.format(n=f"warm{warm}"))
            for start in range(0, messages, per_round):
                for side, (room, nick, text) in sides.items():
                    for n in range(start, min(start + per_round, messages)):
                        times[side].append(await round_trip(person, room, nick, text.format(n=n)))
    finally:
        stop.set()
        await running
        await floor.disconnect(wait=2.0)
        await person.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--round", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-xmpp-") as tmp:
        server = ProsodyServer.create(Path(tmp))
        server.start()
        try:
            times = asyncio.run(bench(server, messages=args.messages, per_round=args.round))
        finally:
            server.stop()
    medians = {side: statistics.median(values) for side, values in times.items()}
    for side, values in times.items():
        p90 = statistics.quantiles(values, n=10)[-1]
        print(f"{side:9s}  median {medians[side] * 1000:6.2f} ms  p90 {p90 * 1000:6.2f} ms  (n={len(values)})")
    met = True
    for side in ("transport", "bot"):
        ratio = medians[side] / medians["floor"]
        met = met and ratio <= TARGET
        print(
            f"ratio {side}/floor (median): {ratio:.2f}x  target <= {TARGET}x: {'met' if ratio <= TARGET else 'MISSED'}"
        )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
