"""Figures for a labelled batch of pasted environments (``eval/environments/*.jsonl``; format and scoring rule:
``docs/labelling-environments.md``).

- *named right*: mismatch cases whose claims hold at least one code of ``mismatches ∪ accept`` and none outside it;
- *false claims*: ``[]`` cases with any claim;
- *with source*: claims that cite a table row (all of them, by construction; counted so a regression shows);
- *named with versions* (when the reply's words are given): named right, and the reply's words name every
  conflicting value the label records for a code claimed (:func:`values_named`: driver, CUDA, cuDNN, compute
  capability, GPU model, library), as the user reads them;
- *user's values named* (cases labelled with ``user_values``, the literal strings a good reply quotes): of the cases
  named right, those whose reply quotes every user value *of their mismatches* (:func:`mismatch_values`: a user value
  belongs to a mismatch when it holds one of the values that mismatch's label records, read as :func:`values_named`
  reads them); quoted means it occurs in the reply whatever the case and the spacing (:func:`quoted`). Every
  labelled mismatch counts, also one the reply reached through ``accept``; a case whose mismatches hold no user value
  counts as named and is reported apart ("nothing to quote");
- *quotes not in the paste*: the user's own words a reply may quote (``Environment.typed``) that do not occur in the
  paste: 0 by construction, counted so that a reader quoting invented words shows.

    >>> from bot.diagnose.compat import table_from_toml
    >>> table = table_from_toml('[[message]]\\nkey = "insufficient_driver"\\ncode = "driver_too_old"\\nsource = "https://x"\\n')
    >>> cases = [{"id": "a", "paste": "Cuda error(35), CUDA driver version is insufficient for CUDA runtime version",
    ...           "expect": {"mismatches": [{"code": "driver_too_old"}]}},
    ...          {"id": "b", "paste": "loss is nan", "expect": {"mismatches": []}}]
    >>> figures = score(cases, table)
    >>> figures.named_right, figures.mismatch_cases, figures.false_claims, figures.none_cases
    (1, 1, 0, 1)
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bot.diagnose.compat import CompatTable, Diagnosis, check
from bot.diagnose.environment import normalise, read_environment
from bot.jsonl import read_jsonl


@dataclass(frozen=True)
class CaseResult:
    id: str
    variant: str
    expected: tuple[str, ...]
    accepted: tuple[str, ...]
    claimed: tuple[str, ...]
    ok: bool
    unnamed: tuple[str, ...] = ()  # conflicting values of the label the reply's words do not name
    unquoted: tuple[str, ...] = ()  # user values of the mismatches the reply does not quote


@dataclass(frozen=True)
class Figures:
    named_right: int = 0
    mismatch_cases: int = 0
    false_claims: int = 0
    none_cases: int = 0
    claims: int = 0
    claims_with_source: int = 0
    named_with_versions: int | None = None  # None: no words were given to read
    user_values_named: int = 0  # cases named right whose reply quotes every user value of their mismatches
    user_values_cases: int = 0  # cases named right that are labelled with user_values (and words were given)
    nothing_to_quote: int = 0  # of those, cases whose mismatches hold no user value
    user_values_quoted: int = 0  # single user values of the mismatches quoted …
    user_values_total: int = 0  # … of all of them
    quotes_not_in_paste: int = 0  # the reader's "as typed" words missing from the paste
    quotes_total: int = 0
    by_variant: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)  # right, cases, false, [] cases
    cases: tuple[CaseResult, ...] = ()


def read_batch(path: Path) -> list[dict]:
    """The labelled cases of one JSON-lines file; a line that is not JSON names the file and line."""
    return read_jsonl(
        path,
        lambda row: row,
        lambda exc: f"not JSON ({getattr(exc, 'msg', exc)}). Each line is one case: see docs/labelling-environments.md",
        (json.JSONDecodeError,),
    )


# The labelled values that are the conflict itself (the others — a resolution, a path — are context).
CONFLICT_KEYS = (
    "driver",
    "driver_cuda",
    "cuda_driver_api",
    "cuda",
    "build_cuda",
    "cudnn",
    "cudnn_loaded",
    "build_cudnn",
    "compute_capability",
    "gpu",
    "library",
    "package",
)
_VERSION = re.compile(r"\d{1,4}(?:\.\d{1,4}){1,3}")
_SM = re.compile(r"sm_(\d{1,2})(\d)(?!\d)")
_MODEL = re.compile(r"\b[A-Za-z]{0,4}\d{2,4}[A-Za-z]{0,3}\b")
_FILE = re.compile(r"[\w.+-]{1,80}\.(?:so|dll)(?:\.[\d.]{1,12})?", re.IGNORECASE)


def values_named(values: dict[str, str], words: str) -> tuple[str, ...]:
    """The conflicting values of a label that ``words`` do not name (empty: all named). A version counts by its
    major.minor (``10.0.130`` is named by "10.0"), ``sm_86`` by "8.6" or itself, a GPU by its model number, a
    library by its file name; a value without any of these ("Could not collect") is not counted.

    >>> values_named({"gpu": "RTX 3060 Laptop", "compute_capability": "8.6", "build_cuda": "10.2"},
    ...              "RTX 3060 Laptop GPU (compute capability 8.6) has no kernels in the CUDA 10.2 build")
    ()
    >>> values_named({"driver": "430.64", "build_cuda": "10.2"}, "the driver is too old")
    ('driver=430.64', 'build_cuda=10.2')
    """
    flat = re.sub(r"\s+", "", words.lower())
    out = []
    for key in CONFLICT_KEYS:
        value = str(values.get(key) or "")
        if not value:
            continue
        if key == "library":
            wanted = [f.lower() for f in _FILE.findall(value)] or [value.split()[0].lower()]
        elif key == "gpu":
            wanted = [m.lower() for m in _MODEL.findall(re.sub(r"\(.*?\)", "", value))][:1]
        else:
            wanted = [".".join(v.split(".")[:2]) for v in _VERSION.findall(value)]
            wanted += [f"{m.group(1)}.{m.group(2)}" for m in _SM.finditer(value)]
            wanted += [m.group(0) for m in _SM.finditer(value)]
        if not wanted:
            continue
        if not any(re.search(rf"(?<![\d.]){re.escape(w.replace(' ', ''))}(?!\d)", flat) for w in wanted):
            out.append(f"{key}={value}")
    return tuple(out)


def _tokens(key: str, value: str) -> list[str]:
    """What stands for a labelled value inside a user's string, as :func:`values_named` reads it (and a path or the
    architectures list literally)."""
    if key in ("library", "location"):
        return [f.lower() for f in _FILE.findall(value)] or [value.lower()]
    if key == "gpu":
        return [m.lower() for m in _MODEL.findall(re.sub(r"\(.*?\)", "", value))][:1]
    if key == "build_arch":
        return [value.lower()]
    wanted = [".".join(v.split(".")[:2]) for v in _VERSION.findall(value)]
    return wanted + [f"{m.group(1)}.{m.group(2)}" for m in _SM.finditer(value)]


def mismatch_values(expect: dict, user_values: Iterable[str]) -> tuple[str, ...]:
    """The user values that belong to the labelled mismatches: those holding one of a mismatch's labelled values.

    >>> mismatch_values({"mismatches": [{"code": "wheel_cuda", "values": {"build_cuda": "11.0", "cuda": "11.2.1"}}]},
    ...                 ["GTX 1080 Ti", "11.2.1", "/usr/local/cuda-11.2/lib64", "Ubuntu 20.04"])
    ('11.2.1', '/usr/local/cuda-11.2/lib64')
    """
    out = []
    for value in user_values:
        flat = re.sub(r"\s+", "", str(value).lower())
        for mismatch in expect.get("mismatches", []):
            wanted = [w for k, v in mismatch.get("values", {}).items() for w in _tokens(k, str(v))]
            if any(re.search(rf"(?<![\d.]){re.escape(w.replace(' ', ''))}(?!\d)", flat) for w in wanted):
                out.append(str(value))
                break
    return tuple(out)


def quoted(value: str, words: str) -> bool:
    """``value`` occurs in ``words`` whatever the case and the spacing (a run of whitespace is one space).

    >>> quoted("CUDA 12.0 / cuDNN 8.9.4", "as you wrote them: `cuda 12.0  /  cudnn 8.9.4`"), quoted("11.2.1", "CUDA 11.2")
    (True, False)
    """
    return _flat(value) in _flat(words)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def _language(text: str) -> str:
    return "zh" if re.search(r"[\u4e00-\u9fff]", text) else "en"


def score(cases: Iterable[dict], table: CompatTable, words: Callable[[Diagnosis, str], str] | None = None) -> Figures:
    """Read and check every case's paste, and count against its label; with ``words`` (the reply's environment
    paragraph for a diagnosis and a language), also whether that paragraph names the conflicting values."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    results: list[CaseResult] = []
    claims = sourced = 0
    with_versions = 0
    uv = {"named": 0, "cases": 0, "nothing": 0, "quoted": 0, "total": 0, "stray": 0, "quotes": 0}
    for case in cases:
        expect = case.get("expect", {})
        wanted = tuple(sorted({m["code"] for m in expect.get("mismatches", [])}))
        accepted = tuple(sorted(set(wanted) | set(expect.get("accept", []))))
        paste = case.get("paste", "")
        diagnosis = check(read_environment(paste), table)
        claimed = diagnosis.codes
        claims += len(diagnosis.mismatches)
        sourced += sum(1 for m in diagnosis.mismatches if m.source.url)
        variant = case.get("variant") or "original"
        row = tally[variant]
        unnamed: tuple[str, ...] = ()
        unquoted: tuple[str, ...] = ()
        normal = _flat(normalise(paste))
        uv["quotes"] += len(diagnosis.environment.typed)
        uv["stray"] += sum(1 for t in diagnosis.environment.typed if _flat(t[2]) not in normal)
        if wanted:
            ok = bool(set(claimed) & set(accepted)) and set(claimed) <= set(accepted)
            row[0] += ok
            row[1] += 1
            if words is not None and ok:
                said = words(diagnosis, _language(paste))
                for expected in expect.get("mismatches", []):
                    if expected["code"] in claimed:
                        unnamed += values_named(expected.get("values", {}), said)
                with_versions += not unnamed
                if "user_values" in case:
                    own = mismatch_values(expect, case["user_values"])
                    unquoted = tuple(v for v in own if not quoted(v, said))
                    uv["cases"] += 1
                    uv["named"] += not unquoted
                    uv["nothing"] += not own
                    uv["quoted"] += len(own) - len(unquoted)
                    uv["total"] += len(own)
        else:
            ok = not claimed
            row[2] += not ok
            row[3] += 1
        results.append(
            CaseResult(str(case.get("id", "")), variant, wanted, accepted, tuple(claimed), ok, unnamed, unquoted)
        )
    totals = [sum(r[i] for r in tally.values()) for i in range(4)]
    return Figures(
        named_right=totals[0],
        mismatch_cases=totals[1],
        false_claims=totals[2],
        none_cases=totals[3],
        claims=claims,
        claims_with_source=sourced,
        named_with_versions=with_versions if words is not None else None,
        user_values_named=uv["named"],
        user_values_cases=uv["cases"],
        nothing_to_quote=uv["nothing"],
        user_values_quoted=uv["quoted"],
        user_values_total=uv["total"],
        quotes_not_in_paste=uv["stray"],
        quotes_total=uv["quotes"],
        by_variant={k: (v[0], v[1], v[2], v[3]) for k, v in sorted(tally.items())},
        cases=tuple(results),
    )


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} = {part / whole:.3f}" if whole else "0/0"


def format_figures(figures: Figures, *, cases: bool = False) -> str:
    """The figures as a small table (and every case, with ``cases``)."""
    lines = [
        f"named right (mismatch cases): {_share(figures.named_right, figures.mismatch_cases)}",
        f"false claims ([] cases):      {_share(figures.false_claims, figures.none_cases)}",
        f"claims with a source row:     {figures.claims_with_source}/{figures.claims}",
        *(
            [f"named with versions:          {_share(figures.named_with_versions, figures.mismatch_cases)}"]
            if figures.named_with_versions is not None
            else []
        ),
        *(
            [
                f"user's values named:          {_share(figures.user_values_named, figures.user_values_cases)}"
                f" (nothing to quote: {figures.nothing_to_quote}; single values {figures.user_values_quoted}/"
                f"{figures.user_values_total})"
            ]
            if figures.user_values_cases
            else []
        ),
        f"quotes not in the paste:      {figures.quotes_not_in_paste}/{figures.quotes_total}",
        "by variant: variant  named right  false claims",
    ]
    for variant, (right, total, false, none) in figures.by_variant.items():
        lines.append(f"  {variant:8} {right:>5}/{total:<5} {false:>5}/{none}")
    if cases:
        for r in figures.cases:
            mark = "ok" if r.ok else "XX"
            unnamed = f" unnamed={list(r.unnamed)}" if r.unnamed else ""
            unnamed += f" unquoted={list(r.unquoted)}" if r.unquoted else ""
            lines.append(
                f"{mark} {r.id:12} {r.variant:8} expected={list(r.expected)} claimed={list(r.claimed)}{unnamed}"
            )
    return "\n".join(lines)
