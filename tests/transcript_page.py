"""A chat transcript as an HTML page, screenshotted in headless Chromium: the docs' pictures of the chat bots.

Used by ``tests/matrix/make_transcript.py`` and ``tests/bot/make_transcript.py`` (not tests). A transcript says it
is one: no Matrix or Slack client is installed here, so the page shows what the bot really sent (its HTML, or its
Block Kit text), under a note that says where it came from, never a mock of a client's window.
"""

from __future__ import annotations

import html
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; background: #fff; color: #17191c; margin: 0; padding: 14px 18px;
       width: 760px; }
.note { color: #737d8c; font-size: 13px; margin-bottom: 10px; }
.msg { display: flex; gap: 10px; margin: 8px 0; }
.who { width: 76px; flex: none; font-weight: 600; text-align: right; color: #368bd6; }
.bot .who { color: #0dbd8b; } .text { flex: 1; } .bot .text { color: #414549; }
.seen { color: #737d8c; font-size: 12.5px; font-style: italic; }
.button { display: inline-block; border: 1px solid #bbb; border-radius: 4px; padding: 0 10px; margin-right: 6px;
          font-weight: 600; font-size: 13.5px; }
.primary { background: #007a5a; border-color: #007a5a; color: #fff; }
table { border-collapse: collapse; font-size: 14px; } th, td { padding: 1px 10px 1px 0; text-align: left; }
th { border-bottom: 1px solid #ddd; }
code, pre { font-family: ui-monospace, monospace; font-size: 13.5px; } pre { margin: 2px 0; white-space: pre-wrap; }
"""


@dataclass(frozen=True)
class Said:
    """One message: who said it, and its body as HTML (already safe: escape text with :func:`html.escape`)."""

    who: str
    html: str
    bot: bool = False


def page(note: str, said: list[Said]) -> str:
    rows = "\n".join(
        f'<div class="msg{" bot" if s.bot else ""}"><div class="who">{html.escape(s.who)}</div>'
        f'<div class="text">{s.html}</div></div>'
        for s in said
    )
    return f'<!doctype html><meta charset="utf-8"><style>{STYLE}</style>\n<div class="note">{note}</div>\n{rows}\n'


def screenshot(document: str, image: Path) -> None:
    """``document`` rendered at 800 pixels wide, the whole page, as an optimised PNG at ``image``."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "transcript.html"
        source.write_text(document, encoding="utf-8")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
            tab = browser.new_page(viewport={"width": 800, "height": 600}, device_scale_factor=1)
            tab.goto(source.as_uri())
            tab.screenshot(path=str(image), full_page=True)
            browser.close()
    # A palette of 128 colours without dithering: a third of the size, the same to the eye (ImageMagick).
    subprocess.run(["convert", str(image), "-strip", "+dither", "-colors", "128", f"PNG8:{image}"], check=True)
