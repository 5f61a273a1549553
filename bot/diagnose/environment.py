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

The patterns are data (``bot/data/environment.toml``, a company's ``seeds/environment.toml``; :mod:`bot.kb.patterns`):
this module decides what each match means.
A value the paste does not show stays ``None``: nothing is guessed here. Only linear-time regular expressions are
used (no nested quantifiers), on input cut to :data:`MAX_ENV_CHARS` before any of them runs.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace

from bot.kb.domain import shipped
from bot.kb.patterns import Patterns
from bot.kb.signature import HINT_LINE
from bot.limits import ENVIRONMENT_CHARS as MAX_ENV_CHARS
from bot.limits import ENVIRONMENT_ITEMS as MAX_ITEMS
from bot.limits import ENVIRONMENT_LINE_CHARS as MAX_LINE_CHARS
from bot.limits import ENVIRONMENT_TYPED_CHARS, ENVIRONMENT_TYPED_ITEMS
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
_TEXT_SIGNALS: tuple[tuple[str, Signal], ...] = (
    ("NOT_COMPILED", "not_compiled_with_cuda"),
    ("TF_NOT_BUILT", "tf_not_built_with_cuda"),
    ("GPU_BUILD", "gpu_build"),
    ("GPU_WORKS", "gpu_works"),
    ("NO_GPU", "no_gpu_visible"),
    ("PIP_CUDA", "pip_cuda_libs"),
)
_LINE_SIGNALS: tuple[tuple[str, Signal], ...] = (
    ("INSUFFICIENT", "insufficient_driver"),
    ("NO_KERNEL", "no_kernel_image"),
    ("CPU_VERSION", "paddle_cpu_version"),
)


# Lines whose first group is a value (and, for a library's message, a signal too).
_LINE_VALUES: tuple[tuple[str, Signal | None, str], ...] = (
    ("DRIVER_API", None, "paddle_driver_api"),
    ("RUNTIME_API", None, "cuda_runtime"),
    ("PADDLE_CUDNN", None, "cudnn_loaded"),
    ("CUDA_OLDER", "paddle_cuda_older", "build_cuda"),
    ("TF_JIT", "tf_jit_arch", "compute_capability"),
    ("TF_MIN_CC", "tf_min_capability", "compute_capability"),
)


# The run_check lines quoted as printed, by the reader's field for them.
_LINE_VALUE_FIELDS = {"DRIVER_API": "driver_cuda", "RUNTIME_API": "cuda", "PADDLE_CUDNN": "cudnn"}


def _example(line: str, at: int) -> bool:
    """Position ``at`` is inside a template's own example, "(e.g., Linux Ubuntu 16.04)", not the user's value.

    >>> _example("- OS Platform and Distribution (e.g., Linux Ubuntu 16.04): Ubuntu 20.04", 44), _example("Ubuntu 20.04", 0)
    (True, False)
    """
    opened = max(line.rfind("(", 0, at), line.rfind("（", 0, at))
    if opened < 0 or max(line.find(")", opened, at), line.find("）", opened, at)) >= 0:
        return False
    return re.match(r"[(（]\s{0,2}(?:e\.\s?g\.?|eg\b|for example|例如|如)", line[opened:], re.IGNORECASE) is not None


def _name(raw: str) -> str:
    return raw.lower().replace("_", "-")


def _variant(version: str) -> str:
    m = re.search(r"(?:\.|\+)(post\d{2,3}|cu\d{2,3}|cpu)$", version)
    return m.group(1) if m else ""


def _value_line(text: str, at: int) -> str:
    """The value of a template field as typed: the line holding position ``at``, after its label's colon
    ("- CUDA/cuDNN version: 10.2, 8.0.2" -> "10.2, 8.0.2"; "CUDA 12.0 / cuDNN 8.9.4" stays whole).

    >>> _value_line("- CUDA/cuDNN version: 11.1 & 8.0.5\\n- GPU", 22)
    '11.1 & 8.0.5'
    """
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start : end if end >= 0 else len(text)]
    cut = max(line.rfind(":", 0, at - start), line.rfind("：", 0, at - start))
    return (line[cut + 1 :] if cut >= 0 else line).strip()


def _line_at(text: str, at: int) -> str:
    """The line of ``text`` holding position ``at``, without its surrounding spaces.

    >>> _line_at("#define CUDNN_MAJOR 7\\n#define CUDNN_MINOR 4\\n", 42)
    '#define CUDNN_MINOR 4'
    """
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : end if end >= 0 else len(text)].strip()


# Where a path or file name ends in a log line: a quote, a space, a separator of a path list.
_TOKEN_END = frozenset(" \t'\"`;,()[]<>")


def _ends(c: str) -> bool:
    return c in _TOKEN_END or "\u3000" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef"  # CJK text has no spaces


def _token(line: str, start: int, end: int, *, left: bool = True) -> str:
    """The token of ``line`` around ``line[start:end]``, to a space, quote, separator or CJK character on either side
    (a library's full path; "1.15.0/py37"); with ``left=False`` it grows to the right only ("2.4.0" -> "2.4.0-rc1").

    >>> _token('Error loading "D:\\\\x\\\\cudnn64_8.dll" or', 20, 33), _token("版本是2.4.0-rc1。", 3, 8, left=False)
    ('D:\\\\x\\\\cudnn64_8.dll', '2.4.0-rc1')
    """
    while left and start > 0 and not _ends(line[start - 1]):
        start -= 1
    while end < len(line) and not _ends(line[end]):
        end += 1
    return line[start:end].rstrip(".")


def _add(values: tuple[str, ...], value: str) -> tuple[str, ...]:
    """Append a value unless it is there already (10.2 and 10.2.89 count as one: the first, longer one stays)."""
    if len(values) >= MAX_ITEMS or any(v == value or (v.startswith(value + ".") and "." in value) for v in values):
        return values
    return (*values, value)


def read_environment(text: str, patterns: Patterns | None = None) -> Environment:
    """Every version the paste shows, as one :class:`Environment` (pure; linear in the length of ``text``), read with
    ``patterns`` (the domain's, :mod:`bot.kb.patterns`; default: the shipped ones).

    >>> env = read_environment("W0303 device_context.cc:362] Please NOTE: device: 0, GPU Compute Capability: 8.6, "
    ...                        "Driver API Version: 11.2, Runtime API Version: 11.0")
    >>> env.compute_capability, env.cuda_driver_api, env.cuda_runtime
    ('8.6', '11.2', '11.0')
    """
    p = patterns or shipped().environment
    raw = (text or "")[:MAX_ENV_CHARS]
    whole = normalise(text or "")
    lines = whole.split("\n")
    # Only lines holding a keyword are read (with the line after each, for two-line prints such as
    # "Name: …\nVersion: …"): a 5,000-line pip list costs one substring scan per line.
    kept = [i for i, line in enumerate(lines) if p.KEYWORD.search(line[:MAX_LINE_CHARS].lower())]
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
    typed: list[tuple[str, str, str]] = []

    def said(field: str, value: str | None, words: str) -> None:
        """Keep ``words`` (a span of the paste) as how the user typed ``value``: trimmed at its ends only, so it stays
        a substring of the paste; a span with a backtick or over the length limit is not kept (never cut), nor one
        the paste does not hold exactly as typed (a tab or colour code the reading normalised inside it)."""
        words = words.strip().strip("`'\"").strip(" ,;，；。:：")
        entry = (field, value or "", words)
        if (
            value
            and words
            and "`" not in words
            and len(words) <= ENVIRONMENT_TYPED_CHARS
            and len(typed) < ENVIRONMENT_TYPED_ITEMS
            and entry not in typed
            and words in raw
        ):
            typed.append(entry)

    def first(key: str, value: str | None) -> None:
        if value and key not in env:
            env[key] = value

    def package(name: str, version: str, variant: str | None = None) -> None:
        """A package as pip names it (the first reading of a name and version stays)."""
        packages.setdefault((name, version), Package(name, version, _variant(version) if variant is None else variant))

    # Whole-text patterns (they may span a line break).
    for m in p.PIP_SHOW.finditer(text):
        package(_name(m.group(1)), m.group(2))
        said("package", f"{_name(m.group(1))}=={m.group(2)}", m.group(2))
    for m in p.CUDNN_H.finditer(text):
        cudnn = _add(cudnn, f"{m.group(1)}.{m.group(2)}")
        # cudnn.h prints one define a line: each line is quoted as printed ("#define CUDNN_MAJOR 7").
        for at in (m.start(1), m.start(2)):
            said("cudnn", f"{m.group(1)}.{m.group(2)}", _line_at(text, at))
    extension_cuda = p.TORCH_EXT_CUDA.search(text)  # the message wraps before "PyTorch (11.3)"
    if extension_cuda:
        signals.add("torch_extension_cuda")
        env["build_cuda"] = extension_cuda.group(2)
    for m in (*p.VERSION_PRINT.finditer(text), *p.VERSION_PRINT_C.finditer(text)):
        # tf.__version__ does not say which package (tensorflow, tensorflow-gpu, tensorflow-cpu) printed it.
        name = {"tf": "tensorflow-any", "tensorflow": "tensorflow-any"}.get(m.group(1), m.group(1))
        if name == "paddle" or "+" in m.group(2) or name == "tensorflow-any":
            package(name, m.group(2))
            said("package", f"{name}=={m.group(2)}", m.group(2))  # the version as the call printed it
    if m := p.TORCH_CUDA.search(text):
        value = m.group(1) or m.group(2)
        if value[0].isdigit():
            env["build_cuda"] = value
            said("build_cuda", value, value)
        elif not p.TORCH_ROCM.search(text):
            signals.add("torch_cuda_none")
    for m in p.TF_TEMPLATE.finditer(whole):
        version = m.group(1) or m.group(2)
        package("tensorflow-any", version, "")
        said("package", f"tensorflow-any=={version}", _value_line(whole, m.start(1 if m.group(1) else 2)))
    for m in p.TF_TEMPLATE_NEXT.finditer(whole):
        first("tf_template_next", m.group(1))
        said("package", f"tensorflow-any=={m.group(1)}", _value_line(whole, m.start(1)))
    for m in p.TEMPLATE_CUDA.finditer(whole):
        toolkit = _add(toolkit, m.group(1))
        said("cuda", m.group(1), _value_line(whole, m.start(1)))
        if m.group(2):
            cudnn = _add(cudnn, m.group(2))
            said("cudnn", m.group(2), _value_line(whole, m.start(2)))
    if m := p.TF_BUILD_CUDA.search(text):
        env["build_cuda"] = f"{m.group(1)}.{m.group(2)}"
        said("build_cuda", env["build_cuda"], text[m.start(1) : m.end(2)])  # "11.2" or "110", as the build info prints
    if m := p.TF_BUILD_CUDNN.search(text):
        env["build_cudnn"] = m.group(1)
        said("build_cudnn", m.group(1), m.group(1))
    for m in (*p.FIELD_LINE.finditer(whole), *p.FIELD_HEADING.finditer(whole)):
        # A template's field as typed: the user's words for the GPU, the system or the driver, when the value is one.
        label, value = m.group(1).lower(), m.group(2).strip().strip("*").strip()
        if "gpu" in label or "显卡" in label:
            if p.GPU_WORD.search(value):
                model = p.TEXT_GPU.search(value)
                said("gpu", model.group(1).strip() if model else value, value)
        elif "driver" in label or "驱动" in label:
            if driver := p.TEXT_DRIVER.search("driver " + value) or p.TEXT_DRIVER_BRANCH.search("driver " + value):
                said("driver", driver.group(1), value)
        elif "python" in label:
            if version := p.PYTHON.search("python " + value):
                said("python", version.group(1), value)
        elif (system := p.OS.search(value)) or re.search(r"linux|windows|mac|wsl", value, re.IGNORECASE):
            said("os", system.group(1) if system else value, value)
    if m := p.TF_IS_CUDA.search(text):
        signals.add("gpu_build" if m.group(1) == "True" else "tf_not_built_with_cuda")
    signals |= {signal for name, signal in _TEXT_SIGNALS if getattr(p, name).search(text)}

    for raw_line in lines:
        if raw_line.count(".") >= 3 and (m := p.WIN_DRIVER.search(raw_line[:MAX_LINE_CHARS])):
            # NVIDIA's Windows file version ends in the driver number: 23.21.13.9135 -> 391.35.
            first("driver", f"{m.group(3)}{m.group(4)[:2]}.{m.group(5)}")
    for i in kept:
        line = lines[i][:MAX_LINE_CHARS]
        smi_line = "Driver Version" in line or "NVIDIA-SMI" in line
        if (m := p.SMI_DRIVER.search(line)) or (m := p.SMI_HEAD.search(line)):
            first("driver", m.group(1))
            said("driver", m.group(1), m.group(1))
        if smi_line and (m := p.SMI_CUDA.search(line)) or (m := p.SMI_CUDA.search(line)) and "driver" in line.lower():
            first("smi_cuda", m.group(1))
            said("driver_cuda", m.group(1), m.group(0))  # "CUDA Version: 12.2": the driver's, not a toolkit
        if m := p.SMI_GPU_ROW.search(line):
            gpus = _add(gpus, m.group(1).strip().rstrip("."))
            said("gpu", m.group(1).strip().rstrip("."), m.group(1).strip().rstrip("."))
        elif m := p.QUERY_GPU.search(line):
            gpus = _add(gpus, m.group(1).strip())
            said("gpu", m.group(1).strip(), m.group(1).strip())
        elif not smi_line and "|" not in line:
            for m in p.TEXT_GPU.finditer(line):
                gpus = _add(gpus, m.group(1).strip())
                said("gpu", m.group(1).strip(), m.group(1))
            for m in p.BARE_GPU.finditer(line):
                number = m.group(2).strip()
                gpus = _add(gpus, f"{'GTX' if number.startswith('1') else 'RTX'} {number}")
                # As typed, with the brand when the user wrote it ("nvidia 2050").
                said("gpu", f"{'GTX' if number.startswith('1') else 'RTX'} {number}", m.group(1) + number)
        if not smi_line and "API" not in line and (m := p.TEXT_DRIVER.search(line)):
            first("driver", m.group(1))
            said("driver", m.group(1), m.group(0))
        elif not smi_line and "API" not in line and (m := p.TEXT_DRIVER_BRANCH.search(line)):
            said("driver", m.group(1), m.group(0))  # "driver 455": quoted, not compared (a branch is no version)
        if m := p.DQ_DEVICE.search(line):
            gpus = _add(gpus, m.group(1).strip())
            said("gpu", m.group(1).strip(), m.group(1))
        if m := p.DQ_VERSIONS.search(line):
            first("smi_cuda", m.group(1))  # the CUDA the driver supports
            toolkit = _add(toolkit, m.group(2))  # the toolkit deviceQuery was built with, not the framework's
            said("cuda", m.group(2), m.group(2))
        if m := p.DQ_CC.search(line):
            first("compute_capability", m.group(1))
            said("compute_capability", m.group(1), m.group(1))
        if m := p.PADDLE_CC.search(line):
            major, minor = m.group(1), m.group(2)
            cc = f"{major}.{minor}" if minor is not None else f"{major[:-1]}.{major[-1]}"
            first("compute_capability", cc)
            said("compute_capability", cc, m.group(0))
        for name, signal, key in _LINE_VALUES:
            if m := getattr(p, name).search(line):
                first(key, m.group(1))
                if name in _LINE_VALUE_FIELDS:
                    said(_LINE_VALUE_FIELDS[name], m.group(1), m.group(0))  # "Runtime API Version: 11.7" as printed
                if signal is not None:
                    signals.add(signal)
        if (m := p.CUDNN_OLDER.search(line)) and m.group(1) != f"{m.group(2)}.{m.group(3)}":
            # Paddle also prints this warning when both numbers are the same (8.9 and 8.9): no conflict then.
            signals.add("paddle_cudnn_older")
            first("build_cudnn", m.group(1))
            first("cudnn_loaded", f"{m.group(2)}.{m.group(3)}")
        if m := p.PADDLE_ARCH.search(line):
            signals.add("paddle_arch")
            first("gpu_arch", m.group(1))
            said("gpu_arch", m.group(1), m.group(1))
            for arch in m.group(2).split():
                build_arch = _add(build_arch, arch)
            said("build_arch", " ".join(build_arch), m.group(2))
        if m := p.PADDLE_VERSION_CALL.search(line):
            # What the wheel was built with, as Paddle prints it; a finding names major.minor.
            key = f"build_{m.group(1)}"
            first(key, m.group(2))
            said(key, m.group(2), m.group(2) + m.group(3))
        if m := p.TORCH_ARCH.search(line):
            signals.add("torch_arch")
            sm = m.group(1)
            first("compute_capability", f"{sm[:-1]}.{sm[-1]}")
            said("compute_capability", f"{sm[:-1]}.{sm[-1]}", f"sm_{sm}")
        if m := p.TORCH_ARCH_LIST.search(line):
            for arch in m.group(1).split():
                build_arch = _add(build_arch, arch.removeprefix("sm_"))
            said("build_arch", " ".join(build_arch), m.group(1))
        if m := p.TF_CUDNN.search(line):
            signals.add("tf_cudnn_mismatch")
            first("cudnn_loaded", m.group(1))
            first("build_cudnn", m.group(2))
            # As the library prints them ("7.1.4", "7.2.1"): the finding names major.minor.
            said("cudnn", m.group(1), _token(line, m.start(1), m.end(1), left=False))
            said("build_cudnn", m.group(2), _token(line, m.start(2), m.end(2), left=False))
        if m := p.TF_CUDNN_INT.search(line):
            signals.add("tf_cudnn_mismatch")
            first("cudnn_loaded", f"{m.group(1)}.{m.group(2)}")
            first("build_cudnn", f"{m.group(3)}.{m.group(4)}")
            said("cudnn", f"{m.group(1)}.{m.group(2)}", line[m.start(1) : m.start(1) + 4])  # "7301" as printed
            said("build_cudnn", f"{m.group(3)}.{m.group(4)}", line[m.start(3) : m.start(3) + 4])
        if m := p.TF_DEVICE.search(line):
            gpus = _add(gpus, m.group(1).strip())
            cc = m.group(2) or m.group(5) or (f"{m.group(3)}.{m.group(4)}" if m.group(3) else None)
            first("compute_capability", cc)
            said("gpu", m.group(1).strip(), m.group(1).strip())
            said("compute_capability", cc, line[m.end(1) :].strip(" ,"))  # "computeCapability: 6.1" as printed
        if m := p.TF_LOADED_CUDNN.search(line):
            digits = m.group(1)
            loaded = f"{digits[0]}.{int(digits[1:3]) if len(digits) == 5 else int(digits[1])}"
            first("cudnn_loaded", loaded)
            said("cudnn", loaded, digits)  # "Loaded cuDNN version 8100": the finding says 8.1
        if (m := p.TORCH_CUDNN.search(line)) or (m := p.TORCH_CUDNN_INT.search(line)):
            signals.add("torch_cudnn_mismatch")
            first("build_cudnn", f"{m.group(1)}.{m.group(2)}")
            first("cudnn_loaded", f"{m.group(3)}.{m.group(4)}")
        if m := p.TORCH_OLD_GPU.search(line):
            signals.add("torch_arch")  # the same check of torch/cuda/__init__.py: no kernels for this GPU
            gpus = _add(gpus, m.group(1).strip())
            first("compute_capability", m.group(2))
            said("gpu", m.group(1).strip(), m.group(1).strip())
            said("compute_capability", m.group(2), m.group(2))

        if m := p.TORCH_FOUND.search(line):
            number = int(m.group(1))
            first("smi_cuda", f"{number // 1000}.{number % 1000 // 10}")
        if m := p.NVCC.search(line):
            toolkit = _add(toolkit, m.group(1) or m.group(2))
            said("cuda", m.group(1) or m.group(2), _token(line, m.start(), m.end(), left=False))
        if (m := p.VERSION_TXT.search(line)) and "Driver" not in line:
            toolkit = _add(toolkit, m.group(1))
            said("cuda", m.group(1), m.group(0))
        if m := p.COLLECT_ENV_CUDA.search(line):
            toolkit = _add(toolkit, m.group(1))
            said("cuda", m.group(1), m.group(0))
        if m := p.CUDA_WITH.search(line):
            first("build_cuda", m.group(1))
            said("build_cuda", m.group(1), m.group(0))
        elif "API" not in line and "compiled with" not in line.lower():
            for m in p.TEXT_CUDA.finditer(line):
                if smi_line and ("|" in line or m.group(0).startswith("CUDA Version")):
                    continue  # nvidia-smi's header: the CUDA the driver supports, not a toolkit
                if "." in m.group(1) or int(m.group(1)) <= p.newest_cuda_major:
                    toolkit = _add(toolkit, m.group(1))  # "cuda90" is conda's package name, not CUDA 90
                    said(
                        "cuda",
                        m.group(1),
                        line[m.start() : m.start(1)] + _token(line, m.start(1), m.end(1), left=False),
                    )
        for m in p.CUDA_WIN_PATH.finditer(line):
            toolkit = _add(toolkit, m.group(1))
            said("cuda", m.group(1), _token(line, m.start(), m.end()))
        for m in p.CUDA_DIR.finditer(line):
            # A path names it (one entry of a path list); the toolkit is not read from it.
            said("cuda", m.group(1), next(p for p in _token(line, m.start(), m.end()).split(":") if m.group(0) in p))
        if "API" not in line and "compiled with" not in line.lower() and "Loaded runtime" not in line:
            for m in p.TEXT_CUDNN.finditer(line):
                cudnn = _add(cudnn, m.group(1))
                said("cudnn", m.group(1), line[m.start() : m.start(1)] + _token(line, m.start(1), m.end(1), left=False))
        if m := p.CONDA_LINE.search(line):
            what = m.group(1).lower()
            if "cudnn" in what:
                cudnn = _add(cudnn, m.group(2))
                said("cudnn", m.group(2), m.group(0))
            elif "nccl" in what:
                first("nccl", m.group(2))
            else:
                toolkit = _add(toolkit, m.group(2))
                said("cuda", m.group(2), m.group(0))
        if m := p.LDCONFIG.search(line):
            what, version = m.group(1), m.group(2)
            said({"cudnn": "cudnn", "cudart": "cuda"}.get(what, "nccl"), version, m.group(0).split()[0])
            if what == "cudnn":
                cudnn = _add(cudnn, version)
            elif what == "cudart":
                toolkit = _add(toolkit, version)
            else:
                first("nccl", version)
        if m := p.NCCL.search(line):
            first("nccl", m.group(1) or m.group(2))
        if m := p.DOCKER_TAG.search(line):
            tag = m.group(1)
            if ":" in tag and ("gpu" in tag or "cuda" in tag) and not p.SOURCE_PATH.search(tag):
                first("docker_image", tag.strip("`'\" "))
        if (m := p.PIP_LINE.search(line)) and not p.ANOTHER_VERSION.match(line, m.end(2)):
            package(_name(m.group(1)), m.group(2))
            said("package", f"{_name(m.group(1))}=={m.group(2)}", m.group(0))
        for m in p.PIP_SPEC.finditer(line):
            if p.ANOTHER_VERSION.match(line, m.end(3)):
                continue  # one of several versions tried
            name, sep, version = _name(m.group(1)), m.group(2), m.group(3)
            if name in ("paddlepaddle", "tensorflow") and not (m.group(1).islower() and sep in ("==", "=", "(")):
                # "PaddlePaddle 2.1.2", "PaddlePaddle: 2.4.1": the framework, not a pinned CPU package.
                name = "paddle" if name == "paddlepaddle" else "tensorflow-any"
            package(name, version)
            said(
                "package",
                f"{name}=={version}",
                line[m.start() : m.start(3)] + _token(line, m.start(3), m.end(3), left=False),
            )
        if m := p.TORCH_VER.search(line):
            package("torch", m.group(0), m.group(2))
            said("package", f"torch=={m.group(0)}", _token(line, m.start(), m.end()))
        if m := p.TORCH_INDEX.search(line):
            first("torch_index", m.group(1) or m.group(2))
            said("build_tag", m.group(1) or m.group(2), m.group(1) or m.group(2))
        if m := p.PADDLE_INDEX.search(line):
            first("paddle_index", m.group(1))
            said("build_tag", m.group(1), m.group(1))
        if not any(p.name.startswith(("paddlepaddle", "tensorflow", "torch")) for p in packages.values()):
            for m in p.FRAMEWORK_TEXT.finditer(line):
                if p.ANOTHER_VERSION.match(line, m.end(2)):
                    continue
                name = {
                    "paddle": "paddle",
                    "paddlepaddle": "paddle",
                    "tf": "tensorflow-any",
                    "tensorflow": "tensorflow-any",
                    "pytorch": "torch",
                }.get(m.group(1).lower(), m.group(1).lower())
                first("framework_text", f"{name}=={m.group(2)}")
                said(
                    "package",
                    f"{name}=={m.group(2)}",
                    line[m.start() : m.start(2)] + _token(line, m.start(2), m.end(2), left=False),
                )
        # A trace or hint line ("p.NCCL INFO … No plugin found (libnccl-net.so)", "[Hint: … e.g. a dlopen of
        # libnccl.so]") names a library that might matter, not one that failed to load.
        failed = p.LIB_FAIL.search(line) and not HINT_LINE.search(line)
        if failed:
            for m in (*p.LIB_SO.finditer(line), *p.LIB_DLL.finditer(line)):
                libs = _add(libs, m.group(1))
                said("library", m.group(1), _token(line, m.start(), m.end()))  # the path the loader tried
            if m := p.LD_PATH.search(line):
                said("library_path", m.group(1), m.group(2))  # where the loader looked, as printed
        if p.CUDNN_NOT_LOADED.search(line):
            libs = _add(libs, "libcudnn")
        signals |= {signal for name, signal in _LINE_SIGNALS if getattr(p, name).search(line)}
        for m in p.OS.finditer(line):
            if _example(line, m.start()):
                continue  # the template's own example ("e.g., Linux Ubuntu 16.04") is not the system
            first("os", m.group(1))
            # A template's value as typed ("OS Platform and Distribution: Ubuntu 18.04 running on WSL2"), the system
            # alone in prose ("on a Jetson Nano with JetPack 4.3").
            colon = max(line.rfind(":", 0, m.start()), line.rfind("：", 0, m.start())) >= 0
            said("os", m.group(1), _value_line(line, m.start()) if colon else m.group(1))
            break
        if (m := p.PYTHON.search(line)) or (m := p.PY_SITE.search(line)):
            first("python", m.group(1))
            if m.re is p.PYTHON:
                said("python", m.group(1), m.group(0))
        if m := p.PADDLE_POST.search(line):
            first("paddle_post", m.group(1))
            said("package", f"paddlepaddle-gpu=={m.group(1)}", m.group(1))

    if libs:
        signals.add("library_not_found")
    if extension_cuda:
        # The toolkit the extension build found is the one that conflicts: it leads the toolkits read.
        toolkit = (extension_cuda.group(1), *(t for t in toolkit if t != extension_cuda.group(1)))
    index = env.pop("torch_index", None)
    paddle_index = env.pop("paddle_index", None)
    for key, found in list(packages.items()):
        if index and found.name == "torch" and not found.variant:
            packages[key] = Package("torch", found.version, str(index))  # the plain version from that index
        if paddle_index and found.name == "paddlepaddle-gpu" and not found.variant:
            packages[key] = Package(found.name, found.version, str(paddle_index))  # Paddle's index serves one build
    tf_next = env.pop("tf_template_next", None)
    if tf_next and not any(found.name.startswith("tensorflow") for found in packages.values()):
        # The template's value under its label counts when no TensorFlow package line says which package it is.
        packages[("tensorflow-any", str(tf_next))] = Package("tensorflow-any", str(tf_next), "")
    paddle_post = env.pop("paddle_post", None)
    if paddle_post and not any(found.name.startswith("paddle") for found in packages.values()):
        # A build-tagged version alone is Paddle's GPU wheel; a package line read for Paddle says more and stays.
        packages[("paddlepaddle-gpu", str(paddle_post))] = Package(
            "paddlepaddle-gpu", str(paddle_post), _variant(str(paddle_post))
        )
    framework_text = env.pop("framework_text", None)
    if framework_text and not packages:
        name, version = str(framework_text).split("==")
        packages[(name, version)] = Package(name, version, _variant(version))
    os_name = env.get("os")
    if os_name is None and p.WIN_PATH.search(text):
        os_name = "Windows"
    elif os_name is None and p.LINUX_PATH.search(text):
        os_name = "Linux"
    docker_image = env.get("docker_image")
    build_cuda = env.get("build_cuda")
    build_cudnn = env.get("build_cudnn")
    image_cuda = image_cudnn = None
    if isinstance(docker_image, str):
        if m := p.TAG_CUDA.search(docker_image):
            image_cuda = m.group(1)
        if m := p.TAG_CUDNN.search(docker_image):
            image_cudnn = m.group(1)
        if (m := p.TAG_VERSION.search(docker_image)) and not packages:
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
        gpu_arch=env.get("gpu_arch"),  # type: ignore[arg-type]
        nccl=env.get("nccl"),  # type: ignore[arg-type]
        gpus=gpus,
        compute_capability=env.get("compute_capability"),  # type: ignore[arg-type]
        packages=tuple(packages.values())[:MAX_ITEMS],
        docker_image=docker_image,  # type: ignore[arg-type]
        docker=bool(docker_image) or bool(p.DOCKER.search(text)),
        wsl=bool(p.WSL.search(text)),
        os=os_name,  # type: ignore[arg-type]
        python=env.get("python"),  # type: ignore[arg-type]
        missing_libraries=libs,
        typed=tuple(typed),
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
        elif f.name == "typed":
            changes[f.name] = tuple(dict.fromkeys((*new, *old)))[:ENVIRONMENT_TYPED_ITEMS]  # the newest turn first
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
