"""``python -c CODE`` in a fresh interpreter at the repository root: what a start-up imports, on its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_run(code: str, *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``code``; raises when it fails (its stderr in the error)."""
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, env=env)
