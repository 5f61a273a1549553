"""GPU-training troubleshooting assistant: cited answers from a curated FAQ.

The package is laid out by pipeline stage; each stage imports only the stages above it
in this list (and the shared ``records``/``settings``/``limits``), never one below::

    records, settings   shared vocabulary: Section, Chunk, Hit, Answer, Event; settings per concern
    limits              limits no deployer changes (question text kept, history read), each defined once
    kb/      documents -> sections -> chunks -> vectors -> FAISS + BM25 index on disk
    engine/  question -> ranked sections + tier (answer / tentative / none), calibration
    answer/  engine result -> the reply's words (markdown, citations, source view)
    store/   questions and votes in a database (the writer queue; the old JSON-lines log)
    web/     HTTP edges: Gradio UI, /api, /v1, /admin, security, deferred start-up
    cli      ``python -m bot``: build, ask, eval, calibrate, meta, report

One question's path: ``web`` (request, credential, caps) -> ``answer.conversation`` (the
turn) -> ``engine.retrieve.Engine.ask`` (evidence, rank, judge, over ``kb.index``) ->
``answer.reply`` (words) -> ``store`` (the question and its tier) -> back to ``web``.
"""

__version__ = "0.1.0"
