"""Writing an index generation durably: files and folders flushed to the disk, one builder at a time per folder.

A build (:func:`bot.kb.index.build_index`) is killed at any moment without leaving a half-written generation behind:
what it wrote is on the disk before ``CURRENT`` is pointed at it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def fsync_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` and flush it to the disk before returning."""
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def fsync_dir(path: Path) -> None:
    """Flush a folder's entries (a file renamed or created in it) to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class BuildLock:
    """One builder at a time per index folder (a crashed builder's lock dies with it)."""

    def __init__(self, index_dir: Path) -> None:
        self.path = index_dir / ".lock"

    def __enter__(self) -> BuildLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "a+")
        fcntl.flock(self._handle, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()
