"""``python -m petstore_server``: run the service (what ``petstore serve`` does)."""

from __future__ import annotations

import sys
from importlib.util import find_spec

from petstore_os import no_core_dumps
from petstore_os.arguments import OneLineParser

#: How to get what ``petstore serve`` runs on (uvicorn).
INSTALL_SERVER = "pip install 'petstore[server]'"


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the program: no core file, before any secret is read (see petstore_os.limits)
        no_core_dumps()
    if find_spec("uvicorn") is None:  # before anything of the service is imported
        print(f"error: python -m petstore_server needs the server extra: {INSTALL_SERVER}", file=sys.stderr)
        return 2
    from .options import add_serve_options
    from .serve import serve_command

    parser = OneLineParser(prog="python -m petstore_server", description="Run the Pet Store service.")
    add_serve_options(parser)
    return serve_command(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
