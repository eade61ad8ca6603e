"""The TUI's first page, fetched by a child process while the first frame paints.

``petstore`` (the program) forks before it imports Textual or starts any thread. The child
loads the settings, the client and the sandbox (pydantic, httpx, the service: most of
start-up), runs the first ``/list`` the main screen runs, and writes that page's cells (the
command layer's view of each pet, from which the table makes its rows as for the session's
lists) and the environment to a pipe as a :class:`tui.preview.Preview` in JSON, then exits.
Meanwhile the app paints its first frame, shows the rows when they come, and builds its own
session as before; the session's first list replaces the rows. On a machine with a second CPU
the two run side by side. Nothing of the app's process changes (no signal, no scheduling).

No child (the app loads alone): on one CPU, off Linux (a fork without exec is not safe on
macOS, whose system libraries start threads; Windows has none), in a process that already runs
a second thread, for callers in-process, and with ``--sandbox-reset`` (the app resets the data
first). The child obeys ``[tui] preview = false``. What the child cannot do (a bad config, an
unreachable server, a refused key) ends it without a word: the app's own start-up says it. The
child writes nothing to the terminal, and never outlives the app (:meth:`PreviewProcess.stop`)
nor, if the app is killed, :data:`CHILD_DEADLINE`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from bot_commands.policy import Actor
    from bot_commands.results import EnvInfo, Result
    from petstore_cli.settings.model import Settings
    from tui.preview import Preview

#: ``[tui] preview`` in the environment: read before forking (pydantic reads it again in the child).
PREVIEW_VARIABLE = "PETSTORE_TUI__PREVIEW"
#: Seconds after which the child ends itself (an app killed with SIGKILL cannot stop it).
CHILD_DEADLINE = 10


def cpu_count() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worth_forking(args: argparse.Namespace | None) -> bool:
    """Linux, one thread, a second CPU to run on, and nothing that the app must do before the data is read."""
    if sys.platform != "linux" or getattr(args, "sandbox_reset", False):
        return False
    if os.environ.get(PREVIEW_VARIABLE, "").strip().lower() in {"0", "false", "no", "off"}:
        return False  # the setting given in the environment (a config file's, the child reads)
    return threading.active_count() == 1 and cpu_count() >= 2


def fork_preview(args: argparse.Namespace | None) -> PreviewProcess | None:
    """Fork the child (see the module docstring); None when it is not worth it or cannot be. Call before
    Textual is imported. ``args`` None: bare ``petstore`` (the child parses its empty command line)."""
    if not worth_forking(args):
        return None
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process left: the app loads alone
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.close(read_end)
            code = _child(args, write_end)
        finally:  # whatever happened (an exception ends here unprinted: the app's start-up reports problems)
            os._exit(code)
    os.close(write_end)
    return PreviewProcess(pid=pid, fd=read_end)


class PreviewProcess:
    """The app's side: the child's pid and the pipe's read end (a plain class: the first frame imports it)."""

    def __init__(self, *, pid: int, fd: int) -> None:
        self.pid, self.fd = pid, fd
        self._reaped = False

    async def wait(self) -> Preview | None:
        """The child's preview (None: it had none); read without blocking the event loop."""
        import asyncio
        import json

        from tui.preview import Preview

        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(self.fd, "rb", buffering=0)
        )
        try:
            data = await reader.read()
        finally:
            transport.close()
        self._reap()  # it wrote and ended (or died): the pipe closes as it exits
        if not data:
            return None
        try:
            return Preview.from_json(json.loads(data))
        except (ValueError, TypeError, KeyError):  # a preview is a nicety: the session's list comes anyway
            return None

    def stop(self) -> None:
        """End the child if it still runs (the app is done) and reap it; idempotent."""
        if not self._reaped:
            with contextlib.suppress(ProcessLookupError):  # already gone
                os.kill(self.pid, signal.SIGKILL)
            self._reap()

    def _reap(self) -> None:
        if not self._reaped:
            with contextlib.suppress(ChildProcessError):  # reaped by someone else
                os.waitpid(self.pid, 0)
            self._reaped = True


def _child(given: argparse.Namespace | None, fd: int) -> int:
    """In the child: the preview, written to ``fd``; returns the exit code. Silent: stdio is /dev/null."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(devnull, std)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the app's to handle
    signal.alarm(CHILD_DEADLINE)  # default action: the child ends
    import asyncio
    import json

    from .tui_start import arguments, checked_settings, session_actor

    args = arguments(given)
    settings = checked_settings(args)[0].settings  # what the app would refuse to start with ends here
    if not settings.tui.preview:
        return 0
    preview = asyncio.run(_first_page(settings, actor=session_actor(args)))
    if preview is None:
        return 1
    data = memoryview(json.dumps(preview.to_json()).encode())
    while data:
        data = data[os.write(fd, data) :]
    return 0


async def _first_page(settings: Settings, *, actor: Actor | None = None) -> Preview | None:
    """The main screen's first list (All, the configured page size), as :func:`page_preview` shows it, run by the
    session's own actor (a browser session's person without the viewer role sees no preview either)."""
    from tui.controller import list_line

    from .compose import compose

    # A read writes no audit line: the child leaves the log to the app.
    quiet = settings.model_copy(update={"audit": settings.audit.model_copy(update={"path": None})})
    session = compose(quiet).session(actor=actor)
    outcome = await session.run(list_line(None, settings.ui.page_size))
    return page_preview(outcome.result, session.env)


def page_preview(result: Result | None, env: EnvInfo) -> Preview | None:
    """A list's page as the table's (key, cells) and its env; None for anything else. No Rich here:
    the app, which has it loaded, makes the rows."""
    from bot_commands.results import PetList
    from bot_commands.views import pet_cells
    from tui.preview import EnvLabel, PlainCell, Preview

    if not isinstance(result, PetList):
        return None
    rows = tuple(
        (str(pet.id), tuple(PlainCell(cell.text, cell.style) for cell in pet_cells(pet))) for pet in result.pets
    )
    label = EnvLabel(env=env.env, base_url=env.base_url, masked_key=env.masked_key, read_only=env.read_only)
    return Preview(status=result.status, rows=rows, env=label)
