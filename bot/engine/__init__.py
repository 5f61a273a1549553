"""The engine: a question (and its conversation) in, ranked sections and a tier out.

Holds the subject lexicon (``subjects``), ranking and confidence (``retrieve``), the
calibration record and the command that fits it (``calibration``, ``calibrate``), evaluation
(``evaluate``), message intents such as thanks or "talk to a person" (``intents``), the
one-line reasons behind a tier (``reasons``) and following new index generations (``live``).

May import: ``bot.kb``, ``bot.records``, ``bot.settings``; never ``answer``, ``store`` or ``web``.
"""
