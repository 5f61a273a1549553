"""A search text's scores per section: dense (the best cosine with any of a section's keys), lexical (BM25), and
how much of the text the knowledge base knows (:class:`Scores`, :func:`score`); the query vectors remembered
(:class:`QueryCache`).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from bot.engine.catalog import Catalog
from bot.engine.standard import zscore  # here too: what ranks imports it from the scores
from bot.kb.embed import Embedder
from bot.kb.index import KnowledgeIndex
from bot.kb.tokenize import tokenize

DENSE_CANDIDATES = 400  # nearest keys looked at per query
QUERY_CACHE_SIZE = 1024
LEXICAL_CHARS = 5_000  # the lexical search reads a search text's head this long
QUANTITY = re.compile(r"^\d[\d.]*[a-z]{0,3}$")  # sizes and counts ("1024", "1.5gb") say nothing about the topic


def query_key(text: str) -> bytes:
    """The query cache's key: 16 bytes whatever the text's length (a collision needs 2**64 questions).

    >>> len(query_key("显存不足" * 25_000)) == len(query_key("oom")) == 16
    True
    """
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@dataclass
class Scores:
    """Per-section evidence for one search text."""

    query_vector: np.ndarray
    dense: np.ndarray
    lexical: np.ndarray
    matched: list[str]
    coverage: float
    best_by_language: dict[bool, float]
    tokens: list[str]
    # The same scores from each section's own text only (no curated phrasings): the shared rule every section is
    # ranked by when some documents have per-section evidence and others none (:func:`gate`); None: not needed.
    plain: Scores | None = None
    # The sections whose statistics the z-scores take (:func:`zscore`): those of the documents the calibration was
    # fitted on, when some were added or changed since (:attr:`bot.engine.retrieve.Engine.hidden`); None: all.
    reference: np.ndarray | None = None
    # The dense and lexical scores the fit's statistics saw, when a document changed since (:func:`zscore`'s
    # ``basis``: its sections with their curated phrasings); None: ``dense`` and ``lexical`` themselves.
    fitted_dense: np.ndarray | None = None
    fitted_lexical: np.ndarray | None = None

    @cached_property
    def z_dense(self) -> np.ndarray:
        """``dense`` z-scored, once: calibration ranks the same scores under every weight of its grid."""
        return zscore(self.dense, self.reference, self.fitted_dense)

    @cached_property
    def z_lexical(self) -> np.ndarray:
        """``lexical`` z-scored, once (as :attr:`z_dense`)."""
        return zscore(self.lexical, self.reference, self.fitted_lexical)

    def fused(self, lexical_weight: float) -> np.ndarray:
        """:func:`fuse` of these scores, from the z-scores kept on them.

        >>> s = Scores(np.zeros(2), np.array([0.9, 0.8, 0.7]), np.array([0.0, 0.0, 9.0]), [], 0.0, {}, [])
        >>> s.fused(0.5).round(2)
        array([ 0.87, -0.35, -0.52], dtype=float32)
        """
        return self.z_dense + lexical_weight * self.z_lexical


def plain_of(scores: Scores | None) -> Scores | None:
    """The scores from each section's own text only (:attr:`Scores.plain`), or these scores when they are the same."""
    return scores.plain if scores is not None and scores.plain is not None else scores


def score(
    catalog: Catalog,
    queries: QueryCache,
    search_text: str,
    use_meta: bool = True,
    tokens: Sequence[str] | None = None,
    *,
    hidden: frozenset[str] = frozenset(),
    all_known: bool = True,
    new: frozenset[str] | None = None,
) -> Scores:
    """The scores of one search text (``tokens``: its tokens when the message was read already); ``hidden``:
    documents scored as if never curated; ``all_known``: every section has evidence of its own (else the scores
    from each section's own text are kept beside, for the shared rule); ``new``: the documents the calibration's
    statistics never counted (default: ``hidden``) — left out of the z-scores' mean and spread and of the BM25
    the others are scored by. A document only changed since the fit stays counted (the fit's statistics had it),
    so an edit to one page shifts the others' scores by that page's edit alone."""
    query_vector = queries.embed(search_text)
    new = hidden if new is None else new
    dense, best_by_language = dense_scores(catalog, query_vector, use_meta, hidden)
    lexical, matched, coverage, tokens = lexical_scores(catalog, search_text, use_meta, tokens, hidden, new)
    reference = ~catalog.hidden_sections(new) if new else None
    fitted_dense = fitted_lexical = None
    if use_meta and hidden - new:  # changed documents: counted as the fit counted them
        fitted_dense, _ = dense_scores(catalog, query_vector, use_meta, new)
        fitted_lexical, _, _, _ = lexical_scores(catalog, search_text, use_meta, tokens, new)
    plain = None
    if use_meta and not all_known and catalog.index.meta:
        # Some documents have no curated phrasings: the shared rule reads every section's own text only.
        plain_dense, _ = dense_scores(catalog, query_vector, False, hidden)
        plain_lexical, _, _, _ = lexical_scores(catalog, search_text, False, tokens, hidden)
        # The shared rule's scores stay standardised over every section: a page nobody labelled is ranked by them
        # against the others exactly as before it had neighbours that were fitted (:func:`bot.engine.rank.gate`).
        plain = Scores(query_vector, plain_dense, plain_lexical, matched, coverage, best_by_language, tokens)
    return Scores(
        query_vector,
        dense,
        lexical,
        matched,
        coverage,
        best_by_language,
        tokens,
        plain,
        reference,
        fitted_dense,
        fitted_lexical,
    )


def dense_scores(
    catalog: Catalog, query_vector: np.ndarray, use_meta: bool = True, hidden: frozenset[str] = frozenset()
) -> tuple[np.ndarray, dict[bool, float]]:
    """Per section, the best cosine between the query and any of its keys;
    and the best cosine among Chinese keys (True) and among the other keys (False)."""
    n_sections = len(catalog.index.sections)
    scores = np.full(n_sections, -1.0, dtype=np.float32)
    if n_sections == 0 or catalog.index.dense.ntotal == 0:
        return scores, {}
    top = min(DENSE_CANDIDATES, catalog.index.dense.ntotal)
    sims, rows = catalog.index.dense.search(query_vector[None, :], top)
    owners = catalog.index.key_sections
    key_is_zh = catalog.index.key_is_zh
    is_meta = None if use_meta else catalog.index.key_is_meta
    if is_meta is None and hidden:  # a held-out document's curated phrasings are not there
        is_meta = catalog.index.key_is_meta & catalog.hidden_sections(hidden)[owners]
    best_by_language: dict[bool, float] = {}
    for sim, row in zip(sims[0], rows[0]):
        if row < 0 or (is_meta is not None and is_meta[row]):
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


def lexical_scores(
    catalog: Catalog,
    search_text: str,
    use_meta: bool = True,
    tokens: Sequence[str] | None = None,
    hidden: frozenset[str] = frozenset(),
    new: frozenset[str] | None = None,
) -> tuple[np.ndarray, list[str], float, list[str]]:
    """BM25 per section, the query tokens the KB knows, their share of all query tokens, and all tokens
    (``tokens``: the search text's tokens when the message was read already; ``new``: as :func:`score`'s)."""
    new = hidden if new is None else new
    tokens = list(tokens) if tokens is not None else list(dict.fromkeys(tokenize(search_text[:LEXICAL_CHARS])))
    bm25 = catalog.index.bm25 if use_meta else catalog.plain_bm25
    vocab = bm25.vocab_dict
    known = [t for t in tokens if t in vocab]
    # Sizes and counts ("1024", "1.5gb") say nothing about the topic.
    worded = [t for t in tokens if not QUANTITY.match(t)]
    coverage = sum(1 for t in worded if t in vocab) / len(worded) if worded else 0.0
    if not known:
        return np.zeros(len(catalog.index.sections), dtype=np.float32), [], coverage, tokens
    scores = np.asarray(bm25.get_scores(known), dtype=np.float32)
    if use_meta and hidden:  # a held-out document's sections scored on their own text
        held_out = catalog.hidden_sections(hidden)
        plain_known = [t for t in tokens if t in catalog.plain_bm25.vocab_dict]
        plain = catalog.plain_bm25.get_scores(plain_known) if plain_known else np.zeros(len(scores))
        scores = np.where(held_out, np.asarray(plain, dtype=np.float32), scores)
    if use_meta and new:
        # The others as over their own corpus: a page added moves no term's weight (IDF, mean length) for them.
        fitted_bm25, at = catalog.fitted_bm25(new)
        fitted_known = [t for t in tokens if t in fitted_bm25.vocab_dict]
        if len(at):
            fitted = fitted_bm25.get_scores(fitted_known) if fitted_known else np.zeros(len(at))
            keep = ~catalog.hidden_sections(hidden)[at]  # a changed document's sections stay on their own text
            scores[at[keep]] = np.asarray(fitted, dtype=np.float32)[keep]
    return scores, known, coverage, tokens


def margin(index: KnowledgeIndex, scores: Scores) -> float:
    """Best KB match minus the best off-topic question *in that match's language*.

    Matching across languages costs e5 about 0.06 of cosine, so an English question on
    Chinese-only documents would otherwise lose to any English off-topic question.
    """
    background = index.background
    if not scores.best_by_language or not len(background):
        return -1.0
    match_is_zh = max(scores.best_by_language, key=scores.best_by_language.get)
    same_language = background[index.background_is_zh == match_is_zh]
    if not len(same_language):
        same_language = background
    return scores.best_by_language[match_is_zh] - float((same_language @ scores.query_vector).max())


class QueryCache:
    """Query vectors remembered by :func:`query_key` of what the embedder reads, most recent last, at most
    :attr:`size` of them (calibration raises it: every labelled question embedded once)."""

    def __init__(self, embedder: Embedder, size: int = QUERY_CACHE_SIZE) -> None:
        self.embedder = embedder
        self.size = size
        self.vectors: OrderedDict[bytes, np.ndarray] = OrderedDict()  # query_key(text) -> vector
        self._lock = threading.Lock()

    def reads_only_head(self, search_text: str) -> bool:
        """True when the embedder and the lexical search both read only a head of ``search_text``: anything joined
        after it changes neither its vector nor its tokens."""
        cut = getattr(self.embedder, "max_chars", 0)
        return bool(cut) and len(search_text) >= max(cut, LEXICAL_CHARS)

    def what_the_embedder_reads(self, text: str) -> str:
        """The head of ``text`` the embedder reads (its ``max_chars``, when it cuts): the query cache's key and input."""
        cut = getattr(self.embedder, "max_chars", 0)
        return text[:cut] if cut else text

    def cache_key(self, search_text: str) -> bytes:
        """The key a search text's vector is remembered under (:meth:`remember`, :meth:`remembered`)."""
        return query_key(self.what_the_embedder_reads(search_text))

    def prefetch(self, texts: Iterable[str], *, batch: int = 32, progress: Callable[[int], None] | None = None) -> int:
        """Embed the search texts not yet remembered, ``batch`` at a time, and remember them (calibration reads
        thousands of labelled messages: one call per message costs several times as much). Returns how many were
        embedded."""
        missing: dict[bytes, str] = {}
        with self._lock:
            for text in texts:
                text = self.what_the_embedder_reads(text)  # keyed as embed keys it
                key = query_key(text)
                if key not in self.vectors:
                    missing[key] = text
        items = list(missing.items())
        for start in range(0, len(items), batch):
            chunk = items[start : start + batch]
            vectors = self.embedder.embed([text for _, text in chunk], role="query")
            self.remember({key: vector for (key, _), vector in zip(chunk, vectors)})
            if progress is not None:
                progress(len(chunk))
        return len(items)

    def remember(self, vectors: dict[bytes, np.ndarray]) -> None:
        """Query vectors by :func:`query_key` (a calibration's stored ones), most recent last."""
        with self._lock:
            for key, vector in vectors.items():
                self.vectors[key] = np.asarray(vector, dtype=np.float32)
            while len(self.vectors) > self.size:
                self.vectors.popitem(last=False)

    def remembered(self) -> dict[bytes, np.ndarray]:
        with self._lock:
            return dict(self.vectors)

    def embed(self, search_text: str) -> np.ndarray:
        """Query vector, remembered for repeated questions (clicked examples, suggestions, retries).

        Keyed by a digest of the text, not the text: a question may be 100,000 characters (4 bytes each in
        CPython once it holds an emoji), and 1,024 of them as keys held about 440 MB. Keyed by what the embedder
        reads (its ``max_chars``, when it cuts): a follow-up joined with its case's words after a long message is
        the same head, the same vector.
        """
        search_text = self.what_the_embedder_reads(search_text)
        key = query_key(search_text)
        with self._lock:
            cached = self.vectors.get(key)
            if cached is not None:
                self.vectors.move_to_end(key)
                return cached
        vector = self.embedder.embed([search_text], role="query")[0]
        with self._lock:
            self.vectors[key] = vector
            while len(self.vectors) > self.size:
                self.vectors.popitem(last=False)
        return vector
