"""What every petstore process does on its host: files that hold data or secrets private to their owner, and no core
files (a core holds every key the process had in memory), and the command line's shared rules (one-line usage errors,
one ``--port`` type); and :mod:`.records`, the immutable records every package declares.

Standard library only, and no other package of ours: the service (``petstore_server``, which imports no face and no
client) and the client's side (``petstore_api``, the command layer, the faces) use the same code.
"""

from __future__ import annotations

from .arguments import HIGHEST_PORT, OneLineParser, port_number
from .files import PRIVATE_MODE, Warn, open_private, private_database, read_secret_lines, tighten
from .limits import no_core_dumps

__all__ = [
    "HIGHEST_PORT",
    "PRIVATE_MODE",
    "OneLineParser",
    "Warn",
    "no_core_dumps",
    "open_private",
    "port_number",
    "private_database",
    "read_secret_lines",
    "tighten",
]
