"""tsv/csv rows from the views, the JSON object of a command, and one-shot captions."""

from __future__ import annotations

import csv
import io

from bot_commands import results as r
from bot_commands.formats import record, to_csv, to_tsv, truncation
from bot_commands.outcome import Outcome
from bot_commands.render_text import clip_cells, to_plain
from bot_commands.session import CommandSession
from bot_commands.views import present
from petstore_api.models import Pet

PETS = [
    Pet.model_validate({"id": 1, "name": 'Rex, "the"\tdog', "categoryId": 3, "status": "sold"}),
    Pet.model_validate({"id": 2, "name": "\U0001f436" * 40, "categoryId": 4}),
]


def test_a_pet_list_is_a_header_and_one_row_per_pet() -> None:
    view = present(r.PetList(pets=PETS)).view
    rows = list(csv.reader(io.StringIO(to_csv(view))))
    assert rows == [
        ["id", "name", "category", "status"],
        ["1", 'Rex, "the"␉dog', "3", "sold"],
        ["2", "\U0001f436" * 40, "4", "-"],
    ]
    assert to_tsv(view).splitlines()[1] == '1\tRex, "the"␉dog\t3\tsold'


def test_truncation_is_in_the_json_object_only_when_all_stopped_at_its_guard() -> None:
    cut = r.PetList(pets=PETS, next_url="http://x/v1/pets?cursor=9", pages=100, truncated=True)
    assert truncation(cut) == {"truncated": True, "pages": 100}
    assert record(Outcome(line="/list --all", result=cut)) == {
        "command": "/list --all",
        "ok": True,
        "result": [],
        "truncated": True,
        "pages": 100,
    }
    assert truncation(r.PetList(pets=PETS, next_url="http://x/v1/pets?cursor=9")) == {}


def test_one_shot_captions_suggest_no_follow_up_command() -> None:
    page = r.PetList(pets=PETS, next_url="http://x/v1/pets?cursor=9")
    assert "(/more, or /list --all for every page)" in present(page).view.caption  # type: ignore[union-attr]
    assert present(page, one_shot=True).view.caption == "2 pets; more on the next page (--all fetches every page)"  # type: ignore[union-attr]
    cut = r.PetList(pets=PETS, next_url="http://x", pages=100, truncated=True)
    caption = present(cut, one_shot=True).view.caption  # type: ignore[union-attr]
    assert "stopped at the 100-page limit of --all" in caption and "list --all" not in caption


def test_plain_tables_clip_by_terminal_cells() -> None:
    assert clip_cells("\U0001f436" * 40, 60) == "\U0001f436" * 29 + "…"
    line = to_plain(present(r.PetList(pets=PETS)).view).splitlines()[2]
    assert line.startswith(" 2  " + "\U0001f436" * 29 + "…")


async def test_list_all_reports_its_progress(session: CommandSession) -> None:
    told: list[str] = []
    session.progress = told.append
    await session.execute("/list --limit 5 --all")
    assert told == ["1 page, 5 pets so far", "2 pages, 10 pets so far", "3 pages, 12 pets so far"]
