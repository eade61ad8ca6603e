"""The shell faces of issue 17: ``petstore list`` one-shot, and ``petstore chat`` start to a ready prompt.

    .venv/bin/python bench/bench_shell.py [--reps 30]

Floors, measured in the same run, round-robin with the product:
- ``petstore list`` (a registry subcommand) against ``petstore serve``, next to ``petstore run -c /list``
  and the floor of bench_cli.py, ``python -c 'import httpx; httpx.get(URL, headers=auth)'`` doing the
  same request (target: ``petstore list`` <= 1.4x that floor);
- ``petstore chat`` on a pseudo-terminal, from spawn to the prompt ready for keys (prompt_toolkit has
  entered its application: it switches bracketed paste on, ``ESC [?2004h``), against a bare
  prompt_toolkit ``PromptSession().prompt()`` timed the same way (target: <= 1.5x). Cursor position
  requests are answered as a terminal would; Ctrl-D ends each run (not timed).
Each figure is the median wall time of fresh processes.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (
    API_KEY,
    PETSTORE,
    PY,
    clean_env,
    deadline,
    interleaved,
    median_ms,
    petstore_server,
    report,
    scratch,
    spread,
    verdict,
)

READY = b"\x1b[?2004h"
BARE_PROMPT = "from prompt_toolkit import PromptSession; PromptSession().prompt('> ')"


def to_prompt(argv: Sequence[str], *, env: dict[str, str], timeout: float = 30.0) -> float:
    """Seconds from spawning ``argv`` on a pty (100 x 30, TERM=xterm) to its prompt being ready."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env={**env, "TERM": "xterm"}, close_fds=True)
    os.close(slave)
    seen = b""
    try:
        while READY not in seen:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                raise RuntimeError(f"no prompt from {argv}: {seen[-300:]!r}")
            chunk = os.read(master, 65536)
            if b"\x1b[6n" in chunk:
                os.write(master, b"\x1b[1;1R")
            seen += chunk
        elapsed = time.perf_counter() - start
        os.write(master, b"\x04")
        _drain(master, proc, timeout)
        return elapsed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def _drain(master: int, proc: subprocess.Popen[bytes], timeout: float) -> None:
    end = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < end:
        if select.select([master], [], [], 0.05)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if b"\x1b[6n" in chunk:
                os.write(master, b"\x1b[1;1R")
    proc.wait(timeout=timeout)


def prompts(cases: dict[str, Sequence[str]], *, reps: int, env: dict[str, str]) -> dict[str, list[float]]:
    """Round-robin ``to_prompt`` of each case (one warm-up each, not counted)."""
    for argv in cases.values():
        to_prompt(argv, env=env)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(reps):
        for name, argv in cases.items():
            times[name].append(to_prompt(argv, env=env))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=30, help="runs of each command (default 30)")
    parser.add_argument("--budget", type=float, default=400, help="hard time limit in seconds")
    args = parser.parse_args()
    with deadline(args.budget), scratch() as tmp:
        env = clean_env(tmp, PETSTORE_API_KEY=API_KEY)
        with petstore_server(tmp / "pets.db") as url:
            floor = (
                f"import httpx; r = httpx.get({url + '/pets'!r}, headers={{'Authorization': 'Bearer {API_KEY}'}});"
                " r.raise_for_status()"
            )
            one_shot = interleaved(
                {
                    "petstore list": [PETSTORE, "list", "--base-url", url],
                    "petstore run -c /list": [PETSTORE, "run", "-c", "/list", "--base-url", url],
                    "httpx floor": [PY, "-c", floor],
                },
                reps=args.reps,
                env=env,
            )
            chat = prompts(
                {
                    "petstore chat (serve)": [PETSTORE, "chat", "--base-url", url],
                    "petstore chat (sandbox)": [PETSTORE, "chat"],
                    "bare prompt_toolkit prompt": [PY, "-c", BARE_PROMPT],
                },
                reps=args.reps,
                env=env,
            )
    lst, run, h = (median_ms(one_shot[k]) for k in ("petstore list", "petstore run -c /list", "httpx floor"))
    served, boxed, bare = (
        median_ms(chat[k]) for k in ("petstore chat (serve)", "petstore chat (sandbox)", "bare prompt_toolkit prompt")
    )
    rows = [
        {
            "what": "petstore list",
            "median_ms": round(lst, 1),
            "min..p90_ms": spread(one_shot["petstore list"]),
            "floor": "python -c 'import httpx; httpx.get(...)'",
            "floor_ms": round(h, 1),
            "ratio": round(lst / h, 2),
            "target": "<= 1.4x",
            "verdict": verdict(lst / h <= 1.4),
        },
        {
            "what": "petstore run -c /list",
            "median_ms": round(run, 1),
            "min..p90_ms": spread(one_shot["petstore run -c /list"]),
            "floor": "(same)",
            "floor_ms": round(h, 1),
            "ratio": round(run / h, 2),
            "target": "(reference)",
            "verdict": "-",
        },
        {
            "what": "petstore chat --base-url, to ready prompt",
            "median_ms": round(served, 1),
            "min..p90_ms": spread(chat["petstore chat (serve)"]),
            "floor": "bare prompt_toolkit prompt",
            "floor_ms": round(bare, 1),
            "ratio": round(served / bare, 2),
            "target": "<= 1.5x",
            "verdict": verdict(served / bare <= 1.5),
        },
        {
            "what": "petstore chat (sandbox), to ready prompt",
            "median_ms": round(boxed, 1),
            "min..p90_ms": spread(chat["petstore chat (sandbox)"]),
            "floor": "(same)",
            "floor_ms": round(bare, 1),
            "ratio": round(boxed / bare, 2),
            "target": "(reference)",
            "verdict": "-",
        },
    ]
    report("shell", rows)
    print(
        f"\npetstore list: {lst:.1f} ms vs httpx one-liner {h:.1f} ms = {lst / h:.2f}x  target <= 1.4x  "
        f"{verdict(lst / h <= 1.4)}   (run -c /list {run:.1f} ms = {run / h:.2f}x)"
    )
    print(
        f"petstore chat to ready prompt: {served:.1f} ms vs bare prompt_toolkit {bare:.1f} ms = "
        f"{served / bare:.2f}x  target <= 1.5x  {verdict(served / bare <= 1.5)}   (sandbox {boxed:.1f} ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
