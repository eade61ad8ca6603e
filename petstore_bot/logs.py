"""The bot process's log: one format on stderr for its own lines and those of the libraries under it."""

from __future__ import annotations

import logging
import sys

__all__ = ["BOT_LOG_FORMAT", "configure_bot_logging"]

#: The bot's one format on stderr, for its own lines and those of the libraries under it.
BOT_LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


def configure_bot_logging(*, verbose: int) -> None:
    """Every line on stderr in :data:`BOT_LOG_FORMAT`: what the bot does, one line each (never a secret: the
    transport redacts them; every command, reads too, with ``-v``), and the warnings and errors of the libraries
    under it (matrix-nio's ``Error validating response``, slack_sdk, aiohttp, uvicorn), which logging's last resort
    would otherwise write raw. One handler, on the root logger; calling it again adds none."""
    root = logging.getLogger()
    if not any(handler.get_name() == "petstore-bot" for handler in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.set_name("petstore-bot")
        handler.setFormatter(logging.Formatter(BOT_LOG_FORMAT))
        root.addHandler(handler)
    root.setLevel(logging.WARNING)  # the libraries: warnings and errors
    for name in ("petstore_bot", "petstore_state"):  # what the bot does; the lease changing hands, the state failing
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.INFO)
