"""Check a newly labelled batch before it is committed: every line is JSON, every expected section matches a real
heading of the seeds (the matching rule of eval/README), no URL is used twice in the batch or already used by a
committed evaluation file. Usage: ``python scripts/labelling/check.py NEW.jsonl [NEW_CONVERSATIONS.jsonl]``."""

import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEEDS = os.path.join(ROOT, "seeds")


def norm(s: str) -> str:
    return re.sub(r"[\s`*#\[\]]", "", s).lower()


def headings() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in glob.glob(os.path.join(SEEDS, "*.txt")):
        titles, code = [], False
        for line in open(path, encoding="utf-8"):
            if line.lstrip().startswith("```"):
                code = not code
                continue
            if not code and re.match(r"#+\s", line):
                title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line.lstrip("#").strip())
                if title:
                    titles.append(title)
        found[os.path.basename(path)] = titles
    return found


def used_urls(new: list[str]) -> set[str]:
    """URLs of every committed evaluation file other than the ones being checked."""
    urls = set()
    for path in glob.glob(os.path.join(ROOT, "eval", "**", "*.jsonl"), recursive=True):
        if os.path.abspath(path) in new or os.sep + "labels2" + os.sep in path:
            continue
        for line in open(path, encoding="utf-8"):
            url = json.loads(line).get("url", "")
            if url:
                urls.add(url.split("#")[0])
    return urls


def main(files: list[str]) -> int:
    heads = headings()
    used = used_urls([os.path.abspath(f) for f in files])
    bad, seen = 0, set()
    for name in files:
        for n, line in enumerate(open(name, encoding="utf-8"), 1):
            record = json.loads(line)
            url = record["url"].split("#")[0]
            if url in used:
                print(name, n, "URL ALREADY USED", url)
                bad += 1
            if url and url in seen:  # written cases all have "url": ""
                print(name, n, "DUPLICATE URL", url)
                bad += 1
            seen.add(url)
            expects = [record["expect"]] if "turns" not in record else [t["expect"] for t in record["turns"]]
            for expect in expects:
                for item in expect:
                    if not any(norm(item["section"]) in norm(h) for h in heads.get(item["source"], [])):
                        print(name, n, "NO HEADING", item)
                        bad += 1
    print("problems:", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
