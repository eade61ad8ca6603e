"""Imports flow one way: tui -> bot_commands -> petstore_api; the service imports no face; chat SDKs stay in petstore_bot.

Checked twice: statically (every import statement in every module) and
dynamically (import each package's modules in a fresh interpreter and look at
``sys.modules``), so a lazy import inside a function is caught too.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest
from python_support import python_run

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = [
    "petstore_os",
    "petstore_api",
    "petstore_server",
    "bot_commands",
    "tui",
    "petstore_cli",
    "petstore_bot",
    "petstore_state",
    "petstore_web",
]
#: chat SDKs: imported only in petstore_bot/ (the bot faces), never by the command layer.
CHAT_SDKS = {"nio", "slack_sdk", "slack_bolt", "aiohttp", "irc", "slixmpp"}
#: the web face's server: textual-serve (and the aiohttp it runs on) only in petstore_web/.
WEB = {"textual_serve", "aiohttp_jinja2"}

#: the application's settings (the config file in the platform dirs; pydantic-settings, no longer used): petstore_cli/settings only;
#: the client keeps the client's own (base URL, key, timeouts, retries), the command layer and the TUI get values.
APP_SETTINGS = {"pydantic_settings", "platformdirs"}

#: package -> top-level modules it must never import (directly or lazily).
FORBIDDEN = {
    "petstore_api": {"textual", "tui", "bot_commands", "petstore_server", "petstore_cli", "starlette", "uvicorn"}
    | APP_SETTINGS
    | CHAT_SDKS
    | WEB
    | {"petstore_bot", "petstore_web"},
    "bot_commands": {
        "textual",
        "tui",
        "petstore_server",
        "petstore_cli",
        "starlette",
        "uvicorn",
        "petstore_bot",
        "petstore_state",
    }
    | APP_SETTINGS
    | CHAT_SDKS
    | WEB
    | {"petstore_web"},
    "petstore_server": {"textual", "tui", "bot_commands", "petstore_cli", "petstore_api", "httpx", "petstore_bot"}
    | CHAT_SDKS
    | WEB
    | {"petstore_web"},
    # The TUI takes what it shows and checks from bot_commands (outcomes, views, validation), never the client.
    "tui": {"petstore_server", "petstore_cli", "petstore_api", "httpx", "petstore_bot", "petstore_web"}
    | APP_SETTINGS
    | CHAT_SDKS
    | WEB,
    "petstore_bot": {"textual", "tui", "petstore_server", "petstore_cli", "petstore_web"} | WEB,
    # The bots' shared state (SQLite, or PostgreSQL through psycopg): a store under the faces, like the client; the
    # command layer reaches it only through its ports.
    "petstore_state": {
        "textual",
        "tui",
        "petstore_server",
        "petstore_cli",
        "petstore_api",
        "bot_commands",
        "petstore_bot",
        "petstore_web",
        "httpx",
        "pydantic",
    }
    | APP_SETTINGS
    | CHAT_SDKS
    | WEB,
    # The web face serves pages and relays bytes to `petstore tui` processes: it imports no product layer and
    # no textual (the TUI runs in its own processes), no chat SDK but the aiohttp textual-serve runs on.
    "petstore_web": {
        "textual",
        "tui",
        "petstore_server",
        "petstore_cli",
        "petstore_api",
        "bot_commands",
        "httpx",
        "petstore_bot",
        "pydantic",
        "starlette",
        "uvicorn",
    }
    | (CHAT_SDKS - {"aiohttp"}),
}


def _modules(package: str) -> list[str]:
    names = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def _static_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_static_imports_respect_layers(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(_static_imports(path) & FORBIDDEN[package])
        for path in (ROOT / package).rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


@pytest.mark.parametrize(
    ("library", "home"),
    [
        ("textual", "tui"),
        ("httpx", "petstore_api"),
        ("prometheus_client", "petstore_server petstore_bot"),  # the service's metrics, and each bot process's
        ("h11", "petstore_server"),
    ]
    + [(sdk, "petstore_bot") for sdk in sorted(CHAT_SDKS - {"aiohttp"})]
    + [("aiohttp", "petstore_bot petstore_web")]
    + [(lib, "petstore_web") for lib in sorted(WEB)],
)
def test_a_library_is_imported_only_in_its_package(library: str, home: str) -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for package in PRODUCT
        if package not in home.split()
        for path in (ROOT / package).rglob("*.py")
        if library in _static_imports(path)
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "package", ["petstore_api", "bot_commands", "petstore_server", "petstore_bot", "petstore_state", "petstore_web"]
)
def test_runtime_imports_respect_layers(package: str) -> None:
    code = (
        "import importlib, json, sys\n"
        f"for name in {_modules(package)!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = python_run(code)
    loaded = set(json.loads(out.stdout))
    assert loaded & FORBIDDEN[package] == set()


def test_the_host_measures_use_the_standard_library_only() -> None:
    """petstore_os is shared by the service and the client's side, so it imports nothing else (ours or not)."""
    code = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        f"for name in {_modules('petstore_os')!r}:\n"
        "    __import__(name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in set(sys.modules) - before})))\n"
    )
    loaded = set(json.loads(python_run(code).stdout)) - {"petstore_os"}
    assert loaded <= set(sys.stdlib_module_names), loaded - set(sys.stdlib_module_names)
    static = set().union(*(_static_imports(path) for path in (ROOT / "petstore_os").rglob("*.py")))
    assert static <= set(sys.stdlib_module_names) | {"__future__"}


def test_version_and_help_do_not_import_heavy_libraries() -> None:
    code = (
        "import sys\n"
        "from petstore_cli.options import build_parser\n"
        "build_parser().format_help()\n"
        "heavy = {'textual', 'httpx', 'pydantic', 'pydantic_settings', 'rich', 'starlette', 'uvicorn'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = python_run(code)
    assert out.stdout.strip() == "[]"


def test_chat_types_import_no_sdk() -> None:
    """petstore_bot.chat is what the bot core sees: importing it loads no chat SDK."""
    code = (
        "import json, sys\n"
        "import petstore_bot.chat\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = python_run(code)
    assert set(json.loads(out.stdout)) & (CHAT_SDKS | {"httpx", "pydantic"}) == set()


def test_the_bot_core_is_platform_neutral() -> None:
    """The core every platform shares (and its in-memory test backend) loads no chat SDK."""
    modules = [
        "petstore_bot.core",
        "petstore_bot.roles",
        "petstore_bot.ratelimit",
        "petstore_bot.replies",
        "petstore_bot.testing",
    ]
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = python_run(code)
    assert set(json.loads(out.stdout)) & CHAT_SDKS == set()


def test_the_bot_tests_import_nothing_of_the_cli() -> None:
    """tests/bot tests the bot (its core, its runtime, its platforms) through petstore_bot alone; the CLI's side of
    the bot (options, exit codes) is tested in tests/faces."""
    offenders = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests" / "bot").rglob("*.py")
        if "petstore_cli" in _static_imports(path)
    )
    assert offenders == []


#: petstore_cli modules that import petstore_bot for something other than running a bot: the settings every face
#: loads (the [bot] tables are part of the config file), and the terminal's side of approvals (it reads and withdraws
#: the requests the bots post).
NOT_THE_BOT = {"petstore_cli/settings/model.py", "petstore_cli/config.py", "petstore_cli/approvals.py"}


def test_the_cli_side_of_the_bot_only_parses_options_and_calls_the_runtime() -> None:
    """The bot's runtime lives in petstore_bot: the petstore_cli modules that import it are 300 lines together at
    most (McCabe complexity at most 8 in petstore_cli and petstore_bot is ruff's C901, pyproject.toml)."""
    modules = [
        path
        for path in sorted((ROOT / "petstore_cli").rglob("*.py"))
        if "petstore_bot" in _static_imports(path) and str(path.relative_to(ROOT)) not in NOT_THE_BOT
    ]
    lines = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines()) for path in modules}
    assert "petstore_cli/bot.py" in lines
    assert sum(lines.values()) <= 300, lines
