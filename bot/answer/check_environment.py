"""``python -m bot check-env FILE`` and ``python -m bot eval-env FILE…``: the environment diagnosis in a terminal.

>>> import tempfile, pathlib
>>> paste = pathlib.Path(tempfile.mkdtemp()) / "env.txt"
>>> _ = paste.write_text("| NVIDIA-SMI 418.67  Driver Version: 418.67  CUDA Version: 10.1 |\\npaddle with cuda: 10.2")
>>> print(check_file(paste, seeds_dir=None, language="en").splitlines()[0])
Read: driver 418.67, cuda_driver_api 10.1, build_cuda 10.2
"""

from __future__ import annotations

from pathlib import Path

from bot.answer.environment_text import describe
from bot.diagnose.compat import check, table_for
from bot.diagnose.environment import read_environment
from bot.diagnose.evaluate_environments import format_figures, read_batch, score
from bot.kb.domain import load_domain


def check_file(path: Path, *, seeds_dir: Path | None, language: str = "en") -> str:
    """What the paste in ``path`` shows, and the diagnosis in ``language`` (the shipped table, then the company's
    ``seeds_dir/compat.toml``)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    env = read_environment(text, load_domain(seeds_dir).environment if seeds_dir is not None else None)
    diagnosis = check(env, table_for(seeds_dir))
    # The values read; the user's own words for them are the reply's to quote, not a field of this line.
    known = {k: v for k, v in env.as_dict().items() if k != "typed"}
    read = ", ".join(f"{k} {_plain(v)}" for k, v in known.items()) if known else "nothing about versions"
    said = describe(diagnosis, language) or (
        "No GPU environment found in the file." if language != "zh" else "文件中没有找到 GPU 环境信息。"
    )
    return f"Read: {read}\nStatus: {diagnosis.status}\n\n{said}"


def evaluate_files(paths: list[Path], *, seeds_dir: Path | None, cases: bool = False) -> str:
    """The figures of each labelled batch, apart (never pooled: a held-out batch stays its own figure)."""
    table = table_for(seeds_dir)
    parts = []
    for path in paths:
        parts.append(f"== {path}\n{format_figures(score(read_batch(path), table, describe), cases=cases)}")
    return "\n\n".join(parts)


def _plain(value: object) -> str:
    if isinstance(value, list):
        return "; ".join(_plain(v) for v in value)
    if isinstance(value, dict):
        return " ".join(str(v) for v in value.values() if v)
    return str(value)
