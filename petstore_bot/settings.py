"""The ``[bot]`` settings: what the chat bots share (prefix, roles, confirmation, rate limit, audit) and each platform.

Plain pydantic models with no chat SDK import; the application's settings hold them as ``bot``. Secrets (the
Matrix password or access token, Slack's signing secret, Mattermost's token) are ``SecretStr`` and never printed;
``[bot] state``, a URL that may hold a database password, is a :class:`SecretUrl`, shown with its password as ``***``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from bot_commands.people import People
from petstore_os.db_url import parse_db, shown

__all__ = [
    "BotSettings",
    "BotRoles",
    "IrcSettings",
    "MatrixSettings",
    "MattermostSettings",
    "RateLimit",
    "RoomGrants",
    "SecretUrl",
    "SlackSettings",
    "XmppSettings",
    "parse_rate_limit",
]

RoleName = Literal["none", "viewer", "operator"]
"""A default role (admin is only ever granted by name or power level)."""

_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*(?:\.\d+)?)\s*(s|m|h)?\s*$")
_UNIT = {"s": 1.0, "m": 60.0, "h": 3600.0}


class SecretUrl(SecretStr):
    """A URL that may hold a password (``[bot] state``): a secret, :meth:`shown` with its password as ``***``."""

    def shown(self) -> str:
        return shown(self.get_secret_value())


@dataclass(frozen=True, slots=True)
class RateLimit:
    """At most ``count`` commands per ``seconds`` for one user; ``count == 0`` means no limit."""

    count: int
    seconds: float

    def __str__(self) -> str:
        return "off" if self.count == 0 else f"{self.count}/{self.seconds:g}s"


def parse_rate_limit(text: str) -> RateLimit:
    """``"10/10s"``, ``"30/1m"``, ``"100/1h"`` or ``"off"``; ValueError saying what is allowed otherwise."""
    if text.strip().lower() in ("off", "0", "none"):
        return RateLimit(count=0, seconds=0.0)
    match = _RATE.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a rate: use COUNT/PERIOD such as 10/10s, 30/1m or 100/1h, or off")
    count, amount, unit = int(match[1]), float(match[2] or 1), match[3] or "s"
    seconds = amount * _UNIT[unit]
    if count < 1 or not 0 < seconds <= 86_400:
        raise ValueError(f"{text!r} is not a rate: COUNT must be at least 1 and PERIOD between 1s and 24h")
    return RateLimit(count=count, seconds=seconds)


class BotRoles(BaseModel):
    """Who may do what in chat: platform user ids (Matrix ``@alice:example.org``, ``slack:T123/U456``, ...)."""

    model_config = ConfigDict(extra="forbid")

    operators: list[str] = []
    """Users who may read and write (writes are confirmed, see confirm_writes)."""
    viewers: list[str] = []
    """Users who may read only."""
    admins: list[str] = []
    """Users who are operators and may also read the audit from chat (!audit)."""


class RoomGrants(BaseModel):
    """``[bot.rooms."<room id>"]``: who may do what in that room, instead of the global [bot.roles] there (a table
    that grants no role, naming only its approvers, leaves [bot.roles] in force)."""

    model_config = ConfigDict(extra="forbid")

    operators: list[str] = []
    """Users who may read and write in this room."""
    viewers: list[str] = []
    """Users who may read only in this room."""
    admins: list[str] = []
    """Users who are operators in this room and may read its audit (!audit)."""
    default_role: RoleName | None = None
    """Role in this room of anyone not listed here; unset: [bot] default_role."""
    power_levels: bool = False
    """Matrix: roles from the room's power levels for anyone not in these lists (100 and above: admin, 50 and above:
    operator, below: default_role). XMPP: from the room's affiliations (owner: admin, admin: operator)."""
    approvers: list[str] | None = None
    """Who may approve writes asked for in this room; unset: any operator (or admin) other than the asker."""


class MatrixSettings(BaseModel):
    """The Matrix face: a bot on a Matrix homeserver ([bot.matrix] in the config).

    ``petstore bot matrix`` logs in to the homeserver and answers !commands in its rooms."""

    model_config = ConfigDict(extra="forbid")

    homeserver: str | None = None
    """Homeserver address, e.g. https://matrix.example.org (http:// only for loopback)."""
    user_id: str | None = None
    """The bot's own Matrix user, e.g. @petbot:example.org."""
    password: SecretStr | None = None
    """The bot user's password (or set access_token instead); env PETSTORE_BOT__MATRIX__PASSWORD."""
    access_token: SecretStr | None = None
    """An access token for the bot user instead of a password; env PETSTORE_BOT__MATRIX__ACCESS_TOKEN."""
    rooms: list[str] = []
    """Rooms to join at start (ids like !abc:example.org or aliases like #ops:example.org)."""
    state_dir: Path | None = None
    """Where the sync token, the device id and its encryption keys are kept; default: the platform data dir (bot/)."""
    key_sharing: Literal["tofu", "verified"] = "tofu"
    """Which devices get the bot's room keys in encrypted rooms: "tofu" (each device trusted the first time it is
    seen, its keys pinned) or "verified" (only those in verified_devices)."""
    verified_devices: list[str] = []
    """With key_sharing = "verified": '@user:example.org DEVICEID ED25519KEY' for each device to share keys with."""

    @field_validator("homeserver")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError("must start with https:// (or http:// for a homeserver on this machine)")
        if value is not None and value.startswith("http://"):
            from petstore_api.urls import (
                is_loopback,  # the client's rule: no secret over plain http beyond this machine
            )

            if not is_loopback(urlsplit(value).hostname or ""):
                raise ValueError(
                    "http:// is only for a homeserver on this machine (the password would travel in "
                    "clear text): use https://"
                )
        return value

    @property
    def account(self) -> str:
        """Who the bot is on Matrix (names its lease and its claims, which its replicas share)."""
        return f"matrix {self.homeserver} {self.user_id}"

    @field_validator("user_id")
    @classmethod
    def _matrix_id(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"@[^:\s]+:\S+", value):
            raise ValueError("must be a full Matrix user id such as @petbot:example.org")
        return value


class SlackSettings(BaseModel):
    """The Slack (or Mattermost) face: slash commands, buttons, mentions and DMs, over HTTP or Socket Mode.

    ``petstore bot slack`` serves POST /slack/commands, POST /slack/interactions, POST /slack/events and GET /healthz
    for a Slack app ([bot.slack]); with --socket-mode, it takes the same over Slack's Socket Mode instead (no public
    URL); with --mattermost, a Mattermost slash command ([bot.mattermost])."""

    model_config = ConfigDict(extra="forbid")

    signing_secret: SecretStr | None = None
    """The app's signing secret (Basic Information in the app's settings); env PETSTORE_BOT__SLACK__SIGNING_SECRET."""
    command: str = Field("/pets", pattern=r"^/[a-z0-9_-]{1,31}$")
    """The slash command as set up in the app: /pets list sold."""
    app_token: SecretStr | None = None
    """The app-level token (xapp-...) for --socket-mode; env PETSTORE_BOT__SLACK__APP_TOKEN (or app_token_file)."""
    app_token_file: Path | None = None
    """A file (0600) holding the app-level token, instead of app_token."""
    bot_token: SecretStr | None = None
    """The bot token (xoxb-...) to answer mentions and DMs; env PETSTORE_BOT__SLACK__BOT_TOKEN (or bot_token_file)."""
    bot_token_file: Path | None = None
    """A file (0600) holding the bot token, instead of bot_token."""
    api_url: str = "https://slack.com/api/"
    """Slack's Web API base URL (an enterprise proxy's): methods are called below it, e.g. <api_url>chat.postMessage."""

    @field_validator("api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("must start with https://, e.g. https://slack.com/api/")
        if value.startswith("http://"):
            from petstore_api.urls import is_loopback  # the tokens travel in every request

            if not is_loopback(urlsplit(value).hostname or ""):
                raise ValueError("http:// is only for a server on this machine (tokens would travel in clear text)")
        return value if value.endswith("/") else value + "/"


class MattermostSettings(BaseModel):
    """Mattermost's flavour of the Slack face (token, Markdown; [bot.mattermost] in the config).

    ``petstore bot slack --mattermost``: Mattermost speaks the same slash commands."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = None
    """The team's Mattermost server, e.g. https://chat.example.org; delayed replies go to this origin only."""
    token: SecretStr | None = None
    """The slash command's token (shown when the command is made); env PETSTORE_BOT__MATTERMOST__TOKEN."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError("must start with https:// or http://, e.g. https://chat.example.org")
        return value


class IrcSettings(BaseModel):
    """The IRC face: a bot in the channels and private messages of one IRC server ([bot.irc] in the config).

    ``petstore bot irc`` connects to the server and answers !commands in its channels and private messages."""

    model_config = ConfigDict(extra="forbid")

    server: str | None = None
    """The IRC server's host name, e.g. irc.libera.chat."""
    port: int = Field(6697, ge=1, le=65535)
    """Its port: 6697 for TLS, 6667 for plain text (only on this machine or a network you trust)."""
    tls: bool = True
    """Connect over TLS, the server's certificate checked; false only without a password or on this machine."""
    nick: str = Field("petbot", pattern=r"^[A-Za-z\[\]\\`_^{|}][A-Za-z0-9\[\]\\`_^{|}-]{0,29}$")
    """The bot's nick (a _ is added while it is taken)."""
    channels: list[str] = []
    """Channels to join (and join again after a reconnect), e.g. ["#ops"]; a key after a space: "#ops KEY"."""
    identify: Literal["account", "nick"] = "account"
    """Who a person is: "account", the services account the server says they are logged in to (irc:ACCOUNT; with
    none, no role beyond default_role); "nick", the nick itself (irc:NICK), only for a private server whose
    password keeps strangers out (anyone can take a free nick)."""
    password: SecretStr | None = None
    """The server password (PASS); env PETSTORE_BOT__IRC__PASSWORD or password_file, never the config file."""
    password_file: Path | None = None
    """A file (0600) holding the server password, instead of the environment."""
    flood_burst: int = Field(5, ge=1, le=100)
    """Lines the bot may send at once before pacing (the server's flood limit: nothing is dropped, lines wait)."""
    flood_rate: float = Field(1.0, gt=0, le=100)
    """Lines a second the bot sends once the burst is spent."""

    @property
    def account(self) -> str:
        """Who the bot is on IRC (names its lease and its claims, which its replicas share)."""
        return f"irc {self.server}:{self.port} {self.nick}"

    @field_validator("channels")
    @classmethod
    def _channels(cls, value: list[str]) -> list[str]:
        for channel in value:
            if not re.fullmatch(r"[#&+!][^\s,:\x00-\x1f]{1,49}( \S+)?", channel):
                raise ValueError(f"{channel!r} is not a channel: a name starting with # such as #ops")
        return value

    @model_validator(mode="after")
    def _no_password_in_clear(self) -> IrcSettings:
        from petstore_api.urls import is_loopback  # the client's rule: no secret in clear text beyond this machine

        given = self.password is not None or self.password_file is not None
        if given and not self.tls and self.server is not None and not is_loopback(self.server):
            raise ValueError("tls = false with a server password is only for a server on this machine (127.0.0.1)")
        return self


class XmppSettings(BaseModel):
    """The XMPP face: a bot in multi-user chat rooms and direct messages ([bot.xmpp] in the config).

    ``petstore bot xmpp`` logs in to the XMPP server as [bot.xmpp] jid, joins its rooms and answers !commands there
    and in direct messages."""

    model_config = ConfigDict(extra="forbid")

    jid: str | None = None
    """The bot's own account, a bare JID such as petbot@example.org (the server vouches for who writes to it)."""
    password: SecretStr | None = None
    """The bot account's password; env PETSTORE_BOT__XMPP__PASSWORD (or password_file), never in this file."""
    password_file: Path | None = None
    """A file (0600) holding the password alone, instead of password."""
    rooms: list[str] = []
    """Multi-user chat rooms to join at start, by JID: ops@conference.example.org."""
    nick: str = Field("petbot", min_length=1, max_length=64)
    """The bot's nickname in the rooms (people address it as "petbot: list")."""
    server: str | None = None
    """The host to connect to instead of the one DNS gives for the JID's domain (with port)."""
    port: int | None = Field(None, ge=1, le=65535)
    """The port on server (5222 for STARTTLS, 5223 for direct TLS)."""
    tls: Literal["starttls", "direct", "off"] = "starttls"
    """STARTTLS required (the default), TLS from the first byte ("direct"), or "off": only for a server on this
    machine (127.0.0.1 or localhost), since the stream would travel in clear text."""
    ca_file: Path | None = None
    """A PEM file of the certificate authorities to trust for the server's certificate (a private CA) instead of the
    system's."""
    roles_from_affiliations: bool = False
    """Roles in these rooms from MUC affiliations for people the grants do not name: owner is admin, admin is
    operator (the default role for everyone else), as if each room's [bot.rooms."xmpp:ROOM"] said power_levels."""

    @property
    def account(self) -> str:
        """Who the bot is on XMPP (names its lease and its claims, which its replicas share)."""
        return f"xmpp {self.jid}"

    @property
    def rooms_with_server_roles(self) -> tuple[str, ...]:
        """The rooms whose roles follow their affiliations (all of them with roles_from_affiliations), as room
        identities (:func:`petstore_bot.rules.server_role_rooms`)."""
        return tuple(f"xmpp:{room}" for room in self.rooms) if self.roles_from_affiliations else ()

    @field_validator("jid")
    @classmethod
    def _bare_jid(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[^@/\s]+@[^@/\s]+", value):
            raise ValueError("must be a bare JID such as petbot@example.org (no resource)")
        return value

    @field_validator("rooms")
    @classmethod
    def _room_jids(cls, value: list[str]) -> list[str]:
        for room in value:
            if not re.fullmatch(r"[^@/\s]+@[^@/\s]+", room):
                raise ValueError(f"{room!r} is not a room JID: name a room as ops@conference.example.org")
        return value

    @model_validator(mode="after")
    def _tls_off_on_loopback(self) -> XmppSettings:
        from petstore_api.urls import is_loopback  # the client's rule: no secret in clear text beyond this machine

        host = self.server or (self.jid.rsplit("@", 1)[-1] if self.jid else None)
        if self.tls == "off" and host is not None and not is_loopback(host):
            raise ValueError('tls = "off" is only for a server on this machine (the stream would travel in clear text)')
        return self


class BotSettings(BaseModel):
    """The chat bots: what every platform shares."""

    model_config = ConfigDict(extra="forbid")

    prefix: str = Field("!", min_length=1, max_length=3)
    """Messages starting with this are commands for the bot (Matrix): !list sold, !add Rex --category 3."""
    default_role: RoleName = "viewer"
    """Role of anyone not listed in [bot.roles]: none, viewer or operator."""
    confirm_writes: bool = True
    """Writes wait for !confirm CODE from the same user (always on production, whatever this says)."""
    confirm_ttl: float = Field(60.0, ge=5, le=3600)
    """Seconds a confirmation code stays valid."""
    rate_limit: str = "10/10s"
    """Commands per user per period (10/10s, 30/1m, 100/1h) or "off"; over it: one short reply, then silence."""
    audit_log: Path | None = None
    """Every write attempt as a JSON line (who, room, command, outcome, pet id); default: data dir/audit.ndjson."""
    reply_style: Literal["reply", "thread", "plain"] = "reply"
    """How an answer relates to its question (Matrix): a reply quoting it, a thread on it, or plain (a question
    asked inside a thread is answered in that thread whatever this says)."""
    max_backlog_age: float = Field(900.0, ge=0)
    """Seconds: a missed command older than this when the bot comes back (after an outage) is not run; the room
    is told once how many were skipped. 0 runs none of them."""
    state: SecretUrl | None = None
    """Where the bots keep what must outlive a process (pending confirmations and approvals, watches, schedules,
    rate windows, $last): unset is SQLite in the state dir, sqlite:///PATH a file, postgresql://... a database
    several bot processes share (its password here, in PETSTORE_BOT__STATE, or in ~/.pgpass or PGPASSFILE)."""
    approvals: list[str] = []
    """Environments whose writes need a second person's !approve (e.g. ["production"]), from chat or a terminal."""
    approvals_room: str | None = None
    """The room where requests for approval made at a terminal are posted (a Matrix room id or Slack channel id)."""
    approval_ttl: float = Field(3600.0, ge=60, le=7 * 86_400)
    """Seconds a request for approval waits for a second person before it expires (and is closed in the audit)."""
    approval_key: SecretStr | None = None
    """The key the bots seal held writes with (at least 16 characters; bots on several hosts share one); unset:
    approval.key (0600) in the bot's state dir, made on first use. Never in the state database."""
    lease_ttl: float = Field(6.0, ge=1.5, le=300)
    """Seconds the replicas' lease (bots sharing one ``state``) outlives its holder's last renewal: the holder renews
    it every third of that, a standby takes over within about this plus a second of the holder dying or freezing.
    Longer rides out longer stalls of the holder or the database; shorter fails over sooner."""
    watch_interval: float = Field(30.0, ge=1)
    """Seconds between two looks for new pets on behalf of the rooms that !watch (one look per filter)."""
    timezone: str = "UTC"
    """The time zone of !every schedules ("Europe/Berlin"): "weekday at 09:00" is 09:00 there."""
    max_schedules_per_room: int = Field(10, ge=1, le=10_000)
    """The most !every schedules one room may have; one more is refused saying so."""
    max_schedules: int = Field(100, ge=1, le=100_000)
    """The most !every schedules the bot runs in all its rooms together."""
    max_watches_per_room: int = Field(10, ge=1, le=10_000)
    """The most !watch filters one room may have (there are four: every pet, available, pending, sold)."""
    max_watches: int = Field(100, ge=1, le=100_000)
    """The most !watch filters of all the bot's rooms together (one room watching two filters counts two)."""
    roles: BotRoles = BotRoles()
    rooms: dict[str, RoomGrants] = {}
    """Per-room grants by room id (Matrix !id:server, Slack channel id), overriding [bot.roles] in that room."""
    people: dict[str, list[str]] = {}
    """Which names are one person, across faces: alice = ["@alice:example.org", "local:alice", "pg:alice"]; an
    approval needs another person, not another name of the asker (docs/security.md)."""
    matrix: MatrixSettings = MatrixSettings()
    slack: SlackSettings = SlackSettings()
    mattermost: MattermostSettings = MattermostSettings()
    irc: IrcSettings = IrcSettings()
    xmpp: XmppSettings = XmppSettings()

    @field_validator("rate_limit")
    @classmethod
    def _rate(cls, value: str) -> str:
        parse_rate_limit(value)
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("is not a time zone: use an IANA name such as UTC or Europe/Berlin") from None
        return value

    @field_validator("state")
    @classmethod
    def _state(cls, value: SecretUrl | None) -> SecretUrl | None:
        if value is None:
            return value
        try:
            parse_db(value.get_secret_value(), paths=False)
        except ValueError as exc:  # it says what is allowed, never the URL
            raise ValueError(f"{exc} (unset: SQLite in the state dir)") from None
        return value

    def state_url(self) -> str | None:
        """The ``state`` URL itself, for opening the state (it may hold a password: show :meth:`SecretUrl.shown`)."""
        return self.state.get_secret_value() if self.state is not None else None

    @field_validator("rooms")
    @classmethod
    def _room_ids(cls, value: dict[str, RoomGrants]) -> dict[str, RoomGrants]:
        for room in value:
            if not room.strip() or room.startswith("#"):
                raise ValueError(
                    f"{room!r} is not a room id: name a room by its id (Matrix !abc:example.org, in Element under "
                    "Room settings > Advanced; a Slack or Mattermost channel id such as C0123), not its alias or name"
                )
        return value

    @field_validator("people")
    @classmethod
    def _people(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        People.of(value)
        return value

    @property
    def who(self) -> People:
        """``[bot.people]``: who each name is."""
        return People.of(self.people)

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if any(ch.isspace() or ch.isalnum() for ch in value):
            raise ValueError("must be punctuation such as ! or ?, without spaces, letters or digits")
        return value

    def prefix_of(self, platform: str) -> str | None:
        """The prefix of commands on ``platform`` when it has its own (Slack's and Mattermost's slash command:
        ``"/pets "``, and no bare command in a direct message); None: :attr:`prefix`."""
        return self.slack.command + " " if platform in ("slack", "mattermost") else None

    @property
    def rate(self) -> RateLimit:
        return parse_rate_limit(self.rate_limit)
