"""The HTML pages: the app page (textual-serve's browser client, from its package) and the refusals."""

from __future__ import annotations

import html

#: The app page. textual.js (xterm.js and the session protocol) connects to the websocket named in
#: data-session-websocket-url on load; the address is worked out here from the page's own (ws: or wss: behind
#: a TLS proxy), so no host name is baked in. Fonts come from this server, not from a font CDN.
APP_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>petstore</title>
<link rel="stylesheet" href="/static/css/xterm.css">
<script src="/static/js/textual.js"></script>
<style>
@font-face { font-family: "Roboto Mono"; src: url("/static/fonts/RobotoMono-VariableFont_wght.ttf"); }
html, body { margin: 0; height: 100%; background: #0c181f; color: #eee; font-family: "Roboto Mono", monospace; }
#terminal { position: absolute; inset: 0; }
.closed { display: none; position: absolute; inset: 0; z-index: 10; align-items: center; justify-content: center;
          flex-direction: column; background: rgba(12, 24, 31, 0.92); }
body.-closed .closed { display: flex; }
.closed button { padding: 12px 28px; margin: 16px; background: #5e0ba7; color: #fff; border: none;
                 font: inherit; cursor: pointer; }
</style>
</head>
<body>
<div class="closed"><div>Session ended.</div>
<button type="button" onclick="location.reload()">Start again</button></div>
<div id="terminal" class="textual-terminal" data-font-size="16"></div>
<script>
document.getElementById("terminal").dataset.sessionWebsocketUrl =
  (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
// The keyboard goes to the terminal from the start (and when the tab comes back), as in a terminal window:
// xterm.js takes keys through its helper textarea, which textual.js creates once it has opened the terminal.
function focusTerminal(tries) {
  const keys = document.querySelector("#terminal .xterm-helper-textarea");
  if (keys) { keys.focus({preventScroll: true}); } else if (tries > 0) { setTimeout(focusTerminal, 50, tries - 1); }
}
window.addEventListener("load", () => focusTerminal(200));
window.addEventListener("focus", () => focusTerminal(0));
</script>
</body>
</html>
"""

_NOTICE = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>petstore web: {title}</title>
<style>body {{ background: #0c181f; color: #eee; font: 18px/1.5 monospace; display: flex; height: 90vh;
align-items: center; justify-content: center; }} main {{ max-width: 40em; }}</style></head>
<body><main><h1>{title}</h1><p>{text}</p></main></body>
</html>
"""


def notice(title: str, text: str) -> str:
    return _NOTICE.format(title=html.escape(title), text=html.escape(text))


NO_TOKEN = notice(
    "Not without the token",
    "This petstore web server needs the address it printed when it started, the one ending in ?token=... "
    "Ask whoever started it for that address.",
)


def sessions_full(limit: int) -> str:
    noun = "session is" if limit == 1 else "sessions are"
    return notice(
        "All sessions are in use",
        f"This petstore web server runs at most {limit} TUI {noun} at once, and all are in use. "
        "Close another tab with it, or try again later.",
    )
