"""PDF (with a text layer) -> Markdown, through pdfminer.six: headings recovered from font sizes, pages kept.

A PDF has no headings, only text drawn in fonts. pdfminer gives every character's size, font and matrix, so: the size
most of the text is set in is the body's; lines set larger are headings, the largest the first level; a block of text
at the body's size that is short, stands alone on its line (not a table's cell), does not end as a sentence does, and
is all bold or italic is a heading one level
below those (a browser's ``h4``-``h6``, Word's Heading 4). Bold or italic is read from the font's name, or from the
glyphs themselves: a CJK font has no italic face, so Chromium shears its glyphs (the matrix says so) and that slant
is the only mark its ``h5`` carries (its bold is not marked at all: no bold face is embedded, nor a stroke drawn).
A block ending with a colon is a label ("Answer:", "解决方法："), whatever its size: it introduces the text that
follows. Runs of lines in a monospaced font are code; a line's size is its text's, not its code's (set smaller). A line
repeated in the top or bottom margin of most pages (a running head, a page number) is left out. Each line remembers
its page, so a citation says "page 3".

Not read: the images (a scanned page has none of its text in the file: OCR is not done, and such a PDF is named).

Why pdfminer.six (MIT): it reports each character's font size and name, which headings are recovered from; pypdf's
text extraction does not group lines into blocks. PyMuPDF is faster but AGPL, a licence a company product
shipped to customers cannot take on without publishing its source.
"""

from __future__ import annotations

import io
import logging
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from bot.kb.formats import Converted, Unreadable, check_text_size

VERSION = 4
HEADING_RATIO = 1.12  # a line set this much larger than the body text is a heading (Chromium's h3 is 1.17 em)
BOLD_HEADING_CHARS = 120  # an emphasised block at the body's size is a heading when it is no longer than this
# A glyph drawn slanted (its matrix's shear over its height) by more than this is italic: a synthesised italic is
# about 0.21-0.25 (12-14 degrees), an italic face's own slant is in its outlines and leaves the matrix upright.
SLANT = 0.1
MARGIN = 0.07  # the top and bottom of a page where running heads and page numbers stand
_BOLD = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_ITALIC = re.compile(r"italic|oblique", re.IGNORECASE)
_MONO = re.compile(r"mono|courier|consol|code|menlo", re.IGNORECASE)
_BULLET = re.compile(r"^\s*[•◦▪●○■□‣⁃–]\s*")
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
_CID = re.compile(r"\(cid:\d+\)")  # a glyph its font maps to no character (an emoji, a symbol): nothing to read
# CJK fonts often map an ideograph to its look-alike radical (⽤ U+2F64 for 用 U+7528, ⻅ U+2EC5 for 见 U+89C1): the
# radicals are read as the ideographs they stand for, or a PDF's "使⽤GPU" would never match a question's "使用GPU".
# The Kangxi radicals (U+2F00-U+2FD5) compose to them under NFKC; the CJK Radicals Supplement (U+2E81-U+2EF3) does
# not, and is mapped by Unicode's EquivalentUnifiedIdeograph.txt (its 114 lines for that block, as pairs here).
_SUPPLEMENT = (
    "⺁厂 ⺂乛 ⺃乚 ⺄乙 ⺅亻 ⺆冂 ⺇𠘨 ⺈刀 ⺉刂 ⺊卜 ⺋㔾 ⺌小 ⺍小 ⺎兀 ⺏尣 ⺐尢 ⺑𡯂 ⺒巳 ⺓幺 ⺔彑 ⺕彐 ⺖忄 ⺗心 ⺘扌 "
    "⺙攵 ⺛旡 ⺜日 ⺝月 ⺞歺 ⺟母 ⺠民 ⺡氵 ⺢氺 ⺣灬 ⺤爫 ⺥爫 ⺦丬 ⺧牛 ⺨犭 ⺩王 ⺪𤴔 ⺫目 ⺬示 ⺭礻 ⺮𥫗 ⺯糹 ⺰纟 ⺱罓 "
    "⺲罒 ⺳㓁 ⺴冗 ⺵𦉫 ⺶羊 ⺷𦍌 ⺸𦍋 ⺹耂 ⺺肀 ⺻聿 ⺼肉 ⺽𦥑 ⺾艹 ⺿艹 ⻀艹 ⻁虎 ⻂衤 ⻃覀 ⻄西 ⻅见 ⻆角 ⻇𧢲 ⻈讠 ⻉贝 "
    "⻊𧾷 ⻋车 ⻌辶 ⻍辶 ⻎辶 ⻏邑 ⻐钅 ⻑長 ⻒镸 ⻓长 ⻔门 ⻕𨸏 ⻖阝 ⻗雨 ⻘青 ⻙韦 ⻚页 ⻛风 ⻜飞 ⻝食 ⻞𩙿 ⻟飠 ⻠饣 ⻡𩠐 "
    "⻢马 ⻣骨 ⻤鬼 ⻥鱼 ⻦鸟 ⻧卤 ⻨麦 ⻩黄 ⻪黾 ⻫斉 ⻬齐 ⻭歯 ⻮齿 ⻯竜 ⻰龙 ⻱龜 ⻲亀 ⻳龟"
)
_RADICALS = {
    **{c: unicodedata.normalize("NFKC", chr(c)) for c in range(0x2F00, 0x2FE0)},
    **{ord(pair[0]): pair[1:] for pair in _SUPPLEMENT.split()},
}
_ENDS_SENTENCE = re.compile(r"[:：.。,，;；、]$")
_LABEL = re.compile(r"[:：]$")


@dataclass
class _Line:
    page: int
    text: str
    size: float  # the size most of its characters are set in
    emphasised: bool  # its block is a few lines all in bold or italic (see the module's docstring)
    label: bool  # its block ends with a colon: "Answer:", "解决方法：" introduce what follows, never a heading
    mono: bool
    margin: bool  # in the top or bottom margin of its page
    first: bool  # the first line of its block
    top: float  # its top and bottom, in points from the page's foot
    bottom: float


def convert(data: bytes, max_bytes: int) -> Converted:
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect

    logging.getLogger("pdfminer").setLevel(logging.ERROR)  # a font without a bounding box is not the operator's news

    try:
        lines, pages, chars = _read(data, max_bytes)
    except PDFPasswordIncorrect:
        raise Unreadable("is encrypted: a password is needed to open it; save a copy without the password") from None
    except PDFEncryptionError as exc:
        raise Unreadable(f"is encrypted in a way that cannot be read ({exc}); save a copy without encryption") from None
    except Unreadable:
        raise
    except Exception as exc:  # pdfminer raises many kinds (PDFSyntaxError, PSEOF, KeyError…) on a damaged file
        raise Unreadable(f"is not a readable PDF ({type(exc).__name__}: {exc})") from None
    if not chars:
        raise Unreadable(
            f"has no text layer ({pages} page(s) of images: a scan?); OCR is not done, so nothing is indexed: "
            "export the PDF from its source with its text, or run OCR on it first"
        )
    text, page_starts = _markdown(_without_running_heads(lines, pages), pages)
    return Converted(check_text_size(text, max_bytes), page_starts, {})


def _read(data: bytes, max_bytes: int) -> tuple[list[_Line], int, int]:
    """Every text line of the document, in reading order, with its page, font and place."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams, LTChar, LTTextBox

    lines: list[_Line] = []
    pages = chars = 0
    for number, page in enumerate(extract_pages(io.BytesIO(data), laparams=LAParams()), start=1):
        pages = number
        height = page.height or 1.0
        boxes = [box for box in page if isinstance(box, LTTextBox)]
        for box in boxes:
            box_lines = [line for line in box if line.get_text().strip()]
            box_glyphs = [[c for c in line if isinstance(c, LTChar) and c.get_text().strip()] for line in box_lines]
            emphasised = _emphasised_block(box, box_glyphs) and not _beside(box, boxes)
            label = bool(_LABEL.search(box.get_text().rstrip()))
            for n, (line, glyphs) in enumerate(zip(box_lines, box_glyphs)):
                if not glyphs:
                    continue
                chars += len(glyphs)
                # The size of its text, not of the code in it (a browser sets code smaller: 0.85 em in pandoc's CSS).
                sized = [c for c in glyphs if not _MONO.search(c.fontname)] or glyphs
                size = Counter(round(c.size * 2) / 2 for c in sized).most_common(1)[0][0]
                top = max(line.y1, 0.0) / height
                lines.append(
                    _Line(
                        page=number,
                        text=_plain(line.get_text()),
                        size=size,
                        emphasised=emphasised,
                        label=label,
                        mono=all(_MONO.search(c.fontname) for c in glyphs),
                        margin=top > 1 - MARGIN or line.y0 / height < MARGIN,
                        first=n == 0,
                        top=line.y1,
                        bottom=line.y0,
                    )
                )
        if chars * 3 > max_bytes * 2:  # already past the cap (a character is 1-3 bytes): stop reading
            raise Unreadable(
                f"holds more than {max_bytes:,} bytes of text, over the cap per document (BOT_MAX_SEED_BYTES); "
                "skipped: split it into smaller documents or raise BOT_MAX_SEED_BYTES"
            )
    return lines, pages, chars


def _plain(text: str) -> str:
    """A line's text as it reads: radicals as the ideographs they stand for, unmapped glyphs out, spaces single.

    >>> _plain("使⽤GPU  (cid:12)的常⻅问题")
    '使用GPU 的常见问题'
    """
    return " ".join(_CID.sub("", text).translate(_RADICALS).split())


def _without_running_heads(lines: list[_Line], pages: int) -> list[_Line]:
    """Leave out a line that stands in the margins of at least half the pages (3 or more), page numbers alike."""
    if pages < 3:
        return lines

    def key(line: _Line) -> str:
        return re.sub(r"\d+", "#", line.text)

    seen = Counter(k for k in {(line.page, key(line)) for line in lines if line.margin})
    repeated = Counter(k for _, k in seen)
    running = {k for k, count in repeated.items() if count >= max(3, pages / 2)}
    return [line for line in lines if not (line.margin and key(line) in running)]


def _markdown(lines: list[_Line], pages: int) -> tuple[str, tuple[int, ...]]:
    body = Counter()
    for line in lines:
        if not line.mono:
            body[line.size] += len(line.text)
    body_size = body.most_common(1)[0][0] if body else 0.0
    sizes = sorted({ln.size for ln in lines if not ln.mono and not ln.label and _is_big(ln, body_size)}, reverse=True)
    sizes = sizes[:5]
    level = {size: n + 1 for n, size in enumerate(sizes)}
    bold_level = min(len(sizes) + 1, 6)

    out: list[str] = []
    page_starts: list[int] = []
    fenced = wrapped = False
    previous: _Line | None = None
    for line in lines:
        while len(page_starts) < line.page:
            page_starts.append(len(out) + 1)
        heading = 0
        if not line.mono and not line.label and line.size in level and len(line.text) <= 200:
            heading = level[line.size]
        elif line.emphasised and line.size == body_size:
            heading = bold_level
        if fenced and not line.mono:
            out += ["```", ""]
            fenced = False
        if heading:
            if wrapped and previous is not None and _next_line(previous, line):
                out[-2] = _join(out[-2], line.text)  # a heading wrapped over two lines (pdfminer may make each a block)
            else:
                _blank(out)
                out += ["#" * heading + " " + line.text, ""]
            wrapped = True
        elif line.mono:
            wrapped = False
            if not fenced:
                _blank(out)
                out.append("```")
                fenced = True
            out.append(line.text)
        else:
            wrapped = False
            text = _BULLET.sub("- ", line.text)
            if text.startswith("#"):
                text = "\\" + text
            continued = previous is not None and previous.page < line.page and _runs_on(out, text)
            if continued:  # a paragraph that goes on over a page break
                out[-1] = _join(out[-1], text)
            elif line.first or not out or not out[-1] or text.startswith("- "):
                _blank(out)
                out.append(text)
            else:
                out[-1] = _join(out[-1], text)
        previous = line
    if fenced:
        out.append("```")
    while len(page_starts) < pages:
        page_starts.append(len(out) + 1)
    return "\n".join(out).strip("\n") + "\n", tuple(page_starts)


def _emphasised_block(box, glyphs: list[list]) -> bool:
    """Whether a text block is a heading by its emphasis alone: every glyph bold or italic (by its font's name or its
    slanted matrix), no longer than :data:`BOLD_HEADING_CHARS`, and not ending as a sentence or a label does."""
    text = " ".join(box.get_text().split())
    every = [c for line in glyphs for c in line]
    if not every or len(text) > BOLD_HEADING_CHARS or _ENDS_SENTENCE.search(text):
        return False
    return all(_BOLD.search(c.fontname) or _ITALIC.search(c.fontname) or _slanted(c.matrix) for c in every)


def _beside(box, boxes: list) -> bool:
    """Whether another block stands beside ``box`` on its line (a table's cell, a column): a heading stands alone."""
    for other in boxes:
        if other is not box and (other.x0 >= box.x1 or other.x1 <= box.x0):
            overlap = min(box.y1, other.y1) - max(box.y0, other.y0)
            if overlap > 0.5 * min(box.height, other.height):
                return True
    return False


def _slanted(matrix: tuple[float, ...]) -> bool:
    """Whether a glyph is drawn sheared to the right, as a synthesised italic is (upright, not rotated).

    >>> _slanted((0.75, 0, 0.19, 0.75, 0, 0)), _slanted((0.75, 0, 0, 0.75, 0, 0)), _slanted((0, 1, -1, 0, 0, 0))
    (True, False, False)
    """
    a, b, c, d = matrix[:4]
    return a > 0 and d > 0 and abs(b) < 0.01 * a and c / d > SLANT


def _is_big(line: _Line, body_size: float) -> bool:
    return body_size > 0 and line.size >= body_size * HEADING_RATIO


def _next_line(previous: _Line, line: _Line) -> bool:
    """Whether ``line`` is the next line of the same heading as ``previous``: same page and size, close below it."""
    gap = previous.bottom - line.top
    return previous.page == line.page and previous.size == line.size and -1 < gap < 0.5 * line.size


def _runs_on(out: list[str], text: str) -> bool:
    """Whether the text before a page break runs on into ``text``: it stops mid-sentence, ``text`` goes on in lower
    case."""
    last = next((line for line in reversed(out) if line), "")
    return bool(last) and not last.startswith(("#", "```", "- ")) and text[:1].islower() and last[-1:] not in ".:!?。："


def _blank(out: list[str]) -> None:
    if out and out[-1] != "":
        out.append("")


def _join(left: str, right: str) -> str:
    """Two lines of one paragraph: no space between Chinese characters, nor after a hyphen ending a line (a browser
    breaks a line after a word's hyphen; the hyphen is kept).

    >>> _join("显存不", "足时"), _join("out of", "memory"), _join("the nvidia-", "docker wrapper")
    ('显存不足时', 'out of memory', 'the nvidia-docker wrapper')
    """
    if left and right and _CJK.match(left[-1]) and _CJK.match(right[0]):
        return left + right
    if left[-2:-1].isalpha() and left.endswith("-") and right[:1].isalpha():  # "nvidia-" + "docker": one word
        return left + right
    return f"{left} {right}"
