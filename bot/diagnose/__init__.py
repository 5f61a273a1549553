"""Environment diagnosis: a pasted environment read, and checked against what is known to work together.

Holds the environment reader (``environment``; the patterns it reads by are the domain's data,
``bot/data/environment.toml`` through ``bot.kb.patterns``), the
compatibility check (``compat``: the table in ``compat_table``, a paste's versions read against it in
``compat_reading``, the install advice in ``compat_install``) and the evaluation of both on labelled environment
batches (``evaluate_environments``). The engine's message reading uses the reader, so this stage sits below the
engine.

May import: ``bot.kb``, ``bot.records``, ``bot.limits``, ``bot.settings``, ``bot.jsonl``; never ``engine``, ``fit``,
``answer``, ``store`` or ``web``.
"""
