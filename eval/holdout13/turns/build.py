"""Regenerates conversations.jsonl, acts.jsonl and their _unlabelled copies from cases.py; prints counts."""
import json, collections
from cases import S, C

ACT2KIND = {"failed_fix": "retry", "detail": "followup", "environment": "followup",
            "new_covered": "switch", "new_uncovered": "drift", "thanks": "other", "person": "other"}

def ex(keys):
    return [{"source": S[k][0], "section": S[k][1]} for k in keys]

def conv_kind(acts):
    if "failed_fix" in acts: return "retry"
    if "new_uncovered" in acts: return "drift"
    if "new_covered" in acts: return "switch"
    return "followup"

conv, acts, conv_u, acts_u = [], [], [], []
import re as _re
def _lang(manual, turns):
    ls = {"zh" if _re.search(r"[\u4e00-\u9fff]", t[0]) else "en" for t in turns}
    return "mixed" if manual == "mixed" or len(ls) > 1 else ls.pop()
for i, (lang, url, sk, turns, note, doubt) in enumerate(C, 1):
    lang = _lang(lang, turns)
    cid, tid = "h13c-%03d" % i, "h13t-%03d" % i
    led = []
    for j, t in enumerate(turns):
        if j and t[2] == "failed_fix":
            for k in t[1]:
                assert k not in led, (cid, j, k)
        if t[1]: led.append(t[1][0])
    t1q, t1e = turns[0]
    later = turns[1:]
    a = [t[2] for t in later]
    for q, e, act in later:
        if act in ("thanks", "person", "new_uncovered"):
            assert e == [], (cid, q)
    cturns = [{"query": t1q, "expect": ex(t1e)}] + [{"query": q, "expect": ex(e)} for q, e, _ in later]
    d = {"id": cid, "turns": cturns, "kind": conv_kind(a), "lang": lang, "url": url, "source_kind": sk, "note": note}
    if doubt: d["doubt"] = doubt
    conv.append(d)
    aturns = [{"query": t1q, "expect": ex(t1e)}] + [{"query": q, "act": act} for q, _, act in later]
    d2 = {"id": tid, "lang": lang, "turns": aturns, "url": url, "source_kind": sk, "note": note}
    if doubt: d2["doubt"] = doubt
    acts.append(d2)
    conv_u.append({"id": cid, "turns": [{"query": t["query"]} for t in cturns], "lang": lang, "url": url, "source_kind": sk})
    acts_u.append({"id": tid, "lang": lang, "turns": [{"query": t["query"]} for t in aturns], "url": url, "source_kind": sk})

def dump(name, rows):
    with open(name, "w", encoding="utf-8") as f:
        for r in rows: f.write(json.dumps(r, ensure_ascii=False) + "\n")
dump("conversations.jsonl", conv); dump("acts.jsonl", acts)
dump("conversations_unlabelled.jsonl", conv_u); dump("acts_unlabelled.jsonl", acts_u)

# counts
later_acts = [t[2] for c in C for t in c[3][1:]]
print("conversations", len(C), "later turns", len(later_acts))
print("conv kinds", dict(collections.Counter(d["kind"] for d in conv)))
print("later turns per act", dict(collections.Counter(later_acts)))
print("later turns per turn-kind", dict(collections.Counter(ACT2KIND[a] for a in later_acts)))
print("langs", dict(collections.Counter(d["lang"] for d in conv)))
ff = [t[0] for c in C for t in c[3][1:] if t[2] == "failed_fix"]
print("failed_fix bare (<=12 chars)", sum(len(q) <= 12 for q in ff), "reported/what-was-tried", sum(len(q) > 12 for q in ff))
print("source", dict(collections.Counter(c[2] for c in C)))
print("later [] turns", sum(1 for c in C for t in c[3][1:] if not t[1]))
print("retry turns with []", sum(1 for c in C for t in c[3][1:] if t[2] == "failed_fix" and not t[1]))
