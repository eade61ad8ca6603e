"""The root of the application's settings: one validated model.

Sources, highest first, merged by :func:`petstore_cli.settings.load.load_settings`:

1. command-line flags,
2. environment variables: ``PETSTORE_ENV``, ``PETSTORE_BASE_URL``,
   ``PETSTORE_API_KEY``, ``PETSTORE_READ_ONLY`` and one per nested setting
   with ``__`` between levels (``PETSTORE_HTTP__TIMEOUT``,
   ``PETSTORE_PRODUCTION__BASE_URL`` ...; :mod:`petstore_cli.settings.environ`),
3. the TOML config file,
4. the defaults below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr, SecretStr

from petstore_api.settings import HttpSettings
from petstore_bot.settings import BotSettings

from .sections import AuditSettings, EnvironmentSettings, SandboxSettings, TuiSettings, UiSettings

__all__ = ["ENV_PREFIX", "EnvName", "Settings"]

EnvName = Literal["sandbox", "staging", "production", "custom"]
ENV_PREFIX = "PETSTORE_"


class Settings(BaseModel):
    """All settings of petstore. See config.example.toml for a commented copy."""

    model_config = ConfigDict(extra="forbid")

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
