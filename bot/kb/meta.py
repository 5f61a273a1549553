"""Curated bilingual metadata: English titles, summaries and user phrasings per section.

One TOML file per seed document, ``seeds/meta/<document stem>.toml``, keyed by
section anchor, reviewed like code::

    source = "002_5c885a5c94776257.txt"
    [sections."问题-loss为nan-如何处理"]
    heading = "问题：Loss为NaN，如何处理？"
    title_en = "Loss becomes NaN"
    summary_en = "..."
    phrasings_zh = ["训练几步以后 loss 变成 nan"]
    phrasings_en = ["loss turns into nan after a few steps"]

Phrasings and titles become extra retrieval keys of their section; they are
never cited on their own. Documents without a file still work (cross-lingual
embedding alone); :func:`check_meta` reports what is missing or out of date.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bot.records import Section

META_DIR = "meta"


@dataclass(frozen=True)
class SectionMeta:
    anchor: str
    heading: str
    title_en: str
    summary_en: str
    phrasings_zh: tuple[str, ...] = ()
    phrasings_en: tuple[str, ...] = ()

    def keys(self) -> list[str]:
        """Texts indexed as extra retrieval keys of the section."""
        return [t for t in (self.title_en, *self.phrasings_zh, *self.phrasings_en) if t.strip()]

    def document(self) -> str:
        """What BM25 reads of the metadata, after the section's own text (bot.kb.index.section_documents)."""
        return "\n".join([self.title_en, self.summary_en, *self.phrasings_zh, *self.phrasings_en])


@dataclass(frozen=True)
class MetaProblem:
    file: str
    heading: str
    message: str
    severity: str = "error"  # "error" fails `meta check`; "info" does not

    def __str__(self) -> str:
        where = f"{self.file}: {self.heading!r}" if self.heading else self.file
        return f"{self.severity}: {where}: {self.message}"


def meta_path(seeds_dir: Path, source: str) -> Path:
    return seeds_dir / META_DIR / Path(source).with_suffix(".toml")


def read_meta_file(path: Path) -> dict[str, SectionMeta]:
    """Parse one metadata file; raises ValueError naming the file on bad TOML or fields."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid UTF-8 TOML ({exc}); fix the file or remove it") from None
    out: dict[str, SectionMeta] = {}
    for anchor, entry in (data.get("sections") or {}).items():
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: [sections.{anchor!r}] must be a table")
        try:
            out[anchor] = SectionMeta(
                anchor=anchor,
                heading=str(entry.get("heading", "")),
                title_en=str(entry.get("title_en", "")),
                summary_en=str(entry.get("summary_en", "")).strip(),
                phrasings_zh=tuple(str(p) for p in entry.get("phrasings_zh", [])),
                phrasings_en=tuple(str(p) for p in entry.get("phrasings_en", [])),
            )
        except TypeError:
            raise ValueError(f"{path}: [sections.{anchor!r}] phrasings must be lists of strings") from None
    return out


def load_meta(seeds_dir: Path, sections: Iterable[Section]) -> tuple[dict[str, SectionMeta], list[MetaProblem]]:
    """Metadata for the given sections, keyed by ``Section.key``, plus what is wrong with it."""
    by_source: dict[str, list[Section]] = {}
    for section in sections:
        by_source.setdefault(section.source, []).append(section)
    found: dict[str, SectionMeta] = {}
    problems: list[MetaProblem] = []
    for source, doc_sections in by_source.items():
        path = meta_path(seeds_dir, source)
        shown = path.relative_to(seeds_dir).as_posix() if path.is_relative_to(seeds_dir) else str(path)
        if path.is_symlink() or (path.exists() and not path.is_file()):
            # Like documents: a link could make any file on the machine "metadata" (see bot.kb.parse._walk).
            problems.append(
                MetaProblem(
                    shown,
                    "",
                    "is a symbolic link or not a regular file; skipped (copy the file into seeds/meta/ instead)",
                )
            )
            continue
        if not path.exists():
            problems.append(
                MetaProblem(
                    shown,
                    "",
                    f"no metadata for {source}; it is searched by cross-lingual embedding only",
                    severity="info",
                )
            )
            continue
        try:
            entries = read_meta_file(path)
        except ValueError as exc:
            problems.append(MetaProblem(shown, "", str(exc)))
            continue
        anchors = {s.anchor: s for s in doc_sections}
        for section in doc_sections:
            entry = entries.get(section.anchor)
            if entry is None:
                problems.append(
                    MetaProblem(
                        shown,
                        section.heading,
                        f"section (lines {section.start_line}-{section.end_line}) has no metadata; "
                        f'add [sections."{section.anchor}"]',
                    )
                )
            elif entry.heading and entry.heading != section.heading:
                problems.append(
                    MetaProblem(
                        shown,
                        entry.heading,
                        f"heading changed in {source}: now {section.heading!r}; review the entry and update it",
                    )
                )
                found[section.key] = entry
            else:
                found[section.key] = entry
        for anchor, entry in entries.items():
            if anchor not in anchors:
                problems.append(
                    MetaProblem(
                        shown,
                        entry.heading or anchor,
                        f"points to anchor {anchor!r}, which no longer exists in {source}; "
                        "rename the key to the section's new anchor or delete the entry",
                    )
                )
    return found, problems
