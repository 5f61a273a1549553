#!/usr/bin/env bash
# usage: eval/kb2/run_tune20.sh CHECKOUT OUTDIR -- issue 33's "20 labelled questions for new documents and
# `bot tune`" on kb2's development pages: the seeds plus the four development pages in a temp seeds folder, 20 of
# questions_zh.jsonl (chosen by a hash of their thread, so the choice is fixed) as the company's labels in
# seeds/labels/kb2_dev.jsonl, the other 14 evaluated before (the checkout's shipped calibration) and after
# `python -m bot tune` (which reads the shipped eval/*.jsonl beside seeds/labels/). Held-out pages and questions
# are not read. Figures: python eval/kb2/summarize_tune20.py OUTDIR
set -eu
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); K=$(cd "$(dirname "$0")" && pwd)
DEV_PAGES="install_cn.md train_cn.md distributed_cn.md data_cn.md"
mkdir -p "$OUT"; T=$OUT/kb; rm -rf "$T"; mkdir -p "$T/seeds/paddle_faq" "$T/seeds/labels" "$T/index"
cp -r "$CO"/seeds/* "$T/seeds/"
for p in $DEV_PAGES; do cp "$K/docs/$p" "$T/seeds/paddle_faq/"; done
cp -r "$CO/index/calibration" "$T/index/"
python - "$K/questions_zh.jsonl" "$T/seeds/labels/kb2_dev.jsonl" "$T/test.jsonl" <<'PY'
import hashlib, json, sys
src, labels, test = sys.argv[1:]
rows = [json.loads(line) for line in open(src, encoding="utf-8") if line.strip()]
for row in rows:
    row["expect"] = [{**e, "source": "paddle_faq/" + e["source"]} for e in row["expect"]]
order = sorted(range(len(rows)), key=lambda n: hashlib.sha1(rows[n]["url"].encode()).hexdigest())
chosen = set(order[:20])
with open(labels, "w") as a, open(test, "w") as b:
    for n, row in enumerate(rows):
        (a if n in chosen else b).write(json.dumps(row, ensure_ascii=False) + "\n")
print(f"labels: {len(chosen)} ({sum(1 for n in chosen if rows[n]['expect'])} answerable); "
      f"test: {len(rows) - len(chosen)} ({sum(1 for n in range(len(rows)) if n not in chosen and rows[n]['expect'])} answerable)")
PY
cd "$CO"
export BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index
python -m bot build > "$OUT/build.log" 2>&1
python -m bot eval "$T/test.jsonl" --json > "$OUT/before.json" 2> "$OUT/before.err"
uptime > "$OUT/tune.load"
/usr/bin/time -v python -m bot tune --json > "$OUT/tune.json" 2> "$OUT/tune.err"
uptime >> "$OUT/tune.load"
python -m bot eval "$T/test.jsonl" --json > "$OUT/after.json" 2> "$OUT/after.err"
echo done > "$OUT/DONE"
