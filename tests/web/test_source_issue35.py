"""The source view reads as a page, not raw markdown (issue 35): a "+ " list item is a bullet, a "----------" line a
rule, and a link leads back to the chat."""

from __future__ import annotations

from types import SimpleNamespace

from bot.answer.source_view import render_source
from bot.records import Section

DOC = "# 训练\n## 问题：显存不足\n+ 答复：减小 batch_size\n----------\n- 开启 FLAGS_eager_delete_tensor_gb\n"


def test_list_items_and_rules_are_rendered_and_the_page_links_back_to_the_chat(tmp_path):
    (tmp_path / "faq.md").write_text(DOC, encoding="utf-8")
    section = Section("faq.md", "问题：显存不足", ("训练", "问题：显存不足"), 2, 5, "oom", DOC, "训练")
    engine = SimpleNamespace(section=lambda key: section if key == section.key else None)
    status, page = render_source(engine, SimpleNamespace(seeds_dir=tmp_path), section.key, "显存", "zh", False)
    assert status == 200
    page = page.split("<body>", 1)[1]  # the text shown (the inlined CSS names what it replaces)
    assert "+ 答复" not in page and "----------" not in page and "- 开启" not in page
    assert 'class="line item' in page and 'class="line rule' in page and "答复：减小 batch_size" in page
    assert '<a href="./" class="back">← 返回对话</a>' in page
    missing = render_source(engine, SimpleNamespace(seeds_dir=tmp_path), "gone", "", "en", False)
    assert missing[0] == 404 and "Back to the chat" in missing[1]
