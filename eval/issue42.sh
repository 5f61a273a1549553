#!/usr/bin/env bash
# usage: eval/issue42.sh CHECKOUT OUTDIR -- issue 42's in-sample figures for one checkout (docs/evaluation.md,
# "Issue 42"): 20 labels + `bot tune` on holdout 11's kb6 and kb7 and on kb2's four development pages
# (eval/run_new_kb.sh each: OUTDIR/<kb>/<kb>.json before, <kb>_tuned.json after, tune.json, tune.err with the wall
# and CPU time, tune.load), then what an added English page and a removed seed page change in the answers to every
# committed single first question (eval/added_page.py: OUTDIR/added_en.txt, removed.txt; the last line counts).
# A new knowledge base is measured the same way: eval/run_new_kb.sh CHECKOUT OUT KBDIR NAME with KBDIR holding
# docs/*.md, labels20.jsonl and questions.jsonl (expected sources as NAME/<page>.md).
set -u
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); HERE=$(cd "$(dirname "$0")" && pwd); mkdir -p "$OUT"
K=$(mktemp -d)
for kb in kb6 kb7; do
  mkdir -p "$K/$kb/docs"; cp "$HERE"/holdout11/$kb/docs/*.md "$K/$kb/docs/"
  cp "$HERE/holdout11/$kb/labels20.jsonl" "$K/$kb/"; cp "$HERE/holdout11/$kb/questions_settled.jsonl" "$K/$kb/questions.jsonl"
done
mkdir -p "$K/kb2/docs"; for p in install_cn train_cn distributed_cn data_cn; do cp "$HERE/kb2/docs/$p.md" "$K/kb2/docs/"; done
python - "$HERE/kb2/questions_zh.jsonl" "$K/kb2" <<'PY'
import hashlib, json, sys
src, out = sys.argv[1:]
rows = [json.loads(line) for line in open(src, encoding="utf-8") if line.strip()]
for row in rows:
    row["expect"] = [{**e, "source": "kb2/" + e["source"]} for e in row["expect"]]
order = sorted(range(len(rows)), key=lambda n: hashlib.sha1(rows[n]["url"].encode()).hexdigest())
chosen = set(order[:20])  # eval/kb2/run_tune20.sh's split
with open(f"{out}/labels20.jsonl", "w") as a, open(f"{out}/questions.jsonl", "w") as b:
    for n, row in enumerate(rows):
        (a if n in chosen else b).write(json.dumps(row, ensure_ascii=False) + "\n")
PY
for kb in kb6 kb7 kb2; do
  bash "$HERE/run_new_kb.sh" "$CO" "$OUT/$kb" "$K/$kb" "$kb" > "$OUT/$kb.run.log" 2>&1
done
cd "$CO"
FILES="/work/shared/eval/dev.jsonl $(ls eval/real_*.jsonl) $(ls eval/holdout*/single.jsonl eval/holdout*/*/single.jsonl) eval/holdout11/first/questions_settled.jsonl"
python "$HERE/added_page.py" tests/engine/data/unrelated_page.md $FILES > "$OUT/added_en.txt" 2>&1
python "$HERE/added_page.py" --remove 003_ba74d700c0e52ec2.txt $FILES > "$OUT/removed.txt" 2>&1
rm -rf "$K"
echo done > "$OUT/DONE"
