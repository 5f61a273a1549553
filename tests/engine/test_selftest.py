"""The knowledge base's self-test: fitted at build on its own pseudo-questions, never scored against their own
source text, stored with the generation, and read only by the shared rule (the sections nobody labelled)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from bot.engine.calibration import Weights
from bot.engine.evidence import Evidence
from bot.engine.rank import rank
from bot.engine.retrieve import Engine, build
from bot.engine.scores import Scores
from bot.engine.selftest import SELFTEST_FILE, SelfTest, fit, probe
from bot.kb.embed import HashEmbedder
from bot.kb.index import read_manifest
from bot.kb.pseudo import PseudoQuestion
from bot.settings import Settings

TOPICS = [
    ("显存不足 out of memory", "减小 batch_size 或者开启 allow_growth。"),
    ("多卡训练 NCCL 超时", "检查 NCCL_SOCKET_IFNAME 与网络连通。"),
    ("找不到 libcudart.so", "把 CUDA 的 lib64 加入 LD_LIBRARY_PATH。"),
    ("cuDNN 版本不匹配", "安装与 CUDA 对应的 cuDNN 版本。"),
    ("GPU 利用率很低", "数据读取是瓶颈，使用多进程 DataLoader。"),
    ("训练 loss 变成 nan", "降低学习率并检查输入数据。"),
    ("Docker 容器里看不到 GPU", "使用 --gpus all 启动容器。"),
    ("驱动版本太旧", "升级 NVIDIA 驱动到 450 以上。"),
]


def _seeds(root: Path) -> Path:
    seeds = root / "seeds"
    seeds.mkdir()
    for d in range(3):
        parts = [f"# 文档{d} FAQ\n"]
        for n, (question, fix) in enumerate(TOPICS):
            parts.append(
                f"## 问题：{question}（第{d}册 {n}）怎么办？\n\n+ 问题描述：运行时 {question}\n\n+ 解决方法：{fix}\n\n"
                f"```bash\npython train.py --case {d}{n} --device gpu\n```\n"
            )
        (seeds / f"doc{d}.md").write_text("\n".join(parts), encoding="utf-8")
    return seeds


def _built(tmp_path: Path) -> tuple[Settings, Engine]:
    settings = Settings(seeds_dir=_seeds(tmp_path), index_dir=tmp_path / "index", embedder="hash")
    embedder = HashEmbedder()
    report = build(settings, embedder)
    assert report.notes and report.notes[0].startswith("self-test on ")  # what `bot build` prints
    return settings, Engine.open(settings, embedder)


def test_the_build_stores_its_self_test_in_the_generation_and_the_engine_ranks_the_unlabelled_by_it(tmp_path):
    settings, engine = _built(tmp_path)
    generation, manifest = read_manifest(settings.index_dir)
    stored = json.loads((generation / SELFTEST_FILE).read_text(encoding="utf-8"))
    assert SELFTEST_FILE in manifest["artifacts"]  # checksummed like the rest of the generation
    assert stored["questions"] >= 20 and stored["documents"] == 3 and stored["folds"] == 3
    assert set(stored["hit1"]) == {"fitted", "calibration", "dense", "bm25"}
    test = engine.selftest
    assert test is not None and test.hit1 == stored["hit1"]
    if test.lexical is None:  # the held-out folds showed no gain: the calibration's weights rank everything
        assert engine.weights == engine.calibration.weights
    else:  # the fitted weights are the shared rule's; the calibration's stay for sections with evidence of their own
        assert engine.weights.shared == replace(
            engine.calibration.weights, lexical=test.lexical, subject=test.subject, shared=None
        )
        assert replace(engine.weights, shared=None) == engine.calibration.weights


def _pseudo(n: int, sections: int, rng: np.random.Generator, words_decide: bool) -> tuple[list, list]:
    """``n`` questions over ``sections`` sections: dense finds the answer about half the time; BM25 always when
    ``words_decide``, else never."""
    evidences, questions = [], []
    for i in range(n):
        answer = i % sections
        dense = rng.normal(size=sections).astype(np.float32)
        if i % 2:
            dense[answer] = dense.max() + 1.0
        lexical = np.zeros(sections, np.float32)
        lexical[answer if words_decide else (answer + 1) % sections] = 5.0
        scores = Scores(np.zeros(4), dense, lexical, [], 0.0, {}, [])
        evidences.append(
            Evidence(
                "q", "en", own=scores, allowed=np.ones(sections, bool), subject_share=np.zeros(sections, np.float32)
            )
        )
        questions.append(PseudoQuestion(f"q{i}", answer, "heading", (f"q{i}",)))
    return evidences, questions


def test_the_fit_keeps_weights_only_where_held_out_documents_show_a_gain():
    rng = np.random.default_rng(0)
    sources = [f"doc{s % 4}.md" for s in range(12)]
    base = Weights(0.0, 0.0)  # dense alone: what the seeds' fit might have chosen
    evidences, questions = _pseudo(120, 12, rng, words_decide=True)
    kept = fit(evidences, questions, sources, base)
    assert kept.lexical is not None and kept.lexical > 0 and kept.wins > kept.losses
    assert kept.hit1["fitted"] > kept.hit1["calibration"] and kept.folds == 4
    # BM25 points at the wrong section: nothing better than the base weights, nothing kept
    evidences, questions = _pseudo(120, 12, rng, words_decide=False)
    assert fit(evidences, questions, sources, base).lexical is None
    assert fit(evidences[:10], questions[:10], sources, base).hit1 == {}  # too few to fit


def test_a_rebuild_embeds_no_stripped_key_again(tmp_path):
    settings, _ = _built(tmp_path)

    class Counting(HashEmbedder):
        texts = 0

        def embed(self, texts, role="passage"):
            Counting.texts += len(texts)
            return super().embed(texts, role=role)

    (settings.seeds_dir / "extra.md").write_text("# Extra\n\n## 新问题：磁盘满了\n\n清理缓存。\n", encoding="utf-8")
    build(settings, Counting())
    # the new page's keys, its pseudo-questions' stripped keys and the queries: not the 24 old sections' again
    assert 0 < Counting.texts < 40


def test_a_pseudo_question_is_never_scored_against_its_own_source_text(tmp_path):
    _, engine = _built(tmp_path)
    target = next(n for n, s in enumerate(engine.sections) if "第1册 2" in s.heading)
    text = "找不到 libcudart.so（第1册 2）怎么办？"
    question = PseudoQuestion(text, target, "heading", (text,))
    embedder = engine.queries.embedder
    (probed,) = probe(engine, [question], lambda texts, role: embedder.embed(texts, role=role))
    plain = engine.evidence(text, use_meta=False)
    assert plain.own is not None and probed.own is not None
    # scored with its own heading in the index, the section wins on both; without it, on neither by that text
    assert int(np.argmax(plain.own.lexical)) == target and int(np.argmax(plain.own.dense)) == target
    assert probed.own.lexical[target] < plain.own.lexical[target]
    assert probed.own.dense[target] < plain.own.dense[target]
    others = np.arange(len(engine.sections)) != target
    assert np.allclose(probed.own.dense[others], plain.own.dense[others], atol=1e-5)  # the others as they are


def _evidence(known: np.ndarray) -> Evidence:
    # section 0 wins on the words, section 1 on the subjects
    scores = Scores(np.zeros(2), np.array([0.9, 0.1, 0.0]), np.array([0.0, 0.0, 0.0]), [], 0.0, {}, [])
    return Evidence(
        "q", "en", own=scores, allowed=np.ones(3, bool), subject_share=np.array([0.0, 1.0, 0.0]), known=known
    )


def test_the_shared_weights_rank_only_where_no_section_has_evidence_of_its_own():
    weights = Weights(0.5, 3.0, shared=Weights(0.5, 0.0))
    all_known, none_known = np.ones(3, bool), np.zeros(3, bool)
    assert rank(_evidence(all_known), weights).order[0] == 1  # the labelled fit's subject weight
    assert rank(_evidence(none_known), weights).order[0] == 0  # the self-test's, for pages nobody labelled
    assert rank(_evidence(none_known), replace(weights, shared=None)).order[0] == 1


def test_a_self_test_of_another_version_or_unreadable_is_ignored(tmp_path):
    from bot.engine.selftest import load

    (tmp_path / SELFTEST_FILE).write_text(json.dumps({**SelfTest(lexical=1.0, subject=0.0).to_json(), "version": 0}))
    assert load(tmp_path) is None
    (tmp_path / SELFTEST_FILE).write_text("{not json")
    assert load(tmp_path) is None
    assert load(tmp_path / "missing") is None
