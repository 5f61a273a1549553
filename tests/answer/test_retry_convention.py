"""The follow-up convention (issue 25) and "didn't help" only when said (issue 26, item 3).

A *retry* is a turn that says the fix shown did not work ("没用", "还是不行", "didn't help", "still X after Y",
"tried that"): its lead is never a section an earlier turn led with, and it alone is stored as "didn't help".
Any other later turn is a question of its own: no apology, no "didn't help"; it may lead with the section already
shown, opened at the lines that match its new detail (``Answer.focus``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.answer.conversation import Conversation
from bot.answer.texts import text
from bot.engine.case import says_failed
from bot.fit.evaluate_turns import read_conversations
from fixtures import REPO
from fixtures.engines import hash_engine, repo_seeds_hash_settings

CONVERSATION_FILES = sorted((REPO / "eval").glob("conversations*.jsonl"))


@pytest.fixture(scope="module")
def repo_hash_engine(tmp_path_factory: pytest.TempPathFactory):
    """The repository's documents with the hash embedder: ranking is rough, the conversation's rules are the same."""
    return hash_engine(repo_seeds_hash_settings(tmp_path_factory.mktemp("repo_hash")))


@pytest.mark.parametrize(
    "message, said",
    [
        ("没用", True),
        ("还是不行", True),
        ("that didn't help", True),
        ("still OOM after allow_growth", True),
        ("tried that, same error", True),
        ("batch_size 改成 1 试了，还是爆显存", True),
        ("setting allow_growth seems not to help", True),
        ("it doesn't seem to work on two GPUs", True),
        ("Keras model.fit does not use my GPU", False),
        ("which files do I change?", False),
        ("what if I want it to use only 40%?", False),
        ("ping 是通的，两边命令也一模一样", False),
        ("顺便问一下，怎么让一个op等另外两个op算完再执行？", False),
    ],
)
def test_only_a_message_that_says_the_fix_failed_is_a_retry(message, said):
    assert says_failed(message) is said


def _talk(engine, conversation: dict) -> list[tuple[str, list, list[str]]]:
    """Each turn's message, the events its reply records and the section keys every earlier turn led with."""
    talk = Conversation(engine)
    out, leads = [], []
    for turn in conversation["turns"]:
        reply = talk.respond(turn["query"])
        out.append((turn["query"], list(reply.events), list(leads), reply))
        if reply.shown:
            leads.append(reply.shown[0].hit.section.key)
    return out


@pytest.mark.parametrize("path", CONVERSATION_FILES, ids=lambda p: p.name)
def test_no_didnt_help_is_stored_for_a_turn_that_does_not_say_it_and_a_retry_never_repeats_a_lead(
    repo_hash_engine, path: Path
):
    misread, repeats, said_turns = [], [], 0
    for conversation in read_conversations(path):
        for n, (message, events, leads, reply) in enumerate(_talk(repo_hash_engine, conversation)):
            complained = any(e.kind == "not_helpful" for e in events)
            if complained and not says_failed(message):
                misread.append(message)
            if n and says_failed(message):
                said_turns += 1
                if reply.shown and reply.shown[0].hit.section.key in leads:
                    repeats.append(message)
    assert not misread, misread[:5]
    assert not repeats, repeats[:5]


def test_a_new_question_after_an_answer_is_a_question_not_a_complaint(repo_hash_engine):
    talk = Conversation(repo_hash_engine)
    talk.respond("TensorFlow takes all GPU memory, how do I limit it?")
    reply = talk.respond("Keras model.fit does not use my GPU")
    assert [e.kind for e in reply.events] == ["question"]
    assert text("en", "sorry") not in reply.markdown and text("en", "not_helpful") not in reply.markdown
    reply = talk.respond("still nothing on the GPU after installing tensorflow-gpu")
    assert [e.kind for e in reply.events] == ["not_helpful", "question"]


@pytest.mark.model
@pytest.mark.parametrize(
    "also",
    ["also, which card does it use, and how do I pick one?", "also, how can I set which gpu paddle uses for training"],
)
def test_also_a_new_question_after_a_multi_card_one_is_answered_on_its_own(seeds_engine, also):
    talk = Conversation(seeds_engine)
    talk.respond("多卡训练保存的模型重新加载后预测结果不一致")
    reply = talk.respond(also)
    top = reply.shown[0].hit.section
    assert "指定对应的GPU设备" in top.heading, top.heading
    assert [e.kind for e in reply.events] == ["question"]


@pytest.mark.model
def test_by_the_way_after_placing_nodes_asks_about_control_dependencies(seeds_engine):
    talk = Conversation(seeds_engine)
    talk.respond("tf.device 放置 node 到特定 GPU 怎么写")
    reply = talk.respond("好的，顺便问一下：tensorflow 怎么让 op x 等 a 和 b 都算完再算")
    assert reply.shown[0].hit.section.heading == "Control Dependencies"


@pytest.mark.model
def test_which_files_do_i_change_stays_with_the_freeze_layers_answer(seeds_engine):
    talk = Conversation(seeds_engine)
    freeze = talk.respond("paddle 怎么冻结某一层的参数").shown[0].hit.section.key
    reply = talk.respond("which files do I change?")
    assert reply.shown[0].hit.section.key == freeze
    assert [e.kind for e in reply.events] == ["question"]


@pytest.mark.model
def test_a_detail_about_the_shown_answer_opens_it_at_the_matching_lines(seeds_engine):
    talk = Conversation(seeds_engine)
    talk.respond("TensorFlow takes all GPU memory, how do I limit it?")
    read = seeds_engine.read("what if I want per_process_gpu_memory_fraction at 0.4?")
    answer = seeds_engine.ask(read, case=talk.case)
    lead = answer.hits[0].section
    assert lead.key in talk.case.shown and answer.move != "retry"
    lines = lead.text.splitlines()
    assert answer.focus and all("per_process_gpu_memory_fraction" in lines[n] for n in answer.focus)


@pytest.mark.model
def test_a_report_that_the_fix_worked_may_lead_with_the_section_shown(seeds_engine):
    talk = Conversation(seeds_engine)
    memory = talk.respond("TensorFlow takes all GPU memory, how do I limit it?").shown[0].hit.section.key
    reply = talk.respond("solved it with allow_growth, memory use went down to 2 GB")
    assert reply.shown[0].hit.section.key == memory
    assert [e.kind for e in reply.events] == ["question"]


@pytest.mark.model
def test_a_question_that_also_says_the_fix_failed_never_gets_the_shown_section_back(seeds_engine):
    talk = Conversation(seeds_engine)
    cpu = talk.respond("paddle 能用多核 CPU 训练吗，要配什么参数？训练时只有一个进程在跑").shown[0].hit.section.key
    reply = talk.respond("DataLoader 多进程是设 num_workers 吗？我发现好像还是只有一个进程")
    assert reply.shown and reply.shown[0].hit.section.key != cpu
    assert talk.last.move == "retry" and "not_helpful" in [e.kind for e in reply.events]
