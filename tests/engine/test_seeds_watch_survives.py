"""Issue 45, hardening round five, finding 2: the seeds watcher died and said nothing.

An event on ``seeds/`` itself (``chmod 700 seeds/``, what ``rsync -a``, ``cp -a`` and ``chown`` do; polling mode,
where the folder's own change comes with every event; the folder removed and put back) raised in the watcher's
filter. The first was read as "cannot watch with inotify", the next ended the ``bot-seeds-watch`` thread: new
documents were never served and ``/healthz`` said ok with the old generation. Now the watcher outlives any event
and any error, watching again with a log line, and ``/healthz`` says when it is not watching and when the
generation served is older than the folder.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from bot.engine.live import LiveEngine, SeedsWatcher, seeds_change, watch_health, watch_index
from bot.engine.retrieve import Engine
from bot.kb.embed import HashEmbedder

PATIENCE_S = 60.0  # on a loaded machine; each wait returns as soon as the watcher has handled what it waits for


def doc(name: str) -> str:
    return f"# {name}\n\n## {name} 问题\n\n{name} 的解决方法：重启。\n"


def serves(live: LiveEngine, source: str) -> bool:
    return any(s.source == source for s in live.sections)


def test_an_event_on_the_folder_itself_is_a_change_to_check_not_an_error():
    relevant = seeds_change(Path("/kb/seeds"))
    assert relevant(None, "/kb/seeds") is True  # before: IndexError (relative_to(root).parts[0] of the root)
    assert relevant(None, "/kb/seeds/") is True
    assert relevant(None, "/kb/other") is False and relevant(None, "") is False


@pytest.mark.parametrize("polling", [False, True], ids=["inotify", "polling"])
def test_the_watcher_outlives_chmod_and_the_folder_removed_and_put_back(hash_settings, monkeypatch, caplog, polling):
    if polling:  # the folder's own change comes with every event
        monkeypatch.setenv("WATCHFILES_FORCE_POLLING", "1")
    seeds = hash_settings.seeds_dir
    live = LiveEngine(Engine.open(hash_settings, HashEmbedder(), auto_build=True), poll_seconds=0)
    watcher = live.seeds = SeedsWatcher(live).start()
    try:
        assert watcher.wait_for(lambda: watcher.watching, PATIENCE_S)
        seeds.chmod(0o700)  # an event on seeds/ itself
        (seeds / "first.md").write_text(doc("first"), encoding="utf-8")
        assert watcher.wait_for(lambda: serves(live, "first.md"), PATIENCE_S), "the document after chmod"
        (seeds / "second.md").write_text(doc("second"), encoding="utf-8")  # before: the thread had died by now
        assert watcher.wait_for(lambda: serves(live, "second.md"), PATIENCE_S), "the next document"

        kept = seeds.parent / "kept"
        shutil.copytree(seeds, kept)
        with caplog.at_level(logging.WARNING, logger="bot.engine.live"):
            shutil.rmtree(seeds)  # removed: the index served stays (no empty index is built)
            assert watcher.wait_for(lambda: not watcher.watching, PATIENCE_S)
            assert serves(live, "second.md")
            kept.rename(seeds)  # and put back, with one more document
            (seeds / "third.md").write_text(doc("third"), encoding="utf-8")
            assert watcher.wait_for(lambda: serves(live, "third.md"), PATIENCE_S), (
                "a document after the folder's return"
            )
        assert watcher.wait_for(lambda: watcher.watching, PATIENCE_S) and watcher.restarts >= 1
        assert any("watching" in r.getMessage() and str(seeds) in r.getMessage() for r in caplog.records)
    finally:
        live.stop()


def test_an_error_while_watching_restarts_the_watch(hash_settings, monkeypatch, caplog):
    live = LiveEngine(Engine.open(hash_settings, HashEmbedder(), auto_build=True), poll_seconds=0)
    watcher = SeedsWatcher(live)
    calls = []

    def broken(root: Path):
        calls.append(root)
        if len(calls) == 1:
            raise RuntimeError("the watch broke")  # anything: the watcher must outlive it
        yield from SeedsWatcher._changes(watcher, root)

    monkeypatch.setattr(watcher, "_changes", broken)
    with caplog.at_level(logging.WARNING, logger="bot.engine.live"):
        watcher.start()
        try:
            assert watcher.wait_for(lambda: watcher.watching and len(calls) == 2, PATIENCE_S)
            (hash_settings.seeds_dir / "later.md").write_text(doc("later"), encoding="utf-8")
            assert watcher.wait_for(lambda: serves(live, "later.md"), PATIENCE_S)
        finally:
            watcher.stop()
    assert any("the watch broke" in r.getMessage() for r in caplog.records)


def test_health_says_when_the_watcher_is_not_running_and_the_index_is_older_than_the_folder(hash_settings):
    live = LiveEngine(Engine.open(hash_settings, HashEmbedder(), auto_build=True), poll_seconds=0)
    assert watch_health(live) == {"watching": None, "stale": None}  # not asked to follow seeds/: nothing to say
    assert watch_health(object()) == {"watching": None, "stale": None}
    watcher = live.seeds = SeedsWatcher(live)  # asked to, but its thread is not running (died, or never started)
    assert watch_health(live) == {"watching": False, "stale": False}
    (hash_settings.seeds_dir / "new.md").write_text(doc("new"), encoding="utf-8")
    assert watch_health(live) == {"watching": False, "stale": True}  # the folder is newer than what is served
    assert watcher.rebuild() is True
    assert watch_health(live) == {"watching": False, "stale": False}
    (hash_settings.seeds_dir / "new.md").unlink()  # removed
    assert watch_health(live)["stale"] is True
    assert watcher.rebuild() is True and watch_health(live)["stale"] is False
    (hash_settings.seeds_dir / "gpu.md").chmod(0o600)  # the same words, a changed inode: stale until checked
    assert watch_health(live)["stale"] is True
    assert watcher.rebuild() is False and watch_health(live)["stale"] is False
    (hash_settings.seeds_dir / "labels").mkdir()  # what a build does not read changes nothing it serves
    (hash_settings.seeds_dir / "labels" / "ours.jsonl").write_text("{}\n", encoding="utf-8")
    assert watch_health(live)["stale"] is False


def test_healthz_reports_the_watch(tmp_path):
    from fastapi.testclient import TestClient

    from app import build_app
    from fixtures.engines import hash_settings_for

    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "gpu.md").write_text(doc("gpu"), encoding="utf-8")
    settings = hash_settings_for(tmp_path)
    engine = Engine.open(settings, HashEmbedder(), auto_build=True)
    app = build_app(settings, engine, ui=False, admin=False)
    with TestClient(app) as client:
        health = client.get("/healthz").json()
        live = watch_index(engine, 0, seeds=True)  # the app's own watcher (one per engine)
        try:
            assert health["ok"] is True and health["stale"] is False
            assert live.seeds.wait_for(lambda: live.seeds.running, PATIENCE_S)
            assert client.get("/healthz").json()["watching"] is True
            live.seeds.stop()
            assert live.seeds.wait_for(lambda: not live.seeds.watching, PATIENCE_S)
            (tmp_path / "seeds" / "new.md").write_text(doc("new"), encoding="utf-8")
            health = client.get("/healthz").json()
            assert health["watching"] is False and health["stale"] is True
        finally:
            live.stop()
