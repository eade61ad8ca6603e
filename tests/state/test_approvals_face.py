"""``petstore approvals`` as a person reads it, in-process through ``main(argv)`` over a real state database (SQLite,
and a PostgreSQL database of the test's own): a long ``what`` is clipped so the columns stay in line, ``show``
renders every field that holds something (``posted no``, never Python's ``False``), and ``cancel ID`` withdraws
one's own request, once, and no one else's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bot_commands.policy import local_actor
from petstore_cli.main import main
from petstore_state import open_database
from petstore_state.pending import PendingStore, PendingWrite

LONG = "Sir Reginald Fluffington the Third of Barkshire, Esq."


@pytest.fixture
def config(tmp_path: Path, state_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    path = tmp_path / "petstore.toml"
    path.write_text(f'[bot]\napprovals = ["production"]\nstate = "{state_url}"\n', encoding="utf-8")
    path.chmod(0o600)
    return path


def ask(state_url: str, tmp_path: Path, name: str, *, asker: str, where: str = "terminal") -> PendingWrite:
    """A request for approval as a terminal makes it (``TerminalApproval``), through the store (``where``: asked in
    a chat room instead, whose asker the store keeps as named)."""
    store = PendingStore(open_database(state_url, state_dir=tmp_path))
    try:
        return asyncio.run(
            store.create(
                kind="approve",
                asker=asker,
                role="operator",
                where=where,
                line=f"/add '{name}' --category 1",
                what=f"add pet '{name}' (category 1)",
                fields=(("name", name), ("categoryId", "1")),
                env="production",
                ttl=3600,
            )
        )
    finally:
        store.database.close()


def approvals(config: Path, capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, str, str]:
    code = main(["--config", str(config), "approvals", *words])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_long_what_is_clipped_and_the_columns_stay_in_line(
    config: Path, state_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    me = local_actor().id
    short, long = ask(state_url, tmp_path, "Rex", asker=me), ask(state_url, tmp_path, LONG, asker=me)
    code, out, _ = approvals(config, capsys)
    head, *rows = out.splitlines()
    assert code == 0 and [row.split()[0] for row in rows] == [long.code, short.code]
    assert "add pet 'Sir Reginald Fluffington the T…" in rows[0] and LONG not in out
    columns = {line.index("waiting") for line in rows}
    assert columns == {head.index("state")}, out
    whole = json.loads(approvals(config, capsys, "--format", "json")[1])
    assert whole[0]["what"] == f"add pet '{LONG}' (category 1)"  # the data keeps every character


def test_show_renders_the_fields_that_hold_something(
    config: Path, state_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write = ask(state_url, tmp_path, LONG, asker=local_actor().id)
    code, out, _ = approvals(config, capsys, "show", write.code)
    fields = dict(line.split(None, 1) for line in out.splitlines())
    assert code == 0 and fields["posted"] == "no" and fields["what"] == f"add pet '{LONG}' (category 1)"
    assert fields["fields"] == f"name={LONG}, categoryId=1"
    assert "False" not in out and not {"decided_by", "decided", "reason", "result"} & set(fields)
    assert all(line.split(None, 1)[1:] for line in out.splitlines())  # no label without a value
    record = json.loads(approvals(config, capsys, "show", write.code, "--format", "json")[1])[0]
    assert record["posted"] is False and record["decided_by"] == ""  # JSON keeps every field, as it is


def test_cancel_withdraws_ones_own_request_once_and_no_one_elses(
    config: Path, state_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = ask(state_url, tmp_path, "Rex", asker=local_actor().id)
    theirs = ask(state_url, tmp_path, "Bo", asker="@bob:example.org", where="matrix:!ops:example.org")
    code, out, err = approvals(config, capsys, "cancel", mine.code.lower())
    assert (code, err) == (0, "")
    assert out == f"Cancelled: add pet 'Rex' (category 1) (code {mine.code}); nothing was sent.\n"
    again = approvals(config, capsys, "cancel", mine.code)
    assert (
        again[0] == 1
        and again[2] == f"petstore approvals: error: request {mine.code} is already cancelled: nothing to cancel\n"
    )
    other = approvals(config, capsys, "cancel", theirs.code)
    assert other[0] == 1 and f"request {theirs.code} was asked for by @bob:example.org: only its asker" in other[2]
    missing = approvals(config, capsys, "cancel", "NOPE22")
    assert missing[0] == 1 and "no request for approval 'NOPE22'" in missing[2]
    states = {r["id"]: r["state"] for r in json.loads(approvals(config, capsys, "--format", "json")[1])}
    assert states == {mine.code: "cancelled", theirs.code: "waiting"}
    assert approvals(config, capsys, "cancel")[0] == 2
