#!/usr/bin/env bash
# holdout13: every paste is held out (the helpers developed on holdout12's); the added-page check reuses holdout12's first questions (an identity check: answers with and without the page)
# usage: heldout.sh CHECKOUT OUTDIR [parts...] -- this session's held-out figures for one checkout (looked at once, at the end)
# parts: seeds kb10 added (default: all)
set -u
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); shift 2; PARTS=${*:-seeds kb10 added}
S=$(dirname "$(realpath "$0")"); H=$(dirname "$S"); mkdir -p "$OUT"; cd "$CO"
# the pastes are measured by holdout11's script, which serves every batch
ENV=$(dirname "$H")/holdout11/scripts/envvalues.py
if [[ " $PARTS " == *" seeds "* ]]; then
  T=$(mktemp -d); cp -r seeds "$T/seeds"; rm -rf "$T/seeds/labels"; mkdir -p "$T/index"; cp -r index/calibration "$T/index/"
  export BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index
  nice python -m bot build > "$OUT/build.log" 2>&1
  PYTHONPATH=. nice python $ENV $H/envs/pastes_settled.jsonl > "$OUT/envvalues.json" 2> "$OUT/envvalues.err"
  nice python -m bot acts --evaluate $H/turns/acts_settled.jsonl --json > "$OUT/acts.json" 2> "$OUT/acts.err"
  nice python -m bot eval $(dirname "$H")/holdout12/first/questions_settled.jsonl --json --no-baselines > "$OUT/first.json" 2> "$OUT/first.err"
  nice python -m bot eval $H/turns/conversations_settled.jsonl --json --no-baselines > "$OUT/conv.json" 2> "$OUT/conv.err"
  unset BOT_SEEDS_DIR BOT_INDEX_DIR; rm -rf "$T"
fi
for kb in kb10; do
  [[ " $PARTS " == *" $kb "* ]] || continue
  K=$(mktemp -d); mkdir -p "$K/docs"; cp $H/$kb/docs/*.md "$K/docs/"; cp $H/$kb/labels20.jsonl "$K/"
  cp $H/$kb/questions_settled.jsonl "$K/questions.jsonl"
  nice bash eval/run_new_kb.sh "$CO" "$OUT" "$K" "$kb" > "$OUT/$kb.run.log" 2>&1
  cp "$OUT/tune.err" "$OUT/$kb.tune.err" 2>/dev/null; cp "$OUT/tune.load" "$OUT/$kb.tune.load" 2>/dev/null
  rm -rf "$OUT/$kb/index" "$K"
done
if [[ " $PARTS " == *" added "* ]]; then
  # an added page changes nothing else: holdout12's first questions with kb10's pages beside the seeds, no labels
  A=$(mktemp -d); cp -r seeds "$A/seeds"; rm -rf "$A/seeds/labels"; mkdir -p "$A/seeds/kb10" "$A/index"; cp $H/kb10/docs/*.md "$A/seeds/kb10/"
  cp -r index/calibration "$A/index/"
  BOT_SEEDS_DIR=$A/seeds BOT_INDEX_DIR=$A/index nice python -m bot build > "$OUT/added.build.log" 2>&1
  BOT_SEEDS_DIR=$A/seeds BOT_INDEX_DIR=$A/index nice python -m bot eval $(dirname "$H")/holdout12/first/questions_settled.jsonl --json --no-baselines > "$OUT/first_added.json" 2>/dev/null
  rm -rf "$A"
fi
echo done > "$OUT/DONE.$(echo $PARTS | tr ' ' _)"
