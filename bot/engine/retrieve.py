"""Question or pasted log -> distinct cited sections, best first, with a tier and its reason.

Ranking, per section: z(dense) + w_lex z(BM25) + w_subj (share of the question's subjects
the section covers), where

- dense is the best cosine between the query and any key of the section (body chunks,
  the heading, curated phrasings and English titles);
- BM25 runs over section text with a tokenizer that keeps error strings whole;
- subjects are what the question is specifically about (PyTorch, Jetson, PaddleOCR, …,
  :mod:`bot.engine.subjects`).

Confidence is a calibrated probability (:mod:`bot.engine.calibration`) from a few features:
the margin of the best match over a shipped set of off-topic questions
(``bot/data/background.txt``; e5 scores off-topic questions as high as real ones, so no
raw-cosine cut works), how much of the question the knowledge base and the best section
know, and which of its subjects no section or not the best one covers. The tier —
answer, tentative, none — follows from thresholds fitted by ``python -m bot calibrate``.
Follow-ups and "that didn't help" are ranked here too (:class:`Context`); the conversation
only phrases the result.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable

import numpy as np

from bot.engine.calibration import Calibration, load_for
from bot.kb.embed import Embedder, make_embedder
from bot.kb.index import IndexProblem, KnowledgeIndex, build_index, load_index, section_documents
from bot.kb.meta import SectionMeta
from bot.kb.parse import FIX_FIELDS
from bot.engine.reasons import reason
from bot.records import Answer, Hit, Section
from bot.settings import Settings
from bot.kb.signature import extract_signature, looks_like_log
from bot.engine.subjects import Lexicon, document_frameworks
from bot.kb.tokenize import detect_language, tokenize, warm_up

DENSE_CANDIDATES = 400  # nearest keys looked at per query
QUERY_CACHE_SIZE = 1024
# Head of a cut input kept for what the user typed; the rest of the budget keeps the log's tail (the error).
HEAD_SHARE = 0.2
# Frameworks, operating systems and devices: a fix for another one does not carry over, so a
# question naming one the cited section does not cover is never a confident answer.
HARD_CATEGORIES = ("framework", "hardware")
MAJOR_CATEGORIES = ("framework", "hardware", "product")
CARRIED_CATEGORIES = ("framework", "product", "os", "hardware", "tool")
# A follow-up ("那多机呢？") is ranked by its own words plus the words joined with the previous question;
# its own words count double, or the previous question (which already had its answer) drowns them.
FOLLOW_UP_OWN_WEIGHT = 2.0
# Sections shown beside the best one need this share of its fused score (fused scores are relative z-scores).
RELEVANT_SHARE = 0.3
CATEGORY_ORDER = ("framework", "hardware", "os", "product", "tool", "feature", "library", "error")

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_QUANTITY = re.compile(r"^\d[\d.]*[a-z]{0,3}$")
_CJK_LINE = re.compile(r"[\u4e00-\u9fff]{2,}")
_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[ \t]*$", re.MULTILINE | re.DOTALL)


def sanitize(text: str, limit: int) -> tuple[str, int]:
    """Make user text safe to process: valid Unicode, no control characters, at most ``limit`` chars.

    Returns the text and its original length when it had to be cut (else 0). A cut keeps
    the first lines (what the user typed above a paste) and the tail (where a traceback's
    error is), joined by a line saying what was left out.

    >>> sanitize("a\\x00b\\ud800c", 10)
    ('a b\\ufffdc', 0)
    >>> cut, total = sanitize("why?\\n" + "noise\\n" * 50 + "Error: boom", 40)
    >>> cut.splitlines()[0], cut.splitlines()[-1], total, len(cut) <= 40
    ('why?', 'Error: boom', 316, True)
    """
    if not isinstance(text, str):
        text = str(text)
    original = len(text)
    if original > limit:
        text = _head_and_tail(text, limit)
    # Lone surrogates (from broken clipboards or JSON) become U+FFFD instead of crashing encoders.
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    text = _CONTROL.sub(" ", text)
    return text, (original if original > limit else 0)


def _head_and_tail(text: str, limit: int) -> str:
    marker = "\n…\n"
    budget = max(limit - len(marker), 0)
    head = text[: int(budget * HEAD_SHARE)]
    if "\n" in head:  # whole lines only
        head = head[: head.rindex("\n")]
    tail = text[len(text) - (budget - len(head)) :] if budget > len(head) else ""
    if "\n" in tail[:-1]:
        tail = tail[tail.index("\n") + 1 :]
    return (head + marker + tail)[:limit]


def _zscore(values: np.ndarray) -> np.ndarray:
    spread = float(values.std()) if len(values) else 0.0
    if spread < 1e-9:
        return np.zeros_like(values, dtype=np.float32)
    return ((values - values.mean()) / spread).astype(np.float32)


@dataclass(frozen=True)
class Context:
    """What the conversation so far tells the engine about the next message.

    ``follow_up``: the message only makes sense with ``previous`` ("那多机呢？");
    ``retry``: the user said the last answer did not help — search ``previous`` again,
    skip ``skip``, and offer only sections that answer something (never a code step);
    ``subjects``: what the conversation is about (its framework stays unless the user names another).
    """

    previous: str = ""
    subjects: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset()
    follow_up: bool = False
    retry: bool = False


@dataclass
class _Scores:
    """Per-section evidence for one search text."""

    query_vector: np.ndarray
    dense: np.ndarray
    lexical: np.ndarray
    matched: list[str]
    coverage: float
    best_by_language: dict[bool, float]
    tokens: list[str]


class Engine:
    """The retrieval engine over one loaded index: ranking, confidence and tier are decided here only."""

    def __init__(self, index: KnowledgeIndex, embedder: Embedder, settings: Settings,
                 calibration: Calibration | None = None) -> None:
        self.index = index
        self.embedder = embedder
        self.settings = settings
        self.calibration = calibration or load_for(settings.index_dir, embedder.id)
        self.lexicon = Lexicon.load()
        self._by_key = {s.key: n for n, s in enumerate(index.sections)}
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._section_tokens: dict[int, frozenset[str]] = {}

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

    @cached_property
    def _named(self) -> list[set[str]]:
        """Per section, the subjects its own text names (heading path and body, not curated phrasings)."""
        return [self.lexicon.find(" ".join(s.path) + "\n" + s.text) for s in self.sections]

    @cached_property
    def main_frameworks(self) -> list[frozenset[str]]:
        """Per section, the main framework(s) of its document (a Paddle FAQ that mentions TensorFlow once is Paddle)."""
        per_doc = document_frameworks(self.lexicon, [s.source for s in self.sections], self._named)
        return [per_doc.get(s.source, frozenset()) for s in self.sections]

    @cached_property
    def coverage(self) -> list[frozenset[str]]:
        """Per section, the subjects it covers: its own mentions plus its document's main frameworks."""
        return [frozenset(named | main) for named, main in zip(self._named, self.main_frameworks)]

    @cached_property
    def covered_anywhere(self) -> frozenset[str]:
        return frozenset().union(*self.coverage) if self.coverage else frozenset()

    @cached_property
    def _cover_matrix(self) -> tuple[dict[str, int], np.ndarray]:
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
        return np.array([_answers_something(s) for s in self.sections], dtype=bool)

    def frameworks(self, subjects: Iterable[str]) -> frozenset[str]:
        return frozenset(s for s in subjects if self.lexicon.category(s) == "framework")

    def subjects_of(self, text: str) -> frozenset[str]:
        return frozenset(self.lexicon.find(text))

    # ------------------------------------------------------------ asking

    def ask(self, text: str, *, k: int = 10, context: Context | None = None, mode: str = "hybrid",
            use_meta: bool = True, exclude: Iterable[str] = ()) -> Answer:
        """Answer one question or pasted log: up to ``k`` distinct sections, a tier and its reason.

        ``mode`` "dense" or "bm25" ranks by one kind of evidence only and ``use_meta=False``
        ignores curated phrasings (baselines for ``bot eval``); the product uses the defaults.
        """
        context = context or Context()
        text, truncated_from = sanitize(text, self.settings.max_input_chars)
        language = detect_language(text)
        if not _has_words(text):
            return Answer(query=text, language=language, tier="none", hits=(), truncated_from=truncated_from,
                          reason=reason(language, "empty"))
        signature, search_text = self._search_text(text)
        subjects = self._main_subjects(self.subjects_of(text))
        if context.follow_up or context.retry:
            # The conversation's framework stays unless this message names another one.
            # A follow-up changes one thing. Naming another framework, product, OS or device ("what about
            # TensorFlow?") keeps the topic (OOM, NCCL) and drops the old frameworks; otherwise ("那多机呢？")
            # the setting carries over and the topic is the follow-up's own.
            setting = {s for s in context.subjects if self.lexicon.category(s) in CARRIED_CATEGORIES}
            if any(self.lexicon.category(s) in CARRIED_CATEGORIES for s in subjects):
                carried = (set(context.subjects) - setting) | (setting - self.frameworks(setting))
            else:
                carried = setting
            subjects = subjects | frozenset(carried)
        cal = self.calibration

        scores = self._scores(search_text, use_meta)
        fused = self._rank(scores, subjects, mode)
        title = _title(text) if not context.follow_up else ""
        if title and cal.title_weight and mode == "hybrid":
            # The first line of a long post says what it is about; the body dilutes it.
            fused = fused + cal.title_weight * self._rank(self._scores(title, use_meta), frozenset(), mode, subject=False)
        probability_of = [scores]
        if context.follow_up and context.previous:
            joined = self._scores(f"{context.previous}\n{search_text}", use_meta)
            fused = FOLLOW_UP_OWN_WEIGHT * fused + self._rank(joined, subjects, mode)
            probability_of.append(joined)

        allowed = np.ones(len(self.sections), dtype=bool)
        for key in (*context.skip, *exclude):
            n = self._by_key.get(key)
            if n is not None:
                allowed[n] = False
        if context.retry:
            allowed &= self.answer_bearing
            wanted = self.frameworks(subjects)
            if wanted:  # after a TensorFlow answer, never a Paddle-only section
                allowed &= np.array([not main or bool(main & wanted) for main in self.main_frameworks], dtype=bool)
        if not len(fused) or not allowed.any():
            return Answer(query=text, language=language, tier="none", hits=(), signature=signature,
                          search_text=search_text, truncated_from=truncated_from, subjects=tuple(sorted(subjects)),
                          reason=reason(language, "retry_none" if context.retry else "nothing"))
        masked = np.where(allowed, fused, -np.inf)
        head = np.argsort(-masked, kind="stable")[:k]
        order = [int(n) for n in head if allowed[n]]
        top = order[0]

        features = [self.features(s, top, subjects, text) for s in probability_of]
        probability = max(cal.probability(f) for f in features)
        uncovered = self._uncovered(subjects, top)
        tier = cal.tier(probability, hard_uncovered=self.hard_uncovered(uncovered),
                        margin=max(f["margin"] for f in features), coverage=max(f["coverage"] for f in features))
        if context.retry and tier == "none":
            tier = "tentative"  # the user asked for the next candidate: show it, marked as doubtful
        hits = tuple(
            Hit(section=self.sections[n], score=float(fused[n]), dense=float(scores.dense[n]),
                lexical=float(scores.lexical[n]), matched_terms=tuple(self._terms_in(scores.matched, n)))
            for n in order
        )
        best = hits[0].score
        worth = 1 + sum(1 for h in hits[1:] if best > 0 and h.score >= RELEVANT_SHARE * best)
        return Answer(
            query=text, language=language, tier=tier, hits=hits, signature=signature, search_text=search_text,
            truncated_from=truncated_from, confidence=probability, worth_showing=worth,
            reason="" if tier == "answer" else self._reason(language, tier, top, uncovered),
            subjects=tuple(sorted(subjects)), uncovered=tuple(uncovered),
        )

    # ------------------------------------------------------------ evidence

    def _search_text(self, text: str) -> tuple[str, str]:
        """(error signature or "", what to search): for a pasted log, its error lines and the user's own words."""
        if not looks_like_log(text):
            return "", text.strip()
        sig = extract_signature(text)
        # The user's own words around a paste (usually Chinese) say what they ask.
        asked = [line.strip() for line in text.splitlines()[:50] if _CJK_LINE.search(line) and len(line) < 300]
        return sig.headline, ("\n".join([sig.search_text(), *asked[:3]]).strip() or text.strip())

    def _scores(self, search_text: str, use_meta: bool = True) -> _Scores:
        query_vector = self._embed_query(search_text)
        dense, best_by_language = self._dense_scores(query_vector, use_meta)
        lexical, matched, coverage, tokens = self._lexical_scores(search_text, use_meta)
        return _Scores(query_vector, dense, lexical, matched, coverage, best_by_language, tokens)

    def _rank(self, scores: _Scores, subjects: frozenset[str], mode: str, subject: bool = True) -> np.ndarray:
        """z(dense) + w_lex z(bm25) + w_subj (share of the question's subjects the section covers)."""
        cal = self.calibration
        if mode == "dense":
            return _zscore(scores.dense)
        if mode == "bm25":
            return _zscore(scores.lexical)
        if mode != "hybrid":
            raise ValueError(f"mode must be 'hybrid', 'dense' or 'bm25', not {mode!r}")
        fused = self._fuse(scores.dense, scores.lexical, cal.lexical_weight)
        return fused + cal.subject_weight * self.subject_share(subjects) if subject else fused

    def subject_share(self, subjects: Iterable[str]) -> np.ndarray:
        row, matrix = self._cover_matrix
        rows = [row[s] for s in subjects if s in row]
        n = len(set(subjects))
        if not rows or not n:
            return np.zeros(len(self.sections), dtype=np.float32)
        return matrix[rows].sum(axis=0) / n

    def features(self, scores: _Scores, top: int, subjects: frozenset[str], text: str) -> dict[str, float]:
        """The confidence model's inputs (see :data:`bot.engine.calibration.FEATURES`)."""
        covered = self.coverage[top] if self.coverage else frozenset()
        subjects = self._main_subjects(subjects)
        foreign = [s for s in subjects if s not in self.covered_anywhere]
        major = [s for s in foreign if self.lexicon.category(s) in MAJOR_CATEGORIES]
        elsewhere = [s for s in subjects if s in self.covered_anywhere and s not in covered]
        specific = [t for t in scores.tokens if len(t) > 1 and not _QUANTITY.match(t)]
        section_tokens = self._tokens_of(top)
        overlap = sum(1 for t in specific if t in section_tokens) / len(specific) if specific else 0.0
        return {
            "margin": self._margin(scores),
            "coverage": scores.coverage,
            "top_overlap": overlap,
            "foreign_major": float(min(len(major), 3)),
            "foreign_minor": float(min(len(foreign) - len(major), 3)),
            "uncovered_top": float(min(len(elsewhere), 3)),
            "dense_top": float(scores.dense[top]),
            "is_log": 1.0 if looks_like_log(text) else 0.0,
        }

    def hard_uncovered(self, uncovered: Iterable[str]) -> bool:
        return any(self.lexicon.category(s) in HARD_CATEGORIES for s in uncovered)

    def _main_subjects(self, subjects: Iterable[str]) -> frozenset[str]:
        """Drop frameworks named in passing: "之前用torch时…" in a Paddle question is not about PyTorch.

        When the question names a framework the knowledge base covers, the other frameworks it
        names are comparisons or history, not what it asks about.
        """
        subjects = frozenset(subjects)
        named = self.frameworks(subjects)
        if named & self.covered_anywhere:
            subjects = subjects - (named - self.covered_anywhere)
        return subjects

    def _uncovered(self, subjects: frozenset[str], top: int) -> list[str]:
        covered = self.coverage[top] if self.coverage else frozenset()
        missing = [s for s in self._main_subjects(subjects) if s not in covered]
        rank = {c: n for n, c in enumerate(CATEGORY_ORDER)}
        return sorted(missing, key=lambda s: (rank.get(self.lexicon.category(s), 99), s))

    def _reason(self, language: str, tier: str, top: int, uncovered: list[str]) -> str:
        closest = self._label(self.sections[top], language)
        # Implied parents (PaddlePaddle for PaddleOCR) are named through their child.
        implied = {i for s in uncovered for i in self.lexicon.subjects[s].implies}
        uncovered = [s for s in uncovered if s not in implied]
        foreign = [s for s in uncovered if s not in self.covered_anywhere]
        if foreign:
            return reason(language, "uncovered", subjects=foreign[:3], closest=closest)
        if uncovered:
            return reason(language, "uncovered_top", subjects=uncovered[:3], closest=closest)
        return reason(language, "nothing" if tier == "none" else "weak", closest=closest)

    def _label(self, section: Section, language: str) -> str:
        meta = self.meta(section.key)
        if language != "zh" and meta is not None and meta.title_en.strip():
            return meta.title_en.strip()
        label = re.sub(r"^`?已审核`?\s*(?:\d+\s*[.、．]\s*)?", "", section.heading)
        label = re.sub(r"^\d+\s*[.、．]\s*(?=问题)", "", label)
        return re.sub(r"^问题\s*[:：]\s*", "", label).strip() or section.heading

    def _tokens_of(self, n: int) -> frozenset[str]:
        tokens = self._section_tokens.get(n)
        if tokens is None:
            section = self.sections[n]
            tokens = frozenset(tokenize(section_documents(section, self.meta(section.key))[:20_000]))
            self._section_tokens[n] = tokens
        return tokens

    def _terms_in(self, matched: list[str], n: int) -> list[str]:
        """The matched query terms that occur in this section (highlighting is per section)."""
        tokens = self._tokens_of(n)
        return [t for t in matched if t in tokens][:12]

    def _margin(self, scores: _Scores) -> float:
        """Best KB match minus the best off-topic question *in that match's language*.

        Matching across languages costs e5 about 0.06 of cosine, so an English question on
        Chinese-only documents would otherwise lose to any English off-topic question.
        """
        background = self.index.background
        if not scores.best_by_language or not len(background):
            return -1.0
        match_is_zh = max(scores.best_by_language, key=scores.best_by_language.get)
        same_language = background[self.index.background_is_zh == match_is_zh]
        if not len(same_language):
            same_language = background
        return scores.best_by_language[match_is_zh] - float((same_language @ scores.query_vector).max())

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

    def _dense_scores(self, query_vector: np.ndarray, use_meta: bool = True) -> tuple[np.ndarray, dict[bool, float]]:
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
        is_meta = None if use_meta else self.index.key_is_meta
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

    def _lexical_scores(self, search_text: str, use_meta: bool = True) -> tuple[np.ndarray, list[str], float, list[str]]:
        """BM25 per section, the query tokens the KB knows, their share of all query tokens, and all tokens."""
        tokens = list(dict.fromkeys(tokenize(search_text[:5_000])))
        bm25 = self.index.bm25 if use_meta else self._plain_bm25
        vocab = bm25.vocab_dict
        known = [t for t in tokens if t in vocab]
        # Sizes and counts ("1024", "1.5gb") say nothing about the topic.
        worded = [t for t in tokens if not _QUANTITY.match(t)]
        coverage = sum(1 for t in worded if t in vocab) / len(worded) if worded else 0.0
        if not known:
            return np.zeros(len(self.index.sections), dtype=np.float32), [], coverage, tokens
        return np.asarray(bm25.get_scores(known), dtype=np.float32), known, coverage, tokens

    @cached_property
    def _plain_bm25(self):
        """BM25 without curated metadata, built on demand for the evaluation's "no meta" figures."""
        import bm25s

        bm25 = bm25s.BM25()
        corpus = [tokenize(section_documents(s, None)) or ["\u2205"] for s in self.sections]
        bm25.index(corpus or [["\u2205"]], show_progress=False)
        return bm25

    @staticmethod
    def _fuse(dense: np.ndarray, lexical: np.ndarray, lexical_weight: float = 0.5) -> np.ndarray:
        """z(dense) + lexical_weight * z(lexical), per section.

        >>> Engine._fuse(np.array([0.9, 0.8, 0.7]), np.array([0.0, 0.0, 9.0])).round(2)
        array([ 0.87, -0.35, -0.52], dtype=float32)
        """
        return _zscore(dense) + lexical_weight * _zscore(lexical)


def _title(text: str) -> str:
    """The first line of a multi-line message when it reads like a title (short), else "".

    >>> _title("Training hangs on 8 GPUs\\nlog line 1\\nlog line 2"), _title("one line only")
    ('Training hangs on 8 GPUs', '')
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if len(lines) > 1 and len(lines[0]) <= 200 and _has_words(lines[0]) else ""


def _has_words(text: str) -> bool:
    """Anything to search: at least two letters, digits or CJK characters in a row."""
    return bool(re.search(r"[^\W_]{2}", text))


def _answers_something(section: Section) -> bool:
    """FAQ entries and sections with prose of their own; not a code-only step of a how-to."""
    if any(name in FIX_FIELDS or name == "答" for name, _ in section.fields):
        return True
    prose = _FENCED.sub("", section.text)
    prose = re.sub(r"<[^>\n]{0,300}>|!\[[^\]\n]*\]\([^)\n]*\)|\s+", "", prose)
    return len(prose) >= 80
