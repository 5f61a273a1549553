"""/admin shows the knowledge base's self-test: hit@1 on its own held-out pseudo-questions beside dense and BM25."""

from __future__ import annotations

from types import SimpleNamespace

import httpx

from app import WebSettings, build_app
from bot.engine.retrieve import Engine
from bot.engine.selftest import SelfTest
from bot.store.database import Store
from bot.web.admin.routes import selftest_of
from fixtures.server import ThreadServer
from web.test_admin import ADMIN, seed

FIGURES = {"fitted": 0.61, "calibration": 0.5, "dense": 0.4, "bm25": 0.55}


class Loading:
    @property
    def selftest(self):
        raise RuntimeError("the index is still loading")


def test_the_self_test_line_is_there_only_when_a_self_test_was_fitted():
    shown = selftest_of(SimpleNamespace(selftest=SelfTest(lexical=1.0, subject=0.0, questions=120, hit1=FIGURES)))
    assert shown == {"n": 120, "fitted": "0.610", "calibration": "0.500", "dense": "0.400", "bm25": "0.550"}
    # too few questions to fit, no self-test stored, an engine still loading: no line
    assert selftest_of(SimpleNamespace(selftest=SelfTest(questions=5))) is None
    assert selftest_of(SimpleNamespace(selftest=None)) is None and selftest_of(Loading()) is None


def test_admin_shows_the_self_test_in_the_page_and_its_data(store_settings, hash_settings):
    store = Store.open(store_settings.model_copy(update={"admin_token": ADMIN}))
    seed(store)
    engine = Engine.open(hash_settings, auto_build=True)
    engine.selftest = SelfTest(lexical=1.0, subject=0.0, questions=120, documents=4, hit1=FIGURES)
    app = build_app(hash_settings, engine=engine, web=WebSettings(), progress=False, store=store, ops=store.settings)
    auth = {"Authorization": f"Bearer {ADMIN}"}
    try:
        with ThreadServer(app) as server:
            english = httpx.get(server.url + "/admin?lang=en", headers=auth, timeout=60).text
            chinese = httpx.get(server.url + "/admin?lang=zh", headers=auth, timeout=60).text
            data = httpx.get(server.url + "/admin/data.json", headers=auth, timeout=60).json()
    finally:
        store.close()
    assert "self-test on 120 questions drawn from the pages" in english and "BM25 alone 0.550" in english
    assert "自测" in chinese and "0.610" in chinese
    assert data["selftest"]["fitted"] == "0.610" and data["selftest"]["dense"] == "0.400"
