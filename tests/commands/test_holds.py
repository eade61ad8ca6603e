"""The rules of held writes (bot_commands.pending.refusal), written once: who may confirm, approve, deny or cancel
what, and where, with the grants of the request's room at the time of the decision."""

from __future__ import annotations

from collections.abc import Collection

import pytest

from bot_commands.pending import HeldWrite, Step, in_room, refusal, same_person
from bot_commands.people import People
from bot_commands.policy import Actor, Role, room_of, same_where, where_in
from petstore_os.records import replace

ROOM, OTHER = "matrix:!a:x", "matrix:!b:x"
PEOPLE = People.of({"ann": ["@ann:x", "local:ann", "pg:ann"]})


class Grants:
    """Roles per (user, room); approvers per room."""

    def __init__(self, roles: dict[tuple[str, str], Role], approvers: dict[str, Collection[str]] | None = None):
        self.roles, self.named = roles, approvers or {}

    def role_in(self, user: str, room: str) -> Role:
        return self.roles.get((user, room), Role.VIEWER)

    def approvers(self, room: str) -> Collection[str] | None:
        return self.named.get(room)

    def same(self, one: str, other: str) -> bool:
        return same_person(one, other, people=PEOPLE)

    def names(self, user: str) -> tuple[str, ...]:
        return PEOPLE.names(user)


HELD = HeldWrite(
    code="ABCDEF",
    kind="approve",
    asker="@ann:x",
    role="operator",
    where=ROOM,
    line="/add Rex --category 3",
    what="add pet 'Rex' (category 3)",
    fields=(("name", "Rex"), ("categoryId", "3")),
    env="production",
    created=100.0,
    expires=200.0,
    command="add",
    room=ROOM,
)
OPERATORS = Grants({(user, room): Role.OPERATOR for user in ("@ann:x", "@bob:x") for room in (ROOM, OTHER)})


def decide(
    step: Step, who: str, where: str = ROOM, *, held: HeldWrite = HELD, grants: Grants = OPERATORS
) -> str | None:
    actor = Actor(id=who, role=grants.role_in(who, where), where=where)
    return refusal(held, step=step, actor=actor, now=150.0, authority=grants)


@pytest.mark.parametrize(
    ("step", "who", "where", "expected"),
    [
        ("approve", "@bob:x", ROOM, None),
        ("deny", "@bob:x", ROOM, None),
        ("approve", "@ann:x", ROOM, "own"),
        ("deny", "@ann:x", ROOM, "own"),
        ("confirm", "@ann:x", ROOM, "kind"),
        ("approve", "@bob:x", OTHER, "elsewhere"),
        ("deny", "@bob:x", OTHER, "elsewhere"),
        ("approve", "@bob:x", "terminal", "elsewhere"),
        ("cancel", "@ann:x", ROOM, None),
        ("cancel", "@ann:x", OTHER, "not_yours"),
        ("cancel", "@bob:x", ROOM, "not_yours"),
        ("approve", "local:ann", ROOM, "own"),  # another name of the asker (``[bot.people]``)
        ("approve", "pg:ann", ROOM, "own"),
    ],
)
def test_an_approval_is_decided_by_someone_else_in_its_room(step: Step, who: str, where: str, expected: str) -> None:
    assert decide(step, who, where) == expected


def test_the_rooms_grants_now_decide_for_approver_and_asker() -> None:
    assert decide("approve", "@cy:x") == "approver_role"  # a viewer in the room
    named = Grants(OPERATORS.roles, {ROOM: ["@cy:x"]})
    assert decide("approve", "@bob:x", grants=named) == "not_approver"
    demoted = Grants({("@bob:x", ROOM): Role.OPERATOR})  # ann is a viewer now
    assert decide("approve", "@bob:x", grants=demoted) == "asker_role"
    assert decide("deny", "@bob:x", grants=demoted) is None  # dropping it needs no asker who may write
    terminal = replace(HELD, asker="local:zed", where="terminal")  # no chat name: checked by the terminal
    assert decide("approve", "@bob:x", held=terminal, grants=demoted) is None
    assert decide("approve", "@bob:x", held=replace(HELD, room="")) == "elsewhere"  # not posted yet


def test_a_confirmation_is_its_askers_in_its_room_while_it_waits() -> None:
    held = replace(HELD, kind="confirm", code="ABCD")
    assert decide("confirm", "@ann:x", held=held) is None
    assert decide("confirm", "@bob:x", held=held) == "not_yours"
    assert decide("confirm", "@ann:x", OTHER, held=held) == "not_yours"
    assert decide("approve", "@bob:x", held=held) == "kind"
    assert decide("confirm", "@ann:x", held=held, grants=Grants({})) == "asker_role"
    assert decide("confirm", "@ann:x", held=replace(held, state="approved")) == "decided"
    assert decide("confirm", "@ann:x", held=replace(held, expires=150.0)) == "expired"


def test_a_room_is_its_id_or_a_slack_channel_without_its_team() -> None:
    assert in_room("slack:T1/C1", "slack:C1") and in_room("slack:T1/C1", "slack:T1/C1")
    assert not in_room("slack:T1/C2", "slack:C1") and not in_room("mattermost:T1/C1", "slack:C1")
    assert not in_room("terminal", "terminal") and not in_room(ROOM, "")


@pytest.mark.parametrize(
    ("platform", "room", "where"),
    [
        ("matrix", "!a:x", "matrix:!a:x"),
        ("slack", "T1/C1", "slack:T1/C1"),
        ("irc", "irc:#ops", "irc:#ops"),
        ("irc", "irc:alice", "irc:alice"),  # a private message
        ("xmpp", "xmpp:ops@conference.example.org", "xmpp:ops@conference.example.org"),
    ],
)
def test_a_where_names_its_platform_once_and_gives_back_the_room_its_transport_owns(
    platform: str, room: str, where: str
) -> None:
    assert where_in(platform, room) == where
    assert room_of(where) == room
    assert in_room(where, where_in(platform, room))


def test_the_doubled_where_earlier_versions_stored_is_the_same_place() -> None:
    old, new = "irc:irc:#ops", "irc:#ops"
    assert room_of(old) == room_of(new) == "irc:#ops"  # the room announcements go to, as IRC owns it
    assert same_where(old) == new and same_where("xmpp:xmpp:ops@c.x") == "xmpp:ops@c.x"
    assert in_room(new, old) and in_room(old, new)  # a request bound to the old form is decided in its room
    assert not in_room("irc:#ops", "irc:irc:#dev") and not in_room("irc:#ops", "xmpp:#ops")
    assert room_of("terminal") == "" and same_where("terminal") == "terminal"


def test_a_terminal_askers_role_is_checked_again_under_their_chat_names() -> None:
    """``local:ann`` is ``@ann:x`` ([bot.people]): demoted to viewer in the approvals room, her terminal request is
    refused; a terminal asker with no chat name stands by the terminal's own policy."""
    terminal = replace(HELD, asker="local:ann", where="terminal")
    bob = Actor(id="@bob:x", role=Role.OPERATOR, where=ROOM)
    writer = Grants({("@bob:x", ROOM): Role.OPERATOR, ("@ann:x", ROOM): Role.OPERATOR})
    viewer = Grants({("@bob:x", ROOM): Role.OPERATOR})
    assert refusal(terminal, step="approve", actor=bob, now=150.0, authority=writer) is None
    assert refusal(terminal, step="approve", actor=bob, now=150.0, authority=viewer) == "asker_role"
    stranger = replace(HELD, asker="local:zed", where="terminal")
    assert refusal(stranger, step="approve", actor=bob, now=150.0, authority=viewer) is None
