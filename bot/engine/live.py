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

The watch outlives any event and any error (issue 45: an event on ``seeds/`` itself once ended it without a word):
when it stops, or ``seeds/`` is removed, it logs why and watches again once the folder is back; meanwhile the index
served stays. ``/healthz`` says ``"watching": false`` while it does not run and ``"stale": true`` while ``seeds/``
differs from what the generation served was last found to match (:func:`watch_health`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bot.engine.message import Message
from bot.kb.domain import SEEDS_DOMAIN, SEEDS_VOCABULARY
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
SEEDS_HEARTBEAT_MS = 1_000  # a watch without changes wakes this often: to say it is set up, to see seeds/ gone
SEEDS_RESTART_S = 1.0  # a watch that stopped (an error, seeds/ removed) begins again after this (no busy loop)
SEEDS_RESTART_MAX_S = 60.0  # a watch that fails as it begins, again and again: the wait doubles up to this
# What only a build needs (the chunker's langchain, 2.3 s to import on a busy machine) is imported this long after
# the watcher starts: the first change is not slowed by it, and a cold start's first answer and UI are not either.
SEEDS_WARM_AFTER_S = 15.0


def seeds_change(seeds_dir: Path) -> Any:
    """The ``watchfiles`` filter of what a rebuild depends on: documents, ``meta/*.toml``, ``vocabulary.toml``,
    ``domain.toml`` and the folder itself (not ``labels/``, which only ``calibrate`` and ``tune`` read).

    >>> relevant = seeds_change(Path("seeds"))
    >>> [relevant(None, f"seeds/{name}") for name in ("faq/new.md", "meta/new.toml", "vocabulary.toml", "labels/a.jsonl", ".x.md.swp")]
    [True, True, True, False, False]
    >>> relevant(None, "seeds")
    True
    """
    from bot.kb.meta import META_DIR
    from bot.kb.parse import DOCUMENT_SUFFIXES

    root = Path(seeds_dir)

    def relevant(_change: object, path: str) -> bool:
        try:
            relative = Path(path).relative_to(root)
        except ValueError:
            return False
        if not relative.parts:  # seeds/ itself (chmod, removed, put back; in polling mode, with every event):
            return True  # a check, which builds only if the documents differ from the index's
        if any(part.startswith(".") for part in relative.parts):  # editors' swap files, hidden folders
            return False
        if relative.parts[0] == META_DIR:
            return relative.suffix == ".toml"
        return relative.suffix.lower() in DOCUMENT_SUFFIXES or relative.as_posix() in SEEDS_FILES

    return relevant


SEEDS_FILES = (SEEDS_VOCABULARY, SEEDS_DOMAIN)  # a company's word lists, FAQ conventions and subjects (bot.kb.domain)


class SeedsWatcher:
    """Rebuilds the index when ``seeds/`` changes and has the :class:`LiveEngine` serve it (see the module).

    The watch outlives any event and any error: when it stops (an error, or ``seeds/`` removed, which ends an
    inotify watch without a word), it says so in the log and watches again once the folder is there, checking
    first for what changed meanwhile. ``watching`` is what ``/healthz`` reports (:func:`watch_health`).
    """

    def __init__(self, live: LiveEngine) -> None:
        self.live = live
        self.rebuilds = 0  # builds done (tests wait on the generation in /healthz instead)
        self.restarts = 0  # watches begun again after one stopped
        self.watching = False  # inside a watch of seeds/ (False while the folder is missing, or after a failure)
        self._polling = False  # inotify could not be had once: scan from then on
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handled = threading.Condition()  # notified after each change handled and each start or stop of a watch
        # seeds/ as the generation served was last found to match it (seeds_stamp): as the engine was opened (and
        # checked) just now, then at each check; seeds/ stamped otherwise now is what /healthz calls stale.
        self.matched = seeds_stamp(live.settings.seeds_dir)

    def start(self) -> SeedsWatcher:
        if self._thread is None and Path(self.live.settings.seeds_dir).is_dir():
            self._thread = threading.Thread(target=self._run, name="bot-seeds-watch", daemon=True)
            self._thread.start()
            warm = threading.Timer(SEEDS_WARM_AFTER_S, self._warm)
            warm.daemon = True
            warm.start()
        return self

    @property
    def running(self) -> bool:
        """The watcher's thread is alive and inside a watch of ``seeds/``."""
        return self.watching and self._thread is not None and self._thread.is_alive()

    def wait_for(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``done()`` holds, looked at again after each change handled and each (re)start of the watch;
        its last value (False after ``timeout`` seconds)."""
        with self._handled:
            return self._handled.wait_for(done, timeout)

    def _notify(self) -> None:
        with self._handled:
            self._handled.notify_all()

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
        stamp = seeds_stamp(settings.seeds_dir)  # before reading: a change while building reads as a change
        if not Path(settings.seeds_dir).is_dir():  # removed, perhaps to be put back: no empty index is built
            log.warning("seeds: %s is missing; the index served stays until it is back", settings.seeds_dir)
            return False
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
        swapped = self.live.check()
        if self.live.generation == _pointer(settings.index_dir):
            self.matched = stamp
        return swapped

    def _rebuild_logged(self) -> None:
        try:
            self.rebuild()
        except Exception:  # the watcher must outlive a bad document or a full disk; answers go on
            log.exception("seeds: rebuild failed, still answering from %s", self.live.generation)
        self._notify()

    def _changes(self, root: Path) -> Any:
        from watchfiles import watch

        options = dict(
            watch_filter=seeds_change(root),
            debounce=SEEDS_DEBOUNCE_MS,
            stop_event=self._stop,
            raise_interrupt=False,
            rust_timeout=SEEDS_HEARTBEAT_MS,
            yield_on_timeout=True,  # an empty set: the watch is set up (and the folder is looked at again)
        )
        if self._polling:
            yield from watch(root, force_polling=True, poll_delay_ms=SEEDS_POLL_MS, **options)
        else:
            yield from watch(root, **options)

    def _watch(self, root: Path) -> None:
        """One watch of ``root``, until it is stopped or the folder goes; raises what the watch raised."""
        began = False
        try:
            for changes in self._changes(root):
                if not began:
                    began = self.watching = True
                    self._notify()
                if changes:
                    self._rebuild_logged()
                if not root.is_dir():
                    return  # seeds/ went: an inotify watch of it is over; watched again once it is back
        except OSError as exc:
            # The per-user inotify limit (128 by default) is met before any change: scan instead, as sure.
            if began or self._polling or isinstance(exc, FileNotFoundError | PermissionError):
                raise
            log.warning("seeds: cannot watch with inotify (%s); scanning every %d ms instead", exc, SEEDS_POLL_MS)
            self._polling = True
            self._watch(root)

    def _run(self) -> None:
        root = Path(self.live.settings.seeds_dir).resolve()
        first, missing, delay = True, False, SEEDS_RESTART_S
        while not self._stop.is_set():
            if not root.is_dir():  # removed, perhaps to be put back: said once, looked for again every second
                if not missing:
                    self._say(root, "stopped: the folder is missing; watching again once it is back")
                missing = True
                self._stop.wait(SEEDS_RESTART_S)
                continue
            if missing:
                log.warning("seeds: %s is back; watching it again", root)
            missing = False
            if not first:  # what changed while nothing watched
                self.restarts += 1
                self._rebuild_logged()
            first = False
            why = ""
            try:
                self._watch(root)
            except Exception as exc:  # anything at all: said, and watched again
                why = f"failed ({type(exc).__name__}: {exc})"
            finally:
                began = self.watching  # the watch was set up (then stopped), or failed as it began
                self.watching = False
                self._notify()
            if self._stop.is_set():
                return
            if not root.is_dir():
                continue  # said above, once
            delay = SEEDS_RESTART_S if began else min(delay * 2, SEEDS_RESTART_MAX_S)  # a watch failing at once
            self._say(root, f"{why or 'ended'}; watching again in {delay:.0f} s")
            self._stop.wait(delay)

    def _say(self, root: Path, what: str) -> None:
        log.warning("seeds: watching %s %s, answering from %s meanwhile", root, what, self.live.generation)


def watch_health(engine: object) -> dict[str, bool | None]:
    """What ``/healthz`` says of the watch of ``seeds/``: ``watching``, whether the watcher runs; ``stale``, whether
    the folder changed since the generation served was last found to match it (None: ``seeds/`` is not followed).

    >>> watch_health(object())
    {'watching': None, 'stale': None}
    """
    watcher = getattr(engine, "seeds", None)
    if not isinstance(engine, LiveEngine) or not isinstance(watcher, SeedsWatcher):
        return {"watching": None, "stale": None}
    return {"watching": watcher.running, "stale": seeds_stamp(engine.settings.seeds_dir) != watcher.matched}


def seeds_stamp(seeds_dir: Path) -> str:
    """A digest of the files a build reads in ``seeds_dir`` (those :func:`seeds_change` keeps): path, size and
    change time, which any write, rename or chmod moves and which ``cp -a`` and ``rsync -a`` cannot set back as they
    do the modification time; a file added or removed changes the paths. Stats only: cheap enough for /healthz.
    Compared with an earlier stamp, not with a clock (Linux stamps changes with a clock a tick behind).
    """
    root = Path(seeds_dir)
    relevant = seeds_change(root)
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):  # nothing (one digest) when the folder is missing
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for path in sorted(p for f in files if relevant(None, p := os.path.join(folder, f))):
            try:
                info = os.stat(path, follow_symlinks=False)
                stamp = f"{info.st_size}:{info.st_ctime_ns}"
            except OSError:  # went while looked at
                stamp = "gone"
            digest.update(f"{path}\x00{stamp}\x00".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


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
