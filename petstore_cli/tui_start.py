"""``petstore`` / ``petstore tui``: the first frame before the libraries, the session behind it.

Imports Textual and the TUI's first frame only (``tests/test_cli.py`` checks); settings
(pydantic), the client (httpx), the command layer's models and the
sandbox load in :func:`build`, which the app runs in a thread worker after its first paint.
A bad configuration raises :class:`tui.startup.StartupError`: the app ends and ``petstore``
prints its one line and exits 2, as before. The module itself imports no Textual:
:mod:`petstore_cli.tui_preview`'s child checks the settings with :func:`checked_settings` too.
"""

from __future__ import annotations

import sys
from functools import partial
from typing import TYPE_CHECKING

from bot_commands.history import HISTORY_FILE
from petstore_cli.settings.paths import default_data_dir
from petstore_os import tighten
from tui.startup import PreviewSource, Started, StartupError

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from bot_commands.policy import Actor
    from petstore_cli.settings.load import LoadedSettings

#: The TUI's state file in the data dir: the theme chosen in it.
TUI_STATE_FILE = "tui-state.json"


def start_tui(args: argparse.Namespace | None, *, preview: PreviewSource | None = None) -> int:
    """Run the TUI (see the module docstring); returns the exit code. ``args`` None: bare ``petstore``, no flags
    (parsed behind the first frame, :func:`arguments`). ``preview``: the first page, fetched by
    :func:`petstore_cli.tui_preview.fork_preview` while the session loads."""
    from tui.run import run_tui
    from tui.themes import unknown_theme

    flag_theme = getattr(args, "theme", None)
    problem = unknown_theme(flag_theme) if flag_theme else None
    if problem is not None:
        if preview is not None:
            preview.stop()
        print(f"petstore: {problem}", file=sys.stderr)
        return 2
    # A browser session neither reads nor writes the host's prompt history (one person's commands are not the
    # next one's) nor its remembered theme: its state lasts as long as the session.
    data_dir = None if in_browser(args) else default_data_dir()
    return run_tui(
        start=partial(build, args),
        theme=flag_theme,
        history_path=data_dir / HISTORY_FILE if data_dir else None,
        theme_memory_path=data_dir / TUI_STATE_FILE if data_dir else None,
        preview=preview,
    )


def arguments(args: argparse.Namespace | None) -> argparse.Namespace:
    """``args``, or bare ``petstore``'s command line parsed now (argparse is not the first frame's)."""
    if args is not None:
        return args
    from .options import parse

    return parse([])


def in_browser(args: argparse.Namespace | None) -> bool:
    """This TUI is a browser session of ``petstore web`` (which names its person with ``--web-actor``)."""
    return bool(getattr(args, "web_actor", None))


def session_actor(args: argparse.Namespace) -> Actor | None:
    """Who runs this TUI's commands: the browser session's person (``web:NAME`` with the role ``petstore web``
    gave), or None (the person at this terminal)."""
    if not in_browser(args):
        return None
    from bot_commands.policy import Actor, Role

    return Actor(id=f"web:{args.web_actor}", role=Role(getattr(args, "web_role", "operator")), where="web")


def checked_settings(args: argparse.Namespace) -> tuple[LoadedSettings, str | None]:
    """The settings and the theme they name (None: the flag's, or none); StartupError: the one line."""
    from bot_commands.errors import CommandError
    from petstore_api.errors import PetStoreError

    from .faces import load

    try:
        loaded = load(args)
    except (PetStoreError, CommandError) as exc:
        raise StartupError(str(exc)) from exc
    settings = loaded.settings
    config_theme = None if getattr(args, "theme", None) else settings.tui.theme or settings.ui.theme
    if config_theme:
        from tui.themes import unknown_theme

        problem = unknown_theme(config_theme)
        if problem is not None:
            raise StartupError(problem)
    return loaded, config_theme


def build(given: argparse.Namespace | None) -> Started:
    """Settings -> composition -> session (in the app's start-up worker); ``given`` None: bare ``petstore``.
    StartupError: the one line."""
    from bot_commands.errors import CommandError
    from bot_commands.policy import Policy
    from petstore_api.errors import PetStoreError
    from tui.confirm import TuiConfirm
    from tui.run import make_player

    from .compose import compose
    from .faces import configure_logging

    args = arguments(given)
    loaded, config_theme = checked_settings(args)
    settings = loaded.settings
    said: list[str] = []  # files found open to others: shown in the TUI (stderr is the app's screen)
    if not in_browser(args):  # a browser session does not use the host's prompt history
        tighten(default_data_dir() / HISTORY_FILE, warn=said.append)
    try:
        player = make_player(
            getattr(args, "play", None), getattr(args, "delay", None), bool(getattr(args, "exit", False))
        )
        configure_logging(getattr(args, "verbose", None) or 0)
        composition = compose(
            settings,
            sandbox_reset=bool(getattr(args, "sandbox_reset", False)),
            policy=Policy(host_files=False) if in_browser(args) else None,
            warn=said.append,
        )
    except (PetStoreError, CommandError) as exc:
        raise StartupError(str(exc)) from exc
    confirm = TuiConfirm()  # writes that need confirming ask in a modal first
    return Started(
        session=composition.session(confirm=confirm, actor=session_actor(args)),
        aclose=composition.aclose,
        confirm=confirm,
        page_size=settings.ui.page_size,
        refresh_interval=settings.tui.refresh_interval,
        theme=config_theme,
        player=player,
        warnings=(*loaded.warnings, *said),
    )
