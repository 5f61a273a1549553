"""Issue 35: "还是不行，没用" after a Paddle out-of-memory answer stays with Paddle's sections (no TensorFlow 1.x
ConfigProto section), even when the user's words never named the framework."""

from __future__ import annotations

from bot.engine.plan import Reading, plan, read
from bot.records import Case

CASE = Case(search="训练时显存不足怎么办", shown=("faq#oom",), best="faq#oom", led=("faq#oom",), turns=1)


def test_a_retry_keeps_the_framework_of_the_answer_shown():
    retry = plan(
        read("还是不行，没用", not_helpful=True, failed=True),
        CASE,
        Reading(rule_move="retry", frameworks_shown=frozenset({"PaddlePaddle"})),
    )
    assert retry.move == "retry" and retry.frameworks == frozenset({"PaddlePaddle"})


def test_the_framework_the_words_carry_still_wins():
    reading = Reading(
        rule_move="retry",
        frameworks_carried=frozenset({"TensorFlow"}),
        frameworks_shown=frozenset({"PaddlePaddle"}),
    )
    assert plan(read("还是不行，没用", not_helpful=True, failed=True), CASE, reading).frameworks == {"TensorFlow"}
