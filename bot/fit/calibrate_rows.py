"""Labelled messages -> rows of evidence for ``python -m bot calibrate`` (:mod:`bot.fit.calibrate`).

Each labelled first question is read once through the serving engine (:meth:`Engine.evidence`), each labelled
conversation replayed turn by turn in the case the earlier turns left; a row keeps its thread and gathering batch
so that no question is ever scored with evidence from its own thread or batch (:func:`voted`, :func:`may_vote`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bot.engine.evidence import Evidence
from bot.engine.learned import Adapter
from bot.engine.precedents import Precedents
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.fit.evaluate import EvalCase as Labelled
from bot.fit.evaluate import hit_matches, read_cases
from bot.fit.labels import check_labelled
from bot.records import Case, Section  # noqa: F401  (Section: doctest)


@dataclass
class Row:
    """One labelled message with its evidence (computed once; ranking variants reuse it)."""

    expect: tuple[dict, ...]
    group: str  # thread or conversation: never split across folds
    evidence: Evidence
    kind: str = ""  # the case's kind (zh, en, trace …) or the conversation's (followup, retry, switch, drift)
    turn: int = 0  # 0 for a first question
    previous_top: str = ""  # key of the previous turn's first section (to count repeats on retries)
    batch: str = ""  # the gathering batch of its file (:func:`batch_of`; "" unknown): never among its own precedents

    @property
    def in_scope(self) -> bool:
        return bool(self.expect)


def batch_of(path: Path) -> str:
    """The gathering batch of a labelled file: files gathered together differ only in the words that say
    what they hold (``real``, ``conversations``, ``inscope``, ``near``, ``more``).

    A question's precedents never come from its own batch while fitting: questions gathered together
    share topics, searches and a labeller's habits, so their votes are stronger there than for
    the threads of a question asked later, and the weights, the model and the thresholds would trust
    them too much (measured: fitted with only its own thread left out, the model answered 22 % of a
    fresh batch's near-domain questions confidently where cross-validation said 8 %).

    >>> [batch_of(Path(f"eval/{n}.jsonl")) for n in ("real_more4_a", "conversations_real4_a", "real_inscope", "real_near")]
    ['4_a', '4_a', '0', '0']
    """
    return re.sub(r"conversations|real|inscope|near|more", "", path.stem).strip("_-") or "0"


def read_labelled(paths: list[Path]) -> tuple[list[Labelled], list[str], list[dict], dict]:
    """Single questions (with their thread, ``thread@batch``) and conversations from JSON-lines files."""
    check_labelled(paths)  # a bad line is named with its file and line before any work
    cases: list[Labelled] = []
    groups: list[str] = []
    conversations: list[dict] = []
    fitted_on: dict = {}
    for path in paths:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if rows and all("turns" in r for r in rows):
            for n, row in enumerate(rows):
                conversations.append(
                    {**row, "group": str(row.get("url") or f"{path.name}#{n}"), "batch": batch_of(path)}
                )
            fitted_on[str(path)] = {"conversations": len(rows), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
            continue
        file_cases = read_cases(path)
        for case, row in zip(file_cases, rows):
            cases.append(case)
            groups.append(f"{row.get('url') or row.get('thread') or row['query']}@{batch_of(path)}")
        fitted_on[str(path)] = {"cases": len(file_cases), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return cases, groups, conversations, fitted_on


def collect(engine: Engine, cases: list[Labelled], groups: list[str], progress: Callable | None = None) -> list[Row]:
    """First-turn evidence for every labelled question."""
    rows = []
    for c, g in zip(cases, groups):
        rows.append(Row(c.expect, g, engine.evidence(c.query), c.kind, batch=g.rpartition("@")[2]))
        if progress is not None:
            progress(1)
    return rows


def collect_turns(
    engine: Engine,
    conversations: list[dict],
    precedents_without: Callable[[str, str], Precedents | None] | None = None,
    adapter_without: Callable[[str], Adapter | None] | None = None,
    progress: Callable | None = None,
) -> tuple[list[Row], list[Row]]:
    """(first turns, later turns) of every conversation, each turn's evidence in the case the
    earlier turns left, replayed with the engine as it serves (its current calibration).
    ``precedents_without(thread, batch)``: the precedents a conversation is replayed with (never its own
    thread or batch)."""
    firsts: list[Row] = []
    later: list[Row] = []
    serving, serving_adapter = engine.calibration, engine.adapter
    try:
        for conversation in conversations:
            if precedents_without is not None:
                engine.calibration = replace(
                    serving, precedents=precedents_without(conversation["group"], conversation.get("batch", ""))
                )
            if adapter_without is not None:
                engine.adapter = adapter_without(conversation.get("batch", ""))
            _replay(engine, conversation, firsts, later)
            if progress is not None:
                progress(len(conversation["turns"]))
    finally:
        engine.calibration, engine.adapter = serving, serving_adapter
    return firsts, later


def _replay(engine: Engine, conversation: dict, firsts: list[Row], later: list[Row]) -> None:
    case = Case()
    previous_top = ""
    for n, turn in enumerate(conversation["turns"]):
        evidence = engine.evidence(turn["query"], case)
        row = Row(
            tuple(turn.get("expect") or ()),
            conversation["group"],
            evidence,
            conversation.get("kind", ""),
            n,
            previous_top,
            conversation.get("batch", ""),
        )
        (firsts if n == 0 else later).append(row)
        # What Engine.ask does, on the evidence already computed (its plan included): the case the next turn sees.
        ranking = rank(evidence, engine.calibration.weights)
        answer = engine.answer(evidence, ranking, engine.verdict(evidence, ranking))
        previous_top = answer.hits[0].section.key if answer.hits else ""
        case = answer.case


def matches(engine: Engine, n: int, expect: tuple[dict, ...]) -> bool:
    section = engine.sections[n]
    hit = {"source": section.source, "section": section.heading}
    return any(hit_matches(hit, e) for e in expect)


# answers_of's memory: (sections, expect) by their ids, each kept alive with its answer so no id is reused meanwhile.
_ANSWERS: dict[tuple[int, int], tuple[object, object, frozenset[int]]] = {}
_ANSWERS_KEPT = 50_000


def answers_of(engine: Engine, expect: tuple[dict, ...]) -> frozenset[int]:
    """The sections that answer a label (:func:`matches` of every section), worked out once per label object: the
    weight grid asks the same question of every row for each of its ~200 weights (13 % of a fit's time when asked
    anew, two regular expressions per section and row).

    >>> class E: sections = [Section("a.md", "显存不足", ("显存不足",), 1, 2, "x", "", "")]
    >>> label = ({"source": "a.md", "section": "显存不足"},)
    >>> answers_of(E(), label), answers_of(E(), ({"source": "b.md", "section": "显存不足"},))
    (frozenset({0}), frozenset())
    """
    key = (id(engine.sections), id(expect))
    kept = _ANSWERS.get(key)
    if kept is not None and kept[0] is engine.sections and kept[1] is expect:
        return kept[2]
    found = frozenset(n for n in range(len(engine.sections)) if matches(engine, n, expect))
    if len(_ANSWERS) >= _ANSWERS_KEPT:
        _ANSWERS.clear()
    _ANSWERS[key] = (engine.sections, expect, found)
    return found


def precedents_of(engine: Engine, rows: list[Row]) -> Precedents:
    """Every labelled first question as a precedent: its own search vector and the sections that answer it."""
    vectors = np.array(
        [
            r.evidence.own.query_vector
            if r.evidence.own is not None
            else np.zeros(engine.embedder.dim, dtype=np.float32)
            for r in rows
        ],
        dtype=np.float32,
    )
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    answers = tuple(
        tuple(engine.sections[n].key for n in range(len(engine.sections)) if matches(engine, n, r.expect)) for r in rows
    )
    return Precedents(vectors, answers)


def questions_of(engine: Engine, rows: list[Row]) -> tuple[np.ndarray, list[list[int]]]:
    """Every labelled first question's search vector and the sections that answer it (none: near-domain)."""
    vectors = np.array(
        [
            r.evidence.own.query_vector if r.evidence.own is not None else np.zeros(engine.embedder.dim, np.float32)
            for r in rows
        ],
        dtype=np.float32,
    )
    answers = [[n for n in range(len(engine.sections)) if matches(engine, n, r.expect)] for r in rows]
    return vectors, answers


def may_vote(groups: np.ndarray, batches: np.ndarray, group: str, batch: str) -> np.ndarray:
    """Which labelled questions may vote for one of thread ``group`` in ``batch`` while fitting: none of its own
    thread, none of its gathering batch (:func:`batch_of`; ``""``: unknown, so only the thread is left out).

    >>> may_vote(np.array(["t1", "t2", "t3"]), np.array(["4_a", "4_a", "4_b"]), "t1", "4_a").tolist()
    [False, False, True]
    >>> may_vote(np.array(["t1", "t2"]), np.array(["", ""]), "t1", "").tolist()
    [False, True]
    """
    return (groups != group) & ((batches != batch) | (batch == ""))


def voted(engine: Engine, rows: list[Row], precedents: Precedents | None, pool: np.ndarray | None = None) -> list[Row]:
    """``rows`` (the rows ``precedents`` were made from) with the precedents' vote, each row's drawn from ``pool``
    (default: all) without its own thread or gathering batch, as a question asked later would get."""
    if precedents is None:
        return rows
    groups = np.array([r.group for r in rows])
    batches = np.array([r.batch for r in rows])
    pool = np.ones(len(rows), dtype=bool) if pool is None else pool
    return [
        replace(
            r,
            evidence=engine.with_precedents(r.evidence, precedents, pool & may_vote(groups, batches, r.group, r.batch)),
        )
        for r in rows
    ]


def document_of(engine: Engine, row: Row, documents: list[str]) -> str:
    """The document a labelled question is held out with: the first one that answers it; a near-domain question
    (or one whose answer is gone) goes with a document chosen by its thread, so every fold has some.

    >>> class E: sections = []
    >>> document_of(E(), Row((), "t1", None), ["a.md", "b.md"]) in ("a.md", "b.md")
    True
    """
    for n in range(len(engine.sections)):
        if row.expect and matches(engine, n, row.expect):
            return engine.sections[n].source
    return documents[int(hashlib.sha1(row.group.encode()).hexdigest(), 16) % len(documents)]
