"""Replies for any company's documents: scope from the knowledge base, English sections, tables, long sections."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bot.answer.reply import TEXTS, format_answer, format_none, kb_scope, with_scope
from bot.records import Answer, Hit, Section
from bot.settings import WebSettings
from bot.web.ui import ChatState, Deps, respond, submit
from fixtures.engines import hash_settings_for

BASE = "http://assistant.test"


def hit(section: Section, terms=()) -> Hit:
    return Hit(section=section, score=1.0, matched_terms=tuple(terms))


def answer(h: Hit, language: str) -> Answer:
    return Answer(query="q", language=language, tier="answer", hits=(h,))


# ---------------------------------------------------------------- scope from the documents


@pytest.fixture
def company(tmp_path: Path):
    """Another company's knowledge base: VPN and billing, in English, nothing about GPUs."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "vpn.md").write_text(
        "# VPN Setup Guide\n\n## Connecting from home\n\nInstall the client, then sign in with your badge number.\n\n"
        "## Error 809 when connecting\n\nOpen UDP port 500 on your home router.\n",
        encoding="utf-8",
    )
    (seeds / "billing.md").write_text(
        "# Billing FAQ\n\n## Where is my invoice?\n\nInvoices are mailed on the first working day of the month.\n",
        encoding="utf-8",
    )
    from bot.engine.retrieve import Engine

    return Engine.open(hash_settings_for(tmp_path), auto_build=True)


class NoRecorder:
    origin = "ui"

    def record(self, event, **kw) -> None:
        pass


def test_the_scope_comes_from_the_documents_not_from_text_written_for_the_gpu_seeds(company):
    from bot.answer.reply import Contact

    deps = Deps(company, company.settings, WebSettings(), NoRecorder(), Contact())
    state = ChatState(language="en")
    state, _ = submit(state, "what can you do?", 10_000)
    state = respond(deps, state, BASE)
    md = state.messages[-1]["content"]
    assert "“VPN Setup Guide”" in md and "“Billing FAQ”" in md
    for seeds_only in ("PaddlePaddle", "TensorFlow", "GPU", "NCCL"):
        assert seeds_only not in md, seeds_only
    state, _ = submit(state, "hello", 10_000)
    md = respond(deps, state, BASE).messages[-1]["content"]
    assert "GPU" not in md and "PaddlePaddle" not in md


def test_a_none_reply_says_what_these_documents_cover_and_asks_generic_details(company):
    scope = kb_scope(company.sections)
    assert sorted(scope.titles) == ["Billing FAQ", "VPN Setup Guide"] and scope.documents == 2 and not scope.gpu
    reply = with_scope(
        format_none(Answer(query="q", language="en", tier="none", hits=()), company.meta, BASE, limit=1_000), scope
    )
    assert "2 documents in its knowledge base: " in reply.markdown
    assert "“VPN Setup Guide”" in reply.markdown and "“Billing FAQ”" in reply.markdown
    assert "nvidia-smi" not in reply.markdown and "cuDNN" not in reply.markdown  # not a GPU knowledge base
    assert TEXTS["en"]["ask_more_generic"] in reply.markdown


def test_gpu_documents_keep_the_gpu_checklist(hash_settings):
    from bot.engine.retrieve import Engine

    scope = kb_scope(Engine.open(hash_settings, auto_build=True).sections)
    assert scope.gpu and "GPU FAQ" in scope.titles
    reply = with_scope(
        format_none(Answer(query="q", language="zh", tier="none", hits=()), lambda k: None, BASE, limit=1_000), scope
    )
    assert "nvidia-smi" in reply.markdown and "《GPU FAQ》" in reply.markdown


# ---------------------------------------------------------------- an English section


def test_an_english_section_gets_no_note_about_a_chinese_original():
    s = Section(
        "vpn.md",
        "Error 809 when connecting",
        ("VPN", "Error 809 when connecting"),
        5,
        7,
        "e809",
        "Open UDP port 500 on your home router.",
        "VPN",
    )
    md = format_answer(answer(hit(s, ["809"]), "en"), lambda k: None, BASE, limit=10_000).markdown
    assert "Chinese" not in md and "No English summary" not in md
    assert "Open UDP port 500" in md
    zh = Section("faq.md", "问题：显存不足", ("FAQ", "问题：显存不足"), 5, 7, "q", "减小 batch_size。", "FAQ")
    md = format_answer(answer(hit(zh), "en"), lambda k: None, BASE, limit=10_000).markdown
    assert "the original text, in Chinese, follows" in md  # a Chinese section in an English reply: said


def test_an_english_section_with_metadata_has_no_chinese_original_block():
    from bot.kb.meta import SectionMeta

    s = Section("vpn.md", "Error 809", ("VPN", "Error 809"), 5, 7, "e809", "Open UDP port 500 on your router.", "VPN")
    meta = SectionMeta(anchor="e809", heading=s.heading, title_en="VPN error 809", summary_en="Fix: open UDP port 500.")
    md = format_answer(answer(hit(s), "en"), lambda k: meta, BASE, limit=10_000).markdown
    assert "Original section (Chinese)" not in md


# ---------------------------------------------------------------- tables and prose as written


def test_a_table_is_shown_as_written_and_prose_is_not_renumbered():
    body = (
        "Pick the driver for your card.\n\n| GPU | Driver |\n|-----|--------|\n| A100 | 525 |\n| V100 | 470 |\n\n"
        "Older cards are not supported.\n"
    )
    s = Section("drivers.md", "Drivers", ("Drivers",), 1, 9, "drivers", body, "Drivers")
    md = format_answer(answer(hit(s), "en"), lambda k: None, BASE, limit=10_000).markdown
    assert "| GPU | Driver |\n| --- | --- |" in md or "| GPU | Driver |\n|-----|--------|" in md
    assert "**1.**" not in md and "**2.**" not in md  # neither the prose nor the table became steps
    assert "Pick the driver for your card." in md and "Older cards are not supported." in md


def test_numbered_steps_stay_steps_and_a_table_between_them_is_not_a_step():
    body = (
        "1. Check the driver:\n\n| GPU | Driver |\n|---|---|\n| A100 | 525 |\n\n"
        "2. Reboot.\n\nThis usually takes a minute.\n"
    )
    s = Section("drivers.md", "Drivers", ("Drivers",), 1, 9, "drivers", body, "Drivers")
    md = format_answer(answer(hit(s), "en"), lambda k: None, BASE, limit=10_000).markdown
    assert "**1.** Check the driver:" in md and "**2.** Reboot." in md and "**3.**" not in md
    assert md.index("| A100 | 525 |") < md.index("**2.** Reboot.")


# ---------------------------------------------------------------- a long section: the lines that match


def test_a_long_section_shows_and_opens_at_the_lines_that_match_the_question():
    lines = [f"Background paragraph {n} about the cluster." for n in range(222)]
    lines[183] = "To rotate the signing key run `vaultctl rotate --key signing` on the primary."
    body = "\n".join(lines)
    s = Section("ops.md", "Operations", ("Ops", "Operations"), 15, 15 + 1 + 222 - 1, "ops", body, "Ops")
    assert s.end_line == 237
    md = format_answer(
        answer(hit(s, ["vaultctl", "rotate", "signing"]), "en"), lambda k: None, BASE, limit=1_800
    ).markdown
    assert "vaultctl rotate --key signing" in md  # the matching line, not the first screen
    assert "Background paragraph 3 " not in md
    match_line = s.end_line - 222 + 1 + 183  # document line of the match
    shown = re.search(r"lines (\d+)–(\d+)", md.split("**Source:**")[0])
    assert shown and int(shown.group(1)) <= match_line <= int(shown.group(2))
    url = re.search(r"\((http://assistant\.test/source\?[^ )]+)", md).group(1)
    fragment = int(urlsplit(url).fragment[1:])
    assert match_line - 5 <= fragment <= match_line  # the source view opens there too
    assert "lines 15–237" in md  # the citation still names the whole section


# ---------------------------------------------------------------- the source view names the document


def test_the_source_view_names_the_document_by_its_title_not_its_file(tmp_path):
    from html import unescape

    from bot.answer.source_view import render_source
    from fixtures.engines import hash_engine

    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "7f3a9c0d1e2b4a56.md").write_text(
        "# Billing help\n\n## How do I get an invoice?\n\nOpen Settings › Invoices and press Download.\n",
        encoding="utf-8",
    )
    settings = hash_settings_for(tmp_path)
    engine = hash_engine(settings)
    (section,) = [s for s in engine.sections if s.heading == "How do I get an invoice?"]
    status, page = render_source(engine, settings, section.key, "invoice", "en", whole=False)
    # What a reader sees: the text between tags (the file name may stay in a tooltip attribute).
    visible = unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", page.split("</style>")[1])))
    assert status == 200
    assert "Billing help" in visible and "How do I get an invoice?" in visible
    assert "7f3a9c0d1e2b4a56" not in visible, visible[:300]
