"""The reply as typed blocks (issue 32): composed once from blocks, added to by kind, its links signed on the citations.

Before, the reply was markdown patched by searching its own text (the scope line, "please add", the detected
error line, the apology), so changing a sentence in ``texts.py`` could silently change another part of a reply.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from bot.answer import texts
from bot.answer.blocks import Citation, Detected, Environment, Note, Options, Related
from bot.answer.reply import (
    Contact,
    Reply,
    compose,
    format_answer,
    format_no_match,
    format_none,
    kb_scope,
    scope_text,
    with_blocks,
)
from bot.answer.turn import take_turn
from bot.records import Answer, Hit, Section
from fixtures.engines import one_section_engine

BASE = "http://assistant.test"


def section(n: int, text: str = "1. 减小 batch_size\n\n2. 开启显存优化", source: str = "gpu.md") -> Section:
    return Section(
        source, f"问题{n}：显存不足怎么办？", ("GPU FAQ", f"问题{n}"), 10 * n, 10 * n + 8, f"h{n}", text, "GPU FAQ"
    )


def answer(*hits: Hit, language: str = "zh", tier: str = "answer", signature: str = "") -> Answer:
    return Answer(query="显存不足", language=language, tier=tier, hits=hits, signature=signature)


def no_meta(key: str):
    return None


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return one_section_engine(tmp_path_factory.mktemp("blocks"))


def test_changing_a_sentence_in_texts_cannot_change_another_part_of_the_reply(monkeypatch):
    # "covers_generic" now says words the reply's title says too. Composition used to replace that sentence
    # wherever it occurred in the markdown, so the title was rewritten into the scope line; by kind, only the
    # scope block says what the knowledge base covers.
    en = dict(texts.TEXTS["en"], covers_generic="The knowledge base")
    monkeypatch.setitem(texts.TEXTS, "en", en)
    said = format_none(answer(language="en", tier="none"), no_meta, BASE, limit=10_000, language="en")
    scope = kb_scope([section(1)])
    done = compose(said, scope=scope)
    assert done.markdown.startswith(f"**{en['no_match_title']}**")  # "The knowledge base has nothing close …"
    assert done.markdown.count(scope_text("en", scope)) == 1


def test_a_please_add_with_nothing_left_to_ask_leaves_the_rest_alone(monkeypatch):
    # "please add" reworded to a sentence a document's fix also says: it used to be cut wherever it occurred.
    zh = dict(texts.TEXTS["zh"], ask_more="减小 batch_size")
    monkeypatch.setitem(texts.TEXTS, "zh", zh)
    hit = Hit(section(1), 1.0, matched_terms=("显存",))
    said = format_answer(answer(hit), no_meta, BASE, limit=10_000, ask_more=True)
    assert [b.kind for b in said.blocks][-1] == "collect"
    held = ["paddle 2.5 cuda 11.7 cudnn 8.4\nNVIDIA-SMI 535 Driver Version: 535\nTraceback (most recent call last):"]
    done = compose(said, scope=kb_scope([section(1)]), held=held)
    assert "减小 batch_size" in done.markdown  # the document's step is still there
    assert not done.markdown.rstrip().endswith("减小 batch_size")  # and no "please add" was left at the end


def test_the_environment_lands_after_the_detected_error_block_by_kind():
    hit = Hit(section(1), 1.0)
    said = format_answer(answer(hit, signature="CUDA error: out of memory"), no_meta, BASE, limit=10_000)
    said = with_blocks(said, Note("抱歉没能解决。", "apology"))  # an apology first does not move the diagnosis
    added = with_blocks(said, Environment("**环境检查**\n\n- 驱动过旧"), after="detected")
    kinds = [b.kind for b in added.blocks]
    assert kinds[: kinds.index("answer")] == ["note", "detected", "environment"]
    assert [b.kind for b in said.blocks][:2] == ["note", "detected"]  # the reply added to is left as it was
    plain = format_answer(answer(hit), no_meta, BASE, limit=10_000)
    assert with_blocks(plain, Environment("x"), after="detected").blocks[0] == Environment("x")  # none: first


def test_in_a_turn_the_environment_follows_the_detected_error_even_when_its_label_is_reworded(engine, monkeypatch):
    # The detected error used to be found by its label's text; a reworded label would have put the diagnosis first.
    monkeypatch.setitem(texts.TEXTS, "en", dict(texts.TEXTS["en"], detected="Error in your log"))
    log = (
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
        "OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory"
    )
    turned, _ = take_turn(engine, log)
    kinds = [b.kind for b in turned.reply.blocks]
    assert kinds.index("environment") == kinds.index("detected") + 1
    paragraphs = turned.reply.markdown.split("\n\n")
    error = next(n for n, p in enumerate(paragraphs) if p.startswith("**Error in your log:**"))
    assert paragraphs[error + 1].startswith("**Environment check**")


def test_signed_links_come_from_the_citation_objects_not_from_the_text():
    signed: list[str] = []

    def sign(url: str) -> str:
        signed.append(url)
        return url + "&sig=s"

    # A document that writes a /source link of its own: text, not a citation, so it is not signed.
    planted = f"1. see {BASE}/source?key=elsewhere.md%23x\n\n2. 开启显存优化"
    hits = [Hit(section(n, planted if n == 1 else "减小 batch_size"), 1.0 - n / 10) for n in (1, 2, 3)]
    said = format_answer(answer(*hits), no_meta, BASE, limit=10_000)
    tentative = format_no_match(answer(*hits, tier="tentative"), no_meta, BASE, limit=10_000)
    for reply in (said, tentative):
        signed.clear()
        done = compose(reply, scope=kb_scope([]), sign=sign)
        urls = [
            *(b.url for b in done.blocks if isinstance(b, Citation)),
            *(c.url for b in done.blocks if isinstance(b, Related) for c in b.links),
            *(o.where.url for b in done.blocks if isinstance(b, Options) for o in b.items),
        ]
        assert urls and all(url.endswith("&sig=s") for url in urls)
        assert all(s.startswith(f"{BASE}/source?") for s in signed)  # urls handed to sign, never the markdown
        assert all(url in done.markdown for url in urls) and all(s.url.endswith("&sig=s") for s in done.shown)
        assert f"{BASE}/source?key=elsewhere.md%23x&sig=s" not in done.markdown


def test_a_reply_is_added_to_by_blocks_never_by_editing_its_text():
    reply = Reply("answer", "en", blocks=(Detected("OOM"),))
    with pytest.raises(AttributeError, match="with_blocks"):
        reply.markdown = "patched"
    done = compose(reply, scope=kb_scope([]))
    assert done.to_json()["blocks"] == [{"kind": "detected", "error": "OOM"}]
    assert done.markdown == "**Detected:** `OOM`"


def test_no_module_of_the_answer_stage_searches_or_edits_a_replys_markdown():
    patching = re.compile(
        r"markdown\.(?:replace|split|startswith|find|index)\(|\.markdown\s*[+]?=[^=]|in \w*\.markdown"
    )
    stage = Path(__file__).resolve().parents[2] / "bot" / "answer"
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted(stage.glob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if patching.search(line) and not line.strip().startswith(">>>")  # an example reads a finished reply
    ]
    assert found == []


def test_a_failed_hand_off_in_a_knowledge_base_not_about_gpus_asks_for_generic_details():
    # Behaviour fix: the fallback after a failed hand-off asked for nvidia-smi and cuDNN whatever the documents were.
    contact = Contact(webhook="https://hook.example.com")
    from bot.answer.reply import format_intent

    done = compose(format_intent("human", "en", contact), scope=kb_scope([]), contact=contact, handoff_failed=True)
    assert done.markdown.startswith(texts.TEXTS["en"]["handoff_failed"])
    assert texts.TEXTS["en"]["collect_for_colleague_generic"] in done.markdown and "nvidia-smi" not in done.markdown
    gpu = compose(
        format_intent("human", "en", contact),
        scope=dataclasses.replace(kb_scope([]), gpu=True),
        contact=contact,
        handoff_failed=True,
    )
    assert "nvidia-smi" in gpu.markdown
