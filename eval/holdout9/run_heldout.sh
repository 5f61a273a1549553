#!/usr/bin/env bash
# usage: eval/holdout9/run_heldout.sh CHECKOUT OUTDIR eval/holdout9 -- the held-out figures of docs/evaluation.md
# ("Held-out batches of the tune session") for one checkout; session-start main and final main each run once.
# DATADIR holds h9/ (single.jsonl, conversations.jsonl) and kb4/ (docs/*.md, questions.jsonl, labels20.jsonl).
# kb4 is run twice: with no labels for its pages (the shipped calibration), and after `python -m bot tune` with
# labels20.jsonl in seeds/labels/ (a company's 20 labels); both times questions.jsonl is what is scored.
# Then: python eval/holdout9/summarize.py eval/holdout9 OUT_A OUT_B
set -u
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); D=$(realpath "$3")
mkdir -p "$OUT"
cd "$CO"
python -m bot eval "$D/h9/single.jsonl" --json > "$OUT/h9_single.json" 2> "$OUT/h9_single.err"
python -m bot eval "$D/h9/conversations.jsonl" --json --no-baselines > "$OUT/h9_conv.json" 2> "$OUT/h9_conv.err"
T=$OUT/kb4; rm -rf "$T"; mkdir -p "$T/seeds/kb4" "$T/index"
cp -r seeds/* "$T/seeds/"; rm -rf "$T/seeds/labels"; cp "$D"/kb4/docs/*.md "$T/seeds/kb4/"
cp -r index/calibration "$T/index/" 2>/dev/null
export BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index
python -m bot build > "$T/build.log" 2>&1
python -m bot eval "$D/kb4/questions.jsonl" --json > "$OUT/kb4.json" 2> "$OUT/kb4.err"
mkdir -p "$T/seeds/labels"; cp "$D/kb4/labels20.jsonl" "$T/seeds/labels/kb4.jsonl"
uptime > "$OUT/tune.load"
/usr/bin/time -v python -m bot tune --json > "$OUT/tune.json" 2> "$OUT/tune.err"
uptime >> "$OUT/tune.load"
python -m bot eval "$D/kb4/questions.jsonl" --json > "$OUT/kb4_tuned.json" 2> "$OUT/kb4_tuned.err"
echo done > "$OUT/DONE"
