"""Held-out figures of a session, session-start main against final main:
python summarize.py [--batch BATCH_DIR] [--first FILE] OUT_START OUT_FINAL   (default eval/holdout11; its knowledge bases
are its kb* folders, the last of them the page added beside the seeds; --first: the first questions the runs' first.json
scored, by default the batch's own first/questions_settled.jsonl; holdout13 has none and reuses holdout12's)"""

import json
import re
import sys
from pathlib import Path

ARGS = sys.argv[1:]
H = Path("eval/holdout11")
if ARGS[:1] == ["--batch"]:
    H, ARGS = Path(ARGS[1]), ARGS[2:]
FIRST = H / "first/questions_settled.jsonl"
if ARGS[:1] == ["--first"]:
    FIRST, ARGS = Path(ARGS[1]), ARGS[2:]
KBS = sorted(p.name for p in H.glob("kb*") if p.is_dir())


def load(p):
    return [json.loads(ln) for ln in open(p) if ln.strip()]


def js(p):
    try:
        return json.load(open(p))
    except Exception:
        return None


def first_turns(report, labels):
    cases = report["cases"]
    assert len(cases) == len(labels), (len(cases), len(labels))
    ans = [(c, lab) for c, lab in zip(cases, labels) if lab["expect"]]
    near = [(c, lab) for c, lab in zip(cases, labels) if not lab["expect"]]

    def r(x, n):
        return f"{x}/{n} = {x / n:.3f}" if n else "-"

    out = {
        "answerable": len(ans),
        "near": len(near),
        "hit@1": r(sum(c["rank"] == 1 for c, _ in ans), len(ans)),
        "confident and right": r(sum(c["rank"] == 1 and c["tier"] == "answer" for c, _ in ans), len(ans)),
        "near-confident (answer tier, right at 1, of right)": r(
            sum(c["rank"] == 1 and c["tier"] == "tentative" for c, _ in ans), len(ans)
        ),
        "confident wrong": r(sum(c["rank"] != 1 and c["tier"] == "answer" for c, _ in ans), len(ans)),
        "near questions answered confidently": r(sum(c["tier"] == "answer" for c, _ in near), len(near)),
    }
    for b, m in (report.get("baselines") or {}).items():
        out[f"baseline {b} hit@1"] = round(m.get("hit@1", float("nan")), 3)
    return out


def tune_seconds(p):
    try:
        m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", open(p).read())
        return round((int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))), 1) if m else None
    except FileNotFoundError:
        return None


def one(out):
    out = Path(out)
    res = {}
    if r := js(out / "first.json"):
        res["first questions on the seeds"] = first_turns(r, load(FIRST))
    if r := js(out / "conv.json"):
        c = r["conversations"]
        res["conversations: first turns"] = c["first"]
        res["conversations: later turns"] = {k: v for k, v in c["follow"].items()}
        res["conversations: later by kind"] = {
            k: {
                "n": v["n"],
                "hit@1": v.get("hit@1"),
                "confident_wrong": v.get("confident_wrong"),
                "repeat_on_retry": v.get("repeat_on_retry"),
            }
            for k, v in c["by_kind"].items()
        }
    if r := js(out / "acts.json"):
        res["acts (held-out third)"] = {k: r[k]["all"] for k in r if isinstance(r[k], dict) and "all" in r[k]} | {
            "n": r["rule"]["n"]
        }
    if r := js(out / "envvalues.json"):
        r.pop("cases", None)
        res["pasted environments (held-out half)"] = r
    for kb in KBS:
        labels = load(H / f"{kb}/questions_settled.jsonl")
        if r := js(out / f"{kb}.json"):
            res[f"{kb} no labels"] = first_turns(r, labels)
        if r := js(out / f"{kb}_tuned.json"):
            res[f"{kb} 20 labels + tune"] = first_turns(r, labels) | {
                # holdout12's runs keep each tune's log apart; holdout11's one tune.err is the last kb's
                "tune seconds": tune_seconds(out / f"{kb}.tune.err") or tune_seconds(out / "tune.err")
            }
    added = KBS[-1]
    if r := js(out / f"{added}alone.json"):
        res[f"{added} alone (no seeds), no labels"] = first_turns(r, load(H / f"{added}/questions_settled.jsonl"))
    a, b = js(out / "first.json"), js(out / "first_added.json")
    if a and b:
        changed = sum(
            (x["tier"], (x["hits"] or [{}])[0].get("section")) != (y["tier"], (y["hits"] or [{}])[0].get("section"))
            for x, y in zip(a["cases"], b["cases"])
        )
        res[f"an added page ({added} beside the seeds): first questions whose tier or first section changed"] = (
            f"{changed}/{len(a['cases'])}"
        )
    return res


if __name__ == "__main__":
    runs = {Path(p).name: one(p) for p in ARGS}
    keys = list(dict.fromkeys(k for r in runs.values() for k in r))
    for k in keys:
        print(f"\n### {k}\n\n| figure | " + " | ".join(runs) + " |\n|---|" + "---|" * len(runs))
        sub = list(dict.fromkeys(s for r in runs.values() for s in (r.get(k) or {}) if isinstance(r.get(k), dict)))
        if not sub:
            print("| | " + " | ".join(str(r.get(k, "-")) for r in runs.values()) + " |")
            continue
        for s in sub:
            print(f"| {s} | " + " | ".join(str((r.get(k) or {}).get(s, "-")) for r in runs.values()) + " |")
