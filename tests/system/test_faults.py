"""Faults: builds killed at random points, damaged index files, a foreign manifest, changed seeds.

Everything uses the dependency-free ``hash`` embedder on a small knowledge base
in ``tmp_path``; builds that get killed run in a child process
(``python -m bot ... build``) and receive SIGKILL.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cli import main as cli_main
from bot.engine.retrieve import Engine
from bot.kb.embed import make_embedder
from bot.kb.index import CURRENT, IndexProblem, build_index, load_index, source_hashes
from bot.settings import Settings

REPO = Path(__file__).resolve().parents[2]
QUESTION = "训练时显存不足 out of memory 怎么办"
STEPS = ("parsed", "embedded", "written", "renamed", "switched")


FIX = re.compile(r"Run: python -m bot\b[^\n]*\bbuild")


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _write_kb(seeds: Path, documents: int = 12) -> None:
    """A knowledge base big enough that a build takes a noticeable moment with the hash embedder."""
    seeds.mkdir(parents=True, exist_ok=True)
    (seeds / "gpu.md").write_text(
        "# GPU FAQ\n\n## 问题：显存不足怎么办？\n\n+ 问题描述：训练时报错 out of memory\n\n+ 解决方法：减小 `batch_size`。\n\n"
        "## 问题：多卡训练报错 libnccl.so\n\n+ 解决方法：把 libnccl.so 所在目录加入 `LD_LIBRARY_PATH`。\n",
        encoding="utf-8",
    )
    for d in range(documents):
        parts = [f"# Topic {d}\n"]
        for s in range(12):
            body = " ".join(f"term{d}_{s}_{w} 训练 参数 显卡{w}" for w in range(40))
            parts.append(f"## {d}.{s} Question about component {d}-{s}\n\n{body}\n")
        (seeds / f"topic_{d:02d}.md").write_text("\n".join(parts), encoding="utf-8")


def _settings(tmp_path: Path) -> Settings:
    return Settings(
        seeds_dir=tmp_path / "seeds",
        index_dir=tmp_path / "index",
        embedder="hash",
    )


def _cli_build(settings: Settings) -> list[str]:
    return [
        sys.executable,
        "-m",
        "bot",
        "--embedder",
        settings.embedder,
        "--seeds",
        str(settings.seeds_dir),
        "--index",
        str(settings.index_dir),
        "build",
    ]


def _sources(settings: Settings) -> dict:
    from bot.kb.index import read_manifest

    return read_manifest(settings.index_dir)[1]["sources"]


def _answers(settings: Settings, *, check_sources: bool = False) -> None:
    """The live index loads (checksums verified) and answers with citations."""
    embedder = make_embedder(settings.embedder)
    index = load_index(settings, embedder.id, embedder.dim, check_sources=check_sources)
    answer = Engine(index, embedder, settings).ask(QUESTION, k=3)
    assert answer.hits, "a loaded index must return sections"
    assert answer.hits[0].section.source == "gpu.md"


def _leftovers(index_dir: Path) -> list[str]:
    return sorted(p.name for p in index_dir.iterdir() if p.name.startswith(".tmp-"))


# ------------------------------------------------------------------ killed builds


def test_build_killed_at_every_named_step_keeps_previous_index(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    _write_kb(settings.seeds_dir, documents=2)
    build_index(settings, make_embedder("hash"))
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from bot.kb.embed import make_embedder\n"
        "from bot.kb.index import build_index\n"
        "from bot.settings import Settings\n"
        "def after(name):\n"
        "    if name == sys.argv[3]:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "build_index(Settings(seeds_dir=Path(sys.argv[1]), index_dir=Path(sys.argv[2]), embedder='hash'),\n"
        "            make_embedder('hash'), after_step=after)\n"
    )
    for n, step in enumerate(STEPS):
        before = _sources(settings)
        with open(settings.seeds_dir / "gpu.md", "a", encoding="utf-8") as handle:
            handle.write(f"\n补充 {n}：更新说明。\n")
        proc = subprocess.run(
            [sys.executable, "-c", script, str(settings.seeds_dir), str(settings.index_dir), step],
            cwd=REPO,
            env=_env(),
            capture_output=True,
            timeout=120,
        )
        assert proc.returncode == -signal.SIGKILL, (step, proc.stderr.decode()[-2000:])
        after = _sources(settings)
        if step == "switched":
            assert after != before, "the switch happened before the kill: the new generation is live"
        else:
            assert after == before, f"killed after {step!r}: the previous generation must stay live"
        _answers(settings)
    # A build after all those crashes succeeds and tidies up.
    report = build_index(settings, make_embedder("hash"))
    assert _leftovers(settings.index_dir) == []
    gens = sorted(p.name for p in settings.index_dir.glob("gen-*"))
    assert report.path.name in gens and len(gens) <= 2  # the live one and the one it replaced (issue 11)
    _answers(settings, check_sources=True)


def test_build_killed_at_random_moments(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    _write_kb(settings.seeds_dir)
    subprocess.run(_cli_build(settings), cwd=REPO, env=_env(), check=True, capture_output=True, timeout=120)
    _answers(settings, check_sources=True)

    def edit(n: int) -> None:
        with open(settings.seeds_dir / f"topic_{n % 12:02d}.md", "a", encoding="utf-8") as handle:
            handle.write(f"\n## extra {n}\n\n新增内容 {n} " + " ".join(f"word{n}_{w}" for w in range(300)) + "\n")

    # Calibrate on one undisturbed rebuild: kills are spread over a whole build's lifetime.
    edit(99)
    started = time.perf_counter()
    subprocess.run(_cli_build(settings), cwd=REPO, env=_env(), check=True, capture_output=True, timeout=120)
    lifetime = time.perf_counter() - started

    rng = random.Random(20240605)
    kills = 0
    # 12 builds (was 20): every named step is killed deterministically above; these add moments in between.
    for n in range(BUILDS := 12):
        before = _documents(_sources(settings))
        edit(n)
        proc = subprocess.Popen(
            _cli_build(settings), cwd=REPO, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(0.3, 1.05) * lifetime)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=60)
        after = _documents(_sources(settings))
        # Either the old generation or the complete new one is live, never a mix, and it loads.
        assert after in (before, source_hashes(settings.seeds_dir))
        _answers(settings)
    assert kills >= BUILDS // 4, f"only {kills} of {BUILDS} builds were still running when killed"

    proc = subprocess.run(_cli_build(settings), cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _leftovers(settings.index_dir) == []
    assert len(list(settings.index_dir.glob("gen-*"))) <= 2  # the live one and the one it replaced
    _answers(settings, check_sources=True)


def _documents(sources: dict) -> dict:
    """The seed files among a manifest's sources (not the shipped background questions)."""
    return {k: v for k, v in sources.items() if not k.startswith("(")}


# ------------------------------------------------------------------ damaged files


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _scramble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    rng = random.Random(len(data))
    start = len(data) // 3
    for i in range(start, min(start + 64, len(data))):
        data[i] = rng.randrange(256)
    if len(data) < 8:
        data = bytearray(b"\xff\xfe garbage")
    path.write_bytes(bytes(data))


def _empty(path: Path) -> None:
    path.write_bytes(b"")


DAMAGES = {"truncated": _truncate, "scrambled": _scramble, "emptied": _empty}
FILES = [
    "dense.faiss",
    "sections.json",
    "keys.json",
    "meta.json",
    "background.npy",
    "manifest.json",
    CURRENT,
    "bm25/params.index.json",
    "bm25/vocab.index.json",
    "bm25/data.csc.index.npy",
    "bm25/indices.csc.index.npy",
    "bm25/indptr.csc.index.npy",
]


@pytest.fixture
def built(tiny_seeds: Path, tmp_path: Path) -> Settings:
    settings = Settings(seeds_dir=tiny_seeds, index_dir=tmp_path / "index", embedder="hash")
    build_index(settings, make_embedder("hash"))
    return settings


def _target(settings: Settings, name: str) -> Path:
    if name == CURRENT:
        return settings.index_dir / CURRENT
    gen = settings.index_dir / (settings.index_dir / CURRENT).read_text(encoding="utf-8").strip()
    return gen / name


def _cli_ask(settings: Settings, capsys: pytest.CaptureFixture) -> tuple[int, str]:
    code = cli_main(
        [
            "--embedder",
            settings.embedder,
            "--seeds",
            str(settings.seeds_dir),
            "--index",
            str(settings.index_dir),
            "ask",
            QUESTION,
        ]
    )
    return code, capsys.readouterr().err


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # scrambled floats
@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("name", FILES)
def test_damaged_file_is_named_and_auto_build_repairs(
    built: Settings, name: str, damage: str, capsys: pytest.CaptureFixture
) -> None:
    path = _target(built, name)
    assert path.is_file(), f"index layout changed: {path} is gone; update FILES"
    DAMAGES[damage](path)

    code, err = _cli_ask(built, capsys)
    assert code != 0, f"{damage} {name} went unnoticed by `python -m bot ask`"
    # The message names the damaged file (bm25s files: their folder, bm25/, which is one artifact).
    assert (name.split("/")[0] if name.startswith("bm25/") else Path(name).name) in err, err
    assert FIX.search(err), err
    assert "Traceback" not in err

    engine = Engine.open(built, make_embedder("hash"), auto_build=True)
    assert engine.ask(QUESTION).hits
    embedder = make_embedder("hash")
    load_index(built, embedder.id, embedder.dim)  # the repaired index passes every check


def test_damaged_index_through_real_cli_process(built: Settings) -> None:
    _scramble(_target(built, "dense.faiss"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "--embedder",
            "hash",
            "--seeds",
            str(built.seeds_dir),
            "--index",
            str(built.index_dir),
            "ask",
            QUESTION,
        ],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    assert "dense.faiss" in proc.stderr and FIX.search(proc.stderr)
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") <= 3, proc.stderr


def test_missing_index_names_the_fix(built: Settings, capsys: pytest.CaptureFixture) -> None:
    (built.index_dir / CURRENT).unlink()
    code, err = _cli_ask(built, capsys)
    assert code != 0 and CURRENT in err and FIX.search(err)


def test_manifest_from_another_embedder(built: Settings, capsys: pytest.CaptureFixture) -> None:
    other = Settings(**{**built.__dict__, "embedder": "hash:64"})
    build_index(other, make_embedder("hash:64"))  # the live index now belongs to another embedder
    code, err = _cli_ask(built, capsys)
    assert code != 0
    assert "hash:64" in err and "hash:256" in err and FIX.search(err)
    engine = Engine.open(built, make_embedder("hash"), auto_build=True)
    assert engine.index.manifest["embedder"] == "hash:256"
    assert engine.ask(QUESTION).hits


def test_manifest_edited_to_another_embedder(built: Settings, capsys: pytest.CaptureFixture) -> None:
    path = _target(built, "manifest.json")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["embedder"], manifest["dim"] = "st:all-MiniLM-L6-v2:384", 384
    path.write_text(json.dumps(manifest), encoding="utf-8")
    code, err = _cli_ask(built, capsys)
    assert code != 0 and "all-MiniLM-L6-v2" in err and FIX.search(err)
    assert Engine.open(built, make_embedder("hash"), auto_build=True).ask(QUESTION).hits


def test_changed_seeds_are_named_and_auto_build_picks_them_up(built: Settings, capsys: pytest.CaptureFixture) -> None:
    with open(built.seeds_dir / "tf.md", "a", encoding="utf-8") as handle:
        handle.write("\n# 梯度累积\n\n使用 gradient accumulation 可以在显存有限时模拟大 batch。\n")
    code, err = _cli_ask(built, capsys)
    assert code != 0 and "tf.md" in err and "stale" in err and FIX.search(err)
    engine = Engine.open(built, make_embedder("hash"), auto_build=True)
    assert any(s.heading == "梯度累积" for s in engine.sections)
    (built.seeds_dir / "gpu.md").unlink()
    code, err = _cli_ask(built, capsys)
    assert code != 0 and "gpu.md" in err
    engine = Engine.open(built, make_embedder("hash"), auto_build=True)
    assert all(s.source != "gpu.md" for s in engine.sections)


def test_stray_leftovers_do_not_break_the_next_build(built: Settings) -> None:
    index_dir = built.index_dir
    (index_dir / ".tmp-deadbeef0000").mkdir()
    (index_dir / ".tmp-deadbeef0000" / "dense.faiss").write_bytes(b"half written")
    (index_dir / f".tmp-{CURRENT}-abc123").write_text("gen-nothing", encoding="utf-8")
    (index_dir / "gen-19990101000000-orphan").mkdir()  # renamed but never switched to
    _answers(built, check_sources=True)
    report = build_index(built, make_embedder("hash"))
    assert _leftovers(index_dir) == []
    gens = sorted(p.name for p in index_dir.glob("gen-*"))
    assert report.path.name in gens and "gen-19990101000000-orphan" not in gens and len(gens) == 2
    _answers(built, check_sources=True)


def test_auto_build_refuses_nothing_even_when_index_folder_is_a_mess(built: Settings) -> None:
    (built.index_dir / CURRENT).write_text("../../etc", encoding="utf-8")
    with pytest.raises(IndexProblem):
        Engine.open(built, make_embedder("hash"))
    assert Engine.open(built, make_embedder("hash"), auto_build=True).ask(QUESTION).hits


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # scrambled floats
@pytest.mark.parametrize("damage", sorted(DAMAGES))
@pytest.mark.parametrize("name", ["vectors.npy", "background.json", "keys.json", "manifest.json", "background.npy"])
def test_damaged_reuse_cache_does_not_break_the_next_build(built: Settings, name: str, damage: str) -> None:
    """A rebuild reads the live generation to reuse vectors; damage there means re-embedding, not a crash."""
    path = _target(built, name)
    if not path.is_file():
        pytest.skip(f"{name} is not part of this index layout")
    DAMAGES[damage](path)
    report = build_index(built, make_embedder("hash"))
    assert report.embedded > 0
    _answers(built, check_sources=True)
    # Nothing damaged was carried over into the new generation.
    import numpy as np

    for array in ("vectors.npy", "background.npy"):
        vectors = np.load(report.path / array)
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3), f"{array} inherited damaged vectors"


@pytest.mark.parametrize("content", ["[1, 2, 3]", '{"a": 1}', '[[0, "chunk"]]', "null"])
def test_wrong_shaped_keys_json_does_not_break_the_next_build(built: Settings, content: str) -> None:
    _target(built, "keys.json").write_text(content, encoding="utf-8")
    build_index(built, make_embedder("hash"))
    _answers(built, check_sources=True)
