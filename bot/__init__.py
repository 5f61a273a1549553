"""GPU-training troubleshooting assistant: cited answers from a curated FAQ.

The package is laid out by pipeline stage; each stage imports only the stages above it
in this list (and the shared ``records``/``settings``/``limits``), never one below::

    records, settings   shared vocabulary: Section, Chunk, Hit, Answer, Event; settings per concern
    limits              limits no deployer changes (question text kept, history read), each defined once
    jsonl               one reader of labelled JSON-lines files (evaluation sets, environment batches)
    kb/        documents -> sections -> chunks -> vectors -> FAISS + BM25 index on disk
    diagnose/  a pasted GPU environment read, and checked against what is known to work together
    engine/    question -> ranked sections + tier (answer / tentative / none): read, plan, scores, rank, judge
    answer/    engine result -> the reply's words (markdown, citations, source view)
    store/     questions and votes in a database (the writer queue; the old JSON-lines log)
    fit/       calibration, evaluation and training (what ``calibrate``, ``tune``, ``acts``, ``eval`` run); never
               imported by what serves
    web/       HTTP edges: Gradio UI, /api, /v1, /admin, security, deferred start-up
    cli        ``python -m bot``: build, ask, eval, calibrate, meta, report

One question's path: ``web`` (request, credential, caps) -> ``answer.conversation`` (the
turn) -> ``engine.retrieve.Engine.ask`` (``read``, ``plan``, ``evidence``, ``rank``, ``judge``,
over ``kb.index``) -> ``answer.reply`` (words) -> ``store`` (the question and its tier) -> back to ``web``.
"""

__version__ = "0.1.0"
