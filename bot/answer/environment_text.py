"""The words for an environment diagnosis, in the user's language (zh/en). Pure: a Diagnosis in, markdown out.

>>> from bot.diagnose.compat import Diagnosis, Mismatch, Source
>>> from bot.records import Environment
>>> row = Source("driver", "10.2", "https://docs.nvidia.com/x")
>>> d = Diagnosis(Environment(driver="418.67"), (Mismatch("driver_too_old", {"driver": "418.67", "cuda": "10.2"}, row, "table"),), "mismatch")
>>> print(describe(d, "en").splitlines()[1])
- **Driver too old**: NVIDIA driver 418.67 is older than the minimum for CUDA 10.2. Source: [NVIDIA documentation (CUDA 10.2)](https://docs.nvidia.com/x)
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

from bot.diagnose.compat import Diagnosis, Install, Mismatch, Source
from bot.records import Environment

Language = str  # "zh" or "en"; anything else reads as English

TITLES = {
    "driver_too_old": {"zh": "驱动版本过旧", "en": "Driver too old"},
    "cudnn_cuda": {"zh": "cuDNN 与 CUDA 不匹配", "en": "cuDNN does not match CUDA"},
    "wheel_cuda": {"zh": "安装包的 CUDA 版本与本机不符", "en": "Package built for another CUDA"},
    "cpu_only_wheel": {"zh": "装的是 CPU 版", "en": "CPU-only build installed"},
    "compute_capability": {"zh": "GPU 架构与安装包不匹配", "en": "GPU architecture not in the build"},
    "missing_library": {"zh": "找不到 CUDA 库", "en": "CUDA library not found"},
}

FIXES = {
    "driver_too_old": {
        "zh": "升级 NVIDIA 驱动到该 CUDA 要求的最低版本以上，或改装与当前驱动匹配的 CUDA 版本安装包。",
        "en": "upgrade the NVIDIA driver to at least the minimum for that CUDA, or install the build for a CUDA your driver supports.",
    },
    "cudnn_cuda": {
        "zh": "安装与 CUDA 和框架编译版本一致的 cuDNN，并确认 LD_LIBRARY_PATH / PATH 里没有更早的 cuDNN 排在前面。",
        "en": "install the cuDNN that matches your CUDA and the framework build, and make sure no older cuDNN comes first on LD_LIBRARY_PATH / PATH.",
    },
    "wheel_cuda": {
        "zh": "卸载后按本机 CUDA 版本重新安装对应的 GPU 包（如 paddlepaddle-gpu 的 postXXX / cuXXX 版本），或安装该包要求的 CUDA。",
        "en": "reinstall the GPU package built for the CUDA on this machine (e.g. the postXXX / cuXXX build), or install the CUDA the package needs.",
    },
    "cpu_only_wheel": {
        "zh": "卸载 CPU 版（pip uninstall paddlepaddle / tensorflow-cpu / torch+cpu），再安装 GPU 版。",
        "en": "uninstall the CPU build (pip uninstall paddlepaddle / tensorflow-cpu / torch+cpu) and install the GPU build.",
    },
    "compute_capability": {
        "zh": "换用支持该 GPU 架构的安装包（更新的 CUDA 版本编译的包，例如 Ampere 需要 CUDA 11 及以上）。",
        "en": "install a build compiled for this GPU's architecture (a build for a newer CUDA; Ampere needs CUDA 11 or later).",
    },
    "missing_library": {
        "zh": "确认该库已安装，并把它所在目录加入 LD_LIBRARY_PATH（Linux）或 PATH（Windows）。",
        "en": "make sure the library is installed and its directory is on LD_LIBRARY_PATH (Linux) or PATH (Windows).",
    },
}

ASKS = {
    "nvidia_smi": {
        "zh": "请贴出 `nvidia-smi` 的输出（前几行即可），以便确认驱动版本。",
        "en": "Please paste the output of `nvidia-smi` (the first lines are enough) so the driver version is known.",
    },
    "nvcc": {"zh": "请贴出 `nvcc --version` 的输出。", "en": "Please paste the output of `nvcc --version`."},
    "run_check": {
        "zh": '请贴出 `python -c "import paddle; paddle.utils.run_check()"` 的输出（TensorFlow 用 '
        '`python -c "import tensorflow as tf; print(tf.sysconfig.get_build_info())"`）。',
        "en": 'Please paste the output of `python -c "import paddle; paddle.utils.run_check()"` (TensorFlow: '
        '`python -c "import tensorflow as tf; print(tf.sysconfig.get_build_info())"`).',
    },
    "pip_list": {
        "zh": '请贴出 `pip list | grep -i -E "paddle|tensorflow|torch"` 的输出，以便确认装的是哪个版本的包。',
        "en": 'Please paste the output of `pip list | grep -i -E "paddle|tensorflow|torch"` so the installed build is known.',
    },
    "gpu_query": {
        "zh": "请贴出 `nvidia-smi --query-gpu=name,compute_cap --format=csv` 的输出，以便确认 GPU 的计算能力。",
        "en": "Please paste the output of `nvidia-smi --query-gpu=name,compute_cap --format=csv` so the GPU's compute capability is known.",
    },
    "cudnn_version": {
        "zh": "请贴出 `cat /usr/include/cudnn_version.h | grep CUDNN_MAJOR -A 2` 的输出。",
        "en": "Please paste the output of `cat /usr/include/cudnn_version.h | grep CUDNN_MAJOR -A 2`.",
    },
}

HEADINGS = {
    "mismatch": {
        "zh": "**环境检查**：从你贴出的信息中发现以下版本问题：",
        "en": "**Environment check**: the versions you pasted show:",
    },
    "consistent": {
        "zh": "**环境检查**：你贴出的版本之间没有发现不匹配（{checked}），下面按问题本身回答。",
        "en": "**Environment check**: the versions you pasted are consistent ({checked}); the answer below goes on from there.",
    },
    "incomplete": {
        "zh": "**环境检查**：还差一个版本信息才能判断。",
        "en": "**Environment check**: one value is missing to decide.",
    },
}
CHECKED = {
    "driver": {"zh": "驱动与 CUDA", "en": "driver and CUDA"},
    "compute_capability": {"zh": "GPU 架构", "en": "GPU architecture"},
    "wheel_cuda": {"zh": "安装包与 CUDA", "en": "package and CUDA"},
    "cudnn_cuda": {"zh": "cuDNN 与 CUDA", "en": "cuDNN and CUDA"},
}
FIX_WORD = {"zh": "解决", "en": "Fix"}
SOURCE_WORD = {"zh": "来源", "en": "Source"}


def _lang(language: Language) -> str:
    return "zh" if language == "zh" else "en"


def sentence(m: Mismatch, language: Language, typed: Typed = ()) -> str:
    """What is wrong, with every conflicting value read (those the wording leaves out follow in brackets), then the
    user's own words for those values (``typed``, from the paste: :func:`quotes`).

    >>> from bot.diagnose.compat import Mismatch, Source
    >>> sentence(Mismatch("driver_too_old", {"driver": "418.67", "driver_cuda": "10.1"}, Source("message", "k", "u"),
    ...                   "message"), "en")  # doctest: +ELLIPSIS
    'the error “CUDA driver version ... (versions pasted: driver 418.67, driver supports CUDA up to 10.1)'
    """
    said = _sentence(m, language)
    zh = _lang(language) == "zh"
    left = [
        f"{_LABELS[key][0 if zh else 1]} {_shown(value) if key == 'package' else value}"
        for key, value in m.values.items()
        if key in _LABELS and value and not _names(said, value) and not _names(said, _shown(value))
    ]
    own = quotes(m, typed, said + " " + " ".join(left))
    parts = []
    if left:
        parts.append(f"贴出的版本：{'，'.join(left)}" if zh else f"versions pasted: {', '.join(left)}")
    if own:
        shown = ("、" if zh else ", ").join(f"`{q}`" for q in own)
        parts.append(f"你贴出的原文：{shown}" if zh else f"as you wrote them: {shown}")
    if not parts:
        return said
    return f"{said}（{'；'.join(parts)}）" if zh else f"{said} ({'; '.join(parts)})"


def _shown(package: str) -> str:
    """A package as a reader names it: the reader's "tensorflow-any" (tf.__version__ does not say which TensorFlow
    package printed it) is TensorFlow.

    >>> _shown("tensorflow-any==2.13.0"), _shown("paddlepaddle-gpu==2.5.2")
    ('TensorFlow 2.13.0', 'paddlepaddle-gpu==2.5.2')
    """
    return f"TensorFlow {package.split('==', 1)[1]}" if package.startswith("tensorflow-any==") else package


Typed = tuple[tuple[str, str, str], ...]  # bot.records.Environment.typed: (field, value read, the user's words)

# Which of the user's words stand for a value of a finding: the finding's key -> the reader's fields. The build's
# CUDA is not here: it comes from the table or a build tag, and a machine's "cuda 10.2" quoted beside it would mislead.
_TYPED_FIELDS = {
    "cuda": ("cuda",),
    "toolkit": ("cuda",),
    "cudnn": ("cudnn",),
    "build_cudnn": ("build_cudnn",),
    "compute_capability": ("compute_capability",),
    "build_arch": ("build_arch",),
    "gpu_arch": ("gpu_arch",),
    "build_cuda": ("build_cuda",),
    "driver": ("driver",),
    "gpu": ("gpu",),
    "package": ("package",),
    "library": ("library", "library_path"),
    "os": ("os",),
}
_QUOTES_PER_VALUE = 2  # a value pasted in three places is quoted from the first two


def quotes(m: Mismatch, typed: Typed, said: str = "") -> tuple[str, ...]:
    """The user's own words for the values of finding ``m``, as the paste has them, that ``said`` does not already
    hold (compared whatever the case and spacing). Only spans the reader kept from the paste are quoted: nothing is
    guessed or rewritten.

    >>> from bot.diagnose.compat import Mismatch, Source
    >>> m = Mismatch("wheel_cuda", {"cuda": "11.1", "package": "tensorflow-any==2.4.0"}, Source("wheel", "k", "u"), "table")
    >>> quotes(m, (("cuda", "11.1", "11.1 & 8.0.5"), ("package", "tensorflow-any==2.4.0", "2.4.0-rc1"), ("gpu", "RTX 3080", "RTX 3080")))
    ('11.1 & 8.0.5', '2.4.0-rc1')
    """
    out: list[str] = []
    held = _flat(said)
    for key, value in m.values.items():
        fields = _TYPED_FIELDS.get(key)
        if not fields or not value:
            continue
        parts = {p.strip() for p in str(value).split(",")} | {str(value)}
        if key == "os":
            # The system as the user described it, wherever it was read ("Ubuntu18.04" in a title, then the template).
            found = [words for field, read, words in typed if field == "os"]
        elif key == "gpu":
            # A model is the same model whatever the spacing and case ("RTX3090" is the "RTX 3090" read).
            parts |= {_model(p) for p in parts}
            found = [words for field, read, words in typed if field == "gpu" and _model(read) in parts]
        else:
            found = [words for field, read, words in typed if field in fields and (read in parts or key == "library")]
        if key == "library":
            # A library's path as the loader printed it, and the search path it printed: only for the libraries named.
            found = [
                words
                for field, read, words in typed
                if field == "library_path" or (field == "library" and read in parts and words != read)
            ]
        for words in found[:_QUOTES_PER_VALUE]:
            if _flat(words) not in held and not any(_flat(words) in _flat(q) for q in out):
                out = [q for q in out if _flat(q) not in _flat(words)] + [words]  # the longer quote holds the shorter
    return tuple(out)


def _model(name: str) -> str:
    return re.sub(r"\s+", "", name.lower())


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def _names(said: str, value: str) -> bool:
    """The words name the value on its own, not inside a file name or a longer number ("10.0" is not named by
    "libcublas.so.10.0", nor "8.0" by "18.04").

    >>> _names("the library libcublas.so.10.0 was not found", "10.0"), _names("CUDA 10.0 build", "10.0")
    (False, True)
    """
    return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", said) is not None


# The values a finding may hold, as a reader names them (zh, en).
_LABELS = {
    "gpu": ("GPU", "GPU"),
    "compute_capability": ("计算能力", "compute capability"),
    "driver": ("驱动", "driver"),
    "driver_cuda": ("驱动最高支持 CUDA", "driver supports CUDA up to"),
    "cuda": ("CUDA", "CUDA"),
    "build_cuda": ("安装包的 CUDA", "the build's CUDA"),
    "cudnn": ("cuDNN", "cuDNN"),
    "build_cudnn": ("编译用的 cuDNN", "the build's cuDNN"),
    "build_arch": ("安装包编译的架构", "the build's architectures"),
    "gpu_arch": ("GPU 架构", "GPU architecture"),
    "toolkit": ("本机 CUDA 工具包", "CUDA toolkit installed"),
    "package": ("安装包", "package"),
    "os": ("系统", "OS"),
}


def _sentence(m: Mismatch, language: Language) -> str:
    """What is wrong, with the values read, in one sentence.

    >>> from bot.diagnose.compat import Mismatch, Source
    >>> sentence(Mismatch("driver_too_old", {"driver": "418.67", "driver_cuda": "10.1", "build_cuda": "11.7"},
    ...                   Source("driver", "11.x", "u"), "table"), "zh")
    '驱动 418.67 最高支持 CUDA 10.1；安装包是 CUDA 11.7 版本'
    """
    lang = _lang(language)
    v = m.values
    zh = lang == "zh"
    cuda = v.get("build_cuda") or v.get("cuda")
    if m.code == "driver_too_old":
        if v.get("driver") and v.get("driver_cuda") and cuda:
            return (
                f"驱动 {v['driver']} 最高支持 CUDA {v['driver_cuda']}；安装包是 CUDA {cuda} 版本"
                if zh
                else f"driver {v['driver']} supports CUDA up to {v['driver_cuda']}; the build needs CUDA {cuda}"
            )
        if v.get("driver") and cuda:
            minimum = v.get("minimum")
            return (
                f"NVIDIA 驱动 {v['driver']} 低于 CUDA {cuda} 要求的最低版本" + (f" {minimum}" if minimum else "")
                if zh
                else f"NVIDIA driver {v['driver']} is older than the minimum for CUDA {cuda}"
                + (f" ({minimum})" if minimum else "")
            )
        return (
            "报错 “CUDA driver version is insufficient for CUDA runtime version” 说明驱动比安装包用的 CUDA 旧"
            if zh
            else "the error “CUDA driver version is insufficient for CUDA runtime version” says the driver is older than the CUDA the build uses"
        )
    if m.code == "compute_capability":
        family = v.get("gpu_arch")  # the framework's name for the architecture ("Pascal"), when no model is shown
        gpu = v.get("gpu") or ((f"{family} 架构的 GPU" if zh else f"{family} GPU") if family else "GPU")
        cc = v.get("compute_capability")
        if v.get("build_arch") and cc:
            return (
                f"{gpu}（计算能力 {cc}）不在安装包编译的架构 {v['build_arch']} 之内"
                if zh
                else f"{gpu} (compute capability {cc}) is not among the build's architectures {v['build_arch']}"
            )
        if v.get("build_arch"):
            # The framework named the GPU's architecture, not its capability ("Pascal" against arch 70 75 80 86).
            return (
                f"{gpu} 不在安装包编译的架构 {v['build_arch']} 之内"
                if zh
                else f"the {gpu} is not among the build's architectures {v['build_arch']}"
            )
        if cc and cuda and v.get("max_cc"):
            return (
                f"{gpu} 的计算能力是 {cc}，而 CUDA {cuda} 最高只支持 {v['max_cc']}"
                if zh
                else f"{gpu} has compute capability {cc}; CUDA {cuda} compiles for at most {v['max_cc']}"
            )
        if cc and cuda:
            return (
                f"{gpu}（计算能力 {cc}）没有 CUDA {cuda} 版本安装包可用的内核"
                if zh
                else f"the CUDA {cuda} build has no kernels for {gpu} (compute capability {cc})"
            )
        return (
            "报错 “no kernel image is available for execution on the device” 说明安装包没有为这块 GPU 编译"
            if zh
            else "the error “no kernel image is available for execution on the device” says the build has no code for this GPU"
        )
    if m.code == "cudnn_cuda":
        if v.get("build_cudnn") and v.get("cudnn"):
            return (
                f"框架用 cuDNN {v['build_cudnn']} 编译，但运行时加载的是 cuDNN {v['cudnn']}"
                if zh
                else f"the framework was compiled with cuDNN {v['build_cudnn']} but loads cuDNN {v['cudnn']}"
            )
        return (
            f"cuDNN {v.get('cudnn', '?')} 不支持 CUDA {v.get('cuda', '?')}"
            if zh
            else f"cuDNN {v.get('cudnn', '?')} does not support CUDA {v.get('cuda', '?')}"
        )
    if m.code == "wheel_cuda":
        if v.get("library"):
            what = "cuDNN" if v.get("build_cudnn") or (v.get("cudnn") and not v.get("cuda")) else "CUDA"
            wants = v.get("build_cudnn") or v.get("build_cuda")
            wanted = f"（{what} {wants}）" if zh and wants else f" ({what} {wants})" if wants else ""
            have = v.get("cuda") or v.get("cudnn")
            return (
                f"安装包要找的 {v['library']}{wanted} 属于另一个 {what} 版本，本机是 {what} {have}"
                if zh
                else f"the package looks for {v['library']}{wanted}, which belongs to another {what} than this "
                f"machine's {what} {have}"
            )
        pkg = _shown(v.get("package") or "") or ("安装包" if zh else "")
        return (
            f"{pkg} 是 CUDA {v.get('build_cuda')} 版本，本机是 CUDA {v.get('cuda')}"
            if zh
            else f"{f'the package {pkg}' if pkg else 'the package'} is built for CUDA {v.get('build_cuda')}; "
            f"this machine has CUDA {v.get('cuda')}"
        )
    if m.code == "cpu_only_wheel":
        pkg = _shown(v.get("package") or "")
        if pkg and v.get("os") and v.get("windows_gpu_last"):
            last = v["windows_gpu_last"]
            return (
                f"TensorFlow {last} 之后的版本在原生 Windows（你的系统：{v['os']}）上没有 GPU 版，已安装的 {pkg} 只用 CPU"
                if zh
                else f"TensorFlow after {last} has no GPU build on native Windows (your system: {v['os']}), so the "
                f"installed {pkg} runs on the CPU only"
            )
        if pkg:
            return (
                f"已安装的 {pkg} 没有用 CUDA 编译，训练不会使用 GPU"
                if zh
                else f"the installed {pkg} has no CUDA, so training does not use the GPU"
            )
        return (
            "框架没有用 CUDA 编译，不会使用 GPU"
            if zh
            else "the framework build has no CUDA, so it does not use the GPU"
        )
    return f"找不到 {v.get('library', 'CUDA 库')}" if zh else f"the library {v.get('library', 'of CUDA')} was not found"


# Who publishes a source page, by host (and GitHub owner/repository): the link's words, never a row's internal key.
_PUBLISHERS = {
    "docs.nvidia.com": {"zh": "NVIDIA 文档", "en": "NVIDIA documentation"},
    "developer.nvidia.com": {"zh": "NVIDIA GPU 计算能力表", "en": "NVIDIA's GPU compute capability list"},
    "developer.nvidia.cn": {"zh": "NVIDIA 开发者博客", "en": "NVIDIA developer blog"},
    "en.wikipedia.org": {"zh": "维基百科 CUDA 条目", "en": "Wikipedia's CUDA article"},
    "tensorflow.org": {"zh": "TensorFlow API 文档", "en": "TensorFlow API documentation"},
    "www.tensorflow.org": {"zh": "TensorFlow 文档", "en": "TensorFlow documentation"},
    "PaddlePaddle/docs": {"zh": "PaddlePaddle 安装文档", "en": "PaddlePaddle installation guide"},
    "PaddlePaddle/Paddle": {"zh": "PaddlePaddle 源码", "en": "PaddlePaddle source"},
    "PaddlePaddle/PaddleClas": {"zh": "PaddleClas 源码", "en": "PaddleClas source"},
    "tensorflow/docs": {"zh": "TensorFlow 安装文档（已测试的构建）", "en": "TensorFlow tested build configurations"},
    "tensorflow/tensorflow": {"zh": "TensorFlow 源码", "en": "TensorFlow source"},
    "pytorch/pytorch": {"zh": "PyTorch 源码", "en": "PyTorch source"},
    "pytorch/pytorch.github.io": {"zh": "PyTorch 历史版本安装页", "en": "PyTorch previous-versions page"},
}
_ROW_KEY_SHOWN = ("driver", "cudnn", "cuda_arch")  # rows whose key is a version a reader recognises (CUDA 10.2)


def source_name(source: Source, language: Language) -> str:
    """The words of a source link: who published the page, and for a version row which version.

    >>> source_name(Source("message", "not_compiled_with_cuda", "https://github.com/PaddlePaddle/Paddle/blob/x/framework.py"), "zh")
    'PaddlePaddle 源码 framework.py'
    >>> source_name(Source("driver", "10.2", "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/"), "en")
    'NVIDIA documentation (CUDA 10.2)'
    """
    lang = _lang(language)
    url = urlparse(source.url)
    parts = [p for p in url.path.split("/") if p]
    host = url.netloc.lower()
    repo = "/".join(parts[:2]) if host == "github.com" and len(parts) >= 2 else ""
    via = source.via and _PUBLISHERS.get(urlparse(source.via).netloc.lower())
    publisher = _PUBLISHERS.get(repo) or _PUBLISHERS.get(host)
    name = publisher[lang] if publisher else (via[lang] if via else host or source.url)
    if repo in ("PaddlePaddle/Paddle", "PaddlePaddle/PaddleClas", "tensorflow/tensorflow", "pytorch/pytorch"):
        name = f"{name} {parts[-1]}"  # a library's message: the file that prints it
    elif source.kind in _ROW_KEY_SHOWN and source.key:
        what = f"cuDNN {source.key}" if source.kind == "cudnn" else f"CUDA {source.key}"
        name = f"{name}（{what}）" if lang == "zh" else f"{name} ({what})"
    return name


def _source_link(m: Mismatch, language: Language = "en") -> str:
    return f"[{source_name(m.source, language)}]({m.source.url})"


def install_text(install: Install, language: Language) -> str:
    """The exact commands for this machine: uninstall the wrong build, install the one the page lists.

    >>> from bot.diagnose.compat import Install, Source
    >>> print(install_text(Install("paddlepaddle-gpu==2.6.1.post120", "-f https://x/stable.html", "12.0", "linux",
    ...                            Source("wheel", "k", "https://github.com/PaddlePaddle/docs/blob/d/linux-pip.md"), "paddlepaddle"), "en"))
      Fix: install the GPU build for CUDA 12.0 (Linux; source: [PaddlePaddle installation guide](https://github.com/PaddlePaddle/docs/blob/d/linux-pip.md)):
    <BLANKLINE>
      ```bash
      python -m pip uninstall -y paddlepaddle
      python -m pip install paddlepaddle-gpu==2.6.1.post120 -f https://x/stable.html
      ```
    """
    lang = _lang(language)
    system = {"linux": "Linux", "windows": "Windows"}.get(install.platform, install.platform)
    link = f"[{source_name(install.source, lang)}]({install.source.url})"
    if install.driver and install.machine:
        why = (
            f"本机驱动 {install.driver} 支持 CUDA {install.machine}；"
            if lang == "zh"
            else f"driver {install.driver} runs CUDA {install.machine}; "
        )
    elif install.machine:
        why = f"本机 CUDA {install.machine}；" if lang == "zh" else f"this machine has CUDA {install.machine}; "
    else:
        why = ""
    head = (
        f"  {FIX_WORD[lang]}：安装 CUDA {install.cuda} 的 GPU 版（{why}{system}；来源：{link}）："
        if lang == "zh"
        else f"  {FIX_WORD[lang]}: install the GPU build for CUDA {install.cuda} ({why}{system}; source: {link}):"
    )
    commands = [f"python -m pip uninstall -y {install.replaces}"] if install.replaces else []
    commands.append(f"python -m pip install {install.package} {install.option}".strip())
    body = "\n".join(f"  {c}" for c in ("```bash", *commands, "```"))
    return f"{head}\n\n{body}"


_WINDOWS = re.compile(r"^win", re.IGNORECASE)
_LINUX = re.compile(r"ubuntu|centos|debian|red hat|linux", re.IGNORECASE)


def library_fix(m: Mismatch, env: Environment, language: Language) -> str:
    """The commands that find a missing library and put its folder on the search path, for the system the paste
    shows (its OS as read, else the library's kind: ``.dll`` Windows, ``.so`` Linux); empty when the paste shows
    neither the OS nor the library's folder (a bare "libnccl.so not found": the section's own steps say the rest).

    >>> print(library_fix(Mismatch("missing_library", {"library": "libcudnn.so.8"}, Source("message", "k", "u"), "message"),
    ...                   Environment(os="Ubuntu 18.04"), "en"))
      Fix (Ubuntu 18.04): find the library, then put its folder first on LD_LIBRARY_PATH (if nothing is found, install the cuDNN or CUDA that provides it):
    <BLANKLINE>
      ```bash
      find / -name 'libcudnn.so.8*' 2>/dev/null
      export LD_LIBRARY_PATH=/the/folder/found:$LD_LIBRARY_PATH
      ```
    """
    lang = _lang(language)
    library = str(m.values.get("library") or "").split(",")[0].strip()
    system = env.os or ""
    windows = bool(_WINDOWS.search(system)) or (not _LINUX.search(system) and library.lower().endswith(".dll"))
    linux = not windows and (bool(_LINUX.search(system)) or ".so" in library)
    # The folder the loader printed for it, exactly as pasted (a dependency beside it is what failed to load).
    paths = [w for f, read, w in env.typed if f == "library" and read == library and w != read]
    folder = re.split(r"[\\/](?=[^\\/]*$)", paths[0])[0] if paths else ""
    searched = any(f == "library_path" for f, _, _ in env.typed)  # the loader printed where it looked: Linux's loader
    if not library or not (windows or linux) or not (system or folder or searched):
        return ""  # the paste shows neither the system nor the folder: the general fix says as much
    name = library if "." in library else f"{library}.so"
    if env.wsl and name.startswith("libcuda.so"):
        # On WSL2 the driver library comes from Windows and is mapped into /usr/lib/wsl/lib (NVIDIA's WSL guide).
        head = (
            f"  {FIX_WORD[lang]}（WSL2）：libcuda 由 Windows 的 NVIDIA 驱动提供，位于 /usr/lib/wsl/lib；不要在 WSL 里装 Linux 驱动，"
            "把这个目录放到 LD_LIBRARY_PATH 的最前面："
            if lang == "zh"
            else f"  {FIX_WORD[lang]} (WSL2): libcuda comes from the Windows NVIDIA driver, mapped into /usr/lib/wsl/lib; "
            "do not install a Linux driver inside WSL, put that folder first on LD_LIBRARY_PATH:"
        )
        commands = ("ls -l /usr/lib/wsl/lib/libcuda.so*", "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH")
        return head + "\n\n" + "\n".join(f"  {c}" for c in ("```bash", *commands, "```"))
    where = (f"（{system}）" if lang == "zh" else f" ({system})") if system else ""
    if windows:
        variable, fence = "PATH", "bat"
        found = folder or "C:\\the\\folder\\found"
        commands = (f"where /r C:\\ {name}", f"set PATH={found};%PATH%")
    else:
        variable, fence = "LD_LIBRARY_PATH", "bash"
        commands = (
            f"find / -name '{name}*' 2>/dev/null",
            f"export LD_LIBRARY_PATH={folder or '/the/folder/found'}:$LD_LIBRARY_PATH",
        )
    if folder:
        commands = commands[1:]  # the paste shows where it is
    if folder:
        head = (
            f"  {FIX_WORD[lang]}{where}：把报错里这个库所在的目录放到 {variable} 的最前面（它依赖的库也要在 {variable} 上）："
            if lang == "zh"
            else f"  {FIX_WORD[lang]}{where}: put the folder the error names first on {variable} (the libraries it "
            f"depends on must be on {variable} too):"
        )
    else:
        head = (
            f"  {FIX_WORD[lang]}{where}：找到这个库，再把它所在的目录放到 {variable} 的最前面"
            "（如果找不到，安装提供它的 cuDNN 或 CUDA 版本）："
            if lang == "zh"
            else f"  {FIX_WORD[lang]}{where}: find the library, then put its folder first on {variable} "
            "(if nothing is found, install the cuDNN or CUDA that provides it):"
        )
    body = "\n".join(f"  {c}" for c in (f"```{fence}", *commands, "```"))
    return f"{head}\n\n{body}"


def _arch_fix(m: Mismatch, language: Language) -> str:
    """The build lists its architectures: install one whose list holds this GPU's (an older GPU needs an older
    CUDA's build, a newer GPU a newer one), never "a newer CUDA" alone.

    >>> from bot.diagnose.compat import Source
    >>> _arch_fix(Mismatch("compute_capability", {"compute_capability": "6.1", "build_arch": "70 75 80 86"},
    ...                    Source("message", "k", "u"), "message"), "en")  # doctest: +ELLIPSIS
    "install a build whose architectures include this GPU's (sm_61) ..."
    """
    cc = str(m.values.get("compute_capability") or "")
    sm = f"sm_{cc.replace('.', '')}" if cc else ""
    arch = m.values.get("build_arch")
    if _lang(language) == "zh":
        return (
            (f"安装架构列表包含这块 GPU（{sm}）的安装包" if sm else "安装架构列表包含这块 GPU 的安装包")
            + f"：当前包只有 {arch}；较老的 GPU 要用较老 CUDA 版本编译的包，较新的 GPU 要用较新 CUDA 版本的包（见框架的安装文档）。"
        )
    return (
        f"install a build whose architectures include this GPU's ({sm}) "
        if sm
        else "install a build whose architectures include this GPU's "
    ) + (
        f"(this one has only {arch}): an older GPU needs a build for an older CUDA, a newer GPU one for a newer CUDA "
        "(see the framework's installation guide)."
    )


def _windows_tf_fix(last: str, language: Language) -> str:
    """No GPU build of a newer TensorFlow exists for native Windows: run it in WSL2, or pin the last one that had it.

    >>> print(_windows_tf_fix("2.10", "en").splitlines()[0])
      Fix: on native Windows the last TensorFlow with GPU support is 2.10; either run TensorFlow inside WSL2, or pin it:
    """
    head = (
        f"  {FIX_WORD['zh']}：原生 Windows 上最后一个支持 GPU 的 TensorFlow 是 {last}；在 WSL2 里运行 TensorFlow，或者固定版本："
        if _lang(language) == "zh"
        else f"  {FIX_WORD['en']}: on native Windows the last TensorFlow with GPU support is {last}; either run "
        "TensorFlow inside WSL2, or pin it:"
    )
    commands = ("python -m pip uninstall -y tensorflow", f'python -m pip install "tensorflow<{_next_minor(last)}"')
    body = "\n".join(f"  {c}" for c in ("```bat", *commands, "```"))
    return f"{head}\n\n{body}"


def _next_minor(version: str) -> str:
    """The version a pin stays below.

    >>> _next_minor("2.10")
    '2.11'
    """
    major, minor = (version.split(".") + ["0"])[:2]
    return f"{major}.{int(minor) + 1}"


def describe(diagnosis: Diagnosis, language: Language) -> str:
    """The environment paragraph of a reply: the mismatches with source and fix, or 'consistent', or the one ask.
    Empty when the message shows no environment."""
    lang = _lang(language)
    if diagnosis.status == "mismatch":
        lines = [HEADINGS["mismatch"][lang]]
        install = diagnosis.install
        for m in diagnosis.mismatches:
            colon, stop = ("：", "。") if lang == "zh" else (": ", ". ")
            lines.append(
                f"- **{TITLES[m.code][lang]}**{colon}{_cap(sentence(m, lang, diagnosis.environment.typed), lang)}{stop}"
                f"{SOURCE_WORD[lang]}{colon}{_source_link(m, lang)}"
            )
            if install is not None and m.code in ("cpu_only_wheel", "wheel_cuda"):
                lines.append(install_text(install, lang))
                install = None  # one command block, under the first finding it fixes
            elif m.code == "compute_capability" and m.values.get("build_arch"):
                lines.append(f"  {FIX_WORD[lang]}{colon}{_arch_fix(m, lang)}")
            elif m.code == "compute_capability" and m.values.get("min_cuda") and m.values.get("compute_capability"):
                first, cc = m.values["min_cuda"], m.values["compute_capability"]
                lines.append(
                    f"  {FIX_WORD[lang]}：计算能力 {cc} 从 CUDA {first} 起才支持：换用 CUDA {first} 及以上编译的安装包"
                    "（并装对应的驱动）。"
                    if lang == "zh"
                    else f"  {FIX_WORD[lang]}: compute capability {cc} needs CUDA {first} or later: install a build "
                    f"compiled with CUDA ≥ {first} (and a driver for it)."
                )
            elif m.code == "cpu_only_wheel" and (last := m.values.get("windows_gpu_last")):
                lines.append(_windows_tf_fix(str(last), lang))
            elif m.code == "missing_library" and (found := library_fix(m, diagnosis.environment, lang)):
                lines.append(found)
            else:
                lines.append(f"  {FIX_WORD[lang]}{colon}{FIXES[m.code][lang]}")
        if setup := setup_text(diagnosis.environment.typed, "\n".join(lines), lang):
            lines.append(setup)
        return "\n".join(lines)
    if diagnosis.status == "consistent" and diagnosis.checked:
        sep = "、" if lang == "zh" else ", "
        checked = sep.join(CHECKED[c][lang] for c in dict.fromkeys(diagnosis.checked) if c in CHECKED)
        return HEADINGS["consistent"][lang].format(checked=checked)
    if diagnosis.status == "incomplete" and diagnosis.ask:
        return f"{HEADINGS['incomplete'][lang]} {ASKS[diagnosis.ask][lang]}"
    return ""


# The rest of the user's setup, in this order, with a reader's name for each field (zh, en): what the findings
# were decided on, so a misreading shows.
_SETUP_FIELDS = {
    "gpu": ("GPU", "GPU"),
    "compute_capability": ("计算能力", "compute capability"),
    "driver": ("驱动", "driver"),
    "driver_cuda": ("驱动支持的 CUDA", "driver's CUDA"),
    "cuda": ("CUDA", "CUDA"),
    "cudnn": ("cuDNN", "cuDNN"),
    "build_cuda": ("安装包的 CUDA", "build's CUDA"),
    "build_cudnn": ("安装包的 cuDNN", "build's cuDNN"),
    "build_tag": ("安装包的构建", "build"),
    "package": ("安装包", "package"),
    "build_arch": ("安装包编译的架构", "build's architectures"),
    "gpu_arch": ("GPU 架构", "GPU architecture"),
    "os": ("系统", "OS"),
    "library": ("库", "library"),
    "library_path": ("库的搜索路径", "library path"),
    "python": ("Python", "Python"),
}
_SETUP_QUOTES = 12  # the line names at most this many spans: a long paste's setup, not the paste again


def setup_text(typed: Typed, said: str, language: Language) -> str:
    """The user's setup in their own words, each span as the paste has it, that ``said`` (the findings' words) does
    not hold yet: the GPU, driver, CUDA, cuDNN, build, system and paths the findings were decided on. Empty when
    the findings already quote everything.

    >>> setup_text((("gpu", "V100", "v100"), ("os", "CentOS 7", "Linux CentOS 7"), ("cuda", "12.8", "cuda 12.8")),
    ...            "the package is built for CUDA 11.8; this machine has CUDA 12.8 (as you wrote them: `cuda 12.8`)", "en")
    '  Your setup as pasted: GPU `v100`; OS `Linux CentOS 7`.'
    """
    lang = _lang(language)
    held = _flat(said)
    chosen: list[tuple[str, str]] = []
    for field in _SETUP_FIELDS:
        for _, _, words in (t for t in typed if t[0] == field):
            flat = _flat(words)
            if flat in held or any(flat in _flat(w) for _, w in chosen):
                continue
            # The longer span holds the shorter ("GeForce GTX 1080 Ti" holds "GTX 1080 Ti"): one quote, the longer.
            chosen = [(f, w) for f, w in chosen if _flat(w) not in flat] + [(field, words)]
    if not chosen:
        return ""
    shown: dict[str, list[str]] = {}  # chosen is in the fields' order already: each span was added in its field's turn
    for field, words in chosen[:_SETUP_QUOTES]:
        shown.setdefault(field, []).append(words)
    zh = lang == "zh"
    parts = [
        f"{_SETUP_FIELDS[field][0 if zh else 1]} " + ("、" if zh else ", ").join(f"`{w}`" for w in words)
        for field, words in shown.items()
    ]
    return f"  你贴出的环境：{'；'.join(parts)}。" if zh else f"  Your setup as pasted: {'; '.join(parts)}."


def _cap(text: str, lang: str) -> str:
    return text[:1].upper() + text[1:] if lang == "en" else text
