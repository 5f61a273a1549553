"""A synthetic knowledge base of ~N chunks, built fast, queried through the real path.

Documents are generated (sentences sampled from the seeds, English filler and
made-up error identifiers) and go through the real ``build_index`` (parse, chunk,
BM25, manifest, FAISS HNSW above ``hnsw_threshold``). Only the passage vectors
are cheap: :class:`SyntheticEmbedder` places each text near one of the real
vectors of the seeds index (so the space has the clusters real data has) and
records the real embedder's id, so the index loads with the real query embedder.
The shipped off-topic questions are embedded for real, so confidence works.
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bot.kb.index import background_questions

WORDS = (
    "error cuda device memory trainer kernel batch gradient optimizer tensor shape layer allocator stream "
    "sync launch node rank timeout buffer checkpoint dataset loader epoch learning rate warmup scheduler "
    "precision fp16 overflow driver version library module operator program executor place scope"
).split()
# Synthetic settings: short chunks so ~4 keys per section (heading + 3 chunks).
CHUNK_SIZE = 200
CHUNK_OVERLAP = 40
KEYS_PER_SECTION = 4.0  # measured on the generator below (27.8k keys for 6976 sections); sizes the corpus


def seed_sentences(seeds_dir: Path) -> list[str]:
    """Plain sentences from the real seeds (no markdown syntax that could open a fence or heading)."""
    out: list[str] = []
    for path in sorted(seeds_dir.glob("*.txt")) + sorted(seeds_dir.glob("*.md")):
        for sentence in re.split(r"[。\n！？]", path.read_text(encoding="utf-8")):
            sentence = sentence.strip()
            if 8 < len(sentence) < 160 and not re.search(r"[`#|~<>\[\]]|^[-+*=]", sentence):
                out.append(sentence)
    return out or ["训练时报错提示显存不足", "GPU utilization is low"]


def write_documents(out_dir: Path, n_sections: int, sentences: list[str], per_file: int = 1000, seed: int = 0) -> int:
    """Write ``n_sections`` markdown sections into ``out_dir``; returns the number of files."""
    rng = random.Random(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = 0
    for start in range(0, n_sections, per_file):
        lines = [f"# Synthetic knowledge base part {files}\n"]
        for s in range(start, min(start + per_file, n_sections)):
            ident = f"ERR_{rng.randrange(10**5):05d} module_{rng.randrange(1000)}.{rng.choice(WORDS)}"
            filler = " ".join(rng.choice(WORDS) for _ in range(22))
            filler2 = " ".join(rng.choice(WORDS) for _ in range(18))
            lines.append(
                f"## {s}. {rng.choice(WORDS)} {rng.choice(WORDS)} {ident}\n\n"
                f"{filler}. {rng.choice(sentences)}\n\n{ident} {filler2}.\n\n{rng.choice(sentences)}\n"
            )
        (out_dir / f"synthetic_{files:04d}.md").write_text("\n".join(lines), encoding="utf-8")
        files += 1
    return files


def clustered_vectors(centres: np.ndarray, labels: Sequence[int], noise: float, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors at cosine ~1/sqrt(1+noise^2) from their centre."""
    dim = centres.shape[1]
    vectors = centres[np.asarray(labels)] + (noise / np.sqrt(dim)) * rng.standard_normal((len(labels), dim))
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return vectors.astype(np.float32)


class SyntheticEmbedder:
    """Cheap passage vectors under the real embedder's id; real vectors for the off-topic questions."""

    def __init__(self, real, centres: np.ndarray, noise: float = 0.75, seed: int = 0) -> None:
        self._real = real
        self.id = real.id
        self.dim = real.dim
        self._centres = np.asarray(centres, dtype=np.float32)
        self._noise = noise
        self._rng = np.random.default_rng(seed)
        self._background = set(background_questions())

    def embed(self, texts: Sequence[str], role: str) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        real = [i for i, t in enumerate(texts) if t in self._background]
        fake = [i for i, t in enumerate(texts) if t not in self._background]
        if real:
            out[real] = self._real.embed([texts[i] for i in real], role=role)
        if fake:
            labels = [zlib.crc32(texts[i].encode("utf-8", "surrogatepass")) % len(self._centres) for i in fake]
            out[fake] = clustered_vectors(self._centres, labels, self._noise, self._rng)
        return out
