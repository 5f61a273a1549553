"""A long follow-up is not scored twice: what the embedder and the lexical search read of it joined with the case
is what they read of it alone (issue 32's cost target), and the ranking is exactly the same."""

from __future__ import annotations

import numpy as np
import pytest

from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.engine.scores import QueryCache
from bot.kb.embed import HashEmbedder
from bot.records import Case


class CuttingEmbedder(HashEmbedder):
    """The hash embedder reading only a head of each text, as e5 does (``max_chars``); counts what it embeds."""

    max_chars = 512

    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed(self, texts, role):
        self.embedded.extend(texts)
        return super().embed([t[: self.max_chars] for t in texts], role)


@pytest.fixture
def engine(tmp_path):
    from fixtures.engines import two_section_engine

    built = two_section_engine(tmp_path)
    return Engine(built.index, CuttingEmbedder(), built.settings)


def _case(engine) -> Case:
    key = engine.sections[0].key
    return Case(search="显存不足 out of memory", shown=(key,), best=key, problem=frozenset({"OOM"}))


@pytest.mark.parametrize("chars", [1_000, 6_000])
def test_a_long_follow_up_is_embedded_once_and_ranked_as_before(engine, monkeypatch, chars):
    text = ("batch_size 减到 8 了还是 out of memory 没用，日志如下 " * 300)[:chars]
    case = _case(engine)
    evidence, ranking = engine.weigh(engine.read(text), case)
    assert evidence.plan.act == "failed_fix" and evidence.plan.joined  # searched with its case's words
    assert len(engine.embedder.embedded) == 1  # the joined text's head is the message's: the same vector, cached
    assert (evidence.joined is evidence.own) == (chars >= 5_000)  # nothing of the case reached: own scores reused

    monkeypatch.setattr(QueryCache, "reads_only_head", lambda self, text: False)
    fresh = Engine(engine.index, CuttingEmbedder(), engine.settings)
    again, ranked = fresh.weigh(fresh.read(text), case)
    assert len(fresh.embedder.embedded) == 1
    np.testing.assert_array_equal(again.joined.query_vector, evidence.joined.query_vector)
    np.testing.assert_array_equal(again.joined.lexical, evidence.joined.lexical)
    assert ranked.order == ranking.order
    np.testing.assert_array_equal(ranked.scores, ranking.scores)
    np.testing.assert_array_equal(rank(again, engine.calibration.weights).scores, ranking.scores)


def test_a_short_follow_up_is_still_searched_with_its_case(engine):
    evidence, _ = engine.weigh(engine.read("那多卡呢？"), _case(engine))
    assert evidence.joined is not evidence.own
    assert len(engine.embedder.embedded) == 2  # its own words, then joined with the case's
