"""The engine: a question (and its conversation) in, ranked sections and a tier out.

Holds a message read once (``message``), what never changes about a section (``facts``), what the
answer layer needs of an engine (``answerer``), the subject lexicon (``subjects``), the conversation's case and how a message moves it
(``case``), ranking and confidence (``retrieve``), the calibration record and the command that
fits it (``calibration``, ``calibrate``), evaluation (``evaluate``), message intents such as
thanks or "talk to a person" (``intents``) and following new index generations (``live``).
Reasons are returned as codes and keys; the words are in :mod:`bot.answer.reasons`.

May import: ``bot.kb``, ``bot.records``, ``bot.settings``; never ``answer``, ``store`` or ``web``.
"""
