"""The knowledge base: documents in, a searchable index out.

Holds parsing (``parse``: markdown -> sections, the unit of citation; ``formats``: HTML, Word, PDF and rst ->
markdown), chunking (``chunk``), curated bilingual metadata (``meta``), tokens for BM25 (``tokenize``),
pasted-log detection and error signatures (``signature``), embedders (``embed``, ``e5_onnx``), the on-disk index
(``index``: build, generations, load; ``disk``: written durably, one builder at a time), the domain (``domain``)
and the old releases a section was written for (``eras``).

May import: ``bot.records``, ``bot.settings`` and the standard/third-party libraries; never
``engine``, ``answer``, ``store`` or ``web``.
"""
