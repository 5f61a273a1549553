"""The widget's start in the browser: how long after the page's ``load`` event a person can use it.

``python -m bench.widget_load [--reps N] [--size 390x844] [--json]``

On a running app built from the repository's seeds (``hash`` embedder, as the browser tests use it; the app is
started once and warmed by one visit), each repetition opens ``/widget/`` in a fresh headless Chromium context
(an empty cache: a first visit) and measures, from navigation start (the browser's Performance timeline):

- ``load_s``: the document's ``load`` event;
- ``first_usable_s``: the welcome's example chips and the text box shown, in the tab's language: the first paint's
  (:mod:`bot.web.ui.first_paint`, in the page's HTML; what is typed or picked there goes to the chat once it is
  ready) or, without it, Gradio's;
- ``usable_s``: Gradio's chat ready: its chips shown and its text box enabled, in the tab's language
  (``<html data-chat-loaded>``, set by ``bot/web/ui/static/after_load.js`` after the load event's reply);
- ``*_after_load_s``: each minus ``load_s`` (negative: before the load event).

Two variants alternate within one run, on one server: "shell", the page as served (:mod:`bot.web.ui.shell`: the
first paint), and "gradio", the same page with it taken out on the way to the browser
(Gradio's page as it was); the ratio of their medians compares them at the same machine load.

The issue-35 target is ``first_usable_after_load_s <= 1.5`` on this machine (:data:`TARGET_S`); a figure, never a test
assertion (the machine's load average is printed beside it: figures from a busy machine compare only within a run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

TARGET_S = 1.5
USABLE = """() => new Promise(done => {
  const ready = () => document.documentElement.dataset.chatLoaded && document.querySelector('#chat .examples button')
    && !document.querySelector('#question textarea').disabled;
  const finish = () => done(performance.now() / 1000);
  if (ready()) return finish();
  new MutationObserver((_, watch) => { if (ready()) { watch.disconnect(); finish(); } })
    .observe(document.documentElement, {subtree: true, childList: true, attributes: true});
})"""
LOAD = "() => performance.getEntriesByType('navigation')[0].loadEventStart / 1000"


# What bot.web.ui.shell adds to Gradio's page: the first paint (bot.web.ui.first_paint).
ADDED = re.compile(r"<style>\n#bot-first .*?</script>", re.DOTALL)
VARIANTS = ("gradio", "shell")  # the page as Gradio writes it; with what bot.web.ui.shell adds
# The first paint's welcome chips and text box drawn (or, without it, Gradio's): a person can read, type and pick.
FIRST_USABLE = """() => new Promise(done => {
  const shown = s => { const e = document.querySelector(s); return e && e.checkVisibility(); };
  const ready = () => (shown('#bot-first .example') && shown('#bot-first textarea'))
    || (document.documentElement.dataset.chatLoaded && shown('#chat .examples button'));
  const finish = () => done(performance.now() / 1000);
  if (ready()) return finish();
  new MutationObserver((_, watch) => { if (ready()) { watch.disconnect(); finish(); } })
    .observe(document.documentElement, {subtree: true, childList: true, attributes: true});
})"""


def measure(url: str, reps: int, width: int, height: int) -> dict[str, list[dict]]:
    """``reps`` first visits per variant, alternating (one run: the machine's load is the same for both). The
    "gradio" variant is the same server's page with the first paint taken out on the way to the browser."""
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fixtures.browser import launch

    out: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    with sync_playwright() as playwright:
        browser = launch(playwright)
        for n in range(reps + 1):  # the first visit warms the server (its first Gradio config, its caches)
            for variant in VARIANTS:
                context = browser.new_context(
                    viewport={"width": width, "height": height},
                    locale="zh-CN",
                    extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9"},
                )
                page = context.new_page()

                # Both variants pass the same interception. (Playwright passes the request second: strip is keyword-only.)
                def shell(route, *, strip=variant == "gradio"):
                    response = route.fetch()
                    body = response.text()
                    route.fulfill(response=response, body=ADDED.sub("", body) if strip else body)

                page.route(url + "/widget/", shell)
                page.goto(url + "/widget/", wait_until="commit")
                first = page.evaluate(FIRST_USABLE)
                page.wait_for_load_state("load")
                usable = page.evaluate(USABLE)
                load = page.evaluate(LOAD)
                context.close()
                if n:
                    out[variant].append(
                        {
                            "load_s": load,
                            "first_usable_s": first,
                            "first_usable_after_load_s": first - load,
                            "usable_s": usable,
                            "usable_after_load_s": usable - load,
                        }
                    )
        browser.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--size", default="390x844")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fixtures.browser import seeds_app

    with tempfile.TemporaryDirectory() as root, seeds_app(Path(root)) as url:
        runs = measure(url, args.reps, width, height)
    load_average = round(os.getloadavg()[0], 2)
    summary = {
        variant: {key: round(statistics.median(r[key] for r in done), 3) for key in done[0]}
        for variant, done in runs.items()
    }
    ratio = {
        key: round(summary["shell"][key] / summary["gradio"][key], 2) if summary["gradio"][key] > 0 else None
        for key in summary["gradio"]
    }
    meta = dict(reps=args.reps, size=args.size, target_s=TARGET_S, load_average=load_average)
    if args.json:
        print(json.dumps({"median": summary, "ratio_shell_to_gradio": ratio, **meta, "runs": runs}))
    else:
        for variant, median in summary.items():
            print(
                f"widget ({variant}) at {args.size}, median of {args.reps} first visits: load {median['load_s']:.2f} s, "
                f"welcome and box usable {median['first_usable_s']:.2f} s ({median['first_usable_after_load_s']:+.2f} s "
                f"after load), Gradio's chat ready {median['usable_s']:.2f} s ({median['usable_after_load_s']:+.2f} s)"
            )
        print(
            f"shell / gradio: usable x{ratio['first_usable_s']}, Gradio's chat ready x{ratio['usable_s']} "
            f"(target <= {TARGET_S} s after load; load average {load_average})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
