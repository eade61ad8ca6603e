"""A platform's secret (a token, a password) from its setting or from the file its ``<name>_file`` setting names:
the one rule every transport reads its secret by."""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import SecretStr

from petstore_api.errors import ConfigError

__all__ = ["one_secret"]

log = logging.getLogger("petstore_bot")


def one_secret(*, setting: str, given: SecretStr | None, path: Path | None, where: str) -> str | None:
    """``setting`` (``"[bot.irc] password"``) as ``given`` (the config or the environment), or the one line of the
    file ``path`` (its ``_file`` setting; a file others may read is warned about); None when neither is set.
    ConfigError, naming the setting and never the secret, when both are set, the file cannot be read, or it holds
    other than one line."""
    if path is None:
        return None if given is None else given.get_secret_value()
    if given is not None:
        raise ConfigError(f"both {setting} and {setting}_file are set (in {where} or the environment): keep one")
    from petstore_os.files import read_secret_lines

    try:
        lines = read_secret_lines(path.expanduser(), warn=log.warning)
    except OSError as exc:
        raise ConfigError(f"{setting}_file: cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{setting}_file: {path} is not a text file (UTF-8)") from None
    if len(lines) != 1:
        raise ConfigError(f"{setting}_file: {path} should hold the secret alone, on one line")
    return lines[0][1]
