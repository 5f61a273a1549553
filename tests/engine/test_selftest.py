"""The self-test at build (bot.engine.selftest, bot.kb.selftest): held out, stored with the generation, read back,
and a damaged file named with the fix without stopping anything."""

from __future__ import annotations

import json

import numpy as np

from bot.engine.facts import build
from bot.engine.retrieve import Engine
from bot.engine.selftest import _Bm25, score
from bot.engine.subjects import Lexicon
from bot.kb.domain import shipped
from bot.kb.embed import make_embedder
from bot.kb.index import load_index, retrieval_keys, section_documents
from bot.kb.pseudo import PseudoQuestion
from bot.kb.selftest import SELFTEST_FILE, KbFigures, SelfTest, read
from bot.kb.tokenize import tokenize


def test_build_stores_the_self_test_and_reads_it_back(hash_settings):
    report = build(hash_settings, make_embedder("hash"))
    assert report.selftest and report.selftest[0].startswith("self-test (top): n=")
    stored, problem = read(report.path)
    assert problem == "" and stored is not None
    (kb,) = stored.kbs
    assert kb.kb == "(top)" and kb.n > 0 and 0.0 <= kb.product <= 1.0
    assert kb.line() in report.selftest
    assert SelfTest.from_json(json.loads(stored.to_bytes())) == stored


def test_a_rebuild_embeds_none_of_the_self_tests_texts_again(hash_settings):
    build(hash_settings, make_embedder("hash"))
    again = build(hash_settings, make_embedder("hash"))
    assert again.selftest[-1].endswith(", 0 texts embedded")


def test_a_corrupt_self_test_is_named_and_not_fatal(hash_settings):
    report = build(hash_settings, make_embedder("hash"))
    (report.path / SELFTEST_FILE).write_text("{not json", encoding="utf-8")
    engine = Engine.open(hash_settings, make_embedder("hash"))
    test, problem = engine.selftest
    assert test is None and str(report.path / SELFTEST_FILE) in problem and "python -m bot build" in problem
    assert engine.ask("显存不足怎么办").hits  # the index still serves


def test_a_missing_or_older_self_test_is_named(tmp_path):
    assert "is missing" in read(tmp_path)[1]
    (tmp_path / SELFTEST_FILE).write_text(json.dumps({"version": 0, "kbs": []}), encoding="utf-8")
    test, problem = read(tmp_path)
    assert test is None and "format version 0" in problem


def test_a_question_is_not_matched_against_its_own_source_text(hash_settings):
    """A pseudo-question that is its section's heading, word for word: with the heading held out, dense does not
    see it in its own section (the hash embedder gives identical texts a cosine of 1), nor BM25 its words there."""
    build(hash_settings, make_embedder("hash"))
    embedder = make_embedder("hash")
    index = load_index(hash_settings, embedder.id, embedder.dim)
    sections = index.sections
    n = next(i for i, s in enumerate(sections) if "显存不足" in s.heading)
    heading = sections[n].heading
    keys = [
        (i, kind, role, text)
        for i, s in enumerate(sections)
        for kind, role, text in retrieval_keys(s, None, hash_settings)
    ]
    vectors = np.stack([embedder.embed([text], role)[0] for _, _, role, text in keys])
    q = PseudoQuestion(heading, n, "heading", (heading,))

    def embed(pairs):
        return np.stack([embedder.embed([text], role)[0] for role, text in pairs] or [np.zeros(embedder.dim)])[
            : len(pairs)
        ]

    documents = [tokenize(section_documents(s, None)) for s in sections]
    covers = [frozenset()] * len(sections)
    dense, lexical, _ = score(sections, keys, vectors, covers, documents, [q], embed, Lexicon.of(shipped()), 512)
    heading_row = next(j for j, k in enumerate(keys) if k[0] == n and k[1] == "heading")
    assert float(vectors[heading_row] @ embed([("query", heading)])[0]) > 0.99  # what it would match unheld
    assert dense[0, n] < 0.99
    assert lexical[0, n] < _Bm25(documents).scores(tokenize(heading), n, [])[n]  # the heading's words not counted


def test_a_line_per_knowledge_base():
    test = SelfTest((KbFigures("(top)", 10, 0.6, 0.5, 0.4), KbFigures("kb5", 4, 0.75, 0.5, 0.25)))
    assert test.lines() == (
        "self-test (top): n=10 product 0.600, dense 0.500, bm25 0.400",
        "self-test kb5: n=4 product 0.750, dense 0.500, bm25 0.250",
    )
