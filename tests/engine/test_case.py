"""The conversation as a case: moves, ranking and judging against the case, one path for ask and calibrate."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import numpy as np
import pytest

from bot.answer.conversation import Conversation
from bot.engine.calibration import Calibration, calibration_path, sources_fingerprint
from bot.engine.case import asks, is_not_helpful, move_of, says_still, starts_new_topic
from bot.engine.judge import judge
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.kb.eras import newer_release, old_releases
from bot.records import Case, Section
from fixtures.engines import hash_engine

NCCL_CASE = Case(search="单机多卡 Nccl error 怎么办", problem=frozenset({"NCCL"}), setting=frozenset({"multi-card"}))


# ---------------------------------------------------------------- moves (pure)


@pytest.mark.parametrize(
    "message, move",
    [
        ("那多机呢？", "follow_up"),
        ("what about TensorFlow?", "follow_up"),
        ("没用", "retry"),
        ("还是不行", "retry"),
        ("tried that, still failing", "retry"),
        ("ping 是通的，两边命令也一模一样", "retry"),  # a report of what happens now, not a question
        ("DataLoader 多进程是设 num_workers 吗？我发现好像还是只有一个进程", "retry"),  # says the fix failed
        ("is it set in ConfigProto? it doesn't seem to help", "retry"),
        ("另外一个问题：怎么指定用哪张 GPU 训练？", "switch"),
        ("unrelated: how do I pick a GPU?", "switch"),
        ("训练时 loss 变成 nan 了，学习率已经很小了，该怎么排查呢，有什么常见原因吗？", "switch"),
    ],
)
def test_how_a_message_moves_an_open_case(message, move):
    from bot.engine.subjects import Lexicon

    named = Lexicon.load().find(message)
    problems = frozenset(s for s in named if Lexicon.load().category(s) in ("error", "library", "feature", "task"))
    assert move_of(message, NCCL_CASE, problems=problems) == move


def test_without_a_case_every_message_is_new_and_a_log_of_another_problem_starts_one():
    assert move_of("那多机呢？", Case(), problems=frozenset()) == "new"
    log = 'Traceback (most recent call last):\n  File "a.py"\nRuntimeError: out of memory'
    assert move_of(log, NCCL_CASE, problems=frozenset({"GPU out of memory"}), is_log=True) == "switch"
    assert move_of(log, NCCL_CASE, problems=frozenset({"NCCL"}), is_log=True) == "retry"


def test_still_and_question_words_are_told_apart():
    assert says_still("batch 已经降到 4 了，还是爆") and says_still("still OOM after allow_growth")
    assert not says_still("那三个 FLAGS 是写在 shell 里还是 python 里？")  # "还是" as "or"
    assert asks("那三个 FLAGS 是写在 shell 里还是 python 里？") and not asks("恩。一直是0。use_gpu设置的true。")
    assert starts_new_topic("顺便问一下，纯 CPU 机器上训练怎么提速") and not starts_new_topic("还是不行")
    assert is_not_helpful("没用") and not is_not_helpful("NCCL doesn't work on two machines")


def test_an_old_section_is_not_a_confident_answer_for_a_newer_release():
    fluid = Section("a.md", "3.问题：Fluid1.2支持使用cuDNN6吗？", ("D",), 1, 2, "x", "可以。", "D")
    assert old_releases(fluid) == ("Fluid 1.x", "CUDA 7.5 / 8.0")
    assert newer_release("PaddleDetection on Windows with CUDA 12?", "CUDA 7.5 / 8.0") == "CUDA 12"
    assert newer_release("paddle 1.7 with cuda 8.0", "CUDA 7.5 / 8.0") == ""


# ---------------------------------------------------------------- one path: evidence -> rank -> judge


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    from fixtures.engines import hash_settings_for

    root = tmp_path_factory.mktemp("case")
    (root / "seeds").mkdir()
    (root / "seeds" / "faq.md").write_text(
        "# GPU FAQ\n\n## 问题：显存不足怎么办？\n\n+ 解决方法：减小 `batch_size`，设置 FLAGS_fraction_of_gpu_memory_to_use。\n\n"
        "## 问题：Loss 为 NaN 怎么办？\n\n+ 解决方法：降低学习率，检查数据和标签，做梯度裁剪。\n\n"
        "## 问题：多卡训练报错 Nccl error\n\n+ 解决方法：把 libnccl.so 所在目录加入 `LD_LIBRARY_PATH`。\n\n"
        "## 问题：如何指定 GPU？\n\n+ 解决方法：设置 `CUDA_VISIBLE_DEVICES=1`。\n",
        encoding="utf-8",
    )
    return hash_engine(hash_settings_for(root))


@pytest.mark.parametrize(
    "message, previous",
    [
        ("训练时显存不足怎么办", ""),
        ("loss 变成 nan", ""),
        ("那多卡呢？", "显存不足"),
        ("没用", "loss 变成 nan"),
        ("Traceback (most recent call last):\nRuntimeError: NCCL error unhandled system error", ""),
    ],
)
def test_ask_is_evidence_then_rank_then_judge(engine, message, previous):
    case = engine.ask(previous).case if previous else Case()
    answer = engine.ask(message, case=case)
    evidence = engine.evidence(message, case)
    ranking = rank(evidence, engine.calibration.weights)
    verdict = judge(engine.catalog, evidence, ranking, engine.calibration)
    assert [h.section.key for h in answer.hits] == [engine.sections[n].key for n in ranking.order]
    assert (answer.tier, answer.confidence, answer.reason) == (verdict.tier, verdict.probability, verdict.reason)
    assert answer.move == evidence.move


def test_rank_is_pure_and_follows_the_weights(engine):
    evidence = engine.evidence("显存不足 nan")
    a = rank(evidence, engine.calibration.weights)
    b = rank(evidence, engine.calibration.weights)
    assert a.order == b.order and np.array_equal(a.scores, b.scores)
    other = rank(evidence, dataclasses.replace(engine.calibration.weights, lexical=3.0))
    assert not np.array_equal(a.scores, other.scores)


def test_a_retry_never_shows_what_led_the_case_before(engine):
    talk = Conversation(engine)
    first = talk.respond("loss 变成 nan 了怎么办")
    led = first.shown[0].hit.section.key
    for message in ("没用", "still not working", "数据和标签都检查过了，还是 nan"):
        reply = talk.respond(message)
        assert all(s.hit.section.key != led for s in reply.shown[:1]), message
    assert talk.last.move == "retry" and led in talk.case.shown


def test_only_a_turn_that_says_the_fix_failed_leaves_out_the_section_shown(engine):
    """Issue 25's convention: a report without a failure word ("学习率调小就可以了") may be answered by the section
    already shown; "还是 nan" may not."""
    case = engine.ask("loss 变成 nan 了怎么办").case
    led = engine.catalog.by_key[case.shown[0]]
    report = engine.evidence("好的，学习率调小就可以了", case)
    failed = engine.evidence("数据和标签都检查过了，还是 nan", case)
    assert report.move == failed.move == "retry"
    assert report.allowed[led] and not failed.allowed[led]


def test_a_calibration_for_other_documents_is_not_used(engine, caplog):
    path = calibration_path(engine.settings.index_dir, engine.embedder.id)
    fitted = dataclasses.replace(
        Calibration.default(engine.embedder.id),
        calibrated=True,
        answer_threshold=0.5,
        sources_hash=sources_fingerprint({"other.md": "0"}),
    )
    fitted.save(path)
    try:
        with caplog.at_level(logging.WARNING, logger="bot.engine.calibration"):
            reopened = Engine(engine.index, engine.embedder, engine.settings)
        assert not reopened.calibration.calibrated and reopened.calibration.figures.get("stale")
        assert "python -m bot calibrate" in caplog.text and str(path) in caplog.text
        same = dataclasses.replace(fitted, sources_hash=sources_fingerprint(engine.index.manifest["sources"]))
        same.save(path)
        assert Engine(engine.index, engine.embedder, engine.settings).calibration.calibrated
    finally:
        path.unlink()


# ---------------------------------------------------------------- bad input in a conversation


def test_a_long_conversation_of_odd_messages_always_gets_a_sensible_reply(engine):
    talk = Conversation(engine)
    assert "描述" in talk.respond("没用").markdown  # "didn't help" as the very first message: nothing to retry
    log = 'Traceback (most recent call last):\n  File "train.py", line 3\nRuntimeError: NCCL error\n' * 3
    messages = [
        "显存不足怎么办",
        "what about multi-GPU?",
        log,
        "没用",
        "?!",
        "😀",
        "…",
        "",
        "   ",
        "\x00\x01",
        "谢谢",
        "PaddleOCR 准确率低",
        "still failing",
        "那多机呢？",
        "x" * 200_000,
    ]
    for n in range(100):
        message = messages[n % len(messages)]
        reply = talk.respond(message)
        assert reply.markdown.strip(), (n, message[:20])
        assert reply.language in ("zh", "en") and reply.tier in ("answer", "tentative", "none")
    assert len(talk.turns) <= 100


# ---------------------------------------------------------------- the real knowledge base


@pytest.mark.model
@pytest.mark.parametrize(
    "first, follow, wanted, not_wanted",
    [
        ("单机多卡 Nccl error 怎么办", "那多机呢？", "003_", "2.6 开发模型推理程序"),
        ("How do I stop TensorFlow from grabbing all GPU memory?", "what about PaddlePaddle?", "002_", "CPU"),
        ("训练时显存不足怎么办", "what about TensorFlow?", "004_", ""),
    ],
)
def test_follow_ups_keep_the_problem_and_change_the_setting(seeds_engine, first, follow, wanted, not_wanted):
    talk = Conversation(seeds_engine)
    talk.respond(first)
    reply = talk.respond(follow)
    top = reply.shown[0].hit.section
    assert top.source.startswith(wanted), (follow, top.key)
    assert not not_wanted or not_wanted not in top.heading


@pytest.mark.model
def test_after_nan_didnt_help_is_not_the_nan_section_again_and_m1_is_not_confident(seeds_engine):
    talk = Conversation(seeds_engine)
    nan = talk.respond("loss 跑着跑着变成 nan 了").shown[0].hit.section.key
    assert talk.respond("没用，数据和标签都检查过了").shown[0].hit.section.key != nan
    talk = Conversation(seeds_engine)
    talk.respond("multi-card training fails with NCCL error")
    assert talk.respond("and on an Apple M1 Mac?").tier != "answer"
    assert Conversation(seeds_engine).respond("PaddleDetection on Windows with CUDA 12?").tier != "answer"


def test_requests_refinements_and_asks_for_another_way_move_the_case_as_people_mean_them():
    memory = Case(search="How can I allocate GPU memory? tensorflow v2", problem=frozenset({"GPU memory settings"}))
    # A request without a question mark asks for something next; it does not report that the answer failed.
    assert (
        move_of(
            "Thanks. I want to set the limit rate of gpu ram. such as 'per_process_gpu_memory_fraction = 0.3'.",
            memory,
            problems=frozenset({"GPU memory settings"}),
        )
        == "follow_up"
    )
    freeze = Case(search="怎么让某一层的权重不参与训练", problem=frozenset({"freeze layers"}))
    assert move_of("还有别的写法吗", freeze, problems=frozenset()) == "retry"
    # A case that never named its problem ("训练报错") is refined by a report that names one, not left.
    unnamed = Case(search="飞桨2.0rc单机多卡训练 HAPI样例报错", setting=frozenset({"multi-card"}))
    assert (
        move_of(
            "看了一下，好像没有看到nccl的相关信息，只有 device_context 的日志", unnamed, problems=frozenset({"NCCL"})
        )
        == "retry"
    )
    off_topic = Case(search="how do I bake sourdough bread at home")
    assert move_of("NCCL timeout on 8 GPUs", off_topic, problems=frozenset({"NCCL"})) == "switch"


@pytest.mark.model
def test_a_full_follow_up_question_gets_the_same_section_again_only_when_its_own_words_point_to_it(seeds_engine):
    talk = Conversation(seeds_engine)
    compress = talk.respond("训练出来的 paddle 模型 230MB，放到手机上太大了").shown[0].hit.section.key
    assert talk.respond("剪枝和量化 PaddleSlim 都能做吗").shown[0].hit.section.key == compress
    talk = Conversation(seeds_engine)
    oom = talk.respond("文本数据增强后，显存溢出。即使是将batch_size调小也同样会出问题").shown[0].hit.section.key
    assert talk.respond("是的，区别只有是否注释了数据增强那句").shown[0].hit.section.key != oom


@pytest.mark.model
def test_boilerplate_and_links_do_not_set_the_os_or_the_release(seeds_engine):
    log = (
        "多卡训练提示找不到libnccl.so\nEnforceNotMet: Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open "
        "shared object file: No such file or directory )\n Please specify its path correctly using following ways: "
        "set environment variable LD_LIBRARY_PATH on Linux or DYLD_LIBRARY_PATH on Mac OS."
    )
    assert "macOS" not in seeds_engine.ask(log).subjects
    freeze = seeds_engine.ask("在paddle2.1中冻结部分层的参数？请问paddle2.1中有没有固定部分层参数的接口？")
    assert freeze.reason is None or freeze.reason.code != "old_release", freeze.reason


@pytest.mark.model
def test_a_product_users_framework_problem_is_answered(seeds_engine):
    for question in ("PaddleDetection 训练 yolov3 时 loss 变成 nan", "PaddleOCR 训练时显存不足 out of memory 怎么办"):
        answer = seeds_engine.ask(question)
        assert answer.tier == "answer", (question, answer.reason)


def test_conversation_files_are_read_with_their_line_on_error(tmp_path: Path):
    from bot.fit.evaluate_turns import is_conversation_file, read_conversations

    good = tmp_path / "c.jsonl"
    good.write_text(json.dumps({"turns": [{"query": "a", "expect": []}], "kind": "drift"}) + "\n", encoding="utf-8")
    assert is_conversation_file(good) and read_conversations(good)[0]["turns"][0]["query"] == "a"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"turns": [{"expect": []}]}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        read_conversations(bad)


def test_the_embedder_reads_a_follow_up_before_the_cases_long_first_post(engine, monkeypatch):
    """The embedder reads only the head of a long text: after a first post with a long log, the follow-up's words
    would be cut from the case's search (context carried too much); they come first."""
    case = engine.ask("loss 变成 nan 了怎么办\n" + "step 1 loss nan lr 0.1\n" * 300).case
    seen: list[str] = []
    embed = engine.embedder.embed
    monkeypatch.setattr(engine.embedder, "embed", lambda texts, role: seen.extend(texts) or embed(texts, role))
    engine.evidence("那多卡呢？", case)
    joined = [t for t in seen if "step 1" in t]
    assert joined and all(t.startswith("那多卡呢？") for t in joined)
