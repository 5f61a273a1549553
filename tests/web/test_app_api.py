"""The running app: JSON API, source view, security headers, CORS, auth, limits, auto-build on start.

The app is the real one (``app.build_app``) over the real seeds and model (the
session-wide ``seeds_engine``), served by uvicorn in a thread; one test starts
``python app.py`` itself as a subprocess on a missing index.
"""

from __future__ import annotations

import re

import httpx
import pytest

import app as app_module
from app import WebSettings, build_app
from fixtures.server import ThreadServer, free_port, start_app, stop, wait_ready

PORTAL = "https://portal.example.com"
OTHER = "https://evil.example.net"
TOKEN = "s3cret-token"
LOG_TEXT = app_module.SAMPLE_LOG

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def settings(seeds_engine):
    return seeds_engine.settings


@pytest.fixture(scope="module")
def open_app(seeds_engine, settings):
    web = WebSettings(frame_ancestors=("'self'", PORTAL), cors_origins=(PORTAL,))
    return build_app(settings, engine=seeds_engine, web=web, progress=False)


@pytest.fixture(scope="module")
def open_server(open_app):
    with ThreadServer(open_app) as server:
        yield server


def recorded(app) -> list:
    """The events an app built without a store kept (:class:`bot.store.feedback.MemoryRecorder`), oldest first."""
    return [event for event, _ in app.state.recorder.events]


@pytest.fixture(scope="module")
def locked_server(seeds_engine, settings):
    web = WebSettings(api_token=TOKEN, trusted_header="X-Portal-User")
    with ThreadServer(build_app(settings, engine=seeds_engine, web=web, progress=False)) as server:
        yield server


def ask(server: ThreadServer, question, history=None, **kw) -> httpx.Response:
    body = {"question": question}
    if history is not None:
        body["history"] = history
    return httpx.post(server.url + "/api/ask", json=body, timeout=60, **kw)


def ok(server: ThreadServer, question, history=None) -> dict:
    response = ask(server, question, history)
    assert response.status_code == 200, response.text
    return response.json()


def check_citations(data: dict) -> None:
    assert data["hits"], data
    for hit in data["hits"]:
        assert {"source", "section", "heading_path", "lines", "score", "url"} <= hit.keys()
        assert hit["heading_path"][-1] == hit["section"] and len(hit["lines"]) == 2
        assert hit["url"] in data["reply"]  # exactly the citations the reply shows


# ---------------------------------------------------------------- answers


def test_chinese_question(open_server):
    data = ok(open_server, "训练时报错显存不足怎么办？")
    assert data["answered"] is True and data["language"] == "zh" and data["kind"] == "answer"
    check_citations(data)
    best = data["hits"][0]
    assert best["source"] == "002_5c885a5c94776257.txt" and "显存不足" in best["section"]
    assert best["role"] == "answer" and best["url"].startswith(open_server.url + "/source?")
    reply = data["reply"]
    assert reply.startswith("### 问题：训练时报错提示显存不足") and "**来源:**" in reply
    assert f"第 {best['lines'][0]}–{best['lines'][1]} 行" in reply
    assert "export FLAGS_fraction_of_gpu_memory_to_use=0" in reply.split("<details>")[0]  # the fix, up front


def test_english_question(open_server):
    data = ok(open_server, "Loss becomes NaN after a few steps")
    assert data["answered"] is True and data["language"] == "en"
    check_citations(data)
    assert data["hits"][0]["section"] == "问题：Loss为NaN，如何处理？"
    reply = data["reply"]
    assert reply.startswith("### ") and not re.search(r"[\u4e00-\u9fff]", reply.splitlines()[0])  # English title
    assert "Original section (Chinese)" in reply and "**Source:**" in reply and "来源" not in reply


def test_pasted_trace_shows_the_signature_first(open_server):
    data = ok(open_server, LOG_TEXT)
    assert "libnccl.so" in data["signature"]
    assert data["reply"].startswith("**Detected:** `EnforceNotMet: Failed to find dynamic library: libnccl.so")
    check_citations(data)
    assert data["hits"][0]["source"] == "000_786bff9181b08d52.txt"


def test_no_confident_match_offers_three_suggestions(open_server, open_app):
    data = ok(open_server, "how do I bake sourdough bread at home")
    assert data["answered"] is False and data["kind"] == "no_match"
    assert len(data["hits"]) == 3 and {h["role"] for h in data["hits"]} == {"suggestion"}
    if data["tier"] == "none":  # nothing close: pointers only (collapsed), no buttons; what the KB covers instead
        assert data["options"] == [] and "documents in its knowledge base" in data["reply"] and "GPU" in data["reply"]
    else:
        assert [o["value"] for o in data["options"]] == [h["key"] for h in data["hits"]]
    assert "nvidia-smi" in data["reply"] and "cuDNN" in data["reply"]
    logged = [e for e in recorded(open_app) if e.question == "how do I bake sourdough bread at home"]
    assert logged and logged[-1].kind == "question" and logged[-1].tier != "answer"
    assert list(logged[-1].cited) == [h["key"] for h in data["hits"]]


def test_follow_up_uses_the_history(open_server):
    alone = ok(open_server, "what about TensorFlow?")
    data = ok(open_server, "what about TensorFlow?", ["out of memory on the GPU during training"])
    assert data["language"] == "en" and "searched together with your previous question" in data["reply"]
    assert data["hits"][0]["section"] == "管理GPU RAM"
    assert data["hits"][0]["key"] != alone["hits"][0]["key"] or alone["hits"][0]["section"] == "管理GPU RAM"


def test_that_didnt_help_moves_on_instead_of_repeating(open_server):
    first = ok(open_server, "nccl")
    # What the reply led with (an answer's section, or a clarifying question's options) is never given again;
    # sections listed as related under an answer may be the next thing to try.
    led = {h["key"] for h in (first["hits"][:1] if first["kind"] == "answer" else first["hits"])}
    for history in (["nccl"], [{"role": "user", "content": "nccl"}, {"role": "assistant", "content": "..."}]):
        data = ok(open_server, "that didn't help", history)
        assert "Sorry that didn't help" in data["reply"]
        assert not led & {h["key"] for h in data["hits"]}
        assert data["kind"] in ("answer", "no_match", "exhausted")


def test_clarifying_question_and_choosing_an_option(open_server):
    # A short, vague question whose best sections are close and about different problems ("nccl" was one, until the
    # labelled precedents made its NCCL-error section a clear first).
    # Since the learned relevance "multi gpu" has a clear first section too: a vague two-word question still gets
    # close sections to choose from (a clarifying question or a tentative reply's options).
    data = ok(open_server, "multi card")
    assert data["kind"] in ("clarify", "no_match") and len(data["options"]) >= 2
    choice = data["options"][1]["value"]
    chosen = ok(open_server, choice, ["multi card"])
    assert chosen["kind"] == "section" and chosen["hits"][0]["key"] == choice


def test_source_view_shows_the_cited_lines_with_terms_highlighted(open_server):
    data = ok(open_server, "训练时报错显存不足怎么办？")
    page = httpx.get(data["hits"][0]["url"], timeout=30)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    start, end = data["hits"][0]["lines"]
    assert f'id="L{start}"' in page.text and f'id="L{end}"' in page.text and f'id="L{end + 1}"' not in page.text
    assert "<mark>显存</mark>" in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]
    whole = httpx.get(data["hits"][0]["url"].split("#")[0] + "&whole=1", timeout=30)
    assert 'id="L1"' in whole.text
    missing = httpx.get(open_server.url + "/source?key=nope.md%23x", timeout=30)
    assert missing.status_code == 404 and "not found" in missing.text.lower() or "找不到" in missing.text


def test_source_view_escapes_document_html(open_server, seeds_engine):
    key = next(s.key for s in seeds_engine.sections if "<a href" in s.text)  # seed 004 has raw <a>/<br> HTML
    page = httpx.get(open_server.url + "/source", params={"key": key, "terms": "<script>alert(1)</script>"}, timeout=30)
    assert page.status_code == 200
    # The document's own HTML never passes through: its links are rebuilt by the source view (http(s) only, the
    # view's own attributes), everything else of the tag is dropped, and the terms are escaped.
    anchors = re.findall(r"<a\b[^>]*>", page.text.split("<main", 1)[1])
    assert anchors and all(
        re.fullmatch(r'<a (class="img" )?href="https?://[^"<>]+" rel="noopener noreferrer" target="_blank">', a)
        for a in anchors
    ), anchors
    assert "<br" not in page.text.split("<main", 1)[1] and "<script" not in page.text.lower()


# ---------------------------------------------------------------- limits and bad input


def test_over_long_input_is_cut_with_a_notice(open_server):
    data = ok(open_server, "显存不足 " + "x" * 150_000)
    assert data["truncated_from"] == 150_005
    assert "150,005" in data["reply"] and ("输入过长" in data["reply"] or "too long" in data["reply"])
    assert httpx.get(open_server.url + "/healthz", timeout=10).json()["ok"] is True


def test_huge_body_is_refused_and_the_server_lives_on(open_server):
    response = httpx.post(
        open_server.url + "/api/ask",
        content=b'{"question": "' + b"x" * (9 * 1024 * 1024) + b'"}',
        headers={"content-type": "application/json"},
        timeout=60,
    )
    assert response.status_code == 413
    assert ok(open_server, "显存不足")["answered"] is True


@pytest.mark.parametrize("question", ["", "   \n\t  "])
def test_empty_input_gets_a_friendly_message(open_server, question):
    data = ok(open_server, question)
    assert data["kind"] == "empty" and data["answered"] is False and data["hits"] == []
    assert "Type a question" in data["reply"] or "请输入" in data["reply"]


@pytest.mark.parametrize(
    "body,status",
    [
        ({}, 422),
        ({"question": 3}, 422),
        ({"question": "q", "history": "nope"}, 422),
        ({"question": "q", "history": [{"role": "user"}]}, 422),
        ([1, 2], 422),
    ],
)
def test_malformed_requests_are_rejected_clearly(open_server, body, status):
    response = httpx.post(open_server.url + "/api/ask", json=body, timeout=30)
    assert response.status_code == status and response.json()["detail"]


def test_non_json_body(open_server):
    response = httpx.post(open_server.url + "/api/ask", content=b"question=hi", timeout=30)
    assert response.status_code == 415  # no Content-Type: application/json (issue 11)
    response = httpx.post(
        open_server.url + "/api/ask", content=b"question=hi", headers={"Content-Type": "application/json"}, timeout=30
    )
    assert response.status_code == 400


def test_hostile_question_comes_back_inert(open_server):
    data = ok(open_server, '<img src=x onerror="alert(1)"> <script>alert(2)</script> 显存不足')
    assert "<img" not in data["reply"] and "<script" not in data["reply"]


# ---------------------------------------------------------------- headers, CORS, auth


@pytest.mark.parametrize(
    "method,path",
    [
        ("GET", "/"),
        ("GET", "/widget/"),
        ("GET", "/widget"),
        ("GET", "/healthz"),
        ("GET", "/source?key=x"),
        ("GET", "/does-not-exist"),
        ("POST", "/api/ask"),
        ("GET", "/api/ask"),
        ("GET", "/gradio.js"),
        ("GET", "/config"),
    ],
)
def test_every_response_carries_frame_ancestors(open_server, method, path):
    response = httpx.request(
        method,
        open_server.url + path,
        json={"question": "显存不足"} if method == "POST" else None,
        timeout=60,
        follow_redirects=False,
    )
    policy = response.headers.get("content-security-policy", "")
    assert f"frame-ancestors 'self' {PORTAL}" in policy, (path, response.status_code, policy)
    assert response.headers.get("x-content-type-options") == "nosniff"


def test_cors_is_granted_only_to_configured_origins(open_server):
    for path in ("/api/ask", "/config"):
        allowed = httpx.options(
            open_server.url + path,
            headers={
                "Origin": PORTAL,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
        )
        assert allowed.headers.get("access-control-allow-origin") == PORTAL, path
        denied = httpx.options(
            open_server.url + path,
            headers={
                "Origin": OTHER,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
        )
        assert "access-control-allow-origin" not in denied.headers, path
    simple = httpx.post(open_server.url + "/api/ask", json={"question": "nccl"}, headers={"Origin": OTHER}, timeout=60)
    assert simple.status_code == 200 and "access-control-allow-origin" not in simple.headers
    # Gradio would grant any origin by itself; the app's policy must win for the UI routes too.
    config = httpx.get(open_server.url + "/config", headers={"Origin": OTHER}, timeout=30)
    assert "access-control-allow-origin" not in config.headers
    granted = httpx.get(open_server.url + "/config", headers={"Origin": PORTAL}, timeout=30)
    assert granted.headers.get("access-control-allow-origin") == PORTAL


def test_token_is_required_when_set(locked_server):
    assert ask(locked_server, "显存不足").status_code == 401
    assert ask(locked_server, "显存不足", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert ask(locked_server, "显存不足", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert ask(locked_server, "显存不足", headers={"X-Portal-User": "alice"}).status_code == 200
    assert ask(locked_server, "显存不足", headers={"X-Portal-User": ""}).status_code == 401
    assert httpx.post(locked_server.url + "/api/feedback", json={"question": "q", "vote": "up"}).status_code == 401
    # the default policy: no other site may frame the app
    assert httpx.get(locked_server.url + "/healthz").headers["content-security-policy"] == "frame-ancestors 'self'"


def test_feedback_endpoint_records_a_vote(open_server, open_app):
    response = httpx.post(
        open_server.url + "/api/feedback",
        json={
            "question": "Loss becomes NaN",
            "vote": "down",
            "cited": ["002_5c885a5c94776257.txt#问题-loss为nan-如何处理"],
            "language": "en",
        },
        timeout=30,
    )
    assert response.status_code == 200
    last = recorded(open_app)[-1]
    assert (last.kind, last.vote, last.question, last.language, last.origin) == (
        "vote",
        "down",
        "Loss becomes NaN",
        "en",
        "api",
    )
    bad = httpx.post(open_server.url + "/api/feedback", json={"question": "q", "vote": "meh"}, timeout=30)
    assert bad.status_code == 422


def test_web_settings_from_env_and_flags():
    web = WebSettings.from_env(
        {
            "BOT_FRAME_ANCESTORS": "'self' https://a.example, https://b.example",
            "BOT_CORS_ORIGINS": "https://a.example",
            "BOT_PORT": "9000",
            "BOT_ROOT_PATH": "assistant/",
        },
        port=9100,
    )
    assert web.frame_ancestors == ("'self'", "https://a.example", "https://b.example")
    assert web.cors_origins == ("https://a.example",) and web.port == 9100 and web.root_path == "/assistant"
    with pytest.raises(ValueError):
        WebSettings.from_env({"BOT_CORS_ORIGINS": "*"})
    with pytest.raises(ValueError):
        WebSettings.from_env({"BOT_PORT": "eighty"})


def test_links_follow_the_public_address_behind_a_proxy(open_server):
    response = ask(
        open_server, "显存不足", headers={"X-Forwarded-Proto": "https", "X-Forwarded-Host": "help.example.com"}
    )
    assert response.json()["hits"][0]["url"].startswith("https://help.example.com/source?")
    evil = ask(open_server, "显存不足", headers={"X-Forwarded-Host": 'x.com/"><script>'})
    assert "<script>" not in evil.json()["hits"][0]["url"]


# ---------------------------------------------------------------- python app.py


def test_python_app_py_builds_a_missing_index_and_serves_ui_and_api(tiny_seeds, tmp_path):
    port = free_port()
    index = tmp_path / "fresh-index"
    process = start_app(
        port,
        {
            "BOT_EMBEDDER": "hash",
            "BOT_SEEDS_DIR": str(tiny_seeds),
            "BOT_INDEX_DIR": str(index),
            "BOT_FRAME_ANCESTORS": "'self' https://intranet.example",
        },
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}/healthz", process, timeout=120)
        base = f"http://127.0.0.1:{port}"
        ui = httpx.get(base + "/", timeout=30)
        assert ui.status_code == 200 and "<gradio-app" in ui.text or "gradio" in ui.text.lower()
        assert "frame-ancestors 'self' https://intranet.example" in ui.headers["content-security-policy"]
        data = httpx.post(base + "/api/ask", json={"question": "libnccl.so 多卡训练报错"}, timeout=60).json()
        assert data["hits"] and data["hits"][0]["source"] == "gpu.md"
        assert (index / "CURRENT").exists()
    finally:
        stop(process)
    output = process.stdout.read()
    assert "Building it now" in output and "Index ready" in output, output


def test_vote_reasons_tiers_and_origins_are_written_once():
    # Before: the 👎 reasons were typed out in api_models, the store and the UI, the origins in the store and the
    # records' comments. Now bot.records holds each as a Literal and every tuple of values is derived from it.
    from typing import get_args

    from bot import records
    from bot.store import database
    from bot.web.api_models import FeedbackRequest

    assert records.VOTE_REASONS == ("wrong_section", "didnt_help", "outdated", "not_my_framework", "other")
    assert records.TIERS == get_args(records.Tier) == ("answer", "tentative", "none")
    assert database.VOTE_REASONS is records.VOTE_REASONS and database.KINDS is records.EVENT_KINDS
    assert database.ORIGINS[: len(records.ORIGINS)] == records.ORIGINS == ("ui", "widget", "api", "v1")
    for reason in records.VOTE_REASONS:  # the API takes exactly these (and "" for no reason)
        assert (
            FeedbackRequest.parse({"question": "q", "vote": "down", "reason": reason}, max_input_chars=100).reason
            == reason
        )
    with pytest.raises(Exception) as refused:
        FeedbackRequest.parse({"question": "q", "vote": "down", "reason": "too_long"}, max_input_chars=100)
    assert refused.value.status_code == 422 and "wrong_section" in refused.value.detail
