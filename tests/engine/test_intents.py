"""Thanks and requests for a person as people type them in a chat (issue 44): read before the engine, and a
question that only shares their words stays a question."""

from __future__ import annotations

import pytest

from bot.engine.intents import classify

THANKS = (
    "好 谢谢",
    "行 我回去试试 谢了",
    "原来是 label 越界了 多谢",
    "重装驱动以后好了 感谢",
    "found it, a stale LD_LIBRARY_PATH in my bashrc. thanks",
    "swapping the data loader order fixed it",
    "ok, will go with fp16 then. cheers",
    "nvm, wrong conda env",
    "bye",
)
PERSON = (
    "人工",
    "有没有人工啊",
    "能不能安排个工程师看一下",
    "有研发能帮忙看看吗",
    "please escalate this",
    "could someone from your side check my config",
    "is there an engineer around",
    "need a real person",
    "who do i talk to about a license",
)
QUESTIONS = (
    "显存不足怎么办",
    "thanks, but NCCL still fails on two machines",
    "谢谢，另外 loss 变成 nan 怎么办",
    "thanks, now I get CUDA error: out of memory",
    "Thanks. I want to run it on 4 cards",
    "试了 没用 谢谢",
    "装好了 cuda 11.8",
    "好了，那多卡呢",
    "got it. what about windows?",
    "有人遇到过这个问题吗",
    "找个人少的时间段跑训练",
    "can someone explain why nccl hangs",
    "our switch firmware - who do i ask, the vendor?",
    "solved the oom, now nan appears",
)


@pytest.mark.parametrize("message", THANKS)
def test_a_thanks_or_a_problem_solved_is_a_thanks(message):
    assert classify(message) == "thanks"


@pytest.mark.parametrize("message", PERSON)
def test_a_request_for_a_person_is_one(message):
    assert classify(message) == "human"


@pytest.mark.parametrize("message", QUESTIONS)
def test_a_question_with_their_words_stays_a_question(message):
    assert classify(message) is None
