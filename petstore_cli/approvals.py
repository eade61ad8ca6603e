"""Approvals asked for from a terminal: a write on an environment under ``[bot] approvals`` goes to a second person.

``petstore add ...`` (and a write typed in ``petstore chat`` or a ``petstore run`` script) on such an environment
does not run here: :class:`TerminalApproval`, the session's :class:`~bot_commands.ports.AskApproval` port, creates
a request in the bots' shared state (``[bot] state``, :mod:`petstore_state.pending`), a running bot posts it in
``[bot] approvals_room``, and another person's ``!approve CODE`` there makes the bot run it (as the asker) and record
what came of it. The terminal waits for that (a spinner on stderr at a terminal; ``--wait SECONDS`` bounds the
wait, by default the request's TTL) and prints the result as the command would have, or the denial with its reason;
``--no-wait`` prints the request's id and ends. Ctrl-C stops the wait, never the request.

``petstore approvals`` lists the requests and ``petstore approvals show ID`` one of them, in every output format;
``petstore approvals cancel ID`` withdraws one's own request (the store's ``cancel``: its asker only, once).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from bot_commands.errors import ApprovalDenied, ApprovalExpired, CommandError, StillWaiting
from bot_commands.held import decode_held
from bot_commands.policy import Actor
from bot_commands.ports import WriteRequest
from bot_commands.results import JSON, ApprovalRequested, ApprovalRequests, Cancelled, Notice, Result
from bot_commands.sanitize import visible
from petstore_os.records import record, replace

if TYPE_CHECKING:  # pragma: no cover
    from petstore_cli.settings.model import Settings
    from petstore_state import Database
    from petstore_state.pending import PendingStore, PendingWrite

    from .compose import Composition
    from .progress import Spinner

__all__ = [
    "NO_STORE",
    "TerminalApproval",
    "WaitOptions",
    "cancel_request",
    "needs_approval",
    "open_store",
    "result_of",
    "terminal_approval",
]

#: Said (exit 2) when a write needs approval but nothing says where requests go.
NO_STORE = (
    "writes on {env} need a second person's approval ([bot] approvals), and requests go through the bots' "
    "shared state: set [bot] state (postgresql://... or sqlite:///PATH, the one the bot uses); nothing was sent"
)
#: Said (exit 2) by ``petstore approvals`` when nothing says where requests are.
NO_LIST = (
    "petstore approvals reads the requests in the bots' shared state: set [bot] state (postgresql://... or "
    "sqlite:///PATH, the one the bot uses)"
)
#: Seconds between two looks at the request while waiting (a local read of one row).
POLL = 0.5
#: Seconds a write taken by a bot may still run after the wait's end before the terminal stops waiting for it.
RUNNING_GRACE = 120.0


def needs_approval(settings: Settings, env: str) -> bool:
    """Whether writes on ``env`` wait for a second person (``[bot] approvals``)."""
    return env in settings.bot.approvals


def open_store(settings: Settings, *, env: str | None = None) -> tuple[PendingStore, Database]:
    """The requests' store ``[bot] state`` names; CommandError (one line) when it is unset or cannot be opened.

    ``env``: the environment a write needs approval on (named in the line said when the store is unset)."""
    if not settings.bot.state:
        raise CommandError(NO_STORE.format(env=env) if env else NO_LIST)
    from petstore_cli.settings.paths import default_data_dir
    from petstore_state import StateError, open_database  # only where a store opens: not for every one-shot command
    from petstore_state.pending import PendingStore

    try:
        database = open_database(settings.bot.state_url(), state_dir=default_data_dir() / "bot")
        return PendingStore(database), database
    except StateError as exc:
        raise CommandError(str(exc)) from None


@record
class WaitOptions:
    """How long a terminal waits for a decision: ``wait`` seconds at most (None: until the request expires), or
    not at all (``no_wait``: the request's id is the result)."""

    wait: float | None = None
    no_wait: bool = False


class TerminalApproval:
    """The :class:`~bot_commands.ports.AskApproval` of a terminal: see the module docstring.

    ``say`` prints one line of prose (stderr); ``spinner`` (a terminal only) shows the wait; ``clock`` and ``sleep``
    are the wall clock (expiry times are shared with other hosts) and the pause between two looks.
    """

    def __init__(
        self,
        store: PendingStore,
        *,
        env: str,
        ttl: float,
        room: str | None,
        options: WaitOptions,
        say: Callable[[str], None],
        spinner: Spinner | None = None,
        clock: Callable[[], float] = time.time,
        poll: float = POLL,
    ) -> None:
        self.store, self.env, self.ttl, self.room = store, env, ttl, room
        self.options, self.say, self.spinner = options, say, spinner
        self.clock, self.poll = clock, poll

    async def __call__(self, request: WriteRequest, /) -> Result:
        actor = request.actor
        write = await self.store.create(
            kind="approve",
            asker=actor.id,
            role=str(actor.role),
            where=actor.where,
            line=request.line,
            what=request.what,
            fields=request.fields,
            env=self.env,
            ttl=self.ttl,
            command=request.command,
        )
        if self.options.no_wait:
            return ApprovalRequested(code=write.code, what=write.what, expires_in=round(self.ttl), room=self.room or "")
        room = f" in {self.room}" if self.room else ""
        self.say(
            f"Asked for approval: request {write.code} waits{room} for a second person (!approve {write.code}); "
            f"Ctrl-C stops waiting, the request stays."
        )
        try:
            return await self._wait(write)
        except asyncio.CancelledError:
            self.say(f"Stopped waiting; request {write.code} still waits: petstore approvals show {write.code}")
            raise
        finally:
            if self.spinner is not None:
                self.spinner.stop()

    async def _wait(self, write: PendingWrite) -> Result:
        code = write.code
        end = write.expires if self.options.wait is None else min(write.expires, self.clock() + self.options.wait)
        if self.spinner is not None:
            self.spinner.start(f"waiting for approval of {code}")
        while True:
            found = await self.store.get(code)
            if found is None:
                raise ApprovalExpired(f"request {code} is gone from the bots' state; nothing was sent by this wait")
            if found.state in ("done", "failed", "denied", "expired", "cancelled"):
                return result_of(found)
            now = self.clock()
            running = found.state == "approved"
            if now >= end + (RUNNING_GRACE if running else 0.0):
                break
            if self.spinner is not None:
                left = max(end - now, 0.0)
                self.spinner.update("approved, running" if running else f"{_left(left)} left")
            await asyncio.sleep(self.poll)
        if found.state == "waiting" and self.clock() >= found.expires:
            raise ApprovalExpired(f"request {code} expired: nobody approved {found.what} in time; nothing was sent")
        raise StillWaiting(
            f"stopped waiting after {self.options.wait or 0:g} s; request {code} is {found.state} and may still "
            f"run: petstore approvals show {code}"
        )


def _left(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def result_of(write: PendingWrite) -> Result:
    """What a decided request came to, as the command would have ended: its result, or the error it raises."""
    if write.state == "denied":
        reason = f": {visible(write.reason)}" if write.reason else " (no reason given)"
        raise ApprovalDenied(f"{write.decided_by} denied {write.what}{reason}; nothing was sent")
    if write.state == "expired":
        raise ApprovalExpired(f"request {write.code} expired: nobody approved {write.what} in time; nothing was sent")
    if write.state == "cancelled":
        raise ApprovalExpired(f"request {write.code} was withdrawn by {write.decided_by}; nothing was sent")
    held = decode_held(write.result, ok=write.state == "done")
    if write.state == "done" and held.result is not None:
        return held.result
    if write.state == "done":  # a row that says what came of it in words only (a chat's, or a type unknown here)
        said = held.summary or "done"
        return Notice(text=f"{said} (request {write.code}, approved by {write.decided_by})")
    message = held.error.message if held.error is not None else held.summary
    raise CommandError(f"{write.what}, approved by {write.decided_by}, failed: {visible(message)}")


# --------------------------------------------------------------------------- petstore approvals


def request_record(write: PendingWrite, *, now: float, detail: bool = False) -> dict[str, JSON]:
    """One request as a record: ``id``, ``asker``, ``what``, ``state``, ``age`` (seconds); with ``detail`` every
    field (what the write sends, where it was asked, who decided, why, and what came of it)."""
    record: dict[str, JSON] = {
        "id": write.code,
        "asker": write.asker,
        "what": write.what,
        "state": write.state,
        "age": max(int(now - write.created), 0),
    }
    if detail:
        record |= {
            "env": write.env,
            "where": write.where,
            "line": write.line,
            "fields": dict[str, JSON](write.fields),
            "created": _iso(write.created),
            "expires": _iso(write.expires),
            "decided_by": write.decided_by,
            "decided": _iso(write.decided) if write.decided is not None else None,
            "reason": write.reason,
            "posted": write.posted,
            "result": _shown_result(write),
        }
    return record


def _shown_result(write: PendingWrite) -> JSON:
    """What came of a request, as ``petstore approvals show`` shows it: its record (empty: not run)."""
    if not write.result:
        return write.result
    held = decode_held(write.result, ok=write.state == "done")
    return replace(held, line=held.line or write.line).record()  # a chat's row of before kept only its words


def _iso(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


def approvals_result(store: PendingStore, *, show: str | None, limit: int, now: float) -> ApprovalRequests:
    """The requests ``petstore approvals`` shows (newest first), or the one ``show`` names (CommandError: none)."""
    if show is not None:
        found = store.get_sync(show)
        if found is None or found.kind != "approve":
            raise CommandError(f"no request for approval {visible(show.strip())!r}: petstore approvals lists them")
        return ApprovalRequests(records=(request_record(found, now=now, detail=True),), detail=True)
    writes = store.recent_sync(kind="approve", limit=limit)
    return ApprovalRequests(records=tuple(request_record(w, now=now) for w in writes))


#: Why ``petstore approvals cancel`` did not cancel a request, by the store's refusal (the id is put in).
CANCEL_REFUSED = {
    "unknown": "no request for approval {code!r}: petstore approvals lists them",
    "kind": "no request for approval {code!r}: petstore approvals lists them",
    "not_yours": "request {code} was asked for by {asker}: only its asker may cancel it (another person may !deny it)",
    "decided": "request {code} is already {state}: nothing to cancel",
    "expired": "request {code} expired: nothing to cancel, nothing was sent",
}


async def cancel_request(store: PendingStore, code: str, *, asker: str) -> Cancelled:
    """Withdraw ``asker``'s own request ``code`` (``petstore approvals cancel ID``), once; CommandError (one line)
    when it is not theirs, not waiting, or not there."""
    from bot_commands.pending import refusal
    from petstore_bot.pending import RoomAuthority, held_write
    from petstore_bot.roles import RoleBook

    actor, now = Actor(id=asker, where="terminal"), store.clock()
    authority = RoomAuthority(RoleBook.of(operators=[], viewers=[], default="none"))  # a withdrawal asks no role

    def check(row: PendingWrite) -> str | None:
        return refusal(held_write(row), step="cancel", actor=actor, now=now, authority=authority)

    taken = await store.transition(code, check=check, to="cancelled", by=asker)
    if taken.taken and taken.write is not None:
        return Cancelled(code=taken.write.code, what=taken.write.what)
    found = taken.write
    why = taken.refusal if found is not None and found.kind == "approve" else "unknown"
    raise CommandError(
        CANCEL_REFUSED[why or "unknown"].format(
            code=visible(code.strip()) if found is None else found.code,
            asker=found.asker if found else "",
            state=found.state if found else "",
        )
    )


def terminal_approval(
    composition: Composition,
    settings: Settings,
    *,
    options: WaitOptions = WaitOptions(),
    spinner: Spinner | None = None,
) -> TerminalApproval | None:
    """Where a terminal face's session sends its writes when its environment is under ``[bot] approvals`` (its
    ``ask_approval``; None: writes run here); CommandError (one line) when the store is not configured."""
    env = composition.target.env
    if not needs_approval(settings, env):
        return None
    store, database = open_store(settings, env=env)
    composition.on_close(database.close)
    return TerminalApproval(
        store,
        env=env,
        ttl=settings.bot.approval_ttl,
        room=settings.bot.approvals_room,
        options=options,
        say=_say(spinner),
        spinner=spinner,
    )


def _say(spinner: Spinner | None) -> Callable[[str], None]:
    """One line of prose on stderr (through the spinner's console when there is one, so the two never mix)."""

    def say(text: str) -> None:
        if spinner is not None:
            spinner.console.print(visible(text), markup=False, highlight=False, soft_wrap=True)
        else:
            print(visible(text), file=sys.stderr, flush=True)

    return say
