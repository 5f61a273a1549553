#!/usr/bin/env bash
set -u
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); H=eval/holdout11; mkdir -p "$OUT"; cd "$CO"
T=$(mktemp -d); cp -r seeds "$T/seeds"; rm -rf "$T/seeds/labels"; mkdir -p "$T/index"; cp -r index/calibration "$T/index/"
export BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index
python -m bot build > "$OUT/build.log" 2>&1
PYTHONPATH=. python eval/holdout11/scripts/envvalues.py $H/envs/pastes_heldout_settled.jsonl > "$OUT/envvalues.json" 2> "$OUT/envvalues.err"
python -m bot acts --evaluate $H/turns/acts_heldout.jsonl --json > "$OUT/acts.json" 2> "$OUT/acts.err"
python -m bot eval $H/first/questions_settled.jsonl --json > "$OUT/first.json" 2> "$OUT/first.err"
python -m bot eval $H/turns/conversations_settled.jsonl --json --no-baselines > "$OUT/conv.json" 2> "$OUT/conv.err"
echo done > "$OUT/DONE"
