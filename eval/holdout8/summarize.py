"""Held-out figures from eval/holdout8/run_heldout.sh outputs: python summarize.py DATADIR OUT_BASE OUT_NEW

The figures and the turn reading are holdout7's (imported from there); this adds kb3 split by language."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "holdout7"))
from summarize import singles, turns  # noqa: E402  (holdout7's figures, the same definitions)


def by_kind(path, labels):
    """kb3's figures for all questions, then for each language kind apart."""
    kinds = [json.loads(line).get("kind", "") for line in open(labels) if line.strip()]
    d = json.load(open(path))
    out = {"all": singles(path, labels)}
    for kind in sorted(set(kinds)):
        keep = [i for i, k in enumerate(kinds) if k == kind]
        sub = {**d, "cases": [d["cases"][i] for i in keep], "baselines": {}}
        tmp = Path(path).with_suffix(f".{kind}.json")
        tmp.write_text(json.dumps(sub))
        lab = Path(path).with_suffix(f".{kind}.labels")
        lines = [line for line in open(labels) if line.strip()]
        lab.write_text("".join(lines[i] for i in keep))
        out[kind] = singles(str(tmp), str(lab))
    return out


data = Path(sys.argv[1])
for out in sys.argv[2:]:
    print("==", out)
    print("h8 singles", singles(f"{out}/h8_single.json", str(data / "h8/single.jsonl")))
    print("h8 conv", turns(f"{out}/h8_conv.json", lambda i: True))
    for kind, figs in by_kind(f"{out}/kb3.json", str(data / "kb3/questions.jsonl")).items():
        print("kb3", kind, figs)
