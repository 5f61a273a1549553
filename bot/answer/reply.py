"""Answer -> chat reply in markdown, in the language of the question, shaped for a small widget.

Everything here is a pure function of its arguments (no engine, no I/O), so the
chat UI and the JSON API format replies the same way and tests need no model.

The shape of an answer (the first screen of a 400×640 widget holds the first two)::

    ### one-line summary                 (English title, or the cleaned Chinese heading)
    **1.** first step … ```code```      (the fix as steps, code in blocks, commands once)
    **2.** …
    **Source:** [Doc › Section · lines a–b](source view)     (one citation line)
    <details> problem and analysis / original text / related sections </details>

Confidence is shown in words: an answer is plain; a *tentative* reply starts with
"May not apply: <reason>" and lists the closest sections; *none* says what the
knowledge base covers, which details would help and where to ask a person.

Safety: user text is always escaped or put in code, and document text goes
through :func:`bot.answer.safe_markdown.doc_markdown`, so nothing typed by a user or
written in a document runs in the chat (which renders HTML).

    >>> escape_text('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror="alert(1)"&gt;'
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import FrozenInstanceError, dataclass, field, replace
from urllib.parse import quote, urlencode

from bot.answer.collect import collect_text
from bot.answer.reasons import reason_text, shorten
from bot.answer.safe_markdown import _blocks, code_block, code_span, doc_markdown, escape_inline, escape_text
from bot.answer.source_view import focus_lines, old_release, section_terms
from bot.answer.texts import TEXTS, text
from bot.kb.meta import SectionMeta
from bot.kb.parse import FIX_FIELDS
from bot.kb.tokenize import detect_language
from bot.kb.vocabulary import words
from bot.records import Answer, Event, Hit, Section

__all__ = [  # the escaping and text helpers are part of this module's interface too
    "TEXTS",
    "code_block",
    "code_span",
    "doc_markdown",
    "escape_inline",
    "escape_text",
    "text",
]

MetaLookup = Callable[[str], "SectionMeta | None"]
# Section key -> the language it is written in, as the build stored it (``SectionFacts.language``, read through
# ``Conversation._written_in``); a section outside a built index (a test's, a script's) has it detected instead.
LanguageLookup = Callable[[str], str]

FIX_CHARS = 1_800  # fix text shown up front
FULL_CHARS = 4_000  # rest of a section shown in a collapsed block
MAX_STEPS = 5  # steps shown up front; the rest of the fix goes into the collapsed details
USER_ECHO_CHARS = 4_000
MAX_TERMS = 20
MAX_FOLLOW_UPS = 3
SUGGESTION_CHARS = 300  # a suggested follow-up's label is its whole heading (longer ones are not headings)


# Reasons specific enough to say in a "nothing close" reply (a generic "weak" adds nothing there).
SPECIFIC_REASONS = ("uncovered", "uncovered_top", "old_release", "setting_conflict")


HANDOFF_CHARS = 1_500  # transcript carried in a contact link: mail clients and browsers drop URLs of a few KB
_SAFE_URL = re.compile(r"^(?:https?://|mailto:)[^\s<>\"'`]+$")


@dataclass(frozen=True)
class Contact:
    """Where a user can ask a person; configured by the operator (``BOT_CONTACT_URL``, ``BOT_CONTACT_LABEL``,
    ``BOT_HANDOFF_WEBHOOK``).

    ``transcript`` / ``question`` are set per turn by the edge (:func:`dataclasses.replace`) so that the
    link carries the conversation: a ``mailto:`` gets ``?subject=…&body=…``, a URL template gets its
    ``{transcript}`` / ``{question}`` placeholders filled, URL-encoded and capped at :data:`HANDOFF_CHARS`.
    """

    url: str = ""
    label: str = ""
    webhook: str = ""  # BOT_HANDOFF_WEBHOOK: receives the transcript as JSON when the user asks for a person
    transcript: str = ""
    question: str = ""

    @property
    def configured(self) -> bool:
        """True when there is somewhere to hand the user to (a link or a webhook)."""
        return bool(_SAFE_URL.match(self.url.strip())) or bool(self.webhook.strip())

    def href(self, cited: Sequence[str] = ()) -> str:
        """The contact URL carrying the conversation ("" when no URL is configured).

        >>> Contact("mailto:gpu@example.com", question="OOM?", transcript="Q: OOM?").href(["Doc › OOM · lines 3–9"])
        'mailto:gpu@example.com?subject=OOM%3F&body=Q%3A%20OOM%3F%0A%0ACited%3A%0A-%20Doc%20%E2%80%BA%20OOM%20%C2%B7%20lines%203%E2%80%939'
        >>> Contact("https://desk.example.com/new?q={question}", question="a b").href()
        'https://desk.example.com/new?q=a%20b'
        """
        url = self.url.strip()
        if not _SAFE_URL.match(url):
            return ""
        body = self.transcript.strip()
        if cited:
            body = (body + "\n\n" if body else "") + "Cited:\n" + "\n".join(f"- {c}" for c in cited)
        body = _cap(body, HANDOFF_CHARS)
        subject = _cap(" ".join(self.question.split()), 120)
        if "{transcript}" in url or "{question}" in url:
            return url.replace("{transcript}", quote(body, safe="")).replace("{question}", quote(subject, safe=""))
        if url.startswith("mailto:") and (body or subject):
            query = "&".join(f"{k}={quote(v, safe='')}" for k, v in (("subject", subject), ("body", body)) if v)
            return url + ("&" if "?" in url else "?") + query
        return url

    def link(self, language: str, cited: Sequence[str] = ()) -> str:
        """Markdown for the contact (carrying the conversation), or "" when no URL is configured.

        >>> Contact("https://help.example.com/gpu", "GPU 支持群").link("zh")
        '[GPU 支持群](https://help.example.com/gpu)'
        >>> Contact().link("en")
        ''
        """
        href = self.href(cited)
        if not href:
            return ""
        label = escape_inline(self.label.strip() or text(language, "contact_default"))
        return f"[{label}](<{href}>)" if "(" in href or ")" in href else f"[{label}]({href})"


def _cap(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def person_line(language: str, contact: Contact | None, cited: Sequence[str] = (), *, collect: bool = True) -> str:
    """ "Talk to a person: <link>" when a contact is configured; otherwise what to collect for a colleague
    (``collect``) or nothing — never a promise of a channel that does not exist.

    >>> person_line("en", Contact()).startswith("No support contact is set up here")
    True
    >>> person_line("en", Contact(), collect=False)
    ''
    """
    contact = contact or Contact()
    link = contact.link(language, cited)
    if link:
        return text(language, "ask_person", contact=link)
    if contact.configured:  # a webhook only: asking for a person hands the conversation over
        return text(language, "ask_person_webhook")
    return text(language, "collect_for_colleague") if collect else ""


def with_person(reply: Reply, contact: Contact | None) -> Reply:
    """``reply`` with "talk to a person" added after "that didn't help" (a retry) when a contact is configured
    (a new reply; ``reply`` is left as it was).

    Tentative and none replies carry it already (:func:`format_no_match`); an answer given after a
    retry is where the user said the last one failed, so a person is offered there too.
    """
    contact = contact or Contact()
    if not contact.configured or reply.kind == "intent":
        return reply
    line = person_line(reply.language, contact, _cited(reply.shown), collect=False)
    retry = any(e.kind == "not_helpful" for e in reply.events)
    offered = any(
        text(reply.language, key).split("{contact}")[0] in reply.markdown
        for key in ("ask_person", "ask_person_webhook")
    )  # the link may carry another transcript
    if line and (retry or reply.tier in ("tentative", "none")) and not offered:
        return replace(reply, markdown=reply.markdown.rstrip() + "\n\n" + line)
    return reply


def _cited(shown: Sequence[Shown]) -> list[str]:
    return [citation_label(s.hit.section, None, "en") for s in shown[:5]]


# ---------------------------------------------------------------- what the knowledge base covers

MAX_SCOPE_TITLES = 8
_GPU_WORDS = words("gpu")  # bot/data/vocabulary.toml


@dataclass(frozen=True)
class Scope:
    """What the knowledge base is about, from its own documents (not text written for one company's seeds)."""

    titles: tuple[str, ...] = ()  # document titles, in index order
    documents: int = 0
    gpu: bool = False  # most documents are about GPUs: ask for `nvidia-smi`, CUDA and cuDNN versions


def kb_scope(sections: Sequence[Section]) -> Scope:
    """The :class:`Scope` of ``engine.sections``: document titles, and whether the documents are about GPUs.

    >>> s = [Section(f"{n}.md", "h", ("T",), 1, 2, "h", body, title) for n, (title, body) in
    ...      enumerate([("GPU FAQ", "CUDA error"), ("GPU FAQ", "nccl"), ("Billing", "invoices")])]
    >>> kb_scope(s)
    Scope(titles=('GPU FAQ', 'Billing'), documents=3, gpu=True)
    """
    titles: dict[str, None] = {}
    sources: dict[str, bool] = {}
    for section in sections:
        title = " ".join((section.title or section.source).split())
        if title:
            titles.setdefault(title[:60], None)
        about = bool(_GPU_WORDS.search(f"{section.title} {section.heading} {section.text[:600]}"))
        sources[section.source] = sources.get(section.source, False) or about
    gpu = bool(sources) and sum(sources.values()) * 2 > len(sources)
    return Scope(tuple(list(titles)[:MAX_SCOPE_TITLES]), len(sources), gpu)


_SCOPE_CACHE: list[tuple[Sequence[Section], Scope]] = []  # the last sections list and its scope
_SCOPE_LOCK = threading.Lock()


def scope_of(sections: Sequence[Section]) -> Scope:
    """:func:`kb_scope` of ``sections``, computed once per loaded index rather than on every turn
    (a new index generation is a new list, so it is recomputed once then)."""
    with _SCOPE_LOCK:
        if _SCOPE_CACHE and _SCOPE_CACHE[0][0] is sections:
            return _SCOPE_CACHE[0][1]
    scope = kb_scope(sections)
    with _SCOPE_LOCK:
        _SCOPE_CACHE[:] = [(sections, scope)]
    return scope


def scope_text(language: str, scope: Scope | None) -> str:
    """ "What the knowledge base covers", from its document titles (a generic line without them).

    >>> scope_text("en", Scope(("GPU FAQ", "Billing"), 2))
    'This assistant answers from the 2 documents in its knowledge base: “GPU FAQ”, “Billing”.'
    """
    if scope is None or not scope.titles:
        return text(language, "covers_generic")
    if language == "zh":
        names = "、".join(f"《{t}》" for t in scope.titles)
    else:
        names = ", ".join(f"“{t}”" for t in scope.titles)
    more = len(scope.titles) < scope.documents
    names = escape_inline(names) + (text(language, "scope_more") if more else "")
    return text(language, "covers", n=scope.documents, titles=names)


def with_scope(reply: Reply, scope: Scope) -> Reply:
    """``reply`` saying what *this* knowledge base covers, asking for GPU details only when it is about GPUs
    (a new reply; ``reply`` is left as it was).

    The conversation formats replies without the engine's document list; :func:`compose` passes every
    reply through here with :func:`scope_of` ``engine.sections``.
    """
    language = reply.language
    markdown = reply.markdown.replace(text(language, "covers_generic"), scope_text(language, scope))
    if reply.kind == "intent" and markdown == text(language, "intent_small_talk") and scope.titles:
        markdown += "\n\n" + scope_text(language, scope)  # "what can you do?": what these documents cover
    if not scope.gpu:  # nvidia-smi and cuDNN versions mean nothing for another company's documents
        for key in ("ask_more", "collect_for_colleague"):
            markdown = markdown.replace(text(language, key), text(language, key + "_generic"))
    return replace(reply, markdown=markdown) if markdown != reply.markdown else reply


# ---------------------------------------------------------------- citations


@dataclass(frozen=True)
class Shown:
    """One section as shown in a reply: the citation the UI displays and the API returns."""

    hit: Hit
    role: str  # "answer" | "related" | "suggestion" | "option"
    url: str

    def citation(self) -> dict:
        data = self.hit.citation()
        data.update(
            title=self.hit.section.title,
            key=self.hit.section.key,
            role=self.role,
            url=self.url,
            matched_terms=list(self.hit.matched_terms[:MAX_TERMS]),
        )
        return data


def source_url(base: str, section: Section, terms: Sequence[str] = (), language: str = "zh", line: int = 0) -> str:
    """The in-app source view of a section, with the terms to highlight.

    >>> s = Section("a b.md", "H", ("Doc", "H"), 3, 9, "h", "x", "Doc")
    >>> source_url("http://host/bot", s, ["显存", "oom"], "en")
    'http://host/bot/source?key=a+b.md%23h&terms=%E6%98%BE%E5%AD%98+oom&lang=en#L3'
    """
    terms = [t for t in dict.fromkeys(terms) if t and len(t) <= 60][:MAX_TERMS]
    query = {"key": section.key}
    if terms:
        query["terms"] = " ".join(terms)
    query["lang"] = "zh" if language == "zh" else "en"
    return f"{base.rstrip('/')}/source?{urlencode(query)}#L{line or section.start_line}"


def text_line(section: Section, index: int) -> int:
    """The document line of line ``index`` (0-based) of ``section.text`` (the text ends at ``end_line``)."""
    return section.end_line - len(section.text.splitlines()) + 1 + index


def focus(section: Section, terms: Sequence[str]) -> tuple[int, int] | None:
    """[first, last) lines of ``section.text`` around the lines matching ``terms`` (None: its top is the place)."""
    return focus_lines(section.text, terms)


def section_url(base: str, section: Section, terms: Sequence[str], language: str) -> str:
    """:func:`source_url` with only the terms that occur in that section and are not noise, opened at the
    lines that match them (a long section's top may be far from what the question is about)."""
    own = section_terms(terms, "\n".join([section.heading, section.text]))
    window = focus(section, own)
    return source_url(base, section, own, language, line=text_line(section, window[0]) if window else 0)


def clean_heading(heading: str) -> str:
    """A heading without the FAQ's review mark and number ("已审核2.问题：…" -> "问题：…").

    >>> clean_heading("`已审核`2.问题：使用Fluid训练模型时，使用多卡训练报错"), clean_heading("2.1 准备多机多卡环境")
    ('问题：使用Fluid训练模型时，使用多卡训练报错', '2.1 准备多机多卡环境')
    """
    label = heading.replace("`", "").strip()
    label = re.sub(r"^已审核\s*(?:\d+\s*[.、．]\s*)?", "", label)
    label = re.sub(r"^\d+\s*[.、．]\s*(?=问题)", "", label)
    return label.strip() or heading


def short_title(section: Section, meta: SectionMeta | None, language: str, limit: int = 80) -> str:
    """A short plain label for a section: English title for English, heading without numbering for Chinese.

    >>> s = Section("a.md", "`已审核`2.问题：使用Fluid训练模型时，使用多卡训练报错", ("D",), 1, 2, "x", "y", "D")
    >>> short_title(s, None, "zh")
    '使用Fluid训练模型时，使用多卡训练报错'
    >>> short_title(Section("a.md", "3. FAQ", ("Multi-GPU", "3. FAQ"), 1, 2, "x", "y", "Multi-GPU"), None, "zh")
    'Multi-GPU › 3. FAQ'
    """
    label = ""
    if language != "zh" and meta is not None and meta.title_en.strip():
        label = meta.title_en.strip()
    if not label:
        label = clean_heading(section.heading)
        label = re.sub(r"^问题\s*[:：]\s*", "", label).strip() or label
        if len(label) < 10 and section.title and section.title != label:  # "3. FAQ" alone says little
            label = f"{section.title} › {label}"
    return shorten(label, limit)  # at a word boundary: "… install tensorflow-gpu, v" read as a typo


def citation_label(section: Section, meta: SectionMeta | None, language: str) -> str:
    """``Doc › Section · lines a–b`` (plain text) for the one citation line.

    >>> s = Section("f.md", "`已审核`2.问题：多卡训练报错", ("Paddle GPU", "2.问题：多卡训练报错"), 18, 59, "x", "y", "Paddle GPU")
    >>> citation_label(s, None, "zh")
    'Paddle GPU › 多卡训练报错 · 第 18–59 行'
    """
    title = short_title(section, meta, language, limit=70)
    where = text(language, "lines", start=section.start_line, end=section.end_line)
    if section.title and not title.startswith(section.title) and section.title != title:
        title = f"{section.title} › {title}"
    return f"{title} · {where}"


def citation_line(section: Section, url: str, language: str, meta: SectionMeta | None = None) -> str:
    """``**Source:** [Doc › Section · lines a–b](url "file")``: one line, the link opens the source view."""
    label = escape_inline(citation_label(section, meta, language))
    title = section.source.replace('"', "'")
    return f'**{text(language, "source")}:** [{label}]({url} "{escape_text(title)}")'


def signature_line(signature: str, language: str) -> str:
    """``**Detected:** `EnforceNotMet: ...` ``"""
    return f"**{text(language, 'detected')}:** {code_span(signature)}" if signature else ""


_BARE_ERROR = re.compile(r"^[\w.]*(?:Error|Exception|Exhausted)\s*:?\s*$")
_ERROR_WITH_MESSAGE = re.compile(r"(?:[A-Za-z_][\w]*\.)*([A-Z]\w*(?:Error|Exception)):\s*(\S.*)$")


def own_error_line(signature: str, log: str) -> str:
    """The error as the log says it: when the detected signature is a bare name ("MemoryError"), the log's last
    error line that carries a message ("ResourceExhaustedError: OOM … cannot allocate 2.25 GB"), module path dropped.

    >>> own_error_line("MemoryError", "MemoryError\\nx.errors_impl.ResourceExhaustedError: OOM, cannot allocate 2.25 GB")
    'ResourceExhaustedError: OOM, cannot allocate 2.25 GB'
    >>> own_error_line("EnforceNotMet: no libnccl.so", "whatever")
    'EnforceNotMet: no libnccl.so'
    """
    if not signature or not _BARE_ERROR.match(signature.strip()):
        return signature
    for line in reversed(log.splitlines()[-400:]):
        match = _ERROR_WITH_MESSAGE.search(line.strip()[:1_000])
        if match:
            return f"{match.group(1)}: {match.group(2).strip()}"[:200]
    return signature


def truncation_notice(truncated_from: int, limit: int, language: str) -> str:
    """The visible notice for an input that was cut to the server-side limit (empty when it was not).

    The head line(s) and the tail of a log (where the error is) are kept; the notice says so.

    >>> truncation_notice(150_000, 100_000, "en").split(". ")[0]
    'Note: your input was too long: 150,000 characters, over the limit of 100,000'
    """
    if not truncated_from:
        return ""
    return text(language, "truncated", total=truncated_from, limit=limit, cut=max(0, truncated_from - limit))


def era_line(section: Section, language: str) -> str:
    """A short warning when the section was written for an old release ("" otherwise)."""
    era = old_release(section)
    return f"_{text(language, 'era', era=era)}_" if era else ""


ECHO_HEAD_LINES = 2  # of a long pasted log: its first lines (the command), then its end (where the error is)
ECHO_TAIL_LINES = 12  # a bubble of ~15 lines: the widget's first screen still shows the answer after it


def user_echo(value: str, is_log: bool | None = None) -> str:
    """The user's message as shown in their chat bubble: inert, and short even for a huge paste.

    A log is a code block of its first lines and its *last* ones (the error is at the end; the bubble
    used to show the first 40 INFO lines); a typed question of a few lines stays text.

    >>> user_echo("显存不足怎么办？\\n用的是 V100")
    '显存不足怎么办？  \\n用的是 V100'
    """
    value = value.rstrip()
    lines = value.splitlines()
    code_like = any(line.startswith(("    ", "\t")) for line in lines) or len(lines) > 6
    if is_log or (len(lines) > 1 and code_like):
        kept = [line[:300] for line in lines]
        if len(kept) > ECHO_HEAD_LINES + ECHO_TAIL_LINES + 1:
            tail = kept[-ECHO_TAIL_LINES:]
            kept = kept[:ECHO_HEAD_LINES] + [f"… (+{len(lines) - len(tail) - ECHO_HEAD_LINES:,} lines) …"] + tail
        shown = "\n".join(kept)
        if len(shown) > USER_ECHO_CHARS:  # keep the end: that is where the error is
            shown = "…" + shown[-USER_ECHO_CHARS:]
        more = f"\n\n… ({len(value):,} chars)" if len(shown) < len(value) else ""
        return code_block(shown) + more
    shown = value[:USER_ECHO_CHARS]
    more = f" … ({len(value):,} chars)" if len(shown) < len(value) else ""
    return "  \n".join(escape_inline(line) for line in shown.splitlines()) + more


# ---------------------------------------------------------------- the fix as steps

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
        for kind, block in _blocks(markdown)
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


_FIRST_ITEM = re.compile(r"(?:^|\s)1\)\s")


def english_lead(fix: str) -> tuple[str, str]:
    """(the text before a summary's numbered fixes, the fixes): what the document says before "1)" describes the
    problem ("… fails with `…`. Three fixes:"); it is not step 1.

    >>> english_lead("TF takes all memory. Three fixes: 1) set A; 2) set B.")
    ('TF takes all memory. Three fixes:', '1) set A; 2) set B.')
    >>> english_lead("lower `batch_size`")
    ('', 'lower `batch_size`')
    """
    fix = " ".join(fix.split())
    match = _FIRST_ITEM.search(fix)
    if match is None or not fix[: match.start()].strip():
        return "", fix
    return fix[: match.start()].strip(), fix[match.start() :].strip()


def _english_steps(fix: str) -> list[Step]:
    """English fix text -> steps; inline commands become code blocks (said once, with their explanation as a comment).

    >>> steps = _english_steps("1) try a smaller `batch_size`; 2) enable: `export A=0` (free early), `export B=1` (fast).")
    >>> [(s.text, s.code) for s in steps]
    [('Try a smaller `batch_size`', []), ('Enable:', ['```bash\\nexport A=0  # free early\\nexport B=1  # fast\\n```'])]
    >>> [(s.text, s.code) for s in _english_steps('search with `find / -name "libnccl.so*"`, then add it to `LD_LIBRARY_PATH`.')]
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


def _summary_parts(summary: str) -> dict[str, str]:
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


# ---------------------------------------------------------------- section bodies


def _fix_field(section: Section, terms: Sequence[str]) -> tuple[str, str] | None:
    """(field name, text) holding the fix; for Q&A lists the pair that best matches ``terms``."""
    questions = [value for name, value in section.fields if name == "问"]
    if len(questions) > 1:  # a list of Q&A pairs: pick the pair the question matched
        pairs: list[tuple[str, str]] = []
        pending = ""
        for name, value in section.fields:
            if name == "问":
                pending = value
            elif name == "答" and pending:
                pairs.append((pending, value))
                pending = ""
        if pairs:
            lowered = [t.lower() for t in terms]
            best = max(pairs, key=lambda p: sum(t in (p[0] + p[1]).lower() for t in lowered))
            return "问", f"**问：** {best[0]}\n\n**答：** {best[1]}"
    for wanted in FIX_FIELDS:
        value = section.field(wanted)
        if value.strip():
            return wanted, value
    return None


def _other_fields(section: Section, fix_name: str) -> str:
    parts = []
    for name, value in section.fields:
        if name in (fix_name, "版本号", "标签", "关键字") or not value.strip():
            continue
        parts.append(f"**{name}：**\n\n{value}")
    return "\n\n".join(parts)


def _details(summary: str, body: str) -> str:
    """A collapsed block; ``summary`` is plain text (escaped here), ``body`` markdown."""
    return f"<details><summary>{html.escape(summary, quote=False)}</summary>\n\n{body}\n\n</details>"


def _steps_or_text(markdown: str) -> tuple[str, str]:
    """(up-front steps, the rest for the details) of inert fix markdown."""
    lead, steps, notes = fix_steps(markdown)
    if not steps:
        return markdown, ""
    shown, rest = steps[:MAX_STEPS], steps[MAX_STEPS:]
    more = render_steps("", rest, ()) if rest else ""
    return render_steps(lead, shown, notes if not rest else ()), "\n\n".join(p for p in (more, *notes) if p and rest)


def section_body(
    hit: Hit, meta: SectionMeta | None, language: str, limit: int = FIX_CHARS, *, written_in: str | None = None
) -> tuple[str, list[str]]:
    """(the fix as steps, collapsed details) of one section in the reply language; ``written_in`` is the
    section's own language (``SectionFacts.language``), detected only for a section outside an index."""
    section = hit.section
    fix = _fix_field(section, hit.matched_terms)
    details: list[str] = []
    doc_language = written_in or section_language(section)
    if language != "zh" and meta is not None and meta.summary_en.strip():
        parts = _summary_parts(meta.summary_en)
        lead, fix_text = english_lead(parts.get("fix") or parts.get("other") or meta.summary_en)
        remark = parts.get("other", "") if parts.get("fix") else ""
        if parts.get("fix") or lead or _FIRST_ITEM.match(fix_text):
            steps = _english_steps(fix_text)
            body = render_steps(lead, steps[:MAX_STEPS], [remark] if remark else ())
        else:  # a summary in prose lists no steps: its sentences are not numbered as if it did
            body = " ".join(fix_text.split())
        body, _ = doc_markdown(body, limit, "en")
        context = " ".join(parts[k] for k in ("problem", "background") if parts.get(k))
        if context:
            context_md, _ = doc_markdown(context, FULL_CHARS, "en")
            details.append(_details(text(language, "background"), context_md))
        if doc_language == "zh":  # an English section needs no "original Chinese" copy of itself
            original, cut = doc_markdown(section.text, FULL_CHARS, "zh")
            if cut:
                original += "\n\n" + text(language, "cut")
            details.append(_details(f"{text(language, 'original')}: {clean_heading(section.heading)}", original))
        return body, details

    if fix:
        name, value = fix
        fix_md, cut = doc_markdown(value, limit, language)
        body, rest = (fix_md, "") if name == "问" else _steps_or_text(fix_md)
        if cut:
            body += "\n\n" + text(language, "cut")
        if rest:
            details.append(_details(text(language, "more_steps"), rest))
        other = _other_fields(section, name) if name != "问" else section.text
        if other:
            other_md, other_cut = doc_markdown(other, FULL_CHARS, language)
            if other_cut:
                other_md += "\n\n" + text(language, "cut")
            details.append(_details(text(language, "details" if name != "问" else "rest"), other_md))
    else:
        shown_text, note = section.text, ""
        window = focus(section, hit.matched_terms) if len(section.text) > limit // 2 else None
        if window:  # a long section: the lines that match the question, not its first screen
            first, last = window
            shown_text = "\n".join(section.text.splitlines()[first:last])
            note = (
                "_" + text(language, "showing", start=text_line(section, first), end=text_line(section, last - 1)) + "_"
            )
        text_md, cut = doc_markdown(shown_text, limit, language)
        body, rest = _steps_or_text(text_md)
        if note:
            body = note + "\n\n" + body
        if cut or window:
            body += "\n\n" + text(language, "cut")
        if rest:
            details.append(_details(text(language, "more_steps"), rest))
    if language == "zh" and meta is not None and meta.summary_en.strip():
        summary, _ = doc_markdown(meta.summary_en, FULL_CHARS, "en")
        details.append(_details(f"{text('en', 'en_summary')}: {meta.title_en}", summary))
    if language != "zh" and meta is None and doc_language == "zh":
        body = text(language, "no_english") + "\n\n" + body
    return body, details


def section_language(section: Section) -> str:
    """The language a section is written in ("zh" or "en"), from its heading and text: the default
    :data:`LanguageLookup` for a section outside a built index, whose build stores it as ``SectionFacts.language``."""
    return "zh" if detect_language(f"{section.heading}\n{section.text[:3_000]}") == "zh" else "en"


def section_title(section: Section, meta: SectionMeta | None, language: str) -> str:
    """The one-line summary: the English title for English, the cleaned heading for Chinese."""
    if language != "zh" and meta is not None and meta.title_en.strip():
        return meta.title_en.strip()
    return clean_heading(section.heading)


# ---------------------------------------------------------------- whole replies


@dataclass
class Reply:
    """What the assistant says for one turn: markdown, clickable options and the citations behind it."""

    kind: str  # "answer" | "no_match" | "clarify" | "empty" | "exhausted" | "section" | "intent"
    language: str
    markdown: str
    shown: list[Shown] = field(default_factory=list)
    options: list[dict] = field(default_factory=list)  # [{"label": str, "value": section key}]
    answered: bool = False
    signature: str = ""
    truncated_from: int = 0
    confidence: float = 0.0
    tier: str = "none"  # "answer" | "tentative" | "none", as decided by the engine (see bot.records.Answer)
    reason: str = ""  # one line in the reply language; empty for a plain answer
    events: list[Event] = field(default_factory=list)  # what the edge should record for this turn
    handoff: bool = False  # the user asked for a person: the edge sends the transcript to BOT_HANDOFF_WEBHOOK
    environment: dict = field(default_factory=dict)  # the versions the conversation has shown (Environment.as_dict)
    mismatches: tuple[dict, ...] = ()  # each with code, values and source row (bot.engine.compat.Mismatch.as_dict)

    def __setattr__(self, name: str, value: object) -> None:
        # A reply from compose() is finished: the edges serialise and record it, they never edit it.
        if self.__dict__.get("_finished"):
            raise FrozenInstanceError(
                f"cannot set {name!r}: a finished reply is composed once, in "
                "bot.answer.reply.compose (called by bot.answer.turn.take_turn)"
            )
        object.__setattr__(self, name, value)

    @property
    def finished(self) -> bool:
        """True for a reply from :func:`compose`: its fields and lists can no longer change."""
        return bool(self.__dict__.get("_finished"))

    def citations(self) -> list[dict]:
        return [s.citation() for s in self.shown]

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "tier": self.tier,
            "answered": self.answered,
            "reason": self.reason,
            "language": self.language,
            "reply": self.markdown,
            "signature": self.signature or None,
            "truncated_from": self.truncated_from or None,
            "confidence": round(self.confidence, 4),
            "options": list(self.options),
            "hits": self.citations(),
            "environment": dict(self.environment),
            "mismatches": list(self.mismatches),
        }


def compose(
    reply: Reply,
    *,
    scope: Scope,
    contact: Contact | None = None,
    answer_id: str = "",
    truncated_from: int = 0,
    limit: int = 0,
    handoff_failed: bool = False,
    sign: Callable[[str], str] | None = None,
    held: Sequence[str] = (),
) -> Reply:
    """The finished reply, written once: what the conversation said, then in this order what this knowledge
    base covers (:func:`with_scope`), "talk to a person" after "that didn't help" (:func:`with_person`; ``contact``
    already carries the conversation), the failed hand-off's fallback, the note on an input cut before the engine
    saw it (``truncated_from`` characters, over ``limit``), the votes' ``answer_id`` on every event and the
    ``/source`` links through ``sign`` (an API reply read by a browser without a credential). Lists become
    tuples and no field can be set again.

    >>> said = Reply(kind="empty", language="en", markdown="Type a question", events=[Event("question", "q", "en")])
    >>> done = compose(said, scope=Scope(), answer_id="a1", truncated_from=150_000, limit=100_000)
    >>> done.markdown.startswith("Note: your input was too long"), done.events[0].answer_id, done.truncated_from
    (True, 'a1', 150000)
    >>> done.markdown = "edited"
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot set 'markdown': a finished reply is composed once, in bot.answer.reply.compose (called by bot.answer.turn.take_turn)
    """
    contact = contact or Contact()
    reply = with_person(with_scope(reply, scope), contact)
    language, markdown = reply.language, reply.markdown
    if held and text(language, "ask_more") in markdown:  # ask only for what the conversation (``held``) lacks
        asked = collect_text(language, held)
        markdown = markdown.replace(text(language, "ask_more"), asked) if asked else _drop(markdown, "ask_more")
    if handoff_failed:  # the link (as configured, not carrying the failed transcript), or what to collect
        plain = replace(contact, webhook="", transcript="", question="")
        markdown = text(language, "handoff_failed") + "\n\n" + person_line(language, plain)
    truncated = reply.truncated_from
    if truncated_from and not truncated:  # cut by the edge (head + tail) before the engine saw it
        truncated = truncated_from
        markdown = truncation_notice(truncated_from, limit, language) + "\n\n" + markdown
    shown = tuple(reply.shown)
    if sign is not None:
        markdown = sign(markdown)
        shown = tuple(replace(s, url=sign(s.url)) for s in shown)
    events = tuple(replace(e, answer_id=answer_id) if answer_id else e for e in reply.events)
    finished = replace(
        reply,
        markdown=markdown,
        truncated_from=truncated,
        shown=shown,
        options=tuple(dict(o) for o in reply.options),
        events=events,
    )
    object.__setattr__(finished, "_finished", True)
    return finished


def _drop(markdown: str, key: str) -> str:
    """``markdown`` without the paragraph that is text ``key`` (in either language)."""
    for gone in (text("en", key), text("zh", key)):
        markdown = markdown.replace("\n\n" + gone, "").replace(gone + "\n\n", "").replace(gone, "")
    return markdown


def _preamble(answer: Answer | None, language: str, limit: int, notes: Iterable[str] = ()) -> list[str]:
    parts = [n for n in notes if n]
    if answer is not None:
        parts.append(truncation_notice(answer.truncated_from, limit, language))
        parts.append(signature_line(own_error_line(answer.signature, answer.query), language))
    return [p for p in parts if p]


def _related_block(shown: Sequence[Shown], meta: MetaLookup, language: str) -> str:
    """Other possibly related sections: one collapsed block, one citation link each (no second source list)."""
    lines = []
    for item in shown:
        s = item.hit.section
        label = escape_inline(citation_label(s, meta(s.key), language))
        lines.append(f"- [{label}]({item.url})")
    return _details(f"{text(language, 'related')} ({len(shown)})", "\n".join(lines))


def _reply(
    answer: Answer,
    language: str,
    parts: Sequence[str],
    *,
    tier: str,
    shown: Sequence[Shown] = (),
    options: Sequence[dict] = (),
    kind: str = "no_match",
    reason: str = "",
) -> Reply:
    """The reply to a searched question: its blocks joined, with what the engine said of it (signature, cut input,
    confidence); answered exactly when the tier is "answer"."""
    return Reply(
        kind=kind,
        language=language,
        markdown="\n\n".join(parts),
        shown=list(shown),
        options=list(options),
        answered=tier == "answer",
        signature=answer.signature,
        truncated_from=answer.truncated_from,
        confidence=answer.confidence,
        tier=tier,
        reason=reason,
    )


def format_answer(
    answer: Answer,
    meta: MetaLookup,
    base: str,
    *,
    limit: int,
    language: str | None = None,
    related: int = 2,
    notes: Iterable[str] = (),
    hits: Sequence[Hit] | None = None,
    kind: str = "answer",
    ask_more: bool = False,
    written_in: LanguageLookup | None = None,
) -> Reply:
    """Summary line, the fix as steps, one citation line; details and related sections collapsed."""
    language = language or answer.language
    hits = list(hits if hits is not None else answer.hits)[: 1 + related]
    parts = _preamble(answer, language, limit, notes)
    shown: list[Shown] = []
    details: list[str] = []
    for n, hit in enumerate(hits):
        s = hit.section
        url = section_url(base, s, hit.matched_terms, language)
        shown.append(Shown(hit, "answer" if n == 0 else "related", url))
        if n == 0:
            m = meta(s.key)
            parts.append(f"### {escape_inline(section_title(s, m, language))}")
            era = era_line(s, language)
            body, details = section_body(hit, m, language, written_in=written_in(s.key) if written_in else None)
            parts.append(body)
            parts.append(citation_line(s, url, language, m))
            if era:
                parts.append(era)
    parts.extend(details)
    if len(shown) > 1:
        parts.append(_related_block(shown[1:], meta, language))
    if ask_more:
        parts.append(text(language, "ask_more"))
    return _reply(answer, language, parts, tier="answer", shown=shown, kind=kind)


def _option_list(
    hits: Sequence[Hit], meta: MetaLookup, base: str, language: str, role: str
) -> tuple[list[Shown], list[dict], str]:
    shown, options, lines = [], [], []
    for n, hit in enumerate(hits, 1):
        s = hit.section
        url = section_url(base, s, hit.matched_terms, language)
        shown.append(Shown(hit, role, url))
        m = meta(s.key)
        label = short_title(s, m, language)
        options.append({"label": label, "value": s.key})
        where = escape_inline(citation_label(s, m, language).rsplit(" · ", 1)[-1])
        lines.append(f"{n}. **{escape_inline(label)}** · [{where}]({url})")
    return shown, options, "\n".join(lines)


def best_fix(item: Shown, meta: MetaLookup, language: str, written_in: LanguageLookup | None = None) -> str:
    """The closest section as a tentative reply shows it: its summary line, its fix (steps and code, the
    section's details left out) and its citation line."""
    section = item.hit.section
    m = meta(section.key)
    body, _ = section_body(item.hit, m, language, written_in=written_in(section.key) if written_in else None)
    lines = [
        f"### {escape_inline(section_title(section, m, language))}",
        body,
        citation_line(section, item.url, language, m),
    ]
    era = era_line(section, language)
    return "\n\n".join([*lines, era] if era else lines)


def format_tentative(
    answer: Answer,
    meta: MetaLookup,
    base: str,
    *,
    limit: int,
    language: str | None = None,
    notes: Iterable[str] = (),
    suggestions: int = 3,
    contact: Contact | None = None,
    written_in: LanguageLookup | None = None,
) -> Reply:
    """The closest section's fix under a caution line naming the reason, the other candidates collapsed below
    (and "talk to a person" when a contact is configured).

    The fix is what a person acts on: a list of headings one click away from it gave nothing to do (issue 26).
    """
    language = language or answer.language
    reason = " ".join(reason_text(answer, meta, language).split()) or text(language, "tentative_reason")
    parts = [f"⚠️ **{text(language, 'may_not_apply')}:** {escape_inline(reason)}"]  # how sure, first
    parts.extend(_preamble(answer, language, limit, notes))
    shown, options, _ = _option_list(answer.hits[:suggestions], meta, base, language, "suggestion")
    if shown:
        parts.append(best_fix(shown[0], meta, language, written_in))
    _, _, others = _option_list(answer.hits[1:suggestions], meta, base, language, "suggestion")
    if others:
        parts.append(_details(f"{text(language, 'other_candidates')} ({len(shown) - 1})", others))
    parts.append(text(language, "ask_more"))
    person = person_line(language, contact, _cited(shown), collect=False)
    if person:
        parts.append(person)
    return _reply(answer, language, parts, tier="tentative", shown=shown, options=options, reason=reason)


def format_none(
    answer: Answer,
    meta: MetaLookup,
    base: str,
    *,
    limit: int,
    language: str | None = None,
    notes: Iterable[str] = (),
    contact: Contact | None = None,
    suggestions: int = 3,
    scope: Scope | None = None,
) -> Reply:
    """Nothing close: what the knowledge base covers, which details would help, where to ask a person."""
    language = language or answer.language
    # No icon: without a colour-emoji font (a Linux desktop, this machine's Chromium) "ℹ️" draws as a bare "i" that
    # reads as a typo ("i The knowledge base…"); the bold title says it alone.
    parts = [f"**{text(language, 'no_match_title')}**"]
    parts.extend(_preamble(answer, language, limit, notes))
    reason = reason_text(answer, meta, language)
    if answer.reason is not None and answer.reason.code in SPECIFIC_REASONS:  # "No document here covers Jetson"
        parts.append(escape_inline(" ".join(reason.split())))
    parts.append(scope_text(language, scope))
    parts.append(text(language, "ask_more"))
    shown, _, listing = _option_list(answer.hits[:suggestions], meta, base, language, "suggestion")
    parts.append(person_line(language, contact, _cited(shown)))
    if listing:
        parts.append(_details(text(language, "pointers"), listing))
    return _reply(answer, language, parts, tier="none", shown=shown, reason=reason)


def format_no_match(
    answer: Answer,
    meta: MetaLookup,
    base: str,
    *,
    limit: int,
    language: str | None = None,
    notes: Iterable[str] = (),
    suggestions: int = 3,
    contact: Contact | None = None,
    written_in: LanguageLookup | None = None,
) -> Reply:
    """A reply for a question without a confident answer: tentative or none, by the engine's tier."""
    if answer.tier == "none" or not answer.hits:
        return format_none(
            answer, meta, base, limit=limit, language=language, notes=notes, contact=contact, suggestions=suggestions
        )
    return format_tentative(
        answer,
        meta,
        base,
        limit=limit,
        language=language,
        notes=notes,
        suggestions=suggestions,
        contact=contact,
        written_in=written_in,
    )


def format_clarify(
    answer: Answer,
    hits: Sequence[Hit],
    meta: MetaLookup,
    base: str,
    *,
    limit: int,
    language: str | None = None,
    notes: Iterable[str] = (),
) -> Reply:
    """Ask which of several different problems the user means; the options are clickable."""
    language = language or answer.language
    parts = _preamble(answer, language, limit, notes)
    shown, options, listing = _option_list(hits, meta, base, language, "option")
    parts.append(text(language, "clarify") + "\n\n" + listing)
    return _reply(answer, language, parts, tier="answer", shown=shown, options=options, kind="clarify")


def format_exhausted(language: str, notes: Iterable[str] = (), contact: Contact | None = None) -> Reply:
    parts = [n for n in notes if n] + [
        text(language, "exhausted"),
        text(language, "ask_more"),
        person_line(language, contact),
    ]
    return Reply(kind="exhausted", language=language, markdown="\n\n".join(parts))


def format_empty(language: str) -> Reply:
    return Reply(kind="empty", language=language, markdown=text(language, "empty"))


def format_intent(label: str, language: str, contact: Contact | None = None) -> Reply:
    """The answer to thanks, a greeting, small talk or a request for a person (see :mod:`bot.engine.intents`).

    Not a search: no citations, no events (nothing to log as unanswered).

    >>> format_intent("human", "en", Contact("https://help.example.com", "GPU support")).markdown.split("\\n")[0]
    'You can reach a person here: [GPU support](https://help.example.com).'
    >>> format_intent("human", "en").markdown.startswith("No support contact is set up here")
    True
    >>> format_intent("thanks", "zh").kind, format_intent("thanks", "zh").events
    ('intent', [])
    """
    key = {
        "thanks": "intent_thanks",
        "greeting": "intent_greeting",
        "small_talk": "intent_small_talk",
        "human": "intent_human",
    }.get(label, "intent_small_talk")
    contact = contact or Contact()
    if key != "intent_human":
        return Reply(kind="intent", language=language, markdown=text(language, key), tier="none")
    link = contact.link(language)
    if link:
        markdown = text(language, key, contact=link)
    elif contact.configured:  # webhook only: the edge posts the transcript (bot.web.handoff)
        markdown = text(language, "intent_human_webhook")
    else:  # no channel configured: say what a colleague will need instead of an empty promise
        markdown = text(language, "collect_for_colleague")
    return Reply(kind="intent", language=language, markdown=markdown, tier="none", handoff=True)


# ---------------------------------------------------------------- suggested follow-ups


def follow_up_options(
    cited: Section,
    sections: Sequence[Section],
    meta: MetaLookup,
    language: str,
    exclude: Iterable[str] = (),
    limit: int = MAX_FOLLOW_UPS,
) -> list[dict]:
    """Up to ``limit`` suggested next questions: the cited section's neighbours in its document.

    ``sections`` is in document order (``engine.sections``); the next section comes first, then the
    one before, then further ones. Document introductions (the text above the first heading) and
    sections in ``exclude`` are skipped.

    >>> doc = [Section("d.md", h, ("D", h), n, n, h, "x", "D") for n, h in enumerate(["D", "a", "b", "c", "d"], 1)]
    >>> [o["label"] for o in follow_up_options(doc[2], doc, lambda k: None, "zh")]
    ['D › c', 'D › a', 'D › d']
    """
    same = [s for s in sections if s.source == cited.source]
    keys = [s.key for s in same]
    if cited.key not in keys:
        return []
    at = keys.index(cited.key)
    skip = set(exclude) | {cited.key}
    order: list[Section] = []
    for distance in range(1, len(same)):
        for index in (at + distance, at - distance):
            if 0 <= index < len(same):
                order.append(same[index])
    out = []
    for s in order:
        if s.key in skip or (s.heading == s.title and s.path == (s.title,)):
            continue
        # the whole heading: a chip wraps, and a cut one ("… in TensorFl…") reads as a different question
        out.append({"label": short_title(s, meta(s.key), language, limit=SUGGESTION_CHARS), "value": s.key})
        if len(out) >= limit:
            break
    return out
