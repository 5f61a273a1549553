"""The answer: what the engine decided, written as the reply a person reads.

Holds a chat's turns (``conversation``), one turn for every edge (``turn``), reply formatting
(``reply``: the builders; ``blocks``: what a reply is made of; ``composition``: the reply and :func:`compose`;
``render``: blocks -> markdown; ``sections_text`` / ``steps``: one section's title, link and fix; ``contact``,
``scope``), the reasons behind a tier in words (``reasons``), the texts in both languages
(``texts``), markdown escaping and sanitising (``safe_markdown``), the cited source lines view
(``source_view``, template in ``templates/``). Conversation evaluation and acts training are in :mod:`bot.fit`.

May import: ``bot.engine``, ``bot.diagnose``, ``bot.kb``, ``bot.records``, ``bot.settings``; never ``store``, ``fit`` or
``web``.
"""
