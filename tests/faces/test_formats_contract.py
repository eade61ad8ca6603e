"""The formats contract through the real entry point (subprocesses on the sandbox): one record shape in every format,
no prose on stdout in the machine formats, ``--format json`` the data, ``--fields``, ``--jq``, ``--template``, and
piped output never clipped. The sandbox of each test lives in its own temporary data directory.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

import pytest
from cli_support import clean_env, petstore_main

pytestmark = pytest.mark.slow


def petstore(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return petstore_main(*args, env=clean_env(home, **{"COLUMNS": "100", **env}))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sandbox with a pet without status and a long name (added once for the module)."""
    home = tmp_path_factory.mktemp("home")
    added = petstore(home, "run", "-c", "/add Nameless --category 2", "-c", f"/add '{'Long name ' * 9}' --category 3")
    assert added.returncode == 0, added.stderr
    return home


def test_every_machine_format_has_the_spec_fields_and_a_missing_status_empty_or_absent(home: Path) -> None:
    args = ("list", "--limit", "100")
    rows = list(csv.reader(io.StringIO(petstore(home, *args, "--format", "csv").stdout)))
    assert rows[0] == ["id", "name", "categoryId", "status"]
    assert ["Nameless", "2", ""] == next(row[1:] for row in rows if row[1] == "Nameless")
    lines = petstore(home, *args, "--format", "tsv").stdout.splitlines()
    assert lines[0] == "id\tname\tcategoryId\tstatus" and any(line.endswith("\tNameless\t2\t") for line in lines)
    records = json.loads(petstore(home, *args, "--format", "json").stdout)
    assert {"id", "name", "categoryId"} == set(next(r for r in records if r["name"] == "Nameless"))
    card = petstore(home, "get", str(records[-2]["id"]), "--format", "csv")
    assert card.stdout.splitlines() == ["id,name,categoryId,status", f"{records[-2]['id']},Nameless,2,"]


def test_machine_formats_print_no_prose_on_stdout(home: Path) -> None:
    for fmt in ("csv", "tsv", "json"):
        out = petstore(home, "orders", "--format", fmt)
        assert out.returncode == 0
        assert out.stdout == ("[]\n" if fmt == "json" else "") and "no orders" in out.stderr
    empty = petstore(home, "run", "-c", "/list sold --limit 1", "-c", "/sleep 0", "--format", "csv", "--fields", "id")
    assert empty.stdout.splitlines()[0] == "id" and empty.stderr == ""


def test_format_json_is_an_array_of_records_and_json_stays_json_lines(home: Path) -> None:
    records = json.loads(petstore(home, "list", "sold", "--format", "json").stdout)
    assert records and all(r["status"] == "sold" and "command" not in r for r in records)
    envelope = json.loads(petstore(home, "list", "sold", "--json").stdout)
    assert envelope["command"] == "/list sold" and envelope["ok"] is True and envelope["result"] == records


def test_fields_select_in_every_format_and_unknown_fields_are_named(home: Path) -> None:
    fields = ("--fields", "name,id", "--limit", "2")
    assert petstore(home, "list", *fields, "--format", "csv").stdout == "name,id\nRex,1\nWhiskers,2\n"
    assert petstore(home, "list", *fields, "--format", "tsv").stdout == "name\tid\nRex\t1\nWhiskers\t2\n"
    assert json.loads(petstore(home, "list", *fields, "--format", "json").stdout) == [
        {"name": "Rex", "id": 1},
        {"name": "Whiskers", "id": 2},
    ]
    assert json.loads(petstore(home, "list", *fields, "--json").stdout)["result"][0] == {"name": "Rex", "id": 1}
    assert petstore(home, "list", *fields, "--format", "plain").stdout.split() == [
        "name",
        "id",
        "Rex",
        "1",
        "Whiskers",
        "2",
    ]
    bad = petstore(home, "list", "--fields", "nmae", "--format", "csv")
    assert bad.returncode == 2 and bad.stdout == ""
    assert (
        bad.stderr.strip()
        == "petstore: unknown field 'nmae' in --fields; this command's fields: id, name, categoryId, status"
    )


def test_jq_filters_the_records_and_template_renders_each(home: Path) -> None:
    out = petstore(home, "list", "sold", "--jq", ".[].name")
    assert out.returncode == 0 and out.stdout.splitlines() == ["Goldie", "Luna", "Max", "Kiwi"]
    out = petstore(home, "list", "sold", "--jq", "map(select(.categoryId == 2)) | length")
    assert out.stdout == "1\n"
    out = petstore(home, "list", "sold", "--template", "{{.id}}: {{.name}} ({{.status}})")
    assert out.stdout.splitlines()[0] == "4: Goldie (sold)" and len(out.stdout.splitlines()) == 4
    for bad in (["--jq", ".["], ["--template", "{{range .}}"], ["--jq", ".", "--format", "csv"]):
        out = petstore(home, "list", *bad)
        assert (
            out.returncode == 2
            and out.stdout == ""
            and out.stderr.startswith("petstore: ")
            and "Traceback" not in out.stderr
        )


def test_piped_plain_output_is_never_clipped(home: Path) -> None:
    name = ("Long name " * 9).strip()
    for fmt in ("plain", "table"):
        out = petstore(home, "list", "--limit", "100", "--format", fmt, COLUMNS="60")
        row = next(line for line in out.stdout.splitlines() if "Long name" in line)
        assert name in row and "…" not in row
