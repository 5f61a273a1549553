"""Issue 11 regressions outside the web layer: seeds links, index generations, settings, `bot report`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.embed import make_embedder
from bot.index import build_index
from bot.settings import Settings


def _kb(tmp_path: Path) -> Settings:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "gpu.md").write_text("# GPU\n\n## 显存不足\n\n减小 batch_size。\n", encoding="utf-8")
    return Settings(seeds_dir=seeds, index_dir=tmp_path / "index", embedder="hash", min_confidence=0.0)


# ---------------------------------------------------------------- seeds: links and special files


def test_symlinks_and_special_files_in_seeds_are_skipped_with_a_warning(tmp_path):
    settings = _kb(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("root:x:0:0:TOPSECRET:/root:/bin/bash\n", encoding="utf-8")
    (outside / "more.md").write_text("# More\n\nTOPSECRET too\n", encoding="utf-8")
    os.symlink(outside / "secret.txt", settings.seeds_dir / "leak.md")  # before: indexed and answerable
    os.symlink(outside, settings.seeds_dir / "linked-folder")
    os.mkfifo(settings.seeds_dir / "pipe.md")
    report = build_index(settings, make_embedder("hash"))
    sections = json.loads((report.path / "sections.json").read_text(encoding="utf-8"))
    assert {s["source"] for s in sections} == {"gpu.md"}
    assert not any("TOPSECRET" in s["text"] for s in sections)
    warnings = "\n".join(report.parse_errors)
    assert "leak.md: is a symbolic link" in warnings and "copy the file into seeds/" in warnings
    assert "linked-folder: is a symbolic link to a folder" in warnings
    assert "pipe.md: is not a regular file" in warnings


# ---------------------------------------------------------------- index generations


def _race(monkeypatch, settings: Settings, builds: int) -> None:
    """Run ``builds`` builds right after a reader has picked its generation (inside its load)."""
    import bot.index as index

    original, done = index.check_manifest, []

    def check_then_build(*args, **kwargs):
        original(*args, **kwargs)
        if not done:
            done.append(True)
            for n in range(builds):
                (settings.seeds_dir / "gpu.md").write_text(f"# GPU\n\n## 显存不足\n\n减小 batch_size {n}。\n",
                                                            encoding="utf-8")
                build_index(settings, make_embedder("hash"))

    monkeypatch.setattr(index, "check_manifest", check_then_build)


def test_a_build_during_a_load_does_not_pull_the_files_away(tmp_path, monkeypatch):
    from bot.index import load_index

    settings = _kb(tmp_path)
    first = build_index(settings, make_embedder("hash")).path
    _race(monkeypatch, settings, builds=1)
    embedder = make_embedder("hash")
    loaded = load_index(settings, embedder.id, embedder.dim, check_sources=False)  # before: IndexCorrupt
    assert loaded.path == first and first.is_dir()  # the previous generation is kept until the next build


def test_a_load_slower_than_two_builds_retries_once_on_the_new_generation(tmp_path, monkeypatch):
    from bot.index import load_index

    settings = _kb(tmp_path)
    first = build_index(settings, make_embedder("hash")).path
    _race(monkeypatch, settings, builds=2)
    embedder = make_embedder("hash")
    loaded = load_index(settings, embedder.id, embedder.dim)
    assert not first.exists() and loaded.path != first
    assert "batch_size 1" in " ".join(s.text for s in loaded.sections)
    assert len(list(settings.index_dir.glob("gen-*"))) == 2  # current + previous, no more


@pytest.mark.parametrize("field,value", [("sources", ["a"]), ("artifacts", {"x": 1}), ("sources", {"a": None}),
                                         ("parse_errors", "oops")])
def test_manifest_with_wrong_typed_fields_reads_as_corrupt_and_auto_build_repairs(tmp_path, field, value):
    from bot.index import IndexCorrupt, load_index
    from bot.retrieve import Engine

    settings = _kb(tmp_path)
    gen = build_index(settings, make_embedder("hash")).path
    manifest = json.loads((gen / "manifest.json").read_text(encoding="utf-8"))
    manifest[field] = value
    (gen / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    embedder = make_embedder("hash")
    with pytest.raises(IndexCorrupt, match=f"manifest.json is unreadable.*{field}.*python -m bot build"):
        load_index(settings, embedder.id, embedder.dim)  # before: AttributeError / TypeError
    assert Engine.open(settings, embedder, auto_build=True).sections
