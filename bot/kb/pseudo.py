"""Pseudo-questions: what a user might type about a section, drawn from the knowledge base's own structure.

GPL, InPars, doc2query and Promptagator teach a retriever a new corpus with questions a language model writes for
each passage; here the documents' structure is the generator (docs/how-it-works.md, "The self-test"). Each
:class:`PseudoQuestion` is a span of one section's own text that reads like a question or a pasted error, with the
section as its answer. The kinds (patterns in ``bot/data/pseudo.toml``, data rather than code):

- ``question``: a line of the body that asks ("Q: …", "问：…", a bullet ending in "?", any bullet under a broad
  heading such as "FAQ" or "常见问题");
- ``field``: the problem field of an FAQ entry (the first field that is not a fix, an answer or a quiet label in the
  domain's FAQ convention), or a question field of a Q&A pair;
- ``log``: an error quoted in the section (a code block, or a prose line, that reads as a log or an error);
- ``heading``: the section's heading without its numbering, when it asks or names a task;
- ``command``: the first command or identifier line of a code block;
- ``first``: the first sentence of the section's prose.

Every question keeps the exact text it came from (``spans``): the self-test scores it against its section with
those spans held out (:mod:`bot.engine.selftest`), so it measures retrieval, not string identity.

>>> from bot.records import Section
>>> s = Section("faq.md", "Q1：安装后报错 libcudart.so 找不到怎么办？", ("FAQ", "Q1：安装后报错 libcudart.so 找不到怎么办？"),
...             1, 9, "q1", "需要把 CUDA 的 lib 目录加入 LD_LIBRARY_PATH。然后重新运行。\\n\\n```\\nexport LD_LIBRARY_PATH=/usr/local/cuda/lib64\\n```", "FAQ")
>>> [(q.kind, q.text) for q in questions_of(s, 0)]
[('heading', '安装后报错 libcudart.so 找不到怎么办？'), ('command', 'export LD_LIBRARY_PATH=/usr/local/cuda/lib64')]
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Literal

from bot.kb.domain import Faq
from bot.kb.signature import looks_like_log
from bot.records import Section

Kind = Literal["question", "field", "log", "heading", "command", "first"]
PATTERNS_FILE = Path(__file__).resolve().parents[1] / "data" / "pseudo.toml"


@dataclass(frozen=True)
class Patterns:
    """``bot/data/pseudo.toml``, read once."""

    min_chars: int
    max_chars: int
    max_log_lines: int
    per_section: int
    per_index: int
    kinds: tuple[Kind, ...]
    numbering: re.Pattern[str]
    question_lines: tuple[re.Pattern[str], ...]
    broad_heading: re.Pattern[str]
    broad_bullet: re.Pattern[str]
    error_line: re.Pattern[str]
    comment: re.Pattern[str]
    question_heading: re.Pattern[str]


@cache
def patterns(path: Path = PATTERNS_FILE) -> Patterns:
    """The patterns of ``path``; a broken file is named with the fix (it ships with the package)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        limits, found = data["limits"], data["patterns"]
        return Patterns(
            min_chars=int(limits["min_chars"]),
            max_chars=int(limits["max_chars"]),
            max_log_lines=int(limits["max_log_lines"]),
            per_section=int(limits["per_section"]),
            per_index=int(limits["per_index"]),
            kinds=tuple(limits["kinds"]),
            numbering=re.compile(found["numbering"]),
            question_lines=tuple(re.compile(p) for p in found["question_line"]),
            broad_heading=re.compile(found["broad_heading"]),
            broad_bullet=re.compile(found["broad_bullet"]),
            error_line=re.compile(found["error_line"]),
            comment=re.compile(found["comment"]),
            question_heading=re.compile(found["question_heading"], re.IGNORECASE),
        )
    except (OSError, KeyError, TypeError, ValueError, re.error) as exc:
        raise ValueError(f"{path} is unreadable ({exc}); restore it from the package (git checkout {path})") from None


@dataclass(frozen=True)
class PseudoQuestion:
    """A question drawn from section ``section`` (its position in the index), and the spans of that section's
    text it came from (held out from the section when it is scored there)."""

    text: str
    section: int
    kind: Kind
    spans: tuple[str, ...]


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(.*?)^ {0,3}\1[ \t]*$", re.MULTILINE | re.DOTALL)
_PRE = re.compile(r"<pre>(.*?)</pre>", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<[^>\n]{0,300}>")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_MARKUP = re.compile(r"\*{1,3}|`+|(?<!\w)_{1,2}|_{1,2}(?!\w)|^\s{0,4}(?:[+\-*>]|\d+\.)\s+", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?<=\.)\s")


def _plain(text: str) -> str:
    text = _LINK.sub(r"\1", _TAG.sub(" ", text))
    return re.sub(r"\s+", " ", _MARKUP.sub("", text)).strip()


def _worded(text: str, p: Patterns) -> bool:
    """Enough words to be a question: 2+ Latin words or 4+ Chinese characters, and not too short."""
    if len(text) < p.min_chars:
        return False
    return len(re.findall(r"[\u4e00-\u9fff]", text)) >= 4 or len(re.findall(r"[A-Za-z][\w.\-]+", text)) >= 2


def _heading(section: Section, p: Patterns) -> list[PseudoQuestion]:
    words = p.numbering.sub("", section.heading).strip(" :：")
    if not _worded(words, p) or not p.question_heading.search(words):
        return []  # a topic ("Overview", "安装") is not what a user asks
    return [PseudoQuestion(words[: p.max_chars], -1, "heading", (section.heading, words))]


def _field(section: Section, faq: Faq | None, p: Patterns) -> list[PseudoQuestion]:
    out = []
    roles = dict(section.roles)
    for name, value in section.fields:
        role = roles.get(name)
        problem = role == "question" or (
            role is None and faq is not None and name not in faq.fix and name not in faq.quiet and name not in roles
        )
        text = value.strip()
        if problem and _worded(_plain(text), p):
            out.append(PseudoQuestion(_plain(text)[: p.max_chars], -1, "field", (text,)))
            if role != "question":
                break  # the first problem field states the problem; the ones after it analyse it
    return out


def _question_lines(section: Section, p: Patterns) -> list[PseudoQuestion]:
    broad = any(p.broad_heading.search(part.strip("# ")) for part in section.path)
    out = []
    for line in _FENCE.sub("", section.text).splitlines():
        for pattern in (*p.question_lines, *((p.broad_bullet,) if broad else ())):
            match = pattern.match(line)
            if match:
                text = _plain(next(g for g in match.groups() if g))
                if _worded(text, p):
                    out.append(PseudoQuestion(text[: p.max_chars], -1, "question", (line.strip(),)))
                break
    return out


def _blocks(text: str) -> list[str]:
    return [m.group(2) for m in _FENCE.finditer(text)] + [_TAG.sub("", m.group(1)) for m in _PRE.finditer(text)]


def _logs_and_commands(section: Section, p: Patterns) -> list[PseudoQuestion]:
    out = []
    for block in _blocks(section.text):
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        if looks_like_log(block):
            pasted = "\n".join(lines[: p.max_log_lines])[: p.max_chars]
            out.append(PseudoQuestion(pasted, -1, "log", tuple(line.strip() for line in lines[: p.max_log_lines])))
            continue
        command = next((line.strip() for line in lines if not p.comment.match(line)), "")
        if p.min_chars <= len(command) <= 200 and re.search(r"[A-Za-z]", command):
            out.append(PseudoQuestion(command, -1, "command", (command,)))
    prose = _PRE.sub(" ", _FENCE.sub(" ", section.text))
    for line in prose.splitlines():  # an error quoted in a sentence: "报错 `ImportError: libcudart.so.11.0`"
        quoted = re.findall(r"`([^`\n]{12,300})`", line)
        for text in quoted:
            if p.error_line.search(text):
                out.append(PseudoQuestion(text[: p.max_chars], -1, "log", (text,)))
    return out


def _first(section: Section, p: Patterns) -> list[PseudoQuestion]:
    prose = _PRE.sub(" ", _FENCE.sub(" ", section.text))
    for line in prose.splitlines():
        plain = _plain(line)
        if not _worded(plain, p) or any(plain.startswith(n) for n, _ in section.fields):
            continue
        sentence = next((s.strip() for s in _SENTENCE_END.split(plain) if s.strip()), "")
        if _worded(sentence, p) and len(sentence) <= 300:
            return [PseudoQuestion(sentence, -1, "first", (sentence, line.strip()))]
        return []
    return []


def questions_of(
    section: Section, position: int, faq: Faq | None = None, p: Patterns | None = None
) -> list[PseudoQuestion]:
    """The pseudo-questions of one section (at ``position`` in its index), at most ``per_section``, the kinds in the
    order of preference ``bot/data/pseudo.toml`` gives, one per kind before a second of any."""
    p = p or patterns()
    found = {
        "heading": _heading(section, p),
        "field": _field(section, faq, p),
        "question": _question_lines(section, p),
        "first": _first(section, p),
    }
    logs_and_commands = _logs_and_commands(section, p)
    found["log"] = [q for q in logs_and_commands if q.kind == "log"]
    found["command"] = [q for q in logs_and_commands if q.kind == "command"]
    seen: set[str] = set()
    out: list[PseudoQuestion] = []
    for round_ in range(max((len(v) for v in found.values()), default=0)):
        for kind in p.kinds:
            if len(out) >= p.per_section:
                return out
            if round_ < len(found[kind]):
                q = found[kind][round_]
                key = re.sub(r"\W+", "", q.text.lower())
                if key and key not in seen:
                    seen.add(key)
                    out.append(replace(q, section=position))
    return out


def draw(sections: Sequence[Section], faq: Faq | None = None, p: Patterns | None = None) -> list[PseudoQuestion]:
    """Pseudo-questions of every section, at most ``per_index``: the same set for the same sections (a sample by
    digest, spread over sections before kinds), so a build is reproducible."""
    p = p or patterns()
    every = [q for n, s in enumerate(sections) for q in questions_of(s, n, faq, p)]
    if len(every) <= p.per_index:
        return every
    ranks: dict[int, int] = {}
    keyed = []
    for q in every:
        ranks[q.section] = ranks.get(q.section, -1) + 1
        keyed.append(((ranks[q.section], hashlib.sha1(q.text.encode("utf-8", "surrogatepass")).hexdigest()), id(q)))
    chosen = {ident for _, ident in sorted(keyed)[: p.per_index]}
    return [q for q in every if id(q) in chosen]


def cut(text: str, spans: Sequence[str]) -> tuple[str, tuple[tuple[str, int], ...]]:
    """``text`` without any of ``spans`` (longest first, every occurrence: an FAQ entry often repeats its heading in
    its problem field), and each span cut with how many times it was.

    >>> cut("Q: why OOM?\\nQ: why OOM? Set the batch smaller.", ["Q: why OOM?", "OOM"])
    (' \\n  Set the batch smaller.', (('Q: why OOM?', 2),))
    """
    removed = []
    for span in sorted({s for s in spans if s.strip()}, key=len, reverse=True):
        if times := text.count(span):
            removed.append((span, times))
            text = text.replace(span, " ")
    return text, tuple(removed)


def held_out(text: str, spans: Sequence[str]) -> str:
    """``text`` without any of ``spans`` (:func:`cut`).

    >>> held_out("Q: why OOM?\\nSet the batch smaller.", ["Q: why OOM?"])
    ' \\nSet the batch smaller.'
    """
    return cut(text, spans)[0]


def contains(text: str, spans: Sequence[str]) -> bool:
    """Whether ``text`` holds any of ``spans`` (whitespace aside): a key that does is not scored for its question.

    >>> contains("FAQ > Why  OOM?\\nbody", ["Why OOM?"]), contains("body", ["Why OOM?"])
    (True, False)
    """
    flat = re.sub(r"\s+", " ", text)
    return any(len(s.strip()) >= 4 and re.sub(r"\s+", " ", s.strip()) in flat for s in spans)
