"""The knowledge base's self-test: its own pseudo-questions (:mod:`bot.kb.pseudo`) fit the shared rule's weights
and measure the ranking before any label.

At build (:func:`bot.engine.retrieve.build`) every pseudo-question is scored the way a real question is
(:meth:`Engine.evidence` on each section's own text, no curated phrasings, no precedents, no adapter) except that
its own section is scored *with the question's source text removed* (:func:`bot.kb.pseudo.stripped`: its heading,
the problem field, the quoted error, wherever they occur in the section; its keys embedded again without them, its
BM25 document rebuilt without them). The lexical and subject weights of the shared rule (:data:`LEXICAL_GRID`,
:data:`SUBJECT_GRID`) are chosen by hit@1 on the questions of other documents (folds by document), and the held-out
hit@1 of the fitted rule is reported beside dense alone and BM25 alone: ``python -m bot build`` prints it,
``/admin`` shows it. The chosen weights are stored in the generation (``selftest.json``) and rank the documents
that have no evidence of their own (:func:`bot.engine.rank.gate`'s shared rule).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from bot.engine.calibration import Weights
from bot.engine.evidence import Evidence
from bot.engine.rank import rank
from bot.engine.rank_batch import RankingBatch
from bot.engine.scores import Scores
from bot.kb.embed import Embedder
from bot.kb.index import (
    IndexProblem,
    KnowledgeIndex,
    load_generation,
    read_manifest,
    retrieval_keys,
    section_documents,
)
from bot.kb.pseudo import PseudoQuestion, draw, stripped
from bot.kb.tokenize import tokenize
from bot.settings import Settings

log = logging.getLogger("bot.engine.selftest")

SELFTEST_FILE = "selftest.json"
VECTORS_FILE = "selftest_vectors.npz"  # the stripped keys' vectors, by hash: a rebuild embeds only what changed
VERSION = 1  # raise when what is drawn or how it is scored changes: older generations' fits are then ignored
LEXICAL_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
SUBJECT_GRID = (0.0, 0.5, 1.0, 2.0, 3.0)
FOLDS = 5
MIN_QUESTIONS = 20  # fewer: nothing is fitted, the calibration's weights stay
MAX_QUESTIONS = 240  # each costs its section's keys embedded once more at build


@dataclass(frozen=True)
class SelfTest:
    """What the pages taught before any label: the shared rule's weights and the held-out figures they were chosen
    by (``None`` weights: too few pseudo-questions, the calibration's stay)."""

    version: int = VERSION
    lexical: float | None = None
    subject: float | None = None
    questions: int = 0
    documents: int = 0
    folds: int = 0
    by_kind: dict = field(default_factory=dict)
    hit1: dict = field(default_factory=dict)  # held out: fitted, dense, bm25, calibration (the weights before)
    wins: int = 0  # held-out questions right only with the fitted weights
    losses: int = 0  # … right only with the calibration's
    chosen: dict = field(default_factory=dict)  # the weights the grid chose on every question (kept or not)

    def weights(self, base: Weights) -> Weights:
        """``base`` with the fitted weights as its shared rule's (:attr:`Weights.shared`), where they were fitted:
        the sections with evidence of their own keep ranking by ``base``.

        >>> SelfTest(lexical=2.0, subject=0.0).weights(Weights(0.5, 3.0)).shared
        Weights(lexical=2.0, subject=0.0, title=0.5, precedent=0.0, learned=0.0, shared=None)
        """
        if self.lexical is None or self.subject is None:
            return base
        return replace(base, shared=replace(base, lexical=self.lexical, subject=self.subject, shared=None))

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> SelfTest:
        def number(name: str) -> float | None:
            value = data.get(name)
            return None if value is None else float(value)

        return cls(
            version=int(data.get("version", 0)),
            lexical=number("lexical"),
            subject=number("subject"),
            questions=int(data.get("questions", 0)),
            documents=int(data.get("documents", 0)),
            folds=int(data.get("folds", 0)),
            by_kind=dict(data.get("by_kind") or {}),
            hit1={str(k): float(v) for k, v in (data.get("hit1") or {}).items()},
            wins=int(data.get("wins", 0)),
            losses=int(data.get("losses", 0)),
            chosen={str(k): float(v) for k, v in (data.get("chosen") or {}).items()},
        )

    def summary(self) -> str:
        """One line for ``bot build``."""
        if not self.hit1:
            return f"self-test: {self.questions} pseudo-questions, too few to fit; the calibration's weights rank"
        h = self.hit1
        kept = (
            f"kept: lexical {self.lexical:g}, subject {self.subject:g}"
            if self.lexical is not None
            else "not kept, the calibration's weights rank"
        )
        return (
            f"self-test on {self.questions} pseudo-questions of {self.documents} documents, held out by document: "
            f"hit@1 fitted {h['fitted']:.3f} ({self.wins} won, {self.losses} lost; {kept}), "
            f"before {h['calibration']:.3f}, dense alone {h['dense']:.3f}, BM25 alone {h['bm25']:.3f}"
        )


def load(generation: Path) -> SelfTest | None:
    """The stored self-test of a generation; None when there is none or it is of another version."""
    path = Path(generation) / SELFTEST_FILE
    if not path.is_file():
        return None
    try:
        test = SelfTest.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        log.warning(
            "%s is unreadable (%s); ranking with the calibration's weights. Run: python -m bot build", path, exc
        )
        return None
    return test if test.version == VERSION else None


# ---------------------------------------------------------------- scoring without the source text


def _bm25_scores(documents: list[list[str]], tokens: Sequence[str]) -> np.ndarray:
    import bm25s

    bm25 = bm25s.BM25()
    bm25.index([d or ["\u2205"] for d in documents] or [["\u2205"]], show_progress=False)
    known = [t for t in tokens if t in bm25.vocab_dict]
    if not known:
        return np.zeros(len(documents), dtype=np.float32)
    return np.asarray(bm25.get_scores(known), dtype=np.float32)


def probe(
    engine,
    questions: Sequence[PseudoQuestion],
    embed: Callable[[list[str], str], np.ndarray],
) -> list[Evidence]:
    """Each question's evidence on each section's own text, its section scored without the question's spans (its
    keys that changed embedded again, in batches through ``embed``; the unchanged ones reuse the index's vectors)."""
    sections, settings = engine.sections, engine.settings
    vectors, owners = engine.key_vectors
    plain = ~engine.index.key_is_meta
    documents = [tokenize(section_documents(s, None)) for s in sections]
    named = [sorted(f.named) for f in engine.facts]
    known: dict[tuple[str, str], np.ndarray] = {}  # (role, text) -> vector, the index's own keys
    for n in sorted({q.section for q in questions}):
        mine = np.flatnonzero(owners == n)
        built = retrieval_keys(sections[n], engine.index.meta.get(sections[n].key), settings, named[n])
        if len(built) == len(mine):
            known.update({(role, text): vectors[row] for (_, role, text), row in zip(built, mine)})
    stripped_keys = []
    for q in questions:
        section = stripped(sections[q.section], [q])
        stripped_keys.append(
            (section, [(role, text) for _, role, text in retrieval_keys(section, None, settings, named[q.section])])
        )
    missing: dict[str, list[str]] = {}
    for _, keys in stripped_keys:
        for role, text in keys:
            if (role, text) not in known and text.strip():
                missing.setdefault(role, [])
                if text not in missing[role]:
                    missing[role].append(text)
    for role, texts in missing.items():
        for start in range(0, len(texts), 32):
            chunk = texts[start : start + 32]
            known.update({(role, text): vector for text, vector in zip(chunk, embed(chunk, role))})
    engine.queries.prefetch([engine.read(q.text).search_text for q in questions])
    out = []
    for q, (section, keys) in zip(questions, stripped_keys):
        found = engine.evidence(q.text, use_meta=False)
        if found.empty or found.own is None:
            out.append(found)
            continue
        own = found.own
        sims = (vectors[plain] @ own.query_vector).astype(np.float32)
        dense = np.full(len(sections), -1.0, dtype=np.float32)
        np.maximum.at(dense, owners[plain], sims)
        mine = [float(known[key] @ own.query_vector) for key in keys if key in known]
        dense[q.section] = max(mine, default=float(sims.min()))
        docs = list(documents)
        docs[q.section] = tokenize(section_documents(section, None))
        lexical = _bm25_scores(docs, own.tokens)
        scores = Scores(own.query_vector, dense, lexical, own.matched, own.coverage, own.best_by_language, own.tokens)
        out.append(replace(found, own=scores, title=None, joined=None, precedent=None, learned=None, known=None))
    return out


# ---------------------------------------------------------------- fitting


def _right(batch: RankingBatch, answers: np.ndarray, weights: Weights) -> np.ndarray:
    """Per question: its own section ranked first under ``weights``."""
    return np.array([bool(o) and o[0] == a for o, a in zip(batch.orders(weights, k=1), answers)], dtype=bool)


def _alone(evidences: Sequence[Evidence], answers: np.ndarray, mode: str) -> np.ndarray:
    return np.array([rank(e, Weights(), mode=mode, k=1).order[:1] == (a,) for e, a in zip(evidences, answers)])


def _best(grid: dict[Weights, np.ndarray], base: Weights, rows: np.ndarray) -> Weights:
    """Best hit@1 on ``rows``; ties towards the base weights, then smaller ones."""
    return max(grid, key=lambda w: (grid[w][rows].mean(), w == base, -(w.lexical + w.subject)))


def better(wins: int, losses: int) -> bool:
    """Whether ``wins`` questions right only with the fitted weights against ``losses`` right only with the
    calibration's show a real gain: a sign test, the difference at least two standard deviations of a tie.

    >>> better(12, 3), better(6, 3), better(0, 0)
    (True, False, False)
    """
    return wins - losses >= max(2.0 * float(np.sqrt(wins + losses)), 1.0)


def folds_of(questions: Sequence[PseudoQuestion], sources: Sequence[str], folds: int = FOLDS) -> np.ndarray:
    """Fold per question, by document (every question of a document in one fold), documents dealt in order of
    their names; with one document, by section."""
    docs = sorted({sources[q.section] for q in questions})
    if len(docs) >= 2:
        fold_of = {d: n % min(folds, len(docs)) for n, d in enumerate(docs)}
        return np.array([fold_of[sources[q.section]] for q in questions])
    return np.array([q.section % folds for q in questions])


def fit(
    evidences: Sequence[Evidence], questions: Sequence[PseudoQuestion], sources: Sequence[str], base: Weights
) -> SelfTest:
    """The held-out figures (each fold ranked by weights chosen on the others) of the fitted rule, the base weights,
    dense alone and BM25 alone; and the weights chosen on every question, kept only where the held-out folds show
    them :func:`better` than the base weights (else the base weights stay: nothing fitted that does not help)."""
    usable = [n for n, e in enumerate(evidences) if not e.empty and e.own is not None]
    evidences = [evidences[n] for n in usable]
    questions = [questions[n] for n in usable]
    documents = len({sources[q.section] for q in questions})
    base = replace(base, precedent=0.0, learned=0.0, shared=None)
    if len(questions) < MIN_QUESTIONS:
        return SelfTest(questions=len(questions), documents=documents)
    answers = np.array([q.section for q in questions])
    batch = RankingBatch(evidences)
    grid = {replace(base, lexical=lw, subject=sw): None for lw in LEXICAL_GRID for sw in SUBJECT_GRID}
    grid = {w: _right(batch, answers, w) for w in {base, *grid}}
    fold = folds_of(questions, sources)
    held = np.zeros(len(questions), dtype=bool)
    for f in sorted(set(fold.tolist())):
        test = fold == f
        held[test] = grid[_best(grid, base, np.flatnonzero(~test))][test]
    before = grid[base]
    wins, losses = int((held & ~before).sum()), int((before & ~held).sum())
    chosen = _best(grid, base, np.arange(len(questions)))
    kinds: dict[str, int] = {}
    for q in questions:
        kinds[q.kind] = kinds.get(q.kind, 0) + 1
    adopted = better(wins, losses)
    return SelfTest(
        lexical=chosen.lexical if adopted else None,
        subject=chosen.subject if adopted else None,
        questions=len(questions),
        documents=documents,
        folds=len(set(fold.tolist())),
        by_kind=kinds,
        hit1={
            "fitted": round(float(held.mean()), 4),
            "calibration": round(float(before.mean()), 4),
            "dense": round(float(_alone(evidences, answers, "dense").mean()), 4),
            "bm25": round(float(_alone(evidences, answers, "bm25").mean()), 4),
        },
        wins=wins,
        losses=losses,
        chosen={"lexical": chosen.lexical, "subject": chosen.subject},
    )


def self_test(
    engine, *, limit: int = MAX_QUESTIONS, cache: dict[str, np.ndarray] | None = None
) -> tuple[SelfTest, dict[str, np.ndarray]]:
    """Draw, probe and fit on ``engine``'s index (the base weights: its calibration's). ``cache``: the vectors of
    stripped keys a previous build embedded, by :func:`_key_hash`; returned with the ones this test used, so a
    rebuild embeds only what changed."""
    questions = draw(engine.sections, engine.index.domain.faq, limit=limit)
    embedder = engine.queries.embedder
    known = dict(cache or {})
    used: dict[str, np.ndarray] = {}

    def embed(texts: list[str], role: str) -> np.ndarray:
        hashes = [_key_hash(embedder.id, role, t) for t in texts]
        missing = [(h, t) for h, t in zip(hashes, texts) if h not in known]
        if missing:
            known.update(zip([h for h, _ in missing], embedder.embed([t for _, t in missing], role=role)))
        used.update({h: known[h] for h in hashes})
        return np.stack([known[h] for h in hashes])

    # The questions' vectors too: "q:" and the query cache's key (bot.engine.scores.query_key), in hex.
    remembered = {bytes.fromhex(h[2:]): v for h, v in known.items() if h.startswith("q:")}
    engine.queries.size = max(engine.queries.size, len(remembered) + len(questions) + 1)
    engine.queries.remember(remembered)
    evidences = probe(engine, questions, embed)
    vectors = engine.queries.remembered()
    for q in questions:
        key = engine.queries.cache_key(engine.read(q.text).search_text)
        if key in vectors:
            used["q:" + key.hex()] = vectors[key]
    return fit(evidences, questions, [s.source for s in engine.sections], engine.calibration.weights), used


def _key_hash(embedder_id: str, role: str, text: str) -> str:
    return hashlib.sha1(f"{embedder_id}\x00{role}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()


def _read_cache(index_dir: Path) -> dict[str, np.ndarray]:
    """The stripped keys' vectors the live generation stored (none when it has none or they are unreadable)."""
    try:
        generation, _ = read_manifest(index_dir)
        with np.load(generation / VECTORS_FILE, allow_pickle=False) as data:
            return dict(zip(data["hashes"].tolist(), data["vectors"]))
    except (IndexProblem, OSError, ValueError, KeyError):
        return {}


class SelfTestHook:
    """The build's :class:`bot.kb.index.GenerationHook`: the self-test of the new generation, stored in it
    (``selftest.json``, and the stripped keys' vectors for the next build)."""

    def __init__(self, settings: Settings, embedder: Embedder, engine_of: Callable[[KnowledgeIndex], Any]) -> None:
        # engine_of: the engine over an index (bot.engine.retrieve.Engine, which imports this module: handed in)
        self.settings, self.embedder, self.engine_of = settings, embedder, engine_of

    def __call__(self, generation: Path) -> tuple[dict[str, bytes], str]:
        engine = self.engine_of(load_generation(self.settings, self.embedder.id, self.embedder.dim, generation))
        test, vectors = self_test(engine, cache=_read_cache(self.settings.index_dir))
        buffer = io.BytesIO()
        hashes = sorted(vectors)
        np.savez(
            buffer,
            hashes=np.array(hashes, dtype=str),
            vectors=np.stack([vectors[h] for h in hashes]).astype(np.float32)
            if hashes
            else np.zeros((0, self.embedder.dim), np.float32),
        )
        files = {SELFTEST_FILE: json.dumps(test.to_json(), indent=1).encode(), VECTORS_FILE: buffer.getvalue()}
        return files, test.summary()
