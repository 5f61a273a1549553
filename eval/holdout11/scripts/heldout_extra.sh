#!/usr/bin/env bash
# usage: heldout_extra.sh CHECKOUT OUTDIR -- pasted environments' values and kb7 alone (no seeds), per checkout
set -u
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); H=eval/holdout11; mkdir -p "$OUT"; cd "$CO"
PYTHONPATH=. python eval/holdout11/scripts/envvalues.py $H/envs/pastes_heldout_settled.jsonl > "$OUT/envvalues.json" 2> "$OUT/envvalues.err"
A=$(mktemp -d); mkdir -p "$A/seeds/kb7" "$A/index"; cp $H/kb7/docs/*.md "$A/seeds/kb7/"; cp -r index/calibration "$A/index/"
BOT_SEEDS_DIR=$A/seeds BOT_INDEX_DIR=$A/index python -m bot build > "$OUT/kb7alone.build.log" 2>&1
BOT_SEEDS_DIR=$A/seeds BOT_INDEX_DIR=$A/index python -m bot eval $H/kb7/questions_settled.jsonl --json > "$OUT/kb7alone.json" 2> "$OUT/kb7alone.err"
rm -rf "$A"; echo done > "$OUT/DONE_EXTRA"
