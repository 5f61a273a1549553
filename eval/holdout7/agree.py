import glob
import json
import os
import sys


def norm(s):
    return "".join(c for c in s.lower() if not c.isspace() and c not in "`*#[]")


heads = {}
for f in glob.glob(os.path.join(os.path.dirname(__file__), "..", "..", "seeds", "*.txt")):
    heads[os.path.basename(f)] = [norm(line.lstrip("#")) for line in open(f) if line.startswith("#")]


def h(e):
    for x in heads.get(e["source"], []):
        if norm(e["section"]) in x:
            return (e["source"], x)
    return (e["source"], "?" + norm(e["section"]))


def units(fn):
    out = []
    for o in map(json.loads, open(fn)):
        if "turns" in o:
            out += [t["expect"] for t in o["turns"]]
        else:
            out.append(o["expect"])
    return out


def agree(a, b, name):
    n = len(a)
    sa = [bool(x) for x in a]
    sb = [bool(x) for x in b]
    ag = sum(p == q for p, q in zip(sa, sb)) / n
    pa = sum(sa) / n
    pb = sum(sb) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    both = [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x and y]
    same = sum(h(x[0]) == h(y[0]) for i, x, y in both)
    ov = sum(bool({h(e) for e in x} & {h(e) for e in y}) for i, x, y in both)
    k = (ag - pe) / (1 - pe) if pe < 1 else 1
    print(f"| {name} | {n} | {ag:.3f} | {k:.2f} | {len(both)} | {same} | {ov} |")
    return [i for i, (x, y) in enumerate(zip(a, b)) if bool(x) != bool(y) or (x and y and h(x[0]) != h(y[0]))]


if __name__ == "__main__":
    for A, B, name in zip(sys.argv[1::3], sys.argv[2::3], sys.argv[3::3]):
        d = agree(units(A), units(B), name)
        print("   disagreements at units", d)
