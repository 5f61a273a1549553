"""How often a tentative reply shows the right section's fix in the chat (issue 26).

Over the real first questions in the given eval files (``eval/real_*.jsonl``): for every one the engine
answers with the tier *tentative* and whose first section is an expected one, is that section's fix (its
body as :func:`bot.answer.reply.section_body` writes it) in the reply, not only its heading?

    python scripts/tentative_fix_share.py eval/real_more5_*.jsonl eval/real_*.jsonl
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from bot.answer.reply import section_body
from bot.answer.turn import take_turn
from bot.engine.evaluate import hit_matches, read_cases
from bot.engine.retrieve import Engine
from bot.settings import Settings


def _plain(markdown: str) -> str:
    return re.sub(r"[\s*`_#>|\\-]+", "", markdown)


def fix_shown(reply_markdown: str, hit, engine) -> bool:
    """The first 40 characters of the section's rendered fix (without markup) occur in the reply."""
    body, _ = section_body(hit, engine.meta(hit.section.key), "zh" if _is_zh(reply_markdown) else "en")
    body = re.sub(r"<details>.*?</details>", "", body, flags=re.S)
    body = re.sub(r"^_.*?_$", "", body, flags=re.M)  # "(a long section: lines …)" notes
    want = _plain(body)[:40]
    return bool(want) and want in _plain(reply_markdown)


def _is_zh(markdown: str) -> bool:
    return bool(re.search(r"[\u4e00-\u9fff]", markdown[:200]))


def main(paths: list[str]) -> int:
    engine = Engine.open(Settings())
    seen: set[str] = set()
    total = shown = 0
    misses = []
    for path in paths:
        for case in read_cases(Path(path)):
            if not case.expect or case.query in seen:
                continue
            seen.add(case.query)
            turned, _ = take_turn(engine, case.query)
            reply = turned.reply
            if reply.tier != "tentative" or not reply.shown:
                continue
            first = reply.shown[0].hit
            if not any(hit_matches(first.citation(), e) for e in case.expect):
                continue
            total += 1
            if fix_shown(reply.markdown, first, engine):
                shown += 1
            else:
                misses.append({"file": path, "query": case.query[:80], "section": first.section.heading[:60]})
    print(
        json.dumps(
            {
                "tentative_right_first": total,
                "fix_in_chat": shown,
                "share": round(shown / total, 3) if total else None,
                "misses": misses,
            },
            ensure_ascii=False,
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
