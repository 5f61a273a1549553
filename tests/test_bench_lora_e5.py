"""The LoRA study's pure parts (bench/lora_e5.py): folds by gathering batch, mined negatives, scoring."""

import numpy as np

from bench.lora_e5 import figures, make_folds, section_scores, training_examples


def test_folds_keep_each_gathering_batch_whole_and_balance_sizes():
    batches = ["0"] * 6 + ["h1"] * 3 + ["h2"] * 2 + ["5_c"] * 2 + ["5_d"] * 1
    folds = make_folds(batches, 2)
    assert sorted(b for f in folds for b in f) == ["0", "5_c", "5_d", "h1", "h2"]
    assert [sum(batches.count(b) for b in f) for f in folds] == [7, 7]


def test_mined_negatives_never_come_from_an_answering_section():
    # keys 0,1 belong to section 0; key 2 to section 1; key 3 to section 2. The question is closest to key 1
    # (its answer), then key 2 (section 1, also an answer), then key 3: only section 2 may be a negative.
    keys = np.array([[0.0, 1, 0], [1, 0, 0], [0.9, 0.1, 0], [0.5, 0.5, 0.7]], dtype=np.float32)
    data = {
        "rows": [
            {"text": "q", "vector": np.array([1.0, 0, 0], np.float32), "labels": [0, 1]},
            {"text": "near", "vector": np.array([0.0, 0, 1], np.float32), "labels": []},
        ],
        "key_vectors": keys,
        "key_section": np.array([0, 0, 1, 2]),
        "key_text": [("query", "k0"), ("passage", "k1"), ("passage", "k2"), ("query", "k3")],
    }
    columns = training_examples(data, [0, 1], negatives=2)
    assert columns["anchor"] == ["query: q"]  # a near-domain question has no positive
    assert columns["positive"] == ["passage: k1"]  # the answering key e5 finds closest
    assert columns["negative_1"] == ["query: k3"]
    assert columns["negative_2"] == []  # no third section to mine from


def test_section_score_is_the_best_key_and_figures_count_answerable_only():
    keys = np.array([[1.0, 0], [0, 1], [0.6, 0.8]], dtype=np.float32)
    q = np.array([[0.8, 0.6], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    scores = section_scores(q, keys, np.array([0, 1, 1]), 2)
    np.testing.assert_allclose(scores, [[0.8, 0.96], [0.0, 1.0], [1.0, 0.6]], atol=1e-6)
    got = figures(scores, None, [[1], [0], []])
    assert (got["hit1"], got["hit3"]) == (0.5, 1.0)
    assert got["auc_top"] == 0.25  # the near question (top 1.0) is above one answerable (0.96), ties the other
