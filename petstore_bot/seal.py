"""The bots' seal on a held write: an HMAC-SHA256, with a key only the bots hold, over everything a person is shown
of it (code, kind, asker, where it was asked, the command and every field, what it does in words, the environment,
the room it is decided in, when it expires).

A terminal holds the ``[bot] state`` URL and so can write any row of the shared store; it cannot hold this key. A
bot seals a request when it makes it (asked in a chat room) or when it first posts it in the approvals room (asked
at a terminal), and runs nothing whose seal does not match: a row changed after it was shown is refused as changed.

The key is ``[bot] approval_key`` (replicas on several hosts share it), else the file ``approval.key`` (0600) in
the bot's state dir, made on first use. It is never in the state database.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from petstore_os.files import open_private
from petstore_state.pending import PendingWrite

__all__ = ["KEY_FILE", "Seal", "load_key"]

#: The key's file in the bot's state dir when ``[bot] approval_key`` is not set.
KEY_FILE = "approval.key"
#: Bytes of a key made on first use.
KEY_BYTES = 32


class Seal:
    """Seals and checks held writes with ``key`` (see the module docstring)."""

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("an approval key needs at least 16 bytes")
        self._key = key
        #: Names the key in each seal (a digest: it tells keys apart and says nothing of one), so a replica with
        #: another key says so instead of calling every request changed.
        self.key_id = hashlib.sha256(b"petstore approval key id\x00" + key).hexdigest()[:12]

    def __call__(self, write: PendingWrite) -> str:
        """The seal of ``write`` as it is now."""
        shown = [
            write.code,
            write.kind,
            write.asker,
            write.where,
            write.command,
            [list(pair) for pair in write.fields],
            write.what,
            write.line,
            write.env,
            write.room,
            repr(write.expires),
        ]
        text = json.dumps(shown, ensure_ascii=True, separators=(",", ":"))
        return f"{self.key_id}:{hmac.new(self._key, text.encode('ascii'), hashlib.sha256).hexdigest()}"

    def holds(self, write: PendingWrite) -> bool:
        """Whether ``write`` is what was sealed (an unsealed row never holds)."""
        return bool(write.seal) and hmac.compare_digest(write.seal, self(write))

    def foreign(self, write: PendingWrite) -> bool:
        """Whether ``write`` was sealed with another key (a replica whose ``[bot] approval_key`` differs)."""
        return bool(write.seal) and not write.seal.startswith(f"{self.key_id}:")

    def __repr__(self) -> str:
        return "Seal(<key>)"


def load_key(*, setting: str | None, state_dir: Path) -> bytes:
    """``[bot] approval_key`` when set, else the key file in ``state_dir`` (made 0600 on first use)."""
    if setting:
        return setting.encode("utf-8")
    path = state_dir / KEY_FILE
    if not path.exists():  # made whole beside it, then linked: a process starting at once reads a whole key
        state_dir.mkdir(parents=True, exist_ok=True)
        fresh = state_dir / f".{KEY_FILE}.{os.getpid()}"
        with os.fdopen(open_private(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as file:
            file.write(secrets.token_hex(KEY_BYTES).encode("ascii"))
        try:
            os.link(fresh, path)
        except FileExistsError:
            pass
        finally:
            fresh.unlink()
    with os.fdopen(open_private(path, os.O_RDONLY), "rb") as file:
        return file.read().strip()
