# Checks kb10: every expect's section matches exactly one heading in its file (README matching rule),
# URLs are unique across questions.jsonl + labels20.jsonl and unused in /work/main/eval and other /work/holdout13 folders,
# questions_unlabelled.jsonl mirrors questions.jsonl; prints section counts.
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = "/work/main/seeds"
EVAL = "/work/main/eval"


def norm(s):
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = s.lower()
    return re.sub(r"[\s`*#\[\]]", "", s)


def headings(path):
    hs, fence, _body = [], False, []
    lines = open(path, encoding="utf-8").read().split("\n")
    for ln in lines:
        if ln.strip().startswith("```"):
            fence = not fence
        if not fence and re.match(r"^#{1,6}\s", ln):
            text = re.sub(r"^#{1,6}\s+", "", ln).strip()
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
            hs.append([text, 0])
        elif hs and ln.strip() and not ln.strip().startswith("<br"):
            hs[-1][1] += 1
    return hs


def path_of(src):
    if src.startswith("kb10/"):
        return os.path.join(HERE, "docs", src[5:])
    return os.path.join(SEEDS, src)


problems = []
cache = {}
rows = []
for fn in ("questions.jsonl", "labels20.jsonl"):
    for i, ln in enumerate(open(os.path.join(HERE, fn), encoding="utf-8")):
        d = json.loads(ln)
        rows.append((fn, d))
        for k in ("id", "query", "kind", "expect", "url", "source_kind", "lang", "note"):
            if k not in d:
                problems.append(f"{fn}:{i + 1} missing {k}")
        if d["kind"] not in ("zh", "en", "mixed", "trace", "oos"):
            problems.append(f"{fn}:{i + 1} bad kind {d['kind']}")
        if d["source_kind"] == "thread" and not d["url"]:
            problems.append(f"{fn}:{i + 1} thread without url")
        for ex in d["expect"]:
            p = path_of(ex["source"])
            if not os.path.exists(p):
                problems.append(f"{fn}:{i + 1} no file {p}")
                continue
            hs = cache.setdefault(p, headings(p))
            m = [h for h, _ in hs if norm(ex["section"]) in norm(h)]
            if len(m) != 1:
                problems.append(
                    f"{fn}:{i + 1} section {ex['section']!r} matches {len(m)} headings in {ex['source']}: {m}"
                )

urls = [d["url"] for _, d in rows if d["url"]]
dup = {u for u in urls if urls.count(u) > 1}
if dup:
    problems.append(f"duplicate urls: {dup}")
used = subprocess.run(
    ["grep", "-rhoE", r"github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(issues|pull|discussions)/[0-9]+", EVAL],
    capture_output=True,
    text=True,
).stdout.split()
used = set(used)
for u in urls:
    if u.replace("https://", "") in used:
        problems.append(f"url already used in /work/main/eval: {u}")
# other helpers of this session (holdout12), excluding this folder
others = subprocess.run(
    [
        "grep",
        "-rhoE",
        "--exclude-dir=kb10",
        r"github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(issues|pull|discussions)/[0-9]+",
        "/work/holdout13",
    ],
    capture_output=True,
    text=True,
).stdout.split()
others = set(others)
for u in urls:
    if u.replace("https://", "") in others:
        problems.append(f"url already used elsewhere in /work/holdout13: {u}")

q = [json.loads(ln) for ln in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8")]
u = [json.loads(ln) for ln in open(os.path.join(HERE, "questions_unlabelled.jsonl"), encoding="utf-8")]
if len(q) != len(u):
    problems.append("unlabelled length differs")
for a, b in zip(q, u):
    if a["id"] != b["id"] or a["query"] != b["query"] or "expect" in b or "note" in b:
        problems.append(f"unlabelled mismatch at {a['id']}")

total = with_text = 0
for fn in sorted(os.listdir(os.path.join(HERE, "docs"))):
    hs = headings(os.path.join(HERE, "docs", fn))
    t = sum(1 for _, n in hs if n)
    total += len(hs)
    with_text += t
    print(f"{fn}: {len(hs)} headings, {t} with text")
print(f"total: {total} headings, {with_text} with text")
ans = sum(1 for d in q if d["expect"])
print(
    f"questions.jsonl: {len(q)} ({ans} answerable, {len(q) - ans} near; "
    f"{sum(1 for d in q if d['source_kind'] == 'thread')} thread, {sum(1 for d in q if d['source_kind'] == 'written')} written)"
)
l20 = [d for fn, d in rows if fn == "labels20.jsonl"]
print(f"labels20.jsonl: {len(l20)}")
for p in problems:
    print("PROBLEM", p)
print("problems", len(problems))
sys.exit(1 if problems else 0)
