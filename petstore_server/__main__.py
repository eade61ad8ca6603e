"""``python -m petstore_server``: run the service (what ``petstore serve`` does)."""

from __future__ import annotations

import argparse
import sys

from petstore_os import no_core_dumps


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the program: no core file, before any secret is read (see petstore_os.limits)
        no_core_dumps()
    from .options import add_serve_options
    from .serve import serve_command

    parser = argparse.ArgumentParser(prog="python -m petstore_server", description="Run the Pet Store service.")
    add_serve_options(parser)
    return serve_command(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
