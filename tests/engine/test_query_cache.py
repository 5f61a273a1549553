"""The query-embedding cache holds bounded keys, whatever the question's length (issue 28, finding 13)."""

from __future__ import annotations

import sys

from fixtures.engines import one_section_engine


class CountingEmbedder:
    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def embed(self, texts, role="passage"):
        self.calls += 1
        return self.inner.embed(texts, role=role)


def test_long_questions_are_cached_under_keys_of_bounded_size(tmp_path):
    engine = one_section_engine(tmp_path)
    engine.embedder = counting = CountingEmbedder(engine.embedder)
    questions = [f"{n} 😀 显存不足 " + "x" * 20_000 for n in range(8)]  # 4 bytes per character in CPython
    for question in questions:
        engine.queries.embed(question)
    first = engine.queries.embed(questions[0])  # a repeated question is answered from the cache
    assert counting.calls == 8 and first is engine.queries.embed(questions[0])
    held = sum(sys.getsizeof(key) for key in engine.queries.vectors)
    assert held < 8 * 100, f"the cache's keys hold {held:,} bytes for 8 questions"


def test_different_questions_get_different_vectors(tmp_path):
    engine = one_section_engine(tmp_path)
    a = engine.queries.embed("显存不足 batch_size")
    b = engine.queries.embed("libnccl.so not found")
    assert len(engine.queries.vectors) == 2 and a is not b
