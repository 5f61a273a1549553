"""Import Gradio without the chores a server never uses: half the CPU of ``import gradio``.

Importing Gradio is most of a cold start (the chat page cannot render before it). Three things it does
serve an IDE or a notebook, not a server, and took 1.8 s of the 3.3 s of CPU of its import here (gradio 6.31):

- for each of its ~80 component classes it re-derives the ``.pyi`` type stub from the class's source
  (an ``ast`` parse and a source-segment search) and rewrites the stub in site-packages when it differs
  (1.3 s; Gradio ships the stubs written);
- it renders each event listener's docstring as a Jinja2 template to put the component's name in
  (216 templates compiled, 0.2 s): :func:`_listener_doc` substitutes the name directly and leaves any other
  template to Jinja, so ``help()`` reads the same;
- it imports IPython (with jedi, prompt_toolkit …: 0.3 s): its notebook extension, to register the ``%%blocks``
  magic, and its checks for a notebook or Colab, to ask IPython for the running shell. A process that has not
  imported IPython runs in no IPython shell: then the extension is shown none (it already does without) and
  the checks answer False at once. Where IPython is imported (a notebook), all of this runs as Gradio wrote it.

:func:`lean_gradio_import` installs an import hook that does this for the next ``import gradio``; Gradio's
modules load from its own files, and a Gradio that moved these functions is imported unchanged.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable
from typing import Any

COMPONENT_META = "gradio.component_meta"  # defines the component classes' metaclass
NOTEBOOK_EXTENSION = "gradio.ipython_ext"  # registers the %%blocks magic, importing IPython for it
UTILS = "gradio.utils"  # colab_check and ipython_check: ask IPython for the running shell
SHELL_CHECKS = ("colab_check", "ipython_check")
COMPONENT_SLOT = "{{ component }}"


class _LeanGradioImport(importlib.abc.MetaPathFinder):
    """Finds Gradio's three modules above with a loader that adjusts them; any other name: not ours."""

    def __init__(self) -> None:
        self._no_ipython_for: int | None = None  # the thread running the notebook extension without IPython

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname == "IPython" and self._no_ipython_for == threading.get_ident():
            raise ModuleNotFoundError(
                "IPython is not imported for Gradio's notebook extension outside a notebook (bot.web.lean_gradio)",
                name=fullname,
            )
        if fullname not in (COMPONENT_META, NOTEBOOK_EXTENSION, UTILS):
            return None  # not ours: the next finder looks
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        run_module = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            if fullname == NOTEBOOK_EXTENSION:
                self._run_without_ipython(run_module, module)
            else:
                run_module(module)
                ADJUST[fullname](module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's own loader object
        return spec

    def _run_without_ipython(self, run_module: Callable, module: Any) -> None:
        if "IPython" in sys.modules:  # a notebook: the extension is wanted, as Gradio wrote it
            run_module(module)
            return
        self._no_ipython_for = threading.get_ident()
        try:
            run_module(module)
        finally:
            self._no_ipython_for = None


# Another Gradio may have moved these functions: then nothing is changed and the import does all it did.


def _adjust_component_meta(module: Any) -> None:
    if callable(getattr(module, "create_or_modify_pyi", None)):
        module.create_or_modify_pyi = _no_stub_rewrite
    listener = getattr(sys.modules.get("gradio.events"), "EventListener", None)
    if callable(getattr(listener, "set_doc", None)):
        listener.set_doc = _listener_doc(listener.set_doc)


def _adjust_utils(module: Any) -> None:
    for name in SHELL_CHECKS:
        if callable(getattr(module, name, None)):
            setattr(module, name, _outside_ipython_false(getattr(module, name)))


def _no_stub_rewrite(component_class: type, class_name: str, events: list) -> None:
    """What Gradio calls per component class instead of rewriting its type stub: nothing."""


def _outside_ipython_false(check: Callable[[], bool], modules: dict = sys.modules) -> Callable[[], bool]:
    """Gradio's "does this run in a notebook (or Colab)?" answering False, without importing IPython, when no
    IPython is imported (in ``modules``): no IPython shell can be running then.

    >>> asked = []
    >>> def check(): asked.append("IPython imported and asked"); return True
    >>> _outside_ipython_false(check, modules={})(), asked
    (False, [])
    >>> _outside_ipython_false(check, modules={"IPython": "imported"})(), asked
    (True, ['IPython imported and asked'])
    """

    @functools.wraps(check)
    def outside_ipython_false() -> bool:
        return "IPython" in modules and check()

    return outside_ipython_false


def _listener_doc(render_with_jinja: Callable) -> Callable:
    """``EventListener.set_doc`` that fills in the component's name without compiling a Jinja2 template.

    >>> from types import SimpleNamespace
    >>> def jinja(self, component): self.listener.__doc__ = "(jinja)"
    >>> event = SimpleNamespace(listener=SimpleNamespace(__doc__="Triggered when the {{ component }} is clicked."))
    >>> _listener_doc(jinja)(event, component="Button"); event.listener.__doc__
    'Triggered when the Button is clicked.'
    >>> event.listener.__doc__ = "{% if x %}...{% endif %} the {{ component }}"  # more than the name: Jinja's job
    >>> _listener_doc(jinja)(event, component="Button"); event.listener.__doc__
    '(jinja)'
    """

    def set_doc(self: Any, component: str) -> None:
        doc = self.listener.__doc__
        if not doc:
            return
        rest = doc.replace(COMPONENT_SLOT, "")
        # Jinja would change more than the name: other tags, or the one trailing newline it drops
        if "{{" in rest or "{%" in rest or "{#" in rest or doc.endswith("\n"):
            render_with_jinja(self, component)
            return
        self.listener.__doc__ = doc.replace(COMPONENT_SLOT, component)

    return set_doc


ADJUST = {COMPONENT_META: _adjust_component_meta, UTILS: _adjust_utils}  # what each module gets once it has run


def lean_gradio_import() -> bool:
    """Make the coming ``import gradio`` skip the chores above; False when Gradio is imported already.

    Installing twice installs once.
    """
    if COMPONENT_META in sys.modules:
        return False
    if not any(isinstance(finder, _LeanGradioImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _LeanGradioImport())
    return True
