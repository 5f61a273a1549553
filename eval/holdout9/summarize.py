"""Held-out figures from eval/holdout9/run_heldout.sh outputs: python summarize.py DATADIR OUT_BASE OUT_NEW

The figures and the turn reading are holdout7's (imported from there); this adds kb4 by language, kb4 after a tune
with its 20 labels, and the tune's wall time."""

import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "holdout7"))
from summarize import singles, turns  # noqa: E402  (holdout7's figures, the same definitions)


def by_kind(path: str, labels: str) -> dict:
    """Figures for all questions, then for each language kind apart (the baselines only for all)."""
    lines = [line for line in open(labels, encoding="utf-8") if line.strip()]
    kinds = [json.loads(line).get("kind", "") for line in lines]
    report = json.load(open(path, encoding="utf-8"))
    out = {"all": singles(path, labels)}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in sorted(set(kinds)):
            keep = [i for i, k in enumerate(kinds) if k == kind]
            cases, labelled = Path(tmp, kind + ".json"), Path(tmp, kind + ".jsonl")
            cases.write_text(json.dumps({**report, "cases": [report["cases"][i] for i in keep], "baselines": {}}))
            labelled.write_text("".join(lines[i] for i in keep), encoding="utf-8")
            out[kind] = singles(str(cases), str(labelled))
    return out


def tune_time(out: str) -> str:
    found = re.search(
        r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", Path(out, "tune.err").read_text(errors="replace")
    )
    loads = (
        re.findall(r"load average: ([\d.]+)", Path(out, "tune.load").read_text())
        if Path(out, "tune.load").exists()
        else []
    )
    return f"{found.group(1) if found else '?'} (1-minute load before, after: {', '.join(loads)})"


if __name__ == "__main__":
    data = Path(sys.argv[1])
    for out in sys.argv[2:]:
        print("==", out)
        print("h9 singles", singles(f"{out}/h9_single.json", str(data / "h9/single.jsonl")))
        print("h9 conv", turns(f"{out}/h9_conv.json", lambda i: True))
        for name in ("kb4", "kb4_tuned"):
            for kind, figs in by_kind(f"{out}/{name}.json", str(data / "kb4/questions.jsonl")).items():
                print(name, kind, figs)
        print("tune wall time", tune_time(out))
