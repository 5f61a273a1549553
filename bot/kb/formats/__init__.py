"""Documents a company keeps as HTML, Word, PDF or reStructuredText -> Markdown the parser reads.

One converter per format, each a module of this package with the same small interface::

    VERSION: int                                   # bumped when its output changes (the cache key holds it)
    def convert(data: bytes, max_bytes: int) -> Converted   # raises Unreadable with the reason

:data:`CONVERTERS` (suffix -> module) is the one place a format is added; ``.md``/``.txt`` are read as they are
(:mod:`bot.kb.parse`). A converted document is cited under its own file name, with where in it
(:attr:`Converted.page_starts`: a PDF's pages; :attr:`Converted.anchors`: the ids an HTML page gives its
headings), and converted once: :class:`ConversionCache` keeps the result by content hash next to the index.

What is not read: images (a scan, a figure, a screenshot: OCR is not done), and a page's navigation chrome.
Modules are imported only when a document of their format is read: a knowledge base of Markdown loads none.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import importlib
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from bot.records import Section

# suffix -> converter module (bot.kb.formats.<name>); the registry of formats.
CONVERTERS = {".html": "html", ".htm": "html", ".docx": "docx", ".pdf": "pdf", ".rst": "rst"}
CONVERTED_SUFFIXES = tuple(CONVERTERS)
# Formats whose file is not its text (a PDF's fonts and images, a Word file's zip of XML and pictures): the file is
# capped by its own size (Settings.max_seed_file_bytes), the text it converts to by the shared per-document cap.
PACKED_SUFFIXES = (".pdf", ".docx")
CACHE_DIR = "converted"  # index/converted/: conversions by content hash, beside the index's generations


class Unreadable(ValueError):
    """A document no converter can read; the message is the reason, said to the operator (no file name)."""


@dataclass(frozen=True)
class Converted:
    """A document as Markdown, and where its lines are in the original."""

    text: str
    page_starts: tuple[int, ...] = ()  # 1-based line of the text at which page 1, 2, … begins (a PDF); () unpaged
    anchors: dict[int, str] = field(default_factory=dict)  # 1-based line of a heading -> the id the original gives it

    def page(self, line: int) -> int:
        """The page a line of the text is on (0: not a paged document).

        >>> Converted("a\\nb\\nc", page_starts=(1, 3)).page(2), Converted("a").page(1)
        (1, 0)
        """
        return bisect.bisect_right(self.page_starts, line) if self.page_starts else 0


def is_converted(name: str | Path) -> bool:
    """Whether a document is read through a converter (cited by its file name and place, not by lines).

    >>> is_converted("faq/Guide.PDF"), is_converted("faq.md")
    (True, False)
    """
    return Path(name).suffix.lower() in CONVERTERS


def converter(suffix: str):
    """The converter module for a suffix (imported on first use)."""
    return importlib.import_module(f"{__name__}.{CONVERTERS[suffix.lower()]}")


def place(sections: list[Section], converted: Converted) -> list[Section]:
    """Each section with its place in the original (:attr:`Section.locator`): ``#page=N`` in a PDF (the fragment a
    PDF viewer opens at), ``#id`` of an HTML page's own heading id; and that id as its anchor when it is unique."""
    used = {s.anchor for s in sections}
    out = []
    for section in sections:
        page = converted.page(section.start_line)
        own = converted.anchors.get(section.start_line, "")
        if page:
            section = dataclasses.replace(section, locator=f"#page={page}")
        elif own:
            anchor = section.anchor
            if own == anchor or own not in used:
                used.add(own)
                anchor = own
            section = dataclasses.replace(section, anchor=anchor, locator=f"#{own}")
        out.append(section)
    return out


class ConversionCache:
    """Conversions by content hash in ``folder`` (None: convert every time, keep nothing), with what this run did.

    A failure is kept too (a scanned 5 MB PDF is not read again by every build); :meth:`prune` drops what the last
    build did not ask for.
    """

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.converted = 0  # documents converted in this run
        self.reused = 0  # taken from the cache
        self.seconds = 0.0  # spent converting
        self._used: set[str] = set()

    def get(self, data: bytes, suffix: str, max_bytes: int) -> Converted:
        module = converter(suffix)
        key = f"{hashlib.sha256(data).hexdigest()}-{module.__name__.rsplit('.', 1)[1]}{module.VERSION}-{max_bytes}"
        self._used.add(key)
        path = self.folder / f"{key}.json" if self.folder is not None else None
        if path is not None and path.is_file():
            try:
                row = json.loads(path.read_text(encoding="utf-8"))
                self.reused += 1
                return _from_row(row)
            except (OSError, ValueError, KeyError, TypeError):
                pass  # a damaged entry: convert again
        started = time.perf_counter()
        try:
            converted = module.convert(data, max_bytes)
            row = {"text": converted.text, "pages": list(converted.page_starts), "anchors": converted.anchors}
        except Unreadable as exc:
            row = {"error": str(exc)}
        self.seconds += time.perf_counter() - started
        self.converted += 1
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f".tmp-{uuid.uuid4().hex[:8]}")
                tmp.write_text(json.dumps(row, ensure_ascii=False), encoding="utf-8")
                os.replace(tmp, path)
            except OSError:
                pass  # a read-only index folder: convert again next time
        return _from_row(row)

    def prune(self) -> None:
        """Remove the conversions this run did not use (documents changed or removed since)."""
        if self.folder is None or not self.folder.is_dir():
            return
        for path in self.folder.iterdir():
            if path.suffix == ".json" and path.stem not in self._used or path.name.startswith(".tmp-"):
                path.unlink(missing_ok=True)

    def summary(self) -> str:
        """One line for the build's progress, or "" when no document needed a converter."""
        if not self.converted and not self.reused:
            return ""
        return f"converted {self.converted} document(s) in {self.seconds:.1f}s, {self.reused} from the cache"


def _from_row(row: dict) -> Converted:
    if "error" in row:
        raise Unreadable(row["error"])
    return Converted(row["text"], tuple(row["pages"]), {int(k): v for k, v in row["anchors"].items()})


def read_document(path: Path, max_bytes: int, cache: ConversionCache | None = None) -> Converted:
    """A converted document's Markdown (from the cache when it holds it); raises Unreadable with the reason."""
    return (cache or ConversionCache(None)).get(path.read_bytes(), path.suffix, max_bytes)


def check_text_size(text: str, max_bytes: int) -> str:
    """``text`` when its UTF-8 is within the per-document cap; a document that expands past it is refused."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise Unreadable(
            f"converts to {size:,} bytes of text, over the cap of {max_bytes:,} bytes per document "
            "(BOT_MAX_SEED_BYTES); skipped: split it into smaller documents or raise BOT_MAX_SEED_BYTES"
        )
    return text
