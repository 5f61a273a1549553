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
import threading
from collections import OrderedDict
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
QUERY_CACHE_SIZE = 1024
# Fusion: z-scored dense + LEXICAL_WEIGHT x z-scored BM25. Hit@1 was flat for
# weights 0.2-1.0 on our calibration set, so the middle of that plateau is used;
# rank fusion (RRF) lost to it because it throws away how far ahead the best match is.
LEXICAL_WEIGHT = 0.5
# Abstention, calibrated on tests/data/calibration.jsonl (our own in-scope and
# off-topic questions, not the dev set): in-scope questions sit at a dense margin
# (best KB key minus best off-topic key of the same language) of >= +0.025 with
# most of their tokens known to the KB; off-topic ones at <= +0.010 and <= 60 %.
MARGIN_CENTER = 0.0175
MARGIN_SCALE = 0.0075
COVERAGE_CENTER = 0.6
COVERAGE_WEIGHT = 2.0

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_QUANTITY = re.compile(r"^\d[\d.]*[a-z]{0,3}$")
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


def _zscore(values: np.ndarray) -> np.ndarray:
    spread = float(values.std()) if len(values) else 0.0
    if spread < 1e-9:
        return np.zeros_like(values, dtype=np.float32)
    return ((values - values.mean()) / spread).astype(np.float32)


class Engine:
    """The retrieval engine over one loaded index."""

    def __init__(self, index: KnowledgeIndex, embedder: Embedder, settings: Settings) -> None:
        self.index = index
        self.embedder = embedder
        self.settings = settings
        self._by_key = {s.key: n for n, s in enumerate(index.sections)}
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

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
            return Answer(query=text, language=language, tier="none", hits=(), truncated_from=truncated_from)

        signature = ""
        search_text = text.strip()
        if looks_like_log(text):
            sig = extract_signature(text)
            signature = sig.headline
            # The user's own words around a paste (usually Chinese) say what they ask.
            asked = [line.strip() for line in text.splitlines()[:50] if _CJK_LINE.search(line) and len(line) < 300]
            search_text = "\n".join([sig.search_text(), *asked[:3]]).strip() or search_text

        query_vector = self._embed_query(search_text)
        dense, best_by_language = self._dense_scores(query_vector)
        lexical, matched, coverage = self._lexical_scores(search_text)
        fused = self._fuse(dense, lexical)
        confidence = self._confidence(query_vector, best_by_language, coverage)

        excluded = set(exclude)
        # Only the head of the ranking is turned into records: a large base has tens of thousands of sections.
        head = np.argsort(-fused, kind="stable")[: k + len(excluded)]
        order = [n for n in head if self.index.sections[n].key not in excluded]
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
            tier=("answer" if confidence >= self.settings.min_confidence else "tentative") if hits else "none",
            hits=hits,
            signature=signature,
            search_text=search_text,
            truncated_from=truncated_from,
            confidence=confidence,
        )

    # ------------------------------------------------------------ scoring

    def _embed_query(self, search_text: str) -> np.ndarray:
        """Query vector, remembered for repeated questions (clicked examples, suggestions, retries)."""
        with self._cache_lock:
            cached = self._query_cache.get(search_text)
            if cached is not None:
                self._query_cache.move_to_end(search_text)
                return cached
        vector = self.embedder.embed([search_text], role="query")[0]
        with self._cache_lock:
            self._query_cache[search_text] = vector
            while len(self._query_cache) > QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return vector

    def _dense_scores(self, query_vector: np.ndarray) -> tuple[np.ndarray, dict[bool, float]]:
        """Per section, the best cosine between the query and any of its keys;
        and the best cosine among Chinese keys (True) and among the other keys (False)."""
        n_sections = len(self.index.sections)
        scores = np.full(n_sections, -1.0, dtype=np.float32)
        if n_sections == 0 or self.index.dense.ntotal == 0:
            return scores, {}
        top = min(DENSE_CANDIDATES, self.index.dense.ntotal)
        sims, rows = self.index.dense.search(query_vector[None, :], top)
        owners = self.index.key_sections
        key_is_zh = self.index.key_is_zh
        best_by_language: dict[bool, float] = {}
        for sim, row in zip(sims[0], rows[0]):
            if row < 0:
                continue
            owner = owners[row]
            if sim > scores[owner]:
                scores[owner] = sim
            is_zh = bool(key_is_zh[row])
            if sim > best_by_language.get(is_zh, -2.0):
                best_by_language[is_zh] = float(sim)
        # HNSW may return fewer rows than asked (row -1, score -3.4e38): the floor is the lowest real score.
        found = rows[0] >= 0
        floor = float(sims[0][found].min()) if found.any() else 0.0
        scores[scores < -0.5] = floor  # sections with no key among the candidates
        return scores, best_by_language

    def _lexical_scores(self, search_text: str) -> tuple[np.ndarray, list[str], float]:
        """BM25 per section, the query tokens the KB knows, and their share of all query tokens."""
        tokens = list(dict.fromkeys(tokenize(search_text[:5_000])))
        vocab = self.index.bm25.vocab_dict
        known = [t for t in tokens if t in vocab]
        # Sizes and counts ("1024", "1.5gb") say nothing about the topic.
        worded = [t for t in tokens if not _QUANTITY.match(t)]
        coverage = sum(1 for t in worded if t in vocab) / len(worded) if worded else 0.0
        if not known:
            return np.zeros(len(self.index.sections), dtype=np.float32), [], coverage
        return np.asarray(self.index.bm25.get_scores(known), dtype=np.float32), known, coverage

    @staticmethod
    def _fuse(dense: np.ndarray, lexical: np.ndarray) -> np.ndarray:
        """z(dense) + LEXICAL_WEIGHT * z(lexical), per section.

        >>> Engine._fuse(np.array([0.9, 0.8, 0.7]), np.array([0.0, 0.0, 9.0])).round(2)
        array([ 0.87, -0.35, -0.52], dtype=float32)
        """
        return _zscore(dense) + LEXICAL_WEIGHT * _zscore(lexical)

    def _confidence(self, query_vector: np.ndarray, best_by_language: dict[bool, float], coverage: float) -> float:
        """Calibrated 0..1: is the question closer to the KB than to everyday off-topic questions?

        The best KB match is contrasted with the off-topic questions *in that match's
        language*. Matching across languages costs e5 about 0.06 of cosine (measured:
        curated English vs Chinese phrasings against the same Chinese sections), so an
        English question on Chinese-only documents would otherwise lose to any English
        off-topic question. With metadata the best match is usually in the question's
        own language and this is the plain contrast.
        """
        background = self.index.background
        if not best_by_language or not len(background):
            return 0.0
        match_is_zh = max(best_by_language, key=best_by_language.get)
        same_language = background[self.index.background_is_zh == match_is_zh]
        if not len(same_language):
            same_language = background
        margin = best_by_language[match_is_zh] - float((same_language @ query_vector).max())
        z = (margin - MARGIN_CENTER) / MARGIN_SCALE + COVERAGE_WEIGHT * (coverage - COVERAGE_CENTER)
        return float(1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0))))
