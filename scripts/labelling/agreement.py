"""Agreement between two independent labellings of the same batch.
usage: python agreement.py A_single.jsonl B_single.jsonl [A_conv.jsonl B_conv.jsonl]
Cases are paired by url (and turn index for conversations). Prints Cohen's kappa on
in-scope vs near, and, where both say in scope, the share whose first sections match
and the share whose section sets overlap; lists every disagreement for settlement."""

import json
import sys


def cases(fn):
    out = {}
    for line in open(fn, encoding="utf-8"):
        o = json.loads(line)
        if "turns" in o:
            for i, t in enumerate(o["turns"]):
                out[(o["url"], i)] = t["expect"]
        else:
            out[(o["url"], 0)] = o["expect"]
    return out


def key(e):
    return [(x["source"], x["section"]) for x in e]


a, b = {}, {}
args = sys.argv[1:]
for fa, fb in zip(args[0::2], args[1::2]):
    a.update(cases(fa))
    b.update(cases(fb))
common = sorted(set(a) & set(b))
n = len(common)
ya = [bool(a[k]) for k in common]
yb = [bool(b[k]) for k in common]
po = sum(x == y for x, y in zip(ya, yb)) / n
pa, pb = sum(ya) / n, sum(yb) / n
pe = pa * pb + (1 - pa) * (1 - pb)
kappa = (po - pe) / (1 - pe) if pe < 1 else 1.0
both = [k for k in common if a[k] and b[k]]
first = sum(key(a[k])[0] == key(b[k])[0] for k in both)
overlap = sum(bool(set(key(a[k])) & set(key(b[k]))) for k in both)
print(f"cases {n}  in-scope/near agreement {po:.2f}  kappa {kappa:.2f}")
print(f"both in scope {len(both)}  same first section {first}  overlapping sets {overlap}")
for k in common:
    if bool(a[k]) != bool(b[k]) or (a[k] and b[k] and not set(key(a[k])) & set(key(b[k]))):
        print("DISAGREE", k, key(a[k]), "|", key(b[k]))
