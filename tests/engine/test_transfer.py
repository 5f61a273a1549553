"""Relevance and confidence that transfer: a document nobody labelled is ranked by the rule every section shares,
and the old documents' labels and curated phrasings never pull its questions away from it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from bot.engine.calibration import FEATURES, Calibration, calibration_path, load_for, sources_fingerprint
from bot.engine.precedents import Precedents
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.fit.calibrate import calibrate
from bot.kb.embed import HashEmbedder
from fixtures.engines import hash_engine, hash_settings_for

OLD = (
    "# Old FAQ\n\n## 显存不足怎么办\n\n减小 batch_size，out of memory 时先看显存占用。\n\n"
    "## 训练很慢 GPU 利用率低\n\n增大 num_workers，用 DataLoader 预取数据。\n"
)
NEW = (
    "# New FAQ\n\n## 安装后找不到 libcudnn\n\n把 cudnn 的 lib 目录加入 LD_LIBRARY_PATH 后重新 import。\n\n"
    "## 多机训练 NCCL 超时\n\n设置 NCCL_SOCKET_IFNAME 为机器间相通的网卡，再检查防火墙。\n"
)
NEW_QUESTIONS = {
    "安装后 import 报错找不到 libcudnn 怎么办": "安装后找不到 libcudnn",
    "多机训练时 NCCL 超时，网卡怎么设置": "多机训练 NCCL 超时",
}


def _engine(root: Path, *, curated: bool) -> Engine:
    """Old and new documents; with ``curated`` the old one has phrasings that read like the new questions."""
    seeds = root / "seeds"
    seeds.mkdir(parents=True)
    (seeds / "old.md").write_text(OLD, encoding="utf-8")
    (seeds / "new.md").write_text(NEW, encoding="utf-8")
    engine = hash_engine(hash_settings_for(root))
    if curated:
        anchor = next(s.anchor for s in engine.sections if s.source == "old.md" and "显存" in s.heading)
        (seeds / "meta").mkdir()
        (seeds / "meta" / "old.toml").write_text(
            f'source = "old.md"\n[sections."{anchor}"]\nheading = "显存不足怎么办"\ntitle_en = "Out of memory"\n'
            'summary_en = "Reduce the batch size."\n'
            f"phrasings_zh = {json.dumps(list(NEW_QUESTIONS), ensure_ascii=False)}\n",
            encoding="utf-8",
        )
        engine = hash_engine(hash_settings_for(root))
    return engine


def _labelled(engine: Engine) -> Engine:
    """The old document's labels: precedents worded like the new questions, all answered by an old section."""
    old = next(s.key for s in engine.sections if s.source == "old.md" and "显存" in s.heading)
    vectors = engine.embedder.embed(list(NEW_QUESTIONS), role="query")
    cal = dataclasses.replace(
        engine.calibration,
        precedents=Precedents(vectors, tuple((old,) for _ in NEW_QUESTIONS), k=1),
        precedent_weight=4.0,
    )
    engine.calibration = cal
    return engine


def _top(engine: Engine, question: str, *, gated: bool = True) -> str:
    evidence = engine.evidence(question)
    if not gated:
        evidence = dataclasses.replace(evidence, known=None)
    return engine.sections[rank(evidence, engine.calibration.weights).order[0]].key


def test_a_new_documents_questions_rank_the_same_with_and_without_the_old_documents_labels_and_phrases(tmp_path):
    bare = _engine(tmp_path / "bare", curated=False)
    labelled = _labelled(_engine(tmp_path / "labelled", curated=True))
    assert labelled.known().tolist() == [s.source == "old.md" and "显存" in s.heading for s in labelled.sections]
    for question, heading in NEW_QUESTIONS.items():
        without = _top(bare, question)
        assert bare.section(without).heading == heading  # the shared rule finds it on its own
        # The old document's evidence does pull (ungated it leads with the old section) ...
        assert labelled.section(_top(labelled, question, gated=False)).source == "old.md"
        # ... but never past a section nobody labelled: the same first section as without any labels or phrases.
        assert _top(labelled, question) == without


def test_a_company_label_protects_only_its_own_section_not_the_rest_of_its_page(tmp_path):
    """A company labels one section of its new page: that section has evidence of its own, the page's other
    sections still have none, and the old document's labels and phrasings still cannot pull their questions away
    (with the page counted as known as a whole, the old section led with "多机训练时 NCCL 超时" here)."""
    engine = _labelled(_engine(tmp_path / "e", curated=True))
    libcudnn = next(s.key for s in engine.sections if "libcudnn" in s.heading)
    mine = engine.embedder.embed(["import 的时候找不到 libcudnn.so"], role="query")
    old = engine.calibration.precedents
    engine.calibration = dataclasses.replace(
        engine.calibration,
        precedents=Precedents(np.vstack([old.vectors, mine]), (*old.answers, (libcudnn,)), k=old.k),
    )
    known = {engine.sections[n].heading for n in np.flatnonzero(engine.known())}
    assert known == {"显存不足怎么办", "安装后找不到 libcudnn"}
    nccl = "多机训练时 NCCL 超时，网卡怎么设置"
    assert engine.section(_top(engine, nccl)).heading == "多机训练 NCCL 超时"
    assert engine.section(_top(engine, nccl, gated=False)).source == "old.md"  # what the gate holds back


def test_questions_about_the_labelled_documents_keep_their_evidence(tmp_path):
    engine = _labelled(_engine(tmp_path / "e", curated=True))
    # A question the shared rule already puts on the old document: its precedents and phrases still add.
    evidence = engine.evidence("显存不足 out of memory")
    gated = rank(evidence, engine.calibration.weights)
    ungated = rank(dataclasses.replace(evidence, known=None), engine.calibration.weights)
    assert gated.order[0] == ungated.order[0] and engine.sections[gated.order[0]].source == "old.md"
    known = engine.known()
    assert np.allclose(gated.scores[known], ungated.scores[known])


def _unseen(threshold: float) -> dict:
    n = len(FEATURES)
    return {
        "mean": [0.0] * n,
        "scale": [1.0] * n,
        "coef": [0.0] * n,
        "intercept": 0.0,
        "answer_threshold": threshold,
        "none_threshold": 0.01,
    }


def test_changed_documents_use_the_fit_with_documents_held_out_not_a_hand_set_default(tmp_path):
    index_dir = tmp_path / "index"
    fitted = dataclasses.replace(
        Calibration.default("hash:256"),
        calibrated=True,
        answer_threshold=0.5,
        sources_hash=sources_fingerprint({"old.md": "0"}),
        unseen=_unseen(0.77),
    )
    path = calibration_path(index_dir, "hash:256")
    fitted.save(path)
    assert Calibration.load(path).unseen == fitted.unseen
    same = load_for(index_dir, "hash:256", {"old.md": "0"})
    assert same.answer_threshold == 0.5
    # Stored without per-document hashes (an older file): any change serves every document as unseen.
    changed = load_for(index_dir, "hash:256", {"old.md": "0", "new.md": "1"})
    assert changed.calibrated and changed.answer_threshold == 0.77 and changed.figures["documents_changed"]
    assert changed.learned_weight == 0.0  # the adapter learned the old sections only


def _cases(path: Path) -> Path:
    rows = []
    for n in range(8):
        rows += [
            {"query": f"训练时显存不足 out of memory 第{n}次", "url": f"https://t/a{n}", "kind": "zh",
             "expect": [{"source": "old.md", "section": "显存不足怎么办"}]},
            {"query": f"训练很慢 GPU 利用率低 num_workers {n}", "url": f"https://t/b{n}", "kind": "zh",
             "expect": [{"source": "old.md", "section": "训练很慢 GPU 利用率低"}]},
            {"query": f"多机训练 NCCL 超时 网卡 {n}", "url": f"https://t/c{n}", "kind": "zh",
             "expect": [{"source": "new.md", "section": "多机训练 NCCL 超时"}]},
            {"query": f"import 找不到 libcudnn LD_LIBRARY_PATH {n}", "url": f"https://t/d{n}", "kind": "zh",
             "expect": [{"source": "new.md", "section": "安装后找不到 libcudnn"}]},
            {"query": f"how do I bake bread number {n}", "url": f"https://u/{n}", "kind": "en", "expect": []},
            {"query": f"PyTorch DDP hangs on Jetson {n}", "url": f"https://v/{n}", "kind": "en", "expect": []},
        ]  # fmt: skip
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_calibrate_fits_and_stores_the_model_for_unseen_documents_with_its_held_out_figures(tmp_path, capsys):
    engine = _engine(tmp_path / "kb", curated=False)
    cal = calibrate(engine, [_cases(tmp_path / "labelled.jsonl")], progress=True)
    bar = capsys.readouterr().err
    assert "tune: documents held out" in bar and "100%" in bar  # `bot tune` shows where it is
    assert set(cal.figures["seconds"]) >= {"embed", "read", "cross_validate", "documents_held_out"}
    unseen = cal.figures["unseen_documents"]
    assert unseen["documents"] == 2 and unseen["n_in_scope"] == 32 and unseen["n_out_of_scope"] == 16
    assert 0.0 <= unseen["out_of_scope_confident"] <= 1.0 and 0.0 <= unseen["in_scope_confident_wrong"] <= 1.0
    assert cal.unseen is not None and 0.0 <= cal.unseen["none_threshold"] <= cal.unseen["answer_threshold"] <= 1.0
    assert not engine.hidden  # the fit hid each document in turn and put them all back
    stored = Calibration.load(calibration_path(engine.settings.index_dir, engine.embedder.id))
    assert stored.unseen == cal.unseen
    reopened = Engine(engine.index, HashEmbedder(), engine.settings)
    assert reopened.calibration == cal
