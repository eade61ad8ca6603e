"""A worker stops when its supervisor is gone, so that no worker serves unsupervised and the port is freed.

``kill -9`` of ``petstore serve``'s supervisor gives its workers no signal: they would keep serving, unwatched,
and a restart would fail with "Address already in use". Each worker runs :func:`watch_supervisor`: a thread that
notices within a quarter second that its parent is no longer the supervisor (it was re-parented), then stops the
worker as SIGTERM does (requests in flight may finish), forces the stop after :data:`GRACE` seconds (a second
signal: uvicorn stops waiting) and exits at the latest :data:`DEADLINE` seconds after noticing.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time

__all__ = ["DEADLINE", "GRACE", "watch_supervisor"]

logger = logging.getLogger("petstore_server")

#: Seconds between noticing and forcing the stop.
GRACE = 3.0
#: Seconds between noticing and exiting, whatever the stop is doing.
DEADLINE = 4.5
_POLL = 0.25


def watch_supervisor(supervisor: int) -> threading.Thread:
    """Start the watch (in a worker of ``supervisor``, the pid of the process that started it)."""
    thread = threading.Thread(target=_watch, args=(supervisor,), name="petstore-supervisor-watch", daemon=True)
    thread.start()
    return thread


def _watch(supervisor: int) -> None:
    while os.getppid() == supervisor:
        time.sleep(_POLL)
    logger.warning("the supervisor (pid %d) is gone: this worker stops", supervisor)
    me = os.getpid()
    os.kill(me, signal.SIGTERM)
    time.sleep(GRACE)
    os.kill(me, signal.SIGINT)
    time.sleep(DEADLINE - GRACE)
    os._exit(1)
