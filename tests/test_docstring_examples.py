"""Every docstring example in bot/ (and bench/) runs as a test, one test per module, all of a module's wrong
examples reported, not only the first.

Collecting them costs nothing: the modules are found and read as text here (``ast``), and imported only when
their test runs. A module whose imports reach Gradio (at module level, through bot's own modules too) costs
seconds to import, so its examples run in the server tier, the rest in the unit tier (see tests/conftest.py).
"""

from __future__ import annotations

import ast
import doctest
import functools
import importlib
import io
from pathlib import Path

import pytest

from fixtures import REPO
from fixtures.source import parse

PACKAGES = ("bot", "bench")
# Third-party packages whose import alone costs seconds on 2 shared cores: a module reaching one is not unit-tier.
HEAVY = {"gradio": "server", "onnxruntime": "model", "torch": "model", "sentence_transformers": "model"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))}


def _top_level_imports(tree: ast.Module) -> list[str]:
    """Modules the file imports when it is imported (not inside functions, not under ``if TYPE_CHECKING``)."""
    found: list[str] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.append(node.module)
                found.extend(f"{node.module}.{alias.name}" for alias in node.names)  # a submodule, if it is one
            elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)

    visit(tree.body)
    return found


@functools.cache
def _direct(module: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """(third-party top-level packages, bot/bench modules) that ``module`` imports at import time."""
    tree = parse(MODULES[module])
    outside, inside = set(), []
    for name in _top_level_imports(tree):
        if name in MODULES:
            inside.append(name)
        elif name.split(".")[0] not in PACKAGES:
            outside.add(name.split(".")[0])
    parts = module.split(".")
    inside.extend(".".join(parts[:n]) for n in range(1, len(parts)) if ".".join(parts[:n]) in MODULES)  # packages
    return frozenset(outside), tuple(inside)


def third_party_imports(module: str) -> set[str]:
    """Third-party packages importing ``module`` imports, through bot's and bench's own modules too."""
    seen, todo, found = set(), [module], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        outside, inside = _direct(name)
        found |= outside
        todo.extend(inside)
    return found


def has_examples(path: Path) -> bool:
    """Some docstring in the file holds a ``>>>`` example (a parser's test strings do not count)."""
    tree = parse(path)
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return any(">>>" in (ast.get_docstring(node) or "") for node in ast.walk(tree) if isinstance(node, kinds))


def _params():
    for module, path in MODULES.items():
        if not has_examples(path):
            continue
        tiers = sorted({HEAVY[p] for p in third_party_imports(module) if p in HEAVY})
        yield pytest.param(module, id=module, marks=[getattr(pytest.mark, tier) for tier in tiers])


@pytest.mark.parametrize("module", list(_params()))
def test_docstring_examples(module: str):
    imported = importlib.import_module(module)
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in doctest.DocTestFinder().find(imported, module) if t.examples]
    for test in tests:
        runner.run(test, out=out.write)
    assert tests, f"{module} has a '>>>' docstring example that doctest does not find"
    assert runner.failures == 0, out.getvalue()


def test_the_import_walk_sees_gradio_through_bots_own_modules():
    assert "gradio" not in third_party_imports("bot.kb.chunk")
    assert "gradio" in third_party_imports("bot.web.ui")  # bot/web/ui/__init__.py imports it
    assert {"numpy"} <= third_party_imports("bot.engine.retrieve")
