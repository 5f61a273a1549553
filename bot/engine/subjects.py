"""What a question is specifically about, and whether a section covers it.

A question about PyTorch, a Jetson board or PaddleOCR can be *worded* like a
knowledge-base section (same error words, same "out of memory") and still not be
answered by it. The subjects a question names — frameworks, products, operating
systems, hardware, tools, error identifiers — come from a reviewed lexicon
(``bot/data/subjects.toml``, and a company's ``seeds/domain.toml``: the :class:`bot.kb.domain.Domain`); a section
covers a subject when its own text names it.

    >>> lex = Lexicon.load()
    >>> sorted(lex.find("PaddleOCR 在 Jetson Nano 上推理很慢"))
    ['Jetson', 'PaddleOCR', 'PaddlePaddle']
    >>> sorted(lex.find("RuntimeError: CUDA out of memory. File \\"/site-packages/torch/nn/functional.py\\""))
    ['GPU out of memory', 'PyTorch']
    >>> lex.find("timestamp 10:00, paddlex") == {"PaddleX", "PaddlePaddle"}
    True

Matching is linear in the text: the text is cut into lowercase latin words and
Chinese runs once, then every alias is a set lookup of a word n-gram or (Chinese)
a substring test.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.kb.domain import Domain, Subject, shipped

MAX_NGRAM = 4
# Subjects whose absence from the cited section makes an answer doubtful on its own:
# a fix for another framework, product, OS or device rarely carries over.
FOREIGN_CATEGORIES = ("framework", "product", "os", "hardware", "tool", "feature")

_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u4e00-\u9fff]")
# Sentence ends: a run of end marks followed by a space or the end, or one CJK mark or newline (a dot inside
# "libnccl.so" is not one). The run is matched only from its first mark (look-behind) and never given back
# (possessive ``++``): a long run of "?" not followed by a space is then scanned once, not once per position
# (quadratic: 50,000 "?" took 29 s with the GIL held).
_SENTENCE = re.compile(r"(?<![.。;；!！?？\n])[.。;；!！?？\n]++(?:\s|$)|[。；！？\n]")


def _pieces(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.lower()))


class Lexicon:
    """Subjects and their aliases; :meth:`find` lists the subjects a text names."""

    def __init__(self, subjects: Iterable[Subject], linux: re.Pattern[str] | None = None) -> None:
        self.subjects = {s.name: s for s in subjects}
        self._linux = linux or shipped().word("linux_named")  # Linux named beside another OS (vocabulary.toml)
        self._latin: dict[tuple[str, ...], set[str]] = {}
        self._cjk: list[tuple[str, str]] = []
        for subject in self.subjects.values():
            for alias in subject.aliases:
                if _CJK.search(alias):
                    self._cjk.append((alias, subject.name))
                else:
                    key = _pieces(alias)
                    if key and len(key) <= MAX_NGRAM:
                        self._latin.setdefault(key, set()).add(subject.name)
        self._lengths = sorted({len(k) for k in self._latin})

    @classmethod
    def load(cls) -> Lexicon:
        """The lexicon of the shipped domain (a knowledge base without subjects of its own, and the doctests)."""
        return cls.of(shipped())

    @classmethod
    def of(cls, domain: Domain) -> Lexicon:
        """The lexicon of ``domain``'s subjects (built once per domain)."""
        return _of(domain)

    def name(self, subject: str, language: str) -> str:
        """A subject as a page in ``language`` names it: its name in that language, else its English name.

        >>> Lexicon.load().name("multi-machine", "zh"), Lexicon.load().name("multi-machine", "en")
        ('多机', 'multi-machine')
        """
        found = self.subjects.get(subject)
        return dict(found.names).get(language, subject) if found else subject

    def category(self, name: str) -> str:
        subject = self.subjects.get(name)
        return subject.category if subject else ""

    def find(self, text: str) -> set[str]:
        """Names of the subjects ``text`` mentions, with what they imply.

        Operating systems named only as alternatives in one sentence are not the user's setting: they
        come from boilerplate such as Paddle's "set LD_LIBRARY_PATH on Linux or DYLD_LIBRARY_PATH on
        Mac OS", pasted with the log.

        >>> sorted(Lexicon.load().find("libnccl.so not found. Set LD_LIBRARY_PATH on Linux or DYLD_LIBRARY_PATH on Mac OS."))
        ['NCCL']
        """
        found = self._find(text)
        oses = {name for name in found if self.subjects[name].category == "os"}
        if oses:
            in_lists = set()
            alone = set()
            for sentence in _SENTENCE.split(text):
                named = {n for n in self._find(sentence) if n in oses}
                listed = len(named) + bool(self._linux.search(sentence))  # Linux is the default, not a subject
                (in_lists if listed >= 2 else alone).update(named)
            found -= in_lists - alone
        return found

    def _find(self, text: str) -> set[str]:
        found: set[str] = set()
        words = _pieces(text)
        for n in self._lengths:
            for i in range(len(words) - n + 1):
                names = self._latin.get(words[i : i + n])
                if names:
                    found |= names
        if _CJK.search(text):
            for alias, name in self._cjk:
                if alias in text:
                    found.add(name)
        for name in list(found):
            found.update(self.subjects[name].implies)
        return found


_LEXICONS: dict[int, tuple[Domain, Lexicon]] = {}


def _of(domain: Domain) -> Lexicon:
    # Keyed by identity, the domain kept alive beside its lexicon: a Domain holds compiled patterns (not hashable
    # cheaply), and load_domain returns the same object for the same files.
    found = _LEXICONS.get(id(domain))
    if found is None or found[0] is not domain:
        found = _LEXICONS[id(domain)] = (domain, Lexicon(domain.subjects, domain.word("linux_named")))
    return found[1]


def document_frameworks(lexicon: Lexicon, sources: list[str], found: list[set[str]]) -> dict[str, frozenset[str]]:
    """Per document, the framework(s) most of its sections name (its main framework).

    ``found`` is, per section in ``sources`` order, the subjects its own text names (not curated
    phrasings, which may name other frameworks to contrast). A passing "TensorFlow needs CUDA 9"
    in a Paddle FAQ does not make the FAQ about TensorFlow.

    >>> lex = Lexicon.load()
    >>> texts = [("a.md", "TensorFlow GPU"), ("a.md", "allow_growth"), ("b.md", "paddle 显存"), ("b.md", "paddle, not tf")]
    >>> document_frameworks(lex, [s for s, _ in texts], [lex.find(t) for _, t in texts]) == {
    ...     "a.md": {"TensorFlow"}, "b.md": {"PaddlePaddle"}}
    True
    """
    counts: dict[str, dict[str, int]] = {}
    for source, names in zip(sources, found):
        per_doc = counts.setdefault(source, {})
        for name in names:
            if lexicon.category(name) == "framework":
                per_doc[name] = per_doc.get(name, 0) + 1
    return {
        source: frozenset(n for n, c in per_doc.items() if c == max(per_doc.values()))
        for source, per_doc in counts.items()
        if per_doc
    }
