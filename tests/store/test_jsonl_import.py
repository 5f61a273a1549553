"""The old JSON-lines feedback log: no longer written or summarised; ``python -m bot store import-jsonl FILE`` brings
an old one into the store, once."""

from __future__ import annotations

import pytest

from bot.cli import main as cli_main
from bot.store.database import Store, StoreSettings
from fixtures.old_log import old_line, write_log


@pytest.fixture
def sqlite_settings(tmp_path, monkeypatch) -> StoreSettings:
    settings = StoreSettings(data_dir=tmp_path / "data")
    monkeypatch.setenv("BOT_DATA_DIR", str(settings.data_dir))
    monkeypatch.delenv("BOT_DATABASE_URL", raising=False)
    Store.open(settings).close()  # the app's first start creates the store
    return settings


def test_the_import_command_brings_an_old_log_in_once(sqlite_settings, tmp_path, capsys):
    log = write_log(
        tmp_path / "logs" / "feedback.jsonl",
        old_line("unanswered", "how to bake bread", cited=["a#1"]),
        old_line("vote", "显存不足", language="zh", answered=True, cited=["b#1"], vote="down"),
        "{broken\n",
    )
    assert cli_main(["store", "import-jsonl", str(log)]) == 0
    assert "imported 2 event(s) from" in capsys.readouterr().out
    assert cli_main(["store", "import-jsonl", str(log)]) == 0  # again: nothing twice
    assert "nothing to import from" in capsys.readouterr().out
    write_log(log, old_line("not_helpful", "nccl", answered=True, vote="down"))  # appended since: only that line
    assert cli_main(["store", "import-jsonl", str(log)]) == 0
    assert "imported 1 event(s)" in capsys.readouterr().out
    store = Store.reader(sqlite_settings)
    try:
        rows = store.rows()
    finally:
        store.close()
    assert [(r["kind"], r["question"], r["origin"], r["session"]) for r in rows] == [
        ("question", "how to bake bread", "import", ""),
        ("vote", "显存不足", "import", ""),
        ("not_helpful", "nccl", "import", ""),
    ]
    assert rows[0]["tier"] == "none" and rows[1]["tier"] == "answer" and rows[1]["cited"] == ["b#1"]


def test_the_import_command_names_a_missing_file_or_store_and_the_fix(sqlite_settings, tmp_path, capsys):
    assert cli_main(["store", "import-jsonl", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "nope.jsonl is not there, not a feedback log" in err and "store import-jsonl logs/feedback.jsonl" in err
    assert cli_main(["store", "import-jsonl", str(tmp_path)]) == 2
    assert "is a folder, not a feedback log" in capsys.readouterr().err
    log = write_log(tmp_path / "feedback.jsonl", old_line("unanswered", "q"))
    assert cli_main(["store", "import-jsonl", str(log), "--database", "mongodb://db.example/bot"]) == 2
    assert "names the database kind 'mongodb'" in capsys.readouterr().err


def test_a_store_at_an_older_schema_is_not_imported_into(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "never-started"))
    monkeypatch.delenv("BOT_DATABASE_URL", raising=False)
    log = write_log(tmp_path / "feedback.jsonl", old_line("unanswered", "q"))
    assert cli_main(["store", "import-jsonl", str(log)]) == 2
    assert "the app creates it on its first start (python app.py)" in capsys.readouterr().err


def test_the_log_is_no_longer_written_nor_summarised(capsys):
    """Before: ``bot report --log FILE`` summarised the JSON-lines log and the app wrote it when it had no store."""
    from bot.store import feedback

    assert not hasattr(feedback, "JsonlRecorder") and not hasattr(feedback, "summarize")
    with pytest.raises(SystemExit) as refused:
        cli_main(["report", "--log", "logs/feedback.jsonl"])
    assert refused.value.code == 2 and "unrecognized arguments: --log" in capsys.readouterr().err
