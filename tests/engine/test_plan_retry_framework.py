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


# Issue 44: a retry keeps its framework only while that framework has a section left on the case's problem.
NAN_CASE = Case(
    search="tf.keras loss nan",
    problem=frozenset({"NaN / Inf"}),
    shown=("tf#gpu",),
    best="tf#gpu",
    led=("tf#gpu",),
    turns=1,
)


def test_a_failed_retry_leaves_a_framework_with_no_section_left_on_the_problem():
    reading = Reading(
        rule_move="retry",
        frameworks_carried=frozenset({"TensorFlow"}),
        on_problem=(("paddle#nan", frozenset({"PaddlePaddle"})),),
    )
    retry = plan(read("checked the data, still nan", failed=True), NAN_CASE, reading)
    assert retry.move == "retry" and retry.frameworks == frozenset()


def test_a_failed_retry_keeps_its_framework_while_it_has_an_untried_section_on_the_problem():
    reading = Reading(
        rule_move="retry",
        frameworks_carried=frozenset({"TensorFlow"}),
        on_problem=(("tf#nan", frozenset({"TensorFlow"})), ("paddle#nan", frozenset({"PaddlePaddle"}))),
    )
    assert plan(read("still nan", failed=True), NAN_CASE, reading).frameworks == {"TensorFlow"}


def test_the_framework_s_only_section_on_the_problem_failing_leaves_the_framework():
    # Its only section on the problem was shown and failed: a report (nothing excluded) keeps the framework, a failed
    # fix (the shown section excluded) does not.
    reading = Reading(
        rule_move="retry",
        frameworks_carried=frozenset({"TensorFlow"}),
        on_problem=(("tf#gpu", frozenset({"TensorFlow"})), ("paddle#nan", frozenset({"PaddlePaddle"}))),
    )
    assert plan(read("nan again at step 30k"), NAN_CASE, reading).frameworks == {"TensorFlow"}
    assert plan(read("still nan", failed=True), NAN_CASE, reading).frameworks == frozenset()


def test_a_failed_fix_leads_with_the_case_s_problem_and_a_report_does_not():
    reading = Reading(rule_move="retry", problems=frozenset({"NaN / Inf"}))
    assert plan(read("加了梯度裁剪还是 nan", failed=True), NAN_CASE, reading).lead_on == {"NaN / Inf"}
    assert plan(read("nan again at step 30k"), NAN_CASE, reading).lead_on == frozenset()
