import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bot.engine.retrieve import Engine
from bot.kb.embed import HashEmbedder
from bot.kb.index import (
    IndexCorrupt,
    IndexMismatch,
    IndexMissing,
    IndexStale,
    build_index,
    load_index,
    read_manifest,
)
from bot.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def load(settings: Settings, embedder=None):
    embedder = embedder or HashEmbedder()
    return load_index(settings, embedder.id, embedder.dim)


def test_build_then_load_round_trip(hash_settings: Settings):
    report = build_index(hash_settings, HashEmbedder())
    index = load(hash_settings)
    assert report.sections == len(index.sections) == 4
    assert index.dense.ntotal == len(index.keys) == report.keys
    gen, manifest = read_manifest(hash_settings.index_dir)
    assert manifest["embedder"] == "hash:256" and manifest["dim"] == 256
    assert manifest["chunk_size"] == hash_settings.chunk_size
    assert set(manifest["sources"]) >= {"gpu.md", "tf.md"}
    assert manifest["dense"] == "flat"


class KeyFacts:
    """A facts hook written for the test: one row per section, and a version the manifest records."""

    version = "test:1"

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, sections):
        self.calls += 1
        return [{"key": s.key, "length": len(s.text)} for s in sections]


def test_the_build_stores_the_hooks_facts_and_the_load_reads_them(hash_settings: Settings):
    hook = KeyFacts()
    build_index(hash_settings, HashEmbedder(), facts=hook)
    index = load(hash_settings)
    assert hook.calls == 1
    assert index.facts == [{"key": s.key, "length": len(s.text)} for s in index.sections]
    gen, manifest = read_manifest(hash_settings.index_dir)
    assert manifest["facts"] == "test:1" and "facts.json" in manifest["artifacts"]


def test_an_index_built_without_a_hook_holds_no_facts(hash_settings: Settings):
    build_index(hash_settings, HashEmbedder())
    assert load(hash_settings).facts is None
    assert read_manifest(hash_settings.index_dir)[1]["facts"] is None


def test_a_changed_facts_file_is_refused_with_the_fix(hash_settings: Settings):
    build_index(hash_settings, HashEmbedder(), facts=KeyFacts())
    gen, _ = read_manifest(hash_settings.index_dir)
    (gen / "facts.json").write_text("[]", encoding="utf-8")
    with pytest.raises(IndexCorrupt, match=r"facts\.json is missing or corrupt.*Run: python -m bot build"):
        load(hash_settings)


def test_section_vectors_are_the_normalised_mean_of_their_keys_vectors(hash_settings: Settings):
    build_index(hash_settings, HashEmbedder())
    index = load(hash_settings)
    vectors = np.load(index.path / "vectors.npy")
    for n in range(len(index.sections)):
        mean = vectors[[k.section == n for k in index.keys]].sum(axis=0)
        np.testing.assert_allclose(index.section_vectors[n], mean / np.linalg.norm(mean), atol=1e-6)


def test_missing_index_names_folder_and_fix(hash_settings: Settings):
    with pytest.raises(IndexMissing, match=r"No index in .*index/.*Run: python -m bot build"):
        load(hash_settings)


def test_index_for_another_embedder_or_dimension_is_refused(hash_settings: Settings):
    build_index(hash_settings, HashEmbedder(dim=256))
    with pytest.raises(IndexMismatch, match=r"built for embedder 'hash:256' \(dim 256\).*'hash:128'"):
        load(hash_settings, HashEmbedder(dim=128))
    with pytest.raises(IndexMismatch, match="chunk_size"):
        load(hash_settings.model_copy(update={"chunk_size": 123}))


def test_other_format_version_is_refused(hash_settings: Settings):
    build_index(hash_settings, HashEmbedder())
    gen, manifest = read_manifest(hash_settings.index_dir)
    manifest["format"] = 999
    (gen / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexMismatch, match="format 999"):
        load(hash_settings)


def test_changed_added_or_removed_seeds_make_the_index_stale(hash_settings: Settings):
    build_index(hash_settings, HashEmbedder())
    seeds = hash_settings.seeds_dir
    (seeds / "tf.md").write_text((seeds / "tf.md").read_text(encoding="utf-8") + "\nmore\n", encoding="utf-8")
    with pytest.raises(IndexStale, match=r"tf\.md"):
        load(hash_settings)
    build_index(hash_settings, HashEmbedder())
    (seeds / "new.md").write_text("# New\n\nbody\n", encoding="utf-8")
    with pytest.raises(IndexStale, match=r"new\.md"):
        load(hash_settings)


@pytest.mark.parametrize("artifact", ["dense.faiss", "sections.json", "keys.json", "meta.json", "background.npy"])
def test_corrupt_artifact_is_named(hash_settings: Settings, artifact: str):
    build_index(hash_settings, HashEmbedder())
    gen, _ = read_manifest(hash_settings.index_dir)
    data = (gen / artifact).read_bytes()
    (gen / artifact).write_bytes(data[: len(data) // 2])
    with pytest.raises(IndexCorrupt, match=artifact.replace(".", r"\.")):
        load(hash_settings)


def test_corrupt_manifest_and_pointer_are_named(hash_settings: Settings):
    build_index(hash_settings, HashEmbedder())
    gen, _ = read_manifest(hash_settings.index_dir)
    (gen / "manifest.json").write_text("{not json")
    with pytest.raises(IndexCorrupt, match="manifest.json"):
        load(hash_settings)
    (hash_settings.index_dir / "CURRENT").write_text("gen-does-not-exist")
    with pytest.raises(IndexCorrupt, match="CURRENT"):
        load(hash_settings)


class Crash(Exception):
    pass


@pytest.mark.parametrize("step", ["parsed", "embedded", "written", "renamed"])
def test_interrupted_build_leaves_previous_index_loadable(hash_settings: Settings, step: str):
    build_index(hash_settings, HashEmbedder())
    before = load(hash_settings)
    seeds = hash_settings.seeds_dir
    (seeds / "extra.md").write_text("# Extra\n\nnew body\n", encoding="utf-8")

    def crash(name: str) -> None:
        if name == step:
            raise Crash(name)

    with pytest.raises(Crash):
        build_index(hash_settings, HashEmbedder(), after_step=crash)
    # The old generation still loads (sources ignored: the seeds did change) and answers.
    still = load_index(hash_settings, "hash:256", 256, check_sources=False)
    assert [s.key for s in still.sections] == [s.key for s in before.sections]
    Engine(still, HashEmbedder(), hash_settings).ask("显存不足")
    # The next build cleans up whatever the crash left and succeeds.
    build_index(hash_settings, HashEmbedder())
    assert any(s.source == "extra.md" for s in load(hash_settings).sections)
    leftovers = [p.name for p in hash_settings.index_dir.iterdir() if p.name.startswith(".tmp-")]
    assert leftovers == []
    assert len(list(hash_settings.index_dir.glob("gen-*"))) <= 2  # the live one and the one it replaced


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed(self, texts, role):
        self.embedded.extend(texts)
        return super().embed(texts, role)


def test_rebuild_reembeds_only_changed_sections(hash_settings: Settings):
    build_index(hash_settings, HashEmbedder())
    seeds = hash_settings.seeds_dir
    text = (seeds / "tf.md").read_text(encoding="utf-8")
    (seeds / "tf.md").write_text(text.replace("按需申请显存", "按需申请显存，不会一次占满"), encoding="utf-8")
    counting = CountingEmbedder()
    report = build_index(hash_settings, counting)
    assert report.embedded == len(counting.embedded) >= 1
    assert all("gpu.md" not in t and "libnccl" not in t for t in counting.embedded)
    assert any("不会一次占满" in t for t in counting.embedded)
    assert report.reused > report.embedded


def test_hnsw_above_threshold_and_same_answers(hash_settings: Settings):
    build_index(hash_settings.model_copy(update={"hnsw_threshold": 1}), HashEmbedder())
    _, manifest = read_manifest(hash_settings.index_dir)
    assert manifest["dense"] == "hnsw"
    engine = Engine.open(hash_settings.model_copy(update={"hnsw_threshold": 1}), HashEmbedder())
    assert hasattr(engine.index.dense, "hnsw")
    assert engine.ask("libnccl.so 找不到").hits[0].section.heading == "问题：多卡训练报错 libnccl.so"


def test_broken_seed_is_skipped_and_reported(hash_settings: Settings):
    (hash_settings.seeds_dir / "broken.md").write_bytes(b"# \xff\xfe broken\n")
    report = build_index(hash_settings, HashEmbedder())
    assert any(e.startswith("broken.md:1") for e in report.parse_errors)
    assert report.sections == 4


def test_auto_build_rebuilds_a_broken_index(hash_settings: Settings):
    build_index(hash_settings, HashEmbedder())
    gen, _ = read_manifest(hash_settings.index_dir)
    (gen / "dense.faiss").write_bytes(b"garbage")
    engine = Engine.open(hash_settings, HashEmbedder(), auto_build=True)
    assert engine.ask("显存不足").hits


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_cli_reports_problems_with_the_fix_and_fails(hash_settings: Settings, tmp_path: Path):
    common = ["--embedder", "hash", "--seeds", str(hash_settings.seeds_dir), "--index", str(hash_settings.index_dir)]
    missing = run_cli("ask", "显存不足", *common, cwd=tmp_path)
    assert missing.returncode == 2
    assert "No index in" in missing.stderr and "Run: python -m bot" in missing.stderr and "build" in missing.stderr
    assert run_cli("build", *common, cwd=tmp_path).returncode == 0
    other = run_cli(
        "ask",
        "显存不足",
        "--embedder",
        "hash:64",
        "--seeds",
        str(hash_settings.seeds_dir),
        "--index",
        str(hash_settings.index_dir),
        cwd=tmp_path,
    )
    assert other.returncode == 2 and "built for embedder 'hash:256'" in other.stderr
    (hash_settings.seeds_dir / "gpu.md").write_text("# changed\n\nbody\n", encoding="utf-8")
    stale = run_cli("ask", "显存不足", *common, cwd=tmp_path)
    assert stale.returncode == 2 and "stale" in stale.stderr and "gpu.md" in stale.stderr
    assert "Traceback" not in stale.stderr


def test_seed_caps_come_from_settings_and_the_build_names_what_was_left_out(hash_settings: Settings):
    seeds = hash_settings.seeds_dir
    (seeds / "runaway.txt").write_bytes(b"y" * 20_000)
    (seeds / "headings.md").write_text("".join(f"# h{i}\n\nbody {i}\n\n" for i in range(50)), encoding="utf-8")
    settings = hash_settings.model_copy(update={"max_seed_bytes": 10_000, "max_seed_sections": 10})

    seen: list[str] = []

    class Recording(HashEmbedder):
        def embed(self, texts, role="passage"):
            seen.extend(texts)
            return super().embed(texts, role=role)

    report = build_index(settings, Recording())
    assert report.sections == 4 + 10  # tiny_seeds' four, and ten of the fifty headings
    assert any(e.startswith("runaway.txt: is 20,000 bytes, over the cap of 10,000") for e in report.parse_errors)
    assert any(e.startswith("headings.md:") and "has 50 headings" in e for e in report.parse_errors)
    assert seen and not any("yyyy" in t for t in seen)  # the runaway file is never chunked or embedded
    assert not any("body 10" in t for t in seen)  # nor what is past the heading cap
    assert Settings.from_env({"BOT_MAX_SEED_BYTES": "2000000", "BOT_MAX_SEED_SECTIONS": "300"}).max_seed_sections == 300
    with pytest.raises(ValueError, match="BOT_MAX_SEED_BYTES='-1' is not allowed"):
        Settings.from_env({"BOT_MAX_SEED_BYTES": "-1"})


def _english_key_seeds(root: Path) -> Settings:
    """One Chinese document without curated metadata, one with curated English phrasings, one English document."""
    seeds = root / "seeds"
    (seeds / "meta").mkdir(parents=True)
    (seeds / "new.md").write_text(
        "# 安装\n\n## 报错 no CUDA-capable device is detected\n\n请把 libcudart.so 所在目录加入 `LD_LIBRARY_PATH`。\n",
        encoding="utf-8",
    )
    (seeds / "curated.md").write_text("# 训练\n\n## 显存不足\n\n减小 batch_size。\n", encoding="utf-8")
    (seeds / "meta" / "curated.toml").write_text(
        'source = "curated.md"\n[sections."显存不足"]\nheading = "显存不足"\ntitle_en = "GPU out of memory"\n'
        'summary_en = "Reduce the batch size."\nphrasings_en = ["out of memory while training"]\n',
        encoding="utf-8",
    )
    (seeds / "en.md").write_text("# Install\n\n## GPU not found\n\nCheck the driver.\n", encoding="utf-8")
    return Settings(seeds_dir=seeds, index_dir=root / "index", embedder="hash")


def test_a_chinese_section_without_curated_english_gets_english_keys_from_its_own_text(tmp_path: Path):
    """Issue 33: English questions on a company's Chinese FAQ. The build gives such a section English keys (its
    English words, error strings, flags and file names, and the English names of the subjects the facts hook found)
    as retrieval keys of their own kind — not curated metadata, so the rule every section shares reads them."""

    class Named(KeyFacts):
        def __call__(self, sections):
            return [{"key": s.key, "named": ["CUDA"] if "CUDA" in s.heading else []} for s in sections]

    settings = _english_key_seeds(tmp_path)
    build_index(settings, HashEmbedder(), facts=Named())
    index = load(settings)
    derived = {}
    for key in index.keys:
        if key.kind == "derived":
            derived.setdefault(index.sections[key.section].source, []).append(key)
    assert set(derived) == {"new.md"}  # curated English phrasings, or an English section, need none
    assert {k.language for k in derived["new.md"]} == {"en"}
    assert not index.key_is_meta[[n for n, k in enumerate(index.keys) if k.kind == "derived"]].any()
    from bot.kb.index import english_keys

    new = next(s for s in index.sections if s.source == "new.md")
    assert english_keys(new, ["CUDA"]) == ["CUDA: no CUDA-capable device is detected", "libcudart.so; LD_LIBRARY_PATH"]
