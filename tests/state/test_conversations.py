"""petstore_state.conversations on SQLite and on a real PostgreSQL database of each test's own: rate windows counted
once across two connections (two bot processes), and ``$last`` per conversation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from petstore_state import Database, open_database
from petstore_state.conversations import ConversationStore


def test_a_rate_window_slides_and_refuses_once_loudly(database: Database) -> None:
    now = [1000.0]
    store = ConversationStore(database, clock=lambda: now[0])

    async def scenario() -> None:
        answers = [await store.admit("@ann:x", count=2, seconds=10) for _ in range(4)]
        assert [(a.admitted, a.first_refusal) for a in answers] == [
            (True, False),
            (True, False),
            (False, True),
            (False, False),
        ]
        assert (await store.admit("@bob:x", count=2, seconds=10)).admitted  # per person
        now[0] += 10
        assert (await store.admit("@ann:x", count=2, seconds=10)).admitted
        assert (await store.admit("@ann:x", count=2, seconds=10)).admitted
        assert (await store.admit("@ann:x", count=2, seconds=10)).first_refusal  # told again after an accepted one

    asyncio.run(scenario())


def test_last_is_per_conversation(database: Database) -> None:
    store = ConversationStore(database)

    async def scenario() -> None:
        assert await store.last_pet(where="matrix:!a:x", user="@ann:x") is None
        await store.remember_pet(where="matrix:!a:x", user="@ann:x", pet_id=7)
        await store.remember_pet(where="matrix:!a:x", user="@ann:x", pet_id=9)
        await store.remember_pet(where="matrix:!b:x", user="@ann:x", pet_id=3)
        assert await store.last_pet(where="matrix:!a:x", user="@ann:x") == 9
        assert await store.last_pet(where="matrix:!b:x", user="@ann:x") == 3
        assert await store.last_pet(where="matrix:!a:x", user="@bob:x") is None

    asyncio.run(scenario())


def test_two_processes_share_one_window(state_url: str, tmp_path: Path) -> None:
    """Two connections admit the same person at once: exactly ``count`` commands get through."""
    first, second = open_database(state_url, state_dir=tmp_path), open_database(state_url, state_dir=tmp_path)
    try:
        one, two = ConversationStore(first), ConversationStore(second)

        async def scenario() -> None:
            answers = await asyncio.gather(
                *(store.admit("@ann:x", count=5, seconds=3600) for _ in range(6) for store in (one, two))
            )
            assert sum(a.admitted for a in answers) == 5
            assert sum(a.first_refusal for a in answers) == 1

        asyncio.run(scenario())
    finally:
        first.close()
        second.close()
