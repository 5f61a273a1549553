"""The OpenAI-compatible endpoint, driven by the official ``openai`` client: the same reply as the chat, with citations."""

from __future__ import annotations

import re

import httpx
import openai
import pytest
from fixtures.server import ThreadServer

from app import WebSettings, build_app
from bot.web.openai_api import MODEL_ID
from bot.engine.retrieve import Engine
from bot.store.database import Store, StoreSettings

TOKEN = "api-token-1"
ZH = "训练时显存不足怎么办？"
EN = "How do I fix libnccl.so not found when training on several GPUs?"


@pytest.fixture
def served(hash_settings, tmp_path):
    engine = Engine.open(hash_settings, auto_build=True)
    store = Store.open(StoreSettings(data_dir=tmp_path / "data"))
    app = build_app(hash_settings, engine=engine, web=WebSettings(api_token=TOKEN), progress=False, store=store)
    with ThreadServer(app) as server:
        yield server, store
    store.close()


def client(server, key: str = TOKEN) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0, timeout=60)


def check_zh(content: str, citations: list[dict], bot: dict) -> None:
    assert bot["language"] == "zh" and bot["answered"] is True
    first = citations[0]
    assert first["source"] == "gpu.md" and "显存不足" in first["section"]
    assert {"source", "section", "heading_path", "lines", "url", "key"} <= first.keys()
    assert first["url"] in content and "来源" in content  # the same citation, in the text too
    assert "batch_size" in content


def check_en(content: str, citations: list[dict], bot: dict) -> None:
    assert bot["language"] == "en"
    first = citations[0]
    assert first["source"] == "gpu.md" and "libnccl.so" in first["section"]
    assert first["url"] in content and "**Source:**" in content and "来源" not in content
    assert not re.search(r"[\u4e00-\u9fff]", content.split("\n", 1)[0].replace(first["section"], ""))  # English framing


def test_chinese_and_english_questions_not_streamed(served):
    server, store = served
    ai = client(server)
    for question, check in ((ZH, check_zh), (EN, check_en)):
        completion = ai.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": question}],
                                                user="ide-plugin-7")
        assert completion.object == "chat.completion" and completion.choices[0].finish_reason == "stop"
        message = completion.choices[0].message
        assert message.role == "assistant"
        extra = completion.model_extra
        check(message.content, extra["citations"], extra["bot"])
        # exactly what POST /api/ask says for the same question
        direct = httpx.post(server.url + "/api/ask", json={"question": question},
                            headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60).json()
        assert direct["reply"] == message.content and [h["key"] for h in direct["hits"]] == [c["key"] for c in extra["citations"]]
    assert store.flush(10)
    asked = [r for r in store.rows() if r["kind"] == "question"]
    assert [r["question"] for r in asked] == [ZH, ZH, EN, EN]
    assert asked[0]["session"] and asked[0]["session"] != "ide-plugin-7" and asked[0]["latency_ms"] > 0


def test_chinese_and_english_questions_streamed(served):
    server, _ = served
    ai = client(server)
    for question, check in ((ZH, check_zh), (EN, check_en)):
        whole = ai.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": question}])
        chunks = list(ai.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": question}],
                                                 stream=True))
        assert len(chunks) > 3 and chunks[0].choices[0].delta.role == "assistant"
        text = "".join(c.choices[0].delta.content or "" for c in chunks)
        final = chunks[-1]
        assert final.choices[0].finish_reason == "stop"
        check(text, final.model_extra["citations"], final.model_extra["bot"])
        assert text == whole.choices[0].message.content  # streamed or not, the same reply


def test_follow_up_uses_earlier_user_messages(served):
    server, _ = served
    completion = client(server).chat.completions.create(model=MODEL_ID, messages=[
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": [{"type": "text", "text": ZH}]},
        {"role": "assistant", "content": "…"},
        {"role": "user", "content": "that didn't help"},
    ])
    assert completion.choices[0].message.content.startswith("Sorry that didn't help")
    first = client(server).chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": ZH}])
    shown = {c["key"] for c in first.model_extra["citations"]}
    assert not shown & {c["key"] for c in completion.model_extra["citations"]}  # moved on, not repeated


def test_models_auth_and_bad_input(served):
    server, _ = served
    assert [m.id for m in client(server).models.list()] == [MODEL_ID]
    with pytest.raises(openai.AuthenticationError):
        client(server, key="wrong").chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": ZH}])
    with pytest.raises(openai.AuthenticationError):
        client(server, key="wrong").models.list()
    with pytest.raises(openai.BadRequestError, match="last message must be the user's question"):
        client(server).chat.completions.create(model=MODEL_ID, messages=[{"role": "assistant", "content": "hi"}])
    with pytest.raises(openai.BadRequestError, match="non-empty list"):
        client(server).chat.completions.create(model=MODEL_ID, messages=[])
    raw = httpx.post(server.url + "/v1/chat/completions", content=b"{nope", timeout=30,
                     headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    assert raw.status_code == 400 and "not JSON" in raw.json()["error"]["message"]
