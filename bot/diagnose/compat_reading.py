"""What an environment needs and has, as the table reads it: the CUDA the framework build was made for, the CUDA on
the machine, each GPU's compute capability, the row of a library message.

Unknown stays unknown: a value the paste does not show, or a model or version the table has no row for, gives None.

    >>> from bot.diagnose.environment import read_environment
    >>> from bot.diagnose.compat_table import table_for
    >>> env = read_environment("pip list\\npaddlepaddle-gpu 2.6.1.post120\\nnvcc: Cuda compilation tools, release 11.8")
    >>> build_cuda(env, table_for(None))[0], machine_cuda(env)
    ('12.0', ('11.8',))
"""

from __future__ import annotations

import re

from bot.diagnose.compat_table import CompatTable, Row, Source, in_range, major_minor, vtuple
from bot.records import Environment, Package


def on_windows(env: Environment) -> bool | None:
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
    windows = on_windows(env)
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
    cudas = {major_minor(r.get("cuda")) + (0,) * (2 - len(major_minor(r.get("cuda")))) for r in rows}
    if len(cudas) != 1:
        return None  # no row, or the platforms' rows differ and the OS is unknown
    return rows[0].get("cuda"), rows[0].source


def bundles_cuda(env: Environment) -> bool:
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
            row = gpu_row(gpu, table)
            if row is not None and major_minor(row.get("compute_capability")) == major_minor(env.compute_capability):
                named = gpu
                break
        return ((named, env.compute_capability, None),)
    out: dict[str, tuple[str, str, Source | None]] = {}
    for name in env.gpus:
        row = gpu_row(name, table)
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
        or all(gpu_row(g, table) for g in env.gpus)
    ):
        return known[0][1], known[0][2]
    return None


def _norm_model(name: str) -> str:
    name = re.sub(r"\b(?:nvidia|geforce|tesla)\b", " ", name.lower())
    return re.sub(r"[\s\-_]+", "", name).removesuffix("...")


def gpu_row(name: str, table: CompatTable) -> Row | None:
    """The row whose model is the printed name (NVIDIA/GeForce/Tesla prefixes and spacing ignored; a printed
    suffix such as -PCIE-40GB, -SXM2, 16GB or Laptop GPU is allowed, a different model number is not)."""
    printed = _norm_model(name)
    best: Row | None = None
    for row in table.of("gpu"):
        model = _norm_model(row.get("model"))
        if not model:
            continue
        same = printed == model or (
            # A laptop part has its desktop model's architecture ("RTX 3050 Laptop GPU" is 8.6 like the RTX 3050).
            printed.startswith(model)
            and re.match(r"(?:pcie|sxm|\d{1,3}gb|laptop|mobile|maxq|$)", printed[len(model) :])
        )
        if same and (best is None or len(model) > len(_norm_model(best.get("model")))):
            best = row
    return best


def arch_row(cuda: str, table: CompatTable) -> Row | None:
    t = major_minor(cuda)
    for row in table.of("cuda_arch"):
        if row.get("max_cc") and in_range(t, row.get("cuda")):
            return row
    return None


def message_source(key: str, table: CompatTable) -> Source | None:
    for row in table.of("message"):
        if row.get("key") == key:
            return row.source
    return None
