"""No core files: a crash would otherwise write the process's memory, keys included, to disk."""

from __future__ import annotations

import sys

__all__ = ["no_core_dumps"]


def no_core_dumps() -> None:
    """Set this process's core-file size limit to 0, soft and hard, before it reads any secret.

    Every process it starts inherits the limit (fork and exec keep resource limits): the service's workers, the web
    face's TUI processes, the TUI's preview child. The hard limit too, so nothing started later can raise it again.
    """
    if sys.platform == "win32":  # no core files there, and no resource module
        return
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (OSError, ValueError):  # refused by the system: nothing more this process can do
        pass
