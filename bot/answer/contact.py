"""Where a user can ask a person, as the operator configured it, and the link that carries the conversation there.

>>> Contact("https://help.example.com/gpu", "GPU support").configured, Contact().configured
(True, False)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from bot.answer.safe_markdown import escape_inline
from bot.answer.texts import text

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
