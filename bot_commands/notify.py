"""Notifications and schedules in chat: ``/watch``, ``/unwatch``, ``/watches``, ``/every``, ``/schedules``,
``/unschedule``, each declared once, reaching the bot's store through the :class:`Notifications` port (no
subcommand of them: ``one_shot=False``, they need a bot's room).

A chat bot gives each session of a room a port bound to that room and person (``CommandSession.notifications``);
a face without one (a terminal, the web) answers each of these commands with one line. What a watch or a
schedule does between commands (polling, posting, running) is the bot's; here is only what people type and see.
"""

from __future__ import annotations

from petstore_os.records import record

from . import converters as conv
from .arguments import NoParams, positional
from .context import CommandContext
from .errors import Forbidden, RefusedError
from .every import split_every
from .parser import show
from .policy import Access, Capability
from .ports import Notifications, ScheduledCommand
from .registry import TypedCommand, command
from .results import Notice, ScheduleList, ScheduleRow, WatchList

__all__ = [
    "NOTIFY_COMMANDS",
    "EveryParams",
    "NotScheduled",
    "TooMany",
    "UnscheduleParams",
    "WatchParams",
    "notify_commands",
]

#: What every command here needs: a chat bot's room (elsewhere help leaves them out; typed, they say so).
IN_A_ROOM = frozenset({Capability.ROOM})
#: Commands that make or change schedules and watches: never run by a schedule.
NOTIFY_COMMANDS = frozenset({"watch", "unwatch", "watches", "every", "schedules", "unschedule"})


class NotScheduled(RefusedError):
    """``/unschedule`` of a number that is no schedule of this room, or of someone else's without the role."""


class TooMany(RefusedError):
    """``/every`` or ``/watch`` refused: the room or the bot has the most schedules or watches it may have."""


def _port(context: CommandContext, name: str) -> Notifications:
    port = context.notifications
    if port is None:
        raise Forbidden(Capability.ROOM.missing(name))
    return port


def _what(status: str) -> str:
    return f"new pets with status {status}" if status else "new pets"


@record(kw_only=True)
class WatchParams:
    """``/watch [STATUS]``, ``/unwatch [STATUS]``: which new pets (none: every one)."""

    status: str | None = positional(
        "STATUS", lambda word: conv.status(word).value, choices=conv.STATUSES, help="one of available, pending, sold"
    )


@command(
    "watch",
    one_shot=False,
    needs=IN_A_ROOM,
    params=WatchParams,
    summary="Announce new pets (of a status) in this room",
    access=Access.READ,
    details="New pets, whoever adds them and however, are posted here within [bot] watch_interval seconds",
)
async def watch(context: CommandContext, params: WatchParams) -> WatchList:
    port = _port(context, "watch")
    status = params.status or ""
    added = await port.watch(status)
    told = f"Watching {_what(status)} here" if added else f"Already watching {_what(status)} here"
    text = f"{told}: each is posted within {port.interval:g} s of being added."
    return WatchList(statuses=tuple(await port.watches()), text=text)


@command(
    "unwatch",
    one_shot=False,
    needs=IN_A_ROOM,
    params=WatchParams,
    summary="Stop announcing new pets (of a status) here",
    access=Access.READ,
)
async def unwatch(context: CommandContext, params: WatchParams) -> WatchList:
    port = _port(context, "unwatch")
    status = params.status or ""
    removed = await port.unwatch(status)
    text = f"Stopped watching {_what(status)} here." if removed else f"This room was not watching {_what(status)}."
    return WatchList(statuses=tuple(await port.watches()), text=text)


@command(
    "watches",
    one_shot=False,
    needs=IN_A_ROOM,
    params=NoParams,
    summary="Show what this room watches",
    access=Access.READ,
)
async def watches(context: CommandContext, params: NoParams) -> WatchList:
    port = _port(context, "watches")
    return WatchList(statuses=tuple(await port.watches()), text="")


@record(kw_only=True)
class EveryParams:
    """``/every RHYTHM COMMAND``: when, and which read command (split by bot_commands.every)."""

    text: str = positional(
        "RHYTHM COMMAND",
        str,
        required=True,
        greedy=True,
        help="10m|2h|1d, or day|weekday|weekend|monday.. at HH:MM, then a read command such as /list pending",
    )


def _check_every(params: EveryParams) -> EveryParams:
    split_every(params.text)  # raises ValueError with what is allowed
    return params


@command(
    "every",
    one_shot=False,
    needs=IN_A_ROOM,
    params=EveryParams,
    summary="Run a read command here on a schedule",
    access=Access.READ,
    usage="/every RHYTHM COMMAND",
    check=_check_every,
    raw=True,
    details="e.g. /every weekday at 09:00 /list pending · /every day at 18:00 /orders · /every 10m /list available",
)
async def every(context: CommandContext, params: EveryParams) -> ScheduleList:
    port = _port(context, "every")
    rhythm, line = split_every(params.text)
    name, access = context.access_of(line)
    if access is not Access.READ or name in NOTIFY_COMMANDS:
        kind = "writes" if access in (Access.WRITE, Access.CONFIRM) else "is not a read of the service"
        raise Forbidden(f"/every runs read commands only (such as /list or /orders): /{name} {kind}")
    made = await port.schedule(rhythm, line)
    text = f"Schedule {made.id}: {made.rhythm} ({port.timezone}) {show(made.command, 200)}"
    return ScheduleList(rows=(_row(made),), timezone=port.timezone, text=text)


@command(
    "schedules",
    one_shot=False,
    needs=IN_A_ROOM,
    params=NoParams,
    summary="Show this room's schedules",
    access=Access.READ,
)
async def schedules(context: CommandContext, params: NoParams) -> ScheduleList:
    port = _port(context, "schedules")
    rows = tuple(_row(found) for found in await port.schedules())
    return ScheduleList(rows=rows, timezone=port.timezone, text="")


def _schedule_id(word: str) -> int:
    if not word.isascii() or not word.isdigit() or len(word) > 12:
        raise ValueError(f"'{show(word)}' is not a schedule number: /schedules lists them")
    return int(word)


@record(kw_only=True)
class UnscheduleParams:
    """``/unschedule ID``: which schedule."""

    id: int = positional("ID", _schedule_id, required=True, help="the schedule's number (/schedules lists them)")


@command(
    "unschedule",
    one_shot=False,
    needs=IN_A_ROOM,
    params=UnscheduleParams,
    summary="Drop one of this room's schedules",
    access=Access.READ,
    details="Your own schedules; an admin of the room may drop anyone's",
)
async def unschedule(context: CommandContext, params: UnscheduleParams) -> Notice:
    port = _port(context, "unschedule")
    dropped = await port.unschedule(params.id)
    return Notice(text=f"Dropped schedule {dropped.id}: {dropped.rhythm} {show(dropped.command, 200)}")


def _row(found: ScheduledCommand) -> ScheduleRow:
    return ScheduleRow(
        id=found.id,
        rhythm=found.rhythm,
        command=found.command,
        creator=found.creator,
        next_run=found.next_run.isoformat(timespec="minutes"),
    )


def notify_commands() -> list[TypedCommand[object]]:
    """The commands of this module, in the order ``/help`` lists them."""
    return [watch, unwatch, watches, every, schedules, unschedule]  # type: ignore[list-item]
