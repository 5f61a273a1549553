r"""A follow-up about a detail of the section just shown: that section, opened at the matching part only.

"what if I want it to use only 40%?" after the TensorFlow memory answer is about one of its three fixes
(``per_process_gpu_memory_fraction = 0.4``); repeating the whole answer made the user look for it again.
The section's steps (the document's numbered items, or the English summary's) are the parts; a part matches
when it holds a word of the follow-up that not every part holds ("only" is in all three fixes, "40%" -> 0.4
in one), so no stop-word list is needed.

    >>> parts = ["Set `CUDA_VISIBLE_DEVICES` so each sees only its cards", "take only part: `fraction = 0.4`",
    ...          "allocate only when needed with `allow_growth=True`"]
    >>> matching(parts, "what if I want it to use only 40%?")
    [1]
    >>> matching(parts, "and on Windows?")
    []

A follow-up that asks for a kind of detail without naming it ("具体改哪个参数？", "which command do I run?": the
plan's ``detail``, read from the domain's word lists) gets the parameters, commands or files the section's steps
hold, quoted as written, each under its step's number (:func:`quoted`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from bot.answer.blocks import Focus, Note
from bot.answer.composition import Reply, Shown, citation_of
from bot.answer.safe_markdown import code_block, doc_markdown
from bot.answer.sections_text import section_title, section_url
from bot.answer.steps import Step, english_lead, english_steps, fix_steps, is_command, render_steps
from bot.kb.meta import SectionMeta
from bot.records import Hit, Section

_WORD = re.compile(r"\d+(?:\.\d+)?%|[A-Za-z_][\w.]{2,}|[\u4e00-\u9fff]{2,}")
# Words of a question's frame, never a detail of a section (the rest is sorted out by "not every part holds it").
_FRAME = frozenset(
    "what when where which how why the and for with want use using can could should would about this that "
    "does did not there then than only also just like make".split()
)
MAX_PARTS_SHOWN = 2  # a detail is one or two steps; more is the section again
MAX_QUOTED = 8  # parameters, commands or files quoted for a detail asked by kind

_INLINE = re.compile(r"`([^`\n]{1,160})`")
_FENCE_LINE = re.compile(r"^\s*(?:`{3,}|~{3,})")
# A parameter as a fix writes it: an identifier (`batch_size`), an assignment (`FLAGS_x=1`, `export A=0`,
# `allow_growth = True`) or a command-line flag (`--gpus`).
_PARAMETER = re.compile(
    r"^(?:export\s+|set\s+)?[A-Za-z_][\w.\[\]'\"]*\s*(?:[=:]\s*\S.*)?$|^--?[A-Za-z][\w-]*(?:[= ]\S+)?$"
)
_PATH = re.compile(
    r"(?:^|[\s=\"'])(?:~|\.{1,2})?/[\w.+-]+(?:/[\w.+*-]*)*|\b[\w-]+\.(?:py|so(?:\.\d+)*|sh|ya?ml|json|cfg|conf|ini|txt)\b"
)


def _code_lines(step: Step) -> list[str]:
    """The lines of a step's code blocks, without fences, blank lines or comments."""
    lines = []
    for block in step.code:
        for line in block.splitlines():
            stripped = line.strip()
            if stripped and not stripped.startswith("#") and not _FENCE_LINE.match(line):
                lines.append(stripped)
    return lines


def _is(kind: str, text: str) -> bool:
    text = text.strip()
    if kind == "parameter":
        return bool(_PARAMETER.match(text)) and not (is_command(text) and "=" not in text)
    if kind == "command":
        return is_command(text)
    if kind == "file":
        return bool(_PATH.search(text))
    return False


def quoted(steps: Sequence[Step], kind: str) -> list[tuple[int, list[str], list[str]]]:
    r"""Per step holding one (its number, the inline items, the code lines): the parameters, commands or files
    (``kind``) a fix's steps write, as written.

    >>> steps = [Step("减小 `batch_size`；", []), Step("开启：", ["```bash\n# 注释\nexport FLAGS_a=0\n```"]),
    ...          Step("see the docs", [])]
    >>> quoted(steps, "parameter")
    [(1, ['batch_size'], []), (2, [], ['export FLAGS_a=0'])]
    >>> quoted(steps, "command")
    [(2, [], ['export FLAGS_a=0'])]
    """
    out = []
    for n, step in enumerate(steps, 1):
        inline = [i.strip() for i in _INLINE.findall(step.text) if _is(kind, i)]
        lines = [line for line in _code_lines(step) if _is(kind, line)]
        if inline or lines:
            out.append((n, list(dict.fromkeys(inline)), list(dict.fromkeys(lines))))
    return out


def _quoted_body(found: list[tuple[int, list[str], list[str]]]) -> str:
    parts, budget = [], MAX_QUOTED
    for n, inline, lines in found:
        inline, lines = inline[:budget], lines[: max(budget - len(inline), 0)]
        budget -= len(inline) + len(lines)
        head = " ".join(f"`{i}`" for i in inline)
        number = f"**{n}.**" if len(found) > 1 else ""
        parts.append(" ".join(x for x in (number, head) if x) or number)
        if lines:
            parts.append(code_block("\n".join(lines), "bash"))
        if budget <= 0:
            break
    return "\n\n".join(p for p in parts if p)


def _terms(question: str) -> list[str]:
    terms = []
    for word in _WORD.findall(question):
        low = word.lower()
        if low in _FRAME:
            continue
        if low.endswith("%"):  # "40%" is written 0.4 / 0.40 in a config, 40% in prose
            value = float(low[:-1]) / 100
            terms += [low, f"{value:g}", f"{value:.2f}"]
        else:
            terms.append(low)
    return terms


def matching(parts: Sequence[str], question: str) -> list[int]:
    """Indexes of ``parts`` holding a word of ``question`` that not every part holds (best first, at most two)."""
    lowered = [p.lower() for p in parts]
    scores = [0] * len(parts)
    for term in _terms(question):
        holding = [n for n, p in enumerate(lowered) if term in p]
        if 0 < len(holding) < len(parts):
            for n in holding:
                scores[n] += 1
    best = max(scores, default=0)
    if best == 0:
        return []
    return [n for n in range(len(parts)) if scores[n] == best][:MAX_PARTS_SHOWN]


def detail(
    section: Section, meta: SectionMeta | None, language: str, question: str, kind: str = ""
) -> tuple[str, list[int]]:
    """(markdown of the matching steps of ``section``, their numbers) for ``question``; ("", []) when the
    question names no detail of a single part of it. ``kind``: what the question asks for when it names no part
    ("parameter", "command", "file": those the steps hold, quoted)."""
    if language != "zh" and meta is not None and meta.summary_en.strip():
        _, fixes = english_lead(meta.summary_en)
        steps = english_steps(fixes)
    else:
        markdown, _ = doc_markdown(section.text, 4_000, language)
        _, steps, _ = fix_steps(markdown)
    if len(steps) < 2:
        return "", []
    parts = [" ".join([s.text, *s.code]) for s in steps]
    picked = matching(parts, question)
    if not picked or len(picked) == len(steps):
        found = quoted(steps, kind) if kind in ("parameter", "command", "file") else []
        if not found:
            return "", []
        return _quoted_body(found), [n for n, _, _ in found]
    shown = [steps[n] for n in picked]
    numbers = [n + 1 for n in picked]
    body = "\n\n".join(
        render_steps("", [step], ()) if len(shown) == 1 else f"**{n}.** " + render_steps("", [step], ())
        for n, step in zip(numbers, shown)
    )
    return body, numbers


def focus_reply(
    hit: Hit,
    meta: Callable[[str], SectionMeta | None],
    base: str,
    language: str,
    question: str,
    notes: Sequence[str] = (),
    confidence: float = 0.0,
    kind: str = "",
) -> Reply | None:
    """The reply to a follow-up about a detail of ``hit``'s section (None when it asks about no single part): the
    follow-up's notes, a :class:`~bot.answer.blocks.Focus` block of the matching steps (or of the parameters,
    commands or files ``kind`` asks for) and the section's citation."""
    section = hit.section
    m = meta(section.key)
    body, numbers = detail(section, m, language, question, kind)
    if not body:
        return None
    url = section_url(base, section, hit.matched_terms, language)
    blocks = (
        *[Note(n, "followup") for n in notes if n],
        Focus(section_title(section, m, language), tuple(numbers), body),
        citation_of(section, url, language, m),
    )
    return Reply(
        kind="answer",
        language=language,
        blocks=blocks,
        shown=[Shown(hit, "answer", url)],
        answered=True,
        confidence=confidence,
        tier="answer",
    )
