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

A value the paste does not show stays ``None``: nothing is guessed here. Only linear-time regular expressions are
used (no nested quantifiers), on input cut to :data:`MAX_ENV_CHARS` before any of them runs.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace

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


def _mm(version: str) -> str:
    """major.minor of a version string: '11.8.89' -> '11.8', '80' (Paddle's old CUDA Capability) stays '80'."""
    parts = version.split(".")
    return ".".join(parts[:2])


# --- patterns (each linear: character classes with bounded repeats, no nested quantifiers) ---------------------

_SMI_DRIVER = re.compile(
    r"(?:NVIDIA-SMI\s{1,40}[\d.]{3,12}\s{1,40})?Driver Version:\s{0,8}(\d{2,3}\.\d{1,3}(?:\.\d{1,3})?)"
)
_SMI_CUDA = re.compile(r"(?<!API )CUDA Version:\s{0,8}(\d{1,2}\.\d{1,2})")
_SMI_HEAD = re.compile(r"NVIDIA-SMI\s{1,40}(\d{2,3}\.\d{1,3}(?:\.\d{1,3})?)")
_SMI_GPU_ROW = re.compile(r"^\|\s{1,6}\d{1,2}\s{1,6}([A-Za-z][\w .\-/]{2,40}?)\s{1,30}(?:On|Off|WDDM|TCC)\s{0,6}\|")
_QUERY_GPU = re.compile(
    r"^\s{0,4}(?:GPU \d{1,2}: )?((?:NVIDIA |Tesla |GeForce |Quadro )[\w .\-]{2,40}?)\s{0,4}(?:\(UUID|,\s{0,3}\d{1,2}\.\d)"
)
_TEXT_DRIVER = re.compile(r"(?:驱动|driver)[^\n\d]{0,24}?(\d{3}\.\d{1,3}(?:\.\d{1,3})?)(?![\d.])", re.IGNORECASE)
_WIN_DRIVER = re.compile(r"(?<![\d.])(\d{2})\.(\d{2})\.1(\d)\.(\d{2})(\d{2})(?![\d.])")
_PADDLE_CC = re.compile(r"(?:GPU Compute|CUDA) Capability:\s{0,4}(\d{1,2})(?:\.(\d))?")
_DRIVER_API = re.compile(r"Driver API Version:\s{0,4}(\d{1,2}\.\d{1,2})")
_RUNTIME_API = re.compile(r"Runtime API Version:\s{0,4}(\d{1,2}\.\d{1,2})")
_PADDLE_CUDNN = re.compile(r"cuDNN Version:\s{0,4}(\d{1,2}\.\d{1,2})")
_CUDNN_OLDER = re.compile(
    r"compiled with CUDNN\s{0,4}(\d{1,2}\.\d{1,2}),\s{0,4}but CUDNN version in your machine is\s{0,4}(\d{1,2})\s{0,40}\.\s{0,4}(\d{1,2})",
    re.IGNORECASE,
)
_CUDA_OLDER = re.compile(
    r"compiled with CUDA\s{0,4}(\d{1,2}\.\d{1,2}),\s{0,4}but CUDA runtime version in your machine is\s{0,4}(\d{1,2}\.\d{1,2})",
    re.IGNORECASE,
)
_PADDLE_ARCH = re.compile(
    r"machine is (\w{2,12}), which is not compatible with Paddle installation with arch:\s{0,4}([\d ]{2,80})"
)
_TORCH_ARCH = re.compile(r"with CUDA capability sm_(\d{2,3}) is not compatible", re.IGNORECASE)
_TORCH_ARCH_LIST = re.compile(r"supports CUDA capabilities ((?:sm_\d{2,3} ?){1,20})", re.IGNORECASE)
# torch/cuda/__init__.py's older check (same function as the sm_X warning): "Found GPU0 GeForce GTX 960M which is
# of cuda capability 5.0. PyTorch no longer supports this GPU because it is too old."
_TORCH_OLD_GPU = re.compile(r"Found GPU\d{1,2} ([A-Za-z][\w .\-]{2,40}?) which is of cuda capability (\d{1,2}\.\d)\b")
# torch/utils/cpp_extension.py, building an extension: "The detected CUDA version (10.1) mismatches the version that
# was used to compile PyTorch (11.3)" (raised only when the majors differ; a minor difference is a warning).
_TORCH_EXT_CUDA = re.compile(
    r"detected CUDA version \((\d{1,2}\.\d{1,2})\) mismatches the version that was used to compile\s{1,12}"
    r"PyTorch \((\d{1,2}\.\d{1,2})\)"
)
_TF_CUDNN = re.compile(
    r"Loaded runtime CuDNN library:\s{0,4}(\d{1,2}\.\d{1,2})[\d.]{0,6} but source was compiled with:\s{0,4}(\d{1,2}\.\d{1,2})",
    re.IGNORECASE,
)
# TensorFlow 1.x prints the versions as integers: "Loaded runtime CuDNN library: 7301 (compatibility version 7300)
# but source was compiled with 7003 (compatibility version 7000)" (major*1000 + minor*100 + patch).
_TF_CUDNN_INT = re.compile(
    r"Loaded runtime CuDNN library:\s{0,4}(\d)(\d)\d{2}\s{0,4}\(compatibility version \d{4}\)\s{0,4}"
    r"but source was compiled with:?\s{0,4}(\d)(\d)\d{2}(?!\d)",
    re.IGNORECASE,
)
_TF_JIT = re.compile(r"not built with CUDA kernel binaries compatible with compute capability (\d{1,2}\.\d)")
_TF_MIN_CC = re.compile(
    r"with Cuda compute capability (\d{1,2}\.\d)\. The minimum required Cuda capability is (\d{1,2}\.\d)"
)
_TF_DEVICE = re.compile(
    r"name: ([A-Za-z][\w .\-]{2,40}?)(?:, pci bus id: [\w:.]{4,20}, compute capability: (\d{1,2}\.\d)|"
    r" major: (\d{1,2}) minor: (\d)| computeCapability: (\d{1,2}\.\d))"
)
_TF_LOADED_CUDNN = re.compile(r"Loaded cuDNN version (\d{4,5})")
_TORCH_CUDNN = re.compile(
    r"compiled against \((\d{1,2}), (\d{1,2}), \d{1,3}\) but (?:found|linked against) runtime version "
    r"\((\d{1,2}), (\d{1,2})"
)
# Older PyTorch prints cuDNN's integer version (major*1000 + minor*100 + patch): "cuDNN version mismatch: PyTorch was
# compiled against 6021 but linked against 5110" is 6.0.21 against 5.1.10.
_TORCH_CUDNN_INT = re.compile(r"compiled against (\d)(\d)\d{2} but linked against (\d)(\d)\d{2}(?!\d)")
# The CUDA driver API version as an integer, major*1000 + minor*10: 6000 is 6.0, 10020 is 10.2, 11040 is 11.4.
_TORCH_FOUND = re.compile(r"driver on your system is too old \(found version (\d{4,5})\)")
_NVCC = re.compile(r"Cuda compilation tools, release (\d{1,2}\.\d{1,2})|Build cuda_(\d{1,2}\.\d{1,2})\.r")
_VERSION_TXT = re.compile(r"CUDA Version (\d{1,2}\.\d{1,2})\.\d{1,4}")
_NEWEST_CUDA_MAJOR = 13  # a bare number above it after "cuda" is a package name (conda's cuda90), not a version
_TEXT_CUDA = re.compile(
    r"(?<![A-Za-z0-9_\-./])(?:cuda|cudatoolkit)(?:\s{0,3}(?:toolkit|版本|ver[A-Za-z]{0,8}|version))?\s{0,3}(?:[:：=]|为|是)?\s{0,3}v?(\d{1,2}(?:\.\d{1,2})?)(?:\.\d{1,4})?(?![\d.]{0,1}\d)",
    re.IGNORECASE,
)
# Windows' toolkit folder, as CUDA_PATH and PATH print it: "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8".
_CUDA_WIN_PATH = re.compile(r"GPU Computing Toolkit[\\/]{1,2}CUDA[\\/]{1,2}v(\d{1,2}\.\d)(?!\d)", re.IGNORECASE)
_CUDA_WITH = re.compile(r"paddle\s{0,3}with\s{0,3}cuda\s{0,3}[:：=]?\s{0,3}(\d{1,2}\.\d{1,2})", re.IGNORECASE)
_TEXT_CUDNN = re.compile(
    r"(?<![A-Za-z0-9_\-./])cudnn(?:\s{0,3}(?:版本|ver[A-Za-z]{0,8}|version))?\s{0,3}(?:[:：=]|为|是)?\s{0,3}v?(\d\.\d{1,2}(?:\.\d{1,2})?)",
    re.IGNORECASE,
)
_CUDNN_H = re.compile(r"CUDNN_MAJOR\s{1,8}(\d{1,2})\s{0,8}#define CUDNN_MINOR\s{1,8}(\d{1,2})")
_NCCL = re.compile(r"NCCL (?:version )?(\d\.\d{1,2}\.\d{1,2})|nccl[:=\s]{1,4}(\d\.\d{1,2}\.\d{1,2})", re.IGNORECASE)
_DOCKER_TAG = re.compile(
    r"([\w./\-]{0,80}paddle:[\w.\-]{0,80}|[\w./\-]{0,80}(?:tensorflow|pytorch)[\w./\-]{0,40}:[\w.\-]{0,80})"
)
# A source file and line in a log ("tensorflow/stream_executor/cuda/cuda_dnn.cc:319"), not an image tag.
_SOURCE_PATH = re.compile(r"\.(?:cc|cpp|cu|cuh|c|h|hpp|py|pyx|so|java|go|rs):\d{0,6}$")
# "2.0.2和2.0.1都试过", "2.5 or 2.6": one of several versions tried, not the one installed.
_ANOTHER_VERSION = re.compile(r"\s{0,3}(?:和|与|跟|及|、|,|，|/|and |or |或)\s{0,3}v?\d{1,2}\.\d", re.IGNORECASE)
_TAG_CUDA = re.compile(r"cuda(\d{1,2}\.\d{1,2})")
_TAG_CUDNN = re.compile(r"cudnn(\d{1,2}(?:\.\d{1,2})?)")
_TAG_VERSION = re.compile(r":(\d\.\d{1,2}\.\d{1,2}\w{0,6})-gpu")

_PKG_NAMES = r"paddlepaddle[-_]gpu|paddlepaddle|tensorflow[-_]gpu|tensorflow[-_]cpu|tensorflow[-_]intel|tensorflow|torch|jax|jaxlib"
_PIP_LINE = re.compile(
    rf"^[\s*`>]{{0,6}}({_PKG_NAMES})\s{{1,40}}v?(\d{{1,2}}\.\d{{1,3}}[A-Za-z0-9_.+]{{0,24}})(?:\s|$)", re.IGNORECASE
)
_PIP_SPEC = re.compile(
    rf"(?<![A-Za-z0-9_\-])({_PKG_NAMES})\s{{0,3}}(==|=|：|:|\(|\s)\s{{0,3}}\*{{0,2}}v?(\d{{1,2}}\.\d{{1,3}}[A-Za-z0-9_.+]{{0,24}})",
    re.IGNORECASE,
)
_PIP_SHOW = re.compile(
    rf"Name:\s{{0,4}}({_PKG_NAMES})\s{{0,4}}\n\s{{0,4}}Version:\s{{0,4}}(\d{{1,2}}\.\d{{1,3}}[A-Za-z0-9_.+]{{0,24}})",
    re.IGNORECASE,
)
_FRAMEWORK_TEXT = re.compile(
    r"(?<![A-Za-z0-9_\-])(paddle(?:paddle)?|tensorflow|tf|torch|pytorch)(?:[\s_.]{0,3}(?:version|版本|__version__))?\s{0,3}"
    r"(?:==|=|：|:|是|为)?\s{0,3}`?(\d\.\d{1,2}(?:\.\d{1,2})?(?:rc\d?|\.post\d{2,3}|\.cu\d{3}|\+cu\d{3}|\+cpu)?)",
    re.IGNORECASE,
)
_VERSION_PRINT = re.compile(
    r"(tf|tensorflow|torch|paddle)\.__version__\)?\s{0,4}\n?\s{0,4}['\"]?(\d\.\d{1,2}\.\d{1,2}[A-Za-z0-9_+.]{0,12})"
)
# python -c "import tensorflow as tf; print(tf.__version__); …" then its first output line (no call before the print).
_VERSION_PRINT_C = re.compile(
    r"-c {0,2}[\"'][^\n\"'()]{0,200}print\((tf|tensorflow|torch|paddle)\.__version__\)[^\n]{0,300}\n"
    r" {0,4}(\d\.\d{1,2}\.\d{1,2}[A-Za-z0-9_+.]{0,12})"
)
_TORCH_CUDA = re.compile(
    r"torch\.version\.cuda\)?`?\s{0,4}\n?\s{0,4}(?:returns?\s{1,3})?['\"]?(\d{1,2}\.\d{1,2}|None)|"
    r"CUDA used to build PyTorch:\s{0,4}(\d{1,2}\.\d{1,2}|None|Could not collect)"
)
# collect_env prints torch.version.cuda, None (or "Could not collect") for a build without CUDA; ROCm builds too.
_TORCH_ROCM = re.compile(r"ROCM used to build PyTorch:\s{0,4}\d")
# collect_env's "CUDA runtime version" is the machine's toolkit (nvcc), not the runtime the wheel brings.
_COLLECT_ENV_CUDA = re.compile(r"^CUDA runtime version:\s{0,4}(\d{1,2}\.\d{1,2})")
# The TensorFlow issue templates: "### TensorFlow version", blank lines, then the version ("tf 2.16",
# "v2.12.0-rc1-… 2.12.0"); the older "- TensorFlow version (use command below): 2.1.0".
_TF_TEMPLATE = re.compile(
    r"^#{2,4} {0,3}tensorflow version {0,3}\n(?: {0,8}\n){0,3} {0,8}(?:tf {0,2})?v?(\d\.\d{1,2}(?:\.\d{1,2})?)|"
    r"tensorflow version \(use command below\): {0,4}(?:tf {0,2})?v?(\d\.\d{1,2}(?:\.\d{1,2})?)",
    re.IGNORECASE | re.MULTILINE,
)
# The same templates' "CUDA/cuDNN version": the first number is the CUDA toolkit ("10.2.89", "cuda_11.8.0_522.06_…"),
# a second one after a slash the cuDNN ("`11.0 / v8.0.1`").
_TEMPLATE_CUDA = re.compile(
    r"^(?:#{2,4} {0,3}|[-*] {0,3})?CUDA/cuDNN version:? {0,3}\n?(?: {0,8}\n){0,3} {0,8}`?(?:cuda[_ ]?)?v?"
    r"(\d{1,2}\.\d)(?:\.\d{1,4})?(?![\d.]{0,1}\d)(?: {0,3}/ {0,3}(?:cudnn[_ ]?)?v?(\d\.\d{1,2}(?:\.\d{1,3})?))?",
    re.IGNORECASE | re.MULTILINE,
)
_TF_BUILD_CUDA = re.compile(r"'cuda_version'[:,]\s{0,2}'(?:64_)?(\d{1,2})\.?(\d)'")
_TF_BUILD_CUDNN = re.compile(r"'cudnn_version'[:,]\s{0,2}'(?:64_)?(\d{1,2}(?:\.\d{1,2})?)'")
_TF_IS_CUDA = re.compile(r"'is_cuda_build'[:,]\s{0,2}(True|False)")
_CONDA_LINE = re.compile(
    r"^\s{0,4}(cudatoolkit|cuda-toolkit|cuda-runtime|cuda-cudart|cudnn|nccl|nvidia-cudnn-cu1\d|"
    r"nvidia-cuda-runtime-cu1\d|nvidia-nccl-cu1\d)\s{2,60}(\d{1,2}\.\d{1,2}(?:\.\d{1,4})?)",
    re.IGNORECASE,
)
_LDCONFIG = re.compile(r"lib(cudnn|cudart|nccl)\.so\.(\d{1,2}(?:\.\d{1,2}){0,2})\s{1,4}\(libc6")
_TORCH_VER = re.compile(r"(\d\.\d{1,2}\.\d{1,2})\+(cpu|cu\d{2,3})")
_LIB_SO = re.compile(
    r"(lib(?:cudart|cudnn(?:_\w{1,20})?|cublasLt|cublas|cufft|curand|cusolver|cusparse|nccl|cuda|nvrtc)\.so(?:\.\d{1,3}){0,3})"
)
_LIB_DLL = re.compile(
    r"((?:cudnn(?:_\w{1,20})?64_\d{1,2}|cudart64_\d{2,4}|cublas(?:Lt)?64_\d{2,4}|cufft64_\d{2,4}|curand64_\d{2,4}|"
    r"cusolver64_\d{2,4}|cusparse64_\d{2,4}|nvcuda|zlibwapi|nccl)\.dll)",
    re.IGNORECASE,
)
_LIB_FAIL = re.compile(
    r"cannot open shared object|not found|No such file|Could not load|Could not locate|Can not find|"
    r"Cannot load|Failed to find|not configured correctly|error code is 126|找不到|缺少|缺失|dlerror",
    re.IGNORECASE,
)
_CUDNN_NOT_LOADED = re.compile(r"Cannot load cudnn shared library|cudnn_dso_handle should not be null", re.IGNORECASE)
_INSUFFICIENT = re.compile(
    r"driver version is insufficient for CUDA runtime|cudaErrorInsufficientDriver|CUDA error\(35\)|"
    r"Cuda error\(35\)|NVIDIA driver on your system is too old",
    re.IGNORECASE,
)
_NO_KERNEL = re.compile(r"no kernel image is available|cudaErrorNoKernelImageForDevice", re.IGNORECASE)
_CPU_VERSION = re.compile(r"You are using paddlepaddle cpu version", re.IGNORECASE)
_NOT_COMPILED = re.compile(
    r"Not compiled with CUDA|Torch not compiled with CUDA enabled|is_compiled_with_cuda\(\)\)?\s{0,4}\n?\s{0,4}False",
    re.IGNORECASE,
)
_TF_NOT_BUILT = re.compile(r"is_built_with_cuda\(\)\)?\s{0,4}\n?\s{0,4}False", re.IGNORECASE)
_GPU_BUILD = re.compile(
    r"(?:compiled|built) with (?:cuda|CUDA)\s{0,3}[:：]?\s{0,3}True|is_built_with_cuda\(\)\)?\s{0,4}\n?\s{0,4}True|"
    r"is_compiled_with_cuda\(\)\)?\s{0,4}\n?\s{0,4}True|"
    # Paddle's own words for its GPU build: "Compiled with WITH_GPU, but no GPU found in runtime", "You are using GPU
    # version Paddle, but your CUDA device is not set properly".
    r"Compiled with WITH_GPU|You are using GPU version Paddle"
)
# A GPU named in prose: GeForce/RTX/GTX numbers, and data-centre models (two-character ones only with a prefix).
_TEXT_GPU = re.compile(
    r"(?<![A-Za-z0-9])((?:NVIDIA )?(?:GeForce )?(?:RTX|GTX) ?\d{3,4}(?: ?Ti)?(?: Laptop GPU| SUPER)?|"
    r"(?:NVIDIA |Tesla )?(?:A100|A30|A40|A10|A16|H100|H200|H800|A800|L40S|L40|T4|V100|P100|P40)(?:-[A-Z0-9]{2,8}){0,2}|"
    r"(?:NVIDIA |Tesla )(?:A2|L4|P4|K80))(?![A-Za-z0-9])"
)
_GPU_WORKS = re.compile(
    r"PaddlePaddle works well on \d{1,2} GPU|PhysicalDevice\(name='/physical_device:GPU|"
    r"Created (?:TensorFlow )?device \(?/job:\w{1,20}/replica:0/task:0/device:GPU|is_available\(\)\)?\s{0,4}\n?\s{0,4}True|"
    r"GPU available: True|Is CUDA available: (?:True|Yes)",
    re.IGNORECASE,
)
# The CUDA libraries come as pip wheels beside the framework (TensorFlow's "pip install tensorflow[and-cuda]").
_PIP_CUDA = re.compile(r"\[and-cuda\]|nvidia-cuda-runtime-cu1\d|nvidia-cudnn-cu1\d", re.IGNORECASE)
_NO_GPU = re.compile(
    r"list_physical_devices\(\s{0,2}'GPU'\s{0,2}\)\)?\s{0,4}\n?\s{0,4}\[\]|is_available\(\)\)?\s{0,4}\n?\s{0,4}False|"
    r"Is CUDA available: (?:False|No)\b",
    re.IGNORECASE,
)
_OS = re.compile(
    r"(Ubuntu\s{0,2}\d{2}\.\d{2}|Ubuntu\s{0,2}\d{2}|CentOS\s{0,2}\d{1,2}|Red Hat|Debian|win(?:dows)?\s{0,2}1[01]|"
    r"Windows Server \d{4}|winserver\d{4}|macOS|Windows)",
    re.IGNORECASE,
)
# A Linux (or WSL, or container) path of a Python install or home directory: the Linux rows apply.
_LINUX_PATH = re.compile(r"(?<![\w:\\])/(?:home|usr|opt|root)/[\w.\-]{1,60}/[\w./\-]{0,120}(?:site|dist)-packages/")
# A card named by its number alone ("gpu为3060", "显卡是 2080 Ti"): GeForce numbers, GTX below 20xx.
_BARE_GPU = re.compile(
    r"(?:gpu|显卡|卡)\s{0,3}(?:是|为|用的是|型号是?|[:：])?\s{0,3}((?:[1-4]0[5-9]0)(?: ?Ti| ?SUPER)?)(?![\d.])",
    re.IGNORECASE,
)
_WIN_PATH = re.compile(r"(?<![\w])[A-Z]:\\\\?[\w.]|\.dll\b|\.exe\b|win32|win_amd64", re.IGNORECASE)
_PYTHON = re.compile(
    r"(?:python|Python|py)\s{0,3}(?:version)?\s{0,3}[:：=]?\s{0,3}(3\.\d{1,2}(?:\.\d{1,2})?|2\.7(?:\.\d{1,2})?)(?![\d])"
)
_PY_SITE = re.compile(r"python(3\.\d{1,2}|2\.7)/site-packages")
_DOCKER = re.compile(r"docker|nvidia-docker|/\.dockerenv|container", re.IGNORECASE)
_WSL = re.compile(r"\bWSL2?\b|microsoft-standard|/mnt/c/", re.IGNORECASE)


# A line is read only when it holds one of these (lower case); every line pattern needs at least one of them.
_LINE_KEYWORDS = (
    "driver",
    "smi",
    "cuda",
    "cudnn",
    "nccl",
    "capability",
    "api",
    "paddle",
    "tensorflow",
    "torch",
    "tf",
    "jax",
    "lib",
    ".dll",
    "nvidia",
    "gpu",
    "rtx",
    "gtx",
    "tesla",
    "quadro",
    "titan",
    "a100",
    "a30",
    "a40",
    "a10",
    "a16",
    "h100",
    "h200",
    "h800",
    "a800",
    "l40",
    "t4",
    "v100",
    "p100",
    "p40",
    "k80",
    "驱动",
    "显卡",
    "版本",
    "py",
    "ubuntu",
    "centos",
    "red hat",
    "debian",
    "win",
    "macos",
    "wsl",
    "docker",
    "version",
    "sm_",
    "arch",
    "compiled",
    "kernel",
    "name:",
    "found",
    "cannot",
    "could not",
    "can not",
    "failed",
    "找不到",
    "缺少",
    "缺失",
    "error",
    "/mnt/c",
    "microsoft-standard",
    "container",
    "#define",
    "true",
    "false",
    "[]",
)

_KEYWORD = re.compile("|".join(re.escape(k) for k in _LINE_KEYWORDS))


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
    kept = [i for i, line in enumerate(lines) if _KEYWORD.search(line[:MAX_LINE_CHARS].lower())]
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

    # Whole-text patterns (they may span a line break).
    for m in _PIP_SHOW.finditer(text):
        packages.setdefault(
            (_name(m.group(1)), m.group(2)), Package(_name(m.group(1)), m.group(2), _variant(m.group(2)))
        )
    for m in _CUDNN_H.finditer(text):
        cudnn = _add(cudnn, f"{m.group(1)}.{m.group(2)}")
    extension_cuda = _TORCH_EXT_CUDA.search(text)  # the message wraps before "PyTorch (11.3)"
    if extension_cuda:
        signals.add("torch_extension_cuda")
        env["build_cuda"] = extension_cuda.group(2)
    if _NOT_COMPILED.search(text):
        signals.add("not_compiled_with_cuda")
    if _TF_NOT_BUILT.search(text):
        signals.add("tf_not_built_with_cuda")
    for m in (*_VERSION_PRINT.finditer(text), *_VERSION_PRINT_C.finditer(text)):
        # tf.__version__ does not say which package (tensorflow, tensorflow-gpu, tensorflow-cpu) printed it.
        name = {"tf": "tensorflow-any", "tensorflow": "tensorflow-any"}.get(m.group(1), m.group(1))
        if name == "paddle" or "+" in m.group(2) or name == "tensorflow-any":
            packages.setdefault((name, m.group(2)), Package(name, m.group(2), _variant(m.group(2))))
    if m := _TORCH_CUDA.search(text):
        value = m.group(1) or m.group(2)
        if value[0].isdigit():
            env["build_cuda"] = value
        elif not _TORCH_ROCM.search(text):
            signals.add("torch_cuda_none")
    for m in _TF_TEMPLATE.finditer(whole):
        version = m.group(1) or m.group(2)
        packages.setdefault(("tensorflow-any", version), Package("tensorflow-any", version, ""))
    for m in _TEMPLATE_CUDA.finditer(whole):
        toolkit = _add(toolkit, m.group(1))
        if m.group(2):
            cudnn = _add(cudnn, m.group(2))
    if m := _TF_BUILD_CUDA.search(text):
        env["build_cuda"] = f"{m.group(1)}.{m.group(2)}"
    if m := _TF_BUILD_CUDNN.search(text):
        env["build_cudnn"] = m.group(1)
    if m := _TF_IS_CUDA.search(text):
        signals.add("gpu_build" if m.group(1) == "True" else "tf_not_built_with_cuda")
    if _GPU_BUILD.search(text):
        signals.add("gpu_build")
    if _GPU_WORKS.search(text):
        signals.add("gpu_works")
    if _NO_GPU.search(text):
        signals.add("no_gpu_visible")
    if _PIP_CUDA.search(text):
        signals.add("pip_cuda_libs")

    for raw_line in lines:
        if raw_line.count(".") >= 3 and (m := _WIN_DRIVER.search(raw_line[:MAX_LINE_CHARS])):
            # NVIDIA's Windows file version ends in the driver number: 23.21.13.9135 -> 391.35.
            first("driver", f"{m.group(3)}{m.group(4)[:2]}.{m.group(5)}")
    for i in kept:
        line = lines[i][:MAX_LINE_CHARS]
        smi_line = "Driver Version" in line or "NVIDIA-SMI" in line
        if (m := _SMI_DRIVER.search(line)) or (m := _SMI_HEAD.search(line)):
            first("driver", m.group(1))
        if smi_line and (m := _SMI_CUDA.search(line)) or (m := _SMI_CUDA.search(line)) and "driver" in line.lower():
            first("smi_cuda", m.group(1))
        if m := _SMI_GPU_ROW.search(line):
            gpus = _add(gpus, m.group(1).strip().rstrip("."))
        elif m := _QUERY_GPU.search(line):
            gpus = _add(gpus, m.group(1).strip())
        elif not smi_line and "|" not in line:
            for m in _TEXT_GPU.finditer(line):
                gpus = _add(gpus, m.group(1).strip())
            for m in _BARE_GPU.finditer(line):
                number = m.group(1).strip()
                gpus = _add(gpus, f"{'GTX' if number.startswith('1') else 'RTX'} {number}")
        if not smi_line and "API" not in line and (m := _TEXT_DRIVER.search(line)):
            first("driver", m.group(1))
        if m := _PADDLE_CC.search(line):
            major, minor = m.group(1), m.group(2)
            first("compute_capability", f"{major}.{minor}" if minor is not None else f"{major[:-1]}.{major[-1]}")
        if m := _DRIVER_API.search(line):
            first("paddle_driver_api", m.group(1))
        if m := _RUNTIME_API.search(line):
            first("cuda_runtime", m.group(1))
        if m := _PADDLE_CUDNN.search(line):
            first("cudnn_loaded", m.group(1))
        if (m := _CUDNN_OLDER.search(line)) and m.group(1) != f"{m.group(2)}.{m.group(3)}":
            # Paddle also prints this warning when both numbers are the same (8.9 and 8.9): no conflict then.
            signals.add("paddle_cudnn_older")
            first("build_cudnn", m.group(1))
            first("cudnn_loaded", f"{m.group(2)}.{m.group(3)}")
        if m := _CUDA_OLDER.search(line):
            signals.add("paddle_cuda_older")
            first("build_cuda", m.group(1))
        if m := _PADDLE_ARCH.search(line):
            signals.add("paddle_arch")
            for arch in m.group(2).split():
                build_arch = _add(build_arch, arch)
        if m := _TORCH_ARCH.search(line):
            signals.add("torch_arch")
            sm = m.group(1)
            first("compute_capability", f"{sm[:-1]}.{sm[-1]}")
        if m := _TORCH_ARCH_LIST.search(line):
            for arch in m.group(1).split():
                build_arch = _add(build_arch, arch.removeprefix("sm_"))
        if m := _TF_CUDNN.search(line):
            signals.add("tf_cudnn_mismatch")
            first("cudnn_loaded", m.group(1))
            first("build_cudnn", m.group(2))
        if m := _TF_CUDNN_INT.search(line):
            signals.add("tf_cudnn_mismatch")
            first("cudnn_loaded", f"{m.group(1)}.{m.group(2)}")
            first("build_cudnn", f"{m.group(3)}.{m.group(4)}")
        if m := _TF_JIT.search(line):
            signals.add("tf_jit_arch")
            first("compute_capability", m.group(1))
        if m := _TF_MIN_CC.search(line):
            signals.add("tf_min_capability")
            first("compute_capability", m.group(1))
        if m := _TF_DEVICE.search(line):
            gpus = _add(gpus, m.group(1).strip())
            cc = m.group(2) or m.group(5) or (f"{m.group(3)}.{m.group(4)}" if m.group(3) else None)
            first("compute_capability", cc)
        if m := _TF_LOADED_CUDNN.search(line):
            digits = m.group(1)
            first("cudnn_loaded", f"{digits[0]}.{int(digits[1:3]) if len(digits) == 5 else int(digits[1])}")
        if (m := _TORCH_CUDNN.search(line)) or (m := _TORCH_CUDNN_INT.search(line)):
            signals.add("torch_cudnn_mismatch")
            first("build_cudnn", f"{m.group(1)}.{m.group(2)}")
            first("cudnn_loaded", f"{m.group(3)}.{m.group(4)}")
        if m := _TORCH_OLD_GPU.search(line):
            signals.add("torch_arch")  # the same check of torch/cuda/__init__.py: no kernels for this GPU
            gpus = _add(gpus, m.group(1).strip())
            first("compute_capability", m.group(2))

        if m := _TORCH_FOUND.search(line):
            number = int(m.group(1))
            first("smi_cuda", f"{number // 1000}.{number % 1000 // 10}")
        if m := _NVCC.search(line):
            toolkit = _add(toolkit, m.group(1) or m.group(2))
        if (m := _VERSION_TXT.search(line)) and "Driver" not in line:
            toolkit = _add(toolkit, m.group(1))
        if m := _COLLECT_ENV_CUDA.search(line):
            toolkit = _add(toolkit, m.group(1))
        if m := _CUDA_WITH.search(line):
            first("build_cuda", m.group(1))
        elif "API" not in line and "compiled with" not in line.lower():
            for m in _TEXT_CUDA.finditer(line):
                if smi_line and ("|" in line or m.group(0).startswith("CUDA Version")):
                    continue  # nvidia-smi's header: the CUDA the driver supports, not a toolkit
                if "." in m.group(1) or int(m.group(1)) <= _NEWEST_CUDA_MAJOR:
                    toolkit = _add(toolkit, m.group(1))  # "cuda90" is conda's package name, not CUDA 90
        for m in _CUDA_WIN_PATH.finditer(line):
            toolkit = _add(toolkit, m.group(1))
        if "API" not in line and "compiled with" not in line.lower() and "Loaded runtime" not in line:
            for m in _TEXT_CUDNN.finditer(line):
                cudnn = _add(cudnn, m.group(1))
        if m := _CONDA_LINE.search(line):
            what = m.group(1).lower()
            if "cudnn" in what:
                cudnn = _add(cudnn, m.group(2))
            elif "nccl" in what:
                first("nccl", m.group(2))
            else:
                toolkit = _add(toolkit, m.group(2))
        if m := _LDCONFIG.search(line):
            what, version = m.group(1), m.group(2)
            if what == "cudnn":
                cudnn = _add(cudnn, version)
            elif what == "cudart":
                toolkit = _add(toolkit, version)
            else:
                first("nccl", version)
        if m := _NCCL.search(line):
            first("nccl", m.group(1) or m.group(2))
        if m := _DOCKER_TAG.search(line):
            tag = m.group(1)
            if ":" in tag and ("gpu" in tag or "cuda" in tag) and not _SOURCE_PATH.search(tag):
                first("docker_image", tag.strip("`'\" "))
        if (m := _PIP_LINE.search(line)) and not _ANOTHER_VERSION.match(line, m.end(2)):
            packages.setdefault(
                (_name(m.group(1)), m.group(2)), Package(_name(m.group(1)), m.group(2), _variant(m.group(2)))
            )
        for m in _PIP_SPEC.finditer(line):
            if _ANOTHER_VERSION.match(line, m.end(3)):
                continue  # one of several versions tried
            name, sep, version = _name(m.group(1)), m.group(2), m.group(3)
            if name in ("paddlepaddle", "tensorflow") and not (m.group(1).islower() and sep in ("==", "=", "(")):
                # "PaddlePaddle 2.1.2", "PaddlePaddle: 2.4.1": the framework, not a pinned CPU package.
                name = "paddle" if name == "paddlepaddle" else "tensorflow-any"
            packages.setdefault((name, version), Package(name, version, _variant(version)))
        if m := _TORCH_VER.search(line):
            packages.setdefault(("torch", m.group(0)), Package("torch", m.group(0), m.group(2)))
        if not any(p.name.startswith(("paddlepaddle", "tensorflow", "torch")) for p in packages.values()):
            for m in _FRAMEWORK_TEXT.finditer(line):
                if _ANOTHER_VERSION.match(line, m.end(2)):
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
        failed = _LIB_FAIL.search(line) and not HINT_LINE.search(line)
        if failed:
            for m in _LIB_SO.finditer(line):
                libs = _add(libs, m.group(1))
            for m in _LIB_DLL.finditer(line):
                libs = _add(libs, m.group(1))
        if _CUDNN_NOT_LOADED.search(line):
            libs = _add(libs, "libcudnn")
        if _INSUFFICIENT.search(line):
            signals.add("insufficient_driver")
        if _NO_KERNEL.search(line):
            signals.add("no_kernel_image")
        if _CPU_VERSION.search(line):
            signals.add("paddle_cpu_version")
        if m := _OS.search(line):
            first("os", m.group(1))
        if (m := _PYTHON.search(line)) or (m := _PY_SITE.search(line)):
            first("python", m.group(1))

    if libs:
        signals.add("library_not_found")
    if extension_cuda:
        # The toolkit the extension build found is the one that conflicts: it leads the toolkits read.
        toolkit = (extension_cuda.group(1), *(t for t in toolkit if t != extension_cuda.group(1)))
    framework_text = env.pop("framework_text", None)
    if framework_text and not packages:
        name, version = str(framework_text).split("==")
        packages[(name, version)] = Package(name, version, _variant(version))
    os_name = env.get("os")
    if os_name is None and _WIN_PATH.search(text):
        os_name = "Windows"
    elif os_name is None and _LINUX_PATH.search(text):
        os_name = "Linux"
    docker_image = env.get("docker_image")
    build_cuda = env.get("build_cuda")
    build_cudnn = env.get("build_cudnn")
    image_cuda = image_cudnn = None
    if isinstance(docker_image, str):
        if m := _TAG_CUDA.search(docker_image):
            image_cuda = m.group(1)
        if m := _TAG_CUDNN.search(docker_image):
            image_cudnn = m.group(1)
        if (m := _TAG_VERSION.search(docker_image)) and not packages:
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
        docker=bool(docker_image) or bool(_DOCKER.search(text)),
        wsl=bool(_WSL.search(text)),
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
