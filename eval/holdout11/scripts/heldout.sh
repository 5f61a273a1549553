#!/usr/bin/env bash
# usage: heldout.sh CHECKOUT OUTDIR -- this session's held-out figures for one checkout (looked at once, at the end)
set -u
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); H=eval/holdout11; mkdir -p "$OUT"; cd "$CO"
T=$(mktemp -d); cp -r seeds "$T/seeds"; rm -rf "$T/seeds/labels"; mkdir -p "$T/index"; cp -r index/calibration "$T/index/"
export BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index
python -m bot build > "$OUT/build.log" 2>&1
python -m bot eval $H/first/questions_settled.jsonl --json > "$OUT/first.json" 2> "$OUT/first.err"
python -m bot eval $H/turns/conversations_settled.jsonl --json --no-baselines > "$OUT/conv.json" 2> "$OUT/conv.err"
python -m bot acts --evaluate $H/turns/acts_heldout.jsonl --json > "$OUT/acts.json" 2> "$OUT/acts.err"
python -m bot eval-env $H/envs/pastes_heldout_settled.jsonl --cases > "$OUT/env.txt" 2> "$OUT/env.err"
unset BOT_SEEDS_DIR BOT_INDEX_DIR
for kb in kb6 kb7; do
  K=$(mktemp -d); mkdir -p "$K/docs"; cp $H/$kb/docs/*.md "$K/docs/"; cp $H/$kb/labels20.jsonl "$K/"
  cp $H/$kb/questions_settled.jsonl "$K/questions.jsonl"
  bash eval/run_new_kb.sh "$CO" "$OUT" "$K" "$kb" > "$OUT/$kb.run.log" 2>&1
done
# an added page changes nothing else: the first questions with kb7's pages beside the seeds, no labels
A=$(mktemp -d); cp -r seeds "$A/seeds"; rm -rf "$A/seeds/labels"; mkdir -p "$A/seeds/kb7" "$A/index"; cp $H/kb7/docs/*.md "$A/seeds/kb7/"
cp -r index/calibration "$A/index/"
BOT_SEEDS_DIR=$A/seeds BOT_INDEX_DIR=$A/index python -m bot build > "$OUT/added.build.log" 2>&1
BOT_SEEDS_DIR=$A/seeds BOT_INDEX_DIR=$A/index python -m bot eval $H/first/questions_settled.jsonl --json --no-baselines > "$OUT/first_added.json" 2>/dev/null
rm -rf "$T" "$A"
echo done > "$OUT/DONE"
