"""Build, save and load the on-disk index: FAISS vectors + BM25 + sections + manifest.

Layout::

    index/
      CURRENT            name of the live generation, replaced atomically
      gen-<id>/          one complete build
        manifest.json    format, embedder id and dim, chunking, hashes of every source
        sections.json    the citable sections
        keys.json        one row per vector: section, kind, hash of the embedded text
        vectors.npy      the vectors (reused by the next build for unchanged text)
        dense.faiss      exact inner product, or HNSW above ``hnsw_threshold`` vectors
        bm25/            bm25s index over section texts (+ metadata)
        meta.json        curated bilingual metadata per section
        facts.json       what never changes per section (subjects, OS, eras, …), by :class:`FactsHook` (versioned)
        section_vectors.npy  per section, the normalised mean of its keys' vectors

A build writes a new generation in ``.tmp-*`` and only then points ``CURRENT``
at it, so a build killed at any moment leaves the previous index loadable.
The generation it replaces is kept until the next build: a reader that read
``CURRENT`` just before the switch still finds its files. A reader that is slower
than two builds finds its generation gone and loads again from ``CURRENT``, once.

Why one module of ~700 lines: it is the on-disk format, written and read in one place, so a field added to a
generation is added to its writer, its reader and its checks together (the English keys are keys of this format).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from bot.kb.disk import BuildLock, fsync_dir, fsync_write
from bot.kb.domain import SEEDS_DOMAIN, Domain, load_domain, serving_domain, shipped
from bot.kb.embed import Embedder
from bot.kb.formats import CACHE_DIR, ConversionCache
from bot.kb.meta import META_DIR, MetaProblem, SectionMeta, load_meta
from bot.kb.parse import document_paths, parse_folder, section_of_row
from bot.kb.selftest import Embedding, SelfTestHook, previous_vectors  # stored beside, read by none of this
from bot.kb.tokenize import detect_language, tokenize
from bot.records import Section
from bot.settings import Settings

FORMAT_VERSION = 2  # 2: keys carry the language of their text
CURRENT = "CURRENT"
BUILD_FIX = "Run: python -m bot build"
LOADED_ARTIFACTS = ("sections.json", "keys.json", "dense.faiss", "meta.json", "background.npy", "section_vectors.npy")
FACTS_FILE = "facts.json"
BACKGROUND_FILE = Path(__file__).parents[1] / "data" / "background.txt"
BACKGROUND_SOURCE = "(bot/data/background.txt)"


class IndexProblem(Exception):
    """Base for everything that stops an index from being used; the message carries the fix."""


class IndexMissing(IndexProblem):
    pass


class IndexMismatch(IndexProblem):
    pass


class IndexStale(IndexProblem):
    pass


class IndexCorrupt(IndexProblem):
    pass


@dataclass(frozen=True)
class Key:
    """One vector: which section it retrieves, and what kind of text it embeds."""

    section: int
    kind: str  # "chunk" | "heading" | "meta" | "derived" (English built from a Chinese section's own text)
    text_hash: str
    language: str = "zh"  # "zh" or "en": abstention compares like with like (see bot.engine.scores.margin)


class FactsHook(Protocol):
    """What the engine computes about each section once, at build time (the rules need its lexicon, a stage
    above): one JSON row per section, in order, and the version of the rules and vocabulary that computed them."""

    @property
    def version(self) -> str: ...

    def __call__(self, sections: Sequence[Section]) -> list[dict[str, Any]]: ...


@dataclass
class KnowledgeIndex:
    sections: list[Section]
    keys: list[Key]
    dense: object  # faiss.Index
    bm25: object  # bm25s.BM25
    meta: dict[str, SectionMeta]
    background: np.ndarray  # vectors of off-topic questions, for abstention
    manifest: dict
    path: Path
    facts: list[dict] | None = None  # facts.json's rows (None: built without the engine's hook, or before it)
    section_vectors: np.ndarray | None = None  # per section, the normalised mean of its keys' vectors
    # The seeds' domain (bot.kb.domain), loaded once where the index is opened: what the engine's rules read.
    domain: Domain = field(default_factory=shipped)

    # Derived once per loaded index, on first use by a query.
    @cached_property
    def key_sections(self) -> np.ndarray:
        return np.fromiter((k.section for k in self.keys), dtype=np.int64, count=len(self.keys))

    @cached_property
    def key_is_zh(self) -> np.ndarray:
        return np.fromiter((k.language == "zh" for k in self.keys), dtype=bool, count=len(self.keys))

    @cached_property
    def key_is_meta(self) -> np.ndarray:
        return np.fromiter((k.kind == "meta" for k in self.keys), dtype=bool, count=len(self.keys))

    @cached_property
    def background_is_zh(self) -> np.ndarray:
        is_zh = np.array([detect_language(q) == "zh" for q in background_questions()], dtype=bool)
        if len(is_zh) != len(self.background):  # the shipped file changed since the build
            return np.zeros(len(self.background), dtype=bool)
        return is_zh


@dataclass(frozen=True)
class BuildReport:
    path: Path
    sections: int
    keys: int
    embedded: int  # texts embedded in this build
    reused: int  # vectors taken over from the previous build
    seconds: float
    parse_errors: tuple[str, ...]
    meta_problems: tuple[str, ...]
    conversion: str = ""  # documents converted from HTML, Word, PDF, rst: how many, how long, how many cached
    selftest: tuple[str, ...] = ()  # one line per knowledge base (bot.kb.selftest), when the build ran it


# ---------------------------------------------------------------- sources


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def source_hashes(seeds_dir: Path) -> dict[str, str]:
    """Content hash of every document and metadata file the index depends on."""
    hashes = {p.relative_to(seeds_dir).as_posix(): _sha256(p.read_bytes()) for p in document_paths(seeds_dir)}
    meta_dir = seeds_dir / META_DIR
    if meta_dir.is_dir():
        for p in sorted(meta_dir.rglob("*.toml")):
            if p.is_file() and not p.is_symlink():  # links are skipped by load_meta too
                hashes[p.relative_to(seeds_dir).as_posix()] = _sha256(p.read_bytes())
    own_domain = seeds_dir / SEEDS_DOMAIN  # its FAQ fields decide how the documents are split
    if own_domain.is_file() and not own_domain.is_symlink():
        hashes[SEEDS_DOMAIN] = _sha256(own_domain.read_bytes())
    return hashes


def background_questions() -> list[str]:
    """Off-topic questions shipped with the package (see bot/data/background.txt)."""
    lines = BACKGROUND_FILE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def section_documents(section: Section, meta: SectionMeta | None) -> str:
    """The text BM25 sees for a section: its heading path, body and metadata."""
    own = f"{' '.join(section.path)}\n{section.text}"
    return own if meta is None else f"{own}\n{meta.document()}"


def retrieval_keys(
    section: Section, meta: SectionMeta | None, settings: Settings, subjects: Sequence[str] = ()
) -> list[tuple[str, str, str]]:
    """(kind, role, text) for every vector of a section.

    Headings and user phrasings are embedded as queries (question-to-question
    similarity); body chunks as passages, prefixed with the heading path. A Chinese section
    without curated English phrasings gets English keys of its own (:func:`english_keys`).
    """
    # Imported here: the chunker pulls in langchain (0.3 s), which only a build needs, not a start that opens the index.
    from bot.kb.chunk import chunk_section

    keys = [("heading", "query", section.heading)]
    for chunk in chunk_section(section, settings.chunk_size, settings.chunk_overlap):
        keys.append(("chunk", "passage", f"{section.breadcrumb}\n{chunk.text}"))
    if meta is not None:
        keys += [("meta", "query", text) for text in meta.keys()]
        if meta.summary_en:
            keys.append(("meta", "passage", f"{meta.title_en}\n{meta.summary_en}"))
    if (meta is None or not meta.phrasings_en) and detect_language(f"{section.heading}\n{section.text}") == "zh":
        keys += [("derived", "query", text) for text in english_keys(section, subjects)]
    return keys


# Latin runs of a line: words, identifiers, flags, paths and the spaces and punctuation between them.
_LATIN_RUN = re.compile(r"[A-Za-z_][\w.\-/:'()=<>]*(?:[ \t,]+[\w.\-/:'()=<>]*[A-Za-z][\w.\-/:'()=<>]*)*", re.ASCII)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[ \t]*$", re.MULTILINE | re.DOTALL)
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b\w+_\w+\b", re.ASCII)
# Latin words that say nothing about a topic on their own (markdown and link debris, bare file types).
_EMPTY_TERMS = frozenset({"http", "https", "www", "html", "md", "png", "jpg", "com", "cn", "org", "docs", "zh", "en"})
ENGLISH_KEY_CHARS = 300  # one key: a question's length, so it is compared with questions as questions are


def english_keys(section: Section, subjects: Sequence[str] = ()) -> list[str]:
    """English keys of a Chinese section, built from its own text when the index is built: what an English question
    about it would share with it — the subjects it names (their English names, from the engine's lexicon, through the
    facts hook), and the English its heading and body already hold (error strings, flags, API and file names).

    One key of the subjects and the heading's English, one of the body's (prose first, then the code's
    names), each at most :data:`ENGLISH_KEY_CHARS`; none without any English.

    >>> body = "请检查 `LD_LIBRARY_PATH` 中是否有 libcudart.so，然后设置 FLAGS_fraction_of_gpu_memory_to_use。"
    >>> code = chr(10).join(["", "```python", "import paddle", "paddle.device.set_device('gpu')", "```"])
    >>> s = Section("faq.md", "问题：报错 no CUDA-capable device is detected 怎么办", ("安装", "问题"), 1, 9, "a",
    ...             body + code, "安装")
    >>> english_keys(s, ["CUDA", "PaddlePaddle"])
    ['CUDA, PaddlePaddle: no CUDA-capable device is detected', 'LD_LIBRARY_PATH; libcudart.so; FLAGS_fraction_of_gpu_memory_to_use; paddle.device.set_device']
    >>> english_keys(Section("faq.md", "问题：如何升级", ("问题：如何升级",), 1, 2, "a", "使用最新版本。", ""), ())
    []
    """
    heading = _english_terms(section.heading)
    first = ", ".join(subjects)
    if heading:
        first = f"{first}: {'; '.join(heading)}" if first else "; ".join(heading)
    body = _FENCE.sub(" ", section.text)
    code = " ".join(m.group(0) for m in _FENCE.finditer(section.text))
    seen = {t.lower() for t in heading}
    rest: list[str] = []
    for term in [*_english_terms(body), *dict.fromkeys(_DOTTED.findall(code))]:
        if term.lower() not in seen and not any(term.lower() in t.lower() for t in rest):
            seen.add(term.lower())
            rest.append(term)
    keys = [first, "; ".join(rest)]
    return [_cut(k) for k in keys if k.strip()]


def _english_terms(text: str) -> list[str]:
    """The Latin runs of ``text`` worth a key, in order, once each (no link targets, no lone letters or numbers)."""
    text = re.sub(r"\]\([^)]*\)|https?://\S+", " ", text)  # link targets: addresses, not words
    out: list[str] = []
    for line in text.splitlines():
        for run in _LATIN_RUN.findall(line):
            run = run.strip(" \t,.:;()'=<>[]")
            if len(run) < 3 or run.lower() in _EMPTY_TERMS or run.lower() in (t.lower() for t in out):
                continue
            out.append(run)
    return out


def _cut(text: str) -> str:
    if len(text) <= ENGLISH_KEY_CHARS:
        return text
    head = text[:ENGLISH_KEY_CHARS]
    return head[: head.rfind(";")] if ";" in head else head


# ---------------------------------------------------------------- writing


def _unit_rows(vectors: np.ndarray) -> bool:
    return bool(np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3))


def _previous_vectors(index_dir: Path, embedder_id: str) -> dict[str, np.ndarray]:
    """hash -> vector from the live generation, when it was built by the same embedder."""
    try:
        gen = _current_generation(index_dir)
        manifest = json.loads((gen / "manifest.json").read_text(encoding="utf-8"))
        if manifest.get("embedder") != embedder_id:
            return {}
        keys = json.loads((gen / "keys.json").read_text(encoding="utf-8"))
        vectors = np.load(gen / "vectors.npy", allow_pickle=False)
        # vectors.npy is not checksummed (only read here): reuse it only if it is still unit vectors.
        if len(vectors) != len(keys) or not _unit_rows(vectors):
            return {}
        cache = {row[2]: vectors[n] for n, row in enumerate(keys)}
        background_hashes = json.loads((gen / "background.json").read_text(encoding="utf-8"))
        background = np.load(gen / "background.npy", allow_pickle=False)
        if len(background) == len(background_hashes) and _unit_rows(background):
            cache.update(zip(background_hashes, background))
        return {**previous_vectors(gen, vectors.shape[1]), **cache}
    except (IndexProblem, OSError, ValueError, KeyError, IndexError, EOFError, TypeError):
        return {}  # nothing reusable; embed everything


def _make_dense(vectors: np.ndarray, settings: Settings) -> object:
    import faiss

    dim = vectors.shape[1]
    if len(vectors) > settings.hnsw_threshold:
        dense = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
        dense.hnsw.efConstruction = 80
    else:
        dense = faiss.IndexFlatIP(dim)
    if len(vectors):
        dense.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return dense


def _embed_missing(
    embedder: Embedder, wanted: dict[str, tuple[str, str]], cache: dict[str, np.ndarray], progress: bool
) -> int:
    """Embed the (role, text) pairs, keyed by text hash, that are not cached; returns how many were embedded."""
    items = [(h, role_text) for h, role_text in wanted.items() if h not in cache]
    bar = None
    if progress and items:
        from tqdm import tqdm

        bar = tqdm(total=len(items), desc="embedding", unit="text", file=sys.stderr)
    # Texts of similar length together: a runtime pads a batch to its longest text, so
    # sorting by length wastes almost nothing on padding; 64 per call keeps both cores busy
    # and the progress bar moving.
    batch = 64
    for role in ("query", "passage"):
        same_role = sorted(((h, t) for h, (r, t) in items if r == role), key=lambda item: len(item[1]))
        for start in range(0, len(same_role), batch):
            part = same_role[start : start + batch]
            vectors = embedder.embed([t for _, t in part], role=role)
            for (h, _), vector in zip(part, vectors):
                cache[h] = vector
            if bar is not None:
                bar.update(len(part))
    if bar is not None:
        bar.close()
    return len(items)


def section_vectors(vectors: np.ndarray, owners: np.ndarray, sections: int) -> np.ndarray:
    """Per section, the normalised mean of the vectors of its keys (``owners[i]`` is the section of row ``i``).

    >>> section_vectors(np.array([[1, 0], [0, 1], [0, 1]], dtype=np.float32), np.array([0, 0, 1]), 3).round(3)
    array([[0.707, 0.707],
           [0.   , 1.   ],
           [0.   , 0.   ]], dtype=float32)
    """
    sums = np.zeros((sections, vectors.shape[1]), dtype=np.float32)
    for start in range(0, len(vectors), 8_192):  # bounded memory on a large index
        np.add.at(sums, owners[start : start + 8_192], vectors[start : start + 8_192])
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return sums / np.where(norms > 0, norms, 1.0)


def _text_hash(embedder_id: str, role: str, text: str) -> str:
    return hashlib.sha1(f"{embedder_id}\x00{role}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()


def build_index(
    settings: Settings,
    embedder: Embedder,
    *,
    facts: FactsHook | None = None,
    domain: Domain | None = None,
    selftest: SelfTestHook | None = None,
    progress: bool = False,
    after_step: Callable[[str], None] | None = None,
) -> BuildReport:
    """seeds/ -> a new index generation, switched in atomically.
    ``domain`` (default: the seeds' own) decides how the documents are split into sections and fields.

    ``facts`` computes what never changes about each section (``bot.engine.facts.build`` passes the engine's;
    without it the index holds no facts, and the engine refuses it); ``selftest``: bot.kb.selftest. ``after_step`` is
    called with a step name between steps (tests use it to simulate a crash mid-build).
    """
    import bm25s

    started = time.perf_counter()
    seeds_dir, index_dir = settings.seeds_dir, settings.index_dir
    if not seeds_dir.is_dir():
        raise FileNotFoundError(f"Seeds folder {seeds_dir}/ does not exist; create it and add .md/.txt documents")
    step = after_step or (lambda name: None)
    index_dir.mkdir(parents=True, exist_ok=True)
    with BuildLock(index_dir):
        for leftover in index_dir.glob(".tmp-*"):  # a crashed build's generation folder or pointer file
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
        hashes = source_hashes(seeds_dir)
        hashes[BACKGROUND_SOURCE] = _sha256(BACKGROUND_FILE.read_bytes())
        domain = domain or load_domain(seeds_dir)
        converted = ConversionCache(index_dir / CACHE_DIR)  # index/converted/: by content hash, beside generations
        sections, errors = parse_folder(
            seeds_dir,
            max_bytes=settings.max_seed_bytes,
            max_sections=settings.max_seed_sections,
            max_file_bytes=settings.max_seed_file_bytes,
            cache=converted,
            faq=domain.faq,
        )
        converted.prune()
        if progress and converted.summary():
            print(converted.summary(), file=sys.stderr)
        meta: dict[str, SectionMeta] = {}
        meta_problems: list[MetaProblem] = []
        if settings.use_meta:
            meta, meta_problems = load_meta(seeds_dir, sections)
        step("parsed")

        fact_rows = facts(sections) if facts is not None else None
        if fact_rows is not None and len(fact_rows) != len(sections):
            raise ValueError(f"the facts hook gave {len(fact_rows)} rows for {len(sections)} sections")
        key_rows: list[tuple[int, str, str, str]] = []  # (section, kind, role, text)
        for n, section in enumerate(sections):
            # The subjects a section names (English names, from the engine's lexicon) go into its English keys.
            named = fact_rows[n].get("named", ()) if fact_rows is not None else ()
            for kind, role, text in retrieval_keys(section, meta.get(section.key), settings, named):
                key_rows.append((n, kind, role, text))
        keys = [
            Key(n, kind, _text_hash(embedder.id, role, text), detect_language(text)) for n, kind, role, text in key_rows
        ]
        background = background_questions()
        background_hashes = [_text_hash(embedder.id, "query", q) for q in background]
        wanted = {key.text_hash: (role, text) for key, (_, _, role, text) in zip(keys, key_rows)}
        wanted.update(zip(background_hashes, (("query", q) for q in background)))
        cache = _previous_vectors(index_dir, embedder.id)
        embedded = _embed_missing(embedder, wanted, cache, progress)
        vectors = (
            np.stack([cache[k.text_hash] for k in keys]).astype(np.float32)
            if keys
            else np.zeros((0, embedder.dim), dtype=np.float32)
        )
        step("embedded")

        tmp = index_dir / f".tmp-{uuid.uuid4().hex[:12]}"
        tmp.mkdir()
        import faiss

        faiss.write_index(_make_dense(vectors, settings), str(tmp / "dense.faiss"))
        fsync_write(tmp / "background.json", json.dumps(background_hashes).encode())
        owners = np.fromiter((k.section for k in keys), dtype=np.int64, count=len(keys))
        for name, array in (
            ("vectors.npy", vectors),
            ("background.npy", np.stack([cache[h] for h in background_hashes])),
            ("section_vectors.npy", section_vectors(vectors, owners, len(sections))),
        ):
            with open(tmp / name, "wb") as handle:
                np.save(handle, array.astype(np.float32), allow_pickle=False)
        bm25 = bm25s.BM25()
        # Own text, then metadata (tokenize splits at the newline between): the self-test reuses the own text's.
        plain = [tokenize(section_documents(s, None)) for s in sections]
        corpus = [
            (own + tokenize(meta[s.key].document()) if s.key in meta else own) or ["\u2205"]
            for s, own in zip(sections, plain)
        ]
        bm25.index(corpus or [["\u2205"]], show_progress=False)
        bm25.save(str(tmp / "bm25"))
        fsync_write(
            tmp / "sections.json", json.dumps([dataclasses.asdict(s) for s in sections], ensure_ascii=False).encode()
        )
        fsync_write(
            tmp / "keys.json", json.dumps([[k.section, k.kind, k.text_hash, k.language] for k in keys]).encode()
        )
        fsync_write(
            tmp / "meta.json",
            json.dumps({key: dataclasses.asdict(m) for key, m in meta.items()}, ensure_ascii=False).encode(),
        )
        if fact_rows is not None:
            fsync_write(tmp / FACTS_FILE, json.dumps(fact_rows, ensure_ascii=False).encode())
        embedding = Embedding(embedder, cache, _text_hash, lambda w: _embed_missing(embedder, w, cache, False))
        tested = embedding.run(selftest, tmp, (sections, key_rows, vectors, fact_rows, plain)) if selftest else ()
        step("written")
        manifest = {
            "format": FORMAT_VERSION,
            "embedder": embedder.id,
            "dim": int(embedder.dim),
            "chunk_size": settings.chunk_size,
            "chunk_overlap": settings.chunk_overlap,
            "use_meta": settings.use_meta,
            "dense": "hnsw" if len(vectors) > settings.hnsw_threshold else "flat",
            "sources": hashes,
            "parse_errors": [str(e) for e in errors],
            "counts": {"sections": len(sections), "keys": len(keys)},
            "facts": facts.version if facts is not None else None,
            "artifacts": {
                name: _sha256((tmp / name).read_bytes())
                for name in (
                    *LOADED_ARTIFACTS,
                    *((FACTS_FILE,) if facts is not None else ()),
                    *sorted(f"bm25/{p.name}" for p in (tmp / "bm25").iterdir()),
                )
            },
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        fsync_write(tmp / "manifest.json", json.dumps(manifest, ensure_ascii=False, indent=1).encode())
        fsync_dir(tmp)
        generation = f"gen-{time.strftime('%Y%m%d%H%M%S')}-{uuid.uuid4().hex[:6]}"
        os.rename(tmp, index_dir / generation)
        step("renamed")
        try:
            previous = _current_generation(index_dir).name
        except IndexProblem:
            previous = ""
        pointer_tmp = index_dir / f".tmp-{CURRENT}-{uuid.uuid4().hex[:6]}"
        fsync_write(pointer_tmp, generation.encode())
        os.replace(pointer_tmp, index_dir / CURRENT)
        fsync_dir(index_dir)
        step("switched")
        for old in index_dir.glob("gen-*"):
            if old.name not in (generation, previous):  # a reader may still be opening the previous one
                shutil.rmtree(old, ignore_errors=True)
    return BuildReport(
        path=index_dir / generation,
        sections=len(sections),
        keys=len(keys),
        embedded=embedded,
        reused=len(wanted) - embedded,
        seconds=time.perf_counter() - started,
        parse_errors=tuple(str(e) for e in errors),
        meta_problems=tuple(str(p) for p in meta_problems if p.severity == "error"),
        conversion=converted.summary(),
        selftest=tested,
    )


# ---------------------------------------------------------------- reading


def _current_generation(index_dir: Path) -> Path:
    pointer = index_dir / CURRENT
    if not pointer.is_file():
        raise IndexMissing(f"No index in {index_dir}/ ({CURRENT} file missing). {BUILD_FIX}")
    name = pointer.read_text(encoding="utf-8", errors="replace").strip()
    gen = index_dir / name
    if not name.startswith("gen-") or not gen.is_dir():
        raise IndexCorrupt(f"{pointer} names {name!r}, which is not an index generation in {index_dir}/. {BUILD_FIX}")
    return gen


def read_manifest(index_dir: Path, gen: Path | None = None) -> tuple[Path, dict]:
    gen = gen or _current_generation(index_dir)
    path = gen / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict):
            raise ValueError("not a JSON object")
        _check_manifest_types(manifest)
    except FileNotFoundError:
        raise IndexCorrupt(f"{path} is missing. {BUILD_FIX}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise IndexCorrupt(f"{path} is unreadable ({exc}). {BUILD_FIX}") from None
    return gen, manifest


def _check_manifest_types(manifest: dict) -> None:
    """A hand-edited or damaged manifest must read as "corrupt, rebuild", not crash the loader later."""
    for name in ("sources", "artifacts"):
        value = manifest.get(name, {})
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise ValueError(f'"{name}" must map file names to hashes, got {type(value).__name__}')
    if not isinstance(manifest.get("parse_errors", []), list):
        raise ValueError('"parse_errors" must be a list')


def check_manifest(manifest: dict, index_dir: Path, settings: Settings, embedder_id: str, dim: int) -> None:
    """Raise when the index was built for another format, embedder, dimension or chunking."""
    if manifest.get("format") != FORMAT_VERSION:
        raise IndexMismatch(
            f"Index in {index_dir}/ has format {manifest.get('format')!r}, this version reads {FORMAT_VERSION}. {BUILD_FIX}"
        )
    if manifest.get("embedder") != embedder_id or manifest.get("dim") != dim:
        raise IndexMismatch(
            f"No usable index in {index_dir}/: it was built for embedder {manifest.get('embedder')!r} "
            f"(dim {manifest.get('dim')}), but {embedder_id!r} (dim {dim}) is selected. {BUILD_FIX}"
        )
    for name in ("chunk_size", "chunk_overlap", "use_meta"):
        if manifest.get(name) != getattr(settings, name):
            raise IndexMismatch(
                f"Index in {index_dir}/ was built with {name}={manifest.get(name)!r}, "
                f"settings ask for {getattr(settings, name)!r}. {BUILD_FIX}"
            )


def stale_sources(manifest: dict, seeds_dir: Path) -> list[str]:
    """Sources added, removed or changed since the index was built."""
    built = manifest.get("sources", {})
    now = source_hashes(seeds_dir) if seeds_dir.is_dir() else {}
    now[BACKGROUND_SOURCE] = _sha256(BACKGROUND_FILE.read_bytes())
    return sorted(name for name in set(built) | set(now) if built.get(name) != now.get(name))


def load_index(settings: Settings, embedder_id: str, dim: int, *, check_sources: bool = True) -> KnowledgeIndex:
    """Load the live generation after checking it fits the settings and the seeds.

    If the generation disappears while it is being read (a reader slower than two builds),
    it is loaded once more from the generation ``CURRENT`` names now.
    """
    try:
        return _load_generation(settings, embedder_id, dim, check_sources)
    except (IndexProblem, OSError) as first:
        gen = getattr(first, "generation", None)
        if gen is None or gen.is_dir():
            raise
    return _load_generation(settings, embedder_id, dim, check_sources)


def _load_generation(settings: Settings, embedder_id: str, dim: int, check_sources: bool) -> KnowledgeIndex:
    gen: Path | None = None
    try:
        gen = _current_generation(settings.index_dir)
        gen, manifest = read_manifest(settings.index_dir, gen)
        return _load_files(settings, embedder_id, dim, check_sources, gen, manifest)
    except (IndexProblem, OSError) as exc:
        exc.generation = gen  # type: ignore[attr-defined]  # lets load_index tell "vanished" from "broken"
        raise


def _load_files(
    settings: Settings, embedder_id: str, dim: int, check_sources: bool, gen: Path, manifest: dict
) -> KnowledgeIndex:
    import bm25s
    import faiss

    index_dir = settings.index_dir
    check_manifest(manifest, index_dir, settings, embedder_id, dim)
    if check_sources:
        changed = stale_sources(manifest, settings.seeds_dir)
        if changed:
            shown = ", ".join(
                name if name == BACKGROUND_SOURCE else f"{settings.seeds_dir}/{name}" for name in changed[:5]
            )
            more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
            raise IndexStale(f"Index in {index_dir}/ is stale: {shown}{more} changed since it was built. {BUILD_FIX}")
    for name, digest in (manifest.get("artifacts") or {}).items():
        path = gen / name
        if not path.is_file() or _sha256(path.read_bytes()) != digest:
            raise IndexCorrupt(f"{path} is missing or corrupt (checksum mismatch). {BUILD_FIX}")
    domain = serving_domain(settings.seeds_dir)  # a broken seeds file: named, and the shipped domain meanwhile
    try:
        rows = json.loads((gen / "sections.json").read_text(encoding="utf-8"))
        sections = [section_of_row(row, domain.faq) for row in rows]
        keys = [
            Key(int(s), str(k), str(h), str(lang))
            for s, k, h, lang in json.loads((gen / "keys.json").read_text(encoding="utf-8"))
        ]
        meta = {
            key: SectionMeta(
                **{**m, "phrasings_zh": tuple(m["phrasings_zh"]), "phrasings_en": tuple(m["phrasings_en"])}
            )
            for key, m in json.loads((gen / "meta.json").read_text(encoding="utf-8")).items()
        }
        background = np.load(gen / "background.npy", allow_pickle=False)
        # Both absent from an older generation: the engine then says which file is missing and how to rebuild.
        facts = json.loads((gen / FACTS_FILE).read_text(encoding="utf-8")) if (gen / FACTS_FILE).is_file() else None
        vectors = gen / "section_vectors.npy"
        per_section = np.load(vectors, allow_pickle=False) if vectors.is_file() else None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise IndexCorrupt(f"Index records in {gen}/ are unreadable ({exc}). {BUILD_FIX}") from None
    try:
        dense = faiss.read_index(str(gen / "dense.faiss"))
    except RuntimeError as exc:
        raise IndexCorrupt(f"{gen / 'dense.faiss'} is unreadable ({str(exc).splitlines()[0]}). {BUILD_FIX}") from None
    if dense.ntotal != len(keys) or dense.d != dim:
        raise IndexCorrupt(
            f"{gen / 'dense.faiss'} holds {dense.ntotal} vectors of dim {dense.d}, "
            f"expected {len(keys)} of dim {dim}. {BUILD_FIX}"
        )
    if hasattr(dense, "hnsw"):
        dense.hnsw.efSearch = settings.hnsw_ef_search
    try:
        bm25 = bm25s.BM25.load(str(gen / "bm25"), load_corpus=False, show_progress=False)
    except Exception as exc:  # bm25s raises whatever numpy/json raise on a damaged file
        raise IndexCorrupt(f"{gen / 'bm25'}/ is unreadable ({type(exc).__name__}: {exc}). {BUILD_FIX}") from None
    if any(s.section >= len(sections) for s in keys):
        raise IndexCorrupt(f"{gen / 'keys.json'} points past the {len(sections)} sections. {BUILD_FIX}")
    if facts is not None and (not isinstance(facts, list) or len(facts) != len(sections)):
        raise IndexCorrupt(f"{gen / FACTS_FILE} does not hold one row per section. {BUILD_FIX}")
    if per_section is None:  # an older generation: from the dense index's own vectors, as before they were stored
        try:
            per_section = section_vectors(
                dense.reconstruct_n(0, dense.ntotal), np.array([k.section for k in keys], dtype=np.int64), len(sections)
            )
        except (AttributeError, RuntimeError, TypeError, ValueError):  # a dense index that cannot give them back
            per_section = None
    elif per_section.shape != (len(sections), dim):
        raise IndexCorrupt(
            f"{gen / 'section_vectors.npy'} has shape {per_section.shape}, expected ({len(sections)}, {dim}). {BUILD_FIX}"
        )
    return KnowledgeIndex(sections, keys, dense, bm25, meta, background, manifest, gen, facts, per_section, domain)
