"""Start-up probe: a fresh process that loads a built index and answers one question.

``python -m bench.first_answer ours|baseline 'JSON'`` — for ``ours`` this is the
default product path (settings from the environment as ``app.py`` and the CLI
build them, ``Engine.open`` without auto-build, one ``ask``); it prints one JSON
line with its own phase timings and whether torch got imported. The parent
measures the wall time from launching the process to reading that line.
"""

from __future__ import annotations

import json
import os
import sys
import time

QUESTION = "训练时报错提示显存不足怎么办"


def main(argv: list[str]) -> int:
    started = time.perf_counter()
    system, args = argv[0], json.loads(argv[1])
    if system == "ours":
        from pathlib import Path

        from bot.engine.retrieve import Engine
        from bot.settings import Settings

        imported = time.perf_counter()
        settings = Settings.from_env(os.environ, seeds_dir=Path(args["seeds"]), index_dir=Path(args["index"]))
        engine = Engine.open(settings)
        opened = time.perf_counter()
        answer = engine.ask(QUESTION)
        top = answer.hits[0].section.heading if answer.hits else ""
    else:
        from pathlib import Path

        from bench.baseline import BaselineRetriever
        from bot.kb.embed import make_embedder

        imported = time.perf_counter()
        retriever = BaselineRetriever(Path(args["index"]), make_embedder(args["embedder"]))
        opened = time.perf_counter()
        hits = retriever.ask(QUESTION)["hits"]
        top = hits[0]["section"] if hits else ""
    answered = time.perf_counter()
    print(
        json.dumps(
            {
                "import_s": round(imported - started, 3),
                "open_s": round(opened - imported, 3),
                "first_ask_s": round(answered - opened, 3),
                "top": top,
                "torch_imported": "torch" in sys.modules,
            },
            ensure_ascii=False,
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
