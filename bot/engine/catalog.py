"""What the engine knows of its loaded index's sections, once per index: keys, facts, what each covers, the lexicon.

:class:`Catalog` is the index-derived state that the reading, the scores, the evidence, the ranking and the judgement
all read (the arrays the engine's parts share); it never changes after it is made. The caches it keeps (a section's
tokens, which sections have evidence of their own) are derived from it and from their arguments alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from bot.engine.facts import SectionFacts
from bot.engine.precedents import Precedents
from bot.engine.subjects import Lexicon
from bot.kb.index import KnowledgeIndex, section_documents
from bot.kb.meta import SectionMeta
from bot.kb.tokenize import tokenize
from bot.records import Case, Section

# Frameworks, operating systems and devices: a fix for another one does not carry over, so a
# question naming one the cited section does not cover is never a confident answer.
HARD_CATEGORIES = ("framework", "hardware")
MAJOR_CATEGORIES = ("framework", "hardware", "product")
# What a question asks about (the problem) as opposed to where it happens (the setting).
PROBLEM_CATEGORIES = ("error", "library", "feature", "task")
# Setting subjects that never make a framework-level fix wrong by themselves (Docker, Windows,
# conda, Kubernetes); a section that contradicts one (a Linux-only guide) is checked apart.
SETTING_ONLY_CATEGORIES = ("os", "tool", "scale")
CATEGORY_ORDER = ("framework", "hardware", "os", "product", "tool", "feature", "library", "error", "task", "scale")


@dataclass(frozen=True, eq=False)
class Catalog:
    """One loaded index's sections and what is known of them (computed by the build: :mod:`bot.engine.facts`)."""

    index: KnowledgeIndex
    lexicon: Lexicon
    facts: tuple[SectionFacts, ...]
    _tokens: dict[int, frozenset[str]] = field(default_factory=dict, repr=False)
    _known: dict[tuple[int, frozenset[str]], tuple[Precedents | None, np.ndarray]] = field(
        default_factory=dict, repr=False
    )
    _fitted_bm25: dict[frozenset[str], tuple[object, np.ndarray]] = field(default_factory=dict, repr=False)

    @property
    def sections(self) -> list[Section]:
        return self.index.sections

    @cached_property
    def by_key(self) -> dict[str, int]:
        """A section's position by its key."""
        return {s.key: n for n, s in enumerate(self.index.sections)}

    def section(self, key: str) -> Section | None:
        n = self.by_key.get(key)
        return None if n is None else self.index.sections[n]

    def meta(self, key: str) -> SectionMeta | None:
        return self.index.meta.get(key)

    def section_vectors(self) -> tuple[dict[str, int], np.ndarray] | None:
        """Per section, the normalised mean of its keys' vectors (stored by the build), or None when the index
        holds none."""
        if self.index.section_vectors is None:
            return None
        return self.by_key, self.index.section_vectors

    @cached_property
    def main_frameworks(self) -> list[frozenset[str]]:
        """Per section, the main framework(s) of its document (a Paddle FAQ that mentions TensorFlow once is Paddle)."""
        return [f.frameworks for f in self.facts]

    @cached_property
    def coverage(self) -> list[frozenset[str]]:
        """Per section, the subjects it covers: its own mentions plus its document's main frameworks."""
        return [f.covers for f in self.facts]

    @cached_property
    def covered_anywhere(self) -> frozenset[str]:
        return frozenset().union(*self.coverage) if self.coverage else frozenset()

    @cached_property
    def cover_matrix(self) -> tuple[dict[str, int], np.ndarray]:
        names = sorted(self.covered_anywhere)
        row = {name: n for n, name in enumerate(names)}
        matrix = np.zeros((len(names), len(self.sections)), dtype=np.float32)
        for col, covered in enumerate(self.coverage):
            for name in covered:
                matrix[row[name], col] = 1.0
        return row, matrix

    @cached_property
    def answer_bearing(self) -> np.ndarray:
        """Sections that answer something on their own: FAQ entries, prose — not a bare code step."""
        return np.array([f.answers for f in self.facts], dtype=bool)

    def frameworks_shown(self, case: Case) -> frozenset[str]:
        """The main framework(s) of the answer the case gave (its best section, else the first one shown)."""
        for key in (case.best, *case.shown):
            i = self.by_key.get(key) if key else None
            if i is not None and self.main_frameworks[i]:
                return self.main_frameworks[i]
        return frozenset()

    def on_problem(self, problem: frozenset[str]) -> tuple[tuple[str, frozenset[str]], ...]:
        """Each section that covers one of ``problem``'s subjects: its key and main framework(s) (a retry's
        frameworks are kept only where one of these is left: :func:`bot.engine.plan.plan`)."""
        return tuple(
            (section.key, main)
            for section, main, covered in zip(self.sections, self.main_frameworks, self.coverage, strict=True)
            if problem & covered
        )

    def known(self, precedents: Precedents | None, hidden: frozenset[str] = frozenset()) -> np.ndarray:
        """Per section: whether it has evidence of its own — labelled ``precedents`` that it answers (the engine
        passes the calibration's; they also taught the adapter) or curated phrasings in ``seeds/meta`` — and its
        document is not one of ``hidden``. A section nobody labelled or curated is ranked by the shared rule alone, and
        the others' evidence never pulls a question away from it (:func:`bot.engine.rank.gate`) — also in a document whose other sections a
        company has labelled: a few labels for a page must not leave its other sections to the seeds' hundreds."""
        stamp = (id(precedents), hidden)
        cached = self._known.get(stamp)
        if cached is not None and cached[0] is precedents:
            return cached[1]
        evidenced = {key for answers in (precedents.answers if precedents is not None else ()) for key in answers}
        evidenced |= set(self.index.meta)
        mask = np.array([s.key in evidenced and s.source not in hidden for s in self.sections], dtype=bool)
        while len(self._known) >= 64:  # calibration tries a few dozen precedent sets; each kept alive here
            self._known.pop(next(iter(self._known)))
        self._known[stamp] = (precedents, mask)
        return mask

    def frameworks(self, subjects: Iterable[str]) -> frozenset[str]:
        return frozenset(s for s in subjects if self.lexicon.category(s) == "framework")

    def subjects_of(self, text: str) -> frozenset[str]:
        return frozenset(self.lexicon.find(text))

    def subject_share(self, subjects: Iterable[str]) -> np.ndarray:
        row, matrix = self.cover_matrix
        rows = [row[s] for s in subjects if s in row]
        n = len(set(subjects))
        if not rows or not n:
            return np.zeros(len(self.sections), dtype=np.float32)
        return matrix[rows].sum(axis=0) / n

    @cached_property
    def key_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Every retrieval key's vector and its section, as the dense index holds them (once per loaded index)."""
        dense = self.index.dense
        return dense.reconstruct_n(0, dense.ntotal), self.index.key_sections

    def built_on(self, subject: str, covered: frozenset[str]) -> bool:
        """A product built on a framework the section covers (PaddleDetection on a Paddle FAQ)."""
        implies = self.lexicon.subjects[subject].implies if subject in self.lexicon.subjects else ()
        return self.lexicon.category(subject) == "product" and bool(implies) and set(implies) <= covered

    def carry_setting(self, old: frozenset[str], named: frozenset[str]) -> frozenset[str]:
        """The case's setting after a follow-up that names ``named``: a newly named framework, product,
        OS or device replaces the old one of its kind (and products built on a replaced framework)."""
        replaced = {self.lexicon.category(s) for s in named}
        dropped = {s for s in old if self.lexicon.category(s) in replaced}
        gone = self.frameworks(dropped) - named
        kept = {
            s
            for s in old - dropped
            if not (self.lexicon.category(s) == "product" and set(self.lexicon.subjects[s].implies) & gone)
        }
        return frozenset(kept) | named

    def main_subjects(self, subjects: Iterable[str]) -> frozenset[str]:
        """Drop frameworks named in passing: "之前用torch时…" in a Paddle question is not about PyTorch.

        When the question names a framework the knowledge base covers, the other frameworks it
        names are comparisons or history, not what it asks about.
        """
        subjects = frozenset(subjects)
        named = self.frameworks(subjects)
        if named & self.covered_anywhere:
            subjects = subjects - (named - self.covered_anywhere)
        return subjects

    def tokens_of(self, n: int) -> frozenset[str]:
        tokens = self._tokens.get(n)
        if tokens is None:
            section = self.sections[n]
            tokens = frozenset(tokenize(section_documents(section, self.meta(section.key))[:20_000]))
            self._tokens[n] = tokens
        return tokens

    def terms_in(self, search: str, key: str) -> tuple[str, ...]:
        """The words of ``search`` the knowledge base knows that occur in section ``key`` (what to highlight
        there), without ranking anything."""
        n = self.by_key.get(key)
        if n is None:
            return ()
        vocab = self.index.bm25.vocab_dict
        known = [t for t in dict.fromkeys(tokenize(search[:5_000])) if t in vocab]
        return tuple(self.terms_in_section(known, n))

    def terms_in_section(self, matched: list[str], n: int) -> list[str]:
        """The matched query terms that occur in this section (highlighting is per section)."""
        tokens = self.tokens_of(n)
        return [t for t in matched if t in tokens][:12]

    def hidden_sections(self, hidden: frozenset[str]) -> np.ndarray:
        """Per section, whether its document is one of ``hidden`` (calibration's held-out documents)."""
        return np.array([s.source in hidden for s in self.sections], dtype=bool)

    def fitted_bm25(self, hidden: frozenset[str]) -> tuple[object, np.ndarray]:
        """BM25 over the sections of the documents not ``hidden`` (with their curated phrasings, as the index's), and
        those sections' positions: what their lexical scores were before the hidden documents came (an added page
        changes every term's IDF and the mean length in the index's BM25). Built once per set of hidden documents."""
        cached = self._fitted_bm25.get(hidden)
        if cached is None:
            import bm25s

            at = np.flatnonzero(~self.hidden_sections(hidden))
            corpus = [
                tokenize(section_documents(self.sections[n], self.meta(self.sections[n].key))) or ["\u2205"] for n in at
            ]
            bm25 = bm25s.BM25()
            bm25.index(corpus or [["\u2205"]], show_progress=False)
            while len(self._fitted_bm25) >= 8:  # calibration holds out one document at a time
                self._fitted_bm25.pop(next(iter(self._fitted_bm25)))
            cached = self._fitted_bm25[hidden] = (bm25, at)
        return cached

    @cached_property
    def plain_bm25(self):
        """BM25 without curated metadata, built on demand for the evaluation's "no meta" figures."""
        import bm25s

        bm25 = bm25s.BM25()
        corpus = [tokenize(section_documents(s, None)) or ["\u2205"] for s in self.sections]
        bm25.index(corpus or [["\u2205"]], show_progress=False)
        return bm25
