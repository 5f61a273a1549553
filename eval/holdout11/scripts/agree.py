"""Agreement between the first and the blind second labeller of a session's held-out batches.

Usage: python eval/holdout11/scripts/agree.py [BATCH_DIR]   (default eval/holdout11; eval/holdout12 too: every batch
folder has the same layout, its knowledge bases are its kb* folders)"""

import json
import re
import sys
from collections import Counter
from pathlib import Path

H = sys.argv[1] if len(sys.argv) > 1 else "eval/holdout11"
KBS = sorted(p.name for p in Path(H).glob("kb*") if p.is_dir())


def load(p):
    return [json.loads(ln) for ln in open(p) if ln.strip()]


def norm(s):
    return re.sub(r"[\s`*#\[\]]", "", s.lower())


def keyset(expect):
    return {(e["source"], norm(e["section"])) for e in expect}


def overlap(a, b):
    if not a and not b:
        return True
    return any(sa == sb and (ha in hb or hb in ha) for sa, ha in a for sb, hb in b)


def kappa(pairs):
    n = len(pairs)
    po = sum(a == b for a, b in pairs) / n
    ca, cb = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    pe = sum(ca[k] * cb[k] for k in set(ca) | set(cb)) / n / n
    return (po - pe) / (1 - pe) if pe < 1 else 1.0


out = {}
for name, first, second in [(kb, f"{kb}/questions.jsonl", f"labels2/{kb}.jsonl") for kb in KBS] + [
    ("first", "first/questions.jsonl", "labels2/first.jsonl"),
]:
    try:
        a, b = load(f"{H}/{first}"), load(f"{H}/{second}")
    except FileNotFoundError:
        continue
    pairs = [(keyset(x["expect"]), keyset(y["expect"])) for x, y in zip(a, b)]
    agree = sum(overlap(p, q) for p, q in pairs)
    k = kappa([(bool(p), bool(q)) for p, q in pairs])
    out[name] = {"n": len(pairs), "same answer (overlap, or both [])": agree, "kappa answerable/near": round(k, 3)}
try:
    a, b = load(f"{H}/turns/acts.jsonl"), load(f"{H}/labels2/acts.jsonl")
    pairs = [(x["act"], y["act"]) for ca, cb in zip(a, b) for x, y in zip(ca["turns"][1:], cb["turns"][1:])]
    out["acts"] = {"n": len(pairs), "agree": sum(p == q for p, q in pairs), "kappa": round(kappa(pairs), 3)}
except FileNotFoundError:
    pass
try:
    a, b = load(f"{H}/turns/conversations.jsonl"), load(f"{H}/labels2/conversations.jsonl")
    pairs = [
        (keyset(x.get("expect", [])), keyset(y.get("expect", [])))
        for ca, cb in zip(a, b)
        for x, y in zip(ca["turns"][1:], cb["turns"][1:])
    ]
    out["conversations"] = {
        "n turns": len(pairs),
        "same answer": sum(overlap(p, q) for p, q in pairs),
        "kappa answerable/[]": round(kappa([(bool(p), bool(q)) for p, q in pairs]), 3),
        "kind agree": sum(x.get("kind") == y.get("kind") for x, y in zip(a, b)),
        "n conv": len(a),
    }
except FileNotFoundError:
    pass
try:
    a, b = load(f"{H}/envs/pastes.jsonl"), load(f"{H}/labels2/pastes.jsonl")

    def codes(r):
        return frozenset(
            m if isinstance(m, str) else m.get("code", json.dumps(m, sort_keys=True))
            for m in r.get("expect", {}).get("mismatches", [])
        )

    pairs = [(codes(x), codes(y)) for x, y in zip(a, b)]
    out["pastes"] = {
        "n": len(pairs),
        "same mismatch set": sum(p == q for p, q in pairs),
        "kappa (set as class)": round(kappa(pairs), 3),
    }
except FileNotFoundError:
    pass
json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
print()
