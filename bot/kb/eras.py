"""Which old release a section was written for, and whether a question names a newer one.

A knowledge base of FAQs collects answers written for Fluid 1.x, CUDA 8 or TensorFlow 1.x
sessions. Such a section may still be the closest material, but it is never a confident
answer to a question that names a newer release (the engine makes it tentative and the reply
says which release the section was written for).

    >>> newer_release("paddlepaddle-gpu==2.6.1 训练时显存不足", "Fluid 1.x")
    'PaddlePaddle 2.6'
    >>> newer_release("Windows, CUDA 12.1, cudnn 8.9", "CUDA 7.5 / 8.0")
    'CUDA 12.1'
    >>> newer_release("tensorflow 2.4 allow_growth", "TensorFlow 1.x"), newer_release("显存不足", "Fluid 1.x")
    ('TensorFlow 2.4', '')

An era comes only from an explicit statement of a version ("Fluid 1.2", "Fluid版", "版本号：1.1.0",
"PaddlePaddle 1.8"), never from an API name alone: ``paddle.fluid`` lived on in 2.x, and a section that
states a 2.0 or newer release ("飞桨 2.0") is written for it, whatever else it names.
"""

from __future__ import annotations

import re

from bot.records import Section

_A = r"(?<![A-Za-z0-9_])"  # ASCII word edges: CJK text around a term is not part of it
_Z = r"(?![A-Za-z0-9_])"
_ERAS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "Fluid 1.x",
        re.compile(
            _A
            + r"fluid\s{0,3}(?:v?[01]\.(?:\d{1,2}|x)(?![\d])|版本?|version)|版本号\s*[:：]\s*`?[01]\.\d+|"
            + _A
            + r"(?:paddle(?:paddle)?|飞桨)\s{0,3}(?:v|版本|version)?\s{0,3}1\.(?:\d{1,2}|x)(?![\d.])",
            re.IGNORECASE,
        ),
    ),
    (
        "PaddlePaddle v1/v2",
        re.compile(
            r"paddle\.v2" + _Z + "|" + _A + r"paddle(?:paddle)?\s*v[12]" + _Z + "|" + _A + r"v2\s*api", re.IGNORECASE
        ),
    ),
    (
        "CUDA 7.5 / 8.0",
        re.compile(_A + r"cuda\s*(?:7\.\d|8\.0)(?![\d.])|" + _A + r"cudnn\s*v?[4-6](?![\d])", re.IGNORECASE),
    ),
    (
        "TensorFlow 1.x",
        re.compile(
            r"tf\.Session"
            + _Z
            + "|"
            + _A
            + r"ConfigProto"
            + _Z
            + r"|tf\.placeholder"
            + _Z
            + "|"
            + _A
            + r"tensorflow\s*1\.\d+",
            re.IGNORECASE,
        ),
    ),
)
# A release newer than each era, as users name it: "paddlepaddle-gpu==2.6.1", "PaddlePaddle 3.0", "CUDA 11.8",
# "cu118", "cuDNN 8", "tensorflow 2.12", "TF 2.x". Bounded repetitions keep every pattern linear.
_PADDLE_NEW = re.compile(
    _A + r"paddle(?:paddle)?(?:[-_]gpu)?\s{0,3}(?:==|版本|version|v)?\s{0,3}[:：]?\s{0,3}([23]\.\d{1,2})", re.IGNORECASE
)
_CUDA_NEW = re.compile(
    _A
    + r"cuda\s{0,3}(?:版本|version|toolkit)?\s{0,3}[:：]?\s{0,3}(9|1[0-3])(\.\d{1,2})?(?![\d])|"
    + _A
    + r"cu(1[0-3]\d)"
    + _Z
    + "|"
    + _A
    + r"cudnn\s{0,3}(?:版本|version)?\s{0,3}[:：]?\s{0,3}v?([7-9])(\.\d{1,2})?(?![\d])",
    re.IGNORECASE,
)
_TF_NEW = re.compile(
    _A
    + r"(?:tensorflow(?:[-_]gpu)?|tf)\s{0,3}(?:==|版本|version)?\s{0,3}[:：]?\s{0,3}(2\.(?:\d{1,2}|x))"
    + _Z
    + "|"
    + _A
    + r"tf2"
    + _Z,
    re.IGNORECASE,
)

# A section that states a Paddle release of 2.0 or newer ("飞桨 2.0", "PaddlePaddle 2.x", "paddle 2.1") is written for
# it, even where it names Fluid (a 2.0 migration FAQ: "fluid 1.x 的 API 在 2.0 中 …").
_PADDLE_2 = re.compile(
    r"(?:"
    + _A
    + r"paddle(?:paddle)?(?:[-_]gpu)?|飞桨)\s{0,3}(?:==|版本|version|v)?\s{0,3}[:：]?\s{0,3}[23]\.(?:\d{1,2}|x)",
    re.IGNORECASE,
)


_URL = re.compile(
    r"https?://\S{1,2000}|\]\([^)\s]{1,2000}\)"
)  # a link's path ("/api/paddle/fluid/…") dates the site, not the answer


def _own_text(section: Section) -> str:
    return _URL.sub(" ", "\n".join([*section.path, section.heading, section.text[:20_000]]))


def old_release(section: Section) -> str:
    """The old release a section was written for ("" when nothing says so).

    >>> old_release(Section("a.md", "3.问题：Fluid1.2支持使用cuDNN6吗？", ("D",), 1, 2, "x", "可以。", "D"))
    'Fluid 1.x'
    >>> old_release(Section("a.md", "管理GPU RAM", ("D",), 1, 2, "x", "sess = tf.Session(config=config)", "D"))
    'TensorFlow 1.x'
    >>> old_release(Section("a.md", "显存不足", ("D",), 1, 2, "x", "减小 batch_size", "D"))
    ''
    """
    found = old_releases(section)
    return found[0] if found else ""


def old_releases(section: Section) -> tuple[str, ...]:
    """Every old release a section names (a Fluid FAQ about cuDNN 6 is both Fluid 1.x and CUDA 8 era).

    >>> old_releases(Section("a.md", "3.问题：Fluid1.2支持使用cuDNN6吗？", ("D",), 1, 2, "x", "可以。", "D"))
    ('Fluid 1.x', 'CUDA 7.5 / 8.0')
    >>> old_releases(Section("a.md", "不训练某层", ("D",), 1, 2, "x", "[参考](https://x.org/api/paddle/fluid/param_attr)", "D"))
    ()

    Only an explicit version dates a section: an API name does not, and a stated 2.x release wins.

    >>> old_releases(Section("a.md", "加载参数", ("D",), 1, 2, "x", "用 fluid.io.load_params 加载。", "D"))
    ()
    >>> old_releases(Section("a.md", "飞桨2.0 中 fluid 接口还能用吗", ("飞桨 2.0",), 1, 2, "x", "paddle.fluid 仍可用。", "D"))
    ()
    >>> old_releases(Section("a.md", "用 Fluid 版吗", ("D",), 1, 2, "x", "PaddlePaddle 1.8 的 fluid 接口。", "D"))
    ('Fluid 1.x',)
    """
    text = _own_text(section)
    newer_paddle = bool(_PADDLE_2.search(text))
    return tuple(
        label
        for label, pattern in _ERAS
        if pattern.search(text) and not (newer_paddle and label in ("Fluid 1.x", "PaddlePaddle v1/v2"))
    )


def newer_release(text: str, era: str) -> str:
    """The release newer than ``era`` that ``text`` names (e.g. "CUDA 12.1"), or "" when it names none."""
    text = text[:20_000]
    if era in ("Fluid 1.x", "PaddlePaddle v1/v2"):
        match = _PADDLE_NEW.search(text)
        return f"PaddlePaddle {match.group(1)}" if match else ""
    if era == "CUDA 7.5 / 8.0":
        match = _CUDA_NEW.search(text)
        if not match:  # CUDA 8 sections come from Paddle's v1/v2 days: a Paddle 2.x user is newer too
            paddle = _PADDLE_NEW.search(text)
            return f"PaddlePaddle {paddle.group(1)}" if paddle else ""
        if match.group(1):
            return f"CUDA {match.group(1)}{match.group(2) or ''}"
        if match.group(3):
            return f"CUDA {match.group(3)[:2]}.{match.group(3)[2:]}"
        return f"cuDNN {match.group(4)}{match.group(5) or ''}"
    if era == "TensorFlow 1.x":
        match = _TF_NEW.search(text)
        return ("TensorFlow " + (match.group(1) or "2.x")) if match else ""
    return ""
