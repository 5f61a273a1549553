"""Word (.docx) -> Markdown, through mammoth: its styles ``Heading 1``–``Heading 6`` (and ``Title``) become headings,
so the sections are the document's own; images are not read. A heading's bookmark (mammoth writes it as an anchor)
is its place in the citation, ``faq.docx#oom``: Word opens a hyperlink of that form at the bookmark. Word's hidden
bookmarks (``_Toc…`` of a table of contents, ``_Ref…`` of a cross-reference) are names no one chose, and are left
out: the heading the citation names is the place then.

A .docx is a zip archive. Before mammoth opens it, the archive is checked: a file that is not one is "corrupt", and
one whose parts (other than its images, which are never unpacked) would expand past :data:`EXPANSION` times the
per-document cap is refused as a zip bomb, unread.
"""

from __future__ import annotations

import dataclasses
import io
import zipfile

from bot.kb.formats import Converted, Unreadable, html

VERSION = 2
# The XML of a Word file is about ten times its text; twenty times the text cap (100 MB by default) is room for that.
EXPANSION = 20
# Beyond mammoth's own map (Heading 1-6, lists, tables): a title, and code as pandoc and Word name its styles.
STYLE_MAP = """
p[style-name='Title'] => h1:fresh
p[style-name='Subtitle'] => h2:fresh
p[style-name='Source Code'] => pre:separator('\\n')
p[style-name='Code'] => pre:separator('\\n')
p[style-name='HTML Preformatted'] => pre:separator('\\n')
r[style-name='Verbatim Char'] => code
r[style-name='HTML Code'] => code
"""


def convert(data: bytes, max_bytes: int) -> Converted:
    import mammoth

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        parts = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise Unreadable(
            f"is not a readable Word file (a .docx is a zip archive; this one is corrupt: {exc})"
        ) from None
    if "word/document.xml" not in {p.filename for p in parts}:
        raise Unreadable("is not a Word document (the archive has no word/document.xml; an old .doc renamed?)")
    unpacked = sum(p.file_size for p in parts if not p.filename.startswith("word/media/"))
    if unpacked > EXPANSION * max_bytes:
        raise Unreadable(
            f"would expand to {unpacked:,} bytes, over {EXPANSION} times the cap of {max_bytes:,} bytes per document "
            "(a zip bomb, or a document too large: split it, or raise BOT_MAX_SEED_BYTES); not unpacked"
        )
    try:
        result = mammoth.convert_to_html(
            io.BytesIO(data),
            style_map=STYLE_MAP,
            convert_image=mammoth.images.img_element(lambda image: {"alt": image.alt_text or ""}),
        )
    except Exception as exc:  # mammoth raises what its XML and zip readers raise on a damaged part
        raise Unreadable(f"is not a readable Word file ({type(exc).__name__}: {exc})") from None
    converted = html.convert(f"<body>{result.value}</body>".encode(), max_bytes, chrome=False)
    anchors = {line: name for line, name in converted.anchors.items() if not name.startswith("_")}
    return dataclasses.replace(converted, anchors=anchors)
