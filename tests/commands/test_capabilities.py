"""Help offers only what works here: a command that needs what a face does not give (a chat bot's room, for
/watch /every ...) is left out of /help, /whoami and completion, and typed anyway says where it works; in a browser
session /audit does not send its person to a file of the host."""

from __future__ import annotations

import pytest

from bot_commands.notify import NOTIFY_COMMANDS
from bot_commands.policy import Actor, Capability, Policy, Role
from bot_commands.results import Help, WhoAmI
from bot_commands.session import CommandSession
from petstore_os.records import replace


def _names(result: object) -> set[str]:
    assert isinstance(result, Help | WhoAmI)
    names = [entry.name for entry in result.entries] if isinstance(result, Help) else list(result.commands)
    return {name.lstrip("/") for name in names}


async def test_help_whoami_and_completion_leave_out_what_needs_a_chat_room(session: CommandSession) -> None:
    assert session.capabilities == frozenset()
    for line in ("/help", "/whoami"):
        shown = _names((await session.run(line)).result)
        assert "list" in shown and shown.isdisjoint(NOTIFY_COMMANDS), (line, shown & NOTIFY_COMMANDS)
    assert {c.name for c in session.allowed_commands()}.isdisjoint(NOTIFY_COMMANDS)
    assert not any(word.lstrip("/").startswith(("wat", "sched", "unsch")) for word in session.complete("/w"))


@pytest.mark.parametrize("line", ["/watch", "/unwatch sold", "/watches", "/every 10m /list", "/schedules"])
async def test_typed_anyway_it_says_where_it_works_before_any_role(session: CommandSession, line: str) -> None:
    nobody = Actor(id="local:nobody", role=Role.NONE, where="terminal")  # no role would make it work here
    session = CommandSession.from_parts(replace(session.parts, actor=nobody))
    outcome = await session.run(line)
    assert outcome.failure is not None and outcome.failure.kind == "forbidden"
    name = line.split()[0].lstrip("/")
    assert outcome.failure.message == Capability.ROOM.missing(name)
    assert outcome.failure.message.startswith(f"/{name} works in chat rooms only")


async def test_audit_in_a_browser_session_does_not_point_at_a_file_of_the_host(session: CommandSession) -> None:
    terminal = await session.run("/audit")
    assert terminal.failure is not None and "read the audit log file itself" in terminal.failure.message
    browser_session = CommandSession.from_parts(replace(session.parts, policy=Policy(host_files=False)))
    browser = await browser_session.run("/audit")  # a web face's session: its person is in a browser
    assert browser.failure is not None
    assert browser.failure.message == "/audit is for chat rooms (their admins)"
