"""IRC transport on jaraco's ``irc`` library (``irc.client_aio``): channels and private messages on one server.

The library parses the server's lines (IRCv3 tags included), answers its PINGs and writes to an asyncio transport;
this module does the rest, the same way for every server:

- **Who is who.** ``identify = "account"``: a person is ``irc:ACCOUNT``, the services account the server vouches for
  (the IRCv3 ``account-tag`` on the message when the server offers it, else its WHOIS ``330`` line); with no
  account, ``irc:?NICK``, which no role list names, so no role beyond the default. ``identify = "nick"``:
  ``irc:NICK``, only sound on a server whose password keeps strangers out. Names are folded by the server's
  CASEMAPPING (``irc:alice`` for Alice): role lists write them in lower case. A channel is the room ``irc:#ops``,
  a private message the room ``irc:NICK``.
- **What is a command.** The prefix, ``nick: command`` (through the runtime's addressing), the command alone in a
  private message.
- **What goes out.** Replies and announcements are NOTICEs, which no bot answers (RFC 1459), so two bots never
  answer each other in a loop (Matrix's m.notice). Chat text is data: line breaks (CR, LF, CRLF) end a message;
  every other control character (colours, bold, CTCP's \\x01, NUL) is sent as its visible picture (``␂``), so no
  text can make a second command or format one. A line longer than the server relays (512 bytes, counted on the
  whole line it sends on, ``:nick!user@host NOTICE target :text``) is wrapped at a space (else cut on a UTF-8
  boundary) into several messages; lines are paced by a token bucket (``flood_burst``, ``flood_rate``), waiting,
  never dropped: lines still to send when the connection is lost go out after the reconnect.
- **Who, quickly.** Without account-tag, a WHOIS answer is kept ``ACCOUNT_TTL`` seconds for a sender in one of the
  bot's channels, forgotten when the bot sees them change nick, leave or quit there.
- **Staying up.** The server going away (a restart, a dead link: a PING unanswered) is waited out with backoff
  (0.5 s doubling to ``backoff_max``); the channels are joined again. A refused password stops the bot, in one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import ssl
import time
import traceback
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, cast

from irc.client_aio import AioReactor
from irc.connection import AioFactory

from petstore_api.errors import ConfigError
from petstore_bot.addressing import Address
from petstore_bot.chat import INTERNAL_ERROR, Handler, Incoming, Reply
from petstore_bot.irc_whois import Whois
from petstore_bot.replicas import Reach, Replicas
from petstore_bot.transport import Wiring, not_set

__all__ = ["IrcError", "IrcTransport", "escape", "message_lines", "transport"]

log = logging.getLogger("petstore_bot.irc")
PLATFORM = "irc"
#: The most bytes of one line on the wire, CR LF included (RFC 1459/2812; tags are outside it).
LIMIT = 512
#: What a person who has no services account is named (no role list names it): ``irc:?nick``.
UNIDENTIFIED = "?"
#: Seconds a WHOIS answer is trusted for a nick seen in one of the bot's channels (its NICK, PART, KICK or QUIT,
#: which the bot sees there, forgets it sooner): ngIRCd, for one, makes each WHOIS wait a second.
ACCOUNT_TTL = 60.0
#: Seconds a connection (TCP and TLS) may take before it is given up and tried again.
CONNECT_TIMEOUT = 30.0
#: Seconds the bot waits for the server to join it to its channels (or refuse) before it answers anyway.
JOIN_WAIT = 30.0
#: Seconds a replica that is not answering keeps a message in hand for the next lease holder.
HOLD = 600.0
_BREAK = re.compile(r"\r\n|\r|\n")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_FORMATTING = re.compile(
    r"\x03(?:\d{1,2}(?:,\d{1,2})?)?|\x04(?:[0-9a-fA-F]{6}(?:,[0-9a-fA-F]{6})?)?|[\x02\x0f\x11\x16\x1d\x1e\x1f]"
)
_RFC1459 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ[]\\~", "abcdefghijklmnopqrstuvwxyz{}|^")


class IrcError(RuntimeError):
    """What retrying cannot mend (a refused password, a ban), in one line."""


def escape(text: str) -> str:
    """``text`` with every control character but a tab shown as its picture (``\\x02`` as ``␂``): data, not IRC."""
    return _CONTROL.sub(lambda m: chr(0x2421) if m[0] == "\x7f" else chr(0x2400 + ord(m[0])), text)


def message_lines(text: str, *, budget: int) -> Iterator[str]:
    """The messages that carry ``text``: one per line of it (blank lines left out), escaped, each at most
    ``budget`` bytes of UTF-8, wrapped at the last space that fits (the space is the break, as servers strip a
    trailing one), else cut on a character boundary."""
    if budget < 4:  # room for any character
        raise ValueError(f"a line budget of {budget} bytes cannot carry text")
    for raw in _BREAK.split(text):
        data = escape(raw).encode("utf-8")
        while len(data) > budget:
            cut = budget
            while cut > 0 and data[cut] & 0xC0 == 0x80:  # not inside a character
                cut -= 1
            space = data.rfind(b" ", 0, cut + 1)
            cut, skip = (space, 1) if space >= budget // 2 else (cut, 0)
            yield data[:cut].decode("utf-8")
            data = data[cut + skip :]
        if data.strip():
            yield data.decode("utf-8")


def fold(name: str, *, casemapping: str = "rfc1459") -> str:
    """``name`` in lower case as the server compares names (CASEMAPPING ascii or rfc1459)."""
    return name.lower() if casemapping == "ascii" else name.translate(_RFC1459)


@dataclass(frozen=True, slots=True)
class _Event:
    """One line from the server, typed: the library's event at the seam."""

    type: str
    nick: str
    source: str
    target: str
    arguments: tuple[str, ...]
    tags: dict[str, str]

    @classmethod
    def of(cls, event: object) -> _Event:
        source = getattr(event, "source", None)
        tags = getattr(event, "tags", None) or []
        return cls(
            type=str(getattr(event, "type", "")),
            nick=str(getattr(source, "nick", "") or ""),
            source=str(source or ""),
            target=str(getattr(event, "target", "") or ""),
            arguments=tuple(str(a) for a in getattr(event, "arguments", None) or ()),
            tags={str(t["key"]): str(t["value"] or "") for t in tags if isinstance(t, dict)},
        )


class _Bucket:
    """A token bucket: ``burst`` lines at once, then ``rate`` a second."""

    def __init__(self, *, burst: int, rate: float) -> None:
        self._burst, self._rate = float(burst), rate
        self._tokens, self._at = float(burst), time.monotonic()

    def try_take(self) -> bool:
        """Takes a token if there is one now."""
        now = time.monotonic()
        self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
        self._at = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    async def wait(self) -> None:
        """Waits until there is a token (without taking it)."""
        if self._tokens < 1:
            await asyncio.sleep((1 - self._tokens) / self._rate)  # pacing to the server's flood limit


@dataclass
class _Line:
    """A message to send, and whether it went out (False: the bot stopped first)."""

    target: str
    text: str
    done: asyncio.Future[bool] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class _Connection(Protocol):
    """What this module uses of the library's ``AioConnection`` (it ships no types)."""

    real_nickname: str
    features: object

    async def connect(
        self, server: str, port: int, nickname: str, *, password: str | None, ircname: str, connect_factory: object
    ) -> object: ...
    def join(self, channel: str, key: str = "") -> None: ...
    def notice(self, target: str, text: str) -> None: ...
    def cap(self, subcommand: str, *args: str) -> None: ...
    def nick(self, newnick: str) -> None: ...
    def whois(self, targets: str) -> None: ...
    def ping(self, target: str) -> None: ...
    def is_connected(self) -> bool: ...
    def disconnect(self, message: str = "") -> None: ...


class IrcTransport:
    """The bot on one IRC server (see the module docstring)."""

    platform = PLATFORM

    def __init__(
        self,
        *,
        server: str,
        port: int,
        tls: bool,
        nick: str,
        channels: Sequence[str],
        identify: Literal["account", "nick"],
        addressing: Callable[[Sequence[str]], Address],
        password: str | None = None,
        replicas: Replicas | None = None,
        flood_burst: int = 5,
        flood_rate: float = 1.0,
        backoff_max: float = 60.0,
        idle: float = 90.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._server, self._port, self._password = server, port, password
        self._ssl = (ssl_context or ssl.create_default_context()) if tls else None
        self._wanted_nick, self._nick = nick, nick
        self._channels = [(c.partition(" ")[0], c.partition(" ")[2]) for c in channels]
        self._identify, self._addressing = identify, addressing
        self._addressed: tuple[tuple[str, ...], Address] | None = None
        self._replicas = replicas
        self._bucket = _Bucket(burst=flood_burst, rate=flood_rate)
        self._backoff_max, self._idle = backoff_max, idle
        self.reach = Reach()
        self._connection: _Connection | None = None  # while registered
        self._joining: set[str] = set()  # channels asked for and not yet joined (or refused)
        self._prefix = ""  # ":nick!user@host " as the server relays the bot's lines, once seen
        self._casemapping = "rfc1459"
        self._tags = False  # the server tags each message with its sender's account
        self._outbox: asyncio.Queue[_Line] = asyncio.Queue()
        self._whois: Whois | None = None  # while registered: the WHOIS questions in flight
        self._accounts: dict[str, tuple[str | None, float]] = {}  # folded nick: WHOIS's account, trusted until
        self._lanes: dict[tuple[str, str], tuple[asyncio.Lock, int]] = {}  # the lock, and how many hold or wait
        self._seen: dict[tuple[str, ...], int] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._registered, self._fatal, self._busy = False, cast("IrcError | None", None), False
        self._ended, self._heard = asyncio.Event(), 0.0
        self._ready: asyncio.Event | None = None
        self._handler: Handler | None = None
        self._stop = asyncio.Event()
        self._on: dict[str, Callable[[_Connection, _Event], None]] = {
            "welcome": self._welcome, "pubmsg": self._said, "privmsg": self._said, "cap": self._cap,
            "join": self._joined, "nick": self._renamed, "nicknameinuse": self._taken, "whoisaccount": self._whoised,
            "endofwhois": self._whoised, "passwdmismatch": self._refused,
            "yourebannedcreep": self._refused, "erroneusnickname": self._refused, "error": self._error,
            "kick": self._kicked, "part": self._left, "quit": self._left,
            "bannedfromchan": self._not_joined, "badchannelkey": self._not_joined,
            "inviteonlychan": self._not_joined, "channelisfull": self._not_joined, "nosuchchannel": self._not_joined,
            "toomanychannels": self._not_joined, "badchanmask": self._not_joined, "nochanmodes": self._not_joined,
            "featurelist": self._features,
        }  # fmt: skip

    def __repr__(self) -> str:
        return f"IrcTransport(server={self._server!r}, port={self._port}, nick={self._nick!r})"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self._nick, self._wanted_nick)))

    @property
    def can_post(self) -> bool:
        return self._connection is not None and self.reach.up

    def owns(self, room: str) -> bool:
        return room.startswith(f"{PLATFORM}:")

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        """Post ``reply`` in the channel or to the nick ``room`` names; False while not connected."""
        if not self.can_post or not self.owns(room):
            return False
        return await self._say(room.removeprefix(f"{PLATFORM}:"), reply.text)

    # -- the connection ------------------------------------------------------------------------------------

    async def run(self, handler: Handler, *, stop: asyncio.Event, ready: asyncio.Event | None = None) -> None:
        """Serves until ``stop``; reconnects with backoff; raises IrcError when the server refuses the bot.

        ``ready`` is set once the bot is registered and in its channels: messages sent after that are answered."""
        self._handler, self._stop, self._ready = handler, stop, ready
        sender = asyncio.create_task(self._send_all())
        attempt = 0
        try:
            while not stop.is_set():
                try:
                    registered = await self._session()
                except OSError as exc:
                    registered = False
                    log.warning("cannot reach %s:%d: %s", self._server, self._port, exc.strerror or exc)
                attempt = 0 if registered else attempt + 1
                delay = min(self._backoff_max, 0.5 * 2 ** min(attempt, 10))
                if not stop.is_set():
                    log.info("connecting again in %.1fs", delay)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), delay)
        finally:
            for task in (sender, *self._tasks):
                task.cancel()
            await asyncio.gather(sender, *self._tasks, return_exceptions=True)
            self.reach.set(up=False)
            while not self._outbox.empty():  # lines the bot stopped before: not sent, their senders told
                if not (done := self._outbox.get_nowait().done).done():
                    done.set_result(False)

    async def _session(self) -> bool:
        """One connection, until it is lost or the bot stops; whether it got registered. The library hands each
        line to :meth:`_line` as it reads it; this waits for the end, pinging a server quiet for ``idle`` seconds."""
        reactor = AioReactor(loop=asyncio.get_running_loop())
        for kind in (*self._on, "disconnect", "pong"):
            reactor.add_global_handler(kind, self._line)
        connection: _Connection = reactor.server()
        factory = AioFactory(ssl=self._ssl, server_hostname=self._server) if self._ssl else AioFactory()
        self._nick, self._tags, self._registered, self._fatal = self._wanted_nick, False, False, None
        self._ended, self._heard, self._prefix = asyncio.Event(), time.monotonic(), ""
        self._accounts.clear()
        connecting = connection.connect(
            self._server, self._port, self._nick, password=self._password, ircname="petstore bot",
            connect_factory=factory,
        )  # fmt: skip
        await asyncio.wait_for(connecting, CONNECT_TIMEOUT)  # TimeoutError is an OSError: tried again
        if self._identify == "account":
            connection.cap("REQ", "account-tag")
        try:
            await self._until_ended(connection)
        finally:
            self._connection, self._whois = None, None
            self.reach.set(up=False)
            if connection.is_connected():
                connection.disconnect("stopping" if self._stop.is_set() else "reconnecting")
        if self._fatal is not None:
            raise self._fatal
        return self._registered

    async def _until_ended(self, connection: _Connection) -> None:
        """Returns when the connection ended, the server stopped answering a PING, or the bot stops."""
        stopping = asyncio.ensure_future(self._stop.wait())
        ending = asyncio.ensure_future(self._ended.wait())
        try:
            pinged = False
            while not (self._stop.is_set() or self._ended.is_set()):
                await asyncio.wait({stopping, ending}, timeout=self._idle, return_when="FIRST_COMPLETED")
                quiet = time.monotonic() - self._heard >= self._idle
                if quiet and pinged:
                    log.warning("%s stopped answering", self._server)
                    return
                if quiet:
                    connection.ping(self._server)  # quiet for a while: is it still there?
                pinged = quiet
        finally:
            stopping.cancel()
            ending.cancel()

    def _line(self, connection: _Connection, raw: object) -> None:
        """One line from the server, as the library reads it."""
        event = _Event.of(raw)
        self._heard = time.monotonic()
        if event.type == "disconnect":
            log.warning("disconnected from %s", self._server)
            self._ended.set()
            return
        try:
            self._on.get(event.type, _ignore)(connection, event)
        except IrcError as exc:
            self._fatal = exc
            self._ended.set()

    def _welcome(self, connection: _Connection, _event: _Event) -> None:
        """Registered: join the channels; ready once in all of them."""
        self._registered = True
        self._nick = connection.real_nickname
        self._connection = connection
        self._whois = Whois(send=connection.whois, clock=time.monotonic)
        self._joining = {fold(channel, casemapping=self._casemapping) for channel, _ in self._channels}
        for channel, key in self._channels:
            connection.join(channel, key)
        asyncio.get_running_loop().call_later(JOIN_WAIT, self._not_all_joined, connection)
        self._maybe_ready()

    def _not_all_joined(self, connection: _Connection) -> None:
        """``JOIN_WAIT`` after the joins: a channel the server neither joined nor refused is given up on (logged)."""
        if self._connection is connection and self._joining:
            log.warning("no answer to joining %s: answering without it", ", ".join(sorted(self._joining)))
            self._joining.clear()
            self._maybe_ready()

    def _maybe_ready(self) -> None:
        if self._joining or self._connection is None or self.reach.up:
            return
        self.reach.set(up=True)
        log.info("ready: answering new messages as %s on %s:%d", self._nick, self._server, self._port)
        if self._ready is not None:
            self._ready.set()

    # -- lines from the server -----------------------------------------------------------------------------

    def _said(self, _connection: _Connection, event: _Event) -> None:
        task = asyncio.ensure_future(self._message(event, received=time.monotonic()))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _features(self, connection: _Connection, _event: _Event) -> None:
        """ISUPPORT (005, after the welcome): how the server compares names."""
        self._casemapping = str(getattr(connection.features, "casemapping", "rfc1459"))

    def _cap(self, connection: _Connection, event: _Event) -> None:
        if event.arguments[:1] in (("ACK",), ("NAK",)):
            self._tags = event.arguments[0] == "ACK" and "account-tag" in event.arguments[-1].split()
            connection.cap("END")

    def _joined(self, _connection: _Connection, event: _Event) -> None:
        if event.nick == self._nick:
            self._prefix = f":{event.source} "
            self._joining.discard(fold(event.target, casemapping=self._casemapping))
            self._maybe_ready()

    def _not_joined(self, _connection: _Connection, event: _Event) -> None:
        channel = event.arguments[0] if event.arguments else ""
        log.warning("could not join %s: %s", channel, " ".join(event.arguments[1:]))
        self._joining.discard(fold(channel, casemapping=self._casemapping))
        self._maybe_ready()

    def _left(self, _connection: _Connection, event: _Event) -> None:
        self._accounts.pop(fold(event.nick, casemapping=self._casemapping), None)

    def _kicked(self, _connection: _Connection, event: _Event) -> None:
        if event.arguments:
            self._accounts.pop(fold(event.arguments[0], casemapping=self._casemapping), None)
        if event.arguments and event.arguments[0] == self._nick:
            log.warning("kicked from %s by %s: %s", event.target, event.nick, " ".join(event.arguments[1:]))

    def _renamed(self, connection: _Connection, event: _Event) -> None:
        self._left(connection, event)
        if event.nick == self._nick:
            self._nick = event.target

    def _taken(self, connection: _Connection, _event: _Event) -> None:
        if self._connection is None:  # while registering: try another
            self._nick = self._nick[:29] + "_"
            connection.nick(self._nick)

    def _refused(self, _connection: _Connection, event: _Event) -> None:
        raise IrcError(f"{self._server} refused the bot: {' '.join(event.arguments[-1:])} ({event.type})")

    def _error(self, _connection: _Connection, event: _Event) -> None:
        """ERROR: the server closes the link; for a bad password (before registration) it always will."""
        text = " ".join((event.target, *event.arguments)).strip()
        if self._connection is None and "password" in text.lower():
            raise IrcError(f"{self._server} refused the bot: {text} (check the server password)")
        log.warning("%s: %s", self._server, text)

    def _whoised(self, _connection: _Connection, event: _Event) -> None:
        """A WHOIS line: ``330 NICK ACCOUNT`` gives the account, ``318 NICK`` ends the answer (a 401 before it,
        no such nick, leaves it without one)."""
        if self._whois is None or not event.arguments:
            return
        key = fold(event.arguments[0], casemapping=self._casemapping)
        if event.type == "endofwhois":
            self._whois.ended(key)
        elif len(event.arguments) > 1:
            self._whois.logged_in(key, event.arguments[1])

    # -- one message ---------------------------------------------------------------------------------------

    async def _message(self, event: _Event, *, received: float) -> None:
        """Answers one message if it is a command for the bot; each person's in a room in the order sent."""
        direct = event.type == "privmsg"
        text = _FORMATTING.sub("", event.arguments[0] if event.arguments else "")
        line = self._address()(text, direct=direct)
        if line is None or not event.nick:
            return
        to = event.nick if direct else event.target
        room = f"{PLATFORM}:{fold(to, casemapping=self._casemapping)}"
        event_id = self._event_id(room, event)
        async with self._lane((room, event.nick)):
            user = await self._person(event, received=received)
            incoming = Incoming(platform=PLATFORM, room=room, user=user, event_id=event_id, text=line)
            if self._replicas is None:
                await self._say(to, (await self._reply(incoming)).text)
                return
            await self._answer_once(incoming, self._replicas, to=to)

    def _address(self) -> Address:
        """The runtime's rule for commands, given the names the bot has now (asked again when its nick changed)."""
        if self._addressed is None or self._addressed[0] != self.names:
            self._addressed = (self.names, self._addressing(self.names))
        return self._addressed[1]

    @contextlib.asynccontextmanager
    async def _lane(self, key: tuple[str, str]) -> AsyncIterator[None]:
        """One person's messages in one room, one at a time in the order they came; forgotten when none waits."""
        lock, users = self._lanes.get(key, (asyncio.Lock(), 0))
        self._lanes[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._lanes[key]
            if users == 1:
                del self._lanes[key]
            else:
                self._lanes[key] = (lock, users - 1)

    async def _reply(self, incoming: Incoming) -> Reply:
        """The handler's reply (an empty one for none); its failures become INTERNAL_ERROR."""
        assert self._handler is not None
        try:
            return await self._handler(incoming) or Reply("")
        except Exception as exc:  # noqa: BLE001 -- the bot stays up; the person gets one line
            log.error("handler failed on %s: %s", incoming.event_id, "".join(traceback.format_exception(exc)))
            return Reply(INTERNAL_ERROR)

    async def _answer_once(self, incoming: Incoming, replicas: Replicas, *, to: str) -> None:
        """Answers ``incoming`` when this replica's turn comes (another answers it meanwhile: nothing)."""
        while True:  # again when the lease was lost while the command ran
            try:
                turn = await asyncio.wait_for(replicas.turn(incoming.event_id, stop=self._stop), HOLD)
            except TimeoutError:
                turn = False
            if not turn:
                return
            reply = await self._reply(incoming)
            if await replicas.may_answer(incoming.event_id):
                await self._say(to, reply.text)
                await replicas.answered(incoming.event_id)
                return

    def _event_id(self, room: str, event: _Event) -> str:
        """The server's ``msgid`` when it tags messages; else one every replica seeing the message derives alike:
        its room, sender, text, minute and how many alike came before it in that minute."""
        if "msgid" in event.tags:
            return f"{PLATFORM}:{event.tags['msgid']}"
        minute = str(int(time.time() // 60))
        key = (room, event.source, event.arguments[0] if event.arguments else "", minute)
        count = self._seen.get(key, 0)
        self._seen = {k: v for k, v in self._seen.items() if k[3] == minute}
        self._seen[key] = count + 1
        digest = hashlib.sha256("\0".join((*key, str(count))).encode("utf-8", "surrogatepass")).hexdigest()
        return f"{PLATFORM}:{digest[:32]}"

    async def _person(self, event: _Event, *, received: float) -> str:
        """The sender as the runtime names people (see the module docstring); ``received``: when the message came."""
        if self._identify == "nick":
            return f"{PLATFORM}:{fold(event.nick, casemapping=self._casemapping)}"
        account = event.tags.get("account") if self._tags else await self._account(event, received=received)
        if account and account != "*":
            return f"{PLATFORM}:{fold(account, casemapping=self._casemapping)}"
        return f"{PLATFORM}:{UNIDENTIFIED}{fold(event.nick, casemapping=self._casemapping)}"

    async def _account(self, event: _Event, *, received: float) -> str | None:
        """The account WHOIS says the sender is logged in to; kept a while for a sender in one of the bot's channels
        (the bot sees them leave or change nick there), asked each time for a private message."""
        key, now = fold(event.nick, casemapping=self._casemapping), time.monotonic()
        account, until = self._accounts.get(key, (None, 0.0))
        if until > now:
            return account
        if (whois := self._whois) is None:
            return None
        account = await whois.account(key, nick=event.nick, since=received)
        if event.type == "pubmsg" and whois is self._whois:
            self._accounts[key] = (account, now + ACCOUNT_TTL)
        return account

    # -- sending -------------------------------------------------------------------------------------------

    async def _say(self, target: str, text: str) -> bool:
        """Sends ``text`` to ``target`` (a channel or a nick), line by line, and waits until it went out; False when
        the bot stopped before all of it did."""
        budget = LIMIT - 2 - len(f"{self._prefix or self._guess_prefix()}NOTICE {target} :".encode())
        texts = list(message_lines(text, budget=budget))
        while texts and self._outbox.empty() and not self._busy and self._sent(target, texts[0]):
            texts.pop(0)  # nothing waits before it: sent at once
        lines = [_Line(target=target, text=line) for line in texts]
        for line in lines:
            self._outbox.put_nowait(line)
        return all(await asyncio.gather(*(line.done for line in lines)))

    def _sent(self, target: str, text: str) -> bool:
        """Sends one line now if the bot is connected and the bucket allows it; whether it did."""
        connection = self._connection
        if connection is None or not self.reach.up or not self._bucket.try_take():
            return False
        try:
            connection.notice(target, text)
        except Exception as exc:  # noqa: BLE001 -- the library refused the line: it is never sent
            log.error("could not send a line to %s: %s", target, exc)
        return True

    def _guess_prefix(self) -> str:
        """The longest ``:nick!user@host `` the server could relay the bot's lines with (a host of 63 bytes)."""
        return f":{self._nick}!~{self._nick[:10]}@{'x' * 63} "

    async def _send_all(self) -> None:
        """The one writer: each line paced by the bucket, held while the connection is down."""
        while True:
            line = await self._outbox.get()
            self._busy = True
            while not self._sent(line.target, line.text):
                await (self._bucket.wait() if self.can_post else self.reach.wait_up())
            self._busy = self._outbox.qsize() > 0
            if not line.done.done():
                line.done.set_result(True)


def _ignore(_connection: _Connection, _event: _Event) -> None:
    """A line this module does not act on (a PONG: the server is there)."""


def transport(wiring: Wiring) -> IrcTransport:
    """``[bot.irc]`` as a transport (the transport contract's factory); ConfigError in one line for what the config
    must change."""
    settings = wiring.bot.irc
    if settings.server is None:
        raise not_set("bot.irc", "server", wiring.config_where)
    return IrcTransport(
        server=settings.server,
        port=settings.port,
        tls=settings.tls,
        nick=settings.nick,
        channels=settings.channels,
        identify=settings.identify,
        addressing=wiring.addressing,
        password=_password(wiring),
        replicas=wiring.replicas,
        flood_burst=settings.flood_burst,
        flood_rate=settings.flood_rate,
    )


def _password(wiring: Wiring) -> str | None:
    """The server password: from the environment or ``password_file``, never the config file."""
    from .secret_files import one_secret

    settings = wiring.bot.irc
    from_env = any(name.upper() == "PETSTORE_BOT__IRC__PASSWORD" for name in os.environ)
    if settings.password is not None and not from_env:
        raise ConfigError(
            f"[bot.irc] password must not be in the config file ({wiring.config_where}): set "
            "PETSTORE_BOT__IRC__PASSWORD or password_file"
        )
    return one_secret(
        setting="[bot.irc] password", given=settings.password, path=settings.password_file, where=wiring.config_where
    )
