"""A replica follows the index: when ``index/CURRENT`` names a new generation, load it and swap it in.

Replicas share one index folder (a shared volume, or the same artifact shipped to each). One of
them (or a CI job) runs ``python -m bot build``, which writes a new generation and then replaces
``CURRENT`` atomically; every replica polls that one small file and, when it changes, opens the new
generation with the embedder it already has loaded (no second copy of the model) and swaps it in
with one reference assignment. A question in flight finishes on the engine it started with; the
next one sees the new index. A generation that does not load (stale against this replica's seeds,
half copied) is logged and the old engine keeps answering.

One watcher per engine and process: :func:`watch_index` hands back the same :class:`LiveEngine`
for an engine it already watches (``python app.py`` builds the app twice, the API first and then
the UI, and each used to start its own watcher, so every new generation was loaded twice).

Live documents (``BOT_WATCH_SEEDS``, on by default): a :class:`SeedsWatcher` follows ``seeds/`` itself
(``watchfiles``: inotify, no polling). When a document, a metadata file or ``seeds/vocabulary.toml`` is added,
changed or removed, it builds a new generation in its thread — only new or changed text is embedded, the rest is
reused from the generation being served — and swaps it in as above; requests meanwhile are answered from the
old one. Where replicas share one seeds folder and index, the first to see a change builds and the others find
the index already fresh and only load it. ``/healthz`` names the generation served (:func:`generation_of`).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bot.engine.message import Message
from bot.kb.index import CURRENT
from bot.kb.meta import SectionMeta
from bot.records import Answer, Case, Section
from bot.settings import Settings

if TYPE_CHECKING:
    from bot.engine.answerer import ServingEngine
    from bot.engine.retrieve import Engine

log = logging.getLogger("bot.engine.live")
_watchers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # engine -> its one LiveEngine
_watchers_lock = threading.Lock()


def _pointer(index_dir: Path) -> str:
    try:
        return (Path(index_dir) / CURRENT).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


class LiveEngine:
    """Stands in for :class:`bot.engine.retrieve.Engine` (every attribute is the current engine's) and reloads it."""

    def __init__(self, engine: Engine, poll_seconds: float = 5.0) -> None:
        self._engine = engine
        self._poll = poll_seconds
        path = getattr(getattr(engine, "index", None), "path", None)
        self.generation = Path(path).name if path else _pointer(engine.settings.index_dir)
        self._failed = ""  # a generation that would not load: not retried until CURRENT changes again
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reloads = 0
        self.checks = 0  # polls done (tests wait on it instead of sleeping)
        self.seeds: SeedsWatcher | None = None  # follows seeds/ itself when the app asks (BOT_WATCH_SEEDS)

    def __getattr__(self, name: str) -> Any:  # only called for what LiveEngine itself does not define
        return getattr(self._engine, name)

    @property
    def current(self) -> Engine:
        return self._engine

    # The answer layer's protocol (bot.engine.answerer.Answerer), typed: each call goes to the current engine.
    @property
    def settings(self) -> Settings:
        return self._engine.settings

    @property
    def sections(self) -> Sequence[Section]:
        return self._engine.sections

    def section(self, key: str) -> Section | None:
        return self._engine.section(key)

    def meta(self, key: str) -> SectionMeta | None:
        return self._engine.meta(key)

    def read(self, message: object) -> Message:
        return self._engine.read(message)

    def ask(
        self, text: object, *, k: int = 10, case: Case | None = None, exclude: Iterable[str] = (), turn: bool = False
    ) -> Answer:
        return self._engine.ask(text, k=k, case=case, exclude=exclude, turn=turn)

    def terms_in(self, search: str, key: str) -> tuple[str, ...]:
        return self._engine.terms_in(search, key)

    def section_vectors(self) -> tuple[dict[str, int], np.ndarray] | None:
        return self._engine.section_vectors()

    def check(self) -> bool:
        """Load and swap in the generation ``CURRENT`` names, if it is new; True when swapped."""
        from bot.engine.retrieve import Engine
        from bot.kb.index import IndexProblem

        with self._lock:  # one reload at a time, whoever calls
            self.checks += 1
            name = _pointer(self._engine.settings.index_dir)
            if not name or name == self.generation or name == self._failed:
                return False
            try:
                fresh = Engine.open(self._engine.settings, self._engine.embedder)
            except (IndexProblem, OSError, ValueError) as exc:
                self._failed = name
                log.warning(
                    "index: new generation %s not loaded, still answering from %s: %s", name, self.generation, exc
                )
                return False
            self._engine = fresh  # one assignment: requests see the old engine or the new one, never a mix
            self.generation = Path(fresh.index.path).name
            self._failed = ""
            self.reloads += 1
            log.warning("index: now answering from generation %s (%d sections)", self.generation, len(fresh.sections))
            return True

    def start(self) -> LiveEngine:
        if self._poll > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="bot-index-watch", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self.seeds is not None:
            self.seeds.stop()

    def _run(self) -> None:
        while not self._stop.wait(self._poll):
            try:
                self.check()
            except Exception:  # the watcher must outlive any surprise; answers go on from the old engine
                log.exception("index: reload failed")


def generation_of(engine: ServingEngine) -> str:
    """The index generation an engine (live, loaded, or still loading behind the door) answers from; "" if none.

    >>> generation_of(object())
    ''
    """
    name = getattr(engine, "generation", None)
    if isinstance(name, str):
        return name
    path = getattr(getattr(engine, "index", None), "path", None)
    return Path(path).name if path else ""


SEEDS_DEBOUNCE_MS = 300  # a copy of several files is one change; a rebuild starts this long after the last write
SEEDS_POLL_MS = 500  # only when inotify cannot be had (its per-user limit reached): how often seeds/ is scanned
# What only a build needs (the chunker's langchain, 2.3 s to import on a busy machine) is imported this long after
# the watcher starts: the first change is not slowed by it, and a cold start's first answer and UI are not either.
SEEDS_WARM_AFTER_S = 15.0


def seeds_change(seeds_dir: Path) -> Any:
    """The ``watchfiles`` filter of what a rebuild depends on: documents, ``meta/*.toml``, ``vocabulary.toml``
    (not ``labels/``, which only ``calibrate`` and ``tune`` read).

    >>> relevant = seeds_change(Path("seeds"))
    >>> [relevant(None, f"seeds/{name}") for name in ("faq/new.md", "meta/new.toml", "vocabulary.toml", "labels/a.jsonl", ".x.md.swp")]
    [True, True, True, False, False]
    """
    from bot.kb.meta import META_DIR
    from bot.kb.parse import DOCUMENT_SUFFIXES

    root = Path(seeds_dir)

    def relevant(_change: object, path: str) -> bool:
        try:
            relative = Path(path).relative_to(root)
        except ValueError:
            return False
        if any(part.startswith(".") for part in relative.parts):  # editors' swap files, hidden folders
            return False
        if relative.parts[0] == META_DIR:
            return relative.suffix == ".toml"
        return relative.suffix.lower() in DOCUMENT_SUFFIXES or relative.as_posix() == VOCABULARY_NAME

    return relevant


VOCABULARY_NAME = "vocabulary.toml"  # seeds/vocabulary.toml: a company's word lists (bot.engine.subjects)


class SeedsWatcher:
    """Rebuilds the index when ``seeds/`` changes and has the :class:`LiveEngine` serve it (see the module)."""

    def __init__(self, live: LiveEngine) -> None:
        self.live = live
        self.rebuilds = 0  # builds done (tests wait on the generation in /healthz instead)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> SeedsWatcher:
        if self._thread is None and Path(self.live.settings.seeds_dir).is_dir():
            self._thread = threading.Thread(target=self._run, name="bot-seeds-watch", daemon=True)
            self._thread.start()
            warm = threading.Timer(SEEDS_WARM_AFTER_S, self._warm)
            warm.daemon = True
            warm.start()
        return self

    def _warm(self) -> None:
        if not self._stop.is_set():
            import bm25s  # noqa: F401  (the index's lexical half)

            import bot.kb.chunk  # noqa: F401  (langchain's splitter)

    def stop(self) -> None:
        self._stop.set()

    def rebuild(self) -> bool:
        """Build a generation for the seeds as they are now, unless the index already is (another replica built
        it), and swap it in; True when a new generation is served."""
        from bot.engine.facts import SectionFactsHook, build
        from bot.kb.domain import load_domain
        from bot.kb.index import IndexProblem, read_manifest, stale_sources

        settings = self.live.settings
        try:
            domain = load_domain(settings.seeds_dir)
        except ValueError as exc:  # a bad domain.toml or vocabulary.toml: said, and the generation served stays
            log.warning("seeds: %s; the index served stays until the file is fixed", exc)
            return False
        try:
            _, manifest = read_manifest(settings.index_dir)
            fresh = (
                not stale_sources(manifest, settings.seeds_dir)
                and manifest.get("facts") == SectionFactsHook(domain).version
            )
        except IndexProblem:
            fresh = False
        if not fresh:
            report = build(settings, self.live.embedder)
            self.rebuilds += 1
            for error in report.parse_errors:  # that file is left out; the others are served
                log.warning("seeds: skipped %s", error)
            log.warning(
                "seeds changed: built %s, %d sections (%d embedded, %d reused) in %.1fs",
                report.path.name,
                report.sections,
                report.embedded,
                report.reused,
                report.seconds,
            )
        return self.live.check()

    def _changes(self) -> Any:
        from watchfiles import watch

        options = dict(
            watch_filter=seeds_change(Path(self.live.settings.seeds_dir).resolve()),
            debounce=SEEDS_DEBOUNCE_MS,
            stop_event=self._stop,
            raise_interrupt=False,
        )
        try:
            yield from watch(Path(self.live.settings.seeds_dir).resolve(), **options)
        except Exception as exc:  # e.g. the per-user inotify limit (128 by default): scan instead, as sure
            log.warning("seeds: cannot watch with inotify (%s); scanning every %d ms instead", exc, SEEDS_POLL_MS)
            yield from watch(
                Path(self.live.settings.seeds_dir).resolve(), force_polling=True, poll_delay_ms=SEEDS_POLL_MS, **options
            )

    def _run(self) -> None:
        for _changes in self._changes():
            try:
                self.rebuild()
            except Exception:  # the watcher must outlive a bad document or a full disk; answers go on
                log.exception("seeds: rebuild failed, still answering from %s", self.live.generation)


def watch_index(engine: ServingEngine, poll_seconds: float, *, seeds: bool = False) -> ServingEngine:
    """Wrap a loaded :class:`bot.engine.retrieve.Engine` so it follows ``index/CURRENT`` (every ``poll_seconds``;
    0: not polled) and, with ``seeds``, ``seeds/`` itself (:class:`SeedsWatcher`); anything else is returned as is.

    The same engine gets the same watcher however often it is wrapped (one poller, one load per generation).
    """
    from bot.engine.retrieve import Engine

    if isinstance(engine, LiveEngine):
        return engine
    if not isinstance(engine, Engine) or (poll_seconds <= 0 and not seeds):
        return engine
    with _watchers_lock:
        live = _watchers.get(engine)
        if live is None:
            live = _watchers[engine] = LiveEngine(engine, poll_seconds).start()
        if seeds and live.seeds is None:
            live.seeds = SeedsWatcher(live).start()
        return live
