"""Issue 33, the company's path: labels in seeds/labels/*.jsonl, sources relative to seeds/, labels of missing
documents or headings refused with file, line and fix, shipped labels of removed documents dropped with one warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.engine.facts import build
from bot.kb.embed import HashEmbedder


def _line(query: str, source: str = "", section: str = "", url: str = "") -> str:
    expect = [{"source": source, "section": section}] if source else []
    return json.dumps({"query": query, "kind": "zh", "url": url or f"https://t/{query}", "expect": expect}) + "\n"


def _good_labels(n: int = 8) -> str:
    lines = []
    for i in range(n):
        lines.append(_line(f"显存不足 out of memory 第{i}次", "gpu.md", "显存不足", f"https://t/oom{i}"))
        lines.append(_line(f"libnccl.so 找不到 第{i}次", "gpu.md", "libnccl", f"https://t/nccl{i}"))
        lines.append(_line(f"PyTorch DataLoader worker 第{i}次", url=f"https://t/near{i}"))
    return "".join(lines)


@pytest.fixture
def company(hash_settings, tmp_path, monkeypatch):
    """A company's working folder: seeds/ (its documents), an index, and the shipped eval/ beside them."""
    build(hash_settings, HashEmbedder())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval").mkdir()
    (hash_settings.seeds_dir / "labels").mkdir()
    return hash_settings


def _argv(settings, command: str = "calibrate", *files: Path) -> list[str]:
    return [command, *map(str, files), "--embedder", "hash", "--seeds", str(settings.seeds_dir), "--index",
            str(settings.index_dir)]  # fmt: skip


def test_calibrate_reads_the_companys_labels_in_seeds_labels(company, capsys):
    from bot.cli import main
    from bot.engine.calibration import load_for

    mine = company.seeds_dir / "labels" / "ours.jsonl"
    mine.write_text(_good_labels(), encoding="utf-8")
    assert main(_argv(company, "calibrate")) == 0, capsys.readouterr().err
    cal = load_for(company.index_dir, HashEmbedder().id)
    # before: only eval/*.jsonl was read, and an empty eval/ meant "nothing to learn from" (exit 2)
    assert any(Path(name).name == "ours.jsonl" for name in cal.fitted_on), cal.fitted_on


@pytest.mark.parametrize(
    "bad, said",
    [
        (
            _line("显存不足", "seeds/gpu.md", "显存不足"),
            "expect names the document 'seeds/gpu.md', which is not in seeds/",
        ),
        (_line("显存不足", "gpu.md", "梯度爆炸"), "no section of gpu.md has the heading '梯度爆炸'"),
    ],
    ids=["missing-document", "missing-heading"],
)
def test_a_label_naming_a_missing_document_or_heading_is_refused_with_file_line_and_fix(company, capsys, bad, said):
    from bot.cli import main

    mine = company.seeds_dir / "labels" / "ours.jsonl"
    mine.write_text(_good_labels(2) + bad, encoding="utf-8")
    assert main(_argv(company, "tune")) == 2  # before: used silently as a question with no answer
    err = capsys.readouterr().err
    assert f"{mine}:7: " in err and said in err and "Fix that line" in err and "Traceback" not in err


def test_shipped_labels_of_removed_documents_are_dropped_with_one_warning(company, capsys):
    from bot.cli import main
    from bot.engine.calibration import load_for

    shipped = Path("eval") / "real_more9.jsonl"
    gone = [_line(f"多卡 {i}", "000_786bff9181b08d52.txt", "多卡训练报错") for i in range(5)]
    shipped.write_text("".join(gone) + _line("显存不足 shipped", "gpu.md", "显存不足"), encoding="utf-8")
    (company.seeds_dir / "labels" / "ours.jsonl").write_text(_good_labels(), encoding="utf-8")
    assert main(_argv(company, "calibrate")) == 0
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if line.startswith("warning: dropped")]
    assert warnings == [
        "warning: dropped 5 shipped labelled lines naming 1 documents no longer in seeds/ (000_786bff9181b08d52.txt): "
        "they are left out, not used as questions with no answer; label your own questions in seeds/labels/*.jsonl"
    ]
    used = [Path(name) for name in load_for(company.index_dir, HashEmbedder().id).fitted_on]
    copy = next(p for p in used if p.name == "real_more9.jsonl")
    assert copy != shipped and len(copy.read_text(encoding="utf-8").splitlines()) == 1  # only the line that resolves


def test_label_files_are_the_shipped_then_the_companys(tmp_path):
    from bot.fit.labels import label_files

    for name in ("eval/b.jsonl", "eval/a.jsonl", "seeds/labels/ours.jsonl", "seeds/other.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    found = label_files(tmp_path / "seeds", tmp_path / "eval")
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "eval/a.jsonl",
        "eval/b.jsonl",
        "seeds/labels/ours.jsonl",
    ]


def test_every_shipped_label_names_a_section_of_the_shipped_seeds():
    from bot.fit.labels import usable_lines
    from bot.kb.parse import parse_folder
    from fixtures import REPO

    sections, _ = parse_folder(REPO / "seeds")
    for path in sorted((REPO / "eval").glob("*.jsonl")):
        assert usable_lines(path, sections, shipped=False) is None, path  # raises, naming the line, if one does not
    assert sorted((REPO / "eval").glob("*.jsonl"))
