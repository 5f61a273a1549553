r"""What to ask the user for, computed from what the conversation already holds (issue 26).

A reply that is not sure asks for the details that would pin the problem down. It used to ask every user for
"the full error log", ``nvidia-smi`` and "your PaddlePaddle or TensorFlow version" — of a user who had pasted the
log with the versions in it, or who uses PyTorch. Here each item is asked only when no message of the
conversation holds it, and the framework asked about is the one in play.

    >>> print(collect_text("en", ["Paddle 2.5 NCCL error\nTraceback (most recent call last):\nOSError: NCCL error"]))
    To pin the problem down, please add:
    <BLANKLINE>
    - the output of `nvidia-smi`
    - your CUDA and cuDNN versions
    >>> "PaddlePaddle or TensorFlow" in collect_text("en", ["PyTorch DataParallel hangs on 2 GPUs"])
    False
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.diagnose.compat import check, table_for
from bot.diagnose.environment import read_environment
from bot.engine.subjects import Lexicon

# Bounded quantifiers only: these run over every message of the conversation (a pasted log of 100,000 characters).
_LOG = re.compile(
    r"Traceback \(most recent call last\)|^[\w.]{0,80}(?:Error|Exception)\b[^\n:]{0,200}:|^[IWEF]\d{4}\s\d\d:\d\d",
    re.MULTILINE,
)
_NVIDIA_SMI = re.compile(r"NVIDIA-SMI|Driver Version\s{0,3}:", re.IGNORECASE)
_SEP = r"\s{0,3}(?:version|版本)?\s{0,3}(?:is|为|是)?\s{0,3}(?:==|[:：=])?\s{0,3}v?"
_CUDA = re.compile(
    rf"\bcuda(?:\s{{0,3}}toolkit)?{_SEP}\d+(?:\.\d+)?|\bcu\d{{3}}\b|Runtime API Version\s{{0,3}}:\s{{0,3}}\d"
    r"|release \d+\.\d+, V\d",
    re.IGNORECASE,
)
_CUDNN = re.compile(rf"\bcudnn{_SEP}\d", re.IGNORECASE)
# A framework's version as people write it: "paddlepaddle-gpu==2.5.1", "TF 2.1", "torch 1.13", "paddle 版本 2.4".
_FRAMEWORK_VERSION = {
    "PaddlePaddle": r"paddle(?:paddle)?(?:[-_]gpu)?",
    "TensorFlow": r"tensorflow(?:[-_]gpu)?|\btf",
    "PyTorch": r"pytorch|torch",
}
_VERSION_AFTER = _SEP + r"\d+\.\d+"

TEXTS = {
    "en": {
        "head": "To pin the problem down, please add:",
        "log": "the full error log (from the first Error or Traceback line)",
        "smi": "the output of `nvidia-smi`",
        "cuda_cudnn": "your CUDA and cuDNN versions",
        "cuda": "your CUDA version",
        "cudnn": "your cuDNN version",
        "framework": "your {names} version",
        "any_framework": "your framework and its version",
        "or": " or ",
    },
    "zh": {
        "head": "为了更准确地定位问题，请补充以下信息：",
        "log": "完整的报错日志（从第一条 Error 或 Traceback 开始）",
        "smi": "`nvidia-smi` 的输出",
        "cuda_cudnn": "CUDA、cuDNN 版本",
        "cuda": "CUDA 版本",
        "cudnn": "cuDNN 版本",
        "framework": "{names} 的版本",
        "any_framework": "所用框架及其版本",
        "or": " 或 ",
    },
}


def frameworks_in_play(held: Sequence[str]) -> list[str]:
    """The frameworks the conversation names (a product counts as its framework: Keras -> TensorFlow)."""
    lexicon = Lexicon.load()
    found = lexicon.find("\n".join(held))
    return sorted(name for name in found if lexicon.category(name) == "framework")


# The package names a pasted environment lists, by framework: a `pip list` row is that framework's version.
_PACKAGE_OF = {"PaddlePaddle": "paddle", "TensorFlow": "tensorflow", "PyTorch": "torch"}


def missing(held: Sequence[str]) -> list[str]:
    r"""Keys of the details no message in ``held`` gives: "log", "smi", "cuda", "cudnn", "framework".

    What a pasted environment shows counts as given (a `pip list` row is the framework's version, the `nvidia-smi`
    header the driver and CUDA); when those versions already show the mismatch, nothing more is asked: the
    environment is the answer.

    >>> missing(["为什么 Paddle 训练时不用 GPU？\nDriver Version: 535.104.05   CUDA Version: 12.2\npaddlepaddle     2.6.1"])
    []
    >>> missing(["Paddle 训练很慢\npaddlepaddle-gpu     2.6.1.post120"])
    ['log', 'smi', 'cuda', 'cudnn']
    """
    joined = "\n".join(held)
    env = read_environment(joined)
    if not env.is_empty and check(env, table_for(None)).status == "mismatch":
        return []
    out = []
    if not _LOG.search(joined):  # a message is read once (bot.engine.message): no log detector run again here
        out.append("log")
    if not _NVIDIA_SMI.search(joined) and not env.driver:
        out.append("smi")
    if not _CUDA.search(joined) and not (
        env.cuda_toolkit or env.cuda_runtime or env.build_cuda or env.image_cuda or env.cuda_driver_api
    ):
        out.append("cuda")
    if not _CUDNN.search(joined) and not (env.cudnn or env.cudnn_loaded or env.build_cudnn or env.image_cudnn):
        out.append("cudnn")
    named = frameworks_in_play(held)
    listed = {p.name for p in env.packages}
    versioned = [
        name
        for name in named
        if name in _FRAMEWORK_VERSION
        and (
            re.search(f"(?:{_FRAMEWORK_VERSION[name]}){_VERSION_AFTER}", joined, re.I)
            or any(p.startswith(_PACKAGE_OF[name]) for p in listed)
        )
    ]
    if not named or len(versioned) < len(named):
        out.append("framework")
    return out


def collect_text(language: str, held: Sequence[str]) -> str:
    """ "Please add: …" with only what ``held`` (the conversation's messages) lacks; "" when it lacks nothing."""
    t = TEXTS["zh" if language == "zh" else "en"]
    lacking = missing(held)
    items = []
    if "log" in lacking:
        items.append(t["log"])
    if "smi" in lacking:
        items.append(t["smi"])
    if "cuda" in lacking and "cudnn" in lacking:
        items.append(t["cuda_cudnn"])
    elif "cuda" in lacking or "cudnn" in lacking:
        items.append(t["cuda" if "cuda" in lacking else "cudnn"])
    if "framework" in lacking:
        named = frameworks_in_play(held)
        items.append(t["framework"].format(names=t["or"].join(named)) if named else t["any_framework"])
    if not items:
        return ""
    return t["head"] + "\n\n" + "\n".join(f"- {item}" for item in items)
