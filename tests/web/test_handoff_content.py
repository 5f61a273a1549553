"""What a hand-off carries (issue 26): the unresolved question as the subject; the turns, the bot's replies in
short, tiers, cited sections and the 👎 reason in the body; "didn't help" among the 👎 reasons."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from bot.answer.reply import Contact
from bot.records import VOTE_REASONS
from bot.web.handoff import Exchange, carrying, payload
from bot.web.ui.events import exchanges
from bot.web.ui.state import AnswerInfo, ChatState
from bot.web.ui.strings import ui_text

OOM_REPLY = "### Out of GPU memory during training\n\n**1.** Lower `batch_size`.\n\n**Source:** [GPU FAQ › OOM](x)"
NCCL_REPLY = (
    "⚠️ **May not apply:** Nothing here clearly matches; the closest is about “Nccl error”.\n\n"
    "### Nccl error when running Paddle on multiple GPUs\n\n```bash\nexport NCCL_DEBUG=INFO\n```\n\n"
    "<details><summary>Other close sections (2)</summary>\n\n1. a\n\n</details>"
)


def conversation() -> ChatState:
    state = ChatState(language="en")
    state.messages = [
        {"role": "user", "content": "GPU out of memory during training"},
        {"role": "assistant", "content": OOM_REPLY},
        {"role": "user", "content": "NCCL error(2) when training on two nodes"},
        {"role": "assistant", "content": NCCL_REPLY},
    ]
    state.answers = {
        "1": AnswerInfo("a1", "GPU out of memory during training", "en", "answer", cited=["faq.md#oom"]),
        "3": AnswerInfo(
            "a2",
            "NCCL error(2) when training on two nodes",
            "en",
            "tentative",
            cited=["faq.md#nccl", "d.md#faq"],
            vote="down",
            reason="didnt_help",
        ),
    }
    return state


def mail(contact: Contact) -> tuple[str, str]:
    query = parse_qs(urlsplit(contact.href()).query)
    return query["subject"][0], query["body"][0]


def test_the_subject_is_the_unresolved_question_not_the_first():
    contact = carrying(Contact("mailto:gpu@example.com"), exchanges(conversation(), "转人工"), None)
    subject, _ = mail(contact)
    assert subject == "NCCL error(2) when training on two nodes"


def test_the_body_carries_turns_replies_tiers_citations_and_the_down_vote_reason():
    _, body = mail(carrying(Contact("mailto:gpu@example.com"), exchanges(conversation()), None))
    assert "Q1: GPU out of memory during training" in body and "Q2: NCCL error(2)" in body
    assert "-> answer: faq.md#oom" in body and "-> tentative: faq.md#nccl" in body
    assert "bot: Out of GPU memory during training" in body, "the bot's reply, in short"
    assert "bot: May not apply: Nothing here clearly matches" in body and "Nccl error when running Paddle" in body
    assert "export NCCL_DEBUG" not in body and "Other close sections" not in body, "in short"
    assert "👎 didnt_help" in body
    turns = payload(exchanges(conversation()), None)["turns"]
    assert turns[1]["reason"] == "didnt_help" and turns[1]["vote"] == "down" and turns[1]["reply"]


def test_didnt_help_is_a_down_vote_reason_beside_the_others():
    assert {"wrong_section", "didnt_help", "outdated", "not_my_framework", "other"} == set(VOTE_REASONS)
    assert ui_text("en", "didnt_help") == "Didn't help" and ui_text("zh", "didnt_help")


def test_a_greeting_or_thanks_is_never_the_subject():
    asked = [Exchange("Loss becomes NaN", "answer"), Exchange("thanks"), Exchange("转人工")]
    subject, _ = mail(carrying(Contact("mailto:gpu@example.com"), asked, None))
    assert subject == "Loss becomes NaN"
