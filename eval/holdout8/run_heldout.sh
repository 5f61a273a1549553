#!/usr/bin/env bash
# usage: eval/holdout8/run_heldout.sh CHECKOUT OUTDIR eval/holdout8 -- the held-out figures of docs/evaluation.md
# ("Held-out batches of the company session") for one checkout; session-start main and final main each run once.
# DATADIR holds h8/ (single.jsonl, conversations.jsonl) and kb3/ (docs/*.md, questions.jsonl).
# Then: python eval/holdout8/summarize.py eval/holdout8 OUT_A OUT_B
set -u
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); D=$(realpath "$3")
mkdir -p "$OUT"
cd "$CO"
python -m bot eval "$D/h8/single.jsonl" --json > "$OUT/h8_single.json" 2> "$OUT/h8_single.err"
python -m bot eval "$D/h8/conversations.jsonl" --json --no-baselines > "$OUT/h8_conv.json" 2> "$OUT/h8_conv.err"
# New documents nobody labelled: the five seeds plus kb3's pages under seeds/kb3/, the calibration as shipped.
T=$OUT/kb3; rm -rf "$T"; mkdir -p "$T/seeds/kb3" "$T/index"
cp -r seeds/* "$T/seeds/"; rm -rf "$T/seeds/labels"; cp "$D"/kb3/docs/*.md "$T/seeds/kb3/"
cp -r index/calibration "$T/index/" 2>/dev/null
BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index python -m bot build > "$T/build.log" 2>&1
BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index python -m bot eval "$D/kb3/questions.jsonl" --json > "$OUT/kb3.json" 2> "$OUT/kb3.err"
echo done > "$OUT/DONE"
