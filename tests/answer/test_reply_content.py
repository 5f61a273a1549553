"""What a reply says (issue 26): the fix shown even when unsure, true reasons, what to collect, steps, hand-off."""

from __future__ import annotations

from bot.answer.reasons import reason_text
from bot.answer.reply import format_no_match, short_title
from bot.kb.meta import SectionMeta
from bot.records import Answer, Hit, Reason, Section

BASE = "http://assistant.test/bot"

NCCL_TEXT = (
    "多卡训练时报 NCCL error。\n\n"
    "+ 解决方法：先打开调试信息：\n\n```bash\nexport NCCL_DEBUG=INFO\n```\n\n再运行 nccl-tests 检查通信。\n"
)


def nccl_section(n: int = 1, heading: str = "问题：多卡运行时报错 Nccl error，如何解决？") -> Section:
    from bot.kb.parse import parse_fields

    return Section(
        "faq.md",
        heading,
        ("GPU FAQ", heading),
        10 * n,
        10 * n + 8,
        f"q{n}",
        NCCL_TEXT,
        "GPU FAQ",
        parse_fields(NCCL_TEXT),
    )


def other_section(n: int, heading: str) -> Section:
    return Section("faq.md", heading, ("GPU FAQ", heading), 10 * n, 10 * n + 3, f"q{n}", "其他内容。", "GPU FAQ")


def tentative(query: str, *sections: Section, reason: Reason | None = None, language: str = "en") -> Answer:
    hits = tuple(Hit(section=s, score=1.0 - n / 10, matched_terms=("nccl",)) for n, s in enumerate(sections))
    return Answer(
        query=query,
        language=language,
        tier="tentative",
        hits=hits,
        reason=reason or Reason("weak", closest=sections[0].key),
    )


def no_meta(key: str):
    return None


# ---------------------------------------------------------------- the fix, even when unsure


def test_a_tentative_reply_shows_the_closest_sections_fix_with_its_citation_under_the_caution_line():
    a = tentative(
        "NCCL error on two GPUs",
        nccl_section(1),
        other_section(2, "问题：显存不足"),
        other_section(3, "问题：Loss 为 NaN"),
    )
    reply = format_no_match(a, no_meta, BASE, limit=100_000)
    md = reply.markdown
    assert md.startswith("⚠️ **May not apply:**")
    assert "export NCCL_DEBUG=INFO" in md, "the fix itself, not only its heading"
    assert md.index("May not apply") < md.index("export NCCL_DEBUG=INFO") < md.index("**Source:**")
    assert "lines 10–18" in md.split("**Source:**")[1].split("\n")[0], "the fix's citation line"
    others = md.split("<details>")[-1]
    assert "显存不足" in others and "Loss 为 NaN" in others, "the other candidates, collapsed"
    assert "显存不足" not in md.split("<details>")[0]


def test_a_none_reply_shows_no_fix():
    a = tentative("how do I bake bread", nccl_section(1))
    a = Answer(query=a.query, language="en", tier="none", hits=a.hits, reason=Reason("nothing"))
    md = format_no_match(a, no_meta, BASE, limit=100_000).markdown
    assert "export NCCL_DEBUG=INFO" not in md and "**Source:**" not in md


# ---------------------------------------------------------------- true reasons


NCCL_LOG = "\n".join(
    [
        "$ python -m paddle.distributed.launch --gpus 0,1 train.py",
        "LAUNCH INFO 2026-11-24 10:00:01,123 devices: 0,1",
        "W1124 10:00:03.123456 12345 gpu_resources.cc:61] Please NOTE: device: 0, GPU Compute Capability: 8.6, "
        "Driver API Version: 11.7, Runtime API Version: 11.7",
        "W1124 10:00:03.130000 12345 gpu_resources.cc:91] device: 0, cuDNN Version: 8.4.",
        *[f"I1124 10:00:04.{i:06d} 12345 program_interpreter.cc:212] New Executor is Running." for i in range(39)],
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.9/site-packages/paddle/distributed/parallel.py", line 1086, in init',
        "    paddle.distributed.barrier(group=group)",
        "OSError: (External) NCCL error(2), unhandled system error.",
        "LAUNCH ERROR 2026-11-24 10:00:10,002 Container failed !!!",
    ]
)


def test_a_subject_named_only_in_a_version_banner_is_not_a_reason():
    s = nccl_section(1, "问题：使用NVIDIA多卡运行Paddle时报错 Nccl error，如何解决？")
    a = Answer(
        query=NCCL_LOG,
        language="en",
        tier="tentative",
        hits=(Hit(s, 1.0),),
        signature="OSError: (External) NCCL error(2), unhandled system error.",
        reason=Reason("uncovered_top", subjects=("cuDNN",), closest=s.key),
    )
    assert len(NCCL_LOG.splitlines()) == 48
    said = reason_text(a, no_meta, "en")
    assert "cuDNN" not in said and "Nccl error" in said


def test_a_subject_the_user_asks_about_is_still_named():
    s = nccl_section(1)
    a = Answer(
        query="NCCL error on a Jetson board",
        language="en",
        tier="tentative",
        hits=(Hit(s, 1.0),),
        reason=Reason("uncovered_top", subjects=("Jetson",), closest=s.key),
    )
    assert "does not cover Jetson" in reason_text(a, no_meta, "en")


def test_keras_counts_as_tensorflow():
    s = Section(
        "tf.md",
        "enable GPU",
        ("TF", "enable GPU"),
        20,
        68,
        "enable-gpu",
        "Install tensorflow-gpu and check that TensorFlow sees the GPU.",
        "TF",
    )
    for query in ("Keras model.fit does not use my GPU", "tf.keras model trains on the CPU only"):
        a = Answer(
            query=query,
            language="en",
            tier="tentative",
            hits=(Hit(s, 1.0),),
            reason=Reason("uncovered", subjects=("Keras",), closest=s.key),
        )
        said = reason_text(a, no_meta, "en")
        assert "Keras" not in said and said.startswith("Nothing here clearly matches"), said


def test_headings_are_shortened_at_word_boundaries():
    from bot.answer.reasons import shorten

    title = "Enable GPU in TensorFlow: check cards with nvidia-smi, install tensorflow-gpu, verify the device list"
    meta = SectionMeta(anchor="enable-gpu", heading="enable GPU", title_en=title, summary_en="")
    s = Section("tf.md", "enable GPU", ("TF", "enable GPU"), 20, 68, "enable-gpu", "x", "TF")
    label = short_title(s, meta, "en")
    assert label.endswith("…") and not label.endswith(", v…")
    assert title.startswith(label[:-1]) and title[len(label) - 1] in " ,"
    a = Answer(
        query="Keras", language="en", tier="tentative", hits=(Hit(s, 1.0),), reason=Reason("weak", closest=s.key)
    )
    quoted = reason_text(a, lambda key: meta, "en").split("“")[1].split("”")[0]
    assert title.startswith(quoted.rstrip("…")) and title[len(quoted) - 1] in " ,", quoted
    assert shorten("问题：使用NVIDIA多卡运行Paddle时报错", 10) == "问题：使用NVID…"


# ---------------------------------------------------------------- steps: only what the document numbers

TF_SUMMARY = (
    "By default TensorFlow grabs all GPU memory and a second program fails with "
    "`failed to allocate 3.66G (3928915968 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY`.\n"
    "Three fixes: 1) set `CUDA_VISIBLE_DEVICES` per process; 2) take part of the memory with "
    "`config.gpu_options.per_process_gpu_memory_fraction = 0.4`; 3) set `config.gpu_options.allow_growth=True`."
)
TF_TEXT = (
    "默认情况下，TensorFlow会抓取所有GPU的RAM。否则报错：\n\n"
    "```\nE cuda_driver.cc:965] failed to allocate 3.66G from device: CUDA_ERROR_OUT_OF_MEMORY\n```\n\n"
    "通常有三种解决办法：\n1. 设置CUDA_VISIBLE_DEVICES环境变量。\n\n```\nCUDA_VISIBLE_DEVICES=0,1 python3 a.py\n```\n\n"
    "![GPU](/img/GPU-02.png)\n2. 设置TensorFlow程序只占用每个GPU内存的一部分。\n\n"
    "```\nconfig.gpu_options.per_process_gpu_memory_fraction = 0.4\n```\n\n"
    "3. 设置config.gpu_options.allow_growth=True。\n"
)


def tf_section() -> Section:
    return Section("tf.md", "管理GPU RAM", ("TF", "管理GPU RAM"), 70, 90, "ram", TF_TEXT, "TF")


def test_a_problem_description_ending_in_three_fixes_is_not_step_one():
    from bot.answer.reply import section_body

    meta = SectionMeta(anchor="ram", heading="管理GPU RAM", title_en="Managing GPU RAM", summary_en=TF_SUMMARY)
    body, _ = section_body(Hit(tf_section(), 1.0), meta, "en")
    assert "**1.** Set `CUDA_VISIBLE_DEVICES`" in body, body
    assert not any(line.startswith("**1.** By default") for line in body.splitlines())
    assert body.count("**") // 2 == 3 and "**4.**" not in body
    lead = body.split("**1.**")[0]
    assert "`failed to allocate 3.66G" in lead and "Three fixes:" in lead
    assert not any(line.strip() in (". Three fixes:", "Three fixes:") for line in body.splitlines())


def test_the_documents_numbered_items_are_the_steps_and_its_error_output_is_not_one():
    from bot.answer.reply import section_body

    body, _ = section_body(Hit(tf_section(), 1.0), None, "zh")
    first_step = body.index("**1.**")
    assert body.index("failed to allocate") < first_step, "the error output is the problem, before step 1"
    assert "**1.** 设置CUDA_VISIBLE_DEVICES" in body
    assert "**2.** 设置TensorFlow程序只占用" in body, "an item after an image line inside a paragraph is still step 2"
    assert "**3.** 设置config.gpu_options.allow_growth" in body


# ---------------------------------------------------------------- what to collect


def _composed(query: str, held: tuple[str, ...], language: str = "en") -> str:
    from bot.answer.reply import Scope, compose

    a = tentative(query, nccl_section(1), language=language)
    said = format_no_match(a, no_meta, BASE, limit=100_000)
    return compose(said, scope=Scope(("GPU FAQ",), 1, gpu=True), held=held).markdown


def test_no_request_for_a_log_or_versions_the_conversation_already_holds():
    log = NCCL_LOG.replace("cuDNN Version: 8.4.", "cuDNN Version: 8.4. PaddlePaddle version: 2.5.1")
    md = _composed(log, (log,))
    assert "error log" not in md and "CUDA and cuDNN" not in md and "cuDNN version" not in md
    assert "PaddlePaddle" not in md.split("May not apply")[1].split("**Source:**")[-1]
    assert "`nvidia-smi`" in md, "what the log does not hold is still asked for"
    first, later = "NCCL error on two GPUs", "Traceback (most recent call last):\nOSError: NCCL error(2)"
    assert "error log" not in _composed(later, (first, later)), "a log pasted in an earlier turn counts"


def test_only_the_frameworks_in_play_are_named():
    md = _composed("PyTorch DataParallel hangs on 2 GPUs", ("PyTorch DataParallel hangs on 2 GPUs",))
    assert "your PyTorch version" in md
    assert "PaddlePaddle or TensorFlow" not in md
    md = _composed("多卡训练卡住", ("多卡训练卡住",), "zh")
    assert "PaddlePaddle 或 TensorFlow" not in md and "所用框架及其版本" in md


# ---------------------------------------------------------------- a follow-up about a detail


def test_a_follow_up_about_a_detail_opens_the_section_at_the_matching_step_only():
    from bot.answer.focus import focus_reply

    meta = SectionMeta(anchor="ram", heading="管理GPU RAM", title_en="Managing GPU RAM", summary_en=TF_SUMMARY)
    hit = Hit(tf_section(), 1.0)
    reply = focus_reply(hit, lambda key: meta, BASE, "en", "what if I want it to use only 40%?")
    assert reply is not None and reply.tier == "answer"
    md = reply.markdown
    assert "per_process_gpu_memory_fraction = 0.4" in md
    assert "CUDA_VISIBLE_DEVICES" not in md and "allow_growth" not in md, "only the matching part, not the answer again"
    assert "By default TensorFlow grabs" not in md and "**Source:**" in md
    zh = focus_reply(hit, lambda key: None, BASE, "zh", "如果只想让它用 40% 的显存呢？")
    assert zh is not None and "per_process_gpu_memory_fraction = 0.4" in zh.markdown
    assert "allow_growth" not in zh.markdown and "CUDA_VISIBLE_DEVICES=0,1" not in zh.markdown


def test_a_follow_up_naming_no_single_part_is_answered_as_before():
    from bot.answer.focus import focus_reply

    assert focus_reply(Hit(tf_section(), 1.0), lambda key: None, BASE, "en", "and on Windows?") is None


def test_in_a_conversation_the_detail_follow_up_shows_only_that_step(tmp_path):
    from bot.answer.turn import take_turn
    from fixtures.engines import hash_engine, hash_settings_for

    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "tf.md").write_text(
        "# TensorFlow GPU\n\n## 管理GPU RAM\n\n" + TF_TEXT + "\n\n## 社群\n\n欢迎加入交流群。\n",
        encoding="utf-8",
    )
    engine = hash_engine(hash_settings_for(tmp_path))
    first, talk = take_turn(engine, "TensorFlow 报错 failed to allocate CUDA_ERROR_OUT_OF_MEMORY，GPU RAM 被占满")
    assert first.reply.shown and first.reply.shown[0].hit.section.heading == "管理GPU RAM"
    assert "allow_growth" in first.reply.markdown
    then, _ = take_turn(engine, "如果只想用 40% 呢？", conversation=talk)
    md = then.reply.markdown
    assert "per_process_gpu_memory_fraction = 0.4" in md, md
    assert "allow_growth" not in md and "CUDA_VISIBLE_DEVICES=0,1" not in md


def test_a_summary_in_prose_is_not_numbered_as_steps():
    from bot.answer.reply import section_body

    summary = (
        "TensorFlow's placer puts a node on the device it is pinned to; otherwise it defaults to GPU #0. "
        'Pin nodes with `with tf.device("/cpu:0"):`; set `config.log_device_placement = True` to log placement.'
    )
    meta = SectionMeta(anchor="p", heading="放置node", title_en="Placing ops", summary_en=summary)
    s = Section("tf.md", "放置node", ("TF", "放置node"), 92, 149, "p", "TensorFlow 的 placer。", "TF")
    body, _ = section_body(Hit(s, 1.0), meta, "en")
    assert "**1.**" not in body and "**2.**" not in body
    assert "config.log_device_placement = True" in body and body.startswith("TensorFlow's placer puts a node")
