"""Where the benchmark's child processes run: the repository, and an environment without the caller's ``BOT_*``.

Shared by :mod:`bench.run` and :mod:`bench.cold_start` (each is also a command of its own), so neither imports the
other.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child_env(extra: dict | None = None) -> dict:
    """The current environment minus every ``BOT_*`` setting, with the repository on ``PYTHONPATH``, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update(extra or {})
    return env
