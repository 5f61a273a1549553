"""One aggregation for every concurrent ``/admin`` view of the same window (:class:`SharedReports`)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

# ---------------------------------------------------------------- one aggregation for every concurrent view


class SharedReports:
    """Reports (with the rows they were built from) shared by every ``/admin`` view asking for the same window.

    Each view built its own report from every row: 8 concurrent views over 1,500 questions took the process from
    271 to 1,064 MB. Here one build runs per window at a time; views that ask meanwhile wait for it (even when
    rows were written since it started: busy traffic must not start a build per view), and later views reuse it
    while the store's ``version()`` (rows, highest id) is unchanged and it is younger than ``max_age`` seconds.
    At most ``keep`` windows are held.

    >>> calls = []
    >>> shared = SharedReports(lambda days: calls.append(days) or (days, []), version=lambda: 1)
    >>> shared.get(30), shared.get(30), calls
    ((30, []), (30, []), [30])
    """

    def __init__(
        self,
        build: Callable[[int], tuple[Any, list[dict]]],
        version: Callable[[], object] | None = None,
        *,
        max_age: float = 60.0,
        keep: int = 4,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.build, self.version, self.max_age, self.keep, self.clock = build, version, max_age, keep, clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[int, _Shared] = OrderedDict()
        self.builds = 0

    def get(self, days: int) -> tuple[Any, list[dict]]:
        stamp = self.version() if self.version is not None else object()  # no version: share in-flight builds only
        with self._lock:
            entry = self._entries.get(days)
            building = entry is not None and not entry.ready.is_set()  # joined whatever was written meanwhile
            fresh = (
                entry is not None
                and entry.error is None
                and entry.stamp == stamp
                and (self.clock() - entry.started) < self.max_age
            )
            if building or fresh:
                self._entries.move_to_end(days)
                owner = False
            else:
                entry = self._entries[days] = _Shared(stamp, self.clock())
                while len(self._entries) > self.keep:
                    self._entries.popitem(last=False)
                owner = True
        if owner:
            try:
                self.builds += 1
                entry.value = self.build(days)
            except BaseException as exc:  # the waiting views get the same error (the database is away)
                entry.error = exc
                raise
            finally:
                entry.ready.set()
        else:
            entry.ready.wait()
            if entry.error is not None:
                raise entry.error
        return entry.value  # type: ignore[return-value]


class _Shared:
    def __init__(self, stamp: object, started: float) -> None:
        self.stamp, self.started = stamp, started
        self.ready = threading.Event()
        self.value: tuple[Any, list[dict]] | None = None
        self.error: BaseException | None = None
