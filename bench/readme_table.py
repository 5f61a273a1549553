"""``python -m bench.readme_table REPORT.json [--runtimes RUNTIMES.json] [--write docs/performance.md]``.

Turns a ``python -m bench --json --out REPORT.json`` report (and optionally a
``python -m bench.runtimes --json`` one) into the performance table of ``docs/performance.md``, so
the table is always a copy of a real run, with the machine it ran on. With
``--write`` it replaces the text between ``<!-- bench:start -->`` and
``<!-- bench:end -->`` in that file; otherwise it prints the markdown.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

START, END = "<!-- bench:start -->", "<!-- bench:end -->"


def _fmt(value, unit: str = "") -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        text = f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
    else:
        text = str(value)
    return f"{text} {unit}".strip()


def table(report: dict, runtimes: dict | None = None) -> str:
    figs = report["figures"]
    meta, mach = report["meta"], report["machine"]
    rows = [
        ("seed build (full)", "build.full_s", "s"),
        ("rebuild after editing one file", "build.incremental_s", "s"),
        ("query p50 (seeds)", "query.seeds.p50_ms", "ms"),
        ("query p99 (seeds)", "query.seeds.p99_ms", "ms"),
        ("  of which embedding, p50", "query.seeds.embed.p50_ms", "ms"),
        ("pasted log p50", "query.seeds.trace.p50_ms", "ms"),
        ("repeated question p50", "query.seeds.repeated_p50_ms", "ms"),
        ("expected section in top 3 (bench questions)", "query.seeds.agree_top3", ""),
        (
            f"query p50 ({_fmt(figs.get('query.synthetic.vectors', {}).get('ours'))} vectors, HNSW)",
            "query.synthetic.p50_ms",
            "ms",
        ),
        ("peak RSS at that size", "query.synthetic.peak_rss_mb", "MiB"),
        ("app launch → first API answer", "startup.app_ready_s", "s"),
        ("app launch → chat page usable (headless Chromium)", "startup.page_usable_s", "s"),
        ("`python -c 'import gradio'` (the yardstick)", "startup.import_gradio_s", "s"),
        ("chat page usable / import gradio", "startup.page_over_gradio", "×"),
        ("process launch → first answer (library)", "startup.ready_s", "s"),
        ("`/api/ask`, a question alone: p50", "history.alone_p50_ms", "ms"),
        ("the same question as turn 9 (8 turns of history): p50", "history.last_turn_p50_ms", "ms"),
        ("turn 9 / alone (worst of the conversations)", "history.last_turn_over_alone", "×"),
    ]
    for rate in meta["openloop"]["rates"]:
        tag = f"rps{rate:g}"
        rows.append((f"open loop {rate:g} req/s: p50 / p95 / p99", f"openloop.{tag}", "ms"))
        rows.append((f"open loop {rate:g} req/s: errors", f"openloop.{tag}.errors", ""))
    rows.append(
        (
            f"{figs.get('concurrency.rps', {}).get('label', 'clients').split(':')[0]} closed loop: req/s",
            "concurrency.rps",
            "/s",
        )
    )

    out = [
        f"Measured by `python -m bench --json` ({meta['mode']} mode, {meta['date']}) on {mach['cores']} cores, "
        f"{mach['cpu_model']}, Python {meta['python']}; load average {meta['loadavg_start'][0]} at the start, "
        f"{meta['loadavg_end'][0]} at the end (the machine was shared, so absolute figures are noisy; ratios "
        "are within one run). Baselines: the same e5 model and runtime, dense-only, flat FAISS (HNSW with the "
        "product's parameters at 100k), and all-MiniLM-L6-v2 dense-only.",
        "",
        "| figure | ours | e5 dense-only | MiniLM dense-only | ours / e5 | target |",
        "|---|---|---|---|---|---|",
    ]
    for label, key, unit in rows:
        if key.startswith("openloop.rps") and key.count(".") == 1:
            cells = []
            for side in ("ours", "baseline", "minilm"):
                vals = [figs.get(f"{key}.{p}_ms", {}).get(side) for p in ("p50", "p95", "p99")]
                cells.append("–" if all(v is None for v in vals) else " / ".join(_fmt(v) for v in vals) + " ms")
            p95 = figs.get(f"{key}.p95_ms", {})
            target = f"p95 {p95.get('target')}: **{p95.get('status')}**" if p95.get("target") else ""
            ratio = _fmt(p95.get("ratio")) + " (p95)" if p95.get("ratio") is not None else "–"
            out.append(f"| {label} | {cells[0]} | {cells[1]} | {cells[2]} | {ratio} | {target} |")
            continue
        fig = figs.get(key)
        if fig is None:
            continue
        target = f"{fig['target']}: **{fig['status']}**" if fig.get("target") else ""
        out.append(
            f"| {label} | {_fmt(fig['ours'], unit)} | {_fmt(fig['baseline'], unit)} | "
            f"{_fmt(fig['minilm'], unit)} | {_fmt(fig['ratio'])} | {target} |"
        )
    over = report.get("open_loop_p95_over_1s_at_rps")
    out.append("")
    out.append(
        "Open loop: Poisson arrivals for "
        f"{meta['openloop']['seconds_per_rate']:g} s per rate through `POST /api/ask`, 80 % short questions, "
        "20 % pasted logs, 10 % repeats; latency from the scheduled send time. "
        + (f"p95 passes 1 s at {over:g} req/s." if over else "p95 stayed under 1 s at every rate measured.")
    )
    if runtimes:
        out += [
            "",
            "Embedding runtimes for the same multilingual-e5-small 4-bit weights "
            f"(`python -m bench.runtimes`, median of interleaved rounds, load average at the end "
            f"{runtimes['loadavg_end'][0]}; tokens per text: {runtimes['tokens']}):",
            "",
            "| runtime | short question | pasted log | 64 passages | cosine to engine (min / median) |",
            "|---|---|---|---|---|",
        ]
        bursts: list[str] = []
        for name, r in runtimes["runtimes"].items():
            med, sp = r["median_ms"], r["speedup_vs_engine"]
            cos = r.get("cosine_to_engine")
            cos_text = f"{cos['min']} / {cos['median']} ({cos['texts']} texts)" if cos else "reference"
            burst = r.get("eight_concurrent_questions")
            if burst:
                bursts.append(
                    f"{name}: {burst['one_call_each_ms']} ms one call each, {burst['shared_calls_ms']} ms sharing calls"
                )
            out.append(
                f"| {name} | {_fmt(med['short_query'], 'ms')} ({sp['short_query']}x) | "
                f"{_fmt(med['pasted_log'], 'ms')} ({sp['pasted_log']}x) | "
                f"{_fmt(med['batch64_passages'], 'ms')} ({sp['batch64_passages']}x) | {cos_text} |"
            )
        if bursts:
            out += [
                "",
                "Eight questions arriving at once (median wall time until all are embedded): "
                + "; ".join(bursts)
                + ".",
            ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.readme_table", description=__doc__.split("\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--runtimes", type=Path, help="a python -m bench.runtimes --json report")
    parser.add_argument("--write", type=Path, help="replace the table between the bench markers in this file")
    args = parser.parse_args(argv)
    report = json.loads(args.report.read_text(encoding="utf-8"))
    runtimes = json.loads(args.runtimes.read_text(encoding="utf-8")) if args.runtimes else None
    text = table(report, runtimes)
    if not args.write:
        print(text)
        return 0
    doc = args.write.read_text(encoding="utf-8")
    if START not in doc or END not in doc:
        print(f"error: {args.write} has no {START} … {END} markers; add them where the table goes", file=sys.stderr)
        return 2
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    args.write.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
