"""Live refresh (k9s-like, opt-in with ``w``): the loaded list fetched again in the background.

A refresh is not a command the person typed: it reads through the session's client port (the
command layer's :class:`~bot_commands.ports.PetStoreAPI`), so it adds nothing to the log, the
history or ``$last``. The pets pane merges what comes (rows updated in place, new pets at their
place, the cursor on its pet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.ports import PetStoreAPI

#: Seconds between refreshes when the settings say nothing (``[tui] refresh_interval``).
DEFAULT_INTERVAL = 5.0
#: Pets per request of a refresh (the service's largest page).
REFRESH_PAGE = 100
#: Requests one refresh may make at most.
MAX_PAGES = 10


def live_note(interval: float) -> str:
    return f"live: every {interval:g} s (w stops)"


async def relist(client: PetStoreAPI, *, status: str | None, loaded: int) -> list[Any]:
    """The pets of the list as it is now: at least the ``loaded`` first ones and the page after them,
    or every page when there are fewer (at most :data:`MAX_PAGES` requests)."""
    pets: list[Any] = []
    pages = 0
    async for page in client.iter_pages(limit=REFRESH_PAGE, status=status):
        pets.extend(page.pets)
        pages += 1
        if len(pets) > loaded + REFRESH_PAGE or pages >= MAX_PAGES:
            break
    return pets
