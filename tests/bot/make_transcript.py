"""Record a Slack session with petstore's Slack face for the docs (not a test).

Run: ``.venv/bin/python tests/bot/make_transcript.py`` from the repository root (needs the test extra,
/usr/bin/chromium and ImageMagick's convert). A few seconds.

Slack cannot be reached from here, so this is the tests' set-up (``tests/bot/test_slack.py``'s rig): the Slack face
(``SlackFace``, as ``petstore bot slack`` builds it) on a real loopback socket over the sandbox, requests signed with
Slack's v0 scheme as Slack sends them, and a stand-in for Slack's ``response_url`` recording what the face posts
there (a Confirm's result: the prompt replaced, and the write posted to the channel). Bob is a viewer, Alice an operator. What the face answered is written out twice:

- ``docs/images/slack-channel.png``: a transcript page, each reply's Block Kit text (its monospaced sections) with
  who sees it (``ephemeral``: only the asker; ``in_channel``: everyone) and its buttons, screenshotted in headless
  Chromium. It is a transcript of the payloads, not Slack's window.
- on stdout, the same in plain text, for the docs page.
"""

from __future__ import annotations

import asyncio
import html
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

import httpx  # noqa: E402
from transcript_page import Said, page, screenshot  # noqa: E402

from bot.conftest import config  # noqa: E402
from bot.service import bot_settings, sandbox_service  # noqa: E402
from bot.slack_support import SECRET, Capture, SlackClient, block_text, buttons, serving  # noqa: E402
from petstore_bot.assembly import build_core, open_state  # noqa: E402
from petstore_bot.slack import SlackFace, post_json  # noqa: E402
from petstore_bot.slack_render import CONFIRM_ACTION  # noqa: E402
from petstore_bot.slack_verify import SlackSignature  # noqa: E402

IMAGE = ROOT / "docs" / "images" / "slack-channel.png"
NOTE = (
    "A transcript of the Slack face's answers (Block Kit payloads over HTTP, to requests signed as Slack signs them; "
    "Slack itself cannot be reached from here). Not Slack's window."
)
ALICE, BOB = "UALICE", "UBOB"
NAMES = {ALICE: "Alice", BOB: "Bob"}

Exchange = tuple[str, str, dict[str, Any]]  # who, what they did, the payload the face answered with


async def converse(tmp: Path) -> list[Exchange]:
    path = config(tmp, roles=([f"slack:T1/{ALICE}"], [f"slack:T1/{BOB}"]))
    settings = bot_settings(path)
    composition = sandbox_service(tmp / "sandbox", audit=tmp / "audit.ndjson")
    state = open_state(settings, state_dir=tmp / "state", audit=composition.audit)  # where writes are held
    core = build_core(composition, settings, platform="slack", prefix="/pets ", state=state)
    capture = Capture()
    said: list[Exchange] = []
    try:
        async with serving(capture.app()) as hook:
            face = SlackFace(
                core=core, flavour="slack", post=post_json, signature=SlackSignature(SECRET), response_origin=hook
            )
            async with serving(face.app()) as base, httpx.AsyncClient(timeout=30) as http:
                slack = SlackClient(http=http, base=base, hook=hook)

                async def command(user: str, text: str) -> dict[str, Any]:
                    answer: dict[str, Any] = (await slack.command(text, user=user)).json()
                    said.append((NAMES[user], f"/pets {text}", answer))
                    return answer

                await command(BOB, "list sold --limit 3")
                await command(BOB, "add Rex --category 3")
                preview = await command(ALICE, 'add "<!channel> Rex" --category 3')
                await slack.press(CONFIRM_ACTION, buttons(preview)[CONFIRM_ACTION], user=ALICE, prompt=preview)
                announced, replaced = (await capture.until(2))[:2]
                said.append((NAMES[ALICE], "presses Confirm", announced))
                said.append((NAMES[ALICE], "(her prompt, replaced: no buttons left)", replaced))
    finally:
        await composition.aclose()
        state.close()
    return said


def seen_by(who: str, payload: dict[str, Any]) -> str:
    return "the channel sees this" if payload.get("response_type") == "in_channel" else f"only {who} sees this"


def shown(payload: dict[str, Any]) -> str:
    """The sections' text as Slack shows it: the monospaced fences dropped, Slack's three escapes undone."""
    text = block_text(payload).replace("```\n", "").replace("\n```", "").replace("```", "")
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def transcript(said: list[Exchange]) -> list[Said]:
    out = []
    for who, did, payload in said:
        out.append(Said(who, html.escape(did) if did.startswith("/") else f"<em>{html.escape(did)}</em>"))
        labels = "".join(
            f'<span class="button{" primary" if "Confirm" in label else ""}">{html.escape(label)}</span>'
            for label in button_labels(payload)
        )
        body = f'<pre>{html.escape(shown(payload))}</pre>{labels}<div class="seen">{seen_by(who, payload)}</div>'
        out.append(Said("petstore", body, bot=True))
    return out


def button_labels(payload: dict[str, Any]) -> list[str]:
    return [str(e["text"]["text"]) for b in payload.get("blocks", []) if b["type"] == "actions" for e in b["elements"]]


def plain(said: list[Exchange]) -> str:
    lines = []
    for who, did, payload in said:
        lines.append(f"{who}: {did}".ljust(56) + f"({seen_by(who, payload)})")
        lines.extend(f"    {line}" for line in shown(payload).splitlines())
        if button_labels(payload):
            lines.append("    " + " ".join(f"[{label}]" for label in button_labels(payload)))
    return "\n".join(lines)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        said = asyncio.run(converse(Path(tmp)))
    screenshot(page(NOTE, transcript(said)), IMAGE)
    print(plain(said))
    print(f"\n{IMAGE.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
