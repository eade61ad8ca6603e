"""``petstore``: the program's entry point. The command line goes to :func:`petstore_cli.dispatch.dispatch`.

Nothing heavy is imported here or by the dispatcher at module level: ``petstore --version`` and ``--help`` must
not pay for textual, httpx or pydantic.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from petstore_os import no_core_dumps

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``petstore`` with ``argv`` (None: this process's own arguments, as the program)."""
    if argv is None:  # the program itself, not a caller in-process
        no_core_dumps()  # first: no core file holds a key read from here on (petstore_os.limits)
        # petstore uses no pydantic plugins: pydantic's switch spares it the scan of every installed
        # package's entry points for them (an explicit setting, even an empty one, is kept).
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from .dispatch import dispatch

    return dispatch(sys.argv[1:] if argv is None else argv, program=argv is None)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
