"""``petstore approvals [list | show ID | cancel ID]``: the requests for approval in the bots' shared state, in
every format, and one's own withdrawn.

The requests are read from ``[bot] state`` (:mod:`petstore_state.pending`) and printed as a command's result would
be (:class:`~petstore_cli.runner.RunFace`: a table at a terminal, plain text in a pipe, ``--format csv|tsv|json``,
``--fields``, ``--jq``, ``--template``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from bot_commands.errors import EXIT_USAGE, UsageError, classify
from bot_commands.outcome import Outcome
from bot_commands.output import OutputSpec
from bot_commands.policy import local_actor
from bot_commands.results import Result
from bot_commands.script import ScriptLine
from petstore_cli.settings.model import Settings
from petstore_state.identity import terminal_name
from petstore_state.pending import PendingStore

from .approvals import approvals_result, cancel_request, open_store
from .runner import RunFace

__all__ = ["approvals_main"]


def approvals_main(settings: Settings, args: argparse.Namespace, *, output: OutputSpec) -> int:
    """Entry point of ``petstore approvals`` (called by petstore_cli.dispatch, with the output asked for); the exit
    code."""
    line = "petstore approvals" + (f" {args.action} {args.id}" if args.action != "list" else "")
    if (args.action != "list") != (args.id is not None):
        error = UsageError(
            "show and cancel take the request's id; list takes none",
            usage="petstore approvals [list | show ID | cancel ID]",
        )
        print(f"petstore: {error}", file=sys.stderr)
        return EXIT_USAGE
    store, database = open_store(settings)
    try:
        try:
            result = _result(store, args)
            outcome = Outcome(line=line, result=result)
        except Exception as exc:  # noqa: BLE001 - classified: one line, its exit code
            outcome = Outcome(line=line, failure=classify(exc))
    finally:
        database.close()
    face = RunFace(
        out=sys.stdout, err=sys.stderr, output=output, echo=False, delay=0.0, sleep=asyncio.sleep, one_shot=True
    )
    asyncio.run(face.after(ScriptLine(where="petstore approvals", line=line), outcome))
    face.finish(0)
    return EXIT_USAGE if face.bad_output else outcome.exit_code


def _result(store: PendingStore, args: argparse.Namespace) -> Result:
    """What the action comes to: the requests, one of them, or one's own withdrawn (asked as this terminal's
    person, the asker :class:`~petstore_cli.approvals.TerminalApproval` records)."""
    if args.action == "cancel":
        asker = terminal_name(store.database, local=local_actor().id)
        return asyncio.run(cancel_request(store, args.id, asker=asker))
    return approvals_result(store, show=args.id, limit=args.limit, now=time.time())
