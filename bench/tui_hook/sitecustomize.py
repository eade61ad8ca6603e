"""Start-up probe for bench_tui.py (on PYTHONPATH only for those runs; inert otherwise).

With BENCH_TUI_FRAME_FILE set, the first frame the app composes (``App._display`` called with
an update for a screen that has widgets) writes ``time.monotonic()`` to that file; with
BENCH_TUI_FRAME_ONLY the process then exits at once (for apps without a pets table, such as
posting). With BENCH_TUI_PAINT_FILE set, the first time a table renders a line below its header
while holding at least BENCH_TUI_MIN_ROWS rows, the process writes ``time.monotonic()``
to that file and exits at once. The tables: Textual's DataTable (the floor app) and the
product's own ``tui.widgets.pets_table.PetsTable`` (the pets list). Each is patched when
its module is first imported, so nothing else is imported early and the app's own
start-up is unchanged.
"""

import os
import sys

_OUT = os.environ.get("BENCH_TUI_PAINT_FILE")
_FRAME = os.environ.get("BENCH_TUI_FRAME_FILE")
_TARGETS = {"textual.widgets._data_table": "DataTable", "tui.widgets.pets_table": "PetsTable"}
_done: list[bool] = []


def _patch_frame(app_cls):  # type: ignore[no-untyped-def]
    import time

    original = app_cls._display
    only = bool(os.environ.get("BENCH_TUI_FRAME_ONLY"))
    seen: list[bool] = []

    def _display(self, screen, renderable):  # type: ignore[no-untyped-def]
        if renderable is not None and not seen and len(screen.children) > 0:
            seen.append(True)
            with open(_FRAME, "w") as fh:
                fh.write(repr(time.monotonic()))
            if only:
                os._exit(0)
        return original(self, screen, renderable)

    app_cls._display = _display


def _patch(table_cls):  # type: ignore[no-untyped-def]
    import time

    original = table_cls.render_line
    min_rows = int(os.environ.get("BENCH_TUI_MIN_ROWS", "1"))
    soft = bool(os.environ.get("BENCH_TUI_SOFT_EXIT"))

    def render_line(self, y):  # type: ignore[no-untyped-def]
        strip = original(self, y)
        header = 1 if getattr(self, "show_header", True) else 0  # PetsTable: always a header
        if self.row_count >= min_rows and y >= header and not _done:
            now = repr(time.monotonic())
            with open(_OUT, "w") as fh:
                fh.write(now)
            if _FRAME and not os.path.exists(_FRAME):  # the rows came in the first frame
                with open(_FRAME, "w") as fh:
                    fh.write(now)
            if not soft:
                os._exit(0)
            _done.append(True)  # BENCH_TUI_SOFT_EXIT (for profilers): a normal exit
            self.app.exit()
        return strip

    table_cls.render_line = render_line


class _Finder:
    """Meta path finder that patches a table class right after its module runs."""

    def __init__(self) -> None:
        self.pending = dict(_TARGETS) if _OUT else {}
        if _FRAME:
            self.pending["textual.app"] = "App"

    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        class_name = self.pending.pop(name, None)
        if class_name is None:
            return None
        if not self.pending:
            sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):  # type: ignore[no-untyped-def]
            run(module)
            (_patch_frame if name == "textual.app" else _patch)(getattr(module, class_name))

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if _OUT or _FRAME:
    sys.meta_path.insert(0, _Finder())
