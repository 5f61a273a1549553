"""Lexicon.find splits a question into sentences as the quadratic splitter before issue 28 did (finding 1); the time
it takes grows linearly: `python -m bench.linearity --only question_marks` measures the ratio."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine.subjects import _SENTENCE, Lexicon, _pieces

# The splitter before issue 28: same sentences, but a run of end marks not followed by a space was tried
# from every position of the run (quadratic).
_QUADRATIC = re.compile(r"[.。;；!！?？\n]+(?:\s|$)|[。；！？\n]")


def _words(pieces: list[str]) -> list[tuple[str, ...]]:
    return [w for w in map(_pieces, pieces) if w]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab .。;；!！?？\n\t", max_size=40))
def test_sentences_hold_the_same_words_as_before(text):
    assert _words(_SENTENCE.split(text)) == _words(_QUADRATIC.split(text))


def test_oses_listed_in_one_sentence_are_still_boilerplate():
    found = Lexicon.load().find("libnccl.so not found?? Set LD_LIBRARY_PATH on Linux or DYLD_LIBRARY_PATH on Mac OS.")
    assert "NCCL" in found and "macOS" not in found
