"""What a Matrix bot keeps across restarts, in one 0600 file in ``state_dir``: the last safe sync token (every message
before it answered), the ids answered since it, the device id and the access token of the bot's last password login
(so a restart does not log in again: homeservers limit logins), the encrypted rooms already told the bot cannot
read them.

It is written after every message, so a stop or crash mid-batch answers nothing twice on restart and leaves nothing
unanswered.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from petstore_os import open_private

log = logging.getLogger("petstore_bot.matrix")

#: How many answered ids are remembered in memory besides those on disk.
RECENT = 2000


@dataclass
class SavedState:
    """What survives a restart: the sync token, ids answered since it, the device and its access token, rooms told
    about encryption. The access token is a secret: never in a repr or a log line."""

    since: str | None = None
    done: list[str] = field(default_factory=list)
    device_id: str | None = None
    encrypted_notified: list[str] = field(default_factory=list)
    access_token: str | None = field(default=None, repr=False)

    @classmethod
    def load(cls, path: Path) -> SavedState:
        """The state in ``path``; an empty one (a first start) when it is missing or unreadable."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:  # unreadable: start as on a first start (no history answered)
            log.warning("sync state %s unreadable (%s); starting from now", path, type(exc).__name__)
            return cls()
        if not isinstance(raw, dict):
            return cls()
        since, device, token = raw.get("since"), raw.get("device_id"), raw.get("access_token")
        return cls(
            since=since if isinstance(since, str) else None,
            done=[x for x in raw.get("done", []) if isinstance(x, str)],
            device_id=device if isinstance(device, str) else None,
            encrypted_notified=[x for x in raw.get("encrypted_notified", []) if isinstance(x, str)],
            access_token=token if isinstance(token, str) and isinstance(device, str) else None,
        )

    def save(self, path: Path) -> None:
        """Writes the state to ``path`` (0600) in one rename."""
        tmp = path.with_suffix(".tmp")
        with os.fdopen(open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w", encoding="utf-8") as out:
            json.dump(asdict(self), out)
        os.replace(tmp, path)


class Progress:
    """The state file of one account on one homeserver, and which messages are answered."""

    def __init__(self, *, state_dir: Path, homeserver: str, user_id: str) -> None:
        key = hashlib.sha256(f"{homeserver} {user_id}".encode()).hexdigest()[:16]
        self.path = Path(state_dir) / f"matrix-{key}.json"
        self.state = SavedState()
        self._recent: OrderedDict[str, None] = OrderedDict()

    def load(self) -> None:
        """Reads the state file (its directory made 0700 first, when missing)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.state = SavedState.load(self.path)

    def save(self) -> None:
        self.state.save(self.path)

    def logged_in(self, *, device_id: str, access_token: str) -> None:
        """A password login gave the bot ``access_token`` on ``device_id``: both kept (saved now)."""
        self.state.device_id, self.state.access_token = device_id, access_token
        self.save()

    def is_done(self, event_id: str) -> bool:
        """Whether ``event_id`` is answered (or needed no answer)."""
        return event_id in self._recent or event_id in self.state.done

    def mark_done(self, event_id: str) -> None:
        """``event_id`` is answered; written with the next :meth:`save`."""
        self._recent[event_id] = None
        if len(self._recent) > RECENT:
            self._recent.popitem(last=False)
        self.state.done.append(event_id)

    def start_at(self, next_batch: str) -> None:
        """A first start: nothing before ``next_batch`` is answered (saved)."""
        self.state.since, self.state.done = next_batch, []
        self.save()

    def safe(self, next_batch: str, *, keep: Callable[[str], bool]) -> None:
        """Every message up to ``next_batch`` is answered: that token goes on disk, and of the ids answered only
        those ``keep`` says are of later batches stay (the ones before the token will not come again)."""
        self.state.since = next_batch
        self.state.done = [event_id for event_id in self.state.done if keep(event_id)]
        self.save()
