"""The chat as Gradio Blocks: the full page and the compact portal widget.

Formatting lives in :mod:`bot.reply` and conversation rules in :mod:`bot.conversation`;
this module only lays out components and routes their events.
"""

from __future__ import annotations

import traceback
from typing import Any

import gradio as gr

from bot import feedback
from bot.conversation import Conversation, Turn
from bot.reply import text as ui_text
from bot.reply import user_echo
from bot.settings import Settings
from bot.signature import looks_like_log
from bot.tokenize import detect_language
from bot.web import WebSettings, public_base, request_base


TITLE = "GPU 训练故障助手 · GPU Training Troubleshooter"
INTRO = (
    "用中文或英文提问，或直接粘贴报错日志；每个回答都标明出处。  \n"
    "Ask in Chinese or English, or paste an error log; every answer cites its source."
)
PLACEHOLDER = (
    "### 你好！Hi!\n\n"
    "描述你遇到的问题，或粘贴完整的报错日志。  \n"
    "Describe your problem or paste the full error log.\n\n"
    "试试下面的例子 · Try an example:"
)
INPUT_HINT = "输入问题或粘贴报错日志… · Ask a question or paste an error log…"
SAMPLE_LOG = (
    "I0221 18:48:34.436648 29562 Util.cpp:155] commandline: python train.py --use_gpu=True\n"
    "EnforceNotMet: Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared object file: "
    "No such file or directory ) at [/paddle/paddle/fluid/platform/dynload/dynamic_loader.cc:157]\n"
    "PaddlePaddle Call Stacks:\n"
    "0       0x7f19fce44e96p paddle::platform::EnforceNotMet::EnforceNotMet(char const*, int) + 486\n"
    "1       0x7f19fe6ea71ep paddle::platform::dynload::GetNCCLDsoHandle() + 1822"
)
EXAMPLES = [
    {"text": "训练时报错显存不足怎么办？", "display_text": "训练时报错显存不足怎么办？"},
    {"text": "Loss becomes NaN after a few steps", "display_text": "Loss becomes NaN after a few steps"},
    {"text": "How do I stop TensorFlow from grabbing all GPU memory?",
     "display_text": "How do I stop TensorFlow from grabbing all GPU memory?"},
    {"text": SAMPLE_LOG, "display_text": "粘贴日志 · Paste a log: EnforceNotMet … libnccl.so"},
]

CSS = """
.bot-header h1 { font-size: 1.35rem; margin: 0.2rem 0; }
.bot-header p { margin: 0; opacity: 0.8; }
.bot-chat .message-wrap details { margin: 0.35rem 0; border-left: 3px solid var(--border-color-primary); padding-left: 0.6rem; }
.bot-chat .message-wrap summary { cursor: pointer; font-weight: 600; }
.bot-chat .message-wrap h3 { margin-top: 0.2rem; }
.bot-toolbar { gap: 0.5rem; }
#chat .prose, #chat .message-content { font-size: 15px; line-height: 1.6; }
#chat .prose :not(pre) > code { font-size: 0.86em; }
#new-chat { white-space: nowrap; }
#chat button.example { border: 1px solid var(--border-color-primary); border-radius: 10px; padding: 0.55rem 0.75rem;
  background: var(--background-fill-secondary); cursor: pointer; text-align: left; }
#chat button.example:hover { border-color: var(--color-accent); background: var(--background-fill-primary); }
footer { display: none !important; }
"""
# System fonts only: nothing is fetched from font CDNs (offline installs, strict portal CSPs).
THEME = gr.themes.Soft(
    font=["system-ui", "-apple-system", "Segoe UI", "Noto Sans CJK SC", "Microsoft YaHei", "sans-serif"],
    font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Noto Sans Mono CJK SC", "monospace"],
)
# After a message is added: bring its start into view (inside the chat's own scroll area).
# Only the chat's own scroll area moves, never the page around it (a portal embedding the widget).
SCROLL_JS = """() => { setTimeout(() => {
  const all = document.querySelectorAll('#chat [data-testid=ROLE]');
  if (!all.length) return;
  const message = all[all.length - 1];
  let box = message.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight && /(auto|scroll)/.test(getComputedStyle(box).overflowY))) {
    box = box.parentElement;
  }
  if (!box) return;
  const offset = message.getBoundingClientRect().top - box.getBoundingClientRect().top;
  box.scrollTo({top: box.scrollTop + offset - 8, behavior: 'smooth'});
}, 150); }"""
WIDGET_CSS = CSS + """
.gradio-container { padding: 0 !important; max-width: 100% !important; }
.gradio-container .main.fillable { padding: 6px 6px 4px !important; }
#chat .prose, #chat .message-content { font-size: 13.5px; line-height: 1.55; }
#chat .message-wrap h3 { font-size: 14.5px; }
.bot-widget-bar { align-items: center; gap: 0.4rem; flex-wrap: nowrap; }
.bot-widget-hint, .bot-widget-hint p { font-size: 0.8rem; opacity: 0.75; margin: 0; line-height: 1.25; }
"""




# ---------------------------------------------------------------- chat UI

def _new_state() -> dict:
    return {"turns": [], "votes": {}, "options": {}, "pending": None}


def _state(state: Any) -> dict:
    return state if isinstance(state, dict) and "turns" in state else _new_state()


def make_ui(engine: Any, settings: Settings, web: WebSettings, *, compact: bool = False) -> gr.Blocks:
    """The chat as Gradio Blocks; ``compact`` is the portal widget (no header, fills its frame)."""

    def conversation(state: dict, request: gr.Request | None) -> Conversation:
        base = request_base(request, web) if request is not None else public_base({}, "http", web)
        return Conversation(engine, base_url=base, turns=list(state["turns"]))

    def add_user(message: str | None, history: list | None, state: Any):
        state = _state(state)
        history = list(history or [])
        message = message if isinstance(message, str) else ""
        if not message.strip():
            last: list[Turn] = state["turns"]
            if last:
                content = ui_text(last[-1].language, "empty")
            else:
                content = ui_text("zh", "empty") + "\n\n" + ui_text("en", "empty")
            history.append({"role": "assistant", "content": content})
            state["pending"] = None
            return "", history, state
        history.append({"role": "user", "content": user_echo(message, looks_like_log(message[:20_000]))})
        state["pending"] = message
        return "", history, state

    def answer(history: list | None, state: Any, request: gr.Request):
        state = _state(state)
        history = list(history or [])
        message = state.get("pending")
        state["pending"] = None
        if message is None:
            return history, state
        talk = conversation(state, request)
        try:
            reply = talk.respond(message)
        except Exception:  # never leave the user with a spinner or a bare "Error"
            traceback.print_exc()
            language = detect_language(message[:20_000]) if isinstance(message, str) else "en"
            history.append({"role": "assistant", "content": ui_text(language, "error")})
            return history, state
        state["turns"] = talk.turns
        feedback.log_events(settings.feedback_log, reply.events)
        item: dict = {"role": "assistant", "content": reply.markdown}
        if reply.options:
            item["options"] = [{"value": o["value"], "label": o["label"]} for o in reply.options]
        history.append(item)
        turn = talk.turns[-1] if talk.turns and reply.kind != "empty" else None
        state["votes"][str(len(history) - 1)] = {
            "question": turn.question if turn else message[:2_000],
            "language": reply.language,
            "answered": reply.answered,
            "cited": [s.hit.section.key for s in reply.shown],
            "signature": reply.signature,
        }
        state["options"] = {o["value"]: o["label"] for o in reply.options}
        return history, state

    def pick_example(history: list | None, state: Any, evt: gr.SelectData):
        value = evt.value if isinstance(evt.value, dict) else {"text": str(evt.value)}
        return add_user(str(value.get("text", "")), history, state)

    def pick_option(history: list | None, state: Any, evt: gr.SelectData):
        state = _state(state)
        history = list(history or [])
        value = evt.value
        key = value.get("value") if isinstance(value, dict) else str(value)
        label = state["options"].get(key) or (value.get("label") if isinstance(value, dict) else None) or key
        history.append({"role": "user", "content": user_echo(str(label))})
        state["pending"] = key
        return history, state

    def vote(state: Any, evt: gr.LikeData):
        state = _state(state)
        info = state["votes"].get(str(evt.index if not isinstance(evt.index, (list, tuple)) else evt.index[0]))
        if info is None:
            return
        liked = evt.liked
        if liked is True or liked == "Like":
            value = "up"
        elif liked is False or liked == "Dislike":
            value = "down"
        else:
            return  # a vote withdrawn: nothing to record
        feedback.log_event(
            settings.feedback_log, "vote", info["question"], language=info["language"], answered=info["answered"],
            cited=info["cited"], vote=value, signature=info.get("signature", ""),
        )
        gr.Info(ui_text(info["language"], "vote_thanks"), duration=2)

    def new_chat():
        return "", [], _new_state()

    with gr.Blocks(title=TITLE, fill_height=True, analytics_enabled=False) as blocks:
        state = gr.State(_new_state())
        if compact:  # the portal's panel has its own title: one slim bar with a hint and the new-chat button
            with gr.Row(elem_classes=["bot-widget-bar"], equal_height=True):
                gr.Markdown("中文或英文提问，或粘贴报错日志 · Ask in Chinese or English, or paste a log",
                            elem_classes=["bot-widget-hint"])
                new = gr.Button("新对话 · New chat", elem_id="new-chat", scale=0, min_width=120, size="sm",
                                variant="secondary")
        else:
            gr.Markdown(f"# {TITLE}\n{INTRO}", elem_classes=["bot-header"])
        chatbot = gr.Chatbot(
            label="对话 · Chat",
            show_label=False,
            elem_id="chat",
            elem_classes=["bot-chat"],
            placeholder=PLACEHOLDER,
            examples=EXAMPLES,
            scale=1,
            # A fixed share of the window: the chat scrolls inside and the input box stays in view.
            height="calc(100vh - 142px)" if compact else "calc(100vh - 190px)",
            min_height=240 if compact else 360,
            sanitize_html=True,
            allow_tags=False,
            render_markdown=True,
            feedback_options=("Like", "Dislike"),
            buttons=["copy"],
            autoscroll=False,  # SCROLL_JS shows the start of each answer (its fix), not its end
            layout="bubble",
            latex_delimiters=[],
        )
        with gr.Row(elem_classes=["bot-toolbar"], equal_height=True):
            box = gr.Textbox(
                placeholder=INPUT_HINT,
                show_label=False,
                lines=1,
                max_lines=4 if compact else 8,
                submit_btn=True if compact else "发送 · Send",
                elem_id="question",
                scale=8,
                autofocus=not compact,
            )
            if not compact:
                new = gr.Button("新对话 · New chat", elem_id="new-chat", scale=0, min_width=170, size="md",
                                variant="secondary")

        box.submit(add_user, [box, chatbot, state], [box, chatbot, state], queue=False, show_progress="hidden").then(
            None, js=SCROLL_JS.replace("ROLE", "user")
        ).then(answer, [chatbot, state], [chatbot, state], show_progress="minimal").then(
            None, js=SCROLL_JS.replace("ROLE", "bot")
        )
        chatbot.example_select(pick_example, [chatbot, state], [box, chatbot, state], queue=False).then(
            answer, [chatbot, state], [chatbot, state], show_progress="minimal"
        ).then(None, js=SCROLL_JS.replace("ROLE", "bot"))
        chatbot.option_select(pick_option, [chatbot, state], [chatbot, state], queue=False).then(
            None, js=SCROLL_JS.replace("ROLE", "user")
        ).then(answer, [chatbot, state], [chatbot, state], show_progress="minimal").then(
            None, js=SCROLL_JS.replace("ROLE", "bot")
        )
        chatbot.like(vote, [state], None, queue=False)
        chatbot.clear(lambda: _new_state(), None, [state], queue=False)
        new.click(new_chat, None, [box, chatbot, state], queue=False)
    return blocks


