#!/usr/bin/env bash
# usage: eval/pseudo/run_dev.sh CHECKOUT OUTDIR [CASE...] -- issue 42's development figures for one checkout: the
# already-seen knowledge bases (in-sample) beside the seeds, as eval/run_new_kb.sh places them, and English ones alone
# (a seeds folder of only their pages), each built and evaluated with `bot eval` (its dense-only, BM25-only and
# no-meta baselines beside the product). CASE: kb2zh kb2en kb3 kb4 kb5 kb2en_alone kb5_alone kb3_alone (default all).
# Writes OUTDIR/CASE.json and OUTDIR/CASE.build.log.
set -eu
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); shift 2
E=$(cd "$(dirname "$0")/.." && pwd)  # this repository's eval/
CASES=${*:-"kb2zh kb2en kb3 kb4 kb5 kb2en_alone kb5_alone kb3_alone"}
mkdir -p "$OUT"
prefix() {  # prefix SRC PREFIX DST: the questions with their expected sources under PREFIX
  python - "$1" "$2" "$3" <<'PY'
import json, sys
src, prefix, dst = sys.argv[1:]
with open(dst, "w") as out:
    for line in open(src, encoding="utf-8"):
        row = json.loads(line)
        row["expect"] = [{**e, "source": prefix + e["source"]} for e in row["expect"]]
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
PY
}
for C in $CASES; do
  T=$OUT/$C; rm -rf "$T"; mkdir -p "$T/seeds" "$T/index"
  cp -r "$CO/index/calibration" "$T/index/"  # the shipped calibration, fitted on the seeds
  case $C in *_alone) ;; *) cp -r "$CO"/seeds/* "$T/seeds/"; rm -rf "$T/seeds/labels" ;; esac
  case $C in
    kb2zh) mkdir -p "$T/seeds/paddle_faq"; for p in install_cn.md train_cn.md distributed_cn.md data_cn.md; do cp "$E/kb2/docs/$p" "$T/seeds/paddle_faq/"; done
           prefix "$E/kb2/questions_zh.jsonl" paddle_faq/ "$T/q.jsonl" ;;
    kb2en|kb2en_alone) cp "$E"/kb2/docs_en/*.md "$T/seeds/"; cp "$E/kb2/questions_en.jsonl" "$T/q.jsonl" ;;
    kb3|kb3_alone) mkdir -p "$T/seeds/kb3"; cp "$E"/holdout8/kb3/docs/*.md "$T/seeds/kb3/"; cp "$E/holdout8/kb3/questions.jsonl" "$T/q.jsonl" ;;
    kb4) mkdir -p "$T/seeds/kb4"; cp "$E"/holdout9/kb4/docs/*.md "$T/seeds/kb4/"; cp "$E/holdout9/kb4/questions.jsonl" "$T/q.jsonl" ;;
    kb5|kb5_alone) mkdir -p "$T/seeds/kb5"; cp "$E"/holdout10/kb5/docs/*.md "$T/seeds/kb5/"; cp "$E/holdout10/kb5/questions.jsonl" "$T/q.jsonl" ;;
    *) echo "unknown case $C" >&2; exit 2 ;;
  esac
  case $C in *_alone)  # questions about the seeds cannot be answered here: drop those rows
    python - "$T/q.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
keep = [r for r in rows if not any(e["source"][:3].isdigit() for e in r["expect"])]  # the seeds' files: 000_….txt
open(sys.argv[1], "w").write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in keep))
PY
  ;; esac
  (cd "$CO" && BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index python -m bot build > "$OUT/$C.build.log" 2>&1 &&
   BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index python -m bot eval "$T/q.jsonl" --json > "$OUT/$C.json" 2> "$OUT/$C.err")
done
python - "$OUT" $CASES <<'PY'
import json, sys
out, cases = sys.argv[1], sys.argv[2:]
print(f"{'case':<12}{'n':>4}{'hit@1':>8}{'dense':>8}{'bm25':>8}{'no_meta':>8}{'conf_wrong':>11}{'near_conf':>10}{'conf_right':>11}")
for c in cases:
    r = json.load(open(f"{out}/{c}.json"))
    m, b = r["metrics"], r["baselines"]
    expects = [json.loads(line)["expect"] for line in open(f"{out}/{c}/q.jsonl", encoding="utf-8")]
    inscope = [x for x, e in zip(r["cases"], expects) if e]
    near = [x for x, e in zip(r["cases"], expects) if not e]
    cw = sum(1 for x in inscope if x["tier"] == "answer" and x["rank"] != 1) / max(len(inscope), 1)
    cr = sum(1 for x in inscope if x["tier"] == "answer" and x["rank"] == 1) / max(len(inscope), 1)
    nc = sum(1 for x in near if x["tier"] == "answer") / max(len(near), 1)
    print(f"{c:<12}{m['n']:>4}{m['hit@1']:>8}{b['dense_only']['hit@1']:>8}{b['bm25_only']['hit@1']:>8}{b['no_meta']['hit@1']:>8}{cw:>11.3f}{nc:>10.3f}{cr:>11.3f}")
PY
