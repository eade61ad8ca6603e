"""Settings: precedence flags > environment > config file > defaults; one-line errors; secrets."""

from __future__ import annotations

import logging
import os
import stat
import traceback
from pathlib import Path
from typing import Any

import pytest

from petstore_api.errors import ConfigError
from petstore_api.masking import mask_secret
from petstore_cli.settings.load import load_settings
from petstore_cli.settings.model import Settings
from petstore_cli.settings.target import resolve_target

CANARY = "sk-CANARY-settings-0123456789"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("PETSTORE_"):
            monkeypatch.delenv(name)
    # Keep the user's real config dir out of the tests.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))


def write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_defaults_point_at_the_sandbox() -> None:
    loaded = load_settings()
    assert loaded.config_file is None
    assert loaded.settings.http.timeout == 30.0
    target = resolve_target(loaded.settings)
    assert (target.env, target.sandbox, target.base_url) == ("sandbox", True, None)


def test_a_base_url_alone_selects_the_custom_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_BASE_URL", "https://pets.example/v1")
    target = resolve_target(load_settings().settings)
    assert (target.env, target.base_url, target.sandbox) == ("custom", "https://pets.example/v1", False)


def test_precedence_flags_over_env_over_file_over_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write(
        tmp_path / "c.toml",
        'base_url = "https://file.example/v1"\n[http]\ntimeout = 12\nretries = 2\nread_timeout = 7\n',
    )
    monkeypatch.setenv("PETSTORE_HTTP__RETRIES", "5")
    monkeypatch.setenv("PETSTORE_HTTP__READ_TIMEOUT", "8")
    monkeypatch.setenv("PETSTORE_BASE_URL", "https://env.example/v1")
    loaded = load_settings(config_path=cfg, overrides={"base_url": "https://flag.example/v1"})
    s = loaded.settings
    assert s.base_url == "https://flag.example/v1"  # flag beats env and file
    assert s.http.retries == 5 and s.http.read_timeout == 8  # env beats file
    assert s.http.timeout == 12  # file beats default
    assert s.http.connect_timeout == 5.0  # default
    assert loaded.config_file == cfg


def test_config_path_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write(tmp_path / "c.toml", "read_only = true\n")
    monkeypatch.setenv("PETSTORE_CONFIG", str(cfg))
    assert load_settings().settings.read_only is True


def test_platform_config_file_is_read_when_present(tmp_path: Path) -> None:
    from petstore_cli.settings.paths import default_config_path

    path = default_config_path()
    path.parent.mkdir(parents=True)
    write(path, "[ui]\npage_size = 50\n")
    assert load_settings().settings.ui.page_size == 50


def test_named_environment_uses_its_own_url_and_key(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / "c.toml",
        f'env = "production"\n[production]\nbase_url = "https://prod.example/v1"\napi_key = "{CANARY}"\n',
    )
    target = resolve_target(load_settings(config_path=cfg).settings)
    assert target.env == "production" and target.base_url == "https://prod.example/v1"
    assert target.api_key is not None and target.api_key.get_secret_value() == CANARY


def test_named_environment_without_url_says_how_to_set_it() -> None:
    with pytest.raises(ConfigError, match=r"staging.*PETSTORE_STAGING__BASE_URL"):
        resolve_target(load_settings(overrides={"env": "staging"}).settings)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[http\n", r"c\.toml: invalid TOML: .*line 1"),
        ('[http]\ntimeout = "soon"\n', r"c\.toml: http\.timeout: .*number"),
        ("colour = 3\n", r"c\.toml: colour: unknown setting"),
        ('env = "prod"\n', r"c\.toml: env: .*'production'"),
        ("[ui]\npage_size = 101\n", r"c\.toml: ui\.page_size: .*100"),
    ],
)
def test_bad_config_file_gets_one_line_naming_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    cfg = write(tmp_path / "c.toml", text)
    with pytest.raises(ConfigError, match=expected) as info:
        load_settings(config_path=cfg)
    assert "\n" not in str(info.value)


def test_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_HTTP__TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="PETSTORE_HTTP__TIMEOUT"):
        load_settings()


def test_bad_flag_names_the_flag() -> None:
    with pytest.raises(ConfigError, match="--env"):
        load_settings(overrides={"env": "moon"})


def test_missing_explicit_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(config_path=tmp_path / "nope.toml")


def test_world_readable_config_with_key_is_tightened_with_a_warning(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", f'api_key = "{CANARY}"\n', mode=0o644)
    loaded = load_settings(config_path=cfg)
    assert loaded.warnings == [f"tightened {cfg} to 0600 (it was 0644): it holds an API key"]
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600
    assert load_settings(config_path=cfg).warnings == []


@pytest.mark.parametrize(
    ("table", "name"), [("bot.slack", "app_token"), ("bot.slack", "bot_token"), ("bot.matrix", "password")]
)
def test_world_readable_config_with_a_bot_secret_is_tightened_too(tmp_path: Path, table: str, name: str) -> None:
    cfg = write(tmp_path / "c.toml", f'[{table}]\n{name} = "{CANARY}"\n', mode=0o644)
    loaded = load_settings(config_path=cfg)
    assert loaded.warnings == [f"tightened {cfg} to 0600 (it was 0644): it holds a secret ({name})"]
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600


def test_readable_config_without_key_draws_no_warning(tmp_path: Path) -> None:
    cfg = write(tmp_path / "c.toml", "read_only = true\n", mode=0o644)
    assert load_settings(config_path=cfg).warnings == []
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o644  # nothing secret in it: left as it is


def test_key_never_shows_in_repr_str_logs_or_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("PETSTORE_API_KEY", CANARY)
    monkeypatch.setenv("PETSTORE_BASE_URL", "https://pets.example/v1")
    settings = load_settings().settings
    target = resolve_target(settings)
    texts = [repr(settings), str(settings), repr(target), str(settings.model_dump()), caplog.text]
    monkeypatch.setenv("PETSTORE_HTTP__TIMEOUT", "soon")
    with pytest.raises(ConfigError) as info:
        load_settings()
    texts.append("".join(traceback.format_exception(info.value)))
    assert all(CANARY not in text for text in texts)
    assert settings.api_key is not None and settings.api_key.get_secret_value() == CANARY


@pytest.mark.parametrize(
    ("secret", "shown"),
    [(CANARY, "sk-...6789"), ("short", "****"), ("", "(none)"), (None, "(none)")],
)
def test_mask_secret(secret: str | None, shown: str) -> None:
    assert mask_secret(secret) == shown


def test_example_config_lists_every_setting_and_loads(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[1] / "config.example.toml").read_text(encoding="utf-8")

    def check(fields: dict[str, Any], table: str) -> None:
        for name, field in fields.items():
            nested = getattr(field.annotation, "model_fields", None)
            dotted = f"{table}.{name}" if table else name
            if nested:
                assert f"[{dotted}]" in text, dotted
                check(nested, dotted)
            else:
                assert f"{name} =" in text, dotted

    check(Settings.model_fields, "")
    # Uncommented, the example is a valid config (staging/production URLs filled in); api_key_file is the other way
    # to give api_key (one of them), so it stays commented.
    kept = [line for line in text.splitlines() if not line.startswith(("##", "# api_key_file"))]
    active = "\n".join(line.removeprefix("# ") for line in kept)
    cfg = write(tmp_path / "example.toml", active)
    loaded = load_settings(config_path=cfg)
    assert loaded.settings.production.base_url


@pytest.mark.parametrize("level", ["", "production", "staging"])
def test_api_key_file_gives_the_key_of_its_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, level: str) -> None:
    prefix = f"PETSTORE_{level.upper()}__" if level else "PETSTORE_"
    monkeypatch.setenv(f"{prefix}API_KEY_FILE", str(write(tmp_path / "key", f"# {level or 'top'}\n{CANARY}\n")))
    monkeypatch.setenv(f"{prefix}BASE_URL", "https://pets.example/v1")
    loaded = load_settings(overrides={"env": level or "custom"})
    assert resolve_target(loaded.settings).api_key.get_secret_value() == CANARY
    assert loaded.warnings == []
