"""Build time per MB for each document format (issue 43): the same FAQ text as Markdown, HTML, Word, PDF and rst.

    python -m bench.formats [--mb 0.5] [--repeat 2]     # needs pandoc (and chromium for the PDF)

The shipped seeds (real FAQ pages, Chinese and English) are joined and repeated to about ``--mb`` megabytes of
Markdown; pandoc writes the same text as HTML, Word and rst, and Chromium prints pandoc's HTML as a PDF (a format
whose tool is missing is left out, and said so). For each format, in one run:

- ``read_s``: converting and parsing the file into sections (no cache), the best of ``--repeat`` interleaved
  rounds, and ``read_s_per_mb`` per MB of the file as it is on disk;
- ``build_s``: a whole ``python -m bot build`` of that one document with the hash embedder (what the format adds
  to a build; the real embedder's time is the same for every format: it embeds the same sections);
- ``ratio``: ``read_s`` over Markdown's, and ``build_ratio``: ``build_s`` over Markdown's. Ratios, not seconds,
  hold on a loaded machine; nothing asserts on them.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from bench.linearity import best_seconds

REPO = Path(__file__).resolve().parents[1]


def _markdown(megabytes: float) -> str:
    pages = [p.read_text(encoding="utf-8") for p in sorted((REPO / "seeds").glob("*.txt"))]
    pages += [p.read_text(encoding="utf-8") for p in sorted((REPO / "seeds").glob("*.md"))]
    one = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", "\n\n".join(pages))  # no images: pandoc would fetch them
    copies = max(1, round(megabytes * 1_000_000 / len(one.encode())))
    return "\n\n".join(one.replace("\n# ", f"\n# ({n}) ") for n in range(copies))


def _write(folder: Path, text: str) -> dict[str, Path]:
    """The document in every format whose writer is on the machine."""
    md = folder / "faq.md"
    md.write_text(text, encoding="utf-8")
    out = {"md": md}
    if shutil.which("pandoc") is None:
        print("pandoc is not installed: only Markdown is measured")
        return out
    for fmt in ("html", "docx", "rst"):
        path = folder / f"faq.{fmt}"
        subprocess.run(
            [
                "pandoc",
                "-f",
                "markdown-smart-pandoc_title_block",
                str(md),
                "-s",
                "--metadata",
                "pagetitle=faq",
                "-o",
                str(path),
            ],
            check=True,
        )
        out[fmt] = path
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium:
        pdf = folder / "faq.pdf"
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer"]
            + [f"--print-to-pdf={pdf}", str(out["html"])],
            check=True,
            capture_output=True,
            timeout=600,
        )
        out["pdf"] = pdf
    else:
        print("chromium is not installed: no PDF")
    return out


def _build_seconds(path: Path, work: Path) -> tuple[float, int]:
    from bot.engine.facts import build
    from bot.kb.embed import make_embedder
    from bot.settings import Settings

    seeds = work / f"seeds-{path.suffix[1:]}"
    seeds.mkdir(parents=True)
    shutil.copy(path, seeds / path.name)
    settings = Settings(
        seeds_dir=seeds,
        index_dir=work / f"index-{path.suffix[1:]}",
        embedder="hash",
        max_seed_bytes=2_000_000_000,
        max_seed_sections=10_000_000,
    )
    started = time.perf_counter()
    report = build(settings, make_embedder("hash"))
    return time.perf_counter() - started, report.sections


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=0.5, help="megabytes of Markdown (default 0.5)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    from bot.kb.formats import ConversionCache
    from bot.kb.parse import parse_file

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        files = _write(work, _markdown(args.mb))
        limit = 2_000_000_000
        reads = best_seconds(
            {
                fmt: (
                    lambda p=path: parse_file(p, max_bytes=limit, max_sections=10_000_000, cache=ConversionCache(None))
                )
                for fmt, path in files.items()
            },
            args.repeat,
        )
        _build_seconds(files["md"], work / "warm")  # the first build imports what every build needs: not md's cost
        figures = {}
        for fmt, path in files.items():
            size = path.stat().st_size / 1_000_000
            sections = len(parse_file(path, max_bytes=limit, max_sections=10_000_000))
            build_s, _ = _build_seconds(path, work)
            figures[fmt] = {
                "file_mb": round(size, 3),
                "sections": sections,
                "read_s": round(reads[fmt], 3),
                "read_s_per_mb": round(reads[fmt] / size, 3),
                "ratio": round(reads[fmt] / reads["md"], 1),
                "build_s": round(build_s, 2),
            }
        for row in figures.values():
            row["build_ratio"] = round(row["build_s"] / figures["md"]["build_s"], 2)
    print(json.dumps({"markdown_mb": figures["md"]["file_mb"], "formats": figures}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
