"""One measurement per process: ``python -m bench.worker TASK 'JSON-ARGS'``.

Each figure is taken in a fresh process so that the product's peak RSS is its
own, torch (loaded by the baseline) never shares a process with the product,
and one system's threads do not slow the other. The last stdout line is
``BENCH-RESULT <json>``.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

RESULT_PREFIX = "BENCH-RESULT "
PATH_FIELDS = ("seeds_dir", "index_dir")
EDIT_TEXT = "\n补充说明：如果以上方法仍然无效，请升级到最新版本后重试。\n"


def settings_to_json(settings) -> dict:
    return {
        name: (str(getattr(settings, name)) if name in PATH_FIELDS else getattr(settings, name))
        for name in type(settings).model_fields
    }


def settings_from_json(data: dict):
    from bot.settings import Settings

    return Settings(**{k: (Path(v) if k in PATH_FIELDS else v) for k, v in data.items()})


def copy_seeds(source: Path, target: Path, files: int | None = None) -> Path:
    """Copy a seeds folder (optionally only its first ``files`` documents and their metadata), writable."""
    from bot.kb.meta import META_DIR
    from bot.kb.parse import document_paths

    docs = document_paths(source)
    if files is not None:
        docs = docs[:files]
    target.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        rel = doc.relative_to(source)
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(doc, target / rel)
        meta = source / META_DIR / (rel.with_suffix(".toml").name)
        if meta.is_file():
            (target / META_DIR).mkdir(exist_ok=True)
            shutil.copyfile(meta, target / META_DIR / meta.name)
    return target


def edit_one_file(seeds_dir: Path) -> str:
    """Change one document the way an editor would: one more sentence in its last section."""
    from bot.kb.parse import document_paths

    docs = document_paths(seeds_dir)
    doc = docs[len(docs) // 2]
    with open(doc, "a", encoding="utf-8") as handle:
        handle.write(EDIT_TEXT)
    return doc.name


def current_generation(index_dir: Path) -> Path:
    return index_dir / (index_dir / "CURRENT").read_text(encoding="utf-8").strip()


# ------------------------------------------------------------------ builds


def task_build_ours(args: dict) -> dict:
    from bot.kb.embed import make_embedder
    from bot.kb.index import build_index
    from bot.settings import Settings

    work = Path(args["work"])
    seeds = copy_seeds(Path(args["seeds"]), work / "seeds", args.get("files"))
    settings = Settings(seeds_dir=seeds, index_dir=work / "index", embedder=args["embedder"])
    started = time.perf_counter()
    embedder = make_embedder(settings.embedder)
    load_s = time.perf_counter() - started
    full = build_index(settings, embedder)
    full_runs = [full.seconds]
    for rep in range(1, int(args.get("reps", 1))):  # more full builds from scratch: the figure is their median
        again = work / f"index-rep{rep}"
        full_runs.append(build_index(settings.model_copy(update={"index_dir": again}), embedder).seconds)
        shutil.rmtree(again, ignore_errors=True)
    edited = edit_one_file(seeds)
    incremental = build_index(settings, embedder)
    return {
        "settings": settings_to_json(settings),
        "embedder_id": embedder.id,
        "embedder_load_s": round(load_s, 3),
        "sections": full.sections,
        "keys": full.keys,
        "full_s": round(statistics.median(full_runs), 3),
        "full_runs_s": [round(x, 3) for x in full_runs],
        "full_embedded": full.embedded,
        "full_sections_per_s": round(full.sections / full.seconds, 2),
        "edited_file": edited,
        "incremental_s": round(incremental.seconds, 3),
        "incremental_embedded": incremental.embedded,
        "incremental_reused": incremental.reused,
        "incremental_sections_per_s": round(incremental.sections / incremental.seconds, 2),
    }


def task_build_baseline(args: dict) -> dict:
    from bench.baseline import build
    from bot.kb.embed import make_embedder

    work = Path(args["work"])
    seeds = copy_seeds(Path(args["seeds"]), work / "seeds", args.get("files"))
    started = time.perf_counter()
    embedder = make_embedder(args["embedder"])
    load_s = time.perf_counter() - started
    full = build(seeds, work / "index", embedder)
    full_runs = [full.seconds]
    for rep in range(1, int(args.get("reps", 1))):
        again = work / f"index-rep{rep}"
        full_runs.append(build(seeds, again, embedder).seconds)
        shutil.rmtree(again, ignore_errors=True)
    edited = edit_one_file(seeds)
    again = build(seeds, work / "index", embedder)  # the baseline has no incremental build
    return {
        "index": str(work / "index"),
        "seeds": str(seeds),
        "embedder_id": getattr(embedder, "id", args["embedder"]),
        "embedder_load_s": round(load_s, 3),
        "sections": full.sections,
        "keys": full.chunks,
        "full_s": round(statistics.median(full_runs), 3),
        "full_runs_s": [round(x, 3) for x in full_runs],
        "full_embedded": full.chunks,
        "full_sections_per_s": round(full.sections / full.seconds, 2),
        "edited_file": edited,
        "incremental_s": round(again.seconds, 3),
        "incremental_embedded": again.chunks,
        "incremental_reused": 0,
        "incremental_sections_per_s": round(again.sections / again.seconds, 2),
    }


def task_synth_ours(args: dict) -> dict:
    import numpy as np

    from bench.synthetic import (
        CHUNK_OVERLAP,
        CHUNK_SIZE,
        KEYS_PER_SECTION,
        SyntheticEmbedder,
        seed_sentences,
        write_documents,
    )
    from bot.kb.embed import make_embedder
    from bot.kb.index import build_index
    from bot.settings import Settings

    work = Path(args["work"])
    n_chunks = int(args["n_chunks"])
    started = time.perf_counter()
    n_sections = max(int(n_chunks / KEYS_PER_SECTION), 1)
    write_documents(work / "seeds", n_sections, seed_sentences(Path(args["sentences_from"])))
    generated_s = time.perf_counter() - started
    settings = Settings(
        seeds_dir=work / "seeds",
        index_dir=work / "index",
        embedder=args["embedder"],
        chunk_size=CHUNK_SIZE,
        chunk_overlap=CHUNK_OVERLAP,
        use_meta=False,
        hnsw_threshold=int(args["hnsw_threshold"]),
    )
    centres = np.load(current_generation(Path(args["centres_index"])) / "vectors.npy")
    report = build_index(settings, SyntheticEmbedder(make_embedder(settings.embedder), centres))
    manifest = json.loads((report.path / "manifest.json").read_text(encoding="utf-8"))
    return {
        "settings": settings_to_json(settings),
        "sections": report.sections,
        "keys": report.keys,
        "dense": manifest.get("dense"),
        "generate_s": round(generated_s, 3),
        "build_s": round(report.seconds, 3),
    }


def task_synth_baseline(args: dict) -> dict:
    import faiss
    import numpy as np

    from bench.baseline import write_index
    from bench.synthetic import clustered_vectors

    started = time.perf_counter()
    n_chunks, n_sections = int(args["n_chunks"]), int(args["n_sections"])
    centres_index = Path(args["centres_index"])
    if (centres_index / "CURRENT").is_file():  # a product index: the same centres the product's synthetic base used
        centres = np.load(current_generation(centres_index) / "vectors.npy")
    else:
        seeds_dense = faiss.read_index(str(centres_index / "dense.faiss"))
        centres = seeds_dense.reconstruct_n(0, seeds_dense.ntotal)
    rng = np.random.default_rng(0)
    vectors = clustered_vectors(centres, rng.integers(0, len(centres), n_chunks), 0.75, rng)
    owners = np.sort(rng.integers(0, n_sections, n_chunks))
    sections = [
        {"source": f"synthetic_{n // 1000:04d}.md", "section": f"{n}. synthetic", "anchor": str(n)}
        for n in range(n_sections)
    ]
    hnsw = bool(args.get("hnsw"))  # the product switches to HNSW at this size: compare like with like
    write_index(Path(args["work"]) / "index", sections, owners, vectors, hnsw=hnsw)
    return {
        "index": str(Path(args["work"]) / "index"),
        "sections": n_sections,
        "keys": n_chunks,
        "dense": "hnsw" if hnsw else "flat",
        "build_s": round(time.perf_counter() - started, 3),
    }


# ------------------------------------------------------------------ queries


def _query_set(args: dict):
    from bench.queries import QUERIES

    return list(QUERIES)


def _measure_queries(
    args: dict,
    ask: Callable[[str], object],
    hits_of: Callable[[object], list[dict]],
    clock: object,
    stages: tuple[str, ...],
) -> dict:
    """Cold first query, warm latencies by kind, repeated questions, and top-3 agreement: same loop for every side.

    Measured questions are new wordings (``question (rep n)``) so that no side answers
    from a cache it filled in the warm-up; the repeated pass then asks them again.
    """
    from bench.measure import percentiles
    from bench.queries import agrees

    queries = _query_set(args)
    t = time.perf_counter()
    ask(queries[0].text)
    cold_ms = (time.perf_counter() - t) * 1000
    agree: list[bool] = []
    for q in queries:  # warm-up pass, not timed; the agreement is read here, on the questions as written
        verdict = agrees(q, hits_of(ask(q.text)))
        if verdict is not None:
            agree.append(verdict)
    clock.samples.clear()
    total: list[float] = []
    by_kind: dict[str, list[float]] = {}
    for rep in range(int(args["reps"])):
        for q in queries:
            clock.start()
            t = time.perf_counter()
            ask(f"{q.text} (rep {rep + 1})")
            ms = (time.perf_counter() - t) * 1000
            clock.stop(ms, stages)
            total.append(ms)
            by_kind.setdefault(q.kind, []).append(ms)
    repeated: list[float] = []  # the same questions again: whatever the retriever remembers helps
    for q in queries:
        t = time.perf_counter()
        ask(f"{q.text} (rep 1)")
        repeated.append((time.perf_counter() - t) * 1000)
    return {
        "cold_first_ms": round(cold_ms, 2),
        "latency": percentiles(total),
        "repeated": percentiles(repeated),
        "by_kind": {k: percentiles(v) for k, v in by_kind.items()},
        "stages": clock.summary(),
        "agree_top3": round(sum(agree) / len(agree), 3) if agree else None,
    }


class TimedEmbedder:
    """The embedder handed to the engine through its public constructor, timing each call."""

    def __init__(self, inner, clock) -> None:
        self.id, self.dim = inner.id, inner.dim
        self.runtime = getattr(inner, "runtime", None)
        self.embed = clock.wrap("embed", inner.embed)


def task_query_ours(args: dict) -> dict:
    from bench.measure import StageClock, current_rss_mb, peak_rss_mb
    from bot.engine.retrieve import Engine
    from bot.kb.embed import make_embedder

    settings = settings_from_json(args["settings"])
    clock = StageClock()
    started = time.perf_counter()
    embedder = make_embedder(settings.embedder)
    engine = Engine.open(settings, TimedEmbedder(embedder, clock))
    open_s = time.perf_counter() - started
    rss_open = current_rss_mb()
    wait_ready = getattr(embedder, "wait_ready", None)
    if wait_ready is not None:  # measure the runtime that serves, not the start-up fallback (public method)
        wait_ready(120)
    measured = _measure_queries(
        args,
        engine.ask,
        lambda answer: [{"source": h.section.source, "section": h.section.heading} for h in answer.hits],
        clock,
        ("embed",),
    )
    return {
        "open_s": round(open_s, 3),
        **measured,
        "rss_after_open_mb": rss_open,
        "peak_rss_mb": peak_rss_mb(),
        "vectors": int(engine.index.dense.ntotal),
        "sections": len(engine.sections),
        "dense": type(engine.index.dense).__name__,
        "runtime": getattr(embedder, "runtime", None),
        "torch_imported": "torch" in sys.modules,
    }


def task_query_baseline(args: dict) -> dict:
    from bench.baseline import BaselineRetriever
    from bench.measure import StageClock, current_rss_mb, peak_rss_mb
    from bot.kb.embed import make_embedder

    started = time.perf_counter()
    embedder = make_embedder(args["embedder"])
    retriever = BaselineRetriever(Path(args["index"]), embedder)
    open_s = time.perf_counter() - started
    rss_open = current_rss_mb()
    if getattr(embedder, "wait_ready", None) is not None:  # the same runtime as the product's, loaded
        embedder.wait_ready(120)
    clock = StageClock()
    retriever.embedder = TimedEmbedder(retriever.embedder, clock)  # the baseline's own attribute, public
    measured = _measure_queries(args, retriever.ask, lambda answer: answer["hits"], clock, ("embed",))
    return {
        "open_s": round(open_s, 3),
        **measured,
        "rss_after_open_mb": rss_open,
        "peak_rss_mb": peak_rss_mb(),
        "vectors": int(retriever.dense.ntotal),
        "sections": len(retriever.sections),
        "dense": type(retriever.dense).__name__,
        "torch_imported": "torch" in sys.modules,
    }


TASKS = {
    "build_ours": task_build_ours,
    "build_baseline": task_build_baseline,
    "synth_ours": task_synth_ours,
    "synth_baseline": task_synth_baseline,
    "query_ours": task_query_ours,
    "query_baseline": task_query_baseline,
}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in TASKS:
        print(f"usage: python -m bench.worker {{{'|'.join(TASKS)}}} 'JSON'", file=sys.stderr)
        return 2
    result = TASKS[argv[0]](json.loads(argv[1]))
    print(RESULT_PREFIX + json.dumps(result, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
