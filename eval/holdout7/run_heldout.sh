#!/usr/bin/env bash
# usage: eval/holdout7/run_heldout.sh CHECKOUT OUTDIR -- the held-out figures of docs/evaluation.md for one checkout
# (session-start main and final main were each run once; then: python eval/holdout7/summarize.py OUT_A OUT_B)
set -u
CO=$1; OUT=$(realpath -m "$2"); E=$(cd "$(dirname "$0")/.." && pwd)  # this repository's eval/
mkdir -p "$OUT"
cd "$CO"
H7S=$E/holdout7/single.jsonl; H7C=$E/holdout7/conversations.jsonl; H7W=$E/holdout7/written.jsonl
python -m bot eval "$H7S" --json > "$OUT/h7_single.json" 2> "$OUT/h7_single.err"
python -m bot eval "$H7C" "$H7W" --json --no-baselines > "$OUT/h7_conv.json" 2> "$OUT/h7_conv.err"
# New documents: seeds + PaddlePaddle FAQ pages (held-out pages only in the labels file given), calibration as shipped
for kb in zh en; do
  T=$OUT/kb_$kb; rm -rf "$T"; mkdir -p "$T/seeds" "$T/index"
  if [ $kb = zh ]; then cp -r seeds/* "$T/seeds/"; mkdir -p "$T/seeds/paddle_faq"; cp $E/kb2/docs/*.md "$T/seeds/paddle_faq/"; P=paddle_faq/; Q=$E/kb2/questions_zh_heldout.jsonl;
  else mkdir -p "$T/seeds/tf_install"; cp $E/kb2/docs_en/*.md "$T/seeds/tf_install/"; P=tf_install/; Q=$E/kb2/questions_en.jsonl; fi
  cp -r index/calibration "$T/index/" 2>/dev/null
  python - "$Q" "$P" "$T/q.jsonl" <<'PY'
import json,sys
src,pre,dst=sys.argv[1:]
with open(dst,"w") as f:
    for l in open(src):
        o=json.loads(l); o["expect"]=[{**e,"source":pre+e["source"]} for e in o["expect"]]; f.write(json.dumps(o,ensure_ascii=False)+"\n")
PY
  BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index python -m bot build > "$T/build.log" 2>&1
  BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index python -m bot eval "$T/q.jsonl" --json > "$OUT/kb_$kb.json" 2> "$OUT/kb_$kb.err"
done
echo done > "$OUT/DONE"
