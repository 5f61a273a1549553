"""The knowledge base's self-test at build: hit@1 on its own pseudo-questions (:mod:`bot.kb.pseudo`), each scored
with the text it came from held out of its section, for the product's shared rule, dense alone and BM25 alone.

Why held out: a pseudo-question is a span of its section ("Q: why OOM?"), so matched against the full section it
would find itself by string identity. Here its own section is scored without it, every other section as it is:

- dense: the section's keys that hold any of the question's spans are left out (the chunk that quotes a log, for a
  log); when none is left (a heading question: every chunk's breadcrumb holds the heading), one vector of the section's
  breadcrumb and body with the spans cut out (its first ``chunk_size`` characters) stands in for them;
- BM25: the section's document is counted without the spans' words (the corpus's IDF and mean length as built).

What ranks is the shared rule, the one every page nobody labelled is ranked by (:func:`bot.engine.rank.gate`):
``z(dense) + lexical z(BM25) + subject share`` with the calibration's weights, over each section's own text (no
curated phrasings, precedents or adapter). Cost at build: a batch of the questions and one of the held-out bodies
through the embedder (reused by the next build when unchanged, like the keys), then a few matrix products.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bot.engine.calibration import Weights, load_for
from bot.engine.standard import zscore
from bot.engine.subjects import Lexicon
from bot.kb.domain import Domain
from bot.kb.index import section_documents
from bot.kb.pseudo import PseudoQuestion, contains, cut, draw, held_out
from bot.kb.selftest import KbFigures, SelfTest
from bot.kb.tokenize import tokenize
from bot.records import Section
from bot.settings import Settings

TOP = "(top)"  # the knowledge base of the files at the seeds' top level
BM25_K1, BM25_B = 1.5, 0.75  # bm25s's defaults, which the index's BM25 uses
LEXICAL_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)  # BM25's weight beside dense: what a company's own labels fit
FOLDS = 5

Embed = Callable[[Sequence[tuple[str, str]]], np.ndarray]  # (role, text) pairs -> their vectors, one batch


def kb_of(source: str) -> str:
    """The knowledge base of a document: its top-level folder under the seeds.

    >>> kb_of("kb5/faq.md"), kb_of("paddle.txt")
    ('kb5', '(top)')
    """
    return source.split("/", 1)[0] if "/" in source else TOP


class _Bm25:
    """Lucene's BM25 (bm25s's default) over each section's own text, with one document swapped for a held-out one."""

    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        self.counts = [Counter(d) for d in documents]
        self.lengths = np.array([len(d) for d in documents], dtype=np.float32)
        self.average = float(self.lengths.mean()) if len(documents) else 1.0
        df = Counter(t for c in self.counts for t in c)
        n = len(documents)
        self.idf = {t: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self._tf: dict[str, np.ndarray] = {}

    def _term(self, term: str) -> np.ndarray:
        if term not in self._tf:
            tf = np.array([c.get(term, 0) for c in self.counts], dtype=np.float32)
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * self.lengths / max(self.average, 1e-9))
            self._tf[term] = self.idf[term] * tf / (tf + norm)
        return self._tf[term]

    def scores(self, tokens: Sequence[str], own: int, held: Sequence[str]) -> np.ndarray:
        """BM25 of ``tokens`` per section, section ``own`` counted without the tokens ``held`` (its held-out
        spans': subtracting them is the span cut out of the text, to jieba's segmentation at the span's edges)."""
        known = [t for t in dict.fromkeys(tokens) if t in self.idf]
        out = np.zeros(len(self.counts), dtype=np.float32)
        for term in known:
            out += self._term(term)
        counts = self.counts[own] - Counter(held)
        length = max(int(self.lengths[own]) - (sum(self.counts[own].values()) - sum(counts.values())), 0)
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / max(self.average, 1e-9))
        out[own] = sum(self.idf[t] * counts[t] / (counts[t] + norm) for t in known if counts.get(t))
        return out


def _held_tokens(document: str, spans: Sequence[str]) -> list[str]:
    """The tokens :func:`bot.kb.pseudo.held_out` cuts out of ``document``: each span's, once per occurrence."""
    return [token for span, times in cut(document, spans)[1] for token in tokenize(span) * times]


def _held_out_body(section: Section, q: PseudoQuestion, chunk_size: int) -> str:
    body = held_out(section.text, q.spans).strip()
    return f"{held_out(section.breadcrumb, q.spans).strip()}\n{body[:chunk_size]}"


def score(
    sections: Sequence[Section],
    keys: Sequence[tuple[int, str, str, str]],
    vectors: np.ndarray,
    covers: Sequence[frozenset[str]],
    documents: Sequence[Sequence[str]],
    questions: Sequence[PseudoQuestion],
    embed: Embed,
    lexicon: Lexicon,
    chunk_size: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per question and section: dense, BM25 and subject share, the question's own section held out."""
    n, m = len(sections), len(questions)
    plain = np.array([kind != "meta" for _, kind, _, _ in keys], dtype=bool)
    owners = np.array([s for s, _, _, _ in keys], dtype=np.int64)
    qv = embed([("query", q.text) for q in questions])
    dense = np.full((m, n), -1.0, dtype=np.float32)
    sims = (qv @ vectors[plain].T).astype(np.float32) if plain.any() else np.zeros((m, 0), np.float32)
    plain_owners = owners[plain]
    for i in range(m):
        np.maximum.at(dense[i], plain_owners, sims[i])
    own_keys: dict[int, list[tuple[int, str]]] = {}  # section -> (column of sims, key text), the sections asked about
    wanted = {q.section for q in questions}
    for j, row in enumerate(np.flatnonzero(plain)):
        if owners[row] in wanted:
            own_keys.setdefault(int(owners[row]), []).append((j, keys[row][3]))
    kept = [[j for j, text in own_keys.get(q.section, ()) if not contains(text, q.spans)] for q in questions]
    # A question whose spans every key of its section holds (a heading: every chunk's breadcrumb holds it) is scored
    # on one vector of the section without them instead; the others on their section's keys that do not hold them.
    bare = [i for i in range(m) if not kept[i]]
    bodies = embed(
        [("passage", _held_out_body(sections[questions[i].section], questions[i], chunk_size)) for i in bare]
    )
    body_of = dict(zip(bare, bodies))
    bm25 = _Bm25(documents)
    lexical = np.zeros((m, n), dtype=np.float32)
    share = np.zeros((m, n), dtype=np.float32)
    for i, q in enumerate(questions):
        own, section = q.section, sections[q.section]
        dense[i, own] = float(body_of[i] @ qv[i]) if i in body_of else float(sims[i, kept[i]].max())
        lexical[i] = bm25.scores(tokenize(q.text), own, _held_tokens(section_documents(section, None), q.spans))
        named = lexicon.find(q.text)
        if named:
            share[i] = np.array([len(named & c) / len(named) for c in covers], dtype=np.float32)
    return dense, lexical, share


def _right(fused: np.ndarray, answers: np.ndarray) -> np.ndarray:
    return fused.argmax(axis=1) == answers if fused.size else np.zeros(len(answers), bool)


def _z(rows: np.ndarray) -> np.ndarray:
    return np.stack([zscore(r) for r in rows]) if len(rows) else rows


def _folds(questions: Sequence[PseudoQuestion], sections: Sequence[Section]) -> np.ndarray:
    """Fold per question by document (every question of a document in one fold); one document alone: by section."""
    docs = sorted({sections[q.section].source for q in questions})
    if len(docs) >= 2:
        fold_of = {d: k % min(FOLDS, len(docs)) for k, d in enumerate(docs)}
        return np.array([fold_of[sections[q.section].source] for q in questions])
    return np.array([q.section % FOLDS for q in questions])


def figures(
    sections: Sequence[Section],
    questions: Sequence[PseudoQuestion],
    dense: np.ndarray,
    lexical: np.ndarray,
    share: np.ndarray,
    weights: Weights,
) -> tuple[KbFigures, ...]:
    """Per knowledge base: hit@1 of the shared rule, dense alone, BM25 alone; of BM25's weight chosen by hit@1 on
    the other documents' questions of the same knowledge base (held out by document), and that weight chosen on all
    of them (measured, not served: docs/evaluation.md, "Issue 42 item 2: pseudo-questions")."""
    zd, zl = _z(dense), _z(lexical)
    answers = np.array([q.section for q in questions], dtype=np.int64)
    product = _right(zd + weights.lexical * zl + weights.subject * share, answers)
    dense_right, bm25_right = _right(zd, answers), _right(zl, answers)
    grid = {lw: _right(zd + lw * zl + weights.subject * share, answers) for lw in LEXICAL_GRID}

    def best(rows: np.ndarray) -> float:  # ties: the calibration's weight, then the smaller
        return max(grid, key=lambda w: (grid[w][rows].mean(), w == weights.lexical, -w))

    kb = np.array([kb_of(sections[q.section].source) for q in questions])
    out = []
    for name in sorted(set(kb.tolist())):
        rows = np.flatnonzero(kb == name)
        mine = [questions[r] for r in rows]
        fold = _folds(mine, sections)
        fitted = np.zeros(len(rows), dtype=bool)
        for f in sorted(set(fold.tolist())):
            train, test = rows[fold != f], rows[fold == f]
            if not len(train):
                fitted[fold == f] = product[test]
                continue
            fitted[fold == f] = grid[best(train)][test]
        out.append(
            KbFigures(
                kb=name,
                n=len(rows),
                product=round(float(product[rows].mean()), 4),
                dense=round(float(dense_right[rows].mean()), 4),
                bm25=round(float(bm25_right[rows].mean()), 4),
                fitted=round(float(fitted.mean()), 4),
                lexical=best(rows),
                kinds=tuple(sorted(Counter(q.kind for q in mine).items())),
            )
        )
    return tuple(out)


class SelfTestHook:
    """The build's hook (:class:`bot.kb.index.SelfTestHook`): the self-test of the sections just built, with the
    calibration's weights for this embedder and the domain's FAQ convention and lexicon."""

    def __init__(self, settings: Settings, domain: Domain, lexicon: Callable[[], Lexicon]) -> None:
        self.settings, self.domain, self.lexicon = settings, domain, lexicon

    def __call__(
        self,
        sections: Sequence[Section],
        keys: Sequence[tuple[int, str, str, str]],
        vectors: np.ndarray,
        fact_rows: Sequence[dict[str, Any]] | None,
        documents: Sequence[Sequence[str]],
        embed: Embed,
        embedder_id: str,
    ) -> SelfTest:
        started = time.perf_counter()
        questions = draw(sections, self.domain.faq)
        if not questions:
            return SelfTest((), time.perf_counter() - started)
        covers = [frozenset((row or {}).get("covers", ())) for row in (fact_rows or [{}] * len(sections))]
        dense, lexical, share = score(
            sections, keys, vectors, covers, documents, questions, embed, self.lexicon(), self.settings.chunk_size
        )
        weights = load_for(self.settings.index_dir, embedder_id).weights
        kbs = figures(sections, questions, dense, lexical, share, weights)
        return SelfTest(kbs, round(time.perf_counter() - started, 3))
