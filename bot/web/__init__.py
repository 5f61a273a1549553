"""The web edges: everything that speaks HTTP or draws a page.

Holds the Gradio chat and widget (``ui``), the JSON API request models (``api_models``), the
OpenAI-compatible API (``openai_api``), the operator page and report (the ``admin`` package, with its
templates), the one security middleware (``security``) with the credentials it checks (``credentials``), the
routes' own check (``door``), signed source links and states (``signing``) and JSON body limits
(``json_limits``), HTTP helpers (``http``; the web settings are ``bot.settings.WebSettings``), the hand-off of a
transcript to a person (``handoff``) and the start-up that listens at once (``deferred``). ``app.py`` wires
them together.

May import every other stage but ``fit`` (nothing that serves imports fitting code); nothing in ``bot`` imports ``web``
except ``bot.cli``.
"""
