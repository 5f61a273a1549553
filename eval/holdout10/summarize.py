"""kb5's figures from eval/run_new_kb.sh outputs: python summarize.py DATADIR OUT_A OUT_B (holdout9's definitions)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "holdout9"))
from summarize import by_kind, tune_time  # noqa: E402

data = Path(sys.argv[1])
for out in sys.argv[2:]:
    print("==", out)
    for name in ("kb5", "kb5_tuned"):
        for kind, figs in by_kind(f"{out}/{name}.json", str(data / "kb5/questions.jsonl")).items():
            print(name, kind, figs)
    print("tune wall time", tune_time(out))
