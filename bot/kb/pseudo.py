"""Pseudo-questions: what a user might type about a section, drawn from the knowledge base's own structure.

GPL, InPars, doc2query and Promptagator teach a retriever a new corpus with questions a language model writes for
each passage; here the documents' structure is the generator (docs/self-test.md). Each :class:`PseudoQuestion` is
a span of one section's own text that reads like a question or a pasted error, with the section as its answer:

- ``heading``: the section's own heading, without its numbering ("Q3.1.3：", "1.问题：") — FAQ headings are the
  questions, and other headings name the task a user asks about;
- ``field``: the problem field of an FAQ entry — the first field that is not a fix, an answer or a quiet label in
  the domain's FAQ convention (:class:`bot.kb.domain.Faq`), or a question field of a Q&A pair;
- ``question``: a line of the body phrased as a question ("Q: …", "- Why does …?", "问：…？");
- ``log``: an error quoted in a section (a fenced or ``<pre>`` block, or a line, that reads as a log to
  :func:`bot.kb.signature.looks_like_log`), as a user would paste it;
- ``command``: a command or identifier line of a code block (the first line that is not a comment);
- ``first``: the first sentence of the section's prose.

Every span is returned with the exact text it came from (``spans``), so a self-test can remove it from the section
before scoring it there (:func:`stripped`): a pseudo-question is never scored against its own source text.

>>> from bot.records import Section
>>> s = Section("faq.md", "Q1：安装后报错 libcudart.so 找不到怎么办？", ("FAQ", "Q1：安装后报错 libcudart.so 找不到怎么办？"),
...             1, 9, "q1", "需要把 CUDA 的 lib 目录加入 LD_LIBRARY_PATH。然后重新运行。\\n\\n```\\nexport LD_LIBRARY_PATH=/usr/local/cuda/lib64\\n```", "FAQ")
>>> [(q.kind, q.text) for q in questions_of(s, 0)]
[('heading', '安装后报错 libcudart.so 找不到怎么办？'), ('command', 'export LD_LIBRARY_PATH=/usr/local/cuda/lib64'), ('first', '需要把 CUDA 的 lib 目录加入 LD_LIBRARY_PATH。')]
>>> stripped(s, questions_of(s, 0)).heading
'Q1：'
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from bot.kb.domain import Faq
from bot.kb.signature import looks_like_log
from bot.records import Section

Kind = Literal["heading", "field", "question", "log", "command", "first"]
KINDS: tuple[Kind, ...] = ("heading", "field", "question", "log", "command", "first")

MIN_CHARS = 6  # shorter spans ("安装", "Overview") name a topic, not a question
MAX_CHARS = 600  # a pasted error's head: what the embedder and BM25 weigh most
MAX_LOG_LINES = 12

# Numbering and question markers before a heading's words: "Q3.1.3：", "1.问题：", "2.1 ", "问：", "Q:".
_NUMBERING = re.compile(
    r"^\s*(?:[QqＱ]\s*[\d.]*\s*[:：.、]?|问题?\s*\d*\s*[:：]|[\d.]+\s*[、:：.)]?)\s*(?:问题\s*[:：])?\s*"
)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(.*?)^ {0,3}\1[ \t]*$", re.MULTILINE | re.DOTALL)
_PRE = re.compile(r"<pre>(.*?)</pre>", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<[^>\n]{0,300}>")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_MARKUP = re.compile(r"\*{1,3}|`+|(?<!\w)_{1,2}|_{1,2}(?!\w)|^\s{0,4}(?:[+\-*>]|\d+\.)\s+", re.MULTILINE)
_QUESTION_LINE = re.compile(
    r"^\s{0,4}(?:[+\-*]\s+)?(?:\*\*)?(?:[QqＱ]|问)\s*(?:\*\*)?\s*[:：]\s*(.+)$|^\s{0,4}[+\-*]\s+(.+[?？])\s*$"
)
_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=\.)\s")
_COMMENT = re.compile(r"^\s*(?:#|//|--|>>>\s*#|\$\s*#)")


@dataclass(frozen=True)
class PseudoQuestion:
    """A question drawn from section ``section`` (its position in the index), and the spans of that section's
    text it came from (removed from the section when it is scored there: :func:`stripped`)."""

    text: str
    section: int
    kind: Kind
    spans: tuple[str, ...]


def _plain(text: str) -> str:
    text = _LINK.sub(r"\1", _TAG.sub(" ", text))
    return re.sub(r"\s+", " ", _MARKUP.sub("", text)).strip()


def _worded(text: str) -> bool:
    """Enough words to be a question: 6+ characters with 2+ Latin words or 4+ Chinese characters."""
    if len(text) < MIN_CHARS:
        return False
    return len(re.findall(r"[\u4e00-\u9fff]", text)) >= 4 or len(re.findall(r"[A-Za-z][\w.\-]+", text)) >= 2


def _heading(section: Section) -> PseudoQuestion | None:
    words = _NUMBERING.sub("", section.heading).strip(" :：")
    if (
        not _worded(words)
        or section.heading == section.title
        and len(section.path) <= 1
        and not words.endswith(("?", "？"))
    ):
        return None
    return PseudoQuestion(words[:MAX_CHARS], -1, "heading", (words,))


def _field(section: Section, faq: Faq | None) -> list[PseudoQuestion]:
    out = []
    told = {name for name, _ in section.roles if name}
    for name, value in section.fields:
        role = dict(section.roles).get(name)
        problem = role == "question" or (
            role is None and faq is not None and name not in faq.fix and name not in faq.quiet and name not in told
        )
        text = value.strip()
        if problem and _worded(_plain(text)):
            out.append(PseudoQuestion(text[:MAX_CHARS], -1, "log" if looks_like_log(text) else "field", (text,)))
            if role != "question":
                break  # the first problem field states the problem; the ones after it analyse it
    return out


def _questions(body: str) -> list[PseudoQuestion]:
    out = []
    for line in body.splitlines():
        match = _QUESTION_LINE.match(line)
        if match:
            text = _plain(match.group(1) or match.group(2))
            if _worded(text):
                out.append(PseudoQuestion(text[:MAX_CHARS], -1, "question", (line.strip(),)))
    return out


def _blocks(text: str) -> list[str]:
    return [m.group(2) for m in _FENCE.finditer(text)] + [_TAG.sub("", m.group(1)) for m in _PRE.finditer(text)]


def _logs_and_commands(text: str) -> list[PseudoQuestion]:
    out = []
    for block in _blocks(text):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        if looks_like_log(block):
            pasted = "\n".join(lines[:MAX_LOG_LINES])[:MAX_CHARS]
            out.append(PseudoQuestion(pasted, -1, "log", (block.strip(),)))
            continue
        command = next((line.strip() for line in lines if not _COMMENT.match(line)), "")
        if len(command) >= MIN_CHARS and len(command) <= 200 and re.search(r"[A-Za-z]", command):
            out.append(PseudoQuestion(command, -1, "command", (command,)))
    return out


def _first(section: Section) -> PseudoQuestion | None:
    prose = _PRE.sub(" ", _FENCE.sub(" ", section.text))
    for line in prose.splitlines():
        plain = _plain(line)
        if not _worded(plain) or any(plain.startswith(n) for n, _ in section.fields):
            continue
        sentence = next((s.strip() for s in _SENTENCE_END.split(plain) if s.strip()), "")
        if _worded(sentence) and len(sentence) <= 300:
            # the span is the sentence as the line spells it, markup and all, where it can be found
            span = sentence if sentence in section.text else line.strip()
            return PseudoQuestion(sentence, -1, "first", (span,))
        return None
    return None


def questions_of(section: Section, position: int, faq: Faq | None = None) -> list[PseudoQuestion]:
    """The pseudo-questions of one section (at ``position`` in its index), one per span, in :data:`KINDS` order."""
    found: list[PseudoQuestion] = []
    if (heading := _heading(section)) is not None:
        found.append(heading)
    found += _field(section, faq)
    found += _questions(section.text)
    found += _logs_and_commands(section.text)
    if (first := _first(section)) is not None:
        found.append(first)
    seen: set[str] = set()
    out = []
    for q in sorted(found, key=lambda q: KINDS.index(q.kind)):
        key = re.sub(r"\W+", "", q.text.lower())
        if key and key not in seen:
            seen.add(key)
            out.append(replace(q, section=position))
    return out


def draw(sections: Sequence[Section], faq: Faq | None = None, *, limit: int = 600) -> list[PseudoQuestion]:
    """Pseudo-questions of every section that answers on its own, at most ``limit``: the same set for the same
    sections (a sample by digest, spread over sections before kinds), so a build is reproducible."""
    every = [q for n, s in enumerate(sections) for q in questions_of(s, n, faq)]
    if len(every) <= limit:
        return every

    ranks: dict[int, int] = {}
    keyed = []
    for q in every:
        ranks[q.section] = ranks.get(q.section, -1) + 1
        keyed.append(((ranks[q.section], hashlib.sha1(q.text.encode("utf-8", "surrogatepass")).hexdigest()), q))
    keyed.sort(key=lambda item: item[0])
    chosen = {id(q) for _, q in keyed[:limit]}
    return [q for q in every if id(q) in chosen]


def stripped(section: Section, questions: Sequence[PseudoQuestion]) -> Section:
    """``section`` with the spans of ``questions`` removed from its heading, heading path and text (every
    occurrence: an FAQ entry often repeats its heading in its problem field), so none is scored against itself."""
    spans = sorted({s for q in questions for s in q.spans if s}, key=len, reverse=True)

    def cut(text: str) -> str:
        for span in spans:
            text = text.replace(span, " ")
        return text

    return replace(
        section,
        heading=cut(section.heading).strip(),
        path=tuple(cut(p).strip() for p in section.path),
        text=cut(section.text),
        fields=tuple((name, cut(value)) for name, value in section.fields),
    )
