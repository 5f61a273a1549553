"""Fitting and measuring: what ``python -m bot calibrate``, ``tune``, ``acts`` and ``eval`` run; never serving.

Holds the calibration command (``calibrate``, with its rows, models, thresholds, weights, figures, unseen-document
fit, vector cache and progress in ``calibrate_*``), the ranking of many rows at once (``rank_batch``), the labelled
questions (``labels``), the evaluation of single questions (``evaluate``) and of conversations (``evaluate_turns``),
and the fitting of the learned pieces the engine loads (``learned``: the adapter; ``acts`` and ``acts_training``: the
turn-act model). It replays conversations through :mod:`bot.answer`, so it sits above it; nothing that serves
imports it (tests/test_layers.py).

May import: ``bot.engine``, ``bot.answer``, ``bot.diagnose``, ``bot.kb``, ``bot.records``, ``bot.settings``,
``bot.limits``, ``bot.jsonl``; never ``store``, ``web`` or the ``cli``.
"""
