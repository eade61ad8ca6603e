"""IRC reply latency: IrcTransport with an echo handler vs a minimal echo bot on jaraco's irc client, on one ngIRCd.

    .venv/bin/python bench/bench_irc.py [--messages 60] [--identify nick|account]

Latency is "message sent to reply seen" by a person (jaraco's client) in a channel of each bot; median and
p90 over ``--messages`` per side, the sides alternating in rounds of 10 so drift hits both. The person sends one
message every 0.4 s (ngIRCd reads at most 3 commands a second from a client and delays the rest: faster, the
figure would be the server's throttle). The floor bot is the library's client alone: each PRIVMSG to it is sent
back at once, as a NOTICE as the transport's replies are. The transport runs with ``identify`` as given (``account``, the default, asks WHOIS of each sender on
ngIRCd, which tags no message with its account: one more round trip). Prints the ratio (target <= 1.3x).
Everything runs on 127.0.0.1; ngIRCd is started and stopped by this script, by PID.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from irc.client_aio import AioReactor  # noqa: E402
from ircd.ngircd_server import NgircdServer  # noqa: E402
from ircd.person import Person  # noqa: E402

from petstore_bot.addressing import Addressing  # noqa: E402
from petstore_bot.chat import Incoming, Reply  # noqa: E402
from petstore_bot.irc import IrcTransport  # noqa: E402

CHANNELS = {"petbot": "#bench-petbot", "echobot": "#bench-echo"}
PACE = 0.4


async def echo(message: Incoming) -> Reply | None:
    return Reply(message.text)


async def floor_bot(server: NgircdServer, nick: str) -> Any:
    """The library's client alone: joins, and sends every channel message back at once."""
    reactor = AioReactor(loop=asyncio.get_running_loop())
    connection = reactor.server()
    joined = asyncio.Event()
    reactor.add_global_handler("pubmsg", lambda c, e: c.notice(e.target, e.arguments[0]))
    reactor.add_global_handler("welcome", lambda c, _e: c.join(CHANNELS[nick]))
    reactor.add_global_handler("join", lambda _c, e: joined.set() if e.source.nick == nick else None)
    await connection.connect("127.0.0.1", server.port, nick, password=server.password)
    await asyncio.wait_for(joined.wait(), 30)
    return connection


async def one(person: Person, bot: str, n: int) -> float:
    """Seconds from sending ``!echo n`` to seeing the bot's reply."""
    text = f"!echo {n}"
    since = len(person.said)
    started = time.perf_counter()
    person.say(CHANNELS[bot], text)
    await person.until(lambda: any(s.nick == bot and s.text == text for s in person.said[since:]), what=text)
    return time.perf_counter() - started


async def measure(server: NgircdServer, *, messages: int, identify: str) -> dict[str, list[float]]:
    stop = asyncio.Event()
    ready = asyncio.Event()
    bot = IrcTransport(
        server="127.0.0.1", port=server.port, tls=False, nick="petbot", channels=[CHANNELS["petbot"]], identify=identify,  # type: ignore[arg-type]
        addressing=lambda names: Addressing(prefix="!", names=tuple(names)).line, password=server.password,
        flood_burst=5, flood_rate=3.0,
    )  # fmt: skip
    task = asyncio.create_task(bot.run(echo, stop=stop, ready=ready))
    await asyncio.wait_for(ready.wait(), 30)
    floor = await floor_bot(server, "echobot")
    person = await Person.connect(server, "person")
    for channel in CHANNELS.values():
        await person.join(channel)
    times: dict[str, list[float]] = {"petbot": [], "echobot": []}
    try:
        for n in range(messages // 10):
            for nick in times if n % 2 == 0 else reversed(times):
                for i in range(10):
                    times[nick].append(await one(person, nick, n * 100 + i))
                    await asyncio.sleep(PACE)  # under ngIRCd's 3 commands a second
    finally:
        person.close()
        floor.disconnect("bye")
        stop.set()
        await task
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=60)
    parser.add_argument("--identify", choices=["nick", "account"], default="account")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        server = NgircdServer.create(Path(root), password="bench-password").start()
        try:
            times = asyncio.run(measure(server, messages=args.messages, identify=args.identify))
        finally:
            server.stop()
    for nick, values in times.items():
        values.sort()
        print(
            f"{nick:8} n={len(values)} median {statistics.median(values) * 1000:.2f} ms  "
            f"p90 {values[int(len(values) * 0.9)] * 1000:.2f} ms"
        )
    ratio = statistics.median(times["petbot"]) / statistics.median(times["echobot"])
    print(f"ratio (petbot / echo bot, median, identify={args.identify}): {ratio:.2f}x (target <= 1.3x)")


if __name__ == "__main__":
    main()
