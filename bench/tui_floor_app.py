"""The TUI floor: a minimal Textual app showing a 100-row DataTable (bench_tui.py runs it)."""

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
