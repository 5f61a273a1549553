#!/usr/bin/env bash
# usage: eval/run_new_kb.sh CHECKOUT OUTDIR KBDIR NAME -- a company's new documents beside the five seeds, twice:
# with no labels for them (the checkout's shipped calibration), then after `python -m bot tune` with the company's
# 20 labels in seeds/labels/. KBDIR holds docs/*.md (put under seeds/NAME/), questions.jsonl (scored both times)
# and labels20.jsonl. Writes OUTDIR/NAME.json, OUTDIR/NAME_tuned.json, tune.err (its wall time), tune.load.
set -u
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); K=$(realpath "$3"); NAME=$4
mkdir -p "$OUT"
cd "$CO"
T=$OUT/$NAME; rm -rf "$T"; mkdir -p "$T/seeds/$NAME" "$T/index"
cp -r seeds/* "$T/seeds/"; rm -rf "$T/seeds/labels"; cp "$K"/docs/*.md "$T/seeds/$NAME/"
cp -r index/calibration "$T/index/" 2>/dev/null
export BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index
python -m bot build > "$T/build.log" 2>&1
python -m bot eval "$K/questions.jsonl" --json > "$OUT/$NAME.json" 2> "$OUT/$NAME.err"
mkdir -p "$T/seeds/labels"; cp "$K/labels20.jsonl" "$T/seeds/labels/$NAME.jsonl"
uptime > "$OUT/tune.load"
/usr/bin/time -v python -m bot tune --json > "$OUT/tune.json" 2> "$OUT/tune.err"
uptime >> "$OUT/tune.load"
python -m bot eval "$K/questions.jsonl" --json > "$OUT/${NAME}_tuned.json" 2> "$OUT/${NAME}_tuned.err"
