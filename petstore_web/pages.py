"""The HTML pages: the login form, the app page (textual-serve's browser client, from its package), the refusals."""

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
if (location.hash.startsWith("#token=")) history.replaceState(null, "", location.pathname);  // logged in already
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
// A file the app delivers (/history save) is fetched by a link in this page: textual.js would open a new window
// for it, which browsers block as a pop-up unless a key was pressed just before.
const openWindow = window.open.bind(window);
window.open = (url, target, features) => {
  if (typeof url === "string" && new URL(url, location.href).pathname.startsWith("/download/")) {
    const link = Object.assign(document.createElement("a"), {href: url, download: ""});
    document.body.append(link);
    link.click();
    link.remove();
    return null;
  }
  return openWindow(url, target, features);
};
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


_LOGIN = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>petstore web: log in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body {{ background: #0c181f; color: #eee; font: 18px/1.5 monospace; display: flex; height: 90vh;
align-items: center; justify-content: center; }} main {{ max-width: 34em; }}
input {{ font: inherit; width: 100%; box-sizing: border-box; padding: 8px; margin: 8px 0 16px; }}
button {{ padding: 10px 28px; background: #5e0ba7; color: #fff; border: none; font: inherit; cursor: pointer; }}
.problem {{ color: #ff8a80; }} .hint {{ color: #9ab; font-size: 15px; }}</style></head>
<body><main><h1>petstore web</h1>
<p class="{kind}">{message}</p>
<form method="post" action="/login">
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Log in</button>
</form>
<p class="hint">Ask whoever runs this server for your token. It goes in this form, never in the address.</p>
</main>
<script>
// The address printed at start-up carries the token after '#': that part never leaves the browser (no server or
// proxy log sees it). It is taken out of the address bar at once and posted as if typed.
const given = /^#token=(.+)$/.exec(location.hash);
if (given) {{
  history.replaceState(null, "", location.pathname);
  document.getElementById("token").value = decodeURIComponent(given[1]);
  document.forms[0].submit();
}}
</script>
</body>
</html>
"""

LOGIN = _LOGIN.format(kind="", message="Log in with the token you were given.")
LOGIN_FAILED = _LOGIN.format(
    kind="problem", message="That token is not known here. Try again, or ask whoever runs this server."
)
LOGGED_OUT = notice("Log in first", "This petstore web server needs a login: open / and give it your token.")
TOKEN_IN_ADDRESS = notice(
    "The token goes in the login form",
    "petstore web takes the token in its login form, not in the address, where proxy logs and browser history "
    "keep it. Open / and paste it there.",
)


def sessions_full(limit: int) -> str:
    noun = "session is" if limit == 1 else "sessions are"
    return notice(
        "All sessions are in use",
        f"This petstore web server runs at most {limit} TUI {noun} at once, and all are in use. "
        "Close another tab with it, or try again later.",
    )
