"""What never changes about a section, computed once per loaded index: :class:`SectionFacts`.

Ranking and judging read these facts instead of re-reading a section's text per question:
the subjects it names and covers, its document's main frameworks, the operating system it is
written for, the old releases it was written for, whether it answers anything on its own, its language.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.engine.message import Language
from bot.engine.subjects import Lexicon, document_frameworks
from bot.kb.eras import old_releases
from bot.kb.tokenize import detect_language
from bot.records import Section


@dataclass(frozen=True)
class SectionFacts:
    """One section's fixed facts.

    ``named``: subjects its own heading path and body name; ``frameworks``: its document's main
    framework(s) (a Paddle FAQ that mentions TensorFlow once is Paddle); ``covers``: both;
    ``os``: operating systems its title path or fix is written for; ``eras``: old releases it was
    written for; ``answers``: an FAQ entry or prose of its own (not a bare code step).
    """

    key: str
    named: frozenset[str]
    frameworks: frozenset[str]
    covers: frozenset[str]
    os: frozenset[str]
    eras: tuple[str, ...]
    answers: bool
    language: Language


def section_facts(
    sections: Sequence[Section],
    lexicon: Lexicon,
    *,
    os_of: Callable[[Section], frozenset[str]],
    answers: Callable[[Section], bool],
) -> tuple[SectionFacts, ...]:
    """The facts of every section of one index (``os_of`` and ``answers`` are the engine's rules for a section)."""
    named = [lexicon.find(" ".join(s.path) + "\n" + s.text) for s in sections]
    per_doc = document_frameworks(lexicon, [s.source for s in sections], named)
    facts = []
    for section, own in zip(sections, named):
        main = per_doc.get(section.source, frozenset())
        facts.append(
            SectionFacts(
                key=section.key,
                named=frozenset(own),
                frameworks=main,
                covers=frozenset(own | main),
                os=os_of(section),
                eras=old_releases(section),
                answers=answers(section),
                language="zh" if detect_language(f"{section.heading}\n{section.text[:3_000]}") == "zh" else "en",
            )
        )
    return tuple(facts)
