"""XMPP transport on slixmpp: multi-user chat rooms (MUC) and direct messages, on any XMPP server.

:class:`XmppTransport` connects as the bot's account (``[bot.xmpp] jid``), joins ``rooms`` under ``nick`` and hands
every message addressed to the bot (``wiring.addressing``: the prefix, ``nick: command``, the command alone in a
direct message) to the runtime's handler; the reply goes back as a plain body (XHTML-IM is deprecated: text from the
service is never markup here, and slixmpp escapes it as XML character data). One slixmpp client per connection:
when the server goes away the transport connects again with backoff (1 s doubling to ``backoff_max``) and joins its
rooms again (a room it could not join, or was put out of, is tried again the same way); refused credentials end
:meth:`XmppTransport.run` with :class:`XmppError`, in one line.

Who someone is (``xmpp:alice@example.org``) is what the server proves: in a direct message the bare JID the sender's
server authenticated; in a room the occupant's real JID, which the room shows the bot when it is non-anonymous (or
the bot moderates it). In a semi-anonymous room the bot sees only a nick anyone may take: such a message is not run,
and the asker is told, in one line, to write directly. Rooms are ``xmpp:room@conference.example.org``; a direct
chat's room is the person's bare JID, ``xmpp:alice@example.org``.

Ignored: the room's history replayed on join (it is not asked for, and a message carrying a delay stamp in a room is
history), the bot's own messages (its nick in the room, its own JID), messages without a body, errors, and private
messages through a room (their sender is a nick, not an account). With ``roles_from_affiliations`` the affiliations
the rooms announce in presence become levels in ``levels`` (owner: admin, admin: operator), the shape Matrix power
levels take in :class:`~petstore_bot.roles.RoleBook`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import traceback
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from slixmpp import JID, ClientXMPP, Message, Presence
from slixmpp.exceptions import IqError, IqTimeout, PresenceError

from petstore_bot.addressing import Address
from petstore_bot.chat import INTERNAL_ERROR, Handler, Incoming, Reply
from petstore_bot.replicas import Reach, Replicas
from petstore_bot.roles import ADMIN_LEVEL, OPERATOR_LEVEL, PowerLevels
from petstore_bot.transport import TransportError, Wiring, not_set

__all__ = ["ANONYMOUS", "PLATFORM", "TOO_LONG", "Account", "XmppError", "XmppTransport", "identity", "transport"]

log = logging.getLogger("petstore_bot.xmpp")
PLATFORM = "xmpp"
TLS = Literal["starttls", "direct", "off"]
TOO_LONG = "That message is too long for a command (over {limit} bytes)."
ANONYMOUS = (
    "This room does not show me who its occupants are, so I cannot tell who you are: write to me directly "
    "({jid}), or make the room non-anonymous."
)
_MUC_USER = "{http://jabber.org/protocol/muc#user}x"
_DELAY = "{urn:xmpp:delay}delay"
_LEVELS = {"owner": ADMIN_LEVEL, "admin": OPERATOR_LEVEL}


class XmppError(TransportError):
    """The server refuses the bot for good (credentials, no safe way to log in): retrying cannot mend it."""


def identity(jid: JID | str) -> str:
    """A person's or a room's identity as the runtime keeps it: ``xmpp:`` and the bare JID."""
    return f"{PLATFORM}:{JID(jid).bare}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Account:
    """The bot's account and how to reach its server (``server``/``port`` None: the JID's domain, as DNS says)."""

    jid: str
    password: str
    server: str | None = None
    port: int | None = None
    tls: TLS = "starttls"
    #: The certificate authorities to trust (PEM) instead of the system's.
    ca_file: Path | None = None

    def __repr__(self) -> str:
        return f"Account(jid={self.jid!r}, server={self.server!r}, port={self.port!r}, tls={self.tls!r})"


class XmppTransport:
    """The bot on one XMPP account (see the module docstring); a :class:`~petstore_bot.transport.Transport`."""

    platform = PLATFORM
    #: Commands start with ``[bot] prefix``: XMPP has no command syntax of its own.
    prefix: str | None = None

    def __init__(
        self,
        *,
        account: Account,
        rooms: Sequence[str],
        nick: str,
        addressing: Callable[[Sequence[str]], Address],
        replicas: Replicas | None = None,
        levels: PowerLevels | None = None,
        max_bytes: int = 4096,
        backoff_max: float = 30.0,
        ping_every: float = 60.0,
        ping_timeout: float = 20.0,
    ) -> None:
        self._account, self._rooms, self._nick = account, [JID(room).bare for room in rooms], nick
        self._address = addressing(self.names)
        self._replicas, self._levels = replicas, levels
        self._max_bytes, self._backoff_max = max_bytes, backoff_max
        self._ping_every, self._ping_timeout = ping_every, ping_timeout
        #: Up while connected with the rooms joined: the gate of the lease.
        self.reach: Reach | None = Reach()
        self._client: ClientXMPP | None = None
        self._joined: dict[str, str] = {}  # room's bare JID -> the bot's nick there
        self._affiliations: dict[str, dict[str, int]] = {}
        self._chains: dict[tuple[str, str], asyncio.Future[None]] = {}
        self._awaiting: dict[str, str] = {}  # the id a reply will have -> the message it answers, while in hand
        self._tasks: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"XmppTransport({self._account!r})"

    @property
    def names(self) -> tuple[str, ...]:
        jid = JID(self._account.jid)
        return tuple(dict.fromkeys([self._nick, str(jid.user), str(jid.bare)]))

    @property
    def can_post(self) -> bool:
        return self._client is not None and self.reach is not None and self.reach.up

    def owns(self, room: str) -> bool:
        return room.startswith(f"{PLATFORM}:")

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        """Posts ``reply`` in a joined room (groupchat) or to a person (chat); XMPP has no deduplication by key:
        the runtime's claim under the lease is what makes a post exactly-once."""
        client, jid = self._client, JID(room.removeprefix(f"{PLATFORM}:")).bare
        if client is None or not self.can_post or (jid in self._rooms and jid not in self._joined):
            return False
        client.send_message(mto=JID(jid), mbody=reply.text, mtype="groupchat" if jid in self._joined else "chat")
        return True

    async def run(self, handler: Handler, *, stop: asyncio.Event) -> None:
        """Serves until ``stop`` is set, connecting again with backoff when the server goes away."""
        backoff = 1.0
        try:
            while not stop.is_set():
                served = await self._connection(handler, stop)
                if stop.is_set():
                    break
                backoff = 1.0 if served else min(backoff * 2, self._backoff_max)
                log.warning("xmpp: not connected to the server; trying again in %.0f s", backoff)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=backoff)
        finally:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _connection(self, handler: Handler, stop: asyncio.Event) -> bool:
        """One connection: True when a session was up (then lost or stopped), False when none came up."""
        client = self._new_client(handler, stop)
        outcome: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        seen: set[str] = set()
        for event in ("session_start", "no_auth", "failed_all_auth", "connection_failed", "disconnected"):
            client.add_event_handler(event, _settle(outcome, seen, event))
        client.add_event_handler("ssl_invalid_chain", lambda _error: self._untrusted(client))
        client.connect(self._account.server or JID(self._account.jid).domain, self._account.port or 5222)
        try:
            if await _first(outcome, stop) == "failed_all_auth":
                raise XmppError(self._refusal(unsafe="no_auth" in seen))
            if outcome.done() and outcome.result() == "session_start":
                lost = client.disconnected  # replaced by a new future at each disconnection
                await self._start(client, stop)
                self._keep_alive(client)
                await _first(lost, stop)
                return True
            return False
        finally:
            self._down(client)
            client.cancel_connection_attempt()  # the transport retries, with its own backoff
            if client.is_connected():
                await client.disconnect(wait=2.0)

    def _untrusted(self, client: ClientXMPP) -> None:
        """The server's certificate did not check out: nothing is sent on that stream, and the transport tries again
        (a certificate renewed, or a network that stops meddling)."""
        log.warning(
            "xmpp: the certificate of %s is not trusted (a private CA: set [bot.xmpp] ca_file)",
            JID(self._account.jid).domain,
        )
        client.abort()

    def _refusal(self, *, unsafe: bool) -> str:
        if unsafe:
            return (
                f"the server offered {self._account.jid} no way to log in that keeps the password safe "
                '(no STARTTLS?): use tls = "direct", or fix the server'
            )
        return f"the server refused the login of {self._account.jid} (check [bot.xmpp] jid and the password)"

    def _new_client(self, handler: Handler, stop: asyncio.Event) -> ClientXMPP:
        """A slixmpp client for one connection, with the TLS policy and the message handlers set."""
        plain = self._account.tls == "off"
        mechanisms = {"unencrypted_scram": True} if plain else {}  # SCRAM proves the password without sending it
        client = ClientXMPP(self._account.jid, self._account.password, plugin_config={"feature_mechanisms": mechanisms})
        client.enable_starttls = self._account.tls == "starttls"
        client.enable_direct_tls = self._account.tls == "direct"
        client.enable_plaintext = plain
        if self._account.ca_file is not None:
            client.ca_certs = self._account.ca_file
        client.register_plugin("xep_0045")
        client.register_plugin("xep_0199")  # pinged by _keep_alive (its own keepalive reconnects the same client)
        client.add_event_handler("message", lambda msg: self._direct(client, msg, handler, stop))
        client.add_event_handler("groupchat_message", lambda msg: self._groupchat(client, msg, handler, stop))
        client.add_event_handler("groupchat_presence", lambda presence: self._presence(client, presence))
        return client

    async def _start(self, client: ClientXMPP, stop: asyncio.Event) -> None:
        """Once logged in: available, the rooms joined (without their history), then ready; a room that could not
        be joined is tried again in the background."""
        client.send_presence()
        for room in self._rooms:
            if not await self._join(client, room):
                self._keep_joining(client, room)
        self._client = client
        if self.reach is not None:
            self.reach.set(up=True)
        log.info("ready: answering new messages as %s (%d rooms joined)", self._account.jid, len(self._joined))

    async def _join(self, client: ClientXMPP, room: str) -> bool:
        """Joins ``room`` without its history; False (and a log line) when the room refused or did not answer."""
        try:
            own, *_ = await client.plugin["xep_0045"].join_muc_wait(JID(room), self._nick, maxstanzas=0, timeout=30)
        except (PresenceError, TimeoutError) as exc:
            log.warning("xmpp: could not join %s: %s", room, getattr(exc, "condition", None) or "no answer")
            return False
        self._joined[room] = str(own["from"].resource)
        return True

    def _keep_alive(self, client: ClientXMPP) -> None:
        """Pings the server every ``ping_every`` seconds; no answer within ``ping_timeout`` drops the connection
        (a server gone without a word, a network that dropped it), and the transport connects again."""

        async def ping() -> None:
            while client.is_connected():
                await asyncio.sleep(self._ping_every)
                try:
                    await client.plugin["xep_0199"].ping(timeout=self._ping_timeout)
                except IqTimeout:
                    log.warning("xmpp: no answer to a ping in %.0f s; connecting again", self._ping_timeout)
                    client.abort()
                except IqError:  # an answer, even an error, says the server is there
                    continue

        self._background(ping())

    def _background(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _keep_joining(self, client: ClientXMPP, room: str) -> None:
        """Tries to join ``room`` again with backoff (1 s doubling to ``backoff_max``) while ``client`` is up."""

        async def rejoin() -> None:
            delay = 1.0
            while True:
                await asyncio.sleep(delay)
                if not client.is_connected() or await self._join(client, room):
                    return
                delay = min(delay * 2, self._backoff_max)

        self._background(rejoin())

    def _down(self, client: ClientXMPP) -> None:
        if self._client is client:
            self._client = None
        self._joined.clear()
        if self.reach is not None:
            self.reach.set(up=False)

    # -- messages ----------------------------------------------------------------------------------------

    def _direct(self, client: ClientXMPP, msg: Message, handler: Handler, stop: asyncio.Event) -> None:
        """A one-to-one message: from an account, not a room's occupant, and not the bot's own."""
        sender = JID(msg["from"])
        if msg["type"] not in ("chat", "normal") or not msg["body"] or not sender.user:
            return
        if sender.bare == JID(self._account.jid).bare or sender.bare in self._joined:
            return
        if msg.xml.find(_MUC_USER) is not None:  # a private message through a room: its sender is a nick
            return
        line = self._address(str(msg["body"]), direct=True)
        where = identity(sender)
        self._dispatch(client, msg, handler, stop, line=line, room=where, user=where, to=(sender, "chat"))

    def _groupchat(self, client: ClientXMPP, msg: Message, handler: Handler, stop: asyncio.Event) -> None:
        """A room's message: live (no delay stamp), from an occupant other than the bot, addressed to it."""
        sender = JID(msg["from"])
        room, nick = sender.bare, sender.resource
        if room not in self._joined or not nick or not msg["body"]:
            return
        if nick == self._joined[room]:  # the bot's own message (this replica's, or another's reply)
            self._seen_reply(str(msg["id"]))
            return
        if msg.xml.find(_DELAY) is not None:  # history the room replays
            return
        line = self._address(str(msg["body"]), direct=False)
        if line is None:
            return
        real = client.plugin["xep_0045"].get_jid_property(JID(room), nick, "jid")
        if real is not None and JID(real).bare == JID(self._account.jid).bare:
            return
        user = identity(real) if real is not None else None
        to: tuple[JID, Literal["chat", "groupchat"]] = (JID(room), "groupchat")
        if user is None:  # told by the replica that answers (every replica sees the message)
            if self._replicas is None or self._replicas.leading:
                client.send_message(mto=to[0], mbody=ANONYMOUS.format(jid=JID(self._account.jid).bare), mtype=to[1])
            return
        self._dispatch(client, msg, handler, stop, line=line, room=identity(room), user=user, to=to)

    def _seen_reply(self, stanza_id: str) -> None:
        """A reply of the bot's account seen in a room answers the message it names (by :func:`_reply_id`), whichever
        replica sent it: a replica killed between its reply and its record leaves nothing to answer twice."""
        event_id = self._awaiting.get(stanza_id)
        if event_id is not None and self._replicas is not None:
            self._replicas.replied(event_id)

    def _presence(self, client: ClientXMPP, presence: Presence) -> None:
        """The bot's own presence in a room says it is in (its messages count from then on) or put out of it (kicked,
        the room shut down: joined again); an occupant's affiliation is kept as a level when the room's roles follow
        affiliations."""
        codes, sender = set(presence["muc"]["status_codes"]), JID(presence["from"])
        if 110 not in codes:
            self._affiliation(presence)
        elif presence["type"] != "unavailable":  # in: from now on its messages are live (the join's end may be later)
            self._joined[sender.bare] = sender.resource
        elif 303 not in codes and self._joined.pop(sender.bare, None) is not None:  # out, not a change of nick
            log.warning("xmpp: out of %s (status %s); joining again", sender.bare, sorted(codes))
            self._keep_joining(client, sender.bare)

    def _affiliation(self, presence: Presence) -> None:
        room = identity(presence["from"])
        if self._levels is None or not self._levels.wanted(room):
            return
        real, affiliation = presence["muc"]["jid"], str(presence["muc"]["affiliation"])
        if not real or not JID(real).user:
            return
        users = self._affiliations.setdefault(room, {})
        users[identity(real)] = _LEVELS.get(affiliation, 0)
        self._levels.update(room, {"users": dict(users), "users_default": 0})

    def _dispatch(
        self,
        client: ClientXMPP,
        msg: Message,
        handler: Handler,
        stop: asyncio.Event,
        *,
        line: str | None,
        room: str,
        user: str,
        to: tuple[JID, Literal["chat", "groupchat"]],
    ) -> None:
        """Hands a command on in a task of its own, after the same person's earlier ones in that room."""
        if line is None:
            return
        body = str(msg["body"])
        if len(body.encode("utf-8", errors="surrogatepass")) > self._max_bytes:
            line = None
        event_id = _event_id(room=room, user=user, msg=msg)
        incoming = Incoming(platform=PLATFORM, room=room, user=user, event_id=event_id, text=line or "")
        key, reply_id = (room, user), _reply_id(event_id)
        self._awaiting[reply_id] = event_id
        before = self._chains.get(key)
        task = asyncio.ensure_future(self._answer(client, incoming, handler, stop, to=to, after=before))
        self._chains[key] = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda done: self._chains.pop(key) if self._chains.get(key) is done else None)
        task.add_done_callback(lambda _done: self._awaiting.pop(reply_id, None))

    async def _answer(
        self,
        client: ClientXMPP,
        incoming: Incoming,
        handler: Handler,
        stop: asyncio.Event,
        *,
        to: tuple[JID, Literal["chat", "groupchat"]],
        after: asyncio.Future[None] | None,
    ) -> None:
        """One command answered (by this replica, when it has the turn)."""
        if after is not None:
            await asyncio.gather(after, return_exceptions=True)
        replicas = self._replicas
        if replicas is not None and await replicas.turn(incoming.event_id, stop=stop) is not True:
            return
        reply = await self._reply(incoming, handler)
        if replicas is not None and not await replicas.may_answer(incoming.event_id):
            return
        if reply is not None:
            answer = client.make_message(mto=to[0], mbody=reply.text, mtype=to[1])
            answer["id"] = _reply_id(incoming.event_id)  # every replica can tell what it answers
            answer.send()
        if replicas is not None:
            await replicas.answered(incoming.event_id)

    async def _reply(self, incoming: Incoming, handler: Handler) -> Reply | None:
        if not incoming.text:
            return Reply(TOO_LONG.format(limit=self._max_bytes))
        try:
            return await handler(incoming)
        except Exception as exc:  # noqa: BLE001 -- the transport stays up; the person gets one line
            detail = "".join(traceback.format_exception(exc))
            log.error("handler failed on %s in %s from %s: %s", incoming.event_id, incoming.room, incoming.user, detail)
            return Reply(INTERNAL_ERROR)


def transport(wiring: Wiring) -> XmppTransport:
    """The factory :data:`petstore_bot.transport.FACTORIES` names: ``[bot.xmpp]`` made into a transport; ConfigError,
    in one line, for a setting that is missing. Affiliations are reported to the shared role book's levels, which
    the rooms whose grants follow them (``roles_from_affiliations``, or a room's ``power_levels``) read."""
    settings = wiring.bot.xmpp
    if settings.jid is None:
        raise not_set("bot.xmpp", "jid", wiring.config_where)
    account = Account(
        jid=settings.jid,
        password=_password(wiring),
        server=settings.server,
        port=settings.port,
        tls=settings.tls,
        ca_file=settings.ca_file.expanduser() if settings.ca_file else None,
    )
    return XmppTransport(
        account=account,
        rooms=settings.rooms,
        nick=settings.nick,
        addressing=wiring.addressing,
        replicas=wiring.replicas,
        levels=wiring.roles.levels if wiring.roles is not None else None,
    )


def _password(wiring: Wiring) -> str:
    """``[bot.xmpp] password`` (from the environment) or the one line of ``password_file``; ConfigError naming the
    setting otherwise."""
    from petstore_api.errors import ConfigError

    from .secret_files import one_secret

    settings = wiring.bot.xmpp
    value = one_secret(
        setting="[bot.xmpp] password", given=settings.password, path=settings.password_file, where=wiring.config_where
    )
    if value is None:
        raise ConfigError("[bot.xmpp] password is not set: set PETSTORE_BOT__XMPP__PASSWORD or password_file")
    return value


def _event_id(*, room: str, user: str, msg: Message) -> str:
    """An id every replica gives the same message: its room, sender and stanza id (or its body, without one)."""
    stanza_id = str(msg["id"]) or hashlib.sha256(str(msg["body"]).encode()).hexdigest()[:16]
    return f"{room} {user} {stanza_id}"


def _reply_id(event_id: str) -> str:
    """The stanza id of the reply to ``event_id``: the same on every replica, naming nothing of the message."""
    return "re-" + hashlib.sha256(event_id.encode()).hexdigest()[:24]


def _settle(outcome: asyncio.Future[str], seen: set[str], event: str) -> Callable[[object], None]:
    """An event handler that records ``event`` in ``seen`` and makes it ``outcome`` when it is the first."""

    def settle(_data: object) -> None:
        seen.add(event)
        if not outcome.done():
            outcome.set_result(event)

    return settle


async def _first(outcome: asyncio.Future[str] | asyncio.Future[bool], stop: asyncio.Event) -> object:
    """``outcome``'s result, or None when ``stop`` comes first."""
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({outcome, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
    return outcome.result() if outcome.done() and not outcome.cancelled() else None
