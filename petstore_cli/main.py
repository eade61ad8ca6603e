"""``petstore``: the program's entry point. The command line goes to :func:`petstore_cli.dispatch.dispatch`.

Nothing heavy is imported here or by the dispatcher at module level: ``petstore --version`` and ``--help`` must
not pay for textual, httpx or pydantic; ``petstore --version`` alone is answered before argparse or anything else is
imported.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from .exits import EXIT_OK

__all__ = ["main", "quiet_on_closed_pipe"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``petstore`` with ``argv`` (None: this process's own arguments, as the program)."""
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        return _version()
    if argv is None:  # the program itself, not a caller in-process
        from petstore_os import no_core_dumps

        no_core_dumps()  # first: no core file holds a key read from here on (petstore_os.limits)
        from .startup import begin

        begin()  # the collector rarely while the command's modules are imported (until startup.started)
        # petstore uses no pydantic plugins: pydantic's switch spares it the scan of every installed
        # package's entry points for them (an explicit setting, even an empty one, is kept).
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from .dispatch import dispatch

    if argv is None:
        return quiet_on_closed_pipe(lambda: dispatch(sys.argv[1:], program=True))
    return dispatch(argv)


def _version() -> int:
    """``petstore --version``: what argparse's ``--version`` prints (the parser says the same), without it."""
    from petstore_api.version import __version__

    def say() -> int:
        print(f"petstore {__version__}")
        return EXIT_OK

    return quiet_on_closed_pipe(say)


def quiet_on_closed_pipe(run: Callable[[], int]) -> int:
    """``run()``, ending quietly with exit 0 when stdout is a pipe its reader closed (``petstore ... | head -1``):
    the reader has what it wanted. What is still buffered is flushed here, where a closed pipe can be caught, and
    then stdout points at /dev/null so that nothing at exit tries again. That holds for a ``SystemExit`` too
    (argparse's ``--help``): left to the interpreter's flush at exit, a closed pipe is ``Exception ignored ...``
    and exit 120."""
    try:
        try:
            code = run()
        except SystemExit:  # argparse's --help and --version print, then exit: flush before the interpreter does
            sys.stdout.flush()
            raise
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_OK
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
