"""Who may use ``petstore web``: the people and their tokens, the cookie that names them, the trusted proxies.

A token (generated, from ``--token-file``, or one a person in ``--tokens FILE``) is compared in constant time and
never printed back in a message. The cookie a login sets is derived from the token (an HMAC of a fixed label
keyed by it): it names one person, survives a restart, stops working when the token changes, and does not give
the token away.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: Shortest token accepted from a file (a generated one is 32 URL-safe characters).
MIN_TOKEN = 16
#: The roles of the command layer (bot_commands.policy.Role), restated: this package imports no product layer.
ROLES = ("none", "viewer", "operator")
#: A person's name: it becomes the actor ``web:<name>`` in /whoami and in every audit line.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: Who the single token (generated or from ``--token-file``) stands for.
OWNER = "owner"
_COOKIE_LABEL = b"petstore web session cookie v1"


class TokenError(ValueError):
    """A token or tokens file that cannot be used (the message is one line for the user, never with a token)."""


@dataclass(frozen=True, slots=True)
class Person:
    """One person who may log in: ``web:<name>`` with ``role``, known by ``token``."""

    name: str
    role: str
    token: str

    @property
    def actor(self) -> str:
        return f"web:{self.name}"

    @property
    def cookie(self) -> str:
        """The login cookie's value: derived from the token, not the token."""
        return hmac.new(self.token.encode("utf-8"), _COOKIE_LABEL, hashlib.sha256).hexdigest()

    def __repr__(self) -> str:  # never the token, should a Person be printed
        return f"Person(name={self.name!r}, role={self.role!r})"


class People:
    """The people of one server; lookups compare against every one of them, in constant time each."""

    def __init__(self, people: Iterable[Person]) -> None:
        self.people = tuple(people)
        self._cookies = [(person.cookie, person) for person in self.people]

    def __len__(self) -> int:
        return len(self.people)

    def by_token(self, given: str | None) -> Person | None:
        return _match(given, [(person.token, person) for person in self.people])

    def by_cookie(self, given: str | None) -> Person | None:
        return _match(given, self._cookies)


def _match(given: str | None, candidates: list[tuple[str, Person]]) -> Person | None:
    """The person whose secret equals ``given``: every candidate compared (no early exit), in constant time."""
    if not given:
        return None
    data = given.encode("utf-8", "replace")
    found = None
    for secret, person in candidates:
        if hmac.compare_digest(data, secret.encode("utf-8")):
            found = person
    return found


def new_token() -> str:
    return secrets.token_urlsafe(24)


def owner(token: str) -> People:
    """The default: one token, the owner of the server, an operator."""
    return People([Person(name=OWNER, role="operator", token=token)])


def _valid_token(token: str) -> bool:
    return len(token) >= MIN_TOKEN and token.isascii() and token.isprintable() and " " not in token


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenError(f"cannot read {what} {path}: {getattr(exc, 'strerror', None) or exc}") from None


def read_token(path: Path) -> str:
    """The token in ``path``: its first line, stripped; at least MIN_TOKEN printable ASCII characters."""
    text = _read(path, "token file")
    token = text.strip().splitlines()[0].strip() if text.strip() else ""
    if not _valid_token(token):
        raise TokenError(
            f"token file {path}: the first line must be a token of at least {MIN_TOKEN} "
            "printable ASCII characters without spaces"
        )
    return token


def read_tokens(path: Path) -> People:
    """The people in ``path``: one a line, ``name role token`` (whitespace between); ``#`` comments, blank lines.

    Names and tokens are unique. A problem is one line naming the file, the line and what is wrong; it never
    quotes a field (columns in the wrong order would put a token where a name goes)."""
    people: list[Person] = []
    names: dict[str, int] = {}
    tokens: dict[str, int] = {}
    for number, raw in enumerate(_read(path, "tokens file").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        person = _person(line, where=f"tokens file {path} line {number}")
        for seen, key, what in ((names, person.name, "name"), (tokens, person.token, "token")):
            if key in seen:
                raise TokenError(f"tokens file {path} line {number}: the same {what} as line {seen[key]}")
            seen[key] = number
        people.append(person)
    if not people:
        raise TokenError(f"tokens file {path}: no one in it (one line per person: name role token)")
    return People(people)


def _person(line: str, *, where: str) -> Person:
    fields = line.split()
    if len(fields) != 3:
        raise TokenError(f"{where}: {len(fields)} fields; write name role token, separated by spaces")
    name, role, token = fields
    if not NAME.fullmatch(name):
        raise TokenError(f"{where}: the name must be 1 to 64 letters, digits, '.', '_' or '-', starting alike")
    if role not in ROLES:
        raise TokenError(f"{where}: the role must be one of {', '.join(ROLES)}")
    if not _valid_token(token):
        raise TokenError(f"{where}: the token must be at least {MIN_TOKEN} printable ASCII characters")
    return Person(name=name, role=role, token=token)


def cookie_name(port: int) -> str:
    """Cookies do not tell ports apart: one name per port keeps two servers on one host apart."""
    return f"petstore_web_{port}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Proxies:
    """``--forwarded-allow-ips``: the addresses whose ``X-Forwarded-Proto``/``-Host`` are believed (none by default).

    Comma-separated addresses or networks (``127.0.0.1``, ``10.0.0.0/8``, ``::1``), or ``*`` for any peer."""

    def __init__(self, spec: str = "") -> None:
        self.any = False
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for item in (part.strip() for part in spec.split(",")):
            if item == "*":
                self.any = True
            elif item:
                try:
                    self.networks.append(ipaddress.ip_network(item, strict=False))
                except ValueError:
                    raise ValueError(
                        f"--forwarded-allow-ips: {item!r} is not an address or network (e.g. 127.0.0.1,10.0.0.0/8)"
                    ) from None

    def trusts(self, peer: str | None) -> bool:
        if self.any:
            return True
        if not peer or not self.networks:
            return False
        try:
            address = ipaddress.ip_address(peer)
        except ValueError:
            return False
        return any(address in network for network in self.networks)
