"""What every face does first: the settings the flags name, and the logging ``-v`` asks for."""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from typing import Any

from petstore_cli.settings.load import LoadedSettings, load_settings

__all__ = ["configure_logging", "load", "overrides"]


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given as flags (None: not given)."""
    given: dict[str, Any] = {
        "env": getattr(args, "env", None),
        "base_url": getattr(args, "base_url", None),
        "read_only": getattr(args, "read_only", None) or None,
    }
    if getattr(args, "audit_log", None):
        given["audit"] = {"path": args.audit_log}
    return given


def load(args: argparse.Namespace) -> LoadedSettings:
    return load_settings(config_path=getattr(args, "config", None), overrides=overrides(args))


def configure_logging(verbosity: int) -> None:
    """Warnings as one ``petstore: warning:`` line; request logs only with -v."""
    warnings.showwarning = _show_warning
    logger = logging.getLogger("petstore_api")
    if verbosity <= 0:
        logger.addHandler(logging.NullHandler())  # warnings already reach the user once
        logger.propagate = False
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False  # once: not again through a root handler (a bot's, which takes the libraries' lines)
    logger.setLevel(logging.DEBUG)


def _show_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    print(f"petstore: warning: {message}", file=sys.stderr)
