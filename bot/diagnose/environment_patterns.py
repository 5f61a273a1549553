"""The patterns :func:`bot.diagnose.environment.read_environment` reads a paste with: one per thing a user pastes
(the nvidia-smi header, nvcc, Paddle's run_check lines, pip/conda lines, library messages …), each linear (character
classes with bounded repeats, no nested quantifiers; tests/engine/test_environment_bad_input.py checks every one), and
the keywords that choose which lines are read at all.

    >>> SMI_DRIVER.search("| NVIDIA-SMI 418.67       Driver Version: 418.67       CUDA Version: 10.1     |").group(1)
    '418.67'
"""

from __future__ import annotations

import re

SMI_DRIVER = re.compile(
    r"(?:NVIDIA-SMI\s{1,40}[\d.]{3,12}\s{1,40})?Driver Version:\s{0,8}(\d{2,3}\.\d{1,3}(?:\.\d{1,3})?)"
)
SMI_CUDA = re.compile(r"(?<!API )CUDA Version:\s{0,8}(\d{1,2}\.\d{1,2})")
SMI_HEAD = re.compile(r"NVIDIA-SMI\s{1,40}(\d{2,3}\.\d{1,3}(?:\.\d{1,3})?)")
SMI_GPU_ROW = re.compile(r"^\|\s{1,6}\d{1,2}\s{1,6}([A-Za-z][\w .\-/]{2,40}?)\s{1,30}(?:On|Off|WDDM|TCC)\s{0,6}\|")
QUERY_GPU = re.compile(
    r"^\s{0,4}(?:GPU \d{1,2}: )?((?:NVIDIA |Tesla |GeForce |Quadro )[\w .\-]{2,40}?)\s{0,4}(?:\(UUID|,\s{0,3}\d{1,2}\.\d)"
)
TEXT_DRIVER = re.compile(r"(?:驱动|driver)[^\n\d]{0,24}?(\d{3}\.\d{1,3}(?:\.\d{1,3})?)(?![\d.])", re.IGNORECASE)
WIN_DRIVER = re.compile(r"(?<![\d.])(\d{2})\.(\d{2})\.1(\d)\.(\d{2})(\d{2})(?![\d.])")
PADDLE_CC = re.compile(r"(?:GPU Compute|CUDA) Capability:\s{0,4}(\d{1,2})(?:\.(\d))?")
DRIVER_API = re.compile(r"Driver API Version:\s{0,4}(\d{1,2}\.\d{1,2})")
RUNTIME_API = re.compile(r"Runtime API Version:\s{0,4}(\d{1,2}\.\d{1,2})")
PADDLE_CUDNN = re.compile(r"cuDNN Version:\s{0,4}(\d{1,2}\.\d{1,2})")
CUDNN_OLDER = re.compile(
    r"compiled with CUDNN\s{0,4}(\d{1,2}\.\d{1,2}),\s{0,4}but CUDNN version in your machine is\s{0,4}(\d{1,2})\s{0,40}\.\s{0,4}(\d{1,2})",
    re.IGNORECASE,
)
CUDA_OLDER = re.compile(
    r"compiled with CUDA\s{0,4}(\d{1,2}\.\d{1,2}),\s{0,4}but CUDA runtime version in your machine is\s{0,4}(\d{1,2}\.\d{1,2})",
    re.IGNORECASE,
)
PADDLE_ARCH = re.compile(
    r"machine is (\w{2,12}), which is not compatible with Paddle installation with arch:\s{0,4}([\d ]{2,80})"
)
TORCH_ARCH = re.compile(r"with CUDA capability sm_(\d{2,3}) is not compatible", re.IGNORECASE)
TORCH_ARCH_LIST = re.compile(r"supports CUDA capabilities ((?:sm_\d{2,3} ?){1,20})", re.IGNORECASE)
# torch/cuda/__init__.py's older check (same function as the sm_X warning): "Found GPU0 GeForce GTX 960M which is
# of cuda capability 5.0. PyTorch no longer supports this GPU because it is too old."
TORCH_OLD_GPU = re.compile(r"Found GPU\d{1,2} ([A-Za-z][\w .\-]{2,40}?) which is of cuda capability (\d{1,2}\.\d)\b")
# torch/utils/cpp_extension.py, building an extension: "The detected CUDA version (10.1) mismatches the version that
# was used to compile PyTorch (11.3)" (raised only when the majors differ; a minor difference is a warning).
TORCH_EXT_CUDA = re.compile(
    r"detected CUDA version \((\d{1,2}\.\d{1,2})\) mismatches the version that was used to compile\s{1,12}"
    r"PyTorch \((\d{1,2}\.\d{1,2})\)"
)
TF_CUDNN = re.compile(
    r"Loaded runtime CuDNN library:\s{0,4}(\d{1,2}\.\d{1,2})[\d.]{0,6} but source was compiled with:\s{0,4}(\d{1,2}\.\d{1,2})",
    re.IGNORECASE,
)
# TensorFlow 1.x prints the versions as integers: "Loaded runtime CuDNN library: 7301 (compatibility version 7300)
# but source was compiled with 7003 (compatibility version 7000)" (major*1000 + minor*100 + patch).
TF_CUDNN_INT = re.compile(
    r"Loaded runtime CuDNN library:\s{0,4}(\d)(\d)\d{2}\s{0,4}\(compatibility version \d{4}\)\s{0,4}"
    r"but source was compiled with:?\s{0,4}(\d)(\d)\d{2}(?!\d)",
    re.IGNORECASE,
)
TF_JIT = re.compile(r"not built with CUDA kernel binaries compatible with compute capability (\d{1,2}\.\d)")
TF_MIN_CC = re.compile(
    r"with Cuda compute capability (\d{1,2}\.\d)\. The minimum required Cuda capability is (\d{1,2}\.\d)"
)
TF_DEVICE = re.compile(
    r"name: ([A-Za-z][\w .\-]{2,40}?)(?:, pci bus id: [\w:.]{4,20}, compute capability: (\d{1,2}\.\d)|"
    r" major: (\d{1,2}) minor: (\d)| computeCapability: (\d{1,2}\.\d))"
)
TF_LOADED_CUDNN = re.compile(r"Loaded cuDNN version (\d{4,5})")
TORCH_CUDNN = re.compile(
    r"compiled against \((\d{1,2}), (\d{1,2}), \d{1,3}\) but (?:found|linked against) runtime version "
    r"\((\d{1,2}), (\d{1,2})"
)
# Older PyTorch prints cuDNN's integer version (major*1000 + minor*100 + patch): "cuDNN version mismatch: PyTorch was
# compiled against 6021 but linked against 5110" is 6.0.21 against 5.1.10.
TORCH_CUDNN_INT = re.compile(r"compiled against (\d)(\d)\d{2} but linked against (\d)(\d)\d{2}(?!\d)")
# The CUDA driver API version as an integer, major*1000 + minor*10: 6000 is 6.0, 10020 is 10.2, 11040 is 11.4.
TORCH_FOUND = re.compile(r"driver on your system is too old \(found version (\d{4,5})\)")
NVCC = re.compile(r"Cuda compilation tools, release (\d{1,2}\.\d{1,2})|Build cuda_(\d{1,2}\.\d{1,2})\.r")
VERSION_TXT = re.compile(r"CUDA Version (\d{1,2}\.\d{1,2})\.\d{1,4}")
NEWEST_CUDA_MAJOR = 13  # a bare number above it after "cuda" is a package name (conda's cuda90), not a version
TEXT_CUDA = re.compile(
    r"(?<![A-Za-z0-9_\-./])(?:cuda|cudatoolkit)(?:\s{0,3}(?:toolkit|版本|ver[A-Za-z]{0,8}|version))?\s{0,3}(?:[:：=]|为|是)?\s{0,3}v?(\d{1,2}(?:\.\d{1,2})?)(?:\.\d{1,4})?(?![\d.]{0,1}\d)",
    re.IGNORECASE,
)
# Windows' toolkit folder, as CUDA_PATH and PATH print it: "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8".
CUDA_WIN_PATH = re.compile(r"GPU Computing Toolkit[\\/]{1,2}CUDA[\\/]{1,2}v(\d{1,2}\.\d)(?!\d)", re.IGNORECASE)
CUDA_WITH = re.compile(r"paddle\s{0,3}with\s{0,3}cuda\s{0,3}[:：=]?\s{0,3}(\d{1,2}\.\d{1,2})", re.IGNORECASE)
TEXT_CUDNN = re.compile(
    r"(?<![A-Za-z0-9_\-./])cudnn(?:\s{0,3}(?:版本|ver[A-Za-z]{0,8}|version))?\s{0,3}(?:[:：=]|为|是)?\s{0,3}v?(\d\.\d{1,2}(?:\.\d{1,2})?)",
    re.IGNORECASE,
)
CUDNN_H = re.compile(r"CUDNN_MAJOR\s{1,8}(\d{1,2})\s{0,8}#define CUDNN_MINOR\s{1,8}(\d{1,2})")
NCCL = re.compile(r"NCCL (?:version )?(\d\.\d{1,2}\.\d{1,2})|nccl[:=\s]{1,4}(\d\.\d{1,2}\.\d{1,2})", re.IGNORECASE)
DOCKER_TAG = re.compile(
    r"([\w./\-]{0,80}paddle:[\w.\-]{0,80}|[\w./\-]{0,80}(?:tensorflow|pytorch)[\w./\-]{0,40}:[\w.\-]{0,80})"
)
# A source file and line in a log ("tensorflow/stream_executor/cuda/cuda_dnn.cc:319"), not an image tag.
SOURCE_PATH = re.compile(r"\.(?:cc|cpp|cu|cuh|c|h|hpp|py|pyx|so|java|go|rs):\d{0,6}$")
# "2.0.2和2.0.1都试过", "2.5 or 2.6": one of several versions tried, not the one installed.
ANOTHER_VERSION = re.compile(r"\s{0,3}(?:和|与|跟|及|、|,|，|/|and |or |或)\s{0,3}v?\d{1,2}\.\d", re.IGNORECASE)
TAG_CUDA = re.compile(r"cuda(\d{1,2}\.\d{1,2})")
TAG_CUDNN = re.compile(r"cudnn(\d{1,2}(?:\.\d{1,2})?)")
TAG_VERSION = re.compile(r":(\d\.\d{1,2}\.\d{1,2}\w{0,6})-gpu")

_PKG_NAMES = r"paddlepaddle[-_]gpu|paddlepaddle|tensorflow[-_]gpu|tensorflow[-_]cpu|tensorflow[-_]intel|tensorflow|torch|jax|jaxlib"
PIP_LINE = re.compile(
    rf"^[\s*`>]{{0,6}}({_PKG_NAMES})\s{{1,40}}v?(\d{{1,2}}\.\d{{1,3}}[A-Za-z0-9_.+]{{0,24}})(?:\s|$)", re.IGNORECASE
)
PIP_SPEC = re.compile(
    rf"(?<![A-Za-z0-9_\-])({_PKG_NAMES})\s{{0,3}}(===|==|=|：|:|\(|\s)\s{{0,3}}\*{{0,2}}v?(\d{{1,2}}\.\d{{1,3}}[A-Za-z0-9_.+]{{0,24}})",
    re.IGNORECASE,
)
PIP_SHOW = re.compile(
    rf"Name:\s{{0,4}}({_PKG_NAMES})\s{{0,4}}\n\s{{0,4}}Version:\s{{0,4}}(\d{{1,2}}\.\d{{1,3}}[A-Za-z0-9_.+]{{0,24}})",
    re.IGNORECASE,
)
FRAMEWORK_TEXT = re.compile(
    r"(?<![A-Za-z0-9_\-])(paddle(?:paddle)?|tensorflow|tf|torch|pytorch)(?:[\s_.]{0,3}(?:version|版本|__version__))?\s{0,3}"
    r"(?:==|=|：|:|是|为)?\s{0,3}`?(\d\.\d{1,2}(?:\.\d{1,2})?(?:rc\d?|\.post\d{2,3}|\.cu\d{3}|\+cu\d{3}|\+cpu)?)",
    re.IGNORECASE,
)
VERSION_PRINT = re.compile(
    r"(tf|tensorflow|torch|paddle)\.__version__\)?\s{0,4}\n?\s{0,4}['\"]?(\d\.\d{1,2}\.\d{1,2}[A-Za-z0-9_+.]{0,12})"
)
# python -c "import tensorflow as tf; print(tf.__version__); …" then its first output line (no call before the print).
VERSION_PRINT_C = re.compile(
    r"-c {0,2}[\"'][^\n\"'()]{0,200}print\((tf|tensorflow|torch|paddle)\.__version__\)[^\n]{0,300}\n"
    r" {0,4}(\d\.\d{1,2}\.\d{1,2}[A-Za-z0-9_+.]{0,12})"
)
TORCH_CUDA = re.compile(
    r"torch\.version\.cuda\)?`?\s{0,4}\n?\s{0,4}(?:returns?\s{1,3})?['\"]?(\d{1,2}\.\d{1,2}|None)|"
    r"CUDA used to build PyTorch:\s{0,4}(\d{1,2}\.\d{1,2}|None|Could not collect)"
)
# collect_env prints torch.version.cuda, None (or "Could not collect") for a build without CUDA; ROCm builds too.
TORCH_ROCM = re.compile(r"ROCM used to build PyTorch:\s{0,4}\d")
# collect_env's "CUDA runtime version" is the machine's toolkit (nvcc), not the runtime the wheel brings.
COLLECT_ENV_CUDA = re.compile(r"^CUDA runtime version:\s{0,4}(\d{1,2}\.\d{1,2})")
# The TensorFlow issue templates: "### TensorFlow version", blank lines, then the version ("tf 2.16",
# "v2.12.0-rc1-… 2.12.0"); the older "- TensorFlow version (use command below): 2.1.0".
TF_TEMPLATE = re.compile(
    r"^#{2,4} {0,3}tensorflow version {0,3}\n(?: {0,8}\n){0,3} {0,8}(?:tf {0,2})?v?(\d\.\d{1,2}(?:\.\d{1,2})?)|"
    r"tensorflow version \(use command below\): {0,4}(?:tf {0,2})?v?(\d\.\d{1,2}(?:\.\d{1,2})?)",
    re.IGNORECASE | re.MULTILINE,
)
# The same templates' "CUDA/cuDNN version": the first number is the CUDA toolkit ("10.2.89", "cuda_11.8.0_522.06_…"),
# a second one after a slash the cuDNN ("`11.0 / v8.0.1`").
TEMPLATE_CUDA = re.compile(
    r"^(?:#{2,4} {0,3}|[-*] {0,3})?CUDA/cuDNN version:? {0,3}\n?(?: {0,8}\n){0,3} {0,8}`?(?:cuda[_ ]?)?v?"
    r"(\d{1,2}\.\d)(?:\.\d{1,4})?(?![\d.]{0,1}\d)(?: {0,3}/ {0,3}(?:cudnn[_ ]?)?v?(\d\.\d{1,2}(?:\.\d{1,3})?))?",
    re.IGNORECASE | re.MULTILINE,
)
TF_BUILD_CUDA = re.compile(r"'cuda_version'[:,]\s{0,2}'(?:64_)?(\d{1,2})\.?(\d)'")
TF_BUILD_CUDNN = re.compile(r"'cudnn_version'[:,]\s{0,2}'(?:64_)?(\d{1,2}(?:\.\d{1,2})?)'")
TF_IS_CUDA = re.compile(r"'is_cuda_build'[:,]\s{0,2}(True|False)")
CONDA_LINE = re.compile(
    r"^\s{0,4}(cudatoolkit|cuda-toolkit|cuda-runtime|cuda-cudart|cudnn|nccl|nvidia-cudnn-cu1\d|"
    r"nvidia-cuda-runtime-cu1\d|nvidia-nccl-cu1\d)\s{2,60}(\d{1,2}\.\d{1,2}(?:\.\d{1,4})?)",
    re.IGNORECASE,
)
LDCONFIG = re.compile(r"lib(cudnn|cudart|nccl)\.so\.(\d{1,2}(?:\.\d{1,2}){0,2})\s{1,4}\(libc6")
TORCH_VER = re.compile(r"(\d\.\d{1,2}\.\d{1,2})\+(cpu|cu\d{2,3})")
# The wheel index a plain torch version was installed from: "--index-url https://download.pytorch.org/whl/cu121",
# "PyTorch index: cu121" (the index serves one CUDA build).
TORCH_INDEX = re.compile(
    r"download\.pytorch\.org/whl/(cpu|cu\d{3})\b|pytorch index:? {0,3}`?(cpu|cu\d{3})\b", re.IGNORECASE
)
LIB_SO = re.compile(
    r"(lib(?:cudart|cudnn(?:_\w{1,20})?|cublasLt|cublas|cufft|curand|cusolver|cusparse|nccl|cuda|nvrtc)\.so(?:\.\d{1,3}){0,3})"
)
LIB_DLL = re.compile(
    r"((?:cudnn(?:_\w{1,20})?64_\d{1,2}|cudart64_\d{2,4}|cublas(?:Lt)?64_\d{2,4}|cufft64_\d{2,4}|curand64_\d{2,4}|"
    r"cusolver64_\d{2,4}|cusparse64_\d{2,4}|nvcuda|zlibwapi|nccl)\.dll)",
    re.IGNORECASE,
)
LIB_FAIL = re.compile(
    r"cannot open shared object|not found|No such file|Could not load|Could not locate|Can not find|"
    r"Cannot load|Failed to find|not configured correctly|error code is 126|找不到|缺少|缺失|dlerror",
    re.IGNORECASE,
)
CUDNN_NOT_LOADED = re.compile(r"Cannot load cudnn shared library|cudnn_dso_handle should not be null", re.IGNORECASE)
INSUFFICIENT = re.compile(
    r"driver version is insufficient for CUDA runtime|cudaErrorInsufficientDriver|CUDA error\(35\)|"
    r"Cuda error\(35\)|NVIDIA driver on your system is too old",
    re.IGNORECASE,
)
NO_KERNEL = re.compile(r"no kernel image is available|cudaErrorNoKernelImageForDevice", re.IGNORECASE)
CPU_VERSION = re.compile(r"You are using paddlepaddle cpu version", re.IGNORECASE)
NOT_COMPILED = re.compile(
    r"Not compiled with CUDA|Torch not compiled with CUDA enabled|is_compiled_with_cuda\(\)\)?\s{0,4}\n?\s{0,4}False",
    re.IGNORECASE,
)
TF_NOT_BUILT = re.compile(r"is_built_with_cuda\(\)\)?\s{0,4}\n?\s{0,4}False", re.IGNORECASE)
GPU_BUILD = re.compile(
    r"(?:compiled|built) with (?:cuda|CUDA)\s{0,3}[:：]?\s{0,3}True|is_built_with_cuda\(\)\)?\s{0,4}\n?\s{0,4}True|"
    r"is_compiled_with_cuda\(\)\)?\s{0,4}\n?\s{0,4}True|"
    # Paddle's own words for its GPU build: "Compiled with WITH_GPU, but no GPU found in runtime", "You are using GPU
    # version Paddle, but your CUDA device is not set properly".
    r"Compiled with WITH_GPU|You are using GPU version Paddle"
)
# A GPU named in prose: GeForce/RTX/GTX numbers, and data-centre models (two-character ones only with a prefix).
TEXT_GPU = re.compile(
    r"(?<![A-Za-z0-9])((?:NVIDIA )?(?:GeForce )?(?:RTX|GTX) ?\d{3,4}(?: ?Ti)?(?: Laptop GPU| SUPER)?|"
    r"(?:NVIDIA |Tesla )?(?:A100|A30|A40|A10|A16|H100|H200|H800|A800|L40S|L40|T4|V100|P100|P40)(?:-[A-Z0-9]{2,8}){0,2}|"
    r"(?:NVIDIA |Tesla )(?:A2|L4|P4|K80))(?![A-Za-z0-9])"
)
GPU_WORKS = re.compile(
    r"PaddlePaddle works well on \d{1,2} GPU|PhysicalDevice\(name='/physical_device:GPU|"
    r"Created (?:TensorFlow )?device \(?/job:\w{1,20}/replica:0/task:0/device:GPU|is_available\(\)\)?\s{0,4}\n?\s{0,4}True|"
    r"GPU available: True|Is CUDA available: (?:True|Yes)",
    re.IGNORECASE,
)
# The CUDA libraries come as pip wheels beside the framework (TensorFlow's "pip install tensorflow[and-cuda]").
PIP_CUDA = re.compile(r"\[and-cuda\]|nvidia-cuda-runtime-cu1\d|nvidia-cudnn-cu1\d", re.IGNORECASE)
NO_GPU = re.compile(
    r"list_physical_devices\(\s{0,2}'GPU'\s{0,2}\)\)?\s{0,4}\n?\s{0,4}\[\]|is_available\(\)\)?\s{0,4}\n?\s{0,4}False|"
    r"Is CUDA available: (?:False|No)\b",
    re.IGNORECASE,
)
OS = re.compile(
    r"(Ubuntu\s{0,2}\d{2}\.\d{2}|Ubuntu\s{0,2}\d{2}|CentOS\s{0,2}\d{1,2}|Red Hat|Debian|win(?:dows)?\s{0,2}1[01]|"
    r"Windows Server \d{4}|winserver\d{4}|macOS|Windows)",
    re.IGNORECASE,
)
# A Linux (or WSL, or container) path of a Python install or home directory: the Linux rows apply.
LINUX_PATH = re.compile(r"(?<![\w:\\])/(?:home|usr|opt|root)/[\w.\-]{1,60}/[\w./\-]{0,120}(?:site|dist)-packages/")
# A card named by its number alone ("gpu为3060", "显卡是 2080 Ti"): GeForce numbers, GTX below 20xx.
BARE_GPU = re.compile(
    r"(?:gpu|显卡|卡)\s{0,3}(?:是|为|用的是|型号是?|[:：])?\s{0,3}((?:[1-4]0[5-9]0)(?: ?Ti| ?SUPER)?)(?![\d.])",
    re.IGNORECASE,
)
WIN_PATH = re.compile(r"(?<![\w])[A-Z]:\\\\?[\w.]|\.dll\b|\.exe\b|win32|win_amd64", re.IGNORECASE)
PYTHON = re.compile(
    r"(?:python|Python|py)\s{0,3}(?:version)?\s{0,3}[:：=]?\s{0,3}(3\.\d{1,2}(?:\.\d{1,2})?|2\.7(?:\.\d{1,2})?)(?![\d])"
)
PY_SITE = re.compile(r"python(3\.\d{1,2}|2\.7)/site-packages")
DOCKER = re.compile(r"docker|nvidia-docker|/\.dockerenv|container", re.IGNORECASE)
WSL = re.compile(r"\bWSL2?\b|microsoft-standard|/mnt/c/", re.IGNORECASE)


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

KEYWORD = re.compile("|".join(re.escape(k) for k in _LINE_KEYWORDS))
