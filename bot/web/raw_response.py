"""One whole HTTP response on a raw ASGI ``send`` (middlewares and the start-up door answer before any route):
the start with its headers and ``content-length``, then the body.

    >>> import asyncio
    >>> sent = []
    >>> async def send(message): sent.append(message)
    >>> asyncio.run(send_response(send, 503, b"{}", [(b"content-type", b"application/json")]))
    >>> sent[0]["status"], sent[0]["headers"][-1], sent[1]["body"]
    (503, (b'content-length', b'2'), b'{}')
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any


async def send_response(
    send: Callable[[Any], Awaitable[None]], status: int, body: bytes, headers: Sequence[tuple[bytes, bytes]]
) -> None:
    """``headers`` then ``content-length``, then ``body``, in one go (no streaming)."""
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
    await send({"type": "http.response.body", "body": body})
