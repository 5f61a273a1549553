"""Request bodies of the JSON API as pydantic models, with every field capped.

``app.py`` calls :meth:`AskRequest.parse` / :meth:`FeedbackRequest.parse` on the decoded JSON
(already checked for content type, UTF-8, size and depth by :mod:`bot.web.security`); a bad body
becomes a 422 whose ``detail`` names the field and the limit.

    >>> AskRequest.parse({"question": "nccl", "history": ["显存不足", {"role": "assistant", "content": "…"}]},
    ...                  max_input_chars=100).prior(3)
    ['显存不']
    >>> FeedbackRequest.parse({"question": "q", "vote": "meh"}, max_input_chars=100)
    Traceback (most recent call last):
    fastapi.exceptions.HTTPException: 422: vote: Input should be 'up' or 'down'
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from fastapi import HTTPException
from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError, ValidationInfo, field_validator

from bot.limits import HISTORY_ITEMS_ACCEPTED, VOTE_COMMENT_CHARS
from bot.records import Vote, VoteReason
from bot.web.http import history_messages

MAX_HISTORY_ITEMS = HISTORY_ITEMS_ACCEPTED  # only the last limits.HISTORY_ITEMS_READ are used
MAX_CITED = 10
MAX_KEY_CHARS = 300  # a section key is "<file>#<anchor>": a file name and a 60-character slug

SectionKey = Annotated[StrictStr, Field(max_length=MAX_KEY_CHARS)]


def _problem(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "body"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    EXAMPLE: ClassVar[str] = "{}"

    @classmethod
    def parse(cls, data: Any, *, max_input_chars: int):
        """Validate a decoded JSON body; raises HTTPException(422) with the field, the limit and an example."""
        if not isinstance(data, dict):
            raise HTTPException(422, f"body must be a JSON object: {cls.EXAMPLE}")
        try:
            return cls.model_validate(data, context={"max_input_chars": max_input_chars})
        except ValidationError as exc:
            raise HTTPException(422, _problem(exc)) from None


class AskRequest(_Body):
    """``{"question": str, "state": str, "history": [str | {"question": str} | {"role", "content"}, …]}``.

    The question is not refused above ``max_input_chars``: the reply cuts it with a visible
    notice (the 8 MB body cap bounds it). ``state`` is the ``state`` of the previous reply
    (:mod:`bot.answer.state`): the conversation continues from it and nothing is replayed; its size, signature,
    version and index are checked when it is opened (a 400 naming ``state``). History turns are context only,
    for a client without ``state``: at most :data:`MAX_HISTORY_ITEMS` are accepted, the last
    ``limits.HISTORY_ITEMS_READ`` user turns are used, together cut to ``max_input_chars`` characters (see
    :meth:`prior`), and a replay reads at most ``limits.HISTORY_TURN_CHARS_REPLAYED`` characters of each of the
    last ``limits.HISTORY_TURNS_REPLAYED``: a replay costs at most that many short questions, however long the
    turns.
    """

    EXAMPLE: ClassVar[str] = '{"question": "...", "state": "<state of the previous reply>", "history": []}'
    question: StrictStr
    state: StrictStr | None = None
    history: list[Any] | None = Field(default=None, max_length=MAX_HISTORY_ITEMS)

    @field_validator("history")
    @classmethod
    def _turns(cls, value: list[Any] | None) -> list[Any] | None:
        history_messages(value)  # its ValueError says which shapes a turn may have
        return value

    def prior(self, max_input_chars: int) -> list[str]:
        """The prior user messages, cut to ``max_input_chars`` characters in total (they are context, not questions).

        They are what the contact link and the hand-off carry; a replay reads the head of each
        (:func:`bot.answer.turn.replayed`). The budget is shared evenly: short turns are kept whole
        and the long ones are cut to the same length (their beginning kept), with the budget used up.
        When there are more turns than characters in the budget, the newest are kept.

        >>> AskRequest(question="q", history=["a" * 10, "bb", "c" * 10]).prior(12)
        ['aaaaa', 'bb', 'ccccc']
        >>> AskRequest(question="q", history=["one", "two", "six"]).prior(2)
        ['t', 's']
        """
        return cap_history(history_messages(self.history), max_input_chars)


def cap_history(turns: list[str], budget: int) -> list[str]:
    """``turns`` cut to ``budget`` characters in total, shared evenly (see :meth:`AskRequest.prior`); for any
    caller that replays history (``/v1`` messages too)."""
    turns = turns[-budget:] if budget > 0 else []
    return [turn[: _even_share([len(t) for t in turns], budget)] for turn in turns]


def _even_share(lengths: list[int], budget: int) -> int:
    """The largest cut ``c`` with ``sum(min(length, c)) <= budget`` (water-filling), for :meth:`AskRequest.prior`.

    >>> _even_share([10, 2, 10], 12), _even_share([3, 4], 100)
    (5, 4)
    """
    if sum(lengths) <= budget:
        return max(lengths, default=0)
    left, rest = budget, len(lengths)
    for length in sorted(lengths):
        if length * rest > left:
            return left // rest
        left -= length
        rest -= 1
    return max(lengths, default=0)


class FeedbackRequest(_Body):
    """``{"question": str, "vote": "up" | "down", "cited": [section key, …], "language": "zh" | "en", "answered": bool,
    "reason": str, "comment": str}``."""

    EXAMPLE: ClassVar[str] = '{"question": "...", "vote": "up"}'
    question: StrictStr
    vote: Vote
    cited: list[SectionKey] = Field(default_factory=list, max_length=MAX_CITED)
    language: Any = None
    answered: bool = True
    # Why a 👎 (bot.records.VoteReason); which answer the vote is about; the caller's session.
    # One vote per answer: the last one counts.
    reason: VoteReason | Literal[""] = ""
    answer_id: str = Field(default="", max_length=80)
    session: str = Field(default="", max_length=200)
    # A 👎's "what was wrong" in the user's words (stored with the vote; longer is refused, 422).
    comment: StrictStr = Field(default="", max_length=VOTE_COMMENT_CHARS)

    @field_validator("question")
    @classmethod
    def _question(cls, value: str, info: ValidationInfo) -> str:
        cap = (info.context or {}).get("max_input_chars", 100_000)
        if not value.strip():
            raise ValueError("must not be empty")
        if len(value) > cap:
            raise ValueError(f"at most {cap:,} characters (BOT_MAX_INPUT_CHARS), got {len(value):,}")
        return value

    @field_validator("cited", mode="before")
    @classmethod
    def _cited(cls, value: Any) -> Any:
        return [] if value is None else value

    @property
    def lang(self) -> str:
        return self.language if self.language in ("zh", "en") else "en"
