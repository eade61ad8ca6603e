"""``petstore config path|show|init``, the errors that point at the config, and ``petstore completion bash|zsh|fish``."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from cli_support import petstore_main

from bot_commands.commands import default_registry
from petstore_cli.completion import spec
from petstore_cli.config import toml_line
from petstore_cli.options import build_parser

ROOT = Path(__file__).resolve().parents[2]
CANARY = "sk-CANARY-config-77aa99bb"


def petstore(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    base.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    return petstore_main(*args, env={**base, **env})


# -- config -------------------------------------------------------------------------------------


def test_the_shipped_example_is_the_top_level_file() -> None:
    shipped = ROOT / "petstore_cli" / "config.example.toml"
    assert shipped.read_bytes() == (ROOT / "config.example.toml").read_bytes()


def test_path_init_and_never_overwrite(tmp_path: Path) -> None:
    default = tmp_path / "config" / "petstore" / "config.toml"
    assert petstore(tmp_path, "config", "path").stdout.strip() == str(default)
    given = tmp_path / "elsewhere.toml"
    assert petstore(tmp_path, "config", "path", "--config", str(given)).stdout.strip() == str(given)
    assert petstore(tmp_path, "config", "path", PETSTORE_CONFIG=str(given)).stdout.strip() == str(given)
    made = petstore(tmp_path, "config", "init")
    assert made.returncode == 0 and str(default) in made.stdout
    assert default.read_bytes() == (ROOT / "config.example.toml").read_bytes()
    assert stat.S_IMODE(default.stat().st_mode) == 0o600
    default.write_text("# mine\n")
    again = petstore(tmp_path, "config", "init")
    assert again.returncode == 2 and "exists; not overwritten" in again.stderr
    assert default.read_text() == "# mine\n"
    assert petstore(tmp_path, "list", "--json").returncode == 0  # the commented file is a valid config


def test_show_names_the_source_of_every_setting_and_masks_keys(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'# mine\nbase_url = "http://127.0.0.1:9/v1"\n\n[http]\ntimeout = 5\n\n[production]\napi_key = "{CANARY}"\n'
    )
    cfg.chmod(0o600)
    out = petstore(
        tmp_path,
        "config",
        "show",
        "--config",
        str(cfg),
        "--read-only",
        PETSTORE_HTTP__RETRIES="4",
        PETSTORE_API_KEY=CANARY,
    )
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split()[1:] for line in out.stdout.splitlines() if not line.startswith("#")}
    assert rows["read_only"] == ["true", "flag", "--read-only"]
    assert rows["http.retries"] == ["4", "env", "PETSTORE_HTTP__RETRIES"]
    assert rows["http.timeout"] == ["5.0", f"{cfg}:5"]
    assert rows["base_url"] == ["http://127.0.0.1:9/v1", f"{cfg}:2"]
    assert rows["production.api_key"] == ["sk-...99bb", f"{cfg}:8"]
    assert rows["api_key"][1:] == ["env", "PETSTORE_API_KEY"]
    assert rows["http.connect_timeout"] == ["5.0", "default"]
    assert CANARY not in out.stdout + out.stderr
    from petstore_cli.settings.model import Settings

    assert "ui.theme" not in rows  # tui.theme's older place: shown only when it is what is set
    assert len(rows) == sum(1 for _ in _leaves(Settings)) - 1  # every setting, none twice


def _leaves(model: type) -> list[str]:
    from pydantic import BaseModel

    out = []
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        kind = field.annotation
        out += (
            [f"{name}.{leaf}" for leaf in _leaves(kind)]
            if isinstance(kind, type) and issubclass(kind, BaseModel)
            else [name]
        )
    return out


def test_toml_line_finds_sections_and_dotted_keys() -> None:
    text = 'env = "x"\n[http]\n# timeout = 1\ntimeout = 2\n[ui]\npage_size=3\n'
    assert toml_line(text, ("env",)) == 1 and toml_line(text, ("http", "timeout")) == 4
    assert toml_line(text, ("ui", "page_size")) == 6 and toml_line("http.retries = 1\n", ("http", "retries")) == 1


def test_missing_settings_name_the_file_and_the_variable(tmp_path: Path) -> None:
    out = petstore(tmp_path, "--env", "production", "list")
    default = tmp_path / "config" / "petstore" / "config.toml"
    assert out.returncode == 2 and f"set [production] base_url in {default}" in out.stderr
    assert "PETSTORE_PRODUCTION__BASE_URL" in out.stderr and "petstore config init" in out.stderr
    out = petstore(tmp_path, "list", "--base-url", "http://pets.example.com/v1", PETSTORE_API_KEY=CANARY)
    assert out.returncode == 2 and "http.allow_insecure_http = true" in out.stderr
    assert "PETSTORE_HTTP__ALLOW_INSECURE_HTTP" in out.stderr and CANARY not in out.stderr


# -- completion ----------------------------------------------------------------------------------


def test_the_spec_comes_from_argparse_and_the_registry() -> None:
    s = spec(build_parser())
    registry = default_registry()
    assert {c.name for c in registry.commands() if c.one_shot} <= set(s.subs)
    assert not {c.name for c in registry.commands() if not c.one_shot} & set(s.subs)
    assert {"tui", "chat", "run", "serve", "completion", "config"} <= set(s.subs)
    assert s.subs["list"].aliases == ("ls",) and s.subs["list"].values == ["available", "pending", "sold"]
    assert s.flag_values["--env"] == ["sandbox", "staging", "production", "custom"]
    assert s.flag_values["--status"] == ["available", "pending", "sold"]
    assert s.subs["config"].values == ["path", "show", "init"] and s.subs["run"].files


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_script_loads_in_its_shell(tmp_path: Path, shell: str) -> None:
    out = petstore(tmp_path, "completion", shell)
    assert out.returncode == 0 and out.stderr == ""
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed here: the script was generated but not loaded")
    script = tmp_path / f"petstore.{shell}"
    script.write_text(out.stdout)
    checked = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr


BASH_DRIVER = """
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_petstore
printf '%s\\n' "${COMPREPLY[@]}"
"""


def _bash_complete(tmp_path: Path, *words: str) -> list[str]:
    script = tmp_path / "petstore.bash"
    if not script.exists():
        script.write_text(petstore(tmp_path, "completion", "bash").stdout)
    driver = tmp_path / "driver.sh"
    driver.write_text(BASH_DRIVER)
    out = subprocess.run(
        ["bash", str(driver), str(script), *words], capture_output=True, text=True, timeout=30, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completion_offers_the_expected_words(tmp_path: Path) -> None:
    assert _bash_complete(tmp_path, "petstore", "")[:5] == ["tui", "chat", "run", "bot", "serve"]
    assert _bash_complete(tmp_path, "petstore", "bot", "") == ["matrix", "irc", "slack", "xmpp"]
    assert _bash_complete(tmp_path, "petstore", "l") == ["list", "ls"]
    assert _bash_complete(tmp_path, "petstore", "ch") == ["chat"]
    assert _bash_complete(tmp_path, "petstore", "list", "") == ["available", "pending", "sold"]
    assert _bash_complete(tmp_path, "petstore", "list", "--st") == ["--status"]
    assert _bash_complete(tmp_path, "petstore", "ls", "--status", "s") == ["sold"]
    assert _bash_complete(tmp_path, "petstore", "--env", "") == ["sandbox", "staging", "production", "custom"]
    assert _bash_complete(tmp_path, "petstore", "--env", "production", "g") == ["get"]
    assert _bash_complete(tmp_path, "petstore", "get", "--format", "c") == ["csv"]
    assert _bash_complete(tmp_path, "petstore", "completion", "") == ["bash", "zsh", "fish"]
    assert _bash_complete(tmp_path, "petstore", "config", "s") == ["show"]
    assert "--keep-going" in _bash_complete(tmp_path, "petstore", "run", "--")
    assert _bash_complete(tmp_path, "petstore", "add", "--category", "") == []
