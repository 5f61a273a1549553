"""The package's layout is its pipeline: each stage imports only the stages before it, and no cycle.

Stages in order (``bot/__init__.py`` says what each holds): the shared ``records``/``settings``,
``kb``, ``engine``, then ``answer`` and ``store`` side by side, ``web``, and the ``cli`` on top.
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
    "kb": 1,
    "engine": 2,
    "answer": 3,
    "store": 3,
    "web": 4,
    "cli": 5,
    "__main__": 6,
}


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
