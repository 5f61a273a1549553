"""What the answer layer and the web edges need of an engine, typed: :class:`Answerer` and :class:`ServingEngine`.

:class:`bot.engine.retrieve.Engine` is one; :class:`bot.engine.live.LiveEngine` (the engine of the current index
generation) is another; :class:`bot.web.deferred.EngineWhenReady` stands in for either while the index loads; a
test may pass a small fake. The conversation, the turn and every edge (``app.py``, ``bot.web``) are written
against these protocols, never against ``Any``; the heavy engine module is not imported to name them.

Serving asks with the product's ranking only: the evaluation's baselines (one kind of evidence, no curated
phrasings) are not part of :meth:`Answerer.ask`; ``bot.fit.evaluate`` reaches them on the concrete engine.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from bot.engine.message import Message
from bot.kb.embed import Embedder
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
        self, text: object, *, k: int = 10, case: Case | None = None, exclude: Iterable[str] = (), turn: bool = False
    ) -> Answer: ...

    def terms_in(self, search: str, key: str) -> tuple[str, ...]: ...

    def section_vectors(self) -> tuple[dict[str, int], np.ndarray] | None: ...


class ServingEngine(Answerer, Protocol):
    """What the web edges use besides answering: the embedder (/admin groups stored questions by their vectors)."""

    @property
    def embedder(self) -> Embedder: ...
