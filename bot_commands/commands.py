"""The slash commands, each declared once. Handlers return typed results, never text.

:func:`default_registry` lists them; nothing registers on import. Who may run a
command comes from its ``access``; the session checks the policy (roles,
read-only, confirmation) before any handler runs, so handlers only do the work.
"""

from __future__ import annotations

from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from petstore_api.models import PetPage, PetStatus

from . import converters as conv
from . import expect
from .errors import NoMorePages
from .parser import show
from .policy import Access
from .registry import Arg, CompletionContext, Registry, Values, command
from .results import (
    Cancelled,
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

if TYPE_CHECKING:  # pragma: no cover
    from .session import CommandSession

__all__ = ["MAX_PAGES", "default_registry"]

#: ``--all`` stops after this many pages (a guard against an endless ``rel="next"`` chain).
MAX_PAGES = 100


def _ids(context: CompletionContext) -> list[str]:
    return list(context.ids)


def _command_names(context: CompletionContext) -> list[str]:
    return list(context.names)


def _expect_values(context: CompletionContext) -> list[str]:
    kind = context.positional[0].lower() if context.positional else ""
    return {"status": list(conv.STATUSES), "error": list(expect.ERROR_HINTS)}.get(kind, [])


def _topic(word: str) -> str:
    """A command name as typed, without its ``/`` (the session resolves aliases and says did-you-mean)."""
    return word.lstrip("/").lower()


def _history_action(word: str) -> str:
    if word.lower() != "save":
        raise ValueError(f"unknown /history action '{show(word)}'; only save is known")
    return "save"


def _check_history(values: Values) -> None:
    if values["action"] and not values["file"]:
        raise ValueError("/history save needs a FILE")
    if values["file"] and not values["action"]:
        raise ValueError("write /history save FILE")


def _describe_add(values: Values) -> str:
    return f"add pet '{show(values['name'])}' (category {values['category']})"


_STATUS_HELP = "one of available, pending, sold"


@command(
    "list",
    aliases=("ls",),
    summary="List pets, optionally by status",
    access=Access.READ,
    group="listing",
    args=[
        Arg("status", "STATUS", convert=conv.status, choices=conv.STATUSES, help=_STATUS_HELP),
        Arg("status", "S", flag="--status", convert=conv.status, keys=("status",), choices=conv.STATUSES),
        Arg("limit", "N", flag="--limit", convert=conv.limit, keys=("limit",), help="pets per page, 1 to 100"),
        Arg("all", flag="--all", switch=True, help="follow the next pages to the end"),
    ],
)
async def list_pets(session: CommandSession, args: Values) -> PetList:
    status = PetStatus(args["status"]) if args["status"] else None
    if not args["all"]:
        page = await session.client.list_pets(limit=args["limit"], status=status)
        return PetList(
            pets=list(page.pets), status=args["status"], limit=args["limit"], next_url=page.next_url, raw=list(page.raw)
        )
    pets: list[Any] = []
    raw: list[Any] = []  # JSON values as the service sent them
    pages, next_url = 0, None
    async with aclosing(session.client.iter_pages(limit=args["limit"], status=status)) as stream:
        async for page in stream:
            pages += 1
            pets += page.pets
            raw += page.raw
            next_url = page.next_url
            session.report(f"{pages} page{'' if pages == 1 else 's'}, {len(pets)} pets so far")
            if pages >= MAX_PAGES:
                break
    return PetList(
        pets=pets,
        status=args["status"],
        limit=args["limit"],
        next_url=next_url,
        pages=pages,
        raw=raw,
        truncated=next_url is not None,
    )


@command("more", aliases=("next",), summary="Show the next page of the last /list", access=Access.READ, group="listing")
async def more_pets(session: CommandSession, args: Values) -> PetList:
    last = session.last_list
    if last is None or last.next_url is None:
        raise NoMorePages("no more pages: run /list first" if last is None else "that was the last page")
    page = await session.client.next_page(PetPage(pets=[], next_url=last.next_url))
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


@command(
    "add",
    summary="Add a pet",
    access=Access.WRITE,
    describe=_describe_add,
    args=[
        Arg(
            "name",
            "NAME",
            convert=conv.name,
            keys=("name",),
            required=True,
            greedy=True,
            help="the pet's name (quote it when it has spaces)",
        ),
        Arg(
            "category",
            "ID",
            flag="--category",
            convert=conv.category_id,
            required=True,
            keys=("category", "categoryid", "category_id"),
            help="category id (int64)",
        ),
        Arg(
            "status",
            "S",
            flag="--status",
            convert=conv.status,
            keys=("status",),
            choices=conv.STATUSES,
            help=_STATUS_HELP,
        ),
    ],
    details='Also key=value: /add name="Rex the Dog" categoryId=3 status=available',
)
async def add_pet(session: CommandSession, args: Values) -> PetCreated:
    created = await session.client.create_pet(
        name=args["name"],
        category_id=args["category"],
        status=args["status"],
        idempotency_key=session.idempotency_key(),
    )
    return PetCreated(pet=created.pet, raw=created.pet.to_wire(), replayed=created.replayed)


@command(
    "get",
    summary="Show one pet (deprecated operation: removed 5 December 2030)",
    access=Access.READ,
    group="detail",
    args=[
        Arg("id", "ID", convert=conv.pet_id, required=True, choices=_ids, help="pet id (int64); $last works"),
    ],
)
async def get_pet(session: CommandSession, args: Values) -> PetDetail:
    found = await session.client.get_pet(args["id"])
    return PetDetail(
        pet=found.pet, notice=found.notice, first_notice=session.first_notice("getPet"), raw=dict(found.raw)
    )


@command("orders", summary="List store orders (shown as the service sends them)", access=Access.READ)
async def list_orders(session: CommandSession, args: Values) -> OrdersListing:
    return OrdersListing(data=await session.client.list_orders())


@command("env", summary="Show the environment, base URL and (masked) API key", access=Access.READ)
async def show_env(session: CommandSession, args: Values) -> EnvInfo:
    return replace(session.env, read_only=session.policy.read_only)


@command("whoami", summary="Show who you are here and your role")
async def whoami(session: CommandSession, args: Values) -> WhoAmI:
    actor = session.actor
    allowed = tuple([f"/{c.name}" for c in session.allowed_commands()])
    return WhoAmI(actor=actor.id, role=str(actor.role), where=actor.where, commands=allowed)


@command(
    "help",
    summary="List the commands, or explain one",
    outcome=False,
    history=False,
    args=[
        Arg("topic", "COMMAND", convert=_topic, choices=_command_names, help="a command name"),
    ],
)
async def show_help(session: CommandSession, args: Values) -> Help:
    return session.help(args["topic"])


@command("quit", aliases=("exit",), summary="End the session", access=Access.TERMINAL, outcome=False, history=False)
async def quit_session(session: CommandSession, args: Values) -> Quit:
    return Quit()


@command(
    "sleep",
    summary="Pause for a demo (0 to 60 seconds)",
    outcome=False,
    args=[
        Arg("seconds", "SECONDS", convert=conv.seconds, required=True, help="0 to 60"),
    ],
)
async def sleep(session: CommandSession, args: Values) -> Paused:
    await session.sleep(args["seconds"])
    return Paused(seconds=args["seconds"])


@command(
    "expect",
    summary="Check the previous command's outcome (fails the script if not)",
    usage=expect.USAGE,
    check=expect.check,
    outcome=False,
    args=[
        Arg(
            "what",
            "WHAT",
            convert=expect.what,
            required=True,
            choices=expect.KINDS,
            help="ok, count, status, name or error",
        ),
        Arg("value", "VALUE", greedy=True, choices=_expect_values, help="what to compare with"),
    ],
    details='e.g. /expect count 3 · /expect status sold · /expect name "Rex" · /expect error 404',
)
async def expect_outcome(session: CommandSession, args: Values) -> ExpectationMet:
    outcome = session.last_outcome
    held = expect.evaluate(args["what"], args["value"], outcome)
    return ExpectationMet(expectation=held, previous=outcome.line if outcome else "")


@command(
    "history",
    summary="Show this session's commands, or save them as a script",
    access=Access.TERMINAL,
    usage="/history [save FILE]",
    check=_check_history,
    outcome=False,
    history=False,
    args=[
        Arg("action", "save", convert=_history_action, choices=("save",)),
        Arg("file", "FILE", greedy=True, help="where to write the script (in a browser: the download's name)"),
    ],
)
async def history(session: CommandSession, args: Values) -> HistoryListing | HistoryScript | Notice:
    if not args["action"]:
        return HistoryListing(lines=tuple(session.history_script_lines()))
    if not session.policy.host_files:  # a browser session: the face hands the script over, nothing is written
        return session.history_file(args["file"])
    count = session.save_history(args["file"])
    return Notice(text=f"saved {count} commands to {show(args['file'], 200)}")


@command(
    "confirm",
    summary="Run the write you were asked to confirm",
    access=Access.CONFIRM,
    history=False,
    args=[
        Arg("code", "CODE", required=True, help="the code the confirmation request gave"),
    ],
)
async def confirm(session: CommandSession, args: Values) -> Result:
    return await session.confirm_pending(args["code"])


@command(
    "cancel",
    summary="Drop the write you were asked to confirm",
    access=Access.CONFIRM,
    history=False,
    args=[
        Arg("code", "CODE", required=True, help="the code the confirmation request gave"),
    ],
)
async def cancel(session: CommandSession, args: Values) -> Cancelled:
    return Cancelled(code=args["code"].strip().upper(), what=session.cancel_pending(args["code"]))


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
            history,
            sleep,
            expect_outcome,
            quit_session,
        ]
    )
