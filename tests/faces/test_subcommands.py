"""Registry commands as subcommands, output formats, --all truncation, the spinner: subprocesses over ``petstore serve``.

``petstore list sold --limit 5`` must be ``petstore run -c '/list sold --limit 5'``: the same JSON, messages,
policy, audit and exit codes. Formats: table (plain text off a terminal, never wrapped), plain, tsv, csv,
json, jsonl (= --json).
"""

from __future__ import annotations

import csv
import io
import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import petstore_main, serving

from bot_commands.commands import MAX_PAGES, default_registry
from bot_commands.views import with_prefix
from petstore_cli.options import FACES, build_parser
from petstore_cli.subcommands import petstore_options, split_words
from petstore_server.store import PetStore

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-0123456789abcdef"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``petstore serve`` on loopback, seeded with the dozen sample pets: (base URL, database)."""
    db = tmp_path_factory.mktemp("serve") / "pets.db"
    with serving(db, _env(tmp_path_factory.mktemp("home"), PETSTORE_SERVER_API_KEYS=KEY)) as url:
        yield url, db


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "NO_COLOR", "FORCE_COLOR"))}
    env.update(
        XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"), COLUMNS="100", PETSTORE_API_KEY=KEY
    )
    env.update(extra)
    return env


def petstore(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return petstore_main(*args, env=_env(tmp_path, **env))


def jsonl(out: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.stdout.splitlines()]


# -- the same as run -c -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "words",
    [
        ["list", "sold", "--limit", "2"],
        ["ls", "--status", "pending"],
        ["get", "3"],
        ["get", "424242"],
        ["orders"],
        ["env"],
        ["list", "--limit", "0"],
        ["list", "--limti", "3"],
        ["add", "--category", "3"],
        ["whoami"],
    ],
)
def test_a_subcommand_is_run_c_of_its_line(tmp_path: Path, service: tuple[str, Path], words: list[str]) -> None:
    url = service[0]
    sub = petstore(tmp_path, *words, "--base-url", url, "--json")
    line = "/" + " ".join(words)
    run = petstore(tmp_path, "run", "--base-url", url, "--json", "-c", line)
    assert sub.returncode == run.returncode
    assert jsonl(sub) == jsonl(run)
    assert sub.stderr == run.stderr
    human_sub = petstore(tmp_path, *words, "--base-url", url)
    human_run = petstore(tmp_path, "run", "--base-url", url, "-c", line)
    assert human_sub.returncode == human_run.returncode and human_sub.stdout == human_run.stdout
    names = set(default_registry().names())  # the subcommand's failures name commands as typed: petstore get ID
    assert human_sub.stderr.replace(f"petstore {default_registry().resolve(words[0]).name}: ", "") == with_prefix(
        human_run.stderr.replace("-c 1: ", ""), prefix="petstore ", commands=names
    )


def test_a_name_with_spaces_and_quotes_round_trips(tmp_path: Path, service: tuple[str, Path]) -> None:
    name = """Rex "the" Dog's, friend"""
    out = petstore(tmp_path, "add", name, "--category", "3", "--base-url", service[0], "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["name"] == name


def test_policy_and_audit_as_in_run(tmp_path: Path, service: tuple[str, Path]) -> None:
    url, audit = service[0], tmp_path / "audit.ndjson"
    out = petstore(
        tmp_path, "add", "Rex", "--category", "1", "--base-url", url, "--read-only", "--json", "--audit-log", str(audit)
    )
    assert out.returncode == 2 and jsonl(out)[0]["error"]["code"] == "read_only"
    entry = json.loads(audit.read_text())
    assert entry["line"] == "/add Rex --category 1" and entry["outcome"] == "refused"
    prod = {"PETSTORE_PRODUCTION__BASE_URL": url}
    out = petstore(tmp_path, "--env", "production", "add", "Rex", "--category", "1", "--json", **prod)
    assert out.returncode == 2 and jsonl(out)[0]["error"]["code"] == "confirmation_required"
    out = petstore(tmp_path, "--env", "production", "add", "Rex", "--category", "1", "--json", "--yes", **prod)
    assert out.returncode == 0 and jsonl(out)[0]["result"]["name"] == "Rex"


def test_mistyped_subcommands_get_did_you_mean(tmp_path: Path) -> None:
    for typed, meant in (("chta", "chat"), ("lsit", "list"), ("ordres", "orders"), ("complet", "completion")):
        out = petstore(tmp_path, typed)
        assert out.returncode == 2 and f"did you mean {meant}?" in out.stderr and out.stdout == ""
        assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_a_subcommands_bad_input_names_it_as_typed_and_run_c_keeps_the_slash(tmp_path: Path) -> None:
    out = petstore(tmp_path, "get", "abc")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == "petstore get: pet id must be a whole number, not 'abc'. Usage: petstore get ID\n"
    out = petstore(tmp_path, "list", "bogus")
    assert out.returncode == 2 and out.stderr.endswith(
        "Usage: petstore list [STATUS] [--status S] [--limit N] [--all]\n"
    )
    out = petstore(tmp_path, "run", "-c", "/get abc")
    assert out.returncode == 2 and out.stderr == "-c 1: pet id must be a whole number, not 'abc'. Usage: /get ID\n"


@pytest.mark.parametrize("name", ["watch", "unwatch", "watches", "every", "schedules", "unschedule"])
def test_a_chat_room_command_as_a_subcommand_says_where_it_works(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Not ``in petstore chat``, which refuses it too: a chat bot's room. In-process, through ``main(argv)``."""
    from petstore_cli.main import main

    assert main([name]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1
    assert out.err.startswith(f"petstore: /{name} works in chat rooms only") and "petstore chat" not in out.err


def test_subcommand_help_comes_from_the_declaration(tmp_path: Path) -> None:
    out = petstore(tmp_path, "list", "--help")
    assert out.returncode == 0
    assert out.stdout.startswith("usage: petstore list [STATUS] [--status S] [--limit N] [--all]")
    assert "pets per page, 1 to 100" in out.stdout and "--format" in out.stdout and "also: petstore ls" in out.stdout


def test_no_command_shadows_a_face_and_no_flag_shadows_an_option() -> None:
    registry = default_registry()
    assert not set(registry.names()) & set(FACES)
    assert not {a.flag for c in registry.commands() for a in c.args if a.flag} & set(petstore_options())
    assert split_words(["sold", "--env", "production", "--limit=5", "-vv", "--format=csv", "--", "--json"]) == (
        ["--env", "production", "-vv", "--format=csv"],
        ["sold", "--limit=5", "--", "--json"],
    )


def test_faces_keep_their_names(tmp_path: Path) -> None:
    out = petstore(tmp_path, "run", "--help")
    assert out.returncode == 0 and "--format" in out.stdout and "--keep-going" in out.stdout
    assert "petstore list sold --limit 5" in build_parser().format_help()


# -- formats ----------------------------------------------------------------------------------


def test_piped_table_is_plain_text_never_wrapped(tmp_path: Path, service: tuple[str, Path]) -> None:
    url = service[0]
    long = "Very long name " * 6
    assert petstore(tmp_path, "add", long, "--category", "2", "--base-url", url).returncode == 0
    out = petstore(tmp_path, "list", "--limit", "100", "--base-url", url, COLUMNS="40")
    assert out.returncode == 0 and "\x1b" not in out.stdout
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["id", "name", "category", "status"]
    row = next(line for line in lines if "Very long" in line)
    assert row.rstrip().endswith("2  -") and long.strip() in row and "…" not in row  # one line, the name whole
    assert out.stdout == petstore(tmp_path, "list", "--limit", "100", "--base-url", url, "--format", "plain").stdout


def test_tsv_and_csv_have_a_header_and_one_row_per_pet(tmp_path: Path, service: tuple[str, Path]) -> None:
    url = service[0]
    tricky = 'Tab\there, "quoted", comma'
    assert petstore(tmp_path, "add", tricky, "--category", "5", "--base-url", url).returncode == 0
    listed = jsonl(petstore(tmp_path, "list", "--limit", "100", "--base-url", url, "--json"))[0]["result"]
    out = petstore(tmp_path, "list", "--limit", "100", "--base-url", url, "--format", "csv")
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert rows[0] == ["id", "name", "categoryId", "status"] and len(rows) == len(listed) + 1
    assert [int(r[0]) for r in rows[1:]] == [p["id"] for p in listed]
    assert 'Tab␉here, "quoted", comma' in [r[1] for r in rows]  # quoted by csv; the tab made visible
    out = petstore(tmp_path, "list", "--limit", "100", "--base-url", url, "--format", "tsv")
    lines = out.stdout.splitlines()
    assert all(line.count("\t") == 3 for line in lines) and len(lines) == len(listed) + 1
    assert "\x1b" not in out.stdout and out.stderr == ""
    card = petstore(tmp_path, "get", "1", "--base-url", url, "--format", "tsv").stdout.splitlines()
    assert card == ["id\tname\tcategoryId\tstatus", "1\tRex\t1\tavailable"]


def test_json_is_one_array_of_records_jsonl_one_object_a_command(tmp_path: Path, service: tuple[str, Path]) -> None:
    url = service[0]
    args = ["run", "--base-url", url, "-c", "/list sold", "-c", "/env"]
    as_json = json.loads(petstore(tmp_path, *args, "--format", "json").stdout)
    envelopes = jsonl(petstore(tmp_path, *args, "--format", "jsonl"))
    assert envelopes == jsonl(petstore(tmp_path, *args, "--json"))
    assert [o["command"] for o in envelopes] == ["/list sold", "/env"]
    assert as_json == [*envelopes[0]["result"], envelopes[1]["result"]]  # the data of both, no envelope


def test_one_shot_runs_do_not_suggest_more(tmp_path: Path, service: tuple[str, Path]) -> None:
    url = service[0]
    for args in (["list", "--limit", "2"], ["run", "-c", "/list --limit 2"]):
        out = petstore(tmp_path, *args, "--base-url", url)
        assert "2 pets; more on the next page (--all fetches every page)" in out.stdout
        assert "/more" not in out.stdout + out.stderr


# -- --all at its page guard --------------------------------------------------------------------


@pytest.fixture(scope="module")
def many(service: tuple[str, Path]) -> str:
    """More pets than --all's page guard reaches at --limit 1 (written as another writer would)."""
    url, db = service
    store = PetStore(db)
    try:
        for index in range(MAX_PAGES):
            store.create_pet(name=f"Extra {index}", category_id=7, status="pending")
    finally:
        store.close()
    return url


def test_all_at_its_page_guard_says_so_in_every_format(tmp_path: Path, many: str) -> None:
    args = ["list", "--limit", "1", "--all", "--base-url", many]
    out = petstore(tmp_path, *args, "--format", "jsonl")
    obj = jsonl(out)[0]
    assert out.returncode == 0 and obj["ok"] is True
    assert obj["truncated"] is True and obj["pages"] == MAX_PAGES and len(obj["result"]) == MAX_PAGES
    out = petstore(tmp_path, *args, "--format", "json")
    assert out.returncode == 0 and len(json.loads(out.stdout)) == MAX_PAGES
    assert f"stopped at the {MAX_PAGES}-page limit of --all" in out.stderr
    plain = petstore(tmp_path, *args)
    assert plain.returncode == 0
    assert f"{MAX_PAGES} pets from {MAX_PAGES} pages; stopped at the {MAX_PAGES}-page limit of --all" in plain.stdout
    assert "list --all" not in plain.stdout and "/more" not in plain.stdout
    for fmt in ("csv", "tsv"):
        out = petstore(tmp_path, *args, "--format", fmt)
        assert out.returncode == 0 and len(out.stdout.splitlines()) == MAX_PAGES + 1
        assert f"stopped at the {MAX_PAGES}-page limit of --all" in out.stderr
    complete = jsonl(petstore(tmp_path, "list", "--limit", "100", "--all", "--base-url", many, "--json"))[0]
    assert "truncated" not in complete and "pages" not in complete


# -- the spinner ---------------------------------------------------------------------------------


def test_no_spinner_off_a_terminal(tmp_path: Path, many: str) -> None:
    out = petstore(tmp_path, "list", "--limit", "1", "--all", "--base-url", many, "--format", "csv")
    assert out.returncode == 0 and "\x1b" not in out.stderr
    assert [line.split(":")[0] for line in out.stderr.splitlines()] == ["note"]  # the truncation, nothing else


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal")
def test_spinner_on_a_terminal_for_a_command_still_running(tmp_path: Path) -> None:
    """stderr on a pty, stdout piped: ``/sleep 1`` outlasts the spinner's delay; stdout stays clean."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "petstore_cli", "sleep", "1"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=_env(tmp_path, TERM="xterm"),
    )
    os.close(slave)
    seen = b""
    try:
        while proc.poll() is None or select.select([master], [], [], 0)[0]:
            if select.select([master], [], [], 5)[0]:
                try:
                    seen += os.read(master, 4096)
                except OSError:
                    break
        stdout = proc.stdout.read() if proc.stdout else b""
    finally:
        proc.wait(timeout=30)
        os.close(master)
    text = seen.decode("utf-8", "replace")
    assert proc.returncode == 0 and "/sleep 1" in text and any(frame in text for frame in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
    assert stdout == b""
