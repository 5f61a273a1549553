import os
import subprocess
import sys
import tomllib
from pathlib import Path

from bot.kb.meta import load_meta, meta_path
from bot.kb.parse import parse_folder
from conftest import REPO, SEEDS


def test_every_seed_section_has_reviewed_metadata():
    sections, errors = parse_folder(SEEDS)
    assert not errors
    _, problems = load_meta(SEEDS, sections)
    # Each problem names the file and the heading, so this message says what to fix.
    assert [str(p) for p in problems] == []


def test_metadata_is_substantive():
    sections, _ = parse_folder(SEEDS)
    found, _ = load_meta(SEEDS, sections)
    for section in sections:
        meta = found[section.key]
        assert meta.title_en and meta.summary_en, section.key
        assert len(meta.phrasings_zh) >= 3 and len(meta.phrasings_en) >= 3, section.key
        # Phrasings are not copies of the heading.
        assert section.heading not in meta.phrasings_zh, section.key


def write_doc(seeds: Path) -> None:
    (seeds / "ops.md").write_text(
        "# Ops\n\n## 显存不足\n\n减小 batch_size\n\n## 驱动版本\n\n升级驱动\n", encoding="utf-8"
    )


def test_missing_entry_and_orphan_anchor_are_named(tmp_path: Path):
    write_doc(tmp_path)
    path = meta_path(tmp_path, "ops.md")
    path.parent.mkdir()
    path.write_text(
        'source = "ops.md"\n'
        '[sections."显存不足"]\nheading = "显存不足"\ntitle_en = "Out of GPU memory"\nsummary_en = "Reduce batch_size."\n'
        '[sections."旧的标题"]\nheading = "旧的标题"\ntitle_en = "Old"\nsummary_en = "gone"\n',
        encoding="utf-8",
    )
    sections, _ = parse_folder(tmp_path)
    found, problems = load_meta(tmp_path, sections)
    messages = [str(p) for p in problems]
    assert any("meta/ops.toml" in m and "'驱动版本'" in m and "has no metadata" in m for m in messages)
    assert any("meta/ops.toml" in m and "'旧的标题'" in m and "no longer exists" in m for m in messages)
    assert list(found) == ["ops.md#显存不足"]


def test_changed_heading_is_reported(tmp_path: Path):
    write_doc(tmp_path)
    path = meta_path(tmp_path, "ops.md")
    path.parent.mkdir()
    path.write_text('[sections."显存不足"]\nheading = "显存不够"\ntitle_en = "x"\n', encoding="utf-8")
    sections, _ = parse_folder(tmp_path)
    _, problems = load_meta(tmp_path, sections)
    assert any("heading changed" in str(p) and "'显存不够'" in str(p) for p in problems)


def run_meta_check(seeds: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bot", "--seeds", str(seeds), "meta", "check"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_meta_check_command_on_company_documents(tmp_path: Path):
    write_doc(tmp_path)
    ok = run_meta_check(tmp_path)  # no metadata at all: works, just says so
    assert ok.returncode == 0 and "cross-lingual embedding only" in ok.stdout
    path = meta_path(tmp_path, "ops.md")
    path.parent.mkdir()
    path.write_text('[sections."显存不足"]\nheading = "显存不足"\ntitle_en = "x"\n', encoding="utf-8")
    bad = run_meta_check(tmp_path)
    assert bad.returncode == 1 and "驱动版本" in bad.stderr
    broken = tmp_path / "meta" / "ops.toml"
    broken.write_text("[sections.", encoding="utf-8")
    assert run_meta_check(tmp_path).returncode == 1


def test_seed_meta_files_are_valid_toml_with_their_source():
    for path in sorted((SEEDS / "meta").glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        assert data["source"] == path.stem + ".txt"
        assert (SEEDS / data["source"]).exists()


def test_meta_files_whose_document_is_gone_are_reported_by_build_and_meta_check(tmp_path: Path, capsys):
    """Issue 33: a company that replaced seeds/ kept meta files of deleted documents, and nothing said so."""
    from bot.cli import main

    seeds = tmp_path / "seeds"
    (seeds / "meta" / "faq").mkdir(parents=True)
    (seeds / "faq").mkdir()
    (seeds / "faq" / "install.md").write_text("# Install\n\n## pip install fails\n\nUse a mirror.\n", encoding="utf-8")
    (seeds / "meta" / "faq" / "install.toml").write_text('source = "faq/install.md"\n', encoding="utf-8")
    (seeds / "meta" / "000_786bff9181b08d52.toml").write_text('source = "000_786bff9181b08d52.txt"\n', encoding="utf-8")
    where = ["--seeds", str(seeds), "--index", str(tmp_path / "index"), "--embedder", "hash"]

    assert main(["build", *where]) == 0
    said = capsys.readouterr().err
    orphan = [line for line in said.splitlines() if "meta/000_786bff9181b08d52.toml" in line]
    assert len(orphan) == 1 and "no document seeds/000_786bff9181b08d52.md or .txt" in orphan[0], said
    assert not [line for line in said.splitlines() if "install.toml" in line and "no document" in line]  # kept

    assert main(["meta", "check", *where]) == 1  # before: 0, the orphan unmentioned
    out = capsys.readouterr()
    assert "meta/000_786bff9181b08d52.toml" in out.err and "remove the file, or restore its document" in out.err
