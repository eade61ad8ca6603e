"""Helpers for Textual Pilot tests, shared by tests/tui and tests/reliability."""

from __future__ import annotations

import contextlib
from typing import Any

from textual.worker import WorkerError


async def settle(pilot: Any) -> None:
    """Let every worker finish (or be cancelled) and the screen catch up (no sleeps)."""
    for _ in range(3):
        for worker in list(pilot.app.workers):
            with contextlib.suppress(WorkerError):
                await worker.wait()
        await pilot.pause()
