"""Conversation evaluation: every turn of a labelled conversation through the product's turn.

Format and metrics: ``shared/eval/README.md`` ("Conversations"). Each turn is answered by
:meth:`Conversation.replay` over the earlier user turns and :meth:`Conversation.respond`,
exactly as ``/api/ask`` (history) and ``/v1`` (messages) answer it, and scored on what the
reply shows first. First turns and follow-up turns are reported apart.

    >>> summarize([{"turn": 0, "expect": True, "hit1": True, "hit3": True, "tier": "answer", "repeat": False}])["n"]
    1
"""

from __future__ import annotations

import json
from pathlib import Path

from bot.answer.conversation import Conversation
from bot.engine.answerer import Answerer
from bot.fit.evaluate import hit_matches
from bot.jsonl import read_jsonl

KINDS = ("followup", "retry", "switch", "drift")


def read_conversations(path: Path) -> list[dict]:
    """Conversations from a JSON-lines file; a row without ``turns`` is refused with its line number."""
    return read_jsonl(
        path,
        _conversation,
        lambda exc: f'not a conversation ({exc}); expected {{"turns": [{{"query", "expect"}}]}}',
        (ValueError, KeyError, TypeError),
    )


def _conversation(row: dict) -> dict:
    turns = [{"query": str(t["query"]), "expect": list(t.get("expect") or [])} for t in row["turns"]]
    return {"turns": turns, "kind": row.get("kind", "?"), "lang": row.get("lang", ""), "url": row.get("url", "")}


def is_conversation_file(path: Path) -> bool:
    """True when the file's first row has ``turns`` (a conversation set, not single questions)."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                try:
                    row = json.loads(line)
                except ValueError:
                    return False
                return isinstance(row, dict) and "turns" in row
    return False


def _matches(section, expect: list[dict]) -> bool:
    return any(hit_matches({"source": section.source, "section": section.heading}, e) for e in expect)


def evaluate_conversations(engine: Answerer, conversations: list[dict]) -> dict:
    """Per-turn records and the figures over first turns, follow-up turns and each conversation kind."""
    turns = []
    for c, conversation in enumerate(conversations):
        history: list[str] = []
        previous_top = ""
        leads: set[str] = set()  # every section an earlier turn led with (the retry convention)
        for n, turn in enumerate(conversation["turns"]):
            talk = Conversation.replay(engine, history)
            reply = talk.respond(turn["query"])
            # A turn that says the fix failed must not lead with any earlier lead (issue 25's convention): the plan's.
            said = n > 0 and talk.planned is not None and talk.planned.says_failed
            shown = [s.hit.section for s in reply.shown]
            top = shown[0] if shown else None
            expect = turn["expect"]
            turns.append(
                {
                    "conversation": c,
                    "turn": n,
                    "kind": conversation["kind"],
                    "url": conversation["url"],
                    "query": turn["query"],
                    "expect": bool(expect),
                    "tier": reply.tier,
                    "reply_kind": reply.kind,
                    "hit1": bool(top is not None and _matches(top, expect)),
                    "hit3": any(_matches(s, expect) for s in shown[:3]),
                    "repeat": bool(
                        conversation["kind"] == "retry" and n > 0 and top is not None and top.key == previous_top
                    ),
                    "said_retry": said,
                    "repeat_said": bool(said and top is not None and top.key in leads),
                    "top": {"source": top.source, "section": top.heading} if top is not None else None,
                }
            )
            previous_top = top.key if top is not None else ""
            leads |= {previous_top} - {""}
            history.append(turn["query"])
    first = [t for t in turns if t["turn"] == 0]
    follow = [t for t in turns if t["turn"] > 0]
    return {
        "first": summarize(first),
        "follow": summarize(follow),
        "by_kind": {
            kind: summarize([t for t in follow if t["kind"] == kind])
            for kind in KINDS
            if any(t["kind"] == kind for t in follow)
        },
        "turns": turns,
    }


def summarize(turns: list[dict]) -> dict:
    """hit@1/hit@3 and confident share over turns with an expected section; confident wrong over all
    turns; the share of ``[]`` turns not answered confidently; repeats of the previous section on the later turns
    of "retry" conversations, and of any earlier lead on turns that say the fix failed (the retry convention)."""
    answerable = [t for t in turns if t["expect"]]
    empty = [t for t in turns if not t["expect"]]
    out: dict = {"n": len(turns), "n_with_answer": len(answerable)}
    if answerable:
        out["hit@1"] = sum(t["hit1"] for t in answerable) / len(answerable)
        out["hit@3"] = sum(t["hit3"] for t in answerable) / len(answerable)
        out["confident"] = sum(t["tier"] == "answer" for t in answerable) / len(answerable)
        out["none"] = sum(t["tier"] == "none" for t in answerable) / len(answerable)
    if turns:
        out["confident_wrong"] = sum(t["tier"] == "answer" and not t["hit1"] for t in turns) / len(turns)
    if empty:
        out["empty_not_confident"] = sum(t["tier"] != "answer" for t in empty) / len(empty)
    out["repeat_on_retry"] = sum(t["repeat"] for t in turns)
    out["repeat_on_said_retry"] = sum(t.get("repeat_said", False) for t in turns)
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


COLUMNS = (
    "n",
    "hit@1",
    "hit@3",
    "confident",
    "none",
    "confident_wrong",
    "empty_not_confident",
    "repeat_on_retry",
    "repeat_on_said_retry",
)


def format_conversation_table(report: dict) -> str:
    def row(name: str, m: dict) -> str:
        return f"{name:<12}" + "".join(f"{m[c]:>20}" if c in m else f"{'-':>20}" for c in COLUMNS)

    lines = [
        "conversations, per turn:",
        f"{'turns':<12}" + "".join(f"{c:>20}" for c in COLUMNS),
        row("first", report["first"]),
        row("follow-up", report["follow"]),
    ]
    lines += [row(f"  {kind}", m) for kind, m in report["by_kind"].items()]
    wrong = [t for t in report["turns"] if t["turn"] > 0 and t["tier"] == "answer" and not t["hit1"]]
    if wrong:
        lines.append("\nconfident and wrong on a follow-up:")
        for t in wrong:
            top = t["top"] or {"source": "-", "section": "-"}
            lines.append(f"  [{t['kind']}] {t['query'][:60]!r} -> {top['source'][:3]} {top['section'][:40]}")
    return "\n".join(lines)
