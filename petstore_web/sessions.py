"""One browser session = one ``petstore tui`` process (textual-serve's AppService, in a process group of its own).

textual-serve starts the app through a shell and, to stop it, asks it to quit and waits for as long as it takes.
Here the app is started without a shell, in a new session (its own process group), and stopping is bounded:
the quit request, then SIGKILL to the group (by its id, the app's PID) after ``grace`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from asyncio.subprocess import Process
from collections.abc import Awaitable, Callable, Sequence

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from .access import Person

#: Seconds an app has to quit when asked before its process group is killed.
GRACE = 3.0


# textual-serve has no public way to start the app process: AppProcess overrides AppService's private hooks
# (_build_environment, _open_app_process) and sets its _process and _stdin, so pyproject.toml
# pins textual-serve to its minor version (tests/test_public_apis.py checks both).
class AppProcess(AppService):
    """The app of one browser session: ``argv`` run with the web driver, relaying to the websocket; ``person``
    is who logged in (only they may fetch what the app delivers)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        person: Person,
        write_bytes: Callable[[bytes], Awaitable[None]],
        write_str: Callable[[str], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
        downloads: DownloadManager,
        env: dict[str, str],
        grace: float = GRACE,
    ) -> None:
        super().__init__(
            " ".join(argv),
            write_bytes=write_bytes,
            write_str=write_str,
            close=self._close_when_ended,
            download_manager=downloads,
        )
        self._close_session = close
        self.person = person
        self.argv = list(argv)
        self.env = env
        self.grace = grace

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        return {**environment, **self.env}

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def run(self) -> None:
        """Relay the app's output until it ends; then its session ends too (quit, crashed or never started)."""
        await super().run()
        await self.remote_close()

    async def _close_when_ended(self) -> None:
        """Close the session once the app's process has ended and been reaped: textual-serve closes on the app's
        exit message, a moment before the process is gone. One that lingers past ``grace`` is killed."""
        process = self._process
        if process is not None and process.returncode is None:
            try:
                await asyncio.wait_for(process.wait(), self.grace)
            except TimeoutError:
                self._kill_group(process.pid)
                await process.wait()
        await self._close_session()

    async def stop(self) -> None:
        """Ask the app to quit; after ``grace`` seconds kill its process group. Returns when it has ended."""
        process = self._process
        if process is None:
            return
        await self._download_manager.cancel_app_downloads(self.app_service_id)  # a download in flight ends now
        try:
            await asyncio.wait_for(asyncio.shield(self._quit()), self.grace)
        except TimeoutError:
            self._kill_group(process.pid)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), self.grace)
        if process.returncode is None:  # pragma: no cover - SIGKILL is not ignored
            self._kill_group(process.pid)
            await process.wait()
        task, self._task = self._task, None
        if task is not None:
            await task

    async def _quit(self) -> None:
        if self._process is not None and self._process.returncode is None:
            await self.send_meta({"type": "quit"})
        if self._task is not None:
            await asyncio.shield(self._task)
        if self._process is not None:
            await self._process.wait()

    @staticmethod
    def _kill_group(pid: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # the group's id is the app's PID (start_new_session)


class SessionLimit:
    """At most ``limit`` app processes at once."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.apps: set[AppProcess] = set()

    @property
    def full(self) -> bool:
        return len(self.apps) >= self.limit

    async def stop_all(self) -> None:
        await asyncio.gather(*(app.stop() for app in list(self.apps)), return_exceptions=True)
