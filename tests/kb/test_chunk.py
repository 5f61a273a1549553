from bot.kb.chunk import chunk_sections
from bot.kb.parse import parse_folder
from conftest import SEEDS


def test_chunks_never_cross_sections_and_map_back():
    sections, _ = parse_folder(SEEDS)
    chunks = chunk_sections(sections, size=200, overlap=40)
    by_key = {s.key: s for s in sections}
    assert len(chunks) > len(sections)  # long sections were split
    for chunk in chunks:
        section = by_key[chunk.section_key]
        assert len(chunk.text) <= 200
        # Every chunk's text comes from its own section (modulo whitespace trimming).
        assert chunk.text.strip()[:30] in section.text
    assert {c.section_key for c in chunks} == set(by_key)
