"""State that outlives a bot process and is shared by its replicas: one SQL database, SQLite or PostgreSQL.

:func:`open_database` opens the database a ``[bot] state`` value names (``sqlite:///path``, ``postgresql://...``, or
unset for SQLite in the bot's state dir); each kind of state (pending confirmations and approvals, watches,
schedules, leases, conversations) is a module of its own that declares its tables with
:meth:`Database.ensure_schema` and reads and writes them in :meth:`Database.run` transactions.

Standard library and ``petstore_os`` only, psycopg imported lazily for PostgreSQL: the bots (``petstore_bot``) and the
terminal faces (``petstore_cli``: approvals asked for from a terminal) share it; the command layer sees it only
through its own ports.
"""

from __future__ import annotations

from .db import Database, Dialect, StateError, Transaction, open_database, parse_state_url

__all__ = ["Database", "Dialect", "StateError", "Transaction", "open_database", "parse_state_url"]
