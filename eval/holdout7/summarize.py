"""Held-out figures from run_heldout.sh outputs: python summarize.py OUT_BASE OUT_NEW"""

import json
import sys
from pathlib import Path


def share(xs, p):
    return round(sum(map(p, xs)) / len(xs), 3) if xs else None


def singles(path, labels):
    d = json.load(open(path))
    cs = d["cases"]
    exp = [bool(json.loads(line)["expect"]) for line in open(labels) if line.strip()]
    assert len(exp) == len(cs), (len(exp), len(cs))
    ans = [c for c, e in zip(cs, exp) if e]
    near = [c for c, e in zip(cs, exp) if not e]
    f = share
    out = {
        "n_ans": len(ans),
        "n_near": len(near),
        "hit@1": f(ans, lambda c: c["rank"] == 1),
        "hit@3": f(ans, lambda c: c["rank"] is not None and 1 <= c["rank"] <= 3),
        "ans_conf_right": f(ans, lambda c: c["tier"] == "answer" and c["rank"] == 1),
        "conf_wrong": f(ans, lambda c: c["tier"] == "answer" and c["rank"] != 1),
        "near_conf": f(near, lambda c: c["tier"] == "answer"),
        "none_on_ans": f(ans, lambda c: c["tier"] == "none"),
    }
    for name, b in (d.get("baselines") or {}).items():
        out[name + "_hit@1"] = round(b.get("hit@1") or 0, 3)
    return out


def turns(path, part):
    d = json.load(open(path))
    ts = d["conversations"]["turns"]
    ts = [t for t in ts if part(t["conversation"])]
    first = [t for t in ts if t["turn"] == 0]
    fol = [t for t in ts if t["turn"] > 0]

    def figs(xs):
        a = [t for t in xs if t["expect"]]
        e = [t for t in xs if not t["expect"]]
        r = share
        return {
            "n": len(xs),
            "n_ans": len(a),
            "hit@1": r(a, lambda t: t["hit1"]),
            "hit@3": r(a, lambda t: t["hit3"]),
            "ans_conf_right": r(a, lambda t: t["tier"] == "answer" and t["hit1"]),
            "conf_wrong": r(xs, lambda t: t["tier"] == "answer" and not t["hit1"]),
            "empty_not_conf": r(e, lambda t: t["tier"] != "answer"),
            "n_empty": len(e),
        }

    # said retries leading with ANY earlier lead of the conversation
    led = {}
    rep = 0
    said = 0
    for t in sorted(ts, key=lambda t: (t["conversation"], t["turn"])):
        earlier = led.setdefault(t["conversation"], [])
        if t["turn"] > 0 and t.get("said_retry"):
            said += 1
            rep += bool(t["top"]) and (t["top"]["source"], t["top"]["section"]) in earlier
        top = t["top"] and (t["top"]["source"], t["top"]["section"])
        if t["turn"] > 0 and t.get("said_retry"):
            pass
        if top:
            earlier.append(top)
    return {"first": figs(first), "follow": figs(fol), "said_retries": said, "retry_leads_earlier": rep}


if __name__ == "__main__":
    for out in sys.argv[1:]:
        print("==", out)
        print("h7 singles", singles(f"{out}/h7_single.json", str(Path(__file__).with_name("single.jsonl"))))
        print("h7 real conv", turns(f"{out}/h7_conv.json", lambda i: i < 15))
        print("h7 written conv", turns(f"{out}/h7_conv.json", lambda i: i >= 15))
        for kb in ("zh", "en"):
            print("kb2", kb, singles(f"{out}/kb_{kb}.json", f"{out}/kb_{kb}/q.jsonl"))
