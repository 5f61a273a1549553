"""Sections -> chunks small enough to embed well, never crossing a section.

>>> from bot.records import Section
>>> s = Section("a.md", "H", ("Doc", "H"), 1, 3, "h", "第一段。" * 30 + "\\n\\n" + "第二段。" * 30, "Doc")
>>> [(c.section_key, c.ordinal, len(c.text)) for c in chunk_section(s, size=150, overlap=0)]
[('a.md#h', 0, 120), ('a.md#h', 1, 120)]
"""

from __future__ import annotations

from collections.abc import Iterable

from langchain_text_splitters import RecursiveCharacterTextSplitter

from bot.records import Chunk, Section

# Paragraphs first, then lines, then Chinese and English sentence ends.
SEPARATORS = ["\n\n", "\n", "。", "；", "！", "？", ". ", "; ", " ", ""]


def chunk_section(section: Section, size: int, overlap: int) -> list[Chunk]:
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size, chunk_overlap=overlap, separators=SEPARATORS, keep_separator="end"
    )
    pieces = [p.strip() for p in splitter.split_text(section.text)]
    return [Chunk(section.key, n, text) for n, text in enumerate(p for p in pieces if p)]


def chunk_sections(sections: Iterable[Section], size: int, overlap: int) -> list[Chunk]:
    return [chunk for section in sections for chunk in chunk_section(section, size, overlap)]
