"""Markdown/text documents (and HTML, Word, PDF, rst converted to Markdown: :mod:`bot.kb.formats`) -> sections,
the unit of citation.

A section is the text under one heading up to the next heading of any level.
Worked example::

    >>> doc = "---\\ntitle: Demo\\n---\\nintro\\n## [1. 简介](#1)\\nbody\\n```\\n# not a heading\\n```\\n"
    >>> [(s.heading, s.start_line, s.end_line) for s in parse_text(doc, "demo.md")]
    [('Demo', 4, 4), ('1. 简介', 5, 9)]

Lines starting with ``#`` inside fenced code are code, text above the first
heading belongs to a section named after the document title (front matter
``title:``, else the first H1, else the file name), and FAQ fields such as
``+ 解决方法：``, ``**A:**`` or a ``### Solution`` sub-heading are recognised so a reply can put the fix first.
Which names are fields, and which of them hold the fix, is the domain's (:class:`bot.kb.domain.Faq`)::

    >>> from bot.kb.domain import Faq
    >>> faq = Faq(fields=("Problem", "Solution"), fix=("Solution",))
    >>> doc = "# FAQ\\n## Widget hangs\\n### Problem\\nIt hangs.\\n### Solution\\nRestart it.\\n"
    >>> [(s.heading, s.fields, s.roles) for s in parse_text(doc, "faq.md", faq=faq)]
    [('Widget hangs', (('Problem', 'It hangs.'), ('Solution', 'Restart it.')), (('Solution', 'fix'),))]
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from bot.kb.domain import Faq, shipped
from bot.kb.formats import CONVERTED_SUFFIXES, PACKED_SUFFIXES, ConversionCache, Unreadable, place, read_document
from bot.records import Section
from bot.settings import Settings

# Markdown and text are read as they are; HTML, Word, PDF and reStructuredText through bot.kb.formats.
DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt", *CONVERTED_SUFFIXES)
# Caps per document (Settings.max_seed_bytes / max_seed_sections, BOT_MAX_SEED_BYTES / BOT_MAX_SEED_SECTIONS):
# a 20 MB one-line file plus a 20,000-heading file took 357 s and 1.35 GB to build. What is over a cap is
# named in a warning; the other documents (and a capped document's first sections) are still indexed. A PDF or Word
# file holds fonts and images that are never read: its file has its own cap (max_seed_file_bytes,
# BOT_MAX_SEED_FILE_BYTES), its text the shared one. The defaults are the settings' (defined there once).
MAX_SEED_BYTES: int = Settings.model_fields["max_seed_bytes"].default
MAX_SEED_SECTIONS: int = Settings.model_fields["max_seed_sections"].default
MAX_SEED_FILE_BYTES: int = Settings.model_fields["max_seed_file_bytes"].default

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*$")
_CLOSING_HASHES = re.compile(r"[ \t]+#+$")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_HTML_TAG = re.compile(r"<[^<>\n]{0,200}>")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)")
_SPACES = re.compile(r"\s+")
_TOC_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s*\[[^\]\n]*\]\(#[^)\n]*\)\s*$")
_BARE_HASHES = re.compile(r"^ {0,3}#+\s*$")
_SLUG_DROP = re.compile(r"[^\w]+")
_TITLE_LINE = re.compile(r"^title:\s*(.*?)\s*(?:#.*)?$")
_REVIEW = r"(?:已审核|未审核|待审核|已审阅|审核通过|审核中|已校对)"
_REVIEW_HEAD = re.compile(r"^\s*[\[【(（]?" + _REVIEW + r"[\]】)）]?[\s:：]*")
_REVIEW_TAIL = re.compile(r"\s*[\[【(（]?" + _REVIEW + r"[\]】)）]?\s*$")
_DOUBLE_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)([.、．]?)\s+\1\2?(?=\s|[^\d.])")


class ParseError(ValueError):
    """A document that cannot be read; names the file and, where it applies, the line."""

    def __init__(self, source: str, message: str, line: int | None = None) -> None:
        self.source = source
        self.line = line
        where = f"{source}:{line}" if line else source
        super().__init__(f"{where}: {message}")


def _markup_free(raw: str) -> str:
    """Heading markdown -> plain text, noise included (what anchors are made from, so they stay stable)."""
    text = _CLOSING_HASHES.sub("", raw.strip())
    text = _LINK.sub(r"\1", text)
    text = _HTML_TAG.sub("", text)
    text = _EMPHASIS.sub("", text)
    return _SPACES.sub(" ", text).strip()


def clean_noise(heading: str) -> str:
    """Drop document noise from a plain heading: review markers and a number written twice.

    >>> clean_noise("已审核1.问题：GPU 利用率"), clean_noise("3. 3. FAQ"), clean_noise("2.1 2.1 准备环境")
    ('1.问题：GPU 利用率', '3. FAQ', '2.1 准备环境')
    >>> clean_noise("3.3 FAQ"), clean_noise("【待审核】显存不足（已审核）"), clean_noise("已审核")
    ('3.3 FAQ', '显存不足', '已审核')
    """
    text = _REVIEW_HEAD.sub("", heading)
    text = _REVIEW_TAIL.sub("", text)
    text = _DOUBLE_NUMBER.sub(r"\1\2", text)
    text = _SPACES.sub(" ", text).strip()
    return text or heading


def plain_heading(raw: str) -> str:
    """Heading markdown -> plain text without review markers or doubled numbering.

    >>> plain_heading("[1. 简介](#1)")
    '1. 简介'
    >>> plain_heading("`已审核`1.问题：**GPU** 利用率 ##")
    '1.问题：GPU 利用率'
    >>> plain_heading("3. [3. FAQ](#3)")
    '3. FAQ'
    """
    return clean_noise(_markup_free(raw))


def slugify(heading: str) -> str:
    """Stable, readable anchor for a heading (keeps CJK, drops punctuation).

    >>> slugify("问题：`stop_gradient=True`的影响范围？")
    '问题-stop_gradient-true-的影响范围'
    """
    slug = _SLUG_DROP.sub("-", heading.lower()).strip("-")
    return slug[:60].rstrip("-") or "section"


def decode_document(data: bytes, source: str) -> str:
    """Bytes -> text, refusing binary and non-UTF-8 files with the line at fault."""
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise ParseError(source, "contains NUL bytes; this looks like a binary file, not markdown", line)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(source, f"is not UTF-8 (byte 0x{data[exc.start]:02x}); re-save it as UTF-8", line) from None
    return text.removeprefix("\ufeff")


def _front_matter(lines: list[str], source: str) -> tuple[int, str]:
    """Return (number of lines the front matter takes, its title or '')."""
    if not lines or lines[0].strip() != "---":
        return 0, ""
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            title = ""
            for line in lines[1:i]:
                match = _TITLE_LINE.match(line)
                if match:
                    title = match.group(1).strip().strip("'\"")
            return i + 1, title
    raise ParseError(source, "front matter opened with '---' is never closed", 1)


def parse_fields(body: str, faq: Faq | None = None) -> tuple[tuple[str, str], ...]:
    """Recognise FAQ fields in a section body (the shipped domain's fields unless ``faq`` names others).

    >>> parse_fields("+ 问题描述：显存不足\\n+ 解决方法：\\n\\n减小 batch_size\\n")
    (('问题描述', '显存不足'), ('解决方法', '减小 batch_size'))
    >>> parse_fields("**q:** Why?\\n**A:** Because.", Faq(fields=("Q", "A"), fix=("A",)))
    (('Q', 'Why?'), ('A', 'Because.'))
    """
    faq = faq or shipped().faq
    fields: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        match = faq.line.match(line)
        if match:
            name, value = next((n, v) for n, v in zip(match.groups()[::2], match.groups()[1::2]) if n is not None)
            fields.append((faq.spelled(name), [value]))
        elif fields:
            fields[-1][1].append(line)
    return tuple((name, "\n".join(value).strip()) for name, value in fields)


def _is_toc(body_lines: list[str]) -> bool:
    content = [line for line in body_lines if line.strip()]
    return bool(content) and all(_TOC_LINE.match(line) for line in content)


def parse_text(
    text: str,
    source: str,
    *,
    max_sections: int | None = None,
    warnings: list[ParseError] | None = None,
    faq: Faq | None = None,
) -> list[Section]:
    """Split one document's text into sections (see the module docstring); ``faq``: the shipped domain's unless given.

    With ``max_sections``, headings past that many are not split off (the document is cut there) and a
    warning naming the file, the count and the setting is added to ``warnings``.
    """
    faq = faq or shipped().faq
    lines = text.splitlines()
    skip, title = _front_matter(lines, source)

    # Pass 1: find headings outside code fences.
    headings: list[tuple[int, int, str]] = []  # (0-based line, level, plain text)
    raw_headings: dict[int, str] = {}  # 0-based line -> heading with its noise: anchors come from it (stable)
    fence: str | None = None
    for i in range(skip, len(lines)):
        line = lines[i]
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker[0] * len(marker)
            elif marker.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        heading_match = _HEADING.match(line)
        if heading_match:
            raw_text = _markup_free(heading_match.group(2))
            if raw_text and headings and faq.heading.match(raw_text):
                continue  # "### Solution" under a heading: a field of that section (parse_fields), not a section
            if raw_text:  # a bare "#" line is decoration, not a heading
                headings.append((i, len(heading_match.group(1)), clean_noise(raw_text)))
                raw_headings[i] = raw_text

    if not title:
        first_h1 = next((h for h in headings if h[1] == 1), None)
        title = first_h1[2] if first_h1 else Path(source).stem
    cut = len(lines)
    if max_sections is not None and len(headings) > max_sections:
        cut = headings[max_sections][0]
        if warnings is not None:
            warnings.append(
                ParseError(
                    source,
                    f"has {len(headings):,} headings, over the cap of {max_sections:,} sections per document "
                    f"(BOT_MAX_SEED_SECTIONS); the first {max_sections:,} are indexed, the rest is not: split the "
                    "document or raise BOT_MAX_SEED_SECTIONS",
                    line=cut + 1,
                )
            )
        headings = headings[:max_sections]

    sections: list[Section] = []
    used_anchors: dict[str, int] = {}

    def add(heading: str, path: tuple[str, ...], head_line: int | None, body_start: int, body_end: int) -> bool:
        """Add a section; False when the body is empty or only a table of contents."""
        # A bare "#" line is decoration; treat it as blank so it neither counts as content nor shows.
        body_lines = ["" if _BARE_HASHES.match(line) else line for line in lines[body_start:body_end]]
        while body_lines and not body_lines[-1].strip():
            body_lines.pop()
        content_start = body_start
        while body_lines and not body_lines[0].strip():
            body_lines.pop(0)
            content_start += 1
        if not body_lines or _is_toc(body_lines):
            return False
        slug = slugify(raw_headings.get(head_line, heading) if head_line is not None else heading)
        used_anchors[slug] = used_anchors.get(slug, 0) + 1
        anchor = slug if used_anchors[slug] == 1 else f"{slug}-{used_anchors[slug]}"
        body = "\n".join(body_lines)
        fields = parse_fields(body, faq)
        start = head_line + 1 if head_line is not None else content_start + 1
        sections.append(
            Section(
                source=source,
                heading=heading,
                path=path,
                start_line=start,
                end_line=content_start + len(body_lines),
                anchor=anchor,
                text=body,
                title=title,
                fields=fields,
                roles=faq.roles({name for name, _ in fields}),
            )
        )
        return True

    first_heading_line = headings[0][0] if headings else cut
    add(title, (title,), None, skip, first_heading_line)

    stack: list[tuple[int, str]] = []  # (level, heading)
    for n, (line_no, level, heading) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        path = tuple(h for _, h in stack)
        if path[0] != title:
            path = (title, *path)
        end = headings[n + 1][0] if n + 1 < len(headings) else cut
        if not add(heading, path, line_no, line_no + 1, end) and _is_toc(lines[line_no + 1 : end]):
            stack.pop()  # a "目录" (table of contents) heading is not a parent of what follows
    return sections


def section_of_row(row: dict, faq: Faq) -> Section:
    """A section as an index's ``sections.json`` stores it (``dataclasses.asdict``). An index built before the
    fields' roles were stored (issue 41) gets them from ``faq``, the domain the index is opened with."""
    fields = tuple((str(name), str(value)) for name, value in row["fields"])
    roles = tuple((str(n), str(r)) for n, r in row["roles"]) if "roles" in row else faq.roles({n for n, _ in fields})
    return Section(**{**row, "path": tuple(row["path"]), "fields": fields, "roles": roles})


def parse_file(
    path: Path,
    source: str | None = None,
    *,
    max_bytes: int | None = None,
    max_sections: int | None = None,
    warnings: list[ParseError] | None = None,
    cache: ConversionCache | None = None,
    faq: Faq | None = None,
    max_file_bytes: int | None = None,
) -> list[Section]:
    """Parse one file; ``source`` defaults to the file name. A file over its cap raises ParseError unread: a PDF or
    Word file over ``max_file_bytes``, another over ``max_bytes`` (None: no cap).

    An HTML, Word, PDF or reStructuredText file is converted first (through ``cache`` when given); one that
    cannot be read, or whose text is over ``max_bytes``, raises ParseError with the reason.
    """
    source = source or path.name
    packed = path.suffix.lower() in PACKED_SUFFIXES
    cap, variable, per = (
        (max_file_bytes, "BOT_MAX_SEED_FILE_BYTES", "PDF or Word file")
        if packed
        else (max_bytes, "BOT_MAX_SEED_BYTES", "document")
    )
    if cap is not None:
        size = path.stat().st_size
        if size > cap:
            raise ParseError(
                source,
                f"is {size:,} bytes, over the cap of {cap:,} bytes per {per} "
                f"({variable}); skipped: split it into smaller documents or raise {variable}",
            )
    if path.suffix.lower() in CONVERTED_SUFFIXES:
        try:
            converted = read_document(path, max_bytes or MAX_SEED_BYTES, cache)
        except Unreadable as exc:
            raise ParseError(source, str(exc)) from None
        sections = parse_text(converted.text, source, max_sections=max_sections, warnings=warnings, faq=faq)
        return place(sections, converted)
    text = decode_document(path.read_bytes(), source)
    return parse_text(text, source, max_sections=max_sections, warnings=warnings, faq=faq)


def _walk(seeds_dir: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(documents, [(path, why skipped)]) under ``seeds_dir``, never leaving it.

    Symbolic links are not followed, to files or folders: a link to ``/etc/passwd`` named
    ``faq.txt`` would otherwise become answerable text. FIFOs and devices would block or never
    end a read. Both are reported so the operator sees why a document is missing.
    """
    documents: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for root, dirs, files in os.walk(seeds_dir, followlinks=False):
        here = Path(root)
        top = here == seeds_dir
        kept = []
        for name in sorted(dirs):
            if name.startswith(".") or (top and name == "meta"):
                continue
            if (here / name).is_symlink():
                skipped.append((here / name, "is a symbolic link to a folder; skipped (copy the files into seeds/)"))
                continue
            kept.append(name)
        dirs[:] = kept
        for name in files:
            path = here / name
            if name.startswith(".") or path.suffix.lower() not in DOCUMENT_SUFFIXES:
                continue
            try:
                mode = path.lstat().st_mode
            except OSError:
                continue  # removed while we looked
            if stat.S_ISLNK(mode):
                skipped.append((path, "is a symbolic link; skipped (copy the file into seeds/ instead)"))
            elif not stat.S_ISREG(mode):
                skipped.append((path, "is not a regular file (a pipe, socket or device); skipped"))
            else:
                documents.append(path)
    return sorted(documents), sorted(skipped)


def document_paths(seeds_dir: Path) -> list[Path]:
    """Every knowledge-base document under ``seeds_dir``, in a stable order (no links, no special files)."""
    return _walk(seeds_dir)[0]


def parse_folder(
    seeds_dir: Path,
    *,
    max_bytes: int | None = MAX_SEED_BYTES,
    max_sections: int | None = MAX_SEED_SECTIONS,
    cache: ConversionCache | None = None,
    faq: Faq | None = None,
    max_file_bytes: int | None = MAX_SEED_FILE_BYTES,
) -> tuple[list[Section], list[ParseError]]:
    """Parse every document with the FAQ convention ``faq`` (the shipped one unless given); a broken or oversized
    file is reported and the others still load."""
    sections: list[Section] = []
    documents, skipped = _walk(seeds_dir)
    errors = [ParseError(path.relative_to(seeds_dir).as_posix(), why) for path, why in skipped]
    for path in documents:
        source = path.relative_to(seeds_dir).as_posix()
        try:
            sections.extend(
                parse_file(
                    path,
                    source,
                    max_bytes=max_bytes,
                    max_sections=max_sections,
                    warnings=errors,
                    cache=cache,
                    faq=faq,
                    max_file_bytes=max_file_bytes,
                )
            )
        except ParseError as exc:
            errors.append(exc)
        except OSError as exc:
            errors.append(ParseError(source, f"cannot be read ({exc.strerror})"))
    return sections, errors
