"""The labelled files ``python -m bot calibrate`` and ``tune`` learn from, checked line by line before any work.

Where they are (:func:`label_files`): the shipped ones in ``eval/*.jsonl`` and a company's own in
``seeds/labels/*.jsonl``, beside the documents they label. A label names its section by ``source``, the
document's path relative to ``seeds/`` (``faq/install.md`` for ``seeds/faq/install.md``), and ``section``,
its heading (or a part of it) as ``python -m bot meta list`` prints it.

Two kinds of JSON-lines file: single questions, one object a line::

    {"query": "...", "kind": "zh", "url": "...", "expect": [{"source": "gpu.md", "section": "显存不足"}]}

and conversations, when every line has ``turns``::

    {"turns": [{"query": "...", "expect": [...]}, ...], "kind": "retry", "url": "..."}

``expect`` lists the sections that answer (``[]``: the knowledge base has none). A line that is not JSON, or an
``expect`` that is not such a list, is reported with the file, the line and the fix, instead of a traceback
minutes into a fit:

    >>> problem_of({"query": "显存不足", "expect": "notalist"})
    'expect is \\'notalist\\', not a list of {"source", "section"}'
    >>> problem_of({"query": "显存不足", "expect": [{"source": "gpu.md", "section": "显存不足"}]}) is None
    True
    >>> problem_of({"turns": [{"query": "x", "expect": [{"source": "gpu.md"}]}]}, conversations=True)
    'turn 1: expect[0] is {\\'source\\': \\'gpu.md\\'}, not {"source", "section"}'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.jsonl import HostileLine, json_line
from bot.records import Section

CASE = '{"query": "...", "kind": "...", "expect": [{"source": "...", "section": "..."}]}'
CONVERSATION = '{"turns": [{"query": "...", "expect": [...]}, ...]}'
LABELS_DIR = "labels"  # seeds/labels/*.jsonl: a company's labelled questions, beside its documents
SHIPPED_DIR = Path("eval")  # the labels shipped with the product, for the shipped seeds


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _expect_problem(expect: object) -> str | None:
    if not isinstance(expect, list):
        return f'expect is {_short(expect)}, not a list of {{"source", "section"}}'
    for n, item in enumerate(expect):
        if not (
            isinstance(item, dict) and isinstance(item.get("source"), str) and isinstance(item.get("section"), str)
        ):
            return f'expect[{n}] is {_short(item)}, not {{"source", "section"}}'
    return None


def _question_problem(row: dict, *, null_expect: bool = False) -> str | None:
    if not isinstance(row.get("query"), str):
        return f"query is {_short(row.get('query'))}, not text"
    if "expect" not in row or (null_expect and row["expect"] is None):
        return None
    return _expect_problem(row["expect"])


def problem_of(row: object, *, conversations: bool = False) -> str | None:
    """What is wrong with one parsed line (None: nothing), for a file of questions or of conversations."""
    if not isinstance(row, dict):
        return f"a JSON {type(row).__name__}, not an object"
    if not conversations:
        return _question_problem(row)
    turns = row.get("turns")
    if not isinstance(turns, list) or not turns:
        return f"turns is {_short(turns)}, not a list of turns"
    for n, turn in enumerate(turns, 1):
        problem = f"not an object ({_short(turn)})" if not isinstance(turn, dict) else None
        problem = problem or _question_problem(turn, null_expect=True)
        if problem:
            return f"turn {n}: {problem}"
    return None


def check_labelled(paths: list[Path]) -> None:
    """Raise ValueError naming the file, the line and the fix at the first line calibration could not read."""
    for path in paths:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: unreadable ({exc}); pass labelled JSON-lines files") from None
        rows: list[tuple[int, object]] = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rows.append((number, json_line(line)))
            except HostileLine as exc:  # 100,000 brackets, a lone surrogate: refused before the fit, not after
                raise ValueError(f"{path}:{number}: {exc}") from None
            except ValueError as exc:
                raise ValueError(
                    f"{path}:{number}: not JSON ({exc}). Fix that line: one object a line, {CASE}"
                ) from None
        # As the reader decides: a file is conversations only when every line has turns.
        conversations = bool(rows) and all(isinstance(row, dict) and "turns" in row for _, row in rows)
        for number, row in rows:
            if (problem := problem_of(row, conversations=conversations)) is not None:
                shape = CONVERSATION if conversations else CASE
                raise ValueError(
                    f"{path}:{number}: {problem}. Fix that line: {shape} (expect [] when no section answers)"
                )


def label_files(seeds_dir: Path, shipped_dir: Path = SHIPPED_DIR) -> list[Path]:
    """What ``calibrate`` and ``tune`` learn from when given no files: the shipped ``eval/*.jsonl``, then the
    company's ``seeds/labels/*.jsonl``."""
    return sorted(Path(shipped_dir).glob("*.jsonl")) + sorted((Path(seeds_dir) / LABELS_DIR).glob("*.jsonl"))


_DROP = re.compile(r"[\s`*#\[\]]+")  # bot.fit.evaluate's matching rule (shared/eval/README.md), kept light here


def _normal(text: str) -> str:
    return _DROP.sub("", text.lower())


@dataclass
class Dropped:
    """Shipped labels left out because their document is no longer in ``seeds/`` (a company replaced it)."""

    lines: int = 0
    documents: set[str] = field(default_factory=set)

    def warning(self) -> str:
        """One line for the whole set.

        >>> Dropped(3, {"b.txt", "a.txt"}).warning()
        'dropped 3 shipped labelled lines naming 2 documents no longer in seeds/ (a.txt, b.txt): they are left out, not used as questions with no answer; label your own questions in seeds/labels/*.jsonl'
        """
        names = sorted(self.documents)
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        return (
            f"dropped {self.lines} shipped labelled lines naming {len(names)} documents no longer in seeds/ ({shown}): "
            "they are left out, not used as questions with no answer; label your own questions in seeds/labels/*.jsonl"
        )


def _expects(row: dict) -> list[list[dict]]:
    """Every non-null ``expect`` list of a line (one for a question, one per turn of a conversation)."""
    turns = row["turns"] if isinstance(row.get("turns"), list) else [row]
    return [turn["expect"] for turn in turns if isinstance(turn, dict) and isinstance(turn.get("expect"), list)]


def usable_lines(
    path: Path, sections: Sequence[Section], *, shipped: bool, dropped: Dropped | None = None
) -> list[str] | None:
    """The lines of ``path`` to learn from, or None when every line can be used as it is.

    Each ``expect`` entry must name a document of the index (``source``: its path relative to ``seeds/``) and a
    heading one of its sections has; otherwise ValueError names the file, the line and the fix. In a
    ``shipped`` file an entry whose document is gone is left out instead (counted in ``dropped``), and a line
    left with nothing to expect where it expected something is dropped whole: it is not a question with no
    answer.

    >>> s = [Section("faq/gpu.md", "显存不足怎么办", ("GPU",), 1, 3, "x", "减小 batch_size", "GPU")]
    >>> import tempfile; folder = Path(tempfile.mkdtemp())
    >>> (folder / "mine.jsonl").write_text('{"query": "oom", "expect": [{"source": "gpu.md", "section": "显存不足"}]}\\n')
    70
    >>> usable_lines(folder / "mine.jsonl", s, shipped=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...mine.jsonl:1: expect names the document 'gpu.md', which is not in seeds/ (documents: faq/gpu.md). Fix that line: source is the document's path relative to seeds/, e.g. "faq/gpu.md"
    >>> usable_lines(folder / "mine.jsonl", s, shipped=True)
    []
    """
    by_source: dict[str, list[str]] = {}
    for section in sections:
        by_source.setdefault(section.source, []).append(_normal(section.heading))
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    kept: list[str] = []
    changed = False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not isinstance(row, dict):
            kept.append(line)
            continue
        gone: set[str] = set()
        emptied = False
        for expect in _expects(row):
            present = []
            for item in expect:
                source, heading = item["source"], item["section"]
                if source not in by_source:
                    if shipped:
                        gone.add(source)
                        continue
                    raise ValueError(_missing_document(path, number, source, by_source))
                if not any(_normal(heading) in h for h in by_source[source]):
                    raise ValueError(
                        f"{path}:{number}: no section of {source} has the heading {heading!r}. Fix that line: "
                        f"section is the heading or a part of it, as `python -m bot meta list` prints it"
                    )
                present.append(item)
            emptied = emptied or (bool(expect) and not present)
            expect[:] = present
        if not gone:
            kept.append(line)
            continue
        changed = True
        if dropped is not None:
            dropped.documents |= gone
            dropped.lines += 1 if emptied else 0
        if not emptied:
            kept.append(json.dumps(row, ensure_ascii=False))
    return kept if changed else None


def _missing_document(path: Path, number: int, source: str, by_source: dict[str, list[str]]) -> str:
    documents = sorted(by_source)
    shown = ", ".join(documents[:5]) + (f" and {len(documents) - 5} more" if len(documents) > 5 else "")
    example = next((d for d in documents if Path(d).name == Path(source).name), documents[0] if documents else "")
    return (
        f"{path}:{number}: expect names the document {source!r}, which is not in seeds/ (documents: {shown or 'none'}). "
        f'Fix that line: source is the document\'s path relative to seeds/, e.g. "{example}"'
    )


def is_shipped(path: Path, shipped_dir: Path = SHIPPED_DIR) -> bool:
    """A file of the shipped labels (``eval/``), whose documents a company may have replaced."""
    return Path(path).resolve().parent == Path(shipped_dir).resolve()


def usable_files(
    paths: Iterable[Path], sections: Sequence[Section], spare_dir: Path, *, shipped_dir: Path = SHIPPED_DIR
) -> tuple[list[Path], Dropped]:
    """``paths`` checked against the index's sections: a file with shipped labels of gone documents is replaced
    by a copy without them in ``spare_dir`` (same name: its batch stays the same), the others are used as given."""
    dropped = Dropped()
    usable = []
    for path in paths:
        lines = usable_lines(path, sections, shipped=is_shipped(path, shipped_dir), dropped=dropped)
        if lines is None:
            usable.append(Path(path))
            continue
        if not lines:
            continue
        spare_dir.mkdir(parents=True, exist_ok=True)
        copy = spare_dir / Path(path).name
        copy.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        usable.append(copy)
    return usable, dropped
