"""kb5's figures from eval/run_new_kb.sh outputs: python summarize.py DATADIR OUT_A OUT_B (holdout9's definitions)."""

import importlib.util
import sys
from pathlib import Path

# holdout9's module, under its own name (holdout7's, which it imports, is also called summarize)
_spec = importlib.util.spec_from_file_location(
    "holdout9_summarize", Path(__file__).parents[1] / "holdout9/summarize.py"
)
holdout9 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(holdout9)
by_kind, tune_time = holdout9.by_kind, holdout9.tune_time

data = Path(sys.argv[1])
for out in sys.argv[2:]:
    print("==", out)
    for name in ("kb5", "kb5_tuned"):
        for kind, figs in by_kind(f"{out}/{name}.json", str(data / "kb5/questions.jsonl")).items():
            print(name, kind, figs)
    print("tune wall time", tune_time(out))
