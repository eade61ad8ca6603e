"""Who has which role in chat, room by room.

Everywhere: the ``[bot.roles]`` lists (admins, operators, viewers), and ``[bot] default_role`` for everyone else.
In a room with ``[bot.rooms."<room id>"]``, that room's lists instead (its ``default_role``, else the global one,
for anyone not in them), and, when it says ``power_levels = true``, the room's Matrix power levels for people not
in its lists: :data:`ADMIN_LEVEL` and above is admin, :data:`OPERATOR_LEVEL` and above operator, below that the
room's default role. In room versions 12 and later a room's creators are above every level (they are in no
``users`` list): admins. :class:`PowerLevels` holds the levels as the Matrix transport last saw them (it keeps them
current from the room state and each ``m.room.power_levels`` event), so a change counts from the next command.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bot_commands.policy import Role

__all__ = ["ADMIN_LEVEL", "CREATOR_LEVEL", "OPERATOR_LEVEL", "Grants", "PowerLevels", "RoleBook", "RoomRules"]

#: The Matrix power level from which a person is an admin (Element's "Admin"), and an operator ("Moderator").
ADMIN_LEVEL, OPERATOR_LEVEL = 100, 50
#: The level of a creator of a room of version 12 or later: above any level a power_levels event can give.
CREATOR_LEVEL = 2**63


@dataclass(frozen=True, slots=True)
class Grants:
    """Platform user ids (``@alice:example.org``, ``slack:T123/U456``) by role; the highest listed role wins."""

    admins: frozenset[str] = frozenset()
    operators: frozenset[str] = frozenset()
    viewers: frozenset[str] = frozenset()

    @classmethod
    def of(cls, *, admins: Iterable[str] = (), operators: Iterable[str] = (), viewers: Iterable[str] = ()) -> Grants:
        return cls(admins=frozenset(admins), operators=frozenset(operators), viewers=frozenset(viewers))

    def listed(self, user: str) -> Role | None:
        if user in self.admins:
            return Role.ADMIN
        if user in self.operators:
            return Role.OPERATOR
        if user in self.viewers:
            return Role.VIEWER
        return None


@dataclass(frozen=True, slots=True)
class RoomRules:
    """One room's grants: its lists, the role of anyone else (None: the global default), and whether its Matrix
    power levels give roles too."""

    grants: Grants
    default: Role | None = None
    power_levels: bool = False


class PowerLevels:
    """Matrix power levels of the rooms whose grants follow them (``rooms``), as last seen; see the module."""

    def __init__(self, rooms: Iterable[str] = ()) -> None:
        self.rooms = frozenset(rooms)
        self._levels: dict[str, tuple[dict[str, int], int]] = {}
        self._creators: dict[str, frozenset[str]] = {}

    def wanted(self, room: str) -> bool:
        return room in self.rooms

    def known(self, room: str) -> bool:
        return room in self._levels

    def update(self, room: str, content: Mapping[str, object]) -> None:
        """Take the content of the room's ``m.room.power_levels`` state event (the whole of it, as events carry)."""
        users = content.get("users")
        levels = {
            user: level
            for user, raw in (users.items() if isinstance(users, Mapping) else ())
            if isinstance(user, str) and (level := _level(raw)) is not None
        }
        self._levels[room] = (levels, _level(content.get("users_default")) or 0)

    def created(self, room: str, *, sender: str, content: Mapping[str, object]) -> None:
        """Take the room's ``m.room.create`` event: from room version 12 on, its sender and ``additional_creators``
        are above every level (MSC4289); in earlier versions the power levels say everything."""
        version = content.get("room_version", "1")
        if not isinstance(version, str) or not (
            (version.isdecimal() and int(version) >= 12) or version.startswith("org.matrix.hydra")
        ):
            return
        more = content.get("additional_creators")
        extra = [user for user in more if isinstance(user, str)] if isinstance(more, list) else []
        self._creators[room] = frozenset([sender, *extra])

    def level(self, room: str, user: str) -> int | None:
        """``user``'s power level in ``room``; None while the room's levels are not known."""
        if user in self._creators.get(room, ()):
            return CREATOR_LEVEL
        found = self._levels.get(room)
        if found is None:
            return None
        users, default = found
        return users.get(user, default)


def _level(raw: object) -> int | None:
    """A power level as the spec has it (an integer; older rooms may hold one as a string of digits)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.lstrip("-").isdecimal():
        return int(raw)
    return None


@dataclass(frozen=True, slots=True)
class RoleBook:
    """Every role of a bot: the global lists, each room's rules, the power levels rooms follow."""

    grants: Grants
    default: Role = Role.VIEWER
    rooms: Mapping[str, RoomRules] = field(default_factory=dict)
    levels: PowerLevels = field(default_factory=PowerLevels)

    @classmethod
    def of(
        cls,
        *,
        operators: Iterable[str],
        viewers: Iterable[str],
        default: str,
        admins: Iterable[str] = (),
        rooms: Mapping[str, RoomRules] | None = None,
    ) -> RoleBook:
        rooms = dict(rooms or {})
        levels = PowerLevels(room for room, rules in rooms.items() if rules.power_levels)
        grants = Grants.of(admins=admins, operators=operators, viewers=viewers)
        return cls(grants=grants, default=Role(default), rooms=rooms, levels=levels)

    def rules_of(self, room: str) -> tuple[str, RoomRules] | None:
        """The rules of ``room`` and the key they are under: its id, or a Slack channel id alone (``C123`` for
        the room ``T1/C123``)."""
        for key in (room, room.rsplit("/", 1)[-1]):
            rules = self.rooms.get(key)
            if rules is not None:
                return key, rules
        return None

    def role_for(self, user: str, room: str | None = None) -> Role:
        """``user``'s role in ``room`` now (None: wherever no room's grants apply)."""
        found = self.rules_of(room) if room is not None else None
        if found is None:
            return self.grants.listed(user) or self.default
        key, rules = found
        listed = rules.grants.listed(user)
        if listed is not None:
            return listed
        default = rules.default or self.default
        if rules.power_levels:
            level = self.levels.level(key, user)
            if level is not None and level >= ADMIN_LEVEL:
                return Role.ADMIN
            if level is not None and level >= OPERATOR_LEVEL:
                return Role.OPERATOR
        return default

    def invite_role(self, user: str, room: str) -> Role:
        """The role that decides an invite to ``room`` from ``user``: the room's, except that a room following
        power levels the bot cannot read yet (it has not joined) takes the global lists for the people its own
        lists do not name."""
        found = self.rules_of(room)
        if found is not None and found[1].power_levels and not self.levels.known(found[0]):
            if found[1].grants.listed(user) is None:
                return self.role_for(user)
        return self.role_for(user, room)
