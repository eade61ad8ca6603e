"""The application's sections of the settings: the sandbox, the faces' looks, the TUI, the audit trail and the
named remote environments. Plain pydantic models; :mod:`petstore_cli.settings.model` composes them."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from petstore_api.settings import EndpointSettings

__all__ = ["AuditSettings", "EnvironmentSettings", "SandboxSettings", "TuiSettings", "UiSettings"]


class EnvironmentSettings(EndpointSettings):
    """A named remote environment (``[production]``, ``[staging]``): the client's endpoint under a name."""


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
    refresh_interval: float = Field(5.0, ge=1, le=3600)
    """Seconds between refreshes of the list when live refresh is on (``w`` in the TUI turns it on)."""


class AuditSettings(BaseModel):
    """The audit trail of writes (terminal faces; the chat bots keep one always)."""

    model_config = ConfigDict(extra="forbid")

    path: Path | None = None
    """Append every write attempt (who, where, command, outcome, pet id) to this file as JSON lines."""
