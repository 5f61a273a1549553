import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bot.engine.rank import fuse
from bot.engine.read import sanitize
from bot.engine.retrieve import Engine
from bot.fit.evaluate import evaluate, hit_matches, read_cases
from bot.kb.index import build_index
from conftest import DEV_SET, REPO, copy_calibration, copy_committed_vectors
from fixtures.engines import hash_engine

CALIBRATION = Path(__file__).parent / "data" / "calibration.jsonl"


def test_fusion_rewards_agreement_and_keeps_order_of_evidence():
    dense = np.array([0.90, 0.89, 0.70, 0.69], dtype=np.float32)
    lexical = np.array([0.0, 8.0, 0.0, 0.0], dtype=np.float32)
    fused = fuse(dense, lexical)
    assert int(np.argmax(fused)) == 1  # strong lexical evidence breaks a near tie
    assert fused[0] > fused[2] > fused[3]  # without lexical evidence dense order stands


def test_fusion_is_the_weighted_sum_of_z_scores_computed_by_hand():
    # dense [1, 2, 3]: mean 2, population std sqrt(2/3) -> z = [-sqrt(3/2), 0, sqrt(3/2)]
    # lexical [0, 0, 3]: mean 1, population std sqrt(2) -> z = [-1/sqrt(2), -1/sqrt(2), sqrt(2)]
    dense, lexical = np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.0, 3.0])
    z_dense = np.array([-1.224745, 0.0, 1.224745])
    z_lexical = np.array([-0.707107, -0.707107, 1.414214])
    assert np.allclose(fuse(dense, lexical), z_dense + 0.5 * z_lexical, atol=1e-5)
    assert np.allclose(fuse(dense, lexical, lexical_weight=2.0), z_dense + 2.0 * z_lexical, atol=1e-5)
    # no lexical evidence at all (zero spread): the dense z-scores alone, not a division by zero
    assert np.allclose(fuse(dense, np.zeros(3)), z_dense, atol=1e-5)


def test_sanitize_cuts_and_cleans():
    text, original = sanitize("a\x00b\ud800" + "x" * 20, 10)
    assert original == 24 and len(text) == 10
    assert "\x00" not in text and "\ud800" not in text
    text.encode("utf-8")  # would raise on a lone surrogate


def test_hits_are_distinct_sections_and_exclude_works(hash_settings):
    engine = hash_engine(hash_settings)
    answer = engine.ask("显存不足 libnccl.so", k=10)
    keys = [h.section.key for h in answer.hits]
    assert len(keys) == len(set(keys)) == len(engine.sections)
    again = engine.ask("显存不足 libnccl.so", k=10, exclude=[keys[0]])
    assert keys[0] not in [h.section.key for h in again.hits]


def test_empty_input_is_not_answered(hash_settings):
    engine = hash_engine(hash_settings)
    for text in ("", "   \n\t "):
        answer = engine.ask(text)
        assert not answer.answered and answer.hits == ()


@pytest.mark.model
def test_chinese_english_and_trace_questions_find_their_section(seeds_engine):
    cases = {
        "多卡训练的时候报错找不到 libnccl.so": "使用多卡训练报错",
        "How do I pick which GPU Paddle uses?": "指定对应的GPU设备",
        "E [...]/cuda_driver.cc:965] failed to allocate 3.66G (3928915968 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY": "管理GPU RAM",
    }
    for question, heading in cases.items():
        answer = seeds_engine.ask(question)
        assert answer.answered, question
        assert heading in answer.hits[0].section.heading, (question, answer.hits[0].section.heading)


@pytest.mark.model
def test_pasted_log_returns_its_signature_and_language(seeds_engine):
    log = (
        SEEDS_LOG := (REPO / "seeds" / "000_786bff9181b08d52.txt")
        .read_text(encoding="utf-8")
        .split("```\n", 1)[1]
        .split("```")[0]
    )
    answer = seeds_engine.ask(log)
    assert answer.signature.startswith("EnforceNotMet: Failed to find dynamic library: libnccl.so")
    assert answer.language == "en"
    assert "使用多卡训练报错" in answer.hits[0].section.heading
    zh = seeds_engine.ask("这个报错怎么解决？\n" + SEEDS_LOG)
    assert zh.language == "zh" and zh.signature


@pytest.mark.model
def test_out_of_scope_questions_abstain(seeds_engine):
    for question in (
        "What is the tallest mountain in Africa?",
        "周末去哪里爬山比较好",
        "React useState not updating immediately",
    ):
        answer = seeds_engine.ask(question)
        assert not answer.answered, (question, answer.confidence)
        assert answer.hits, "nearest sections are still offered as suggestions"


@pytest.mark.model
def test_calibration_set_figures(seeds_engine):
    metrics = evaluate(seeds_engine, read_cases(CALIBRATION))["metrics"]
    assert metrics["hit@1"] >= 0.9 and metrics["hit@3"] >= 0.95
    # These are phrasings written for the tests, not real questions: the confidence is fitted on real threads
    # (eval/), where a question's nearest labelled precedents count, and a few short hand-written English
    # phrasings sit nearer to real questions the knowledge base did not answer. Ranking stays the bar here.
    assert metrics["abstain_oos"] >= 0.9 and metrics["false_abstain"] <= 0.2


@pytest.mark.model
@pytest.mark.skipif(not DEV_SET.exists(), reason=f"dev set not found at {DEV_SET}")
def test_dev_set_figures(seeds_engine):
    report = evaluate(seeds_engine, read_cases(DEV_SET))
    metrics = report["metrics"]
    assert metrics["hit@1"] >= 0.9
    assert metrics["hit@3"] >= 0.95
    assert metrics["abstain_oos"] >= 0.9
    assert metrics["false_abstain"] <= 0.05
    assert metrics["by_kind"]["en"]["hit@1"] >= 0.85
    assert metrics["by_kind"]["trace"]["hit@1"] == 1.0
    for case in report["cases"]:
        keys = [(h["source"], h["section"]) for h in case["hits"]]
        assert len(keys) == len(set(keys)) and len(keys) >= 10


def test_hit_matching_rule():
    hit = {"source": "002_5c885a5c94776257.txt", "section": "问题：`Loss`为NaN，如何处理？"}
    assert hit_matches(hit, {"source": "002_5c885a5c94776257.txt", "section": "Loss为 NaN"})
    assert not hit_matches(hit, {"source": "000_786bff9181b08d52.txt", "section": "Loss为NaN"})


@pytest.mark.model
def test_cli_ask_and_eval_json(seeds_engine, tmp_path):
    settings = seeds_engine.settings
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "BOT_SEEDS_DIR": str(settings.seeds_dir),
        "BOT_INDEX_DIR": str(settings.index_dir),
    }
    out = subprocess.run(
        [sys.executable, "-m", "bot", "ask", "显存不足怎么办", "-k", "3", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["answered"] is True and data["language"] == "zh" and data["signature"] is None
    assert len(data["hits"]) == 3
    assert {"source", "section", "heading_path", "lines", "score"} <= set(data["hits"][0])
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps(
            {
                "query": "Loss is NaN",
                "kind": "en",
                "expect": [{"source": "002_5c885a5c94776257.txt", "section": "Loss为NaN"}],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, "-m", "bot", "eval", str(cases), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["metrics"]["hit@1"] == 1.0 and report["metrics"]["by_kind"]["en"]["n"] == 1
    assert report["cases"][0]["hits"][0]["section"].startswith("问题：Loss为NaN")


def test_off_topic_background_does_not_contain_evaluation_queries():
    """The abstention contrast set must not simply memorise the questions it is judged on."""
    from bot.fit.evaluate import normalize
    from bot.kb.index import background_questions

    background = {normalize(q) for q in background_questions()}
    evaluated = [c.query for c in read_cases(CALIBRATION)]
    if DEV_SET.exists():
        evaluated += [c.query for c in read_cases(DEV_SET)]
    assert [q for q in evaluated if normalize(q) in background] == []


@pytest.mark.model
def test_english_questions_on_chinese_documents_without_metadata(tmp_path):
    """A company's own Chinese documents, no English metadata: English questions still get the closest sections.

    Matching across languages costs e5 about 0.06 of cosine; the contrast with off-topic
    questions must not mistake that for "nothing close". (The shipped calibration is tied to each
    document's content, not to its metadata, so it still applies; a company recalibrates with
    its own labelled questions: python -m bot calibrate.)
    """
    import shutil

    from bot.kb.embed import make_embedder
    from bot.settings import Settings

    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for doc in (REPO / "seeds").glob("*.txt"):
        shutil.copy(doc, seeds / doc.name)  # the documents only, no seeds/meta/
    settings = Settings(seeds_dir=seeds, index_dir=tmp_path / "index")
    copy_calibration(settings.index_dir)  # same embedder: the shipped calibration applies
    copy_committed_vectors(settings.index_dir)  # the passages' vectors are the shipped ones; titles differ
    embedder = make_embedder(settings.embedder)
    build_index(settings, embedder)
    engine = Engine.open(settings, embedder)
    # The fit is tied to each document's content (issue 42): the same documents without their metadata keep it, so
    # it is not the fit for documents nobody labelled that answers here.
    assert engine.calibration.calibrated and not engine.calibration.figures.get("documents_changed")
    answered = {
        q: engine.ask(q)
        # Each of these abstained when the contrast ignored the language of the match.
        for q in (
            "measure per-operator latency at inference time",
            "delay an op until others finished in tensorflow graph",
            "multi-node job just hangs with no error",
        )
    }
    assert all(a.tier != "none" and a.hits for a in answered.values()), {q: a.tier for q, a in answered.items()}
    for question in ("How do I make pizza dough?", "明天上海天气怎么样"):
        assert engine.ask(question).tier == "none", question
