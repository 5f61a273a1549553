"""Question or pasted log -> distinct cited sections, best first, or an honest abstention.

Two rankings are fused per section:

- dense: the best cosine between the query and any key of the section (body
  chunks, the heading, curated phrasings and English titles);
- lexical: BM25 over section text, with a tokenizer that keeps error strings whole.

Whether to answer is decided by contrast, not by a raw-cosine cut (e5 scores of
off-topic questions are as high as real ones): the query is compared with the
knowledge base *and* with a shipped set of off-topic questions
(``bot/data/background.txt``); the margin between the two, plus lexical evidence,
is turned into a confidence in 0..1.
"""

from __future__ import annotations

import math
import re
import unicodedata
from pathlib import Path
from typing import Iterable

import numpy as np

from bot.embed import Embedder, make_embedder
from bot.index import IndexProblem, KnowledgeIndex, build_index, load_index
from bot.meta import SectionMeta
from bot.records import Answer, Hit, Section
from bot.settings import Settings
from bot.signature import extract_signature, looks_like_log
from bot.tokenize import detect_language, tokenize, warm_up

DENSE_CANDIDATES = 400  # nearest keys looked at per query
LEXICAL_WEIGHT = 0.35  # weight of normalised BM25 against the dense margin
RRF_K = 20

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CJK_LINE = re.compile(r"[\u4e00-\u9fff]{2,}")


def sanitize(text: str, limit: int) -> tuple[str, int]:
    """Make user text safe to process: valid Unicode, no control characters, at most ``limit`` chars.

    Returns the text and its original length when it had to be cut (else 0).

    >>> sanitize("a\\x00b\\ud800c", 10)
    ('a b\\ufffdc', 0)
    >>> sanitize("x" * 12, 10)
    ('xxxxxxxxxx', 12)
    """
    if not isinstance(text, str):
        text = str(text)
    original = len(text)
    text = text[:limit]
    # Lone surrogates (from broken clipboards or JSON) become U+FFFD instead of crashing encoders.
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    text = _CONTROL.sub(" ", text)
    return text, (original if original > limit else 0)


class Engine:
    """The retrieval engine over one loaded index."""

    def __init__(self, index: KnowledgeIndex, embedder: Embedder, settings: Settings) -> None:
        self.index = index
        self.embedder = embedder
        self.settings = settings
        self._by_key = {s.key: n for n, s in enumerate(index.sections)}

    @classmethod
    def open(
        cls, settings: Settings, embedder: Embedder | None = None, *, auto_build: bool = False, progress: bool = False
    ) -> "Engine":
        """Load the index; with ``auto_build`` a missing, stale or broken index is rebuilt instead of refused."""
        embedder = embedder or make_embedder(settings.embedder)
        try:
            index = load_index(settings, embedder.id, embedder.dim)
        except IndexProblem:
            if not auto_build:
                raise
            build_index(settings, embedder, progress=progress)
            index = load_index(settings, embedder.id, embedder.dim)
        warm_up()
        return cls(index, embedder, settings)

    # ------------------------------------------------------------ lookups

    @property
    def sections(self) -> list[Section]:
        return self.index.sections

    def section(self, key: str) -> Section | None:
        n = self._by_key.get(key)
        return None if n is None else self.index.sections[n]

    def meta(self, key: str) -> SectionMeta | None:
        return self.index.meta.get(key)

    # ------------------------------------------------------------ asking

    def ask(self, text: str, *, k: int = 10, exclude: Iterable[str] = ()) -> Answer:
        """Answer one question or pasted log with up to ``k`` distinct sections."""
        text, truncated_from = sanitize(text, self.settings.max_input_chars)
        language = detect_language(text)
        if not text.strip():
            return Answer(query=text, language=language, answered=False, hits=(), truncated_from=truncated_from)

        signature = ""
        search_text = text.strip()
        if looks_like_log(text):
            sig = extract_signature(text)
            signature = sig.headline
            # The user's own words around a paste (usually Chinese) say what they ask.
            asked = [line.strip() for line in text.splitlines()[:50] if _CJK_LINE.search(line) and len(line) < 300]
            search_text = "\n".join([sig.search_text(), *asked[:3]]).strip() or search_text

        query_vector = self.embedder.embed([search_text], role="query")[0]
        dense = self._dense_scores(query_vector)
        lexical, matched = self._lexical_scores(search_text)
        fused = self._fuse(dense, lexical)
        confidence = self._confidence(query_vector, dense, lexical)

        excluded = set(exclude)
        order = [n for n in np.argsort(-fused, kind="stable") if self.index.sections[n].key not in excluded]
        hits = tuple(
            Hit(
                section=self.index.sections[n],
                score=float(fused[n]),
                dense=float(dense[n]),
                lexical=float(lexical[n]),
                matched_terms=tuple(matched[:12]),
            )
            for n in order[:k]
        )
        return Answer(
            query=text,
            language=language,
            answered=bool(hits) and confidence >= self.settings.min_confidence,
            hits=hits,
            signature=signature,
            search_text=search_text,
            truncated_from=truncated_from,
            confidence=confidence,
        )

    # ------------------------------------------------------------ scoring

    def _dense_scores(self, query_vector: np.ndarray) -> np.ndarray:
        """Per section, the best cosine between the query and any of its keys."""
        n_sections = len(self.index.sections)
        scores = np.full(n_sections, -1.0, dtype=np.float32)
        if n_sections == 0 or self.index.dense.ntotal == 0:
            return scores
        top = min(DENSE_CANDIDATES, self.index.dense.ntotal)
        sims, rows = self.index.dense.search(query_vector[None, :], top)
        owners = self.index.key_sections
        for sim, row in zip(sims[0], rows[0]):
            if row < 0:
                continue
            owner = owners[row]
            if sim > scores[owner]:
                scores[owner] = sim
        floor = float(sims[0][-1]) if len(sims[0]) else 0.0
        scores[scores < -0.5] = floor  # sections with no key among the candidates
        return scores

    def _lexical_scores(self, search_text: str) -> tuple[np.ndarray, list[str]]:
        tokens = tokenize(search_text[:5_000])
        vocab = self.index.bm25.vocab_dict
        known = [t for t in dict.fromkeys(tokens) if t in vocab]
        if not known:
            return np.zeros(len(self.index.sections), dtype=np.float32), []
        return np.asarray(self.index.bm25.get_scores(known), dtype=np.float32), known

    def _fuse(self, dense: np.ndarray, lexical: np.ndarray) -> np.ndarray:
        if len(dense) == 0:
            return dense
        dense_rank = np.empty(len(dense)); dense_rank[np.argsort(-dense, kind="stable")] = np.arange(len(dense))
        lex_rank = np.empty(len(lexical)); lex_rank[np.argsort(-lexical, kind="stable")] = np.arange(len(lexical))
        lex_weight = np.where(lexical > 0, 1.0, 0.0)
        return 1.0 / (RRF_K + dense_rank) + lex_weight / (RRF_K + lex_rank)

    def _confidence(self, query_vector: np.ndarray, dense: np.ndarray, lexical: np.ndarray) -> float:
        if len(dense) == 0:
            return 0.0
        background = self.index.background
        best_background = float((background @ query_vector).max()) if len(background) else 0.0
        margin = float(dense.max()) - best_background
        return float(1.0 / (1.0 + math.exp(-margin / 0.02)))
