"""Role resolution per (room, user): the global lists, a room's own grants, Matrix power levels, invites."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot_commands.policy import Role
from petstore_bot.roles import Grants, PowerLevels, RoleBook, RoomRules
from petstore_bot.rules import role_book

from .service import bot_settings

ANN, BEN, CID, DOT = "@ann:t", "@ben:t", "@cid:t", "@dot:t"
A, B, P = "!a:t", "!b:t", "!levels:t"


def book(default: str = "viewer") -> RoleBook:
    rooms = {
        A: RoomRules(grants=Grants.of(operators=[BEN], viewers=[ANN])),
        B: RoomRules(grants=Grants.of(admins=[CID]), default=Role.NONE),
        P: RoomRules(grants=Grants.of(viewers=[DOT]), power_levels=True),
        "C9": RoomRules(grants=Grants.of(admins=[BEN])),
    }
    return RoleBook.of(admins=[CID], operators=[ANN], viewers=[BEN], default=default, rooms=rooms)


def test_the_global_lists_apply_where_a_room_has_no_grants_of_its_own() -> None:
    roles = book()
    assert [roles.role_for(user, "!other:t") for user in (ANN, BEN, CID, DOT)] == [
        Role.OPERATOR,
        Role.VIEWER,
        Role.ADMIN,
        Role.VIEWER,
    ]
    assert roles.role_for(ANN) is Role.OPERATOR  # no room at all: the global lists
    assert book(default="none").role_for(DOT, "!other:t") is Role.NONE


def test_a_rooms_grants_replace_the_global_ones_there() -> None:
    roles = book()
    assert roles.role_for(ANN, A) is Role.VIEWER  # operator everywhere else, viewer in room A
    assert roles.role_for(BEN, A) is Role.OPERATOR  # viewer everywhere else, operator in room A
    assert roles.role_for(CID, A) is Role.VIEWER  # an admin elsewhere is nobody special here: the default role
    assert roles.role_for(CID, B) is Role.ADMIN
    assert roles.role_for(ANN, B) is Role.NONE  # room B's default_role
    assert roles.role_for(ANN, "T1/C9") is Role.VIEWER and roles.role_for(BEN, "T1/C9") is Role.ADMIN  # Slack


def test_a_list_names_the_highest_role() -> None:
    grants = Grants.of(admins=[ANN], operators=[ANN, BEN], viewers=[ANN, BEN, CID])
    assert [grants.listed(user) for user in (ANN, BEN, CID, DOT)] == [Role.ADMIN, Role.OPERATOR, Role.VIEWER, None]


@pytest.mark.parametrize(
    ("level", "role"),
    [
        (100, Role.ADMIN),
        (150, Role.ADMIN),
        (99, Role.OPERATOR),
        (50, Role.OPERATOR),
        (49, Role.VIEWER),
        (0, Role.VIEWER),
    ],
)
def test_power_levels_give_roles_in_a_room_that_follows_them(level: int, role: Role) -> None:
    roles = book()
    roles.levels.update(P, {"users": {ANN: level}, "users_default": 0})
    assert roles.role_for(ANN, P) is role


def test_power_levels_count_as_they_change_and_lists_win_over_them() -> None:
    roles = book()
    assert roles.levels.wanted(P) and not roles.levels.wanted(A)
    assert roles.role_for(ANN, P) is Role.VIEWER  # levels not known yet: the default role
    roles.levels.update(P, {"users": {ANN: 50, DOT: 100}, "users_default": 0})
    assert roles.role_for(ANN, P) is Role.OPERATOR
    assert roles.role_for(DOT, P) is Role.VIEWER  # named in the room's lists: that role, whatever the level
    roles.levels.update(P, {"users": {ANN: "100"}, "users_default": 50})  # a string level, as older rooms hold
    assert roles.role_for(ANN, P) is Role.ADMIN and roles.role_for(BEN, P) is Role.OPERATOR
    roles.levels.update(P, {"users": {ANN: True, BEN: "high"}})  # not levels: ignored
    assert roles.role_for(ANN, P) is Role.VIEWER and roles.role_for(BEN, P) is Role.VIEWER


def test_levels_of_a_room_are_none_until_seen() -> None:
    levels = PowerLevels([P])
    assert levels.level(P, ANN) is None and not levels.known(P)
    levels.update(P, {"users_default": 10})
    assert levels.level(P, ANN) == 10 and levels.known(P)


def test_an_invite_goes_by_the_rooms_grants_where_known() -> None:
    roles = book()
    assert roles.invite_role(ANN, A) is Role.VIEWER and roles.invite_role(BEN, A) is Role.OPERATOR
    assert roles.invite_role(ANN, "!unknown:t") is Role.OPERATOR
    # A room that follows power levels the bot cannot read before it joins: its lists, else the global ones.
    assert roles.invite_role(ANN, P) is Role.OPERATOR and roles.invite_role(DOT, P) is Role.VIEWER
    roles.levels.update(P, {"users": {}, "users_default": 0})
    assert roles.invite_role(ANN, P) is Role.VIEWER


def test_the_settings_make_the_role_book(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[bot]\ndefault_role = "none"\n'
        f'[bot.roles]\nadmins = ["{CID}"]\noperators = ["{ANN}"]\n'
        f'[bot.rooms."{A}"]\noperators = ["{BEN}"]\ndefault_role = "viewer"\n'
        f'[bot.rooms."{P}"]\npower_levels = true\n',
        encoding="utf-8",
    )
    roles = role_book(bot_settings(config))
    assert roles.role_for(CID, "!x:t") is Role.ADMIN and roles.role_for(BEN, "!x:t") is Role.NONE
    assert roles.role_for(BEN, A) is Role.OPERATOR and roles.role_for(ANN, A) is Role.VIEWER
    assert roles.levels.rooms == {P} and roles.role_for(ANN, P) is Role.NONE


@pytest.mark.parametrize(
    ("version", "creator_role"), [("12", Role.ADMIN), ("org.matrix.hydra.11", Role.ADMIN), ("10", Role.VIEWER)]
)
def test_creators_of_a_room_of_version_12_are_admins_whatever_the_levels(version: str, creator_role: Role) -> None:
    roles = book()
    roles.levels.created(P, sender=ANN, content={"room_version": version, "additional_creators": [BEN, 7]})
    roles.levels.update(P, {"users": {CID: 100}, "users_default": 0})  # creators are in no users list from v12
    assert roles.role_for(ANN, P) is creator_role and roles.role_for(BEN, P) is creator_role
    assert roles.role_for(CID, P) is Role.ADMIN
