#!/usr/bin/env bash
# usage: eval/kb2/run_dev.sh CHECKOUT OUTDIR -- kb2's development figures for one checkout (issue 33):
# the seeds plus the four development pages (install, train, distributed, data) in a temp seeds folder, the
# checkout's shipped calibration, and `bot eval` (with its dense-only, BM25-only and no-meta baselines) on the
# Chinese development questions and on their written English/mixed phrasings (questions_en_dev.jsonl).
# Held-out pages and questions are not read.
set -eu
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); K=$(cd "$(dirname "$0")" && pwd)  # this repository's eval/kb2
DEV_PAGES="install_cn.md train_cn.md distributed_cn.md data_cn.md"
mkdir -p "$OUT"; T=$OUT/kb; rm -rf "$T"; mkdir -p "$T/seeds/paddle_faq" "$T/index"
cp -r "$CO"/seeds/* "$T/seeds/"
for p in $DEV_PAGES; do cp "$K/docs/$p" "$T/seeds/paddle_faq/"; done
cp -r "$CO/index/calibration" "$T/index/" 2>/dev/null || true
for q in questions_zh questions_en_dev; do
  python - "$K/$q.jsonl" paddle_faq/ "$T/$q.jsonl" <<'PY'
import json, sys
src, prefix, dst = sys.argv[1:]
with open(dst, "w") as out:
    for line in open(src, encoding="utf-8"):
        row = json.loads(line)
        row["expect"] = [{**e, "source": prefix + e["source"]} for e in row["expect"]]
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
PY
done
cd "$CO"
BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index python -m bot build > "$OUT/build.log" 2>&1
for q in questions_zh questions_en_dev; do
  BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index python -m bot eval "$T/$q.jsonl" --json > "$OUT/$q.json" 2> "$OUT/$q.err"
done
echo done > "$OUT/DONE"
