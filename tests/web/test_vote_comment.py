"""A 👎 may carry the user's own words (issue 35): ``/api/feedback`` takes a ``comment`` (at most
:data:`bot.limits.VOTE_COMMENT_CHARS`, longer is refused), the store keeps it with the vote (schema version 5), and
the chat's reason row records it with the vote it explains."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app import WebSettings, build_app
from bot.limits import VOTE_COMMENT_CHARS
from bot.store.database import Store
from bot.web.ui.events import Deps, vote, vote_reason
from bot.web.ui.state import AnswerInfo, ChatState, restore, snapshot


def test_the_api_stores_a_comment_with_the_vote_and_refuses_one_over_the_limit(hash_settings, store_settings):
    store = Store.open(store_settings)
    try:
        app = build_app(hash_settings, engine=object(), web=WebSettings(), store=store, ui=False, admin=False)
        with TestClient(app) as client:
            said = "命令里的 cu118 和我的 CUDA 12.2 不符"
            body = {"question": "为什么不用 GPU", "vote": "down", "reason": "didnt_help", "answer_id": "a-1"}
            assert client.post("/api/feedback", json={**body, "comment": said}).status_code == 200
            too_long = client.post("/api/feedback", json={**body, "comment": "x" * (VOTE_COMMENT_CHARS + 1)})
            assert too_long.status_code == 422
        assert store.flush(10)
        rows = [r for r in store.rows() if r["kind"] == "vote"]
        assert [(r["answer_id"], r["reason"], r["comment"]) for r in rows] == [("a-1", "didnt_help", said)]
    finally:
        store.close()


class Kept(list):
    def record(self, event, **_):
        self.append(event)


def test_the_chat_records_the_comment_with_the_down_vote_and_keeps_it_over_a_reload():
    kept = Kept()
    deps = Deps(None, None, None, kept)
    state = ChatState(
        messages=[{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
        answers={"1": AnswerInfo("a1", "q", "zh", "answer")},
        language="zh",
    )
    state, _ = vote(deps, state, 1, "Dislike")
    state, toast = vote_reason(deps, state, "outdated", "x" * (VOTE_COMMENT_CHARS + 50))
    assert toast and [(e.vote, e.reason, len(e.comment)) for e in kept] == [
        ("down", "", 0),
        ("down", "outdated", VOTE_COMMENT_CHARS),
    ]
    assert restore(snapshot(state), ChatState()).answers["1"].comment == "x" * VOTE_COMMENT_CHARS
    # A new vote on the same answer starts without the old words.
    state, _ = vote(deps, state, 1, "Like")
    assert (kept[-1].vote, kept[-1].comment) == ("up", "")
