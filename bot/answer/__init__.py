"""The answer: what the engine decided, written as the reply a person reads.

Holds the turn of a conversation (``conversation``), reply formatting (``reply``), the
texts in both languages (``texts``), markdown escaping and sanitising (``safe_markdown``)
and the cited source lines view (``source_view``, template in ``templates/``).

May import: ``bot.engine``, ``bot.kb``, ``bot.records``, ``bot.settings``; never ``store`` or ``web``.
"""
