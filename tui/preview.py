"""The first page, fetched before the session is ready, as plain data (light: no Rich, no Textual).

:mod:`petstore_cli.tui_preview` makes a :class:`Preview` in a second process and sends it as
JSON; the main screen shows its rows (:func:`tui.text.pet_row_texts`) until the session's own
first list replaces them. Not imported by the first frame: only when a preview is made or read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple


@dataclass(frozen=True, kw_only=True)
class EnvLabel:
    """What the env bar shows of a session's ``EnvInfo`` (light: no command-layer import)."""

    env: str
    base_url: str
    masked_key: str
    read_only: bool = False


class PlainCell(NamedTuple):
    """A view's cell (``bot_commands.views.Cell``) as plain data: its text and its style's name."""

    text: str
    style: str = ""


@dataclass(frozen=True, kw_only=True)
class Preview:
    """The first page, fetched while the first frame paints (see :mod:`petstore_cli.tui_preview`).

    ``rows`` are the table's (key, cells) for the tab of ``status``, the cells as the command
    layer's views give them (:func:`tui.text.pet_row_texts` makes the row); the session's own
    list replaces them. It crosses the process boundary as JSON (:meth:`to_json`, :meth:`from_json`)."""

    status: str | None
    rows: tuple[tuple[str, tuple[PlainCell, ...]], ...]
    env: EnvLabel

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "rows": [[key, [list(cell) for cell in cells]] for key, cells in self.rows],
            "env": {
                "env": self.env.env,
                "base_url": self.env.base_url,
                "masked_key": self.env.masked_key,
                "read_only": self.env.read_only,
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Preview:
        """The preview :meth:`to_json` gave; ValueError (or TypeError, KeyError) when it is not one."""
        status = data["status"]
        if status is not None and not isinstance(status, str):
            raise ValueError("status is not a string")
        rows = tuple(
            (_text(key), tuple(PlainCell(_text(text), _text(style)) for text, style in cells))
            for key, cells in data["rows"]
        )
        env = data["env"]
        label = EnvLabel(
            env=_text(env["env"]),
            base_url=_text(env["base_url"]),
            masked_key=_text(env["masked_key"]),
            read_only=env["read_only"] is True,
        )
        return cls(status=status, rows=rows, env=label)


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"not a string: {value!r}")
    return value
