"""Who asked, as the database knows it: the asker of a request made at a terminal on PostgreSQL state.

A terminal writes its own requests for approval into ``pending_writes``, so the asker it names is only what it
says. On PostgreSQL the database knows better: the role the connection authenticated as (``session_user``, which
``SET ROLE`` does not change). A trigger makes that the asker of every row asked at a terminal (``pg:<role>``), and
keeps a row's asker and location as they were made, whoever updates it later. Give each person a role of their own
and the bots' role the tables (docs/security.md); on SQLite state the terminal names its real uid's login instead
(``bot_commands.policy.local_actor``), and whoever may write the file may write any row.
"""

from __future__ import annotations

from .db import Database

__all__ = ["TERMINAL_ASKER_PREFIX", "ensure_terminal_identity", "terminal_name"]

#: The asker of a terminal's request on PostgreSQL state is this plus the database role it logged in as.
TERMINAL_ASKER_PREFIX = "pg:"

_TRIGGER = """
DO $do$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_trigger WHERE tgrelid = 'pending_writes'::regclass AND tgname = 'pending_writes_asker'
    ) THEN
        CREATE OR REPLACE FUNCTION pending_writes_asker() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
            IF TG_OP = 'UPDATE' THEN
                NEW.asker := OLD.asker;
                NEW.location := OLD.location;
            ELSIF NEW.location = 'terminal' THEN
                NEW.asker := 'pg:' || session_user;
            END IF;
            RETURN NEW;
        END
        $fn$;
        CREATE TRIGGER pending_writes_asker BEFORE INSERT OR UPDATE ON pending_writes
            FOR EACH ROW EXECUTE FUNCTION pending_writes_asker();
    END IF;
END
$do$
"""


def ensure_terminal_identity(database: Database) -> None:
    """On PostgreSQL, the trigger of the module docstring (once per process; nothing on SQLite)."""
    if database.dialect == "postgresql":
        database.ensure_schema("pending_identity", [_TRIGGER])


def terminal_name(database: Database, *, local: str) -> str:
    """The name this terminal's requests carry in ``database``: ``pg:<role>`` on PostgreSQL (what the trigger
    records), else ``local`` (the real uid's ``local:<login>``)."""
    if database.dialect != "postgresql":
        return local
    row = database.run_sync(lambda tx: tx.one("SELECT session_user"))
    return f"{TERMINAL_ASKER_PREFIX}{row[0] if row else ''}"
