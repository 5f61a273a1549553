"""The OpenAI-compatible endpoint, driven by the official ``openai`` client: the same reply as the chat, with citations."""

from __future__ import annotations

import functools
import json
import re
import time

import httpx
import openai
import pytest

from app import WebSettings, build_app
from bot.engine.retrieve import Engine
from bot.store.database import Store, StoreSettings
from bot.web.openai_api import MODEL_ID, count_tokens
from fixtures.browser import shots  # noqa: F401 (a fixture)
from fixtures.server import ThreadServer

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


def unsigned(text: str) -> str:
    """``text`` with the expiry and signature of its /source links taken out (they depend on the time of the reply)."""
    return re.sub(r"&exp=\d+&sig=[\w-]+", "", text)


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
        completion = ai.chat.completions.create(
            model=MODEL_ID, messages=[{"role": "user", "content": question}], user="ide-plugin-7"
        )
        assert completion.object == "chat.completion" and completion.choices[0].finish_reason == "stop"
        message = completion.choices[0].message
        assert message.role == "assistant"
        extra = completion.model_extra
        check(message.content, extra["citations"], extra["bot"])
        # exactly what POST /api/ask says for the same question (its links signed a moment later: another expiry)
        direct = httpx.post(
            server.url + "/api/ask",
            json={"question": question},
            headers={"Authorization": f"Bearer {TOKEN}"},
            timeout=60,
        ).json()
        assert unsigned(direct["reply"]) == unsigned(message.content)
        assert [h["key"] for h in direct["hits"]] == [c["key"] for c in extra["citations"]]
    assert store.flush(10)
    asked = [r for r in store.rows() if r["kind"] == "question"]
    assert [r["question"] for r in asked] == [ZH, ZH, EN, EN]
    assert asked[0]["session"] and asked[0]["session"] != "ide-plugin-7" and asked[0]["latency_ms"] > 0


def test_chinese_and_english_questions_streamed(served):
    server, _ = served
    ai = client(server)
    for question, check in ((ZH, check_zh), (EN, check_en)):
        whole = ai.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": question}])
        chunks = list(
            ai.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": question}], stream=True)
        )
        assert len(chunks) > 3 and chunks[0].choices[0].delta.role == "assistant"
        text = "".join(c.choices[0].delta.content or "" for c in chunks)
        final = chunks[-1]
        assert final.choices[0].finish_reason == "stop"
        check(text, final.model_extra["citations"], final.model_extra["bot"])
        # streamed or not, the same reply; the two replies may be signed a second apart
        assert unsigned(text) == unsigned(whole.choices[0].message.content)


def test_follow_up_uses_earlier_user_messages(served):
    server, _ = served
    completion = client(server).chat.completions.create(
        model=MODEL_ID,
        messages=[
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": [{"type": "text", "text": ZH}]},
            {"role": "assistant", "content": "…"},
            {"role": "user", "content": "that didn't help"},
        ],
    )
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
    raw = httpx.post(
        server.url + "/v1/chat/completions",
        content=b"{nope",
        timeout=30,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    assert raw.status_code == 400 and "not JSON" in raw.json()["error"]["message"]


def post(server, body: dict) -> httpx.Response:
    return httpx.post(
        server.url + "/v1/chat/completions", json=body, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}
    )


def test_unknown_model_is_a_404_in_openais_shape_and_the_model_can_be_retrieved(served):
    server, store = served
    ai = client(server)
    assert ai.models.retrieve(MODEL_ID).id == MODEL_ID  # client.models.retrieve: GET /v1/models/{id}
    with pytest.raises(openai.NotFoundError, match="gpt-4o"):
        ai.models.retrieve("gpt-4o")
    with pytest.raises(openai.NotFoundError, match=MODEL_ID):  # the message names the model there is
        ai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": ZH}])
    raw = post(server, {"model": "gpt-4o", "messages": [{"role": "user", "content": ZH}]})
    assert raw.status_code == 404
    error = raw.json()["error"]
    assert (error["type"], error["param"], error["code"]) == ("invalid_request_error", "model", "model_not_found")
    assert "gpt-4o" in error["message"]
    assert store.flush(10) and not store.rows()  # refused before anything was asked or recorded


def test_n_above_one_is_refused_naming_the_parameter(served):
    server, _ = served
    with pytest.raises(openai.BadRequestError, match='"n" must be 1') as caught:
        client(server).chat.completions.create(model=MODEL_ID, n=2, messages=[{"role": "user", "content": ZH}])
    assert caught.value.body["param"] == "n"
    assert post(server, {"model": MODEL_ID, "n": 1, "messages": [{"role": "user", "content": ZH}]}).status_code == 200
    assert post(server, {"n": "2", "messages": [{"role": "user", "content": ZH}]}).json()["error"]["param"] == "n"


def test_count_tokens_counts_cjk_characters_and_quarter_words():
    assert count_tokens("") == 0
    assert count_tokens("显存") == 2 and count_tokens("abcd") == 1 and count_tokens("abcde") == 2
    assert count_tokens("显存 abcd") == 2 + 2  # " abcd" is five other characters


def test_usage_is_counted_and_streamed_last_when_asked(served):
    server, _ = served
    ai = client(server)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": ZH}]
    whole = ai.chat.completions.create(model=MODEL_ID, messages=messages)
    content = whole.choices[0].message.content
    prompt = count_tokens("Be brief.") + count_tokens(ZH)
    assert whole.usage.prompt_tokens == prompt == 3 + 11
    assert whole.usage.completion_tokens == count_tokens(content) > 0
    assert whole.usage.total_tokens == prompt + count_tokens(content)

    chunks = list(
        ai.chat.completions.create(
            model=MODEL_ID, messages=messages, stream=True, stream_options={"include_usage": True}
        )
    )
    last = chunks[-1]
    assert last.choices == [] and last.usage.model_dump() == whole.usage.model_dump()  # as OpenAI: its own chunk
    assert all(c.usage is None for c in chunks[:-1])
    # The two requests may fall in different seconds: their signed links then differ in expiry and signature only.
    unsigned = functools.partial(re.sub, r"exp=\d+&sig=[\w-]+", "exp=…")
    assert unsigned("".join(c.choices[0].delta.content or "" for c in chunks[:-1])) == unsigned(content)
    assert chunks[-2].choices[0].finish_reason == "stop" and chunks[-2].model_extra["citations"]

    plain = list(ai.chat.completions.create(model=MODEL_ID, messages=messages, stream=True))
    assert all(c.usage is None and c.choices for c in plain)  # not asked: no usage chunk


def test_answer_id_links_a_vote_to_the_answer(served):
    server, store = served
    completion = client(server).chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": ZH}])
    answer_id = completion.model_extra["answer_id"]
    assert re.fullmatch(r"[0-9a-f]{32}", answer_id)
    streamed = list(
        client(server).chat.completions.create(model=MODEL_ID, stream=True, messages=[{"role": "user", "content": ZH}])
    )
    assert streamed[-1].model_extra["answer_id"] not in ("", answer_id)  # one id per answer
    vote = httpx.post(
        server.url + "/api/feedback",
        timeout=30,
        headers={"Authorization": f"Bearer {TOKEN}"},
        json={
            "question": ZH,
            "vote": "down",
            "answer_id": answer_id,
            "reason": "outdated",
            "cited": [c["key"] for c in completion.model_extra["citations"][:1]],
        },
    )
    assert vote.status_code == 200
    assert store.flush(10)
    votes = [r for r in store.rows() if r["kind"] == "vote"]
    assert [(v["answer_id"], v["vote"]) for v in votes] == [(answer_id, "down")]


# What chat front-ends send to their model for their own bookkeeping, as they send it (see openai_api.py).
CHAT = "USER: How do I fix libnccl.so not found when training on several GPUs?\nASSISTANT: Install NCCL …"
OPEN_WEBUI_TITLE = (
    "### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n### Guidelines:\n"
    "- The title should clearly represent the main theme or subject of the conversation.\n"
    "- Write the title in the chat's primary language; default to English if multilingual.\n### Output:\n"
    'JSON format: { "title": "your concise title here" }\n### Chat History:\n<chat_history>\n'
    + CHAT
    + "\n</chat_history>"
)
OPEN_WEBUI_TAGS = (
    "### Task:\nGenerate 1-3 broad tags categorizing the main themes of the chat history, along with 1-3 more "
    "specific subtopic tags.\n\n### Guidelines:\n- Start with high-level domains (e.g. Science, Technology)\n"
    '\n### Output:\nJSON format: { "tags": ["tag1", "tag2", "tag3"] }\n\n### Chat History:\n<chat_history>\n'
    + CHAT
    + "\n</chat_history>"
)
OPEN_WEBUI_FOLLOW_UPS = (
    "### Task:\nSuggest 3-5 relevant follow-up questions or prompts that the user might naturally ask next in this "
    "conversation as a **user**, based on the chat history.\n### Output:\n"
    'JSON format: { "follow_ups": ["Question 1?", "Question 2?", "Question 3?"] }\n### Chat History:\n'
    "<chat_history>\n" + CHAT + "\n</chat_history>"
)
LIBRECHAT_TITLE = (
    "Please generate a concise, 5-word-or-less title for the conversation, using its same language, with no "
    "punctuation. Apply title case conventions appropriate for the language. Never directly mention the language "
    'name or the word "title"\n\n||>User:\n"训练时显存不足怎么办？"\n||>Response:\n"调小 batch_size …"\n\n||>Title:'
)
LIBRECHAT_AGENT_TITLE = (
    "Provide a concise, 5-word-or-less title for the conversation, using title case conventions. Only return the "
    "title itself.\n\nConversation:\nUser: How do I fix libnccl.so not found when training?\nAI: Install NCCL …"
)


def test_front_end_title_and_tag_prompts_are_answered_and_not_recorded(served):
    server, store = served
    ai = client(server)
    title = ai.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": OPEN_WEBUI_TITLE}])
    assert json.loads(title.choices[0].message.content) == {"title": "How do I fix libnccl.so"}
    assert title.model_extra["citations"] == [] and title.usage.prompt_tokens == count_tokens(OPEN_WEBUI_TITLE)
    tags = post(
        server, {"model": MODEL_ID, "stream": False, "messages": [{"role": "user", "content": OPEN_WEBUI_TAGS}]}
    )
    assert json.loads(tags.json()["choices"][0]["message"]["content"]) == {"tags": []}
    follow = post(server, {"model": MODEL_ID, "messages": [{"role": "user", "content": OPEN_WEBUI_FOLLOW_UPS}]})
    assert json.loads(follow.json()["choices"][0]["message"]["content"]) == {"follow_ups": []}
    # LibreChat: its older client sends the title prompt as the only, system, message; its agents as a user message
    old = post(server, {"model": MODEL_ID, "messages": [{"role": "system", "content": LIBRECHAT_TITLE}]})
    assert old.json()["choices"][0]["message"]["content"] == "训练时显存不足怎么办"
    chunks = list(
        ai.chat.completions.create(
            model=MODEL_ID,
            stream=True,
            messages=[
                {"role": "user", "content": "How do I fix libnccl.so not found?"},
                {"role": "assistant", "content": "…"},
                {"role": "user", "content": LIBRECHAT_AGENT_TITLE},
            ],
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "How do I fix libnccl.so"
    assert store.flush(10) and store.rows() == []  # no question, no gap: nothing the operator would see
    # the same server does record a real question (so the empty log above is not a recorder that records nothing)
    ai.chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": EN}])
    assert store.flush(10) and [r["question"] for r in store.rows() if r["kind"] == "question"] == [EN]


def test_a_question_that_mentions_titles_or_tags_is_still_a_question(served):
    server, store = served
    for question in ("Generate a concise title for my training job's GPU log?", "### Task: tags in my NCCL config"):
        reply = client(server).chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": question}])
        assert reply.model_extra["bot"]["kind"] != "front_end_task"
    assert store.flush(10) and len([r for r in store.rows() if r["kind"] in ("question", "gap")]) >= 2


def test_v1_history_replayed_is_capped_like_api_ask(served, monkeypatch):
    # Before: /v1 replayed every earlier message whole, so 8 messages of 100,000 characters cost 8x /api/ask's work.
    import bot.web.api_turn as api_turn  # the one API turn of /api/ask and /v1

    seen: list[int] = []
    real = api_turn.take_turn

    def spy(engine, question, *, history=(), **kwargs):
        seen.append(sum(len(h) for h in history))
        return real(engine, question, history=history, **kwargs)

    monkeypatch.setattr(api_turn, "take_turn", spy)
    server, _ = served
    limit = 100_000  # the hash settings keep the default BOT_MAX_INPUT_CHARS
    messages = []
    for n in range(8):
        messages += [{"role": "user", "content": str(n) * 100_000}, {"role": "assistant", "content": "..."}]
    messages.append({"role": "user", "content": ZH})
    response = httpx.post(
        server.url + "/v1/chat/completions",
        json={"model": "gpu-troubleshooter", "messages": messages},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=120,
    )
    assert response.status_code == 200, response.text
    assert seen and seen[-1] <= limit


# ---------------------------------------------------------------- signed /source links (issue 18, item 2)


@pytest.fixture
def api_only(hash_settings, tmp_path):
    """The API without the UI (no Gradio), locked by the API token, served over real HTTP."""
    engine = Engine.open(hash_settings, auto_build=True)
    store = Store.open(StoreSettings(data_dir=tmp_path / "data"))
    app = build_app(
        hash_settings, engine=engine, web=WebSettings(api_token=TOKEN), progress=False, store=store, ui=False
    )
    with ThreadServer(app) as server:
        yield server
    store.close()


def test_source_links_of_a_v1_reply_open_in_a_browser_without_credentials(api_only):
    # Before: Open WebUI showed the citation, the user clicked it, and the browser (no cookie, no Bearer) got 401.
    completion = client(api_only).chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": ZH}])
    content, citations = completion.choices[0].message.content, completion.model_extra["citations"]
    url = citations[0]["url"]
    assert "&exp=" in url and "&sig=" in url and url in content  # the link in the text is the signed one too
    page = httpx.get(url, timeout=30)  # no Authorization header, no cookie: what a browser tab has
    assert page.status_code == 200 and "显存不足" in page.text
    # The page's "show the whole file" toggle keeps the signature, so it opens too.
    # The nav starts with the "back to the chat" link (issue 35), then the toggle.
    toggle = re.search(r'<nav><a href="\./" class="back">[^<]*</a> <a href="(\?[^"]+)"', page.text)
    toggle = toggle.group(1).replace("&amp;", "&")
    assert "sig=" in toggle and httpx.get(api_only.url + "/source" + toggle, timeout=30).status_code == 200


def test_a_changed_or_expired_source_link_is_refused_with_a_clear_message(api_only):
    from bot.web.signing import LinkSigner

    hits = httpx.post(
        api_only.url + "/api/ask", json={"question": EN}, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
    ).json()["hits"]
    url = hits[0]["url"]
    assert httpx.get(url, timeout=30).status_code == 200  # /api/ask's links are signed as /v1's are
    other_key = re.sub(r"key=[^&]+", "key=gpu.md%23another-section", url)
    forged = httpx.get(other_key, timeout=30)
    assert forged.status_code == 403 and "signature does not match" in forged.json()["detail"]
    bad_sig = httpx.get(re.sub(r"sig=[^&#]+", "sig=AAAAAAAAAAAAAAAAAAAAAAAA", url), timeout=30)
    assert bad_sig.status_code == 403
    # A link made two days ago with the app's own key: signed right, but too old.
    unsigned = re.sub(r"&exp=[^&#]+&sig=[^&#]+", "", url)
    old = LinkSigner(TOKEN, ttl=86_400).sign_url(unsigned, now=time.time() - 2 * 86_400)
    expired = httpx.get(old, timeout=30, headers={"Accept": "text/html"})
    assert expired.status_code == 401 and "has expired" in expired.text and "Ask the question again" in expired.text
    assert httpx.get(unsigned, timeout=30).status_code == 401  # no signature: the door as before
    # A signed link opens /source only, not the API.
    api = re.sub(r"/source\?", "/api/ask?", url)
    assert httpx.post(api, json={"question": EN}, timeout=30).status_code == 401


@pytest.mark.browser
def test_a_browser_without_credentials_opens_a_signed_link_and_reads_why_an_old_one_fails(api_only, browser, shots):
    # What a person sees: the link from an Open WebUI answer, clicked in a browser that never signed in.
    from bot.web.signing import LinkSigner

    completion = client(api_only).chat.completions.create(model=MODEL_ID, messages=[{"role": "user", "content": EN}])
    url = completion.model_extra["citations"][0]["url"]
    old = LinkSigner(TOKEN).sign_url(re.sub(r"&exp=[^&#]+&sig=[^&#]+", "", url), now=time.time() - 3 * 86_400)
    opened = list(browser.contexts)  # the session's Chromium: close only what this test opens
    try:
        page = browser.new_context(viewport={"width": 900, "height": 640}).new_page()
        response = page.goto(url, wait_until="load")
        assert response.status == 200
        page.locator("mark").first.wait_for()  # the matched terms are highlighted in the cited lines
        assert "libnccl.so" in page.locator("body").inner_text()
        page.screenshot(path=str(shots / "signed-source-link.png"))
        response = page.goto(old, wait_until="load")
        assert response.status == 401
        assert "has expired" in page.locator("body").inner_text()
        page.screenshot(path=str(shots / "signed-source-link-expired.png"))
    finally:
        for context in browser.contexts:
            if context not in opened:
                context.close()
