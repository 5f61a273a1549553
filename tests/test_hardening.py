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
