"""Hostile names from a real service, shown by ``petstore run`` (human, --json) and piped chat.

Pets are created through the real service (``python -m petstore_server``);
names over the service's 200-character limit (10,000 characters) are written
straight into its SQLite file, as another writer could. Every output must
hold no raw control/C1/bidi character (so no escape sequence), show markup
literally, keep every table line within the terminal width (COLUMNS=100) and
clip long names in tables; --json must give every name back exactly. Piped
``run`` prints plain text and never wraps (a wrapped name breaks grep): its
tables are clipped to 100 cells, a card's name line is one line of at most 500
characters and the name's length.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from server.support import running_server

from bot_commands.views import CARD_WIDTH
from petstore_api import PetStoreClient
from petstore_server.store import PetStore

from .proxy import Proxy
from .support import CANARY, Ran, assert_no_secret, assert_no_traceback, assert_terminal_safe, petstore

pytestmark = pytest.mark.slow

HOSTILE = [
    "[b]bold[/b] [red]red[/red]",
    "[link=http://evil.example]click me[/link]",
    "[@click=app.quit]quit[/]",
    "\x1b[31mred\x1b[0m \x1b[2J\x1b[H",
    "\x1b]52;c;cm0gLXJmIH4=\x07clipboard",
    "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]0;title\x1b\\ and \x1bP+q\x1b\\",
    "nul\x00bel\x07bs\x08vt\x0bff\x0ccr\rtab\tdel\x7f",
    "c1 \x9b31m csi \x9d0;osc\x9c \x85nel",
    "bidi \u202eevil.exe\u202c \u2066iso\u2069 \u200fmark",
    "lines\u2028sep\u2029para\nnewline",
    "dog \U0001f436\u200d\U0001f9ba family \U0001f468\u200d\U0001f469\u200d\U0001f467 flag \U0001f1fa\U0001f1e6",
    "zalgo e\u0301\u0302\u0303 Z\u0351\u0352\u0353\u0354",
    "wide 漢字かなカナ한국어",
    "y" * 200,
]
LONG = ["x" * 10_000, "\U0001f436" * 10_000, "\x1b[31m" * 2_000]


@pytest.fixture(scope="module")
def hostile_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, int]]]:
    """A fresh service holding only the hostile pets: (base URL, name -> id)."""
    db = tmp_path_factory.mktemp("hostile") / "pets.db"
    with running_server(db, keys=[CANARY]) as (_, url, _):
        ids = asyncio.run(_create(url))
        store = PetStore(db)  # over the service's length limit: written like another writer would
        try:
            ids.update({name: store.create_pet(name=name, category_id=9, status="sold")["id"] for name in LONG})
        finally:
            store.close()
        yield url, ids


async def _create(url: str) -> dict[str, int]:
    async with PetStoreClient(base_url=url, api_key=CANARY) as client:
        return {name: (await client.create_pet(name=name, category_id=1)).pet.id for name in HOSTILE}


def _check(ran: Ran, width: int = 100, *, cards_unwrapped: bool = False) -> None:
    """``cards_unwrapped``: plain output, where a card's name is one line (clipped, never wrapped)."""
    assert_no_traceback(ran.out, ran.err)
    assert_no_secret(ran.out, ran.err)
    assert_terminal_safe(ran.everything)
    layout = [line for line in ran.out.splitlines() if not line.startswith(("note: ", "error: "))]
    if cards_unwrapped:
        names = [line for line in layout if line.startswith("name ")]
        assert names and all(
            len(line) <= len("name        ") + CARD_WIDTH + len(" (10000 characters)") for line in names
        )
        layout = [line for line in layout if not line.startswith("name ")]
    wide = [line for line in layout if cell_len(line) > width]  # notes and errors: one line by design
    assert not wide, f"{len(wide)} lines wider than {width} cells, e.g. {wide[0][:120]!r}"


def _literal_markup(text: str) -> None:
    for markup in ("[b]bold[/b] [red]red[/red]", "[link=http://evil.example]click me[/link]", "[@click=app.quit]"):
        assert markup in text, markup


def _gets(ids: dict[str, int]) -> list[str]:
    return [a for pet_id in ids.values() for a in ("-c", f"/get {pet_id}")]


def test_run_piped_shows_hostile_names_literally_and_whole(hostile_service, tmp_path: Path) -> None:
    url, ids = hostile_service
    ran = petstore(tmp_path, "run", "--base-url", url, "-c", "/list --all", *_gets(ids))
    assert ran.code == 0, ran.err
    _check(ran, width=100_000, cards_unwrapped=True)  # piped: a row is one line, never wrapped nor clipped
    assert cell_len(ran.out.splitlines()[0]) <= 100  # the header is not padded out to the longest name
    _literal_markup(ran.out)
    assert "\u241b[31mred\u241b[0m" in ran.out and "<U+202E>" in ran.out and "\\x9b31m" in ran.out
    assert "\U0001f436\u200d\U0001f9ba" in ran.out and "e\u0301\u0302\u0303" in ran.out and "漢字" in ran.out
    table = ran.out.split("Pet ", 1)[0]
    assert "x" * 10_000 in table and "…" not in table  # whole in the table: piped data never loses a character
    assert len([line for line in table.splitlines() if line.strip()]) == len(ids) + 2  # header, a line a pet, caption
    assert "(10000 characters)" in ran.out  # the card says how long it really is
    assert f"{len(ids)} pets" in ran.out


def test_run_json_gives_every_name_back_exactly(hostile_service, tmp_path: Path) -> None:
    url, ids = hostile_service
    ran = petstore(tmp_path, "run", "--base-url", url, "--json", "-c", "/list --all", *_gets(ids))
    assert ran.code == 0, ran.err
    assert_terminal_safe(ran.everything)
    assert ran.out.isascii()
    objs = [json.loads(line) for line in ran.out.splitlines()]
    assert len(objs) == 1 + len(ids)
    assert {p["name"]: p["id"] for p in objs[0]["result"]} == ids
    assert [o["result"]["name"] for o in objs[1:]] == list(ids)


def test_chat_shows_hostile_names_literally_and_bounded(hostile_service, tmp_path: Path) -> None:
    url, ids = hostile_service
    lines = ["/list --all", *(f"/get {pet_id}" for pet_id in ids.values()), "/env"]
    ran = petstore(tmp_path, "chat", "--base-url", url, stdin="\n".join(lines) + "\n")
    assert ran.code == 0, ran.err
    _check(ran)
    _literal_markup(ran.out)
    assert "x" * 59 + "…" in ran.out and sum(line.startswith("Pet ") for line in ran.out.splitlines()) == len(ids)


def test_hostile_error_bodies_are_one_safe_line(hostile_service, tmp_path: Path) -> None:
    url, _ = hostile_service
    with Proxy(url) as proxy:
        proxy.error_body = {
            "code": "\x1b[31mboom\x1b[0m",
            "message": "[b]x[/b]\x1b]52;c;Zm9v\x07\n\u202eline two",
            "status": 500,
        }
        proxy.plan = ["error_500", "error_500"]
        human = petstore(tmp_path, "run", "--base-url", proxy.url(), "-c", "/add Rex --category 1")
        machine = petstore(tmp_path, "run", "--base-url", proxy.url(), "--json", "-c", "/add Rex --category 1")
    assert human.code == 1 and machine.code == 1
    _check(human)
    assert len(human.err.splitlines()) == 1 and "[b]x[/b]" in human.err and "\u241b[31mboom" in human.err
    assert_terminal_safe(machine.everything)
    error = json.loads(machine.out)["error"]
    assert error["status"] == 500 and error["message"].startswith("[b]x[/b]\x1b]52;c;Zm9v\x07")


# -- the renderers themselves, over arbitrary text ----------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.text(min_size=1, max_size=300), extra=st.text(max_size=50), width=st.integers(20, 120))
def test_render_any_text_is_safe_and_bounded(name: str, extra: str, width: int) -> None:
    import io
    import re

    from rich.console import Console

    from bot_commands.errors import classify
    from bot_commands.render import render
    from bot_commands.results import Notice, PetCreated, PetList
    from petstore_api.errors import ServerError
    from petstore_api.models import ErrorBody, Pet

    pet = Pet.model_validate({"id": 1, "name": name, "categoryId": 2, "status": extra or None, f"x-{extra}": name})
    error = ServerError(ErrorBody(code=extra or "c", message=name, status=500))
    for terminal in (False, True):
        out = io.StringIO()
        console = Console(file=out, width=width, force_terminal=terminal, color_system="standard" if terminal else None)
        for result in (PetList(pets=[pet, pet]), PetCreated(pet=pet), Notice(text=name)):
            console.print(render(result))
        console.print(classify(error).text, soft_wrap=True, markup=False)
        text = out.getvalue()
        if terminal:
            text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # rich's own colours are fine
        assert_terminal_safe(text)
        assert "\n" not in classify(error).text
        lines = text.splitlines()
        assert all(cell_len(line) <= width for line in lines[:-1]), width  # the last: the one-line error


def test_tsv_and_csv_keep_one_row_per_pet_and_no_raw_control_character(hostile_service, tmp_path: Path) -> None:
    import csv
    import io

    url, ids = hostile_service
    for fmt in ("csv", "tsv"):
        ran = petstore(tmp_path, "run", "--base-url", url, "--format", fmt, "-c", "/list --all")
        assert ran.code == 0, ran.err
        assert_terminal_safe(ran.out.replace("\t", " ") + ran.err)  # tsv's own tabs are its separators
        rows = list(
            csv.reader(
                io.StringIO(ran.out),
                delimiter="," if fmt == "csv" else "\t",
                quoting=csv.QUOTE_MINIMAL if fmt == "csv" else csv.QUOTE_NONE,
            )
        )
        assert rows[0] == ["id", "name", "categoryId", "status"] and len(rows) == len(ids) + 1
        assert all(len(row) == 4 for row in rows)
        assert "x" * 10_000 in ran.out  # whole cells: machine formats never clip
