"""Small immutable records passed between pipeline stages."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Section:
    """One citable unit: the text under a heading, up to the next heading.

    >>> s = Section(source="a.md", heading="1. Intro", path=("Doc", "1. Intro"),
    ...             start_line=3, end_line=5, anchor="1-intro", text="hello", title="Doc")
    >>> s.breadcrumb
    'Doc › 1. Intro'
    """

    source: str  # file name relative to the seeds folder
    heading: str  # the section's own heading, plain text
    path: tuple[str, ...]  # heading path from the document title down to this heading
    start_line: int  # 1-based, inclusive, the heading line itself when there is one
    end_line: int  # 1-based, inclusive
    anchor: str  # stable id, unique within the source file
    text: str  # body text (markdown), without the heading line
    title: str  # document title
    fields: tuple[tuple[str, str], ...] = ()  # recognised FAQ fields, e.g. ("解决方法", "...")

    @property
    def breadcrumb(self) -> str:
        return " › ".join(self.path)

    @property
    def key(self) -> str:
        """Globally unique id: ``source#anchor``."""
        return f"{self.source}#{self.anchor}"

    def field(self, name: str) -> str:
        for field_name, value in self.fields:
            if field_name == name:
                return value
        return ""


@dataclass(frozen=True)
class Chunk:
    """A piece of one section's text, small enough to embed well."""

    section_key: str
    ordinal: int
    text: str


@dataclass(frozen=True)
class Hit:
    """A retrieved section with its fused score and the evidence behind it."""

    section: Section
    score: float
    dense: float = 0.0
    lexical: float = 0.0
    matched_terms: tuple[str, ...] = field(default=())

    def citation(self) -> dict:
        s = self.section
        return {
            "source": s.source,
            "section": s.heading,
            "heading_path": list(s.path),
            "anchor": s.anchor,
            "lines": [s.start_line, s.end_line],
            "score": round(float(self.score), 4),
        }


@dataclass(frozen=True)
class Answer:
    """What the engine says about one question.

    ``answered`` is False when nothing in the knowledge base is a confident match;
    ``hits`` are then the nearest sections, offered as suggestions, never as an answer.
    """

    query: str  # the user's text as received (after the size limit)
    language: str  # "zh" or "en": the language to reply in
    answered: bool
    hits: tuple[Hit, ...]
    signature: str = ""  # error signature when the input was a pasted log, else ""
    search_text: str = ""  # what was actually searched (the signature for logs)
    truncated_from: int = 0  # original length in characters when the input was cut, else 0
    confidence: float = 0.0  # calibrated 0..1 score behind ``answered``

    def to_json(self) -> dict:
        return {
            "answered": self.answered,
            "language": self.language,
            "signature": self.signature or None,
            "confidence": round(self.confidence, 4),
            "truncated_from": self.truncated_from or None,
            "hits": [h.citation() for h in self.hits],
        }
