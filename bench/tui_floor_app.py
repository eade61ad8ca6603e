"""The TUI floor: a minimal Textual app showing a 100-row DataTable (bench_tui.py runs it).

    python bench/tui_floor_app.py [--with-deps]

``--with-deps`` (a reference floor, not the issue's): the same app after importing the
libraries ``petstore tui`` cannot start without (pydantic for its
settings, httpx for the client, starlette and sqlite3 for the sandbox service), so the ratio
against it shows what our own code and the richer screen add.
"""

import sys

if "--with-deps" in sys.argv:
    import sqlite3  # noqa: F401

    import httpx  # noqa: F401
    import pydantic  # noqa: F401
    import starlette.applications  # noqa: F401

from textual.app import App, ComposeResult
from textual.widgets import DataTable


class FloorApp(App[None]):
    def compose(self) -> ComposeResult:
        yield DataTable()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("ID", "Name", "Category", "Status")
        table.add_rows([(i, f"Pet {i}", i % 4 + 1, "available") for i in range(1, 101)])


if __name__ == "__main__":
    FloorApp().run()
