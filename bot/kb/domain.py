"""The domain as data: one frozen :class:`Domain` holds what is specific to the documents and their field.

The shipped defaults live in ``bot/data/``; a company's overrides live beside its documents in ``seeds/`` and are
merged over them when the index is built or opened (:func:`load_domain`). The engine, the build and the admin are
handed the :class:`Domain` they were opened with; nothing reads a module global.

Every key a company may override, and the file it lives in (simonw/llm declares its extension points in one file;
this is that file for the domain)::

    key                      shipped in                  a company's override       what it is
    [faq] fields             bot/data/domain.toml        seeds/domain.toml          names of an FAQ entry's fields
    [faq] fix                bot/data/domain.toml        seeds/domain.toml          fields holding the fix, best first
    [faq] pairs              bot/data/domain.toml        seeds/domain.toml          [question, answer] field pairs
    [faq] quiet              bot/data/domain.toml        seeds/domain.toml          fields a reply's details leave out
    [[subject]]              bot/data/subjects.toml      seeds/domain.toml          subjects: name, category, aliases,
                                                                                    implies, names = { zh = "…" }
    [[<list>]] words         bot/data/vocabulary.toml    seeds/vocabulary.toml      the word lists (bot.kb.vocabulary)
    [pattern.<NAME>] re      bot/data/environment.toml   seeds/environment.toml     what a pasted environment is read
    keywords                 bot/data/environment.toml   seeds/environment.toml     with (bot.kb.patterns)

A key of ``[faq]`` in ``seeds/domain.toml`` replaces the shipped one; a ``[[subject]]`` replaces the shipped subject
of the same name or adds one; a word list replaces the shipped list of the same name; a ``[pattern.NAME]`` replaces the shipped pattern of that name
(an unknown name is refused, and every pattern must stay linear). A file that cannot be used
raises :class:`DomainError` naming the file, the key and the fix.

    >>> domain = shipped()
    >>> domain.faq.fix[:2], domain.subject_name("multi-card", "zh"), domain.subject_name("multi-card", "en")
    (('解决方法', '解决办法'), '多卡', 'multi-card')
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal

from bot.kb.patterns import PATTERNS_FILE, SEEDS_PATTERNS, Patterns, PatternsError, load_patterns
from bot.kb.vocabulary import VOCABULARY_FILE, VocabularyError, compile_lists, read_toml

DATA = Path(__file__).parents[1] / "data"
DOMAIN_FILE = DATA / "domain.toml"
SUBJECTS_FILE = DATA / "subjects.toml"
SEEDS_DOMAIN = "domain.toml"  # seeds/domain.toml: a company's FAQ conventions and subjects
SEEDS_VOCABULARY = "vocabulary.toml"  # seeds/vocabulary.toml: a company's word lists
log = logging.getLogger("bot.kb.domain")

Role = Literal["fix", "question", "answer", "quiet"]


class DomainError(ValueError):
    """A domain file that cannot be used; the message names the file, the key and the fix."""


@dataclass(frozen=True)
class Faq:
    """An FAQ convention: the fields an entry has, which hold the fix, which pair up, which a reply leaves out."""

    fields: tuple[str, ...]
    fix: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...] = ()
    quiet: tuple[str, ...] = ()

    @cached_property
    def _names(self) -> str:
        # Longest first: "问题描述" is not read as the field "问" followed by "题描述".
        return "|".join(re.escape(n) for n in sorted(self.fields, key=len, reverse=True))

    @cached_property
    def line(self) -> re.Pattern[str]:
        """A line that starts a field: group 1 the name, group 2 the value's first line (see domain.toml)."""
        names = self._names
        return re.compile(
            r"^\s{0,4}[+\-*]\s*(" + names + r")\s*[:：]\s?(.*)$"  # "+ 问题描述：…"
            r"|^\s{0,4}(?:[+\-*]\s*)?\*\*(" + names + r")\s*(?:[:：]\s*\*\*|\*\*\s*[:：])\s?(.*)$"  # "**Q:** …"
            r"|^ {0,3}#{1,6}[ \t]+(" + names + r")[ \t]*[:：]?[ \t]*#*[ \t]*()$",  # "### Solution"
            re.IGNORECASE,
        )

    @cached_property
    def heading(self) -> re.Pattern[str]:
        """A heading's plain text that names a field: the heading is a field of the section above, not a section."""
        return re.compile(r"^(?:" + self._names + r")\s*[:：]?$", re.IGNORECASE)

    def spelled(self, name: str) -> str:
        """A field name as the domain spells it ("solution" -> "Solution")."""
        return next((n for n in self.fields if n.lower() == name.lower()), name)

    def roles(self, names: set[str]) -> tuple[tuple[str, Role], ...]:
        """What each of ``names`` (the fields a section has) is for, fix fields in the order a reply prefers them.

        >>> shipped().faq.roles({"问题描述", "解决方法", "标签"})
        (('解决方法', 'fix'), ('标签', 'quiet'))
        """
        found: list[tuple[str, Role]] = [(n, "fix") for n in self.fix if n in names]
        for question, answer in self.pairs:
            if question in names:
                found += [(question, "question"), (answer, "answer")]
        found += [(n, "quiet") for n in self.quiet if n in names]
        return tuple(found)


@dataclass(frozen=True)
class Subject:
    """What a question can be specifically about: a framework, product, OS, device, tool, task or error."""

    name: str  # English, the key everything else uses
    category: str
    aliases: tuple[str, ...]
    implies: tuple[str, ...] = ()
    names: tuple[tuple[str, str], ...] = ()  # (language, name) for the languages other than English


@dataclass(frozen=True)
class Domain:
    """What is specific to the documents and their field (the module docstring lists every key)."""

    faq: Faq
    subjects: tuple[Subject, ...]
    words: dict[str, re.Pattern[str]] = field(compare=False)  # the vocabulary's lists, compiled
    files: tuple[Path, ...] = ()  # the files read, shipped first
    # What a pasted environment is read with (bot.diagnose.environment): used when serving, never by the build, so it
    # is not in the digest (a changed pattern does not rebuild the index).
    environment: Patterns = field(default_factory=load_patterns, compare=False)

    def word(self, name: str) -> re.Pattern[str]:
        """The word list ``name``; a name the shipped vocabulary lacks is a mistake in code, raised at once."""
        if name not in self.words:
            raise KeyError(f"no list {name!r} in {VOCABULARY_FILE}")
        return self.words[name]

    def subject_name(self, subject: str, language: str) -> str:
        """A subject as a page in ``language`` names it (its English name when it has no other)."""
        found = next((s for s in self.subjects if s.name == subject), None)
        return dict(found.names).get(language, subject) if found else subject

    @cached_property
    def digest(self) -> str:
        """A digest of everything that decides what the build stores about a section (its facts, its fields)."""
        digest = hashlib.sha256(repr((self.faq, self.subjects)).encode())
        for name, pattern in sorted(self.words.items()):
            digest.update(f"\x00{name}\x00{pattern.flags}\x00{pattern.pattern}".encode())
        return digest.hexdigest()[:16]


def _read(path: Path) -> dict[str, Any]:
    try:
        return read_toml(path)
    except ValueError as exc:
        raise DomainError(f"{path}: cannot be read ({exc}). Fix the TOML or remove the file") from None


def _names(path: Path, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise DomainError(f'{path}: [faq] {key} must be a list of names, e.g. {key} = ["Solution"]. Fix the file')
    return tuple(value)


def _faq(rows: list[tuple[Path, dict[str, Any]]]) -> Faq:
    keys: dict[str, tuple[Path, Any]] = {}  # key -> (the file that set it last, its value)
    for path, data in rows:
        faq = data.get("faq", {})
        if not isinstance(faq, dict):
            raise DomainError(f"{path}: faq must be a table ([faq]). Fix the file")
        unknown = sorted(set(faq) - {"fields", "fix", "pairs", "quiet"})
        if unknown:
            raise DomainError(f"{path}: [faq] has no key {unknown[0]!r}; use fields, fix, pairs or quiet")
        keys.update({key: (path, value) for key, value in faq.items()})

    def names(key: str) -> tuple[str, ...]:
        path, value = keys.get(key, (DOMAIN_FILE, []))
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise DomainError(f'{path}: [faq] {key} must be a list of names, e.g. {key} = ["Solution"]. Fix the file')
        return tuple(value)

    path, pairs = keys.get("pairs", (DOMAIN_FILE, []))
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise DomainError(
            f'{path}: [faq] pairs holds [question, answer] pairs, e.g. pairs = [["Q", "A"]]. Fix the file'
        )
    faq = Faq(names("fields"), names("fix"), tuple((str(q), str(a)) for q, a in pairs), names("quiet"))
    for key in ("fix", "pairs", "quiet"):
        named = [n for p in faq.pairs for n in p] if key == "pairs" else getattr(faq, key)
        missing = [n for n in named if n not in faq.fields]
        if missing:
            raise DomainError(
                f"{keys[key][0]}: [faq] {key} names {missing[0]!r}, which is not in [faq] fields; "
                "add it to fields or fix the spelling"
            )
    return faq


def _subjects(rows: list[tuple[Path, dict[str, Any]]]) -> tuple[Subject, ...]:
    subjects: dict[str, Subject] = {}
    for path, data in rows:
        for row in data.get("subject", []):
            try:
                names = row.get("names", {})
                subject = Subject(
                    str(row["name"]),
                    str(row["category"]),
                    tuple(str(a).lower() for a in row["aliases"]),
                    tuple(str(i) for i in row.get("implies", ())),
                    tuple((str(k), str(v)) for k, v in names.items()),
                )
            except (KeyError, TypeError, AttributeError) as exc:
                raise DomainError(
                    f"{path}: [[subject]] {row.get('name', '') if isinstance(row, dict) else ''!r} is missing or "
                    f"mistypes {exc}; each [[subject]] needs name, category, aliases = [...] "
                    '(and may have implies = [...], names = { zh = "…" })'
                ) from None
            subjects[subject.name] = subject
        unknown = sorted({i for s in subjects.values() for i in s.implies} - set(subjects))
        if unknown:
            raise DomainError(
                f"{path}: [[subject]] implies names unknown subject {unknown[0]!r}; add it or fix the spelling"
            )
    return tuple(subjects.values())


def load_domain(seeds_dir: Path | None = None) -> Domain:
    """The shipped domain with the overrides of ``seeds_dir`` (``domain.toml``, ``vocabulary.toml``) merged over it.

    >>> load_domain(Path("/nonexistent")) == shipped()
    True
    """
    own = _stamped(Path(seeds_dir) / SEEDS_DOMAIN) if seeds_dir is not None else None
    own_words = _stamped(Path(seeds_dir) / SEEDS_VOCABULARY) if seeds_dir is not None else None
    own_patterns = _stamped(Path(seeds_dir) / SEEDS_PATTERNS) if seeds_dir is not None else None
    return _load(own, own_words, own_patterns)


def serving_domain(seeds_dir: Path) -> Domain:
    """:func:`load_domain` for a server: a seeds file it cannot use is logged once, with the file and the fix, and
    the shipped domain is served meanwhile (a command stops on it instead: ``python -m bot`` checks it first; a
    running app's seeds watcher keeps the generation it serves until the file is fixed).

    >>> serving_domain(Path("/nonexistent")) == shipped()
    True
    """
    try:
        return load_domain(seeds_dir)
    except DomainError as exc:
        if str(exc) not in _WARNED:
            _WARNED.add(str(exc))
            log.warning("%s; serving with the shipped lists and conventions until it is fixed", exc)
        return shipped()


_WARNED: set[str] = set()  # what serving_domain said already (the index load and a build both ask, once each)


def _stamped(path: Path) -> tuple[Path, int, int] | None:
    """(path, size, mtime) of a file that exists: the cache below reads a file again once it is edited."""
    try:
        info = path.stat()
    except OSError:
        return None
    return (path, info.st_size, info.st_mtime_ns) if path.is_file() else None


@lru_cache(maxsize=8)
def _load(
    stamped_own: tuple[Path, int, int] | None,
    stamped_words: tuple[Path, int, int] | None,
    stamped_patterns: tuple[Path, int, int] | None = None,
) -> Domain:
    own = stamped_own[0] if stamped_own else None
    own_words = stamped_words[0] if stamped_words else None
    own_patterns = stamped_patterns[0] if stamped_patterns else None
    shipped_rows = [(DOMAIN_FILE, _read(DOMAIN_FILE)), (SUBJECTS_FILE, _read(SUBJECTS_FILE))]
    rows = shipped_rows + ([(own, _read(own))] if own else [])
    try:
        words = compile_lists(VOCABULARY_FILE, own_words)
    except VocabularyError as exc:
        raise DomainError(str(exc)) from None
    try:
        patterns = load_patterns(own_patterns)
    except PatternsError as exc:
        raise DomainError(str(exc)) from None
    files = (
        DOMAIN_FILE,
        SUBJECTS_FILE,
        VOCABULARY_FILE,
        PATTERNS_FILE,
        *(p for p in (own, own_words, own_patterns) if p),
    )
    return Domain(_faq(rows), _subjects(rows), words, files, patterns)


def shipped() -> Domain:
    """The shipped domain alone (a knowledge base without overrides, and every doctest)."""
    return _load(None, None)
