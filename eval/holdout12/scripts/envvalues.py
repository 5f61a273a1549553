"""Run inside a checkout: python eval/holdout11/scripts/envvalues.py FILE.jsonl -> JSON figures: right mismatch, user's values
named (every user_value quoted in the words shown for the environment), false claims. Works on session-start
(bot.engine.*) and on the reshaped layout (bot.diagnose.*)."""

import json
import sys

try:
    from bot.diagnose.compat import check, table_for
    from bot.diagnose.environment import read_environment
except ImportError:
    from bot.engine.compat import check, table_for
    from bot.engine.environment import read_environment
from bot.answer.environment_text import describe

rows = [json.loads(ln) for ln in open(sys.argv[1]) if ln.strip()]
table = table_for(None)


def code(m):
    return m if isinstance(m, str) else m.get("code")


out = {
    "n": len(rows),
    "mismatch_cases": 0,
    "right": 0,
    "right_all_values": 0,
    "right_half_values": 0,
    "none_cases": 0,
    "false_claims": 0,
    "cases": [],
}
for r in rows:
    paste = r["paste"]
    lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in paste) else "en"
    env = read_environment(paste)
    diag = check(env, table)
    words = describe(diag, lang) or ""
    claimed = {m.code for m in diag.mismatches}
    exp = {code(m) for m in r["expect"].get("mismatches", [])}
    acc = set(r["expect"].get("accept", []))
    vals = r.get("user_values_both", r.get("user_values", []))
    named = [v for v in vals if v.lower() in words.lower()]
    case = {"id": r["id"], "expected": sorted(exp), "claimed": sorted(claimed), "values": vals, "named": named}
    if exp:
        out["mismatch_cases"] += 1
        ok = bool(claimed & (exp | acc)) and claimed <= (exp | acc)
        case["right"] = ok
        if ok:
            out["right"] += 1
            if vals and len(named) == len(vals):
                out["right_all_values"] += 1
            if vals and len(named) * 2 >= len(vals):
                out["right_half_values"] += 1
    else:
        out["none_cases"] += 1
        if claimed - acc:
            out["false_claims"] += 1
            case["false"] = True
    out["cases"].append(case)
json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
