"""Check an :class:`~environment.Environment` against the compatibility table; every finding names its source row.

The table is data (``compat.toml``): NVIDIA's minimum driver per CUDA toolkit, compute capability per GPU model, the
compute capabilities a CUDA toolkit compiles for, cuDNN <-> CUDA support, the frameworks' tested builds, and the
library messages that are themselves evidence (CUDA error 35, Paddle's architecture warning …). A company adds rows
for its own images and wheels in a second file; :func:`load_table` reads both, company rows first.

    >>> from bot.diagnose.environment import read_environment
    >>> table = table_from_toml('''
    ... [[driver]]
    ... cuda = "10.2"
    ... linux_min = "440.33"
    ... windows_min = "441.22"
    ... source = "https://example.org/nvidia"
    ... read = "2026-11-24"
    ... ''')
    >>> env = read_environment("Driver Version: 418.67   CUDA Version: 10.1\\npaddle with cuda: 10.2")
    >>> [(m.code, m.values["driver"], m.source.url) for m in check(env, table).mismatches]
    [('driver_too_old', '418.67', 'https://example.org/nvidia')]

The checker returns codes, values and rows; the words are written by the reply layer. Unknown values stay unknown:
a check runs only when every value it needs was read, and a table without the row means "not decided".

This module decides the findings; the table and its loading are :mod:`bot.diagnose.compat_table`, what an environment
needs and has by the table (the build's CUDA, the machine's, a GPU's capability) :mod:`bot.diagnose.compat_reading`,
the build to install instead :mod:`bot.diagnose.compat_install`. Their public names are importable from here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Literal

from bot.diagnose.compat_install import Install, gpu_install
from bot.diagnose.compat_reading import (
    arch_row,
    build_cuda,
    bundles_cuda,
    compute_capabilities,
    compute_capability,
    gpu_packages,
    gpu_row,
    machine_cuda,
    message_source,
    on_windows,
)
from bot.diagnose.compat_table import (
    COMPANY_TABLE,
    KINDS,
    SHIPPED_TABLE,
    CompatTable,
    Row,
    Source,
    load_table,
    major_minor,
    table_for,
    table_from_toml,
    vtuple,
)
from bot.records import Environment

__all__ = [
    "COMPANY_TABLE",
    "KINDS",
    "SHIPPED_TABLE",
    "CompatTable",
    "Diagnosis",
    "Install",
    "Mismatch",
    "Row",
    "Source",
    "build_cuda",
    "check",
    "compute_capabilities",
    "compute_capability",
    "gpu_install",
    "gpu_packages",
    "load_table",
    "machine_cuda",
    "table_for",
    "table_from_toml",
    "vtuple",
]

Code = Literal["driver_too_old", "cudnn_cuda", "wheel_cuda", "cpu_only_wheel", "compute_capability", "missing_library"]
CODES: tuple[Code, ...] = (
    "driver_too_old",
    "cudnn_cuda",
    "wheel_cuda",
    "cpu_only_wheel",
    "compute_capability",
    "missing_library",
)
Status = Literal["none", "consistent", "mismatch", "incomplete"]
# The one command that gives a missing value (the reply layer holds the command text for each key).
Ask = Literal["nvidia_smi", "nvcc", "run_check", "pip_list", "gpu_query", "cudnn_version"]


@dataclass(frozen=True)
class Mismatch:
    code: Code
    values: Mapping[str, str]
    source: Source
    evidence: Literal["message", "table"]  # a library said so, or the table decided it from versions

    def as_dict(self) -> dict[str, object]:
        """The finding as JSON (what /api/ask and /v1's ``bot`` return in ``mismatches``)."""
        source = self.source
        row = {"kind": source.kind, "key": source.key, "url": source.url, "read": source.read}
        row |= {k: v for k, v in (("via", source.via), ("note", source.note)) if v}
        return {"code": self.code, "values": dict(self.values), "evidence": self.evidence, "source": row}


@dataclass(frozen=True)
class Diagnosis:
    environment: Environment
    mismatches: tuple[Mismatch, ...]
    status: Status
    ask: Ask | None = None
    checked: tuple[str, ...] = ()  # the checks that had every value they need and passed
    install: Install | None = None  # the build to install instead, when a wrong build is the finding

    @property
    def codes(self) -> tuple[Code, ...]:
        return tuple(dict.fromkeys(m.code for m in self.mismatches))


# --- the checks --------------------------------------------------------------------------------------------------


def check(env: Environment, table: CompatTable) -> Diagnosis:
    """Every mismatch the paste proves, each with its source row; the status; the one command to ask for if needed."""
    found: list[Mismatch] = []
    passed: list[str] = []
    works = "gpu_works" in env.signals

    def claim(
        code: Code, values: Mapping[str, str | None], source: Source | None, evidence: Literal["message", "table"]
    ) -> None:
        if source is None:
            return  # no row, no claim: every finding cites one
        clean = {k: v for k, v in values.items() if v}
        found.append(Mismatch(code, MappingProxyType(clean), source, evidence))

    # Messages printed by the libraries: evidence in themselves.
    for signal, code in (
        ("insufficient_driver", "driver_too_old"),
        ("no_kernel_image", "compute_capability"),
        ("paddle_arch", "compute_capability"),
        ("torch_arch", "compute_capability"),
        ("paddle_cudnn_older", "cudnn_cuda"),
        ("tf_cudnn_mismatch", "cudnn_cuda"),
        ("paddle_cpu_version", "cpu_only_wheel"),
        ("not_compiled_with_cuda", "cpu_only_wheel"),
        ("paddle_cuda_older", "wheel_cuda"),
        ("torch_cudnn_mismatch", "cudnn_cuda"),
        ("tf_min_capability", "compute_capability"),
        ("tf_jit_arch", "compute_capability"),
        ("torch_cuda_none", "cpu_only_wheel"),
        ("tf_not_built_with_cuda", "cpu_only_wheel"),
        ("torch_extension_cuda", "wheel_cuda"),
    ):
        if signal in env.signals:
            if signal == "tf_jit_arch" and works:
                continue  # TensorFlow compiles the kernels from PTX and runs: slow start, not a failure
            if signal == "insufficient_driver" and _driver_covers_build(env, table):
                continue  # NVIDIA's table says the driver shown runs the build's CUDA: another cause, say nothing
            source = message_source(signal, table)
            if source is None and signal == "tf_not_built_with_cuda":
                source = message_source("not_compiled_with_cuda", table)  # a table without TensorFlow's own row
            claim(code, _message_values(code, env, table), source, "message")

    built = build_cuda(env, table)
    machine = machine_cuda(env)
    cc = compute_capability(env, table)

    # driver_too_old: the driver is older than the minimum for the CUDA the build (or the loaded runtime) needs.
    # Without the build's CUDA, the one toolkit shown is the runtime a framework that does not bring its own loads.
    toolkit_need = machine[0] if len(machine) == 1 and not bundles_cuda(env) else None
    need = env.cuda_runtime or (built[0] if built else None) or env.image_cuda or toolkit_need
    if env.driver and need and not works:
        verdict = _driver_verdict(env, need, table)
        if verdict is not None:
            ok, row = verdict
            if ok:
                passed.append("driver")
            else:
                claim(
                    "driver_too_old",
                    {
                        "driver": env.driver,
                        "driver_cuda": env.cuda_driver_api,
                        "cuda": need,
                        "minimum": _driver_minimum(env, row),
                        "gpu": env.gpus[0] if len(env.gpus) == 1 else None,  # the GPU the new driver must support
                    },
                    row.source,
                    "table",
                )
    elif env.cuda_driver_api and need and env.driver_api_from_framework and not works:
        if (
            major_minor(env.cuda_driver_api) < major_minor(need)
            and major_minor(env.cuda_driver_api)[:1] < major_minor(need)[:1]
        ):
            claim(
                "driver_too_old", {"driver_cuda": env.cuda_driver_api, "cuda": need}, _family_row(need, table), "table"
            )
        else:
            passed.append("driver")

    # compute_capability: the GPU is newer (another major) than the CUDA the build was compiled with, or older than
    # the toolkit's minimum.
    arch_cuda = (
        env.cuda_runtime
        or (built[0] if built else None)
        or env.image_cuda
        or (machine[0] if len(machine) == 1 else None)
    )
    known_cc = compute_capabilities(env, table)
    if known_cc and arch_cuda and not works:
        row = arch_row(arch_cuda, table)
        if row is not None:
            too_new = [
                (g, c)
                for g, c, _ in known_cc
                if major_minor(c)[:1] > major_minor(row.get("max_cc"))[:1]
                or major_minor(c) < major_minor(row.get("min_cc") or "0")
            ]
            if too_new:
                gpu, cc_value = too_new[0]
                claim(
                    "compute_capability",
                    {
                        "compute_capability": cc_value,
                        "gpu": gpu,
                        "cuda": arch_cuda,
                        "max_cc": row.get("max_cc"),
                        "min_cc": row.get("min_cc"),
                        "min_cuda": _first_cuda_for(cc_value, table),
                        "package": _package_text(env) or None,  # the build that lacks this GPU's code
                        "driver": env.driver,  # it decides which newer build the fix may install
                    },
                    row.source,
                    "table",
                )
            else:
                passed.append("compute_capability")

    # wheel_cuda: the build's CUDA major differs from every CUDA the machine shows; or a missing library's soname
    # asks for another major than the machine has.
    if built and machine and not works and not env.cuda_runtime and not bundles_cuda(env):
        # Libraries are found by soname: libcudart.so.11.0 serves every 11.x, but 10.x and older name the minor
        # (libcudart.so.10.1), so TensorFlow builds for CUDA 10 and older need the same minor.
        exact = major_minor(built[0])[0] <= 10 and any(p.name.startswith("tensorflow") for p in env.packages)
        width = 2 if exact else 1
        majors = {major_minor(m)[:width] for m in machine if len(major_minor(m)) >= width}
        if majors and major_minor(built[0])[:width] not in majors:
            build_cudnn = built[1] is not None and built[1].kind == "wheel" and _row_value(built[1], table, "cudnn")
            claim(
                "wheel_cuda",
                {
                    "build_cuda": built[0],
                    "cuda": ", ".join(machine),
                    "build_cudnn": build_cudnn or None,
                    "cudnn": ", ".join(env.cudnn) if build_cudnn else None,
                    "package": _package_text(env),
                    "driver": env.driver,  # it decides which build the fix installs
                },
                built[1] or message_source("paddle_cuda_older", table),
                "table",
            )
        else:
            passed.append("wheel_cuda")
    lib_need = _library_versions(env)
    if lib_need:
        for lib, (what, major) in lib_need.items():
            have = env.cudnn if what == "cudnn" else machine
            have_majors = {major_minor(h)[:1] for h in have}
            if have_majors and (major,) not in have_majors:
                claim(
                    "wheel_cuda",
                    {
                        "library": lib,
                        what: ", ".join(have),
                        f"build_{what}": _library_version(lib),
                        "driver": env.driver,  # what the machine runs, for the build the reply suggests
                    },
                    message_source("library_not_found", table),
                    "message",
                )

    # missing_library: a library the framework needs was not found.
    if env.missing_libraries:
        claim(
            "missing_library",
            {
                "library": ", ".join(env.missing_libraries),
                "cuda": ", ".join(machine) or env.image_cuda,
                "cudnn": env.cudnn_loaded or ", ".join(env.cudnn) or env.image_cudnn,
                "build_cuda": env.build_cuda,  # what the build was compiled with, when printed
                "build_cudnn": env.build_cudnn,
                "driver": env.driver,  # the driver decides which CUDA the installed libraries may be
                "os": env.os,  # the system decides where a library is looked for (PATH, LD_LIBRARY_PATH, WSL's own)
                "package": _package_text(env) or None,  # the build that asked for the library
            },
            message_source("library_not_found", table),
            "message",
        )

    # cudnn_cuda: the cuDNN on the machine is not listed for the machine's CUDA (rows of the same cuDNN major.minor).
    cudnn = env.cudnn_loaded or (env.cudnn[0] if len(env.cudnn) == 1 else None)
    cuda_for_cudnn = env.cuda_runtime or (machine[0] if len(machine) == 1 else None)
    if cudnn and cuda_for_cudnn and not works:
        rows = [r for r in table.of("cudnn") if _cudnn_mm(r.get("cudnn")) == major_minor(cudnn)]
        if rows:
            cuda_majors = {major_minor(c)[:1] for r in rows for c in _list(r.data.get("cuda"))}
            if major_minor(cuda_for_cudnn)[:1] not in cuda_majors:
                claim("cudnn_cuda", {"cudnn": cudnn, "cuda": cuda_for_cudnn}, rows[0].source, "table")
            else:
                passed.append("cudnn_cuda")

    # cpu_only_wheel: only the CPU package is listed while the paste is about a GPU.
    names = {p.name for p in env.packages}
    cpu_pkgs = [p for p in env.packages if p.name in ("paddlepaddle", "tensorflow-cpu") or p.variant == "cpu"]
    gpu_evidence = works or bool({"no_kernel_image", "gpu_build"} & env.signals) or env.cuda_runtime is not None
    if cpu_pkgs and env.gpu_intent and not gpu_evidence and "paddlepaddle-gpu" not in names:
        own = {"tensorflow-cpu": "tensorflow_cpu_package"}.get(cpu_pkgs[0].name)
        own = own or ("torch_cpu_wheel" if cpu_pkgs[0].variant == "cpu" and cpu_pkgs[0].name == "torch" else None)
        row = (message_source(own, table) if own else None) or message_source("not_compiled_with_cuda", table)
        claim("cpu_only_wheel", {"package": f"{cpu_pkgs[0].name}=={cpu_pkgs[0].version}"}, row, "table")
    tf_windows = _tf_windows_cpu(env, table)
    if tf_windows is not None and not works:
        # The operating system decides here: the reply names it as pasted, with the last release that had a GPU build.
        claim(
            "cpu_only_wheel",
            {"package": tf_windows[0], "os": env.os, "windows_gpu_last": tf_windows[2]},
            tf_windows[1],
            "table",
        )

    mismatches = tuple(_dedupe(found))
    if mismatches:
        wrong_build = {"cpu_only_wheel", "wheel_cuda"} & {m.code for m in mismatches}
        install = gpu_install(env, table) if wrong_build else None
        return Diagnosis(env, mismatches, "mismatch", None, tuple(passed), install)
    if env.is_empty:
        return Diagnosis(env, (), "none")
    ask = _ask(env, table, built, cc)
    if passed and ask is None:
        return Diagnosis(env, (), "consistent", None, tuple(passed))
    return Diagnosis(env, (), "incomplete" if ask else "consistent", ask, tuple(passed))


def _list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _cudnn_mm(label: str) -> tuple[int, ...]:
    return major_minor(label.split("-")[0])


def _package_text(env: Environment) -> str:
    pkgs = gpu_packages(env) or env.packages
    return f"{pkgs[0].name}=={pkgs[0].version}" if pkgs else ""


def _message_values(code: Code, env: Environment, table: CompatTable) -> dict[str, str | None]:
    """The versions a library's message is about, as the paste shows them (the message alone names none)."""
    built = build_cuda(env, table)
    machine = machine_cuda(env)
    one_machine = machine[0] if len(machine) == 1 else None
    build = env.build_cuda or (built[0] if built else None) or env.image_cuda
    if code == "driver_too_old":
        return {
            "driver": env.driver,
            "driver_cuda": env.cuda_driver_api,
            "cuda": env.cuda_runtime or build or one_machine,
            "package": _package_text(env) or None,  # the build whose CUDA the driver cannot run
            "gpu": env.gpus[0] if len(env.gpus) == 1 else None,  # the GPU the new driver must support
        }
    if code == "compute_capability":
        known = compute_capabilities(env, table)
        gpu, cc = (known[0][0], known[0][1]) if len(known) == 1 else (env.gpus[0] if env.gpus else None, None)
        return {
            "compute_capability": env.compute_capability or cc,
            "gpu": gpu or None,
            "cuda": env.cuda_runtime or build or one_machine,
            "build_arch": " ".join(env.build_arch) or None,
            "gpu_arch": env.gpu_arch,  # the framework's name for the GPU's architecture ("Pascal")
            "package": _package_text(env) or None,  # the build that lacks this GPU's code
            "driver": env.driver,  # it decides which newer build the fix may install
            "min_cuda": _first_cuda_for(env.compute_capability or cc or "", table),
        }
    if code == "cudnn_cuda":
        # A toolkit other than the runtime loaded is the clue that libraries come from another install.
        other = [t for t in env.cuda_toolkit if env.cuda_runtime and major_minor(t) != major_minor(env.cuda_runtime)]
        return {
            "cudnn": env.cudnn_loaded,
            "build_cudnn": env.build_cudnn,
            "cuda": env.cuda_runtime or one_machine,
            "toolkit": ", ".join(other) or None,
        }
    if code == "wheel_cuda":
        # An extension build names the toolkit it found (read first among the toolkits): that is the conflict.
        found = machine[0] if "torch_extension_cuda" in env.signals and machine else one_machine
        return {"build_cuda": env.build_cuda, "cuda": env.cuda_runtime or found}
    return {"package": _package_text(env) or None}


def _first_cuda_for(cc: str, table: CompatTable) -> str | None:
    """The first CUDA release that compiles for a compute capability (the lowest ``cuda_arch`` row whose
    ``max_cc`` reaches it): 8.6 -> 11.1."""
    want = major_minor(cc)
    if len(want) < 2:
        return None

    def start(r: Row) -> tuple[int, ...]:
        return major_minor(r.get("cuda").split("-")[0])

    rows = [r for r in table.of("cuda_arch") if r.get("max_cc") and major_minor(r.get("max_cc")) >= want]
    if not rows:
        return None
    first = min(rows, key=start)
    # Only "first" when an earlier row shows a CUDA that could not: the table's oldest row (9.0 for 6.1) says
    # nothing about the CUDA before it (CUDA 8.0 already compiles for 6.1).
    if not any(r.get("max_cc") and start(r) < start(first) for r in table.of("cuda_arch")):
        return None
    return first.get("cuda").split("-")[0]


def _driver_minimum(env: Environment, row: Row) -> str | None:
    """The minimum driver the row names for this platform (both when the OS is unknown): '440.33' / '>= 525'."""
    windows = on_windows(env)
    if row.get("linux_min"):
        if windows is None:
            return f"{row.get('linux_min')} (Linux) / {row.get('windows_min')} (Windows)"
        return row.get("windows_min") if windows else row.get("linux_min")
    exact = row.get("minor_compat_windows" if windows else "minor_compat_linux")
    if exact and windows is not None:
        return exact
    return row.get("branch_min").replace(">=", ">= ") or None


def _driver_covers_build(env: Environment, table: CompatTable) -> bool:
    """The driver shown is new enough, by NVIDIA's table, for the CUDA the framework build needs (and for what the
    framework reports as its runtime): error 35 then comes from something the paste does not show."""
    built = build_cuda(env, table)
    needs = [c for c in (env.cuda_runtime, built[0] if built else None) if c]
    if not env.driver or not needs:
        return False
    verdicts = [_driver_verdict(env, c, table) for c in needs]
    return all(v is not None and v[0] for v in verdicts)


def _family_row(cuda: str, table: CompatTable) -> Source | None:
    for row in table.of("driver"):
        if row.get("cuda") == f"{major_minor(cuda)[0]}.x":
            return row.source
    return None


def _driver_verdict(env: Environment, cuda: str, table: CompatTable) -> tuple[bool, Row] | None:
    """(driver new enough?, the row) for the CUDA needed; None when the table has no row for it.

    From CUDA 11 on, a driver of the family's branch runs every minor release (minor-version compatibility), so the
    family row decides; for 10.x and older the toolkit's own row does."""
    driver = vtuple(env.driver or "")
    if not driver:
        return None
    need = major_minor(cuda)
    if env.driver_api_from_framework and env.cuda_driver_api and major_minor(env.cuda_driver_api) >= need:
        # The framework reports what the driver stack supports (including a forward-compatibility package).
        return None
    windows = on_windows(env)
    if need and need[0] >= 11:
        for row in table.of("driver"):
            if row.get("cuda") == f"{need[0]}.x":
                exact = row.get("minor_compat_windows" if windows else "minor_compat_linux")
                branch = vtuple(row.get("branch_min").lstrip(">="))
                if exact and windows is not None:
                    return driver >= vtuple(exact), row
                if branch:
                    return driver[:1] >= branch[:1], row
        return None
    for row in table.of("driver"):
        if major_minor(row.get("cuda")) == need and row.get("linux_min"):
            mins = [vtuple(row.get("linux_min")), vtuple(row.get("windows_min"))]
            limit = mins[1] if windows else mins[0] if windows is False else min(mins)
            return driver >= limit, row
    return None


_SO_VERSION = re.compile(r"^lib(cudart|cudnn|cublas)\w{0,20}\.so\.(\d{1,2})")
_DLL_VERSION = re.compile(r"^(cudnn|cudart|cublas)\w{0,20}?64_(\d{1,2})\d{0,2}\.dll$", re.IGNORECASE)


_SONAME_VERSION = re.compile(r"\.so\.(\d{1,2}(?:\.\d{1,2})?)|64_(\d{1,3})\.dll$", re.IGNORECASE)


def _library_version(lib: str) -> str | None:
    """The version a library's file name asks for: libcudart.so.10.2 -> '10.2', libcudnn.so.7 -> '7',
    cudart64_110.dll -> '11.0', cudnn64_7.dll -> '7'."""
    m = _SONAME_VERSION.search(lib)
    if not m:
        return None
    if m.group(1):
        return m.group(1)
    digits = m.group(2)
    return f"{digits[:-1]}.{digits[-1]}" if len(digits) >= 3 and "cudnn" not in lib.lower() else digits


def _library_versions(env: Environment) -> dict[str, tuple[str, int]]:
    """Missing libraries whose name carries the major they were built against: libcudart.so.11.0 -> CUDA 11,
    cudnn64_7.dll -> cuDNN 7, cudart64_110.dll -> CUDA 11."""
    out: dict[str, tuple[str, int]] = {}
    for lib in env.missing_libraries:
        m = _SO_VERSION.match(lib) or _DLL_VERSION.match(lib)
        if not m:
            continue
        kind = m.group(1).lower()
        digits = m.group(2)
        if kind == "cudnn":
            out[lib] = ("cudnn", int(digits))
        elif kind == "cudart" and lib.endswith(".dll"):
            out[lib] = ("cuda", int(re.search(r"64_(\d{2,3})", lib).group(1)[:-1]))  # type: ignore[union-attr]
        elif kind == "cudart":
            out[lib] = ("cuda", int(digits))
    return out


def _tf_windows_cpu(env: Environment, table: CompatTable) -> tuple[str, Source, str] | None:
    """TensorFlow after the row's last native-Windows GPU release (2.10) has no GPU build on Windows (release note)."""
    if not on_windows(env) or not env.gpu_intent:
        return None
    for row in table.of("wheel_note"):
        last = vtuple(row.get("windows_gpu_last"))
        if row.get("package") != "tensorflow" or not last:
            continue
        for p in env.packages:
            if p.name in ("tensorflow", "tensorflow-any") and vtuple(p.version)[:2] > last[:2]:
                return f"tensorflow=={p.version}", row.source, row.get("windows_gpu_last")
    return None


def _dedupe(found: list[Mismatch]) -> list[Mismatch]:
    """One finding per code: the one naming more values, and of two alike a library's own message; the values the
    other findings of that code read and it does not name are added, so the reply names every conflicting value."""
    best: dict[str, Mismatch] = {}
    for m in found:
        held = best.get(m.code)
        if held is None or (len(m.values), m.evidence == "message") > (len(held.values), held.evidence == "message"):
            best[m.code] = m
    out = []
    for code in (c for c in CODES if c in best):
        chosen = best[code]
        values = dict(chosen.values)
        for m in found:
            if m.code == code:
                values |= {k: v for k, v in m.values.items() if k not in values}
        out.append(replace(chosen, values=MappingProxyType(values)))
    return out


def _row_value(source: Source, table: CompatTable, key: str) -> str:
    """A field of the table row a source names (the wheel row's cuDNN), "" when the row or field is absent."""
    row = next((r for r in table.rows if r.source is source), None)
    return row.get(key) if row is not None else ""


def _ask(
    env: Environment, table: CompatTable, built: tuple[str, Source | None] | None, cc: tuple[str, Source | None] | None
) -> Ask | None:
    """The one command whose output decides a check that lacks one value."""
    has_build = built is not None or bool(gpu_packages(env))
    if (
        any(gpu_row(g, table) is None for g in env.gpus)
        and not env.compute_capability
        and (has_build or machine_cuda(env))
    ):
        return "gpu_query"
    if has_build and not env.driver and not env.cuda_driver_api:
        return "nvidia_smi"
    if (
        (env.driver or env.cuda_driver_api)
        and not env.packages
        and not env.cuda_runtime
        and built is None
        and env.image_cuda is None
    ):
        return "pip_list"
    if env.packages and not machine_cuda(env) and not env.cuda_driver_api and env.gpu_intent:
        return "run_check"
    return None
