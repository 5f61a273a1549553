#!/usr/bin/env bash
# usage: eval/holdout9/run_heldout.sh CHECKOUT OUTDIR eval/holdout9 -- the held-out figures of docs/evaluation.md
# ("Held-out batches of the tune session") for one checkout; session-start main and final main each run once.
# DATADIR holds h9/ (single.jsonl, conversations.jsonl) and kb4/ (docs/*.md, questions.jsonl, labels20.jsonl).
# kb4 is run twice: with no labels for its pages (the shipped calibration), and after `python -m bot tune` with
# labels20.jsonl in seeds/labels/ (a company's 20 labels); both times questions.jsonl is what is scored.
# Then: python eval/holdout9/summarize.py eval/holdout9 OUT_A OUT_B
set -u
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); D=$(realpath "$3"); HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
cd "$CO"
python -m bot eval "$D/h9/single.jsonl" --json > "$OUT/h9_single.json" 2> "$OUT/h9_single.err"
python -m bot eval "$D/h9/conversations.jsonl" --json --no-baselines > "$OUT/h9_conv.json" 2> "$OUT/h9_conv.err"
bash "$HERE/../run_new_kb.sh" "$CO" "$OUT" "$D/kb4" kb4
echo done > "$OUT/DONE"
