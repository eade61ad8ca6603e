"""The core, approvals, watches, schedules and the runtime know no chat platform by name (issue 40's contract).

What counts as naming a platform, read from the code's syntax tree (so docstrings, comments and log messages may
say "Matrix" to explain, and prose is not policed):

- an import of a platform's module, or of a name that holds a platform's name (``from .matrix import ...``,
  ``import slack_sdk``, ``from .slack_web import SlackWeb``);
- any identifier that holds one as a word: a variable, attribute, function, class, argument or keyword
  (``matrix_announce``, ``MatrixTransport``, ``transport.slack_face``); words are split at ``_``, ``.`` and
  lower-to-upper case changes, so ``circle`` does not name IRC;
- a string in the code (not a docstring) that is a platform's name, or an identity of one (``"slack"``,
  ``"matrix:" + room``): the usual way to branch on a platform without an import.

A platform's module (``petstore_bot/matrix*.py``, ``slack*.py``, ``irc*.py``, ``xmpp*.py``) and the registry
(``petstore_bot/transport.py``) name platforms by design and are not checked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = frozenset({"matrix", "slack", "mattermost", "irc", "xmpp"})
NEUTRAL = [
    "petstore_bot/core.py",
    "petstore_bot/approvals_room.py",
    "petstore_bot/watcher.py",
    "petstore_bot/scheduler.py",
    "petstore_bot/notifier.py",
    "petstore_bot/pending.py",
    "bot_commands/notify.py",
    *sorted(str(path.relative_to(ROOT)) for path in (ROOT / "petstore_bot").glob("runtime*.py")),
]
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _words(name: str) -> set[str]:
    """The words of an identifier or a dotted module path, lower case (``MatrixTransport`` -> matrix, transport)."""
    return {word.lower() for part in re.split(r"[._]", name) for word in _WORD.findall(part)}


def _names(node: ast.AST) -> Iterator[str]:
    """Every identifier ``node`` defines or uses itself (not its children's)."""
    match node:
        case ast.Name(id=name) | ast.Attribute(attr=name) | ast.arg(arg=name):
            yield name
        case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
            yield name
        case ast.keyword(arg=str() as name):
            yield name
        case ast.Import(names=aliases):
            for alias in aliases:
                yield alias.name
                yield from [alias.asname] if alias.asname else []
        case ast.ImportFrom(module=module, names=aliases):
            yield module or ""
            for alias in aliases:
                yield alias.name
                yield from [alias.asname] if alias.asname else []


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string nodes that are docstrings (of the module, a class or a function)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def platform_names(source: str) -> list[str]:
    """Where ``source`` names a platform: ``line: what`` for each (see the module docstring)."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        found += [f"{line}: {name}" for name in _names(node) if _words(name) & PLATFORMS]
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value.strip().lower()
            if text in PLATFORMS or (text.partition(":")[0] in PLATFORMS and ":" in text):
                found.append(f"{line}: {node.value!r}")
    return found


@pytest.mark.parametrize("path", NEUTRAL)
def test_the_module_names_no_chat_platform(path: str) -> None:
    found = platform_names((ROOT / path).read_text(encoding="utf-8"))
    assert not found, f"{path} names a chat platform (see this test's docstring for what counts): {found}"


def test_the_check_finds_each_way_of_naming_a_platform() -> None:
    source = '''
"""Posts in Matrix rooms (a docstring: allowed)."""
from .matrix import MatrixTransport
import slack_sdk
from .chat import Reply as IrcReply


def post(xmpp_client, room):
    """On Mattermost too (allowed)."""
    log.info("posted in Slack")  # a message: allowed
    if room.startswith("matrix:"):
        return transport.slack_face
    return send(platform="mattermost", circle=1)
'''
    found = sorted(entry.partition(": ")[2] for entry in platform_names(source))
    named = ["'matrix:'", "'mattermost'", "IrcReply", "MatrixTransport", "matrix", "slack_face", "slack_sdk"]
    assert found == sorted([*named, "xmpp_client"])
