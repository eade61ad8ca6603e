"""The formats contract: tsv/csv rows and JSON records from a result's records, --fields, --template, --jq, the
JSON object of a command, and one-shot captions."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

import pytest

from bot_commands import results as r
from bot_commands.formats import (
    OutputError,
    Template,
    compile_jq,
    data_of,
    jq_lines,
    record,
    select,
    to_csv,
    to_tsv,
    truncation,
)
from bot_commands.outcome import Outcome
from bot_commands.render_text import clip_cells, to_plain
from bot_commands.session import CommandSession
from bot_commands.views import present
from petstore_api.models import Pet

PETS = [
    Pet.model_validate({"id": 1, "name": 'Rex, "the"\tdog', "categoryId": 3, "status": "sold"}),
    Pet.model_validate({"id": 2, "name": "\U0001f436" * 40, "categoryId": 4}),
]


def test_a_pet_list_is_a_header_of_the_spec_fields_and_one_row_per_pet() -> None:
    data = data_of(r.PetList(pets=PETS))
    assert data is not None
    rows = list(csv.reader(io.StringIO(to_csv(data))))
    assert rows == [
        ["id", "name", "categoryId", "status"],
        ["1", 'Rex, "the"␉dog', "3", "sold"],
        ["2", "\U0001f436" * 40, "4", ""],  # no status: an empty cell (absent in JSON)
    ]
    assert to_tsv(data).splitlines()[1] == '1\tRex, "the"␉dog\t3\tsold'
    assert data.records[1] == {"id": 2, "name": "\U0001f436" * 40, "categoryId": 4}
    assert to_csv(select(data, ("name", "id"))).splitlines()[:2] == ["name,id", '"Rex, ""the""␉dog",1']


def test_no_records_is_a_header_when_the_fields_are_known_else_nothing() -> None:
    empty = data_of(r.PetList(pets=[]))
    assert empty is not None and to_csv(empty) == "id,name,categoryId,status\n"
    orders = data_of(r.OrdersListing(data=[]))
    assert orders is not None and to_csv(orders) == "" and to_tsv(orders) == ""
    assert data_of(r.Notice(text="prose")) is None


def test_an_unknown_field_names_those_the_command_has() -> None:
    data = data_of(r.PetList(pets=PETS))
    assert data is not None
    with pytest.raises(
        OutputError, match="unknown field 'nmae' in --fields; this command's fields: id, name, categoryId, status"
    ):
        select(data, ("nmae",))


def test_a_template_reads_fields_and_nothing_else() -> None:
    template = Template.parse("{{.id}}\t{{ .name }} [{{.status}}] {{.a.b}}")
    assert template.render({"id": 2, "name": "a\x1b[2Jb", "a": {"b": [1]}}) == "2\ta␛[2Jb [] [1]"
    for bad in ("{{range .}}{{.name}}{{end}}", "{{.name | upper}}", "{{call .x}}", "{{.name"):
        with pytest.raises(OutputError):
            Template.parse(bad)


def test_jq_prints_strings_raw_and_other_values_as_compact_json() -> None:
    records = [{"id": 1, "name": "Rex"}, {"id": 2, "name": "Max"}]
    assert jq_lines(compile_jq(".[].name"), records) == "Rex\nMax\n"
    assert jq_lines(compile_jq("map(.id)"), records) == "[1, 2]\n"
    with pytest.raises(OutputError, match="--jq"):
        compile_jq(".[")
    with pytest.raises(OutputError, match="--jq"):
        jq_lines(compile_jq(".[].name | tonumber"), records)


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


def test_plain_tables_clip_by_terminal_cells_unless_whole() -> None:
    assert clip_cells("\U0001f436" * 40, 60) == "\U0001f436" * 29 + "…"
    line = to_plain(present(r.PetList(pets=PETS)).view).splitlines()[2]
    assert line.startswith(" 2  " + "\U0001f436" * 29 + "…")
    assert (
        to_plain(present(r.PetList(pets=PETS)).view, whole=True)
        .splitlines()[2]
        .startswith(" 2  " + "\U0001f436" * 40 + "  ")
    )


async def test_list_all_reports_its_progress(make_session: Callable[..., CommandSession]) -> None:
    told: list[str] = []
    session = make_session(progress=told.append)
    await session.execute("/list --limit 5 --all")
    assert told == ["1 page, 5 pets so far", "2 pages, 10 pets so far", "3 pages, 12 pets so far"]
