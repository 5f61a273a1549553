"""The one-line reason behind a tier that is not a plain answer, in the user's language.

The engine says *why* as a code and keys (:class:`bot.records.Reason`); this module writes it.

    >>> reason("en", "uncovered", subjects=["Jetson"], closest="Out of GPU memory during training")
    'No document here covers Jetson; the closest is about “Out of GPU memory during training”.'
    >>> reason("zh", "weak", closest="显存不足")
    '知识库中没有与此明确对应的内容；最接近的是“显存不足”，可能并不适用。'
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.engine.subjects import Lexicon
from bot.kb.meta import SectionMeta
from bot.records import Answer, Section

REASONS: dict[str, dict[str, str]] = {
    "zh": {
        "uncovered": "知识库中没有关于 {subjects} 的文档；最接近的是“{closest}”。",
        "uncovered_top": "最接近的“{closest}”没有涉及 {subjects}，可能并不适用。",
        "weak": "知识库中没有与此明确对应的内容；最接近的是“{closest}”，可能并不适用。",
        "nothing": "知识库中没有与此相近的内容。",
        "empty": "消息中没有可检索的问题或报错文字。",
        "uncalibrated": "（此索引的嵌入模型尚未校准，置信度采用保守的默认设置。）",
        "retry_none": "知识库中没有更多适用于这个问题的内容。",
        "old_release": "最接近的“{closest}”是为 {era} 写的，而你用的是 {release}，可能并不适用。",
        "setting_conflict": "最接近的“{closest}”是为其他环境写的，不涉及 {subjects}，可能并不适用。",
    },
    "en": {
        "uncovered": "No document here covers {subjects}; the closest is about “{closest}”.",
        "uncovered_top": "The closest section, “{closest}”, does not cover {subjects} and may not apply.",
        "weak": "Nothing here clearly matches; the closest is about “{closest}” and may not apply.",
        "nothing": "Nothing in the knowledge base is close to this question.",
        "empty": "The message has no question or error text to search.",
        "uncalibrated": "(Confidence is not calibrated for this index's embedder; a conservative default is used.)",
        "retry_none": "The knowledge base has nothing more that fits this question.",
        "old_release": "The closest section, “{closest}”, was written for {era}; you use {release}, so it may not apply.",
        "setting_conflict": "The closest section, “{closest}”, is written for another environment than {subjects} "
        "and may not apply.",
    },
}


# Lines that describe the environment, not the problem: a version ("cuDNN Version: 8.4", "驱动：CUDA 8.0和cuDNN 7"),
# a log's banner (glog "W1124 10:00:03.1 123 file.cc:91]", "LAUNCH INFO 2026-…", a timestamped logger line) or a
# traceback's file line. A subject named only there is not what the user asks about (issue 26: a 48-line NCCL log
# was "does not cover cuDNN" because Paddle's start-up banner prints the cuDNN version).
# Every quantifier is bounded or over disjoint characters, so a 100,000-character line is matched in linear time.
_ENVIRONMENT_LINE = re.compile(
    r"(?:version|版本|\bver\.?)\s{0,3}(?:is|为|是)?\s{0,3}[:：=]?\s{0,3}v?\d"
    r"|^\s{0,8}[IWEF]\d{4}\s{1,4}\d\d:\d\d"
    r"|^\s{0,8}(?:\[?[A-Z]{1,12}\]?\s{1,4})?(?:INFO|WARNING|WARN|DEBUG|ERROR)\s{1,4}\d{4}-\d\d-\d\d"
    r"|^\s{0,8}\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d"
    r'|^\s{0,8}File\s{1,4}"',
    re.IGNORECASE,
)
# "驱动：CUDA 8.0和cuDNN 7", "GPU: P40": a short label, then a short value of names and numbers.
_LABELLED = re.compile(r"^\s{0,8}[\w\u4e00-\u9fff ]{1,16}[:：]\s{0,4}([\w.,，;；、+\- ]{1,60})$")


def _environment(line: str) -> bool:
    if _ENVIRONMENT_LINE.search(line):
        return True
    labelled = _LABELLED.match(line)
    return bool(labelled and re.search(r"\d", labelled.group(1)) and len(labelled.group(1).split()) <= 8)


_FILE_LINE = re.compile(r'^\s{0,8}File\s{1,4}"')  # a traceback's frame line
# Paths and URLs ("/usr/lib/libcudnn.so.8") name a file, not a subject: words holding a slash are left out.


def subject_text(query: str, signature: str = "") -> str:
    r"""What a message is about: its error signature and its lines that are not versions, banners or
    traceback file lines, with paths left out.

    >>> subject_text("W1124 10:00:03.1 1 gpu.cc:91] device: 0, cuDNN Version: 8.4.\nOSError: NCCL error", "NCCL error")
    'NCCL error\nOSError: NCCL error'
    >>> subject_text("多卡训练很慢\n驱动：CUDA 8.0和cuDNN 7\n见 /usr/local/cuda/lib64")
    '多卡训练很慢\n见'
    """
    kept = [
        " ".join(w for w in line.split() if "/" not in w and "\\" not in w)
        for line in query.splitlines()
        if not _environment(line)
    ]
    return "\n".join(line for line in [signature.strip(), *kept] if line)


def named_subjects(
    subjects: tuple[str, ...] | list[str], query: str, signature: str, closest: Section | None
) -> tuple[str, ...]:
    r"""The subjects a reason may name: not one the message names only in a version line, a banner or a path,
    and not a product or API of a framework the closest section is about (Keras, tf.keras -> TensorFlow).

    >>> named_subjects(("Keras",), "Keras model.fit does not use my GPU", "", Section("t.md", "GPU", ("T",), 1, 2,
    ...     "g", "TensorFlow uses the GPU", "TensorFlow"))
    ()
    >>> named_subjects(("cuDNN", "Jetson"), "device: 0, cuDNN Version: 8.4.\nNCCL error on Jetson", "", None)
    ('Jetson',)
    """
    lexicon = Lexicon.load()
    in_message = lexicon.find(query)
    about = lexicon.find(subject_text(query, signature))
    # A traceback's file paths do say which framework raised the error (".../site-packages/torch/nn/…"): that one
    # framework counts, while libraries and versions named in paths or banners still do not.
    frames = " ".join(
        line.replace("/", " ").replace("\\", " ") for line in query.splitlines() if _FILE_LINE.match(line)
    )
    about |= {
        name
        for name in lexicon.find(frames)
        if (s := lexicon.subjects.get(name)) is not None and s.category == "framework"
    }
    covered = lexicon.find(f"{closest.title}\n{closest.heading}\n{closest.text}") if closest is not None else set()
    kept = []
    for name in subjects:
        if name in in_message and name not in about:  # named only where the environment is described
            continue
        subject = lexicon.subjects.get(name)
        if subject is not None and subject.category != "framework" and set(subject.implies) & covered:
            continue  # a product or API of the framework the section is about counts as that framework
        kept.append(name)
    return tuple(kept)


def shorten(value: str, limit: int) -> str:
    """``value`` in at most ``limit`` characters, cut at a word boundary with "…" (Chinese: at any character).

    >>> shorten("Enable GPU in TensorFlow: check cards with nvidia-smi, install tensorflow-gpu, verify", 70)
    'Enable GPU in TensorFlow: check cards with nvidia-smi, install…'
    """
    value = " ".join(value.split())
    if len(value) <= limit:
        return value
    cut = value[: limit - 1]
    if not _CJK_CHAR.match(value[limit - 1]) and not _CJK_CHAR.match(cut[-1]):
        space = max(cut.rfind(" "), 0)
        if space > limit // 2:
            cut = cut[:space]
    return cut.rstrip(" ,;:，；：、-") + "…"


_CJK_CHAR = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


def reason(
    language: str,
    code: str,
    *,
    subjects: list[str] | tuple[str, ...] = (),
    closest: str = "",
    release: str = "",
    era: str = "",
) -> str:
    table = REASONS["zh" if language == "zh" else "en"]
    joiner = "、" if language == "zh" else ", "
    return table[code].format(subjects=joiner.join(subjects), closest=shorten(closest, 80), release=release, era=era)


def section_label(section: Section, meta: SectionMeta | None, language: str) -> str:
    """A section's name for a sentence: the curated English title in English, else the heading
    without review markers, numbering and the "问题：" prefix.

    >>> section_label(Section("a.md", "`已审核` 3. 问题：显存不足？", ("D",), 1, 2, "x", "", "D"), None, "zh")
    '显存不足？'
    """
    if language != "zh" and meta is not None and meta.title_en.strip():
        return meta.title_en.strip()
    label = re.sub(r"^`?已审核`?\s*(?:\d+\s*[.、．]\s*)?", "", section.heading)
    label = re.sub(r"^\d+\s*[.、．]\s*(?=问题)", "", label)
    return re.sub(r"^问题\s*[:：]\s*", "", label).strip() or section.heading


def reason_text(answer: Answer, meta: Callable[[str], SectionMeta | None], language: str) -> str:
    """The engine's reason for ``answer`` (a code and keys) as one line in ``language`` ("" for a plain answer)."""
    found = answer.reason
    if found is None:
        return ""
    closest = next((h.section for h in answer.hits if h.section.key == found.closest), None)
    label = section_label(closest, meta(closest.key), language) if closest is not None else ""
    code, subjects = found.code, tuple(found.subjects)
    if code in ("uncovered", "uncovered_top", "setting_conflict"):
        subjects = named_subjects(subjects, answer.query, answer.signature, closest)
        if not subjects:  # what remained was incidental: say only that the match is weak
            code = "weak"
    return reason(language, code, subjects=subjects, closest=label, release=found.release, era=found.era)
