"""The domain's word lists are data (bot/data/vocabulary.toml) and match what the regexes they replaced matched."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.kb.domain import DomainError, load_domain, shipped
from fixtures import REPO


def words(name: str) -> re.Pattern[str]:
    return shipped().word(name)


# The regular expressions the lists replaced (intents.py, reply.py, retrieve.py before issue 24), kept as the reference.
BEFORE = {
    "problem": re.compile(
        r"gpu|cuda|nccl|cudnn|显存|内存|报错|错误|失败|error|fail|crash|oom|memory|paddle|tensorflow|tf\.|训练|"
        r"多卡|单卡|卡住|hang|nan|loss|batch|device|设备|driver|驱动|安装|install|版本|version|still|还是|"
        r"\.so\b|traceback|exception|import",
        re.IGNORECASE,
    ),
    "gpu": re.compile(r"\bgpu|\bcuda|cudnn|nvidia|nccl|显存|显卡|多卡", re.IGNORECASE),
    "linux": re.compile(r"(?<![A-Za-z])linux(?![A-Za-z])", re.IGNORECASE),
    "linux_named": re.compile(r"linux|ubuntu|centos|debian", re.IGNORECASE),  # subjects.py
    "linux_only_fix": re.compile(
        r"LD_LIBRARY_PATH|ldconfig|apt-get|(?<![A-Za-z0-9_])yum(?![A-Za-z0-9_])|"
        r"\.so(?:\.\d{1,3}){0,3}(?![A-Za-z0-9_])|/usr/(?:local/)?lib"
    ),
}
EDGES = [
    "multi-gpu",
    "GPUs",
    "agpu",
    "_cuda",
    "libcudart.so",
    "libcudart.so.11.0",
    "libnccl.so.2.18.1x",
    ".so显存",
    "x.soy",
    "Linux",
    "linux_x86",
    "Linuxes",
    "xlinux",
    "yum",
    "yummy",
    "/yum ",
    "ld_library_path",
    "/usr/local/lib64",
    "/usr/lib",
    "APT-GET",
    "Ubuntu 20.04",
    "CentOS7",
    "debian-slim",
    "Tf.keras",
    "tf_",
    "ıd",
    "Kelvin K",
    "",
]


def texts() -> list[str]:
    """Every seed document line and every evaluation question: the text the lists meet in the product."""
    files = [p for p in sorted((REPO / "seeds").rglob("*")) if p.is_file() and p.suffix in (".md", ".txt", ".toml")]
    lines = [line for path in files for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    for path in sorted((REPO / "eval").glob("*.jsonl")):
        for row in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(row) if row.strip() else {}
            lines += [str(item.get(key, "")) for key in ("query", "question") if item.get(key)]
    return lines + EDGES


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_each_list_matches_what_its_regex_matched(name: str) -> None:
    corpus = texts()
    assert len(corpus) > 1_000
    differ = [t for t in corpus if bool(words(name).search(t)) != bool(BEFORE[name].search(t))]
    assert not differ, differ[:5]
    assert any(words(name).search(t) for t in corpus) and not all(words(name).search(t) for t in corpus)


def test_the_patterns_are_escaped_words_and_single_character_lookarounds() -> None:
    for name, pattern in shipped().words.items():
        # Drop the look-arounds, the groups and the escaped characters: what is left must hold no quantifier.
        bare = re.sub(r"\(\?<?!(?:\\w|\[[^\]]*\])\)|\(\?:|\\.", "", pattern.pattern)
        assert not re.search(r"[*+?{]", bare), (name, pattern.pattern)  # no quantifier at all: linear


def test_a_knowledge_base_brings_its_own_lists(tmp_path: Path) -> None:
    (tmp_path / "vocabulary.toml").write_text('[[problem]]\nwords = ["invoice", "发票"]\n', encoding="utf-8")
    own = load_domain(tmp_path)
    assert own.word("problem").search("thanks, the invoice is wrong") and not own.word("problem").search("NCCL fails")
    assert own.word("gpu").search("CUDA 12")  # the lists it does not name are the default ones
    assert words("problem").search("NCCL fails")  # the shipped domain is untouched: no global was swapped


@pytest.mark.parametrize(
    "content,message",
    [
        ("[[problem]]\nwords = []\n", "needs words"),
        ('[[problem]]\nwords = ["x"]\nbefore = "space"\n', "before = 'space'"),
        ("problem = [", "cannot read the vocabulary"),
    ],
)
def test_a_bad_vocabulary_file_is_named_when_chosen(tmp_path: Path, content: str, message: str) -> None:
    own = tmp_path / "vocabulary.toml"
    own.write_text(content, encoding="utf-8")
    with pytest.raises(DomainError, match=message) as problem:
        load_domain(tmp_path)
    assert str(own) in str(problem.value)
    assert words("problem").search("NCCL fails")  # the shipped lists are kept


def test_a_companys_seeds_vocabulary_is_loaded_by_the_command_line_and_the_app(tmp_path: Path, capsys) -> None:
    """Issue 33: seeds/vocabulary.toml was never loaded. Issue 41: it is part of the Domain the index is opened with."""
    from app import open_engine
    from bot.cli import main
    from bot.settings import Settings

    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "billing.md").write_text("# Billing\n\n## The invoice is wrong\n\nAsk finance.\n", encoding="utf-8")
    (seeds / "vocabulary.toml").write_text('[[problem]]\nwords = ["invoice", "发票"]\n', encoding="utf-8")
    argv = ["build", "--embedder", "hash", "--seeds", str(seeds), "--index", str(tmp_path / "index")]
    assert main(argv) == 0, capsys.readouterr().err

    settings = Settings(seeds_dir=seeds, index_dir=tmp_path / "index", embedder="hash")
    engine = open_engine(settings, progress=False)
    problem = engine.index.domain.word("problem")
    assert problem.search("the invoice is wrong") and not problem.search("NCCL fails")  # the app's start loads it

    (seeds / "vocabulary.toml").unlink()  # a knowledge base without one: the shipped lists alone
    problem = open_engine(settings, progress=False).index.domain.word("problem")
    assert problem.search("NCCL fails") and not problem.search("the invoice is wrong")


def test_a_bad_seeds_vocabulary_stops_the_command_with_the_file_and_the_fix(tmp_path: Path, capsys) -> None:
    from bot.cli import main

    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "vocabulary.toml").write_text("problem = [", encoding="utf-8")
    assert main(["meta", "list", "--seeds", str(seeds)]) == 2
    err = capsys.readouterr().err
    assert str(seeds / "vocabulary.toml") in err and "Fix the file or remove it" in err
