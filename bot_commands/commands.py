"""The slash commands, each declared once: a parameter type whose fields declare its arguments, and a handler
taking it. Handlers return typed results, never text.

:func:`default_registry` lists them; nothing registers on import. Who may run a
command comes from its ``access``; the session checks the policy (roles,
read-only, confirmation) before any handler runs, so handlers only do the work.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing

from petstore_api.models import Pet, PetPage, PetStatus
from petstore_os.records import record, replace

from . import converters as conv
from . import expect
from .arguments import CompletionContext, NoParams, option, positional, switch
from .context import CommandContext
from .errors import NoMorePages
from .expect import ExpectParams
from .notify import notify_commands
from .parser import show
from .policy import Access
from .registry import Registry, command
from .results import (
    JSON,
    AuditListing,
    Cancelled,
    Denied,
    EnvInfo,
    ExpectationMet,
    Help,
    HistoryListing,
    HistoryScript,
    Notice,
    OrdersListing,
    Paused,
    PetCreated,
    PetDetail,
    PetList,
    Quit,
    Result,
    WhoAmI,
)

__all__ = [
    "AUDIT_DEFAULT",
    "AUDIT_MAX",
    "MAX_PAGES",
    "AddParams",
    "AuditParams",
    "CodeParams",
    "GetParams",
    "HelpParams",
    "HistoryParams",
    "ListParams",
    "SleepParams",
    "default_registry",
]

#: ``--all`` stops after this many pages (a guard against an endless ``rel="next"`` chain).
MAX_PAGES = 100


def _ids(context: CompletionContext) -> list[str]:
    return list(context.ids)


def _command_names(context: CompletionContext) -> list[str]:
    return list(context.names)


def _topic(word: str) -> str:
    """A command name as typed, without its ``/`` (the session resolves aliases and says did-you-mean)."""
    return word.lstrip("/").lower()


def _history_action(word: str) -> str:
    if word.lower() != "save":
        raise ValueError(f"unknown /history action '{show(word)}'; only save is known")
    return "save"


_STATUS_HELP = "one of available, pending, sold"


@record(kw_only=True)
class ListParams:
    """``/list``: which pets, how many a page, and whether to follow every page."""

    status: PetStatus | None = positional(
        "STATUS",
        conv.status,
        keys=("status",),
        choices=conv.STATUSES,
        help=_STATUS_HELP,
        flag="--status",
        flag_metavar="S",
    )
    limit: int | None = option("--limit", "N", conv.limit, keys=("limit",), help="pets per page, 1 to 100")
    all: bool = switch("--all", help="follow the next pages to the end")


@command(
    "list",
    params=ListParams,
    aliases=("ls",),
    summary="List pets, optionally by status",
    access=Access.READ,
    group="listing",
)
async def list_pets(context: CommandContext, params: ListParams) -> PetList:
    status = params.status.value if params.status is not None else None
    if not params.all:
        page = await context.client.list_pets(limit=params.limit, status=params.status)
        return PetList(
            pets=list(page.pets), status=status, limit=params.limit, next_url=page.next_url, raw=list(page.raw)
        )
    pets: list[Pet] = []
    raw: list[JSON] = []  # JSON values as the service sent them
    pages, next_url = 0, None
    async with aclosing(context.client.iter_pages(limit=params.limit, status=params.status)) as stream:
        async for page in stream:
            pages += 1
            pets += page.pets
            raw += page.raw
            next_url = page.next_url
            context.report(f"{pages} page{'' if pages == 1 else 's'}, {len(pets)} pets so far")
            if pages >= MAX_PAGES:
                break
    return PetList(
        pets=pets,
        status=status,
        limit=params.limit,
        next_url=next_url,
        pages=pages,
        raw=raw,
        truncated=next_url is not None,
    )


@command(
    "more",
    one_shot=False,
    params=NoParams,
    aliases=("next",),
    summary="Show the next page of the last /list",
    access=Access.READ,
    group="listing",
)
async def more_pets(context: CommandContext, params: NoParams) -> PetList:
    last = context.last_list
    if last is None or last.next_url is None:
        raise NoMorePages("no more pages: run /list first" if last is None else "that was the last page")
    page = await context.client.next_page(PetPage(pets=[], next_url=last.next_url))
    if page is None:
        raise NoMorePages("that was the last page")
    return PetList(
        pets=list(page.pets),
        status=last.status,
        limit=last.limit,
        next_url=page.next_url,
        raw=list(page.raw),
        continued=True,
    )


@record(kw_only=True)
class AddParams:
    """``/add``: the new pet's fields."""

    name: str = positional(
        "NAME",
        conv.name,
        required=True,
        greedy=True,
        keys=("name",),
        help="the pet's name (quote it when it has spaces)",
    )
    category: int = option(
        "--category",
        "ID",
        conv.category_id,
        required=True,
        keys=("category", "categoryid", "category_id"),
        help="category id (int64)",
    )
    status: PetStatus | None = option(
        "--status", "S", conv.status, keys=("status",), choices=conv.STATUSES, help=_STATUS_HELP
    )


def _describe_add(params: AddParams) -> str:
    status = f", status {params.status}" if params.status else ""
    return f"add pet '{show(params.name)}' (category {params.category}{status})"


def _add_sends(params: AddParams) -> dict[str, object]:
    return {"name": params.name, "categoryId": params.category, "status": params.status}


@command(
    "add",
    params=AddParams,
    summary="Add a pet",
    access=Access.WRITE,
    describe=_describe_add,
    sends=_add_sends,
    details='Also key=value: /add name="Rex the Dog" categoryId=3 status=available',
)
async def add_pet(context: CommandContext, params: AddParams) -> PetCreated:
    created = await context.client.create_pet(
        name=params.name,
        category_id=params.category,
        status=params.status,
        idempotency_key=context.idempotency_key(),
    )
    return PetCreated(pet=created.pet, raw=created.pet.to_wire(), replayed=created.replayed)


@record(kw_only=True)
class GetParams:
    """``/get``: which pet."""

    id: int = positional("ID", conv.pet_id, required=True, choices=_ids, help="pet id (int64); $last works")


@command(
    "get",
    params=GetParams,
    summary="Show one pet (deprecated operation: removed 5 December 2030)",
    access=Access.READ,
    group="detail",
)
async def get_pet(context: CommandContext, params: GetParams) -> PetDetail:
    found = await context.client.get_pet(params.id)
    return PetDetail(
        pet=found.pet, notice=found.notice, first_notice=context.first_notice("getPet"), raw=dict(found.raw)
    )


@command("orders", params=NoParams, summary="List store orders (shown as the service sends them)", access=Access.READ)
async def list_orders(context: CommandContext, params: NoParams) -> OrdersListing:
    return OrdersListing(data=await context.client.list_orders())


@command("env", params=NoParams, summary="Show the environment, base URL and (masked) API key", access=Access.READ)
async def show_env(context: CommandContext, params: NoParams) -> EnvInfo:
    return replace(context.env, read_only=context.policy.read_only)


@command("whoami", params=NoParams, summary="Show who you are here and your role")
async def whoami(context: CommandContext, params: NoParams) -> WhoAmI:
    actor = context.actor
    allowed = tuple(entry.name for entry in context.help().entries)  # the commands /help lists to this actor
    return WhoAmI(actor=actor.id, role=str(actor.role), where=actor.where, commands=allowed)


@record(kw_only=True)
class HelpParams:
    """``/help``: on which command, if one."""

    topic: str | None = positional("COMMAND", _topic, choices=_command_names, help="a command name")


@command("help", params=HelpParams, summary="List the commands, or explain one", outcome=False, history=False)
async def show_help(context: CommandContext, params: HelpParams) -> Help:
    return context.help(params.topic)


@command(
    "quit",
    one_shot=False,
    params=NoParams,
    aliases=("exit",),
    summary="End the session",
    access=Access.TERMINAL,
    outcome=False,
    history=False,
)
async def quit_session(context: CommandContext, params: NoParams) -> Quit:
    return Quit()


#: The longest ``/sleep`` in a chat bot: anyone in a room (even role none) may send one, and it holds their next
#: commands; the chat faces refuse longer ones (the help says so).
CHAT_SLEEP_MAX = 2.0


@record(kw_only=True)
class SleepParams:
    """``/sleep``: how long."""

    seconds: float = positional(
        "SECONDS", conv.seconds, required=True, help=f"0 to 60 (in a chat bot at most {CHAT_SLEEP_MAX:g})"
    )


@command(
    "sleep",
    params=SleepParams,
    summary=f"Pause for a demo (0 to 60 seconds; in a chat bot at most {CHAT_SLEEP_MAX:g})",
    outcome=False,
)
async def sleep(context: CommandContext, params: SleepParams) -> Paused:
    await context.sleep(params.seconds)
    return Paused(seconds=params.seconds)


@command(
    "expect",
    one_shot=False,
    params=ExpectParams,
    summary="Check the previous command's outcome (fails the script if not)",
    usage=expect.USAGE,
    check=expect.check,
    outcome=False,
    details='e.g. /expect count 3 · /expect status sold · /expect name "Rex" · /expect error 404',
)
async def expect_outcome(context: CommandContext, params: ExpectParams) -> ExpectationMet:
    outcome = context.last_outcome
    held = expect.evaluate(params.what, params.value, outcome)
    return ExpectationMet(expectation=held, previous=outcome.line if outcome else "")


@record(kw_only=True)
class HistoryParams:
    """``/history [save FILE]``: show the session, or save it."""

    action: str | None = positional("save", _history_action, choices=("save",))
    file: str | None = positional(
        "FILE", str, greedy=True, help="where to write the script (in a browser: the download's name)"
    )


def _check_history(params: HistoryParams) -> HistoryParams:
    if params.action and not params.file:
        raise ValueError("/history save needs a FILE")
    if params.file and not params.action:
        raise ValueError("write /history save FILE")
    return params


@command(
    "history",
    one_shot=False,
    params=HistoryParams,
    summary="Show this session's commands, or save them as a script",
    access=Access.TERMINAL,
    usage="/history [save FILE]",
    check=_check_history,
    outcome=False,
    history=False,
)
async def history(context: CommandContext, params: HistoryParams) -> HistoryListing | HistoryScript | Notice:
    if params.file is None:
        return HistoryListing(lines=tuple(context.history_script_lines()))
    if not context.policy.host_files:  # a browser session: the face hands the script over, nothing is written
        return context.history_file(params.file)
    count = context.save_history(params.file)
    return Notice(text=f"saved {count} commands to {show(params.file, 200)}")


@record(kw_only=True)
class CodeParams:
    """``/confirm CODE``, ``/cancel CODE``, ``/approve CODE``: the code a confirmation or approval request gave."""

    code: str = positional("CODE", str, required=True, help="the code the request gave")


@command(
    "confirm",
    one_shot=False,
    params=CodeParams,
    summary="Run the write you were asked to confirm",
    access=Access.CONFIRM,
    history=False,
)
async def confirm(context: CommandContext, params: CodeParams) -> Result:
    return await context.confirm_pending(params.code)


@command(
    "cancel",
    one_shot=False,
    params=CodeParams,
    summary="Drop the write you were asked to confirm",
    access=Access.CONFIRM,
    history=False,
)
async def cancel(context: CommandContext, params: CodeParams) -> Cancelled:
    return Cancelled(code=params.code.strip().upper(), what=await context.cancel_pending(params.code))


@command(
    "approve",
    one_shot=False,
    params=CodeParams,
    summary="Run another person's write that waits for a second person",
    access=Access.APPROVE,
    history=False,
)
async def approve(context: CommandContext, params: CodeParams) -> Result:
    return await context.approve_pending(params.code)


@record(kw_only=True)
class DenyParams:
    """``/deny CODE [REASON]``: drop a request for approval, saying why."""

    code: str = positional("CODE", str, required=True, help="the code the request for approval gave")
    reason: str | None = positional("REASON", str, greedy=True, help="why, in words, for the asker and the audit")


@command(
    "deny",
    one_shot=False,
    params=DenyParams,
    summary="Drop another person's write that waits for a second person",
    access=Access.APPROVE,
    usage="/deny CODE [REASON]",
    history=False,
)
async def deny(context: CommandContext, params: DenyParams) -> Denied:
    return await context.deny_pending(params.code, params.reason or "")


#: ``/audit`` shows this many lines unless told, and at most ``AUDIT_MAX`` (a chat message stays readable).
AUDIT_DEFAULT, AUDIT_MAX = 10, 50


def _audit_count(word: str) -> int:
    if not word.isdecimal() or not 1 <= int(word) <= AUDIT_MAX:
        raise ValueError(f"'{show(word)}' is not a number of lines: give 1 to {AUDIT_MAX}")
    return int(word)


@record(kw_only=True)
class AuditParams:
    """``/audit [N]``: how many of the last lines."""

    count: int | None = positional("N", _audit_count, help=f"how many of the last lines, 1 to {AUDIT_MAX}")


@command(
    "audit",
    one_shot=False,  # a chat room's: no ``petstore audit`` subcommand
    params=AuditParams,
    summary=f"Show the last audit lines of this room (default {AUDIT_DEFAULT}, at most {AUDIT_MAX})",
    access=Access.ADMIN,
    usage="/audit [N]",
    history=False,
    details="Who did what here, when, and how it went; admins of the room only.",
)
async def show_audit(context: CommandContext, params: AuditParams) -> AuditListing | Notice:
    trail = context.audit_trail
    if trail is None:
        return Notice(text="no audit log is kept here", level="warning")
    where, count = context.actor.where, params.count or AUDIT_DEFAULT
    records = await asyncio.to_thread(trail.recent, where=where, count=count)
    return AuditListing(where=where, records=tuple(records))


def default_registry() -> Registry:
    """The registry of every petstore command, in the order ``/help`` lists them."""
    return Registry(
        [
            list_pets,
            more_pets,
            add_pet,
            get_pet,
            list_orders,
            show_env,
            whoami,
            show_help,
            confirm,
            cancel,
            approve,
            deny,
            show_audit,
            *notify_commands(),
            history,
            sleep,
            expect_outcome,
            quit_session,
        ]
    )
