"""/admin as issue 35 asked: a repeated answer is no answer, a pasted ``nvidia-smi`` table reads as its cells (not
``+-----`` runs), and "New chat" starts a new session, so a question's context has no turn from before it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.kb.embed import HashEmbedder
from bot.web.admin.gaps import text_of
from bot.web.admin.report import build_report
from bot.web.ui.state import ChatState

SMI = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
|===============================+======================+======================|
|   0  NVIDIA GeForce RTX 3060  Off | 00000000:01:00.0 On |                  N/A |
+-------------------------------+----------------------+----------------------+
为什么 Paddle 训练时不用 GPU？"""


def question(at, session, cited, tier="answer", text="显存不足怎么办"):
    return {
        "at": at,
        "kind": "question",
        "session": session,
        "tier": tier,
        "question": text,
        "signature": None,
        "cited": cited,
        "vote": None,
        "latency_ms": 300.0,
        "answer_id": None,
    }


def test_a_repeated_answer_is_not_counted_as_answered():
    t = datetime.now(UTC).replace(tzinfo=None) - timedelta(hours=1)
    rows = [
        question(t, "s1", ["gpu.md#oom"]),
        question(t + timedelta(seconds=30), "s1", ["gpu.md#oom"], text="还是不行"),  # the same answer again
        question(t + timedelta(seconds=60), "s2", ["gpu.md#oom"]),  # another person: answered
    ]
    embedder = HashEmbedder()
    report = build_report(rows, lambda texts: embedder.embed(texts, role="query"), days=7)
    assert (report.totals["answered"], report.totals["tentative"]) == (2, 1)


def test_a_pasted_nvidia_smi_table_reads_as_its_cells():
    text = text_of({"question": SMI})
    assert "---" not in text and "===" not in text and "+" not in text
    assert text.startswith("NVIDIA-SMI 535.104.05 Driver Version: 535.104.05 CUDA Version: 12.2")
    assert "NVIDIA GeForce RTX 3060 Off | 00000000:01:00.0 On" in text and text.endswith(
        "为什么 Paddle 训练时不用 GPU？"
    )


def test_new_chat_starts_a_new_session(monkeypatch):
    from bot.settings import Settings, WebSettings
    from bot.web.ui.layout import make_ui

    blocks = make_ui(type("Engine", (), {"sections": [], "meta": lambda self, key: None})(), Settings(), WebSettings())
    new_chat = next(fn for fn in blocks.fns.values() if getattr(fn.fn, "__name__", "") == "on_new_chat")
    old = ChatState(language="zh", session="tab-session")
    _, _, fresh, _, _ = new_chat.fn(old)
    assert fresh.session and fresh.session != old.session and fresh.language == "zh"
