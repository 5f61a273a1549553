"""The app's Gradio import (bot/web/lean_gradio.py) skips the IDE and notebook chores and changes nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter (this one may have Gradio imported already): every component's event listeners
# with their docstrings, whether the hooks are in, and a small chat wired as the app wires its own.
PROBE = """
import json, sys
if sys.argv[1] == "notebook":
    import IPython  # as in a notebook: IPython is imported before Gradio
if sys.argv[1] in ("lean", "notebook"):
    from bot.web.lean_gradio import lean_gradio_import
    assert lean_gradio_import()
import gradio as gr
import gradio.ipython_ext
import gradio.utils
import gradio.component_meta as meta
from gradio.components.base import Component
from gradio.blocks import BlockContext

docs = {}
def walk(cls):
    for sub in cls.__subclasses__():
        docs[sub.__module__ + "." + sub.__qualname__] = {
            str(getattr(e, "event_name", e)): getattr(sub, str(getattr(e, "event_name", e))).__doc__
            for e in getattr(sub, "EVENTS", [])}
        walk(sub)
walk(Component); walk(BlockContext)
with gr.Blocks() as blocks:
    box = gr.Textbox()
    chat = gr.Chatbot()
    box.submit(lambda text: [{"role": "user", "content": text}], [box], [chat])
print(json.dumps({"docs": docs, "ipython": "IPython" in sys.modules, "in_notebook": gradio.utils.ipython_check(),
                  "magic": hasattr(gradio.ipython_ext, "register_cell_magic"), "stubs": meta.create_or_modify_pyi.__name__,
                  "events": len(blocks.fns)}, sort_keys=True))
"""


def _probe(mode: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_lean_import_skips_the_stubs_and_ipython_and_documents_every_listener_alike():
    lean, plain = _probe("lean"), _probe("plain")
    assert (lean["stubs"], plain["stubs"]) == ("_no_stub_rewrite", "create_or_modify_pyi")
    # Gradio imported IPython for its notebook extension and, building the Blocks, to ask whether it runs in Colab
    assert (lean["ipython"], plain["ipython"]) == (False, True)
    assert (lean["magic"], plain["magic"]) == (False, True) and lean["in_notebook"] is plain["in_notebook"] is False
    assert len(plain["docs"]) > 50 and lean["docs"] == plain["docs"]  # the same listeners, the same docstrings
    assert lean["events"] == plain["events"] == 1


def test_in_a_process_that_has_imported_ipython_gradio_gets_it_as_usual():
    notebook = _probe("notebook")
    assert notebook["ipython"] and notebook["magic"]  # the %%blocks magic can be registered
    assert notebook["stubs"] == "_no_stub_rewrite" and notebook["events"] == 1


def test_installing_after_gradio_is_imported_changes_nothing():
    import gradio  # noqa: F401  (imported by now in any case: too late to make it lean)

    from bot.web.lean_gradio import lean_gradio_import

    before = list(sys.meta_path)
    assert lean_gradio_import() is False
    assert sys.meta_path == before  # no hook left behind for a Gradio that is already in
