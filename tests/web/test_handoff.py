"""Hand-off to a person: only when configured, carrying the conversation (link or webhook), else what to collect.

The webhook tests start a real HTTP receiver (``http.server`` on a free port) in the test.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from bot.answer.reply import HANDOFF_CHARS, TEXTS, Contact
from bot.settings import WebSettings
from bot.web.config import contact_from_env
from bot.web.ui import ChatState, Deps, ask_person, reason_prompt, respond, submit, vote
from bot.web.ui.events import without_votes
from fixtures.server import free_port

BASE = "http://assistant.test"
MAILTO = "mailto:gpu-help@example.com"


class Receiver:
    """A real local webhook: records every JSON body POSTed to it; answers ``status``."""

    def __init__(self, status: int = 200) -> None:
        self.bodies: list[dict] = []
        self.got = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                receiver.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(status)
                self.end_headers()
                receiver.got.set()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/handoff"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


class ListRecorder:
    origin = "ui"

    def __init__(self) -> None:
        self.events: list = []

    def record(self, event, *, session: str = "", latency_ms=None) -> None:
        self.events.append(event)


@pytest.fixture
def engine(hash_settings):
    from bot.engine.retrieve import Engine

    return Engine.open(hash_settings, auto_build=True)


def make_deps(engine, settings, contact: Contact) -> Deps:
    return Deps(engine, settings, WebSettings(), ListRecorder(), contact)


def ask(deps: Deps, state: ChatState, message: str) -> ChatState:
    state, taken = submit(state, message, deps.settings.max_input_chars)
    assert taken
    return respond(deps, state, BASE)


def last(state: ChatState) -> str:
    return state.messages[-1]["content"]


def person_links(markdown: str) -> list[str]:
    """The targets of the "talk to a person" links in a reply."""
    import re

    return re.findall(r"\]\(<?((?:mailto:|https://desk)[^)>\s]*)>?\)", markdown)


# ---------------------------------------------------------------- without a contact: no empty promise


def test_without_a_contact_asking_for_a_person_says_what_to_collect_not_an_empty_channel(engine, hash_settings):
    deps = make_deps(engine, hash_settings, Contact())
    for message, language in (("转人工", "zh"), ("I want to talk to a human", "en")):
        state = ask(deps, ChatState(language=language), message)
        md = last(state)
        assert "技术支持渠道" not in md and "support channel" not in md  # the old empty promise
        assert md == without_votes(TEXTS[language]["collect_for_colleague"])  # a hand-off has nothing to rate
        assert "nvidia-smi" in md and "cuDNN" in md and "tail" in md
    button = ask_person(deps, ChatState(language="zh"))  # the "找人工" button
    assert button.markdown == TEXTS["zh"]["collect_for_colleague"]


def test_without_a_contact_no_reply_offers_a_person(engine, hash_settings):
    deps = make_deps(engine, hash_settings, Contact())
    state = ask(deps, ChatState(language="zh"), "显存不足怎么办")
    state = ask(deps, state, "没用，还是不行")
    state = ask(deps, state, "Jetson Nano 上怎么编译 Paddle")
    for message in state.messages:
        assert "找人帮忙" not in message["content"] and "ask a person" not in message["content"]
    state, _ = vote(deps, state, len(state.messages) - 1, "Dislike")
    assert reason_prompt(deps, state) == "哪里不对？"


# ---------------------------------------------------------------- with a contact: everywhere a person may help


def test_a_contact_is_offered_after_didnt_help_and_after_a_thumbs_down(engine, hash_settings):
    deps = make_deps(engine, hash_settings, Contact(MAILTO, "GPU 支持"))
    state = ask(deps, ChatState(language="zh"), "显存不足怎么办")
    assert state.answers[str(len(state.messages) - 1)].tier == "answer"
    assert not person_links(last(state))  # a confident answer needs no person
    state = ask(deps, state, "没用，还是不行")
    assert person_links(last(state)), last(state)  # the retry reply offers a person
    state, _ = vote(deps, state, len(state.messages) - 1, "Dislike")
    prompt = reason_prompt(deps, state)
    assert "[GPU 支持](mailto:gpu-help@example.com?subject=" in prompt


def test_the_mailto_link_carries_the_transcript_and_the_cited_sections(engine, hash_settings):
    deps = make_deps(engine, hash_settings, Contact(MAILTO, "GPU 支持"))
    state = ask(deps, ChatState(language="zh"), "显存不足怎么办")
    cited = state.answers[str(len(state.messages) - 1)].cited[0]
    reply = ask_person(deps, state)
    (href,) = person_links(reply.markdown)
    parts = urlsplit(href)
    assert parts.scheme == "mailto" and parts.path == "gpu-help@example.com"
    query = parse_qs(parts.query)
    assert query["subject"] == ["显存不足怎么办"]
    body = query["body"][0]
    assert "Q1: 显存不足怎么办" in body and "-> answer" in body
    section = engine.section(cited)
    assert f"lines {section.start_line}–{section.end_line}" in body  # the cited section, with its lines


def test_a_url_template_gets_the_transcript_url_encoded_and_capped(engine, hash_settings):
    deps = make_deps(engine, hash_settings, Contact("https://desk.example.com/new?q={question}&t={transcript}", "Desk"))
    state = ChatState(language="en")
    log = "RuntimeError: CUDA out of memory & more\n" + "I0221 step 1 loss=0.1 " * 2_000
    state = ask(deps, state, log)
    reply = ask_person(deps, state)
    (href,) = person_links(reply.markdown)
    query = parse_qs(urlsplit(href).query)
    assert query["q"][0].startswith("RuntimeError: CUDA out of memory & more")  # '&' encoded, not a new field
    transcript = query["t"][0]
    assert transcript.startswith("Q1: RuntimeError") and len(transcript) <= HANDOFF_CHARS
    assert "{" not in href and " " not in href and len(href) < 3 * (HANDOFF_CHARS + 200) + 100


def test_a_tentative_reply_offers_the_configured_person():
    from bot.answer.reply import format_no_match
    from bot.records import Answer, Hit, Section

    s = Section("faq.md", "问题：显存不足", ("FAQ", "问题：显存不足"), 3, 9, "q", "减小 batch_size。", "FAQ")
    answer = Answer(query="q", language="en", tier="tentative", hits=(Hit(section=s, score=0.1),))
    contact = Contact("https://help.example.com/gpu", "GPU support", transcript="Q1: q")
    reply = format_no_match(answer, lambda key: None, BASE, limit=1_000, contact=contact)
    assert reply.tier == "tentative"
    assert "[GPU support](https://help.example.com/gpu)" in reply.markdown
    plain = format_no_match(answer, lambda key: None, BASE, limit=1_000, contact=Contact())
    assert "ask a person" not in plain.markdown and "No support contact" not in plain.markdown


# ---------------------------------------------------------------- webhook


def test_asking_for_a_person_posts_the_transcript_to_the_webhook(engine, hash_settings):
    with Receiver() as receiver:
        deps = make_deps(engine, hash_settings, Contact(webhook=receiver.url))
        state = ask(deps, ChatState(language="zh"), "显存不足怎么办")
        state = ask(deps, state, "多卡训练报错 libnccl.so")
        state = ask(deps, state, "转人工")
        assert receiver.got.wait(10), "the webhook was not called"
        assert last(state) == without_votes(TEXTS["zh"]["intent_human_webhook"])
    (body,) = receiver.bodies
    assert body["type"] == "handoff" and body["origin"] == "ui" and body["language"] == "zh"
    questions = [t["question"] for t in body["turns"]]
    assert questions[:2] == ["显存不足怎么办", "多卡训练报错 libnccl.so"]
    first = body["turns"][0]
    assert first["tier"] == "answer" and first["cited"][0]["key"].startswith("gpu.md#")
    assert "lines" in first["cited"][0]["label"]


def test_a_webhook_that_fails_is_said_and_the_user_gets_what_to_collect(engine, hash_settings):
    with Receiver(status=500) as receiver:
        deps = make_deps(engine, hash_settings, Contact(webhook=receiver.url))
        reply = ask_person(deps, ChatState(language="en"))
        assert receiver.got.wait(10)
    assert reply.markdown.startswith(TEXTS["en"]["handoff_failed"])
    assert TEXTS["en"]["collect_for_colleague"] in reply.markdown


def test_the_api_posts_the_transcript_when_asked_for_a_person(engine, hash_settings):
    from fastapi.testclient import TestClient

    from app import build_app

    with Receiver() as receiver:
        app = build_app(
            hash_settings,
            engine=engine,
            web=WebSettings(),
            progress=False,
            contact=Contact(MAILTO, "GPU help", webhook=receiver.url),
            ui=False,
        )
        with TestClient(app) as client:
            response = client.post("/api/ask", json={"question": "转人工", "history": ["显存不足怎么办"]})
        assert response.status_code == 200, response.text
        assert receiver.got.wait(10)
    assert [t["question"] for t in receiver.bodies[0]["turns"]] == ["显存不足怎么办"]
    assert receiver.bodies[0]["origin"] == "api"
    assert "mailto:gpu-help@example.com?subject=" in response.json()["reply"]


def test_an_api_reply_offers_a_person_once(engine, hash_settings):
    from fastapi.testclient import TestClient

    from app import build_app

    app = build_app(
        hash_settings, engine=engine, web=WebSettings(), progress=False, contact=Contact(MAILTO, "GPU help"), ui=False
    )
    with TestClient(app) as client:
        for question, history in (("Jetson Nano 上怎么编译 Paddle", []), ("没用，还是不行", ["显存不足怎么办"])):
            data = client.post("/api/ask", json={"question": question, "history": history}).json()
            if data["tier"] != "answer" or question.startswith("没用"):
                assert data["reply"].count("](mailto:gpu-help@example.com") == 1, data["reply"]


def test_the_webhook_setting_is_checked_at_start_up():
    assert (
        contact_from_env({"BOT_HANDOFF_WEBHOOK": "https://tickets.example.com/hook"}).webhook
        == "https://tickets.example.com/hook"
    )
    with pytest.raises(ValueError, match="BOT_HANDOFF_WEBHOOK"):
        contact_from_env({"BOT_HANDOFF_WEBHOOK": "javascript:alert(1)"})
    assert not Contact().configured and Contact(webhook="https://x.example").configured


def test_a_mailto_with_its_own_query_keeps_it():
    href = Contact("mailto:a@example.com?cc=b@example.com", question="OOM").href()
    assert href == "mailto:a@example.com?cc=b@example.com&subject=OOM"
    assert unquote(Contact(MAILTO, transcript="x" * 10_000).href()).count("x") <= HANDOFF_CHARS
    assert dataclasses.replace(Contact(MAILTO), transcript="").href() == MAILTO


def test_the_person_button_promises_a_person_only_when_one_is_configured(engine, hash_settings):
    from bot.web.ui import make_ui

    def label(contact: Contact) -> str:
        blocks = make_ui(engine, hash_settings, WebSettings(), compact=True, contact=contact)
        (button,) = [c for c in blocks.config["components"] if c.get("props", {}).get("elem_id") == "talk-to-person"]
        return button["props"]["value"]

    assert label(Contact()) == "Ask a colleague"
    assert label(Contact(MAILTO)) == label(Contact(webhook="https://hook.example.com/x")) == "Talk to a person"
