"""Feedback log (JSON lines) and `python -m bot report`."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta

import pytest

from bot.cli import main as cli_main
from bot.store import feedback

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def write(path, *lines):
    for n, line in enumerate(lines):
        event, question, extra = line
        feedback.append(path, feedback.record(event, question, now=T0 + timedelta(minutes=n), **extra))


def test_record_has_the_required_fields_and_cuts_huge_questions():
    line = feedback.record("vote", "显存不足", language="zh", answered=True, cited=["a.md#x"], vote="down", now=T0)
    assert line == {
        "time": "2026-11-01T12:00:00+00:00",
        "event": "vote",
        "question": "显存不足",
        "language": "zh",
        "answered": True,
        "cited": ["a.md#x"],
        "vote": "down",
    }
    big = feedback.record("unanswered", "x" * 50_000, language="en", answered=False)
    assert len(big["question"]) == feedback.MAX_QUESTION_CHARS and big["question_chars"] == 50_000
    with pytest.raises(ValueError):
        feedback.record("like", "q", language="en", answered=True)
    with pytest.raises(ValueError):
        feedback.record("vote", "q", language="en", answered=True, vote="meh")


def test_log_event_appends_json_lines_and_creates_the_folder(tmp_path):
    path = tmp_path / "deep" / "logs" / "feedback.jsonl"
    assert feedback.log_event(None, "unanswered", "q", language="en", answered=False) is None  # logging off
    feedback.log_event(path, "unanswered", "how to bake bread", language="en", answered=False, cited=["a#b"])
    feedback.log_event(path, "vote", "显存不足", language="zh", answered=True, cited=["c#d"], vote="up")
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [x["event"] for x in lines] == ["unanswered", "vote"]
    assert lines[1]["question"] == "显存不足" and lines[1]["vote"] == "up"


def test_concurrent_appends_keep_every_line_whole(tmp_path):
    path = tmp_path / "feedback.jsonl"

    def worker(n: int) -> None:
        for i in range(50):
            feedback.log_event(
                path, "vote", f"question {n}-{i} " + "长" * 300, language="zh", answered=True, vote="down"
            )

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 400
    assert all(json.loads(line)["event"] == "vote" for line in lines)


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "feedback.jsonl"
    write(
        path,
        ("unanswered", "how to bake bread", dict(language="en", answered=False, cited=["a#1"])),
        ("unanswered", "How to bake bread?", dict(language="en", answered=False, cited=["a#1"])),
        ("unanswered", "  how to BAKE bread ", dict(language="en", answered=False, cited=["a#2"])),
        ("unanswered", "今天天气怎么样", dict(language="zh", answered=False)),
        ("vote", "显存不足", dict(language="zh", answered=True, cited=["b#1"], vote="down")),
        ("not_helpful", "显存不足", dict(language="zh", answered=True, cited=["b#1"], vote="down")),
        ("vote", "loss nan", dict(language="en", answered=True, cited=["c#1"], vote="down")),
        ("vote", "loss nan", dict(language="en", answered=True, cited=["c#1"], vote="up")),
        ("unanswered", "log paste", dict(language="en", answered=False, signature="EnforceNotMet: libnccl.so")),
        ("unanswered", "another paste", dict(language="en", answered=False, signature="EnforceNotMet: libnccl.so")),
    )
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("{not json\n\n[1, 2]\n")
    return path


def test_summary_ranks_unanswered_and_downvoted_questions(log):
    summary = feedback.summarize(log, top=10)
    assert summary.events == 10 and summary.bad_lines == 2
    assert summary.unanswered_total == 6 and summary.up_votes == 1 and summary.down_votes == 3
    first = summary.unanswered[0]
    assert (first.count, first.question, first.cited) == (3, "  how to BAKE bread ", ["a#2"])  # latest wording
    assert summary.unanswered[1].count == 2 and summary.unanswered[1].signature == "EnforceNotMet: libnccl.so"
    assert [(i.question, i.count) for i in summary.downvoted] == [("显存不足", 2), ("loss nan", 1)]
    assert feedback.summarize(log, top=1).unanswered == summary.unanswered[:1]


def test_summary_text_and_json(log):
    summary = feedback.summarize(log, top=5)
    text = summary.to_text()
    assert "most frequent unanswered questions" in text and "most frequent down-voted questions" in text
    assert "3×  [en] how to BAKE bread" in text and "2×  [zh] 显存不足" in text
    assert "2 unreadable line(s) skipped" in text
    data = json.loads(json.dumps(summary.to_json(), ensure_ascii=False))
    assert data["unanswered"][0]["count"] == 3 and data["downvoted"][0]["question"] == "显存不足"


def test_missing_log_is_not_an_error(tmp_path):
    summary = feedback.summarize(tmp_path / "nope.jsonl")
    assert summary.missing and summary.events == 0
    assert "no feedback log" in summary.to_text()


def test_cli_report_prints_text_and_json(log, capsys):
    assert cli_main(["report", "--log", str(log), "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "how to BAKE bread" in out and "显存不足" in out
    assert cli_main(["report", "--log", str(log), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["unanswered_total"] == 6 and data["downvoted"][0]["count"] == 2
