"""The command session every face drives: lines in, typed results out.

``execute(line)`` expands ``$last``, parses through the registry, runs the
handler and records the outcome (for ``/expect``), the history (for
``/history save``) and the pet ids seen (for completion and ``$last``).
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from petstore_api.errors import PetStoreError
from petstore_api.masking import mask_secret

from . import commands as _commands  # noqa: F401  (registers the commands)
from .completion import complete_words
from .errors import CommandError, ConfirmationRequired, Declined, ReadOnlyError, UsageError
from .expect import Outcome
from .parser import show
from .registry import REGISTRY, Invocation, Registry
from .results import EnvInfo, PetCreated, PetDetail, PetList, Result
from .script import HEADER, HistoryEntry, history_script

__all__ = ["CommandSession", "Outcome", "Confirm"]

Confirm = Callable[[str], Awaitable[bool]]
_LAST = re.compile(r"\$last\b", re.IGNORECASE)
#: Completion offers at most this many recently seen pet ids...
_SEEN_MAX = 1000
#: ... kept as batches (one per result; small ones merged), so a /list costs one tuple.
_SEEN_BATCHES = 64


class CommandSession:
    """State of one conversation with the service, shared by chat, run and the TUI."""

    def __init__(
        self,
        client: Any,
        *,
        env: EnvInfo,
        read_only: bool = False,
        confirm: Confirm | None = None,
        registry: Registry = REGISTRY,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self.client = client
        self.env = env
        self.read_only = read_only
        self.confirm = confirm
        self.registry = registry
        self.sleep = sleep
        self.last_pet_id: int | None = None
        #: The most recent page of /list or /more: /more continues from it.
        self.last_list: PetList | None = None
        self.last_outcome: Outcome | None = None
        self.entries: list[HistoryEntry] = []
        #: Ids of results as they came (batches, newest last); seen_ids orders them on demand.
        self._seen: deque[tuple[int, ...]] = deque(maxlen=_SEEN_BATCHES)
        self._notices: set[str] = set()

    # -- state --------------------------------------------------------------

    @property
    def history(self) -> list[str]:
        """Lines executed (parsed successfully), in order, as typed."""
        return [e.line for e in self.entries]

    @property
    def seen_ids(self) -> list[int]:
        """Pet ids seen in results, most recent last (at most 1,000, each once)."""
        latest: dict[int, None] = {}
        for batch in reversed(self._seen):
            for pet_id in reversed(batch):
                latest.setdefault(pet_id)
            if len(latest) >= _SEEN_MAX:
                break
        return list(reversed(list(latest)[:_SEEN_MAX]))

    def first_notice(self, key: str) -> bool:
        """True the first time ``key`` is noticed in this session."""
        first = key not in self._notices
        self._notices.add(key)
        return first

    # -- lines --------------------------------------------------------------

    def expand(self, line: str, *, strict: bool = True) -> str:
        """``line`` with ``$last`` replaced by the id of the last added/shown pet."""
        if not _LAST.search(line):
            return line.strip()
        if self.last_pet_id is None:
            if not strict:
                return line.strip()
            raise UsageError("$last has no value yet: it is the id of the pet from the most recent /add or /get")
        return _LAST.sub(str(self.last_pet_id), line).strip()

    def parse(self, line: str) -> Invocation:
        """Expand and parse without running (raises UsageError)."""
        return self.registry.parse(self.expand(line))

    def complete(self, text: str) -> list[str]:
        """Whole-line completions of ``text`` (the text before the cursor)."""
        current, words = self.complete_words(text)
        head = text[: len(text) - len(current)]
        return [head + w for w in words]

    def complete_words(self, text: str) -> tuple[str, list[str]]:
        """``(current word, its completions)``, for readline-style completers."""
        ids = [str(i) for i in reversed(self.seen_ids)]
        return complete_words(self.registry, text, ids)

    async def execute(self, line: str) -> Result:
        """Run one line; raises UsageError, CommandError or petstore_api's PetStoreError."""
        text = line.strip()
        try:
            invocation = self.parse(text)
        except UsageError as exc:
            self._record_usage_error(text, exc)
            raise
        cmd = invocation.command
        try:
            result = await cmd.handler(self, invocation.values)
        except (CommandError, PetStoreError) as exc:
            self._record(invocation, text, Outcome(line=invocation.line, error=exc))
            raise
        self._record(invocation, text, Outcome(line=invocation.line, result=result))
        self._learn(result)
        return result

    # -- writes -------------------------------------------------------------

    async def authorize_write(self, what: str) -> None:
        """Refuse in read-only mode; on production, ask ``confirm`` first."""
        if self.read_only:
            raise ReadOnlyError(f"read-only session: refused to {what}; nothing was sent (started with --read-only)")
        if self.env.env != "production":
            return
        if self.confirm is None:
            raise ConfirmationRequired(
                f"refused to {what} on production without confirmation (petstore run needs --yes)"
            )
        if not await self.confirm(f"{what} on PRODUCTION ({show(self.env.base_url, 80)})?"):
            raise Declined(f"not done: {what} was declined")

    # -- history ------------------------------------------------------------

    def history_script_lines(self) -> list[str]:
        return history_script(self.entries)

    def save_history(self, path: str | Path) -> int:
        """Write this session as a replayable script; returns the number of commands."""
        lines = self.history_script_lines()
        target = Path(path).expanduser()
        try:
            target.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {show(str(target), 200)}: {exc.strerror or exc}") from None
        return len(lines)

    # -- bookkeeping --------------------------------------------------------

    def _record_usage_error(self, text: str, exc: UsageError) -> None:
        cmd = self.registry.get(exc.command) if exc.command else None
        if cmd is None or cmd.outcome:
            self.last_outcome = Outcome(line=self.expand(text, strict=False), error=exc)

    def _record(self, invocation: Invocation, text: str, outcome: Outcome) -> None:
        cmd = invocation.command
        if cmd.outcome:
            self.last_outcome = outcome
        if cmd.history:
            self.entries.append(HistoryEntry(line=text, ok=outcome.ok, command=cmd.name))

    def _learn(self, result: Result) -> None:
        if isinstance(result, (PetCreated, PetDetail)):
            self.last_pet_id = result.pet.id
            self._remember((result.pet.id,))
        elif isinstance(result, PetList):
            self.last_list = result
            self._remember(tuple(pet.id for pet in result.pets[-_SEEN_MAX:]))

    def _remember(self, ids: tuple[int, ...]) -> None:
        seen = self._seen
        if seen and len(seen[-1]) + len(ids) <= _SEEN_MAX // 10:
            seen[-1] += ids
        else:
            seen.append(ids)

    def set_api_key(self, key: str) -> None:
        """Use ``key`` from now on (after a 401, say); ``/env`` shows it masked."""
        self.client.set_api_key(key)
        self.env = replace(self.env, masked_key=mask_secret(key))

