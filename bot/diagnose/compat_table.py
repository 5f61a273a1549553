"""The compatibility table: its rows as read from ``compat.toml`` (the shipped file and a company's own), and the
version arithmetic every check shares.

Each row keeps the page it was read from (:class:`Source`), so a finding can cite it; a company adds rows for its own
images and wheels in a second file, read first.

    >>> table = table_from_toml('[[driver]]\\ncuda = "10.2"\\nlinux_min = "440.33"\\nsource = "https://x"\\n')
    >>> [(r.kind, r.get("linux_min"), r.source.url) for r in table.of("driver")]
    [('driver', '440.33', 'https://x')]
    >>> vtuple("450.80.02"), in_range((11, 2), "11.0-11.8")
    ((450, 80, 2), True)
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

SHIPPED_TABLE = Path(__file__).resolve().parents[1] / "data" / "compat.toml"
COMPANY_TABLE = "compat.toml"  # a company's own rows, in the knowledge-base folder (seeds/compat.toml)

KINDS = ("driver", "gpu", "cuda_arch", "cudnn", "wheel", "wheel_note", "message", "install")


@dataclass(frozen=True)
class Source:
    """A table row a finding rests on: its kind and key, the official page, the copy it was read from, the date."""

    kind: str
    key: str
    url: str
    via: str = ""
    read: str = ""
    note: str = ""


@dataclass(frozen=True)
class Row:
    """One table row: its kind, its fields as read (strings or lists), and where it came from."""

    kind: str
    data: Mapping[str, object]
    source: Source

    def get(self, key: str) -> str:
        value = self.data.get(key, "")
        return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class CompatTable:
    rows: tuple[Row, ...]

    def of(self, kind: str) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.kind == kind)


# --- the table ---------------------------------------------------------------------------------------------------

_KEY_FIELD = {
    "driver": "cuda",
    "gpu": "model",
    "cuda_arch": "cuda",
    "cudnn": "cudnn",
    "wheel": "version",
    "wheel_note": "package",
    "message": "key",
    "install": "package",
}


def table_from_toml(text: str, *, origin: str = "compat.toml") -> CompatTable:
    """Rows of every known kind; a row without ``source`` is refused with the file and the fix named."""
    data = tomllib.loads(text)
    rows: list[Row] = []
    for kind in KINDS:
        for i, raw in enumerate(data.get(kind, ())):
            url = raw.get("source", "")
            if not url:
                raise ValueError(
                    f'{origin}: [[{kind}]] row {i + 1} has no source. Add source = "<URL of the page read>".'
                )
            key = str(raw.get(_KEY_FIELD[kind], ""))
            if kind == "wheel":
                key = f"{raw.get('package', '')}=={key} {raw.get('variant', '')} {raw.get('platform', '')}".strip()
            rows.append(
                Row(
                    kind,
                    MappingProxyType(dict(raw)),
                    Source(kind, key, url, raw.get("via", ""), str(raw.get("read", "")), raw.get("note", "")),
                )
            )
    return CompatTable(tuple(rows))


def load_table(paths: Iterable[Path]) -> CompatTable:
    """Rows of every file that exists, the later files' rows first (a company's seeds/compat.toml wins)."""
    tables = [table_from_toml(p.read_text(encoding="utf-8"), origin=str(p)) for p in paths if p.exists()]
    rows: list[Row] = []
    for t in reversed(tables):
        rows.extend(t.rows)
    return CompatTable(tuple(rows))


def table_for(seeds_dir: Path | None) -> CompatTable:
    """The shipped table with the company's rows from ``seeds_dir/compat.toml`` first (read again when a file
    changes)."""
    paths = [SHIPPED_TABLE] + ([Path(seeds_dir) / COMPANY_TABLE] if seeds_dir is not None else [])
    stamps = tuple((str(p), p.stat().st_mtime_ns if p.exists() else 0) for p in paths)
    return _cached_table(stamps)


@lru_cache(maxsize=4)
def _cached_table(stamps: tuple[tuple[str, int], ...]) -> CompatTable:
    return load_table([Path(p) for p, _ in stamps])


# --- versions ----------------------------------------------------------------------------------------------------


def vtuple(version: str) -> tuple[int, ...]:
    """'450.80.02' -> (450, 80, 2); '11.2 update 1' -> (11, 2); non-numbers end the tuple."""
    out: list[int] = []
    for part in re.split(r"[.\s]", version.strip()):
        if not part.isdigit():
            break
        out.append(int(part))
    return tuple(out)


def major_minor(version: str) -> tuple[int, ...]:
    return vtuple(version)[:2]


def in_range(cuda: tuple[int, ...], spec: str) -> bool:
    """'10.0-10.2' or '11.0' or '12.x' contains cuda (major, minor)."""
    spec = spec.strip()
    if spec.endswith(".x"):
        return bool(cuda) and cuda[0] == int(spec[:-2])
    lo, _, hi = spec.partition("-")
    lo_t, hi_t = major_minor(lo), major_minor(hi or lo)
    return len(cuda) >= 2 and lo_t <= cuda[:2] <= hi_t
