"""The app's one signing secret and what it signs: the ``/source`` links of API replies (:class:`LinkSigner`) and
conversation states (:func:`state_seal`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

if TYPE_CHECKING:
    from bot.answer.state import StateSeal

from bot.web.credentials import token_matches

# ---------------------------------------------------------------- the app's signing secret: /source links, states

SOURCE_PATH = "/source"
_PROCESS_KEY = secrets.token_bytes(32)  # signs states when no secret is configured: valid until this process ends


def signing_secret(web: Any) -> str:
    """The one secret the app signs with: ``BOT_LINK_SECRET``, else ``BOT_API_TOKEN``, else "" (nothing configured)."""
    return getattr(web, "link_secret", "") or getattr(web, "api_token", "")


def state_seal(web: Any) -> StateSeal:
    """The sealer of conversation states (:mod:`bot.answer.state`), keyed by :func:`signing_secret` (its own key
    derived from it, and its own MAC prefix: neither kind of signature passes for the other). Without a configured
    secret, a random key of this process: states then work until a restart and not across replicas (set
    ``BOT_LINK_SECRET`` on every replica to share them); a client that also sends ``history`` is answered anyway."""
    from bot.answer.state import StateSeal

    secret = signing_secret(web)
    key = hashlib.sha256(b"bot-state-key\n" + secret.encode()).digest() if secret else _PROCESS_KEY
    return StateSeal(key, token_matches)


LinkVerdict = Literal["ok", "unsigned", "expired", "tampered"]


@dataclass(frozen=True)
class LinkSigner:
    """Signs the ``/source`` links of API replies, so that a browser holding no credential can open them.

    An answer read in Open WebUI or another client of ``/v1`` or ``/api`` cites sections by links to
    ``/source``; behind a locked door that browser has neither the cookie nor the Bearer token, and the
    link answered 401. Each such link now carries ``exp`` (Unix seconds) and ``sig`` (an HMAC-SHA256 of the
    section key and ``exp``, keyed by ``BOT_LINK_SECRET`` or else the API token); the door lets a GET of
    ``/source`` with a valid, unexpired signature through, for that section only. Terms, language and the
    whole-file toggle are not signed: they only change what is highlighted and how much is shown.

    >>> signer = LinkSigner("k" * 16, ttl=60)
    >>> url = signer.sign_url("http://h/source?key=a.md%23x&lang=en#L3", now=1000)
    >>> url.replace(signer.signature("a.md#x", 1060), "<sig>")
    'http://h/source?key=a.md%23x&lang=en&exp=1060&sig=<sig>#L3'
    >>> query = url.split("?")[1].split("#")[0]
    >>> signer.verdict(query, now=1059), signer.verdict(query, now=1061), signer.verdict(query.replace("a.md", "b.md"), now=1000)
    ('ok', 'expired', 'tampered')
    """

    secret: str
    ttl: int = 86_400

    @classmethod
    def from_web(cls, web: Any) -> LinkSigner | None:
        """The signer of ``web`` (``BOT_LINK_SECRET``, else ``BOT_API_TOKEN``); None when neither is set (then the
        door is open, or only a proxy's header opens it, which the browser sends anyway)."""
        secret = signing_secret(web)
        return cls(secret, int(getattr(web, "link_ttl", 86_400))) if secret else None

    def signature(self, key: str, expires: int) -> str:
        mac = hmac.new(self.secret.encode(), f"bot-source-link-v1\n{expires}\n{key}".encode(), hashlib.sha256)
        return base64.urlsafe_b64encode(mac.digest()[:18]).decode()  # 144 bits, 24 URL-safe characters

    def sign_url(self, url: str, now: float | None = None) -> str:
        """``url`` (a ``/source`` link) with ``exp`` and ``sig`` added to its query, its ``#L…`` kept."""
        head, hash_mark, fragment = url.partition("#")
        parts = urlsplit(head)
        pairs = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in ("exp", "sig")]
        key = next((v for k, v in pairs if k == "key"), "")
        expires = int(time.time() if now is None else now) + self.ttl
        query = "&".join(
            filter(
                None,
                [
                    parts.query and _without(parts.query, ("exp", "sig")),
                    urlencode({"exp": expires, "sig": self.signature(key, expires)}),
                ],
            )
        )
        return parts._replace(query=query).geturl() + hash_mark + fragment

    def for_base(self, base: str) -> Callable[[str], str]:
        """A signer of the ``<base>/source?…`` links in a text (what :func:`bot.answer.turn.take_turn` takes)."""
        return lambda value: self.sign_all(value, base)

    def sign_all(self, value: Any, base: str, now: float | None = None) -> Any:
        """Every ``<base>/source?…`` link in ``value`` (a reply's markdown, or its JSON: dicts, lists, strings)
        signed; everything else as it was."""
        if isinstance(value, str):
            if f"{base}{SOURCE_PATH}?" not in value:
                return value
            found = re.compile(re.escape(f"{base}{SOURCE_PATH}?") + r"[^\s()<>\"'`\]\[]*")
            return found.sub(lambda m: self.sign_url(m.group(0), now), value)
        if isinstance(value, dict):
            return {k: self.sign_all(v, base, now) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.sign_all(v, base, now) for v in value)
        return value

    def verdict(self, query: str, now: float | None = None) -> LinkVerdict:
        """What the ``exp``/``sig`` of a ``/source`` query string are worth."""
        pairs = dict(parse_qsl(query, keep_blank_values=True))
        if "sig" not in pairs and "exp" not in pairs:
            return "unsigned"
        expires = pairs.get("exp", "")
        if (
            not expires.isdigit()
            or len(expires) > 12
            or not token_matches(pairs.get("sig", ""), self.signature(pairs.get("key", ""), int(expires)))
        ):
            return "tampered"
        # A link from the future (beyond this TTL plus a minute of clock skew) was not made by this app.
        left = int(expires) - (time.time() if now is None else now)
        if left > self.ttl + 60:
            return "tampered"
        return "ok" if left >= 0 else "expired"


def _without(query: str, names: tuple[str, ...]) -> str:
    """``query`` without the ``names`` parameters, the rest byte for byte as it was."""
    return "&".join(p for p in query.split("&") if p and p.split("=", 1)[0] not in names)
