"""Issue 45, hardening round five, finding 4: a deeply nested ``seeds/vocabulary.toml`` (or ``domain.toml``, ``environment.toml``)
gave a RecursionError traceback at build and "the index failed to load (RecursionError…)" at start, naming no file.
Now the file and the fix are named: a command stops (exit 2), the app serves with the shipped lists meanwhile."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.kb.domain import DomainError, load_domain, shipped

DEEP = "problem = " + "[" * 100_000 + "]" * 100_000 + "\n"
DEEP_TABLES = "[faq]\nfields = " + "{ a = " * 50_000 + "1" + " }" * 50_000 + "\n"
FILES = pytest.mark.parametrize(
    "name, content",
    [("vocabulary.toml", DEEP), ("domain.toml", DEEP), ("domain.toml", DEEP_TABLES), ("environment.toml", DEEP)],
    ids=["vocabulary", "domain", "domain-inline-tables", "environment"],
)


def _seeds(tmp_path: Path) -> Path:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "billing.md").write_text("# Billing\n\n## The invoice is wrong\n\nAsk finance.\n", encoding="utf-8")
    return seeds


@FILES
def test_a_deeply_nested_seeds_file_is_named_with_the_fix(tmp_path, name, content):
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(DomainError) as refused:  # before: RecursionError, naming nothing
        load_domain(tmp_path)
    message = str(refused.value)
    assert str(tmp_path / name) in message and "nested" in message and "Fix the" in message and "remove" in message


@FILES
def test_the_build_command_stops_naming_the_file(tmp_path, capsys, name, content):
    from bot.cli import main

    seeds = _seeds(tmp_path)
    (seeds / name).write_text(content, encoding="utf-8")
    assert main(["build", "--embedder", "hash", "--seeds", str(seeds), "--index", str(tmp_path / "index")]) == 2
    err = capsys.readouterr().err
    assert str(seeds / name) in err and "Fix the" in err and "Traceback" not in err


@FILES
def test_the_app_starts_with_the_shipped_lists_and_names_the_file(tmp_path, caplog, name, content):
    from app import open_engine
    from bot.cli import main
    from bot.settings import Settings

    seeds = _seeds(tmp_path)
    (seeds / "vocabulary.toml").write_text('[[problem]]\nwords = ["invoice"]\n', encoding="utf-8")
    assert main(["build", "--embedder", "hash", "--seeds", str(seeds), "--index", str(tmp_path / "index")]) == 0
    (seeds / name).write_text(content, encoding="utf-8")  # broken after the build (an edit, a bad copy)

    settings = Settings(seeds_dir=seeds, index_dir=tmp_path / "index", embedder="hash")
    with caplog.at_level(logging.WARNING):
        engine = open_engine(settings, progress=False)  # before: RecursionError ("the index failed to load")
    assert engine.index.domain == shipped()  # the shipped lists and conventions, meanwhile
    assert engine.ask("the invoice is wrong").hits  # and it answers
    said = caplog.text
    assert str(seeds / name) in said and "Fix the" in said and "shipped" in said
