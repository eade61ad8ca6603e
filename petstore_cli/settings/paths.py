"""Where petstore keeps its files (platformdirs only: faces ask before anything heavy is imported)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["default_config_path", "default_data_dir"]


def default_config_path() -> Path:
    from platformdirs import user_config_path

    return user_config_path("petstore", appauthor=False) / "config.toml"


def default_data_dir() -> Path:
    from platformdirs import user_data_path

    return user_data_path("petstore", appauthor=False)
