"""Settings: nested pydantic models, loaded by pydantic-settings.

Sources, highest first:

1. command-line flags (passed in as ``overrides``),
2. environment variables: ``PETSTORE_ENV``, ``PETSTORE_BASE_URL``,
   ``PETSTORE_API_KEY``, ``PETSTORE_READ_ONLY`` and one per nested setting
   with ``__`` between levels (``PETSTORE_HTTP__TIMEOUT``,
   ``PETSTORE_PRODUCTION__BASE_URL`` ...),
3. the TOML config file: ``--config``, else ``$PETSTORE_CONFIG``, else
   ``config.toml`` in the platform config dir (``platformdirs``),
4. the defaults below.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from petstore_os import Warn, read_secret_lines, tighten

from .bot_settings import BotSettings
from .errors import ConfigError
from .paths import default_config_path, default_data_dir

__all__ = [
    "EnvName",
    "HttpSettings",
    "EnvironmentSettings",
    "SandboxSettings",
    "TuiSettings",
    "Settings",
    "LoadedSettings",
    "Target",
    "default_config_path",
    "default_data_dir",
    "find_config_file",
    "load_settings",
    "resolve_target",
    "setting_source",
    "SettingSource",
]

EnvName = Literal["sandbox", "staging", "production", "custom"]
ENV_PREFIX = "PETSTORE_"


class HttpSettings(BaseModel):
    """How the client talks HTTP."""

    model_config = ConfigDict(extra="forbid")

    timeout: float = Field(30.0, gt=0, le=600)
    """Total time budget of one call in seconds, retries and backoff included."""
    connect_timeout: float = Field(5.0, gt=0, le=120)
    """Seconds to wait for a connection."""
    read_timeout: float = Field(10.0, gt=0, le=600)
    """Seconds to wait between bytes of a response."""
    retries: int = Field(2, ge=0, le=9)
    """Retries after the first attempt, for retryable failures (GET; POST only with its Idempotency-Key)."""
    retry_after_cap: float = Field(10.0, ge=0, le=300)
    """Longest `Retry-After` wait honoured, in seconds; a longer one fails the call."""
    allow_insecure_http: bool = False
    """Allow sending the API key over plain http:// to a host that is not loopback."""


class EnvironmentSettings(BaseModel):
    """A named remote environment (the spec shows only placeholders for its address)."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    """Base address, ending in /v1, e.g. https://petstore.example.com/v1."""
    api_key: SecretStr | None = None
    """API key for this environment (overrides the top-level api_key)."""
    api_key_file: Path | None = None
    """A file holding this environment's API key instead (see the top-level api_key_file)."""


class SandboxSettings(BaseModel):
    """The embedded service used when no base URL is configured."""

    model_config = ConfigDict(extra="forbid")

    data_dir: Path | None = None
    """Where the sandbox keeps its SQLite database and key; default: the platform data dir."""


class UiSettings(BaseModel):
    """Looks of the faces."""

    model_config = ConfigDict(extra="forbid")

    theme: str | None = None
    """Older place of ``[tui] theme``; still read when ``[tui] theme`` is not set."""
    page_size: int = Field(20, ge=1, le=100)
    """Pets per page in the TUI list and /list without --limit."""


class TuiSettings(BaseModel):
    """The TUI (``petstore`` / ``petstore tui``)."""

    model_config = ConfigDict(extra="forbid")

    theme: str | None = None
    """A Textual built-in theme ("textual-dark", "nord", "gruvbox", "textual-light" ...).
    ``--theme`` wins over it; with neither, the theme last chosen in the TUI (palette: Theme)."""
    preview: bool = True
    """Fetch the first page in a second process while the first frame paints (on machines with
    more than one CPU), so the pets show sooner; ``false``: the TUI loads in one process."""


class AuditSettings(BaseModel):
    """The audit trail of writes (terminal faces; the chat bots keep one always)."""

    model_config = ConfigDict(extra="forbid")

    path: Path | None = None
    """Append every write attempt (who, where, command, outcome, pet id) to this file as JSON lines."""


class Settings(BaseSettings):
    """All settings of petstore. See config.example.toml for a commented copy."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        case_sensitive=False,
    )

    env: EnvName | None = None
    """Environment: sandbox, staging, production or custom; default: custom when a base_url is set, else sandbox."""
    base_url: str | None = None
    """Base address of a conforming server, ending in /v1 (selects the custom environment)."""
    api_key: SecretStr | None = None
    """API key sent as `Authorization: Bearer`; never printed (shown masked)."""
    api_key_file: Path | None = None
    """A file holding the API key (one line; # comments allowed), instead of api_key: the key then stays out of
    the environment, the config file and shell history. Made 0600 if others may read it."""
    read_only: bool = False
    """Refuse every write (/add) with a clear message."""
    http: HttpSettings = HttpSettings()
    production: EnvironmentSettings = EnvironmentSettings()
    staging: EnvironmentSettings = EnvironmentSettings()
    sandbox: SandboxSettings = SandboxSettings()
    ui: UiSettings = UiSettings()
    tui: TuiSettings = TuiSettings()
    audit: AuditSettings = AuditSettings()
    bot: BotSettings = BotSettings()
    #: The config file these settings would read (set by load_settings; errors name it).
    _config_path: Path | None = PrivateAttr(default=None)

    @property
    def config_path(self) -> Path | None:
        return self._config_path

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Flags (init kwargs) > environment > TOML file > defaults.
        return (init_settings, env_settings, _TomlDataSource(settings_cls))


_TOML_DATA: ContextVar[dict[str, Any] | None] = ContextVar("petstore_toml_data", default=None)


class _TomlDataSource(PydanticBaseSettingsSource):
    """The config file's data, read by load_settings() (so errors can name the file)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return (_TOML_DATA.get() or {}).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_TOML_DATA.get() or {})


@dataclass(frozen=True)
class LoadedSettings:
    settings: Settings
    config_file: Path | None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Target:
    """Where a session points, resolved from settings."""

    env: str
    base_url: str | None
    api_key: SecretStr | None
    sandbox: bool

    def __repr__(self) -> str:  # never show the key
        from .masking import mask_secret

        return f"Target(env={self.env!r}, base_url={self.base_url!r}, api_key={mask_secret(self.api_key)!r})"


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
    if path is not None and (explicit or path.exists()):
        toml_data = _read_toml(path)
        warnings += _permission_warnings(path, toml_data)
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    try:
        settings = _build(toml_data, flags)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, flags=flags, environ=environ, path=path, toml=toml_data)) from None
    settings._config_path = path
    for level in ((), ("production",), ("staging",)):
        model: Settings | EnvironmentSettings = getattr(settings, level[0]) if level else settings
        if model.api_key_file is not None:
            names = {
                key: _source_name([*level, key], flags=flags, environ=environ, path=path, toml=toml_data)
                for key in ("api_key", "api_key_file")
            }
            _read_key_file(model, model.api_key_file.expanduser(), names=names, warn=warnings.append)
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


def _read_key_file(model: Settings | EnvironmentSettings, path: Path, *, names: Mapping[str, str], warn: Warn) -> None:
    """``model.api_key`` read from ``path`` (its ``api_key_file``); ConfigError names the setting that is wrong.

    ``names``: how the user gave ``api_key`` and ``api_key_file`` (flag, variable, file and key).
    """
    if model.api_key is not None:
        raise ConfigError(f"both {names['api_key']} and {names['api_key_file']} are set: keep one of them")
    where = f"invalid setting {names['api_key_file']}"
    try:
        lines = read_secret_lines(path, warn=warn)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: {path} is not a text file (UTF-8)") from None
    if len(lines) != 1:
        held = "no key" if not lines else f"{len(lines)} lines that are not comments"
        raise ConfigError(f"{where}: {path} holds {held}; it should hold the key alone")
    model.api_key = SecretStr(lines[0][1])


def _permission_warnings(path: Path, data: Mapping[str, Any]) -> list[str]:
    """A config file that holds a key is tightened to 0600 if others may read it; the line that says so."""
    if os.name != "posix" or not _holds_key(data):
        return []
    said: list[str] = []
    tighten(path, warn=lambda line: said.append(f"{line}: it holds an API key"))
    return said


def _holds_key(data: Mapping[str, Any]) -> bool:
    if data.get("api_key"):
        return True
    return any(isinstance(v, Mapping) and _holds_key(v) for v in data.values())


def _build(toml_data: dict[str, Any], flags: dict[str, Any]) -> Settings:
    token = _TOML_DATA.set(toml_data)
    try:
        return Settings(**flags)
    finally:
        _TOML_DATA.reset(token)


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


@dataclass(frozen=True, slots=True)
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


def resolve_target(settings: Settings) -> Target:
    """Pick environment, base URL and key; ConfigError when something is missing."""
    env = settings.env or ("custom" if settings.base_url else "sandbox")
    if env == "sandbox":
        return Target(env="sandbox", base_url=None, api_key=None, sandbox=True)
    where = f"in {settings.config_path}" if settings.config_path else "in the config file"
    if env == "custom":
        if not settings.base_url:
            raise ConfigError(
                f"environment 'custom' needs a base URL: pass --base-url, set PETSTORE_BASE_URL, or base_url {where}"
            )
        return Target(env="custom", base_url=settings.base_url, api_key=settings.api_key, sandbox=False)
    named: EnvironmentSettings = getattr(settings, env)
    base_url = settings.base_url or named.base_url
    if not base_url:
        raise ConfigError(
            f"environment '{env}' has no base URL: set [{env}] base_url {where} "
            f"(petstore config init writes a commented one) or PETSTORE_{env.upper()}__BASE_URL"
        )
    return Target(env=env, base_url=base_url, api_key=named.api_key or settings.api_key, sandbox=False)
