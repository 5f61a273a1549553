"""Fitting the learned relevance adapter (:class:`bot.engine.learned.Adapter`, which serving loads).

``python -m bot tune`` and ``calibrate`` (:mod:`bot.fit.calibrate_weights`) train it here on the labelled first
questions, with torch on the CPU; serving needs numpy alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bot.engine.learned import Adapter

# Chosen by leave-one-gathering-batch-out comparison on the labelled questions (docs/learned.md):
# rank 32 beat 16 and 64 and a full 384×384 map; a "none" score per question beat a constant one.
RANK = 32
EPOCHS = 60
LEARNING_RATE = 3e-3
BATCH_SIZE = 64
WEIGHT_DECAY = 1e-2  # on ‖U Vᵀ‖²: stay near the e5 the rest of the engine was tuned on
TEMPERATURE = 0.05  # the softmax's starting temperature (learned)


def fit(
    questions: np.ndarray,
    answers: Sequence[Sequence[int]],
    key_vectors: np.ndarray,
    key_sections: np.ndarray,
    n_sections: int,
    *,
    rank: int = RANK,
    epochs: int = EPOCHS,
    seed: int = 0,
) -> Adapter:
    """Train an adapter: softmax over every section of the knowledge base plus "none" (cross-entropy; a question
    answered by several sections may be answered by any of them; an unanswered one's target is "none")."""
    import torch  # training only: serving needs numpy alone

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a shared host: one core, predictable time
    try:
        torch.manual_seed(seed)
        x = torch.tensor(np.asarray(questions, dtype=np.float32))
        dim = x.shape[1]
        target = torch.zeros(len(answers), n_sections + 1)
        for i, keys in enumerate(answers):
            if len(keys):
                target[i, list(keys)] = 1.0
            else:
                target[i, n_sections] = 1.0
        width = max(int((key_sections == s).sum()) for s in range(n_sections))
        padded = torch.zeros(n_sections, width, dim)
        present = torch.zeros(n_sections, width, dtype=torch.bool)
        for s in range(n_sections):
            rows = np.flatnonzero(key_sections == s)
            padded[s, : len(rows)] = torch.tensor(key_vectors[rows])
            present[s, : len(rows)] = True
        flat = padded.reshape(n_sections * width, dim)
        to_keys = x @ flat.T  # every question against every key, before the adapter
        up = torch.nn.Parameter(torch.zeros(dim, rank))
        down = torch.nn.Parameter(torch.randn(dim, rank) * 0.01)
        none_weight = torch.nn.Parameter(torch.zeros(dim))
        none_bias = torch.nn.Parameter(torch.tensor(0.0))
        log_tau = torch.nn.Parameter(torch.tensor(float(np.log(TEMPERATURE))))
        params = [up, down, none_weight, none_bias, log_tau]
        optimiser = torch.optim.Adam(params, lr=LEARNING_RATE)
        generator = torch.Generator().manual_seed(seed)
        for _ in range(epochs):
            order = torch.randperm(len(x), generator=generator)
            for start in range(0, len(x), BATCH_SIZE):
                rows = order[start : start + BATCH_SIZE]
                # q = normalize(x + x V Uᵀ); its similarity to every key is (x·keys + (x V)(Uᵀ keys)) / |q|, where
                # x·keys never changes: a rank×keys product a step instead of a batch×dim×keys one
                shift = x[rows] @ down
                q = x[rows] + shift @ up.T
                length = q.norm(dim=-1, keepdim=True).clamp_min(1e-12)
                sims = (to_keys[rows] + shift @ (up.T @ flat.T)) / length
                sims = sims.view(len(rows), n_sections, width).masked_fill(~present[None], -1e4).max(-1).values
                none = none_bias + (q / length) @ none_weight
                logits = torch.cat([sims, none[:, None]], 1) / log_tau.exp()
                right = torch.logsumexp(logits.masked_fill(target[rows] == 0, -1e4), 1)
                # ‖U Vᵀ‖² as tr((UᵀU)(VᵀV)): the same number from two rank×rank products, not a dim×dim one
                decay = ((up.T @ up) * (down.T @ down)).sum()
                loss = (torch.logsumexp(logits, 1) - right).mean() + WEIGHT_DECAY * decay
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
        return Adapter(
            up.detach().numpy(), down.detach().numpy(), none_weight.detach().numpy(), float(none_bias.detach())
        )
    finally:
        torch.set_num_threads(threads)
