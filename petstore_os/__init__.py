"""What every petstore process does on its host: files that hold data or secrets private to their owner, and no core
files (a core holds every key the process had in memory), and the command line's shared rules (one-line usage errors,
one ``--port`` type) in :mod:`petstore_os.arguments`, imported from there by whoever parses (the package itself imports
no argparse: bare ``petstore`` parses nothing before the TUI's first frame); and :mod:`.records`, the immutable records
every package declares.

Standard library only, and no other package of ours: the service (``petstore_server``, which imports no face and no
client) and the client's side (``petstore_api``, the command layer, the faces) use the same code.
"""

from __future__ import annotations

from .files import PRIVATE_MODE, Warn, open_private, private_database, read_secret_lines, tighten
from .limits import no_core_dumps

__all__ = [
    "PRIVATE_MODE",
    "Warn",
    "no_core_dumps",
    "open_private",
    "private_database",
    "read_secret_lines",
    "tighten",
]
