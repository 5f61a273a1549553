"""Which documents a stored fit saw as they are now (issue 42, item 1: a page changes only its own answers).

The calibration stores the index manifest's content hash of every file it was fitted on (``Calibration.documents``);
the engine serves the documents added or changed since as documents nobody labelled, the others as fitted.
"""

from __future__ import annotations

from bot.kb.domain import SEEDS_DOMAIN
from bot.kb.meta import META_DIR

META_PREFIX = f"{META_DIR}/"  # the manifest's names of curated-phrasing files (``meta/<document>.toml``)


def unfitted_documents(fitted: dict, now: dict) -> frozenset[str] | None:
    """The documents of ``now`` (the index manifest's ``sources``: content hash per file) that a fit over ``fitted``
    did not see as they are now: added, or their text changed. None when something every document depends on
    changed (the shipped off-topic questions, ``seeds/domain.toml``, which splits the documents) or the fit recorded
    no per-document hashes (an older file): then nothing is as fitted. A document's curated phrasings
    (``meta/<document>.toml``) are retrieval keys, read at build: editing them keeps the document fitted.

    >>> sorted(unfitted_documents({"a.md": "1", "b.md": "2"}, {"a.md": "1", "b.md": "3", "c.md": "4", "meta/a.toml": "5"}))
    ['b.md', 'c.md']
    >>> unfitted_documents({"a.md": "1"}, {"b.md": "2"}) == frozenset({"b.md"}), unfitted_documents({}, {"a.md": "1"})
    (True, None)
    >>> print(unfitted_documents({"a.md": "1", "(bot/data/background.txt)": "x"}, {"a.md": "1", "(bot/data/background.txt)": "y"}))
    None
    """
    if not fitted:
        return None
    shared = {name for name in set(fitted) | set(now) if not _is_document(name) and not _is_meta(name)}
    if any(fitted.get(name) != now.get(name) for name in shared):
        return None
    return frozenset(name for name, digest in now.items() if _is_document(name) and fitted.get(name) != digest)


def _is_meta(name: str) -> bool:
    return name.startswith(META_PREFIX)


def _is_document(name: str) -> bool:
    """A document of the folder, not its curated phrasings, ``seeds/domain.toml`` or a shipped file (``(…)``)."""
    return not _is_meta(name) and not name.startswith("(") and name != SEEDS_DOMAIN
