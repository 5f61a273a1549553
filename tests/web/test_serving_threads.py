"""What the serving process does with the machine's threads (issue 45)."""

from __future__ import annotations

from threadpoolctl import threadpool_info, threadpool_limits


def test_serving_runs_numpy_blas_on_one_thread(hash_settings):
    """OpenBLAS's spare threads spun on the embedder's cores after every small product of a question (the
    precedents' vote: 4-15 ms of CPU instead of 0.1); the app's engine opens with numpy's and FAISS's BLAS on one
    thread. (Products may differ in their last bits; 400 questions of eval/*.jsonl kept their tier and top three.)"""
    from app import open_engine

    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas, "numpy has no BLAS that threadpoolctl sees: nothing to check"
    with threadpool_limits(2, user_api="blas"):  # as on a 2-core host, whatever this one has
        engine = open_engine(hash_settings, progress=False)
        threads = {pool["filepath"]: pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}
    assert engine.ask("显存不足").hits
    assert set(threads.values()) == {1}, threads
