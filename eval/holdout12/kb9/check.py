"""Checks kb9: every expect section matches exactly one heading (README matching rule),
URLs unique and unused in /work/main/eval, unlabelled file aligned. Prints 'problems N'."""

import glob
import json
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = "/work/main/seeds"


def normalize(s):
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)  # markdown link -> text
    s = s.lower()
    return re.sub(r"[\s`*#\[\]]", "", s)


def headings(path):
    out, fence = [], False
    for line in open(path, encoding="utf-8"):
        if re.match(r"^ {0,3}(```|~~~)", line):
            fence = not fence
            continue
        m = None if fence else re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            out.append(m.group(1))
    return out


def heads_for(source):
    if source.startswith("kb9/"):
        return headings(os.path.join(HERE, "docs", source[4:]))
    return headings(os.path.join(SEEDS, source))


problems = []
total_sections = 0
for f in sorted(glob.glob(os.path.join(HERE, "docs", "*.md"))):
    hs = headings(f)
    total_sections += len(hs)
    print(f"{os.path.basename(f)}: {len(hs)} headings")
print("total headings:", total_sections)


def load(name):
    return [json.loads(ln) for ln in open(os.path.join(HERE, name), encoding="utf-8")]


q, lab, unl = load("questions.jsonl"), load("labels20.jsonl"), load("questions_unlabelled.jsonl")
urls = []
for _name, rows in (("questions", q), ("labels20", lab)):
    for r in rows:
        for k in ("id", "query", "kind", "expect", "url", "source_kind", "lang", "note"):
            if k not in r:
                problems.append(f"{r.get('id')}: missing {k}")
        if r["source_kind"] == "thread":
            if not r["url"].startswith("https://github.com/"):
                problems.append(f"{r['id']}: bad url")
            urls.append(r["url"])
        elif r["url"] != "":
            problems.append(f"{r['id']}: written with url")
        for e in r["expect"]:
            n = normalize(e["section"])
            hits = [h for h in heads_for(e["source"]) if n in normalize(h)]
            if len(hits) != 1:
                problems.append(
                    f"{r['id']}: section {e['section']!r} in {e['source']} matches {len(hits)} headings {hits}"
                )
dups = {u for u in urls if urls.count(u) > 1}
if dups:
    problems.append(f"duplicate urls: {dups}")
for u in set(urls):
    r = subprocess.run(["grep", "-rlF", u + '"', "/work/main/eval"], capture_output=True, text=True)
    r2 = subprocess.run(["grep", "-rlF", u + "/", "/work/main/eval"], capture_output=True, text=True)
    r3 = subprocess.run(["grep", "-rlwF", u, "/work/main/eval"], capture_output=True, text=True)
    if r.stdout.strip() or r3.stdout.strip():
        problems.append(f"url already used in /work/main/eval: {u}")
if [r["id"] for r in q] != [r["id"] for r in unl]:
    problems.append("unlabelled ids/order differ")
for a, b in zip(q, unl):
    if a["query"] != b["query"] or "expect" in b or "note" in b:
        problems.append(f"{b['id']}: unlabelled mismatch")
n_ans = sum(1 for r in q if r["expect"])
n_near = len(q) - n_ans
n_thread_ans = sum(1 for r in q if r["expect"] and r["source_kind"] == "thread")
print(f"questions {len(q)}: answerable {n_ans} (threads {n_thread_ans}), near {n_near}; labels20 {len(lab)}")
for p in problems:
    print("PROBLEM", p)
print("problems", len(problems))
