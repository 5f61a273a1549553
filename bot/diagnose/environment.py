"""Read the GPU environment a user pastes: versions become one frozen :class:`Environment`.

Recognised, also inside a traceback, a cut table or a later turn: the ``nvidia-smi`` header and GPU rows (ANSI
colours, tabs and box drawing are normalised first), ``nvcc --version``, ``/usr/local/cuda/version.txt``, the
``cudnn.h`` defines, Paddle's ``run_check`` lines (``GPU Compute Capability … Driver API Version … Runtime API
Version``, ``cuDNN Version``, its cuDNN/CUDA/architecture warnings), ``pip list`` / ``pip show`` / ``conda list`` /
``pip install x==y`` lines, ``tf.config.list_physical_devices``, ``tf.sysconfig.get_build_info()``,
``torch.__version__`` with ``+cpu``/``+cuXXX``, missing-library errors (``libcudart.so.11.0``, ``cudnn64_7.dll``,
``libnccl``), Docker image tags, WSL, OS and Python, and plain statements ("cuda 10.2", "CUDA版本：11.3").

    >>> env = read_environment("| NVIDIA-SMI 418.67       Driver Version: 418.67       CUDA Version: 10.1     |")
    >>> env.driver, env.cuda_driver_api
    ('418.67', '10.1')
    >>> read_environment("paddlepaddle-gpu          2.2.2.post112").packages
    (Package(name='paddlepaddle-gpu', version='2.2.2.post112', variant='post112'),)

The patterns are :mod:`bot.diagnose.environment_patterns`; this module decides what each match means.
A value the paste does not show stays ``None``: nothing is guessed here. Only linear-time regular expressions are
used (no nested quantifiers), on input cut to :data:`MAX_ENV_CHARS` before any of them runs.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace

from bot.diagnose.environment_patterns import (
    ANOTHER_VERSION,
    BARE_GPU,
    COLLECT_ENV_CUDA,
    CONDA_LINE,
    CPU_VERSION,
    CUDA_OLDER,
    CUDA_WIN_PATH,
    CUDA_WITH,
    CUDNN_H,
    CUDNN_NOT_LOADED,
    CUDNN_OLDER,
    DOCKER,
    DOCKER_TAG,
    DRIVER_API,
    FRAMEWORK_TEXT,
    GPU_BUILD,
    GPU_WORKS,
    INSUFFICIENT,
    KEYWORD,
    LDCONFIG,
    LIB_DLL,
    LIB_FAIL,
    LIB_SO,
    LINUX_PATH,
    NCCL,
    NEWEST_CUDA_MAJOR,
    NO_GPU,
    NO_KERNEL,
    NOT_COMPILED,
    NVCC,
    OS,
    PADDLE_ARCH,
    PADDLE_CC,
    PADDLE_CUDNN,
    PIP_CUDA,
    PIP_LINE,
    PIP_SHOW,
    PIP_SPEC,
    PY_SITE,
    PYTHON,
    QUERY_GPU,
    RUNTIME_API,
    SMI_CUDA,
    SMI_DRIVER,
    SMI_GPU_ROW,
    SMI_HEAD,
    SOURCE_PATH,
    TAG_CUDA,
    TAG_CUDNN,
    TAG_VERSION,
    TEMPLATE_CUDA,
    TEXT_CUDA,
    TEXT_CUDNN,
    TEXT_DRIVER,
    TEXT_GPU,
    TF_BUILD_CUDA,
    TF_BUILD_CUDNN,
    TF_CUDNN,
    TF_CUDNN_INT,
    TF_DEVICE,
    TF_IS_CUDA,
    TF_JIT,
    TF_LOADED_CUDNN,
    TF_MIN_CC,
    TF_NOT_BUILT,
    TF_TEMPLATE,
    TORCH_ARCH,
    TORCH_ARCH_LIST,
    TORCH_CUDA,
    TORCH_CUDNN,
    TORCH_CUDNN_INT,
    TORCH_EXT_CUDA,
    TORCH_FOUND,
    TORCH_INDEX,
    TORCH_OLD_GPU,
    TORCH_ROCM,
    TORCH_VER,
    VERSION_PRINT,
    VERSION_PRINT_C,
    VERSION_TXT,
    WIN_DRIVER,
    WIN_PATH,
    WSL,
)
from bot.kb.signature import HINT_LINE
from bot.limits import ENVIRONMENT_CHARS as MAX_ENV_CHARS
from bot.limits import ENVIRONMENT_ITEMS as MAX_ITEMS
from bot.limits import ENVIRONMENT_LINE_CHARS as MAX_LINE_CHARS
from bot.records import Environment, Package, Signal

__all__ = ["Environment", "Package", "merge", "normalise", "read_environment"]

GPU_INTENT = re.compile(r"use_gpu|gpu|cuda|显卡|nvidia", re.IGNORECASE)


# --- normalisation -------------------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]{0,32}[A-Za-z]|\[[0-9;]{1,16}m")
_BOX = str.maketrans(
    {c: "|" for c in "│┃║┆┊╎╏┼╪╫╬├┤┣┫╞╡╟╢╠╣┬┴╤╥╦╧╨╩"}
    | {c: "-" for c in "─━═┄┈╌╍"}
    | {c: "+" for c in "┌┐└┘╒╓╔╕╖╗╘╙╚╛╜╝┏┓┗┛"}
)


def normalise(text: str) -> str:
    """Cut to :data:`MAX_ENV_CHARS`, drop ANSI colour codes, turn box drawing into ``| - +`` and tabs into spaces.

    >>> normalise("│ Driver Version: \\x1b[1;32m461.72\\x1b[0m\\t│")
    '| Driver Version: 461.72 |'
    """
    text = text[:MAX_ENV_CHARS]
    return _ANSI.sub("", text).translate(_BOX).replace("\t", " ").replace("\r", "")


# Messages that are a signal by themselves: in the whole text (they may wrap), and on one line.
_TEXT_SIGNALS: tuple[tuple[re.Pattern[str], Signal], ...] = (
    (NOT_COMPILED, "not_compiled_with_cuda"),
    (TF_NOT_BUILT, "tf_not_built_with_cuda"),
    (GPU_BUILD, "gpu_build"),
    (GPU_WORKS, "gpu_works"),
    (NO_GPU, "no_gpu_visible"),
    (PIP_CUDA, "pip_cuda_libs"),
)
_LINE_SIGNALS: tuple[tuple[re.Pattern[str], Signal], ...] = (
    (INSUFFICIENT, "insufficient_driver"),
    (NO_KERNEL, "no_kernel_image"),
    (CPU_VERSION, "paddle_cpu_version"),
)


# Lines whose first group is a value (and, for a library's message, a signal too).
_LINE_VALUES: tuple[tuple[re.Pattern[str], Signal | None, str], ...] = (
    (DRIVER_API, None, "paddle_driver_api"),
    (RUNTIME_API, None, "cuda_runtime"),
    (PADDLE_CUDNN, None, "cudnn_loaded"),
    (CUDA_OLDER, "paddle_cuda_older", "build_cuda"),
    (TF_JIT, "tf_jit_arch", "compute_capability"),
    (TF_MIN_CC, "tf_min_capability", "compute_capability"),
)


def _name(raw: str) -> str:
    return raw.lower().replace("_", "-")


def _variant(version: str) -> str:
    m = re.search(r"(?:\.|\+)(post\d{2,3}|cu\d{2,3}|cpu)$", version)
    return m.group(1) if m else ""


def _add(values: tuple[str, ...], value: str) -> tuple[str, ...]:
    """Append a value unless it is there already (10.2 and 10.2.89 count as one: the first, longer one stays)."""
    if len(values) >= MAX_ITEMS or any(v == value or (v.startswith(value + ".") and "." in value) for v in values):
        return values
    return (*values, value)


def read_environment(text: str) -> Environment:
    """Every version the paste shows, as one :class:`Environment` (pure; linear in the length of ``text``).

    >>> env = read_environment("W0303 device_context.cc:362] Please NOTE: device: 0, GPU Compute Capability: 8.6, "
    ...                        "Driver API Version: 11.2, Runtime API Version: 11.0")
    >>> env.compute_capability, env.cuda_driver_api, env.cuda_runtime
    ('8.6', '11.2', '11.0')
    """
    whole = normalise(text or "")
    lines = whole.split("\n")
    # Only lines holding a keyword are read (with the line after each, for two-line prints such as
    # "Name: …\nVersion: …"): a 5,000-line pip list costs one substring scan per line.
    kept = [i for i, line in enumerate(lines) if KEYWORD.search(line[:MAX_LINE_CHARS].lower())]
    focus_rows = sorted({j for i in kept for j in (i, i + 1) if j < len(lines)})
    text = "\n".join(lines[j][:MAX_LINE_CHARS] for j in focus_rows)
    env: dict[str, object] = {}
    signals: set[Signal] = set()
    toolkit: tuple[str, ...] = ()
    cudnn: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    packages: dict[tuple[str, str], Package] = {}
    libs: tuple[str, ...] = ()
    build_arch: tuple[str, ...] = ()

    def first(key: str, value: str | None) -> None:
        if value and key not in env:
            env[key] = value

    def package(name: str, version: str, variant: str | None = None) -> None:
        """A package as pip names it (the first reading of a name and version stays)."""
        packages.setdefault((name, version), Package(name, version, _variant(version) if variant is None else variant))

    # Whole-text patterns (they may span a line break).
    for m in PIP_SHOW.finditer(text):
        package(_name(m.group(1)), m.group(2))
    for m in CUDNN_H.finditer(text):
        cudnn = _add(cudnn, f"{m.group(1)}.{m.group(2)}")
    extension_cuda = TORCH_EXT_CUDA.search(text)  # the message wraps before "PyTorch (11.3)"
    if extension_cuda:
        signals.add("torch_extension_cuda")
        env["build_cuda"] = extension_cuda.group(2)
    for m in (*VERSION_PRINT.finditer(text), *VERSION_PRINT_C.finditer(text)):
        # tf.__version__ does not say which package (tensorflow, tensorflow-gpu, tensorflow-cpu) printed it.
        name = {"tf": "tensorflow-any", "tensorflow": "tensorflow-any"}.get(m.group(1), m.group(1))
        if name == "paddle" or "+" in m.group(2) or name == "tensorflow-any":
            package(name, m.group(2))
    if m := TORCH_CUDA.search(text):
        value = m.group(1) or m.group(2)
        if value[0].isdigit():
            env["build_cuda"] = value
        elif not TORCH_ROCM.search(text):
            signals.add("torch_cuda_none")
    for m in TF_TEMPLATE.finditer(whole):
        version = m.group(1) or m.group(2)
        package("tensorflow-any", version, "")
    for m in TEMPLATE_CUDA.finditer(whole):
        toolkit = _add(toolkit, m.group(1))
        if m.group(2):
            cudnn = _add(cudnn, m.group(2))
    if m := TF_BUILD_CUDA.search(text):
        env["build_cuda"] = f"{m.group(1)}.{m.group(2)}"
    if m := TF_BUILD_CUDNN.search(text):
        env["build_cudnn"] = m.group(1)
    if m := TF_IS_CUDA.search(text):
        signals.add("gpu_build" if m.group(1) == "True" else "tf_not_built_with_cuda")
    signals |= {signal for pattern, signal in _TEXT_SIGNALS if pattern.search(text)}

    for raw_line in lines:
        if raw_line.count(".") >= 3 and (m := WIN_DRIVER.search(raw_line[:MAX_LINE_CHARS])):
            # NVIDIA's Windows file version ends in the driver number: 23.21.13.9135 -> 391.35.
            first("driver", f"{m.group(3)}{m.group(4)[:2]}.{m.group(5)}")
    for i in kept:
        line = lines[i][:MAX_LINE_CHARS]
        smi_line = "Driver Version" in line or "NVIDIA-SMI" in line
        if (m := SMI_DRIVER.search(line)) or (m := SMI_HEAD.search(line)):
            first("driver", m.group(1))
        if smi_line and (m := SMI_CUDA.search(line)) or (m := SMI_CUDA.search(line)) and "driver" in line.lower():
            first("smi_cuda", m.group(1))
        if m := SMI_GPU_ROW.search(line):
            gpus = _add(gpus, m.group(1).strip().rstrip("."))
        elif m := QUERY_GPU.search(line):
            gpus = _add(gpus, m.group(1).strip())
        elif not smi_line and "|" not in line:
            for m in TEXT_GPU.finditer(line):
                gpus = _add(gpus, m.group(1).strip())
            for m in BARE_GPU.finditer(line):
                number = m.group(1).strip()
                gpus = _add(gpus, f"{'GTX' if number.startswith('1') else 'RTX'} {number}")
        if not smi_line and "API" not in line and (m := TEXT_DRIVER.search(line)):
            first("driver", m.group(1))
        if m := PADDLE_CC.search(line):
            major, minor = m.group(1), m.group(2)
            first("compute_capability", f"{major}.{minor}" if minor is not None else f"{major[:-1]}.{major[-1]}")
        for pattern, signal, key in _LINE_VALUES:
            if m := pattern.search(line):
                first(key, m.group(1))
                if signal is not None:
                    signals.add(signal)
        if (m := CUDNN_OLDER.search(line)) and m.group(1) != f"{m.group(2)}.{m.group(3)}":
            # Paddle also prints this warning when both numbers are the same (8.9 and 8.9): no conflict then.
            signals.add("paddle_cudnn_older")
            first("build_cudnn", m.group(1))
            first("cudnn_loaded", f"{m.group(2)}.{m.group(3)}")
        if m := PADDLE_ARCH.search(line):
            signals.add("paddle_arch")
            for arch in m.group(2).split():
                build_arch = _add(build_arch, arch)
        if m := TORCH_ARCH.search(line):
            signals.add("torch_arch")
            sm = m.group(1)
            first("compute_capability", f"{sm[:-1]}.{sm[-1]}")
        if m := TORCH_ARCH_LIST.search(line):
            for arch in m.group(1).split():
                build_arch = _add(build_arch, arch.removeprefix("sm_"))
        if m := TF_CUDNN.search(line):
            signals.add("tf_cudnn_mismatch")
            first("cudnn_loaded", m.group(1))
            first("build_cudnn", m.group(2))
        if m := TF_CUDNN_INT.search(line):
            signals.add("tf_cudnn_mismatch")
            first("cudnn_loaded", f"{m.group(1)}.{m.group(2)}")
            first("build_cudnn", f"{m.group(3)}.{m.group(4)}")
        if m := TF_DEVICE.search(line):
            gpus = _add(gpus, m.group(1).strip())
            cc = m.group(2) or m.group(5) or (f"{m.group(3)}.{m.group(4)}" if m.group(3) else None)
            first("compute_capability", cc)
        if m := TF_LOADED_CUDNN.search(line):
            digits = m.group(1)
            first("cudnn_loaded", f"{digits[0]}.{int(digits[1:3]) if len(digits) == 5 else int(digits[1])}")
        if (m := TORCH_CUDNN.search(line)) or (m := TORCH_CUDNN_INT.search(line)):
            signals.add("torch_cudnn_mismatch")
            first("build_cudnn", f"{m.group(1)}.{m.group(2)}")
            first("cudnn_loaded", f"{m.group(3)}.{m.group(4)}")
        if m := TORCH_OLD_GPU.search(line):
            signals.add("torch_arch")  # the same check of torch/cuda/__init__.py: no kernels for this GPU
            gpus = _add(gpus, m.group(1).strip())
            first("compute_capability", m.group(2))

        if m := TORCH_FOUND.search(line):
            number = int(m.group(1))
            first("smi_cuda", f"{number // 1000}.{number % 1000 // 10}")
        if m := NVCC.search(line):
            toolkit = _add(toolkit, m.group(1) or m.group(2))
        if (m := VERSION_TXT.search(line)) and "Driver" not in line:
            toolkit = _add(toolkit, m.group(1))
        if m := COLLECT_ENV_CUDA.search(line):
            toolkit = _add(toolkit, m.group(1))
        if m := CUDA_WITH.search(line):
            first("build_cuda", m.group(1))
        elif "API" not in line and "compiled with" not in line.lower():
            for m in TEXT_CUDA.finditer(line):
                if smi_line and ("|" in line or m.group(0).startswith("CUDA Version")):
                    continue  # nvidia-smi's header: the CUDA the driver supports, not a toolkit
                if "." in m.group(1) or int(m.group(1)) <= NEWEST_CUDA_MAJOR:
                    toolkit = _add(toolkit, m.group(1))  # "cuda90" is conda's package name, not CUDA 90
        for m in CUDA_WIN_PATH.finditer(line):
            toolkit = _add(toolkit, m.group(1))
        if "API" not in line and "compiled with" not in line.lower() and "Loaded runtime" not in line:
            for m in TEXT_CUDNN.finditer(line):
                cudnn = _add(cudnn, m.group(1))
        if m := CONDA_LINE.search(line):
            what = m.group(1).lower()
            if "cudnn" in what:
                cudnn = _add(cudnn, m.group(2))
            elif "nccl" in what:
                first("nccl", m.group(2))
            else:
                toolkit = _add(toolkit, m.group(2))
        if m := LDCONFIG.search(line):
            what, version = m.group(1), m.group(2)
            if what == "cudnn":
                cudnn = _add(cudnn, version)
            elif what == "cudart":
                toolkit = _add(toolkit, version)
            else:
                first("nccl", version)
        if m := NCCL.search(line):
            first("nccl", m.group(1) or m.group(2))
        if m := DOCKER_TAG.search(line):
            tag = m.group(1)
            if ":" in tag and ("gpu" in tag or "cuda" in tag) and not SOURCE_PATH.search(tag):
                first("docker_image", tag.strip("`'\" "))
        if (m := PIP_LINE.search(line)) and not ANOTHER_VERSION.match(line, m.end(2)):
            package(_name(m.group(1)), m.group(2))
        for m in PIP_SPEC.finditer(line):
            if ANOTHER_VERSION.match(line, m.end(3)):
                continue  # one of several versions tried
            name, sep, version = _name(m.group(1)), m.group(2), m.group(3)
            if name in ("paddlepaddle", "tensorflow") and not (m.group(1).islower() and sep in ("==", "=", "(")):
                # "PaddlePaddle 2.1.2", "PaddlePaddle: 2.4.1": the framework, not a pinned CPU package.
                name = "paddle" if name == "paddlepaddle" else "tensorflow-any"
            package(name, version)
        if m := TORCH_VER.search(line):
            package("torch", m.group(0), m.group(2))
        if m := TORCH_INDEX.search(line):
            first("torch_index", m.group(1) or m.group(2))
        if not any(p.name.startswith(("paddlepaddle", "tensorflow", "torch")) for p in packages.values()):
            for m in FRAMEWORK_TEXT.finditer(line):
                if ANOTHER_VERSION.match(line, m.end(2)):
                    continue
                name = {
                    "paddle": "paddle",
                    "paddlepaddle": "paddle",
                    "tf": "tensorflow-any",
                    "tensorflow": "tensorflow-any",
                    "pytorch": "torch",
                }.get(m.group(1).lower(), m.group(1).lower())
                first("framework_text", f"{name}=={m.group(2)}")
        # A trace or hint line ("NCCL INFO … No plugin found (libnccl-net.so)", "[Hint: … e.g. a dlopen of
        # libnccl.so]") names a library that might matter, not one that failed to load.
        failed = LIB_FAIL.search(line) and not HINT_LINE.search(line)
        if failed:
            for m in LIB_SO.finditer(line):
                libs = _add(libs, m.group(1))
            for m in LIB_DLL.finditer(line):
                libs = _add(libs, m.group(1))
        if CUDNN_NOT_LOADED.search(line):
            libs = _add(libs, "libcudnn")
        signals |= {signal for pattern, signal in _LINE_SIGNALS if pattern.search(line)}
        if m := OS.search(line):
            first("os", m.group(1))
        if (m := PYTHON.search(line)) or (m := PY_SITE.search(line)):
            first("python", m.group(1))

    if libs:
        signals.add("library_not_found")
    if extension_cuda:
        # The toolkit the extension build found is the one that conflicts: it leads the toolkits read.
        toolkit = (extension_cuda.group(1), *(t for t in toolkit if t != extension_cuda.group(1)))
    index = env.pop("torch_index", None)
    for key, found in list(packages.items()):
        if index and found.name == "torch" and not found.variant:
            packages[key] = Package("torch", found.version, str(index))  # the plain version from that index
    framework_text = env.pop("framework_text", None)
    if framework_text and not packages:
        name, version = str(framework_text).split("==")
        packages[(name, version)] = Package(name, version, _variant(version))
    os_name = env.get("os")
    if os_name is None and WIN_PATH.search(text):
        os_name = "Windows"
    elif os_name is None and LINUX_PATH.search(text):
        os_name = "Linux"
    docker_image = env.get("docker_image")
    build_cuda = env.get("build_cuda")
    build_cudnn = env.get("build_cudnn")
    image_cuda = image_cudnn = None
    if isinstance(docker_image, str):
        if m := TAG_CUDA.search(docker_image):
            image_cuda = m.group(1)
        if m := TAG_CUDNN.search(docker_image):
            image_cudnn = m.group(1)
        if (m := TAG_VERSION.search(docker_image)) and not packages:
            name = "paddlepaddle-gpu" if "paddle" in docker_image else "tensorflow"
            packages[(name, m.group(1))] = Package(name, m.group(1), "")
    paddle_api = env.get("paddle_driver_api")
    return Environment(
        driver=env.get("driver"),  # type: ignore[arg-type]
        cuda_driver_api=paddle_api or env.get("smi_cuda"),  # type: ignore[arg-type]
        driver_api_from_framework=paddle_api is not None,
        cuda_runtime=env.get("cuda_runtime"),  # type: ignore[arg-type]
        cuda_toolkit=toolkit,
        cudnn=cudnn,
        cudnn_loaded=env.get("cudnn_loaded"),  # type: ignore[arg-type]
        build_cuda=build_cuda,  # type: ignore[arg-type]
        build_cudnn=build_cudnn,  # type: ignore[arg-type]
        image_cuda=image_cuda,
        image_cudnn=image_cudnn,
        build_arch=build_arch,
        nccl=env.get("nccl"),  # type: ignore[arg-type]
        gpus=gpus,
        compute_capability=env.get("compute_capability"),  # type: ignore[arg-type]
        packages=tuple(packages.values())[:MAX_ITEMS],
        docker_image=docker_image,  # type: ignore[arg-type]
        docker=bool(docker_image) or bool(DOCKER.search(text)),
        wsl=bool(WSL.search(text)),
        os=os_name,  # type: ignore[arg-type]
        python=env.get("python"),  # type: ignore[arg-type]
        missing_libraries=libs,
        signals=frozenset(signals),
        gpu_intent=bool(GPU_INTENT.search(text)),
    )


def merge(earlier: Environment, later: Environment) -> Environment:
    """The case's environment after a new turn: what the new turn shows wins, what it does not show is kept.

    >>> turn1 = read_environment("Driver Version: 418.67   CUDA Version: 10.1")
    >>> turn3 = read_environment("pip list | grep paddle\\npaddlepaddle-gpu 2.5.2")
    >>> merged = merge(turn1, turn3)
    >>> merged.driver, merged.packages[0].version
    ('418.67', '2.5.2')
    """
    changes: dict[str, object] = {}
    for f in fields(Environment):
        new = getattr(later, f.name)
        old = getattr(earlier, f.name)
        if f.name == "signals":
            # A message about an earlier setup goes stale when a later turn shows that part changed.
            stale = {
                s for field_name, about in _SIGNALS_ABOUT.items() if _changed(earlier, later, field_name) for s in about
            }
            changes[f.name] = (old - stale) | new
        elif f.name in ("docker", "wsl", "gpu_intent"):
            changes[f.name] = old or new
        elif f.name == "driver_api_from_framework":
            changes[f.name] = new if later.cuda_driver_api else old
        elif new not in (None, ()):
            changes[f.name] = new
    return replace(earlier, **changes)


# Which fields a library's message is about (bot.records.Signal): a new value there makes the message stale.
_SIGNALS_ABOUT: dict[str, tuple[Signal, ...]] = {
    "driver": ("insufficient_driver",),
    "packages": (
        "paddle_cpu_version",
        "not_compiled_with_cuda",
        "tf_not_built_with_cuda",
        "torch_cuda_none",
        "paddle_arch",
        "torch_arch",
        "no_kernel_image",
        "paddle_cuda_older",
        "tf_jit_arch",
        "gpu_build",
    ),
    "cudnn_loaded": ("paddle_cudnn_older", "tf_cudnn_mismatch", "torch_cudnn_mismatch"),
    "gpus": ("no_kernel_image", "paddle_arch", "torch_arch", "tf_jit_arch", "tf_min_capability"),
}


def _changed(earlier: Environment, later: Environment, name: str) -> bool:
    new = getattr(later, name)
    return new not in (None, ()) and new != getattr(earlier, name)
