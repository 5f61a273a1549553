"""Checks every expect of conversations.jsonl / acts.jsonl matches a heading of the seeds (eval/README matching rule),
and that each retry turn's expect avoids the sections earlier turns listed first."""
import json, re, sys, os
SEEDS = "/work/main/seeds"
def norm(s): return re.sub(r"[\s`*#\[\]]", "", s).lower()
heads = {}
for fn in sorted(os.listdir(SEEDS)):
    if not fn.endswith(".txt"): continue
    hs, code = [], False
    for line in open(os.path.join(SEEDS, fn), encoding="utf-8"):
        if line.strip().startswith("```"): code = not code; continue
        if not code and re.match(r"^#{1,6}\s", line):
            t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line.lstrip("#").strip())
            hs.append(norm(t))
    heads[fn] = hs
bad = 0
for f in ("conversations.jsonl", "acts.jsonl"):
    for line in open(f, encoding="utf-8"):
        d = json.loads(line)
        led = []
        for i, t in enumerate(d["turns"]):
            for e in t.get("expect", []):
                n = norm(e["section"])
                hits = [h for h in heads.get(e["source"], []) if n in h]
                if len(hits) != 1:
                    bad += 1; print("BAD", f, d["id"], i, e, len(hits))
            if f == "conversations.jsonl" and i > 0 and t["expect"]:
                for e in t["expect"]:
                    if (e["source"], e["section"]) in led and d["kind"] == "retry":
                        print("NOTE repeat-in-retry-conv", d["id"], i, e["section"])
            if t.get("expect"): led.append((t["expect"][0]["source"], t["expect"][0]["section"]))
print("checked; bad =", bad)
sys.exit(1 if bad else 0)
