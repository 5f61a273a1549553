"""What never changes about a section, computed when the index is built and stored with it: :class:`SectionFacts`.

Ranking and judging read these facts instead of re-reading a section's text per question:
the subjects it names and covers, its document's main frameworks, the operating system it is
written for, the old releases it was written for, whether it answers anything on its own, its language.

The rules need the engine's lexicon and vocabulary (the :class:`bot.kb.domain.Domain`'s), while the build lives
in :mod:`bot.kb`, a stage below: the engine hands a :class:`SectionFactsHook` of the domain to the build
(:func:`build`), and the build stores its rows in ``facts.json`` with :attr:`SectionFactsHook.version`
in the manifest. An index built with other rules or vocabulary, or before facts were stored, still
loads, with a warning that names the file and the fix (:func:`facts_of`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from bot.engine.message import Language
from bot.engine.selftest import SelfTestHook
from bot.engine.subjects import Lexicon, document_frameworks
from bot.kb.domain import Domain, serving_domain, shipped
from bot.kb.embed import Embedder
from bot.kb.eras import old_releases
from bot.kb.index import BUILD_FIX, FACTS_FILE, BuildReport, IndexCorrupt, KnowledgeIndex, build_index
from bot.kb.tokenize import detect_language
from bot.records import Section
from bot.settings import Settings

# Raise when the rules below change what they compute: indexes built with the old rules are then stale.
RULES = 1

_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[ \t]*$", re.MULTILINE | re.DOTALL)


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

    def to_row(self) -> dict[str, Any]:
        """A JSON row (sets sorted, so a build writes the same file for the same sections)."""
        return {
            "key": self.key,
            "named": sorted(self.named),
            "frameworks": sorted(self.frameworks),
            "covers": sorted(self.covers),
            "os": sorted(self.os),
            "eras": list(self.eras),
            "answers": self.answers,
            "language": self.language,
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> SectionFacts:
        """The inverse of :meth:`to_row`.

        >>> f = SectionFacts("a.md#x", frozenset({"CUDA"}), frozenset(), frozenset({"CUDA"}), frozenset(), (), True, "zh")
        >>> SectionFacts.from_row(f.to_row()) == f
        True
        """
        language = row["language"]
        if language not in ("zh", "en"):
            raise ValueError(f"language {language!r}")
        return cls(
            key=str(row["key"]),
            named=frozenset(map(str, row["named"])),
            frameworks=frozenset(map(str, row["frameworks"])),
            covers=frozenset(map(str, row["covers"])),
            os=frozenset(map(str, row["os"])),
            eras=tuple(map(str, row["eras"])),
            answers=bool(row["answers"]),
            language=language,
        )


def section_facts(
    sections: Sequence[Section],
    lexicon: Lexicon,
    *,
    domain: Domain | None = None,
    os_of: Callable[[Section], frozenset[str]] | None = None,
    answers: Callable[[Section], bool] | None = None,
) -> tuple[SectionFacts, ...]:
    """The facts of every section of one index (``os_of`` and ``answers`` default to the rules below, with the
    word lists of ``domain``, the shipped one unless given)."""
    domain = domain or shipped()
    os_of = os_of or (lambda s: os_of_section(s, lexicon, domain))
    answers = answers or answers_something
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


def os_of_section(section: Section, lexicon: Lexicon, domain: Domain | None = None) -> frozenset[str]:
    """Operating systems a section's own title path is written for ("Linux GPU 多机多卡…" is Linux).

    A fix written for Linux (the word list ``linux_only_fix``: shared-library paths and package tools that do not
    exist on Windows or macOS) makes the section Linux's too.
    """
    domain = domain or shipped()
    path = " ".join(section.path)
    found = {s for s in lexicon.find(path) if lexicon.category(s) == "os"}
    if domain.word("linux").search(path) or domain.word("linux_only_fix").search(section.text[:20_000]):
        found.add("Linux")
    return frozenset(found)


def answers_something(section: Section) -> bool:
    """FAQ entries and sections with prose of their own; not a code-only step of a how-to."""
    if section.having("fix") or section.having("answer"):  # the parser read the fields' roles from the domain
        return True
    prose = _FENCED.sub("", section.text)
    prose = re.sub(r"<[^>\n]{0,300}>|!\[[^\]\n]*\]\([^)\n]*\)|\s+", "", prose)
    return len(prose) >= 80


class SectionFactsHook:
    """The build's hook (:class:`bot.kb.index.FactsHook`): sections -> JSON rows of their facts, and the version
    of what computed them (the rules, and the domain's lexicon and vocabulary)."""

    def __init__(self, domain: Domain | None = None) -> None:
        self.domain = domain or shipped()

    @property
    def version(self) -> str:
        """``<rules>:<digest of the domain>``."""
        return f"{RULES}:{self.domain.digest}"

    @cached_property
    def lexicon(self) -> Lexicon:
        return Lexicon.of(self.domain)

    def __call__(self, sections: Sequence[Section]) -> list[dict[str, Any]]:
        return [f.to_row() for f in section_facts(sections, self.lexicon, domain=self.domain)]


def build(settings: Settings, embedder: Embedder, **options: Any) -> BuildReport:
    """``python -m bot build``: :func:`bot.kb.index.build_index` with the engine's section facts stored, for the
    seeds' domain (loaded once here, handed to the parser and to the facts)."""
    domain = serving_domain(settings.seeds_dir)  # `python -m bot` and the seeds watcher refuse a broken file first
    hook = SectionFactsHook(domain)
    selftest = SelfTestHook(settings, domain, lambda: hook.lexicon)
    return build_index(settings, embedder, facts=hook, domain=domain, selftest=selftest, **options)


class FactsNotStored(UserWarning):
    """An index without stored section facts (an older generation, or built by ``bot.kb`` alone) or with facts of
    other rules or vocabulary: they are computed at load instead, and the message says how to store them."""


def facts_of(index: KnowledgeIndex, hook: SectionFactsHook | None = None) -> tuple[SectionFacts, ...]:
    """The facts of ``index``, one per section in order, as its build stored them.

    An index that holds none, or holds facts of another version, still loads: the facts are computed now,
    with a :class:`FactsNotStored` warning naming the file and the fix (refusing would turn every index
    built before this version, and every build made without the engine's hook, into a failed start).
    """
    hook = hook or SectionFactsHook(index.domain)
    path = index.path / FACTS_FILE
    built, wanted = index.manifest.get("facts"), hook.version
    if index.facts is None or built != wanted:
        why = (
            "is missing (the index was built before section facts were stored with it)"
            if index.facts is None
            else f"holds facts of version {built!r}, this engine computes {wanted!r} (the lexicon, vocabulary "
            "or rules changed since the build)"
        )
        warnings.warn(f"{path} {why}; computing them now. {BUILD_FIX}", FactsNotStored, stacklevel=2)
        return section_facts(index.sections, hook.lexicon, domain=hook.domain)
    try:
        facts = tuple(SectionFacts.from_row(row) for row in index.facts)
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexCorrupt(f"{path} is unreadable ({type(exc).__name__}: {exc}). {BUILD_FIX}") from None
    if [f.key for f in facts] != [s.key for s in index.sections]:
        raise IndexCorrupt(f"{path} does not describe the {len(index.sections)} sections of its index. {BUILD_FIX}")
    return facts
