"""The command session every face drives: lines in, one :class:`Outcome` out.

``run(line)`` expands ``$last``, parses through the registry, checks the policy
(role, read-only, confirmation), runs the handler, writes the audit line of a
write (on disk before it returns), and records the outcome (for ``/expect``),
the history (for ``/history save``) and the pet ids seen (for completion and
``$last``). It never raises for a failed command: the failure is classified in
the outcome. Many sessions (one per chat user and room) can share one client.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from petstore_api.errors import PetStoreError
from petstore_api.masking import mask_secret

from .audit import AuditEntry, AuditLog
from .completion import complete_words
from .errors import CommandError, ConfirmationRequired, Declined, Failure, NotConfirmable, UsageError, classify
from .outcome import Outcome
from .parser import show
from .policy import Access, Actor, Policy, local_actor
from .ports import Confirm, Notifications, PetStoreAPI
from .registry import Command, Invocation, Registry
from .results import (
    Cancelled,
    ConfirmationNeeded,
    EnvInfo,
    Help,
    HistoryScript,
    PetCreated,
    PetDetail,
    PetList,
    Result,
)
from .script import HEADER, HistoryEntry, history_script
from .validation import suggest

__all__ = ["CommandSession", "Prepared"]

_LAST = re.compile(r"\$last\b", re.IGNORECASE)
#: Completion offers at most this many recently seen pet ids...
_SEEN_MAX = 1000
#: ... kept as batches (one per result; small ones merged), so a /list costs one tuple.
_SEEN_BATCHES = 64
#: Confirmation codes: no 0/O or 1/I to misread.
_CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
_MAX_PENDING = 5
#: The face's id of the request being run (a chat event id), per task: writes derive their Idempotency-Key from it.
_REQUEST: ContextVar[str | None] = ContextVar("petstore_request_id", default=None)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A line parsed but not run: its command (to pick a worker, show loading), or why it cannot run."""

    line: str
    shown: str
    invocation: Invocation | None = None
    failure: Failure | None = None

    @property
    def command(self) -> Command | None:
        return self.invocation.command if self.invocation is not None else None


@dataclass(frozen=True, slots=True)
class _Pending:
    invocation: Invocation
    what: str
    expires: float


class CommandSession:
    """State of one conversation with the service: one actor, its history, ``$last`` and ``/more``.

    It is the :class:`~bot_commands.context.CommandContext` the handlers of its lines run with.
    """

    def __init__(
        self,
        client: PetStoreAPI,
        *,
        env: EnvInfo,
        registry: Registry,
        actor: Actor | None = None,
        policy: Policy | None = None,
        confirm: Confirm | None = None,
        audit: AuditLog | None = None,
        confirm_ttl: float = 60.0,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        max_history: int | None = None,
    ) -> None:
        self.client = client
        self.env = env
        self.registry = registry
        self.actor = actor or local_actor()
        self.policy = policy or Policy(production=env.env == "production")
        self.confirm = confirm
        self.audit = audit
        self.confirm_ttl = confirm_ttl
        self.sleep = sleep
        self.clock = clock
        self.last_pet_id: int | None = None
        #: The most recent page of /list or /more: /more continues from it.
        self.last_list: PetList | None = None
        self.last_outcome: Outcome | None = None
        #: Commands run, oldest first; the oldest are dropped beyond ``max_history`` (a long-lived chat session).
        self.entries: deque[HistoryEntry] = deque(maxlen=max_history)
        #: Ids of results as they came (batches, newest last); seen_ids orders them on demand.
        self._seen: deque[tuple[int, ...]] = deque(maxlen=_SEEN_BATCHES)
        self._notices: set[str] = set()
        self._pending: dict[str, _Pending] = {}
        self._confirming: str = ""
        self._seq = 0
        self._allowed: tuple[tuple[Policy, Actor], list[Command], frozenset[str]] | None = None
        #: Told how long work is going (``--all``: pages and pets so far); faces show it as progress.
        self.progress: Callable[[str], None] | None = None
        #: How consent is given where there is no one to ask (``confirm`` is None): the command as the person typed
        #: it, named in the refusal of a write on production (``petstore add needs --yes``).
        self.consent_hint = "petstore run needs --yes"
        #: A chat bot's watches and schedules for this session's room and person (None: /watch says chat only).
        self.notifications: Notifications | None = None

    # -- state --------------------------------------------------------------

    @property
    def read_only(self) -> bool:
        return self.policy.read_only

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

    def report(self, text: str) -> None:
        """Progress of the running command, for a face that shows it (a spinner)."""
        if self.progress is not None:
            self.progress(text)

    def first_notice(self, key: str) -> bool:
        """True the first time ``key`` is noticed in this session."""
        first = key not in self._notices
        self._notices.add(key)
        return first

    # -- what the actor may run ------------------------------------------------

    def allows(self, command: Command) -> bool:
        return self.policy.allows(command.access, self.actor)

    def allowed_commands(self) -> list[Command]:
        """The commands this session's actor may run here (help, completion and palettes list these).

        Worked out once per (policy, actor): completion asks on every key press, a chat bot on every /whoami.
        """
        return list(self._allowed_now()[0])

    def _allowed_now(self) -> tuple[list[Command], frozenset[str]]:
        """The allowed commands and their names, for the current policy and actor."""
        key = (self.policy, self.actor)
        if self._allowed is None or self._allowed[0] != key:
            commands = [c for c in self.registry.commands() if self.allows(c)]
            self._allowed = (key, commands, frozenset(c.name for c in commands))
        return self._allowed[1], self._allowed[2]

    def help(self, topic: str | None = None) -> Help:
        if topic is None:
            return self.registry.help(allowed=self.allows)
        help_command = self.registry.resolve("help")
        cmd = self.registry.get(topic)
        if cmd is None:
            found = suggest(topic.lstrip("/"), [c.name for c in self.allowed_commands()])
            maybe = f" (did you mean /{found}?)" if found else ""
            raise help_command.fail(f"no command /{show(topic.lstrip('/'))}{maybe}")
        return self.registry.help(cmd)

    # -- lines --------------------------------------------------------------

    def expand(self, line: str, *, strict: bool = True) -> str:
        """``line`` with ``$last`` replaced by the id of the last added/shown pet."""
        if "$" not in line or not _LAST.search(line):
            return line.strip()
        if self.last_pet_id is None:
            if not strict:
                return line.strip()
            raise UsageError("$last has no value yet: it is the id of the pet from the most recent /add or /get")
        return _LAST.sub(str(self.last_pet_id), line).strip()

    def parse(self, line: str) -> Invocation:
        """Expand and parse without running (raises UsageError)."""
        return self.registry.parse(self.expand(line))

    def access_of(self, line: str) -> tuple[str, Access]:
        """The name and access of the command ``line`` would run (raises UsageError); a schedule checks it."""
        found = self.registry.parse(line).command
        return found.name, found.access

    def prepare(self, line: str) -> Prepared:
        """Parse ``line`` without running it; never raises."""
        text = line.strip()
        try:
            return Prepared(line=text, shown=text, invocation=self.parse(text))
        except UsageError as exc:
            return Prepared(line=text, shown=self.expand(text, strict=False), failure=classify(exc))

    def complete(self, text: str) -> list[str]:
        """Whole-line completions of ``text`` (the text before the cursor)."""
        current, words = self.complete_words(text)
        head = text[: len(text) - len(current)]
        return [head + w for w in words]

    def complete_words(self, text: str) -> tuple[str, list[str]]:
        """``(current word, its completions)``, for readline-style completers."""
        ids = [str(i) for i in reversed(self.seen_ids)]
        names = [n for c in self.allowed_commands() for n in (c.name, *c.aliases)]
        return complete_words(self.registry, text, ids=ids, names=names)

    async def run(self, line: str | Prepared, *, request_id: str | None = None, confirm_write: bool = False) -> Outcome:
        """Run one line (or a prepared one); every failure comes back classified in the outcome.

        ``request_id`` names this request for good (a chat message's event id): a write run under it sends an
        Idempotency-Key derived from it, so a message delivered twice (a restart mid-command) is not done twice.
        ``confirm_write``: a write waits for confirmation whatever the policy says (a face that cannot name the
        request for good has the confirmation name it).
        """
        token = _REQUEST.set(request_id)
        try:
            return await self._run(line, confirm_write=confirm_write)
        finally:
            _REQUEST.reset(token)

    def idempotency_key(self) -> str | None:
        """The Idempotency-Key for a write of the current request, or None (the client makes a fresh one)."""
        request = _REQUEST.get()
        if request is None:
            return None
        return "petstore-req-" + hashlib.sha256(request.encode("utf-8", "surrogatepass")).hexdigest()[:40]

    async def _run(self, line: str | Prepared, *, confirm_write: bool = False) -> Outcome:
        prepared = line if isinstance(line, Prepared) else self.prepare(line)
        self._seq += 1
        seq = self._seq  # taken before awaiting: a slower, older answer must keep its older number
        invocation = prepared.invocation
        if invocation is None:
            outcome = Outcome(line=prepared.shown, failure=prepared.failure, seq=seq)
            self._record_usage_error(outcome)
            return outcome
        try:
            result = await self._perform(invocation, confirm_write=confirm_write)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a classified outcome
            outcome = Outcome(line=invocation.line, invocation=invocation, failure=classify(exc), seq=seq)
        else:
            outcome = Outcome(line=invocation.line, invocation=invocation, result=result, seq=seq)
        self._audit(outcome)
        self._record(prepared.line, outcome)
        if outcome.result is not None:
            self._learn(outcome.result)
        return outcome

    async def execute(self, line: str) -> Result:
        """Run one line and return its result; raises the error a failed one ended with."""
        outcome = await self.run(line)
        if outcome.failure is not None:
            raise outcome.failure.error or CommandError(outcome.failure.message)
        assert outcome.result is not None
        return outcome.result

    # -- policy -------------------------------------------------------------

    async def _perform(self, invocation: Invocation, *, confirm_write: bool) -> Result:
        cmd = invocation.command
        if cmd.name not in self._allowed_now()[1]:  # allowed (the cached list) implies the check passes
            self.policy.check(name=cmd.name, access=cmd.access, actor=self.actor, what=invocation.what())
        if self.policy.needs_confirmation(cmd.access) or (confirm_write and cmd.access is Access.WRITE):
            what = invocation.what()
            if self.policy.deferred:
                return self._defer(invocation, what)
            await self._ask(what)
        return await invocation.perform(self)

    async def _ask(self, what: str) -> None:
        if self.confirm is None:
            if self.policy.production:
                raise ConfirmationRequired(
                    f"refused to {what} on production without confirmation ({self.consent_hint})"
                )
            raise ConfirmationRequired(f"refused to {what} without confirmation")
        question = f"{what} on PRODUCTION ({show(self.env.base_url, 80)})?" if self.policy.production else f"{what}?"
        if not await self.confirm(question):
            raise Declined(f"not done: {what} was declined")

    def _defer(self, invocation: Invocation, what: str) -> ConfirmationNeeded:
        code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(4))
        while len(self._pending) >= _MAX_PENDING:
            self._pending.pop(next(iter(self._pending)))
        self._pending[code] = _Pending(invocation=invocation, what=what, expires=self.clock() + self.confirm_ttl)
        return ConfirmationNeeded(
            code=code,
            what=what,
            line=invocation.line,
            ttl=round(self.confirm_ttl),
            action=invocation.command.summary[:1].lower() + invocation.command.summary[1:],
            fields=invocation.fields(),
        )

    async def confirm_pending(self, code: str) -> Result:
        """Run the write waiting for ``code`` (once, by this session's actor, before it expires)."""
        pending = self._pending.pop(code.strip().upper(), None)
        if pending is None:
            raise NotConfirmable(
                f"nothing waits for code {show(code, 12)}: a code works once, for the person it was given to"
            )
        if self.clock() > pending.expires:
            raise NotConfirmable(
                f"code {show(code, 12)} expired after {round(self.confirm_ttl)} s; nothing was "
                f"sent: run the command again"
            )
        self._confirming = pending.invocation.line
        return await pending.invocation.perform(self)

    def cancel_pending(self, code: str) -> str:
        """Drop the write waiting for ``code`` (this session's actor only); returns what it would have done."""
        pending = self._pending.pop(code.strip().upper(), None)
        if pending is None:
            raise NotConfirmable(
                f"nothing waits for code {show(code, 12)}: a code works once, for the person it was given to"
            )
        self._confirming = pending.invocation.line
        return pending.what

    # -- audit --------------------------------------------------------------

    def _audit(self, outcome: Outcome) -> None:
        cmd = outcome.command
        if self.audit is None or cmd is None or cmd.access not in (Access.WRITE, Access.CONFIRM):
            return
        line = outcome.line
        if cmd.access is Access.CONFIRM and self._confirming:
            line, self._confirming = f"{line}: {self._confirming}", ""
        self.audit.write(_audit_entry(self.actor, line, outcome))

    # -- history ------------------------------------------------------------

    def history_script_lines(self) -> list[str]:
        return history_script(self.entries)

    def save_history(self, path: str | Path) -> int:
        """Write this session as a replayable script; returns the number of commands."""
        lines = self.history_script_lines()
        target = Path(path).expanduser()
        try:
            target.write_text(_script_text(lines), encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"cannot write {show(str(target), 200)}: {exc.strerror or exc}") from None
        return len(lines)

    def history_file(self, name: str) -> HistoryScript:
        """This session as a replayable script for the face to hand over, named after ``name``'s last part;
        nothing is written (a browser session: the host's files are not the person's)."""
        lines = self.history_script_lines()
        return HistoryScript(name=download_name(name), text=_script_text(lines), count=len(lines))

    # -- bookkeeping --------------------------------------------------------

    def _record_usage_error(self, outcome: Outcome) -> None:
        error = outcome.failure.error if outcome.failure else None
        name = error.command if isinstance(error, UsageError) else None
        cmd = self.registry.get(name) if name else None
        if cmd is None or cmd.outcome:
            self.last_outcome = outcome

    def _record(self, text: str, outcome: Outcome) -> None:
        cmd = outcome.command
        assert cmd is not None
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
        """Use ``key`` from now on (after a 401, say); ``/env`` shows it masked. Raises CommandError."""
        try:
            self.client.set_api_key(key)
        except PetStoreError as exc:
            raise CommandError(str(exc)) from None
        self.env = replace(self.env, masked_key=mask_secret(key))


#: The file name a script is offered under when the name given has none (``/history save ~/``).
DEFAULT_SCRIPT_NAME = "petstore-history.pets"


def download_name(name: str) -> str:
    """``name``'s last part (no directory: the person's browser decides where it goes), visible characters only."""
    last = PurePosixPath(name.replace("\\", "/").strip()).name
    cleaned = "".join(ch for ch in last if ch.isprintable() and ch not in '"/\\')
    return cleaned if cleaned.strip(" .~") else DEFAULT_SCRIPT_NAME


def _script_text(lines: list[str]) -> str:
    return "\n".join([HEADER, *lines]) + "\n"


def _audit_entry(actor: Actor, line: str, outcome: Outcome) -> AuditEntry:
    failure, result = outcome.failure, outcome.result
    pet_id = result.pet.id if isinstance(result, (PetCreated, PetDetail)) else None
    if failure is None:
        held = (
            "pending"
            if isinstance(result, ConfirmationNeeded)
            else "cancelled"
            if isinstance(result, Cancelled)
            else ""
        )
        return AuditEntry(
            actor=actor.id,
            role=str(actor.role),
            where=actor.where,
            line=line,
            outcome=held or "ok",
            applied="no" if held else "yes",
            pet_id=pet_id,
            replayed=isinstance(result, PetCreated) and result.replayed,
        )
    refused = failure.exit_code == 2
    applied = "no" if failure.wrote_nothing else "unknown"
    message = failure.message if applied == "no" else f"{failure.message} (the answer was lost: it may have been done)"
    return AuditEntry(
        actor=actor.id,
        role=str(actor.role),
        where=actor.where,
        line=line,
        outcome="refused" if refused else "failed",
        applied=applied,
        code=failure.code,
        message=message,
    )
