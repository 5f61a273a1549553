"""Check an :class:`~environment.Environment` against the compatibility table; every finding names its source row.

The table is data (``compat.toml``): NVIDIA's minimum driver per CUDA toolkit, compute capability per GPU model, the
compute capabilities a CUDA toolkit compiles for, cuDNN <-> CUDA support, the frameworks' tested builds, and the
library messages that are themselves evidence (CUDA error 35, Paddle's architecture warning …). A company adds rows
for its own images and wheels in a second file; :func:`load_table` reads both, company rows first.

    >>> from bot.engine.environment import read_environment
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
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from bot.records import Environment, Package

SHIPPED_TABLE = Path(__file__).resolve().parents[1] / "data" / "compat.toml"
COMPANY_TABLE = "compat.toml"  # a company's own rows, in the knowledge-base folder (seeds/compat.toml)

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

KINDS = ("driver", "gpu", "cuda_arch", "cudnn", "wheel", "wheel_note", "message", "install")


@dataclass(frozen=True)
class Source:
    """A table row a finding rests on: its kind and key, the official page, the copy it was read from, the date."""

    kind: str
    key: str
    url: str
    via: str = ""
    read: str = ""
    note: str = ""


@dataclass(frozen=True)
class Row:
    """One table row: its kind, its fields as read (strings or lists), and where it came from."""

    kind: str
    data: Mapping[str, object]
    source: Source

    def get(self, key: str) -> str:
        value = self.data.get(key, "")
        return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class CompatTable:
    rows: tuple[Row, ...]

    def of(self, kind: str) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.kind == kind)


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
class Install:
    """The GPU build that fits the machine, as the official install page lists it: ``package`` is the pip
    requirement (``paddlepaddle-gpu==2.6.1.post120``), ``option`` where pip finds it (``-f …`` / ``-i …``, or ""),
    ``cuda`` the CUDA it was built for, ``platform`` the page's platform, ``source`` the wheel row."""

    package: str
    option: str
    cuda: str
    platform: str
    source: Source
    replaces: str = ""  # the installed package to uninstall first ("paddlepaddle"), when it is another name
    machine: str = ""  # the machine's CUDA the choice rests on (the toolkit, else the newest the driver runs)
    driver: str = ""


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


# --- the table ---------------------------------------------------------------------------------------------------

_KEY_FIELD = {
    "driver": "cuda",
    "gpu": "model",
    "cuda_arch": "cuda",
    "cudnn": "cudnn",
    "wheel": "version",
    "wheel_note": "package",
    "message": "key",
    "install": "package",
}


def table_from_toml(text: str, *, origin: str = "compat.toml") -> CompatTable:
    """Rows of every known kind; a row without ``source`` is refused with the file and the fix named."""
    data = tomllib.loads(text)
    rows: list[Row] = []
    for kind in KINDS:
        for i, raw in enumerate(data.get(kind, ())):
            url = raw.get("source", "")
            if not url:
                raise ValueError(
                    f'{origin}: [[{kind}]] row {i + 1} has no source. Add source = "<URL of the page read>".'
                )
            key = str(raw.get(_KEY_FIELD[kind], ""))
            if kind == "wheel":
                key = f"{raw.get('package', '')}=={key} {raw.get('variant', '')} {raw.get('platform', '')}".strip()
            rows.append(
                Row(
                    kind,
                    MappingProxyType(dict(raw)),
                    Source(kind, key, url, raw.get("via", ""), str(raw.get("read", "")), raw.get("note", "")),
                )
            )
    return CompatTable(tuple(rows))


def load_table(paths: Iterable[Path]) -> CompatTable:
    """Rows of every file that exists, the later files' rows first (a company's seeds/compat.toml wins)."""
    tables = [table_from_toml(p.read_text(encoding="utf-8"), origin=str(p)) for p in paths if p.exists()]
    rows: list[Row] = []
    for t in reversed(tables):
        rows.extend(t.rows)
    return CompatTable(tuple(rows))


def table_for(seeds_dir: Path | None) -> CompatTable:
    """The shipped table with the company's rows from ``seeds_dir/compat.toml`` first (read again when a file
    changes)."""
    paths = [SHIPPED_TABLE] + ([Path(seeds_dir) / COMPANY_TABLE] if seeds_dir is not None else [])
    stamps = tuple((str(p), p.stat().st_mtime_ns if p.exists() else 0) for p in paths)
    return _cached_table(stamps)


@lru_cache(maxsize=4)
def _cached_table(stamps: tuple[tuple[str, int], ...]) -> CompatTable:
    return load_table([Path(p) for p, _ in stamps])


# --- versions ----------------------------------------------------------------------------------------------------


def vtuple(version: str) -> tuple[int, ...]:
    """'450.80.02' -> (450, 80, 2); '11.2 update 1' -> (11, 2); non-numbers end the tuple."""
    out: list[int] = []
    for part in re.split(r"[.\s]", version.strip()):
        if not part.isdigit():
            break
        out.append(int(part))
    return tuple(out)


def _mm(version: str) -> tuple[int, ...]:
    return vtuple(version)[:2]


def _in_range(cuda: tuple[int, ...], spec: str) -> bool:
    """'10.0-10.2' or '11.0' or '12.x' contains cuda (major, minor)."""
    spec = spec.strip()
    if spec.endswith(".x"):
        return bool(cuda) and cuda[0] == int(spec[:-2])
    lo, _, hi = spec.partition("-")
    lo_t, hi_t = _mm(lo), _mm(hi or lo)
    return len(cuda) >= 2 and lo_t <= cuda[:2] <= hi_t


def _windows(env: Environment) -> bool | None:
    if env.wsl:
        return False
    if env.os is None:
        return None
    return env.os.lower().startswith("win")


# --- what the environment needs ----------------------------------------------------------------------------------


def gpu_packages(env: Environment) -> tuple[Package, ...]:
    return tuple(
        p
        for p in env.packages
        if p.name in ("paddlepaddle-gpu", "tensorflow-gpu") or p.variant.startswith(("post", "cu"))
    )


def build_cuda(env: Environment, table: CompatTable) -> tuple[str, Source | None] | None:
    """CUDA the framework build was made for: printed, in the version string's suffix or image tag, or the table's
    row for that version and platform. None when it cannot be read (several candidate versions count as unknown)."""
    if env.build_cuda:
        return env.build_cuda, None
    candidates = [p for p in env.packages if p.name in ("paddlepaddle-gpu", "torch", "paddle", *_TF_GPU_NAMES)]
    versions = {p.version for p in candidates}
    if len(versions) != 1:
        return None
    pkg = candidates[0]
    if pkg.variant.startswith("cu") and pkg.variant[2:].isdigit():
        digits = pkg.variant[2:]
        return f"{digits[:-1]}.{digits[-1]}", None
    windows = _windows(env)
    if pkg.name in _TF_GPU_NAMES:
        return _tf_build_cuda(pkg, windows, table)
    base = pkg.version.split("+")[0]
    base = re.sub(r"\.(post\d{2,3}|cu\d{3})$", "", base)
    for row in table.of("wheel"):
        package = row.get("package")
        if pkg.name == "paddle" and package != "paddlepaddle-gpu":
            continue
        if pkg.name != "paddle" and package != pkg.name:
            continue
        if row.get("version") != base:
            continue
        variant = row.get("variant")
        platform = row.get("platform")
        if pkg.variant.startswith("post"):
            if variant != pkg.variant:
                continue
        elif variant and not variant.startswith("(none"):
            continue
        if windows is None and package.startswith("paddle"):
            continue  # a plain Paddle version differs by platform: unknown without the OS
        if windows and "windows" not in platform:
            continue
        if windows is False and "linux" not in platform:
            continue
        if row.get("cuda"):
            return row.get("cuda"), row.source
        default = row.get("pypi_default_linux")
        if package == "torch" and not pkg.variant and windows is False and default[2:].isdigit():
            # A plain torch version from PyPI on Linux is the page's wheel without a +cuXXX suffix.
            return f"{default[2:-1]}.{default[-1]}", row.source
    if pkg.variant.startswith("post"):
        # The table names the suffix's CUDA for other versions of the same package: the suffix means the same build.
        for row in table.of("wheel"):
            if row.get("variant") == pkg.variant and row.get("cuda") and row.get("package") == "paddlepaddle-gpu":
                return row.get("cuda"), row.source
    return None


# TensorFlow names whose build may carry CUDA: tensorflow-gpu, tensorflow from 2.1 (its release note: "The
# tensorflow pip package now includes GPU support by default"), and a version printed without the package name.
_TF_GPU_NAMES = ("tensorflow", "tensorflow-gpu", "tensorflow-any")
_TF_GPU_IN_PLAIN_PACKAGE = (2, 1)


def _tf_build_cuda(pkg: Package, windows: bool | None, table: CompatTable) -> tuple[str, Source] | None:
    """CUDA of TensorFlow's tested GPU build for the package's major.minor (the tables list one row per minor, as
    tensorflow-X on Linux from 2.0 and tensorflow_gpu-X otherwise: the same GPU build). Without the OS, only when
    the platforms' rows agree. A plain ``tensorflow`` before 2.1 was the CPU package: no CUDA."""
    want = vtuple(pkg.version)[:2]
    if pkg.name == "tensorflow" and want < _TF_GPU_IN_PLAIN_PACKAGE:
        return None
    rows = [
        r
        for r in table.of("wheel")
        if r.get("package") in ("tensorflow", "tensorflow-gpu")
        and vtuple(r.get("version"))[:2] == want
        and r.get("cuda")
        and (windows is None or ("windows" in r.get("platform")) == windows)
    ]
    cudas = {_mm(r.get("cuda")) + (0,) * (2 - len(_mm(r.get("cuda")))) for r in rows}
    if len(cudas) != 1:
        return None  # no row, or the platforms' rows differ and the OS is unknown
    return rows[0].get("cuda"), rows[0].source


def _bundles_cuda(env: Environment) -> bool:
    """PyTorch wheels, Paddle from 3.0, and CUDA installed as pip wheels (tensorflow[and-cuda]) bring their own CUDA
    runtime: the machine's toolkit does not decide."""
    if "pip_cuda_libs" in env.signals:
        return True
    for p in env.packages:
        if p.name == "torch" or (p.name in ("paddlepaddle-gpu", "paddle") and vtuple(p.version)[:1] >= (3,)):
            return True
    return False


def machine_cuda(env: Environment) -> tuple[str, ...]:
    """CUDA on the machine as the framework sees it: the runtime it loaded, else the toolkits the paste names."""
    if env.cuda_runtime:
        return (env.cuda_runtime,)
    return env.cuda_toolkit


def compute_capabilities(env: Environment, table: CompatTable) -> tuple[tuple[str, str, Source | None], ...]:
    """(gpu, compute capability, row) for each GPU whose capability is known: printed by the framework, else the
    table's row for the model named. Models without a row are left out (unknown, not guessed)."""
    if env.compute_capability:
        # The GPU the framework printed it for: the one named, or of several names the one whose row has it.
        models = {_norm_model(g) for g in env.gpus}
        named = env.gpus[0] if len(models) == 1 else ""
        for gpu in env.gpus if not named else ():
            row = _gpu_row(gpu, table)
            if row is not None and _mm(row.get("compute_capability")) == _mm(env.compute_capability):
                named = gpu
                break
        return ((named, env.compute_capability, None),)
    out: dict[str, tuple[str, str, Source | None]] = {}
    for name in env.gpus:
        row = _gpu_row(name, table)
        if row is not None:
            out.setdefault(row.get("model"), (name, row.get("compute_capability"), row.source))
    return tuple(out.values())


def compute_capability(env: Environment, table: CompatTable) -> tuple[str, Source | None] | None:
    """The one capability of every GPU named, when all are known and agree; else None."""
    known = compute_capabilities(env, table)
    ccs = {cc for _, cc, _ in known}
    if len(ccs) == 1 and (
        env.compute_capability
        or len(known) == len({_norm_model(g) for g in env.gpus})
        or all(_gpu_row(g, table) for g in env.gpus)
    ):
        return known[0][1], known[0][2]
    return None


def _norm_model(name: str) -> str:
    name = re.sub(r"\b(?:nvidia|geforce|tesla)\b", " ", name.lower())
    return re.sub(r"[\s\-_]+", "", name).removesuffix("...")


def _gpu_row(name: str, table: CompatTable) -> Row | None:
    """The row whose model is the printed name (NVIDIA/GeForce/Tesla prefixes and spacing ignored; a printed
    suffix such as -PCIE-40GB, -SXM2 or 16GB is allowed, a different model number is not)."""
    printed = _norm_model(name)
    best: Row | None = None
    for row in table.of("gpu"):
        model = _norm_model(row.get("model"))
        if not model:
            continue
        same = printed == model or (
            printed.startswith(model) and re.match(r"(?:pcie|sxm|\d{1,3}gb|$)", printed[len(model) :])
        )
        if same and (best is None or len(model) > len(_norm_model(best.get("model")))):
            best = row
    return best


def _arch_row(cuda: str, table: CompatTable) -> Row | None:
    t = _mm(cuda)
    for row in table.of("cuda_arch"):
        if row.get("max_cc") and _in_range(t, row.get("cuda")):
            return row
    return None


def _message(key: str, table: CompatTable) -> Source | None:
    for row in table.of("message"):
        if row.get("key") == key:
            return row.source
    return None


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
            source = _message(signal, table)
            if source is None and signal == "tf_not_built_with_cuda":
                source = _message("not_compiled_with_cuda", table)  # a table without TensorFlow's own row
            claim(code, _message_values(code, env, table), source, "message")

    built = build_cuda(env, table)
    machine = machine_cuda(env)
    cc = compute_capability(env, table)

    # driver_too_old: the driver is older than the minimum for the CUDA the build (or the loaded runtime) needs.
    # Without the build's CUDA, the one toolkit shown is the runtime a framework that does not bring its own loads.
    toolkit_need = machine[0] if len(machine) == 1 and not _bundles_cuda(env) else None
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
                    },
                    row.source,
                    "table",
                )
    elif env.cuda_driver_api and need and env.driver_api_from_framework and not works:
        if _mm(env.cuda_driver_api) < _mm(need) and _mm(env.cuda_driver_api)[:1] < _mm(need)[:1]:
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
        row = _arch_row(arch_cuda, table)
        if row is not None:
            too_new = [
                (g, c)
                for g, c, _ in known_cc
                if _mm(c)[:1] > _mm(row.get("max_cc"))[:1] or _mm(c) < _mm(row.get("min_cc") or "0")
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
                    },
                    row.source,
                    "table",
                )
            else:
                passed.append("compute_capability")

    # wheel_cuda: the build's CUDA major differs from every CUDA the machine shows; or a missing library's soname
    # asks for another major than the machine has.
    if built and machine and not works and not env.cuda_runtime and not _bundles_cuda(env):
        # Libraries are found by soname: libcudart.so.11.0 serves every 11.x, but 10.x and older name the minor
        # (libcudart.so.10.1), so TensorFlow builds for CUDA 10 and older need the same minor.
        exact = _mm(built[0])[0] <= 10 and any(p.name.startswith("tensorflow") for p in env.packages)
        width = 2 if exact else 1
        majors = {_mm(m)[:width] for m in machine if len(_mm(m)) >= width}
        if majors and _mm(built[0])[:width] not in majors:
            build_cudnn = built[1] is not None and built[1].kind == "wheel" and _row_value(built[1], table, "cudnn")
            claim(
                "wheel_cuda",
                {
                    "build_cuda": built[0],
                    "cuda": ", ".join(machine),
                    "build_cudnn": build_cudnn or None,
                    "cudnn": ", ".join(env.cudnn) if build_cudnn else None,
                    "package": _package_text(env),
                },
                built[1] or _message("paddle_cuda_older", table),
                "table",
            )
        else:
            passed.append("wheel_cuda")
    lib_need = _library_versions(env)
    if lib_need:
        for lib, (what, major) in lib_need.items():
            have = env.cudnn if what == "cudnn" else machine
            have_majors = {_mm(h)[:1] for h in have}
            if have_majors and (major,) not in have_majors:
                claim(
                    "wheel_cuda",
                    {
                        "library": lib,
                        what: ", ".join(have),
                        f"build_{what}": _library_version(lib),
                        "driver": env.driver,  # what the machine runs, for the build the reply suggests
                    },
                    _message("library_not_found", table),
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
            },
            _message("library_not_found", table),
            "message",
        )

    # cudnn_cuda: the cuDNN on the machine is not listed for the machine's CUDA (rows of the same cuDNN major.minor).
    cudnn = env.cudnn_loaded or (env.cudnn[0] if len(env.cudnn) == 1 else None)
    cuda_for_cudnn = env.cuda_runtime or (machine[0] if len(machine) == 1 else None)
    if cudnn and cuda_for_cudnn and not works:
        rows = [r for r in table.of("cudnn") if _cudnn_mm(r.get("cudnn")) == _mm(cudnn)]
        if rows:
            cuda_majors = {_mm(c)[:1] for r in rows for c in _list(r.data.get("cuda"))}
            if _mm(cuda_for_cudnn)[:1] not in cuda_majors:
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
        row = (_message(own, table) if own else None) or _message("not_compiled_with_cuda", table)
        claim("cpu_only_wheel", {"package": f"{cpu_pkgs[0].name}=={cpu_pkgs[0].version}"}, row, "table")
    tf_windows = _tf_windows_cpu(env, table)
    if tf_windows is not None and not works:
        claim("cpu_only_wheel", {"package": tf_windows[0], "os": env.os}, tf_windows[1], "table")

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


_PADDLE_NAMES = ("paddlepaddle", "paddlepaddle-gpu", "paddle")


def gpu_install(env: Environment, table: CompatTable) -> Install | None:
    """The Paddle GPU build of the installed version that runs on this machine: the install page's wheel of the same
    major.minor whose CUDA has the machine's CUDA major and is not newer than it (the toolkit shown, else the newest
    CUDA the driver runs), the newest such; the pip option from the page's ``[[install]]`` row for a ``postNNN``
    build, the row's own index for a 3.x build. None when a value is missing or the table has no such wheel.

    >>> from bot.engine.environment import read_environment
    >>> env = read_environment("Driver Version: 535.104.05   CUDA Version: 12.2\\npaddlepaddle 2.6.1\\nUbuntu 22.04")
    >>> found = gpu_install(env, table_for(None))
    >>> found.package, found.option, found.replaces
    ('paddlepaddle-gpu==2.6.1.post120', '-f https://www.paddlepaddle.org.cn/whl/linux/mkl/avx/stable.html', 'paddlepaddle')
    """
    pkgs = [p for p in env.packages if p.name in _PADDLE_NAMES]
    versions = {re.sub(r"\.post\d{2,3}$", "", p.version.split("+")[0]) for p in pkgs}
    if len(versions) != 1:
        return None
    version = versions.pop()
    machine = machine_cuda(env)
    have = _mm(machine[0]) if len(machine) == 1 else _mm(env.cuda_driver_api or "")
    if len(have) < 2 or len(vtuple(version)) < 2:
        return None
    platform = "windows" if _windows(env) else "linux"
    best: Row | None = None
    for row in table.of("wheel"):
        cuda = _mm(row.get("cuda"))
        if (
            row.get("package") != "paddlepaddle-gpu"
            or vtuple(row.get("version"))[:2] != vtuple(version)[:2]
            or platform not in row.get("platform")
            or len(cuda) < 2
            or cuda[0] != have[0]
            or cuda > have
        ):
            continue
        if best is None or cuda > _mm(best.get("cuda")):
            best = row
    if best is None:
        return None
    variant = best.get("variant")
    replaces = next((p.name for p in pkgs if p.name == "paddlepaddle"), "")
    if variant.startswith("post"):
        option = next(
            (r.get("option") for r in table.of("install") if r.get("platform") == platform and _covers(r, version)),
            None,
        )
        if option is None:
            return None
        package = f"paddlepaddle-gpu=={version}.{variant}"
    else:
        index = best.get("index_url")
        package, option = f"paddlepaddle-gpu=={version}", f"-i {index}" if index else ""
    shown = machine[0] if len(machine) == 1 else env.cuda_driver_api or ""
    return Install(package, option, best.get("cuda"), platform, best.source, replaces, shown, env.driver or "")


def _covers(row: Row, version: str) -> bool:
    """An ``[[install]]`` row's ``versions`` ("2.0-2.6") holds the version's major.minor."""
    lo, _, hi = row.get("versions").partition("-")
    return vtuple(lo)[:2] <= vtuple(version)[:2] <= vtuple(hi or lo)[:2]


def _list(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _cudnn_mm(label: str) -> tuple[int, ...]:
    return _mm(label.split("-")[0])


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
        }
    if code == "compute_capability":
        known = compute_capabilities(env, table)
        gpu, cc = (known[0][0], known[0][1]) if len(known) == 1 else (env.gpus[0] if env.gpus else None, None)
        return {
            "compute_capability": env.compute_capability or cc,
            "gpu": gpu or None,
            "cuda": env.cuda_runtime or build or one_machine,
            "build_arch": " ".join(env.build_arch) or None,
            "min_cuda": _first_cuda_for(env.compute_capability or cc or "", table),
        }
    if code == "cudnn_cuda":
        # A toolkit other than the runtime loaded is the clue that libraries come from another install.
        other = [t for t in env.cuda_toolkit if env.cuda_runtime and _mm(t) != _mm(env.cuda_runtime)]
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
    want = _mm(cc)
    if len(want) < 2:
        return None
    rows = [r for r in table.of("cuda_arch") if r.get("max_cc") and _mm(r.get("max_cc")) >= want]
    if not rows:
        return None
    first = min(rows, key=lambda r: _mm(r.get("cuda").split("-")[0]))
    return first.get("cuda").split("-")[0]


def _driver_minimum(env: Environment, row: Row) -> str | None:
    """The minimum driver the row names for this platform (both when the OS is unknown): '440.33' / '>= 525'."""
    windows = _windows(env)
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
        if row.get("cuda") == f"{_mm(cuda)[0]}.x":
            return row.source
    return None


def _driver_verdict(env: Environment, cuda: str, table: CompatTable) -> tuple[bool, Row] | None:
    """(driver new enough?, the row) for the CUDA needed; None when the table has no row for it.

    From CUDA 11 on, a driver of the family's branch runs every minor release (minor-version compatibility), so the
    family row decides; for 10.x and older the toolkit's own row does."""
    driver = vtuple(env.driver or "")
    if not driver:
        return None
    need = _mm(cuda)
    if env.driver_api_from_framework and env.cuda_driver_api and _mm(env.cuda_driver_api) >= need:
        # The framework reports what the driver stack supports (including a forward-compatibility package).
        return None
    windows = _windows(env)
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
        if _mm(row.get("cuda")) == need and row.get("linux_min"):
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


def _tf_windows_cpu(env: Environment, table: CompatTable) -> tuple[str, Source] | None:
    """TensorFlow after the row's last native-Windows GPU release (2.10) has no GPU build on Windows (release note)."""
    if not _windows(env) or not env.gpu_intent:
        return None
    for row in table.of("wheel_note"):
        last = vtuple(row.get("windows_gpu_last"))
        if row.get("package") != "tensorflow" or not last:
            continue
        for p in env.packages:
            if p.name in ("tensorflow", "tensorflow-any") and vtuple(p.version)[:2] > last[:2]:
                return f"tensorflow=={p.version}", row.source
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
        any(_gpu_row(g, table) is None for g in env.gpus)
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
