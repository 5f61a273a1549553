"""The answer: what the engine decided, written as the reply a person reads.

Holds a chat's turns (``conversation``), one turn for every edge (``turn``), reply formatting
(``reply``: the builders; ``blocks``: what a reply is made of; ``composition``: the reply and :func:`compose`;
``render``: blocks -> markdown; ``sections_text`` / ``steps``: one section's title, link and fix; ``contact``,
``scope``), the reasons behind a tier in words (``reasons``), the texts in both languages
(``texts``), markdown escaping and sanitising (``safe_markdown``), the cited source lines view
(``source_view``, template in ``templates/``) and conversation evaluation (``evaluate_turns``).

May import: ``bot.engine``, ``bot.kb``, ``bot.records``, ``bot.settings``; never ``store`` or ``web``.
"""
