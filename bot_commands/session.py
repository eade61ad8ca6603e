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
import time
from collections import deque
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path, PurePosixPath

from petstore_api.errors import PetStoreError
from petstore_api.masking import mask_secret
from petstore_os.records import record, replace

from .audit import AuditLog, audit_entry
from .completion import complete_words
from .errors import (
    CommandError,
    ConfirmationRequired,
    Declined,
    Failure,
    Forbidden,
    NotApprovable,
    NotConfirmable,
    UsageError,
    classify,
)
from .held import HeldError, HeldResult, encode_held
from .outcome import Outcome
from .parser import show
from .pending import BINDING, Decision, HeldWrite, HoldKind, HoldRequest, PendingWrites, refusal_message, same_person
from .policy import Access, Actor, Capability, Policy, Role, local_actor
from .ports import AskApproval, Confirm, Notifications, PetStoreAPI, WriteRequest
from .registry import Command, Invocation, Registry
from .results import (
    ApprovalNeeded,
    ConfirmationNeeded,
    Denied,
    EnvInfo,
    Help,
    HistoryScript,
    PetCreated,
    PetDetail,
    PetList,
    Result,
)
from .script import HEADER, HistoryEntry, history_script
from .session_parts import DEFAULT_CONSENT_HINT, SessionParts, Sleep
from .validation import suggest
from .views import present

__all__ = ["CommandSession", "Prepared", "SessionParts", "held_request"]

_LAST = re.compile(r"\$last\b", re.IGNORECASE)
#: Completion offers at most this many recently seen pet ids...
_SEEN_MAX = 1000
#: ... kept as batches (one per result; small ones merged), so a /list costs one tuple.
_SEEN_BATCHES = 64
#: The face's id of the request being run (a chat event id), per task: writes derive their Idempotency-Key from it.
_REQUEST: ContextVar[str | None] = ContextVar("petstore_request_id", default=None)
#: The chat event id of the message being run, per task: its audit line carries it.
_EVENT: ContextVar[str | None] = ContextVar("petstore_event_id", default=None)
#: Commands whose every run is audited: writes, and the decisions on held writes.
_AUDITED = frozenset({Access.WRITE, Access.CONFIRM, Access.APPROVE})


@record
class Prepared:
    """A line parsed but not run: its command (to pick a worker, show loading), or why it cannot run."""

    line: str
    shown: str
    invocation: Invocation | None = None
    failure: Failure | None = None

    @property
    def command(self) -> Command | None:
        return self.invocation.command if self.invocation is not None else None


class CommandSession:
    """State of one conversation with the service: one actor, its history, ``$last`` and ``/more``.

    It is the :class:`~bot_commands.context.CommandContext` the handlers of its lines run with. It is built whole
    from its :class:`~bot_commands.session_parts.SessionParts` (read-only properties, ``__slots__``: a part assigned
    afterwards raises AttributeError); its role changes through :meth:`assume_role`, its key through
    :meth:`set_api_key`.
    """

    __slots__ = (
        "_allowed",
        "_held",
        "_notices",
        "_parts",
        "_refused",
        "_seen",
        "_seq",
        "entries",
        "last_list",
        "last_outcome",
        "last_pet_id",
    )

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
        pending: PendingWrites | None = None,
        approval_ttl: float = 3600.0,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        max_history: int | None = None,
        notifications: Notifications | None = None,
        ask_approval: AskApproval | None = None,
        progress: Callable[[str], None] | None = None,
        consent_hint: str = DEFAULT_CONSENT_HINT,
    ) -> None:
        """A session built whole (see :class:`~bot_commands.session_parts.SessionParts` for what each part is):
        ``actor`` defaults to the local person, ``policy`` to the rules of ``env``."""
        self._start(
            SessionParts(
                client=client,
                env=env,
                registry=registry,
                actor=actor or local_actor(),
                policy=policy or Policy(production=env.env == "production"),
                confirm=confirm,
                audit=audit,
                pending=pending,
                confirm_ttl=confirm_ttl,
                approval_ttl=approval_ttl,
                sleep=sleep,
                clock=clock,
                max_history=max_history,
                notifications=notifications,
                ask_approval=ask_approval,
                progress=progress,
                consent_hint=consent_hint,
            )
        )

    @classmethod
    def from_parts(cls, parts: SessionParts) -> CommandSession:
        """A new session (its own history, ``$last`` and ``/more``) built from ``parts``."""
        session = cls.__new__(cls)
        session._start(parts)
        return session

    def _start(self, parts: SessionParts) -> None:
        self._parts = parts
        self.last_pet_id: int | None = None
        #: The most recent page of /list or /more: /more continues from it.
        self.last_list: PetList | None = None
        self.last_outcome: Outcome | None = None
        #: Commands run, oldest first; the oldest are dropped beyond ``max_history`` (a long-lived chat session).
        self.entries: deque[HistoryEntry] = deque(maxlen=parts.max_history)
        #: Ids of results as they came (batches, newest last); seen_ids orders them on demand.
        self._seen: deque[tuple[int, ...]] = deque(maxlen=_SEEN_BATCHES)
        self._notices: set[str] = set()
        #: The held write the running /confirm, /approve, /deny or /cancel decided (for its audit line).
        self._held: HeldWrite | None = None
        #: The held write the running one was refused for where it is bound (audited in the request's room).
        self._refused: HeldWrite | None = None
        self._seq = 0
        self._allowed: tuple[tuple[Policy, Actor, frozenset[Capability]], list[Command], frozenset[str]] | None = None

    # -- what it was built with (read only: a session is built whole) ------------

    @property
    def parts(self) -> SessionParts:
        """Everything this session was built with (``CommandSession.from_parts`` builds another from them)."""
        return self._parts

    @property
    def client(self) -> PetStoreAPI:
        return self._parts.client

    @property
    def env(self) -> EnvInfo:
        return self._parts.env

    @property
    def registry(self) -> Registry:
        return self._parts.registry

    @property
    def actor(self) -> Actor:
        return self._parts.actor

    @property
    def policy(self) -> Policy:
        return self._parts.policy

    @property
    def confirm(self) -> Confirm | None:
        return self._parts.confirm

    @property
    def audit(self) -> AuditLog | None:
        return self._parts.audit

    @property
    def pending(self) -> PendingWrites | None:
        return self._parts.pending

    @property
    def sleep(self) -> Sleep:
        return self._parts.sleep

    @property
    def clock(self) -> Callable[[], float]:
        return self._parts.clock

    @property
    def notifications(self) -> Notifications | None:
        return self._parts.notifications

    @property
    def ask_approval(self) -> AskApproval | None:
        return self._parts.ask_approval

    def assume_role(self, role: Role) -> None:
        """The actor's role from now on (a chat bot looks it up before each message: grants and power levels change
        between two messages); the conversation (history, ``$last``) stays."""
        if self._parts.actor.role is not role:
            self._parts = replace(self._parts, actor=replace(self._parts.actor, role=role))

    def read_only_view(self) -> CommandSession:
        """A new session of the same parts whose policy refuses every write (a schedule's run)."""
        return CommandSession.from_parts(replace(self._parts, policy=replace(self._parts.policy, read_only=True)))

    # -- state --------------------------------------------------------------

    @property
    def read_only(self) -> bool:
        return self.policy.read_only

    @property
    def audit_trail(self) -> AuditLog | None:
        """The audit log this session writes, read back by ``/audit``."""
        return self.audit

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
        if self._parts.progress is not None:
            self._parts.progress(text)

    def first_notice(self, key: str) -> bool:
        """True the first time ``key`` is noticed in this session."""
        first = key not in self._notices
        self._notices.add(key)
        return first

    # -- what the actor may run ------------------------------------------------

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What this session's face gave it, which some commands need (a chat bot's room: its notifications)."""
        return frozenset({Capability.ROOM}) if self.notifications is not None else frozenset()

    def allows(self, command: Command) -> bool:
        """Whether the actor may run ``command`` here and it can work here: the one test help, completion and
        ``/whoami`` list by."""
        return command.needs <= self.capabilities and self.policy.allows(command.access, self.actor)

    def allowed_commands(self) -> list[Command]:
        """The commands this session's actor may run here (help, completion and palettes list these).

        Worked out once per (policy, actor): completion asks on every key press, a chat bot on every /whoami.
        """
        return list(self._allowed_now()[0])

    def _allowed_now(self) -> tuple[list[Command], frozenset[str]]:
        """The allowed commands and their names, for the current policy and actor."""
        key = (self.policy, self.actor, self.capabilities)
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

    async def run(
        self,
        line: str | Prepared,
        *,
        request_id: str | None = None,
        event_id: str | None = None,
        confirm_write: bool = False,
    ) -> Outcome:
        """Run one line (or a prepared one); every failure comes back classified in the outcome.

        ``request_id`` names this request for good (a chat message's event id): a write run under it sends an
        Idempotency-Key derived from it, so a message delivered twice (a restart mid-command) is not done twice.
        ``event_id``: the chat event id of the message, for the audit line.
        ``confirm_write``: a write waits for confirmation whatever the policy says (a face that cannot name the
        request for good has the confirmation name it).
        """
        token, event = _REQUEST.set(request_id), _EVENT.set(event_id)
        try:
            return await self._run(line, confirm_write=confirm_write)
        finally:
            _REQUEST.reset(token)
            _EVENT.reset(event)

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
        if cmd.name not in self._allowed_now()[1]:  # allowed (the cached list) implies the checks pass
            for missing in cmd.needs - self.capabilities:  # first: no role would make it work here
                raise Forbidden(missing.missing(cmd.name))
            self.policy.check(name=cmd.name, access=cmd.access, actor=self.actor, what=invocation.what())
        if self.ask_approval is not None and cmd.access is Access.WRITE:
            request = WriteRequest(
                line=invocation.line,
                what=invocation.what(),
                fields=invocation.fields(),
                actor=self.actor,
                command=cmd.name,
            )
            return await self.ask_approval(request)
        if self.policy.needs_approval(cmd.access) and self.policy.deferred:
            return await self._hold(invocation, kind="approve")
        if self.policy.needs_confirmation(cmd.access) or (confirm_write and cmd.access is Access.WRITE):
            if self.policy.deferred:
                return await self._hold(invocation, kind="confirm")
            await self._ask(invocation.what())
        return await invocation.perform(self)

    async def _ask(self, what: str) -> None:
        if self.confirm is None:
            if self.policy.production:
                raise ConfirmationRequired(
                    f"refused to {what} on production without confirmation ({self._parts.consent_hint})"
                )
            raise ConfirmationRequired(f"refused to {what} without confirmation")
        question = f"{what} on PRODUCTION ({show(self.env.base_url, 80)})?" if self.policy.production else f"{what}?"
        if not await self.confirm(question):
            raise Declined(f"not done: {what} was declined")

    async def _hold(self, invocation: Invocation, *, kind: HoldKind) -> ConfirmationNeeded | ApprovalNeeded:
        """Keep the write for ``/confirm CODE`` (or ``/approve CODE``) instead of running it."""
        ttl = self._parts.approval_ttl if kind == "approve" else self._parts.confirm_ttl
        held = await self._pending().hold(
            HoldRequest(
                kind=kind,
                actor=self.actor,
                command=invocation.command.name,
                line=invocation.line,
                what=invocation.what(),
                fields=invocation.fields(),
                env=self.env.env,
                ttl=ttl,
                event_id=_EVENT.get() or "",
            )
        )
        action = invocation.command.summary[:1].lower() + invocation.command.summary[1:]
        if kind == "approve":
            return ApprovalNeeded(
                code=held.code,
                what=held.what,
                line=held.line,
                ttl=round(ttl),
                asker=held.asker,
                env=held.env,
                action=action,
                fields=held.fields,
                room=held.room if held.room and held.room != self.actor.where else "",
            )
        return ConfirmationNeeded(
            code=held.code, what=held.what, line=held.line, ttl=round(ttl), action=action, fields=held.fields
        )

    async def confirm_pending(self, code: str) -> Result:
        """Run the write waiting for ``code`` (once, by this session's actor, before it expires)."""
        return await self._run_held(await self._take(code, kind="confirm"))

    async def approve_pending(self, code: str) -> Result:
        """Run another person's write waiting for approval under ``code`` (once, before it expires)."""
        return await self._run_held(await self._take(code, kind="approve"))

    async def deny_pending(self, code: str, reason: str = "") -> Denied:
        """Drop another person's write waiting for approval under ``code``; nothing is sent."""
        decision = await self._pending().deny(code, actor=self.actor, reason=reason)
        held = self._decided(decision, code, approving=True)
        return Denied(code=held.code, what=held.what, asker=held.asker, by=self.actor.id, reason=reason)

    async def cancel_pending(self, code: str) -> str:
        """Drop the write waiting for ``code`` (its asker only); returns what it would have done."""
        return self._decided(await self._pending().cancel(code, actor=self.actor), code).what

    def _pending(self) -> PendingWrites:
        """Where writes are held; NotConfirmable when this face holds none (a face without a state store)."""
        if self.pending is None:
            raise NotConfirmable("no write is held here (no state store): nothing was sent")
        return self.pending

    async def _take(self, code: str, *, kind: HoldKind) -> HeldWrite:
        decision = await self._pending().take(code, kind=kind, actor=self.actor)
        return self._decided(decision, code, approving=kind == "approve")

    def _decided(self, decision: Decision, code: str, *, approving: bool = False) -> HeldWrite:
        if decision.refusal is not None or decision.write is None:
            if decision.refusal in BINDING or decision.refusal in ("changed", "other_key"):
                self._refused = decision.write
            refused = NotApprovable if approving else NotConfirmable
            raise refused(refusal_message(decision, code=code))
        self._held = decision.write
        return decision.write

    def held_invocation(self, held: HeldWrite) -> Invocation:
        """What a held write runs: its command with its stored fields (never its line parsed again), which must be
        a write whose fields are exactly those stored; else NotApprovable (nothing is sent)."""
        changed = NotApprovable(f"request {held.code} was changed after it was shown; nothing was sent")
        cmd = self.registry.get(held.command) if held.command else None
        if cmd is None or cmd.access is not Access.WRITE:
            raise NotApprovable(f"request {held.code} names no write a second person may run; nothing was sent")
        try:
            params = cmd.parse([f"{name}={value}" for name, value in held.fields])
        except UsageError:
            raise changed from None
        if cmd.fields(params) != held.fields:
            raise changed
        return Invocation(command=cmd, params=params, line=held.line)

    async def resume_held(self, held: HeldWrite) -> Outcome:
        """Finish a write this session's actor took (approved or confirmed) that was never finished: the process
        that took it stopped between the service's commit and the record of its end. It is sent again under its
        code's Idempotency-Key (the service answers with what it did the first time: nothing runs twice) and
        audited as its decision would have been."""
        cmd = self.registry.resolve("approve" if held.kind == "approve" else "confirm")
        line = f"/{cmd.name} {held.code}"
        invocation = Invocation(command=cmd, params=cmd.parse([held.code]), line=line)
        self._held = held
        try:
            result = await self._run_held(held)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a classified outcome
            outcome = Outcome(line=line, invocation=invocation, failure=classify(exc))
        else:
            outcome = Outcome(line=line, invocation=invocation, result=result)
        self._audit(outcome)
        return outcome

    async def _run_held(self, held: HeldWrite) -> Result:
        """Run the held write's command with its stored fields, under an Idempotency-Key of its code (run again
        after a crash, the service answers with what it did the first time); the store learns how it ended."""
        token = _REQUEST.set(held_request(held.code))
        try:
            result = await self.held_invocation(held).perform(self)
        except Exception as exc:
            failure = classify(exc)
            ended = HeldResult(line=held.line, ok=False, summary=failure.message, error=HeldError.of(failure))
            await self._pending().finish(held.code, ok=False, result=encode_held(ended))
            raise
        finally:
            _REQUEST.reset(token)
        ended = HeldResult(line=held.line, ok=True, summary=present(result, prefix="/").summary, result=result)
        await self._pending().finish(held.code, ok=True, result=encode_held(ended))
        return result

    # -- audit --------------------------------------------------------------

    def _audit(self, outcome: Outcome) -> None:
        cmd = outcome.command
        held, self._held = self._held, None
        refused, self._refused = self._refused, None
        if self.audit is None or cmd is None or cmd.access not in _AUDITED:
            return
        entry = audit_entry(self.actor, outcome.line, outcome)
        result = outcome.result
        code = result.code if isinstance(result, ConfirmationNeeded | ApprovalNeeded) else ""
        entry = replace(entry, event_id=_EVENT.get() or "", pending_code=code)
        if refused is not None:  # tried where it is not bound, or changed: told to the request's room
            entry = replace(entry, where=refused.room or entry.where, pending_code=refused.code)
        if held is not None:
            entry = replace(entry, line=f"{outcome.line}: {held.line}", pending_code=held.code)
            if held.kind == "approve" and not same_person(held.asker, self.actor.id):  # approved or denied
                entry = replace(entry, actor=held.asker, role=held.role, approver=self.actor.id)
        self.audit.write(entry)

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
        self._parts = replace(self._parts, env=replace(self.env, masked_key=mask_secret(key)))


#: The file name a script is offered under when the name given has none (``/history save ~/``).
DEFAULT_SCRIPT_NAME = "petstore-history.pets"


def download_name(name: str) -> str:
    """``name``'s last part (no directory: the person's browser decides where it goes), visible characters only."""
    last = PurePosixPath(name.replace("\\", "/").strip()).name
    cleaned = "".join(ch for ch in last if ch.isprintable() and ch not in '"/\\')
    return cleaned if cleaned.strip(" .~") else DEFAULT_SCRIPT_NAME


def held_request(code: str) -> str:
    """The request id a held write runs under: its Idempotency-Key derives from it, so a run again after a crash
    (the bot finishing what it had taken) is the service's replay, not a second write."""
    return f"held:{code}"


def _script_text(lines: list[str]) -> str:
    return "\n".join([HEADER, *lines]) + "\n"
