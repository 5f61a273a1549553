"""/admin builds one aggregation for every concurrent view, reused until the store changes (issue 28, finding 14)."""

from __future__ import annotations

import threading
import time

import httpx

from app import build_app
from bot.engine.retrieve import Engine
from bot.records import Event
from bot.store.database import Store, StoreSettings
from bot.web.admin.shared_reports import SharedReports
from fixtures.server import ThreadServer

ADMIN = "operator-secret"


def _until(condition, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_concurrent_views_share_one_build():
    release, started = threading.Event(), threading.Event()
    versions = []

    def build(days: int):
        started.set()
        release.wait(30)
        return object(), []

    def version() -> int:
        versions.append(1)
        return 1

    shared = SharedReports(build, version)
    got: list[object] = []
    views = [threading.Thread(target=lambda: got.append(shared.get(30)[0])) for _ in range(8)]
    for view in views:
        view.start()
    # Every view has read the version; the first is building, the others found its build under way.
    assert _until(lambda: started.is_set() and len(versions) == 8)
    release.set()
    for view in views:
        view.join(30)
    assert shared.builds == 1 and len(got) == 8 and len({id(r) for r in got}) == 1


def test_a_failed_build_is_not_kept():
    calls = []

    def build(days: int):
        calls.append(days)
        if len(calls) == 1:
            raise ConnectionError("the database is away")
        return "report", []

    shared = SharedReports(build, lambda: 1)
    try:
        shared.get(7)
    except ConnectionError:
        pass
    assert shared.get(7) == ("report", []) and calls == [7, 7]


def test_a_report_is_reused_until_it_ages_or_the_window_changes():
    now = [0.0]
    shared = SharedReports(lambda days: (days, []), lambda: 1, max_age=60, keep=2, clock=lambda: now[0])
    shared.get(30)
    shared.get(30)
    assert shared.builds == 1
    now[0] = 61.0
    shared.get(30)
    assert shared.builds == 2
    shared.get(7), shared.get(90), shared.get(30)  # only two windows are kept: 30 was dropped
    assert shared.builds == 5


class CountingStore:
    """The app's store, counting the reads of every row (one per report build)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.reads = 0

    def __getattr__(self, name):
        return getattr(self.store, name)

    def rows(self, *args, **kwargs):
        self.reads += 1
        return self.store.rows(*args, **kwargs)


def test_admin_views_read_the_rows_once_until_a_row_is_written(tmp_path, hash_settings):
    store = Store.open(StoreSettings(data_dir=tmp_path / "data", admin_token=ADMIN))
    for n in range(20):
        store.record(Event("question", f"how to install CUDA 12 on ubuntu {n}", "en", tier="none"))
    assert store.flush(10)
    counted = CountingStore(store)
    engine = Engine.open(hash_settings, auto_build=True)
    app = build_app(hash_settings, engine=engine, progress=False, store=counted, ops=store.settings)
    auth = {"Authorization": f"Bearer {ADMIN}"}
    try:
        with ThreadServer(app) as server:
            for _ in range(3):
                assert httpx.get(server.url + "/admin", headers=auth, timeout=60).status_code == 200
            assert httpx.get(server.url + "/admin/data.json", headers=auth, timeout=60).status_code == 200
            assert counted.reads == 1  # before: every view read and aggregated every row again
            store.record(Event("question", "昇腾 NPU 上训练报错怎么办", "zh", tier="none"))
            assert store.flush(10)
            data = httpx.get(server.url + "/admin/data.json", headers=auth, timeout=60).json()
            assert counted.reads == 2 and "昇腾" in str(data)  # a new row is seen at once
    finally:
        store.close()
