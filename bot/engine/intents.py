"""Messages that are not questions: thanks, small talk and requests for a person.

A pure function of the message: ``classify(message)`` returns a label or ``None``
(a question to search). The conversation answers a label with a fixed text
(:func:`bot.answer.reply.format_intent`) and does not log it as an unanswered question.

    >>> [classify(m) for m in ("谢谢！", "thanks a lot", "转人工", "I want to talk to a human")]
    ['thanks', 'thanks', 'human', 'human']
    >>> [classify(m) for m in ("你好", "hello there", "你是谁？", "how are you?")]
    ['greeting', 'greeting', 'small_talk', 'small_talk']
    >>> [classify(m) for m in ("显存不足怎么办", "thanks, but NCCL still fails on two machines", "")]
    [None, None, None]
    >>> classify("多卡训练报错，能转人工吗？ libnccl.so not found")
    'human'
    >>> classify("Human pose estimation model runs out of GPU memory") is None
    True

Labels: ``thanks``, ``greeting``, ``small_talk``, ``human``. Only short messages are
classified, and a message that also describes a problem (a GPU word, an error) is a
question, except for an explicit request for a person, which always wins.
"""

from __future__ import annotations

import re

from bot.kb.domain import Domain, shipped

LABELS = ("thanks", "greeting", "small_talk", "human")
MAX_CHARS = 60  # longer messages are questions (or logs), whatever words they contain

_HUMAN = re.compile(
    r"转人工|人工客服|人工服务|找人工|真人|联系(?:客服|人工|工作人员|管理员|技术支持)|找(?:个)?人(?:帮|问)|"
    r"\b(?:talk|speak|chat)\s+(?:to|with)\s+(?:a\s+|an?\s+|some\s*one\s*|the\s+)?"
    r"(?:human|person|people|real person|agent|engineer|support|someone|somebody|operator|staff)\b|"
    r"\b(?:human|live)\s+(?:agent|support|help|operator)\b|\b(?:contact|reach)\s+(?:support|a human|a person|someone)\b|"
    r"\b(?:real|actual)\s+(?:person|human)\b",
    re.IGNORECASE,
)
_THANKS = re.compile(
    r"^(?:谢谢|多谢|感谢|谢啦|谢了|thx|thanks?|thank\s*(?:you|u)|ty|cheers|great|perfect|awesome|nice|cool|"
    r"好的|好滴|好嘞|明白了?|知道了|懂了|解决了|搞定了?|可以了|ok(?:ay)?|got it|that worked|it works?( now)?|"
    r"solved|works now|that helped|很有用|有用|太好了|辛苦了?)",
    re.IGNORECASE,
)
_GREETING = re.compile(
    r"^(?:你好|您好|嗨|哈喽|在吗|在不在|早上好|下午好|晚上好|hi|hello|hey|hiya|good (?:morning|afternoon|evening)|"
    r"yo|greetings)",
    re.IGNORECASE,
)
_SMALL_TALK = re.compile(
    r"你是谁|你叫什么|你是(?:机器人|ai|人工智能)|你能做什么|你会什么|你好吗|怎么用|"
    r"\bwho are you\b|\bwhat are you\b|\bare you (?:a )?(?:bot|robot|human|ai)\b|\bhow are you\b|"
    r"\bwhat can you do\b|\bhow do(?:es)? (?:this|it|you) work\b|\bhelp me\s*[?!.]*$|^\s*help\s*[?!.]*$",
    re.IGNORECASE,
)
_FILLER = re.compile(r"[\s\W_]+", re.UNICODE)


def _ascii_word(char: str) -> bool:
    return char.isascii() and char.isalnum()


def classify(message: object, domain: Domain | None = None) -> str | None:
    """The kind of a non-question message (one of :data:`LABELS`), or ``None`` for a question.

    A short message naming a word of the domain's list ``problem`` (the shipped domain's unless given) is a
    question about a problem after all ("thanks, but NCCL still fails").

    >>> classify("  谢谢，解决了  "), classify("Thank you!"), classify("ok"), classify("好的，明白了")
    ('thanks', 'thanks', 'thanks', 'thanks')
    >>> classify("你好，多卡训练报错 nccl")  # a greeting with a problem is a question
    >>> classify("hi, loss becomes nan")
    >>> classify("can I speak to a person?"), classify("人工客服"), classify("talk to someone")
    ('human', 'human', 'human')
    >>> classify("what can you do?"), classify("你能做什么")
    ('small_talk', 'small_talk')
    >>> classify(None), classify("   "), classify("Thanks " * 20)
    (None, None, None)
    """
    if not isinstance(message, str):
        return None
    text = " ".join(message.split())
    if not text or "\n" in message.strip():
        return None
    if len(text) <= 2 * MAX_CHARS and _HUMAN.search(text):
        return "human"
    if len(text) > MAX_CHARS:
        return None
    if (domain or shipped()).word("problem").search(text):
        return None
    thanks = _THANKS.match(text)
    if (
        thanks
        and len(_FILLER.sub("", text[thanks.end() :])) <= 12
        and not _ascii_word(text[thanks.end() : thanks.end() + 1])
    ):
        return "thanks"
    if _SMALL_TALK.search(text):
        return "small_talk"
    if _GREETING.match(text):
        match = _GREETING.match(text)
        rest = text[match.end() :] if match else text
        if _ascii_word(rest[:1]):  # "history", "hint": not a greeting
            return None
        return "greeting" if len(_FILLER.sub("", rest)) <= 12 else None
    return None
