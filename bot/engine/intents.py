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
question, except for an explicit request for a person, which always wins, and a one-line
report that the problem is solved or a thanks that asks nothing (:func:`reports_done`).
"""

from __future__ import annotations

import re

from bot.engine.case import asks, says_failed
from bot.kb.domain import Domain, shipped

LABELS = ("thanks", "greeting", "small_talk", "human")
MAX_CHARS = 60  # longer messages are questions (or logs), whatever words they contain

_HUMAN = re.compile(
    r"转人工|人工客服|人工服务|找人工|真人|联系(?:客服|人工|工作人员|管理员|技术支持)|找(?:个)?人(?:帮|问)|"
    r"\b(?:talk|speak|chat)\s+(?:to|with)\s+(?:a\s+|an?\s+|some\s*one\s*|the\s+)?"
    r"(?:human|person|people|real person|agent|engineer|support|someone|somebody|operator|staff)\b|"
    r"\b(?:human|live)\s+(?:agent|support|help|operator)\b|\b(?:contact|reach)\s+(?:support|a human|a person|someone)\b|"
    r"\b(?:real|actual)\s+(?:person|human)\b|"
    # Asked the way people type it in a chat (issue 44: 0.43 of the labelled requests for a person were read): "人工",
    # "有人工吗", "能找人看看吗", "麻烦安排一位工程师跟进下", "please escalate", "can someone look at my logs".
    r"^\s*(?:求|要)?人工\s*[?？!！。.~]*\s*$|有(?:没有)?人工|人工呢|"
    r"(?<![寻查])(?:找|安排|联系|转给|请)(?:个|一个|一位|位|下)?(?:人(?=[看帮问吧来跟处\s?？!！。.,，]|$)|工程师|研发|技术(?:支持|同学|人员)|官方|负责人|专家)|"
    r"有(?:没有)?(?:工程师|研发|技术支持|专家)|有人(?:能|可以)?(?:帮|看)|技术支持(?:的)?电话|客服电话|投诉|"
    r"\bescalat(?:e|ion)\b|\banyone human\b|"
    r"\b(?:can|could|would|will|may)\s+(?:someone|somebody|a\s+(?:\w+\s+)?(?:person|human|dev|developer|engineer)|"
    r"an\s+engineer|one of your \w+|your (?:team|engineers?|devs?|support))\b.{0,40}?"
    r"\b(?:look|check|review|remote|debug|go through)|"
    r"\bis there (?:a |an |any ?)?(?:human|person|someone|somebody|engineer|dev|developer)\b|"
    r"\bneed (?:a |an )?(?:human|real engineer|real person|engineer|person|support from)\b|"
    r"\b(?:who|whom) (?:do|can|should) i (?:talk|speak|escalate|contact|reach)\b|"
    r"\b(?:get|have) (?:someone|somebody|a person|an engineer) on (?:a |the )?call\b",
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
# A later turn that reports the problem solved, or thanks and leaves, in a sentence or two ("找到了 是bbox宽为0 谢谢",
# "nvm it was a docker --gpus mapping. thanks", "ordering fixed it. all good now"): a thanks, though it names the
# problem's words, when it asks nothing, reports no failure and no new trouble (issue 44: 0.41 of the labelled
# thanks were read, the rest searched as questions).
REPORT_CHARS = 160
_CLAUSE = re.compile(r"[。.!！?？;；,，]+")
_THANKS_WORD = re.compile(
    r"谢谢|多谢|感谢|谢了|谢啦|(?:^|[\s,，.。!！~])谢[\s!！。.~]*$|再见|拜拜|"
    r"\b(?:thanks|thank\s*(?:you|u)|thx|tks|ty|cheers|think you|appreciate(?:d| it)?|bye|goodbye)\b",
    re.IGNORECASE,
)
_SOLVED = re.compile(
    r"解决了|搞定|(?<![装设改配弄写备载译换])好了|可以了|正常了|跑起来了|跑通了|能跑了|能连上了|"
    r"\b(?:fixed it|that did it|did the trick|works? (?:now|fine|well)|working now|all good|solved|got it|gotcha|"
    r"stable now|goes well now|nvm|never ?mind)\b",
    re.IGNORECASE,
)
# New trouble, a turn of the story or a wish ("thanks, but …", "好了 不过又报 …", "Thanks. I want to use DDP."): a
# question after all.
_TROUBLE = re.compile(
    r"报错|错误|失败|崩溃|卡住|找不到|无法|不能|但|不过|可是|我想|想要|需要|"
    r"\bi(?: really)? (?:want|need|would like|'d like)\b|"
    r"error|exception|traceback|fail|"  # inside a name too: ComposerError, RuntimeException
    r"\b(?:crash|crashes|crashed|oom|out of memory|"
    r"not found|segfault|killed|hangs?|but|however)\b",
    re.IGNORECASE,
)


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
    >>> classify(None), classify("   "), classify("Thanks " * 30)
    (None, None, None)
    """
    if not isinstance(message, str):
        return None
    text = " ".join(message.split())
    if not text or "\n" in message.strip():
        return None
    if len(text) <= 2 * MAX_CHARS and _HUMAN.search(text):
        return "human"
    if len(text) > MAX_CHARS or (domain or shipped()).word("problem").search(text):
        return "thanks" if reports_done(text, closing=True) else None
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
    return "thanks" if reports_done(text) else None


def reports_done(text: str, *, closing: bool = False) -> bool:
    """A one-line report that the problem is solved, or a thanks in a sentence: a thanks word or a solved phrase
    (in its last clause when ``closing``: a message that names the problem, or a long one, must close with it;
    "好的，谢谢官方说明，我自己调到4才可以。没想到这个网络这么吃显存" opens with a courtesy and goes on to report), nothing
    asked, no failure said and no new trouble named.

    >>> [reports_done(m) for m in ("找到了 是bbox宽为0 谢谢", "ordering fixed it. all good now", "好 谢谢")]
    [True, True, True]
    >>> [reports_done(m) for m in ("thanks, but NCCL still fails", "谢谢，另外 loss nan 怎么办", "装好了 cuda 11.8")]
    [False, False, False]
    >>> reports_done("thanks, now I get CUDA error: out of memory"), reports_done("试了 没用 谢谢")
    (False, False)
    >>> reports_done("好的，谢谢官方说明，我自己调到4才可以。没想到这个网络这么吃显存", closing=True)
    False
    >>> reports_done("thanks, dropped to 4 workers, stable now", closing=True)
    True
    """
    said = next((c for c in reversed(_CLAUSE.split(text)) if c.strip()), "") if closing else text
    if len(text) > REPORT_CHARS or not (_THANKS_WORD.search(said) or _SOLVED.search(said)):
        return False
    return not (asks(text) or says_failed(text) or _TROUBLE.search(text))
