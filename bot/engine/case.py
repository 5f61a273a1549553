"""What a conversation is about, and how the next message moves it.

A chat is a *case*: the problem (error kind, symptom or task: out of memory, NaN loss, an
NCCL error, a hang, choosing a GPU …), the setting it happens in (framework, Paddle product,
OS, device, tool), the sections already shown for it and what the user says they tried.
Each message moves the case in one of four ways (:data:`Move`):

- ``new``: a first question, an explicit change of subject ("unrelated: …", "另外一个问题"),
  or a pasted log about another problem — a fresh case;
- ``follow_up``: an elliptical message that only makes sense with the case ("那多机呢？",
  "what about TensorFlow?", "fetch_list 里面那个名字要怎么写") — the problem stays, the
  setting changes where the message names a new one;
- ``retry``: the user says the answer did not help, or reports the same problem again with
  what they tried ("没用", "still OOM after allow_growth", "batch_size=1了，还是爆") — what was
  shown is not shown again;
- ``switch``: a new, different problem while a case is open (a full question of its own).

    >>> move_of("那多机呢？", Case(search="单机多卡 Nccl error 怎么办", problem=frozenset({"NCCL"})), problems=frozenset())
    'follow_up'
    >>> move_of("没用，数据和标签都检查过了", Case(search="loss nan", problem=frozenset({"NaN"})), problems=frozenset())
    'retry'
    >>> move_of("显存不足怎么办", Case(), problems=frozenset({"GPU out of memory"}))
    'new'

The functions here only read the message and the case; ranking and confidence stay in
:mod:`bot.engine.retrieve`, which ranks and judges every message against its case.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.engine.message import Cues
from bot.limits import QUESTION_CHARS
from bot.records import Case, Move

MOVES: tuple[Move, ...] = ("new", "follow_up", "retry", "switch")
MAX_SHOWN = 30  # section keys remembered per case
MAX_TRIED = 8  # the user's own "I tried …" messages remembered per case
MAX_CASE_SEARCH = 4_000  # characters of the case's search text (a follow-up's words are appended)
FOLLOW_UP_MAX_CHARS = 160  # longer messages with a problem of their own are questions, not follow-ups

_CJK = re.compile(r"[\u4e00-\u9fff]")

_NOT_HELPFUL_EN = re.compile(
    r"\b(?:did ?n[o']?t|does ?n[o']?t|do ?n[o']?t|not|never|wo ?n[o']?t)\s+(?:really\s+)?"
    r"(?:help|helped|helping|work|worked|working|fix|fixed|solve|solved)\b|"
    r"\bno luck\b|\bnot helpful\b|\bunhelpful\b|\buseless\b|\bsame (?:error|problem|issue)\b|"
    r"\bstill\s+(?:fails|failing|broken|crashes|crashing|the same|happens|there)\b|"
    r"\b(?:something|anything) else\b|\bother (?:options?|solutions?|ideas?|fix(?:es)?|answers?|causes?)\b|"
    r"\bnext (?:one|option|answer|suggestion)\b|^\s*(?:nope|no|wrong|next)\W*$",
    re.IGNORECASE,
)
_FILLER_EN = set(
    [
        "that",
        "this",
        "it",
        "the",
        "a",
        "an",
        "still",
        "sorry",
        "thanks",
        "thank",
        "you",
        "ok",
        "okay",
        "please",
        "try",
        "another",
        "one",
        "answer",
        "suggestion",
        "solution",
        "so",
        "but",
        "and",
        "unfortunately",
        "really",
        "at",
        "all",
        "for",
        "me",
        "i",
        "tried",
        "any",
        "have",
        "has",
        "was",
        "is",
    ]
)
_NOT_HELPFUL_ZH = re.compile(
    r"没用|没有用|不管用|没啥用|不行|没解决|没有解决|无效|不对|不是这个|换一个|其他方法|其它方法|别的方法|"
    r"还有别的|还有其他|试过了|不起作用|没效果|没有效果|还是报错|还是一样|依然报错|仍然报错|未解决|未能解决|没能解决"
)
# The user reports the problem persists or names what they already did: the same case, not solved.
# ("还是" alone is also "or" in a question, so only its "still …" uses count.)
_STILL = re.compile(
    r"还是(?:不|没|会|报|一样|有|出现|爆|卡|失败|错|提示|显示|oom|nan|hang|找不到|无法|用不了|跑不起来|识别不到|检测不到)|依然|仍然|仍旧|照样|一样的?(?:错|问题|报错)|"
    r"又出现|又报|也不行|也一样|也没用|也没有用|没用|没有用|不管用|没效果|没有效果|无效|没解决|没有解决|未解决|没能解决|"
    r"试过|试了|已经|(?:核对|检查|确认|排查|设置|修改|调整|加|装|查|换|改|调|设)过(?![程滤拟])|都(?:设|改|调|加|装|检查|试|按)|重装|重启.{0,6}(?:也|还|都)|"
    r"(?<!\bdo i )(?<!\bdo we )(?<!\bshould i )(?<!\bshould we )(?<!\bmust i )(?<!\bdo you )\bstill\b|"
    r"\bagain\b|\balready\b|\btried\b|\bdid(?:n'?t| not)\s+(?:help|work|fix|change)|"
    r"\bno (?:luck|change|difference)\b|\bsame (?:error|problem|issue|result)\b|\bnot (?:working|helping)\b|"
    r"\bdoes(?:n'?t| not) (?:work|help)\b|\beven (?:after|with|though)\b",
    re.IGNORECASE,
)
# The user says the fix shown did not work (the retry convention, see :func:`says_failed`): "没用", "还是不行",
# "didn't help", "still X after Y", "tried that". Narrower than _STILL: "已经装了 CUDA 10" or "again" report a
# fact, not a failure of the answer, and "不对" describes a problem ("评估结果不对") more often than a verdict.
_FAILED = re.compile(
    r"没用|没有用|不管用|没啥用|不行|没解决|没有解决|未解决|未能解决|没能解决|无效|不起作用|没效果|没有效果|不是这个|"
    r"还是\s*(?:不|没|会|报|一样|有|只|出现|爆|卡|失败|错|提示|显示|oom|nan|hang|找不到|无法|用不了|跑不起来|识别不到|检测不到)|依然|仍然|仍旧|照样|又出现|又报|"
    r"也一样|试过|试了|(?:核对|检查|排查)过|(?:不管|无论)怎么.{0,12}都(?:不|没)|"
    r"\b(?:did ?n[o']?t|does ?n[o']?t|do ?n[o']?t|not|never|wo ?n[o']?t)\s+(?:really\s+)?"
    r"(?:(?:seem|appear)(?:s|ed)?\s+)?(?:to\s+)?"  # "doesn't seem to help", "seems not to help"
    r"(?:help|helped|helping|work|worked|working|fix|fixed|solve|solved|change|changed)\b|"
    r"\bno (?:luck|change|difference)\b|\bnot helpful\b|\bunhelpful\b|\buseless\b|\bnothing changed\b|"
    r"\bsame (?:error|problem|issue|result)\b|"
    # "do i still export …?", "should we still set …": a question whether a step is still needed, not a report
    r"(?<!\bdo i )(?<!\bdo we )(?<!\bshould i )(?<!\bshould we )(?<!\bmust i )(?<!\bdo you )"
    r"\bstill\b(?!\s+(?:want|wish|wonder|need|like|supported|support))|"
    r"\btried\b|\beven (?:after|with)\b",
    re.IGNORECASE,
)
# A question rather than a report: asks something (how, which, whether) or ends with a question mark.
_QUESTION = re.compile(
    r"[?？]|吗|呢|怎么|怎样|如何|什么|哪|为什么|为啥|多少|能否|是否|有没有|可不可以|能不能|可以.{0,10}吗|请问|求助|"
    r"^\s*(?:how|what|which|why|where|when|who|can|could|should|would|will|is|are|does|do|did|any)\b",
    re.IGNORECASE,
)
# An explicit change of subject.
# A thanks or an "ok" may come first ("好的，顺便问一下…", "Thanks. Also, how do I …"); "also, <a full question>"
# asks something new, while "also, what about TensorFlow?" or "also, does it …" stays with the case.
_COURTESY = (
    r"^\s*(?:(?:thanks|thank you|thx|ok(?:ay)?|great|got it|好的|好|谢谢|多谢|感谢|明白了?|嗯|懂了)[\s,，.!！。~:：]*)?"
)
_NEW_TOPIC = re.compile(
    _COURTESY + r"(?:(?:另外|另一个|换个|还有一个|新的?|其他)(?:一个)?(?:问题|事)|(?:问|请问)?(?:另外|另一)|"
    r"(?:unrelated|different|separate|another|new|other)\s+(?:question|topic|issue|problem)\b|"
    r"(?:unrelated|by the way|btw|on another note|also,? (?:a|one) (?:question|thing))\b|顺便(?:问|说|请教)|"
    r"also[,，:]?\s+(?:how|what|which|why|where|when|can|could|should|would|is there|do|does)\b"
    r"(?!\s+(?:about|if|it|that|this|these|those|the same)\b)(?=(?:\s+\S+){3}))",
    re.IGNORECASE,
)
_FOLLOW_ZH_START = re.compile(r"^(?:那|那么|如果|要是|换成|改成|还有|同样|用|在|是不是|能不能|可以|怎么|哪|是)")
_FOLLOW_ZH_END = re.compile(r"(?:呢|怎么办|怎么样|行吗|可以吗|吗|么)\s*[？?!！。.]*$")
_FOLLOW_EN_START = re.compile(
    r"^(?:what about|how about|and|what if|same (?:for|with|on|in)|also|for|with|on|in|using|if i use|"
    r"instead|but (?:for|with|on|in)|then|does (?:it|that|this)|is (?:it|that|this))\b",
    re.IGNORECASE,
)
_FOLLOW_EN_END = re.compile(r"\b(?:too|instead|then|as well|here)\s*[?.!]*$", re.IGNORECASE)
# A request stated without a question mark ("I want to set the limit rate …", "我想把显存限制在 30%"): the
# user asks for something next, they do not report that the answer failed.
_REQUEST = re.compile(
    r"\b(?:i (?:want|need|would like|'d like|wish) to|i want|how to|is there (?:a|any) way)\b|我想|我要|想要|希望能?|需要",
    re.IGNORECASE,
)
# Asks for a different answer to the same problem ("还有别的写法吗", "is there another way?").
_ANOTHER = re.compile(
    r"还有(?:别的|其他|其它)|(?:别的|其他|其它|另外的?)(?:写法|方法|办法|解决|方案)|换个(?:方法|办法|思路)|"
    r"\b(?:another|other|alternative|different) (?:way|ways|method|approach|fix|solution)s?\b|\balternatives?\b|"
    r"\b(?:anything|something) else\b|\bwhat (?:now|next|else)\b|\bnow what\b",
    re.IGNORECASE,
)
# Pronouns and deictics that point back into the conversation.
_ANAPHORA = re.compile(
    r"这个|那个|这些|那些|上面|刚才|它们?|这里|那里|这样|那样|其中|这三个|那三个|这种|那种|"
    r"\b(?:it|this|that|these|those|there|them|the same|above)\b",
    re.IGNORECASE,
)


def advance(
    case: Case,
    *,
    move: Move,
    search: str,
    problem: frozenset[str],
    setting: frozenset[str],
    shown: tuple[str, ...],
    best: str,
    language: str,
    signature: str,
    message: str,
) -> Case:
    """The case after a turn that showed ``shown`` (``best`` given as the answer, or "").

    >>> c = advance(Case(), move="new", search="loss nan", problem=frozenset({"NaN / Inf"}), setting=frozenset(),
    ...             shown=("a",), best="a", language="en", signature="", message="loss nan")
    >>> c = advance(c, move="retry", search="loss nan", problem=c.problem, setting=c.setting, shown=("b",), best="",
    ...             language="en", signature="", message="didn't help")
    >>> c.shown, c.best, c.tried, c.turns
    (('a', 'b'), 'a', ("didn't help",), 2)
    >>> advance(c, move="switch", search="oom", problem=frozenset(), setting=frozenset(), shown=("c",), best="c",
    ...         language="en", signature="", message="oom").led  # a new case keeps the conversation's leads
    ('a', 'b', 'c')
    """
    # What this turn led with joins every earlier lead of the conversation, whatever case it was in (the retry rule).
    led = tuple(dict.fromkeys((*case.led, *shown[:1])))[-MAX_SHOWN:]
    if move in ("new", "switch") or not case.is_open:
        return Case(
            search=search[:MAX_CASE_SEARCH],
            problem=problem,
            setting=setting,
            shown=shown[:MAX_SHOWN],
            best=best,
            language=language,
            signature=signature,
            turns=1,
            led=led,
        )
    tried = case.tried + ((message[:300],) if move == "retry" else ())
    return replace(
        case,
        search=search[-MAX_CASE_SEARCH:],
        problem=problem,
        setting=setting,
        shown=tuple(dict.fromkeys((*case.shown, *shown)))[-MAX_SHOWN:],
        best=best or case.best,
        tried=tried[-MAX_TRIED:],
        language=language or case.language,
        turns=case.turns + 1,
        led=led,
        clarified=False,
    )


def matching_lines(text: str, terms: tuple[str, ...] | list[str]) -> tuple[int, ...]:
    """The 0-based lines of a section's ``text`` that hold one of the follow-up's own ``terms`` (case-insensitive):
    where the reply opens a section it shows again for a new detail. Nothing when every line or none matches.

    >>> section = "Three fixes:\\nallow_growth = True\\nper_process_gpu_memory_fraction = 0.4"
    >>> matching_lines(section, ("per_process_gpu_memory_fraction", "per", "gpu", "memory", "0.4"))
    (2,)
    >>> matching_lines("a\\nb", ("zzz",)), matching_lines("nccl\\nnccl", ("nccl",))
    ((), ())
    """
    # The whole identifier, not its parts ("per_process_gpu_memory_fraction", not "per", "gpu"); no bare numbers.
    given = {t.lower() for t in terms if len(t) >= 3 and any(c.isalpha() for c in t)}
    words = [w for w in given if not any(w != other and w in other for other in given)]
    if not words:
        return ()
    lines = text.splitlines()
    found = tuple(n for n, line in enumerate(lines) if any(w in line.lower() for w in words))
    return () if len(found) == len(lines) else found


def is_not_helpful(message: str) -> bool:
    """True for short "that didn't help" messages, not for real questions that happen to say "doesn't work".

    >>> [is_not_helpful(m) for m in ("that didn't help", "没用", "还是不行", "nope", "问题未解决")]
    [True, True, True, True, True]
    >>> [is_not_helpful(m) for m in ("NCCL doesn't work on two machines", "显存不足怎么办")]
    [False, False]
    """
    message = message.strip()
    if not message or len(message) > 80 or "\n" in message:
        return False
    if _CJK.search(message):
        if not _NOT_HELPFUL_ZH.search(message):
            return False
        rest = _NOT_HELPFUL_ZH.sub("", message)
        rest = re.sub(
            r"[\s\W]|还是|依然|仍然|好像|似乎|这个|那个|方法|办法|试了|一下|了|啊|呀|吧|的|也|都|还|再|给|我|换",
            "",
            rest,
        )
        return len(rest) <= 2
    match = _NOT_HELPFUL_EN.search(message)
    if not match:
        return False
    rest = (message[: match.start()] + " " + message[match.end() :]).lower()
    words = [w for w in re.findall(r"[a-z0-9_.]+", rest) if w not in _FILLER_EN]
    return len(words) <= 1


def is_follow_up(message: str) -> bool:
    """A short message that only makes sense with the previous question.

    >>> [is_follow_up(m) for m in ("那多机呢？", "what about TensorFlow?", "and on Windows?")]
    [True, True, True]
    >>> [is_follow_up(m) for m in ("显存不足", "Loss becomes NaN after a few steps", "多卡训练报错怎么办")]
    [False, False, False]
    """
    message = message.strip()
    if not message or "\n" in message:
        return False
    if _CJK.search(message):
        if len(message) > 16:
            return False
        if _FOLLOW_ZH_START.search(message) and _FOLLOW_ZH_END.search(message):
            return True
        return bool(re.search(r"呢\s*[？?]*$", message)) or (
            bool(re.match(r"^(?:那|那么|那如果|换成|改成)", message)) and len(message) <= 10
        )
    words = message.split()
    if len(words) > 8:
        return False
    return bool(_FOLLOW_EN_START.search(message) or (_FOLLOW_EN_END.search(message) and len(words) <= 5))


def says_still(message: str) -> bool:
    """The user reports the problem persists or names what they tried.

    >>> [says_still(m) for m in ("batch 已经降到 4 了，还是爆", "tried allow_growth, still OOM", "数据标签都核对过", "显存不足怎么办")]
    [True, True, True, False]
    >>> says_still("训练过程中 loss 不降，过拟合了吗")
    False
    """
    return bool(_STILL.search(message[:QUESTION_CHARS]))


def says_failed(message: str, *, not_helpful: bool | None = None) -> bool:
    """The message says the fix shown did not work: a *retry* by the product owner's convention, whose lead is
    never a section an earlier turn led with and which alone is stored as "didn't help". A new question, a new
    detail or a report without a failure word is not one, however short.

    >>> [says_failed(m) for m in ("没用", "还是不行", "that didn't help", "still OOM after allow_growth", "tried that")]
    [True, True, True, True, True]
    >>> [says_failed(m) for m in ("Keras model.fit does not use my GPU", "which files do I change?", "ping 是通的")]
    [False, False, False]
    >>> says_failed("what if I want it to use only 40%?"), says_failed("我已经装了 CUDA 10，怎么指定GPU")
    (False, False)
    >>> says_failed("我发现好像还是只有一个进程"), says_failed("不管怎么改学习率，loss都不下降")
    (True, True)
    >>> says_failed("find 到了 加到 LD_LIBRARY_PATH 了 还是找不到")  # "still can't find it"
    True
    >>> says_failed("is --gpus enough or do i still export CUDA_VISIBLE_DEVICES?"), says_failed("still OOM")
    (False, True)
    """
    text = message[:QUESTION_CHARS]
    said = is_not_helpful(text) if not_helpful is None else not_helpful  # read once per message: Message.cues
    return said or bool(_FAILED.search(text))


def asks_briefly(message: str) -> bool:
    """A short question ("which files do I change?", "要改哪些文件？"): with no subject of its own it asks about
    the answer just shown, whatever its words match elsewhere.

    >>> asks_briefly("which files do I change?"), asks_briefly("要改哪些文件？"), asks_briefly("ping 是通的")
    (True, True, False)
    >>> asks_briefly("how do I make training use the second GPU of the machine?")
    False
    """
    text = message.strip()
    if not text or "\n" in text or not asks(text):
        return False
    return len(text) <= 12 if _CJK.search(text) else len(text.split()) <= 6


def starts_new_topic(message: str) -> bool:
    """ "unrelated: …", "另外一个问题：…": the user says this is something else.

    >>> [starts_new_topic(m) for m in ("另外一个问题：怎么指定GPU", "unrelated: how do I pick a GPU?", "那多机呢")]
    [True, True, False]
    >>> [starts_new_topic(m) for m in ("好的，顺便问一下：怎么让 op 等两个 op 算完", "Also, how do I choose which GPU Paddle uses?")]
    [True, True]
    >>> [starts_new_topic(m) for m in ("also, what about TensorFlow?", "also on Windows?", "and does it work on Windows?")]
    [False, False, False]
    """
    return bool(_NEW_TOPIC.search(message[:200]))


def asks(message: str) -> bool:
    """The message asks something, rather than reporting what happened.

    >>> asks("那三个 FLAGS 是写在 shell 里 export 还是 python 里设？"), asks("ping 是通的，两边命令也一模一样")
    (True, False)
    """
    return bool(_QUESTION.search(message[:QUESTION_CHARS]))


def requests(message: str) -> bool:
    """The message asks for something without a question's form.

    >>> requests("Thanks. I want to set the limit rate of gpu ram."), requests("我想把显存限制在 30%"), requests("ping 是通的")
    (True, True, False)
    """
    return bool(_REQUEST.search(message[:QUESTION_CHARS]))


def asks_for_another(message: str) -> bool:
    """The user wants another answer to the same problem.

    >>> asks_for_another("ParamAttr 里 trainable=False 试了好像没效果，还有别的写法吗"), asks_for_another("那多机呢？")
    (True, False)
    """
    return bool(_ANOTHER.search(message[:QUESTION_CHARS]))


def move_on_the_lead(message: str) -> Move:
    """The move of a message whose own best section is the one the case already led with: a question
    about it is a follow-up on it; a report of it again, "still …" or "any other way?" did not settle it.

    >>> move_on_the_lead("剪枝和量化 PaddleSlim 都能做吗"), move_on_the_lead("trainable=False 试了，还有别的写法吗")
    ('follow_up', 'retry')
    >>> move_on_the_lead("训练时显存不足，batch_size=1 也一样")
    'retry'
    """
    asks_more = (asks(message) or requests(message)) and not (says_still(message) or asks_for_another(message))
    return "follow_up" if asks_more else "retry"


def points_back(message: str) -> bool:
    """The message refers to something said before ("这个", "that", "it").

    >>> points_back("fetch_list 里面那个名字要怎么写才对"), points_back("怎么指定GPU")
    (True, False)
    """
    return bool(_ANAPHORA.search(message[:400]))


def move_of(
    message: str, case: Case, *, problems: frozenset[str], is_log: bool = False, cues: Cues | None = None
) -> Move:
    """How ``message`` moves ``case``; ``problems`` are the problem subjects the message names itself;
    ``cues``: the message's cues when it was read already (:class:`bot.engine.message.Message`), not detected again.

    "Still"/"tried" or a plain report of what happens now ("ping 是通的", "batch_size=1了") is a
    retry: what was shown did not settle it. A message naming a problem the case is not about is a
    new case. A question about the case (short, elliptical or pointing back) is a follow-up. A pasted
    log about another problem starts a new case; a log of the same problem continues it. A request
    without a question mark ("I want to set the limit …") is a follow-up, not a report.
    """
    text = message.strip()
    if not case.is_open:
        return "new"
    if cues is None:
        not_helpful = is_not_helpful(text)
        cues = Cues(
            not_helpful=not_helpful,
            follow_up=is_follow_up(text),
            new_topic=starts_new_topic(text),
            failed=says_failed(text, not_helpful=not_helpful),
        )
    if cues.new_topic:
        return "switch"
    if is_log:
        return "switch" if not case.problem or not problems or not (problems & case.problem) else "retry"
    # A case whose problem was never named but whose setting was ("单机多卡训练报错") is refined, not left, by a
    # report that names one; after an off-topic question (no problem, no setting) it is a new case, and a
    # full question about a named problem always is.
    other_problem = bool(problems) and (bool(case.problem) or not case.setting) and not (problems & case.problem)
    names_a_problem = bool(problems) and not (problems & case.problem)
    if cues.not_helpful:
        return "retry"
    if names_a_problem and asks(text) and len(text) > FOLLOW_UP_MAX_CHARS // 4:
        return "switch"  # a question about another problem, whatever else it says
    if says_still(text) or asks_for_another(text) or cues.failed:
        return "retry"  # "我发现还是只有一个进程", "doesn't seem to help": the user says what was shown did not work
    if other_problem and len(text) > 12:
        return "switch"  # another problem, stated ("NCCL timeout on 8 GPUs")
    if cues.follow_up:
        return "follow_up"
    if not asks(text) and not requests(text):
        return "retry"  # a report of what happens now ("ping 是通的"): what was shown did not settle it
    if problems and problems <= case.problem and len(text) > FOLLOW_UP_MAX_CHARS // 2 and not requests(text):
        return "retry"  # the same problem described again
    if len(text) <= FOLLOW_UP_MAX_CHARS or points_back(text):
        return "follow_up"
    return "switch"


__all__ = [
    "Case",
    "MOVES",
    "Move",
    "advance",
    "is_follow_up",
    "is_not_helpful",
    "matching_lines",
    "move_of",
    "move_on_the_lead",
    "points_back",
    "requests",
    "asks_briefly",
    "asks_for_another",
    "says_failed",
    "says_still",
    "starts_new_topic",
]
