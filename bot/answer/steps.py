r"""A section's fix as steps: what the document wrote as steps, numbered once, its commands said once as code.

>>> lead, steps, notes = fix_steps("Try:\n\n1. lower `batch_size`\n\n2. enable growth")
>>> print(render_steps(lead, steps, notes))
Try:
<BLANKLINE>
**1.** lower `batch_size`
<BLANKLINE>
**2.** enable growth
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.answer.safe_markdown import code_block, markdown_blocks

MAX_STEPS = 5  # steps shown up front; the rest of the fix goes into the collapsed details

_STEP_MARK = re.compile(r"^\s*(?:\d{1,2}\s*[.、．)）]|[（(]\d{1,2}[)）]|第[一二三四五六七八九十]步[:：，,]?)\s*")
_LIST_ITEM = re.compile(r"^\s*\d{1,2}\s*[.、．)）]\s+", re.MULTILINE)
_ITEM_START = re.compile(r"\n(?=\s*\d{1,2}\s*[.、．)）]\s*\S)")
_REFERENCE = re.compile(
    r"^(?:详细|详情|更多|此外|另外|参考|具体请|see |for (?:more|details)|more (?:on|about)|also )", re.IGNORECASE
)
_COMMAND = re.compile(
    r"^(?:export|unset|pip3?|python3?|conda|apt(?:-get)?|sudo|find|nvidia-smi|nvcc|ldconfig|ls|cat|echo|source|"
    r"docker|cd|mkdir|wget|curl|which|git|ln|chmod|kill|ps|top|watch)(?=\s|$)|^[A-Z][A-Z0-9_]{2,}=\S"
)


_SEQUENCE = re.compile(
    r"^(?:然后|接着|之后|最后|再(?!次)|首先|其次|then\b|next\b|finally\b|after that\b)", re.IGNORECASE
)


@dataclass
class Step:
    text: str  # markdown prose (may be empty when a step is only code)
    code: list[str] = field(default_factory=list)  # blocks shown after it as written: its code, a table, a remark


def _is_table(block: str) -> bool:
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    return len(lines) >= 2 and all(line.startswith("|") for line in lines)


def _numbered(block: str) -> bool:
    stripped = block.strip()
    return bool(_STEP_MARK.match(stripped)) or (
        len(_LIST_ITEM.split(stripped)) > 2 and not _LIST_ITEM.split(stripped)[0].strip()
    )


def fix_steps(markdown: str) -> tuple[str, list[Step], list[str]]:
    """Split inert fix markdown into (lead, steps, trailing notes); no steps when the fix is prose to show as written.

    Steps are what the document wrote as steps: numbered list items ("1." "（2）" "第三步"), or — in a fix
    with commands — the paragraph that introduces a code block and the ones that say "then". Tables and
    other prose are never numbered: they stay as written, after the step they follow (a table used to get
    a step number and break). A short first paragraph ending in a colon is the lead ("可以尝试按如下方法解决：");
    closing "see the docs" paragraphs are notes.

    >>> lead, steps, notes = fix_steps("可以尝试：\\n\\n1. 减小 batch_size；\\n\\n2. 开启选项：\\n\\n```bash\\nexport A=1\\n```\\n\\n详细请参考文档。")
    >>> lead, [(s.text, len(s.code)) for s in steps], notes
    ('可以尝试：', [('减小 batch_size；', 0), ('开启选项：', 1)], ['详细请参考文档。'])
    >>> fix_steps("显存不足时先看日志。\\n\\n也可以换一张卡。")[1]
    []
    """
    lead: list[str] = []
    steps: list[Step] = []
    notes: list[str] = []
    blocks = [
        (kind, piece)
        for kind, block in markdown_blocks(markdown)
        for piece in ([block] if kind == "code" or _is_table(block) else _ITEM_START.split(block))
        if piece.strip()
    ]  # "(图片: GPU)\n2. 设置…": a numbered item that starts inside a paragraph is still an item
    numbered = any(kind == "prose" and not _is_table(b) and _numbered(b) for kind, b in blocks)
    if not numbered and not any(kind == "code" for kind, _ in blocks):
        return "", [], []  # prose (and tables): shown as written, not renumbered
    for n, (kind, block) in enumerate(blocks):
        if kind == "code":
            if notes and steps:  # code after a note belongs to that note's text: keep the order readable
                steps.append(Step(notes.pop(), []))
            if not steps and numbered:  # the problem's error output, before the numbered fixes: not a step
                lead.append(block)
                continue
            if not steps:
                steps.append(Step("", []))
            steps[-1].code.append(block)
            continue
        stripped = block.strip()
        if (
            n == 0
            and len(blocks) > 1
            and re.search(r"[:：]$", stripped)
            and len(stripped) <= 80
            and not _STEP_MARK.match(stripped)
        ):
            lead.append(stripped)
            continue
        if steps and _REFERENCE.match(stripped):
            notes.append(stripped)
            continue
        before_code = n + 1 < len(blocks) and blocks[n + 1][0] == "code"
        is_step = not _is_table(stripped) and (
            _numbered(stripped) if numbered else (before_code or bool(_SEQUENCE.match(stripped)))
        )
        if not is_step:  # a table or a remark: as written, after the step it follows
            (steps[-1].code if steps else lead).append(stripped)
            continue
        items = _LIST_ITEM.split(stripped)
        if len(items) > 2 and not items[0].strip():  # "1. a\n2. b" in one paragraph: one step each
            steps.extend(Step(item.strip(), []) for item in items[1:] if item.strip())
            continue
        steps.append(Step(_STEP_MARK.sub("", stripped, count=1), []))
    return "\n\n".join(lead), steps, notes


def is_command(text: str) -> bool:
    """A line that runs something ("export A=1", "nvidia-smi", "pip install …"), as a fix's code says it.

    >>> is_command("export FLAGS_fast_eager_deletion_mode=1"), is_command("batch_size")
    (True, False)
    """
    return bool(_COMMAND.match(text.strip()))


def render_steps(lead: str, steps: Sequence[Step], notes: Sequence[str]) -> str:
    """Steps as markdown: ``**1.** text`` then its code; a single step is not numbered."""
    parts = [lead] if lead else []
    numbered = len(steps) > 1
    for n, step in enumerate(steps, 1):
        body = step.text
        if numbered:
            body = f"**{n}.** {body}".rstrip()
        if body:
            parts.append(body)
        parts.extend(step.code)
    parts.extend(notes)
    return "\n\n".join(parts)


FIRST_ITEM = re.compile(r"(?:^|\s)1\)\s")


def english_lead(fix: str) -> tuple[str, str]:
    """(the text before a summary's numbered fixes, the fixes): what the document says before "1)" describes the
    problem ("… fails with `…`. Three fixes:"); it is not step 1.

    >>> english_lead("TF takes all memory. Three fixes: 1) set A; 2) set B.")
    ('TF takes all memory. Three fixes:', '1) set A; 2) set B.')
    >>> english_lead("lower `batch_size`")
    ('', 'lower `batch_size`')
    """
    fix = " ".join(fix.split())
    match = FIRST_ITEM.search(fix)
    if match is None or not fix[: match.start()].strip():
        return "", fix
    return fix[: match.start()].strip(), fix[match.start() :].strip()


def english_steps(fix: str) -> list[Step]:
    """English fix text -> steps; inline commands become code blocks (said once, with their explanation as a comment).

    >>> steps = english_steps("1) try a smaller `batch_size`; 2) enable: `export A=0` (free early), `export B=1` (fast).")
    >>> [(s.text, s.code) for s in steps]
    [('Try a smaller `batch_size`', []), ('Enable:', ['```bash\\nexport A=0  # free early\\nexport B=1  # fast\\n```'])]
    >>> [(s.text, s.code) for s in english_steps('search with `find / -name "libnccl.so*"`, then add it to `LD_LIBRARY_PATH`.')]
    [('Search with:', ['```bash\\nfind / -name "libnccl.so*"\\n```']), ('Add it to `LD_LIBRARY_PATH`.', [])]
    """
    fix = " ".join(fix.split())
    if re.search(r"(?:^|\s)\d\)\s", fix):
        pieces = [p for p in re.split(r"(?:^|\s)\d\)\s*", fix) if p.strip()]
    else:
        pieces = [
            p for p in re.split(r";\s+(?:then\s+)?|,\s+then\s+|\.\s+then\s+", fix, flags=re.IGNORECASE) if p.strip()
        ]
    steps: list[Step] = []
    for piece in pieces[: MAX_STEPS + 2]:
        piece = piece.strip().rstrip(";,").strip()
        commands: list[str] = []

        def take(match: re.Match[str], commands: list[str] = commands) -> str:
            body, comment = match.group(2).strip(), (match.group(3) or "").strip()
            if not _COMMAND.match(body):
                return match.group(0)
            commands.append(f"{body}  # {comment}" if comment else body)
            return ""

        rest = re.sub(r"(`+)(.+?)\1(?:\s*\(([^()]{1,120})\))?", take, piece)
        if commands:
            rest = " ".join(rest.split())
            for _ in range(3):  # the commas and "and" that joined the commands are left over
                rest = re.sub(r"\s*[,;]\s*(?=[,;.:]|$)|\s+(?=[,;.:])|\s*\b(?:and|or)\s*(?=[,;.:]|$)", "", rest)
            rest = rest.strip(" ,;.")
            rest = rest + ("" if rest.endswith((":", "：")) else ":")
            steps.append(Step(rest if rest != ":" else "", [code_block("\n".join(commands), "bash")]))
        else:
            steps.append(Step(piece if piece.endswith((".", "?", "!")) or "`" in piece[-2:] else piece, []))
    for step in steps:
        step.text = step.text[:1].upper() + step.text[1:]
    return [s for s in steps if s.text or s.code]


def summary_parts(summary: str) -> dict[str, str]:
    """English metadata summary -> {"problem", "fix", "background", "other"} by its "Problem:/Fix:" labels."""
    parts: dict[str, str] = {}
    current = "other"
    for line in summary.strip().splitlines():
        match = re.match(r"^\s*(Problem|Question|Fix|Answer|Background|Note|Cause)\s*:\s*(.*)$", line, re.IGNORECASE)
        if match:
            name = match.group(1).lower()
            current = {"question": "problem", "answer": "fix", "cause": "problem", "note": "background"}.get(name, name)
            line = match.group(2)
        elif line.strip():
            current = "other"  # an unlabelled line after "Fix: …" is a remark ("See the guide …"), not a step
        parts[current] = (parts.get(current, "") + " " + line).strip()
    return parts
