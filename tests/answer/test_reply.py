"""Reply formatting (pure functions) and conversation rules (tiny knowledge base, hash embedder)."""

from __future__ import annotations

import dataclasses
import html.parser
import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from markdown_it import MarkdownIt

from bot.answer.conversation import Conversation
from bot.answer.reasons import reason_text
from bot.answer.reply import (
    TEXTS,
    Contact,
    code_block,
    code_span,
    doc_markdown,
    follow_up_options,
    format_answer,
    format_clarify,
    format_intent,
    format_no_match,
    kb_scope,
    scope_text,
    short_title,
    signature_line,
    source_url,
    truncation_notice,
    user_echo,
    with_scope,
)
from bot.engine.case import is_follow_up, is_not_helpful
from bot.kb.domain import shipped
from bot.kb.meta import SectionMeta
from bot.records import Answer, Hit, Reason, Section

BASE = "http://assistant.test/bot"
LIMIT = 100_000

FIX_BODY = (
    "+ 问题描述：训练时报错 out of memory\n\n"
    "+ 问题分析：显存被模型占满。\n\n"
    "+ 解决方法：减小 `batch_size`，并设置：\n\n"
    "```bash\nexport FLAGS_fraction_of_gpu_memory_to_use=0\n```\n"
)


def section(
    n: int = 1,
    *,
    text: str = FIX_BODY,
    heading: str | None = None,
    fields=None,
    source: str = "faq.md",
    title: str = "GPU FAQ",
) -> Section:
    heading = heading or f"问题{n}：显存不足怎么办？"
    if fields is None:
        from bot.kb.parse import parse_fields

        fields = parse_fields(text)
    return Section(
        source=source,
        heading=heading,
        path=(title, heading),
        start_line=10 * n,
        end_line=10 * n + 8,
        anchor=f"q{n}",
        text=text,
        title=title,
        fields=fields,
        roles=shipped().faq.roles({name for name, _ in fields}),  # as the parser reads them from the domain
    )


def hit(s: Section, score: float = 1.0, terms=("显存", "oom")) -> Hit:
    return Hit(section=s, score=score, matched_terms=tuple(terms))


META = {
    "faq.md#q1": SectionMeta(
        anchor="q1",
        heading="问题1：显存不足怎么办？",
        title_en="Out of GPU memory",
        summary_en="Problem: OOM.\nFix: lower `batch_size`.",
    ),
}


def meta(key: str):
    return META.get(key)


def answer(*hits: Hit, language: str = "zh", **kw) -> Answer:
    return Answer(query="q", language=language, tier="answer", hits=tuple(hits), **kw)


class _Tags(html.parser.HTMLParser):
    """Every element and attribute that markdown rendering would put into the page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def rendered_tags(markdown: str) -> list[tuple[str, dict]]:
    """Render like a chat that allows raw HTML (the worst case) and list the resulting elements."""
    parser = _Tags()
    parser.feed(MarkdownIt("commonmark", {"html": True}).render(markdown))
    return parser.tags


def assert_inert(markdown: str) -> None:
    for tag, attrs in rendered_tags(markdown):
        assert tag not in ("script", "img", "iframe", "object", "embed", "svg", "style"), (tag, markdown)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert not attrs.get("href", "").lower().startswith("javascript"), attrs
        assert not attrs.get("src"), attrs


# ---------------------------------------------------------------- languages


def test_fixed_texts_exist_in_both_languages_and_differ():
    assert TEXTS["zh"].keys() == TEXTS["en"].keys()
    for key in TEXTS["zh"]:
        if key == "en_summary":
            continue
        assert TEXTS["zh"][key] != TEXTS["en"][key], key
    # the Chinese texts are Chinese, the English ones carry no CJK characters
    assert all(not re.search(r"[\u4e00-\u9fff]", v) for v in TEXTS["en"].values())


def test_chinese_answer_puts_the_fix_first_and_cites_the_section_once():
    reply = format_answer(answer(hit(section(1))), meta, BASE, limit=LIMIT)
    md = reply.markdown
    assert md.startswith("### 问题1：显存不足怎么办？")  # the one-line summary
    fix = md.index("减小 `batch_size`")
    assert fix < md.index("显存被模型占满")  # the fix comes before the analysis
    assert "```bash\nexport FLAGS_fraction_of_gpu_memory_to_use=0\n```" in md  # a copyable code block
    assert "<details><summary>问题描述与分析</summary>" in md  # the rest, collapsed
    citation = [line for line in md.splitlines() if line.startswith("**来源:**")]
    assert len(citation) == 1  # one citation line, no second list of sources
    assert citation[0].startswith("**来源:** [GPU FAQ › 问题1：显存不足怎么办？ · 第 10–18 行](" + BASE + "/source?")
    assert md.index("**来源:**") < md.index("<details>")  # citation before the collapsed details
    assert md.count(BASE + "/source?") == 1
    assert "English summary: Out of GPU memory" in md  # Chinese questions may offer the English summary
    for english in ("Source", "lines", "Possibly related"):
        assert english not in md
    assert reply.answered and reply.kind == "answer" and reply.language == "zh" and reply.tier == "answer"


def test_english_answer_is_title_steps_with_code_blocks_and_commands_said_once():
    m = {
        "faq.md#q1": SectionMeta(
            anchor="q1",
            heading="问题1：显存不足怎么办？",
            title_en="Out of GPU memory",
            summary_en="Problem: OOM during training.\nFix: 1) try a smaller `batch_size`; 2) enable two options: "
            "`export FLAGS_a=0` (free early), `export FLAGS_b=1` (fast).\nSee the memory guide.",
        )
    }
    md = format_answer(answer(hit(section(1)), language="en"), m.get, BASE, limit=LIMIT).markdown
    assert md.startswith("### Out of GPU memory\n\n**1.** Try a smaller `batch_size`\n\n**2.** Enable two options:")
    assert "```bash\nexport FLAGS_a=0  # free early\nexport FLAGS_b=1  # fast\n```" in md
    up_front = md.split("<details>")[0]
    assert up_front.count("FLAGS_a") == 1  # the command once, in its code block
    assert "See the memory guide." in up_front
    assert md.index("**Source:** [GPU FAQ › Out of GPU memory · lines 10–18](") < md.index("<details>")
    assert (
        "<details><summary>Problem and background</summary>" in md and "OOM during training" in md.split("<details>")[1]
    )
    assert md.index("<details><summary>Original section (Chinese): 问题1") < md.index("显存被模型占满")
    for chinese in ("来源", "第 10–18 行", "查看原文", "解决方法："):
        assert chinese not in up_front, chinese


def test_english_answer_without_metadata_says_so_and_shows_the_original():
    s = section(2)
    md = format_answer(answer(hit(s), language="en"), meta, BASE, limit=LIMIT).markdown
    assert "No English summary for this section yet" in md
    assert "减小 `batch_size`" in md


def test_fix_paragraphs_become_numbered_steps_with_their_code():
    body = (
        '+ 解决方法：\n\n报错提示没有找到 libnccl.so，可以全局搜索。\n\n```bash\nfind / -name "libnccl.so*"\n```\n\n'
        "然后将找到的路径添加到 LD_LIBRARY_PATH 中。\n"
    )
    md = format_answer(answer(hit(section(1, text=body))), lambda k: None, BASE, limit=LIMIT).markdown
    assert (
        '**1.** 报错提示没有找到 libnccl.so，可以全局搜索。\n\n```bash\nfind / -name "libnccl.so*"\n```\n\n**2.** 然后'
        in md
    )


def test_related_sections_are_one_collapsed_block_of_links():
    hits = [hit(section(n), score=1.0 / n) for n in range(1, 6)]
    reply = format_answer(answer(*hits), meta, BASE, limit=LIMIT)
    assert [s.role for s in reply.shown] == ["answer", "related", "related"]
    assert reply.markdown.count("<details><summary>其他可能相关的内容 (2)</summary>") == 1
    assert "引用来源" not in reply.markdown  # no second list of the same sources
    citations = reply.to_json()["hits"]
    assert [c["lines"] for c in citations] == [[10, 18], [20, 28], [30, 38]]
    for c in citations:
        assert {"source", "section", "heading_path", "lines", "score", "url", "role", "key"} <= c.keys()
        assert reply.markdown.count(c["url"]) == 1  # the API returns exactly the links the UI shows, once each


def test_answer_from_an_old_release_says_so():
    old = section(1, heading="3.问题：Fluid1.2支持使用cuDNN6吗？", text="+ 答复：支持。\n")
    md = format_answer(answer(hit(old)), lambda k: None, BASE, limit=LIMIT).markdown
    assert "Fluid 1.x" in md and "PaddlePaddle 2.x" in md
    assert "Fluid" not in format_answer(answer(hit(section(2))), lambda k: None, BASE, limit=LIMIT).markdown


def test_source_links_carry_only_the_terms_found_in_that_section():
    s = section(1)
    url = (
        format_answer(answer(hit(s, terms=("显存", "gi", "00", "nccl", "batch_size"))), meta, BASE, limit=LIMIT)
        .shown[0]
        .url
    )
    assert parse_qs(urlsplit(url).query)["terms"] == ["batch_size 显存"]


def test_source_url_points_into_the_app_with_key_terms_and_first_line():
    s = section(3, source="dir/a b#c.md")
    url = source_url(BASE, s, ["显存", "oom", "显存"], "en")
    parts = urlsplit(url)
    assert parts.scheme == "http" and parts.netloc == "assistant.test" and parts.path == "/bot/source"
    query = parse_qs(parts.query)
    assert query["key"] == ["dir/a b#c.md#q3"]
    assert query["terms"] == ["显存 oom"]
    assert query["lang"] == ["en"] and parts.fragment == "L30"


# ---------------------------------------------------------------- escaping


HOSTILE = (
    '+ 解决方法：<script>window.__pwned=1</script> 点 <img src=x onerror="window.__pwned=2"> 然后\n'
    '<a href="javascript:alert(1)">bad</a> [also bad](javascript:alert(2)) ![pic](http://evil.test/t.png)\n'
    '<iframe src="http://evil.test"></iframe> <svg onload=alert(3)></svg> &lt;ok&gt;\n\n'
    "```\n<script>kept as code</script>\n```\n"
)


def test_document_html_is_inert_but_code_is_kept_verbatim():
    s = section(1, text=HOSTILE, heading="问题<script>x</script>：<img src=y onerror=z>")
    for language in ("zh", "en"):
        md = format_answer(answer(hit(s), language=language), meta, BASE, limit=LIMIT).markdown
        assert_inert(md)
        assert "```\n<script>kept as code</script>\n```" in md
    md = format_answer(answer(hit(s)), meta, BASE, limit=LIMIT).markdown
    assert "[also bad]" not in md and "also bad" in md  # the words stay, the script link goes
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in md


def test_seed_style_raw_links_and_line_breaks_become_markdown():
    raw = (
        '- AWS云 <a href="https://aws.amazon.com/x" target="_blank">https://aws.amazon.com/x</a><br>\n'
        "对于MLP，层与层之间无法并行。<br>\n![GPU](/img/GPU-01.png)\n"
    )
    md, cut = doc_markdown(raw)
    assert not cut
    assert "[https://aws.amazon.com/x](https://aws.amazon.com/x)" in md
    assert "<br>" not in md and "target=" not in md
    # A relative image cannot load from here: it is left out, never a raw "(图片: GPU)" placeholder (issue 35).
    assert "图片" not in md and "GPU-01.png" not in md and "层与层之间无法并行。" in md
    assert_inert(md)
    tags = rendered_tags(md)
    assert ("a", {"href": "https://aws.amazon.com/x"}) in tags


def test_user_text_is_inert_and_huge_pastes_are_shortened():
    payload = '<img src=x onerror="window.__pwned=1"> ![t](http://evil.test/t.png) <script>alert(1)</script>'
    echo = user_echo(payload)
    assert_inert(echo)
    assert "&lt;img src=x" in echo
    log = "\n".join(f"E0101 12:00:{n % 60:02d} worker.cc:1] line {n} <b>" for n in range(5_000))
    shown = user_echo(log, is_log=True)
    assert shown.startswith("```") and len(shown) < 5_000
    assert "more" not in shown or "lines" in shown
    assert f"{len(log):,} chars" in shown
    assert_inert(shown)


def test_a_typed_two_line_question_is_text_and_a_log_shows_its_end():
    echo = user_echo("多卡训练报错怎么办？\n用的是 <b>8</b> 张 V100", is_log=False)
    assert "```" not in echo and "多卡训练报错怎么办？  \n用的是" in echo  # text with a line break, not code
    assert_inert(echo)
    log = (
        "\n".join(f"I0221 12:00:{n % 60:02d} trainer.cc:88] step {n} loss=0.1" for n in range(200))
        + "\nResourceExhaustedError: OOM when allocating tensor, cannot allocate 2.25 GB"
    )
    shown = user_echo(log, is_log=True)
    assert shown.startswith("```") and "cannot allocate 2.25 GB" in shown  # the error at the end of the paste
    assert "step 0 " in shown and "step 50 " not in shown and "lines" in shown  # the head, then the tail
    assert len(shown.splitlines()) < 20


def test_the_detected_error_is_the_logs_own_line_not_a_bare_exception_name():
    log = (
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\nMemoryError\n'
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor "
        "cannot allocate 2.25 GB"
    )
    a = dataclasses.replace(answer(hit(section(1))), query=log, signature="MemoryError")
    md = format_answer(a, meta, BASE, limit=LIMIT).markdown
    assert "`ResourceExhaustedError: OOM when allocating tensor cannot allocate 2.25 GB`" in md.split("\n\n")[0]


def test_code_span_and_code_block_cannot_be_broken_out_of():
    assert_inert(code_span("`` <img src=x onerror=1> ``"))
    block = code_block("```\n</code><img src=x onerror=1>\n```")
    assert block.startswith("````") and block.endswith("````")
    assert_inert(block)
    assert MarkdownIt().render(block).count("<pre>") == 1


def test_doc_markdown_cuts_at_block_boundaries_and_closes_fences():
    text = "first paragraph\n\n```\n" + "\n".join(f"line {n}" for n in range(400)) + "\n```\n\nlast"
    md, cut = doc_markdown(text, limit=200)
    assert cut
    assert md.startswith("first paragraph")
    assert md.count("```") % 2 == 0  # every fence that opens also closes
    rendered = MarkdownIt().render(md)
    assert rendered.count("<pre>") <= 1 and "last" not in md


def test_horizontal_rules_between_faq_entries_are_dropped():
    md, _ = doc_markdown("answer text\n----------\n\nmore\n\n***")
    assert "---" not in md and "***" not in md
    assert "<h2>" not in MarkdownIt().render(md)  # "text\n----" must not become a heading


# ---------------------------------------------------------------- notices and suggestions


def test_signature_line_and_truncation_notice_in_both_languages():
    sig = "EnforceNotMet: Failed to find dynamic library: libnccl.so"
    assert signature_line(sig, "en") == f"**Detected:** `{sig}`"
    assert signature_line(sig, "zh") == f"**检测到的错误:** `{sig}`"
    assert signature_line("", "en") == ""
    assert truncation_notice(0, 100, "en") == ""
    en = truncation_notice(150_000, 100_000, "en")
    zh = truncation_notice(150_000, 100_000, "zh")
    assert "150,000" in en and "100,000" in en and "too long" in en
    assert "150,000" in zh and "输入过长" in zh


def test_pasted_log_reply_starts_with_the_detected_signature_then_the_section():
    a = answer(hit(section(1)), language="en", signature="EnforceNotMet: libnccl.so <b>", truncated_from=120_000)
    md = format_answer(a, meta, BASE, limit=100_000).markdown
    lines = md.split("\n\n")
    assert lines[0].startswith("Note: your input was too long: 120,000 characters")
    assert lines[1] == "**Detected:** `EnforceNotMet: libnccl.so <b>`"
    assert md.index("**Detected:**") < md.index("### Out of GPU memory")


def test_tentative_marks_the_closest_sections_as_possibly_not_applying_with_the_reason():
    hits = [hit(section(n), score=0.1) for n in range(1, 5)]
    for language, marker in (("en", "May not apply:"), ("zh", "可能不适用:")):
        found = Reason("uncovered", subjects=("Jetson",), closest=hits[0].section.key)
        a = dataclasses.replace(answer(*hits, language=language), tier="tentative", reason=found)
        reason = reason_text(a, meta, language)
        assert "Jetson" in reason and (language == "zh") == ("知识库" in reason)
        reply = format_no_match(a, meta, BASE, limit=LIMIT)
        assert reply.kind == "no_match" and reply.tier == "tentative" and not reply.answered
        first = reply.markdown.split("\n\n")[0]
        assert marker in first and reason in first  # the reason, in one line, first
        assert "nvidia-smi" in reply.markdown and "CUDA" in reply.markdown and "cuDNN" in reply.markdown
        assert [o["value"] for o in reply.options] == ["faq.md#q1", "faq.md#q2", "faq.md#q3"]
        assert all(s.role == "suggestion" for s in reply.shown) and len(reply.shown) == 3
        assert all(reply.markdown.count(s.url) == 1 for s in reply.shown)  # suggestions are cited, once
    en = format_no_match(dataclasses.replace(answer(*hits, language="en"), tier="tentative"), meta, BASE, limit=LIMIT)
    assert en.options[0]["label"] == "Out of GPU memory"  # English labels from the metadata
    assert TEXTS["en"]["tentative_reason"] in en.markdown  # a reason even when the engine gave none


def test_none_says_what_the_knowledge_base_covers_what_would_help_and_where_to_ask_a_person():
    hits = [hit(section(n), score=0.01) for n in range(1, 3)]
    contact = Contact("https://help.example.com/gpu", "GPU support")
    for language in ("en", "zh"):
        a = dataclasses.replace(answer(*hits, language=language), tier="none")
        reply = format_no_match(a, meta, BASE, limit=LIMIT, contact=contact)
        scope = kb_scope([section(1), section(2, source="nccl.md", title="NCCL on TensorFlow")])
        md = with_scope(reply, scope).markdown
        assert reply.tier == "none" and reply.kind == "no_match" and reply.options == []
        assert md.startswith("**" + TEXTS[language]["no_match_title"] + "**")  # no "ℹ️": a bare "i" without emoji
        assert scope_text(language, scope) in md and "NCCL" in md and "TensorFlow" in md
        assert "nvidia-smi" in md
        assert "[GPU support](https://help.example.com/gpu)" in md
        assert md.index("[GPU support]") < md.index("<details>")  # pointers only collapsed, after the contact
    plain = format_no_match(dataclasses.replace(answer(language="en"), tier="none"), meta, BASE, limit=LIMIT)
    # no contact configured: what to collect for a colleague, not a promise of a channel that does not exist
    assert TEXTS["en"]["collect_for_colleague"] in plain.markdown and "support channel" not in plain.markdown
    assert "javascript" not in plain.markdown
    bad = Contact("javascript:alert(1)", "x")
    assert "javascript" not in format_intent("human", "en", bad).markdown


def test_intents_are_answered_as_such_without_events():
    from bot.engine.intents import classify

    contact = Contact("https://help.example.com/gpu", "GPU support")
    for message, language in (
        ("谢谢！", "zh"),
        ("thanks a lot", "en"),
        ("转人工", "zh"),
        ("I want to talk to a human", "en"),
        ("你好", "zh"),
        ("what can you do?", "en"),
    ):
        label = classify(message)
        assert label is not None, message
        reply = format_intent(label, language, contact)
        assert reply.kind == "intent" and reply.events == [] and reply.shown == [] and reply.markdown
        if label == "human":
            assert "https://help.example.com/gpu" in reply.markdown
    for question in ("显存不足怎么办", "thanks, but NCCL still fails", "Human pose model runs out of GPU memory"):
        assert classify(question) is None, question


def test_follow_up_suggestions_are_the_cited_sections_neighbours():
    from bot.kb.parse import parse_folder
    from conftest import SEEDS

    sections, _ = parse_folder(SEEDS)
    cited = next(s for s in sections if s.heading == "2.3 初始化分布式环境")
    options = follow_up_options(cited, sections, lambda k: None, "zh")
    labels = [o["label"] for o in options]
    assert [label.split(" › ")[-1] for label in labels] == [
        "2.4 使用数据并行算子封装模型",
        "2.2 导入依赖",
        "2.5 验证多机多卡程序运行正确",
    ]
    assert all(o["value"].startswith(cited.source + "#") for o in options)
    first = next(s for s in sections if s.source == cited.source and s.heading == "1. 简介")
    assert len(follow_up_options(first, sections, lambda k: None, "zh", exclude=[options[0]["value"]])) == 3
    assert follow_up_options(cited, sections, lambda k: None, "zh", limit=1) == options[:1]


@pytest.mark.parametrize(
    "module", ["bot.answer.reply", "bot.engine.intents", "bot.answer.source_view", "bot.kb.parse", "bot.web.ui"]
)
def test_doctests(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


def test_clarify_lists_options_with_citations():
    hits = [hit(section(1)), hit(section(2, heading="`已审核`2.问题：多卡训练报错 libnccl.so"))]
    reply = format_clarify(answer(*hits), hits, meta, BASE, limit=LIMIT)
    assert reply.kind == "clarify"
    assert [o["label"] for o in reply.options] == ["问题1：显存不足怎么办？", "多卡训练报错 libnccl.so"]
    assert "第 20–28 行" in reply.markdown and reply.markdown.startswith(TEXTS["zh"]["clarify"])


def test_short_titles_keep_meaningful_words():
    faq = section(1, heading="3. FAQ", title="多机多卡训练文档")
    assert short_title(faq, None, "zh") == "多机多卡训练文档 › 3. FAQ"
    numbered = section(1, heading="2.1 准备多机多卡环境")
    assert short_title(numbered, None, "zh") == "2.1 准备多机多卡环境"


def test_reply_json_is_serialisable():
    reply = format_answer(answer(hit(section(1))), meta, BASE, limit=LIMIT)
    data = json.loads(json.dumps(reply.to_json(), ensure_ascii=False))
    assert data["answered"] is True and data["language"] == "zh" and data["reply"] == reply.markdown


# ---------------------------------------------------------------- conversation rules


@pytest.mark.parametrize(
    "message",
    [
        "that didn't help",
        "That did not help.",
        "still fails",
        "没用",
        "还是不行",
        "没有解决",
        "nope",
        "doesn't work",
        "any other ideas?",
    ],
)
def test_not_helpful_is_recognised(message):
    assert is_not_helpful(message)


@pytest.mark.parametrize(
    "message",
    [
        "NCCL doesn't work on two machines with Paddle 2.4",
        "显存不足怎么办",
        "Loss becomes NaN",
        "",
        "多卡训练不行，报错 libnccl.so 找不到，怎么安装 nccl",
    ],
)
def test_real_questions_are_not_taken_for_not_helpful(message):
    assert not is_not_helpful(message)


@pytest.mark.parametrize(
    "message",
    [
        "那多机呢？",
        "what about TensorFlow?",
        "and on Windows?",
        "如果用TensorFlow呢",
        "How about multi-machine training?",
    ],
)
def test_follow_ups_are_recognised(message):
    assert is_follow_up(message)


@pytest.mark.parametrize(
    "message",
    [
        "显存不足",
        "Loss becomes NaN after a few steps",
        "多卡训练报错怎么办",
        "EnforceNotMet: Failed to find dynamic library: libnccl.so\nat x",
    ],
)
def test_standalone_questions_are_not_follow_ups(message):
    assert not is_follow_up(message)


@pytest.fixture
def hash_engine(hash_settings):
    from bot.engine.retrieve import Engine

    return Engine.open(hash_settings, auto_build=True)


def test_conversation_didnt_help_moves_to_other_sections(hash_engine):
    talk = Conversation(hash_engine, base_url=BASE)
    first = talk.respond("显存不足 out of memory batch_size")
    shown = {s.hit.section.key for s in first.shown}
    assert first.kind in ("answer", "clarify") and shown
    second = talk.respond("that didn't help")
    assert second.language == "en"
    assert not shown & {s.hit.section.key for s in second.shown}
    # A bare "that didn't help" adds nothing that could make the next section a sure answer: at most tentative.
    assert second.kind in ("no_match", "exhausted") and second.tier != "answer"
    assert second.markdown.startswith("Sorry that didn't help")


def test_conversation_follow_up_uses_the_previous_question(hash_engine):
    talk = Conversation(hash_engine, base_url=BASE)
    talk.respond("libnccl.so 多卡训练报错")
    reply = talk.respond("那显存呢？")
    assert "结合上一个问题" in reply.markdown and "libnccl.so 多卡训练报错" in reply.markdown
    assert talk.turns[-1].search.startswith("libnccl.so 多卡训练报错")


def test_conversation_clicked_option_shows_that_section(hash_engine):
    talk = Conversation(hash_engine, base_url=BASE)
    talk.respond("显存不足")
    key = hash_engine.sections[-1].key
    reply = talk.respond(key)
    assert reply.kind == "section" and reply.shown[0].hit.section.key == key
    assert reply.markdown.startswith(TEXTS["zh"]["chosen"])


def test_conversation_empty_input_is_a_friendly_prompt_not_a_turn(hash_engine):
    talk = Conversation(hash_engine, base_url=BASE)
    for message in ("", "   \n\t", None):
        reply = talk.respond(message)
        assert reply.kind == "empty" and "?" not in reply.markdown[:1] and reply.markdown
    assert talk.turns == []


def test_conversation_returns_unanswered_questions_as_events_for_the_edge(hash_settings, tmp_path):
    from bot.engine.retrieve import Engine

    engine = Engine.open(hash_settings, auto_build=True)  # uncalibrated: "bread" is not a confident answer
    talk = Conversation(engine, base_url=BASE)
    reply = talk.respond("how to bake bread")
    assert reply.kind == "no_match" and reply.tier in ("tentative", "none") and len(reply.shown) >= 1
    # The conversation writes nothing itself: the edge hands these to its recorder (the store).
    assert [e.kind for e in reply.events] == ["question"] and reply.events[0].tier != "answer"
    event = reply.events[0]
    assert event.question == "how to bake bread" and event.language == "en" and event.vote is None
    assert list(event.cited) == [s.hit.section.key for s in reply.shown]


# ---------------------------------------------------------------- a reply composed once (issue 24)


def test_a_reply_is_composed_once_in_order_and_then_refuses_edits():
    from bot.answer.reply import compose
    from bot.records import Event

    contact = Contact("https://help.example.com/gpu", "GPU support")
    said = format_no_match(
        dataclasses.replace(answer(hit(section(1), score=0.01), language="en"), tier="none"), meta, BASE, limit=LIMIT
    )  # formatted without the contact: compose adds it
    said.events.append(Event("not_helpful", "q", "en"))
    before = said.markdown
    scope = kb_scope([section(1)])
    done = compose(
        said,
        scope=scope,
        contact=contact,
        answer_id="a1",
        truncated_from=150_000,
        limit=LIMIT,
        sign=lambda text: text.replace("/source?", "/source?sig=s&"),
    )
    assert said.markdown == before and not said.finished  # the conversation's reply is left as it was
    md = done.markdown
    assert md.startswith(truncation_notice(150_000, LIMIT, "en"))  # the note first, then the reply
    assert scope_text("en", scope) in md and TEXTS["en"]["covers_generic"] not in md  # this knowledge base's scope
    assert md.count("[GPU support](https://help.example.com/gpu)") == 1  # a person after "didn't help", once
    assert "/source?sig=s&" in md and all("/source?sig=s&" in s.url for s in done.shown)  # links signed
    assert [e.answer_id for e in done.events] == ["a1"] and done.truncated_from == 150_000
    assert done.to_json()["reply"] == md and done.to_json()["options"] == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        done.markdown = "edited"
    with pytest.raises(AttributeError):
        done.events.append(Event("question", "q", "en"))  # its lists are tuples


def test_a_failed_hand_off_says_so_and_offers_the_link_without_the_transcript():
    from bot.answer.reply import compose

    contact = Contact(
        "mailto:gpu@example.com", "GPU help", webhook="https://hook.example.com", transcript="Q1: OOM?", question="OOM?"
    )
    done = compose(format_intent("human", "en", contact), scope=kb_scope([]), contact=contact, handoff_failed=True)
    assert done.markdown.startswith(TEXTS["en"]["handoff_failed"])
    assert "mailto:gpu@example.com)" in done.markdown and "OOM" not in done.markdown
    kept = compose(format_intent("human", "en", contact), scope=kb_scope([]), contact=contact)
    assert not kept.markdown.startswith(TEXTS["en"]["handoff_failed"]) and "subject=OOM" in kept.markdown


def test_the_follow_up_note_quotes_the_users_words_not_a_pasted_table(hash_engine):
    talk = Conversation(hash_engine, base_url=BASE)
    talk.respond(
        "+-----------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 418.67       Driver Version: 418.67       CUDA Version: 10.1     |\n"
        "libnccl.so 多卡训练报错"
    )
    reply = talk.respond("那显存呢？")
    assert "结合上一个问题" in reply.markdown
    note = next(line for line in reply.markdown.splitlines() if "结合上一个问题" in line)
    assert "libnccl.so 多卡训练报错" in note and "+---" not in note and "NVIDIA-SMI" not in note
