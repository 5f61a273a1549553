"""A cross-encoder reranker from e5: does this section answer this question? (issue 25, build item 1 c; an
experiment, not shipped: see docs/evaluation.md, "Cross-encoder reranker").

e5's lower layers read the question and the section apart (frozen; a section's states are computed once, a
question's once per message), its top ``n_joint`` layers read them together, initialised from e5 and trained,
and a linear head on the mean of the joint sequence gives a logit (the PreTTR split, MacAvaney et al. 2020: the
joint layers cost a fraction of a full cross-encoder, on CPU, for training and serving alike).

Trained pointwise (binary cross-entropy): positives are a question's labelled sections; negatives are the
sections the product ranks highest that do not answer it, and for a near-domain question (``expect: []``) its
top sections, so the score says whether the section answers, not whether it is about the same thing.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from bench.rerank.e5_torch import e5_layer
from bot.kb import e5_onnx as E

QUESTION_TOKENS = 64  # a question's first tokens (a pasted log's first lines say what failed)
SECTION_TOKENS = 192  # a section's first tokens read by the lower layers (heading path, problem, start of the fix)
COSINE_SCALE = 20.0  # the head starts as e5's cosine, sharpened (e5's cosines of related texts sit in 0.7..0.9)
COSINE_START = 0.8
SECTION_STATES = 64  # ... pooled to this many states for the joint layers (windows of adjacent tokens averaged)


def pooled(states: torch.Tensor, limit: int) -> torch.Tensor:
    """At most ``limit`` states: the first (<s>) kept, the rest averaged in windows of adjacent tokens.

    >>> pooled(torch.arange(7.0)[:, None], 3).squeeze(-1).tolist()
    [0.0, 2.0, 5.0]
    """
    if len(states) <= limit:
        return states
    rest = states[1:]
    width = math.ceil(len(rest) / (limit - 1))
    return torch.cat([states[:1], torch.stack([w.mean(0) for w in rest.split(width)])])


def section_text(path: Sequence[str], text: str) -> str:
    """What the reranker reads of a section: its heading path, then its body (cut by tokens later)."""
    return " › ".join(path) + "\n" + text


class Reranker(nn.Module):
    """Top layers of e5 over [question states ; section states] -> one logit per pair.

    The head reads the question's and the section's halves of the joint output apart (each mean-pooled and
    normalised, as e5 pools a text): ``w · [q, s, q ⊙ s] + b``, started at ``COSINE_SCALE · cos(q, s) + b`` (e5's own
    similarity), so training starts from what e5 already knows and the joint layers learn what it lacks.
    """

    def __init__(self, f: E.E5File, n_joint: int) -> None:
        super().__init__()
        self.split = f.NL - n_joint
        self.top = nn.ModuleList(e5_layer(f, n) for n in range(self.split, f.NL))
        self.head = nn.Linear(3 * f.H, 1)
        with torch.no_grad():
            self.head.weight.zero_()
            self.head.weight[0, 2 * f.H :] = COSINE_SCALE
            self.head.bias.fill_(-COSINE_SCALE * COSINE_START)

    def forward(self, questions: Sequence[torch.Tensor], sections: Sequence[torch.Tensor]) -> torch.Tensor:
        """Pairs of lower-layer states ([tq, H], [ts, H]) -> logits [B]."""
        lengths = [len(q) + len(s) for q, s in zip(questions, sections)]
        T, H = max(lengths), questions[0].shape[1]
        x = questions[0].new_zeros((len(lengths), T, H))
        mask = torch.zeros((len(lengths), T), dtype=torch.bool)
        in_q = torch.zeros((len(lengths), T, 1))
        in_s = torch.zeros((len(lengths), T, 1))
        for row, (q, s) in enumerate(zip(questions, sections)):
            x[row, : len(q)] = q
            x[row, len(q) : lengths[row]] = s
            mask[row, : lengths[row]] = True
            in_q[row, : len(q)] = 1.0 / len(q)
            in_s[row, len(q) : lengths[row]] = 1.0 / len(s)
        for layer in self.top:
            x = layer(x, mask)
        q = nn.functional.normalize((x * in_q).sum(1), dim=-1)
        s = nn.functional.normalize((x * in_s).sum(1), dim=-1)
        return self.head(torch.cat([q, s, q * s], -1)).squeeze(-1)


@dataclass(frozen=True)
class Pair:
    question: int
    section: int
    answers: bool


def pairs_for(labels: Sequence[Sequence[int]], candidates: Sequence[Sequence[int]], negatives: int) -> list[Pair]:
    """Training pairs: every labelled section (positive) and the first ``negatives`` candidates that do not answer
    (for a near question: its first candidates).

    >>> [(p.question, p.section, p.answers) for p in pairs_for([[2], []], [[1, 2, 3], [0, 1]], 1)]
    [(0, 2, True), (0, 1, False), (1, 0, False)]
    """
    out = []
    for q, (good, ranked) in enumerate(zip(labels, candidates)):
        out += [Pair(q, s, True) for s in good]
        out += [Pair(q, s, False) for s in [s for s in ranked if s not in good and s >= 0][:negatives]]
    return out


def train(
    model: Reranker,
    questions: Sequence[torch.Tensor],
    sections: Sequence[torch.Tensor],
    pairs: Sequence[Pair],
    *,
    epochs: int = 2,
    batch: int = 16,
    lr: float = 5e-5,
    head_lr: float = 1e-3,
    seed: int = 0,
    log=None,
) -> Reranker:
    """Binary cross-entropy over ``pairs`` (AdamW, linear warm-up then linear decay)."""
    rng = random.Random(seed)
    torch.manual_seed(seed)
    optimiser = torch.optim.AdamW(
        [
            {"params": model.top.parameters(), "lr": lr},
            {"params": model.head.parameters(), "lr": head_lr},
        ],
        weight_decay=0.01,
    )
    steps = epochs * math.ceil(len(pairs) / batch)
    warm = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min((step + 1) / warm, max(0.0, (steps - step) / max(1, steps - warm)))
    )
    loss_fn = nn.BCEWithLogitsLoss()
    model.train()
    order = list(range(len(pairs)))
    step = 0
    for epoch in range(epochs):
        rng.shuffle(order)
        total = 0.0
        for start in range(0, len(order), batch):
            chunk = [pairs[i] for i in order[start : start + batch]]
            logits = model([questions[p.question] for p in chunk], [sections[p.section] for p in chunk])
            target = torch.tensor([float(p.answers) for p in chunk])
            loss = loss_fn(logits, target)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * len(chunk)
            step += 1
        if log:
            log(f"epoch {epoch + 1}/{epochs}: loss {total / len(pairs):.4f}")
    model.eval()
    return model


def score(
    model: Reranker,
    questions: Sequence[torch.Tensor],
    sections: Sequence[torch.Tensor],
    wanted: Sequence[tuple[int, int]],
    batch: int = 32,
) -> list[float]:
    """Logits of (question, section) index pairs."""
    out: list[float] = []
    with torch.inference_mode():
        for start in range(0, len(wanted), batch):
            chunk = wanted[start : start + batch]
            out += model([questions[q] for q, _ in chunk], [sections[s] for _, s in chunk]).tolist()
    return out
