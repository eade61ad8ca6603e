"""The client's settings: where it points, the key it sends, how it talks HTTP.

Plain pydantic models (no pydantic-settings): the application composes them into its own settings and
loads them from its sources; :meth:`HttpSettings.timeouts` and :meth:`HttpSettings.retry_policy` give
what :class:`petstore_api.client.PetStoreClient` takes, and :func:`read_key_file` reads an
``api_key_file`` the way the client's key must be: one line, the file 0600.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from petstore_os import Warn, read_secret_lines

from .errors import ConfigError

if TYPE_CHECKING:
    from .policy import RetryPolicy, Timeouts

__all__ = ["EndpointSettings", "HttpSettings", "read_key_file"]


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

    def timeouts(self) -> Timeouts:
        """The client's time budgets."""
        from .policy import Timeouts  # httpx comes with it: only when a client is built

        return Timeouts(connect=self.connect_timeout, read=self.read_timeout, total=self.timeout)

    def retry_policy(self) -> RetryPolicy:
        """The client's retry rule: the first attempt and ``retries`` more."""
        from .policy import RetryPolicy

        return RetryPolicy(attempts=self.retries + 1, retry_after_cap=self.retry_after_cap)


class EndpointSettings(BaseModel):
    """A server the client may point at (the spec shows only placeholders for its address)."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    """Base address, ending in /v1, e.g. https://petstore.example.com/v1."""
    api_key: SecretStr | None = None
    """API key for this environment (overrides the top-level api_key)."""
    api_key_file: Path | None = None
    """A file holding this environment's API key instead (see the top-level api_key_file)."""


def read_key_file(path: Path, *, where: str, warn: Warn) -> SecretStr:
    """The API key held by ``path`` (one line; ``#`` comments allowed), the file made 0600 if others may read it.

    ``where`` starts the one-line :class:`ConfigError` (``invalid setting PETSTORE_API_KEY_FILE``).
    """
    try:
        lines = read_secret_lines(path, warn=warn)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: {path} is not a text file (UTF-8)") from None
    if len(lines) != 1:
        held = "no key" if not lines else f"{len(lines)} lines that are not comments"
        raise ConfigError(f"{where}: {path} holds {held}; it should hold the key alone")
    return SecretStr(lines[0][1])
