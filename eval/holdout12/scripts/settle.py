"""Settle the two blind labellings of this session's held-out batches, mechanically, before any checkout runs on them:
- questions and conversation turns: both answerable -> either labeller's sections accepted (union, first labeller's
  first); one answerable and one [] -> the first labeller's label stands (the count of such disputes is reported);
- acts: the first labeller's act (agreement reported by `python eval/holdout11/scripts/agree.py BATCH_DIR`);
- pastes: the first labeller's codes, the second's added to "accept"; the user's values a reply must quote are those
  both labellers listed ("user_values_both"); the held-out half is every even-numbered id (split by id, before any look).
Usage: python eval/holdout12/scripts/settle.py [BATCH_DIR]  (default eval/holdout12; holdout13 too: every batch folder has
the same layout, its knowledge bases its kb* folders; writes *_settled.jsonl next to each first-labeller file; prints the dispute counts)"""

import json
import sys
from pathlib import Path

H = Path(sys.argv[1] if len(sys.argv) > 1 else "eval/holdout12")


def load(p):
    return [json.loads(ln) for ln in open(p) if ln.strip()]


def dump(rows, p):
    with open(p, "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def merged(a, b):
    if a and b:
        seen = {(e["source"], e["section"]) for e in a}
        return a + [e for e in b if (e["source"], e["section"]) not in seen]
    return a


report = {}
KBS = sorted(p.name for p in H.glob("kb*") if p.is_dir())
for name, first, second in [(kb, f"{kb}/questions.jsonl", f"labels2/{kb}.jsonl") for kb in KBS] + [
    ("first", "first/questions.jsonl", "labels2/first.jsonl"),
]:
    if not (H / second).exists():
        continue
    a, b = load(H / first), load(H / second)
    assert [x["id"] for x in a] == [y["id"] for y in b], name
    disputes = sum(bool(x["expect"]) != bool(y["expect"]) for x, y in zip(a, b))
    out = [dict(x, expect=merged(x["expect"], y["expect"])) for x, y in zip(a, b)]
    dump(out, H / first.replace(".jsonl", "_settled.jsonl"))
    report[name] = {"n": len(a), "answerable/[] disputes (first labeller stands)": disputes}

if (H / "labels2/conversations.jsonl").exists():
    a, b = load(H / "turns/conversations.jsonl"), load(H / "labels2/conversations.jsonl")
    assert [x["id"] for x in a] == [y["id"] for y in b]
    disputes, out = 0, []
    for ca, cb in zip(a, b):
        turns = []
        for x, y in zip(ca["turns"], cb["turns"]):
            disputes += bool(x.get("expect")) != bool(y.get("expect"))
            turns.append(dict(x, expect=merged(x.get("expect", []), y.get("expect", []))))
        out.append(dict(ca, turns=turns))
    dump(out, H / "turns/conversations_settled.jsonl")
    report["conversations"] = {"n": len(a), "turn answerable/[] disputes (first labeller stands)": disputes}

if (H / "turns/acts.jsonl").exists():
    dump(load(H / "turns/acts.jsonl"), H / "turns/acts_settled.jsonl")

if (H / "labels2/pastes.jsonl").exists():
    a, b = load(H / "envs/pastes.jsonl"), load(H / "labels2/pastes.jsonl")
    assert [x["id"] for x in a] == [y["id"] for y in b]

    def code(m):
        return m if isinstance(m, str) else m.get("code")

    out = []
    for x, y in zip(a, b):
        mine = {code(m) for m in x["expect"].get("mismatches", [])}
        theirs = {code(m) for m in y.get("expect", {}).get("mismatches", [])} | set(
            y.get("expect", {}).get("accept", [])
        )
        accept = list(dict.fromkeys(list(x["expect"].get("accept", [])) + sorted(theirs - mine)))
        both = [v for v in x.get("user_values", []) if v in set(y.get("user_values", []))]
        out.append(dict(x, expect=dict(x["expect"], accept=accept), user_values_both=both))
    dump(out, H / "envs/pastes_settled.jsonl")
    dump([r for r in out if int(r["id"].rsplit("-", 1)[1]) % 2 == 0], H / "envs/pastes_heldout_settled.jsonl")
    dump([r for r in out if int(r["id"].rsplit("-", 1)[1]) % 2 == 1], H / "envs/pastes_dev_settled.jsonl")
    report["pastes"] = {"n": len(out), "heldout half": sum(int(r["id"].rsplit("-", 1)[1]) % 2 == 0 for r in out)}
print(json.dumps(report, indent=1, ensure_ascii=False))
