"""Confirmation of writes on production, asked in the TUI with a modal.

The CLI builds the session before the app, so it passes a :class:`TuiConfirm`
as the session's ``confirm`` and the same object to the app, which attaches
itself::

    confirm = TuiConfirm()
    session = CommandSession(client, env=env, confirm=confirm)
    PetStoreApp(session=session, confirm=confirm).run()
"""

from __future__ import annotations

import asyncio
from typing import Any

from .screens.confirm import ConfirmScreen


class TuiConfirm:
    """Async ``confirm(question) -> bool`` for ``CommandSession``; False until attached."""

    def __init__(self) -> None:
        self.app: Any = None

    def attach(self, app: Any) -> None:
        self.app = app

    async def __call__(self, question: str) -> bool:
        if self.app is None:
            return False
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def done(value: bool | None) -> None:
            if not answer.done():
                answer.set_result(bool(value))

        self.app.push_screen(ConfirmScreen(question), done)
        return await answer
