"""The chat's first paint, in the page's HTML: the welcome, its example questions and the text box, in the tab's
language, before Gradio's scripts have run.

Gradio draws nothing until its ~50 scripts have loaded and run and the load event has answered: on a busy machine
a person looked at a blank "加载中…" for seconds after the page had loaded (issue 35). :class:`FirstPaint` writes
that first screen as plain HTML (:mod:`bot.web.ui.shell` puts it in the page): a person reads the welcome and can
type, or pick an example, at once. What they typed (or the example they picked, or a message sent with Enter) goes to
Gradio's own text box the moment the chat is ready (``static/after_load.js``), which then takes the first paint's
place. A tab with a saved conversation (a reload) skips it: the conversation, not the welcome, is what comes back.

    >>> from bot.web.ui.welcome import Welcome
    >>> paint = FirstPaint(compact=True, titles={"zh": "助手", "en": "Assistant"}, welcome=Welcome(zh=("显存不足怎么办?",)),
    ...                    storage_key="gpu-bot:widget")
    >>> html = paint.html("zh").decode()
    >>> "你好！" in html, 'class="example">显存不足怎么办?</button>' in html, 'aria-label="问题或报错日志"' in html
    (True, True, True)
    >>> "<h1>&lt;b&gt;</h1>" in FirstPaint(False, {"zh": "<b>", "en": "<b>"}, Welcome(), "k").html("en").decode()
    True
"""

from __future__ import annotations

import html as escape
import json
from dataclasses import dataclass, field

from bot.web.ui.strings import UiLanguage, ui_text
from bot.web.ui.welcome import Welcome

# Drawn over Gradio's (still empty) app until static/after_load.js removes it; Gradio's page colours (--bg, --col,
# set by its page template from the theme) in light and dark.
STYLE = """<style>
#bot-first { position: fixed; inset: 0; z-index: 50; display: flex; flex-direction: column; gap: 8px;
  padding: 6px 6px 4px; background: var(--bg, #fff); color: var(--col, #1f2937);
  font-family: system-ui, -apple-system, "Segoe UI", "Noto Sans CJK SC", "Microsoft YaHei", sans-serif; }
@media (prefers-color-scheme: dark) { #bot-first { background: var(--bg-dark, #0b0f19); color: var(--col-dark, #f3f4f6); } }
#bot-first .bar { min-height: 26px; display: flex; align-items: center; font-size: 0.78rem; opacity: 0.85; }
#bot-first .bar h1 { font-size: 1.02rem; margin: 0; }
#bot-first .chat { flex: 1 1 auto; overflow: auto; border: 1px solid rgba(128, 128, 128, 0.3); border-radius: 8px;
  padding: 6px 12px; }
#bot-first h2 { font-size: 1.1rem; margin: 0.4rem 0; }
#bot-first p { margin: 0 0 0.5rem; font-size: 0.9rem; }
#bot-first .examples { display: flex; flex-direction: column; gap: 8px; padding: 0 14px; }
#bot-first .example { font: inherit; font-size: 0.9rem; text-align: left; min-height: 24px; color: inherit;
  border: 1px solid rgba(128, 128, 128, 0.35); border-radius: 10px; padding: 0.5rem 0.7rem; background: transparent;
  cursor: pointer; }
#bot-first .ask { display: flex; gap: 6px; align-items: center; border: 1px solid rgba(128, 128, 128, 0.3);
  border-radius: 8px; padding: 6px 8px; }
#bot-first textarea { flex: 1 1 auto; font: inherit; font-size: 0.9rem; resize: none; border: 0; outline: none;
  background: transparent; color: inherit; min-height: 24px; }
#bot-first .ask:focus-within { outline: 2px solid #6366f1; }
#bot-first .send { min-width: 32px; min-height: 32px; border-radius: 50%; border: 0; background: rgba(128, 128, 128, 0.2);
  color: inherit; cursor: pointer; }
</style>"""

# Keeps what the person does until static/after_load.js hands it to Gradio: window.__botFirst = {text, send}.
SCRIPT = """<script>(() => {
  const first = document.getElementById('bot-first');
  let saved = '';
  try { saved = sessionStorage.getItem(KEY) || ''; } catch (e) {}
  if (saved) { first.remove(); return; }  // a reload: the saved conversation comes back, not the welcome
  const box = first.querySelector('textarea');
  const keep = (send, text) => { window.__botFirst = {text: text, send: send}; if (send) box.disabled = true; };
  box.addEventListener('input', () => keep(false, box.value));
  box.addEventListener('keydown', e => { if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && box.value.trim()) {
    e.preventDefault(); keep(true, box.value); } });
  first.querySelector('.send').addEventListener('click', () => { if (box.value.trim()) keep(true, box.value); });
  first.querySelectorAll('.example').forEach(b => b.addEventListener('click', () => { box.value = b.textContent; keep(true, b.textContent); }));
})();</script>"""


@dataclass(frozen=True)
class FirstPaint:
    """What the first paint shows for one page: the widget's hint bar (``compact``) or the page's title."""

    compact: bool
    titles: dict[str, str]
    welcome: Welcome = field(default_factory=Welcome)
    storage_key: str = ""  # where the page keeps a conversation in the tab (static/save.js)

    def title(self) -> bytes:
        """The document's ``<title>`` until Gradio sets its own (Gradio's page has none in its HTML)."""
        zh, en = self.titles.get("zh", ""), self.titles.get("en", "")
        return f"<title>{_e(zh if zh == en else f'{zh} · {en}')}</title>".encode()

    def html(self, language: UiLanguage) -> bytes:
        text, questions = self.welcome.shown(language)
        heading, _, rest = text.partition("\n\n")
        bar = (
            f'<div class="bar">{_e(ui_text(language, "hint"))}</div>'
            if self.compact
            else f'<div class="bar"><h1>{_e(self.titles.get(language, ""))}</h1></div>'
        )
        chips = "".join(f'<button type="button" class="example">{_e(q)}</button>' for q in questions)
        examples = (
            f'<div class="examples" role="group" aria-label="{_e(ui_text(language, "a11y_examples"))}">{chips}</div>'
            if chips
            else ""
        )
        body = (
            f'<div id="bot-first" lang="{"zh-CN" if language == "zh" else "en"}">{bar}'
            f'<div class="chat"><h2>{_e(heading.lstrip("# "))}</h2><p>{_e(rest)}</p>{examples}</div>'
            f'<div class="ask"><textarea rows="1" aria-label="{_e(ui_text(language, "a11y_box"))}" '
            f'placeholder="{_e(ui_text(language, "placeholder"))}"></textarea>'
            f'<button type="button" class="send" aria-label="{_e(ui_text(language, "a11y_send"))}">➤</button></div>'
            "</div>"
        )
        return (STYLE + body + SCRIPT.replace("KEY", json.dumps(self.storage_key))).encode()


def _e(text: str) -> str:
    return escape.escape(text, quote=True)
