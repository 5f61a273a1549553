"""A page changes only its own answers (issue 42, item 1; issue 45, finding 1): the calibration, its precedents and
the adapter are tied to the documents they were fitted on one by one (the index manifest's content hashes), so an
added page is served as a document nobody labelled while every other page keeps the fitted model."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from bot.engine.calibration import FEATURES, Calibration, calibration_path, load_for, sources_fingerprint
from bot.engine.facts import build
from bot.engine.learned import Adapter, adapter_path
from bot.engine.precedents import Precedents
from bot.engine.retrieve import Engine
from bot.kb.embed import HashEmbedder
from fixtures import REPO
from fixtures.engines import repo_seeds_hash_settings

DATA = Path(__file__).parent / "data"
# An office-kitchen FAQ in the seeds' language. (The hash embedder matches nothing across languages: under it an
# English page is the best plain match of every English question about the Chinese seeds, and a page nobody labelled
# may lead where the plain rule puts it first, docs/confidence.md "Documents nobody labelled". The bilingual
# tests/engine/data/unrelated_page.md is measured with the product's embedder: docs/evaluation.md, issue 42.)
PAGE = "unrelated_page_zh.md"
ENGLISH = "unrelated_page.md"
CHANGED = "003_ba74d700c0e52ec2.txt"  # a seed document that answers many of the batches' questions
DEV = Path("/work/shared/eval/dev.jsonl")
# Every committed batch of single first questions about the seeds (in scope and near ones): the real batches, the
# held-out rounds' single questions (both labellers' copies) and holdout 11's settled first questions.
BATCHES = sorted(
    [*(REPO / "eval").glob("real_*.jsonl"), *(REPO / "eval").glob("holdout*/**/single.jsonl")]
    + [REPO / "eval" / "holdout11" / "first" / "questions_settled.jsonl"]
)


def _questions() -> list[tuple[str, bool]]:
    """(question, whether a seed section answers it) of every line of the batches."""
    files = ([DEV] if DEV.is_file() else []) + BATCHES
    rows = [json.loads(line) for path in files for line in path.read_text("utf-8").splitlines() if line.strip()]
    # Each question once (the two labellers' copies of a round hold the same questions).
    return list(dict.fromkeys((r["query"], bool(r.get("expect"))) for r in rows))


def _label(engine: Engine, expect: list[dict]) -> tuple[str, ...]:
    heads = {(e["source"], "".join(e["section"].split()).lower()) for e in expect}
    return tuple(
        s.key
        for s in engine.sections
        if any(src == s.source and head in "".join(s.heading.split()).lower() for src, head in heads)
    )


def _fitted(engine: Engine) -> Calibration:
    """A model as ``bot calibrate`` stores one, with every per-document part in use: precedents (the in-scope batch's
    labels), an adapter, thresholds that give all three tiers, and a fit for documents nobody labelled that is never
    confident — so serving every document as unseen, as the old whole-folder fingerprint did, shows at once."""
    rows = [json.loads(line) for line in (REPO / "eval" / "real_inscope.jsonl").read_text("utf-8").splitlines()]
    rows += [json.loads(line) for line in (REPO / "eval" / "real_near.jsonl").read_text("utf-8").splitlines()]
    vectors = engine.embedder.embed([r["query"] for r in rows], role="query")
    precedents = Precedents(vectors, tuple(_label(engine, r.get("expect", [])) for r in rows), k=5, temperature=0.1)
    n = len(FEATURES)
    never = {"mean": [0.0] * n, "scale": [1.0] * n, "coef": [0.0] * n, "intercept": -5.0}
    sources = engine.index.manifest["sources"]
    return dataclasses.replace(
        Calibration.default(engine.embedder.id),
        calibrated=True,
        answer_threshold=0.6,
        none_threshold=0.05,
        precedent_weight=0.5,
        precedents=precedents,
        learned_weight=0.5,
        figures={"learned": {"rank": 4}},
        sources_hash=sources_fingerprint(sources),
        documents=dict(sources),
        unseen={**never, "answer_threshold": 0.99, "none_threshold": 0.0},
    )


def _adapter(engine: Engine, fitted: Calibration) -> Adapter:
    rng = np.random.default_rng(42)
    dim = engine.embedder.dim
    return Adapter(
        rng.normal(0, 0.3, (dim, 4)),
        rng.normal(0, 0.3, (dim, 4)),
        rng.normal(0, 0.1, dim),
        embedder=engine.embedder.id,
        sources_hash=fitted.sources_hash,
    )


def _answers(engine: Engine, questions: list[tuple[str, bool]]) -> list[tuple[str, str]]:
    out = []
    for question, _ in questions:
        answer = engine.ask(question)
        out.append((answer.tier, answer.hits[0].section.key if answer.hits else ""))
    return out


@pytest.fixture(scope="module")
def seeds_with_a_fit(tmp_path_factory) -> tuple:
    """The repository's seeds under the hash embedder with a stored fit, and the seeds' answers as fitted."""
    root = tmp_path_factory.mktemp("added")
    settings = repo_seeds_hash_settings(root)
    engine = Engine.open(settings, HashEmbedder())
    fitted = _fitted(engine)
    path = calibration_path(settings.index_dir, engine.embedder.id)
    fitted.save(path)
    _adapter(engine, fitted).save(adapter_path(path))
    engine = Engine.open(settings, HashEmbedder())
    assert engine.adapter is not None and engine.calibration.precedents is not None and not engine.hidden
    questions = _questions()
    before = _answers(engine, questions)
    tiers = {t for t, _ in before}
    assert {"answer", "tentative"} <= tiers, tiers  # the test can see a confident answer turn tentative
    return settings, questions, before


def _served_after(settings, edit) -> tuple[Engine, list[tuple[str, str]], list[tuple[str, bool]]]:
    """The seeds' answers after ``edit`` (called with the seeds folder, returns an undo) and a rebuild; undone after."""
    undo = edit(settings.seeds_dir)
    try:
        build(settings, HashEmbedder())
        engine = Engine.open(settings, HashEmbedder())
        questions = _questions()
        return engine, _answers(engine, questions), questions
    finally:
        undo()


def _added(name: str):
    def edit(seeds: Path):
        shutil.copy(DATA / name, seeds / name)
        return (seeds / name).unlink

    return edit


def _differing(questions, before, after, document: str) -> tuple[list, list]:
    """The questions answered differently, split by whether the answer was or is about ``document`` (its first
    section there, before or after)."""
    about, others = [], []
    for (question, in_scope), old, new in zip(questions, before, after):
        if old != new:
            mine = document in (old[1].split("#")[0], new[1].split("#")[0])
            (about if mine else others).append((question[:50], in_scope, old, new))
    return about, others


def test_an_unrelated_page_added_changes_no_answer_about_the_other_pages(seeds_with_a_fit):
    settings, questions, before = seeds_with_a_fit
    engine, after, _ = _served_after(settings, _added(PAGE))
    changed = [(q[:60], b, a) for (q, _), b, a in zip(questions, before, after) if a != b]
    assert not changed, f"{len(changed)} of {len(questions)} answers changed, e.g. {changed[:5]}"
    # The page alone is served as unseen; the fitted model, its precedents and adapter keep serving the others.
    assert engine.hidden == {PAGE}
    assert engine.adapter is not None and engine.calibration.learned_weight == 0.5


def test_an_unrelated_english_page_moves_no_answer_about_the_seeds(seeds_with_a_fit):
    """Under the hash embedder an English page is a plain match of English questions (it shares their words; the
    seeds are Chinese, and this embedder matches nothing across languages): those may lead with it now, never
    confidently — it is served as a page nobody labelled. No answer moves to another seed section or tier. (With the
    product's embedder no answered question moves: docs/evaluation.md, issue 42.)"""
    settings, questions, before = seeds_with_a_fit
    engine, after, _ = _served_after(settings, _added(ENGLISH))
    about, others = _differing(questions, before, after, ENGLISH)
    assert not others, f"{len(others)} answers moved to another seed section or tier, e.g. {others[:3]}"
    assert all(new[1].startswith(ENGLISH) and new[0] != "answer" for _, _, _, new in about), about[:3]
    assert engine.hidden == {ENGLISH}


def test_a_changed_page_keeps_the_answers_about_the_others(seeds_with_a_fit):
    settings, questions, before = seeds_with_a_fit
    document = CHANGED

    def edit(seeds: Path):
        text = (seeds / document).read_text("utf-8")
        (seeds / document).write_text(text + "\n\n补充说明：本页内容已于近期复核，如有疑问请联系维护者。\n", "utf-8")
        return lambda: (seeds / document).write_text(text, "utf-8")

    engine, after, _ = _served_after(settings, edit)
    assert engine.hidden == {document}  # its new text is served as nobody labelled it; the others as fitted
    about, others = _differing(questions, before, after, document)
    # Every answer about another page keeps its first section, and its tier where a seed section answers the
    # question. (The changed page's sections are now scored on their own text, so where one of them was the
    # runner-up of a question nobody here answers, the margin the judge reads moved: those may turn tentative.)
    assert not [o for o in others if o[1] or o[2][1] != o[3][1]], others[:3]
    assert sum(1 for _, key in before if key.startswith(document)) > 20  # the test covers a page that answers


def test_a_removed_page_keeps_the_answers_about_the_others(seeds_with_a_fit):
    settings, questions, before = seeds_with_a_fit
    document = CHANGED

    def edit(seeds: Path):
        text = (seeds / document).read_bytes()
        (seeds / document).unlink()
        return lambda: (seeds / document).write_bytes(text)

    engine, after, _ = _served_after(settings, edit)
    assert not engine.hidden and engine.adapter is not None and engine.calibration.precedents is not None
    about, others = _differing(questions, before, after, document)
    # The others keep the fitted model (the whole-folder fingerprint served every page as unseen: hundreds of
    # confident answers turned tentative). Not to the answer: a removed page's sections leave the statistics every
    # question's scores are standardised by (docs/confidence.md "Documents nobody labelled"), and under the hash
    # embedder a few dozen of the ~1,400 answers move (with the product's embedder a handful: docs/evaluation.md).
    kept = len(questions) - len(about) - len(others)
    assert len(others) <= 0.05 * kept, f"{len(others)} answers about other pages changed, e.g. {others[:3]}"
    assert len(about) > 20  # its answers did move: the test would see the others move


def test_a_question_about_the_added_page_is_judged_by_the_fit_for_documents_nobody_labelled(seeds_with_a_fit):
    settings = seeds_with_a_fit[0]
    shutil.copy(DATA / PAGE, settings.seeds_dir / PAGE)
    try:
        build(settings, HashEmbedder())
        engine = Engine.open(settings, HashEmbedder())
        answer = engine.ask("咖啡机的除垢灯亮了怎么办")
        evidence = engine.evidence("咖啡机的除垢灯亮了怎么办")
    finally:
        (settings.seeds_dir / PAGE).unlink()
    assert answer.hits[0].section.source == PAGE
    assert answer.tier != "answer"  # its fit for unseen documents is never confident
    page = engine.catalog.hidden_sections(engine.hidden)
    assert not engine.known()[page].any()  # no precedents, no adapter, no curated phrasings of its own
    assert evidence.precedent is not None and not evidence.precedent[page].any()


def test_a_changed_page_keeps_the_others_fitted_and_a_changed_shared_file_does_not(seeds_with_a_fit):
    settings = seeds_with_a_fit[0]
    path = calibration_path(settings.index_dir, HashEmbedder().id)
    fitted = Calibration.load(path)
    sources = dict(fitted.documents)
    first = sorted(s for s in sources if s.endswith(".txt"))[0]
    assert fitted.unfitted({**sources, first: "edited"}) == {first}
    assert fitted.unfitted({k: v for k, v in sources.items() if k != first}) == frozenset()  # removed
    # A curated-phrasing file is read at build as retrieval keys: editing it keeps its document fitted.
    meta = next(s for s in sources if s.startswith("meta/"))
    assert fitted.unfitted({**sources, meta: "edited"}) == frozenset()
    # What every document depends on (the shipped off-topic questions): nothing is as fitted any more.
    background = next(s for s in sources if s.startswith("("))
    whole = load_for(settings.index_dir, HashEmbedder().id, {**sources, background: "edited"})
    assert whole.figures.get("documents_changed") and whole.answer_threshold == 0.99
    assert whole.unfitted(sources) == frozenset()
    assert load_for(settings.index_dir, HashEmbedder().id, {**sources, "new.md": "1"}).answer_threshold == 0.6
