"""Record the chat and shell screenshots in docs/images/ from real runs on a terminal (not a test).

Run: ``.venv/bin/python tests/faces/make_screenshots.py`` from the repository root (needs tmux).

Each picture is a real ``petstore`` process on a pseudo-terminal: tmux runs it at a fixed size on a server of its
own, the keys are sent as a person types them, and the screen is captured with its colours
(``capture-pane -e``) once the expected text is on it. Rich turns the captured screen into an SVG
(``Text.from_ansi``, ``Console.save_svg``). A fresh sandbox in a temporary directory, reset first, so the pictures
come out the same each time (the masked key aside).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "images"
PETSTORE = Path(sys.executable).with_name("petstore")
SOCKET = f"petstore-shots-{os.getpid()}"  # a tmux server of our own, killed at the end


@dataclass(frozen=True)
class Step:
    keys: Sequence[str]  # tmux send-keys arguments: literal text, or key names such as Enter
    wait_for: str  # on the screen once this step is done
    prompt: str | None = None  # and then the last line of the screen is this prompt again (a shell's)


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], check=True, capture_output=True, text=True).stdout


def screen(*, colours: bool = False) -> str:
    return tmux("capture-pane", "-p", "-t", "shot", *(["-e"] if colours else []))


def wait_for(text: str, *, prompt: str | None = None, deadline: float = 20.0) -> None:
    end = time.monotonic() + deadline
    while not shows(screen(), text, prompt):
        if time.monotonic() > end:
            raise SystemExit(f"{text!r} never came on the screen:\n{screen()}")
        time.sleep(0.05)  # polling a screen, not a synchronisation


def shows(shown: str, text: str, prompt: str | None) -> bool:
    lines = [line for line in shown.splitlines() if line.strip()]
    return text in shown and (prompt is None or (bool(lines) and lines[-1].rstrip() == prompt))


def record(name: str, command: str, steps: Sequence[Step], *, size: tuple[int, int], title: str) -> None:
    width, height = size
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as home:
        env = {
            "HOME": home,
            "XDG_DATA_HOME": f"{home}/data",
            "XDG_CONFIG_HOME": f"{home}/config",
            "XDG_CACHE_HOME": f"{home}/cache",
            "PATH": f"{PETSTORE.parent}:/usr/bin:/bin",
            "TERM": "xterm-256color",
            "PS1": "$ ",
        }
        env_args = [f"{key}={value}" for key, value in env.items()]
        shell = f"env -i {shlex.join(env_args)} {command}"
        tmux("new-session", "-d", "-s", "shot", "-x", str(width), "-y", str(height), shell)
        try:
            for step in steps:
                if step.keys:
                    tmux("send-keys", "-t", "shot", *step.keys)
                wait_for(step.wait_for, prompt=step.prompt)
            time.sleep(0.3)  # the last frame: prompt_toolkit redraws its toolbar just after the output
            captured = screen(colours=True)
        finally:
            tmux("kill-server")
    console = Console(record=True, width=width, file=open(os.devnull, "w"), force_terminal=True, color_system="256")
    for line in captured.rstrip("\n").split("\n"):
        console.print(Text.from_ansi(line), soft_wrap=True)
    console.save_svg(str(IMAGES / f"{name}.svg"), title=title)
    print(f"docs/images/{name}.svg")


def chat() -> None:
    record(
        "chat",
        "petstore --sandbox-reset chat",
        [
            Step([], "sandbox>"),
            Step(["/list sold --limit 2", "Enter"], "2 pets; more on the next page"),
            Step(['/add "Biscuit the Beagle" --category 2 --status available', "Enter"], "Added pet 13"),
            Step(["/get "], "a pet id seen in this session"),
        ],
        size=(92, 22),
        title="petstore chat",
    )


def shell() -> None:
    record(
        "shell",
        "bash --norc --noprofile",
        [
            Step([], "$", "$"),
            Step(["petstore --sandbox-reset list sold --limit 3", "Enter"], "3 pets; more", "$"),
            Step(["petstore list available --format csv", "Enter"], "12,Bubbles", "$"),
            Step(["petstore get 7", "Enter"], "categoryId  3", "$"),
            Step(["petstore add Rex --category x; echo exit code $?", "Enter"], "exit code 2", "$"),
        ],
        size=(100, 31),
        title="petstore list, get, add: subcommands in a shell",
    )


if __name__ == "__main__":
    chat()
    shell()
