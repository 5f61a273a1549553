"""OpenAI-compatible chat API: ``POST /v1/chat/completions``, ``GET /v1/models`` and ``GET /v1/models/{id}``.

Tools that speak the OpenAI chat API (IDE plugins, chat bots, scripts using the ``openai``
client) get the same reply as the chat: ``messages`` in (the last user message is the
question, earlier user messages are the conversation, as in ``POST /api/ask``), the reply's
markdown out as the assistant message, citations both in that text and as structured data
(``citations`` on the response, and on the final chunk when streaming). ``stream: true``
sends server-sent events in OpenAI's chunk format, ending with ``data: [DONE]``.

There is no generation here: the reply is retrieval plus fixed phrasing, so ``temperature``,
``max_tokens`` and the like are accepted and ignored. As OpenAI does: a model other than
:data:`MODEL_ID` is a 404 ``model_not_found``; ``n`` above 1 is a 400 (one reply per question);
``usage`` counts tokens (:func:`count_tokens`: a CJK character is one, other text one per four
characters, the rough rate of OpenAI's tokenizers, so no tokenizer is needed); with
``stream_options: {"include_usage": true}`` a last chunk with empty ``choices`` carries ``usage``.
``state`` on the response (an extension field, on the final chunk when streaming) is the conversation after this
reply, signed (:mod:`bot.answer.state`); sent back as the request's ``state`` (``extra_body`` in OpenAI's client),
the next turn continues from it instead of replaying the earlier user messages. An unusable ``state`` is a 400
``param: "state"`` without earlier user messages, and is ignored with an ``X-Bot-Warning`` header beside them.
``answer_id`` on the response (and the final chunk) is what ``POST /api/feedback`` takes to tie a
vote to this answer.

Chat front-ends ask their model for a chat title, tags or follow-up suggestions with prompts of
their own (Open WebUI's "### Task: Generate a concise, 3-5 word title…", LibreChat's "Please
generate a concise, 5-word-or-less title for the conversation…"). :func:`front_end_task`
recognises them; they get a short title (or empty tags/suggestions) in the shape the front-end
parses and are not recorded, so they never show up as questions or gaps in ``/admin``.
Auth is the app's one check for ``/api/*`` and ``/v1/*`` (:class:`bot.web.door.Door`); the reply's ``/source``
links are signed so that the browser showing them can open them without a credential.
"""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from bot.answer.reply import Contact
from bot.answer.state import StateRefused, StateSeal
from bot.web.api_models import cap_history
from bot.web.api_turn import answer as api_answer
from bot.web.door import api_authorizer, json_body
from bot.web.http import history_messages, request_base
from bot.web.signing import LinkSigner, state_seal

if TYPE_CHECKING:
    from bot.engine.answerer import ServingEngine

MODEL_ID = "gpu-troubleshooter"
CREATED = 1_764_000_000  # fixed: the "model" is the knowledge base, versioned by its index, not by a date
CHUNK_CHARS = 120  # streamed pieces: small enough to render progressively, few enough to be cheap


def _error(
    status: int, message: str, param: str | None = None, kind: str = "invalid_request_error", code: str | None = None
) -> JSONResponse:
    """OpenAI's error shape, so clients raise their usual exceptions with our message."""
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}}, status_code=status)


def _no_such_model(name: str) -> JSONResponse:
    """What OpenAI answers for an unknown model (``openai.NotFoundError`` in its client), naming ours."""
    return _error(
        404,
        f"The model `{name[:200]}` does not exist. This server has one model: `{MODEL_ID}` (GET /v1/models).",
        param="model",
        code="model_not_found",
    )


def _model_card() -> dict:
    return {"id": MODEL_ID, "object": "model", "created": CREATED, "owned_by": "gpu-troubleshooter"}


_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def count_tokens(text: str) -> int:
    """Tokens for ``usage``: one per CJK character, one per four other characters (rounded up).

    Close to what OpenAI's tokenizers give for Chinese and English without shipping one; the bot
    generates nothing, so the count is for clients that track it, not for billing.

    >>> count_tokens("显存不足"), count_tokens("libnccl.so not found"), count_tokens("")
    (4, 5, 0)
    """
    cjk = sum(1 for _ in _CJK.finditer(text))  # counted, not listed: a list held one string per CJK character
    return cjk + math.ceil((len(text) - cjk) / 4)


def usage(messages: list, reply: str, max_chars: int) -> dict:
    """OpenAI's ``usage`` for ``messages`` and the ``reply``, counted on the text the bot reads: the question cut to
    ``max_chars`` (``BOT_MAX_INPUT_CHARS``) and every other message (system and assistant too) sharing another
    ``max_chars``, as the history does (:func:`cap_history`). Slow on a large body: call it off the event loop.

    >>> usage([{"role": "system", "content": "x" * 400}, {"role": "user", "content": "显存"}], "ok", 40)
    {'prompt_tokens': 12, 'completion_tokens': 1, 'total_tokens': 13}
    """
    texts = [_text(m.get("content")) or "" for m in messages if isinstance(m, dict)]
    earlier, last = texts[:-1], texts[-1:]
    read = cap_history(earlier, max_chars) + [t[:max_chars] for t in last]
    prompt = sum(count_tokens(t) for t in read)
    completion = count_tokens(reply)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def check_request(body: dict) -> JSONResponse | None:
    """The OpenAI error for a ``model`` or ``n`` this server does not serve, else None."""
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        return _error(400, f'"model" must be a string, e.g. "{MODEL_ID}"', param="model")
    if model and model != MODEL_ID:
        return _no_such_model(model)
    n = body.get("n")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n != 1):
        return _error(
            400,
            f'"n" must be 1 (got {json.dumps(n)[:40]}): the answer comes from the documents, so there is '
            "one per question; send the question again for another",
            param="n",
        )
    return None


# ---- prompts chat front-ends send for their own bookkeeping (a title, tags, follow-ups), not questions
# Open WebUI (backend/open_webui/config.py DEFAULT_*_PROMPT_TEMPLATE): "### Task:" + instructions + the chat in
# <chat_history>…</chat_history>, one user message; it parses the JSON object named in "### Output".
# LibreChat: "Please generate a concise, 5-word-or-less title for the conversation, using its same language, …"
# (as a system or user message) and, for agents, "Provide a concise, 5-word-or-less title for the conversation, …
# Only return the title itself.\n\nConversation:\n…"; it takes the reply text as the title.
_OPEN_WEBUI_TASKS = (  # (what the instructions ask for, the JSON reply Open WebUI parses; None = the title)
    (re.compile(r"\btags?\b", re.I), {"tags": []}),
    (re.compile(r"follow[- ]?up", re.I), {"follow_ups": []}),
    (re.compile(r"\bsearch quer|\bqueries\b", re.I), {"queries": []}),
    (re.compile(r"autocompletion|\bcontinue the text\b", re.I), {"text": ""}),
    (re.compile(r"\btitle\b", re.I), None),
)
_LIBRECHAT_TITLE = re.compile(r"\b(?:please generate|provide) a concise,? (?:5-word-or-less )?title\b", re.I)
# "USER: …" (Open WebUI), "User: …" (LibreChat agents), '||>User:\n"…"' (LibreChat's OpenAI client)
_SPEAKER = re.compile(r'^[ \t]*(?:\|\|>)?(?:USER|User|user|Human|human)[ \t]*:[ \t]*\n?[ \t]*"?(\S[^\n]*)', re.M)
TITLE_WORDS = 5
TITLE_CJK_CHARS = 12
FALLBACK_TITLE = "GPU troubleshooting"


def _short_title(prompt: str) -> str:
    """A chat title from the first user line quoted in a front-end's prompt: its first words, cut short.

    >>> _short_title("### Task: …\\n<chat_history>\\nUSER: How do I fix libnccl.so not found on 8 GPUs?\\n</chat_history>")
    'How do I fix libnccl.so'
    >>> _short_title('Please generate a title\\n\\n||>User:\\n"训练时显存不足怎么办？"\\n||>Response:'), _short_title("no chat")
    ('训练时显存不足怎么办', 'GPU troubleshooting')
    """
    found = _SPEAKER.search(prompt)
    line = found.group(1).strip() if found else ""
    if _CJK.search(line[:TITLE_CJK_CHARS]):
        line = line[:TITLE_CJK_CHARS]
    else:
        line = " ".join(line.split()[:TITLE_WORDS])
    line = line.strip(" \t\"'`*#?？!！。.,，:：;；")
    return line or FALLBACK_TITLE


def front_end_task(messages: Any) -> str | None:
    """The reply to a front-end's title/tags/follow-up prompt (the last message), or None for a real question.

    >>> front_end_task([{"role": "user", "content": "### Task:\\nGenerate 1-3 broad tags categorizing the main "
    ...                 "themes of the chat history\\n<chat_history>\\nUSER: nccl\\n</chat_history>"}])
    '{"tags": []}'
    >>> front_end_task([{"role": "user", "content": "How do I generate a title for my GPU job?"}]) is None
    True
    """
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return None
    text = _text(messages[-1].get("content")) or ""
    if text.lstrip().startswith("### Task:") and "<chat_history>" in text:
        task = text.split("<chat_history>", 1)[0]  # the instructions, not the chat (which may say "title")
        for asks, answer in _OPEN_WEBUI_TASKS:
            if asks.search(task):
                return json.dumps(answer if answer is not None else {"title": _short_title(text)}, ensure_ascii=False)
        return None
    if _LIBRECHAT_TITLE.search(text[:300]):
        return _short_title(text)
    return None


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
        if not isinstance(message, dict) or message.get("role") not in (
            "system",
            "developer",
            "user",
            "assistant",
            "tool",
        ):
            raise ValueError(f'messages[{n}] must be an object with "role" system|user|assistant and "content"')
        text = _text(message.get("content"))
        if message["role"] == "user":
            if text is None:
                raise ValueError(f"messages[{n}].content must be a string or a list of text parts")
            users.append(text)
    if messages[-1].get("role") != "user":
        raise ValueError('the last message must be the user\'s question (role "user")')
    return users[-1], history_messages(users[:-1])


def openai_router(
    engine: ServingEngine,
    recorder: Any,
    web: Any,
    authorize: Callable[[Request], None] | None = None,
    contact: Any = None,
    seal: StateSeal | None = None,
) -> APIRouter:
    """The /v1 routes over ``engine``; events go to ``recorder`` like the chat's. ``authorize``: the API's
    check (default :func:`bot.web.door.api_authorizer` of ``web``); ``seal``: the app's sealer of conversation
    states (default :func:`bot.web.signing.state_seal` of ``web``)."""
    router = APIRouter(prefix="/v1", dependencies=[Depends(authorize or api_authorizer(web))])
    links = LinkSigner.from_web(web)  # signs the /source links of replies (bot.web.signing.LinkSigner)
    seal = seal or state_seal(web)

    @router.get("/models")
    def models() -> dict:
        return {"object": "list", "data": [_model_card()]}

    @router.get("/models/{model_id:path}", response_model=None)
    def model(model_id: str) -> dict | JSONResponse:  # client.models.retrieve(...)
        return _model_card() if model_id == MODEL_ID else _no_such_model(model_id)

    @router.post("/chat/completions", response_model=None)
    async def chat_completions(request: Request, body: Any = Depends(json_body)) -> JSONResponse | StreamingResponse:
        if not isinstance(body, dict):
            return _error(400, "body must be a JSON object")
        refused = check_request(body)
        if refused is not None:
            return refused
        messages = body.get("messages")
        state = body.get("state")  # an extension field: the `state` of the previous completion
        if state is not None and not isinstance(state, str):
            return _error(400, '"state" must be the string `state` of the previous reply', param="state")
        task_reply = front_end_task(messages)  # a front-end's own title/tags prompt: answered, not recorded
        if task_reply is None:
            try:
                question, prior = parse_messages(messages)
            except ValueError as exc:
                return _error(400, str(exc), param="messages")
            # The history's text is bounded like /api/ask's (what the hand-off carries; a replay reads less).
            prior = cap_history(prior, engine.settings.max_input_chars)
        session = body.get("user") if isinstance(body.get("user"), str) else ""
        base = request_base(request, web)

        # The /source links of a reply open in the user's browser (Open WebUI, an IDE), which has no credential.
        sign = links.for_base(base) if links else None
        headers: dict[str, str] = {}
        if task_reply is None:
            try:
                done = await run_in_threadpool(
                    api_answer,
                    engine,
                    question,
                    prior,
                    state,
                    seal=seal,
                    recorder=recorder,
                    origin="v1",
                    base_url=base,
                    contact=contact or Contact(),
                    sign=sign,
                    session=session,
                )
            except StateRefused as refused:
                return _error(400, str(refused), param="state", code=f"state_{refused.reason}")
            turned, headers = done.turned, done.headers()
            reply = turned.reply
            text = reply.markdown
            extra = {
                "citations": reply.citations(),
                "bot": {
                    "kind": reply.kind,
                    "tier": reply.tier,
                    "answered": reply.answered,
                    "language": reply.language,
                    "reason": reply.reason,
                    "signature": reply.signature or None,
                    "options": list(reply.options),
                    "suggestions": [{"label": o["label"], "value": o["value"]} for o in turned.options],
                    "environment": dict(reply.environment),
                    "mismatches": list(reply.mismatches),
                },
                "answer_id": turned.answer_id,  # what POST /api/feedback's answer_id refers to
                "state": turned.state,  # what the next request sends back as its "state" (an extension field)
            }
        else:
            text, extra = (
                task_reply,
                {"citations": [], "bot": {"kind": "front_end_task"}, "answer_id": uuid.uuid4().hex},
            )
        counted = await run_in_threadpool(usage, messages, text, engine.settings.max_input_chars)
        return _respond(body, text, extra, counted, headers)

    return router


def _respond(
    body: dict, text: str, extra: dict, counted: dict, headers: dict[str, str] | None = None
) -> JSONResponse | StreamingResponse:
    """``text`` as an OpenAI completion, or as its chunks when ``stream`` is set; ``extra`` goes on top (on the
    final chunk when streaming); ``headers`` on the response."""
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    model = MODEL_ID
    if not body.get("stream"):
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": counted,
                **extra,
            },
            headers=headers,
        )
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and options.get("include_usage") is True
    with_usage = {"usage": None} if include_usage else {}  # as OpenAI: null on every chunk but the last

    def chunk(choices: list, **more: Any) -> str:
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": choices,
            **more,
        }
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    def choice(delta: dict, finish: str | None = None) -> list:
        return [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]

    def events() -> Iterator[str]:
        yield chunk(choice({"role": "assistant", "content": ""}), **with_usage)
        for start in range(0, len(text), CHUNK_CHARS):
            yield chunk(choice({"content": text[start : start + CHUNK_CHARS]}), **with_usage)
        yield chunk(choice({}, "stop"), **with_usage, **extra)
        if include_usage:
            yield chunk([], usage=counted)
        yield "data: [DONE]\n\n"

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **(headers or {})},
    )
