"""``petstore bot``'s options and settings: bad or missing settings end with one line naming the key, exit 2, nothing
started; where the audit goes; ``--metrics-port``."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

import petstore_bot.settings
from petstore_bot.settings import BotSettings
from petstore_bot.transport import FACTORIES
from petstore_cli.bot import compose_bot
from petstore_cli.main import main
from petstore_cli.settings.load import load_settings


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
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(capsys)
    expected = tmp_path / "xdg_config_home" / "petstore" / "config.toml"
    assert (code, err) == (
        2,
        f"petstore: [bot.matrix] homeserver is not set: set it in {expected} or PETSTORE_BOT__MATRIX__HOMESERVER\n",
    )


def test_neither_password_nor_token(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "bot.toml"
    cfg.write_text('[bot.matrix]\nhomeserver = "http://127.0.0.1:1"\nuser_id = "@bot:test"\n', encoding="utf-8")
    code, err = run(capsys, "--config", str(cfg))
    assert code == 2 and err.startswith("petstore: [bot.matrix] needs one of password or access_token")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('[bot]\nrate_limit = "fast"', "bot.rate_limit: 'fast' is not a rate: use COUNT/PERIOD such as 10/10s"),
        ('[bot]\ndefault_role = "admin"', "bot.default_role: Input should be 'none', 'viewer' or 'operator'"),
        ('[bot.matrix]\nuser_id = "petbot"', "bot.matrix.user_id: must be a full Matrix user id"),
        ('[bot.matrix]\nhomeserver = "matrix.example.org"', "bot.matrix.homeserver: must start with https://"),
        ('[bot]\nprefix = "b "', "bot.prefix: must be punctuation"),
        ('[bot.roles]\nowners = ["@a:b"]', "bot.roles.owners: unknown setting"),
        ('[bot.rooms."#ops:example.org"]\noperators = []', "bot.rooms: '#ops:example.org' is not a room id"),
        ('[bot.rooms."!r:x"]\npower_levels = "maybe"', "bot.rooms.!r:x.power_levels: Input should be a valid boolean"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, expected: str
) -> None:
    cfg = tmp_path / "bot.toml"
    cfg.write_text(line + "\n", encoding="utf-8")
    code, err = run(capsys, "--config", str(cfg))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"petstore: invalid setting {cfg}: {expected}"), err


def test_the_matrix_password_from_the_environment_is_never_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PETSTORE_BOT__MATRIX__PASSWORD", "hunter2-canary-secret")
    monkeypatch.setenv("PETSTORE_BOT__MATRIX__ACCESS_TOKEN", "token-canary-secret")
    code, err = run(capsys, "--base-url", "http://127.0.0.1:9/v1")
    assert code == 2 and "canary" not in err


def test_slack_without_a_signing_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bot", "slack"])
    err = capsys.readouterr().err
    expected = tmp_path / "xdg_config_home" / "petstore" / "config.toml"
    assert (code, err) == (
        2,
        f"petstore: [bot.slack] signing_secret is not set: set it in {expected} or "
        "PETSTORE_BOT__SLACK__SIGNING_SECRET\n",
    )


def test_mattermost_without_its_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PETSTORE_BOT__MATTERMOST__TOKEN", "tok-canary")
    code = main(["bot", "slack", "--mattermost"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("petstore: [bot.mattermost] url is not set") and "canary" not in err


@pytest.mark.slow
def test_petstore_bot_slack_serves_a_signed_command_and_ends_with_0_on_sigterm(tmp_path: Path) -> None:
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    import httpx
    from bot.slack_support import SECRET, sign

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "c"),
        XDG_DATA_HOME=str(tmp_path / "d"),
        PETSTORE_BOT__SLACK__SIGNING_SECRET=SECRET,
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "petstore_cli", "bot", "slack", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        body = b"command=%2Fpets&text=whoami&user_id=U1&team_id=T1&channel_id=C1&response_url=https%3A%2F%2Fx"
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.post(f"http://127.0.0.1:{port}/slack/commands", content=body, headers=sign(body))
                break
            except httpx.ConnectError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.05)
        assert answer.status_code == 200 and "slack:T1/U1" in answer.json()["blocks"][0]["text"]["text"]
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert SECRET not in out + err and "Traceback" not in err
    audit = tmp_path / "d" / "petstore" / "audit.ndjson"
    assert audit.exists()  # the audit log is on by default for bots (opened at start)


async def test_the_bot_audit_log_wins_over_the_terminal_one_and_the_flag_over_both(tmp_path: Path) -> None:
    config = tmp_path / "petstore.toml"
    config.write_text(
        f'[sandbox]\ndata_dir = "{tmp_path / "sandbox"}"\n[bot]\naudit_log = "{tmp_path / "bot-audit.ndjson"}"\n'
        f'[audit]\npath = "{tmp_path / "terminal-audit.ndjson"}"\n',
        encoding="utf-8",
    )
    settings = load_settings(config_path=config).settings
    for flag, expected in ((None, tmp_path / "bot-audit.ndjson"), (tmp_path / "flag.ndjson", tmp_path / "flag.ndjson")):
        composition = compose_bot(settings, sandbox_reset=True, audit_flag=flag)
        try:
            assert composition.audit is not None and composition.audit.path == expected
        finally:
            await composition.aclose()


@pytest.mark.parametrize("face", [["matrix"], ["slack"]])
def test_the_flag_takes_a_port_and_is_off_by_default(face: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from petstore_cli.options import parse

    assert parse(["bot", *face]).metrics_port is None
    assert parse(["bot", *face, "--metrics-port", "9464"]).metrics_port == 9464
    with pytest.raises(SystemExit):
        main(["bot", *face, "--metrics-port", "99999"])
    assert "must be a port number from 1 to 65535" in capsys.readouterr().err


def test_the_bot_without_a_platform_and_no_section_says_what_to_add(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bot"]) == 2
    assert capsys.readouterr().err == (
        "petstore: no chat platform is configured: add a [bot.<platform>] section, e.g. [bot.matrix]\n"
    )


def test_the_bot_without_a_platform_runs_each_section_the_config_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """[bot.matrix] set: ``petstore bot`` runs Matrix, whose factory names what it lacks."""
    cfg = tmp_path / "bot.toml"
    cfg.write_text('[bot.matrix]\nhomeserver = "http://127.0.0.1:1"\n', encoding="utf-8")
    assert main(["--config", str(cfg), "bot"]) == 2
    assert capsys.readouterr().err.startswith("petstore: [bot.matrix] user_id is not set")


class TeamsSettings(BaseModel):
    """The Teams face: a bot in a team's channels ([bot.teams] in the config).

    ``petstore bot teams`` answers !commands in the team's channels."""

    model_config = ConfigDict(extra="forbid")

    tenant: str | None = None
    """The team's tenant."""


def test_a_platform_in_the_registry_is_a_subcommand_with_its_sections_help_and_completion(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new platform is its module, its settings section and its registry line: ``petstore bot <name>``, its help
    (the section's docstring) and the shell completion follow, with nothing added to petstore_cli."""

    class WithTeams(BotSettings):
        teams: TeamsSettings = TeamsSettings()

    monkeypatch.setattr(petstore_bot.settings, "BotSettings", WithTeams)
    monkeypatch.setitem(FACTORIES, "teams", "petstore_bot.teams")  # named only: no parser imports a platform
    with pytest.raises(SystemExit) as ended:
        main(["bot", "--help"])
    listed = " ".join(capsys.readouterr().out.split())
    assert ended.value.code == 0
    assert "teams The Teams face: a bot in a team's channels ([bot.teams] in the config)" in listed
    assert "xmpp The XMPP face" in listed
    with pytest.raises(SystemExit) as ended:
        main(["bot", "teams", "--help"])
    out = capsys.readouterr().out
    assert ended.value.code == 0 and "petstore bot teams answers !commands in the team's channels." in out
    assert "--metrics-port" in out and "--config" in out and "--mattermost" not in out
    assert main(["completion", "bash"]) == 0
    assert "bot) opts='--help --metrics-port'; args='matrix irc slack xmpp teams';" in capsys.readouterr().out
    assert main(["completion", "fish"]) == 0
    assert "__fish_seen_subcommand_from bot' -a 'matrix irc slack xmpp teams'" in capsys.readouterr().out
