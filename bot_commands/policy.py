"""Who runs a command, and may they: actors, roles and the one policy every face goes through.

Roles map to what a command does (its :class:`Access`): everyone may run local
commands (``/help``, ``/whoami``); a viewer may also read from the service; an
operator may write too; an admin may also read the audit of the room it is in
(``/audit``, chat bots only: the person at a terminal reads the audit log file).
On top of roles: read-only mode, confirmation of writes (on production always;
every write when ``confirm_writes``), approval of writes by a second person
(``approval``: ``/approve`` and ``/deny`` are offered only then), and commands that touch local files or
end the process, which only terminal faces offer. A face whose person is
elsewhere (a browser session) touches none of the host's files: ``/history save``
then hands the script to the face to deliver.
"""

from __future__ import annotations

import enum
import os
import sys

from petstore_os.records import record

from .errors import Forbidden, ReadOnlyError, RefusedError

__all__ = ["Access", "Actor", "Capability", "Policy", "Role", "local_actor", "login_name"]


class Access(enum.Enum):
    """What running a command does, and so who may run it."""

    LOCAL = "local"  # nothing leaves the session (help, whoami, expect, sleep)
    TERMINAL = "terminal"  # local files or the process itself (history save, quit): terminal faces only
    READ = "read"  # reads from the service
    WRITE = "write"  # changes the service
    CONFIRM = "confirm"  # confirms a deferred write (chat faces)
    ADMIN = "admin"  # reads what only admins may (the audit of a room)
    APPROVE = "approve"  # approves or denies another person's write (where writes need a second person)


class Capability(enum.Enum):
    """What a face must give some commands for them to work there at all, beyond who may run them. A command
    declares what it needs (``Command.needs``); a session has what its face gave it (``CommandSession.capabilities``).
    Help, completion and ``/whoami`` list only what the session can run; typed anyway, a command answers
    :meth:`missing`."""

    ROOM = "room"  # a chat bot's room, where watches and schedules post (the session's Notifications port)

    def missing(self, name: str) -> str:
        """The one line that says why ``/name`` does not work here, and where it does."""
        return _MISSING[self].format(name=name)


_MISSING = {
    Capability.ROOM: "/{name} works in chat rooms only, with a bot that can post there: petstore bot matrix, or "
    "petstore bot slack with [bot.slack] bot_token",
}


class Role(enum.Enum):
    NONE = "none"
    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"

    def __str__(self) -> str:
        return self.value


#: The least role each kind of access needs.
_NEEDS = {
    Access.LOCAL: Role.NONE,
    Access.TERMINAL: Role.NONE,
    Access.READ: Role.VIEWER,
    Access.WRITE: Role.OPERATOR,
    Access.CONFIRM: Role.OPERATOR,
    Access.ADMIN: Role.ADMIN,
    Access.APPROVE: Role.OPERATOR,
}
_RANK = {Role.NONE: 0, Role.VIEWER: 1, Role.OPERATOR: 2, Role.ADMIN: 3}


@record
class Actor:
    """Who runs the commands of a session, and where (``terminal``, ``web``, or a chat room: ``platform:room``)."""

    id: str
    role: Role = Role.OPERATOR
    where: str = "terminal"

    def may(self, access: Access) -> bool:
        return _RANK[self.role] >= _RANK[_NEEDS[access]]

    @property
    def in_room(self) -> bool:
        """The actor speaks in a chat room (``where`` is ``platform:room``), where roles are the room's."""
        return ":" in self.where


#: Platforms whose rooms carry their platform already (``irc:#ops``, ``xmpp:ops@conference.example.org``), as their
#: transports name them; other platforms' rooms do not (Matrix's ``!abc:example.org``, Slack's ``T1/C1``).
ROOMS_NAME_THEIR_PLATFORM = frozenset({"irc", "xmpp"})


def where_in(platform: str, room: str) -> str:
    """An actor's ``where`` in ``room`` of ``platform``: ``platform:room``, the platform written once (``irc:#ops``
    for IRC's room ``irc:#ops``, ``matrix:!abc:example.org`` for Matrix's ``!abc:example.org``)."""
    carried = platform in ROOMS_NAME_THEIR_PLATFORM and room.startswith(f"{platform}:")
    return room if carried else f"{platform}:{room}"


def room_of(where: str) -> str:
    """The room a ``where`` names, exactly as its transport owns it (``irc:#ops``, ``!abc:example.org``); "" for a
    place that is no room (``terminal``). The form earlier versions stored, ``irc:irc:#ops``, gives ``irc:#ops`` too."""
    platform, colon, rest = where.partition(":")
    if not colon:
        return ""
    if platform in ROOMS_NAME_THEIR_PLATFORM and not rest.startswith(f"{platform}:"):
        return where
    return rest


def same_where(where: str) -> str:
    """``where`` in the one form :func:`where_in` makes (an older stored ``irc:irc:#ops`` is ``irc:#ops``)."""
    return where_in(where.partition(":")[0], room_of(where)) if ":" in where else where


def local_actor(*, role: Role = Role.OPERATOR) -> Actor:
    """The person at this terminal: ``local:<login name>`` of the process's real user id.

    Never ``$USER`` or ``$LOGNAME``: a variable is what the person says they are, the uid is what the system
    authenticated (docs/security.md)."""
    return Actor(id=f"local:{login_name()}", role=role, where="terminal")


def login_name() -> str:
    """The login name of this process's real user id (``uid<N>`` when the system has no entry for it)."""
    if sys.platform == "win32":  # no POSIX user ids: the account the session logged in as
        return os.getlogin()
    import pwd

    uid = os.getuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:  # a container without a passwd entry for this uid
        return f"uid{uid}"


@record
class Policy:
    """The rules of one face (the actor is per session)."""

    read_only: bool = False
    production: bool = False
    confirm_writes: bool = False
    #: Writes are confirmed later with ``/confirm CODE`` (chat bots), not asked for at once.
    deferred: bool = False
    #: A terminal face: commands that touch local files or the process are offered.
    terminal: bool = True
    #: Commands may read and write the host's files (a terminal). False in a browser session: ``/history save``
    #: gives the face the script to hand over (a download) and writes nothing here.
    host_files: bool = True
    #: Writes here need a second person: held for ``/approve CODE`` by someone other than the asker (``[bot]
    #: approvals`` names this environment).
    approval: bool = False

    def _rule(self, access: Access, actor: Actor) -> str | None:
        """Which rule refuses ``access`` to ``actor`` here (``terminal``, ``read_only``, ``role``), or None:
        the one statement of the rules; cheap, since help and completion ask it for every command."""
        if access is Access.TERMINAL and not self.terminal:
            return "terminal"
        if access in (Access.WRITE, Access.CONFIRM, Access.APPROVE) and self.read_only:
            return "read_only"
        if access is Access.APPROVE and not self.approval:
            return "approval"
        if not actor.may(access):
            return "role"
        return None

    def refusal(self, *, name: str, access: Access, actor: Actor, what: str = "") -> RefusedError | None:
        """Why ``actor`` may not run ``/name`` here (``what`` describes it), or None."""
        rule = self._rule(access, actor)
        if rule == "terminal":
            return Forbidden(f"/{name} is only available in a terminal")
        if rule == "read_only":
            return ReadOnlyError(
                f"refused to {what}; nothing was sent "
                "(read-only from --read-only, PETSTORE_READ_ONLY or read_only in the config)"
            )
        if rule == "approval":
            return Forbidden(f"/{name}: writes here need no second person (approvals are not on for this environment)")
        if rule == "role":
            return _role_refusal(name=name, access=access, actor=actor, host_files=self.host_files)
        return None

    def allows(self, access: Access, actor: Actor) -> bool:
        """Whether ``actor`` may run a command of this access here (help and completion list only these)."""
        if access is Access.CONFIRM and not self.deferred:
            return False  # nothing is ever waiting for a code here
        return self._rule(access, actor) is None

    def check(self, *, name: str, access: Access, actor: Actor, what: str) -> None:
        """Raise the refusal for running ``/name``, if any; nothing is sent then."""
        refused = self.refusal(name=name, access=access, actor=actor, what=what)
        if refused is not None:
            raise refused

    def needs_confirmation(self, access: Access) -> bool:
        return access is Access.WRITE and (self.production or self.confirm_writes)

    def needs_approval(self, access: Access) -> bool:
        """A write here waits for a second person (which also stands for the asker's own confirmation)."""
        return access is Access.WRITE and self.approval


def _role_refusal(*, name: str, access: Access, actor: Actor, host_files: bool) -> Forbidden:
    """``/add needs the operator role in this room; you have viewer (ask an operator)``: in a chat room roles
    are the room's; an admin's command at a terminal says where the audit is instead (not in a browser session,
    whose person cannot read the host's files)."""
    needed = _NEEDS[access]
    if needed is Role.ADMIN and not actor.in_room:
        here = "; here, read the audit log file itself" if host_files else ""
        return Forbidden(f"/{name} is for chat rooms (their admins){here}")
    here = " in this room" if actor.in_room else ""
    ask = "an admin" if needed is Role.ADMIN else "an operator"
    return Forbidden(f"/{name} needs the {needed} role{here}; you have {actor.role} (ask {ask})")
