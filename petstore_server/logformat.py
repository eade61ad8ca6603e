"""The service's own log lines in the access log's format: one JSON object per line on standard error.

``petstore serve`` writes its access log to standard error by default (:mod:`.accesslog`); what uvicorn, the
service and any library log while it serves (``Invalid HTTP request received.``, an exception in the app) goes to
the same stream, so it is JSON too: ``time`` (UTC, RFC 3339, as the access lines), ``level``, ``logger``,
``message``, ``pid`` and, after an error, ``exception`` (the traceback as one string). One format per stream: a
reader (``jq``, a log shipper) never meets a plain line among the JSON ones. :data:`LOG_CONFIG` is what
``serve.py`` hands uvicorn (``log_config``), which applies it in the supervisor and in every worker.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

__all__ = ["LOG_CONFIG", "JsonLines"]


class JsonLines(logging.Formatter):
    """A log record as one JSON line (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        entry: dict[str, object] = {
            "time": stamp.replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


#: ``logging.config.dictConfig`` for uvicorn's ``log_config``: uvicorn's loggers and every other one (the root) in
#: :class:`JsonLines` on standard error; uvicorn's access logger off (the service writes its own access log).
LOG_CONFIG: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": JsonLines}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}},
    "loggers": {
        "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn.error": {"level": "INFO"},
        "uvicorn.access": {"handlers": [], "level": "INFO", "propagate": False},
    },
    "root": {"handlers": ["stderr"], "level": "WARNING"},
}
