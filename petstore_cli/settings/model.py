"""The root of the application's settings, loaded by pydantic-settings.

Sources, highest first:

1. command-line flags (passed in as keyword arguments),
2. environment variables: ``PETSTORE_ENV``, ``PETSTORE_BASE_URL``,
   ``PETSTORE_API_KEY``, ``PETSTORE_READ_ONLY`` and one per nested setting
   with ``__`` between levels (``PETSTORE_HTTP__TIMEOUT``,
   ``PETSTORE_PRODUCTION__BASE_URL`` ...),
3. the TOML config file, through pydantic-settings' ``TomlConfigSettingsSource``
   (:meth:`Settings.reading` names the file),
4. the defaults below.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import PrivateAttr, SecretStr
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from petstore_api.settings import HttpSettings
from petstore_bot.settings import BotSettings

from .sections import AuditSettings, EnvironmentSettings, SandboxSettings, TuiSettings, UiSettings

__all__ = ["ENV_PREFIX", "EnvName", "Settings"]

EnvName = Literal["sandbox", "staging", "production", "custom"]
ENV_PREFIX = "PETSTORE_"


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
        # Flags (init kwargs) > environment > TOML file (model_config's toml_file; none on this class) > defaults.
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls))

    @staticmethod
    def reading(path: Path | None) -> type[Settings]:
        """The settings model with ``path`` as its TOML file (None: no file), as pydantic-settings configures one."""
        return _reading(path)


@lru_cache(maxsize=8)
def _reading(path: Path | None) -> type[Settings]:
    if path is None:
        return Settings
    config = SettingsConfigDict(toml_file=path)
    return type("Settings", (Settings,), {"model_config": config, "__module__": __name__, "__doc__": Settings.__doc__})
