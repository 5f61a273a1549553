"""Issue 33, live documents, the watcher's decision: build when seeds/ changed, only load when another replica
already built for the seeds as they are, and tell documents from what a build does not read."""

from __future__ import annotations

from pathlib import Path

from bot.engine.facts import build
from bot.engine.live import LiveEngine, SeedsWatcher, generation_of, seeds_change
from bot.engine.retrieve import Engine
from bot.kb.embed import HashEmbedder

AMP = "# 混合精度\n\n## loss scale 溢出\n\n调小 `init_loss_scaling`。\n"


def test_a_change_is_built_once_and_a_replica_that_finds_it_built_only_loads_it(hash_settings):
    engine = Engine.open(hash_settings, HashEmbedder(), auto_build=True)
    live = LiveEngine(engine, poll_seconds=0)
    watcher = SeedsWatcher(live)
    assert watcher.rebuild() is False and watcher.rebuilds == 0  # nothing changed: no build, same generation

    (hash_settings.seeds_dir / "amp.md").write_text(AMP, encoding="utf-8")
    first = generation_of(live)
    assert watcher.rebuild() is True and watcher.rebuilds == 1
    assert generation_of(live) != first and any(s.source == "amp.md" for s in live.sections)

    # Another replica on the same seeds and index saw the next change first and built it.
    other = LiveEngine(Engine.open(hash_settings, HashEmbedder()), poll_seconds=0)
    (hash_settings.seeds_dir / "amp.md").unlink()
    build(hash_settings, HashEmbedder())
    replica = SeedsWatcher(other)
    assert replica.rebuild() is True and replica.rebuilds == 0  # loaded, not built again
    assert not any(s.source == "amp.md" for s in other.sections)


def test_only_what_a_build_reads_starts_one():
    relevant = seeds_change(Path("/kb/seeds"))
    assert relevant(None, "/kb/seeds/faq/new.md") and relevant(None, "/kb/seeds/meta/faq/new.toml")
    assert relevant(None, "/kb/seeds/vocabulary.toml") and relevant(None, "/kb/seeds/notes.TXT")
    assert not relevant(None, "/kb/seeds/labels/ours.jsonl")  # labels are read by calibrate and tune only
    assert not relevant(None, "/kb/seeds/.new.md.swp") and not relevant(None, "/kb/other/new.md")
