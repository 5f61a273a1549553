"""One user message, read once: everything later stages need to know about its text.

A turn builds one :class:`Message` (``engine.read``, :func:`bot.engine.read.read_message`) and every
stage reads it: the conversation (empty? a thanks? "that didn't help" with nothing to retry?), the case
(how the message moves it) and the engine (what to search, in which language, whether it is a log).
Nothing downstream detects the language, the cues or a pasted log again.

    >>> from bot.engine.read import read_message
    >>> from bot.engine.subjects import Lexicon
    >>> m = read_message("  没用  ", limit=2_000, lexicon=Lexicon.load())
    >>> m.language, m.cues.not_helpful, m.intent, m.is_log
    ('zh', True, None, False)
    >>> m = read_message("thanks!", limit=2_000, lexicon=Lexicon.load())
    >>> m.language, m.intent, m.cues.not_helpful
    ('en', 'thanks', False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.records import Environment

Language = Literal["zh", "en"]


@dataclass(frozen=True)
class Cues:
    """What the message says about the conversation, read from its own words (see :mod:`bot.engine.case`).

    ``not_helpful``: "没用", "that didn't help"; ``follow_up``: an elliptical "那多机呢？";
    ``new_topic``: "unrelated: …", "另外一个问题"; ``points_back``: "这个", "that"; ``failed``: the message says
    the fix shown did not work ("没用", "still OOM after allow_growth": a retry, the only "didn't help" stored);
    ``anaphora``: a pronoun or deictic alone ("这个", "it"; ``points_back`` also counts a short question naming
    nothing); ``still``: the problem persists or another way is asked for ("还是", "any other way?");
    ``detail``: what detail of the answer shown the message asks for ("parameter", "command", "step"; "" when it
    asks for none). The last three say the message needs the conversation to be understood (issue 44).
    """

    not_helpful: bool = False
    follow_up: bool = False
    new_topic: bool = False
    points_back: bool = False
    failed: bool = False
    anaphora: bool = False
    still: bool = False
    detail: str = ""


@dataclass(frozen=True)
class Message:
    """One user message as every stage sees it.

    ``sent``: the text as sent; ``text``: cleaned and cut to the input limit (``truncated_from``: the
    original length when it was cut, else 0); ``signature``/``search_text``: a pasted log's error line
    and what is searched for it (the text itself otherwise); ``tokens``: the search text's tokens;
    ``subjects``: the lexicon's subjects named in the text; ``intent``: thanks, greeting, small talk,
    a request for a person, or None for a question.
    """

    sent: str
    text: str
    truncated_from: int
    language: Language
    has_words: bool
    is_log: bool
    signature: str
    search_text: str
    tokens: tuple[str, ...]
    subjects: frozenset[str]
    intent: str | None
    cues: Cues
    environment: Environment = Environment()  # the GPU environment the text shows (bot.diagnose.environment)

    @property
    def stripped(self) -> str:
        return self.sent.strip()

    @property
    def bare_log(self) -> bool:
        r"""A pasted log with no words of the user's own: its language is the log's, not the user's, so the reply
        keeps the conversation's language (:func:`own_words`).

        >>> from bot.engine.read import read_message
        >>> from bot.engine.subjects import Lexicon
        >>> log = "Traceback (most recent call last):\nOSError: NCCL error(2), unhandled system error."
        >>> read_message(log, limit=2_000, lexicon=Lexicon.load()).bare_log
        True
        >>> read_message("多机训练报错\n" + log, limit=2_000, lexicon=Lexicon.load()).bare_log
        False
        """
        return self.is_log and not own_words(self.text)


# The user's own words beside a paste: Chinese anywhere, or an English line that asks or tells ("why does …?",
# "I get this error when …"), not a log line.
_CJK = re.compile(r"[\u4e00-\u9fff]{2}")
_ASKS = re.compile(
    r"^\s{0,4}(?:i|i'm|i've|my|we|how|why|what|when|where|can|could|does|do|is|any|please|hi|hello|help|"
    r"after|trying|getting|got)\b[^\n]{0,300}$|\?\s{0,4}$",
    re.IGNORECASE,
)
_LOGGY = re.compile(r"Error|Exception|WARN|INFO|Traceback|^\s{2,}|[/\\]\w+[/\\]|^\S{0,40}:\d{1,6}:")


def own_words(text: str) -> bool:
    r"""Whether ``text`` holds the user's own words beside any log lines (bounded: the first 400 lines).

    >>> own_words("NCCL WARN Net : Connect to 10.0.0.13<40233> failed : Connection refused")
    False
    >>> own_words("Why does this fail?\nOSError: NCCL error"), own_words("报错如下\nOSError: NCCL error")
    (True, True)
    """
    for line in text.splitlines()[:400]:
        line = line[:400]
        if _CJK.search(line) or (_ASKS.search(line) and not _LOGGY.search(line)):
            return True
    return False
