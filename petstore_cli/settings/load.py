"""Loading the settings: which config file, the one-line error naming the culprit, where each value comes from.

:func:`load_settings` finds the config file (``--config``, else ``$PETSTORE_CONFIG``, else ``config.toml`` in the
platform config dir), tightens it to 0600 when it holds a key, builds :class:`~petstore_cli.settings.model.Settings`
reading it, and reads the ``api_key_file`` settings. :func:`setting_source` is the one rule of precedence that
error messages and ``petstore config show`` both state.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from petstore_api.errors import ConfigError
from petstore_api.settings import EndpointSettings, read_key_file
from petstore_os import tighten
from petstore_os.db_url import url_password
from petstore_os.records import field, record

from .environ import environment_settings, merged
from .model import ENV_PREFIX, Settings
from .paths import default_config_path

__all__ = ["LoadedSettings", "SettingSource", "find_config_file", "load_settings", "setting_source"]


@record
class LoadedSettings:
    settings: Settings
    config_file: Path | None
    warnings: list[str] = field(default_factory=list)


def load_settings(
    *,
    config_path: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> LoadedSettings:
    """Load settings from all sources; raise ConfigError with one line naming the culprit."""
    environ = os.environ
    path, explicit = _config_file(config_path, environ)
    toml_data: dict[str, Any] = {}
    warnings: list[str] = []
    read = path is not None and (explicit or path.exists())
    if read and path is not None:
        toml_data = _read_toml(path)
        warnings += _permission_warnings(path, toml_data)
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    try:
        environment = environment_settings(Settings, environ, prefix=ENV_PREFIX)
        settings = Settings.model_validate(merged(toml_data, environment, flags))
    except ValidationError as exc:
        raise ConfigError(_describe(exc, flags=flags, environ=environ, path=path, toml=toml_data)) from None
    settings._config_path = path
    for level in ((), ("production",), ("staging",)):
        model: Settings | EndpointSettings = getattr(settings, level[0]) if level else settings
        if model.api_key_file is not None:
            names = {
                key: _source_name([*level, key], flags=flags, environ=environ, path=path, toml=toml_data)
                for key in ("api_key", "api_key_file")
            }
            if model.api_key is not None:
                raise ConfigError(f"both {names['api_key']} and {names['api_key_file']} are set: keep one of them")
            where = f"invalid setting {names['api_key_file']}"
            model.api_key = read_key_file(model.api_key_file.expanduser(), where=where, warn=warnings.append)
    return LoadedSettings(settings=settings, config_file=path if toml_data or explicit else None, warnings=warnings)


def find_config_file(config_path: str | Path | None = None) -> Path | None:
    """The config file that would be read: ``config_path``, else ``$PETSTORE_CONFIG``, else the default."""
    return _config_file(config_path, os.environ)[0]


def _config_file(config_path: str | Path | None, environ: Mapping[str, str]) -> tuple[Path | None, bool]:
    if config_path:
        return Path(config_path).expanduser(), True
    if environ.get("PETSTORE_CONFIG"):
        return Path(environ["PETSTORE_CONFIG"]).expanduser(), True
    return default_config_path(), False


def _read_toml(path: Path) -> dict[str, Any]:
    """The file's data, read first to say what is wrong with it in one line and to decide on its permissions."""
    import tomllib  # only when there is a config file to read

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist (given by --config or PETSTORE_CONFIG)") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


#: Settings that hold a secret (the API key, the bots' passwords and tokens): a file holding one is kept 0600; so is one
#: whose [bot] state URL holds a password.
_SECRETS = ("api_key", "signing_secret", "app_token", "bot_token", "password", "access_token", "token")


def _permission_warnings(path: Path, data: Mapping[str, Any]) -> list[str]:
    """A config file that holds a secret is tightened to 0600 if others may read it; the line that says so."""
    held = _held_secret(data) if os.name == "posix" else None
    if held is None:
        return []
    what = "an API key" if held == "api_key" else f"a secret ({held})"
    said: list[str] = []
    tighten(path, warn=lambda line: said.append(f"{line}: it holds {what}"))
    return said


def _held_secret(data: Mapping[str, Any]) -> str | None:
    """The name of the first secret setting ``data`` gives a value, at any depth (``state``: a URL with a password)."""
    found = next((name for name in _SECRETS if data.get(name)), None)
    state = data.get("state")
    if found is None and isinstance(state, str) and url_password(state):
        found = "state"
    for value in data.values():
        if found is None and isinstance(value, Mapping):
            found = _held_secret(value)
    return found


def _describe(
    exc: ValidationError,
    *,
    flags: Mapping[str, Any],
    environ: Mapping[str, str],
    path: Path | None,
    toml: Mapping[str, Any],
) -> str:
    err = exc.errors(include_url=False, include_input=False)[0]
    what = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        what = "unknown setting (petstore config show lists them all; petstore config init writes a commented file)"
    source = _source_name([str(p) for p in err["loc"]], flags=flags, environ=environ, path=path, toml=toml)
    return f"invalid setting {source}: {what}"


def _source_name(
    loc: Sequence[str],
    *,
    flags: Mapping[str, Any],
    environ: Mapping[str, str],
    path: Path | None,
    toml: Mapping[str, Any],
) -> str:
    """The setting at ``loc`` named as the user gave it: the flag, the variable, the file and key, else its name."""
    dotted = ".".join(loc)
    found = setting_source(loc, flags=flags, environ=environ, config_path=path, toml=toml)
    return {"flag": found.name, "env": ENV_PREFIX + "__".join(loc).upper(), "file": f"{path}: {dotted}"}.get(
        found.kind, dotted
    )


@record
class SettingSource:
    """Where a setting's value comes from: ``flag`` (``name``: the option), ``env`` (``name``: the variable as
    set), ``file`` (the config file) or ``default``."""

    kind: Literal["flag", "env", "file", "default"]
    name: str = ""


def setting_source(
    key: Sequence[str],
    *,
    flags: Mapping[str, Any],
    environ: Mapping[str, str],
    config_path: Path | None,
    toml: Mapping[str, Any],
) -> SettingSource:
    """The source of the setting at ``key`` (``("http", "timeout")``), highest first: the one rule that error
    messages and ``petstore config show`` both state."""
    if _dig(flags, key):
        flag = "--audit-log" if tuple(key) == ("audit", "path") else f"--{key[0].replace('_', '-')}"
        return SettingSource("flag", flag)
    var = ENV_PREFIX + "__".join(key).upper()
    for name in environ:
        if name.upper() == var:
            return SettingSource("env", name)
    if config_path is not None and _dig(toml, key):
        return SettingSource("file")
    return SettingSource("default")


def _dig(data: Mapping[str, Any], key: Sequence[str]) -> bool:
    node: Any = data
    for part in key:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True
