"""``petstore bot matrix``: bad or missing settings end with one line naming the key, exit 2, nothing started."""

from __future__ import annotations

from pathlib import Path

import pytest

from petstore_cli.main import main


@pytest.fixture(autouse=True)
def _clean_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("PETSTORE_CONFIG", "PETSTORE_BASE_URL", "PETSTORE_ENV", "PETSTORE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["bot", "matrix", *args])
    captured = capsys.readouterr()
    assert captured.out == ""
    return code, captured.err


def test_no_homeserver_names_the_setting_the_file_and_the_variable(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run(capsys)
    expected = tmp_path / "xdg_config_home" / "petstore" / "config.toml"
    assert (code, err) == (2, f"petstore: [bot.matrix] homeserver is not set: set it in {expected} or "
                              "PETSTORE_BOT__MATRIX__HOMESERVER\n")


def test_neither_password_nor_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "bot.toml"
    cfg.write_text('[bot.matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:test"\n', encoding="utf-8")
    code, err = run(capsys, "--config", str(cfg))
    assert code == 2 and err.startswith("petstore: [bot.matrix] needs one of password or access_token")
    assert err.count("\n") == 1


@pytest.mark.parametrize(("line", "expected"), [
    ('[bot]\nrate_limit = "fast"', "bot.rate_limit: 'fast' is not a rate: use COUNT/PERIOD such as 10/10s"),
    ('[bot]\ndefault_role = "admin"', "bot.default_role: Input should be 'none', 'viewer' or 'operator'"),
    ('[bot.matrix]\nuser_id = "petbot"', "bot.matrix.user_id: must be a full Matrix user id"),
    ('[bot.matrix]\nhomeserver = "matrix.example.org"', "bot.matrix.homeserver: must start with https://"),
    ('[bot]\nprefix = "b "', "bot.prefix: must be punctuation"),
    ('[bot.roles]\nadmins = ["@a:b"]', "bot.roles.admins: unknown setting"),
])
def test_a_bad_setting_is_one_line_naming_the_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, expected: str) -> None:
    cfg = tmp_path / "bot.toml"
    cfg.write_text(line + "\n", encoding="utf-8")
    code, err = run(capsys, "--config", str(cfg))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"petstore: invalid setting {cfg}: {expected}"), err


def test_the_matrix_password_from_the_environment_is_never_shown(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_BOT__MATRIX__PASSWORD", "hunter2-canary-secret")
    monkeypatch.setenv("PETSTORE_BOT__MATRIX__ACCESS_TOKEN", "token-canary-secret")
    code, err = run(capsys, "--base-url", "http://127.0.0.1:9/v1")
    assert code == 2 and "canary" not in err
