"""The TUI's help offers only what works in it (the web face's browser sessions are this TUI with their own policy):
no /watch /every /schedules /unschedule, which need a chat bot's room; /audit in a browser does not point at a file
of the host."""

from __future__ import annotations

from pilot_support import settle
from textual.widgets import RichLog

from bot_commands.policy import Policy
from bot_commands.session import CommandSession
from petstore_os.records import replace
from tui.app import PetStoreApp

CHAT_ROOM_ONLY = ("/watch", "/unwatch", "/watches", "/every", "/schedules", "/unschedule")


def log_text(app: PetStoreApp) -> str:
    return "\n".join(strip.text for strip in app.main_screen.query_one(RichLog).lines)


async def test_help_whoami_and_the_palette_offer_only_what_the_tui_can_run(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await app.main_screen.run_line("/help")
        await app.main_screen.run_line("/whoami")
        await settle(pilot)
        shown = log_text(app)
        assert "/list" in shown and "/history" in shown
        assert [name for name in CHAT_ROOM_ONLY if name in shown] == []
        assert {c.name for c in app.main_screen.session.allowed_commands()}.isdisjoint(
            name.lstrip("/") for name in CHAT_ROOM_ONLY
        )


async def test_a_browser_session_is_not_sent_to_read_a_host_file(harness) -> None:
    made = harness.session()  # with the policy petstore_cli.tui_start builds for a web face's session:
    session = CommandSession.from_parts(replace(made.parts, policy=Policy(host_files=False)))
    app = harness.app(session)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await app.main_screen.run_line("/audit")
        await app.main_screen.run_line("/every 10m /list")
        await settle(pilot)
        shown = log_text(app)
        assert "/audit is for chat rooms (their admins)" in shown and "audit log file" not in shown
        assert "/every works in chat rooms only" in shown
