"""Where a session points: the environment chosen by the settings, its base URL and key, or the sandbox."""

from __future__ import annotations

from pydantic import SecretStr

from petstore_api.errors import ConfigError
from petstore_api.masking import mask_secret
from petstore_os.records import record

from .model import Settings
from .sections import EnvironmentSettings

__all__ = ["Target", "resolve_target"]


@record
class Target:
    """Where a session points, resolved from settings."""

    env: str
    base_url: str | None
    api_key: SecretStr | None
    sandbox: bool

    def __repr__(self) -> str:  # never show the key
        return f"Target(env={self.env!r}, base_url={self.base_url!r}, api_key={mask_secret(self.api_key)!r})"


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
