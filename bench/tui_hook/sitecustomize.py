"""Start-up probe for bench_tui.py (on PYTHONPATH only for those runs; inert otherwise).

With BENCH_TUI_PAINT_FILE set, the first time a Textual DataTable renders a line
below its header while holding at least BENCH_TUI_MIN_ROWS rows, the process
writes ``time.monotonic()`` to that file and exits at once. The patch is applied
when ``textual.widgets._data_table`` is first imported, so nothing else is imported
early and the app's own start-up is unchanged.
"""

import os
import sys

_OUT = os.environ.get("BENCH_TUI_PAINT_FILE")
_TARGET = "textual.widgets._data_table"


def _patch(module):  # type: ignore[no-untyped-def]
    import time

    table_cls = module.DataTable
    original = table_cls.render_line
    min_rows = int(os.environ.get("BENCH_TUI_MIN_ROWS", "1"))
    soft = bool(os.environ.get("BENCH_TUI_SOFT_EXIT"))
    done: list[bool] = []

    def render_line(self, y):  # type: ignore[no-untyped-def]
        strip = original(self, y)
        if self.row_count >= min_rows and y >= (1 if self.show_header else 0) and not done:
            with open(_OUT, "w") as fh:
                fh.write(repr(time.monotonic()))
            if not soft:
                os._exit(0)
            done.append(True)  # BENCH_TUI_SOFT_EXIT (for profilers): a normal exit
            self.app.exit()
        return strip

    table_cls.render_line = render_line


class _Finder:
    """Meta path finder that patches DataTable right after its module runs."""

    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        if name != _TARGET:
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):  # type: ignore[no-untyped-def]
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if _OUT:
    sys.meta_path.insert(0, _Finder())
