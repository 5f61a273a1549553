"""The self-test stored with an index generation (``selftest.json``): per knowledge base, hit@1 on its own held-out
pseudo-questions (:mod:`bot.kb.pseudo`) of the product's shared rule, of dense alone and of BM25 alone.

Written by the build (:func:`bot.kb.index.build_index`, computed by :mod:`bot.engine.selftest`), printed by
``python -m bot build`` and shown by ``/admin``. It is a report, not something the index needs to answer: a missing
or unreadable file is named with the fix (:func:`read`), never fatal, and it is outside the manifest's checksums.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from bot.kb.disk import fsync_write
from bot.kb.embed import Embedder
from bot.records import Section

SELFTEST_FILE = "selftest.json"
SELFTEST_VERSION = 1  # raise when what is drawn or how it is scored changes: an older file is then named stale
FIX = "Run: python -m bot build"


@dataclass(frozen=True)
class KbFigures:
    """One knowledge base (a top-level folder of the seeds; the files at the top are ``(top)``): held-out hit@1."""

    kb: str
    n: int  # pseudo-questions scored
    product: float  # the shared rule with the calibration's weights (what a page nobody labelled gets)
    dense: float
    bm25: float
    fitted: float | None = None  # BM25's weight chosen on the other documents' questions (issue 42 item 3)
    lexical: float | None = None  # BM25's weight chosen on all its questions (measured, not served)
    kinds: tuple[tuple[str, int], ...] = ()

    def line(self) -> str:
        """One line for ``bot build``.

        >>> KbFigures("kb5", 40, 0.5, 0.4, 0.45).line()
        'self-test kb5: n=40 product 0.500, dense 0.400, bm25 0.450'
        """
        return (
            f"self-test {self.kb}: n={self.n} product {self.product:.3f}, dense {self.dense:.3f}, bm25 {self.bm25:.3f}"
        )


@dataclass(frozen=True)
class SelfTest:
    """Every knowledge base's figures, and how long the self-test took at build."""

    kbs: tuple[KbFigures, ...]
    seconds: float = 0.0
    version: int = SELFTEST_VERSION

    def lines(self) -> tuple[str, ...]:
        return tuple(k.line() for k in self.kbs)

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self), ensure_ascii=False, indent=1).encode()

    @classmethod
    def from_json(cls, data: object) -> SelfTest:
        if not isinstance(data, dict) or not isinstance(data.get("kbs"), list):
            raise ValueError('not a JSON object with a "kbs" list')
        if data.get("version") != SELFTEST_VERSION:
            raise ValueError(f"format version {data.get('version')!r}, this version reads {SELFTEST_VERSION}")
        kbs = []
        for row in data["kbs"]:
            fitted, lexical = row.get("fitted"), row.get("lexical")
            kbs.append(
                KbFigures(
                    kb=str(row["kb"]),
                    n=int(row["n"]),
                    product=float(row["product"]),
                    dense=float(row["dense"]),
                    bm25=float(row["bm25"]),
                    fitted=None if fitted is None else float(fitted),
                    lexical=None if lexical is None else float(lexical),
                    kinds=tuple((str(k), int(v)) for k, v in row.get("kinds", ())),
                )
            )
        return cls(tuple(kbs), float(data.get("seconds", 0.0)))


def read(generation: Path) -> tuple[SelfTest | None, str]:
    """The self-test stored in ``generation``, or None and why (the file, what is wrong, the fix): a generation
    built before the self-test, or a damaged file, still serves."""
    path = Path(generation) / SELFTEST_FILE
    if not path.is_file():
        return None, f"{path} is missing (the index was built before the self-test was stored). {FIX}"
    try:
        return SelfTest.from_json(json.loads(path.read_text(encoding="utf-8"))), ""
    except (OSError, ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
        return None, f"{path} is unreadable ({exc}). {FIX}"


# ---------------------------------------------------------------- at build: its vectors kept for the next build

VECTORS_FILE = "selftest_vectors.npz"  # the questions' and held-out bodies' vectors, by text hash


class SelfTestHook(Protocol):
    """The engine's self-test of a build (:class:`bot.engine.selftest.SelfTestHook`): the sections, the keys
    ``(section, kind, role, text)`` and their vectors, the facts rows, each section's own text's BM25 tokens, and ``embed``
    for what it needs embedded."""

    def __call__(
        self,
        sections: Sequence[Section],
        keys: Sequence[tuple[int, str, str, str]],
        vectors: np.ndarray,
        fact_rows: Sequence[dict[str, Any]] | None,
        documents: Sequence[Sequence[str]],
        embed: Callable[[Sequence[tuple[str, str]]], np.ndarray],
        embedder_id: str,
    ) -> SelfTest: ...


class Embedding:
    """``embed`` for the hook: through the build's vector cache (what the previous generation embedded is reused),
    remembering what it used so the new generation stores it (:meth:`write`)."""

    def __init__(
        self,
        embedder: Embedder,
        cache: dict[str, np.ndarray],
        text_hash: Callable[[str, str, str], str],
        embed_missing: Callable[[dict[str, tuple[str, str]]], int],
    ) -> None:
        self.embedder_id, self.dim = embedder.id, embedder.dim
        self.cache, self.text_hash, self.embed_missing = cache, text_hash, embed_missing
        self.used: dict[str, np.ndarray] = {}
        self.embedded = 0

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros((0, self.dim), dtype=np.float32)
        hashes = [self.text_hash(self.embedder_id, role, text) for role, text in pairs]
        self.embedded += self.embed_missing(dict(zip(hashes, pairs)))
        self.used.update({h: self.cache[h] for h in hashes})
        return np.stack([self.cache[h] for h in hashes]).astype(np.float32)

    def run(self, hook: SelfTestHook, generation: Path, built: tuple[Any, ...]) -> tuple[str, ...]:
        """The hook on what the build ``built`` (sections, keys, vectors, facts rows, own-text tokens), its result
        and vectors written into ``generation``; the lines ``bot build`` prints."""
        test = hook(*built, self, self.embedder_id)
        hashes = sorted(self.used)
        buffer = io.BytesIO()
        stacked = np.stack([self.used[h] for h in hashes]) if hashes else np.zeros((0, self.dim))
        np.savez(buffer, hashes=np.array(hashes, dtype=str), vectors=stacked.astype(np.float32))
        fsync_write(generation / VECTORS_FILE, buffer.getvalue())
        fsync_write(generation / SELFTEST_FILE, test.to_bytes())
        return (*test.lines(), f"self-test: {test.seconds:.1f}s, {self.embedded} texts embedded")


def previous_vectors(generation: Path, dim: int) -> dict[str, np.ndarray]:
    """The self-test's vectors a generation stored (none when it has none or they are unreadable: embedded again)."""
    try:
        with np.load(generation / VECTORS_FILE, allow_pickle=False) as data:
            hashes, vectors = data["hashes"].tolist(), data["vectors"]
        if vectors.ndim != 2 or len(hashes) != len(vectors) or (len(vectors) and vectors.shape[1] != dim):
            return {}
        return dict(zip(hashes, vectors))
    except (OSError, ValueError, KeyError, EOFError):
        return {}
