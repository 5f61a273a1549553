"""Issue 43: documents as a company keeps them (HTML, Word, PDF, reStructuredText) are read beside Markdown, cited
under their own names and places, converted once, and a file that cannot be read is named with its reason.

Every file is written in the test by the library that writes that format (tests/fixtures/documents.py); no
converter is replaced."""

from __future__ import annotations

import os
import zipfile

import pytest

from bot.answer.sections_text import citation_label
from bot.answer.source_view import render_source
from bot.engine.live import LiveEngine, SeedsWatcher, seeds_change
from bot.engine.retrieve import Engine
from bot.kb.embed import HashEmbedder
from bot.kb.formats import CACHE_DIR, CONVERTED_SUFFIXES, ConversionCache
from bot.kb.parse import DOCUMENT_SUFFIXES, parse_file, parse_folder
from tests.fixtures.documents import (
    CHROME,
    FAQ,
    HEADINGS,
    LABEL,
    SLANTED_FAQ,
    SLANTED_PROSE,
    TABLE_HEADER,
    TITLE,
    WRITERS,
    write_docx,
    write_html,
    write_pdf,
    write_scanned_pdf,
    write_slanted_pdf,
)
from tests.fixtures.engines import hash_engine, hash_settings_for


@pytest.mark.parametrize("suffix", list(WRITERS))
def test_every_format_gives_the_documents_own_sections_with_their_text_and_no_chrome(tmp_path, suffix):
    path = WRITERS[suffix](tmp_path / f"faq{suffix}")
    sections = parse_file(path)
    assert [s.heading for s in sections] == list(HEADINGS)
    assert all(s.source == f"faq{suffix}" and s.title == TITLE for s in sections)
    by_heading = {s.heading: s for s in sections}
    for _, heading, paragraphs in FAQ:
        words = " ".join(by_heading[heading].text.split())
        assert all(" ".join(p.split()) in words for p in paragraphs), (heading, words)
    assert by_heading["Watchdog"].path == (TITLE, "NCCL timeout", "Watchdog")  # the heading levels survive
    text = "\n".join(s.text for s in sections)
    assert CHROME not in text and "document.write" not in text and "Powered by" not in text


def test_each_format_says_where_in_the_original_a_section_is(tmp_path):
    pdf = {}
    for section in parse_file(write_pdf(tmp_path / "faq.pdf", pages=2)):
        pdf.setdefault(section.heading, section)
    assert pdf["Out of memory"].locator == "#page=1"
    assert citation_label(pdf["Out of memory"], None, "en").endswith("faq.pdf · page 1")
    assert citation_label(pdf["Out of memory"], None, "zh").endswith("faq.pdf · 第 1 页")
    second = [s for s in parse_file(tmp_path / "faq.pdf") if s.locator == "#page=2"]
    assert second, "the second page's sections are cited on page 2"

    html = {s.heading: s for s in parse_file(write_html(tmp_path / "faq.html"))}
    assert html["NCCL timeout"].anchor == "nccl-timeout" and html["NCCL timeout"].locator == "#nccl-timeout"
    assert citation_label(html["NCCL timeout"], None, "en").endswith("faq.html#nccl-timeout")

    word = {s.heading: s for s in parse_file(write_docx(tmp_path / "faq.docx"))}
    label = citation_label(word["NCCL timeout"], None, "en")
    assert "NCCL timeout" in label and label.endswith("faq.docx")  # no bookmark: a Word file's place is its heading

    md = {s.heading: s for s in parse_file(WRITERS[".md"](tmp_path / "faq.md"))}
    assert md["NCCL timeout"].locator == "" and "lines" in citation_label(md["NCCL timeout"], None, "en")


def _zip_bomb(path, inflated: int) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", " " * inflated)


def test_files_that_cannot_be_read_are_named_with_their_reason_and_the_rest_is_indexed(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    write_docx(seeds / "good.docx")
    write_pdf(seeds / "locked.pdf", password="secret")
    write_scanned_pdf(seeds / "scan.pdf")
    (seeds / "broken.docx").write_bytes(b"PK\x03\x04 this is not a zip archive")
    _zip_bomb(seeds / "bomb.docx", 3_000_000)  # 3 MB of XML from a few KB: over 20 x the 100,000-byte cap
    with open(seeds / "huge.pdf", "wb") as handle:  # 200 MB (sparse: no disk taken), never read
        handle.truncate(200 * 1024 * 1024)
    (seeds / "app.html").write_text("<html><body><script>render()</script><noscript>x</noscript></body></html>")

    sections, errors = parse_folder(seeds, max_bytes=100_000)
    assert {s.source for s in sections} == {"good.docx"} and len(sections) == len(FAQ)
    reasons = {str(e).split(":", 1)[0]: str(e) for e in errors}
    assert set(reasons) == {"locked.pdf", "scan.pdf", "broken.docx", "bomb.docx", "huge.pdf", "app.html"}
    assert "encrypted" in reasons["locked.pdf"] and "password" in reasons["locked.pdf"]
    assert "no text layer" in reasons["scan.pdf"] and "OCR is not done" in reasons["scan.pdf"]
    assert "corrupt" in reasons["broken.docx"]
    assert "zip bomb" in reasons["bomb.docx"] and "not unpacked" in reasons["bomb.docx"]
    assert "209,715,200 bytes, over the cap of 50,000,000 bytes per PDF or Word file" in reasons["huge.pdf"]
    assert "BOT_MAX_SEED_FILE_BYTES" in reasons["huge.pdf"]
    assert "no text once scripts" in reasons["app.html"]


def test_a_document_is_converted_once_and_its_conversion_goes_when_it_does(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    write_pdf(seeds / "faq.pdf")
    write_docx(seeds / "faq.docx")
    folder = tmp_path / "index" / CACHE_DIR
    first = ConversionCache(folder)
    parse_folder(seeds, cache=first)
    first.prune()
    assert (first.converted, first.reused) == (2, 0) and "converted 2 document(s)" in first.summary()
    again = ConversionCache(folder)
    sections, _ = parse_folder(seeds, cache=again)
    assert (again.converted, again.reused) == (0, 2) and len(sections) == 2 * len(FAQ)

    (seeds / "faq.pdf").unlink()
    pruned = ConversionCache(folder)
    parse_folder(seeds, cache=pruned)
    pruned.prune()
    assert len(list(folder.glob("*.json"))) == 1  # the removed PDF's conversion is gone, the Word file's kept
    assert ConversionCache(None).summary() == ""


def test_a_build_reads_every_format_cites_the_original_and_shows_its_converted_text(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for suffix, write in WRITERS.items():
        write(seeds / f"faq{suffix}")
    settings = hash_settings_for(tmp_path)
    engine = hash_engine(settings)
    sources = {s.source for s in engine.sections}
    assert sources == {f"faq{suffix}" for suffix in WRITERS}
    assert len(list((tmp_path / "index" / CACHE_DIR).glob("*.json"))) == len(CONVERTED_SUFFIXES) - 1  # .htm: none

    pdf = next(s for s in engine.sections if s.source == "faq.pdf" and s.heading == "NCCL timeout")
    status, page = render_source(engine, settings, pdf.key, "NCCL_DEBUG", "en", False)
    assert status == 200 and "faq.pdf" in page and "NCCL_DEBUG" in page and "%PDF" not in page
    assert pdf.key in {h.section.key for h in engine.ask("NCCL timeout set NCCL_DEBUG=INFO", k=10).hits}


def test_a_word_file_or_pdf_dropped_into_a_running_apps_seeds_is_served(hash_settings):
    assert set(DOCUMENT_SUFFIXES) >= {".md", ".txt", ".html", ".htm", ".docx", ".pdf", ".rst"}
    relevant = seeds_change(hash_settings.seeds_dir)
    assert relevant(None, str(hash_settings.seeds_dir / "team" / "Guide.PDF"))
    assert relevant(None, str(hash_settings.seeds_dir / "faq.docx"))

    live = LiveEngine(Engine.open(hash_settings, HashEmbedder(), auto_build=True), poll_seconds=0)
    watcher = SeedsWatcher(live)
    write_docx(hash_settings.seeds_dir / "gpu.docx")
    write_pdf(hash_settings.seeds_dir / "gpu.pdf")
    assert watcher.rebuild() is True
    served = {(s.source, s.heading) for s in live.sections}
    assert ("gpu.docx", "Out of memory") in served and ("gpu.pdf", "Out of memory") in served


def test_a_damaged_cache_entry_is_converted_again(tmp_path):
    path = write_docx(tmp_path / "faq.docx")
    cache = ConversionCache(tmp_path / "cache")
    cache.get(path.read_bytes(), ".docx", 100_000)
    (entry,) = (tmp_path / "cache").glob("*.json")
    entry.write_text("{not json")
    again = ConversionCache(tmp_path / "cache")
    assert again.get(path.read_bytes(), ".docx", 100_000).text.startswith(f"# {TITLE}")
    assert again.converted == 1 and os.path.getsize(entry) > 100


def test_a_word_headings_bookmark_is_its_place_and_words_hidden_bookmarks_are_not(tmp_path):
    bookmarks = {"NCCL timeout": "nccl-timeout", "Out of memory": "_Toc1234", "Watchdog": "_Ref99"}
    word = {s.heading: s for s in parse_file(write_docx(tmp_path / "faq.docx", bookmarks=bookmarks))}
    assert word["NCCL timeout"].locator == "#nccl-timeout"
    assert citation_label(word["NCCL timeout"], None, "en").endswith("faq.docx#nccl-timeout")
    assert word["Out of memory"].locator == word["Watchdog"].locator == ""  # a table of contents' names: no one's
    assert citation_label(word["Out of memory"], None, "en").endswith("faq.docx")
    assert [s.heading for s in word.values()] == list(HEADINGS)


def test_questions_a_pdf_sets_at_the_body_size_in_italic_are_its_sections(tmp_path):
    # Chromium prints a CJK h5 (a font with no italic face) as sheared glyphs, Word a Heading 4 in an italic face;
    # code on the heading's line is set smaller. An italic sentence or long paragraph is not a heading.
    sections = parse_file(write_slanted_pdf(tmp_path / "faq.pdf"))
    assert [s.heading for s in sections] == ["Training FAQ", *(heading for heading, _, _ in SLANTED_FAQ)]
    by_heading = {s.heading: s for s in sections}
    for heading, _, answer in SLANTED_FAQ:
        assert answer in " ".join(by_heading[heading].text.split())
    assert LABEL in by_heading[SLANTED_FAQ[0][0]].text  # a label ends with a colon: text, whatever its size
    intro = " ".join(by_heading["Training FAQ"].text.split())
    assert all(" ".join(prose.split()) in intro for prose in SLANTED_PROSE)
    assert all(cell in intro for cell in TABLE_HEADER)  # a bold header row is a table's, not a heading


def test_a_pdf_or_word_file_has_its_own_size_cap_and_its_text_the_shared_one(tmp_path):
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    pdf = write_pdf(seeds / "faq.pdf", figure=True)
    word = write_docx(seeds / "faq.docx", figure=True)
    (seeds / "faq.md").write_text(WRITERS[".md"](tmp_path / "faq.md").read_text())
    # Above the FAQ's text (and a twentieth of a Word file's unpacked XML), below either file: their pictures.
    text_cap = 50_000
    assert min(pdf.stat().st_size, word.stat().st_size) > text_cap > len((seeds / "faq.md").read_bytes())
    sections, errors = parse_folder(seeds, max_bytes=text_cap)
    assert not errors and {s.source for s in sections} == {"faq.pdf", "faq.docx", "faq.md"}

    sections, errors = parse_folder(seeds, max_bytes=text_cap, max_file_bytes=1_000)
    assert {s.source for s in sections} == {"faq.md"}
    assert all("per PDF or Word file (BOT_MAX_SEED_FILE_BYTES)" in str(e) for e in errors) and len(errors) == 2

    sections, errors = parse_folder(seeds, max_bytes=300)  # the text over the shared cap: named, as for Markdown
    assert not sections and len(errors) == 3 and all("BOT_MAX_SEED_BYTES" in str(e) for e in errors)
