"""The web edges: everything that speaks HTTP or draws a page.

Holds the Gradio chat and widget (``ui``), the JSON API request models (``api_models``), the
OpenAI-compatible API (``openai_api``), the operator page and report (the ``admin`` package, with its
templates), the one security middleware and token check, with signed source links (``security``), HTTP
helpers and web settings (``http``), every setting read once (``config``: ``AppConfig``), the hand-off of a
transcript to a person (``handoff``) and the start-up that listens at once (``deferred``). ``app.py`` wires
them together.

May import every other stage; nothing in ``bot`` imports ``web`` except ``bot.cli``.
"""
