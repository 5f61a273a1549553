import re
from pathlib import Path

import pytest

from bot.kb.parse import ParseError, parse_fields, parse_file, parse_folder, parse_text, plain_heading
from conftest import SEEDS


def headings(text: str) -> list[str]:
    return [s.heading for s in parse_text(text, "doc.md")]


def test_hash_lines_inside_code_fences_are_code_not_headings():
    doc = "# Title\n\n## Real\n\n```bash\n# not a heading\nexport X=1\n```\n\n~~~\n## nor this\n~~~\n"
    assert headings(doc) == ["Real"]
    (section,) = parse_text(doc, "doc.md")
    assert "# not a heading" in section.text and "## nor this" in section.text


def test_front_matter_title_names_the_text_above_the_first_heading():
    doc = "---\nlayout: post # comment\ntitle:      35.0 GPU加速\t\t# 标题\n---\n\nintro text\n\n# enable GPU\nbody\n"
    sections = parse_text(doc, "doc.md")
    assert [(s.heading, s.start_line, s.end_line) for s in sections] == [("35.0 GPU加速", 6, 6), ("enable GPU", 8, 9)]
    assert sections[1].path == ("35.0 GPU加速", "enable GPU")
    assert all(s.title == "35.0 GPU加速" for s in sections)


def test_link_headings_become_plain_text_and_toc_is_not_a_section():
    doc = "# Doc\n\n# 目录\n\n- [1. 简介](#1)\n- [2. FAQ](#2)\n\n## [1. 简介](#1)\n\nintro\n\n## 2. [FAQ](#2)\n\n- 问：a?\n- 答：b\n"
    sections = parse_text(doc, "doc.md")
    assert [s.heading for s in sections] == ["1. 简介", "2. FAQ"]
    assert sections[0].path == ("Doc", "1. 简介")  # the TOC heading is not a parent


def test_faq_fields_and_question_answer_pairs_are_recognised():
    body = "+ 问题描述：显存不足\n\n+ 报错输出：\n\n```\nOOM\n```\n\n+ 解决方法：\n\n减小 batch_size\n"
    assert [name for name, _ in parse_fields(body)] == ["问题描述", "报错输出", "解决方法"]
    assert dict(parse_fields(body))["解决方法"] == "减小 batch_size"
    qa = parse_fields("- 问：程序 hang 怎么办？\n\n- 答：看日志。\n- 问：NCCL?\n- 答：NCCL_DEBUG=INFO\n")
    assert qa == (("问", "程序 hang 怎么办？"), ("答", "看日志。"), ("问", "NCCL?"), ("答", "NCCL_DEBUG=INFO"))


def test_plain_heading_strips_markup_and_review_markers():
    assert plain_heading("`已审核`1.问题：[GPU](#x) **利用率** ##") == "1.问题：GPU 利用率"


def test_document_noise_is_cleaned_at_parse_time_and_anchors_stay_stable():
    doc = "# Doc\n\n## `已审核`2.问题：多卡训练报错\n\nbody\n\n## 3. [3. FAQ](#3)\n\n- 问：a?\n- 答：b\n\n### 3.3 Sub\n\nx\n"
    sections = parse_text(doc, "doc.md")
    assert [s.heading for s in sections] == ["2.问题：多卡训练报错", "3. FAQ", "3.3 Sub"]
    # anchors are made from the heading as written, so metadata keys and old links keep working
    assert [s.anchor for s in sections] == ["已审核2-问题-多卡训练报错", "3-3-faq", "3-3-sub"]
    assert sections[2].path == ("Doc", "3. FAQ", "3.3 Sub")


def test_seed_headings_carry_no_review_markers_or_doubled_numbers():
    sections, errors = parse_folder(SEEDS)
    assert not errors
    headings = [s.heading for s in sections] + [part for s in sections for part in s.path]
    assert not [h for h in headings if "已审核" in h or "`" in h]
    assert not [h for h in headings if re.match(r"^(\d+(?:\.\d+)*)[.、．]?\s+\1\b", h)]
    by_anchor = {s.anchor: s.heading for s in sections if s.source.startswith("000_")}
    assert (
        by_anchor["已审核2-问题-使用fluid训练模型时-使用多卡训练报错"]
        == "2.问题：使用Fluid训练模型时，使用多卡训练报错"
    )


def test_line_ranges_round_trip_to_the_source_file(tmp_path: Path):
    for path in sorted(SEEDS.glob("*.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for section in parse_file(path):
            assert 1 <= section.start_line <= section.end_line <= len(lines)
            shown = "\n".join(lines[section.start_line - 1 : section.end_line])
            # The last line of the body is inside the cited range.
            assert section.text.splitlines()[-1] in shown


def test_seed_traps_parse_as_expected():
    sections, errors = parse_folder(SEEDS)
    assert errors == []
    by_source: dict[str, list[str]] = {}
    for s in sections:
        by_source.setdefault(s.source, []).append(s.heading)
    # 004: "# and in another terminal:" sits in a code fence; front matter gives the title.
    tf = by_source["004_c9562597aefa3d00.txt"]
    assert tf[0] == "35.0 GPU加速" and "and in another terminal:" not in " ".join(tf)
    assert "管理GPU RAM" in tf
    # 002: "#一旦不再使用即释放内存垃圾" is a comment in a bash block.
    assert not any("一旦" in h for h in by_source["002_5c885a5c94776257.txt"])
    # 003: link headings, no TOC section, no empty "# " heading.
    assert by_source["003_ba74d700c0e52ec2.txt"][:2] == ["1. 简介", "2. 多机多卡训练功能开发"]
    assert "3. FAQ" in by_source["003_ba74d700c0e52ec2.txt"]
    anchors = [s.key for s in sections]
    assert len(anchors) == len(set(anchors))


def test_non_utf8_file_is_reported_with_file_and_line_and_others_still_parse(tmp_path: Path):
    (tmp_path / "good.md").write_text("# Good\n\nbody\n", encoding="utf-8")
    (tmp_path / "bad.md").write_bytes("# 标题\n\n第二行\n".encode("gbk"))
    (tmp_path / "binary.txt").write_bytes(b"ok\n\x00\x01\x02")
    (tmp_path / "open.md").write_text("---\ntitle: never closed\n\nbody\n", encoding="utf-8")
    sections, errors = parse_folder(tmp_path)
    assert [s.heading for s in sections] == ["Good"]
    messages = sorted(str(e) for e in errors)
    assert messages[0].startswith("bad.md:1: is not UTF-8")
    assert messages[1].startswith("binary.txt:2: contains NUL bytes")
    assert messages[2].startswith("open.md:1: front matter")


def test_parse_error_names_the_file():
    with pytest.raises(ParseError, match=r"x\.md:1"):
        parse_text("---\ntitle: t\n", "x.md")


def test_empty_and_whitespace_documents_have_no_sections():
    assert parse_text("", "e.md") == []
    assert parse_text("\n\n   \n# \n#\n", "e.md") == []


# ---------------------------------------------------------------- caps per document (issue 19)


def test_an_oversized_seed_is_skipped_by_name_and_the_rest_still_loads(tmp_path):
    from bot.kb.parse import MAX_SEED_BYTES

    (tmp_path / "ok.md").write_text("# OK\n\n## 显存不足\n\n减小 batch_size。\n", encoding="utf-8")
    big = tmp_path / "huge.txt"
    big.write_bytes(b"x" * (MAX_SEED_BYTES + 1))  # one line, no heading: the 20 MB case of the issue, smaller
    sections, errors = parse_folder(tmp_path)
    assert {s.source for s in sections} == {"ok.md"}
    (error,) = [str(e) for e in errors]
    assert error.startswith("huge.txt: is 5,000,001 bytes, over the cap of 5,000,000") and "BOT_MAX_SEED_BYTES" in error


def test_a_seed_with_too_many_headings_is_cut_with_a_warning(tmp_path):
    from bot.kb.parse import MAX_SEED_SECTIONS

    n = MAX_SEED_SECTIONS + 1_000
    (tmp_path / "many.md").write_text(
        "# Many\n\n" + "".join(f"## heading {i}\n\nbody {i}\n\n" for i in range(n)), encoding="utf-8"
    )
    sections, errors = parse_folder(tmp_path)
    assert len(sections) == MAX_SEED_SECTIONS - 1  # the H1 (no body of its own) counts as one of the 5,000 headings
    assert sections[-1].heading == f"heading {MAX_SEED_SECTIONS - 2}"
    assert sections[-1].text == f"body {MAX_SEED_SECTIONS - 2}"  # the cut does not glue the rest onto the last one
    (error,) = [str(e) for e in errors]
    assert error.startswith(f"many.md:{2 + 4 * (MAX_SEED_SECTIONS - 1) + 1}: has {n + 1:,} headings")
    assert "BOT_MAX_SEED_SECTIONS" in error


def test_caps_are_optional_for_library_callers():
    doc = "# T\n" + "".join(f"## h{i}\nb{i}\n" for i in range(10))
    warnings: list = []
    assert len(parse_text(doc, "d.md", max_sections=3, warnings=warnings)) == 2 and len(warnings) == 1
    assert len(parse_text(doc, "d.md")) == 10
