"""The package's layout is its pipeline: each stage imports only the stages before it, and no cycle.

Stages in order (``bot/__init__.py`` says what each holds): the shared ``records``/``settings``/``jsonl``,
``kb``, ``diagnose``, ``engine``, then ``answer`` and ``store`` side by side, ``fit``, ``web``, and the ``cli`` on
top. Nothing that serves imports ``fit``: it sits above the serving stages, and only the ``cli`` runs it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fixtures.source import parse

BOT = Path(__file__).resolve().parents[1] / "bot"
RANK = {
    "limits": -1,  # every limit, defined once: imports nothing, so any stage (the settings too) may import it
    "records": 0,
    "settings": 0,
    "jsonl": 0,  # one reader of labelled JSON-lines files, for the environment batches and the fitting sets
    "kb": 1,
    "diagnose": 2,  # environment reading and compatibility: the engine's message reading uses the reader
    "engine": 3,
    "answer": 4,
    "store": 4,
    "fit": 5,  # calibration, evaluation, training: replays conversations through answer; nothing serving imports it
    "web": 6,
    "cli": 7,
    "__main__": 8,
}
SERVING = ("kb", "diagnose", "engine", "answer", "store", "web")


def bot_imports(path: Path) -> list[str]:
    """Modules of ``bot`` that ``path`` imports, e.g. ``['bot.kb.index', 'bot.records']``."""
    found = []
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.split(".")[0] == "bot":
            found += [node.module] if node.module != "bot" else [f"bot.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("bot.")]
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(BOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(BOT.rglob("*.py"))}


def stage(module: str) -> str:
    return module.split(".")[1]


@pytest.mark.parametrize("module", [m for m in MODULES if m.count(".") >= 1])
def test_a_stage_imports_only_earlier_stages(module: str) -> None:
    mine = stage(module)
    wrong = [
        other for other in bot_imports(MODULES[module]) if stage(other) != mine and RANK[stage(other)] >= RANK[mine]
    ]
    assert not wrong, f"{module} (stage {mine}) imports {wrong}: move the shared piece down a stage"


def test_every_stage_is_listed_and_documented() -> None:
    stages = {p.name for p in BOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert stages <= RANK.keys(), f"stage folders not in RANK: {stages - RANK.keys()}"
    for name in stages:
        doc = ast.get_docstring(parse(BOT / name / "__init__.py"))
        assert doc and "May import" in doc, f"bot/{name}/__init__.py must say what it holds and what it may import"


def test_no_import_cycle() -> None:
    graph = {m: {i for i in bot_imports(p) if i in MODULES and i != m} for m, p in MODULES.items()}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(trail[trail.index(nxt) :] + [nxt]))
            if nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for module in graph:
        if module not in state:
            visit(module, [module])


@pytest.mark.parametrize("module", [m for m in MODULES if m.count(".") >= 1 and stage(m) in SERVING])
def test_nothing_that_serves_imports_fitting_code(module: str) -> None:
    fitting = [other for other in bot_imports(MODULES[module]) if stage(other) == "fit"]
    assert not fitting, f"{module} serves and imports {fitting}: fitting code is loaded by the cli only"


def private_imports(path: Path) -> list[str]:
    """``module._name`` for every ``_name`` that ``path`` imports from another module of ``bot``."""
    found = []
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.split(".")[0] == "bot":
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.ImportFrom) and node.level:  # a relative import is another module too
            found += [f".{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


def test_private_imports_are_found(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "from bot.engine.rank import _shared_only, rank\nfrom .scores import _z\nimport bot.kb\n", encoding="utf-8"
    )
    assert private_imports(path) == ["bot.engine.rank._shared_only", ".scores._z"]


@pytest.mark.parametrize("module", list(MODULES))
def test_no_private_name_is_imported_across_modules(module: str) -> None:
    taken = private_imports(MODULES[module])
    assert not taken, f"{module} imports private names {taken}: make them public (with a docstring) where they live"
