"""What the answer layer needs of an engine, typed: :class:`Answerer`.

:class:`bot.engine.retrieve.Engine` is one; :class:`bot.engine.live.LiveEngine` (the engine of the current index
generation) is another; a test may pass a small fake. The conversation and the turn are written against this
protocol, never against ``Any``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from bot.engine.message import Message
from bot.kb.meta import SectionMeta
from bot.records import Answer, Case, Section
from bot.settings import Settings


@runtime_checkable
class Answerer(Protocol):
    """Reads a message once, answers it in its case, and looks sections up."""

    settings: Settings

    @property
    def sections(self) -> Sequence[Section]: ...

    def section(self, key: str) -> Section | None: ...

    def meta(self, key: str) -> SectionMeta | None: ...

    def read(self, message: object) -> Message: ...

    def ask(
        self,
        text: object,
        *,
        k: int = 10,
        case: Case | None = None,
        mode: str = "hybrid",
        use_meta: bool = True,
        exclude: Iterable[str] = (),
    ) -> Answer: ...

    def terms_in(self, search: str, key: str) -> tuple[str, ...]: ...

    def section_vectors(self) -> tuple[dict[str, int], np.ndarray] | None: ...
