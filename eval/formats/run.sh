#!/usr/bin/env bash
# usage: eval/formats/run.sh CHECKOUT OUTDIR KBDIR NAME -- the same FAQ pages as Markdown, HTML, Word, PDF and
# reStructuredText (issue 43). KBDIR holds docs/*.md and questions.jsonl. Each variant is made from the Markdown by
# pandoc, its typographic quotes and '%' title lines off so that the text stays the same (PDF: pandoc's HTML printed
# by headless Chromium, as a browser's "Save as PDF"; Word and rst: pandoc's HTML written again by pandoc, so that
# the HTML inside a Markdown page is not dropped), put under seeds/NAME/ beside the shipped seeds, built, and
# scored with questions whose expected sources name the variant's files. Writes
# OUTDIR/<format>.json (python -m bot eval --json), OUTDIR/<format>.build.log and OUTDIR/table.md.
# FORMATS="pdf" runs only those variants again (after a whole run: the md index is their start).
# Needs: pandoc, chromium. The Markdown variant is built first; the others start from a copy of its index, so only
# the KB's own converted texts are embedded again (the seeds' vectors are reused).
set -eu
CO=$(realpath "$1"); OUT=$(realpath -m "$2"); K=$(realpath "$3"); NAME=$4
mkdir -p "$OUT"
cd "$CO"
for FORMAT in ${FORMATS:-md html docx pdf rst}; do
  T=$OUT/$FORMAT; rm -rf "$T"; mkdir -p "$T/seeds/$NAME" "$T/index"
  cp -r seeds/* "$T/seeds/"; rm -rf "$T/seeds/labels"
  if [ "$FORMAT" = md ]; then cp -r index/calibration "$T/index/" 2>/dev/null || true
  else cp -r "$OUT/md/index/." "$T/index/"; fi
  for DOC in "$K"/docs/*.md; do
    BASE=$(basename "$DOC" .md); DEST=$T/seeds/$NAME/$BASE.$FORMAT
    case $FORMAT in
      md) cp "$DOC" "$DEST" ;;
      html) pandoc -f markdown-smart-pandoc_title_block "$DOC" -s --metadata pagetitle="$BASE" -o "$DEST" ;;
      # Through pandoc's HTML, as the PDF: pandoc's Word and rst writers drop the HTML a Markdown page holds
      # (kb3's table of error messages), its HTML reader reads it as a table like any other.
      docx|rst) pandoc -f markdown-smart-pandoc_title_block "$DOC" -t html | pandoc -f html -s -o "$DEST" ;;
      pdf) pandoc -f markdown-smart-pandoc_title_block "$DOC" -s --metadata pagetitle="$BASE" -o "$T/$BASE.html"
           chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer \
             --print-to-pdf="$DEST" "$T/$BASE.html" >/dev/null 2>&1
           rm "$T/$BASE.html" ;;
    esac
  done
  python - "$K/questions.jsonl" "$NAME" "$FORMAT" > "$T/questions.jsonl" <<'PY'
import json, sys
path, name, fmt = sys.argv[1:]
for line in open(path, encoding="utf-8"):
    row = json.loads(line)
    for e in row.get("expect", []):
        if e["source"].startswith(name + "/") and e["source"].endswith(".md"):
            e["source"] = e["source"][: -len(".md")] + "." + fmt
    print(json.dumps(row, ensure_ascii=False))
PY
  export BOT_SEEDS_DIR=$T/seeds BOT_INDEX_DIR=$T/index
  python -m bot build > "$OUT/$FORMAT.build.log" 2>&1
  python -m bot eval "$T/questions.jsonl" --json --no-baselines > "$OUT/$FORMAT.json" 2> "$OUT/$FORMAT.err"
done
python - "$OUT" "$NAME" > "$OUT/table.md" <<'PY'
import json, re, sys
out, name = sys.argv[1:]
print("| format | n | hit@1 | hit@3 | mrr@10 | top hit cites the original file | KB sections | build |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
base = None
for fmt in ("md", "html", "docx", "pdf", "rst"):
    report = json.load(open(f"{out}/{fmt}.json", encoding="utf-8"))
    m = report["metrics"]
    kb = [c for c in report["cases"] if c["hits"] and c["hits"][0]["source"].startswith(name + "/")]
    cites = sum(c["hits"][0]["source"].endswith("." + fmt) for c in kb)
    gen = open(f"{out}/{fmt}/index/CURRENT").read().strip()
    rows = json.load(open(f"{out}/{fmt}/index/{gen}/sections.json", encoding="utf-8"))
    sections = sum(r["source"].startswith(name + "/") for r in rows)
    log = open(f"{out}/{fmt}.build.log", encoding="utf-8").read()
    converted = re.search(r"converted (\d+) document\(s\) in ([\d.]+)s", log)
    build = f"converted {converted.group(1)} in {converted.group(2)} s" if converted else "read as is"
    base = m["hit@1"] if base is None else base
    delta = "" if fmt == "md" else f" ({m['hit@1'] - base:+.3f})"
    print(f"| {fmt} | {m['n']} | {m['hit@1']:.3f}{delta} | {m['hit@3']:.3f} | {m['mrr@10']:.3f} | {cites}/{len(kb)} "
          f"| {sections} | {build} |")
PY
cat "$OUT/table.md"
