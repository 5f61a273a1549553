"""The engine: a question (and its conversation) in, ranked sections and a tier out; serving only.

Holds a message read once (``message``, ``read``), the turn's plan (``plan``, from the case and its cues: ``case``,
``intents``, and the learned turn-act model the plan may consult: ``acts``), what never changes about a section
(``facts``) and what the engine knows of the loaded index (``catalog``), the subject lexicon (``subjects``), a search
text's scores (``scores``), the evidence the plan asks for (``evidence``), the ranking (``rank``), the judgement
(``judge``, with the loaded calibration: ``calibration``, ``precedents``, ``learned``, ``model_checks``), the result
record (``result``), the facade over them (``retrieve.Engine``), what the answer layer needs of an engine
(``answerer``) and following new index generations (``live``). Fitting lives in :mod:`bot.fit`, environment reading
in :mod:`bot.diagnose`. Reasons are returned as codes and keys; the words are in :mod:`bot.answer.reasons`.

May import: ``bot.kb``, ``bot.diagnose``, ``bot.records``, ``bot.settings``, ``bot.limits``; never ``answer``,
``store``, ``fit`` or ``web``.
"""
