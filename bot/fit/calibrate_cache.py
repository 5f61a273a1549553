"""Query vectors kept between fits: the labelled messages' ones beside the calibration, and the first questions'
ones the stored precedents already hold. A cache: losing it only costs time."""

from __future__ import annotations

import zipfile
from dataclasses import replace  # noqa: F401  (doctest)
from pathlib import Path

import numpy as np

from bot.engine.calibration import Calibration
from bot.engine.precedents import Precedents  # noqa: F401  (doctest)
from bot.engine.retrieve import Engine


def precedent_vectors(cal: Calibration, fitted_on: dict, texts: list[str]) -> dict[bytes, np.ndarray]:
    """The first questions' vectors the stored precedents already hold, by search text — for every labelled file
    they were fitted on that is here unchanged (same name, same bytes, so the same questions in the same order),
    also when other files were added or removed since (a company's own labels beside the shipped ones).

    ``texts`` are the first questions' search texts in the order the fit reads them: the question files' cases, then
    the conversation files' first turns, each group in the order of ``fitted_on``; the stored precedents are laid out
    the same way.

    >>> p = Precedents(np.eye(2, dtype=np.float32), ((), ()))
    >>> cal = replace(Calibration.default(), precedents=p, fitted_on={"a.jsonl": {"cases": 2, "sha256": "x"}})
    >>> len(precedent_vectors(cal, {"a.jsonl": {"cases": 2, "sha256": "x"}}, ["q1", "q2"]))
    2
    >>> precedent_vectors(cal, {"a.jsonl": {"cases": 2, "sha256": "y"}}, ["q1", "q2"])
    {}
    >>> p3 = Precedents(np.eye(3, dtype=np.float32), ((), (), ()))
    >>> old = {"a.jsonl": {"cases": 2, "sha256": "x"}, "c.jsonl": {"conversations": 1, "sha256": "z"}}
    >>> cal = replace(Calibration.default(), precedents=p3, fitted_on=old)
    >>> new = {"a.jsonl": {"cases": 2, "sha256": "x"}, "mine.jsonl": {"cases": 1, "sha256": "m"}, **old}
    >>> found = precedent_vectors(cal, new, ["q1", "q2", "mine", "first turn"])  # a company's file added
    >>> from bot.engine.scores import query_key
    >>> [t for t in ("q1", "q2", "mine", "first turn") if query_key(t) in found]
    ['q1', 'q2', 'first turn']
    >>> found[query_key("first turn")].tolist()
    [0.0, 0.0, 1.0]
    """
    from bot.engine.scores import query_key

    if cal.precedents is None or not cal.fitted_on:
        return {}
    stored, stored_total = _layout(cal.fitted_on)
    here, here_total = _layout(fitted_on)
    if stored_total != len(cal.precedents) or here_total != len(texts):
        return {}  # not laid out as read_labelled reads them (an older format): embed them again
    out: dict[bytes, np.ndarray] = {}
    for file, (start, count) in here.items():
        if stored.get(file, (0, -1))[1] != count:
            continue
        origin = stored[file][0]
        for text, vector in zip(texts[start : start + count], cal.precedents.vectors[origin : origin + count]):
            if float(np.linalg.norm(vector)) > 0.5:  # a message with no words was stored as zeros
                out[query_key(text)] = vector
    return out


def _layout(fitted_on: dict) -> tuple[dict[tuple[str, str, str], tuple[int, int]], int]:
    """Where each labelled file's first questions lie among a fit's rows: (file, bytes' hash, kind) -> (start,
    count), question files first, then conversation files (one first turn each), as :func:`read_labelled` reads.

    >>> _layout({"c.jsonl": {"conversations": 2, "sha256": "z"}, "a.jsonl": {"cases": 3, "sha256": "x"}})
    ({('a.jsonl', 'x', 'cases'): (0, 3), ('c.jsonl', 'z', 'conversations'): (3, 2)}, 5)
    """
    out: dict[tuple[str, str, str], tuple[int, int]] = {}
    start = 0
    for kind in ("cases", "conversations"):
        for file, about in fitted_on.items():
            if isinstance(about, dict) and isinstance(about.get(kind), int):
                out[(file, str(about.get("sha256", "")), kind)] = (start, about[kind])
                start += about[kind]
    return out, start


def vectors_path(engine: Engine) -> Path:
    """Where the labelled messages' query vectors are kept between fits: beside the calibration in the index
    (``index/calibration/<embedder>.queries.npz``), so the shipped labels' vectors come with the product and a
    company's first ``tune`` embeds only its own messages."""
    from bot.engine.calibration import calibration_path

    return calibration_path(engine.settings.index_dir, engine.embedder.id).with_suffix(SUFFIX)


SUFFIX = ".queries.npz"


def _worth_keeping(engine: Engine) -> bool:
    """The test suite's hashing embedder costs nothing to run again: no file for it."""
    return not engine.embedder.id.startswith("hash:")


def load_vectors(engine: Engine) -> dict[bytes, np.ndarray]:
    """The query vectors an earlier fit stored (none when missing, unreadable or of another dimension; a vector
    that is not finite is dropped and embedded again)."""
    if not _worth_keeping(engine):
        return {}
    path = vectors_path(engine)
    try:
        with np.load(path, allow_pickle=False) as data:
            keys, vectors = data["keys"], data["vectors"].astype(np.float32)
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile):
        return {}
    if vectors.ndim != 2 or vectors.shape[1] != engine.embedder.dim or len(keys) != len(vectors):
        return {}
    finite = np.isfinite(vectors).all(axis=1)
    return {bytes.fromhex(str(k)): v for k, v, ok in zip(keys, vectors, finite) if ok}


def save_vectors(engine: Engine, before: dict[bytes, np.ndarray]) -> None:
    """Every query vector this fit used (first questions as the precedents store them), for the next fit — also
    when the calibration shipped beside it was fitted on other labels, so the precedents do not hold them all. A
    cache: failing to write it only costs time."""
    vectors = engine.remembered()
    if not _worth_keeping(engine) or not vectors or vectors.keys() == before.keys():
        return
    path = vectors_path(engine)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        keys = sorted(vectors)  # the same vectors, the same bytes: a refit that embedded nothing new changes nothing
        np.savez_compressed(tmp, keys=np.array([k.hex() for k in keys]), vectors=np.stack([vectors[k] for k in keys]))
        tmp.replace(path)
    except OSError:
        pass
