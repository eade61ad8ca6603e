"""New pets posted in the rooms that ``!watch``: one poll per filter, announcements through the store's outbox.

:meth:`Watcher.poll` looks once per distinct filter (a status, or every pet) whatever the number of rooms: it
starts at the page where the filter's cursor is (the service orders pets by id and pages with ``rel="next"``),
follows the next links, and hands the pets above the cursor to the store, which queues one announcement per
room and moves the cursor in one transaction. :meth:`Watcher.deliver` posts what is queued, each claimed in the
store first (under the replicas' lease: posted once, by the holder) and queued again when its room refused it. Text
from the service is data: an announcement is a notice, rendered through its view as every reply is.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Protocol

from bot_commands.ports import PetStoreAPI
from petstore_api.errors import PetStoreError
from petstore_api.models import PetPage
from petstore_state.db import StateError
from petstore_state.lease import Lease
from petstore_state.watches import Announcement, Cursor, NewPet, WatchStore

from .chat import Reply
from .replicas import fence_of, may_act
from .replies import notice_reply

__all__ = ["Announce", "Watcher", "announcement_reply"]

log = logging.getLogger("petstore_bot.watch")
#: The page size of a poll (the spec's largest), and the most pages one poll follows (the next poll goes on from
#: there); a filter's first walk, which finds where "new" starts, follows every page (at most START_PAGES).
PAGE_SIZE, MAX_PAGES, START_PAGES = 100, 100, 1_000_000


class Announce(Protocol):
    """A transport's way to post unasked (:meth:`petstore_bot.transport.Transport.announce`): True once the room has
    ``reply``. ``key`` names the post, so one posted again after a crash is the same post where the platform keeps
    keys (transaction ids)."""

    def __call__(self, room: str, reply: Reply, /, *, key: str | None = None) -> Awaitable[bool]: ...


def announcement_reply(announcement: Announcement) -> Reply:
    """``New pet 12: Rex (category 3, available)``; the name and status as the service sent them, shown literally."""
    pet = announcement.pet
    name = str(pet.get("name", ""))
    status = pet.get("status")
    extra = f"category {pet.get('categoryId')}" + (f", {status}" if status is not None else "")
    return notice_reply(f"New pet {announcement.pet_id}: {name} ({extra})")


class Watcher:
    """Polls the service for the filters rooms watch, and delivers what the polls found."""

    def __init__(
        self, *, store: WatchStore, client: PetStoreAPI, announce: Announce, lease: Lease | None = None
    ) -> None:
        self.store = store
        self.client = client
        self.announce = announce
        #: The replicas' lease: each announcement is claimed under it and posted only while it is valid.
        self.lease = lease
        self._failing = False

    async def start_filter(self, status: str) -> Cursor:
        """The filter's cursor, made now if it has none: the highest id there is, so only later pets are news."""
        found = await self.store.cursor(status=status)
        if found is not None:
            return found
        pets, resume_url = await self._walk(status, resume_url=None, pages=START_PAGES)
        first = Cursor(last_id=max((pet.id for pet in pets), default=0), resume_url=resume_url)
        log.debug("watch %s: started after pet %d", status or "all", first.last_id)
        return await self.store.start(status=status, cursor=first)

    async def poll(self) -> int:
        """One look per watched filter; the number of announcements queued. A service or store failure is logged
        (once until it recovers) and the filter is tried again at the next poll."""
        queued = 0
        try:
            for status in await self.store.filters():
                queued += await self._poll_one(status)
        except (PetStoreError, StateError) as exc:
            if not self._failing:
                log.warning("watching for new pets failed (tried again each interval): %s", exc)
            self._failing = True
            return queued
        if self._failing:
            log.info("watching for new pets works again")
        self._failing = False
        return queued

    async def _poll_one(self, status: str) -> int:
        seen = await self.store.cursor(status=status)
        if seen is None:
            await self.start_filter(status)
            return 0
        pets, resume_url = await self._walk(status, resume_url=seen.resume_url, pages=MAX_PAGES)
        queued = await self.store.record(status=status, seen=seen, found=pets, resume_url=resume_url)
        log.debug("watch %s: polled, %d announcements queued", status or "all", queued)
        return queued

    async def _walk(self, status: str, *, resume_url: str | None, pages: int) -> tuple[list[NewPet], str | None]:
        """The pets from ``resume_url`` (or the first page) to the last page (or ``pages`` pages), and the URL of
        the last page read; a next link seen before ends the walk (a service going round in circles)."""
        if resume_url is None:
            page: PetPage | None = await self.client.list_pets(limit=PAGE_SIZE, status=status or None)
        else:
            page = await self.client.next_page(PetPage(pets=[], next_url=resume_url))
        pets: list[NewPet] = []
        seen: set[str] = set()
        for _ in range(pages):
            if page is None:
                break
            pets += [NewPet(id=pet.id, record=_record(pet.to_wire())) for pet in page.pets]
            if page.next_url is None or page.next_url in seen:
                break
            seen.add(page.next_url)
            resume_url = page.next_url
            page = await self.client.next_page(page)
        return pets, resume_url

    async def deliver(self) -> int:
        """Post the queued announcements, each claimed first (under the lease: one holder posts it); the number
        posted. One a room refuses, or that the lease ran out before, is queued again for the next try."""
        posted = 0
        try:
            for announcement in await self.store.unsent():
                if await self.store.claim(announcement, fence=fence_of(self.lease)):
                    posted += await self._post(announcement)
        except StateError as exc:
            log.warning("posting new pets failed (tried again shortly): %s", exc)
        return posted

    async def _post(self, announcement: Announcement) -> int:
        """Post one claimed announcement (1), or give it back to the queue (0)."""
        done = False
        try:
            done = may_act(self.lease) and await self.announce(
                announcement.room, announcement_reply(announcement), key=announcement.key
            )
        finally:
            if not done:
                await self.store.unclaim(announcement)
        return int(done)


def _record(raw: object) -> dict[str, object]:
    return {str(key): value for key, value in raw.items()} if isinstance(raw, dict) else {}
