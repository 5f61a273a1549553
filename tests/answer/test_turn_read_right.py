"""A turn read right (issue 44): a complete question in a chat is searched on its own words, a detail answers the
detail. The model-tier tests run the repository's documents with the product's embedder."""

from __future__ import annotations

import pytest

from bot.answer.conversation import Conversation


@pytest.mark.model
@pytest.mark.parametrize(
    ("first", "then", "heading"),
    [
        ("多卡训练找不到 libnccl.so", "还有个问题，DNN 能同时跑在 GPU 和 CPU 上吗", "DNN可以同时运行在GPU和CPU上吗"),
        ("NCCL error on 8 gpus", "also, training does not converge at all, any checklist?", "不收敛"),
        ("显存不足 batch_size 已经很小了", "模型训练完很大，能压缩吗", "训练后的模型很大"),
    ],
)
def test_a_complete_question_after_an_answer_is_answered_on_its_own_words(seeds_engine, first, then, heading):
    talk = Conversation(seeds_engine)
    shown = talk.respond(first).shown[0].hit.section.key
    reply = talk.respond(then)
    top = reply.shown[0].hit.section
    assert heading in top.heading and top.key != shown, top.heading
    assert talk.planned is not None and talk.planned.act == "switch"


@pytest.mark.model
def test_a_pronoun_still_joins_the_case(seeds_engine):
    """The evidence decides only complete questions: "那多机呢？" keeps the case whatever its own words find."""
    talk = Conversation(seeds_engine)
    talk.respond("单机多卡训练报 Nccl error 怎么办")
    talk.respond("那多机呢？")
    assert talk.planned is not None and talk.planned.move == "follow_up"


@pytest.mark.model
def test_which_parameter_after_out_of_memory_quotes_the_parameters_with_the_section_cited(seeds_engine):
    talk = Conversation(seeds_engine)
    whole = talk.respond("显存不足怎么办")
    section = whole.shown[0].hit.section
    reply = talk.respond("具体改哪个参数？")
    assert talk.planned is not None and talk.planned.detail == "parameter" and talk.planned.focus == section.key
    assert [s.hit.section.key for s in reply.shown] == [section.key]  # the section still cited
    assert "FLAGS_fraction_of_gpu_memory_to_use=0" in reply.markdown and "`batch_size`" in reply.markdown
    assert "AI Studio" not in reply.markdown  # the section's other paragraphs are not repeated
    assert len(reply.markdown) < len(whole.markdown) / 2
