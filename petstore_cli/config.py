"""``petstore config path|show|init``: where the config file is, what is in effect and why, a new file.

``show`` lists every setting of :class:`petstore_cli.settings.model.Settings` (walked from the model, so a new
setting shows up by itself) with its effective value and where it came from: a flag, an environment variable
(named), the config file (``file:line``), the key store (``petstore auth login``'s key for the server in effect) or
the default. The API keys are masked, a URL's password (``[bot] state``) shown as ``***``. ``init`` writes
``config.example.toml`` (shipped in this package; a test keeps it byte-identical to the top-level file) with mode
0600 and never overwrites a file.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterator, Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from bot_commands.errors import EXIT_OK, EXIT_USAGE
from petstore_api.masking import mask_secret
from petstore_bot.settings import SecretUrl
from petstore_cli.settings.load import find_config_file, load_settings, setting_source
from petstore_cli.settings.model import Settings
from petstore_os import open_private
from petstore_os.records import record

from .faces import overrides

__all__ = ["Setting", "config_main", "effective_settings", "example_text", "with_stored_key"]


@record
class Setting:
    """One effective setting: ``http.timeout``, its value as shown, and its source."""

    name: str
    value: str
    source: str


def example_text() -> str:
    """The commented example config (package data)."""
    return files("petstore_cli").joinpath("config.example.toml").read_text(encoding="utf-8")


def _leaves(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            yield from _leaves(kind, (*prefix, name))
        else:
            yield (*prefix, name)


def _node(settings: Settings, path: tuple[str, ...]) -> Any:
    node: Any = settings
    for part in path:
        node = getattr(node, part)
    return node


def _value(settings: Settings, path: tuple[str, ...]) -> str:
    node = _node(settings, path)
    if isinstance(node, SecretUrl):
        return node.shown()
    if isinstance(node, SecretStr) or (path[-1] == "api_key" and node is not None):
        return mask_secret(node)
    if node is None:
        return "(not set)"
    if isinstance(node, bool):
        return "true" if node else "false"
    return str(node)


def toml_line(text: str, path: tuple[str, ...]) -> int | None:
    """The line number of ``path``'s key in a TOML text (``[section]`` headers and dotted keys)."""
    section: tuple[str, ...] = ()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        header = re.match(r"^\[\s*([A-Za-z0-9_.\s\"-]+?)\s*\]$", line)
        if header:
            section = tuple(p.strip().strip('"') for p in header.group(1).split("."))
            continue
        key = re.match(r"^([A-Za-z0-9_.\s\"-]+?)\s*=", line)
        if key and (*section, *(p.strip().strip('"') for p in key.group(1).split("."))) == path:
            return number
    return None


def effective_settings(
    settings: Settings,
    *,
    flags: Mapping[str, Any],
    environ: Mapping[str, str],
    path: Path | None,
    toml: Mapping[str, Any],
    toml_text: str = "",
) -> list[Setting]:
    """Every setting, its value (keys masked) and its source, highest source first."""
    out: list[Setting] = []
    for leaf in _leaves(Settings):
        found = setting_source(leaf, flags=flags, environ=environ, config_path=path, toml=toml)
        if found.kind == "file":
            line = toml_line(toml_text, leaf)
            source = f"{path}:{line}" if line else str(path)
        elif leaf[-1] == "api_key" and found.kind == "default" and _node(settings, (*leaf[:-1], "api_key_file")):
            source = "api_key_file"  # read from the file that setting names
        else:
            source = {"flag": f"flag {found.name}", "env": f"env {found.name}"}.get(found.kind, "default")
        out.append(Setting(name=".".join(leaf), value=_value(settings, leaf), source=source))
    return out


#: Older places of a setting, still read: shown only when set (else the setting would show twice).
OLDER_PLACES = {"ui.theme": "tui.theme"}


def in_effect(rows: list[Setting], settings: Settings) -> list[Setting]:
    """``rows`` as in effect: the environment chosen when none is set (the sandbox, or custom for a base URL), and
    each setting once (an older place of one, such as ``ui.theme``, only when it is what is set)."""
    from petstore_api.errors import ConfigError

    from .settings.target import resolve_target

    out: list[Setting] = []
    for row in rows:
        if row.name in OLDER_PLACES and row.source == "default":
            continue
        if row.name in OLDER_PLACES:
            row = Setting(row.name, row.value, f"{row.source} (older place of {OLDER_PLACES[row.name]})")
        if row.name == "env" and row.source == "default":
            try:
                env = resolve_target(settings).env
            except ConfigError:
                env = "custom"
            why = "a base URL is set" if env == "custom" else "no base URL is set"
            row = Setting(row.name, env, f"default ({why})")
        out.append(row)
    return out


def with_stored_key(rows: list[Setting], settings: Settings) -> list[Setting]:
    """``rows`` with the key ``petstore auth login`` stored for the server in effect, masked, on that environment's
    ``api_key`` row, when no other source gives one (what ``compose`` uses: ``settings.keystore.stored_key_for``)."""
    from petstore_api.errors import ConfigError

    from .settings.keystore import stored_key_for
    from .settings.target import resolve_target

    try:
        target = resolve_target(settings)
    except ConfigError:
        return rows
    stored = stored_key_for(settings, target)
    if stored is None:
        return rows
    name = "api_key" if target.env == "custom" else f"{target.env}.api_key"
    shown = Setting(name, mask_secret(stored.key), f"petstore auth login, in {stored.where}")
    return [shown if row.name == name else row for row in rows]


def _show(args: argparse.Namespace) -> int:
    import tomllib

    flags = {k: v for k, v in overrides(args).items() if v is not None}
    loaded = load_settings(config_path=getattr(args, "config", None), overrides=flags)
    path = loaded.settings.config_path
    text = path.read_text(encoding="utf-8") if loaded.config_file is not None and path is not None else ""
    toml = tomllib.loads(text) if text else {}
    rows = effective_settings(
        loaded.settings, flags=flags, environ=os.environ, path=path if text else None, toml=toml, toml_text=text
    )
    rows = with_stored_key(in_effect(rows, loaded.settings), loaded.settings)
    state = "read" if text else "not found; petstore config init writes one"
    print(f"# config file: {path} ({state})")
    for warning in loaded.warnings:
        print(f"# warning: {warning}")
    width = max(len(r.name) for r in rows)
    value_width = min(max(len(r.value) for r in rows), 40)
    for row in rows:
        print(f"{row.name.ljust(width)}  {row.value.ljust(value_width)}  {row.source}")
    return EXIT_OK


def _init(args: argparse.Namespace) -> int:
    path = find_config_file(getattr(args, "config", None))
    assert path is not None
    if path.exists():
        print(f"petstore config init: {path} exists; not overwritten (edit it, or remove it first)", file=sys.stderr)
        return EXIT_USAGE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(example_text())
    except FileExistsError:
        print(f"petstore config init: {path} exists; not overwritten", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"petstore config init: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {path} (mode 0600): every setting, commented out; uncomment what you need")
    return EXIT_OK


def config_main(args: argparse.Namespace) -> int:
    """Entry point of ``petstore config`` (called by petstore_cli.dispatch)."""
    if args.action == "path":
        print(find_config_file(getattr(args, "config", None)))
        return EXIT_OK
    if args.action == "init":
        return _init(args)
    return _show(args)
