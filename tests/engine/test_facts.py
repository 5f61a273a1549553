"""Section facts are computed when the index is built, stored with it, and read by the engine; an older index
(no stored facts, or facts of other rules) still loads, with a warning that names the file and the fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bot.engine.facts as facts_module
from bot.engine.facts import FactsNotStored, SectionFacts, build, section_facts
from bot.engine.retrieve import Engine
from bot.engine.subjects import Lexicon
from bot.kb.embed import HashEmbedder
from bot.kb.index import build_index, read_manifest
from bot.settings import Settings
from fixtures.engines import count_calls


def test_opening_the_engine_and_asking_compute_no_section_facts(hash_settings: Settings, monkeypatch):
    build(hash_settings, HashEmbedder())
    calls = count_calls(monkeypatch, facts_module.section_facts)
    engine = Engine.open(hash_settings, HashEmbedder())
    assert engine.ask("多卡训练报错 libnccl.so 怎么办").hits
    assert calls == []  # before: computed on the first question of every loaded index
    assert [f.key for f in engine.facts] == [s.key for s in engine.sections]


def test_the_stored_facts_are_what_the_rules_say_of_each_section(hash_settings: Settings):
    build(hash_settings, HashEmbedder())
    engine = Engine.open(hash_settings, HashEmbedder())
    assert engine.facts == section_facts(engine.sections, Lexicon.load())
    by_key = {f.key: f for f in engine.facts}
    nccl = by_key["gpu.md#问题-多卡训练报错-libnccl-so"]
    assert nccl.os == {"Linux"} and "NCCL" in nccl.covers and nccl.answers and nccl.language == "zh"
    assert by_key["tf.md#管理gpu-ram"].frameworks == {"TensorFlow"}
    rows = json.loads((engine.index.path / "facts.json").read_text(encoding="utf-8"))
    assert [SectionFacts.from_row(row) for row in rows] == list(engine.facts)


def test_an_index_without_stored_facts_loads_with_a_warning_naming_the_file_and_the_fix(hash_settings: Settings):
    build_index(hash_settings, HashEmbedder())  # bot.kb alone, as before facts were stored: no facts.json
    gen, _ = read_manifest(hash_settings.index_dir)
    with pytest.warns(FactsNotStored, match=rf"{gen.name}/facts\.json is missing.*Run: python -m bot build"):
        engine = Engine.open(hash_settings, HashEmbedder())
    assert engine.facts == section_facts(engine.sections, Lexicon.load())


def test_facts_of_other_rules_load_with_a_warning_and_a_rebuild_stores_them_again(hash_settings, monkeypatch):
    build(hash_settings, HashEmbedder())
    monkeypatch.setattr(facts_module, "RULES", 999)
    with pytest.warns(FactsNotStored, match=r"holds facts of version '1:\w+', this engine computes '999:.*bot build"):
        Engine.open(hash_settings, HashEmbedder())
    build(hash_settings, HashEmbedder())
    assert read_manifest(hash_settings.index_dir)[1]["facts"].startswith("999:")


def test_section_vectors_are_read_from_the_index(hash_settings: Settings, monkeypatch):
    build(hash_settings, HashEmbedder())
    engine = Engine.open(hash_settings, HashEmbedder())
    dense = engine.index.dense
    # What the engine computed per loaded index before: the mean of the keys' vectors taken back from FAISS.
    sums = np.zeros((len(engine.sections), dense.d), dtype=np.float32)
    np.add.at(sums, engine.index.key_sections, dense.reconstruct_n(0, dense.ntotal))
    before = sums / np.linalg.norm(sums, axis=1, keepdims=True)

    def gone(*args):
        raise RuntimeError("the vectors are not taken back from the dense index at run time")

    monkeypatch.setattr(dense, "reconstruct_n", gone, raising=False)
    found = engine.section_vectors()
    assert found is not None
    rows, vectors = found
    assert rows == {s.key: n for n, s in enumerate(engine.sections)}
    np.testing.assert_array_equal(vectors, before)
