"""The rules of the bot in chat, the same on every platform: its policy, its role book, whom it joins, ``!sleep``.

Built from the ``[bot]`` settings alone (no chat SDK, no service): the runtime gives them to every core and every
transport it runs.
"""

from __future__ import annotations

import asyncio

from bot_commands.commands import CHAT_SLEEP_MAX
from bot_commands.errors import Forbidden
from bot_commands.policy import Policy, Role
from petstore_os.records import replace

from .roles import Grants, RoleBook, RoomRules
from .settings import BotSettings

__all__ = ["CHAT_HISTORY", "accept_invite", "bot_policy", "chat_sleep", "role_book", "server_role_rooms"]

#: Commands remembered per chat session (chat has no /history; enough to look into a conversation, bounded for a
#: bot that runs for months with thousands of people).
CHAT_HISTORY = 100


def bot_policy(base: Policy, bot: BotSettings, *, env: str = "") -> Policy:
    """The rules in chat: writes confirmed later by code (unless turned off, never on production), approved by a
    second person on the environments ``[bot] approvals`` names, no terminal."""
    return replace(
        base, deferred=True, terminal=False, confirm_writes=bot.confirm_writes, approval=env in bot.approvals
    )


def role_book(bot: BotSettings) -> RoleBook:
    """The roles of ``[bot.roles]`` and ``[bot.rooms."<room id>"]``; a room's table that grants no role (only its
    ``approvers``, say) leaves the global roles in force there. A room whose platform section says its roles follow
    the chat server's (:func:`server_role_rooms`) and that has no table of its own follows them, the lists first."""
    rooms = {
        room: RoomRules(
            grants=Grants.of(admins=grants.admins, operators=grants.operators, viewers=grants.viewers),
            default=Role(grants.default_role) if grants.default_role else None,
            power_levels=grants.power_levels,
        )
        for room, grants in bot.rooms.items()
        if grants.admins or grants.operators or grants.viewers or grants.default_role or grants.power_levels
    }
    roles = bot.roles
    everywhere = Grants.of(admins=roles.admins, operators=roles.operators, viewers=roles.viewers)  # the lists win
    for room in server_role_rooms(bot):
        rooms.setdefault(room, RoomRules(grants=everywhere, power_levels=True))
    return RoleBook.of(
        admins=roles.admins, operators=roles.operators, viewers=roles.viewers, default=bot.default_role, rooms=rooms
    )


def server_role_rooms(bot: BotSettings) -> tuple[str, ...]:
    """The rooms whose roles a platform section says follow the chat server's (its ``rooms_with_server_roles``: XMPP
    rooms with ``roles_from_affiliations``), as room identities."""
    sections = (getattr(bot, name) for name in type(bot).model_fields)
    return tuple(room for section in sections for room in getattr(section, "rooms_with_server_roles", ()))


def accept_invite(roles: RoleBook, inviter: str, direct: bool, room: str) -> bool:
    """Whom the bot joins: a direct chat with anyone who has a role (viewers too: they may read there), a room
    from an operator or admin only (a room is a team's, and the bot answers everyone in it); in a room with grants
    of its own, by those (:meth:`~petstore_bot.roles.RoleBook.invite_role`)."""
    role = roles.invite_role(inviter, room)
    return role in (Role.OPERATOR, Role.ADMIN) or (direct and role is not Role.NONE)


async def chat_sleep(seconds: float) -> None:
    """``!sleep`` for demos, refused beyond CHAT_SLEEP_MAX: anyone in a room (even role none) could stall the bot."""
    if seconds > CHAT_SLEEP_MAX:
        raise Forbidden(f"/sleep in chat is at most {CHAT_SLEEP_MAX:g} s: a pause holds your next commands")
    await asyncio.sleep(seconds)
