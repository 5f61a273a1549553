"""Lexicon.find splits a question into sentences in linear time (issue 28, finding 1)."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine.subjects import _SENTENCE, Lexicon, _pieces

# The splitter before issue 28: same sentences, but a run of end marks not followed by a space was tried
# from every position of the run (quadratic).
_QUADRATIC = re.compile(r"[.。;；!！?？\n]+(?:\s|$)|[。；！？\n]")


def _best_of(repeats: int, call) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def test_a_long_run_of_question_marks_costs_linear_time():
    """Four times the input costs about four times the time (quadratic: sixteen), measured in one run."""
    lexicon = Lexicon.load()

    def question(n: int) -> str:
        return "linux windows mac " + "?" * n + "x"

    small, large = question(2_000), question(8_000)
    ratio = _best_of(5, lambda: lexicon.find(large)) / _best_of(5, lambda: lexicon.find(small))
    assert ratio < 8, f"8,000 marks took {ratio:.1f}× the time of 2,000: growth is not linear"


def _words(pieces: list[str]) -> list[tuple[str, ...]]:
    return [w for w in map(_pieces, pieces) if w]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab .。;；!！?？\n\t", max_size=40))
def test_sentences_hold_the_same_words_as_before(text):
    assert _words(_SENTENCE.split(text)) == _words(_QUADRATIC.split(text))


def test_oses_listed_in_one_sentence_are_still_boilerplate():
    found = Lexicon.load().find("libnccl.so not found?? Set LD_LIBRARY_PATH on Linux or DYLD_LIBRARY_PATH on Mac OS.")
    assert "NCCL" in found and "macOS" not in found
