"""The optional parts of petstore (pip extras) and the faces that need them.

``pip install petstore`` is what the TUI, chat, run and the subcommands need on the embedded
sandbox. Every other face is an extra; one whose extra is missing says which to install, in one
line, before anything of it is imported (``importlib.util.find_spec`` only looks the modules up).
"""

from __future__ import annotations

import argparse
from importlib.util import find_spec

#: Each extra -> the modules of it that petstore imports (tests/faces/test_extras.py holds these to pyproject.toml).
EXTRAS: dict[str, tuple[str, ...]] = {
    "server": ("uvicorn",),
    "postgres": ("psycopg",),
    "matrix": ("nio", "aiohttp"),
    "irc": ("irc",),
    "slack": ("slack_sdk", "aiohttp", "uvicorn"),
    "web": ("textual_serve", "aiohttp"),
    "jq": ("jq",),
    "keyring": ("keyring",),
    "xmpp": ("slixmpp",),
}


def installed(extra: str) -> bool:
    """Whether every module of ``extra`` can be imported."""
    return all(find_spec(module) is not None for module in EXTRAS[extra])


def needs(what: str, extra: str) -> str:
    """The line that says ``what`` needs ``extra``."""
    return f"petstore: {what} needs the {extra} extra: pip install 'petstore[{extra}]'"


def face_extra(args: argparse.Namespace) -> tuple[str, str] | None:
    """(the face as typed, the extra it needs) for the face ``args`` chose; None for the base install's."""
    if args.command == "serve":
        return "petstore serve", "server"
    if args.command == "web":
        return "petstore web", "web"
    if args.command == "bot" and args.platform:  # every platform the config names: each says what it lacks
        return f"petstore bot {args.platform}", args.platform
    return None


def missing_extra(args: argparse.Namespace) -> str | None:
    """The line to print when the face ``args`` chose needs an extra that is not installed; else None."""
    face = face_extra(args)
    if face is None or installed(face[1]):
        return None
    return needs(*face)
