"""The conversation state travels with the conversation (issue 32; issue 36 findings 2 and 4).

``/api/ask`` and ``/v1/chat/completions`` return ``state`` and take it back: the next turn continues from it without
replaying anything. A state this server cannot use (too long, not a token, another version, not signed by this
server, damaged, computed on another index) is a 400 naming ``state`` and the fix when it comes alone, and is
ignored with an ``X-Bot-Warning`` header when plain history comes with it: never a 500, never another
conversation's state. A client with only plain history still works, and its replay reads a few hundred characters
of each earlier turn, however long they were. The chat page keeps its conversation and replays nothing.
"""

from __future__ import annotations

import asyncio
import json
import zlib

import httpx
import pytest

from app import build_app
from bot.answer import turn as turn_module
from bot.answer.state import FIX, StateSeal, _b64, generation_of
from bot.answer.turn import HISTORIES, HistoryStates, take_turn
from bot.limits import HISTORY_TURN_CHARS_REPLAYED, STATE_CHARS, STATE_SEARCH_CHARS, STATE_TEXT_CHARS
from bot.settings import WebSettings
from bot.web.credentials import token_matches
from bot.web.signing import state_seal
from fixtures.engines import count_method_calls, hash_engine, repo_seeds_hash_settings

TOKEN = "api-token-for-states"
BASE = "http://assistant.test"
CONVERSATION = ["训练时显存不足怎么办", "batch size 已经调到 8 了还是 OOM", "那多机呢？", "没用"]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return hash_engine(repo_seeds_hash_settings(tmp_path_factory.mktemp("state")))


@pytest.fixture(scope="module")
def api(engine):
    return build_app(
        engine.settings, engine=engine, web=WebSettings(api_token=TOKEN), progress=False, ui=False, admin=False
    )


def post(api, path: str, body: dict) -> httpx.Response:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url=BASE) as client:
            return await client.post(
                path,
                content=json.dumps(body).encode(),  # escaped: a lone surrogate goes as \ud800, as a client may send it
                headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
                timeout=60,
            )

    return asyncio.run(go())


def public(data: dict) -> dict:
    """A reply without what differs between two identical turns (its id, its state token, the links' expiry)."""
    text = json.dumps({k: v for k, v in data.items() if k not in ("answer_id", "state")}, ensure_ascii=False)
    return json.loads(_unsigned(text))


def _unsigned(text: str) -> str:
    import re

    return re.sub(r"exp=\d+&(amp;)?sig=[\w-]+", "exp=&sig=", text)


def ask_with_states(api, messages: list[str]) -> list[dict]:
    """Each message sent with the previous reply's state only (no history)."""
    replies, state = [], None
    for message in messages:
        body = {"question": message, **({"state": state} if state else {})}
        response = post(api, "/api/ask", body)
        assert response.status_code == 200, response.text
        replies.append(response.json())
        state = replies[-1]["state"]
    return replies


# ---------------------------------------------------------------- the state carried


def test_a_state_continues_the_conversation_as_plain_history_does_and_replays_nothing(api, engine, monkeypatch):
    HISTORIES.clear()
    asked = count_method_calls(monkeypatch, engine, "ask")
    carried = ask_with_states(api, CONVERSATION)
    assert len(asked) == len(CONVERSATION)  # one engine run per message: nothing replayed
    assert all(len(r["state"]) <= STATE_CHARS for r in carried)
    HISTORIES.clear()  # a replica that never saw the conversation, with only the plain history
    replayed = post(api, "/api/ask", {"question": CONVERSATION[-1], "history": CONVERSATION[:-1]}).json()
    assert public(carried[-1]) == public(replayed)
    assert carried[-1]["kind"] != "empty"  # the retry was read in its case ("没用" with no case is "nothing to retry")


def test_the_state_comes_back_from_v1_and_is_taken_back(api, engine):
    def v1(content: str, state: str | None = None, stream: bool = False) -> httpx.Response:
        body = {"model": "gpu-troubleshooter", "messages": [{"role": "user", "content": content}], "stream": stream}
        return post(api, "/v1/chat/completions", {**body, **({"state": state} if state else {})})

    first = v1(CONVERSATION[0])
    assert first.status_code == 200 and first.json()["state"].startswith("s1.")
    streamed = v1(CONVERSATION[1], first.json()["state"], stream=True)
    chunks = [json.loads(line[6:]) for line in streamed.text.splitlines() if line.startswith("data: {")]
    state = chunks[-1]["state"]  # on the final chunk, with the citations
    turns = state_seal(WebSettings(api_token=TOKEN)).open(state, generation_of(engine))
    assert [t.question for t in turns] == CONVERSATION[:2]
    third = v1(CONVERSATION[2], state)
    assert third.status_code == 200 and "X-Bot-Warning" not in third.headers


def test_each_conversation_continues_from_its_own_state(api, engine):
    seal = state_seal(WebSettings(api_token=TOKEN))
    first = {
        name: post(api, "/api/ask", {"question": q}).json()
        for name, q in (("a", "loss 变成 nan 了"), ("b", CONVERSATION[0]))
    }
    after = {
        name: post(api, "/api/ask", {"question": "还是不行", "state": first[name]["state"]}).json()
        for name in ("b", "a")  # interleaved, in the other order
    }
    for name in first:
        turns = seal.open(after[name]["state"], generation_of(engine))
        assert [t.question for t in turns][0] == ("loss 变成 nan 了" if name == "a" else CONVERSATION[0])
    # one conversation's body under another's signature is not a state
    body_a, sig_b = first["a"]["state"].split(".")[1], first["b"]["state"].split(".")[2]
    refused = post(api, "/api/ask", {"question": "还是不行", "state": f"s1.{body_a}.{sig_b}"})
    assert refused.status_code == 400 and "not signed by this server" in refused.json()["detail"]


# ---------------------------------------------------------------- a state this server cannot use


def _signed(seal: StateSeal, body: bytes) -> str:
    encoded = _b64(body)
    return f"s1.{encoded}.{seal._mac(encoded)}"


def bad_states(engine) -> dict[str, str]:
    seal = state_seal(WebSettings(api_token=TOKEN))
    good = seal.seal([], generation_of(engine))
    return {
        "oversize": "s1." + "A" * STATE_CHARS + ".x",
        "shape": "not a token",
        "not ascii": "s1.\ud800体.签名",  # a lone surrogate: what a JSON body may carry
        "version": "s0" + good[2:],
        "signature": StateSeal(b"another app's key" * 2, token_matches).seal([], generation_of(engine)),
        "tampered": good[:-3] + ("AAA" if not good.endswith("AAA") else "BBB"),
        "corrupt": _signed(seal, b"this is not zlib"),
        "not turns": _signed(seal, zlib.compress(b'{"v": 1, "g": "x", "t": 5}')),
        "stale": seal.seal([], "gen-built-before"),
    }


REASONS = ("oversize", "shape", "not ascii", "version", "signature", "tampered", "corrupt", "not turns", "stale")


@pytest.mark.parametrize("reason", REASONS)
def test_an_unusable_state_alone_is_a_400_naming_the_field_and_the_fix(api, engine, reason):
    state = bad_states(engine)[reason]
    response = post(api, "/api/ask", {"question": "还是不行", "state": state})
    assert response.status_code == 400, response.text
    assert response.json()["field"] == "state" and response.json()["detail"].startswith("`state` ")
    assert FIX in response.json()["detail"]
    v1 = post(
        api,
        "/v1/chat/completions",
        {"model": "gpu-troubleshooter", "messages": [{"role": "user", "content": "还是不行"}], "state": state},
    )
    assert v1.status_code == 400 and v1.json()["error"]["param"] == "state" and FIX in v1.json()["error"]["message"]


@pytest.mark.parametrize("reason", REASONS)
def test_an_unusable_state_beside_history_is_ignored_with_a_warning(api, engine, reason):
    history = CONVERSATION[:2]
    HISTORIES.clear()
    plain = post(api, "/api/ask", {"question": "那多机呢？", "history": history})
    HISTORIES.clear()
    response = post(
        api, "/api/ask", {"question": "那多机呢？", "history": history, "state": bad_states(engine)[reason]}
    )
    assert response.status_code == 200, response.text
    assert "ignored" in response.headers["X-Bot-Warning"] and "X-Bot-Warning" not in plain.headers
    assert public(response.json()) == public(plain.json())  # answered from the history, as without the state
    messages = [{"role": "user", "content": m} for m in (*history, "那多机呢？")]
    v1 = post(
        api,
        "/v1/chat/completions",
        {"model": "gpu-troubleshooter", "messages": messages, "state": bad_states(engine)[reason]},
    )
    assert v1.status_code == 200 and "ignored" in v1.headers["X-Bot-Warning"]


def test_a_state_that_is_not_a_string_is_refused(api):
    assert post(api, "/api/ask", {"question": "q", "state": ["s1"]}).status_code == 422
    v1 = post(api, "/v1/chat/completions", {"messages": [{"role": "user", "content": "q"}], "state": 5})
    assert v1.status_code == 400 and v1.json()["error"]["param"] == "state"


def test_a_state_without_a_configured_secret_is_this_process_s():
    # Open door: a random key of the process; the same key for every edge of the app (one seal, one place).
    assert state_seal(WebSettings()).key == state_seal(WebSettings()).key
    assert state_seal(WebSettings(api_token="token-aaaa")).key != state_seal(WebSettings(api_token="token-bbbb")).key
    assert state_seal(WebSettings(api_token="token-aaaa")).key != state_seal(WebSettings()).key


# ---------------------------------------------------------------- what a state and a replay cost


def test_a_long_conversation_s_state_stays_under_the_cap(engine):
    from bot.engine.retrieve import Engine
    from fixtures.engines import HeadHashEmbedder

    # The same index, read by an embedder that reads a message's head as the product's does (12 messages of
    # 50,000 characters, hashed whole, took half a minute); what the state keeps of them is the same.
    engine = Engine.open(engine.settings, HeadHashEmbedder())
    seal = state_seal(WebSettings(api_token=TOKEN))
    talk = None
    for n in range(12):
        turned, talk = take_turn(
            engine, f"{n} 训练时显存不足 " + "x" * 50_000 + " out of memory", conversation=talk, seal=seal
        )
    assert 0 < len(turned.state) <= STATE_CHARS
    turns = seal.open(turned.state, generation_of(engine))
    assert turns and all(len(t.question) <= STATE_TEXT_CHARS and len(t.search) <= STATE_SEARCH_CHARS for t in turns)


def test_a_replay_reads_a_few_hundred_characters_of_each_earlier_turn(engine, monkeypatch):
    # Before: each earlier turn was replayed whole through the engine (7 turns of 14,000 characters: 12x one
    # 100,000-character question); now a replay reads the head and the last line of each.
    monkeypatch.setattr(turn_module, "HISTORIES", HistoryStates())
    read: list[int] = []
    real = type(engine).read

    def reading(message):
        if isinstance(message, str):  # the engine reads a Message again as itself
            read.append(len(message))
        return real(engine, message)

    monkeypatch.setattr(engine, "read", reading)
    history = [f"{n} 训练时显存不足\n" + "step loss=0.1\n" * 800 + "RuntimeError: out of memory" for n in range(8)]
    assert all(len(h) > 10_000 for h in history)
    take_turn(engine, "那多机呢？", history=history)
    assert len(read) == 9 and all(n <= HISTORY_TURN_CHARS_REPLAYED for n in read[:-1]), read


def test_the_chat_page_keeps_its_conversation_and_replays_nothing(engine, monkeypatch):
    from bot.web.ui import ChatState, Deps, respond, submit

    deps = Deps(engine, engine.settings, WebSettings(), None)
    asked = count_method_calls(monkeypatch, engine, "ask")
    state = ChatState()
    for n, message in enumerate(CONVERSATION, 1):
        state, _ = submit(state, message, engine.settings.max_input_chars)
        state = respond(deps, state, BASE)
        assert len(asked) == n, asked  # one engine run per message, however long the conversation
    assert [t.question for t in state.turns][:1] == CONVERSATION[:1]
