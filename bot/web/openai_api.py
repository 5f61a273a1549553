"""OpenAI-compatible chat API: ``POST /v1/chat/completions`` and ``GET /v1/models``.

Tools that speak the OpenAI chat API (IDE plugins, chat bots, scripts using the ``openai``
client) get the same reply as the chat: ``messages`` in (the last user message is the
question, earlier user messages are the conversation, as in ``POST /api/ask``), the reply's
markdown out as the assistant message, citations both in that text and as structured data
(``citations`` on the response, and on the final chunk when streaming). ``stream: true``
sends server-sent events in OpenAI's chunk format, ending with ``data: [DONE]``.

There is no generation here: the reply is retrieval plus fixed phrasing, so ``temperature``,
``max_tokens`` and the like are accepted and ignored, and ``usage`` counts are zero.
Auth is the app's own check for ``/api/*`` (passed in as ``authorize``).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from bot.answer.conversation import Conversation
from bot.web.http import MAX_BODY_BYTES, history_messages, request_base

MODEL_ID = "gpu-troubleshooter"
CREATED = 1_764_000_000  # fixed: the "model" is the knowledge base, versioned by its index, not by a date
CHUNK_CHARS = 120  # streamed pieces: small enough to render progressively, few enough to be cheap


def _error(status: int, message: str, param: str | None = None, kind: str = "invalid_request_error") -> JSONResponse:
    """OpenAI's error shape, so clients raise their usual exceptions with our message."""
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": None}}, status_code=status)


def _text(content: Any) -> str | None:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if all(isinstance(p, str) for p in parts):
            return "\n".join(parts)  # type: ignore[arg-type]
    return None


def parse_messages(messages: Any) -> tuple[str, list[str]]:
    """(question, earlier user messages) from OpenAI ``messages``; ValueError says what is wrong."""
    if not isinstance(messages, list) or not messages:
        raise ValueError('"messages" must be a non-empty list of {"role": ..., "content": ...}')
    users: list[str] = []
    for n, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("system", "developer", "user", "assistant", "tool"):
            raise ValueError(f'messages[{n}] must be an object with "role" system|user|assistant and "content"')
        text = _text(message.get("content"))
        if message["role"] == "user":
            if text is None:
                raise ValueError(f'messages[{n}].content must be a string or a list of text parts')
            users.append(text)
    if messages[-1].get("role") != "user":
        raise ValueError("the last message must be the user's question (role \"user\")")
    return users[-1], history_messages(users[:-1])


def openai_router(engine: Any, recorder: Any, web: Any, authorize: Callable[[Request], None],
                  contact: Any = None) -> APIRouter:
    """The /v1 routes over ``engine``; events go to ``recorder`` like the chat's."""
    router = APIRouter(prefix="/v1", dependencies=[Depends(authorize)])

    @router.get("/models")
    def models() -> dict:
        return {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": CREATED,
                                            "owned_by": "gpu-troubleshooter"}]}

    @router.post("/chat/completions", response_model=None)
    async def chat_completions(request: Request) -> JSONResponse | StreamingResponse:
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
            return _error(413, f"request body over {MAX_BODY_BYTES // (1024 * 1024)} MB")
        try:
            body = json.loads((await request.body()).decode("utf-8", errors="replace") or "null")
        except ValueError:
            return _error(400, 'body must be JSON: {"model": "...", "messages": [{"role": "user", "content": "..."}]}')
        if not isinstance(body, dict):
            return _error(400, "body must be a JSON object")
        try:
            question, prior = parse_messages(body.get("messages"))
        except ValueError as exc:
            return _error(400, str(exc), param="messages")
        model = body.get("model") if isinstance(body.get("model"), str) and body.get("model") else MODEL_ID
        session = body.get("user") if isinstance(body.get("user"), str) else ""
        base = request_base(request, web)

        def run():
            started = time.perf_counter()
            extra = {"contact": contact} if contact is not None else {}
            reply = Conversation.replay(engine, prior, base_url=base, **extra).respond(question)
            latency = (time.perf_counter() - started) * 1000
            for event in reply.events:
                recorder.record(replace(event, origin="v1"), session=session, latency_ms=latency)
            return reply

        reply = await run_in_threadpool(run)
        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())
        extra = {
            "citations": reply.citations(),
            "bot": {"kind": reply.kind, "tier": reply.tier, "answered": reply.answered, "language": reply.language,
                    "reason": reply.reason, "signature": reply.signature or None, "options": reply.options},
        }
        if not body.get("stream"):
            return JSONResponse({
                "id": completion_id, "object": "chat.completion", "created": created, "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.markdown},
                             "finish_reason": "stop", "logprobs": None}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                **extra,
            })

        def chunk(delta: dict, finish: str | None = None, **more: Any) -> str:
            data = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **more}
            return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

        def events() -> Iterator[str]:
            yield chunk({"role": "assistant", "content": ""})
            text = reply.markdown
            for start in range(0, len(text), CHUNK_CHARS):
                yield chunk({"content": text[start:start + CHUNK_CHARS]})
            yield chunk({}, "stop", **extra)
            yield "data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    return router
